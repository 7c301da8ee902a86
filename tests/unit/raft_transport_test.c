/* The inter-broker Raft transport (replication/transport.h) over real loopback sockets: two or three
 * transports on one reactor in this process, driven with reactor_run_once. */
#include <unistd.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net_test_util.h"
#include "replication/transport.h"
#include "security/peer_auth.h"
#include "security/tls_context.h"
#include "test.h"
#include "tls_test_util.h"

#define N_NODES 3

/* What a node received. */
struct inbox {
    int32_t self;
    size_t n;             /* messages */
    size_t n_heartbeats;  /* of which heartbeats */
    int32_t last_from;
    struct raft_msg last; /* entries not kept */
    char topic[64];
    int32_t partition;
    size_t entries_ok;    /* APPEND entries whose payload matched the expected bytes */
};

static uint8_t big_payload[200 * 1024];

static void fill_payload(void)
{
    for (size_t i = 0; i < sizeof(big_payload); i++)
        big_payload[i] = (uint8_t)(i * 131 + (i >> 8));
}

static void on_msg(int32_t from, const struct rpc_group *g, const struct raft_msg *m, void *data)
{
    struct inbox *in = data;
    in->n++;
    if (m->type == RAFT_MSG_HEARTBEAT)
        in->n_heartbeats++;
    in->last_from = from;
    in->last = *m;
    in->last.entries = NULL;
    ASSERT_CMP(g->topic_len, <, sizeof(in->topic));
    memcpy(in->topic, g->topic, g->topic_len);
    in->topic[g->topic_len] = 0;
    in->partition = g->partition;
    for (size_t i = 0; i < m->n_entries; i++) {
        const struct raft_entry *e = &m->entries[i];
        /* Entry i carries the first (i + 1) * 1000 bytes of big_payload, the last all of it. */
        size_t want = i + 1 == m->n_entries ? sizeof(big_payload) : (i + 1) * 1000;
        if (e->len == want && memcmp(e->payload, big_payload, want) == 0 &&
            e->first == 100 + (int64_t)i && e->last == e->first && e->term == 3 &&
            e->kind == RAFT_ENTRY_DATA)
            in->entries_ok++;
    }
}

/* A free loopback port (bound and released; fine for tests). */
static int free_port(void)
{
    int port;
    int fd = listener_bind_tcp("127.0.0.1", 0, &port);
    ASSERT(fd >= 0);
    close(fd);
    return port;
}

struct cluster {
    struct reactor *r;
    int ports[N_NODES + 1];
    struct transport *t[N_NODES + 1]; /* by node id 1..N_NODES */
    struct inbox in[N_NODES + 1];
    struct transport_peer_config peers[N_NODES];
    size_t queue_max_bytes;
    int64_t handshake_timeout_ms;
    const struct peer_secret *secret[N_NODES + 1]; /* cluster.secret.file of each (NULL: none) */
    const struct listener_tls *tls_server[N_NODES + 1]; /* cluster.ssl.* of each (NULL: none) */
    const struct dial_tls *tls_client[N_NODES + 1];
};

static void cluster_init(struct cluster *c)
{
    memset(c, 0, sizeof(*c));
    fill_payload();
    log_set_level(getenv("RAFT_TRANSPORT_TEST_LOG") ? LOG_INFO : LOG_ERROR);
    c->r = reactor_new();
    ASSERT(c->r != NULL);
    for (int id = 1; id <= N_NODES; id++) {
        c->ports[id] = free_port();
        c->peers[id - 1] = (struct transport_peer_config){id, "127.0.0.1", c->ports[id]};
        c->in[id].self = id;
    }
}

static int node_start_as(struct cluster *c, int id, const char *cluster_id)
{
    struct transport_config cfg = {
        .self_id = id,
        .cluster_id = cluster_id,
        .listen_host = "127.0.0.1",
        .listen_port = c->ports[id],
        .peers = c->peers,
        .n_peers = N_NODES,
        .queue_max_bytes = c->queue_max_bytes,
        .handshake_timeout_ms = c->handshake_timeout_ms,
        .seed = (uint64_t)id,
        .secret = c->secret[id],
        .tls_server = c->tls_server[id],
        .tls_client = c->tls_client[id],
    };
    return transport_new(c->r, &cfg, on_msg, &c->in[id], &c->t[id]);
}

static void node_start(struct cluster *c, int id)
{
    ASSERT_EQ(node_start_as(c, id, "test-cluster"), 0);
    ASSERT_EQ(transport_port(c->t[id]), c->ports[id]);
}

static void node_stop(struct cluster *c, int id)
{
    transport_free(c->t[id]);
    c->t[id] = NULL;
}

