/* SASL authentication of client connections on SASL_PLAINTEXT and SASL_SSL listeners: Kafka's
 * SaslHandshake (17) and SaslAuthenticate (36), and the legacy flow of SaslHandshake v0 followed
 * by raw size-prefixed tokens (kafka-python 2.0.2). Mechanisms PLAIN, SCRAM-SHA-256 and
 * SCRAM-SHA-512 (security/scram.h, security/sasl_plain.h), checked against the SCRAM
 * credentials of the metadata image (USER_SCRAM records: every node knows every user).
 *
 * State: one struct sasl_session per connection of a SASL listener (session->sasl; NULL on the
 * others, which serve every request), and the broker's table of recent failures per source
 * address (struct sasl_failures, below).
 *
 * Session states:
 *   HANDSHAKE  only ApiVersions and SaslHandshake are served (anything else closes);
 *   TOKENS     after SaslHandshake v1: SaslAuthenticate carries the tokens;
 *   RAW        after SaslHandshake v0: the next frames are tokens without a Kafka header,
 *              answered with raw size-prefixed tokens;
 *   DONE       authenticated: every request is served (until the session's end when
 *              connections.max.reauth.ms is set; SaslHandshake again re-authenticates);
 *   FAILED     the exchange failed: its answer goes out connection.failed.authentication.delay.ms
 *              x (recent failures from that address, at most 32) later; the next frame closes.
 * A SCRAM exchange is two tokens (client-first, client-final); PLAIN is one. An unknown user
 * gets a server-first made from a fake credential and fails at its final step, as a wrong
 * password does, so that user names cannot be probed.
 *
 * Invariants: principal is set exactly in DONE; a session in FAILED never goes back. */
#include "broker/sasl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "controller/image.h"
#include "kafka/errors.h"
#include "net/conn.h"
#include "net/reactor.h"
#include "security/protocol.h"

#define FAILURE_WINDOW_MS 60000
#define FAILURE_FACTOR_MAX 32
#define FAILURES_TRACKED 256
#define TOKEN_MAX 4096 /* bytes of one SASL token from a client */

enum sasl_state { SASL_HANDSHAKE, SASL_TOKENS, SASL_RAW, SASL_DONE, SASL_FAILED };

struct sasl_session {
    uint8_t state;        /* enum sasl_state */
    uint8_t mechanism;    /* BROKER_SASL_* of the exchange */
    int steps;            /* tokens taken in this exchange */
    int64_t expires_ms;   /* DONE: the session's end (time_mono_ms), 0: never */
    struct sasl_mech mech; /* the mechanism's state (sasl_mech.c) */
    struct reactor_timer close_timer; /* FAILED in the legacy flow: closes the connection */
    struct conn *conn;
    char principal[CONN_PRINCIPAL_MAX];
};

static int64_t last_failure_log_ms;

/* Recent failures per source address (the peer without its port). */
struct sasl_failure {
    char addr[64];
    int count;
    int64_t last_ms;
};
static struct sasl_failure failures[FAILURES_TRACKED];

static void peer_addr(const struct conn *c, char *out, size_t cap)
{
    snprintf(out, cap, "%s", conn_peer(c));
    char *colon = strrchr(out, ':');
    if (colon)
        *colon = '\0';
}

/* Counts a failure from c's address; returns how long to hold its answer. */
static int64_t failure_delay(const struct broker *b, const struct conn *c)
{
    char addr[64];
    peer_addr(c, addr, sizeof(addr));
    return sasl_failure_delay(b, addr);
}

