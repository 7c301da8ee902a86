/* The replica host (replication/host.h): every local partition Raft group of a broker over one
 * transport, on one reactor.
 *
 * Owns: the transport; the groups (struct host_group: the group key, its replica, its place in
 * the deadline heap and the dirty list, the leadership last reported); the group map (key =
 * topic bytes + the big-endian partition: topic names have no fixed length, but two keys of
 * equal length have equal topic lengths, so the key is unambiguous); the deadline heap; the
 * dirty list; two reactor timers (tick, flush).
 * Borrows: the reactor; each group's plog.
 *
 * Invariants (host_check):
 *   1. Every group is in the map under its key, and in the heap exactly once (heap_idx names
 *      its slot) unless it is dirty, being ticked, failed or without a deadline (a leader
 *      alone in its group); the heap is ordered by slot_ms.
 *   2. A group is in the dirty list iff g->dirty; while any is dirty the flush timer is armed
 *      or a flush is running.
 *   3. n_leaders == the number of groups whose reported leadership says leading.
 *   4. The tick timer is armed for heap[0]'s slot whenever the heap is not empty (outside
 *      flush, which re-arms it).
 *
 * Group states: added (host_add_group: replica open, dirty) -> scheduled (flush: deadline read,
 * in the heap) -> due (tick: out of the heap, ticked, dirty) -> scheduled ... ; any input or
 * output of the group makes it dirty again (touch), which flush turns back into scheduled after
 * reading its deadline and leadership; failed (its replica failed: out of the heap for good,
 * reported as leading nothing; the owner removes it and re-adds it once the disk is healthy).
 * removed (host_remove_group) from any state.
 *
 * Why a dirty list rather than reading the deadline after each input: an input may cascade
 * (a step that sends, a durability notice from the flusher that commits and sends), and the
 * deadline is only final once the replica's ready loop is done; the end of the iteration is
 * the first moment that is certainly true, and it is when the transport is flushed anyway. */
#include "replication/host.h"

#include <inttypes.h>
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/strmap.h"
#include "replication/rpc.h"

#define HOST_TICK_MS_DEFAULT 10
#define HOST_KEY_MAX (RPC_TOPIC_MAX + 4)
#define NOT_IN_HEAP SIZE_MAX

struct host_group {
    struct host *h;
    char *topic;               /* NUL-terminated copy */
    size_t topic_len;
    int32_t partition;
    struct replica *rp;
    struct host_group_callbacks cb;
    size_t heap_idx;           /* slot in h->heap, or NOT_IN_HEAP */
    int64_t slot_ms;           /* when the tick timer next ticks it */
    int64_t clock_ms;          /* the time last given to replica_tick */
    bool dirty;                /* in h->dirty */
    bool leading;              /* leadership as last reported */
    int32_t leader;
};

struct host {
    struct reactor *r;
    struct transport *t;
    int32_t id;
    struct host_options opt;
    struct strmap groups;      /* key -> struct host_group * */
    struct host_group **heap;  /* min-heap by slot_ms */
    size_t n_heap;
    size_t cap_heap;
    struct host_group **dirty; /* groups to look at again at the end of the iteration */
    size_t n_dirty;
    size_t cap_dirty;
    struct reactor_timer tick_timer;
    struct reactor_timer flush_timer;
    bool flushing;             /* inside flush() */
    size_t n_leaders;
    struct host_stats stats;
    transport_msg_cb foreign;  /* host_set_foreign_cb: groups not run here */
    void *foreign_data;
};

/* ---- keys ---- */

static size_t make_key(char *key, const char *topic, size_t topic_len, int32_t partition)
{
    memcpy(key, topic, topic_len);
    uint32_t p = (uint32_t)partition;
    key[topic_len] = (char)(p >> 24);
    key[topic_len + 1] = (char)(p >> 16);
    key[topic_len + 2] = (char)(p >> 8);
    key[topic_len + 3] = (char)p;
    return topic_len + 4;
}

static struct host_group *find(const struct host *h, const char *topic, size_t topic_len,
                               int32_t partition)
{
    if (topic_len == 0 || topic_len > RPC_TOPIC_MAX)
        return NULL;
    char key[HOST_KEY_MAX];
    size_t n = make_key(key, topic, topic_len, partition);
    return strmap_get(&h->groups, key, n);
}

/* ---- the deadline heap ---- */

