/* The schema registry's HTTP front (see registry_http.h): decode, hand to the broker's
 * service, answer now or later.
 *
 * A request's answer either comes during schemas_handle() (a read: the answer is written into
 * the httpd response at once) or later (a write waiting for its commit, a forward): then the
 * response is deferred and struct wait carries the httpd handle until the service calls back.
 * Invariant: every struct wait is freed exactly once, in answered(), which the service calls
 * exactly once per request.
 *
 * Authorization: with the broker's authorizer on (authorizer.class.name), each request carries
 * a hook (struct wait's authz, registry/rest_authz.h) that decides for its principal and the
 * client's address: the HTTP Basic user's User:NAME with BASIC, else User:ANONYMOUS (as a
 * Kafka PLAINTEXT listener's clients are). The hook lives in struct wait, so as long as the
 * service may call it. */
#include "server/registry_http.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "base/mem.h"
#include "broker/admin_auth.h"
#include "broker/authz.h"
#include "broker/schemas.h"
#include "registry/rest.h"
#include "registry/rest_authz.h"
#include "security/acl.h"
#include "server/http.h"
#include "server/httpd.h"

#define REGISTRY_MAX_CONNECTIONS 256
#define REGISTRY_TIMEOUT_MS (SCHEMAS_TIMEOUT_MS + 2000)

struct registry_http {
    struct httpd *h;
    struct broker *b;
    bool basic; /* schema.registry.authentication.method=BASIC */
};

struct wait {
    struct httpd_response *resp; /* during the handler; NULL once deferred */
    struct httpd_pending *pending;
    bool answered;                         /* the answer came during the handler */
    struct reg_authz authz;                /* the request's hook (authorizer on) */
    struct broker *b;                      /* the hook's authorizer */
    char principal[ACL_PRINCIPAL_MAX + 1]; /* "User:NAME" or "User:ANONYMOUS" */
    char host[ACL_HOST_MAX + 1];           /* the client's address */
};

static enum acl_operation acl_op_of(enum reg_op op)
{
    switch (op) {
    case REG_OP_READ:
        return ACL_OP_READ;
    case REG_OP_WRITE:
        return ACL_OP_WRITE;
    case REG_OP_DELETE:
        return ACL_OP_DELETE;
    case REG_OP_DESCRIBE:
        return ACL_OP_DESCRIBE;
    case REG_OP_DESCRIBE_CONFIGS:
        return ACL_OP_DESCRIBE_CONFIGS;
    case REG_OP_ALTER_CONFIGS:
        return ACL_OP_ALTER_CONFIGS;
    }
    return ACL_OP_UNKNOWN; /* denied */
}

static bool wait_allows(void *data, enum reg_resource r, const char *name, enum reg_op op,
                        bool audit)
{
    struct wait *w = data;
    bool reg = r == REG_RESOURCE_REGISTRY;
    return authz_allows_principal(w->b, w->principal, w->host, acl_op_of(op),
                                  reg ? ACL_RESOURCE_REGISTRY : ACL_RESOURCE_SUBJECT,
                                  reg ? ACL_REGISTRY_NAME : name, audit);
}

static void answered(void *arg, const struct reg_result *res)
{
    struct wait *w = arg;
    if (w->resp) { /* still in the handler */
        w->resp->status = res->status;
        w->resp->content_type = res->content_type;
        strbuf_append(&w->resp->body, res->body.p ? res->body.p : "", res->body.len);
        w->answered = true;
        return;
    }
    struct strbuf body;
    strbuf_init(&body);
    strbuf_append(&body, res->body.p ? res->body.p : "", res->body.len);
    httpd_finish(w->pending, res->status, res->content_type, &body);
    mem_free(w);
}

static void error_answer(struct httpd_response *resp, int code, const char *msg)
{
    struct reg_result res;
    reg_result_init(&res);
    reg_rest_error(&res, code, "%s", msg);
    resp->status = res.status;
    resp->content_type = REG_CONTENT_TYPE;
    strbuf_append(&resp->body, res.body.p, res.body.len);
    reg_result_free(&res);
}

static bool body_type_ok(const struct http_request *req)
{
    return !req->content_type || http_content_type_is(req, REG_CONTENT_TYPE) ||
           http_content_type_is(req, "application/vnd.schemaregistry+json") ||
           http_content_type_is(req, "application/json") ||
           http_content_type_is(req, "application/octet-stream");
}

/* Splits and decodes the path and query into q, decoded strings in buf. 0, or the HTTP
 * status to refuse with. */
