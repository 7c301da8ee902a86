/* InitProducerId (key 22), versions 0-5 (kafka/msg_producer.h). v1 is v0 again; v2 is the
 * first flexible version; v3 adds ProducerId/ProducerEpoch (KIP-360); v4 only allows the
 * PRODUCER_FENCED error code, v5 TRANSACTION_ABORTABLE (KIP-890). The response has the same
 * fields in every version. */
#include "kafka/msg_producer.h"
#include "kafka/msg_int.h"

int kmsg_decode_init_producer_id(struct kreader *r, int16_t v, struct arena *a,
                                 struct init_producer_id_req *out)
{
    (void)a;
    if (!kmsg_version_ok(KAPI_INIT_PRODUCER_ID, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_INIT_PRODUCER_ID, v);
    *out = (struct init_producer_id_req){.producer_id = -1, .producer_epoch = -1};
    out->transactional_id = kr_str(r, flex); /* nullable */
    out->transaction_timeout_ms = kr_i32(r);
    if (v >= 3) {
        out->producer_id = kr_i64(r);
        out->producer_epoch = kr_i16(r);
    }
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_init_producer_id(struct kwriter *w, int16_t v,
                                  const struct init_producer_id_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_INIT_PRODUCER_ID, v));
    bool flex = kafka_api_flexible(KAPI_INIT_PRODUCER_ID, v);
    kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kw_i64(w, resp->producer_id);
    kw_i16(w, resp->producer_epoch);
    kw_tags(w, flex);
}
