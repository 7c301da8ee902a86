/* DescribeUserScramCredentials (key 50) v0 and AlterUserScramCredentials (key 51) v0, both
 * flexible from v0 (DescribeUserScramCredentialsRequest/Response.json,
 * AlterUserScramCredentialsRequest/Response.json; KIP-554). A Users array of null in
 * DescribeUserScramCredentials asks for every user (n_users -1 here). */
#include "kafka/msg_int.h"

int kmsg_decode_describe_scram(struct kreader *r, int16_t v, struct arena *a,
                               struct describe_scram_req *out)
{
    if (!kmsg_version_ok(KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS, v))
        return -ERR_UNSUPPORTED;
    *out = (struct describe_scram_req){0};
    int32_t n = kr_array(r, true, kmsg_min_str(true) + kmsg_min_tags(true));
    out->n_users = n;
    out->users = kmsg_alloc(a, n, sizeof(*out->users));
    for (int32_t i = 0; i < n; i++) {
        out->users[i] = kmsg_rd_str(r, true);
        kr_tags(r, true);
    }
    kr_tags(r, true);
    return kmsg_rd_done(r);
}

void kmsg_encode_describe_scram(struct kwriter *w, int16_t v, const struct describe_scram_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS, v));
    kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kmsg_wr_nstr(w, true, resp->error_message);
    kmsg_wr_array(w, true, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        const struct describe_scram_result *res = &resp->results[i];
        kmsg_wr_str(w, true, res->user);
        kw_error_code(w, res->error_code);
        kmsg_wr_nstr(w, true, res->error_message);
        kmsg_wr_array(w, true, res->n_credentials);
        for (int32_t j = 0; j < res->n_credentials; j++) {
            kw_i8(w, res->credentials[j].mechanism);
            kw_i32(w, res->credentials[j].iterations);
            kw_tags(w, true);
        }
        kw_tags(w, true);
    }
    kw_tags(w, true);
}

int kmsg_decode_alter_scram(struct kreader *r, int16_t v, struct arena *a,
                            struct alter_scram_req *out)
{
    if (!kmsg_version_ok(KAPI_ALTER_USER_SCRAM_CREDENTIALS, v))
        return -ERR_UNSUPPORTED;
    *out = (struct alter_scram_req){0};
    int32_t nd = kmsg_rd_array(r, true, kmsg_min_str(true) + 1 + kmsg_min_tags(true));
    out->deletions = kmsg_alloc(a, nd, sizeof(*out->deletions));
    out->n_deletions = nd;
    for (int32_t i = 0; i < nd; i++) {
        out->deletions[i].name = kmsg_rd_str(r, true);
        out->deletions[i].mechanism = kr_i8(r);
        kr_tags(r, true);
    }
    size_t up_min = kmsg_min_str(true) + 1 + 4 + 2 * kmsg_min_bytes(true) + kmsg_min_tags(true);
    int32_t nu = kmsg_rd_array(r, true, up_min);
    out->upsertions = kmsg_alloc(a, nu, sizeof(*out->upsertions));
    out->n_upsertions = nu;
    for (int32_t i = 0; i < nu; i++) {
        struct alter_scram_upsertion *u = &out->upsertions[i];
        u->name = kmsg_rd_str(r, true);
        u->mechanism = kr_i8(r);
        u->iterations = kr_i32(r);
        u->salt = kr_bytes(r, true);
        u->salted_password = kr_bytes(r, true);
        if (u->salt.len < 0 || u->salted_password.len < 0)
            r->err = true; /* not nullable */
        kr_tags(r, true);
    }
    kr_tags(r, true);
    return kmsg_rd_done(r);
}

void kmsg_encode_alter_scram(struct kwriter *w, int16_t v, const struct alter_scram_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_ALTER_USER_SCRAM_CREDENTIALS, v));
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, true, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        kmsg_wr_str(w, true, resp->results[i].user);
        kw_error_code(w, resp->results[i].error_code);
        kmsg_wr_nstr(w, true, resp->results[i].error_message);
        kw_tags(w, true);
    }
    kw_tags(w, true);
}