static void cluster_free(struct cluster *c)
{
    for (int id = 1; id <= N_NODES; id++)
        if (c->t[id])
            node_stop(c, id);
    reactor_free(c->r);
    nt_leak_check();
}

static bool connected(struct cluster *c, int from, int to)
{
    struct transport_peer_stats st;
    ASSERT_EQ(transport_peer_stats(c->t[from], to, &st), 0);
    return st.connected;
}

static struct transport_peer_stats stats(struct cluster *c, int from, int to)
{
    struct transport_peer_stats st;
    ASSERT_EQ(transport_peer_stats(c->t[from], to, &st), 0);
    return st;
}

static struct raft_msg vote(int64_t term)
{
    struct raft_msg m;
    memset(&m, 0, sizeof(m));
    m.type = RAFT_MSG_VOTE;
    m.term = term;
    m.index = 10;
    m.log_term = 2;
    return m;
}

/* Sends a vote from -> to and waits for it. */
static void vote_flows(struct cluster *c, int from, int to, int64_t term)
{
    size_t before = c->in[to].n;
    struct rpc_group g = {"orders", 6, 3};
    struct raft_msg m = vote(term);
    ASSERT_EQ(transport_send(c->t[from], to, &g, &m), 0);
    transport_flush(c->t[from]);
    NT_PUMP_UNTIL(c->r, c->in[to].n == before + 1, 3000);
    ASSERT_EQ(c->in[to].last_from, from);
    ASSERT_EQ(c->in[to].last.type, RAFT_MSG_VOTE);
    ASSERT_EQ(c->in[to].last.term, term);
    ASSERT_EQ(c->in[to].last.to, to);
}

TEST(raft_transport_delivers_entries_intact)
{
    struct cluster c;
    cluster_init(&c);
    node_start(&c, 1);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2) && connected(&c, 2, 1), 3000);

    struct raft_entry ents[4];
    for (int i = 0; i < 4; i++)
        ents[i] = (struct raft_entry){100 + i, 100 + i, 3, RAFT_ENTRY_DATA, big_payload,
                                      i == 3 ? sizeof(big_payload) : (size_t)(i + 1) * 1000};
    struct raft_msg m;
    memset(&m, 0, sizeof(m));
    m.type = RAFT_MSG_APPEND;
    m.term = 3;
    m.index = 99;
    m.log_term = 3;
    m.commit = 98;
    m.last = 103;
    m.entries = ents;
    m.n_entries = 4;
    struct rpc_group g = {RPC_CONTROLLER_TOPIC, strlen(RPC_CONTROLLER_TOPIC), 0};
    ASSERT_EQ(transport_send(c.t[1], 2, &g, &m), 0);
    /* The payload was copied: scribbling over the caller's bytes changes nothing. */
    uint8_t saved = big_payload[5];
    big_payload[5] ^= 0xff;
    struct raft_msg v = vote(4);
    struct rpc_group g2 = {"orders", 6, 7};
    ASSERT_EQ(transport_send(c.t[1], 2, &g2, &v), 0);
    transport_flush(c.t[1]);
    big_payload[5] = saved;
    NT_PUMP_UNTIL(c.r, c.in[2].n == 2, 3000);
    ASSERT_EQ(c.in[2].entries_ok, 4);
    ASSERT_EQ(c.in[2].last_from, 1);
    ASSERT_EQ(c.in[2].last.type, RAFT_MSG_VOTE);
    ASSERT_STREQ(c.in[2].topic, "orders");
    ASSERT_EQ(c.in[2].partition, 7);
    /* Both in one RAFT frame. */
    ASSERT_EQ(stats(&c, 1, 2).frames_sent, 1);
    ASSERT_EQ(stats(&c, 2, 1).frames_received, 1);
    ASSERT_EQ(stats(&c, 2, 1).msgs_received, 2);
    ASSERT_EQ(stats(&c, 1, 2).msgs_sent, 2);
    ASSERT_CMP(stats(&c, 1, 2).bytes_sent, >, sizeof(big_payload));
    ASSERT_EQ(stats(&c, 1, 2).bytes_sent, stats(&c, 2, 1).bytes_received);
    /* And the other way. */
    vote_flows(&c, 2, 1, 9);
    ASSERT_EQ(transport_send(c.t[1], 7, &g, &v), -ERR_NOT_FOUND);
    cluster_free(&c);
}

