/* DescribeAcls (29), CreateAcls (30) and DeleteAcls (31): the ACL bindings of the metadata
 * image (ACL records, controller/records.h type 10), which every node holds.
 *
 * Without an authorizer (authorizer.class.name empty) every request is answered
 * SECURITY_DISABLED (each creation and each filter with it, DescribeAcls as a whole), as a Kafka
 * broker without one does, so tools say "no authorizer is configured" instead of storing
 * bindings that nothing enforces.
 *
 * With one, as Kafka's: DescribeAcls needs DESCRIBE on the cluster, the other two ALTER
 * (else CLUSTER_AUTHORIZATION_FAILED).
 *   - DescribeAcls lists the committed bindings that match the filter (acl_filter_matches),
 *     grouped by resource pattern in the image's order.
 *   - CreateAcls checks each binding (acl_binding_check: INVALID_REQUEST with the reason) and
 *     turns each into one ACL controller command. Besides Kafka's resource types it takes the
 *     schema registry's, REGISTRY (100) and SUBJECT (101) of security/acl.h; Kafka's clients
 *     see those only when they list with resource type ANY.
 *   - DeleteAcls finds, per filter, the committed bindings that match it and removes each with
 *     one ACL command; a filter's result lists them, each with its command's error.
 * Creations and deletions are answered once every command is; they are visible at every node
 * once it has applied the records (the broker's checks read the committed image).
 *
 * State: one struct acls_op per CreateAcls or DeleteAcls in flight, freed when answered. */
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/errors.h"
#include "base/mem.h"
#include "broker/authz.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "controller/image.h"
#include "controller/request.h"
#include "kafka/errors.h"

#define NO_AUTHORIZER "No Authorizer is configured on the broker"
#define DELETE_MATCHES_MAX 10000 /* bindings one DeleteAcls filter may remove */

static struct kacl_result *results_all(struct arena *a, int32_t n, int16_t ec, const char *msg)
{
    struct kacl_result *res = arena_calloc(a, n > 0 ? (size_t)n : 1, sizeof(*res));
    for (int32_t i = 0; i < n; i++)
        res[i] = (struct kacl_result){ec, kstr_c(msg)};
    return res;
}

/* A wire string into an arena copy for a filter: NULL for null; *bad for a NUL byte or one
 * over cap - 1 bytes. */
static const char *filter_str(struct arena *a, struct kstr s, size_t cap, bool *bad)
{
    if (s.len < 0)
        return NULL;
    char *out = arena_alloc(a, cap);
    if (acl_str_copy(out, cap, s.p, (size_t)s.len) != 0)
        *bad = true;
    return out;
}

/* The filter of a DescribeAcls or DeleteAcls entry; -ERR_INVALID for one Kafka refuses. */
static int to_filter(struct arena *a, const struct kacl *k, struct acl_filter *f)
{
    bool bad = false;
    *f = (struct acl_filter){
        .resource_type = (enum acl_resource_type)k->resource_type,
        .pattern_type = (enum acl_pattern_type)k->pattern_type,
        .resource_name = filter_str(a, k->resource_name, ACL_NAME_MAX + 1, &bad),
        .principal = filter_str(a, k->principal, ACL_PRINCIPAL_MAX + 1, &bad),
        .host = filter_str(a, k->host, ACL_HOST_MAX + 1, &bad),
        .operation = (enum acl_operation)k->operation,
        .permission = (enum acl_permission)k->permission,
    };
    return bad ? -ERR_INVALID : acl_filter_check(f);
}

static struct kacl to_kacl(struct arena *a, const struct acl_binding *b)
{
    return (struct kacl){
        .resource_type = (int8_t)b->resource_type,
        .resource_name = kstr_c(arena_strndup(a, b->resource_name, strlen(b->resource_name))),
        .pattern_type = (int8_t)b->pattern_type,
        .principal = kstr_c(arena_strndup(a, b->principal, strlen(b->principal))),
        .host = kstr_c(arena_strndup(a, b->host, strlen(b->host))),
        .operation = (int8_t)b->operation,
        .permission = (int8_t)b->permission,
    };
}

/* ---- DescribeAcls ---- */

static void describe_matching(struct request *req, const struct acl_filter *f,
                              struct describe_acls_resp *resp)
{
    const struct ctl_image *img = cluster_image(req->b->cluster);
    size_t n = img ? img->n_acls : 0;
    resp->resources = arena_calloc(req->arena, n ? n : 1, sizeof(*resp->resources));
    struct describe_acls_resource *cur = NULL;
    for (size_t i = 0; i < n; i++) {
        struct acl_binding b;
        authz_binding_from_rec(&b, &img->acls[i]);
        if (!acl_filter_matches(f, &b))
            continue;
        /* the image's order groups the bindings of one resource pattern together */
        if (!cur || cur->resource_type != (int8_t)b.resource_type ||
            cur->pattern_type != (int8_t)b.pattern_type ||
            !kstr_eq(cur->resource_name, b.resource_name)) {
            cur = &resp->resources[resp->n_resources++];
            struct kacl k = to_kacl(req->arena, &b);
            *cur = (struct describe_acls_resource){k.resource_type, k.resource_name,
                                                   k.pattern_type, NULL, 0};
            cur->acls = arena_calloc(req->arena, n - i, sizeof(*cur->acls));
        }
        cur->acls[cur->n_acls++] = to_kacl(req->arena, &b);
    }
}

