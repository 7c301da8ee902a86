/* The controller runtime (controller/runtime.h): three runtimes in this process on one reactor,
 * each with its metadata log in a temporary directory and a real Raft transport on a loopback
 * port, driven with reactor_run_once in bounded loops. Node i also plays broker i: its
 * registration, heartbeats and producer-id requests are submitted at its own runtime (and
 * forwarded when that is not the leader). */
#include <unistd.h>

#include "base/errors.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "controller/mfetch.h"
#include "controller/request.h"
#include "controller/runtime.h"
#include "kafka/errors.h"
#include "net/conn.h"
#include "net_test_util.h"
#include "replication/replica.h"
#include "replication/transport.h"
#include "storage/flusher.h"
#include "test.h"

#define N 3
#define OBS (N + 1) /* the observer's node id (not a voter; started by observer_start) */
#define SESSION_MS 1000
#define REQUEST_MS 1000
#define HEARTBEAT_EVERY_MS 150

struct node {
    int32_t id;
    char dir[512];
    struct transport *t;
    struct ctl_runtime *rt;
    bool beating;        /* broker id heartbeats (through its own runtime) */
    int64_t next_beat;
    struct kuuid incarnation;
    int image_changes;
    int local_creates;   /* CTL_LOCAL_CREATE seen by on_image_change for this broker */
    size_t n_mresp;      /* METADATA_RESPONSE frames received (the last one kept below) */
    int32_t mresp_from;
    uint8_t *mresp; /* owned */
    size_t mresp_len;
};

static struct {
    struct reactor *r;
    int ports[N + 2];
    struct transport_peer_config peers[N];
    struct ctl_voter voters[N];
    struct node n[N + 2];
    int64_t request_ms;
    bool use_flusher; /* one real flusher thread for every log (the production path) */
    bool dynamic;     /* voter changes allowed: every node gets meta_dir (runtime.h) */
    struct flusher *fl;
} C;

/* One command's outcome. */
struct result {
    bool done;
    struct ctl_answer a;
};

static void done_cb(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct result *res = data;
    (void)rt;
    ASSERT(!res->done); /* exactly once */
    res->done = true;
    res->a = *a;
}

static void beat_done_cb(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    (void)rt;
    (void)a;
    (void)data;
}

/* ---- wiring: transport <-> runtime ---- */

static void on_msg(int32_t from, const struct rpc_group *g, const struct raft_msg *m, void *data)
{
    struct node *nd = data;
    (void)from;
    if (nd->rt && g->partition == 0 && g->topic_len == strlen(RPC_CONTROLLER_TOPIC) &&
        memcmp(g->topic, RPC_CONTROLLER_TOPIC, g->topic_len) == 0)
        (void)ctl_runtime_step(nd->rt, m);
}

static void on_ctl(int32_t from, uint8_t type, uint64_t id, const uint8_t *body, size_t len,
                   void *data)
{
    struct node *nd = data;
    struct ctl_mfetch_req fr;
    /* as cluster.c does: a fetching observer becomes a peer, so the answer can reach it */
    if (type == RPC_METADATA_FETCH && ctl_mfetch_req_decode(body, len, &fr) == 0)
        (void)transport_add_peer(nd->t, from, fr.host, fr.port);
    if (type == RPC_METADATA_RESPONSE) {
        nd->n_mresp++;
        nd->mresp_from = from;
        mem_free(nd->mresp);
        nd->mresp = mem_alloc(len ? len : 1);
        memcpy(nd->mresp, body, len);
        nd->mresp_len = len;
    }
    if (nd->rt)
        ctl_runtime_deliver(nd->rt, from, type, id, body, len);
}

static void send_raft(struct ctl_runtime *rt, const struct raft_msg *m, void *data)
{
    struct node *nd = data;
    (void)rt;
    struct rpc_group g = {RPC_CONTROLLER_TOPIC, strlen(RPC_CONTROLLER_TOPIC), 0};
    if (nd->t) /* NULL: this node is cut off */
        (void)transport_send(nd->t, m->to, &g, m);
}

static int send_frame(struct ctl_runtime *rt, int32_t to, uint8_t type, uint64_t id,
                      const uint8_t *body, size_t len, void *data)
{
    struct node *nd = data;
    (void)rt;
    return nd->t ? transport_send_controller(nd->t, to, type, id, body, len) : -ERR_CLOSED;
}

static void local_cb(enum ctl_local_change what, const struct ctl_topic *t, int32_t partition,
                     const struct ctl_partition *p, void *data)
{
    struct node *nd = data;
    (void)t;
    (void)partition;
    (void)p;
    if (what == CTL_LOCAL_CREATE)
        nd->local_creates++;
}

static void image_change(struct ctl_runtime *rt, const struct ctl_image *before,
                         const struct ctl_image *after, void *data)
{
    struct node *nd = data;
    ASSERT(rt == nd->rt || nd->rt == NULL);
    ASSERT_CMP(after->records_applied, >, before->records_applied);
    nd->image_changes++;
    ctl_image_diff_local(before, after, nd->id, local_cb, nd);
}

/* ---- cluster ---- */

static int free_port(void)
{
    int port;
    int fd = listener_bind_tcp("127.0.0.1", 0, &port);
    ASSERT(fd >= 0);
    close(fd);
    return port;
}

static void transport_start(int32_t id)
{
    struct node *nd = &C.n[id];
    struct transport_config tc = {
        .self_id = id,
        .cluster_id = "ctl-test",
        .listen_host = "127.0.0.1",
        .listen_port = C.ports[id],
        .peers = C.peers,
        .n_peers = N,
        .backoff_min_ms = 20,
        .backoff_max_ms = 200,
        .seed = (uint64_t)id,
        .accept_any_node = true,
    };
    ASSERT_EQ(transport_new(C.r, &tc, on_msg, nd, &nd->t), 0);
    transport_set_controller_cb(nd->t, on_ctl, nd);
}