TEST(raft_transport_heartbeats_of_1000_groups_in_one_frame)
{
    struct cluster c;
    cluster_init(&c);
    node_start(&c, 1);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2), 3000);
    char topic[16];
    for (int i = 0; i < 1000; i++) {
        snprintf(topic, sizeof(topic), "t%d", i % 7);
        struct rpc_group g = {topic, strlen(topic), i};
        struct raft_msg m;
        memset(&m, 0, sizeof(m));
        m.type = i < 600 ? RAFT_MSG_HEARTBEAT : RAFT_MSG_HEARTBEAT_RESP;
        m.term = 5;
        m.commit = i;
        ASSERT_EQ(transport_send(c.t[1], 2, &g, &m), 0);
    }
    transport_flush(c.t[1]);
    NT_PUMP_UNTIL(c.r, c.in[2].n == 1000, 3000);
    ASSERT_EQ(c.in[2].n_heartbeats, 600);
    ASSERT_EQ(c.in[2].last.type, RAFT_MSG_HEARTBEAT_RESP);
    ASSERT_EQ(stats(&c, 1, 2).frames_sent, 1);
    ASSERT_EQ(stats(&c, 2, 1).frames_received, 1);
    ASSERT_CMP(stats(&c, 1, 2).bytes_sent, <, 1000 * 12);
    cluster_free(&c);
}

TEST(raft_transport_down_peer_retried_with_backoff)
{
    struct cluster c;
    cluster_init(&c);
    node_start(&c, 1);
    nt_pump_for(c.r, 500);
    struct transport_peer_stats st = stats(&c, 1, 2);
    ASSERT(!st.connected);
    /* 50, 100, 200 ms (each jittered down to half at most): a handful of attempts, not 100. */
    ASSERT_CMP(st.connect_failures, >=, 2);
    ASSERT_CMP(st.connect_failures, <=, 8);
    struct rpc_group g = {"orders", 6, 0};
    struct raft_msg m = vote(1);
    ASSERT_EQ(transport_send(c.t[1], 2, &g, &m), -ERR_CLOSED);
    ASSERT_EQ(stats(&c, 1, 2).drops, 1);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2), 5000);
    ASSERT_EQ(stats(&c, 1, 2).connects, 1);
    ASSERT_EQ(stats(&c, 1, 2).reconnects, 0);
    vote_flows(&c, 1, 2, 2);
    cluster_free(&c);
}

TEST(raft_transport_reconnects_after_close)
{
    struct cluster c;
    cluster_init(&c);
    node_start(&c, 1);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2) && connected(&c, 2, 1), 3000);
    vote_flows(&c, 1, 2, 1);
    node_stop(&c, 2);
    NT_PUMP_UNTIL(c.r, !connected(&c, 1, 2), 3000);
    memset(&c.in[2], 0, sizeof(c.in[2]));
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2), 5000);
    ASSERT_EQ(stats(&c, 1, 2).connects, 2);
    ASSERT_EQ(stats(&c, 1, 2).reconnects, 1);
    vote_flows(&c, 1, 2, 2);
    vote_flows(&c, 2, 1, 3);
    cluster_free(&c);
}

/* Connects a raw client to node `to`, writes bytes, and expects to be disconnected; returns
 * what the node answered before closing. */
static size_t raw_rejected(struct cluster *c, int to, const void *bytes, size_t n)
{
    int fd = nt_connect(c->ports[to], 0);
    nt_write_all(c->r, fd, bytes, n);
    size_t got = nt_wait_closed(c->r, fd, 3000);
    close(fd);
    return got;
}

static size_t hello_bytes(uint8_t *dst, int32_t from, int32_t to, const char *cluster_id)
{
    struct iobuf b;
    iobuf_init(&b);
    rpc_encode_hello(&b, from, to, cluster_id, NULL);
    size_t len;
    uint8_t *p = iobuf_flatten(&b, &len);
    memcpy(dst, p, len);
    mem_free(p);
    iobuf_destroy(&b);
    return len;
}

