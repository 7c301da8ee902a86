/* Request header v1/v2 and response header v0/v1 (RequestHeader.json, ResponseHeader.json).
 *
 * Request header v2 differs from v1 only by the tagged fields after client_id: client_id keeps
 * its int16 length even in v2, so that any broker can read the header of any ApiVersions
 * request. Which form a request uses follows from (api_key, api_version) alone, except that an
 * ApiVersions request above our range is read as v1 (KIP-511: the broker answers it with a v0
 * body listing what it supports, and ignores the body it cannot parse). Keys we do not
 * implement are read as v1 as well. */
#include "kafka/msg_int.h"

static bool header_flexible(int16_t key, int16_t version)
{
    if (key == KAPI_API_VERSIONS) {
        const struct kafka_api_info *api = kafka_api_find(key);
        if (version > api->max_version)
            return false;
    }
    return kafka_api_flexible(key, version);
}

int kmsg_decode_header(struct kreader *r, struct kreq_header *h)
{
    h->api_key = kr_i16(r);
    h->api_version = kr_i16(r);
    h->correlation_id = kr_i32(r);
    h->client_id = kr_str(r, false); /* nullable, never compact */
    h->flexible = kr_ok(r) && header_flexible(h->api_key, h->api_version);
    kr_tags(r, h->flexible);
    return kmsg_rd_done(r);
}

void kmsg_encode_resp_header(struct kwriter *w, const struct kreq_header *h)
{
    kw_i32(w, h->correlation_id);
    /* ApiVersions answers with header v0 even to a flexible request: a client that does not
     * yet know our versions must be able to read the reply. */
    kw_tags(w, h->flexible && h->api_key != KAPI_API_VERSIONS);
}
