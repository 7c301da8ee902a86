/* FindCoordinator (key 10), versions 0-3; v3 is flexible (FindCoordinatorRequest/Response.json).
 * v4+ batches keys (CoordinatorKeys / Coordinators) and is outside our range. */
#include "kafka/msg_int.h"

int kmsg_decode_find_coordinator(struct kreader *r, int16_t v, struct arena *a,
                                 struct find_coordinator_req *out)
{
    if (!kmsg_version_ok(KAPI_FIND_COORDINATOR, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_FIND_COORDINATOR, v);
    *out = (struct find_coordinator_req){.key_type = KAFKA_COORDINATOR_GROUP};
    out->key = kmsg_rd_str(r, flex);
    if (v >= 1)
        out->key_type = kr_i8(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_find_coordinator(struct kwriter *w, int16_t v,
                                  const struct find_coordinator_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_FIND_COORDINATOR, v));
    bool flex = kafka_api_flexible(KAPI_FIND_COORDINATOR, v);
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    if (v >= 1)
        kmsg_wr_nstr(w, flex, resp->error_message); /* nullable */
    kw_i32(w, resp->node_id);
    kmsg_wr_str(w, flex, resp->host);
    kw_i32(w, resp->port);
    kw_tags(w, flex);
}