TEST(raft_transport_bad_inbound_disconnected_others_unaffected)
{
    struct cluster c;
    cluster_init(&c);
    node_start(&c, 1);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2), 3000);
    struct transport_stats ts;

    /* Garbage instead of a HELLO: answered with an error frame, closed. */
    uint8_t buf[512];
    size_t n = nt_frame(buf, "garbage garbage garbage", 23);
    ASSERT_CMP(raw_rejected(&c, 2, buf, n), >, 4 + RPC_HEADER_BYTES);
    /* An oversized frame announced: closed without an answer. */
    nt_put_be32(buf, 0x7fffffff);
    ASSERT_EQ(raw_rejected(&c, 2, buf, 4), 0);
    /* HELLOs with a wrong cluster id, an unknown node, this node's own id, another target. */
    n = hello_bytes(buf, 1, 2, "other-cluster");
    ASSERT_CMP(raw_rejected(&c, 2, buf, n), >, 4 + RPC_HEADER_BYTES);
    n = hello_bytes(buf, 9, 2, "test-cluster");
    ASSERT_CMP(raw_rejected(&c, 2, buf, n), >, 4 + RPC_HEADER_BYTES);
    n = hello_bytes(buf, 2, 2, "test-cluster");
    ASSERT_CMP(raw_rejected(&c, 2, buf, n), >, 4 + RPC_HEADER_BYTES);
    n = hello_bytes(buf, 1, 3, "test-cluster");
    ASSERT_CMP(raw_rejected(&c, 2, buf, n), >, 4 + RPC_HEADER_BYTES);
    transport_get_stats(c.t[2], &ts);
    ASSERT_EQ(ts.inbound_refused, 5);

    /* A good HELLO, then a frame with a broken CRC: accepted, then closed. */
    n = hello_bytes(buf, 3, 2, "test-cluster");
    int fd = nt_connect(c.ports[2], 0);
    nt_write_all(c.r, fd, buf, n);
    uint8_t ok[4 + RPC_HEADER_BYTES];
    nt_read_exact(c.r, fd, ok, sizeof(ok), 3000);
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    ASSERT_EQ(rpc_decode_header(ok + 4, RPC_HEADER_BYTES, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_HELLO_OK);
    ASSERT_EQ(h.from, 2);
    ASSERT_EQ(h.to, 3);
    n = nt_frame(buf, "\xa7\x01\x04\x00\x00\x00\x00\x03\x00\x00\x00\x02zzzz", 16);
    nt_write_all(c.r, fd, buf, n);
    ASSERT_EQ(nt_wait_closed(c.r, fd, 3000), 0);
    close(fd);
    transport_get_stats(c.t[2], &ts);
    ASSERT_EQ(ts.inbound_bad_frames, 1);
    ASSERT_EQ(ts.inbound_refused, 5);

    /* The real peer never noticed. */
    ASSERT(connected(&c, 1, 2));
    vote_flows(&c, 1, 2, 5);
    ASSERT_EQ(stats(&c, 1, 2).connects, 1);
    cluster_free(&c);
}

TEST(raft_transport_wrong_cluster_peer_never_connects)
{
    struct cluster c;
    cluster_init(&c);
    node_start(&c, 2);
    ASSERT_EQ(node_start_as(&c, 1, "another-cluster"), 0);
    nt_pump_for(c.r, 400);
    ASSERT(!connected(&c, 1, 2));
    ASSERT(!connected(&c, 2, 1));
    ASSERT_CMP(stats(&c, 1, 2).connect_failures, >=, 2);
    struct transport_stats ts;
    transport_get_stats(c.t[2], &ts);
    ASSERT_CMP(ts.inbound_refused, >=, 2);
    cluster_free(&c);
}

TEST(raft_transport_queue_cap_drops_counted)
{
    struct cluster c;
    cluster_init(&c);
    c.queue_max_bytes = 64 * 1024;
    node_start(&c, 1);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2), 3000);
    struct raft_entry e = {100, 100, 3, RAFT_ENTRY_DATA, big_payload, 10000};
    struct raft_msg m;
    memset(&m, 0, sizeof(m));
    m.type = RAFT_MSG_APPEND;
    m.term = 3;
    m.index = 99;
    m.log_term = 3;
    m.last = 100;
    m.entries = &e;
    m.n_entries = 1;
    struct rpc_group g = {"orders", 6, 1};
    int ok = 0, dropped = 0;
    for (int i = 0; i < 20; i++) {
        int rc = transport_send(c.t[1], 2, &g, &m);
        ASSERT(rc == 0 || rc == -ERR_LIMIT);
        rc == 0 ? ok++ : dropped++;
    }
    ASSERT_CMP(ok, >=, 5);
    ASSERT_CMP(ok, <=, 7);
    ASSERT_EQ(stats(&c, 1, 2).drops, dropped);
    /* Larger than the whole queue: dropped too. */
    e.len = sizeof(big_payload);
    ASSERT_EQ(transport_send(c.t[1], 2, &g, &m), -ERR_LIMIT);
    ASSERT_EQ(stats(&c, 1, 2).drops, dropped + 1);
    transport_flush(c.t[1]);
    NT_PUMP_UNTIL(c.r, c.in[2].n == (size_t)ok, 3000);
    nt_pump_for(c.r, 50);
    ASSERT_EQ(c.in[2].n, ok);
    cluster_free(&c);
}

