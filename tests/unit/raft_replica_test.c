/* The Raft replica adapter (src/replication/replica.h) over real plogs.
 *
 * Three replicas in one process, each with a real plog in its own temporary directory and one
 * real flusher thread, connected by an in-memory network in this file: messages are copied
 * (entries and payloads too) into a queue, and may be dropped per directed link (partitions).
 * A virtual clock drives the cores in SIM_STEP_MS steps; before each step every queued message
 * is delivered and the loop waits (bounded) until every live log is durable, so real fsync
 * latency never races the virtual election timers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "kafka/batch.h"
#include "replication/conflog.h"
#include "replication/hardstate.h"
#include "replication/logstart.h"
#include "replication/replica.h"
#include "storage/flusher.h"
#include "storage/io.h"
#include "storage/kvstore.h"
#include "storage/plog.h"
#include "storage_util.h"
#include "test.h"

#define NODES 3
#define STEP_MS 5

struct qmsg {
    struct raft_msg m; /* entries and payloads follow in the same allocation */
};

struct tnode {
    int32_t id;
    char dir[512];
    struct plog *log;
    struct replica *rp;
    bool up;
};

static struct {
    struct tnode n[NODES];
    struct flusher *fl;
    int64_t now;
    bool cut[NODES + 1][NODES + 1]; /* cut[a][b]: a's messages to b are dropped */
    struct qmsg **q;
    size_t nq;
    size_t capq;
    uint64_t sent;
    uint64_t append_entries_sent;
    size_t max_append_entries;
    size_t max_append_bytes;
    int32_t removed; /* a node removed from the voters: not waited for nor compared */
    int64_t commit_seen[NODES + 1]; /* by on_commit */
    int64_t hw_seen[NODES + 1];     /* high watermark at the last on_commit */
    int commit_calls;
} W;

static struct tnode *node(int32_t id)
{
    CHECK(id >= 1 && id <= NODES);
    return &W.n[id - 1];
}

static void send_cb(struct replica *rp, const struct raft_msg *m, void *data)
{
    (void)rp;
    (void)data;
    W.sent++;
    if (m->to < 1 || m->to > NODES || W.cut[m->from][m->to])
        return;
    size_t bytes = sizeof(struct qmsg) + m->n_entries * sizeof(struct raft_entry);
    for (size_t i = 0; i < m->n_entries; i++)
        bytes += m->entries[i].len;
    struct qmsg *q = mem_alloc(bytes);
    q->m = *m;
    struct raft_entry *e = (struct raft_entry *)(q + 1);
    uint8_t *p = (uint8_t *)(e + m->n_entries);
    for (size_t i = 0; i < m->n_entries; i++) {
        e[i] = m->entries[i];
        if (e[i].len) {
            memcpy(p, m->entries[i].payload, e[i].len);
            e[i].payload = p;
            p += e[i].len;
        } else {
            e[i].payload = NULL;
        }
    }
    q->m.entries = m->n_entries ? e : NULL;
    if (m->type == RAFT_MSG_APPEND) {
        size_t payload = 0;
        for (size_t i = 0; i < m->n_entries; i++)
            payload += m->entries[i].len;
        if (payload > W.max_append_bytes)
            W.max_append_bytes = payload;
        ASSERT_EQ(m->last, m->n_entries ? m->entries[m->n_entries - 1].last : m->last);
        W.append_entries_sent += m->n_entries;
        if (m->n_entries > W.max_append_entries)
            W.max_append_entries = m->n_entries;
    }
    MEM_GROW(W.q, W.capq, W.nq + 1);
    W.q[W.nq++] = q;
}

/* Whether the batch holding offset off in log is a Raft entry (a record-less control batch). */
static bool raft_entry_at(struct plog *log, int64_t off)
{
    struct plog_read_result res;
    ASSERT_EQ(plog_read(log, off, off + 1, 1, &res), 0);
    ASSERT(res.len >= KBATCH_HEADER_SIZE);
    uint8_t hdr[KBATCH_HEADER_SIZE];
    ASSERT_EQ(pread(res.file->fd, hdr, sizeof(hdr), res.pos), (ssize_t)sizeof(hdr));
    fileref_put(res.file);
    struct kbatch_header h;
    kbatch_parse_header(hdr, &h);
    return kbatch_is_control(&h) && h.records_count == 0;
}

static void commit_cb(struct replica *rp, int64_t commit, void *data)
{
    struct tnode *n = data;
    ASSERT_EQ(raft_commit(replica_raft(rp)), commit);
    ASSERT_CMP(commit, >, W.commit_seen[n->id]);
    /* the high watermark is commit + 1, unless the committed log ends in Raft entries: then it
     * stops before them */
    struct plog *log = replica_log(rp);
    int64_t hw = plog_high_watermark(log);
    if (commit < plog_start_offset(log) || !raft_entry_at(log, commit))
        ASSERT_EQ(hw, MAX(commit + 1, plog_start_offset(log)));
    else
        ASSERT_CMP(hw, <=, commit);
    ASSERT_CMP(hw, >=, W.hw_seen[n->id]);
    W.hw_seen[n->id] = hw;
    W.commit_seen[n->id] = commit;
    W.commit_calls++;
}

static struct replica_options options(int32_t id)
{
    struct replica_options o;
    replica_options_default(&o, id, 1000 + (uint64_t)id);
    o.bootstrap.n_voters = NODES;
    for (int i = 0; i < NODES; i++)
        o.bootstrap.voters[i] = i + 1;
    o.msg_bytes_max = 16 * 1024;
    o.send = send_cb;
    o.on_commit = commit_cb;
    o.data = node(id);
    return o;
}

static int open_node(int32_t id, bool clean)
{
    struct tnode *n = node(id);
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 64 * 1024; /* several segments: reads and cuts cross them */
    int rc = plog_open(n->dir, &cfg, W.fl, NULL, clean, &n->log, NULL);
    ASSERT_EQ(rc, 0);
    struct replica_options o = options(id);
    W.commit_seen[id] = -1;
    W.hw_seen[id] = 0;
    rc = replica_open(n->log, &o, W.now, &n->rp);
    if (rc != 0) {
        plog_close(n->log);
        n->log = NULL;
        return rc;
    }
    n->up = true;
    return 0;
}

static void close_node(int32_t id)
{
    struct tnode *n = node(id);
    replica_close(n->rp);
    plog_close(n->log);
    n->rp = NULL;
    n->log = NULL;
    n->up = false;
}

static void world_init(void)
{
    memset(&W, 0, sizeof(W));
    W.now = 1000;
    ASSERT_EQ(flusher_start(&W.fl), 0);
    for (int32_t id = 1; id <= NODES; id++) {
        struct tnode *n = node(id);
        n->id = id;
        snprintf(n->dir, sizeof(n->dir), "%s/node%d", test_tmpdir(), id);
        ASSERT_EQ(open_node(id, true), 0);
    }
}

static void world_free(void)
{
    for (int32_t id = 1; id <= NODES; id++)
        if (node(id)->up)
            close_node(id);
    flusher_stop(W.fl);
    for (size_t i = 0; i < W.nq; i++)
        mem_free(W.q[i]);
    mem_free(W.q);
}

static bool all_durable(void)
{
    for (int32_t id = 1; id <= NODES; id++) {
        struct tnode *n = node(id);
        if (n->up && !replica_failed(n->rp) &&
            (plog_durable_offset(n->log) < plog_end_offset(n->log) ||
             replica_hard_state_syncing(n->rp)))
            return false;
    }
    return true;
}

/* Delivers every queued message and waits for every pending sync, until quiet (bounded). */
static void settle(void)
{
    for (int round = 0; round < 2000; round++) {
        while (W.nq > 0) {
            struct qmsg **q = W.q;
            size_t nq = W.nq;
            W.q = NULL;
            W.nq = W.capq = 0;
            for (size_t i = 0; i < nq; i++) {
                struct tnode *to = node(q[i]->m.to);
                if (to->up && !W.cut[q[i]->m.from][q[i]->m.to])
                    (void)replica_step(to->rp, &q[i]->m);
                mem_free(q[i]);
            }
            mem_free(q);
        }
        struct pollfd p = {.fd = flusher_fd(W.fl), .events = POLLIN};
        bool durable = all_durable();
        int n = poll(&p, 1, durable ? 0 : 20);
        ASSERT_CMP(n, >=, 0);
        if (n > 0) {
            flusher_poll(W.fl);
            continue;
        }
        if (durable && W.nq == 0)
            return;
    }
    test_fail(__FILE__, __LINE__, "the world does not settle");
}

static void step(void)
{
    settle();
    W.now += STEP_MS;
    for (int32_t id = 1; id <= NODES; id++)
        if (node(id)->up)
            replica_tick(node(id)->rp, W.now);
    settle();
}

static void run_ms(int64_t ms)
{
    for (int64_t t = 0; t < ms; t += STEP_MS)
        step();
}

static const struct raft *core(int32_t id)
{
    return replica_raft(node(id)->rp);
}

/* The leader of the highest term among live nodes, or 0. */
static int32_t leader(void)
{
    int32_t best = 0;
    for (int32_t id = 1; id <= NODES; id++) {
        struct tnode *n = node(id);
        if (n->up && raft_role(core(id)) == RAFT_LEADER &&
            (!best || raft_term(core(id)) > raft_term(core(best))))
            best = id;
    }
    return best;
}

/* Runs until a leader (other than `not`, if nonzero) has committed an entry of its term. */
static int32_t wait_leader(int32_t not)
{
    for (int i = 0; i < 400; i++) {
        int32_t l = leader();
        if (l && l != not && raft_term_at(core(l), raft_commit(core(l))) == raft_term(core(l)))
            return l;
        step();
    }
    test_fail(__FILE__, __LINE__, "no leader");
}

static void cut_off(int32_t id, bool cut)
{
    for (int32_t o = 1; o <= NODES; o++) {
        if (o == id)
            continue;
        W.cut[id][o] = cut;
        W.cut[o][id] = cut;
    }
}

/* A distinct batch of 1..4 records. */
static uint8_t *make_batch(int seed, int32_t *count, size_t *len)
{
    *count = 1 + seed % 4;
    return su_batch(*count, 20 + seed % 50, 1700000000000LL + seed, seed, len);
}