static void node_start(int32_t id)
{
    struct node *nd = &C.n[id];
    transport_start(id);
    struct ctl_runtime_options o;
    ctl_runtime_options_default(&o);
    o.raft.election_timeout_ms = 300;
    o.raft.heartbeat_ms = 60;
    o.request_timeout_ms = C.request_ms ? C.request_ms : REQUEST_MS;
    o.flusher = C.fl;
    o.session_timeout_ms = SESSION_MS;
    o.send_raft = send_raft;
    o.send_frame = send_frame;
    o.on_image_change = image_change;
    o.data = nd;
    o.seed = 77 + (uint64_t)id;
    if (C.dynamic) {
        o.meta_dir = nd->dir;
        o.host = "127.0.0.1";
        o.port = C.ports[id];
    }
    if (id == OBS)
        ASSERT_EQ(ctl_runtime_open_observer(id, C.voters, N, "127.0.0.1", C.ports[id], &o,
                                            time_mono_ms(), &nd->rt),
                  0);
    else
        ASSERT_EQ(ctl_runtime_open(nd->dir, id, C.voters, N, &o, time_mono_ms(), &nd->rt), 0);
}

static void node_stop(int32_t id)
{
    struct node *nd = &C.n[id];
    ctl_runtime_close(nd->rt);
    nd->rt = NULL;
    mem_free(nd->mresp);
    nd->mresp = NULL;
    transport_free(nd->t);
    nd->t = NULL;
    nd->beating = false;
}

static void cluster_start(void)
{
    int64_t request_ms = C.request_ms;
    bool use_flusher = C.use_flusher, dynamic = C.dynamic;
    memset(&C, 0, sizeof(C));
    C.request_ms = request_ms;
    C.dynamic = dynamic;
    if (use_flusher)
        ASSERT_EQ(flusher_start(&C.fl), 0);
    log_set_level(getenv("CTL_RUNTIME_TEST_LOG") ? LOG_INFO : LOG_ERROR);
    C.r = reactor_new();
    ASSERT(C.r != NULL);
    for (int32_t id = 1; id <= N; id++) {
        C.ports[id] = free_port();
        C.peers[id - 1] = (struct transport_peer_config){id, "127.0.0.1", C.ports[id]};
        C.voters[id - 1] = (struct ctl_voter){id, "127.0.0.1", C.ports[id]};
        C.n[id].id = id;
        snprintf(C.n[id].dir, sizeof(C.n[id].dir), "%s/ctl-%d", test_tmpdir(), id);
        C.n[id].incarnation.b[0] = (uint8_t)id;
        C.n[id].incarnation.b[15] = 0x5a;
    }
    C.ports[OBS] = free_port();
    C.n[OBS].id = OBS;
    snprintf(C.n[OBS].dir, sizeof(C.n[OBS].dir), "%s/ctl-%d", test_tmpdir(), OBS);
    C.n[OBS].incarnation.b[0] = OBS;
    for (int32_t id = 1; id <= N; id++)
        node_start(id);
}

static void cluster_stop(void)
{
    for (int32_t id = 1; id <= OBS; id++)
        if (C.n[id].rt)
            node_stop(id);
    if (C.fl)
        flusher_stop(C.fl);
    C.fl = NULL;
    C.use_flusher = false;
    C.dynamic = false;
    reactor_free(C.r);
    C.request_ms = 0;
    nt_leak_check();
}

static void heartbeat(int32_t id)
{
    struct ctl_request req = {.type = CTL_REQ_HEARTBEAT, .caught_up = true};
    req.reg.node_id = id;
    req.reg.incarnation = C.n[id].incarnation;
    ctl_runtime_submit(C.n[id].rt, &req, beat_done_cb, NULL);
}

/* One iteration: I/O, then ticks, heartbeats and flushes of every live node. */
static void pump_once(void)
{
    ASSERT_EQ(reactor_run_once(C.r, 5), 0);
    if (C.fl)
        (void)flusher_poll(C.fl);
    int64_t now = time_mono_ms();
    for (int32_t id = 1; id <= OBS; id++) {
        struct node *nd = &C.n[id];
        if (!nd->rt)
            continue;
        ctl_runtime_tick(nd->rt, now);
        if (nd->beating && now >= nd->next_beat) {
            nd->next_beat = now + HEARTBEAT_EVERY_MS;
            heartbeat(id);
        }
    }
    for (int32_t id = 1; id <= OBS; id++)
        if (C.n[id].t)
            transport_flush(C.n[id].t);
}

#define PUMP_UNTIL(cond, ms)                                                                       \
    do {                                                                                           \
        int64_t end_ = time_mono_ms() + (ms);                                                      \
        while (!(cond) && time_mono_ms() < end_)                                                   \
            pump_once();                                                                           \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, "timed out waiting for %s", #cond);                      \
    } while (0)

/* The leader every live node agrees on, or RAFT_NONE. */
static int32_t agreed_leader(void)
{
    int32_t leader = RAFT_NONE;
    for (int32_t id = 1; id <= N; id++) {
        if (!C.n[id].rt)
            continue;
        int32_t l = ctl_runtime_leader(C.n[id].rt);
        if (l == RAFT_NONE || (leader != RAFT_NONE && l != leader))
            return RAFT_NONE;
        leader = l;
    }
    if (leader == RAFT_NONE || !C.n[leader].rt ||
        ctl_runtime_role(C.n[leader].rt) != RAFT_LEADER)
        return RAFT_NONE;
    return leader;
}

static int32_t a_follower(int32_t leader)
{
    for (int32_t id = 1; id <= N; id++)
        if (id != leader && C.n[id].rt)
            return id;
    ASSERT(false);
    return -1;
}

/* Submits at node id and waits for the answer (retrying retriable errors). */
static struct ctl_answer run_at(int32_t id, const struct ctl_request *req)
{
    for (int attempt = 0; attempt < 20; attempt++) {
        struct result res = {0};
        ctl_runtime_submit(C.n[id].rt, req, done_cb, &res);
        PUMP_UNTIL(res.done, 3 * REQUEST_MS);
        if (res.a.error != KERR_NOT_CONTROLLER && res.a.error != KERR_REQUEST_TIMED_OUT)
            return res.a;
        for (int i = 0; i < 20; i++)
            pump_once();
    }
    ASSERT(false);
    struct ctl_answer none = {0};
    return none;
}

static void register_broker(int32_t id)
{
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", C.ports[id]);
    struct ctl_request req = {.type = CTL_REQ_REGISTER_BROKER};
    req.reg = (struct ctl_broker_reg){id, C.n[id].incarnation, "127.0.0.1", 9090 + id, addr, NULL, 0};
    ASSERT_EQ(run_at(id, &req).error, KERR_NONE);
}

static size_t live_everywhere(size_t want)
{
    size_t ok = 0;
    for (int32_t id = 1; id <= N; id++)
        if (C.n[id].rt && ctl_image_live_brokers(ctl_runtime_image(C.n[id].rt)) == want)
            ok++;
    return ok;
}

