/* The registry's route -> (resource, operation) table and the checks rest.c makes with it
 * (rest_authz.h). Stateless: reads the request and the store, asks the hook.
 *
 * The table follows the routing of reg_rest_handle: a path it would answer 404 or 405 needs
 * nothing here, so an unauthorized client learns no more than that the route does not exist. */
#include "registry/rest_authz.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "registry/rest.h"
#include "registry/store.h"

static bool method_is(const struct reg_rest_req *req, const char *m)
{
    return !strcmp(req->method, m);
}

static bool seg_is(const struct reg_rest_req *req, size_t i, const char *s)
{
    return i < req->n_segs && !strcmp(req->segs[i], s);
}

static void need(struct reg_need *out, enum reg_resource r, const char *name, enum reg_op op)
{
    *out = (struct reg_need){REG_NEED_RESOURCE, r, name, op};
}

/* /subjects... */
static void subjects_need(const struct reg_rest_req *req, bool get, struct reg_need *out)
{
    size_t n = req->n_segs;
    const char *s = n >= 2 ? req->segs[1] : NULL;
    if (n == 1) {
        if (get)
            out->kind = REG_NEED_LIST;
    } else if (n == 2) {
        if (method_is(req, "POST"))
            need(out, REG_RESOURCE_SUBJECT, s, REG_OP_READ);
        else if (method_is(req, "DELETE"))
            need(out, REG_RESOURCE_SUBJECT, s, REG_OP_DELETE);
    } else if (!seg_is(req, 2, "versions") || n > 5) {
        return;
    } else if (n == 3) {
        if (get)
            need(out, REG_RESOURCE_SUBJECT, s, REG_OP_DESCRIBE);
        else if (method_is(req, "POST"))
            need(out, REG_RESOURCE_SUBJECT, s, REG_OP_WRITE);
    } else if (n == 5 && seg_is(req, 4, "referencedby")) {
        if (get)
            need(out, REG_RESOURCE_REGISTRY, NULL, REG_OP_DESCRIBE);
    } else if (n == 4 || seg_is(req, 4, "schema")) {
        if (get)
            need(out, REG_RESOURCE_SUBJECT, s, REG_OP_READ);
        else if (method_is(req, "DELETE") && n == 4)
            need(out, REG_RESOURCE_SUBJECT, s, REG_OP_DELETE);
    }
}

void reg_authz_need(const struct reg_rest_req *req, struct reg_need *out)
{
    *out = (struct reg_need){.kind = REG_NEED_OPEN};
    size_t n = req->n_segs;
    bool get = method_is(req, "GET") || method_is(req, "HEAD");
    if (n == 0)
        return;
    const char *top = req->segs[0];
    if (!strcmp(top, "subjects")) {
        subjects_need(req, get, out);
    } else if (!strcmp(top, "schemas")) {
        if ((n == 3 || n == 4) && seg_is(req, 1, "ids") && get &&
            (n == 3 || seg_is(req, 3, "schema") || seg_is(req, 3, "versions") ||
             seg_is(req, 3, "subjects")))
            *out = (struct reg_need){
                .kind = REG_NEED_SCHEMA_ID, .name = req->segs[2], .op = REG_OP_READ};
    } else if ((!strcmp(top, "config") || !strcmp(top, "mode")) && n <= 2) {
        enum reg_resource r = n == 2 ? REG_RESOURCE_SUBJECT : REG_RESOURCE_REGISTRY;
        const char *name = n == 2 ? req->segs[1] : NULL;
        if (get)
            need(out, r, name, REG_OP_DESCRIBE_CONFIGS);
        else if (method_is(req, "PUT") || method_is(req, "DELETE"))
            need(out, r, name, REG_OP_ALTER_CONFIGS);
    } else if (!strcmp(top, "compatibility") && (n == 4 || n == 5) && seg_is(req, 1, "subjects") &&
               seg_is(req, 3, "versions")) {
        if (method_is(req, "POST"))
            need(out, REG_RESOURCE_SUBJECT, req->segs[2], REG_OP_READ);
    }
}

static void denied(struct reg_result *res, enum reg_op op, const char *what, const char *name)
{
    if (name)
        reg_rest_error(res, REG_AUTHZ_DENIED, "User is denied operation %s on %s: %s",
                       reg_op_name(op), what, name);
    else
        reg_rest_error(res, REG_AUTHZ_DENIED, "User is denied operation %s on %s", reg_op_name(op),
                       what);
}

/* Confluent's SCHEMA_READ: READ on at least one subject that has a version with the id. */
static bool may_read_id(const struct reg_store *st, const struct reg_authz *z, int32_t id)
{
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&st->subjects, &it, &k, &v)) {
        const struct reg_subject *s = v;
        for (size_t i = 0; i < s->n; i++) {
            if (s->v[i].id != id)
                continue;
            if (z->allows(z->data, REG_RESOURCE_SUBJECT, s->name, REG_OP_READ, false))
                return true;
            break;
        }
    }
    return false;
}

static bool id_parse(const char *text, int32_t *out)
{
    char *end;
    errno = 0;
    long long n = strtoll(text, &end, 10);
    if (*text < '0' || *text > '9' || *end || errno || n < 1 || n > INT32_MAX)
        return false;
    *out = (int32_t)n;
    return true;
}

bool reg_authz_check(const struct reg_store *st, const struct reg_rest_req *req,
                     struct reg_result *res)
{
    const struct reg_authz *z = req->authz;
    if (!z)
        return true;
    struct reg_need nd;
    reg_authz_need(req, &nd);
    if (nd.kind == REG_NEED_RESOURCE) {
        if (z->allows(z->data, nd.resource, nd.name, nd.op, true))
            return true;
        denied(res, nd.op, reg_resource_name(nd.resource), nd.name);
        return false;
    }
    if (nd.kind != REG_NEED_SCHEMA_ID)
        return true;
    int32_t id;
    if (!id_parse(nd.name, &id) || !reg_store_id(st, id) || may_read_id(st, z, id))
        return true;
    denied(res, REG_OP_READ, "Schema", nd.name);
    return false;
}

bool reg_authz_may_list(const struct reg_rest_req *req, const char *subject)
{
    const struct reg_authz *z = req->authz;
    return !z || z->allows(z->data, REG_RESOURCE_SUBJECT, subject, REG_OP_DESCRIBE, false);
}

const char *reg_op_name(enum reg_op op)
{
    switch (op) {
    case REG_OP_READ:
        return "Read";
    case REG_OP_WRITE:
        return "Write";
    case REG_OP_DELETE:
        return "Delete";
    case REG_OP_DESCRIBE:
        return "Describe";
    case REG_OP_DESCRIBE_CONFIGS:
        return "DescribeConfigs";
    case REG_OP_ALTER_CONFIGS:
        return "AlterConfigs";
    }
    return "Unknown";
}

const char *reg_resource_name(enum reg_resource r)
{
    return r == REG_RESOURCE_REGISTRY ? "Registry" : "Subject";
}