struct prop {
    int64_t first;
    int64_t last;
    int64_t term;
};

static struct prop propose(int32_t id, int seed)
{
    int32_t count;
    size_t len;
    uint8_t *b = make_batch(seed, &count, &len);
    struct prop p;
    int rc = replica_propose(node(id)->rp, b, len, count, true, &p.first, &p.last, &p.term);
    mem_free(b);
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(p.last - p.first + 1, count);
    return p;
}

/* Runs until every live node's commit reaches index (bounded). */
static void wait_commit_all(int64_t index)
{
    for (int i = 0; i < 1000; i++) {
        bool all = true;
        for (int32_t id = 1; id <= NODES; id++)
            if (node(id)->up && id != W.removed && raft_commit(core(id)) < index)
                all = false;
        if (all)
            return;
        step();
    }
    test_fail(__FILE__, __LINE__, "commit %lld not reached everywhere", (long long)index);
}

/* Every batch of a log below `end`, concatenated as stored. */
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

struct log_stats {
    int data;           /* data batches */
    int noop;           /* record-less control batches */
    int64_t next;       /* offset after the last batch */
};

/* Checks every batch (CRC, contiguous offsets, non-decreasing epochs) and counts kinds. */
static struct log_stats walk(const uint8_t *p, size_t len, int64_t start)
{
    struct log_stats st = {.next = start};
    int32_t epoch = -1;
    for (size_t pos = 0; pos < len;) {
        struct kbatch_header h;
        ASSERT_CMP(len - pos, >=, KBATCH_HEADER_SIZE);
        kbatch_parse_header(p + pos, &h);
        ASSERT_EQ(kbatch_validate(p + pos, kbatch_size(&h), true, false, 1 << 20), 0);
        ASSERT_EQ(h.base_offset, st.next);
        ASSERT_CMP(h.partition_leader_epoch, >=, epoch);
        epoch = h.partition_leader_epoch;
        if (kbatch_is_control(&h)) {
            ASSERT_EQ(h.records_count, 0);
            ASSERT_EQ(h.last_offset_delta, 0);
            ASSERT_EQ(h.producer_id, -1);
            st.noop++;
        } else {
            ASSERT_EQ(h.records_count, h.last_offset_delta + 1);
            st.data++;
        }
        st.next = kbatch_last_offset(&h) + 1;
        pos += kbatch_size(&h);
    }
    return st;
}

/* The live logs are byte-identical below the smallest HW, and every HW reaches `upto`. */
static struct log_stats compare_logs(int64_t upto)
{
    int64_t hw = INT64_MAX;
    for (int32_t id = 1; id <= NODES; id++)
        if (node(id)->up && id != W.removed)
            hw = MIN(hw, plog_high_watermark(node(id)->log));
    ASSERT_CMP(hw, >=, upto);
    uint8_t *ref = NULL;
    size_t ref_len = 0;
    struct log_stats st = {0};
    for (int32_t id = 1; id <= NODES; id++) {
        if (!node(id)->up || id == W.removed)
            continue;
        size_t len;
        uint8_t *b = read_log(node(id)->log, hw, &len);
        if (!ref) {
            ref = b;
            ref_len = len;
            st = walk(b, len, 0);
            ASSERT_EQ(st.next, hw);
            continue;
        }
        ASSERT_EQ(len, ref_len);
        ASSERT_MEMEQ(b, ref, len);
        mem_free(b);
    }
    mem_free(ref);
    return st;
}

TEST_T(raft_replica_replicates_1000_batches_identically, 120)
{
    world_init();
    int32_t l = wait_leader(0);
    static struct prop props[1000];
    for (int i = 0; i < 1000; i++) {
        props[i] = propose(l, i);
        if (i % 25 == 24)
            step();
        ASSERT_EQ(leader(), l); /* a quiet network keeps its leader */
    }
    wait_commit_all(props[999].last);
    run_ms(200); /* heartbeats carry the commit index to the followers' HW */
    for (int i = 0; i < 1000; i++)
        ASSERT_EQ(replica_proposal_state(node(l)->rp, props[i].last, props[i].term),
                  REPLICA_COMMITTED);
    struct log_stats st = compare_logs(props[999].last + 1);
    ASSERT_EQ(st.data, 1000);
    ASSERT_CMP(st.noop, >=, 1); /* the leader's first entry */
    for (int32_t id = 1; id <= NODES; id++) {
        ASSERT_EQ(plog_high_watermark(node(id)->log), props[999].last + 1);
        ASSERT_EQ(replica_failed(node(id)->rp), 0);
    }
    /* APPENDs were bounded by msg_bytes_max (16 KiB; batches are at most ~330 bytes) */
    ASSERT_CMP(W.max_append_entries, <=, 16 * 1024 / 61 + 1);
    ASSERT_CMP(W.append_entries_sent, >=, 2000);
    struct replica_status s;
    replica_status(node(l)->rp, &s);
    ASSERT_EQ(s.role, RAFT_LEADER);
    ASSERT_EQ(s.leader, l);
    ASSERT_EQ(s.n_peers, 2);
    for (size_t i = 0; i < s.n_peers; i++)
        ASSERT_EQ(s.match[i], props[999].last);
    for (int32_t id = 1; id <= NODES; id++)
        ASSERT_EQ(W.commit_seen[id], props[999].last);
    ASSERT_CMP(W.commit_calls, >=, 3);

    /* leadership moves on request; the log stays one */
    int32_t to = l % NODES + 1;
    ASSERT_EQ(replica_transfer_leader(node(l)->rp, to), 0);
    for (int i = 0; i < 200 && leader() != to; i++)
        step();
    ASSERT_EQ(leader(), to);
    struct prop p = propose(to, 5000);
    ASSERT_CMP(p.term, >, props[999].term);
    wait_commit_all(p.last);
    run_ms(200);
    st = compare_logs(p.last + 1);
    ASSERT_EQ(st.data, 1001);
    ASSERT_CMP(st.noop, >=, 2);
    world_free();
}

TEST_T(raft_replica_cut_off_leader_is_truncated_after_heal, 120)
{
    world_init();
    int32_t l = wait_leader(0);
    struct prop p = {0};
    for (int i = 0; i < 20; i++)
        p = propose(l, i);
    wait_commit_all(p.last);
    int64_t committed = p.last;

    cut_off(l, true);
    struct prop lost[5];
    for (int i = 0; i < 5; i++)
        lost[i] = propose(l, 100 + i);
    ASSERT_EQ(raft_last_index(core(l)), lost[4].last);
    /* and a voter change that will be cut away too: its side record must go with it */
    int32_t two[2] = {l, l % NODES + 1};
    ASSERT_EQ(replica_propose_conf(node(l)->rp, two, 2), 0);
    ASSERT_EQ(raft_conf_index(core(l)), lost[4].last + 1);
    {
        int dfd = open(node(l)->dir, O_RDONLY | O_DIRECTORY);
        struct conflog cl;
        ASSERT_EQ(conflog_load(&cl, dfd, NULL), 0);
        ASSERT_EQ(cl.n, 1);
        ASSERT_EQ(cl.r[0].index, lost[4].last + 1);
        conflog_free(&cl);
        close(dfd);
    }
    int32_t l2 = wait_leader(l);
    ASSERT_CMP(raft_term(core(l2)), >, lost[0].term);
    run_ms(400); /* CheckQuorum: the old leader notices it lost its quorum */
    ASSERT_NE(raft_role(core(l)), RAFT_LEADER);
    struct prop q = {0};
    for (int i = 0; i < 10; i++)
        q = propose(l2, 200 + i);
    int32_t other = 0;
    for (int32_t id = 1; id <= NODES; id++)
        if (id != l && id != l2)
            other = id;
    for (int i = 0; i < 400 && raft_commit(core(l2)) < q.last; i++)
        step();
    ASSERT_CMP(raft_commit(core(other)), >=, committed);
    ASSERT_EQ(raft_commit(core(l)), committed); /* nothing of its suffix ever committed */
    ASSERT_EQ(raft_conf(core(l))->n_old, NODES);   /* still in its uncommitted joint config */
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(replica_proposal_state(node(l)->rp, lost[i].last, lost[i].term),
                  REPLICA_PENDING);

    cut_off(l, false);
    wait_commit_all(q.last);
    run_ms(200);
    struct log_stats st = compare_logs(q.last + 1);
    ASSERT_EQ(st.data, 30);
    for (int i = 0; i < 5; i++) /* replaced by the new leader's entries, then committed over */
        ASSERT_EQ(replica_proposal_state(node(l)->rp, lost[i].last, lost[i].term), REPLICA_LOST);
    ASSERT_EQ(raft_conf_index(core(l)), -1); /* the joint config was cut away */
    ASSERT_EQ(raft_conf(core(l))->n_voters, NODES);
    /* the files agree with the cores */
    for (int32_t id = 1; id <= NODES; id++) {
        int dfd = open(node(id)->dir, O_RDONLY | O_DIRECTORY);
        ASSERT_CMP(dfd, >=, 0);
        struct raft_hard_state hs;
        ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
        ASSERT_EQ(hs.term, raft_term(core(id)));
        ASSERT_EQ(hs.vote, raft_vote(core(id)));
        ASSERT_CMP(hs.commit, <=, raft_commit(core(id)));
        struct conflog cl;
        bool torn;
        ASSERT_EQ(conflog_load(&cl, dfd, &torn), 0);
        ASSERT(!torn);
        ASSERT_EQ(cl.n, 0);
        conflog_free(&cl);
        close(dfd);
    }
    world_free();
}

/* ---- crash: every storage call on one node's files does nothing from now on ---- */

static const char *crash_dir;

static bool crashed_fd(int fd)
{
    char link[64], path[1024];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n < 0)
        return false;
    path[n] = 0;
    size_t k = strlen(crash_dir);
    return strncmp(path, crash_dir, k) == 0 && (path[k] == 0 || path[k] == '/');
}