static size_t live_nodes(void)
{
    size_t n = 0;
    for (int32_t id = 1; id <= N; id++)
        n += C.n[id].rt != NULL;
    return n;
}

/* Elected leader, three brokers registered and heartbeating, unfenced on every node. */
static int32_t cluster_ready(void)
{
    cluster_start();
    PUMP_UNTIL(agreed_leader() != RAFT_NONE, 5000);
    for (int32_t id = 1; id <= N; id++) {
        register_broker(id);
        C.n[id].beating = true;
    }
    PUMP_UNTIL(live_everywhere(N) == N, 5000);
    return agreed_leader();
}

static uint8_t *snapshot(int32_t id, size_t *len)
{
    struct iobuf b;
    iobuf_init(&b);
    ctl_image_snapshot_encode(ctl_runtime_image(C.n[id].rt), &b);
    uint8_t *p = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    return p;
}

/* Every live node has applied the same index and holds a byte-identical image. */
static bool converged(void)
{
    int32_t first = RAFT_NONE;
    for (int32_t id = 1; id <= N; id++) {
        if (!C.n[id].rt)
            continue;
        if (first == RAFT_NONE) {
            first = id;
            continue;
        }
        if (ctl_runtime_applied(C.n[id].rt) != ctl_runtime_applied(C.n[first].rt))
            return false;
    }
    size_t la, lb;
    uint8_t *a = snapshot(first, &la);
    bool same = true;
    for (int32_t id = first + 1; id <= N && same; id++) {
        if (!C.n[id].rt)
            continue;
        uint8_t *b = snapshot(id, &lb);
        same = la == lb && memcmp(a, b, la) == 0;
        mem_free(b);
    }
    mem_free(a);
    return same;
}

static struct ctl_answer create_topic(int32_t at, const char *name, int32_t parts, int32_t rf)
{
    struct ctl_config_entry cfg[] = {{"retention.ms", "60000"}};
    struct ctl_request req = {.type = CTL_REQ_CREATE_TOPIC,
                              .name = name,
                              .n_partitions = parts,
                              .rf = rf,
                              .configs = cfg,
                              .n_configs = 1};
    return run_at(at, &req);
}

static struct ctl_answer alloc_pids(int32_t id)
{
    struct ctl_request req = {.type = CTL_REQ_ALLOC_PIDS};
    req.reg.node_id = id;
    req.reg.incarnation = C.n[id].incarnation;
    return run_at(id, &req);
}

/* ---- tests ---- */

TEST(controller_request_codec_roundtrip_and_truncation)
{
    static const struct ctl_reg_endpoint eps[] = {{"PLAINTEXT", "host-a", 9092},
                                                  {"SASL", "sasl.example", 9094}};
    struct ctl_config_entry cfg[] = {{"cleanup.policy", "compact"}, {"retention.ms", NULL}};
    struct ctl_request reqs[] = {
        {.type = CTL_REQ_CREATE_TOPIC, .name = "orders", .n_partitions = 6, .rf = 3,
         .configs = cfg, .n_configs = 2},
        {.type = CTL_REQ_DELETE_TOPIC, .name = "orders"},
        {.type = CTL_REQ_CREATE_PARTITIONS, .name = "orders", .n_partitions = 9},
        {.type = CTL_REQ_ALTER_CONFIGS, .name = "orders", .resource_type = CTL_RESOURCE_TOPIC,
         .configs = cfg, .n_configs = 2},
        {.type = CTL_REQ_REGISTER_BROKER,
         .reg = {4, {{1, 2, 3}}, "host-a", 9092, "host-a:9093", eps, 2}},
        {.type = CTL_REQ_HEARTBEAT, .reg = {.node_id = 4, .incarnation = {{9}}},
         .caught_up = true},
        {.type = CTL_REQ_ALLOC_PIDS, .reg = {.node_id = 5, .incarnation = {{7}}}},
        {.type = CTL_REQ_VOTERS, .voter_add = true, .voter = 6},
        {.type = CTL_REQ_VOTERS, .voter_add = false, .voter = 0},
        {.type = CTL_REQ_ACL,
         .acl = {.resource_type = 2, .pattern_type = 4, .operation = 4, .permission = 3,
                 .deleted = true, .resource_name = "orders-", .principal = "User:alice",
                 .host = "*"}},
        {.type = CTL_REQ_USER_SCRAM,
         .user = {.name = "bob", .mechanism = 2, .iterations = 4096, .salt_len = 3, .key_len = 64,
                  .salt = {1, 2, 3}, .stored_key = {9}, .server_key = {8}}},
        {.type = CTL_REQ_QUOTA,
         .quota = {.user_kind = CTL_QUOTA_NAMED, .user = "alice", .client_kind = CTL_QUOTA_NONE,
                   .key = "consumer_byte_rate", .value = 2048.5}},
    };
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        struct iobuf b;
        iobuf_init(&b);
        ctl_request_encode(&reqs[i], &b);
        size_t len;
        uint8_t *p = iobuf_flatten(&b, &len);
        iobuf_destroy(&b);
        struct ctl_request d;
        ASSERT_EQ(ctl_request_decode(p, len, &d), 0);
        ASSERT_EQ(d.type, reqs[i].type);
        ASSERT_EQ(d.n_partitions, reqs[i].n_partitions);
        ASSERT_EQ(d.rf, reqs[i].rf);
        ASSERT_EQ(d.resource_type, reqs[i].resource_type);
        ASSERT_EQ(d.n_configs, reqs[i].n_configs);
        ASSERT_EQ(d.reg.node_id, reqs[i].reg.node_id);
        ASSERT_MEMEQ(d.reg.incarnation.b, reqs[i].reg.incarnation.b, 16);
        ASSERT_EQ(d.caught_up, reqs[i].caught_up);
        ASSERT_EQ(d.voter_add, reqs[i].voter_add);
        ASSERT_EQ(d.voter, reqs[i].voter);
        ASSERT_MEMEQ(&d.user, &reqs[i].user, sizeof(d.user));
        ASSERT_MEMEQ(&d.acl, &reqs[i].acl, sizeof(d.acl));
        ASSERT_MEMEQ(&d.quota, &reqs[i].quota, sizeof(d.quota));
        if (reqs[i].name)
            ASSERT_STREQ(d.name, reqs[i].name);
        if (reqs[i].reg.host) {
            ASSERT_STREQ(d.reg.host, reqs[i].reg.host);
            ASSERT_STREQ(d.reg.cluster_addr, reqs[i].reg.cluster_addr);
            ASSERT_EQ(d.reg.port, 9092);
            ASSERT_EQ(d.reg.n_endpoints, 2);
            for (int k = 0; k < 2; k++) {
                ASSERT_STREQ(d.reg.endpoints[k].listener, eps[k].listener);
                ASSERT_STREQ(d.reg.endpoints[k].host, eps[k].host);
                ASSERT_EQ(d.reg.endpoints[k].port, eps[k].port);
            }
        }
        for (size_t k = 0; k < d.n_configs; k++) {
            ASSERT_STREQ(d.configs[k].key, cfg[k].key);
            if (cfg[k].value)
                ASSERT_STREQ(d.configs[k].value, cfg[k].value);
            else
                ASSERT(d.configs[k].value == NULL);
        }
        ctl_request_free(&d);
        /* Every truncation and a trailing byte are refused. */
        for (size_t cut = 0; cut < len; cut++)
            ASSERT_EQ(ctl_request_decode(p, cut, &d), -ERR_CORRUPT);
        uint8_t *longer = mem_alloc(len + 1);
        memcpy(longer, p, len);
        longer[len] = 0;
        ASSERT_EQ(ctl_request_decode(longer, len + 1, &d), -ERR_CORRUPT);
        mem_free(longer);
        mem_free(p);
    }
    /* Unknown type, and a NUL inside a string. */
    uint8_t bad_type[] = {99};
    struct ctl_request d;
    ASSERT_EQ(ctl_request_decode(bad_type, 1, &d), -ERR_CORRUPT);
    uint8_t nul[] = {CTL_REQ_DELETE_TOPIC, 0, 2, 'a', 0};
    ASSERT_EQ(ctl_request_decode(nul, sizeof(nul), &d), -ERR_CORRUPT);
    /* VOTERS: an op that is neither add nor remove, a negative node */
    uint8_t op[] = {CTL_REQ_VOTERS, 2, 0, 0, 0, 1};
    ASSERT_EQ(ctl_request_decode(op, sizeof(op), &d), -ERR_CORRUPT);
    uint8_t neg[] = {CTL_REQ_VOTERS, 1, 0xff, 0xff, 0xff, 0xff};
    ASSERT_EQ(ctl_request_decode(neg, sizeof(neg), &d), -ERR_CORRUPT);
    /* A config count above what the bytes can hold. */
    uint8_t many[] = {CTL_REQ_ALTER_CONFIGS, 2, 0, 1, 'a', 0x7f, 0xff, 0xff, 0xff};
    ASSERT_EQ(ctl_request_decode(many, sizeof(many), &d), -ERR_CORRUPT);

    struct ctl_answer a = {KERR_NONE, {{1, 2}}, 123456789012LL, 1000}, b;
    uint8_t buf[CTL_ANSWER_BYTES];
    ctl_answer_encode(&a, buf);
    ASSERT_EQ(ctl_answer_decode(buf, sizeof(buf), &b), 0);
    ASSERT_EQ(b.pid_first, a.pid_first);
    ASSERT_EQ(b.pid_size, 1000);
    ASSERT_MEMEQ(b.topic_id.b, a.topic_id.b, 16);
    ASSERT_EQ(ctl_answer_decode(buf, sizeof(buf) - 1, &b), -ERR_CORRUPT);
}

