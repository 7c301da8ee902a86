/* The inter-broker Raft transport (contract in replication/transport.h).
 *
 * Owns: the cluster listener (net/conn; with TLS its listener_tls, a copy of the one configured
 * with our handshake timeout) and its inbound connections' state (struct inbound), and per
 * peer: the outbound connection (net/dial), its reconnect/handshake timer and the two
 * frame builders (RAFT, HEARTBEATS) holding what transport_send queued since the last flush.
 *
 * Invariants:
 *  1. p->ready  =>  p->d != NULL (HELLO_OK came on the current outbound connection).
 *  2. p->d == NULL  =>  p->timer is armed (the next attempt) unless the transport is closing;
 *     p->d != NULL && !p->ready  =>  p->timer is the handshake timeout.
 *  3. !p->ready  =>  both builders are empty (sends are dropped; a drop empties them).
 *  4. An inbound connection hands frames to on_msg only after its HELLO was accepted, and
 *     only frames whose from is that HELLO's node.
 *
 * Peer states (outbound) and transitions:
 *   IDLE (d NULL, timer = backoff) --timer: peer_connect--> DIALING (d, !ready, timer = timeout)
 *   DIALING --HELLO_OK (out_frame)--> READY
 *   DIALING --refused, error frame, timeout, failure--> IDLE (attempt_failed)
 *   READY --on_close (EOF, error)--> IDLE (queued messages dropped)
 * Inbound connections: AWAIT_HELLO --valid HELLO--> ACCEPTED; --bad HELLO--> REFUSED (ERROR
 * frame queued, closed by a 0 ms timer so the frame leaves first); ACCEPTED --bad frame--> closed;
 * AWAIT_HELLO --QUORUM_DESCRIBE--> DESCRIBED (QUORUM_INFO or ERROR queued, closed as REFUSED).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net/dial.h"
#include "replication/transport.h"
#include "security/peer_auth.h"

#define DEFAULT_QUEUE_MAX_BYTES (16u << 20)
#define DEFAULT_MAX_FRAME_BYTES (100u << 20)

struct peer {
    struct transport *t;
    int32_t id;
    char *host;
    int port;
    struct dial *d;             /* outbound connection, or NULL */
    bool ready;                 /* HELLO_OK received on d (and, with a secret, proved) */
    uint8_t nonce[PEER_AUTH_NONCE]; /* the current attempt's HELLO nonce (with a secret) */
    bool down_logged;           /* the current outage was logged */
    int failures;               /* consecutive failed attempts */
    struct reactor_timer timer; /* next attempt, or handshake timeout */
    struct rpc_builder raft;    /* queued RAFT messages */
    struct rpc_builder hb;      /* queued heartbeats and responses */
    struct transport_peer_stats st;
};

struct inbound {
    struct transport *t;
    struct conn *c;
    int32_t peer;       /* the node that said HELLO (and proved it), or RAFT_NONE */
    int32_t proving;    /* with a secret: the node whose AUTH is awaited, or RAFT_NONE */
    uint8_t nonce_d[PEER_AUTH_NONCE], nonce_a[PEER_AUTH_NONCE]; /* while proving */
    bool refused;       /* an ERROR went out; closing */
    struct reactor_timer close_timer;
};

struct transport {
    struct reactor *r;
    int32_t self;
    char *cluster_id;
    struct transport_config cfg; /* defaults applied; pointers not kept */
    struct peer_secret secret;   /* len 0: none */
    struct listener_tls tls_in;  /* cfg.tls_server with our handshake timeout (the listener's) */
    struct listener *l;
    struct peer **peers; /* each owned; pointers stable (timers and dials hold them) */
    size_t n_peers;
    size_t cap_peers;
    transport_msg_cb on_msg;
    void *data;
    transport_ctl_cb on_ctl;
    void *ctl_data;
    transport_describe_cb on_describe;
    void *describe_data;
    uint64_t rng;
    bool closing;
    struct transport_stats st;
};

static struct peer *find_peer(const struct transport *t, int32_t id)
{
    for (size_t i = 0; i < t->n_peers; i++)
        if (t->peers[i]->id == id)
            return t->peers[i];
    return NULL;
}