static ssize_t crash_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return crashed_fd(fd) ? (ssize_t)n : pwrite(fd, buf, n, off);
}
static int crash_fdatasync(int fd)
{
    return crashed_fd(fd) ? (errno = EIO, -1) : fdatasync(fd);
}
static int crash_fsync(int fd)
{
    return crashed_fd(fd) ? (errno = EIO, -1) : fsync(fd);
}
static int crash_ftruncate(int fd, off_t len)
{
    return crashed_fd(fd) ? 0 : ftruncate(fd, len);
}
static int crash_openat(int dirfd, const char *name, int flags, mode_t mode)
{
    return crashed_fd(dirfd) ? (errno = EIO, -1) : openat(dirfd, name, flags, mode);
}
static int crash_renameat(int od, const char *on, int nd, const char *nn)
{
    return crashed_fd(od) ? (errno = EIO, -1) : renameat(od, on, nd, nn);
}
static int crash_unlinkat(int dirfd, const char *name, int flags)
{
    return crashed_fd(dirfd) ? (errno = EIO, -1) : unlinkat(dirfd, name, flags);
}

static const struct storage_io crash_io = {
    crash_pwrite, crash_fdatasync, crash_fsync,    crash_ftruncate,
    crash_openat, crash_renameat,  crash_unlinkat, NULL};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What the disk keeps of a crashed node's log: the batches below `durable`, then a torn
 * fragment of the next one. */
static void cut_log(const char *dir, int64_t durable)
{
    DIR *d = opendir(dir);
    ASSERT(d);
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256)
        if (io_has_suffix(de->d_name, ".log"))
            names[n++] = mem_strdup(de->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof(names[0]), cmp_str);
    bool cut = false;
    for (int i = 0; i < n; i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        if (cut) {
            ASSERT_EQ(unlink(path), 0);
            mem_free(names[i]);
            continue;
        }
        int fd = open(path, O_RDWR);
        ASSERT_CMP(fd, >=, 0);
        struct stat stt;
        ASSERT_EQ(fstat(fd, &stt), 0);
        off_t pos = 0;
        while (pos + KBATCH_HEADER_SIZE <= stt.st_size) {
            uint8_t h[KBATCH_HEADER_SIZE];
            ASSERT_EQ(pread(fd, h, sizeof(h), pos), (ssize_t)sizeof(h));
            struct kbatch_header kh;
            kbatch_parse_header(h, &kh);
            if (kh.base_offset >= durable) {
                /* keep a torn piece of the first batch past the durable point */
                ASSERT_EQ(ftruncate(fd, pos + KBATCH_HEADER_SIZE / 2), 0);
                cut = true;
                break;
            }
            pos += (off_t)kbatch_size(&kh);
        }
        close(fd);
        mem_free(names[i]);
    }
}

static void crash_node(int32_t id)
{
    struct tnode *n = node(id);
    int64_t durable = plog_durable_offset(n->log);
    crash_dir = n->dir;
    storage_io_set(&crash_io);
    replica_close(n->rp); /* its commit-hint write fails: nothing reaches the disk */
    plog_close(n->log);   /* its syncs fail: not marked clean */
    storage_io_set(NULL);
    n->rp = NULL;
    n->log = NULL;
    n->up = false;
    cut_log(n->dir, durable);
}

TEST_T(raft_replica_reopens_after_clean_close_and_crash, 120)
{
    world_init();
    int32_t l = wait_leader(0);
    struct prop p = {0};
    for (int i = 0; i < 50; i++)
        p = propose(l, i);
    wait_commit_all(p.last);
    run_ms(100);

    /* clean close and reopen of a follower */
    int32_t f = l % NODES + 1;
    int64_t term = raft_term(core(f)), last = raft_last_index(core(f));
    int32_t vote = raft_vote(core(f));
    close_node(f);
    for (int i = 50; i < 250; i++) { /* ~40 KiB: its catch-up takes several APPENDs */
        p = propose(l, i);
        if (i % 25 == 0)
            step();
    }
    run_ms(50);
    W.max_append_bytes = 0;
    ASSERT_EQ(open_node(f, true), 0);
    ASSERT_EQ(raft_term(core(f)), term);
    ASSERT_EQ(raft_vote(core(f)), vote);
    ASSERT_EQ(raft_last_index(core(f)), last);
    ASSERT_CMP(raft_commit(core(f)), >=, 0); /* the commit hint written at close */
    ASSERT_EQ(plog_high_watermark(node(f)->log), raft_commit(core(f)) + 1);
    wait_commit_all(p.last);
    run_ms(200);
    compare_logs(p.last + 1);
    /* APPENDs are bounded by msg_bytes_max (16 KiB), overshooting by at most one batch */
    ASSERT_CMP(W.max_append_bytes, >, 12 * 1024);
    ASSERT_CMP(W.max_append_bytes, <=, 16 * 1024 + 400);

    /* crash the leader with entries in flight: some appended, not yet durable */
    l = leader();
    for (int i = 80; i < 90; i++)
        p = propose(l, i);
    /* no settle: the proposals are written but their sync has not been waited for */
    int64_t l_term = raft_term(core(l));
    int32_t l_vote = raft_vote(core(l));
    int64_t l_last = raft_last_index(core(l));
    int64_t l_durable = plog_durable_offset(node(l)->log);
    ASSERT_CMP(l_durable, <=, l_last); /* something is still in flight */
    crash_node(l);
    int32_t l2 = wait_leader(l);
    struct prop q = {0};
    for (int i = 100; i < 120; i++)
        q = propose(l2, i);
    ASSERT_EQ(open_node(l, false), 0);
    /* it kept what was durable and lost the rest (the torn batch is cut by recovery) */
    ASSERT_EQ(raft_last_index(core(l)), l_durable - 1);
    ASSERT_EQ(raft_term(core(l)), l_term);
    ASSERT_EQ(raft_vote(core(l)), l_vote);
    wait_commit_all(q.last);
    run_ms(200);
    struct log_stats st = compare_logs(q.last + 1);
    ASSERT_CMP(st.data, >=, 270);
    ASSERT_EQ(raft_last_index(core(l)), raft_last_index(core(l2)));
    world_free();
}

TEST_T(raft_replica_config_change_survives_reopen, 120)
{
    world_init();
    int32_t l = wait_leader(0);
    int32_t gone = l % NODES + 1;
    int32_t stay[2], k = 0;
    for (int32_t id = 1; id <= NODES; id++)
        if (id != gone)
            stay[k++] = id;
    ASSERT_EQ(replica_propose_conf(node(l)->rp, stay, 2), 0);
    W.removed = gone;
    for (int i = 0; i < 400 && (raft_conf(core(l))->n_voters != 2 ||
                                raft_conf_is_joint(raft_conf(core(l))) ||
                                raft_commit(core(l)) < raft_conf_index(core(l)));
         i++)
        step();
    ASSERT_EQ(raft_conf(core(l))->n_voters, 2);
    ASSERT(!raft_conf_is_joint(raft_conf(core(l))));
    int64_t conf_index = raft_conf_index(core(l));
    struct prop p = propose(l, 1);
    wait_commit_all(p.last);
    run_ms(200);
    compare_logs(p.last + 1); /* the two config entries are record-less control batches */

    /* the other remaining voter restarts: it must come back with the 2-voter configuration */
    int32_t f = stay[0] == l ? stay[1] : stay[0];
    close_node(f);
    ASSERT_EQ(open_node(f, true), 0);
    ASSERT_EQ(raft_conf_index(core(f)), conf_index);
    ASSERT_EQ(raft_conf(core(f))->n_voters, 2);
    ASSERT(!raft_conf_has(raft_conf(core(f)), gone));
    /* its side file holds the joint and the final configuration, keyed by offset */
    int dfd = open(node(f)->dir, O_RDONLY | O_DIRECTORY);
    struct conflog cl;
    ASSERT_EQ(conflog_load(&cl, dfd, NULL), 0);
    ASSERT_EQ(cl.n, 2);
    ASSERT(raft_conf_is_joint(&cl.r[0].conf));
    ASSERT_EQ(cl.r[1].index, conf_index);
    conflog_free(&cl);
    close(dfd);

    /* and the removed voter is added back */
    l = wait_leader(0);
    int32_t all[NODES] = {1, 2, 3};
    int rc = -ERR_BUSY;
    for (int i = 0; i < 100 && rc == -ERR_BUSY; i++) {
        rc = replica_propose_conf(node(l)->rp, all, NODES);
        if (rc == -ERR_BUSY)
            step();
    }
    ASSERT_EQ(rc, 0);
    for (int i = 0; i < 400 && (raft_conf(core(l))->n_voters != 3 ||
                                raft_conf_is_joint(raft_conf(core(l))) ||
                                raft_commit(core(l)) < raft_conf_index(core(l)));
         i++)
        step();
    ASSERT_EQ(raft_conf(core(gone))->n_voters, 3);
    W.removed = 0;
    p = propose(l, 2);
    wait_commit_all(p.last);
    run_ms(200);
    compare_logs(p.last + 1);
    close_node(gone);
    ASSERT_EQ(open_node(gone, true), 0);
    ASSERT_EQ(raft_conf(core(gone))->n_voters, 3);
    ASSERT_EQ(raft_conf_index(core(gone)), raft_conf_index(core(l)));
    world_free();
}

/* The hard state is stored in place, alternating between two slots: the newest valid slot is
 * the state, a torn newest slot leaves the one before it, an older release's single record is
 * read and replaced by the two-slot layout at the next store. */
