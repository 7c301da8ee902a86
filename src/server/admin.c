/* Admin endpoints: routing of the HTTP admin listener to the broker's views (see admin.h).
 *
 * Adds to /metrics what the broker does not know:
 *   streampulse_build_info{version}                   gauge, always 1
 *   streampulse_uptime_seconds                        gauge
 *   process_start_time_seconds                        gauge (Unix time)
 *   process_resident_memory_bytes                     gauge
 *   process_open_fds                                  gauge
 *   process_cpu_seconds_total                         counter
 *   streampulse_admin_http_responses_total{code}      counter (codes seen so far)
 *   streampulse_admin_connections_refused_total       counter
 *   streampulse_admin_timeouts_total                  counter
 *   streampulse_admin_tls_handshake_failures_total    counter
 *   streampulse_admin_authentications_total{result}   counter (ok, failed, forbidden)
 *
 * Authentication (HTTPS only, see admin.h): the Authorization field is parsed here
 * (http_basic_parse) and checked by the broker (broker_admin_authenticate); the decoded
 * password is wiped once checked. */
#include "server/admin.h"

#include <arpa/inet.h>
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/mem.h"
#include "base/prom.h"
#include "base/time.h"
#include "base/errors.h"
#include "base/json.h"
#include "broker/admin_auth.h"
#include "broker/admin_users.h"
#include "broker/cluster.h"
#include "broker/metrics.h"
#include "security/scram.h"
#include "server/httpd.h"
#include "server/version.h"

#include <openssl/crypto.h>

#define ADMIN_MAX_CONNECTIONS 32
#define ADMIN_TIMEOUT_MS 10000

#define TEXT_PLAIN "text/plain; charset=utf-8"
#define PROM_TEXT "text/plain; version=0.0.4; charset=utf-8"
#define JSON_TYPE "application/json"

#define WWW_AUTHENTICATE "WWW-Authenticate: Basic realm=\"streampulse\"\r\n"

static_assert(HTTP_BASIC_USER_MAX == SCRAM_USER_MAX, "Basic user-ids are SCRAM user names");
static_assert(HTTP_BASIC_PASSWORD_MAX == SCRAM_PASSWORD_MAX, "and passwords SCRAM passwords");

struct admin {
    struct httpd *h;
    struct broker *b;
    int64_t start_wall_ms;
    bool auth; /* HTTPS: every path but /healthz needs a super user's credentials */
};

static bool path_is(const struct http_request *req, const char *p)
{
    return strlen(p) == req->path_len && memcmp(req->path, p, req->path_len) == 0;
}

/* Resident set size from /proc/self/statm, or -1. */
static int64_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    long long size, resident;
    int n = fscanf(f, "%lld %lld", &size, &resident);
    fclose(f);
    return n == 2 ? resident * sysconf(_SC_PAGESIZE) : -1;
}

static int64_t open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory stream's own descriptor */
}

static void write_process(struct admin *a, struct strbuf *out)
{
    struct prom_label v = prom_label("version", STREAMPULSE_VERSION);
    prom_family(out, "streampulse_build_info", PROM_GAUGE, "Always 1; the version as a label.");
    prom_sample_u64(out, "streampulse_build_info", &v, 1, 1);
    int64_t now = time_wall_ms();
    prom_family(out, "streampulse_uptime_seconds", PROM_GAUGE, "Seconds since the broker started.");
    prom_sample_f64(out, "streampulse_uptime_seconds", NULL, 0,
                    (double)(now - a->start_wall_ms) / 1000.0);
    prom_family(out, "process_start_time_seconds", PROM_GAUGE,
                "Start time of the process since the Unix epoch, in seconds.");
    prom_sample_f64(out, "process_start_time_seconds", NULL, 0, (double)a->start_wall_ms / 1000.0);
    int64_t rss = rss_bytes();
    if (rss >= 0) {
        prom_family(out, "process_resident_memory_bytes", PROM_GAUGE,
                    "Resident memory size in bytes.");
        prom_sample_i64(out, "process_resident_memory_bytes", NULL, 0, rss);
    }
    int64_t fds = open_fds();
    if (fds >= 0) {
        prom_family(out, "process_open_fds", PROM_GAUGE, "Open file descriptors.");
        prom_sample_i64(out, "process_open_fds", NULL, 0, fds);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
        prom_family(out, "process_cpu_seconds_total", PROM_COUNTER,
                    "User and system CPU time spent, in seconds.");
        prom_sample_f64(out, "process_cpu_seconds_total", NULL, 0, cpu);
    }
}