TEST(controller_runtime_forwarded_create_converges_and_pids_disjoint)
{
    int32_t leader = cluster_ready();
    ASSERT_NE(leader, RAFT_NONE);
    int32_t f = a_follower(leader);
    ASSERT_EQ(ctl_runtime_role(C.n[f].rt), RAFT_FOLLOWER);
    struct ctl_answer a = create_topic(f, "orders", 6, 3);
    ASSERT_EQ(a.error, KERR_NONE);
    PUMP_UNTIL(converged() && ctl_image_topic(ctl_runtime_image(C.n[f].rt), "orders"), 5000);
    for (int32_t id = 1; id <= N; id++) {
        const struct ctl_topic *t = ctl_image_topic(ctl_runtime_image(C.n[id].rt), "orders");
        ASSERT(t != NULL);
        ASSERT_MEMEQ(t->id.b, a.topic_id.b, 16);
        ASSERT_EQ(t->n_partitions, 6);
        ASSERT_STREQ(ctl_image_config(ctl_runtime_image(C.n[id].rt), CTL_RESOURCE_TOPIC,
                                      "orders", "retention.ms"),
                     "60000");
        /* Every broker replicates all 6 partitions (rf 3 of 3): six local creations seen. */
        ASSERT_EQ(C.n[id].local_creates, 6);
        ASSERT_CMP(C.n[id].image_changes, >, 0);
        ASSERT_EQ(ctl_runtime_skipped(C.n[id].rt), 0);
    }
    /* It went through the leader's controller frames, not the follower's own image. */
    struct transport_stats ts;
    transport_get_stats(C.n[leader].t, &ts);
    ASSERT_CMP(ts.ctl_received, >=, 1);
    /* The same name again, through the other follower: refused by the leader's image. */
    ASSERT_EQ(create_topic(6 - leader - f, "orders", 1, 1).error, KERR_TOPIC_ALREADY_EXISTS);

    /* Producer-id blocks through every node (two of them forward): never overlapping. */
    int64_t first[3 * N];
    int k = 0;
    for (int round = 0; round < 3; round++) {
        for (int32_t id = 1; id <= N; id++) {
            struct ctl_answer p = alloc_pids(id);
            ASSERT_EQ(p.error, KERR_NONE);
            ASSERT_EQ(p.pid_size, CTL_PID_BLOCK_SIZE);
            first[k++] = p.pid_first;
        }
    }
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            if (i != j)
                ASSERT(first[i] + CTL_PID_BLOCK_SIZE <= first[j] ||
                       first[j] + CTL_PID_BLOCK_SIZE <= first[i]);
    PUMP_UNTIL(converged(), 5000);
    ASSERT_EQ(ctl_image_pid_next(ctl_runtime_image(C.n[f].rt)), (int64_t)k * CTL_PID_BLOCK_SIZE);

    /* Back to back at the leader, before either commits: the second is validated against the
     * working image that holds the first's records. */
    struct ctl_request dup = {.type = CTL_REQ_CREATE_TOPIC, .name = "twice", .n_partitions = 1,
                              .rf = 1};
    struct ctl_request pid = {.type = CTL_REQ_ALLOC_PIDS};
    pid.reg.node_id = leader;
    pid.reg.incarnation = C.n[leader].incarnation;
    struct result r[4] = {{0}};
    ctl_runtime_submit(C.n[leader].rt, &dup, done_cb, &r[0]);
    ctl_runtime_submit(C.n[leader].rt, &dup, done_cb, &r[1]);
    ctl_runtime_submit(C.n[leader].rt, &pid, done_cb, &r[2]);
    ctl_runtime_submit(C.n[leader].rt, &pid, done_cb, &r[3]);
    ASSERT(r[1].done); /* refused at once, from the working image */
    ASSERT_EQ(r[1].a.error, KERR_TOPIC_ALREADY_EXISTS);
    ASSERT(!r[0].done && !r[2].done && !r[3].done); /* answered only once committed */
    ASSERT_EQ(ctl_runtime_pending(C.n[leader].rt), 3);
    PUMP_UNTIL(r[0].done && r[2].done && r[3].done, 3000);
    ASSERT_EQ(r[0].a.error, KERR_NONE);
    ASSERT_EQ(r[2].a.error, KERR_NONE);
    ASSERT_EQ(r[3].a.error, KERR_NONE);
    ASSERT_EQ(r[2].a.pid_first, (int64_t)k * CTL_PID_BLOCK_SIZE);
    ASSERT_EQ(r[3].a.pid_first, (int64_t)(k + 1) * CTL_PID_BLOCK_SIZE);
    /* Committed on the leader by the time it answered. */
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[leader].rt), "twice") != NULL);
    cluster_stop();
}