TEST(raft_replica_hard_state_two_slots_in_place)
{
    const char *dir = su_dir("hs2");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, RAFT_HARD_STATE_FILE);
    struct raft_hard_state hs;
    ASSERT_EQ(raft_hard_state_store(dfd, &(struct raft_hard_state){3, 1, 10}), 0);
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ(st.st_size, RAFT_HARD_STATE_FILE_SIZE);
    ino_t ino = st.st_ino;
    ASSERT_EQ(raft_hard_state_store(dfd, &(struct raft_hard_state){4, RAFT_NONE, 10}), 0);
    ASSERT_EQ(raft_hard_state_store(dfd, &(struct raft_hard_state){4, 2, 12}), 0);
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ(st.st_ino, ino); /* in place: no rename */
    ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
    ASSERT_EQ(hs.term, 4);
    ASSERT_EQ(hs.vote, 2);
    ASSERT_EQ(hs.commit, 12);
    /* the third store went to slot 0: tear it, the second store's state remains */
    int fd = open(path, O_RDWR);
    uint8_t b = 0xff;
    ASSERT_EQ(pwrite(fd, &b, 1, 20), 1);
    ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
    ASSERT_EQ(hs.term, 4);
    ASSERT_EQ(hs.vote, RAFT_NONE);
    ASSERT_EQ(hs.commit, 10);
    /* the next store overwrites the torn slot */
    ASSERT_EQ(raft_hard_state_store(dfd, &(struct raft_hard_state){5, 1, 12}), 0);
    ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
    ASSERT_EQ(hs.term, 5);
    /* both slots bad: corruption */
    ASSERT_EQ(pwrite(fd, &b, 1, 20), 1);
    ASSERT_EQ(pwrite(fd, &b, 1, 20 + RAFT_HARD_STATE_SIZE), 1);
    ASSERT_EQ(raft_hard_state_load(dfd, &hs), -ERR_CORRUPT);
    close(fd);
    /* an older release's file: one 32-byte record */
    ASSERT_EQ(raft_hard_state_store(dfd, &(struct raft_hard_state){9, 3, 40}), 0);
    fd = open(path, O_RDWR);
    uint8_t rec[RAFT_HARD_STATE_FILE_SIZE];
    ASSERT_EQ(pread(fd, rec, sizeof(rec), 0), (ssize_t)sizeof(rec));
    int slot = rec[11] == 9 ? 0 : 1; /* the term's low byte */
    ASSERT_EQ(pwrite(fd, rec + slot * RAFT_HARD_STATE_SIZE, RAFT_HARD_STATE_SIZE, 0),
              RAFT_HARD_STATE_SIZE);
    ASSERT_EQ(ftruncate(fd, RAFT_HARD_STATE_SIZE), 0);
    close(fd);
    ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
    ASSERT_EQ(hs.term, 9);
    ASSERT_EQ(hs.vote, 3);
    ASSERT_EQ(raft_hard_state_store(dfd, &(struct raft_hard_state){10, RAFT_NONE, 40}), 0);
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ(st.st_size, RAFT_HARD_STATE_FILE_SIZE);
    ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
    ASSERT_EQ(hs.term, 10);
    close(dfd);
}

TEST(raft_replica_corrupt_hard_state_fails_open)
{
    W.fl = NULL;
    const char *dir = su_dir("hs");
    struct plog_config cfg = su_config();
    struct plog *log = su_open(dir, &cfg, true, NULL);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ASSERT_EQ(raft_hard_state_store(dfd, &(struct raft_hard_state){7, 2, -1}), 0);
    struct replica_options o = options(1);
    struct replica *rp = NULL;
    ASSERT_EQ(replica_open(log, &o, 0, &rp), 0);
    ASSERT_EQ(raft_term(replica_raft(rp)), 7);
    ASSERT_EQ(raft_vote(replica_raft(rp)), 2);
    replica_close(rp);

    /* one flipped bit */
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, RAFT_HARD_STATE_FILE);
    int fd = open(path, O_RDWR);
    uint8_t b;
    ASSERT_EQ(pread(fd, &b, 1, 11), 1);
    b ^= 0x10;
    ASSERT_EQ(pwrite(fd, &b, 1, 11), 1);
    ASSERT_EQ(replica_open(log, &o, 0, &rp), -ERR_CORRUPT);
    /* cut short */
    ASSERT_EQ(ftruncate(fd, 20), 0);
    ASSERT_EQ(replica_open(log, &o, 0, &rp), -ERR_CORRUPT);
    close(fd);
    /* missing: term 0, no vote */
    ASSERT_EQ(unlink(path), 0);
    ASSERT_EQ(replica_open(log, &o, 0, &rp), 0);
    ASSERT_EQ(raft_term(replica_raft(rp)), 0);
    ASSERT_EQ(raft_vote(replica_raft(rp)), RAFT_NONE);
    replica_close(rp);
    close(dfd);
    plog_close(log);
}

TEST(raft_replica_conflog_drops_torn_tail_and_truncates)
{
    const char *dir = su_dir("cl");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    struct conflog cl;
    bool torn = true;
    ASSERT_EQ(conflog_load(&cl, dfd, &torn), 0);
    ASSERT(!torn);
    struct raft_conf c = {.n_voters = 2, .voters = {1, 2}};
    ASSERT_EQ(conflog_append(&cl, dfd, 5, 1, &c), 0);
    c.voters[1] = 3;
    ASSERT_EQ(conflog_append(&cl, dfd, 9, 2, &c), 0);
    ASSERT_EQ(conflog_append(&cl, dfd, 12, 2, &c), 0);
    conflog_free(&cl);
    /* a torn tail: the last record loses its last byte */
    int64_t size = su_file_size(dir, RAFT_CONF_LOG_FILE);
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, RAFT_CONF_LOG_FILE);
    ASSERT_EQ(truncate(path, size - 1), 0);
    ASSERT_EQ(conflog_load(&cl, dfd, &torn), 0);
    ASSERT(torn);
    ASSERT_EQ(cl.n, 2);
    ASSERT_EQ(cl.r[1].index, 9);
    ASSERT_EQ(cl.r[1].conf.voters[1], 3);
    ASSERT_EQ(conflog_find(&cl, 8), 0);
    ASSERT_EQ(conflog_find(&cl, 4), -1);
    ASSERT_EQ(conflog_rewrite(&cl, dfd), 0);
    ASSERT_EQ(conflog_append(&cl, dfd, 10, 2, &c), 0);
    ASSERT_EQ(conflog_truncate(&cl, dfd, 9), 0);
    ASSERT_EQ(cl.n, 1);
    conflog_free(&cl);
    ASSERT_EQ(conflog_load(&cl, dfd, &torn), 0);
    ASSERT(!torn);
    ASSERT_EQ(cl.n, 1);
    ASSERT_EQ(cl.r[0].index, 5);
    conflog_free(&cl);
    close(dfd);
}

TEST(raft_replica_control_batch_is_valid_and_empty)
{
    uint8_t b[KBATCH_HEADER_SIZE];
    kbatch_build_empty_control(b);
    ASSERT_EQ(kbatch_validate(b, sizeof(b), true, false, 0), 0);
    ASSERT(kbatch_crc_ok(b, sizeof(b)));
    struct kbatch_header h;
    kbatch_parse_header(b, &h);
    ASSERT(kbatch_is_control(&h));
    ASSERT_EQ(h.records_count, 0);
    ASSERT_EQ(h.last_offset_delta, 0);
    ASSERT_EQ(h.producer_id, -1);
    ASSERT_EQ(h.batch_length, KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD);
    ASSERT_EQ(kbatch_compression(&h), KCOMPRESSION_NONE);
}

/* ---- a failed fdatasync on one follower ---- */

static int fail_fdatasync(int fd)
{
    return crashed_fd(fd) ? (errno = EIO, -1) : fdatasync(fd);
}

TEST_T(raft_replica_failed_fsync_stops_acknowledging, 120)
{
    world_init();
    int32_t l = wait_leader(0);
    struct prop p = {0};
    for (int i = 0; i < 10; i++)
        p = propose(l, i);
    wait_commit_all(p.last);
    int32_t f = l % NODES + 1;
    int64_t before = p.last;
    struct storage_io io = storage_io_default;
    io.fdatasync = fail_fdatasync;
    crash_dir = node(f)->dir;
    storage_io_set(&io);
    for (int i = 10; i < 20; i++)
        p = propose(l, i);
    run_ms(300);
    ASSERT_EQ(replica_failed(node(f)->rp), -EIO);
    ASSERT(plog_fenced(node(f)->log));
    /* it holds the entries (written) but never acknowledged them as durable */
    ASSERT_CMP(raft_durable_index(core(f)), <=, before);
    ASSERT_CMP(raft_match_index(core(l), f), <=, before);
    struct replica_status st;
    replica_status(node(f)->rp, &st);
    ASSERT_EQ(st.failed, -EIO);
    ASSERT_CMP(st.durable, <=, before);
    /* the two others commit without it */
    ASSERT_EQ(raft_commit(core(l)), p.last);
    ASSERT_EQ(replica_step(node(f)->rp, &(struct raft_msg){.type = RAFT_MSG_HEARTBEAT}),
              -ERR_FENCED);
    storage_io_set(NULL);
    /* reopened on a healthy disk it catches up */
    close_node(f);
    ASSERT_EQ(open_node(f, false), 0);
    for (int i = 20; i < 30; i++)
        p = propose(leader(), i);
    wait_commit_all(p.last);
    run_ms(200);
    struct log_stats ls = compare_logs(p.last + 1);
    ASSERT_EQ(ls.data, 30);
    world_free();
}

/* ---- entries from the network are checked before they reach the log ---- */

static int step_one(struct replica *rp, struct raft_entry e)
{
    struct raft_msg m = {.type = RAFT_MSG_APPEND,
                         .from = 1,
                         .to = 2,
                         .term = 1,
                         .index = -1,
                         .log_term = 0,
                         .commit = -1,
                         .last = e.last,
                         .entries = &e,
                         .n_entries = 1};
    return replica_step(rp, &m);
}