static void write_admin(struct admin *a, struct strbuf *out)
{
    const struct httpd_stats *st = httpd_get_stats(a->h);
    const char *name = "streampulse_admin_http_responses_total";
    prom_family(out, name, PROM_COUNTER, "Responses of the admin listener, by status code.");
    for (int code = 100; code < HTTPD_STATUS_MAX; code++) {
        if (st->responses[code] == 0)
            continue;
        char c[16];
        snprintf(c, sizeof(c), "%d", code);
        struct prom_label l = prom_label("code", c);
        prom_sample_u64(out, name, &l, 1, st->responses[code]);
    }
    prom_family(out, "streampulse_admin_connections_refused_total", PROM_COUNTER,
                "Admin connections closed at once because too many were open.");
    prom_sample_u64(out, "streampulse_admin_connections_refused_total", NULL, 0, st->refused);
    prom_family(out, "streampulse_admin_timeouts_total", PROM_COUNTER,
                "Admin connections dropped for sending or reading too slowly.");
    prom_sample_u64(out, "streampulse_admin_timeouts_total", NULL, 0, st->timeouts);
    prom_family(out, "streampulse_admin_tls_handshake_failures_total", PROM_COUNTER,
                "HTTPS admin connections closed at the TLS handshake (failed or too slow).");
    prom_sample_u64(out, "streampulse_admin_tls_handshake_failures_total", NULL, 0,
                    st->tls_handshake_failures);
    struct broker_admin_auth_counts ac;
    broker_admin_auth_counts(&ac);
    const char *an = "streampulse_admin_authentications_total";
    prom_family(out, an, PROM_COUNTER,
                "HTTPS admin requests' credentials checked, by result: ok, failed (unknown user "
                "or wrong password), forbidden (not a super user).");
    const struct {
        const char *result;
        uint64_t n;
    } rows[] = {{"ok", ac.ok}, {"failed", ac.failed}, {"forbidden", ac.forbidden}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct prom_label l = prom_label("result", rows[i].result);
        prom_sample_u64(out, an, &l, 1, rows[i].n);
    }
}

/* HTTPS: whether the request carries a super user's credentials; if not, the 401 or 403 is in
 * resp. */
static bool authorized(struct admin *a, const struct http_request *req, struct httpd_response *resp)
{
    struct http_basic cred;
    int rc = -EACCES;
    if (req->authorization &&
        http_basic_parse(req->authorization, req->authorization_len, &cred) == 0) {
        rc = broker_admin_authenticate(a->b, req->peer ? req->peer : "?", cred.user, cred.user_len,
                                       cred.password, cred.password_len, &resp->delay_ms);
        OPENSSL_cleanse(&cred, sizeof(cred));
    }
    if (rc == 0)
        return true;
    resp->content_type = TEXT_PLAIN;
    if (rc == -EPERM) {
        resp->status = 403;
        strbuf_puts(&resp->body, "forbidden: the admin listener serves the users in "
                                 "super.users only\n");
        return false;
    }
    resp->status = 401;
    resp->extra_headers = WWW_AUTHENTICATE;
    strbuf_puts(&resp->body, "authentication required: HTTP Basic with the name and password "
                             "of a SCRAM user in super.users\n");
    return false;
}

/* A JSON error answer: {"error": why}. */
static void json_error(struct httpd_response *resp, int status, const char *why)
{
    resp->status = status;
    resp->content_type = JSON_TYPE;
    struct json j;
    json_init(&j, &resp->body);
    json_obj_begin(&j);
    json_key(&j, "error");
    json_cstr(&j, why);
    json_obj_end(&j);
    strbuf_putc(&resp->body, '\n');
}

/* Whether the method is one of the comma-separated list allow ("GET, HEAD"); if not, the 405
 * with that Allow header is in resp. allow_header is the static "Allow: ...\r\n" line. */