TEST(controller_runtime_leader_failover_and_restart_replays)
{
    C.use_flusher = true;
    int32_t leader = cluster_ready();
    ASSERT(C.fl != NULL);
    ASSERT_EQ(create_topic(leader, "before", 2, 3).error, KERR_NONE);
    PUMP_UNTIL(converged(), 5000);
    int64_t term = ctl_runtime_term(C.n[leader].rt);
    node_stop(leader);
    PUMP_UNTIL(agreed_leader() != RAFT_NONE, 5000);
    int32_t l2 = agreed_leader();
    ASSERT_NE(l2, leader);
    ASSERT_CMP(ctl_runtime_term(C.n[l2].rt), >, term);
    /* Metadata operations continue: through the new leader's follower and the leader. */
    int32_t f = a_follower(l2);
    ASSERT_EQ(create_topic(f, "after", 3, 2).error, KERR_NONE);
    ASSERT_EQ(alloc_pids(l2).error, KERR_NONE);
    PUMP_UNTIL(converged(), 5000);
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[f].rt), "before") != NULL);

    /* The stopped node reopens from its directory: its own log replayed at open... */
    int64_t applied_before = 0;
    node_start(leader);
    applied_before = ctl_runtime_applied(C.n[leader].rt);
    ASSERT_CMP(applied_before, >=, 0);
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[leader].rt), "before") != NULL);
    ASSERT_EQ(ctl_runtime_skipped(C.n[leader].rt), 0);
    C.n[leader].beating = true;
    /* ...then catches up with what it missed, to an identical image. */
    PUMP_UNTIL(converged() && ctl_image_topic(ctl_runtime_image(C.n[leader].rt), "after"), 5000);
    ASSERT_EQ(create_topic(leader, "third", 1, 1).error, KERR_NONE);
    PUMP_UNTIL(converged() && ctl_image_topic(ctl_runtime_image(C.n[f].rt), "third"), 5000);
    for (int32_t id = 1; id <= N; id++)
        ASSERT_EQ(ctl_runtime_skipped(C.n[id].rt), 0);
    struct flusher_stats fs;
    flusher_get_stats(C.fl, &fs);
    ASSERT_CMP(fs.syncs, >, 0); /* durability came through the flusher thread */
    cluster_stop();
}

TEST(controller_runtime_silent_broker_fenced_and_leaders_move)
{
    int32_t leader = cluster_ready();
    ASSERT_EQ(create_topic(leader, "spread", 3, 3).error, KERR_NONE);
    PUMP_UNTIL(converged(), 5000);
    /* The broker leading some partition, not the controller leader: its heartbeats stop. */
    int32_t victim = a_follower(leader);
    const struct ctl_image *img = ctl_runtime_image(C.n[leader].rt);
    const struct ctl_topic *t = ctl_image_topic(img, "spread");
    int led = 0;
    int32_t epoch[3];
    for (int p = 0; p < 3; p++) {
        led += t->parts[p].leader == victim;
        epoch[p] = t->parts[p].leader_epoch;
    }
    ASSERT_EQ(led, 1); /* 3 partitions over 3 brokers: one each */
    C.n[victim].beating = false;
    int64_t t0 = time_mono_ms();
    PUMP_UNTIL(live_everywhere(N - 1) == N, 3 * SESSION_MS);
    ASSERT_CMP(time_mono_ms() - t0, >=, SESSION_MS - HEARTBEAT_EVERY_MS);
    PUMP_UNTIL(converged(), 5000);
    for (int32_t id = 1; id <= N; id++) {
        img = ctl_runtime_image(C.n[id].rt);
        ASSERT(ctl_image_broker(img, victim)->fenced);
        t = ctl_image_topic(img, "spread");
        for (int p = 0; p < 3; p++) {
            ASSERT_NE(t->parts[p].leader, victim);
            ASSERT_NE(t->parts[p].leader, -1);
            if (t->parts[p].leader_epoch != epoch[p])
                ASSERT_EQ(t->parts[p].leader_epoch, epoch[p] + 1);
        }
    }
    /* It heartbeats again: unfenced. */
    C.n[victim].beating = true;
    PUMP_UNTIL(live_everywhere(N) == N, 5000);
    cluster_stop();
}

