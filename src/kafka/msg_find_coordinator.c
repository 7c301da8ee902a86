/* FindCoordinator (key 10), versions 0-4; v3 is the first flexible version
 * (FindCoordinatorRequest/Response.json). v4 batches keys: CoordinatorKeys in the request, one
 * Coordinators entry per key in the response, which then has no single-coordinator fields. */
#include "kafka/msg_int.h"

int kmsg_decode_find_coordinator(struct kreader *r, int16_t v, struct arena *a,
                                 struct find_coordinator_req *out)
{
    if (!kmsg_version_ok(KAPI_FIND_COORDINATOR, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_FIND_COORDINATOR, v);
    *out = (struct find_coordinator_req){.key = {"", 0}, .key_type = KAFKA_COORDINATOR_GROUP};
    if (v <= 3)
        out->key = kmsg_rd_str(r, flex);
    if (v >= 1)
        out->key_type = kr_i8(r);
    if (v >= 4)
        out->coordinator_keys = kmsg_rd_strs(r, flex, a, false, &out->n_coordinator_keys);
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
    if (v >= 4) {
        kmsg_wr_array(w, flex, resp->n_coordinators);
        for (int32_t i = 0; i < resp->n_coordinators; i++) {
            const struct find_coordinator_coordinator *c = &resp->coordinators[i];
            kmsg_wr_str(w, flex, c->key);
            kw_i32(w, c->node_id);
            kmsg_wr_str(w, flex, c->host);
            kw_i32(w, c->port);
            kw_error_code(w, c->error_code);
            kmsg_wr_nstr(w, flex, c->error_message); /* nullable */
            kw_tags(w, flex);
        }
        kw_tags(w, flex);
        return;
    }
    kw_error_code(w, resp->error_code);
    if (v >= 1)
        kmsg_wr_nstr(w, flex, resp->error_message); /* nullable */
    kw_i32(w, resp->node_id);
    kmsg_wr_str(w, flex, resp->host);
    kw_i32(w, resp->port);
    kw_tags(w, flex);
}
