/* Authorization of the schema registry's REST requests: which resource and operation each route
 * needs, as Redpanda 25.2's Schema Registry Authorization names them (resource types `registry`,
 * the registry as a whole, and `subject`, by name), with Confluent's SCHEMA_READ rule for
 * schema ids. Pure: the decision itself is the caller's (a struct reg_authz hook; the broker
 * asks its ACL authorizer), this file only says what to ask.
 *
 * The table (reg_authz_need; every other path or method is open, and answers 404 or 405):
 *   GET    /, /schemas/types                        open
 *   GET    /schemas/ids/{id}[/schema]               SCHEMA_ID: READ on some subject with a
 *                                                   version (deleted ones too) using the id
 *   GET    /schemas/ids/{id}/subjects|versions      SCHEMA_ID, and the list keeps only the
 *                                                   subjects the principal may DESCRIBE
 *   GET    /subjects                                LIST: only the subjects it may DESCRIBE
 *   POST   /subjects/{s}              (lookup)      READ subject s
 *   DELETE /subjects/{s}                            DELETE subject s
 *   GET    /subjects/{s}/versions                   DESCRIBE subject s
 *   POST   /subjects/{s}/versions     (register)    WRITE subject s
 *   GET    /subjects/{s}/versions/{v}[/schema]      READ subject s
 *   GET    /subjects/{s}/versions/{v}/referencedby  DESCRIBE registry (it names other subjects)
 *   DELETE /subjects/{s}/versions/{v}               DELETE subject s
 *   GET    /config, /mode                           DESCRIBE_CONFIGS registry
 *   PUT|DELETE /config, /mode                       ALTER_CONFIGS registry
 *   GET    /config/{s}, /mode/{s}                   DESCRIBE_CONFIGS subject s
 *   PUT|DELETE /config/{s}, /mode/{s}               ALTER_CONFIGS subject s
 *   POST   /compatibility/subjects/{s}/versions[/{v}]  READ subject s
 * The ACL rules make ALLOW READ, WRITE or DELETE imply DESCRIBE, and ALTER_CONFIGS imply
 * DESCRIBE_CONFIGS (security/acl.h), so a subject's writer sees it listed.
 *
 * A denial is HTTP 403 with Confluent's body {"error_code":40301,"message":"User is denied
 * operation Write on Subject: orders-value"}. */
#ifndef SP_REGISTRY_REST_AUTHZ_H
#define SP_REGISTRY_REST_AUTHZ_H

#include <stdbool.h>

struct reg_rest_req;
struct reg_result;
struct reg_store;

#define REG_AUTHZ_DENIED 40301 /* Confluent's security plugin: the operation is not permitted */

enum reg_resource {
    REG_RESOURCE_REGISTRY, /* the registry as a whole (global config and mode, ...) */
    REG_RESOURCE_SUBJECT,  /* one subject, by name */
};

enum reg_op {
    REG_OP_READ,
    REG_OP_WRITE,
    REG_OP_DELETE,
    REG_OP_DESCRIBE,
    REG_OP_DESCRIBE_CONFIGS,
    REG_OP_ALTER_CONFIGS,
};

enum reg_need_kind {
    REG_NEED_OPEN,      /* no check */
    REG_NEED_RESOURCE,  /* op on (resource, name) */
    REG_NEED_LIST,      /* no check; the answer lists only subjects it may DESCRIBE */
    REG_NEED_SCHEMA_ID, /* READ on some subject using the id (name); a listing answer is
                           filtered as LIST's */
};

struct reg_need {
    enum reg_need_kind kind;
    enum reg_resource resource; /* REG_NEED_RESOURCE */
    const char *name;           /* the subject (borrowed from the request), the id's text for
                                   SCHEMA_ID, NULL for the registry */
    enum reg_op op;
};

/* The decision: whether the request's principal may do op on the resource (name NULL for the
 * registry). audit false for checks that only filter a listing (they are counted, not logged). */
typedef bool (*reg_allows_fn)(void *data, enum reg_resource r, const char *name, enum reg_op op,
                              bool audit);

struct reg_authz {
    reg_allows_fn allows;
    void *data;
};

/* What req needs (the table above). Never fails: an unknown route is OPEN. */
void reg_authz_need(const struct reg_rest_req *req, struct reg_need *out);

/* Whether req (with req->authz non-NULL) may be evaluated against st: true, or false with the
 * 403 answer in *res. SCHEMA_ID of an id st does not hold is let through (the route answers
 * 40403). With req->authz NULL: true. */
bool reg_authz_check(const struct reg_store *st, const struct reg_rest_req *req,
                     struct reg_result *res);

/* Whether a listing answer to req may name subject (req->authz NULL: true). */
bool reg_authz_may_list(const struct reg_rest_req *req, const char *subject);

/* "Read", "DescribeConfigs", ... and "Registry", "Subject", as Confluent's messages spell
 * them. Never NULL. */
const char *reg_op_name(enum reg_op op);
const char *reg_resource_name(enum reg_resource r);

#endif