TEST(raft_transport_silent_peer_handshake_times_out)
{
    struct cluster c;
    cluster_init(&c);
    c.handshake_timeout_ms = 100;
    /* Node 2's port accepts TCP (the kernel's backlog) but never answers the HELLO. */
    int port;
    int lfd = listener_bind_tcp("127.0.0.1", c.ports[2], &port);
    ASSERT(lfd >= 0);
    node_start(&c, 1);
    nt_pump_for(c.r, 600);
    struct transport_peer_stats st = stats(&c, 1, 2);
    ASSERT(!st.connected);
    /* 100 ms timeout + 50.. ms backoff per attempt. */
    ASSERT_CMP(st.connect_failures, >=, 2);
    ASSERT_CMP(st.connect_failures, <=, 5);
    close(lfd);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2), 5000);
    vote_flows(&c, 1, 2, 1);
    cluster_free(&c);
}

/* Controller frames received by one node. */
struct ctl_inbox {
    size_t n;
    int32_t from;
    uint8_t type;
    uint64_t id;
    uint8_t body[64];
    size_t len;
};

static void on_ctl(int32_t from, uint8_t type, uint64_t id, const uint8_t *body, size_t len,
                   void *data)
{
    struct ctl_inbox *in = data;
    in->n++;
    in->from = from;
    in->type = type;
    in->id = id;
    ASSERT_CMP(len, <=, sizeof(in->body));
    memcpy(in->body, body, len);
    in->len = len;
}

TEST(raft_transport_controller_frames_in_order_with_raft)
{
    struct cluster c;
    cluster_init(&c);
    node_start(&c, 1);
    node_start(&c, 2);
    struct ctl_inbox ci = {0};
    /* Without a callback a controller frame is dropped, not a protocol error. */
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2) && connected(&c, 2, 1), 3000);
    ASSERT_EQ(transport_send_controller(c.t[1], 2, RPC_CONTROLLER_REQUEST, 1, NULL, 0), 0);
    struct transport_stats ts;
    NT_PUMP_UNTIL(c.r, (transport_get_stats(c.t[2], &ts), ts.ctl_dropped == 1), 3000);
    transport_set_controller_cb(c.t[2], on_ctl, &ci);
    /* A queued vote leaves before the controller frame sent after it. */
    struct rpc_group g = {"orders", 6, 3};
    struct raft_msg v = vote(5);
    ASSERT_EQ(transport_send(c.t[1], 2, &g, &v), 0);
    ASSERT_EQ(transport_send_controller(c.t[1], 2, RPC_CONTROLLER_REQUEST, 42,
                                        (const uint8_t *)"create", 6),
              0);
    NT_PUMP_UNTIL(c.r, ci.n == 1, 3000);
    ASSERT_EQ(c.in[2].n, 1); /* the vote came first */
    ASSERT_EQ(ci.from, 1);
    ASSERT_EQ(ci.type, RPC_CONTROLLER_REQUEST);
    ASSERT_UEQ(ci.id, 42);
    ASSERT_EQ(ci.len, 6);
    ASSERT_MEMEQ(ci.body, "create", 6);
    /* The answer goes back on 2's own outbound connection. */
    struct ctl_inbox c1 = {0};
    transport_set_controller_cb(c.t[1], on_ctl, &c1);
    ASSERT_EQ(transport_send_controller(c.t[2], 1, RPC_CONTROLLER_RESPONSE, 42,
                                        (const uint8_t *)"ok", 2),
              0);
    NT_PUMP_UNTIL(c.r, c1.n == 1, 3000);
    ASSERT_EQ(c1.type, RPC_CONTROLLER_RESPONSE);
    ASSERT_EQ(c1.from, 2);
    transport_get_stats(c.t[2], &ts);
    ASSERT_EQ(ts.ctl_received, 1);
    ASSERT_EQ(ts.inbound_bad_frames, 0);
    /* Not connected / not a peer. */
    ASSERT_EQ(transport_send_controller(c.t[1], 3, RPC_CONTROLLER_REQUEST, 1, NULL, 0),
              -ERR_CLOSED);
    ASSERT_EQ(transport_send_controller(c.t[1], 9, RPC_CONTROLLER_REQUEST, 1, NULL, 0),
              -ERR_NOT_FOUND);
    cluster_free(&c);
}

/* Starts node id with only itself as peer (the other nodes get added at run time). */
static void node_start_alone(struct cluster *c, int id, bool accept_any)
{
    struct transport_config cfg = {
        .self_id = id,
        .cluster_id = "test-cluster",
        .listen_host = "127.0.0.1",
        .listen_port = c->ports[id],
        .peers = &c->peers[id - 1],
        .n_peers = 1,
        .seed = (uint64_t)id,
        .accept_any_node = accept_any,
    };
    ASSERT_EQ(transport_new(c->r, &cfg, on_msg, &c->in[id], &c->t[id]), 0);
}