static void heap_swap(struct host *h, size_t a, size_t b)
{
    struct host_group *g = h->heap[a];
    h->heap[a] = h->heap[b];
    h->heap[b] = g;
    h->heap[a]->heap_idx = a;
    h->heap[b]->heap_idx = b;
}

static void heap_up(struct host *h, size_t i)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (h->heap[parent]->slot_ms <= h->heap[i]->slot_ms)
            break;
        heap_swap(h, i, parent);
        i = parent;
    }
}

static void heap_down(struct host *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n_heap && h->heap[l]->slot_ms < h->heap[m]->slot_ms)
            m = l;
        if (r < h->n_heap && h->heap[r]->slot_ms < h->heap[m]->slot_ms)
            m = r;
        if (m == i)
            break;
        heap_swap(h, i, m);
        i = m;
    }
}

static void heap_remove(struct host *h, struct host_group *g)
{
    size_t i = g->heap_idx;
    if (i == NOT_IN_HEAP)
        return;
    CHECK(i < h->n_heap && h->heap[i] == g);
    h->n_heap--;
    if (i != h->n_heap) {
        h->heap[i] = h->heap[h->n_heap];
        h->heap[i]->heap_idx = i;
        heap_up(h, i);
        heap_down(h, h->heap[i]->heap_idx);
    }
    g->heap_idx = NOT_IN_HEAP;
}

static void heap_set(struct host *h, struct host_group *g, int64_t slot_ms)
{
    heap_remove(h, g);
    g->slot_ms = slot_ms;
    MEM_GROW(h->heap, h->cap_heap, h->n_heap + 1);
    g->heap_idx = h->n_heap;
    h->heap[h->n_heap++] = g;
    heap_up(h, g->heap_idx);
}

__attribute__((unused)) static void host_check(const struct host *h)
{
    CHECK(h->n_heap <= h->groups.len);
    for (size_t i = 0; i < h->n_heap; i++) {
        CHECK(h->heap[i]->heap_idx == i);
        if (i > 0)
            CHECK(h->heap[(i - 1) / 2]->slot_ms <= h->heap[i]->slot_ms);
    }
    for (size_t i = 0; i < h->n_dirty; i++)
        CHECK(h->dirty[i]->dirty);
    size_t leaders = 0;
    const char *key;
    void *v;
    for (size_t it = 0; strmap_next(&h->groups, &it, &key, &v);)
        leaders += ((struct host_group *)v)->leading;
    CHECK(leaders == h->n_leaders);
}

/* ---- the end of an iteration: deadlines, leadership, flush ---- */

static void arm_tick(struct host *h)
{
    if (h->n_heap == 0) {
        reactor_timer_stop(h->r, &h->tick_timer);
        return;
    }
    int64_t delay = h->heap[0]->slot_ms - reactor_now_ms(h->r);
    reactor_timer_start(h->r, &h->tick_timer, MAX(delay, 0));
}

/* Puts g in the heap at its deadline's slot: rounded up to tick_ms, in the future, and no
 * further than HOST_DEADLINE_MAX_MS away. */
static void schedule(struct host *h, struct host_group *g)
{
    if (replica_failed(g->rp)) {
        heap_remove(h, g); /* its core is frozen: its deadlines would fire forever */
        return;
    }
    int64_t now = reactor_now_ms(h->r);
    int64_t d = raft_next_deadline(replica_raft(g->rp));
    if (d == INT64_MAX) {
        /* a leader alone in its group has nothing to time: only an input touches it again
         * (every input ticks it to the current time first) */
        heap_remove(h, g);
        return;
    }
    d = MIN(MAX(d, now + 1), now + HOST_DEADLINE_MAX_MS);
    int64_t tick = h->opt.tick_ms;
    heap_set(h, g, (d + tick - 1) / tick * tick);
}

static void check_leader(struct host *h, struct host_group *g)
{
    const struct raft *core = replica_raft(g->rp);
    /* a failed replica leads nothing and follows no one (its frozen core may say otherwise) */
    bool failed = replica_failed(g->rp) != 0;
    bool leading = !failed && raft_role(core) == RAFT_LEADER;
    int32_t leader = failed ? RAFT_NONE : raft_leader(core);
    if (leading == g->leading && leader == g->leader)
        return;
    if (leading != g->leading)
        h->n_leaders = leading ? h->n_leaders + 1 : h->n_leaders - 1;
    g->leading = leading;
    g->leader = leader;
    /* the broker logs it (cluster_partition_leader, ctl_leader_elected): here only at debug */
    log_debug("raft_leader_changed",
              "node=%" PRId32 " topic=%s partition=%" PRId32 " leader=%" PRId32 " term=%" PRId64,
              h->id, g->topic, g->partition, leader, raft_term(core));
    if (g->cb.on_leader) {
        struct host_leader_change c = {.leading = leading,
                                       .leader = leader,
                                       .term = raft_term(core),
                                       .role = failed ? RAFT_FOLLOWER : raft_role(core)};
        g->cb.on_leader(g, &c, g->cb.data);
    }
}

