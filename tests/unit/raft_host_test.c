/* The replica host (replication/host.h): three hosts in this process on one reactor, with real
 * loopback transports, real plogs in temporary directories and one real flusher (polled by
 * the test through the reactor, as the broker does), driven with reactor_run_once in loops
 * bounded by the wall clock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "kafka/batch.h"
#include "net/conn.h"
#include "net_test_util.h"
#include "replication/host.h"
#include "storage/flusher.h"
#include "storage/io.h"
#include "storage/plog.h"
#include "storage_util.h"
#include "test.h"

#define NODES 3
#define GROUPS 20
#define TOPIC "t"

struct hnode {
    int32_t id;
    char dir[512];
    struct host *h;
    struct plog *logs[GROUPS];
    int leader_changes; /* on_leader calls */
};

static struct {
    struct reactor *r;
    struct flusher *fl;
    int ports[NODES + 1];
    struct transport_peer_config peers[NODES];
    struct hnode n[NODES + 1]; /* by id 1..NODES */
    struct host_options opt[NODES + 1];
    int n_groups;
    bool sole; /* node_start gives each group the node alone as its voter */
} W;

static void on_flusher(struct reactor *r, int fd, uint32_t events, void *data)
{
    (void)r;
    (void)fd;
    (void)events;
    (void)data;
    flusher_poll(W.fl);
}

static int free_port(void)
{
    int port;
    int fd = listener_bind_tcp("127.0.0.1", 0, &port);
    ASSERT(fd >= 0);
    close(fd);
    return port;
}

static void on_leader(struct host_group *g, const struct host_leader_change *c, void *data)
{
    struct hnode *n = data;
    n->leader_changes++;
    ASSERT_EQ(c->leading, c->leader == n->id);
    ASSERT_EQ(c->leading, c->role == RAFT_LEADER);
    ASSERT_EQ(c->term, raft_term(replica_raft(host_group_replica(g))));
}

static void node_start(int32_t id)
{
    struct hnode *n = &W.n[id];
    struct transport_config tc = {
        .self_id = id,
        .cluster_id = "host-test",
        .listen_host = "127.0.0.1",
        .listen_port = W.ports[id],
        .peers = W.peers,
        .n_peers = NODES,
        .backoff_min_ms = 20,
        .backoff_max_ms = 100,
        .seed = (uint64_t)id,
    };
    ASSERT_EQ(host_new(W.r, &tc, &W.opt[id], &n->h), 0);
    mkdir(n->dir, 0755);
    int32_t voters[NODES] = {1, 2, 3};
    size_t n_voters = NODES;
    if (W.sole) {
        voters[0] = id;
        n_voters = 1;
    }
    struct host_group_callbacks cb = {.on_leader = on_leader, .data = n};
    for (int p = 0; p < W.n_groups; p++) {
        char dir[600];
        snprintf(dir, sizeof(dir), "%s/%s-%d", n->dir, TOPIC, p);
        struct plog_config cfg = su_config();
        ASSERT_EQ(plog_open(dir, &cfg, W.fl, NULL, true, &n->logs[p], NULL), 0);
        ASSERT_EQ(host_add_group(n->h, TOPIC, p, n->logs[p], voters, n_voters, &cb, NULL), 0);
    }
    struct host_stats st;
    host_get_stats(n->h, &st);
    ASSERT_EQ(st.groups, (size_t)W.n_groups);
}

/* The node goes down: its host and logs are closed (its directories stay). */
static void node_stop(int32_t id)
{
    struct hnode *n = &W.n[id];
    host_free(n->h);
    n->h = NULL;
    for (int p = 0; p < W.n_groups; p++) {
        plog_close(n->logs[p]);
        n->logs[p] = NULL;
    }
}