int64_t sasl_failure_delay(const struct broker *b, const char *addr)
{
    int64_t now = time_mono_ms();
    struct sasl_failure *slot = NULL, *oldest = &failures[0];
    for (size_t i = 0; i < FAILURES_TRACKED && !slot; i++) {
        if (!strcmp(failures[i].addr, addr))
            slot = &failures[i];
        else if (failures[i].last_ms < oldest->last_ms)
            oldest = &failures[i];
    }
    if (!slot) {
        slot = oldest;
        snprintf(slot->addr, sizeof(slot->addr), "%s", addr);
        slot->count = 0;
    }
    if (now - slot->last_ms > FAILURE_WINDOW_MS)
        slot->count = 0;
    if (slot->count < FAILURE_FACTOR_MAX)
        slot->count++;
    slot->last_ms = now;
    return b->cfg->connection_failed_auth_delay_ms * slot->count;
}

/* ---- answers, possibly held back ---- */

struct held {
    struct reactor_timer timer;
    struct conn_slot *slot;
    struct iobuf resp;
    struct list_node link; /* in broker->sasl_held */
};

static void on_held(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct held *h = data;
    (void)r;
    (void)t;
    list_remove(&h->link);
    conn_slot_complete(h->slot, &h->resp); /* dropped if the connection has gone */
    iobuf_destroy(&h->resp);
    mem_free(h);
}

void sasl_stop(struct broker *b)
{
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &b->sasl_held)
    {
        struct held *h = LIST_ENTRY(n, struct held, link);
        reactor_timer_stop(b->r, &h->timer);
        list_remove(&h->link);
        struct iobuf none;
        iobuf_init(&none);
        conn_slot_complete(h->slot, &none); /* its connection is closed: nothing is sent */
        iobuf_destroy(&h->resp);
        mem_free(h);
    }
}

static void send_later(struct broker *b, struct conn_slot *slot, struct iobuf *resp, int64_t ms)
{
    if (ms <= 0) {
        conn_slot_complete(slot, resp);
        return;
    }
    struct held *h = mem_calloc(1, sizeof(*h));
    h->slot = slot;
    iobuf_init(&h->resp);
    iobuf_move(&h->resp, resp);
    list_push_back(&b->sasl_held, &h->link);
    reactor_timer_init(&h->timer, on_held, h);
    reactor_timer_start(b->r, &h->timer, ms);
}

/* ---- sessions ---- */

static void on_close_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct sasl_session *ss = data;
    (void)r;
    (void)t;
    conn_close(ss->conn);
}

void sasl_session_open(struct session *s)
{
    const struct broker_config *cfg = s->b->cfg;
    int ep = conn_endpoint(s->conn);
    if (ep < 0 || ep >= cfg->n_listeners || !security_protocol_sasl(cfg->listeners[ep].protocol))
        return;
    s->sasl = mem_calloc(1, sizeof(*s->sasl));
    s->sasl->state = SASL_HANDSHAKE;
    s->sasl->conn = s->conn;
    reactor_timer_init(&s->sasl->close_timer, on_close_timer, s->sasl);
}

void sasl_session_close(struct session *s)
{
    if (!s->sasl)
        return;
    reactor_timer_stop(s->b->r, &s->sasl->close_timer);
    sasl_mech_reset(&s->sasl->mech);
    mem_free(s->sasl);
    s->sasl = NULL;
}

bool sasl_allows(const struct session *s, int16_t api_key)
{
    const struct sasl_session *ss = s->sasl;
    if (!ss)
        return true;
    bool auth_api = api_key == KAPI_SASL_HANDSHAKE || api_key == KAPI_SASL_AUTHENTICATE ||
                    api_key == KAPI_API_VERSIONS;
    switch (ss->state) {
    case SASL_DONE:
        return auth_api || ss->expires_ms == 0 || time_mono_ms() < ss->expires_ms;
    case SASL_HANDSHAKE: /* SaslAuthenticate too: answered ILLEGAL_SASL_STATE */
        return auth_api;
    case SASL_TOKENS: /* a second SaslHandshake is answered ILLEGAL_SASL_STATE */
        return auth_api;
    default:
        return false;
    }
}

bool sasl_raw_pending(const struct session *s)
{
    return s->sasl && s->sasl->state == SASL_RAW;
}

