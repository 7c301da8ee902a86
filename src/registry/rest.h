/* Confluent Schema Registry's REST API as a pure function: a request (already split into
 * decoded path segments and query parameters) and the store -> the answer, and the records to
 * append to `_schemas` before the answer may be sent.
 *
 * Routes (Confluent's; every answer is JSON, application/vnd.schemaregistry.v1+json, but the
 * raw-schema routes):
 *   GET    /                                        {}
 *   GET    /schemas/types                           the supported types
 *   GET    /schemas/ids/{id}[/schema|/versions|/subjects]
 *   GET    /subjects                                ?deleted ?subjectPrefix
 *   POST   /subjects/{s}                            lookup ?deleted ?normalize
 *   DELETE /subjects/{s}                            ?permanent
 *   GET    /subjects/{s}/versions                   ?deleted
 *   POST   /subjects/{s}/versions                   register ?normalize
 *   GET    /subjects/{s}/versions/{v}[/schema|/referencedby]   ?deleted
 *   DELETE /subjects/{s}/versions/{v}               ?permanent
 *   GET|PUT|DELETE /config[/{s}]                    GET ?defaultToGlobal
 *   GET|PUT|DELETE /mode[/{s}]                      GET ?defaultToGlobal, PUT ?force
 *   POST   /compatibility/subjects/{s}/versions[/{v}]          ?verbose ?normalize
 * Errors are Confluent's bodies {"error_code":N,"message":"..."} with its codes (40401 subject
 * not found, 40402 version not found, 40403 schema not found, 40404-40409 delete and config
 * states, 409 incompatible, 42201 invalid schema, 42202 invalid version, 42203 invalid level,
 * 42204 invalid mode, 42205 operation not permitted, 42206 referenced, 400 malformed body, 404
 * unknown path, 405 method not allowed) and the HTTP status their first three digits give.
 *
 * Writes: an answer that changes the state comes with records (result.writes). The caller
 * appends them, in order, as one batch to `_schemas` and sends the answer only once they are
 * committed; it must evaluate writes one at a time against a store that has applied
 * everything before them (the ids and versions given out depend on it). reg_rest_is_write()
 * tells, before evaluating, which requests may write (those go to the topic's leader).
 *
 * Pure: reads the store, never changes it. */
#ifndef SP_REGISTRY_REST_H
#define SP_REGISTRY_REST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "registry/store.h"

#define REG_SEGS_MAX 8
#define REG_PARAMS_MAX 16
#define REG_CONTENT_TYPE "application/vnd.schemaregistry.v1+json"

struct reg_param {
    const char *key; /* decoded, NUL-terminated */
    const char *value;
};

struct reg_authz;

struct reg_rest_req {
    const char *method; /* NUL-terminated: "GET", "POST", ... */
    const char *segs[REG_SEGS_MAX]; /* path segments, percent-decoded, NUL-terminated */
    size_t n_segs;
    struct reg_param params[REG_PARAMS_MAX];
    size_t n_params;
    const char *body;
    size_t body_len;
    const struct reg_authz *authz; /* NULL: every request allowed (no authorizer, or a request
                                      forwarded here: authorized where the client asked);
                                      else as registry/rest_authz.h says */
};

struct reg_write {
    struct strbuf key;
    bool tombstone; /* no value */
    struct strbuf value;
};

struct reg_result {
    int status;               /* HTTP status */
    const char *content_type; /* static */
    struct strbuf body;
    struct reg_write *writes; /* n_writes records to commit before answering */
    size_t n_writes;
};

void reg_result_init(struct reg_result *r);
void reg_result_free(struct reg_result *r);

/* Whether the request may change the state (register, delete, PUT/DELETE config and mode). */
bool reg_rest_is_write(const struct reg_rest_req *req);

/* Evaluates req against st into *out (initialised by the caller): first the authorization
 * (reg_authz_check: 403, 40301 when denied), then the route. */
void reg_rest_handle(const struct reg_store *st, const struct reg_rest_req *req,
                     struct reg_result *out);

/* Fills *out with a Confluent error body. */
void reg_rest_error(struct reg_result *out, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