static void world_init(int n_groups)
{
    memset(&W, 0, sizeof(W));
    log_set_level(getenv("RAFT_HOST_TEST_LOG") ? LOG_INFO : LOG_ERROR);
    W.n_groups = n_groups;
    W.r = reactor_new();
    ASSERT(W.r != NULL);
    ASSERT_EQ(flusher_start(&W.fl), 0);
    ASSERT_EQ(reactor_add(W.r, flusher_fd(W.fl), REACTOR_READ, on_flusher, NULL), 0);
    for (int32_t id = 1; id <= NODES; id++) {
        W.ports[id] = free_port();
        W.peers[id - 1] = (struct transport_peer_config){id, "127.0.0.1", W.ports[id]};
        W.n[id].id = id;
        snprintf(W.n[id].dir, sizeof(W.n[id].dir), "%s/node%d", test_tmpdir(), id);
        W.opt[id] = (struct host_options){.seed = 7};
    }
}

static void world_start(void)
{
    for (int32_t id = 1; id <= NODES; id++)
        node_start(id);
}

static void world_free(void)
{
    for (int32_t id = 1; id <= NODES; id++)
        if (W.n[id].h)
            node_stop(id);
    reactor_del(W.r, flusher_fd(W.fl));
    flusher_stop(W.fl);
    reactor_free(W.r);
}

static struct host_group *grp(int32_t id, int p)
{
    struct host_group *g = host_group_find(W.n[id].h, TOPIC, p);
    ASSERT(g != NULL);
    return g;
}

static const struct raft *core(int32_t id, int p)
{
    return replica_raft(host_group_replica(grp(id, p)));
}

/* The one leader of group p that every live node agrees on, or 0 (none, or no agreement). */
static int32_t agreed_leader(int p)
{
    int32_t leader = 0;
    for (int32_t id = 1; id <= NODES; id++) {
        if (!W.n[id].h)
            continue;
        const struct raft *c = core(id, p);
        if (raft_role(c) == RAFT_LEADER) {
            if (leader)
                return 0; /* two think they lead */
            leader = id;
        }
    }
    if (!leader)
        return 0;
    for (int32_t id = 1; id <= NODES; id++)
        if (W.n[id].h && raft_leader(core(id, p)) != leader)
            return 0;
    return leader;
}

static bool all_led(void)
{
    for (int p = 0; p < W.n_groups; p++)
        if (!agreed_leader(p))
            return false;
    return true;
}

/* Pumps until every group has an agreed leader; returns the milliseconds it took. */
static int64_t wait_all_led(int64_t max_ms)
{
    int64_t t0 = time_mono_ms();
    NT_PUMP_UNTIL(W.r, all_led(), max_ms);
    return time_mono_ms() - t0;
}

/* The leader of group p with the highest term among live nodes, or 0. */
static int32_t leader_of(int p)
{
    int32_t best = 0;
    for (int32_t id = 1; id <= NODES; id++)
        if (W.n[id].h && raft_role(core(id, p)) == RAFT_LEADER &&
            (!best || raft_term(core(id, p)) > raft_term(core(best, p))))
            best = id;
    return best;
}

struct prop {
    int64_t last;
    int64_t term;
};

/* Proposes k distinct batches to each group's leader; records the last of each group. */
static void propose_all(int k, int seed, struct prop *out)
{
    NT_PUMP_UNTIL(W.r, all_led(), 3000);
    for (int p = 0; p < W.n_groups; p++) {
        int32_t id = agreed_leader(p);
        ASSERT(id != 0);
        for (int i = 0; i < k; i++) {
            int32_t count = 1 + (seed + p + i) % 4;
            size_t len;
            uint8_t *b = su_batch(count, 30 + i, 1700000000000LL + i, seed * 1000 + p * 10 + i,
                                  &len);
            int64_t first, last, term;
            ASSERT_EQ(host_propose(grp(id, p), b, len, count, true, &first, &last, &term), 0);
            ASSERT_EQ(last - first + 1, count);
            mem_free(b);
            out[p] = (struct prop){last, term};
        }
    }
}