TEST(raft_transport_peers_added_at_run_time)
{
    struct cluster c;
    cluster_init(&c);
    node_start_alone(&c, 1, true);  /* a voter: hears any node of the cluster */
    node_start_alone(&c, 2, false); /* strict: only configured peers */
    node_start_alone(&c, 3, false); /* the newcomer: knows node 1's address only */
    struct ctl_inbox ci = {0};
    transport_set_controller_cb(c.t[1], on_ctl, &ci);
    ASSERT(!transport_has_peer(c.t[3], 1));
    ASSERT_EQ(transport_add_peer(c.t[3], 1, "127.0.0.1", c.ports[1]), 1);
    ASSERT_EQ(transport_add_peer(c.t[3], 1, "127.0.0.1", c.ports[1]), 0);
    ASSERT(transport_has_peer(c.t[3], 1));
    ASSERT_EQ(transport_add_peer(c.t[3], 3, "127.0.0.1", c.ports[3]), -ERR_INVALID); /* self */
    ASSERT_EQ(transport_add_peer(c.t[3], 5, "127.0.0.1", 0), -ERR_INVALID);
    ASSERT_EQ(transport_add_peer(c.t[3], -1, "127.0.0.1", 1000), -ERR_INVALID);
    /* node 1 accepts 3's HELLO although 3 is not its peer, and hears its frames */
    NT_PUMP_UNTIL(c.r, connected(&c, 3, 1), 3000);
    ASSERT_EQ(
        transport_send_controller(c.t[3], 1, RPC_METADATA_FETCH, 9, (const uint8_t *)"fetch", 5),
        0);
    NT_PUMP_UNTIL(c.r, ci.n == 1, 3000);
    ASSERT_EQ(ci.from, 3);
    ASSERT_EQ(ci.type, RPC_METADATA_FETCH);
    vote_flows(&c, 3, 1, 4); /* Raft messages too */
    /* ... but cannot answer before it adds 3 */
    ASSERT_EQ(transport_send_controller(c.t[1], 3, RPC_METADATA_RESPONSE, 9, NULL, 0),
              -ERR_NOT_FOUND);
    ASSERT_EQ(transport_add_peer(c.t[1], 3, "127.0.0.1", c.ports[3]), 1);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 3), 3000);
    struct ctl_inbox c3 = {0};
    transport_set_controller_cb(c.t[3], on_ctl, &c3);
    ASSERT_EQ(
        transport_send_controller(c.t[1], 3, RPC_METADATA_RESPONSE, 9, (const uint8_t *)"data", 4),
        0);
    NT_PUMP_UNTIL(c.r, c3.n == 1, 3000);
    ASSERT_EQ(c3.type, RPC_METADATA_RESPONSE);
    ASSERT_UEQ(c3.id, 9);
    /* a strict node still refuses a node it does not know */
    ASSERT_EQ(transport_add_peer(c.t[3], 2, "127.0.0.1", c.ports[2]), 1);
    struct transport_stats ts;
    NT_PUMP_UNTIL(c.r, (transport_get_stats(c.t[2], &ts), ts.inbound_refused >= 1), 3000);
    ASSERT(!connected(&c, 3, 2));
    cluster_free(&c);
}

static void secret_of(struct peer_secret *s, char c)
{
    memset(s, 0, sizeof(*s));
    s->len = 40;
    memset(s->key, c, s->len);
}

static size_t frame_bytes(uint8_t *dst, struct iobuf *b)
{
    size_t len;
    uint8_t *p = iobuf_flatten(b, &len);
    iobuf_destroy(b);
    memcpy(dst, p, len);
    mem_free(p);
    return len;
}

/* cluster.secret.file: nodes with the same secret connect and carry messages; a node without
 * it or with another one never connects, in either direction, and each refusal is counted; a
 * process that knows the cluster id but not the secret is refused whether it sends no AUTH,
 * a wrong one, or a Raft frame in its place, and none of its frames reaches on_msg. */