const char *session_principal(const struct session *s)
{
    if (s->sasl && s->sasl->state == SASL_DONE)
        return s->sasl->principal;
    return conn_principal(s->conn);
}

const char *sasl_mech_name(unsigned m)
{
    return m == BROKER_SASL_PLAIN          ? "PLAIN"
           : m == BROKER_SASL_SCRAM_SHA256 ? "SCRAM-SHA-256"
           : m == BROKER_SASL_SCRAM_SHA512 ? "SCRAM-SHA-512"
                                            : NULL;
}

unsigned sasl_mech_parse(const char *s, size_t len)
{
    for (unsigned m = BROKER_SASL_PLAIN; m <= BROKER_SASL_SCRAM_SHA512; m <<= 1)
        if (s && strlen(sasl_mech_name(m)) == len && !memcmp(sasl_mech_name(m), s, len))
            return m;
    return 0;
}

int handle_sasl_handshake(struct request *req)
{
    struct session *s = req->s;
    struct sasl_handshake_req hr;
    if (kmsg_decode_sasl_handshake(&req->body, req->hdr.api_version, &hr) != 0)
        return -ERR_CORRUPT;
    const char *names[3];
    int32_t n = 0;
    unsigned enabled = s->sasl ? req->b->cfg->sasl_mechanisms : 0;
    for (unsigned m = BROKER_SASL_PLAIN; m <= BROKER_SASL_SCRAM_SHA512; m <<= 1)
        if (enabled & m)
            names[n++] = sasl_mech_name(m);
    struct sasl_handshake_resp resp = {.mechanisms = names, .n_mechanisms = n};
    unsigned m = hr.mechanism.len >= 0 ? sasl_mech_parse(hr.mechanism.p, (size_t)hr.mechanism.len)
                                       : 0;
    if (!s->sasl || (s->sasl->state != SASL_HANDSHAKE && s->sasl->state != SASL_DONE)) {
        resp.error_code = KERR_ILLEGAL_SASL_STATE; /* not a SASL listener, or mid-exchange */
    } else if (!(enabled & m)) {
        resp.error_code = KERR_UNSUPPORTED_SASL_MECHANISM;
    } else {
        sasl_mech_reset(&s->sasl->mech);
        s->sasl->mechanism = (uint8_t)m;
        s->sasl->steps = 0;
        s->sasl->state = req->hdr.api_version == 0 ? SASL_RAW : SASL_TOKENS;
    }
    if (resp.error_code != KERR_NONE)
        log_info("sasl_handshake_refused", "peer=%s mechanism=%.*s error=%s", conn_peer(req->conn),
                 hr.mechanism.len > 0 ? (int)(hr.mechanism.len > 64 ? 64 : hr.mechanism.len) : 0,
                 hr.mechanism.p ? hr.mechanism.p : "", kafka_error_name(resp.error_code));
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_sasl_handshake(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

/* One token of the exchange: *out gets the answer token (owned by ss->mech until the next
 * step). Returns 1 done (principal set), 0 more to come, -1 failed (why set). */
static int step(struct broker *b, struct sasl_session *ss, const uint8_t *tok, size_t len,
                struct kbytes *out, const char **why)
{
    *out = (struct kbytes){(const uint8_t *)"", 0};
    if (len > TOKEN_MAX) {
        *why = "token too large";
        return -1;
    }
    ss->steps++;
    char user[CTL_USER_MAX + 1];
    int rc = sasl_mech_step(&ss->mech, ss->mechanism, cluster_image(b->cluster), tok, len, out,
                            user, sizeof(user), why);
    if (rc == 1) {
        snprintf(ss->principal, sizeof(ss->principal), "User:%s", user);
        ss->state = SASL_DONE;
        b->sasl_successes++;
        int64_t life = b->cfg->connections_max_reauth_ms;
        ss->expires_ms = life > 0 ? time_mono_ms() + life : 0;
    }
    return rc;
}

static void auth_failed(struct broker *b, struct conn *c, struct sasl_session *ss,
                        const char *why)
{
    ss->state = SASL_FAILED;
    b->sasl_failures++;
    int64_t now = time_mono_ms();
    if (now - last_failure_log_ms >= 1000) { /* at most one line a second */
        last_failure_log_ms = now;
        log_warn("sasl_authentication_failed", "peer=%s mechanism=%s reason=\"%s\" failures=%" PRIu64,
                 conn_peer(c), sasl_mech_name(ss->mechanism), why ? why : "", b->sasl_failures);
    }
}

int handle_sasl_authenticate(struct request *req)
{
    struct broker *b = req->b;
    struct session *s = req->s;
    struct sasl_authenticate_req ar;
    if (kmsg_decode_sasl_authenticate(&req->body, req->hdr.api_version, &ar) != 0)
        return -ERR_CORRUPT;
    struct sasl_session *ss = s->sasl;
    struct sasl_authenticate_resp resp = {.error_message = KSTR_NULL};
    int64_t delay = 0;
    if (!ss || ss->state != SASL_TOKENS) {
        resp.error_code = KERR_ILLEGAL_SASL_STATE;
        resp.error_message = kstr_c("SaslAuthenticate before a SaslHandshake (v1)");
    } else {
        const char *why = "";
        int rc = step(b, ss, ar.auth_bytes.p, (size_t)ar.auth_bytes.len, &resp.auth_bytes, &why);
        if (rc < 0) {
            auth_failed(b, req->conn, ss, why);
            resp.error_code = KERR_SASL_AUTHENTICATION_FAILED;
            resp.error_message = kstr_c(ss->mechanism == BROKER_SASL_PLAIN
                                            ? "Authentication failed: Invalid username or password"
                                            : "Authentication failed during authentication due "
                                              "to invalid credentials with SASL mechanism");
            resp.auth_bytes = (struct kbytes){(const uint8_t *)"", 0};
            delay = failure_delay(b, req->conn);
        } else if (rc == 1) {
            resp.session_lifetime_ms = b->cfg->connections_max_reauth_ms;
            log_info("sasl_authenticated", "peer=%s principal=%s mechanism=%s",
                     conn_peer(req->conn), ss->principal, sasl_mech_name(ss->mechanism));
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_sasl_authenticate(&r.w, req->hdr.api_version, &resp);
    struct conn_slot *slot = conn_slot_reserve(req->conn);
    response_seal(&r); /* as response_send, with the answer to a failure held back */
    send_later(b, slot, &r.buf, delay);
    iobuf_destroy(&r.buf);
    return 0;
}

void sasl_raw_token(struct session *s, const uint8_t *frame, size_t len)
{
    struct broker *b = s->b;
    struct sasl_session *ss = s->sasl;
    struct kbytes out;
    const char *why = "";
    int rc = step(b, ss, frame, len, &out, &why);
    if (rc < 0) { /* the legacy flow has no error answer: the connection closes, later */
        auth_failed(b, s->conn, ss, why);
        reactor_timer_start(b->r, &ss->close_timer, failure_delay(b, s->conn));
        return;
    }
    if (rc == 1)
        log_info("sasl_authenticated", "peer=%s principal=%s mechanism=%s legacy=1",
                 conn_peer(s->conn), ss->principal, sasl_mech_name(ss->mechanism));
    struct iobuf resp;
    iobuf_init(&resp);
    struct kwriter w = {&resp};
    kw_i32(&w, out.len);
    kw_raw(&w, out.p, (size_t)out.len);
    conn_slot_complete(conn_slot_reserve(s->conn), &resp);
    iobuf_destroy(&resp);
}

bool sasl_failed(const struct session *s)
{
    return s->sasl && s->sasl->state == SASL_FAILED;
}