static int decode(const struct http_request *req, struct reg_rest_req *q, char *buf, size_t cap)
{
    size_t used = 0;
    const char *p = req->path + 1, *end = req->path + req->path_len;
    while (p < end) {
        const char *slash = memchr(p, '/', (size_t)(end - p));
        const char *seg_end = slash ? slash : end;
        if (seg_end > p) {
            if (q->n_segs == REG_SEGS_MAX)
                return 404;
            int n = http_percent_decode(p, (size_t)(seg_end - p), buf + used, cap - used - 1);
            if (n < 0 || memchr(buf + used, '\0', (size_t)n))
                return 404;
            buf[used + (size_t)n] = '\0';
            q->segs[q->n_segs++] = buf + used;
            used += (size_t)n + 1;
        }
        p = seg_end + 1;
    }
    p = req->query;
    end = req->query ? req->query + req->query_len : NULL;
    while (p && p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *pe = amp ? amp : end;
        if (pe > p) {
            if (q->n_params == REG_PARAMS_MAX)
                return 400;
            const char *eq = memchr(p, '=', (size_t)(pe - p));
            const char *ke = eq ? eq : pe;
            int kn = http_percent_decode(p, (size_t)(ke - p), buf + used, cap - used - 1);
            if (kn < 0)
                return 400;
            buf[used + (size_t)kn] = '\0';
            q->params[q->n_params].key = buf + used;
            used += (size_t)kn + 1;
            int vn = eq ? http_percent_decode(eq + 1, (size_t)(pe - eq - 1), buf + used,
                                              cap - used - 1)
                        : 0;
            if (vn < 0)
                return 400;
            buf[used + (size_t)vn] = '\0';
            q->params[q->n_params++].value = buf + used;
            used += (size_t)vn + 1;
        }
        p = pe + 1;
    }
    return 0;
}

/* BASIC: whether the request carries a SCRAM user's name and password; if not, Confluent's
 * 401 is in resp (held as the broker says after failures). */
static bool authenticated(struct registry_http *rh, const struct http_request *req,
                          struct httpd_response *resp, char *principal, size_t cap)
{
    struct http_basic cred;
    int rc = -EACCES;
    if (req->authorization &&
        http_basic_parse(req->authorization, req->authorization_len, &cred) == 0) {
        rc = broker_registry_authenticate(rh->b, req->peer ? req->peer : "?", cred.user,
                                          cred.user_len, cred.password, cred.password_len,
                                          &resp->delay_ms);
        if (rc == 0)
            snprintf(principal, cap, "User:%.*s", (int)cred.user_len, cred.user);
        OPENSSL_cleanse(&cred, sizeof(cred));
    }
    if (rc == 0)
        return true;
    error_answer(resp, 401, "Unauthorized: HTTP Basic with the name and password of a SCRAM "
                            "user");
    resp->extra_headers = "WWW-Authenticate: Basic realm=\"streampulse-schema-registry\"\r\n";
    return false;
}

static void handle(const struct http_request *req, struct httpd_response *resp, void *data)
{
    struct registry_http *rh = data;
    char principal[ACL_PRINCIPAL_MAX + 1] = "User:ANONYMOUS";
    if (rh->basic && !authenticated(rh, req, resp, principal, sizeof principal))
        return;
    char method[HTTP_METHOD_MAX + 1];
    memcpy(method, req->method, req->method_len);
    method[req->method_len] = '\0';
    struct reg_rest_req q = {.method = method, .body = req->body, .body_len = req->body_len};
    char buf[2 * HTTP_TARGET_MAX + 64];
    int st = decode(req, &q, buf, sizeof buf);
    if (st == 404) {
        error_answer(resp, 404, "HTTP 404 Not Found");
        return;
    }
    if (st != 0) {
        error_answer(resp, 400, "Bad query string");
        return;
    }
    if (req->body_len > 0 && !body_type_ok(req)) {
        error_answer(resp, 415, "HTTP 415 Unsupported Media Type");
        return;
    }
    if (http_method_is(req, "HEAD"))
        q.method = "GET";
    struct wait *w = mem_calloc(1, sizeof(*w));
    w->resp = resp;
    if (authz_on(rh->b)) {
        w->b = rh->b;
        w->authz = (struct reg_authz){wait_allows, w};
        snprintf(w->principal, sizeof w->principal, "%s", principal);
        snprintf(w->host, sizeof w->host, "%s", req->peer ? req->peer : "unknown");
        q.authz = &w->authz;
    }
    schemas_handle(rh->b, &q, answered, w);
    if (w->answered) {
        mem_free(w);
        return;
    }
    /* later: the fallback below goes out if the service does not answer in time */
    w->resp = NULL;
    w->pending = httpd_defer(resp);
    error_answer(resp, 50002, "Operation timed out");
}

int registry_http_start(struct reactor *r, const char *host, int port,
                        const struct listener_tls *tls, bool basic, struct broker *b,
                        struct registry_http **out)
{
    struct registry_http *rh = mem_calloc(1, sizeof(*rh));
    rh->b = b;
    rh->basic = basic;
    struct httpd_limits lim = {.max_connections = REGISTRY_MAX_CONNECTIONS,
                               .timeout_ms = REGISTRY_TIMEOUT_MS,
                               .body_max = SCHEMAS_BODY_MAX};
    int rc = httpd_open(r, host, port, &lim, tls, handle, rh, &rh->h);
    if (rc != 0) {
        mem_free(rh);
        return rc;
    }
    *out = rh;
    return 0;
}

int registry_http_port(const struct registry_http *h)
{
    return httpd_port(h->h);
}

void registry_http_stop(struct registry_http *h)
{
    if (!h)
        return;
    httpd_close(h->h);
    mem_free(h);
}