TEST(controller_runtime_forward_to_dead_leader_goes_to_the_next_one)
{
    C.request_ms = 2500; /* room for an election: the next leader, not the timeout, answers */
    int32_t leader = cluster_ready();
    int32_t f = a_follower(leader);
    ASSERT_EQ(ctl_runtime_leader(C.n[f].rt), leader);
    /* The request leaves for the leader, which dies before reading it. */
    struct result res = {0};
    struct ctl_request req = {.type = CTL_REQ_CREATE_TOPIC, .name = "failover", .n_partitions = 1,
                              .rf = 1};
    ctl_runtime_submit(C.n[f].rt, &req, done_cb, &res);
    ASSERT(!res.done);
    ASSERT_EQ(ctl_runtime_pending(C.n[f].rt), 1);
    transport_flush(C.n[f].t);
    node_stop(leader);
    /* Sent again to the leader elected next (or taken over by f if that is f itself), and
     * carried out: answered with the command's outcome, not a retriable error. */
    PUMP_UNTIL(res.done, 2500 + 500);
    ASSERT_EQ(res.a.error, KERR_NONE);
    ASSERT_EQ(ctl_runtime_pending(C.n[f].rt), 0);
    ASSERT(ctl_runtime_leader(C.n[f].rt) != leader);
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[f].rt), "failover") != NULL);
    /* With no leader to be had (one node of three left), it waits, and is answered
     * REQUEST_TIMED_OUT at its deadline: never hanging, never answered early. */
    PUMP_UNTIL(agreed_leader() != RAFT_NONE, 5000);
    int32_t l2 = agreed_leader();
    int32_t f2 = a_follower(l2);
    node_stop(l2);
    struct result r2 = {0};
    struct ctl_request del = {.type = CTL_REQ_DELETE_TOPIC, .name = "failover"};
    int64_t t0 = time_mono_ms();
    ctl_runtime_submit(C.n[f2].rt, &del, done_cb, &r2);
    PUMP_UNTIL(r2.done, 2500 + 500);
    ASSERT_EQ(r2.a.error, KERR_REQUEST_TIMED_OUT);
    ASSERT_CMP(time_mono_ms() - t0, >=, 2500 - 100);
    ASSERT_EQ(live_nodes(), 1);
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[f2].rt), "failover") != NULL);
    cluster_stop();
}

TEST(controller_runtime_lost_proposal_answered_not_controller)
{
    C.request_ms = 8000; /* the loss, not the timeout, must answer */
    int32_t leader = cluster_ready();
    for (int32_t id = 1; id <= N; id++)
        C.n[id].beating = false;
    PUMP_UNTIL(converged(), 5000);
    /* The leader is cut off (its transport gone), then takes a command it cannot commit. */
    transport_free(C.n[leader].t);
    C.n[leader].t = NULL;
    struct result res = {0};
    struct ctl_request req = {.type = CTL_REQ_CREATE_TOPIC, .name = "lost", .n_partitions = 1,
                              .rf = 1};
    ctl_runtime_submit(C.n[leader].rt, &req, done_cb, &res);
    ASSERT(!res.done);
    ASSERT_EQ(ctl_runtime_pending(C.n[leader].rt), 1);
    /* The others elect a leader and commit something else at that index. */
    PUMP_UNTIL(ctl_runtime_leader(C.n[a_follower(leader)].rt) != leader &&
                   ctl_runtime_leader(C.n[a_follower(leader)].rt) != RAFT_NONE,
               5000);
    int32_t l2 = ctl_runtime_leader(C.n[a_follower(leader)].rt);
    ASSERT_EQ(create_topic(l2, "won", 1, 1).error, KERR_NONE);
    ASSERT(!res.done);
    /* Back on the network: its entry is replaced, and the command answered retriable. */
    transport_start(leader);
    PUMP_UNTIL(res.done, 6000);
    ASSERT_EQ(res.a.error, KERR_NOT_CONTROLLER);
    PUMP_UNTIL(converged(), 5000);
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[leader].rt), "lost") == NULL);
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[leader].rt), "won") != NULL);
    cluster_stop();
}

TEST(controller_runtime_malformed_requests_refused_not_crashed)
{
    int32_t leader = cluster_ready();
    int32_t f = a_follower(leader);
    /* Shapes the codec cannot carry: refused at once, at the leader and at a follower. */
    struct ctl_request no_name = {.type = CTL_REQ_DELETE_TOPIC};
    struct ctl_request bad_type = {.type = 99};
    struct ctl_config_entry *many = mem_calloc(CTL_REQ_CONFIGS_MAX + 1, sizeof(*many));
    for (size_t i = 0; i <= CTL_REQ_CONFIGS_MAX; i++)
        many[i].key = "k";
    struct ctl_request too_many = {.type = CTL_REQ_ALTER_CONFIGS,
                                   .name = "",
                                   .resource_type = CTL_RESOURCE_BROKER,
                                   .configs = many,
                                   .n_configs = CTL_REQ_CONFIGS_MAX + 1};
    const struct ctl_request *bad[] = {&no_name, &bad_type, &too_many};
    for (size_t i = 0; i < 3; i++) {
        for (int side = 0; side < 2; side++) {
            struct result res = {0};
            ctl_runtime_submit(C.n[side ? f : leader].rt, bad[i], done_cb, &res);
            ASSERT(res.done);
            ASSERT_EQ(res.a.error, KERR_INVALID_REQUEST);
        }
    }
    mem_free(many);
    /* A garbage body at the leader is answered INVALID_REQUEST, not dropped or crashed on. */
    static const uint8_t junk[] = {CTL_REQ_CREATE_TOPIC, 0xff, 0x00};
    for (int32_t id = 1; id <= N; id++)
        C.n[id].beating = false; /* no other controller frames from now on */
    for (int i = 0; i < 50; i++)
        pump_once();
    struct transport_stats before, after;
    transport_get_stats(C.n[f].t, &before);
    ASSERT_EQ(transport_send_controller(C.n[f].t, leader, RPC_CONTROLLER_REQUEST, 555, junk,
                                        sizeof(junk)),
              0);
    PUMP_UNTIL((transport_get_stats(C.n[f].t, &after), after.ctl_received == before.ctl_received + 1),
               2000);
    /* The answer to an id the follower never used is dropped; nothing is pending. */
    ASSERT_EQ(ctl_runtime_pending(C.n[f].rt), 0);
    /* Commands still work. */
    ASSERT_EQ(create_topic(f, "fine", 1, 1).error, KERR_NONE);
    cluster_stop();
}

/* ---- observers ---- */

static bool same_image(int32_t a, int32_t b)
{
    size_t la, lb;
    uint8_t *x = snapshot(a, &la), *y = snapshot(b, &lb);
    bool same = la == lb && memcmp(x, y, la) == 0;
    mem_free(x);
    mem_free(y);
    return same;
}

static bool observer_synced(int32_t leader)
{
    return ctl_runtime_applied(C.n[OBS].rt) == ctl_runtime_applied(C.n[leader].rt) &&
           ctl_runtime_caught_up(C.n[OBS].rt) && same_image(OBS, leader);
}