static bool all_committed(const struct prop *props)
{
    for (int p = 0; p < W.n_groups; p++)
        for (int32_t id = 1; id <= NODES; id++)
            if (W.n[id].h && plog_high_watermark(W.n[id].logs[p]) < props[p].last + 1)
                return false;
    return true;
}

/* Every batch of a log below end, as stored. */
static uint8_t *read_log(struct plog *log, int64_t end, size_t *len)
{
    uint8_t *buf = NULL;
    size_t used = 0, cap = 0;
    int64_t off = plog_start_offset(log);
    for (int guard = 0; off < end; guard++) {
        ASSERT_CMP(guard, <, 100000);
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, end, 1 << 20, &r), 0);
        ASSERT_CMP(r.len, >, 0);
        ASSERT_EQ(r.first_offset, off);
        MEM_GROW(buf, cap, used + r.len);
        ASSERT_EQ(pread(r.file->fd, buf + used, r.len, r.pos), (ssize_t)r.len);
        fileref_put(r.file);
        used += r.len;
        off = r.next_offset;
    }
    *len = used;
    return buf;
}

/* Each group's live logs are byte-identical below the smallest HW, which reaches
 * props[p].last + 1, and hold `data` data batches there (-1: don't count). */
static void compare_logs(const struct prop *props, int data)
{
    for (int p = 0; p < W.n_groups; p++) {
        int64_t hw = INT64_MAX;
        for (int32_t id = 1; id <= NODES; id++)
            if (W.n[id].h)
                hw = MIN(hw, plog_high_watermark(W.n[id].logs[p]));
        ASSERT_CMP(hw, >=, props[p].last + 1);
        ASSERT(leader_of(p) != 0);
        ASSERT_EQ(replica_proposal_state(host_group_replica(grp(leader_of(p), p)),
                                         props[p].last, props[p].term),
                  REPLICA_COMMITTED);
        uint8_t *ref = NULL;
        size_t ref_len = 0;
        for (int32_t id = 1; id <= NODES; id++) {
            if (!W.n[id].h)
                continue;
            size_t len;
            uint8_t *b = read_log(W.n[id].logs[p], hw, &len);
            if (!ref) {
                ref = b;
                ref_len = len;
                continue;
            }
            ASSERT_EQ(len, ref_len);
            ASSERT_MEMEQ(b, ref, len);
            mem_free(b);
        }
        int n_data = 0;
        for (size_t pos = 0; pos < ref_len;) {
            struct kbatch_header h;
            kbatch_parse_header(ref + pos, &h);
            ASSERT_EQ(kbatch_validate(ref + pos, kbatch_size(&h), true, false, 1 << 20), 0);
            n_data += !kbatch_is_control(&h);
            pos += kbatch_size(&h);
        }
        if (data >= 0)
            ASSERT_EQ(n_data, data);
        mem_free(ref);
    }
}

static size_t leaders_on(int32_t id)
{
    size_t n = 0;
    for (int p = 0; p < W.n_groups; p++)
        n += agreed_leader(p) == id;
    return n;
}