TEST(raft_transport_cluster_secret)
{
    struct cluster c;
    cluster_init(&c);
    struct peer_secret a, b;
    secret_of(&a, 'a');
    secret_of(&b, 'b');
    c.secret[1] = c.secret[2] = &a;
    node_start(&c, 1);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2) && connected(&c, 2, 1), 3000);
    vote_flows(&c, 1, 2, 2);
    vote_flows(&c, 2, 1, 3);

    /* node 3 without a secret, then with another one */
    for (int round = 0; round < 2; round++) {
        c.secret[3] = round == 0 ? NULL : &b;
        node_start(&c, 3);
        struct transport_stats before1, before3;
        transport_get_stats(c.t[1], &before1);
        transport_get_stats(c.t[3], &before3);
        nt_pump_for(c.r, 400);
        ASSERT(!connected(&c, 1, 3));
        ASSERT(!connected(&c, 3, 1));
        struct transport_stats after1, after3;
        transport_get_stats(c.t[1], &after1);
        transport_get_stats(c.t[3], &after3);
        ASSERT_CMP(after1.auth_failures, >, before1.auth_failures);
        if (round == 1) /* a secret of its own: node 3 refuses node 1's proof too */
            ASSERT_CMP(after3.auth_failures, >, before3.auth_failures);
        ASSERT_EQ(c.in[1].last_from, 2); /* nothing of node 3 reached node 1 */
        node_stop(&c, 3);
    }

    /* a raw process with the cluster id and a HELLO of its own */
    size_t n_before = c.in[1].n;
    uint8_t buf[1024], nonce[RPC_NONCE_LEN] = {1, 2, 3}, proof[RPC_PROOF_LEN] = {9};
    struct iobuf out;
    iobuf_init(&out);
    rpc_encode_hello(&out, 3, 1, "test-cluster", NULL); /* no nonce */
    size_t n = frame_bytes(buf, &out);
    ASSERT_CMP(raw_rejected(&c, 1, buf, n), >, 4 + RPC_HEADER_BYTES);
    iobuf_init(&out);
    rpc_encode_hello(&out, 3, 1, "test-cluster", nonce);
    rpc_encode_auth(&out, 3, 1, proof); /* a guessed proof */
    n = frame_bytes(buf, &out);
    size_t got = raw_rejected(&c, 1, buf, n);
    ASSERT_CMP(got, >, 2 * (4 + RPC_HEADER_BYTES)); /* HELLO_OK, then the ERROR */
    iobuf_init(&out);
    rpc_encode_hello(&out, 3, 1, "test-cluster", nonce);
    struct rpc_builder rb;
    rpc_builder_init(&rb, RPC_RAFT);
    struct rpc_group g = {"orders", 6, 3};
    struct raft_msg m = vote(99);
    rpc_builder_add(&rb, &g, &m);
    rpc_builder_finish(&rb, 3, 1, &out); /* a vote instead of the AUTH */
    rpc_builder_destroy(&rb);
    n = frame_bytes(buf, &out);
    ASSERT_CMP(raw_rejected(&c, 1, buf, n), >, 2 * (4 + RPC_HEADER_BYTES));
    /* and a QUORUM_DESCRIBE without a nonce */
    iobuf_init(&out);
    rpc_encode_quorum_describe(&out, 3, NULL);
    n = frame_bytes(buf, &out);
    ASSERT_CMP(raw_rejected(&c, 1, buf, n), >, 4 + RPC_HEADER_BYTES);
    ASSERT_EQ(c.in[1].n, n_before);
    struct transport_stats ts;
    transport_get_stats(c.t[1], &ts);
    ASSERT_CMP(ts.auth_failures, >=, 4);
    /* the two good nodes are still connected */
    vote_flows(&c, 2, 1, 4);
    cluster_free(&c);
}

/* ---- cluster.ssl.* ---- */

/* One node's TLS: its two contexts (from PEM files) behind the hooks the transport takes. */
struct node_tls {
    struct tls_context *server, *client;
    struct listener_tls hook;
    struct dial_tls dial;
};

static struct ssl_ctx_st *ctx_get(int64_t now_ms, void *data)
{
    return tls_context_get(data, now_ms);
}

/* Presents key's certificate, trusts trust's CA. */
static void node_tls_init(struct node_tls *nt, const struct pki *key, const struct pki *trust,
                          const char *name)
{
    char ks[512], ca[512], ks2[512], ca2[512], err[1024], n2[64];
    pki_write(key, test_tmpdir(), name, ks, ca, sizeof(ks));
    snprintf(n2, sizeof(n2), "%s-trust", name);
    pki_write(trust, test_tmpdir(), n2, ks2, ca2, sizeof(ks2));
    if (tls_context_new_cluster(ks, "", ca2, false, &nt->server, err, sizeof(err)) != 0 ||
        tls_context_new_cluster(ks, "", ca2, true, &nt->client, err, sizeof(err)) != 0)
        test_fail(__FILE__, __LINE__, "tls_context_new_cluster: %s", err);
    nt->hook = (struct listener_tls){.ctx_get = ctx_get, .data = nt->server};
    nt->dial = (struct dial_tls){.ctx_get = ctx_get, .data = nt->client};
}

static void node_tls_free(struct node_tls *nt)
{
    tls_context_free(nt->server);
    tls_context_free(nt->client);
}

static void node_tls_use(struct cluster *c, int id, struct node_tls *nt)
{
    c->tls_server[id] = nt ? &nt->hook : NULL;
    c->tls_client[id] = nt ? &nt->dial : NULL;
}

static struct transport_stats tstats(struct cluster *c, int id)
{
    struct transport_stats st;
    transport_get_stats(c->t[id], &st);
    return st;
}