TEST(raft_replica_rejects_malformed_entries)
{
    memset(&W, 0, sizeof(W));
    const char *dir = su_dir("bad");
    struct plog_config cfg = su_config();
    struct plog *log = su_open(dir, &cfg, true, NULL); /* no flusher: syncs run inline */
    struct replica_options o = options(2);
    o.data = NULL;
    o.on_commit = NULL;
    struct replica *rp = NULL;
    ASSERT_EQ(replica_open(log, &o, 0, &rp), 0);
    size_t len;
    uint8_t *b = su_batch(3, 10, 1000, 7, &len);
    uint8_t *bad = mem_dup(b, len);
    struct raft_entry good = {.first = 0, .last = 2, .term = 1, .kind = RAFT_ENTRY_DATA,
                              .payload = b, .len = len};

    bad[len - 1] ^= 1; /* CRC */
    struct raft_entry e = good;
    e.payload = bad;
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    e = good; /* offsets it does not cover */
    e.last = 5;
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    e = good; /* cut short */
    e.len = len - 1;
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    e = good; /* shorter than a header */
    e.len = 20;
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    uint8_t ctl[KBATCH_HEADER_SIZE]; /* a control batch posing as data */
    kbatch_build_empty_control(ctl);
    e = (struct raft_entry){.first = 0, .last = 0, .term = 1, .kind = RAFT_ENTRY_DATA,
                            .payload = ctl, .len = sizeof(ctl)};
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    e.kind = RAFT_ENTRY_NOOP; /* a NOOP carries nothing */
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    e.len = 0;
    e.payload = NULL;
    e.last = 1;
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    e = (struct raft_entry){.first = 0, .last = 1, .term = 1, .kind = RAFT_ENTRY_CONFIG,
                            .payload = ctl, .len = 4};
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    e.kind = 9;
    e.last = 0;
    ASSERT_EQ(step_one(rp, e), -ERR_INVALID);
    ASSERT_EQ(plog_end_offset(log), 0);
    ASSERT_EQ(W.nq, 0);

    /* the good one is written, synced (inline) and acknowledged */
    ASSERT_EQ(step_one(rp, good), 0);
    ASSERT_EQ(plog_end_offset(log), 3);
    ASSERT_EQ(plog_durable_offset(log), 3);
    ASSERT_EQ(raft_durable_index(replica_raft(rp)), 2);
    bool acked = false;
    for (size_t i = 0; i < W.nq; i++) {
        const struct raft_msg *m = &W.q[i]->m;
        if (m->type == RAFT_MSG_APPEND_RESP && !m->reject && m->index == 2)
            acked = true;
        mem_free(W.q[i]);
    }
    ASSERT(acked);
    W.nq = 0;
    size_t got;
    uint8_t *stored = read_log(log, 3, &got);
    ASSERT_EQ(got, len);
    ASSERT_MEMEQ(stored + 21, b + 21, len - 21); /* as sent, but for offset and epoch */
    struct kbatch_header h;
    kbatch_parse_header(stored, &h);
    ASSERT_EQ(h.partition_leader_epoch, 1);
    mem_free(stored);
    mem_free(bad);
    mem_free(b);
    replica_close(rp);
    plog_close(log);
    mem_free(W.q);
}

/* ---- log start: compaction (retention) and install ---- */

/* The live logs (but `skip`) are byte-identical over [from, smallest HW), HW reaching upto. */
static void compare_logs_from(int64_t from, int64_t upto, int32_t skip)
{
    int64_t hw = INT64_MAX;
    for (int32_t id = 1; id <= NODES; id++)
        if (node(id)->up && id != skip)
            hw = MIN(hw, plog_high_watermark(node(id)->log));
    ASSERT_CMP(hw, >=, upto);
    uint8_t *ref = NULL;
    size_t ref_len = 0;
    for (int32_t id = 1; id <= NODES; id++) {
        if (!node(id)->up || id == skip)
            continue;
        ASSERT_EQ(plog_start_offset(node(id)->log), from);
        size_t len;
        uint8_t *b = read_log(node(id)->log, hw, &len);
        if (!ref) {
            ref = b;
            ref_len = len;
            ASSERT_EQ(walk(b, len, from).next, hw);
            continue;
        }
        ASSERT_EQ(len, ref_len);
        ASSERT_MEMEQ(b, ref, len);
        mem_free(b);
    }
    mem_free(ref);
}

static int64_t compact(int32_t id, int64_t to)
{
    ASSERT_EQ(replica_compact(node(id)->rp, to), 0);
    int64_t start = plog_start_offset(node(id)->log);
    ASSERT_EQ(raft_log_start(core(id)), start);
    return start;
}

TEST_T(raft_replica_compaction_is_clamped_and_keeps_the_prev_term_across_reopen, 120)
{
    world_init();
    int32_t l = wait_leader(0);
    struct prop p = {0};
    for (int i = 0; i < 30; i++)
        p = propose(l, i);
    wait_commit_all(p.last);
    run_ms(100);
    /* a new term: its leader's first entry (a NOOP) starts a term range */
    int32_t to = l % NODES + 1;
    int64_t old_term = raft_term(core(l));
    ASSERT_EQ(replica_transfer_leader(node(l)->rp, to), 0);
    for (int i = 0; i < 200 && leader() != to; i++)
        step();
    ASSERT_EQ(leader(), to);
    int64_t noop = p.last + 1;
    ASSERT_EQ(raft_term_at(core(to), p.last), old_term);
    ASSERT_CMP(raft_term_at(core(to), noop), >, old_term);
    struct prop q = propose(to, 100);
    wait_commit_all(q.last);
    run_ms(200);
    for (int32_t id = 1; id <= NODES; id++) {
        int64_t s = compact(id, noop);
        ASSERT_EQ(s, noop);
        /* the log start moves only forward */
        ASSERT_EQ(compact(id, 3), noop);
    }
    /* every replica restarts (clean, then after a crash) with the right prev term, although
     * the first term range now begins exactly at the log start */
    for (int32_t id = 1; id <= NODES; id++) {
        close_node(id);
        ASSERT_EQ(open_node(id, id != 2), 0);
        ASSERT_EQ(raft_log_start(core(id)), noop);
        ASSERT_EQ(raft_term_at(core(id), noop - 1), old_term);
        int dfd = open(node(id)->dir, O_RDONLY | O_DIRECTORY);
        struct raft_log_start ls;
        ASSERT_EQ(raft_log_start_load(dfd, &ls), 0);
        close(dfd);
        const struct raft_log_point *pt = raft_log_start_find(&ls, noop - 1);
        ASSERT(pt);
        ASSERT_EQ(pt->term, old_term);
    }
    l = wait_leader(0);
    struct prop r = propose(l, 200);
    wait_commit_all(r.last);
    run_ms(200);
    compare_logs_from(noop, r.last + 1, 0);
    /* not yet committed: compaction stops at commit + 1 */
    struct prop u = propose(l, 300);
    int64_t commit = raft_commit(core(l));
    ASSERT_CMP(commit, <, u.last);
    int64_t s = compact(l, u.last + 1);
    ASSERT_CMP(s, >, noop);
    ASSERT_CMP(s, <=, commit + 1);
    wait_commit_all(u.last);
    run_ms(200);
    compare_logs_from(noop, u.last + 1, l);
    world_free();
}

TEST_T(raft_replica_follower_below_the_leaders_log_start_is_installed, 120)
{
    world_init();
    int32_t l = wait_leader(0);
    struct prop p = {0};
    for (int i = 0; i < 50; i++)
        p = propose(l, i);
    wait_commit_all(p.last);
    run_ms(100);
    int32_t f = l % NODES + 1;
    int64_t f_end = plog_end_offset(node(f)->log);
    close_node(f);
    /* ~1500 batches while it is away: several 64 KiB segments */
    struct prop mid = {0};
    ASSERT_EQ(1 + 1001 % 4, 2);
    for (int i = 50; i < 1500; i++) {
        p = propose(l, i);
        if (i == 1001)
            mid = p; /* 2 records */
        if (i % 25 == 0)
            step();
    }
    wait_commit_all(p.last);
    run_ms(100);
    /* retention on the two live replicas: everything below mid goes */
    int segs = plog_segment_count(node(l)->log);
    int64_t start = -1;
    for (int32_t id = 1; id <= NODES; id++) {
        if (id == f)
            continue;
        int64_t s = compact(id, mid.last); /* inside a batch: rounded down to its start */
        ASSERT_EQ(s, mid.first);
        ASSERT(start < 0 || s == start);
        start = s;
    }
    ASSERT_CMP(start, >, f_end);
    ASSERT_CMP(plog_segment_count(node(l)->log), <, segs); /* whole segments were deleted */
    int64_t prev_term = raft_term_at(core(l), start - 1);

    /* the follower comes back: it needs entries the leader no longer has */
    ASSERT_EQ(open_node(f, true), 0);
    ASSERT_EQ(plog_end_offset(node(f)->log), f_end);
    struct prop q = {0};
    for (int i = 0; i < 10; i++)
        q = propose(leader(), 2000 + i);
    wait_commit_all(q.last);
    run_ms(200);
    for (int32_t id = 1; id <= NODES; id++)
        ASSERT_EQ(replica_failed(node(id)->rp), 0);
    ASSERT_EQ(raft_log_start(core(f)), start);
    ASSERT_EQ(raft_term_at(core(f), start - 1), prev_term);
    compare_logs_from(start, q.last + 1, 0);
    /* its configuration at the install point is on disk */
    {
        int dfd = open(node(f)->dir, O_RDONLY | O_DIRECTORY);
        struct conflog cl;
        ASSERT_EQ(conflog_load(&cl, dfd, NULL), 0);
        ASSERT_EQ(cl.n, 1);
        ASSERT_EQ(cl.r[0].index, start - 1);
        ASSERT_EQ(cl.r[0].conf.n_voters, NODES);
        conflog_free(&cl);
        struct raft_log_start ls;
        ASSERT_EQ(raft_log_start_load(dfd, &ls), 0);
        const struct raft_log_point *pt = raft_log_start_find(&ls, start - 1);
        ASSERT(pt && pt->has_conf);
        ASSERT_EQ(pt->term, prev_term);
        close(dfd);
    }
    /* it restarts from the installed log, after a crash too */
    crash_node(f);
    ASSERT_EQ(open_node(f, false), 0);
    ASSERT_EQ(raft_log_start(core(f)), start);
    ASSERT_EQ(raft_term_at(core(f), start - 1), prev_term);
    ASSERT_EQ(raft_conf(core(f))->n_voters, NODES);
    /* and can lead */
    run_ms(100); /* it learns who leads (a TimeoutNow from someone else is ignored) */
    l = leader();
    ASSERT_EQ(replica_transfer_leader(node(l)->rp, f), 0);
    for (int i = 0; i < 200 && leader() != f; i++)
        step();
    ASSERT_EQ(leader(), f);
    struct prop r = propose(f, 3000);
    wait_commit_all(r.last);
    run_ms(200);
    compare_logs_from(start, r.last + 1, 0);
    world_free();
}