TEST(controller_runtime_observer_catches_up_forwards_and_follows_failover)
{
    int32_t leader = cluster_ready();
    ASSERT_EQ(create_topic(leader, "before", 3, 3).error, KERR_NONE);
    node_start(OBS); /* joins a cluster with history: fetches it from offset 0 */
    ASSERT(ctl_runtime_is_observer(C.n[OBS].rt));
    ASSERT(ctl_runtime_replica(C.n[OBS].rt) == NULL);
    ASSERT(!ctl_runtime_caught_up(C.n[OBS].rt));
    PUMP_UNTIL(observer_synced(leader), 5000);
    ASSERT_EQ(ctl_runtime_leader(C.n[OBS].rt), leader);
    ASSERT_EQ(ctl_runtime_role(C.n[OBS].rt), RAFT_FOLLOWER);
    ASSERT_EQ(ctl_runtime_term(C.n[OBS].rt), ctl_runtime_term(C.n[leader].rt));
    ASSERT_CMP(C.n[OBS].image_changes, >, 0);
    ASSERT_EQ(ctl_runtime_skipped(C.n[OBS].rt), 0);
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[OBS].rt), "before") != NULL);
    /* Raft messages are not for it. */
    struct raft_msg m = {.type = RAFT_MSG_HEARTBEAT, .from = leader, .to = OBS, .term = 1};
    ASSERT_EQ(ctl_runtime_step(C.n[OBS].rt, &m), -ERR_INVALID);

    /* Commands through the observer are forwarded to the leader. */
    register_broker(OBS);
    C.n[OBS].beating = true;
    PUMP_UNTIL(ctl_image_broker_live(ctl_runtime_image(C.n[leader].rt), OBS) &&
                   ctl_image_broker_live(ctl_runtime_image(C.n[OBS].rt), OBS),
               5000);
    struct ctl_answer a = create_topic(OBS, "after", 8, 3);
    ASSERT_EQ(a.error, KERR_NONE);
    PUMP_UNTIL(observer_synced(leader) && converged(), 5000);
    const struct ctl_topic *t = ctl_image_topic(ctl_runtime_image(C.n[OBS].rt), "after");
    ASSERT(t != NULL);
    ASSERT_MEMEQ(t->id.b, a.topic_id.b, 16);
    /* 4 live brokers, rf 3, 8 partitions: the observer broker holds replicas */
    ASSERT_CMP(C.n[OBS].local_creates, >, 0);
    ASSERT_EQ(alloc_pids(OBS).error, KERR_NONE);

    /* The leader dies: the observer finds the new one and keeps working through it. */
    node_stop(leader);
    PUMP_UNTIL(agreed_leader() != RAFT_NONE, 5000);
    int32_t nl = agreed_leader();
    ASSERT_NE(nl, leader);
    ASSERT_EQ(create_topic(OBS, "later", 1, 1).error, KERR_NONE);
    PUMP_UNTIL(ctl_runtime_leader(C.n[OBS].rt) == nl && observer_synced(nl), 5000);
    ASSERT(ctl_image_topic(ctl_runtime_image(C.n[OBS].rt), "later") != NULL);
    cluster_stop();
}

TEST(controller_runtime_bad_metadata_fetches_dropped)
{
    int32_t leader = cluster_ready();
    int32_t f = a_follower(leader);
    for (int32_t id = 1; id <= N; id++)
        C.n[id].beating = false;
    for (int i = 0; i < 50; i++)
        pump_once();
    /* garbage fetch bodies: dropped by the leader and a follower, nothing crashes */
    static const uint8_t junk[] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 9};
    ASSERT_EQ(
        transport_send_controller(C.n[f].t, leader, RPC_METADATA_FETCH, 7, junk, sizeof(junk)), 0);
    ASSERT_EQ(transport_send_controller(C.n[leader].t, f, RPC_METADATA_FETCH, 7, junk, 0), 0);
    /* a stray answer at a voter: dropped */
    ASSERT_EQ(
        transport_send_controller(C.n[f].t, leader, RPC_METADATA_RESPONSE, 7, junk, sizeof(junk)),
        0);
    struct transport_stats ts;
    PUMP_UNTIL((transport_get_stats(C.n[leader].t, &ts), ts.ctl_received >= 2), 2000);
    for (int i = 0; i < 20; i++)
        pump_once();
    ASSERT_EQ(create_topic(f, "fine", 1, 1).error, KERR_NONE);
    cluster_stop();
}

/* Sends a fetch from node `by` (a voter playing observer) to node `to`, returns the answer. */
static struct ctl_mfetch_resp fetch_from(int32_t by, int32_t to, int64_t from, int32_t max_bytes)
{
    struct ctl_mfetch_req req = {.from = from, .max_bytes = max_bytes, .port = C.ports[by]};
    snprintf(req.host, sizeof(req.host), "127.0.0.1");
    struct iobuf b;
    iobuf_init(&b);
    ctl_mfetch_req_encode(&req, &b);
    size_t len;
    uint8_t *p = iobuf_flatten(&b, &len);
    iobuf_destroy(&b);
    size_t n = C.n[by].n_mresp;
    ASSERT_EQ(transport_send_controller(C.n[by].t, to, RPC_METADATA_FETCH, 1, p, len), 0);
    mem_free(p);
    PUMP_UNTIL(C.n[by].n_mresp > n, 2000);
    ASSERT_EQ(C.n[by].mresp_from, to);
    struct ctl_mfetch_resp r;
    ASSERT_EQ(ctl_mfetch_resp_decode(C.n[by].mresp, C.n[by].mresp_len, &r), 0);
    return r;
}