/* cluster.ssl.*: two TLS nodes (with the secret too) connect both ways and carry Raft messages
 * with large entries intact; a plaintext node, a node whose certificate another CA signed,
 * and one that trusts another CA never connect in either direction, nothing of theirs reaches
 * on_msg, and the refusals are counted on both sides (tls_failures_in / _out); half a TLS
 * configuration is refused. */
TEST_T(raft_transport_tls, 30)
{
    struct cluster c;
    cluster_init(&c);
    struct pki good, evil;
    pki_make(&good, "Cluster CA");
    pki_make(&evil, "Evil CA");
    struct node_tls t_good, t_evil_key, t_evil_trust;
    node_tls_init(&t_good, &good, &good, "good");
    node_tls_init(&t_evil_key, &evil, &good, "evil-key");
    node_tls_init(&t_evil_trust, &good, &evil, "evil-trust");
    struct peer_secret sec;
    secret_of(&sec, 's');
    for (int id = 1; id <= N_NODES; id++)
        c.secret[id] = &sec;
    node_tls_use(&c, 1, &t_good);
    node_tls_use(&c, 2, &t_good);
    node_start(&c, 1);
    node_start(&c, 2);
    NT_PUMP_UNTIL(c.r, connected(&c, 1, 2) && connected(&c, 2, 1), 5000);
    ASSERT_EQ(tstats(&c, 1).tls_handshakes_in, 1);
    ASSERT_EQ(tstats(&c, 2).tls_handshakes_in, 1);

    struct raft_entry ents[4];
    for (int i = 0; i < 4; i++)
        ents[i] = (struct raft_entry){100 + i, 100 + i, 3, RAFT_ENTRY_DATA, big_payload,
                                      i == 3 ? sizeof(big_payload) : (size_t)(i + 1) * 1000};
    struct raft_msg m;
    memset(&m, 0, sizeof(m));
    m.type = RAFT_MSG_APPEND;
    m.term = 3;
    m.index = 99;
    m.log_term = 3;
    m.last = 103;
    m.entries = ents;
    m.n_entries = 4;
    struct rpc_group g = {"orders", 6, 1};
    for (int k = 0; k < 10; k++) /* 10 x 210 KB: many records, the socket full at times */
        ASSERT_EQ(transport_send(c.t[1], 2, &g, &m), 0);
    transport_flush(c.t[1]);
    NT_PUMP_UNTIL(c.r, c.in[2].n == 10, 5000);
    ASSERT_EQ(c.in[2].entries_ok, 40);
    vote_flows(&c, 2, 1, 4);

    /* node 3: plaintext, then another CA's certificate, then trusting another CA */
    struct node_tls *bad[] = {NULL, &t_evil_key, &t_evil_trust};
    for (int round = 0; round < 3; round++) {
        node_tls_use(&c, 3, bad[round]);
        node_start(&c, 3);
        struct transport_stats b1 = tstats(&c, 1), b3 = tstats(&c, 3);
        size_t n1 = c.in[1].n;
        nt_pump_for(c.r, 400);
        ASSERT(!connected(&c, 1, 3));
        ASSERT(!connected(&c, 3, 1));
        struct transport_stats a1 = tstats(&c, 1), a3 = tstats(&c, 3);
        ASSERT_CMP(a1.tls_failures_in, >, b1.tls_failures_in);   /* 3 -> 1 refused by 1 */
        ASSERT_CMP(a1.tls_failures_out, >, b1.tls_failures_out); /* 1 -> 3 failed */
        if (round > 0) {
            ASSERT_CMP(a3.tls_failures_out, >, b3.tls_failures_out);
            ASSERT_CMP(a3.tls_failures_in, >, b3.tls_failures_in);
        }
        ASSERT_EQ(a1.auth_failures, b1.auth_failures); /* refused before any frame */
        ASSERT_EQ(c.in[1].n, n1);
        ASSERT_EQ(c.in[3].n, 0);
        node_stop(&c, 3);
    }
    /* the good pair is still connected */
    vote_flows(&c, 1, 2, 5);

    /* half a configuration */
    c.tls_server[3] = &t_good.hook;
    c.tls_client[3] = NULL;
    ASSERT_EQ(node_start_as(&c, 3, "test-cluster"), -ERR_INVALID);
    c.tls_server[3] = NULL;
    c.tls_client[3] = &t_good.dial;
    ASSERT_EQ(node_start_as(&c, 3, "test-cluster"), -ERR_INVALID);
    c.t[3] = NULL;
    cluster_free(&c);
    node_tls_free(&t_good);
    node_tls_free(&t_evil_key);
    node_tls_free(&t_evil_trust);
    pki_free(&good);
    pki_free(&evil);
}