static bool method_allowed(const struct http_request *req, struct httpd_response *resp,
                           const char *allow, const char *allow_header)
{
    const char *p = allow;
    while (*p) {
        size_t n = strcspn(p, ",");
        if (n == req->method_len && memcmp(p, req->method, n) == 0)
            return true;
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
    resp->status = 405;
    resp->extra_headers = allow_header;
    resp->content_type = TEXT_PLAIN;
    strbuf_printf(&resp->body, "method not allowed here: use %s\n", allow);
    return false;
}

/* Plain HTTP (no credentials asked): whether a request that changes something names the
 * listener by an IP address or "localhost" in Host. A web page the operator's browser opens
 * can make it send such requests to a loopback port, but only with its own host name in Host
 * (DNS rebinding) and, cross-origin, without Content-Type: application/json (which needs a
 * CORS preflight this listener never grants). */
static bool host_is_literal(const struct http_request *req)
{
    if (!req->host)
        return true; /* HTTP/1.0 without Host: no browser */
    char h[128];
    size_t n = req->host_len;
    if (n == 0 || n >= sizeof(h))
        return false;
    memcpy(h, req->host, n);
    h[n] = '\0';
    char *end = h + n;
    if (h[0] == '[') {
        char *close = strchr(h, ']');
        if (!close || (close[1] != '\0' && close[1] != ':'))
            return false;
        *close = '\0';
        unsigned char buf[16];
        return inet_pton(AF_INET6, h + 1, buf) == 1;
    }
    char *colon = strchr(h, ':');
    if (colon) {
        if (colon + 1 == end || strspn(colon + 1, "0123456789") != (size_t)(end - colon - 1))
            return false;
        *colon = '\0';
    }
    unsigned char buf[4];
    return strcasecmp(h, "localhost") == 0 || inet_pton(AF_INET, h, buf) == 1;
}

static const char users_prefix[] = "/v1/users/";

static void users_answer(struct httpd_response *resp, int rc, const char *err)
{
    if (rc == 0) {
        resp->status = 202;
        resp->content_type = JSON_TYPE;
        strbuf_putc(&resp->body, '\n');
    } else if (rc == -ERR_INVALID) {
        json_error(resp, 400, err);
    } else if (rc == -ERR_NOT_FOUND) {
        json_error(resp, 404, err);
    } else if (rc == -ERR_CLOSED) {
        json_error(resp, 503, "the broker is stopping");
    } else {
        json_error(resp, 500, "the credential could not be computed (OpenSSL failed)");
    }
}

/* /v1/users: GET lists, POST sets a credential. */
static void users_collection(struct admin *a, const struct http_request *req,
                             struct httpd_response *resp)
{
    if (!method_allowed(req, resp, "GET, HEAD, POST", "Allow: GET, HEAD, POST\r\n"))
        return;
    if (!http_method_is(req, "POST")) {
        resp->content_type = JSON_TYPE;
        if (broker_users_json(a->b, &resp->body) != 0) {
            strbuf_reset(&resp->body);
            json_error(resp, 503, "the broker is stopping");
            return;
        }
        strbuf_putc(&resp->body, '\n');
        return;
    }
    if (!http_content_type_is(req, "application/json")) {
        json_error(resp, 415, "POST /v1/users takes Content-Type: application/json");
        return;
    }
    if (!a->auth && !host_is_literal(req)) {
        json_error(resp, 403, "Host must be an IP address or localhost");
        return;
    }
    char err[300] = "";
    int rc = broker_user_set(a->b, req->peer ? req->peer : "?", req->body, req->body_len,
                             &resp->body, err, sizeof(err));
    users_answer(resp, rc, err);
}

/* The query's mechanism=VALUE (decoded into buf), NULL without one; -1 in *bad for another
 * parameter, a repeated one or a bad escape. */
static const char *query_mechanism(const struct http_request *req, char *buf, size_t cap,
                                   size_t *len, bool *bad)
{
    const char *q = req->query, *mech = NULL;
    size_t left = req->query ? req->query_len : 0;
    *bad = false;
    while (left > 0) {
        const char *amp = memchr(q, '&', left);
        size_t n = amp ? (size_t)(amp - q) : left;
        static const char key[] = "mechanism=";
        if (n < sizeof(key) - 1 || memcmp(q, key, sizeof(key) - 1) != 0 || mech) {
            *bad = true;
            return NULL;
        }
        int dl = http_percent_decode(q + sizeof(key) - 1, n - (sizeof(key) - 1), buf, cap);
        if (dl < 0) {
            *bad = true;
            return NULL;
        }
        mech = buf;
        *len = (size_t)dl;
        q += n + (amp ? 1 : 0);
        left -= n + (amp ? 1 : 0);
    }
    return mech;
}

/* /v1/users/NAME: DELETE removes NAME's credentials (?mechanism=M: that one only). */
static void users_member(struct admin *a, const struct http_request *req,
                         struct httpd_response *resp)
{
    if (!method_allowed(req, resp, "DELETE", "Allow: DELETE\r\n"))
        return;
    if (!a->auth && !host_is_literal(req)) {
        json_error(resp, 403, "Host must be an IP address or localhost");
        return;
    }
    char name[SCRAM_USER_MAX + 1];
    size_t pl = req->path_len - (sizeof(users_prefix) - 1);
    const char *enc = req->path + sizeof(users_prefix) - 1;
    int nl = memchr(enc, '/', pl) ? -1 : http_percent_decode(enc, pl, name, sizeof(name) - 1);
    if (nl <= 0) {
        json_error(resp, 400, "the path must be /v1/users/NAME, NAME percent-encoded: 1 to 255 "
                              "bytes without control characters");
        return;
    }
    char mbuf[32];
    size_t ml = 0;
    bool bad;
    const char *mech = query_mechanism(req, mbuf, sizeof(mbuf), &ml, &bad);
    if (bad) {
        json_error(resp, 400, "the only query parameter is mechanism=SCRAM-SHA-256 or "
                              "mechanism=SCRAM-SHA-512");
        return;
    }
    char err[300] = "";
    int rc = broker_user_delete(a->b, req->peer ? req->peer : "?", name, (size_t)nl, mech, ml,
                                &resp->body, err, sizeof(err));
    users_answer(resp, rc, err);
}

static void handle(const struct http_request *req, struct httpd_response *resp, void *data)
{
    struct admin *a = data;
    if (a->auth && !path_is(req, "/healthz") && !authorized(a, req, resp))
        return;
    if (path_is(req, "/v1/users")) {
        users_collection(a, req, resp);
        return;
    }
    if (req->path_len > sizeof(users_prefix) - 1 &&
        memcmp(req->path, users_prefix, sizeof(users_prefix) - 1) == 0) {
        users_member(a, req, resp);
        return;
    }
    if (!method_allowed(req, resp, "GET, HEAD", "Allow: GET, HEAD\r\n"))
        return;
    if (path_is(req, "/metrics")) {
        resp->content_type = PROM_TEXT;
        broker_metrics_write(a->b, &resp->body);
        write_process(a, &resp->body);
        write_admin(a, &resp->body);
    } else if (path_is(req, "/healthz")) {
        resp->content_type = TEXT_PLAIN;
        if (broker_health(a->b, &resp->body)) {
            strbuf_puts(&resp->body, "ok\n");
        } else {
            resp->status = 503;
        }
    } else if (path_is(req, "/v1/topics")) {
        resp->content_type = JSON_TYPE;
        broker_topics_json(a->b, &resp->body);
        strbuf_putc(&resp->body, '\n');
    } else if (path_is(req, "/v1/groups")) {
        resp->content_type = JSON_TYPE;
        broker_groups_json(a->b, &resp->body);
        strbuf_putc(&resp->body, '\n');
    } else if (path_is(req, "/v1/cluster")) {
        resp->content_type = JSON_TYPE;
        cluster_status_json(a->b, &resp->body);
        strbuf_putc(&resp->body, '\n');
    } else if (path_is(req, "/")) {
        resp->content_type = TEXT_PLAIN;
        strbuf_puts(&resp->body, "StreamPulse admin\n"
                                 "/metrics     Prometheus metrics\n"
                                 "/healthz     health\n"
                                 "/v1/topics   topics and partitions (JSON)\n"
                                 "/v1/groups   consumer groups, offsets and lag (JSON)\n"
                                 "/v1/cluster  brokers, controller, Raft replicas (JSON)\n"
                                 "/v1/users    SCRAM users (JSON); POST sets a credential,\n"
                                 "             DELETE /v1/users/NAME removes one\n");
    } else {
        resp->status = 404;
        resp->content_type = TEXT_PLAIN;
        strbuf_puts(&resp->body,
                    "not found; try /metrics, /healthz, /v1/topics, /v1/groups, /v1/cluster, "
                    "/v1/users\n");
    }
}

int admin_start(struct reactor *r, const char *host, int port, const struct listener_tls *tls,
                struct broker *b, int64_t start_wall_ms, struct admin **out)
{
    struct admin *a = mem_calloc(1, sizeof(*a));
    a->b = b;
    a->start_wall_ms = start_wall_ms;
    a->auth = tls != NULL;
    struct httpd_limits lim = {.max_connections = ADMIN_MAX_CONNECTIONS,
                               .timeout_ms = ADMIN_TIMEOUT_MS};
    int rc = httpd_open(r, host, port, &lim, tls, handle, a, &a->h);
    if (rc != 0) {
        mem_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

int admin_port(const struct admin *a)
{
    return httpd_port(a->h);
}

void admin_stop(struct admin *a)
{
    if (!a)
        return;
    httpd_close(a->h);
    mem_free(a);
}