TEST_T(raft_host_elects_replicates_fails_over_and_catches_up, 60)
{
    world_init(GROUPS);
    world_start();
    /* a bound on the wait, not a performance assertion: a loaded machine elects later */
    int64_t elect_ms = wait_all_led(10000);
    printf("  %d groups elected a leader each in %lld ms\n", GROUPS, (long long)elect_ms);
    for (int32_t id = 1; id <= NODES; id++) {
        struct host_stats st;
        host_get_stats(W.n[id].h, &st);
        ASSERT_EQ(st.leaders, leaders_on(id)); /* the host's count follows the cores */
        ASSERT_EQ(host_leader_count(W.n[id].h), st.leaders);
        ASSERT_CMP(W.n[id].leader_changes, >=, GROUPS); /* every group told of its leader */
        ASSERT_EQ(st.unknown_group_drops, 0);
    }

    /* replication: every group commits on all three, logs identical below HW */
    struct prop props[GROUPS];
    propose_all(5, 1, props);
    NT_PUMP_UNTIL(W.r, all_committed(props), 5000);
    compare_logs(props, 5);

    /* status of a group at its leader: followers' match indexes */
    int32_t l0 = agreed_leader(0);
    struct host_group_status gs;
    host_group_status(grp(l0, 0), &gs);
    ASSERT(gs.leading);
    ASSERT_EQ(gs.rs.leader, l0);
    ASSERT_EQ(gs.rs.n_peers, 2);
    NT_PUMP_UNTIL(W.r, (host_group_status(grp(l0, 0), &gs), gs.rs.match[0] == gs.rs.commit &&
                                                               gs.rs.match[1] == gs.rs.commit),
                  2000);

    /* the node leading the most groups goes down */
    int32_t down = 1;
    for (int32_t id = 2; id <= NODES; id++)
        if (leaders_on(id) > leaders_on(down))
            down = id;
    size_t lost = leaders_on(down);
    ASSERT_CMP(lost, >, 0);
    node_stop(down);
    int64_t failover_ms = wait_all_led(10000); /* bounded, not a performance assertion */
    printf("  node %d (leader of %zu groups) down: every group led again in %lld ms\n", down,
           lost, (long long)failover_ms);
    for (int p = 0; p < GROUPS; p++)
        ASSERT_NE(agreed_leader(p), down);

    /* two of three keep committing */
    propose_all(3, 2, props);
    NT_PUMP_UNTIL(W.r, all_committed(props), 5000);
    compare_logs(props, 8);

    /* back from its directories: replicas reopened from disk catch up */
    node_start(down);
    NT_PUMP_UNTIL(W.r, all_committed(props) && all_led(), 5000);
    compare_logs(props, 8);
    propose_all(2, 3, props);
    NT_PUMP_UNTIL(W.r, all_committed(props), 5000);
    compare_logs(props, 10);
    world_free();
}

static bool connected(int32_t from, int32_t to)
{
    struct transport_peer_stats st;
    ASSERT_EQ(transport_peer_stats(host_transport(W.n[from].h), to, &st), 0);
    return st.connected;
}

static bool all_connected(void)
{
    for (int32_t a = 1; a <= NODES; a++)
        for (int32_t b = 1; b <= NODES; b++)
            if (a != b && !connected(a, b))
                return false;
    return true;
}

TEST_T(raft_host_heartbeats_of_all_groups_coalesced_per_peer, 30)
{
    world_init(GROUPS);
    for (int32_t id = 1; id <= NODES; id++)
        W.opt[id].election_timeout_ms = 2000; /* nobody campaigns unless told to */
    world_start();
    NT_PUMP_UNTIL(W.r, all_connected(), 2000);
    /* node 1 campaigns for every group at once: its leaderships share a heartbeat phase */
    for (int p = 0; p < GROUPS; p++) {
        ASSERT_EQ(host_campaign(grp(1, p)), 0);
    }
    NT_PUMP_UNTIL(W.r, leaders_on(1) == GROUPS && all_led(), 2000);
    nt_pump_for(W.r, 100); /* the elections' own traffic ends */

    struct transport_peer_stats a0, b0, a1, b1;
    struct host_stats h0, h1;
    ASSERT_EQ(transport_peer_stats(host_transport(W.n[1].h), 2, &a0), 0);
    ASSERT_EQ(transport_peer_stats(host_transport(W.n[2].h), 1, &b0), 0);
    host_get_stats(W.n[1].h, &h0);
    nt_pump_for(W.r, 500);
    ASSERT_EQ(transport_peer_stats(host_transport(W.n[1].h), 2, &a1), 0);
    ASSERT_EQ(transport_peer_stats(host_transport(W.n[2].h), 1, &b1), 0);
    host_get_stats(W.n[1].h, &h1);
    uint64_t frames = a1.frames_sent - a0.frames_sent, msgs = a1.msgs_sent - a0.msgs_sent;
    uint64_t rframes = b1.frames_sent - b0.frames_sent, rmsgs = b1.msgs_sent - b0.msgs_sent;
    uint64_t ticks = h1.ticks - h0.ticks;
    printf("  500 ms, %d groups led by node 1: 1->2 %llu frames / %llu msgs, 2->1 %llu frames "
           "/ %llu msgs, %llu host ticks\n",
           GROUPS, (unsigned long long)frames, (unsigned long long)msgs,
           (unsigned long long)rframes, (unsigned long long)rmsgs, (unsigned long long)ticks);
    /* a heartbeat every 50 ms for each of 20 groups: ~200 messages... */
    ASSERT_CMP(msgs, >=, 8 * GROUPS);
    /* ...in about one frame per heartbeat interval, never more than one per tick */
    ASSERT_CMP(frames, <=, ticks);
    ASSERT_CMP(frames * 10, <=, msgs);
    /* the responses coalesce the same way */
    ASSERT_CMP(rmsgs, >=, 8 * GROUPS);
    ASSERT_CMP(rframes * 10, <=, rmsgs);
    /* one timer firing per heartbeat interval for all the groups, not one per 10 ms tick */
    ASSERT_CMP(ticks, <=, 500 / 50 + 3);
    world_free();
}