TEST(controller_runtime_leader_serves_committed_batches)
{
    int32_t leader = cluster_ready();
    ASSERT_EQ(create_topic(leader, "served", 2, 3).error, KERR_NONE);
    for (int32_t id = 1; id <= N; id++)
        C.n[id].beating = false;
    PUMP_UNTIL(converged(), 5000);
    int32_t f = a_follower(leader);
    int64_t commit = raft_commit(replica_raft(ctl_runtime_replica(C.n[leader].rt)));
    ASSERT_EQ(ctl_runtime_applied(C.n[leader].rt), commit);

    /* everything from 0, in bounded answers: whole batches, contiguous, none above commit */
    int64_t next = 0;
    int rounds = 0;
    while (next <= commit) {
        ASSERT_CMP(++rounds, <, 1000);
        struct ctl_mfetch_resp r = fetch_from(f, leader, next, 1); /* at least one batch */
        ASSERT_EQ(r.error, KERR_NONE);
        ASSERT_EQ(r.leader, leader);
        ASSERT_EQ(r.commit, commit);
        ASSERT_EQ(r.from, next);
        size_t pos = 0, bl;
        const uint8_t *bt;
        int64_t base, last;
        int batches = 0;
        while (ctl_mfetch_next_batch(r.data, r.len, &pos, &bt, &bl, &base, &last) == 1) {
            ASSERT_EQ(base, next);
            ASSERT_CMP(last, <=, commit);
            next = last + 1;
            batches++;
        }
        ASSERT_EQ(pos, r.len);
        ASSERT_EQ(batches, 1); /* max_bytes 1: the first batch whole, nothing more */
    }
    ASSERT_CMP(rounds, >, 3);
    /* nothing above commit */
    struct ctl_mfetch_resp r = fetch_from(f, leader, commit + 1, 1 << 20);
    ASSERT_EQ(r.error, KERR_NONE);
    ASSERT_EQ(r.len, 0);
    ASSERT_EQ(r.commit, commit);
    /* one answer may hold several batches */
    r = fetch_from(f, leader, 0, 1 << 20);
    ASSERT_CMP(r.len, >, 0);
    /* a follower names the leader */
    int32_t other = 6 - leader - f;
    r = fetch_from(f, other, 0, 1 << 20);
    ASSERT_EQ(r.error, KERR_NOT_CONTROLLER);
    ASSERT_EQ(r.leader, leader);
    ASSERT_EQ(r.len, 0);
    cluster_stop();
}

static struct ctl_answer voters_change(int32_t at, bool add, int32_t node)
{
    struct ctl_request req = {.type = CTL_REQ_VOTERS, .voter_add = add, .voter = node};
    return run_at(at, &req);
}

/* The voter set node id's replica has committed, as a sorted bit mask. */
static unsigned committed_voters(int32_t id)
{
    const struct raft *r = replica_raft(ctl_runtime_replica(C.n[id].rt));
    const struct raft_conf *c = raft_conf(r);
    if (raft_conf_is_joint(c) || c->n_learners > 0 || raft_conf_index(r) > raft_commit(r))
        return 0;
    unsigned m = 0;
    for (size_t i = 0; i < c->n_voters; i++)
        m |= 1u << c->voters[i];
    return m;
}

/* A live node (voters and the observer) that leads, or RAFT_NONE. */
static int32_t some_leader(void)
{
    for (int32_t id = 1; id <= OBS; id++)
        if (C.n[id].rt && ctl_runtime_role(C.n[id].rt) == RAFT_LEADER)
            return id;
    return RAFT_NONE;
}

TEST(controller_runtime_voter_changes_grow_and_shrink_the_quorum)
{
    C.dynamic = true;
    int32_t leader = cluster_ready();
    ASSERT_EQ(create_topic(leader, "before", 2, 3).error, KERR_NONE);
    /* refused: an unregistered broker, a voter already, a node that is none */
    ASSERT_EQ(voters_change(leader, true, 42).error, KERR_BROKER_NOT_AVAILABLE);
    ASSERT_EQ(voters_change(leader, true, 2).error, KERR_DUPLICATE_VOTER);
    ASSERT_EQ(voters_change(leader, false, 42).error, KERR_VOTER_NOT_FOUND);

    /* An observer broker becomes the fourth voter: it copies the log as a learner first. */
    node_start(OBS);
    register_broker(OBS);
    C.n[OBS].beating = true;
    PUMP_UNTIL(observer_synced(leader), 5000);
    ASSERT_EQ(voters_change(a_follower(leader), true, OBS).error, KERR_NONE);
    ASSERT(!ctl_runtime_is_observer(C.n[OBS].rt));
    unsigned four = 1u << 1 | 1u << 2 | 1u << 3 | 1u << OBS;
    PUMP_UNTIL(committed_voters(OBS) == four && committed_voters(leader) == four, 5000);
    ASSERT_EQ(access(C.n[OBS].dir, F_OK), 0);
    ASSERT_EQ(voters_change(leader, true, OBS).error, KERR_NONE); /* asked again: done */
    struct ctl_answer a = create_topic(OBS, "grown", 1, 1);
    ASSERT_EQ(a.error, KERR_NONE);
    PUMP_UNTIL(ctl_image_topic(ctl_runtime_image(C.n[OBS].rt), "grown") != NULL, 5000);

    /* The leader dies; three of four elect a new one and remove it. */
    node_stop(leader);
    PUMP_UNTIL(some_leader() != RAFT_NONE, 5000);
    ASSERT_EQ(voters_change(OBS, false, leader).error, KERR_NONE);
    unsigned three = four & ~(1u << leader);
    PUMP_UNTIL(committed_voters(OBS) == three, 5000);
    ASSERT_EQ(create_topic(OBS, "after", 1, 1).error, KERR_NONE);

    /* The fourth node goes back to observing: its metadata log is deleted, its image follows. */
    ASSERT_EQ(voters_change(a_follower(leader), false, OBS).error, KERR_NONE);
    PUMP_UNTIL(ctl_runtime_is_observer(C.n[OBS].rt), 5000);
    ASSERT(ctl_runtime_replica(C.n[OBS].rt) == NULL);
    ASSERT_NE(access(C.n[OBS].dir, F_OK), 0);
    int32_t f = a_follower(leader);
    ASSERT_EQ(create_topic(f, "observed", 1, 1).error, KERR_NONE);
    PUMP_UNTIL(ctl_image_topic(ctl_runtime_image(C.n[OBS].rt), "observed") != NULL, 5000);
    /* the last voters: removing down to one works, the last one is refused */
    ASSERT_EQ(voters_change(f, false, f).error, KERR_NONE);
    int32_t last = RAFT_NONE;
    for (int32_t id = 1; id <= N; id++)
        if (id != leader && id != f)
            last = id;
    PUMP_UNTIL(committed_voters(last) == 1u << last, 5000);
    PUMP_UNTIL(ctl_runtime_is_observer(C.n[f].rt), 5000); /* it learnt its removal committed */
    ASSERT_EQ(voters_change(last, false, last).error, KERR_INVALID_REQUEST);
    ASSERT_EQ(create_topic(last, "alone", 1, 1).error, KERR_NONE);
    cluster_stop();
}

TEST(controller_runtime_static_quorum_refuses_voter_changes)
{
    int32_t leader = cluster_ready();
    ASSERT_EQ(voters_change(leader, false, a_follower(leader)).error, KERR_INVALID_REQUEST);
    cluster_stop();
}
