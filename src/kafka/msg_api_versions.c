/* ApiVersions (key 18), versions 0-4; v3 is the first flexible version, v4 is v3 again (it only
 * lets a SupportedFeatures MinVersion be 0, KAFKA-17011) (ApiVersionsRequest/Response.json).
 *
 * The response's tagged fields (SupportedFeatures, FinalizedFeatures...) are never written:
 * this broker has no feature flags. */
#include "kafka/msg_int.h"

int kmsg_decode_api_versions(struct kreader *r, int16_t v, struct arena *a,
                             struct api_versions_req *out)
{
    if (!kmsg_version_ok(KAPI_API_VERSIONS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_API_VERSIONS, v);
    *out = (struct api_versions_req){KSTR_NULL, KSTR_NULL};
    if (v >= 3) {
        out->client_software_name = kmsg_rd_str(r, flex);
        out->client_software_version = kmsg_rd_str(r, flex);
    }
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_api_versions(struct kwriter *w, int16_t v, const struct api_versions_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_API_VERSIONS, v));
    bool flex = kafka_api_flexible(KAPI_API_VERSIONS, v);
    kw_error_code(w, resp->error_code);
    kmsg_wr_array(w, flex, resp->n_keys);
    for (int32_t i = 0; i < resp->n_keys; i++) {
        const struct api_versions_key *k = &resp->keys[i];
        kw_i16(w, k->api_key);
        kw_i16(w, k->min_version);
        kw_i16(w, k->max_version);
        kw_tags(w, flex);
    }
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kw_tags(w, flex);
}