static int foreign_msgs; /* messages of group x-0 handed to node 3's foreign callback */

static void on_foreign(int32_t from, const struct rpc_group *g, const struct raft_msg *m,
                       void *data)
{
    ASSERT_EQ((intptr_t)data, 3);
    ASSERT_EQ(from, 1);
    ASSERT_EQ(m->from, 1);
    ASSERT(g->topic_len == 1 && g->topic[0] == 'x' && g->partition == 0);
    foreign_msgs++;
}

TEST_T(raft_host_unknown_group_dropped_and_transfer_all, 30)
{
    world_init(6);
    world_start();
    wait_all_led(3000);

    /* a group only node 1 has: its messages reach 2 and 3, which drop and count them */
    struct plog *xlog;
    char dir[600];
    snprintf(dir, sizeof(dir), "%s/x-0", W.n[1].dir);
    struct plog_config cfg = su_config();
    ASSERT_EQ(plog_open(dir, &cfg, W.fl, NULL, true, &xlog, NULL), 0);
    int32_t voters[NODES] = {1, 2, 3};
    struct host_group *x;
    ASSERT_EQ(host_add_group(W.n[1].h, "x", 0, xlog, voters, NODES, NULL, &x), 0);
    ASSERT_EQ(host_add_group(W.n[1].h, "x", 0, xlog, voters, NODES, NULL, NULL), -ERR_EXISTS);
    ASSERT_EQ(host_group_find(W.n[2].h, "x", 0), NULL);
    /* node 3 hands groups it does not run to a callback (as the controller group is) */
    foreign_msgs = 0;
    host_set_foreign_cb(W.n[3].h, on_foreign, (void *)(intptr_t)3);
    ASSERT_EQ(host_campaign(x), 0);
    struct host_stats st2, st3;
    NT_PUMP_UNTIL(W.r, (host_get_stats(W.n[2].h, &st2), host_get_stats(W.n[3].h, &st3),
                        st2.unknown_group_drops > 0 && foreign_msgs > 0),
                  2000);
    ASSERT_CMP(st2.unknown_group_drops, >, 0);
    ASSERT_CMP(foreign_msgs, >, 0);
    ASSERT_EQ(st3.unknown_group_drops, 0);
    host_set_foreign_cb(W.n[3].h, NULL, NULL);
    ASSERT(raft_role(replica_raft(host_group_replica(x))) != RAFT_LEADER);
    ASSERT(all_led()); /* the known groups are unaffected */
    host_remove_group(W.n[1].h, x);
    ASSERT_EQ(host_group_find(W.n[1].h, "x", 0), NULL);
    plog_close(xlog);

    /* graceful shutdown: every leadership of the node moves away without an election timeout */
    int32_t from = agreed_leader(0);
    size_t led = leaders_on(from);
    ASSERT_EQ(host_leader_count(W.n[from].h), led);
    int64_t t0 = time_mono_ms();
    ASSERT_EQ(host_transfer_all(W.n[from].h), led);
    NT_PUMP_UNTIL(W.r, leaders_on(from) == 0 && all_led() && host_leader_count(W.n[from].h) == 0,
                  2000);
    int64_t ms = time_mono_ms() - t0;
    printf("  node %d handed over %zu leaderships in %lld ms\n", from, led, (long long)ms);
    ASSERT_CMP(ms, <, 300); /* below the longest election timeout: no group waited for one */
    ASSERT_EQ(host_transfer_all(W.n[from].h), 0);
    world_free();
}