static void flush(struct host *h)
{
    CHECK(!h->flushing);
    h->flushing = true;
    reactor_timer_stop(h->r, &h->flush_timer);
    /* callbacks may make more groups dirty meanwhile: the list may grow while walked */
    for (size_t i = 0; i < h->n_dirty; i++) {
        struct host_group *g = h->dirty[i];
        g->dirty = false;
        schedule(h, g);
        check_leader(h, g);
    }
    h->n_dirty = 0;
    transport_flush(h->t);
    h->stats.flushes++;
    arm_tick(h);
    h->flushing = false;
    DCHECK((host_check(h), true));
}

static void flush_timer_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    (void)r;
    (void)t;
    flush(data);
}

static void touch(struct host *h, struct host_group *g)
{
    if (!g->dirty) {
        g->dirty = true;
        MEM_GROW(h->dirty, h->cap_dirty, h->n_dirty + 1);
        h->dirty[h->n_dirty++] = g;
    }
    /* zero delay: runs after this iteration's fd events (next iteration from a timer) */
    if (!h->flushing && !reactor_timer_active(&h->flush_timer))
        reactor_timer_start(h->r, &h->flush_timer, 0);
}

static void untouch(struct host *h, struct host_group *g)
{
    if (!g->dirty)
        return;
    for (size_t i = 0; i < h->n_dirty; i++) {
        if (h->dirty[i] == g) {
            memmove(h->dirty + i, h->dirty + i + 1, (h->n_dirty - i - 1) * sizeof(*h->dirty));
            h->n_dirty--;
            break;
        }
    }
    g->dirty = false;
}

void host_touch(struct host_group *g)
{
    touch(g->h, g);
}

void host_flush(struct host *h)
{
    flush(h);
}

/* ---- time ---- */

/* The core's clock moves only with raft_tick, and it measures every timeout from it (a
 * heartbeat received resets the election deadline to its clock + timeout): a group ticked only
 * at its deadlines would measure from a stale clock and campaign under a live leader. So every
 * input is preceded by a tick to the reactor's time (at most once per group per iteration). */
static void sync_clock(struct host *h, struct host_group *g)
{
    int64_t now = reactor_now_ms(h->r);
    if (g->clock_ms >= now)
        return;
    g->clock_ms = now;
    replica_tick(g->rp, now);
    h->stats.group_ticks++;
}

static void tick_timer_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    (void)t;
    struct host *h = data;
    int64_t now = reactor_now_ms(r);
    h->stats.ticks++;
    /* each due group leaves the heap until flush() below puts it back: bounded by n_heap */
    while (h->n_heap > 0 && h->heap[0]->slot_ms <= now) {
        struct host_group *g = h->heap[0];
        heap_remove(h, g);
        g->clock_ms = now - 1; /* a due tick always runs */
        sync_clock(h, g);
        touch(h, g);
    }
    flush(h);
}

/* ---- messages ---- */

static void send_cb(struct replica *rp, const struct raft_msg *m, void *data)
{
    (void)rp;
    struct host_group *g = data;
    struct host *h = g->h;
    struct rpc_group key = {.topic = g->topic, .topic_len = g->topic_len, .partition = g->partition};
    if (transport_send(h->t, m->to, &key, m) != 0)
        h->stats.send_failures++;
    touch(h, g);
}

static void commit_cb(struct replica *rp, int64_t commit, void *data)
{
    (void)rp;
    struct host_group *g = data;
    touch(g->h, g);
    if (g->cb.on_commit)
        g->cb.on_commit(g, commit, g->cb.data);
}

/* A hard state became durable off the host's inputs (its leadership may have changed): the
 * group is looked at again at the end of the iteration, so its leadership is reported at once
 * rather than at its next tick. */
static void synced_cb(struct replica *rp, void *data)
{
    (void)rp;
    struct host_group *g = data;
    touch(g->h, g);
}