static uint64_t next_rand(struct transport *t)
{
    /* splitmix64 */
    uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Invariants 1-3 of the design comment (called under DCHECK). */
static void transport_check(const struct transport *t)
{
    for (size_t i = 0; i < t->n_peers; i++) {
        const struct peer *p = t->peers[i];
        CHECK(!p->ready || p->d != NULL);
        CHECK(p->d != NULL || t->closing || reactor_timer_active(&p->timer));
        CHECK(p->d == NULL || p->ready || reactor_timer_active(&p->timer));
        CHECK(p->ready || (rpc_builder_empty(&p->raft) && rpc_builder_empty(&p->hb)));
    }
}

/* ---- outbound ------------------------------------------------------------------------------ */

static void peer_connect(struct peer *p);

static void drop_queued(struct peer *p)
{
    p->st.drops += rpc_builder_count(&p->raft) + rpc_builder_count(&p->hb);
    rpc_builder_destroy(&p->raft);
    rpc_builder_destroy(&p->hb);
    rpc_builder_init(&p->raft, RPC_RAFT);
    rpc_builder_init(&p->hb, RPC_HEARTBEATS);
}

/* The next attempt after a failure (or a drop: failures 0 -> the shortest delay). */
static void schedule_retry(struct peer *p)
{
    struct transport *t = p->t;
    int shift = MIN(p->failures, 30);
    int64_t delay = t->cfg.backoff_min_ms;
    for (int i = 0; i < shift && delay < t->cfg.backoff_max_ms; i++)
        delay *= 2;
    delay = MIN(delay, t->cfg.backoff_max_ms);
    /* Jitter in [delay/2, delay]: peers that lost each other together do not retry together. */
    int64_t half = delay / 2;
    delay = half + (int64_t)(next_rand(t) % (uint64_t)(delay - half + 1));
    reactor_timer_start(t->r, &p->timer, delay);
}

static void attempt_failed(struct peer *p, int err, const char *why)
{
    p->st.connect_failures++;
    if (!p->down_logged) {
        char q[320];
        log_warn("raft_peer_unreachable", "node=%d peer=%d addr=%s:%d reason=%s err=\"%s\"",
                 p->t->self, p->id, p->host, p->port, log_quote(q, sizeof(q), why, strlen(why)),
                 err_str(err));
        p->down_logged = true;
    }
    schedule_retry(p);
    p->failures++;
}

static void out_connect(struct dial *d, void *data)
{
    struct peer *p = data;
    struct transport *t = p->t;
    bool auth = t->secret.len > 0;
    if (auth && peer_auth_nonce(p->nonce) != 0) {
        dial_close(d);
        p->d = NULL;
        attempt_failed(p, -EIO, "no random bytes for the handshake nonce");
        return;
    }
    struct iobuf b;
    iobuf_init(&b);
    rpc_encode_hello(&b, t->self, p->id, t->cluster_id, auth ? p->nonce : NULL);
    dial_send(d, &b);
}

/* With a secret: HELLO_OK must prove the peer holds it; then our AUTH goes out. Returns NULL,
 * or why the handshake fails. */
static const char *out_prove(struct peer *p, const uint8_t *body, size_t body_len)
{
    struct transport *t = p->t;
    if (t->secret.len == 0)
        return NULL;
    const uint8_t *nonce_a, *proof;
    if (rpc_decode_hello_ok(body, body_len, &nonce_a, &proof) != 0 || !proof)
        return "the peer did not authenticate (no cluster.secret.file there?)";
    uint8_t want[PEER_AUTH_PROOF];
    peer_auth_hello_proof(&t->secret, "sp-accept", t->cluster_id, t->self, p->id, p->nonce,
                          nonce_a, want);
    if (!peer_auth_equal(want, proof))
        return "the peer's proof is wrong (another cluster.secret.file)";
    peer_auth_hello_proof(&t->secret, "sp-dial", t->cluster_id, t->self, p->id, p->nonce,
                          nonce_a, want);
    struct iobuf b;
    iobuf_init(&b);
    rpc_encode_auth(&b, t->self, p->id, want);
    dial_send(p->d, &b);
    return NULL;
}

static void out_frame(struct dial *d, uint8_t *frame, size_t len, void *data)
{
    struct peer *p = data;
    struct transport *t = p->t;
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    int rc = rpc_decode_header(frame, len, &h, &body, &body_len);
    const char *unproved = NULL;
    if (rc == 0 && !p->ready && h.type == RPC_HELLO_OK && h.from == p->id && h.to == t->self &&
        !(unproved = out_prove(p, body, body_len))) {
        p->ready = true;
        p->failures = 0;
        p->down_logged = false;
        p->st.connects++;
        if (p->st.connects > 1)
            p->st.reconnects++;
        reactor_timer_stop(t->r, &p->timer);
        log_info("raft_peer_connected", "node=%d peer=%d addr=%s:%d", t->self, p->id, p->host,
                 p->port);
        return;
    }
    char text[256] = "unexpected frame";
    if (unproved) {
        snprintf(text, sizeof(text), "%s", unproved);
        t->st.auth_failures++;
    }
    struct rpc_error e;
    if (rc == 0 && h.type == RPC_ERROR && rpc_decode_error(body, body_len, &e) == 0) {
        snprintf(text, sizeof(text), "refused by peer (code %d): %.*s", e.code,
                 (int)MIN(e.text_len, 200), e.text);
    }
    /* The peer only ever answers the handshake: anything else ends this connection. */
    bool was_ready = p->ready;
    dial_close(d);
    p->d = NULL;
    p->ready = false;
    if (was_ready) {
        drop_queued(p);
        char q[320];
        log_warn("raft_peer_disconnected", "node=%d peer=%d reason=%s", t->self, p->id,
                 log_quote(q, sizeof(q), text, strlen(text)));
        p->down_logged = true;
        schedule_retry(p);
    } else {
        attempt_failed(p, -ERR_INVALID, text);
    }
    if (DCHECK_ENABLED)
        transport_check(t);
}

static void out_close(struct dial *d, int err, void *data)
{
    struct peer *p = data;
    struct transport *t = p->t;
    const char *tls_why = dial_tls_error(d);
    char why[256] = "connect or handshake failed";
    if (tls_why) {
        t->st.tls_failures_out++;
        snprintf(why, sizeof(why), "TLS %s", tls_why);
    } else if (!dial_tls_on(d) && !p->ready && err == -ERR_CLOSED) {
        snprintf(why, sizeof(why), "closed before HELLO_OK (a TLS listener? cluster.ssl.* set "
                 "there and not here)");
    }
    p->d = NULL;
    if (p->ready) {
        p->ready = false;
        drop_queued(p);
        char q[320];
        log_warn("raft_peer_disconnected", "node=%d peer=%d err=\"%s\"%s%s", t->self, p->id,
                 err_str(err), tls_why ? " reason=" : "",
                 tls_why ? log_quote(q, sizeof(q), why, strlen(why)) : "");
        p->down_logged = true;
        schedule_retry(p);
    } else {
        attempt_failed(p, err, why);
    }
    if (DCHECK_ENABLED)
        transport_check(t);
}

static void peer_connect(struct peer *p)
{
    struct transport *t = p->t;
    static const struct dial_handler h0 = {out_connect, out_frame, out_close, NULL};
    struct dial_handler h = h0;
    h.data = p;
    int rc = dial_open(t->r, p->host, p->port, t->cfg.max_frame_bytes, t->cfg.tls_client, &h,
                       &p->d);
    if (rc != 0) {
        p->d = NULL;
        attempt_failed(p, rc, "connect failed");
        return;
    }
    reactor_timer_start(t->r, &p->timer, t->cfg.handshake_timeout_ms);
}

static void peer_timer_cb(struct reactor *r, struct reactor_timer *tm, void *data)
{
    struct peer *p = data;
    if (p->d == NULL) {
        peer_connect(p);
    } else if (!p->ready) {
        dial_close(p->d);
        p->d = NULL;
        attempt_failed(p, -ETIMEDOUT, "handshake timed out");
    }
    if (DCHECK_ENABLED)
        transport_check(p->t);
}

/* ---- inbound ------------------------------------------------------------------------------- */

static void in_close_cb(struct reactor *r, struct reactor_timer *tm, void *data)
{
    struct inbound *in = data;
    conn_close(in->c);
}

static void in_open(struct conn *c, void *data)
{
    struct inbound *in = mem_calloc(1, sizeof(*in));
    in->t = data;
    in->c = c;
    in->peer = RAFT_NONE;
    in->proving = RAFT_NONE;
    reactor_timer_init(&in->close_timer, in_close_cb, in);
    conn_set_user(c, in);
    in->t->st.inbound_connections++;
}

static void in_closed(struct conn *c, void *data)
{
    struct inbound *in = conn_get_user(c);
    struct transport *t = data;
    if (!in)
        return;
    reactor_timer_stop(t->r, &in->close_timer);
    t->st.inbound_connections--;
    conn_set_user(c, NULL);
    mem_free(in);
}

static void refuse(struct inbound *in, int32_t from, int16_t code, const char *why)
{
    struct transport *t = in->t;
    char q[256];
    log_warn("raft_peer_refused", "node=%d conn=%s from=%d code=%d reason=%s", t->self,
             conn_peer(in->c), from, code, log_quote(q, sizeof(q), why, strlen(why)));
    t->st.inbound_refused++;
    in->refused = true;
    struct iobuf b;
    iobuf_init(&b);
    rpc_encode_error(&b, t->self, from >= 0 ? from : 0, code, why);
    conn_slot_complete(conn_slot_reserve(in->c), &b);
    /* The frame is written once on_frame returns; the close follows on the next iteration. */
    reactor_timer_start(t->r, &in->close_timer, 0);
}

/* A joining node asks who the voters are: one answer, then the connection closes (as after a
 * refusal: the frame leaves first). */
static void in_describe(struct inbound *in, const struct rpc_header *h, const uint8_t *body,
                        size_t body_len)
{
    struct transport *t = in->t;
    uint16_t version;
    const uint8_t *nonce;
    if (rpc_decode_quorum_describe(body, body_len, &version, &nonce) != 0)
        return refuse(in, -1, RPC_ERR_PROTOCOL, "malformed QUORUM_DESCRIBE");
    if (version != RPC_VERSION)
        return refuse(in, h->from, RPC_ERR_VERSION, "unsupported protocol version");
    if (t->secret.len > 0 && !nonce) {
        t->st.auth_failures++;
        return refuse(in, h->from, RPC_ERR_AUTH,
                      "this cluster requires the inter-broker secret (cluster.secret.file)");
    }
    struct rpc_quorum_info info;
    if (!t->on_describe || t->on_describe(&info, t->describe_data) != 0)
        return refuse(in, h->from, RPC_ERR_CLUSTER, "this node does not know its quorum yet");
    log_info("raft_quorum_described", "node=%d conn=%s from=%d voters=%zu", t->self,
             conn_peer(in->c), h->from, info.n_voters);
    in->refused = true; /* nothing more is read from this connection */
    struct iobuf b;
    iobuf_init(&b);
    uint8_t proof[PEER_AUTH_PROOF];
    if (t->secret.len > 0) {
        uint8_t raw[RPC_QUORUM_INFO_MAX];
        size_t n = rpc_quorum_info_body(&info, raw);
        peer_auth_msg_proof(&t->secret, "sp-quorum", nonce, raw, n, proof);
    }
    rpc_encode_quorum_info(&b, t->self, h->from, &info, t->secret.len > 0 ? proof : NULL);
    conn_slot_complete(conn_slot_reserve(in->c), &b);
    reactor_timer_start(t->r, &in->close_timer, 0);
}

static void in_hello(struct inbound *in, int rc, const struct rpc_header *h, const uint8_t *body,
                     size_t body_len)
{
    struct transport *t = in->t;
    char why[160];
    struct rpc_hello hello;
    if (rc == -ERR_UNSUPPORTED)
        return refuse(in, h->from, RPC_ERR_VERSION, "unsupported protocol version");
    if (rc == 0 && h->type == RPC_QUORUM_DESCRIBE)
        return in_describe(in, h, body, body_len);
    if (rc != 0 || h->type != RPC_HELLO || rpc_decode_hello(body, body_len, &hello) != 0)
        return refuse(in, -1, RPC_ERR_PROTOCOL, "expected a HELLO frame");
    if (hello.version != RPC_VERSION)
        return refuse(in, h->from, RPC_ERR_VERSION, "unsupported protocol version");
    if (hello.cluster_id_len != strlen(t->cluster_id) ||
        memcmp(hello.cluster_id, t->cluster_id, hello.cluster_id_len) != 0) {
        snprintf(why, sizeof(why), "cluster id mismatch: got '%.*s', this cluster is '%s'",
                 (int)MIN(hello.cluster_id_len, 64), hello.cluster_id, t->cluster_id);
        return refuse(in, h->from, RPC_ERR_CLUSTER, why);
    }
    if (h->to != t->self) {
        snprintf(why, sizeof(why), "addressed to node %d, this is node %d", h->to, t->self);
        return refuse(in, h->from, RPC_ERR_NODE, why);
    }
    if (h->from == t->self)
        return refuse(in, h->from, RPC_ERR_NODE, "sender claims this node's own id");
    if (!find_peer(t, h->from) && !t->cfg.accept_any_node) {
        snprintf(why, sizeof(why), "unknown node id %d", h->from);
        return refuse(in, h->from, RPC_ERR_NODE, why);
    }
    struct iobuf b;
    iobuf_init(&b);
    if (t->secret.len == 0) {
        in->peer = h->from;
        rpc_encode_hello_ok(&b, t->self, h->from, NULL, NULL);
        conn_slot_complete(conn_slot_reserve(in->c), &b);
        log_debug("raft_inbound_accepted", "node=%d conn=%s from=%d", t->self, conn_peer(in->c),
                  h->from);
        return;
    }
    if (!hello.nonce) {
        t->st.auth_failures++;
        return refuse(in, h->from, RPC_ERR_AUTH,
                      "this cluster requires the inter-broker secret (cluster.secret.file)");
    }
    if (peer_auth_nonce(in->nonce_a) != 0)
        return refuse(in, h->from, RPC_ERR_PROTOCOL, "no random bytes for the handshake");
    memcpy(in->nonce_d, hello.nonce, PEER_AUTH_NONCE);
    uint8_t proof[PEER_AUTH_PROOF];
    peer_auth_hello_proof(&t->secret, "sp-accept", t->cluster_id, h->from, t->self, in->nonce_d,
                          in->nonce_a, proof);
    in->proving = h->from;
    rpc_encode_hello_ok(&b, t->self, h->from, in->nonce_a, proof);
    conn_slot_complete(conn_slot_reserve(in->c), &b);
}

/* With a secret: the frame after our HELLO_OK must be the dialer's good AUTH. */
static void in_auth(struct inbound *in, int rc, const struct rpc_header *h, const uint8_t *body,
                    size_t body_len)
{
    struct transport *t = in->t;
    const uint8_t *proof = NULL;
    bool ok = rc == 0 && h->type == RPC_AUTH && h->from == in->proving && h->to == t->self &&
              rpc_decode_auth(body, body_len, &proof) == 0;
    uint8_t want[PEER_AUTH_PROOF];
    if (ok) {
        peer_auth_hello_proof(&t->secret, "sp-dial", t->cluster_id, in->proving, t->self,
                              in->nonce_d, in->nonce_a, want);
        ok = peer_auth_equal(want, proof);
    }
    if (!ok) {
        t->st.auth_failures++;
        return refuse(in, in->proving, RPC_ERR_AUTH,
                      "no proof of the inter-broker secret (cluster.secret.file), or a wrong one");
    }
    in->peer = in->proving;
    in->proving = RAFT_NONE;
    log_debug("raft_inbound_accepted", "node=%d conn=%s from=%d auth=secret", t->self,
              conn_peer(in->c), in->peer);
}

static void bad_frame(struct inbound *in, const char *why, int rc)
{
    struct transport *t = in->t;
    log_warn("raft_inbound_bad_frame", "node=%d conn=%s from=%d reason=\"%s\" err=\"%s\"",
             t->self, conn_peer(in->c), in->peer, why, err_str(rc));
    t->st.inbound_bad_frames++;
    conn_close(in->c);
}

static void in_controller(struct inbound *in, const struct rpc_header *h, const uint8_t *body,
                          size_t body_len, size_t len)
{
    struct transport *t = in->t;
    struct rpc_controller c;
    int rc = rpc_decode_controller(body, body_len, &c);
    if (rc != 0)
        return bad_frame(in, "malformed controller body", rc);
    struct peer *p = find_peer(t, in->peer); /* NULL: a node accepted by accept_any_node */
    if (p) {
        p->st.frames_received++;
        p->st.bytes_received += 4 + len;
    }
    if (!t->on_ctl) {
        t->st.ctl_dropped++;
        return;
    }
    t->st.ctl_received++;
    t->on_ctl(h->from, h->type, c.request_id, c.body, c.len, t->ctl_data);
}

static void in_frame(struct conn *c, uint8_t *frame, size_t len, void *data)
{
    struct inbound *in = conn_get_user(c);
    struct transport *t = data;
    if (!in || in->refused || conn_closing(c))
        return;
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    int rc = rpc_decode_header(frame, len, &h, &body, &body_len);
    if (in->proving != RAFT_NONE)
        return in_auth(in, rc, &h, body, body_len);
    if (in->peer == RAFT_NONE)
        return in_hello(in, rc, &h, body, body_len);
    if (rc != 0)
        return bad_frame(in, "bad header", rc);
    if (h.from != in->peer || h.to != t->self)
        return bad_frame(in, "node ids differ from the handshake", -ERR_INVALID);
    if (rpc_is_controller_type(h.type))
        return in_controller(in, &h, body, body_len, len);
    if (h.type != RPC_RAFT && h.type != RPC_HEARTBEATS)
        return bad_frame(in, "unexpected frame type", -ERR_INVALID);
    struct rpc_batch b;
    rc = rpc_decode_batch(&h, body, body_len, &b);
    if (rc != 0)
        return bad_frame(in, "malformed body", rc);
    struct peer *p = find_peer(t, in->peer);
    if (p) {
        p->st.frames_received++;
        p->st.bytes_received += 4 + len;
        p->st.msgs_received += b.n_items;
    }
    for (size_t i = 0; i < b.n_items && !t->closing; i++)
        t->on_msg(h.from, &b.items[i].group, &b.items[i].msg, t->data);
    rpc_batch_free(&b);
}

/* ---- public -------------------------------------------------------------------------------- */

/* Adds a peer (not connected yet: the caller starts peer_connect). */
static struct peer *peer_new(struct transport *t, const struct transport_peer_config *pc)
{
    struct peer *p = mem_calloc(1, sizeof(*p));
    p->t = t;
    p->id = pc->id;
    p->host = mem_strdup(pc->host);
    p->port = pc->port;
    reactor_timer_init(&p->timer, peer_timer_cb, p);
    rpc_builder_init(&p->raft, RPC_RAFT);
    rpc_builder_init(&p->hb, RPC_HEARTBEATS);
    MEM_GROW(t->peers, t->cap_peers, t->n_peers + 1);
    t->peers[t->n_peers++] = p;
    return p;
}

int transport_add_peer(struct transport *t, int32_t id, const char *host, int port)
{
    if (id < 0 || id == t->self || !host || !host[0] || port <= 0 || port > 65535)
        return -ERR_INVALID;
    struct peer *p = find_peer(t, id);
    if (p) {
        if (p->port == port && strcmp(p->host, host) == 0)
            return 0;
        /* a new address: used from the next connection attempt on (a live one is kept) */
        log_info("raft_peer_address", "node=%d peer=%d addr=%s:%d was=%s:%d", t->self, id, host,
                 port, p->host, p->port);
        mem_free(p->host);
        p->host = mem_strdup(host);
        p->port = port;
        return 0;
    }
    if (t->n_peers >= TRANSPORT_PEERS_MAX)
        return -ERR_LIMIT;
    struct transport_peer_config pc = {id, host, port};
    p = peer_new(t, &pc);
    log_info("raft_peer_added", "node=%d peer=%d addr=%s:%d", t->self, id, host, port);
    peer_connect(p);
    if (DCHECK_ENABLED)
        transport_check(t);
    return 1;
}

bool transport_has_peer(const struct transport *t, int32_t id)
{
    return find_peer(t, id) != NULL;
}

static int check_config(const struct transport_config *c)
{
    if (c->self_id < 0 || !c->cluster_id || strlen(c->cluster_id) < 1 ||
        strlen(c->cluster_id) > RPC_CLUSTER_ID_MAX || (c->n_peers && !c->peers) ||
        !c->tls_server != !c->tls_client)
        return -ERR_INVALID;
    for (size_t i = 0; i < c->n_peers; i++) {
        const struct transport_peer_config *p = &c->peers[i];
        if (p->id < 0 || !p->host || p->port <= 0 || p->port > 65535)
            return -ERR_INVALID;
        for (size_t j = 0; j < i; j++)
            if (c->peers[j].id == p->id)
                return -ERR_INVALID;
    }
    return 0;
}

int transport_new(struct reactor *r, const struct transport_config *cfg, transport_msg_cb on_msg,
                  void *data, struct transport **out)
{
    int rc = check_config(cfg);
    if (rc != 0 || !on_msg)
        return -ERR_INVALID;
    struct transport *t = mem_calloc(1, sizeof(*t));
    t->r = r;
    t->self = cfg->self_id;
    t->cluster_id = mem_strdup(cfg->cluster_id);
    t->cfg = *cfg;
    t->cfg.peers = NULL;
    t->cfg.cluster_id = NULL;
    t->cfg.listen_host = NULL;
    t->cfg.secret = NULL;
    t->cfg.tls_server = NULL; /* t->tls_in holds it; tls_client stays borrowed */
    if (cfg->secret && cfg->secret->len > 0)
        t->secret = *cfg->secret;
    if (!t->cfg.queue_max_bytes)
        t->cfg.queue_max_bytes = DEFAULT_QUEUE_MAX_BYTES;
    if (!t->cfg.max_frame_bytes)
        t->cfg.max_frame_bytes = DEFAULT_MAX_FRAME_BYTES;
    if (t->cfg.backoff_min_ms <= 0)
        t->cfg.backoff_min_ms = 50;
    if (t->cfg.backoff_max_ms < t->cfg.backoff_min_ms)
        t->cfg.backoff_max_ms = MAX(2000, t->cfg.backoff_min_ms);
    if (t->cfg.handshake_timeout_ms <= 0)
        t->cfg.handshake_timeout_ms = 2000;
    t->rng = cfg->seed ^ ((uint64_t)(uint32_t)cfg->self_id << 32);
    t->on_msg = on_msg;
    t->data = data;
    for (size_t i = 0; i < cfg->n_peers; i++)
        if (cfg->peers[i].id != cfg->self_id)
            (void)peer_new(t, &cfg->peers[i]);
    int max_conns =
        t->cfg.accept_any_node ? TRANSPORT_ANY_NODE_CONNECTIONS_MAX : (int)(4 * t->n_peers + 8);
    struct conn_limits lim = {.max_frame_bytes = t->cfg.max_frame_bytes,
                              .max_connections = max_conns};
    struct conn_handler h = {in_frame, in_closed, in_open, t};
    if (cfg->tls_server) {
        t->tls_in = *cfg->tls_server;
        t->tls_in.handshake_timeout_ms = t->cfg.handshake_timeout_ms;
    }
    struct listener_endpoint ep = {
        .name = "cluster",
        .host = cfg->listen_host ? cfg->listen_host : "0.0.0.0",
        .port = cfg->listen_port,
        .tls = cfg->tls_server ? &t->tls_in : NULL,
    };
    rc = listener_open_endpoints(r, &ep, 1, &lim, &h, &t->l, NULL);
    if (rc != 0) {
        t->l = NULL;
        transport_free(t);
        return rc;
    }
    for (size_t i = 0; i < t->n_peers; i++)
        peer_connect(t->peers[i]);
    *out = t;
    return 0;
}

void transport_free(struct transport *t)
{
    if (!t)
        return;
    t->closing = true;
    if (t->l)
        listener_close(t->l);
    for (size_t i = 0; i < t->n_peers; i++) {
        struct peer *p = t->peers[i];
        reactor_timer_stop(t->r, &p->timer);
        if (p->d)
            dial_close(p->d);
        rpc_builder_destroy(&p->raft);
        rpc_builder_destroy(&p->hb);
        mem_free(p->host);
        mem_free(p);
    }
    mem_free(t->peers);
    mem_free(t->cluster_id);
    volatile uint8_t *k = t->secret.key; /* the secret does not outlive the transport */
    for (size_t i = 0; i < sizeof(t->secret.key); i++)
        k[i] = 0;
    mem_free(t);
}

int transport_port(const struct transport *t)
{
    return listener_port(t->l);
}

static size_t queued_bytes(const struct peer *p)
{
    return rpc_builder_bytes(&p->raft) + rpc_builder_bytes(&p->hb) +
           (p->d ? dial_pending(p->d) : 0);
}

/* Moves b's frame into the peer's connection. */
static void send_builder(struct peer *p, struct rpc_builder *b)
{
    struct iobuf out;
    iobuf_init(&out);
    p->st.msgs_sent += rpc_builder_count(b);
    rpc_builder_finish(b, p->t->self, p->id, &out);
    p->st.frames_sent++;
    p->st.bytes_sent += iobuf_pending(&out);
    dial_send(p->d, &out);
}

int transport_send(struct transport *t, int32_t peer, const struct rpc_group *g,
                   const struct raft_msg *m)
{
    struct peer *p = find_peer(t, peer);
    if (!p)
        return -ERR_NOT_FOUND;
    if (!p->ready) {
        p->st.drops++;
        return -ERR_CLOSED;
    }
    size_t size = rpc_msg_size(g, m);
    bool hb = m->type == RAFT_MSG_HEARTBEAT || m->type == RAFT_MSG_HEARTBEAT_RESP;
    struct rpc_builder *b = hb ? &p->hb : &p->raft;
    if (size + rpc_builder_bytes(b) > t->cfg.max_frame_bytes) {
        if (rpc_builder_empty(b) || hb) {
            p->st.drops++;
            return -ERR_TOO_LARGE;
        }
        if (queued_bytes(p) + size > t->cfg.queue_max_bytes) {
            p->st.drops++;
            return -ERR_LIMIT;
        }
        send_builder(p, b); /* this frame is full: it leaves now, the message starts the next */
    }
    if (queued_bytes(p) + size > t->cfg.queue_max_bytes) {
        p->st.drops++;
        return -ERR_LIMIT;
    }
    rpc_builder_add(b, g, m);
    if (DCHECK_ENABLED)
        transport_check(t);
    return 0;
}

void transport_set_describe_cb(struct transport *t, transport_describe_cb cb, void *data)
{
    t->on_describe = cb;
    t->describe_data = data;
}

void transport_set_controller_cb(struct transport *t, transport_ctl_cb cb, void *data)
{
    t->on_ctl = cb;
    t->ctl_data = data;
}

int transport_send_controller(struct transport *t, int32_t peer, uint8_t type,
                              uint64_t request_id, const uint8_t *body, size_t len)
{
    CHECK(rpc_is_controller_type(type));
    CHECK(len <= RPC_CONTROLLER_BODY_MAX);
    struct peer *p = find_peer(t, peer);
    if (!p)
        return -ERR_NOT_FOUND;
    if (!p->ready) {
        p->st.drops++;
        return -ERR_CLOSED;
    }
    size_t size = 4 + RPC_HEADER_BYTES + 12 + len;
    if (size > t->cfg.max_frame_bytes) {
        p->st.drops++;
        return -ERR_TOO_LARGE;
    }
    if (queued_bytes(p) + size > t->cfg.queue_max_bytes) {
        p->st.drops++;
        return -ERR_LIMIT;
    }
    /* Queued Raft messages go first, so the frames leave in the order they were sent. */
    if (!rpc_builder_empty(&p->hb))
        send_builder(p, &p->hb);
    if (!rpc_builder_empty(&p->raft))
        send_builder(p, &p->raft);
    struct iobuf out;
    iobuf_init(&out);
    rpc_encode_controller(&out, type, t->self, peer, request_id, body, len);
    p->st.frames_sent++;
    p->st.bytes_sent += iobuf_pending(&out);
    dial_send(p->d, &out);
    return 0;
}

void transport_flush(struct transport *t)
{
    for (size_t i = 0; i < t->n_peers; i++) {
        struct peer *p = t->peers[i];
        if (!p->ready)
            continue;
        if (!rpc_builder_empty(&p->hb))
            send_builder(p, &p->hb);
        if (!rpc_builder_empty(&p->raft))
            send_builder(p, &p->raft);
    }
    if (DCHECK_ENABLED)
        transport_check(t);
}

int transport_peer_stats(const struct transport *t, int32_t peer,
                         struct transport_peer_stats *out)
{
    const struct peer *p = find_peer(t, peer);
    if (!p)
        return -ERR_NOT_FOUND;
    *out = p->st;
    out->connected = p->ready;
    return 0;
}

void transport_get_stats(const struct transport *t, struct transport_stats *out)
{
    *out = t->st;
    if (t->tls_in.ctx_get) {
        struct conn_stats cs;
        listener_get_stats(t->l, &cs);
        out->tls_handshakes_in = cs.tls_handshakes;
        out->tls_failures_in = cs.tls_handshake_failures;
    }
}
