/* SaslHandshake (key 17) v0-1, never flexible, and SaslAuthenticate (key 36) v0-2, flexible from
 * v2 (SaslHandshakeRequest/Response.json, SaslAuthenticateRequest/Response.json). Handshake v0
 * means the SASL tokens then travel as raw size-prefixed frames (no Kafka header: the legacy
 * flow kafka-python 2.0.2 uses); v1 means they travel in SaslAuthenticate requests. */
#include "kafka/msg_int.h"

int kmsg_decode_sasl_handshake(struct kreader *r, int16_t v, struct sasl_handshake_req *out)
{
    if (!kmsg_version_ok(KAPI_SASL_HANDSHAKE, v))
        return -ERR_UNSUPPORTED;
    out->mechanism = kmsg_rd_str(r, false);
    return kmsg_rd_done(r);
}

void kmsg_encode_sasl_handshake(struct kwriter *w, int16_t v,
                                const struct sasl_handshake_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_SASL_HANDSHAKE, v));
    kw_error_code(w, resp->error_code);
    kmsg_wr_array(w, false, resp->n_mechanisms);
    for (int32_t i = 0; i < resp->n_mechanisms; i++)
        kmsg_wr_str(w, false, kstr_c(resp->mechanisms[i]));
}

int kmsg_decode_sasl_authenticate(struct kreader *r, int16_t v, struct sasl_authenticate_req *out)
{
    if (!kmsg_version_ok(KAPI_SASL_AUTHENTICATE, v))
        return -ERR_UNSUPPORTED;
    bool f = v >= 2;
    out->auth_bytes = kr_bytes(r, f);
    if (out->auth_bytes.len < 0)
        r->err = true; /* not nullable */
    kr_tags(r, f);
    return kmsg_rd_done(r);
}

void kmsg_encode_sasl_authenticate(struct kwriter *w, int16_t v,
                                   const struct sasl_authenticate_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_SASL_AUTHENTICATE, v));
    bool f = v >= 2;
    kw_error_code(w, resp->error_code);
    kmsg_wr_nstr(w, f, resp->error_message);
    kw_bytes(w, f, resp->auth_bytes.p ? resp->auth_bytes : (struct kbytes){(const uint8_t *)"", 0});
    if (v >= 1)
        kw_i64(w, resp->session_lifetime_ms);
    kw_tags(w, f);
}