static void on_msg(int32_t from, const struct rpc_group *rg, const struct raft_msg *m, void *data)
{
    struct host *h = data;
    struct host_group *g = find(h, rg->topic, rg->topic_len, rg->partition);
    if (!g && h->foreign) {
        h->foreign(from, rg, m, h->foreign_data);
        return;
    }
    if (!g) {
        if (h->stats.unknown_group_drops++ == 0)
            log_info("raft_unknown_group", "node=%" PRId32 " from=%" PRId32
                     " partition=%" PRId32 " note=\"dropped; counted from now on\"",
                     h->id, from, rg->partition);
        return;
    }
    sync_clock(h, g);
    /* stepped here, inside the transport's callback: the payloads live until the advance */
    int rc = replica_step(g->rp, m);
    if (rc == -ERR_INVALID)
        h->stats.invalid_msgs++;
    touch(h, g);
}

/* ---- lifecycle ---- */

int host_new(struct reactor *r, const struct transport_config *tc, const struct host_options *o,
             struct host **out)
{
    struct host_options opt = o ? *o : (struct host_options){0};
    if (opt.tick_ms == 0)
        opt.tick_ms = HOST_TICK_MS_DEFAULT;
    if (opt.tick_ms < 0 || opt.election_timeout_ms < 0 || opt.heartbeat_ms < 0)
        return -ERR_INVALID;
    struct host *h = mem_calloc(1, sizeof(*h));
    h->r = r;
    h->id = tc->self_id;
    h->opt = opt;
    strmap_init(&h->groups);
    reactor_timer_init(&h->tick_timer, tick_timer_cb, h);
    reactor_timer_init(&h->flush_timer, flush_timer_cb, h);
    int rc = transport_new(r, tc, on_msg, h, &h->t);
    if (rc != 0) {
        strmap_destroy(&h->groups);
        mem_free(h);
        return rc;
    }
    *out = h;
    return 0;
}

void host_set_foreign_cb(struct host *h, transport_msg_cb cb, void *data)
{
    h->foreign = cb;
    h->foreign_data = data;
}

static void group_free(struct host_group *g)
{
    mem_free(g->topic);
    mem_free(g);
}

void host_free(struct host *h)
{
    if (!h)
        return;
    CHECK(!h->flushing);
    reactor_timer_stop(h->r, &h->tick_timer);
    reactor_timer_stop(h->r, &h->flush_timer);
    const char *key;
    void *v;
    for (size_t it = 0; strmap_next(&h->groups, &it, &key, &v);) {
        struct host_group *g = v;
        replica_close(g->rp);
        group_free(g);
    }
    strmap_destroy(&h->groups);
    transport_free(h->t);
    mem_free(h->heap);
    mem_free(h->dirty);
    mem_free(h);
}

/* A per-group seed: the host's, this node and the group, so no two cores draw alike. */
static uint64_t group_seed(const struct host *h, const char *key, size_t klen)
{
    uint64_t s = hash_bytes(key, klen);
    s ^= h->opt.seed + 0x9e3779b97f4a7c15ULL * (uint64_t)(h->id + 1);
    s ^= s >> 31;
    return s * 0xbf58476d1ce4e5b9ULL;
}

int host_add_group(struct host *h, const char *topic, int32_t partition, struct plog *log,
                   const int32_t *voters, size_t n_voters, const struct host_group_callbacks *cb,
                   struct host_group **out)
{
    size_t topic_len = strlen(topic);
    if (topic_len == 0 || topic_len > RPC_TOPIC_MAX || partition < 0 ||
        n_voters > RAFT_VOTERS_MAX)
        return -ERR_INVALID;
    char key[HOST_KEY_MAX];
    size_t klen = make_key(key, topic, topic_len, partition);
    if (strmap_get(&h->groups, key, klen))
        return -ERR_EXISTS;

    struct replica_options o;
    replica_options_default(&o, h->id, group_seed(h, key, klen));
    if (h->opt.election_timeout_ms)
        o.raft.election_timeout_ms = h->opt.election_timeout_ms;
    if (h->opt.heartbeat_ms)
        o.raft.heartbeat_ms = h->opt.heartbeat_ms;
    o.raft.pre_vote = !h->opt.no_pre_vote;
    o.raft.check_quorum = !h->opt.no_check_quorum;
    if (h->opt.msg_bytes_max)
        o.msg_bytes_max = h->opt.msg_bytes_max;
    o.bootstrap.n_voters = (uint8_t)n_voters;
    for (size_t i = 0; i < n_voters; i++)
        o.bootstrap.voters[i] = voters[i];
    o.send = send_cb;
    o.on_commit = commit_cb;
    o.on_synced = synced_cb;

