/* DescribeAcls (key 29), CreateAcls (30) and DeleteAcls (31), v0-3, flexible from v2
 * (DescribeAclsRequest/Response.json, CreateAclsRequest/Response.json,
 * DeleteAclsRequest/Response.json; KIP-140, KIP-290 for the pattern type from v1). In v0 every
 * binding and filter is LITERAL (pattern type 3). */
#include "kafka/msg_int.h"

#define PATTERN_LITERAL 3

/* A binding (filter: names nullable) as CreateAcls' creation / the filters carry it. */
static void rd_acl(struct kreader *r, int16_t v, bool f, bool filter, struct kacl *out)
{
    out->resource_type = kr_i8(r);
    out->resource_name = filter ? kr_str(r, f) : kmsg_rd_str(r, f);
    out->pattern_type = v >= 1 ? kr_i8(r) : PATTERN_LITERAL;
    out->principal = filter ? kr_str(r, f) : kmsg_rd_str(r, f);
    out->host = filter ? kr_str(r, f) : kmsg_rd_str(r, f);
    out->operation = kr_i8(r);
    out->permission = kr_i8(r);
}

int kmsg_decode_describe_acls(struct kreader *r, int16_t v, struct describe_acls_req *out)
{
    if (!kmsg_version_ok(KAPI_DESCRIBE_ACLS, v))
        return -ERR_UNSUPPORTED;
    bool f = v >= 2;
    rd_acl(r, v, f, true, &out->filter);
    kr_tags(r, f);
    return kmsg_rd_done(r);
}

void kmsg_encode_describe_acls(struct kwriter *w, int16_t v, const struct describe_acls_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DESCRIBE_ACLS, v));
    bool f = v >= 2;
    kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kmsg_wr_nstr(w, f, resp->error_message);
    kmsg_wr_array(w, f, resp->n_resources);
    for (int32_t i = 0; i < resp->n_resources; i++) {
        const struct describe_acls_resource *res = &resp->resources[i];
        kw_i8(w, res->resource_type);
        kmsg_wr_str(w, f, res->resource_name);
        if (v >= 1)
            kw_i8(w, res->pattern_type);
        kmsg_wr_array(w, f, res->n_acls);
        for (int32_t j = 0; j < res->n_acls; j++) {
            const struct kacl *a = &res->acls[j];
            kmsg_wr_str(w, f, a->principal);
            kmsg_wr_str(w, f, a->host);
            kw_i8(w, a->operation);
            kw_i8(w, a->permission);
            kw_tags(w, f);
        }
        kw_tags(w, f);
    }
    kw_tags(w, f);
}

/* The creations of CreateAcls or the filters of DeleteAcls. */
static int rd_acl_array(struct kreader *r, int16_t v, struct arena *a, bool filter,
                        struct kacl **out, int32_t *n_out)
{
    bool f = v >= 2;
    size_t min =
        1 + kmsg_min_str(f) + (v >= 1 ? 1 : 0) + 2 * kmsg_min_str(f) + 2 + kmsg_min_tags(f);
    int32_t n = kmsg_rd_array(r, f, min);
    *out = kmsg_alloc(a, n, sizeof(**out));
    *n_out = n;
    for (int32_t i = 0; i < n; i++) {
        rd_acl(r, v, f, filter, &(*out)[i]);
        kr_tags(r, f);
    }
    kr_tags(r, f);
    return kmsg_rd_done(r);
}

int kmsg_decode_create_acls(struct kreader *r, int16_t v, struct arena *a,
                            struct create_acls_req *out)
{
    if (!kmsg_version_ok(KAPI_CREATE_ACLS, v))
        return -ERR_UNSUPPORTED;
    return rd_acl_array(r, v, a, false, &out->creations, &out->n_creations);
}

void kmsg_encode_create_acls(struct kwriter *w, int16_t v, const struct create_acls_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_CREATE_ACLS, v));
    bool f = v >= 2;
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, f, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        kw_error_code(w, resp->results[i].error_code);
        kmsg_wr_nstr(w, f, resp->results[i].error_message);
        kw_tags(w, f);
    }
    kw_tags(w, f);
}

int kmsg_decode_delete_acls(struct kreader *r, int16_t v, struct arena *a,
                            struct delete_acls_req *out)
{
    if (!kmsg_version_ok(KAPI_DELETE_ACLS, v))
        return -ERR_UNSUPPORTED;
    return rd_acl_array(r, v, a, true, &out->filters, &out->n_filters);
}

void kmsg_encode_delete_acls(struct kwriter *w, int16_t v, const struct delete_acls_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DELETE_ACLS, v));
    bool f = v >= 2;
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, f, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        const struct delete_acls_filter_result *fr = &resp->results[i];
        kw_error_code(w, fr->error_code);
        kmsg_wr_nstr(w, f, fr->error_message);
        kmsg_wr_array(w, f, fr->n_matches);
        for (int32_t j = 0; j < fr->n_matches; j++) {
            const struct delete_acls_match *m = &fr->matches[j];
            kw_error_code(w, m->error_code);
            kmsg_wr_nstr(w, f, m->error_message);
            kw_i8(w, m->acl.resource_type);
            kmsg_wr_str(w, f, m->acl.resource_name);
            if (v >= 1)
                kw_i8(w, m->acl.pattern_type);
            kmsg_wr_str(w, f, m->acl.principal);
            kmsg_wr_str(w, f, m->acl.host);
            kw_i8(w, m->acl.operation);
            kw_i8(w, m->acl.permission);
            kw_tags(w, f);
        }
        kw_tags(w, f);
    }
    kw_tags(w, f);
}