TEST(raft_replica_log_start_file_round_trips_and_rejects_damage)
{
    const char *dir = su_dir("ls");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    struct raft_log_start ls;
    ASSERT_EQ(raft_log_start_load(dfd, &ls), 0); /* missing: no point */
    ASSERT_EQ(ls.n, 0);
    ASSERT(!raft_log_start_find(&ls, 0));
    struct raft_log_start w = {.n = 2};
    w.p[0] = (struct raft_log_point){.index = 99, .term = 3};
    w.p[1] = (struct raft_log_point){.index = 499, .term = 5, .has_conf = true};
    w.p[1].conf.n_voters = 3;
    w.p[1].conf.voters[0] = 1;
    w.p[1].conf.voters[1] = 2;
    w.p[1].conf.voters[2] = 4;
    ASSERT_EQ(raft_log_start_store(dfd, &w), 0);
    ASSERT_EQ(raft_log_start_load(dfd, &ls), 0);
    ASSERT_EQ(ls.n, 2);
    ASSERT_EQ(raft_log_start_find(&ls, 99)->term, 3);
    ASSERT(!raft_log_start_find(&ls, 99)->has_conf);
    const struct raft_log_point *p = raft_log_start_find(&ls, 499);
    ASSERT(p && p->has_conf && p->term == 5);
    ASSERT(raft_conf_equal(&p->conf, &w.p[1].conf));
    ASSERT(!raft_log_start_find(&ls, 100));
    /* any flipped byte is corruption, never a silently different point */
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, RAFT_LOG_START_FILE);
    int64_t size = su_file_size(dir, RAFT_LOG_START_FILE);
    ASSERT_CMP(size, >, 8);
    for (int64_t i = 0; i < size; i += 3) {
        int fd = open(path, O_RDWR);
        uint8_t c;
        ASSERT_EQ(pread(fd, &c, 1, i), 1);
        c ^= 0x40;
        ASSERT_EQ(pwrite(fd, &c, 1, i), 1);
        ASSERT_EQ(raft_log_start_load(dfd, &ls), -ERR_CORRUPT);
        c ^= 0x40;
        ASSERT_EQ(pwrite(fd, &c, 1, i), 1);
        close(fd);
    }
    ASSERT_EQ(truncate(path, size - 1), 0);
    ASSERT_EQ(raft_log_start_load(dfd, &ls), -ERR_CORRUPT);
    close(dfd);
}

/* ---- an install that fails part way: before the plog's commit point, and after it ---- */

static const char *fail_name; /* creating or renaming onto this file name fails (EIO) */

static int failname_openat(int dirfd, const char *name, int flags, mode_t mode)
{
    if (fail_name && !strcmp(name, fail_name))
        return errno = EIO, -1;
    return openat(dirfd, name, flags, mode);
}

static int failname_renameat(int od, const char *on, int nd, const char *nn)
{
    if (fail_name && !strcmp(nn, fail_name))
        return errno = EIO, -1;
    return renameat(od, on, nd, nn);
}

static void wait_failed(int32_t id)
{
    for (int i = 0; i < 400 && !replica_failed(node(id)->rp); i++)
        step();
    ASSERT_NE(replica_failed(node(id)->rp), 0);
}

TEST_T(raft_replica_install_failing_part_way_is_finished_after_reopen, 120)
{
    struct storage_io io = storage_io_default;
    io.openat = failname_openat;
    io.renameat = failname_renameat;
    storage_io_set(&io);
    world_init();
    int32_t l = wait_leader(0);
    struct prop p = {0};
    for (int i = 0; i < 50; i++)
        p = propose(l, i);
    wait_commit_all(p.last);
    run_ms(100);
    int32_t f = l % NODES + 1;
    int64_t f_start = compact(f, 20); /* so it has a point of its own to keep */
    ASSERT_CMP(f_start, >, 0);
    int64_t f_prev = raft_term_at(core(f), f_start - 1);
    int64_t f_end = plog_end_offset(node(f)->log);
    close_node(f);
    for (int i = 50; i < 1500; i++) {
        p = propose(l, i);
        if (i % 25 == 0)
            step();
    }
    wait_commit_all(p.last);
    run_ms(100);
    int64_t start = -1;
    for (int32_t id = 1; id <= NODES; id++)
        if (id != f)
            start = compact(id, p.first);
    int64_t term = raft_term_at(core(l), start - 1);

    /* 1: the plog's marker cannot be written: the old log stays as it was */
    fail_name = "log-reset";
    ASSERT_EQ(open_node(f, true), 0);
    wait_failed(f);
    ASSERT_EQ(plog_start_offset(node(f)->log), f_start);
    ASSERT_EQ(plog_end_offset(node(f)->log), f_end);
    ASSERT(!plog_fenced(node(f)->log));
    close_node(f);

    /* 2: the log is reset, but the configuration side file cannot be written */
    fail_name = RAFT_CONF_LOG_FILE;
    ASSERT_EQ(open_node(f, true), 0);
    ASSERT_EQ(raft_log_start(core(f)), f_start);
    ASSERT_EQ(raft_term_at(core(f), f_start - 1), f_prev); /* the old point was kept */
    wait_failed(f);
    ASSERT_EQ(plog_start_offset(node(f)->log), start);
    ASSERT_EQ(plog_end_offset(node(f)->log), start);
    close_node(f);

    /* reopened: the installed log, its prev term and configuration from raft-log-start */
    fail_name = NULL;
    ASSERT_EQ(open_node(f, true), 0);
    ASSERT_EQ(raft_log_start(core(f)), start);
    ASSERT_EQ(raft_term_at(core(f), start - 1), term);
    ASSERT_EQ(raft_conf_index(core(f)), start - 1);
    ASSERT_EQ(raft_conf(core(f))->n_voters, NODES);
    struct prop q = propose(leader(), 5000);
    wait_commit_all(q.last);
    run_ms(200);
    ASSERT_EQ(replica_failed(node(f)->rp), 0);
    compare_logs_from(start, q.last + 1, 0);
    world_free();
    storage_io_set(NULL);
}

/* ---- a group of one voter (the single-node broker) ---- */

static void no_send_cb(struct replica *rp, const struct raft_msg *m, void *data)
{
    (void)rp;
    (void)m;
    (void)data;
    test_fail(__FILE__, __LINE__, "a sole voter sent a message");
}

static void wait_hard_state(struct flusher *fl, struct replica *rp);

/* Options of a sole voter, node 1, sending nothing. */
static struct replica_options sole_options(void)
{
    struct replica_options o;
    replica_options_default(&o, 1, 7);
    o.bootstrap.n_voters = 1;
    o.bootstrap.voters[0] = 1;
    o.send = no_send_cb;
    return o;
}

static struct replica *open_sole(const char *dir, struct flusher *fl, struct plog **log,
                                 int64_t now)
{
    struct plog_config cfg = su_config();
    ASSERT_EQ(plog_open(dir, &cfg, fl, NULL, true, log, NULL), 0);
    struct replica_options o = sole_options();
    struct replica *rp;
    ASSERT_EQ(replica_open(*log, &o, now, &rp), 0);
    replica_tick(rp, now); /* it campaigns at once: no election timeout */
    wait_hard_state(fl, rp);
    ASSERT_EQ(raft_role(replica_raft(rp)), RAFT_LEADER);
    return rp;
}

static int64_t be64_at(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

/* Waits (bounded) until rp's hard state is durable (the flusher syncs it), polling the flusher:
 * a sole voter leads once its vote for itself is. */
static void wait_hard_state(struct flusher *fl, struct replica *rp)
{
    for (int i = 0; i < 500 && replica_hard_state_syncing(rp); i++) {
        struct pollfd p = {.fd = flusher_fd(fl), .events = POLLIN};
        ASSERT_CMP(poll(&p, 1, 20), >=, 0);
        flusher_poll(fl);
    }
    ASSERT(!replica_hard_state_syncing(rp));
}

/* Waits (bounded) until log's durable offset reaches want, polling the flusher. */
static void wait_durable(struct flusher *fl, struct plog *log, int64_t want)
{
    for (int i = 0; i < 500 && plog_durable_offset(log) < want; i++) {
        struct pollfd p = {.fd = flusher_fd(fl), .events = POLLIN};
        ASSERT_CMP(poll(&p, 1, 20), >=, 0);
        flusher_poll(fl);
    }
    ASSERT_CMP(plog_durable_offset(log), >=, want);
}

/* A term change's hard state is written at once and synced by the flusher: the sole voter leads
 * only once that sync returned (its vote for itself counts only then), and the file holds the
 * new term. The first store of a new group lays the file out whole, synchronously. */
TEST_T(raft_replica_hard_state_sync_goes_through_the_flusher, 60)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/hs", test_tmpdir());
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct plog *log;
    struct replica *rp = open_sole(dir, fl, &log, 1000);
    int64_t term1 = raft_term(replica_raft(rp));
    replica_close(rp);
    plog_close(log);

    struct plog_config cfg = su_config();
    ASSERT_EQ(plog_open(dir, &cfg, fl, NULL, true, &log, NULL), 0);
    struct replica_options o = sole_options();
    ASSERT_EQ(replica_open(log, &o, 2000, &rp), 0);
    struct flusher_stats st0, st1;
    flusher_get_stats(fl, &st0);
    replica_tick(rp, 2000);
    ASSERT(replica_hard_state_syncing(rp));
    ASSERT(raft_role(replica_raft(rp)) != RAFT_LEADER); /* not before its vote is durable */
    ASSERT_CMP(raft_term(replica_raft(rp)), >, term1);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ASSERT_CMP(dfd, >=, 0);
    struct raft_hard_state hs;
    ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
    ASSERT_EQ(hs.term, raft_term(replica_raft(rp))); /* written before the sync */
    ASSERT_EQ(hs.vote, 1);
    wait_hard_state(fl, rp);
    flusher_get_stats(fl, &st1);
    ASSERT_CMP(st1.syncs, >, st0.syncs);
    ASSERT_EQ(raft_role(replica_raft(rp)), RAFT_LEADER);
    ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
    ASSERT_EQ(hs.term, raft_term(replica_raft(rp)));
    close(dfd);
    replica_close(rp);
    plog_close(log);
    flusher_stop(fl);
}

