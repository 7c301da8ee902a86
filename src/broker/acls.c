/* DescribeAcls (29), CreateAcls (30) and DeleteAcls (31).
 *
 * There is no authorizer yet: as a Kafka broker without `authorizer.class.name` does, every
 * request is answered SECURITY_DISABLED (each creation and each filter with it, DescribeAcls as
 * a whole), so that tools say "no authorizer is configured" instead of storing bindings that
 * nothing enforces. The pieces the authorizer will stand on are in place: ACL records in the
 * metadata log (controller/records.h type 10, ctl_cmd_acl) and the decision core
 * (security/acl.h). Stateless. */
#include "base/arena.h"
#include "base/errors.h"
#include "broker/internal.h"
#include "kafka/errors.h"

#define NO_AUTHORIZER "No Authorizer is configured on the broker"

int handle_describe_acls(struct request *req)
{
    struct describe_acls_req dr;
    if (kmsg_decode_describe_acls(&req->body, req->hdr.api_version, &dr) != 0)
        return -ERR_CORRUPT;
    struct describe_acls_resp resp = {.error_code = KERR_SECURITY_DISABLED,
                                      .error_message = kstr_c(NO_AUTHORIZER)};
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_describe_acls(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

/* One result per creation (CreateAcls) or filter (DeleteAcls), each SECURITY_DISABLED. */
static struct kacl_result *disabled_results(struct arena *a, int32_t n)
{
    struct kacl_result *res = arena_calloc(a, n > 0 ? (size_t)n : 1, sizeof(*res));
    for (int32_t i = 0; i < n; i++)
        res[i] = (struct kacl_result){KERR_SECURITY_DISABLED, kstr_c(NO_AUTHORIZER)};
    return res;
}

int handle_create_acls(struct request *req)
{
    struct create_acls_req cr;
    if (kmsg_decode_create_acls(&req->body, req->hdr.api_version, req->arena, &cr) != 0)
        return -ERR_CORRUPT;
    struct create_acls_resp resp = {.results = disabled_results(req->arena, cr.n_creations),
                                    .n_results = cr.n_creations};
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_create_acls(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

int handle_delete_acls(struct request *req)
{
    struct delete_acls_req dr;
    if (kmsg_decode_delete_acls(&req->body, req->hdr.api_version, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct delete_acls_resp resp = {.n_results = dr.n_filters};
    resp.results = arena_calloc(req->arena, dr.n_filters > 0 ? (size_t)dr.n_filters : 1,
                                sizeof(*resp.results));
    for (int32_t i = 0; i < dr.n_filters; i++)
        resp.results[i] = (struct delete_acls_filter_result){KERR_SECURITY_DISABLED,
                                                             kstr_c(NO_AUTHORIZER), NULL, 0};
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_delete_acls(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}