/* Node 1's disk fails every fdatasync; the others' work. */
static int node1_fdatasync(int fd)
{
    char link[64], path[1024];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n < 0)
        return fdatasync(fd);
    path[n] = 0;
    if (strncmp(path, W.n[1].dir, strlen(W.n[1].dir)) == 0) {
        errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}

TEST_T(raft_host_failed_replicas_lead_nothing_and_stop_ticking, 30)
{
    world_init(4);
    world_start();
    struct prop props[4];
    propose_all(1, 8, props);
    NT_PUMP_UNTIL(W.r, all_committed(props), 3000);
    int changes = W.n[1].leader_changes;
    size_t led = host_leader_count(W.n[1].h);
    struct storage_io io = storage_io_default;
    io.fdatasync = node1_fdatasync;
    storage_io_set(&io);
    /* node 1 writes each of these (as leader or follower) and fails its fdatasync */
    propose_all(1, 9, props);
    struct host_stats st;
    NT_PUMP_UNTIL(W.r, (host_get_stats(W.n[1].h, &st), st.failed_groups == 4 && st.leaders == 0),
                  3000);
    if (led > 0)
        ASSERT_CMP(W.n[1].leader_changes, >, changes); /* told: it leads nothing now */
    for (int p = 0; p < 4; p++) {
        struct host_group_status gs;
        host_group_status(grp(1, p), &gs);
        ASSERT_EQ(gs.rs.failed, -EIO);
    }
    /* frozen cores are not ticked: node 1's timer goes quiet instead of firing every tick */
    struct host_stats s0, s1;
    host_get_stats(W.n[1].h, &s0);
    nt_pump_for(W.r, 300);
    host_get_stats(W.n[1].h, &s1);
    ASSERT_CMP(s1.ticks - s0.ticks, <=, 1);
    /* the two others go on: every group led among them, new proposals commit there */
    struct host *h1 = W.n[1].h;
    W.n[1].h = NULL; /* out of the helpers' sight for a moment */
    propose_all(1, 10, props);
    NT_PUMP_UNTIL(W.r, all_committed(props), 3000);
    W.n[1].h = h1;
    storage_io_set(NULL);
    world_free();
}

/* Groups whose leader is alone in them have nothing to time: once they lead they are not
 * ticked at all while idle (thousands of single-replica partitions cost no CPU), and an input
 * still reaches them (a proposal commits). */
TEST_T(raft_host_sole_leaders_are_not_ticked_while_idle, 30)
{
    world_init(4);
    W.sole = true;
    node_start(1);
    NT_PUMP_UNTIL(W.r, host_leader_count(W.n[1].h) == 4, 3000);
    struct host_stats s0, s1;
    host_get_stats(W.n[1].h, &s0);
    nt_pump_for(W.r, 2500); /* over two safety-net intervals (HOST_DEADLINE_MAX_MS) */
    host_get_stats(W.n[1].h, &s1);
    ASSERT_EQ(s1.group_ticks - s0.group_ticks, 0);
    struct prop props[4];
    propose_all(1, 3, props);
    NT_PUMP_UNTIL(W.r, all_committed(props), 3000);
    world_free();
}