/* Counts the fdatasyncs of hard-state files and the syncfs calls; syncfs fails when told. */
static struct {
    int hs_fdatasyncs;
    int syncfs_calls;
    int syncfs_errno;
} hsb;

static int hsb_fdatasync(int fd)
{
    char link[64], path[512];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n > 0) {
        path[n] = 0;
        if (strstr(path, RAFT_HARD_STATE_FILE))
            __atomic_fetch_add(&hsb.hs_fdatasyncs, 1, __ATOMIC_SEQ_CST);
    }
    return fdatasync(fd);
}

static int hsb_syncfs(int fd)
{
    __atomic_fetch_add(&hsb.syncfs_calls, 1, __ATOMIC_SEQ_CST);
    if (hsb.syncfs_errno) {
        errno = hsb.syncfs_errno;
        return -1;
    }
    return syncfs(fd);
}

enum { BATCH_GROUPS = 300 };

/* BATCH_GROUPS sole voters whose hard-state files exist, reopened and ticked at once (a
 * restart): the first 256 take the slots, the rest go to barriers. */
static void open_batch_groups(struct flusher *fl, struct plog **logs, struct replica **rps,
                              char (*dirs)[512])
{
    for (int i = 0; i < BATCH_GROUPS; i++) {
        snprintf(dirs[i], 512, "%s/g%d", test_tmpdir(), i);
        rps[i] = open_sole(dirs[i], fl, &logs[i], 1000); /* the first store lays the file out */
        replica_close(rps[i]);
        plog_close(logs[i]);
    }
    static struct storage_io io;
    io = storage_io_default;
    io.fdatasync = hsb_fdatasync;
    io.syncfs = hsb_syncfs;
    storage_io_set(&io);
    hsb.hs_fdatasyncs = hsb.syncfs_calls = 0;
    struct plog_config cfg = su_config();
    struct replica_options o = sole_options();
    for (int i = 0; i < BATCH_GROUPS; i++) {
        ASSERT_EQ(plog_open(dirs[i], &cfg, fl, NULL, true, &logs[i], NULL), 0);
        ASSERT_EQ(replica_open(logs[i], &o, 2000, &rps[i]), 0);
        replica_tick(rps[i], 2000);
    }
    ASSERT_EQ(replica_hard_state_syncs_in_flight(), 256);
    for (int i = 0; i < BATCH_GROUPS; i++) {
        ASSERT(replica_hard_state_syncing(rps[i]));
        ASSERT_NE(raft_role(replica_raft(rps[i])), RAFT_LEADER); /* nothing reported yet */
    }
}

/* Polls until every group leads or has failed; returns how many lead. */
static int settle_batch_groups(struct flusher *fl, struct replica **rps)
{
    int settled = 0, leaders = 0;
    for (int round = 0; round < 1000 && settled < BATCH_GROUPS; round++) {
        struct pollfd p = {.fd = flusher_fd(fl), .events = POLLIN};
        ASSERT_CMP(poll(&p, 1, 20), >=, 0);
        flusher_poll(fl);
        ASSERT_CMP(replica_hard_state_syncs_in_flight(), <=, 256); /* each holds a descriptor */
        settled = leaders = 0;
        for (int i = 0; i < BATCH_GROUPS; i++) {
            bool leads = raft_role(replica_raft(rps[i])) == RAFT_LEADER;
            leaders += leads;
            settled += leads || replica_failed(rps[i]) != 0;
        }
    }
    ASSERT_EQ(settled, BATCH_GROUPS);
    ASSERT_EQ(replica_hard_state_syncs_in_flight(), 0);
    return leaders;
}

/* Many groups taking a new term at once (a restart): at most 256 hard-state syncs are in flight
 * (each holds a descriptor); the groups beyond the slots write their hard states without one
 * and share barriers (one syncfs each) instead of an fdatasync each; each leads only once its
 * barrier returned, in the term its file holds. */
TEST_T(raft_replica_hard_states_beyond_the_slots_share_a_barrier, 120)
{
    ASSERT(io_syncfs_reports_errors());
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    static struct plog *logs[BATCH_GROUPS];
    static struct replica *rps[BATCH_GROUPS];
    static char dirs[BATCH_GROUPS][512];
    open_batch_groups(fl, logs, rps, dirs);
    ASSERT_EQ(settle_batch_groups(fl, rps), BATCH_GROUPS);
    storage_io_set(NULL);
    ASSERT_CMP(hsb.syncfs_calls, >=, 1);
    ASSERT_CMP(hsb.hs_fdatasyncs, <=, 256); /* the other 44 went by barrier */
    for (int i = 0; i < BATCH_GROUPS; i++) {
        int dfd = open(dirs[i], O_RDONLY | O_DIRECTORY);
        struct raft_hard_state hs;
        ASSERT_EQ(raft_hard_state_load(dfd, &hs), 0);
        close(dfd);
        ASSERT_EQ(hs.term, raft_term(replica_raft(rps[i])));
        ASSERT_EQ(hs.vote, 1);
        replica_close(rps[i]);
        plog_close(logs[i]);
    }
    flusher_stop(fl);
}

/* A failed barrier fails the groups it covered (nothing they wrote is known durable: they must
 * not lead on it); the groups that had slots are not affected. */
TEST_T(raft_replica_failed_barrier_fails_its_groups, 120)
{
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    static struct plog *logs[BATCH_GROUPS];
    static struct replica *rps[BATCH_GROUPS];
    static char dirs[BATCH_GROUPS][512];
    hsb.syncfs_errno = EIO;
    open_batch_groups(fl, logs, rps, dirs);
    int leaders = settle_batch_groups(fl, rps);
    storage_io_set(NULL);
    hsb.syncfs_errno = 0;
    ASSERT_CMP(hsb.syncfs_calls, >=, 1);
    ASSERT_EQ(leaders, 256);
    for (int i = 0; i < BATCH_GROUPS; i++) {
        bool leads = raft_role(replica_raft(rps[i])) == RAFT_LEADER;
        ASSERT_EQ(leads, replica_failed(rps[i]) == 0);
        replica_close(rps[i]);
        plog_close(logs[i]);
    }
    flusher_stop(fl);
}

/* Counts every fdatasync (the kvstore's among them). */
static int kvs_fdatasyncs;
static int kvs_fdatasync(int fd)
{
    __atomic_fetch_add(&kvs_fdatasyncs, 1, __ATOMIC_SEQ_CST);
    return fdatasync(fd);
}

/* The hard state the store holds for dir's replica, or term -1 if none. */
static struct raft_hard_state kv_hard_state(struct kvstore *kv, const char *dir)
{
    struct raft_hard_state hs = {.term = -1};
    uint8_t rec[RAFT_HARD_STATE_SIZE];
    const char *base = strrchr(dir, '/') + 1;
    ssize_t n = kv_get(kv, base, RAFT_HARD_STATE_FILE, rec, sizeof(rec));
    if (n != -ENOENT)
        ASSERT_EQ(raft_hard_state_decode(rec, (size_t)n, &hs), 0);
    return hs;
}

/* Logs that keep their small state in the node's kvstore keep the hard state there too: many
 * sole voters taking a new term at once share a few fdatasyncs of the store's file (no slot,
 * no file of their own), each leads only once its state is durable, a reopen reads it back,
 * and replica_discard removes it. Without a flusher the store syncs at once. */
TEST_T(raft_replica_hard_state_in_the_kvstore, 120)
{
    char kvpath[512];
    snprintf(kvpath, sizeof(kvpath), "%s/kvstore", test_tmpdir());
    struct kvstore *kv;
    ASSERT_EQ(kv_open(kvpath, &kv), 0);
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    static struct plog *logs[BATCH_GROUPS];
    static struct replica *rps[BATCH_GROUPS];
    static char dirs[BATCH_GROUPS][512];
    struct plog_config cfg = su_config();
    cfg.kv = kv;
    struct replica_options o = sole_options();
    static struct storage_io io;
    io = storage_io_default;
    io.fdatasync = kvs_fdatasync;
    storage_io_set(&io);
    for (int i = 0; i < BATCH_GROUPS; i++) {
        snprintf(dirs[i], 512, "%s/k%d", test_tmpdir(), i);
        ASSERT_EQ(plog_open(dirs[i], &cfg, fl, NULL, true, &logs[i], NULL), 0);
        ASSERT_EQ(replica_open(logs[i], &o, 1000, &rps[i]), 0);
    }
    kvs_fdatasyncs = 0;
    for (int i = 0; i < BATCH_GROUPS; i++) {
        replica_tick(rps[i], 1000);
        ASSERT(replica_hard_state_syncing(rps[i]));
        ASSERT_NE(raft_role(replica_raft(rps[i])), RAFT_LEADER);
        /* in the store at once (not yet durable), never in a file */
        ASSERT_EQ(kv_hard_state(kv, dirs[i]).term, raft_term(replica_raft(rps[i])));
    }
    ASSERT_EQ(replica_hard_state_syncs_in_flight(), 0); /* no slot taken */
    ASSERT_EQ(settle_batch_groups(fl, rps), BATCH_GROUPS);
    ASSERT_CMP(kvs_fdatasyncs, >=, 1);
    ASSERT_CMP(kvs_fdatasyncs, <=, 10); /* a batch each, not a sync each */
    ASSERT(kv_synced(kv));
    storage_io_set(NULL);
    int64_t terms[BATCH_GROUPS];
    for (int i = 0; i < BATCH_GROUPS; i++) {
        terms[i] = raft_term(replica_raft(rps[i]));
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", dirs[i], RAFT_HARD_STATE_FILE);
        ASSERT_EQ(access(path, F_OK), -1);
        replica_close(rps[i]);
        plog_close(logs[i]);
    }
    ASSERT_EQ(kv_close(kv), 0);
    flusher_stop(fl);

    /* reopened without a flusher: each state as it was, and the next term stored at once */
    ASSERT_EQ(kv_open(kvpath, &kv), 0);
    cfg.kv = kv;
    for (int i = 0; i < BATCH_GROUPS; i += 37) {
        struct raft_hard_state hs = kv_hard_state(kv, dirs[i]);
        ASSERT_EQ(hs.term, terms[i]);
        ASSERT_EQ(hs.vote, 1);
        struct plog *log;
        struct replica *rp;
        ASSERT_EQ(plog_open(dirs[i], &cfg, NULL, NULL, true, &log, NULL), 0);
        ASSERT_EQ(replica_open(log, &o, 2000, &rp), 0);
        ASSERT_EQ(raft_term(replica_raft(rp)), terms[i]);
        replica_tick(rp, 2000);
        ASSERT_EQ(raft_role(replica_raft(rp)), RAFT_LEADER);
        ASSERT(kv_synced(kv));
        ASSERT_EQ(kv_hard_state(kv, dirs[i]).term, terms[i] + 1);
        replica_close(rp);
        ASSERT_EQ(replica_discard(log), 0);
        ASSERT_EQ(kv_hard_state(kv, dirs[i]).term, -1);
        plog_close(log);
    }
    ASSERT_EQ(kv_close(kv), 0);
}