int handle_describe_acls(struct request *req)
{
    struct describe_acls_req dr;
    if (kmsg_decode_describe_acls(&req->body, req->hdr.api_version, &dr) != 0)
        return -ERR_CORRUPT;
    struct describe_acls_resp resp = {.error_message = KSTR_NULL};
    struct acl_filter f;
    if (!authz_on(req->b)) {
        resp.error_code = KERR_SECURITY_DISABLED;
        resp.error_message = kstr_c(NO_AUTHORIZER);
    } else if (!authz_allows_cluster(req, ACL_OP_DESCRIBE)) {
        resp.error_code = KERR_CLUSTER_AUTHORIZATION_FAILED;
        resp.error_message = kstr_c("DescribeAcls needs Describe on the cluster");
    } else if (to_filter(req->arena, &dr.filter, &f) != 0) {
        resp.error_code = KERR_INVALID_REQUEST;
        resp.error_message = kstr_c("The filter has an unknown type, pattern, operation or "
                                    "permission, or a string Kafka does not take");
    } else {
        describe_matching(req, &f, &resp);
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_describe_acls(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

/* ---- CreateAcls and DeleteAcls: controller commands ---- */

struct acls_op {
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena;
    int pending;
    bool deleting;
    struct create_acls_resp create;
    struct delete_acls_resp del;
};

struct acls_item {
    struct acls_op *op;
    int16_t *error_code;       /* where the command's error goes */
    struct kstr *error_message;
};

static struct acls_op *op_new(struct request *req, bool deleting)
{
    struct acls_op *op = mem_calloc(1, sizeof(*op));
    op->slot = conn_slot_reserve(req->conn);
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL; /* points into the frame */
    arena_init(&op->arena, 1024);
    op->pending = 1;
    op->deleting = deleting;
    return op;
}

static void op_release(struct acls_op *op)
{
    if (--op->pending > 0)
        return;
    struct response r;
    response_begin(&r, &op->hdr);
    if (op->deleting)
        kmsg_encode_delete_acls(&r.w, op->hdr.api_version, &op->del);
    else
        kmsg_encode_create_acls(&r.w, op->hdr.api_version, &op->create);
    response_send(&r, op->slot);
    arena_destroy(&op->arena);
    mem_free(op);
}

static const char *command_error_text(int16_t ec)
{
    switch (ec) {
    case KERR_NOT_CONTROLLER:
    case KERR_REQUEST_TIMED_OUT:
        return "No controller answered; retry";
    case KERR_INVALID_REQUEST:
        return "The metadata log refused the binding";
    default:
        return kafka_error_name(ec);
    }
}

static void item_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct acls_item *it = data;
    (void)rt;
    if (a->error != KERR_NONE) {
        *it->error_code = a->error;
        *it->error_message = kstr_c(command_error_text(a->error));
    }
    struct acls_op *op = it->op;
    mem_free(it);
    op_release(op);
}

static void submit(struct broker *b, struct acls_op *op, const struct acl_binding *bd,
                   bool deleted, int16_t *ec, struct kstr *msg)
{
    struct ctl_request cmd = {.type = CTL_REQ_ACL};
    authz_rec_from_binding(&cmd.acl, bd);
    cmd.acl.deleted = deleted;
    struct acls_item *it = mem_calloc(1, sizeof(*it));
    *it = (struct acls_item){op, ec, msg};
    op->pending++;
    cluster_submit(b->cluster, &cmd, item_done, it);
}

int handle_create_acls(struct request *req)
{
    struct create_acls_req cr;
    if (kmsg_decode_create_acls(&req->body, req->hdr.api_version, req->arena, &cr) != 0)
        return -ERR_CORRUPT;
    struct acls_op *op = op_new(req, false);
    struct create_acls_resp *resp = &op->create;
    resp->n_results = cr.n_creations;
    if (!authz_on(req->b)) {
        resp->results = results_all(&op->arena, cr.n_creations, KERR_SECURITY_DISABLED,
                                    NO_AUTHORIZER);
    } else if (!authz_allows_cluster(req, ACL_OP_ALTER)) {
        resp->results = results_all(&op->arena, cr.n_creations, KERR_CLUSTER_AUTHORIZATION_FAILED,
                                    "CreateAcls needs Alter on the cluster");
    } else {
        resp->results = results_all(&op->arena, cr.n_creations, KERR_NONE, NULL);
        for (int32_t i = 0; i < cr.n_creations; i++) {
            const struct kacl *k = &cr.creations[i];
            struct kacl_result *res = &resp->results[i];
            res->error_message = KSTR_NULL;
            struct acl_binding bd = {
                .resource_type = (enum acl_resource_type)k->resource_type,
                .pattern_type = (enum acl_pattern_type)k->pattern_type,
                .operation = (enum acl_operation)k->operation,
                .permission = (enum acl_permission)k->permission,
            };
            bool ok = k->resource_name.len > 0 && k->principal.len > 0 && k->host.len > 0 &&
                      acl_binding_set_strings(&bd, k->resource_name.p,
                                              (size_t)k->resource_name.len, k->principal.p,
                                              (size_t)k->principal.len, k->host.p,
                                              (size_t)k->host.len) == 0 &&
                      acl_binding_check(&bd) == 0;
            if (!ok) {
                res->error_code = KERR_INVALID_REQUEST;
                res->error_message = kstr_c(
                    "Invalid binding: the resource type, pattern type (LITERAL or PREFIXED), "
                    "operation and permission must be concrete, the principal User:NAME and "
                    "the host * or an IP address; a Registry (100) binding is LITERAL "
                    "schema-registry or *");
                continue;
            }
            submit(req->b, op, &bd, false, &res->error_code, &res->error_message);
        }
    }
    op_release(op);
    return 0;
}

/* One DeleteAcls filter: the committed bindings it matches, each removed by a command. */
static void delete_filter(struct request *req, struct acls_op *op, const struct kacl *k,
                          struct delete_acls_filter_result *res)
{
    struct acl_filter f;
    *res = (struct delete_acls_filter_result){KERR_NONE, KSTR_NULL, NULL, 0};
    if (to_filter(req->arena, k, &f) != 0) {
        res->error_code = KERR_INVALID_REQUEST;
        res->error_message = kstr_c("The filter has an unknown type, pattern, operation or "
                                    "permission, or a string Kafka does not take");
        return;
    }
    const struct ctl_image *img = cluster_image(req->b->cluster);
    size_t n = 0;
    for (size_t i = 0; img && i < img->n_acls; i++) {
        struct acl_binding b;
        authz_binding_from_rec(&b, &img->acls[i]);
        n += acl_filter_matches(&f, &b);
    }
    if (n > DELETE_MATCHES_MAX) {
        res->error_code = KERR_INVALID_REQUEST;
        res->error_message = kstr_c("The filter matches more than 10000 bindings; narrow it");
        return;
    }
    res->matches = arena_calloc(&op->arena, n ? n : 1, sizeof(*res->matches));
    for (size_t i = 0; img && i < img->n_acls; i++) {
        struct acl_binding b;
        authz_binding_from_rec(&b, &img->acls[i]);
        if (!acl_filter_matches(&f, &b))
            continue;
        res->matches[res->n_matches++] =
            (struct delete_acls_match){KERR_NONE, KSTR_NULL, to_kacl(&op->arena, &b)};
    }
    /* the commands after the walk: none may change the image under it */
    for (int32_t i = 0; i < res->n_matches; i++) {
        struct delete_acls_match *m = &res->matches[i];
        struct acl_binding b = {
            .resource_type = (enum acl_resource_type)m->acl.resource_type,
            .pattern_type = (enum acl_pattern_type)m->acl.pattern_type,
            .operation = (enum acl_operation)m->acl.operation,
            .permission = (enum acl_permission)m->acl.permission,
        };
        (void)acl_binding_set_strings(&b, m->acl.resource_name.p, (size_t)m->acl.resource_name.len,
                                      m->acl.principal.p, (size_t)m->acl.principal.len,
                                      m->acl.host.p, (size_t)m->acl.host.len);
        submit(req->b, op, &b, true, &m->error_code, &m->error_message);
    }
}

int handle_delete_acls(struct request *req)
{
    struct delete_acls_req dr;
    if (kmsg_decode_delete_acls(&req->body, req->hdr.api_version, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct acls_op *op = op_new(req, true);
    struct delete_acls_resp *resp = &op->del;
    resp->n_results = dr.n_filters;
    resp->results = arena_calloc(&op->arena, dr.n_filters > 0 ? (size_t)dr.n_filters : 1,
                                 sizeof(*resp->results));
    bool on = authz_on(req->b);
    bool allowed = on && authz_allows_cluster(req, ACL_OP_ALTER);
    for (int32_t i = 0; i < dr.n_filters; i++) {
        struct delete_acls_filter_result *res = &resp->results[i];
        if (!on)
            *res = (struct delete_acls_filter_result){KERR_SECURITY_DISABLED,
                                                      kstr_c(NO_AUTHORIZER), NULL, 0};
        else if (!allowed)
            *res = (struct delete_acls_filter_result){
                KERR_CLUSTER_AUTHORIZATION_FAILED,
                kstr_c("DeleteAcls needs Alter on the cluster"), NULL, 0};
        else
            delete_filter(req, op, &dr.filters[i], res);
    }
    op_release(op);
    return 0;
}