    struct host_group *g = mem_calloc(1, sizeof(*g));
    g->h = h;
    g->topic = mem_strndup(topic, topic_len);
    g->topic_len = topic_len;
    g->partition = partition;
    g->heap_idx = NOT_IN_HEAP;
    g->leader = RAFT_NONE;
    if (cb)
        g->cb = *cb;
    o.data = g;
    /* open may already send (a restored core with work to do): g is ready for send_cb */
    int rc = replica_open(log, &o, reactor_now_ms(h->r), &g->rp);
    if (rc != 0) {
        untouch(h, g);
        group_free(g);
        return rc;
    }
    g->clock_ms = reactor_now_ms(h->r);
    strmap_put(&h->groups, key, klen, g);
    touch(h, g);
    if (out)
        *out = g;
    return 0;
}

void host_remove_group(struct host *h, struct host_group *g)
{
    CHECK(!h->flushing);
    char key[HOST_KEY_MAX];
    size_t klen = make_key(key, g->topic, g->topic_len, g->partition);
    CHECK(strmap_del(&h->groups, key, klen) == g);
    heap_remove(h, g);
    untouch(h, g);
    if (g->leading)
        h->n_leaders--;
    replica_close(g->rp);
    group_free(g);
}

struct host_group *host_group_find(const struct host *h, const char *topic, int32_t partition)
{
    return find(h, topic, strlen(topic), partition);
}

/* ---- inputs ---- */

int host_propose(struct host_group *g, uint8_t *batch, size_t len, int32_t record_count,
                 bool durable, int64_t *first, int64_t *last, int64_t *term)
{
    sync_clock(g->h, g);
    int rc = replica_propose(g->rp, batch, len, record_count, durable, first, last, term);
    touch(g->h, g);
    return rc;
}

int host_compact(struct host_group *g, int64_t new_start)
{
    sync_clock(g->h, g);
    int rc = replica_compact(g->rp, new_start);
    touch(g->h, g);
    return rc;
}

int host_propose_members(struct host_group *g, const int32_t *voters, size_t n,
                         const int32_t *learners, size_t n_learners)
{
    sync_clock(g->h, g);
    int rc = replica_propose_members(g->rp, voters, n, learners, n_learners);
    touch(g->h, g);
    return rc;
}

int host_campaign(struct host_group *g)
{
    sync_clock(g->h, g);
    int rc = replica_campaign(g->rp);
    touch(g->h, g);
    return rc;
}

int host_transfer(struct host_group *g, int32_t to)
{
    sync_clock(g->h, g);
    int rc = replica_transfer_leader(g->rp, to);
    touch(g->h, g);
    return rc;
}

size_t host_transfer_all(struct host *h)
{
    size_t started = 0;
    const char *key;
    void *v;
    for (size_t it = 0; strmap_next(&h->groups, &it, &key, &v);) {
        struct host_group *g = v;
        if (raft_role(replica_raft(g->rp)) != RAFT_LEADER)
            continue;
        if (host_transfer(g, RAFT_NONE) == 0)
            started++;
    }
    log_info("raft_transfer_all", "node=%" PRId32 " transfers=%zu", h->id, started);
    return started;
}

/* ---- status ---- */

struct replica *host_group_replica(const struct host_group *g)
{
    return g->rp;
}

const char *host_group_topic(const struct host_group *g)
{
    return g->topic;
}

int32_t host_group_partition(const struct host_group *g)
{
    return g->partition;
}

void host_group_status(const struct host_group *g, struct host_group_status *out)
{
    replica_status(g->rp, &out->rs);
    out->leading = out->rs.role == RAFT_LEADER;
}

void host_get_stats(const struct host *h, struct host_stats *out)
{
    *out = h->stats;
    out->groups = h->groups.len;
    out->leaders = h->n_leaders;
    out->failed_groups = 0;
    const char *key;
    void *v;
    for (size_t it = 0; strmap_next(&h->groups, &it, &key, &v);)
        out->failed_groups += replica_failed(((struct host_group *)v)->rp) != 0;
}

size_t host_leader_count(const struct host *h)
{
    return h->n_leaders;
}

struct host_group *host_next_group(const struct host *h, size_t *it)
{
    const char *key;
    void *v;
    return strmap_next(&h->groups, it, &key, &v) ? v : NULL;
}

struct transport *host_transport(const struct host *h)
{
    return h->t;
}

int32_t host_node_id(const struct host *h)
{
    return h->id;
}