/* acks=1 (durable false) is visible at once and not synced; acks=all (durable true) is synced at
 * once and visible (committed) only then, and what follows it waits for it; no no-op anywhere;
 * the caller's batch is written in place. */
TEST_T(raft_replica_sole_voter_commits_as_each_proposal_asks, 60)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/sole", test_tmpdir());
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct plog *log;
    struct replica *rp = open_sole(dir, fl, &log, 1000);
    ASSERT_EQ(plog_end_offset(log), 0); /* no no-op */
    int64_t term = raft_term(replica_raft(rp));
    size_t len;
    uint8_t *b = su_batch(3, 10, 1700000000000LL, 1, &len);
    int64_t first, last, t;
    ASSERT_EQ(replica_propose(rp, b, len, 3, false, &first, &last, &t), 0);
    ASSERT_EQ(first, 0);
    ASSERT_EQ(last, 2);
    ASSERT_EQ(plog_high_watermark(log), 3);     /* visible at once */
    ASSERT_EQ(plog_durable_offset(log), 0);     /* and nobody asked for a sync */
    mem_free(b);
    b = su_batch(3, 10, 1700000000001LL, 2, &len);
    ASSERT_EQ(replica_propose(rp, b, len, 3, false, &first, &last, &t), 0);
    ASSERT_EQ(be64_at(b + KBATCH_OFF_BASE_OFFSET), 3); /* written in place: the caller's bytes */
    ASSERT_EQ(plog_high_watermark(log), 6);
    mem_free(b);
    b = su_batch(2, 10, 1700000000002LL, 3, &len);
    int64_t s_last, s_term;
    ASSERT_EQ(replica_propose(rp, b, len, 2, true, &first, &s_last, &s_term), 0);
    ASSERT_EQ(s_term, term);
    mem_free(b);
    b = su_batch(2, 10, 1700000000003LL, 4, &len);
    ASSERT_EQ(replica_propose(rp, b, len, 2, false, &first, &last, &t), 0);
    mem_free(b);
    ASSERT_EQ(last, 9);
    if (plog_durable_offset(log) < 8) { /* the sync runs on the flusher thread */
        ASSERT_EQ(plog_high_watermark(log), 6);
        ASSERT_EQ(replica_proposal_state(rp, s_last, s_term), REPLICA_PENDING);
    }
    wait_durable(fl, log, 8);
    ASSERT_EQ(replica_proposal_state(rp, s_last, s_term), REPLICA_COMMITTED);
    ASSERT_EQ(plog_high_watermark(log), 10); /* and the acks=1 batch behind it with it */
    replica_close(rp);
    plog_close(log);
    /* reopened: leader of a new term at once, everything committed, still no no-op */
    rp = open_sole(dir, fl, &log, 2000);
    ASSERT_CMP(raft_term(replica_raft(rp)), >, term);
    ASSERT_EQ(plog_end_offset(log), 10);
    ASSERT_EQ(plog_high_watermark(log), 10);
    replica_close(rp);
    plog_close(log);
    flusher_stop(fl);
}

static int synced_calls;
static bool synced_saw_leader;

static void count_synced(struct replica *rp, void *data)
{
    (void)data;
    synced_calls++;
    synced_saw_leader = raft_role(replica_raft(rp)) == RAFT_LEADER;
}

/* A sole voter reopened knows its whole log committed before it campaigns (it writes no commit
 * hint: its high watermark used to start from nothing at each restart); once its campaign's
 * hard state is durable it leads, and on_synced tells the owner, who fed no input meanwhile. */
TEST_T(raft_replica_sole_voter_reopens_committed_and_reports_its_sync, 60)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/sole", test_tmpdir());
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct plog *log;
    struct replica *rp = open_sole(dir, fl, &log, 1000);
    for (int i = 0; i < 3; i++) {
        size_t len;
        uint8_t *b = su_batch(2, 10, 1700000000000LL + i, i + 1, &len);
        int64_t first, last, t;
        ASSERT_EQ(replica_propose(rp, b, len, 2, true, &first, &last, &t), 0);
        mem_free(b);
        wait_durable(fl, log, last + 1);
    }
    replica_close(rp);
    plog_close(log);

    struct plog_config cfg = su_config();
    ASSERT_EQ(plog_open(dir, &cfg, fl, NULL, true, &log, NULL), 0);
    struct replica_options o = sole_options();
    o.on_synced = count_synced;
    synced_calls = 0;
    ASSERT_EQ(replica_open(log, &o, 2000, &rp), 0);
    struct replica_status st;
    replica_status(rp, &st);
    ASSERT_NE(st.role, RAFT_LEADER);
    ASSERT_EQ(st.commit, 5);
    ASSERT_EQ(plog_high_watermark(log), 6);
    replica_tick(rp, 2000);
    ASSERT(replica_hard_state_syncing(rp));
    ASSERT_EQ(synced_calls, 0);
    wait_hard_state(fl, rp);
    ASSERT_EQ(synced_calls, 1);
    ASSERT(synced_saw_leader);
    replica_close(rp);
    plog_close(log);
    flusher_stop(fl);
}

/* A committed log that ends in Raft entries (a new leader's no-op) has its high watermark before
 * them, on every replica and across a reopen; data after them moves it past them. */
TEST_T(raft_replica_high_watermark_stops_before_trailing_raft_entries, 120)
{
    world_init();
    int32_t l = wait_leader(0);
    for (int32_t id = 1; id <= NODES; id++)
        ASSERT_EQ(plog_high_watermark(node(id)->log), 0); /* only the no-op at 0 */
    struct prop p = propose(l, 1);
    run_ms(50);
    for (int32_t id = 1; id <= NODES; id++)
        ASSERT_EQ(plog_high_watermark(node(id)->log), p.last + 1);
    /* a new leader: its no-op is committed but stays hidden */
    int32_t to = l == 1 ? 2 : 1;
    ASSERT_EQ(replica_transfer_leader(node(l)->rp, to), 0);
    int32_t l2 = wait_leader(l);
    run_ms(50);
    for (int32_t id = 1; id <= NODES; id++) {
        ASSERT_EQ(plog_end_offset(node(id)->log), p.last + 2);
        ASSERT_EQ(raft_commit(core(id)), p.last + 1);
        ASSERT_EQ(plog_high_watermark(node(id)->log), p.last + 1);
    }
    int32_t f = l2 == 3 ? 1 : 3;
    close_node(f);
    ASSERT_EQ(open_node(f, true), 0);
    ASSERT_EQ(plog_high_watermark(node(f)->log), p.last + 1);
    struct prop q = propose(l2, 2);
    run_ms(50);
    for (int32_t id = 1; id <= NODES; id++)
        ASSERT_EQ(plog_high_watermark(node(id)->log), q.last + 1);
    world_free();
}

/* A full disk (pwrite ENOSPC) at a sole voter: the proposal is refused with -ENOSPC, nothing is
 * fenced or failed, the leader steps down and leads again at once, and the next proposal, once
 * space is back, lands right after what was written before. */
static bool g_full;
static ssize_t full_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (g_full) {
        errno = ENOSPC;
        return -1;
    }
    return storage_io_default.pwrite(fd, buf, n, off);
}

TEST_T(raft_replica_sole_voter_survives_a_full_disk, 60)
{
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/full", test_tmpdir());
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct plog *log;
    struct replica *rp = open_sole(dir, fl, &log, 1000);
    size_t len;
    uint8_t *b = su_batch(3, 10, 1700000000000LL, 1, &len);
    int64_t first, last, term;
    ASSERT_EQ(replica_propose(rp, b, len, 3, false, &first, &last, &term), 0);
    mem_free(b);
    int64_t term1 = raft_term(replica_raft(rp));
    struct storage_io io = storage_io_default;
    io.pwrite = full_pwrite;
    storage_io_set(&io);
    g_full = true;
    b = su_batch(2, 10, 1700000000001LL, 2, &len);
    ASSERT_EQ(replica_propose(rp, b, len, 2, true, &first, &last, &term), -ENOSPC);
    mem_free(b);
    ASSERT_EQ(replica_failed(rp), 0);
    ASSERT(!plog_fenced(log));
    ASSERT_EQ(plog_end_offset(log), 3);
    ASSERT_EQ(raft_last_index(replica_raft(rp)), 2); /* the core's log cut back too */
    ASSERT(raft_role(replica_raft(rp)) != RAFT_LEADER);
    g_full = false;
    storage_io_set(NULL);
    replica_tick(rp, 1010); /* a sole voter campaigns at once */
    wait_hard_state(fl, rp);
    ASSERT_EQ(raft_role(replica_raft(rp)), RAFT_LEADER);
    ASSERT_CMP(raft_term(replica_raft(rp)), >, term1);
    b = su_batch(2, 10, 1700000000002LL, 3, &len);
    ASSERT_EQ(replica_propose(rp, b, len, 2, true, &first, &last, &term), 0);
    mem_free(b);
    ASSERT_EQ(first, 3);
    wait_durable(fl, log, 5);
    ASSERT_EQ(replica_proposal_state(rp, last, term), REPLICA_COMMITTED);
    ASSERT_EQ(plog_high_watermark(log), 5);
    replica_close(rp);
    plog_close(log);
    flusher_stop(fl);
}
