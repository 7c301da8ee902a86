/* The controller runtime (contract in controller/runtime.h).
 *
 * Owns: the metadata plog and the replica bound to it, the committed image, the leader's
 * working image and broker sessions, and the pending commands (struct pending: a local
 * proposal waiting for its fate, or a request forwarded to the leader waiting for its answer,
 * or waiting for a leader to send it to: target RAFT_NONE, sent by redirect()).
 *
 * Invariants:
 *   1. applied <= the replica's commit index, equal outside on_commit unless a log read failed
 *      (then catch_up resumes at the next commit or tick); the committed image holds exactly
 *      the records of [0, applied] (minus the skipped ones), each applied once. Except for an
 *      observer turned voter (maybe_become_voter): its image came from its fetches, so applied
 *      <= joined_applied until its own log's commit passes that (replay resumes above it).
 *   2. work_valid  =>  leading and the working image = committed image + every record of the
 *      log above applied (rebuilt by ensure_work, kept up to date by propose_recs).
 *   3. leading  <=>  the core was leader at the last sync_role, in term lead_term; sessions
 *      are those heard since this node became leader in lead_term.
 *   4. Every pending entry is answered exactly once: it is removed from the array before its
 *      done callback runs (which may submit and so append to the array). A forward taken over
 *      as a local proposal (redirect) leaves the array unanswered and its done goes with the
 *      proposal.
 *   5. A forward holds its encoded request (body); target == RAFT_NONE <=> req_id == 0 (waiting
 *      for a leader); an answer is accepted only from target under req_id.
 *
 * Roles (sync_role, after every input): FOLLOWER/CANDIDATE --elected--> LEADER (working image
 * invalid, sessions reset) --deposed or new term--> FOLLOWER (working image dropped). Pending
 * proposals outlive a role change: their fate is read from the log, or they time out.
 *
 * Deciding: settle() runs after every commit advance and every tick; expire() and redirect()
 * on ticks (redirect also when a target answers NOT_CONTROLLER).
 *
 * Observer mode (observer = true, runtime.h "Observers"): rp and log are NULL, leading is
 * never set; the image is built by observe_apply from fetched batches (the same apply_batch as
 * replay), applied <= obs_commit (invariant 1 with the leader's reported commit). Fetch states:
 * IDLE (obs_req_id 0, next one due at obs_next_ms) --observe_poll--> IN_FLIGHT (obs_req_id,
 * obs_sent_to) --observe_response (answer with that id from that node) or the timeout-->
 * IDLE, with obs_target = the node that answered, the hinted leader, or the next voter.
 *
 * Long-polled fetches: the leader holds a fetch that asks for more than it has committed (the
 * observer is caught up) in `parked`, at most one per observer, and answers it as soon as its
 * commit index moves (commit_cb), or empty after CTL_FETCH_PARK_MS (ticks), or with
 * NOT_CONTROLLER once it no longer leads; so brokers learn of metadata changes within a
 * message's time rather than a poll interval. An observer whose fetch was held polls again at
 * once; one answered empty at once (a leader of an older release) waits CTL_OBSERVE_POLL_MS.
 *
 * Voter changes (runtime.h): drive_voters (leader) moves the group's configuration to the
 * image's VOTERS set; maybe_become_voter turns an observer the set names into a replica with an
 * empty log in opt.meta_dir (marked CTL_JOINED_FILE); maybe_become_observer turns a voter the set
 * leaves out back into an observer once the group no longer needs it. A removed voter that saw
 * the joint configuration but not its commit asks the voters to be (a metadata fetch, whose
 * answer carries the leader's commit: leave_index / leave_confirmed) before it leaves. */
#include "controller/runtime.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "controller/mfetch.h"
#include "kafka/batch.h"
#include "kafka/errors.h"
#include "replication/replica.h"
#include "replication/rpc.h"
#include "storage/io.h"
#include "storage/plog.h"

#define CTL_REQUEST_TIMEOUT_MS 5000
#define CTL_SESSION_TIMEOUT_MS 9000
#define CTL_REPLAY_READ_BYTES (1u << 20)
#define CTL_BATCH_DECOMPRESSED_MAX (64u << 20)
/* Observer mode: the poll interval once caught up; how long an unanswered fetch is waited for
 * (a voter's first answer is lost while it dials back); the bytes asked for per fetch. */
#define CTL_OBSERVE_POLL_MS 100
#define CTL_OBSERVE_TIMEOUT_MS 300
/* Leader: how long a caught-up observer's fetch is held (below the observer's timeout). */
#define CTL_FETCH_PARK_MS 150
#define CTL_FETCH_PARKED_MAX 4096
#define CTL_OBSERVE_FETCH_BYTES (1u << 20)
/* Voter changes: a learner of the metadata group is promoted once its match is within this
 * many entries of the commit (commands keep coming, so "equal" may never hold). */
#define CTL_VOTER_CATCH_UP_SLACK 64
/* In the metadata log's directory of a node that became a voter by a voter change: its log's
 * configuration is the leader's, never a bootstrap one (ctl_runtime_open). */
#define CTL_JOINED_FILE "raft-joined"

struct pending {
    bool forwarded;
    int64_t last; /* proposal: the entry (last, term) */
    int64_t term;
    int32_t target;  /* forward: the leader it went to (RAFT_NONE: waiting for one)... */
    uint64_t req_id; /* ...under this id (0 while waiting) */
    uint8_t *body;   /* forward: the encoded request, sent again to the next leader */
    size_t body_len;
    int32_t tried;      /* forward: the node it last went to (RAFT_NONE: none yet)... */
    int64_t tried_term; /* ...while this node knew that term */
    int64_t deadline_ms;
    struct ctl_answer answer; /* proposal: the outcome once committed */
    bool quorum_wait;  /* VOTERS: answered once the quorum's voters are the image's target... */
    bool committed;    /* ...and its record (if any) committed */
    ctl_done_fn done;
    void *data;
};

struct ctl_runtime {
    int32_t node;
    struct ctl_runtime_options opt;
    struct plog *log;
    struct replica *rp;
    struct ctl_image committed;
    int64_t applied;
    struct ctl_image work;
    bool work_valid;
    bool leading;
    int64_t lead_term;
    struct ctl_sessions sessions;
    struct pending **pend;
    size_t n_pend;
    size_t cap_pend;
    uint64_t next_req_id;
    uint64_t rng;
    int64_t now;
    uint64_t skipped;
    bool closing;
    /* observer mode (ctl_runtime_open_observer): rp and log are NULL */
    bool observer;
    int32_t obs_voters[RAFT_VOTERS_MAX];
    size_t n_obs_voters;
    size_t obs_next_voter; /* round robin over the voters while no leader is known */
    int32_t obs_leader;    /* the leader that answered the last fetch, or RAFT_NONE */
    int32_t obs_target;    /* who the next fetch goes to (RAFT_NONE: the next voter) */
    int64_t obs_term;
    int64_t obs_commit;  /* the highest commit index a leader reported */
    uint64_t obs_req_id; /* the fetch in flight (0: none)... */
    int32_t obs_sent_to; /* ...sent to this node */
    int64_t obs_sent_ms;
    int64_t obs_next_ms;                    /* the next fetch is not sent before */
    char obs_host[CTL_MFETCH_HOST_MAX + 1]; /* this node's cluster address, for the answers */
    int32_t obs_port;
    /* an observer turned voter: the image it brought (its log catches up to it from 0) */
    int64_t joined_applied;
    /* a removed voter waiting to learn that its removal committed (maybe_become_observer) */
    bool leave_confirmed; /* a leader reported a commit at or above the joint configuration */
    int64_t leave_index;  /* the joint configuration's index */
    /* leader: held fetches of caught-up observers (long poll, see above) */
    struct parked_fetch *parked;
    size_t n_parked;
    size_t cap_parked;
};

struct parked_fetch {
    int32_t from;
    uint64_t id;
    int64_t since_ms;
    struct ctl_mfetch_req req;
};

/* A request from another node, answered by a CONTROLLER_RESPONSE. */
struct remote {
    int32_t from;
    uint64_t req_id;
};

void ctl_runtime_options_default(struct ctl_runtime_options *o)
{
    memset(o, 0, sizeof(*o));
    raft_options_default(&o->raft, 0, 0);
    o->request_timeout_ms = CTL_REQUEST_TIMEOUT_MS;
    o->session_timeout_ms = CTL_SESSION_TIMEOUT_MS;
}

static uint64_t next_rand(struct ctl_runtime *rt)
{
    /* splitmix64 */
    uint64_t z = (rt->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static struct kuuid random_uuid(struct ctl_runtime *rt)
{
    struct kuuid u;
    if (getrandom(u.b, sizeof(u.b), GRND_NONBLOCK) != (ssize_t)sizeof(u.b)) {
        uint64_t a = next_rand(rt), b = next_rand(rt);
        memcpy(u.b, &a, 8);
        memcpy(u.b + 8, &b, 8);
    }
    if (ctl_uuid_is_zero(u))
        u.b[15] = 1;
    return u;
}

/* ---- replay: log records into an image ----------------------------------------------------- */

static void skip(struct ctl_runtime *rt, const struct ctl_image *img, int64_t offset,
                 const char *why, int rc)
{
    if (img != &rt->committed)
        return; /* the working image meets the same records again when they commit */
    rt->skipped++;
    log_warn("ctl_record_skipped", "node=%d offset=%lld reason=\"%s\" err=\"%s\"", rt->node,
             (long long)offset, why, err_str(rc));
}

static void apply_batch(struct ctl_runtime *rt, struct ctl_image *img, const uint8_t *p, size_t len)
{
    struct kbatch_header h;
    kbatch_parse_header(p, &h);
    if (kbatch_is_control(&h))
        return; /* Raft's NOOP / CONFIG entries */
    int rc = kbatch_validate(p, len, true, true, CTL_BATCH_DECOMPRESSED_MAX);
    if (rc == 0 && kbatch_compression(&h) != KCOMPRESSION_NONE)
        rc = -ERR_UNSUPPORTED;
    if (rc != 0)
        return skip(rt, img, h.base_offset, "bad batch", rc);
    struct krecord_iter it;
    krecord_iter_init(&it, p + KBATCH_HEADER_SIZE, len - KBATCH_HEADER_SIZE, h.records_count);
    struct krecord kr;
    while ((rc = krecord_iter_next(&it, &kr)) == 1) {
        int64_t off = h.base_offset + kr.offset_delta;
        struct ctl_rec r;
        if (kr.value.len < 0) {
            skip(rt, img, off, "null value", -ERR_CORRUPT);
            continue;
        }
        rc = ctl_rec_decode(kr.value.p, (size_t)kr.value.len, &r);
        if (rc != 0) {
            skip(rt, img, off, "record does not decode", rc);
            continue;
        }
        rc = ctl_image_apply(img, &r);
        if (rc != 0)
            skip(rt, img, off, "record refused by the image", rc);
    }
    if (rc < 0)
        skip(rt, img, h.base_offset, "bad record framing", rc);
}

/* Applies the records of the batches in [from, to] to img; *through = the last offset whose
 * batch was applied (from - 1 if none), so a failed read can be resumed without applying a
 * batch twice. */
static int replay(struct ctl_runtime *rt, struct ctl_image *img, int64_t from, int64_t to,
                  int64_t *through)
{
    *through = from - 1;
    uint8_t *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    int64_t offset = from;
    while (offset <= to) {
        struct plog_read_result res;
        rc = plog_read(rt->log, offset, to + 1, CTL_REPLAY_READ_BYTES, &res);
        if (rc != 0 || res.len == 0)
            break;
        if (res.len > cap) {
            cap = res.len;
            buf = mem_realloc(buf, cap);
        }
        ssize_t n = io_pread_full(res.file->fd, buf, res.len, res.pos);
        fileref_put(res.file);
        if (n < 0 || (size_t)n != res.len) {
            rc = n < 0 ? -errno : -ERR_SHORT;
            break;
        }
        size_t pos = 0;
        while (pos + KBATCH_HEADER_SIZE <= res.len) {
            int64_t base;
            int32_t blen;
            kbatch_peek(buf + pos, &base, &blen);
            if (blen < KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD ||
                (size_t)blen + KBATCH_LOG_OVERHEAD > res.len - pos) {
                rc = -ERR_CORRUPT;
                break;
            }
            size_t sz = (size_t)blen + KBATCH_LOG_OVERHEAD;
            apply_batch(rt, img, buf + pos, sz);
            struct kbatch_header h;
            kbatch_parse_header(buf + pos, &h);
            *through = kbatch_last_offset(&h);
            pos += sz;
        }
        if (rc != 0 || res.next_offset <= offset)
            break; /* no progress: never loop */
        offset = res.next_offset;
    }
    mem_free(buf);
    if (rc != 0)
        log_error("ctl_replay_failed", "node=%d from=%lld to=%lld err=\"%s\"", rt->node,
                  (long long)from, (long long)to, err_str(rc));
    return rc;
}

static void catch_up(struct ctl_runtime *rt, int64_t commit);
static int maybe_become_voter(struct ctl_runtime *rt);
static void maybe_become_observer(struct ctl_runtime *rt);
static void drive_voters(struct ctl_runtime *rt);
static void serve_fetch(struct ctl_runtime *rt, int32_t from, uint64_t id, const uint8_t *body,
                        size_t len);
static void answer_parked(struct ctl_runtime *rt);
static void observe_poll(struct ctl_runtime *rt);
static void observe_response(struct ctl_runtime *rt, int32_t from, uint64_t id, const uint8_t *body,
                             size_t len);

/* Invariants 1-4 of the design comment, as far as they can be checked cheaply. */
__attribute__((unused)) static void runtime_check(const struct ctl_runtime *rt)
{
    CHECK(rt->observer ? rt->rp == NULL && !rt->leading && rt->applied <= rt->obs_commit
                       : rt->applied <= raft_commit(replica_raft(rt->rp)) ||
                             rt->applied <= rt->joined_applied);
    CHECK(!rt->work_valid || rt->leading);
    CHECK(rt->leading == (rt->lead_term >= 0));
    for (size_t i = 0; i < rt->n_pend; i++) {
        const struct pending *p = rt->pend[i];
        CHECK(p->done != NULL);
        CHECK(p->forwarded ? p->body != NULL && (p->target == RAFT_NONE) == (p->req_id == 0)
                       : p->committed || (p->last >= 0 && p->term > 0));
    }
    ctl_image_check(&rt->committed);
    if (rt->work_valid)
        ctl_image_check(&rt->work);
}

/* ---- pending commands ---------------------------------------------------------------------- */

static void answer_now(struct ctl_runtime *rt, ctl_done_fn done, void *data, int16_t error)
{
    struct ctl_answer a = {.error = error};
    done(rt, &a, data);
}

static struct pending *pend_add(struct ctl_runtime *rt, ctl_done_fn done, void *data,
                                int64_t deadline_ms)
{
    struct pending *p = mem_calloc(1, sizeof(*p));
    p->done = done;
    p->data = data;
    p->deadline_ms = deadline_ms;
    MEM_GROW(rt->pend, rt->cap_pend, rt->n_pend + 1);
    rt->pend[rt->n_pend++] = p;
    return p;
}

/* Removes entry i and returns it, unanswered. */
static struct pending *pend_take(struct ctl_runtime *rt, size_t i)
{
    struct pending *p = rt->pend[i];
    memmove(&rt->pend[i], &rt->pend[i + 1], (rt->n_pend - i - 1) * sizeof(rt->pend[0]));
    rt->n_pend--;
    return p;
}

/* Removes entry i and answers it (invariant 4). */
static void pend_free(struct pending *p)
{
    mem_free(p->body);
    mem_free(p);
}

static void pend_finish(struct ctl_runtime *rt, size_t i, const struct ctl_answer *a)
{
    struct pending *p = pend_take(rt, i);
    struct ctl_answer copy = *a;
    ctl_done_fn done = p->done;
    void *data = p->data;
    pend_free(p);
    done(rt, &copy, data);
}

static void pend_fail(struct ctl_runtime *rt, size_t i, int16_t error)
{
    struct ctl_answer a = {.error = error};
    pend_finish(rt, i, &a);
}

/* The metadata group's configuration is the voters the committed image asks for (or none is
 * asked): simple, no learners, committed. */
static bool quorum_reached(const struct ctl_runtime *rt)
{
    const struct ctl_rec_voters *t = &rt->committed.voters;
    if (t->n == 0)
        return true;
    const struct raft *r = replica_raft(rt->rp);
    const struct raft_conf *conf = raft_conf(r);
    return !raft_conf_is_joint(conf) && conf->n_learners == 0 &&
           raft_conf_index(r) <= raft_commit(r) &&
           ctl_ids_same_set(conf->voters, conf->n_voters, t->ids, t->n);
}

/* Answers the proposals whose fate the log has decided. */
static void settle(struct ctl_runtime *rt)
{
    if (!rt->rp)
        return;
    for (size_t i = 0; i < rt->n_pend;) {
        struct pending *p = rt->pend[i];
        if (p->forwarded) {
            i++;
            continue;
        }
        if (p->committed) { /* a voter change whose record is in: waits for the quorum */
            if (quorum_reached(rt))
                pend_finish(rt, i, &p->answer);
            else
                i++;
            continue;
        }
        enum replica_proposal st = replica_proposal_state(rt->rp, p->last, p->term);
        if (st == REPLICA_COMMITTED && p->quorum_wait) {
            p->committed = true;
            continue; /* looked at again right away */
        }
        if (st == REPLICA_COMMITTED)
            pend_finish(rt, i, &p->answer);
        else if (st == REPLICA_LOST)
            pend_fail(rt, i, KERR_NOT_CONTROLLER);
        else
            i++;
    }
}

/* Times out what waited too long; a forward whose target is no longer the leader will not be
 * answered by it: it waits for the next leader (redirect). */
static void expire(struct ctl_runtime *rt)
{
    int32_t leader = ctl_runtime_leader(rt);
    for (size_t i = 0; i < rt->n_pend;) {
        struct pending *p = rt->pend[i];
        if (rt->now >= p->deadline_ms) {
            pend_fail(rt, i, KERR_REQUEST_TIMED_OUT);
            continue;
        }
        if (p->forwarded && p->target != RAFT_NONE && leader != p->target) {
            p->target = RAFT_NONE; /* a late answer from it is dropped (deliver_response) */
            p->req_id = 0;
        }
        i++;
    }
}

/* ---- roles and the working image ----------------------------------------------------------- */

static void sync_role(struct ctl_runtime *rt)
{
    if (rt->observer)
        return; /* never leads */
    const struct raft *r = replica_raft(rt->rp);
    bool leader = raft_role(r) == RAFT_LEADER && !replica_failed(rt->rp);
    int64_t term = raft_term(r);
    if (leader && rt->leading && rt->lead_term == term)
        return;
    if (!leader && !rt->leading)
        return;
    rt->work_valid = false;
    ctl_sessions_free(&rt->sessions);
    ctl_sessions_init(&rt->sessions);
    rt->leading = leader;
    rt->lead_term = leader ? term : -1;
    log_info(leader ? "ctl_leader_elected" : "ctl_leader_lost", "node=%d term=%lld", rt->node,
             (long long)term);
}

/* Invariant 2: rebuilds the working image if it is not valid. */
static int ensure_work(struct ctl_runtime *rt)
{
    if (rt->work_valid)
        return 0;
    ctl_image_copy(&rt->work, &rt->committed);
    int64_t last = plog_end_offset(rt->log) - 1, through;
    int rc = last > rt->applied ? replay(rt, &rt->work, rt->applied + 1, last, &through) : 0;
    if (rc != 0)
        return rc;
    rt->work_valid = true;
    return 0;
}

/* Proposes recs as one batch and applies them to the working image. */
static int propose_recs(struct ctl_runtime *rt, const struct ctl_recs *recs, int64_t *last,
                        int64_t *term)
{
    CHECK(recs->n > 0 && recs->n <= INT32_MAX);
    struct iobuf vals;
    iobuf_init(&vals);
    struct kwriter w = {&vals};
    size_t *ends = mem_alloc(recs->n * sizeof(*ends));
    for (size_t i = 0; i < recs->n; i++) {
        ctl_rec_encode(&w, &recs->v[i]);
        ends[i] = iobuf_total(&vals);
    }
    size_t flat_len;
    uint8_t *flat = iobuf_flatten(&vals, &flat_len);
    iobuf_destroy(&vals);
    struct kbytes *keys = mem_alloc(recs->n * sizeof(*keys));
    struct kbytes *values = mem_alloc(recs->n * sizeof(*values));
    for (size_t i = 0; i < recs->n; i++) {
        size_t start = i ? ends[i - 1] : 0;
        keys[i] = (struct kbytes){NULL, -1};
        values[i] = (struct kbytes){flat + start, (int32_t)(ends[i] - start)};
    }
    struct iobuf batch;
    iobuf_init(&batch);
    kbatch_build(&batch, time_wall_ms(), keys, values, (int32_t)recs->n);
    size_t len;
    uint8_t *b = iobuf_flatten(&batch, &len);
    iobuf_destroy(&batch);
    int rc = replica_propose(rt->rp, b, len, (int32_t)recs->n, true, NULL, last, term);
    mem_free(b);
    mem_free(values);
    mem_free(keys);
    mem_free(flat);
    mem_free(ends);
    if (rc != 0)
        return rc;
    if (rt->work_valid && ctl_image_apply_all(&rt->work, recs) != 0) {
        /* Commands only make records the image accepts; rebuild from the log to stay exact. */
        log_error("ctl_work_image_refused", "node=%d", rt->node);
        rt->work_valid = false;
    }
    return 0;
}

/* The leader runs a command against the working image. */
static int16_t run_command(struct ctl_runtime *rt, const struct ctl_request *req,
                           struct ctl_recs *out, struct ctl_answer *a)
{
    const struct ctl_image *img = &rt->work;
    switch (req->type) {
    case CTL_REQ_CREATE_TOPIC: {
        struct ctl_create_topic ct = {req->name, random_uuid(rt), req->n_partitions,
                                      req->rf,   req->configs,    req->n_configs};
        a->topic_id = ct.id;
        return ctl_cmd_create_topic(img, &ct, rt->opt.config_check, rt->opt.config_check_data, out);
    }
    case CTL_REQ_DELETE_TOPIC:
        return ctl_cmd_delete_topic(img, req->name, out);
    case CTL_REQ_CREATE_PARTITIONS:
        return ctl_cmd_create_partitions(img, req->name, req->n_partitions, out);
    case CTL_REQ_ALTER_CONFIGS:
        return ctl_cmd_alter_configs(img, req->resource_type, req->name, req->configs,
                                     req->n_configs, rt->opt.config_check,
                                     rt->opt.config_check_data, out);
    case CTL_REQ_REGISTER_BROKER:
        return ctl_cmd_register_broker(img, &rt->sessions, &req->reg, rt->now, out);
    case CTL_REQ_HEARTBEAT:
        return ctl_cmd_heartbeat(img, &rt->sessions, req->reg.node_id, req->reg.incarnation,
                                 req->caught_up, rt->now, out);
    case CTL_REQ_ALLOC_PIDS: {
        int16_t err = ctl_cmd_alloc_producer_ids(img, req->reg.node_id, req->reg.incarnation,
                                                 req->pid_floor, out);
        for (size_t i = 0; err == KERR_NONE && i < out->n; i++) {
            if (out->v[i].type == CTL_REC_PRODUCER_IDS) {
                a->pid_first = out->v[i].pids.first;
                a->pid_size = out->v[i].pids.size;
            }
        }
        return err;
    }
    case CTL_REQ_REASSIGN:
        return ctl_cmd_reassign(img, req->name, req->partition, req->replicas, req->n_replicas,
                                out);
    case CTL_REQ_PARTITION_REPLICAS:
        return ctl_cmd_partition_replicas(img, req->topic_id, req->partition, req->replicas,
                                          req->n_replicas, out);
    case CTL_REQ_USER_SCRAM:
        return ctl_cmd_user(img, &req->user, out);
    case CTL_REQ_ACL:
        return ctl_cmd_acl(img, &req->acl, out);
    case CTL_REQ_QUOTA:
        return ctl_cmd_quota(img, &req->quota, out);
    case CTL_REQ_VOTERS: {
        if (!rt->opt.meta_dir)
            return KERR_INVALID_REQUEST; /* a static quorum (controller.quorum.voters) */
        const struct raft_conf *conf = raft_conf(replica_raft(rt->rp));
        bool unchanged;
        return ctl_cmd_voters(img, req->voter_add, req->voter, conf->voters, conf->n_voters,
                              &unchanged, out);
    }
    default:
        return KERR_INVALID_REQUEST;
    }
}

static void submit_local(struct ctl_runtime *rt, const struct ctl_request *req, ctl_done_fn done,
                         void *data, int64_t deadline_ms)
{
    if (ensure_work(rt) != 0)
        return answer_now(rt, done, data, KERR_UNKNOWN_SERVER_ERROR);
    struct ctl_recs recs;
    ctl_recs_init(&recs);
    struct ctl_answer a = {0};
    a.error = run_command(rt, req, &recs, &a);
    bool quorum_wait = req->type == CTL_REQ_VOTERS;
    if (a.error == KERR_NONE && recs.n == 0 && quorum_wait) { /* repeated: wait for the end */
        ctl_recs_free(&recs);
        struct pending *p = pend_add(rt, done, data, deadline_ms);
        p->quorum_wait = p->committed = true;
        p->answer = a;
        settle(rt);
        return;
    }
    if (a.error != KERR_NONE || recs.n == 0) {
        ctl_recs_free(&recs);
        if (a.error != KERR_NONE)
            a = (struct ctl_answer){.error = a.error};
        done(rt, &a, data);
        return;
    }
    int64_t last, term;
    int rc = propose_recs(rt, &recs, &last, &term);
    ctl_recs_free(&recs);
    if (rc != 0) /* not leader (any more), a transfer under way, or a failed log */
        return answer_now(rt, done, data,
                          rc == -ERR_INVALID ? KERR_UNKNOWN_SERVER_ERROR : KERR_NOT_CONTROLLER);
    struct pending *p = pend_add(rt, done, data, deadline_ms);
    p->last = last;
    p->term = term;
    p->answer = a;
    p->quorum_wait = quorum_wait;
    settle(rt); /* a group of one commits at once */
}

/* Sends forward p to the leader this node knows, unless there is none (or it is this node,
 * not leading yet) or p already went to it in the term known now; a frame that cannot be sent
 * is tried again at the next tick. */
static void send_forward(struct ctl_runtime *rt, struct pending *p)
{
    int32_t leader = ctl_runtime_leader(rt);
    int64_t term = ctl_runtime_term(rt);
    if (leader == RAFT_NONE || leader == rt->node || (leader == p->tried && term == p->tried_term))
        return;
    uint64_t id = ++rt->next_req_id;
    if (rt->opt.send_frame(rt, leader, RPC_CONTROLLER_REQUEST, id, p->body, p->body_len,
                           rt->opt.data) != 0)
        return;
    p->target = leader;
    p->req_id = id;
    p->tried = leader;
    p->tried_term = term;
}

static void forward(struct ctl_runtime *rt, const struct ctl_request *req, ctl_done_fn done,
                    void *data)
{
    struct iobuf body;
    iobuf_init(&body);
    ctl_request_encode(req, &body);
    size_t len;
    uint8_t *b = iobuf_flatten(&body, &len);
    iobuf_destroy(&body);
    if (len > RPC_CONTROLLER_BODY_MAX) {
        mem_free(b);
        return answer_now(rt, done, data, KERR_INVALID_REQUEST); /* retrying would not help */
    }
    struct pending *p = pend_add(rt, done, data, rt->now + rt->opt.request_timeout_ms);
    p->forwarded = true;
    p->target = RAFT_NONE;
    p->tried = RAFT_NONE;
    p->body = b;
    p->body_len = len;
    send_forward(rt, p);
}

/* Forwards waiting for a leader (target RAFT_NONE): sent as soon as one is known, or taken
 * over as proposals of this node's own once it leads (with the deadline they had). */
static void redirect(struct ctl_runtime *rt)
{
    for (size_t i = 0; i < rt->n_pend;) {
        struct pending *p = rt->pend[i];
        if (!p->forwarded || p->target != RAFT_NONE) {
            i++;
            continue;
        }
        if (!rt->leading) {
            send_forward(rt, p);
            i++;
            continue;
        }
        pend_take(rt, i); /* the entries after it move down: i is the next one */
        struct ctl_request req;
        if (ctl_request_decode(p->body, p->body_len, &req) != 0) /* our own encoding */
            answer_now(rt, p->done, p->data, KERR_UNKNOWN_SERVER_ERROR);
        else {
            submit_local(rt, &req, p->done, p->data, p->deadline_ms);
            ctl_request_free(&req);
        }
        pend_free(p);
    }
}

void ctl_runtime_submit(struct ctl_runtime *rt, const struct ctl_request *req, ctl_done_fn done,
                        void *data)
{
    if (!ctl_request_well_formed(req))
        return answer_now(rt, done, data, KERR_INVALID_REQUEST);
    if (rt->closing || (rt->rp && replica_failed(rt->rp)))
        return answer_now(rt, done, data, KERR_NOT_CONTROLLER);
    DCHECK((runtime_check(rt), true));
    sync_role(rt);
    if (rt->leading)
        submit_local(rt, req, done, data, rt->now + rt->opt.request_timeout_ms);
    else
        forward(rt, req, done, data);
    sync_role(rt);
    DCHECK((runtime_check(rt), true));
}

/* ---- inputs -------------------------------------------------------------------------------- */

static void remote_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct remote *r = data;
    uint8_t buf[CTL_ANSWER_BYTES];
    ctl_answer_encode(a, buf);
    (void)rt->opt.send_frame(rt, r->from, RPC_CONTROLLER_RESPONSE, r->req_id, buf, sizeof(buf),
                             rt->opt.data);
    mem_free(r);
}

static void deliver_request(struct ctl_runtime *rt, int32_t from, uint64_t id, const uint8_t *body,
                            size_t len)
{
    struct remote *r = mem_alloc(sizeof(*r));
    r->from = from;
    r->req_id = id;
    struct ctl_request req;
    if (ctl_request_decode(body, len, &req) != 0) {
        log_warn("ctl_bad_request", "node=%d from=%d bytes=%zu", rt->node, from, len);
        return answer_now(rt, remote_done, r, KERR_INVALID_REQUEST);
    }
    sync_role(rt);
    if (!rt->leading || rt->closing)
        answer_now(rt, remote_done, r, KERR_NOT_CONTROLLER); /* never forwarded twice */
    else
        submit_local(rt, &req, remote_done, r, rt->now + rt->opt.request_timeout_ms);
    ctl_request_free(&req);
}

static void deliver_response(struct ctl_runtime *rt, int32_t from, uint64_t id, const uint8_t *body,
                             size_t len)
{
    for (size_t i = 0; i < rt->n_pend; i++) {
        struct pending *p = rt->pend[i];
        if (!p->forwarded || p->req_id != id || p->target != from)
            continue;
        struct ctl_answer a;
        if (ctl_answer_decode(body, len, &a) != 0)
            a = (struct ctl_answer){.error = KERR_NOT_CONTROLLER};
        if (a.error == KERR_NOT_CONTROLLER) { /* it did not carry it out: the next leader will */
            p->target = RAFT_NONE;
            p->req_id = 0;
            redirect(rt);
            return;
        }
        pend_finish(rt, i, &a);
        return;
    }
    /* An answer after the timeout, or for a request we never sent: dropped. */
}

void ctl_runtime_deliver(struct ctl_runtime *rt, int32_t from, uint8_t type, uint64_t request_id,
                         const uint8_t *body, size_t len)
{
    DCHECK((runtime_check(rt), true));
    if (type == RPC_CONTROLLER_REQUEST)
        deliver_request(rt, from, request_id, body, len);
    else if (type == RPC_CONTROLLER_RESPONSE)
        deliver_response(rt, from, request_id, body, len);
    else if (type == RPC_METADATA_FETCH)
        serve_fetch(rt, from, request_id, body, len);
    else if (type == RPC_METADATA_RESPONSE)
        observe_response(rt, from, request_id, body, len);
    DCHECK((runtime_check(rt), true));
}

static void fence_expired(struct ctl_runtime *rt)
{
    if (!rt->leading || ensure_work(rt) != 0)
        return;
    struct ctl_recs recs;
    ctl_recs_init(&recs);
    ctl_cmd_fence_expired(&rt->work, &rt->sessions, rt->now, rt->opt.session_timeout_ms, &recs);
    if (recs.n > 0) {
        int64_t last, term;
        int rc = propose_recs(rt, &recs, &last, &term);
        log_info("ctl_brokers_fenced", "node=%d records=%zu rc=%d", rt->node, recs.n, rc);
    }
    ctl_recs_free(&recs);
}

void ctl_runtime_tick(struct ctl_runtime *rt, int64_t now_ms)
{
    DCHECK((runtime_check(rt), true));
    if (now_ms > rt->now)
        rt->now = now_ms;
    if (rt->observer) {
        if (maybe_become_voter(rt) != 1) {
            observe_poll(rt);
            expire(rt);
            redirect(rt);
            DCHECK((runtime_check(rt), true));
            return;
        }
    }
    replica_tick(rt->rp, rt->now);
    catch_up(rt, raft_commit(replica_raft(rt->rp)));
    sync_role(rt);
    fence_expired(rt);
    drive_voters(rt);
    settle(rt);
    expire(rt);
    sync_role(rt);
    redirect(rt);
    answer_parked(rt);
    maybe_become_observer(rt);
    DCHECK((runtime_check(rt), true));
}

int ctl_runtime_step(struct ctl_runtime *rt, const struct raft_msg *m)
{
    DCHECK((runtime_check(rt), true));
    if (rt->observer)
        return -ERR_INVALID; /* not a member of the group: Raft messages are not for it */
    int rc = replica_step(rt->rp, m);
    sync_role(rt);
    DCHECK((runtime_check(rt), true));
    return rc;
}

/* Applies the committed records not applied yet (invariant 1; a failed read is retried from
 * where it stopped on the next commit or tick). */
static void catch_up(struct ctl_runtime *rt, int64_t commit)
{
    if (commit <= rt->applied)
        return;
    struct ctl_image before;
    ctl_image_init(&before);
    if (rt->opt.on_image_change)
        ctl_image_copy(&before, &rt->committed);
    uint64_t n0 = rt->committed.records_applied;
    int64_t through;
    (void)replay(rt, &rt->committed, rt->applied + 1, commit, &through);
    if (through > rt->applied)
        rt->applied = through;
    if (rt->opt.on_image_change && rt->committed.records_applied != n0)
        rt->opt.on_image_change(rt, &before, &rt->committed, rt->opt.data);
    ctl_image_free(&before);
}

/* Commit advanced: apply the newly committed records, then decide proposals. */
static void commit_cb(struct replica *rp, int64_t commit, void *data)
{
    struct ctl_runtime *rt = data;
    (void)rp;
    catch_up(rt, commit);
    settle(rt);
    answer_parked(rt); /* the commit moved: held fetches have something to read */
}

static void send_cb(struct replica *rp, const struct raft_msg *m, void *data)
{
    struct ctl_runtime *rt = data;
    (void)rp;
    rt->opt.send_raft(rt, m, rt->opt.data);
}

/* ---- metadata fetch: the leader serves observers ------------------------------------------- */

static void send_fetch_answer(struct ctl_runtime *rt, int32_t to, uint64_t id,
                              const struct ctl_mfetch_resp *resp)
{
    struct iobuf out;
    iobuf_init(&out);
    ctl_mfetch_resp_encode(resp, &out);
    size_t len;
    uint8_t *b = iobuf_flatten(&out, &len);
    iobuf_destroy(&out);
    (void)rt->opt.send_frame(rt, to, RPC_METADATA_RESPONSE, id, b, len, rt->opt.data);
    mem_free(b); /* a lost answer is asked again: the observer polls */
}

/* Answers one fetch now: NOT_CONTROLLER with a leader hint off the leader, else the committed
 * batches from req->from on (none when it has everything). */
static void answer_fetch(struct ctl_runtime *rt, int32_t from, uint64_t id,
                         const struct ctl_mfetch_req *rq)
{
    struct ctl_mfetch_req req = *rq;
    sync_role(rt);
    struct ctl_mfetch_resp resp = {.error = KERR_NOT_CONTROLLER,
                                   .leader = ctl_runtime_leader(rt),
                                   .term = ctl_runtime_term(rt),
                                   .commit = -1,
                                   .from = req.from};
    if (resp.leader == RAFT_NONE)
        resp.leader = -1;
    if (!rt->leading || rt->closing)
        return send_fetch_answer(rt, from, id, &resp);
    resp.error = KERR_NONE;
    resp.commit = raft_commit(replica_raft(rt->rp));
    uint8_t *buf = NULL;
    if (req.from <= resp.commit) {
        struct plog_read_result res;
        int rc = plog_read(rt->log, req.from, resp.commit + 1, (size_t)req.max_bytes, &res);
        if (rc == 0 && res.len > 0) {
            buf = mem_alloc(res.len);
            ssize_t n = io_pread_full(res.file->fd, buf, res.len, res.pos);
            fileref_put(res.file);
            if (n < 0 || (size_t)n != res.len)
                rc = n < 0 ? -errno : -ERR_SHORT;
            else if (res.len > CTL_MFETCH_BYTES_MAX || res.first_offset != req.from)
                rc = -ERR_TOO_LARGE; /* one batch above a frame, or `from` inside a batch */
            else
                resp.data = buf, resp.len = res.len;
        }
        if (rc != 0) {
            log_warn("ctl_metadata_fetch_failed", "node=%d from=%d offset=%lld err=\"%s\"",
                     rt->node, from, (long long)req.from, err_str(rc));
            resp.error = KERR_UNKNOWN_SERVER_ERROR;
        }
    }
    send_fetch_answer(rt, from, id, &resp);
    mem_free(buf);
}

/* Held fetches due now: those with something to read, those held CTL_FETCH_PARK_MS, and all
 * of them off the leader. */
static void answer_parked(struct ctl_runtime *rt)
{
    if (rt->n_parked == 0)
        return;
    int64_t commit = rt->leading ? raft_commit(replica_raft(rt->rp)) : -1;
    size_t k = 0;
    for (size_t i = 0; i < rt->n_parked; i++) {
        struct parked_fetch pf = rt->parked[i];
        if (!rt->leading || pf.req.from <= commit ||
            rt->now - pf.since_ms >= CTL_FETCH_PARK_MS)
            answer_fetch(rt, pf.from, pf.id, &pf.req);
        else
            rt->parked[k++] = pf;
    }
    rt->n_parked = k;
}

/* A metadata fetch from an observer (answered to `from`, the node the frame came from, which
 * the cluster layer has made a transport peer from the request's address). One that asks for
 * more than the leader has committed is held (long poll, see above); the rest are answered at
 * once. Bad requests are dropped (logged): the sender times out. */
static void serve_fetch(struct ctl_runtime *rt, int32_t from, uint64_t id, const uint8_t *body,
                        size_t len)
{
    struct ctl_mfetch_req req;
    if (ctl_mfetch_req_decode(body, len, &req) != 0) {
        log_warn("ctl_bad_metadata_fetch", "node=%d from=%d bytes=%zu", rt->node, from, len);
        return;
    }
    sync_role(rt);
    if (rt->leading && !rt->closing && req.from > raft_commit(replica_raft(rt->rp))) {
        size_t i = 0;
        while (i < rt->n_parked && rt->parked[i].from != from)
            i++;
        if (i == rt->n_parked) {
            if (rt->n_parked == CTL_FETCH_PARKED_MAX)
                return answer_fetch(rt, from, id, &req); /* full: the observer polls again */
            MEM_GROW(rt->parked, rt->cap_parked, rt->n_parked + 1);
            rt->n_parked++;
        }
        /* one per observer: a newer fetch replaces one it gave up on */
        rt->parked[i] = (struct parked_fetch){from, id, rt->now, req};
        return;
    }
    answer_fetch(rt, from, id, &req);
}

/* ---- observer mode ------------------------------------------------------------------------- */

/* The fetch failed or was refused: ask target next (RAFT_NONE: the next voter in turn). */
static void observe_retry(struct ctl_runtime *rt, int32_t target, int64_t delay_ms)
{
    rt->obs_req_id = 0;
    rt->obs_leader = RAFT_NONE;
    if (target == RAFT_NONE) {
        target = rt->obs_voters[rt->obs_next_voter % rt->n_obs_voters];
        rt->obs_next_voter++;
    }
    rt->obs_target = target;
    rt->obs_next_ms = rt->now + delay_ms;
}

static bool is_voter(const struct ctl_runtime *rt, int32_t id)
{
    for (size_t i = 0; i < rt->n_obs_voters; i++)
        if (rt->obs_voters[i] == id)
            return true;
    return false;
}

/* Sends the next fetch when it is due (one in flight at most). */
static void observe_poll(struct ctl_runtime *rt)
{
    if (rt->closing)
        return;
    if (rt->obs_req_id != 0) {
        if (rt->now - rt->obs_sent_ms < CTL_OBSERVE_TIMEOUT_MS)
            return;
        log_info("ctl_observer_fetch_timeout", "node=%d target=%d", rt->node, rt->obs_sent_to);
        observe_retry(rt, RAFT_NONE, 0);
    }
    if (rt->now < rt->obs_next_ms)
        return;
    struct ctl_mfetch_req req = {
        .from = rt->applied + 1, .max_bytes = CTL_OBSERVE_FETCH_BYTES, .port = rt->obs_port};
    memcpy(req.host, rt->obs_host, sizeof(req.host));
    struct iobuf out;
    iobuf_init(&out);
    ctl_mfetch_req_encode(&req, &out);
    size_t len;
    uint8_t *b = iobuf_flatten(&out, &len);
    iobuf_destroy(&out);
    uint64_t id = ++rt->next_req_id;
    int32_t to = rt->obs_target;
    int rc = rt->opt.send_frame(rt, to, RPC_METADATA_FETCH, id, b, len, rt->opt.data);
    mem_free(b);
    if (rc != 0) /* not connected (yet): the next voter, a little later */
        return observe_retry(rt, RAFT_NONE, CTL_OBSERVE_POLL_MS / 4);
    rt->obs_req_id = id;
    rt->obs_sent_to = to;
    rt->obs_sent_ms = rt->now;
}

/* Applies the batches of an answer in order: each must start right after what is applied and
 * end at or below the commit index the answer reports. Stops at the first that does not (the
 * rest is fetched again). Returns 0 or -ERR_CORRUPT. */
static int observe_apply(struct ctl_runtime *rt, const struct ctl_mfetch_resp *resp)
{
    struct ctl_image before;
    ctl_image_init(&before);
    if (rt->opt.on_image_change && resp->len > 0)
        ctl_image_copy(&before, &rt->committed);
    uint64_t n0 = rt->committed.records_applied;
    size_t pos = 0;
    int rc;
    const uint8_t *batch;
    size_t blen;
    int64_t base, last;
    while ((rc = ctl_mfetch_next_batch(resp->data, resp->len, &pos, &batch, &blen, &base, &last)) ==
           1) {
        if (base != rt->applied + 1 || last > resp->commit) {
            rc = -ERR_CORRUPT;
            break;
        }
        apply_batch(rt, &rt->committed, batch, blen);
        rt->applied = last;
    }
    if (rt->opt.on_image_change && rt->committed.records_applied != n0)
        rt->opt.on_image_change(rt, &before, &rt->committed, rt->opt.data);
    ctl_image_free(&before);
    return rc < 0 ? rc : 0;
}

static void observe_response(struct ctl_runtime *rt, int32_t from, uint64_t id, const uint8_t *body,
                             size_t len)
{
    if (rt->closing || id == 0 || id != rt->obs_req_id || from != rt->obs_sent_to)
        return; /* not ours, or late: dropped */
    struct ctl_mfetch_resp resp;
    if (ctl_mfetch_resp_decode(body, len, &resp) != 0) {
        log_warn("ctl_observer_bad_answer", "node=%d from=%d bytes=%zu", rt->node, from, len);
        return observe_retry(rt, RAFT_NONE, CTL_OBSERVE_POLL_MS);
    }
    if (!rt->observer) { /* a removed voter's question (maybe_become_observer) */
        if (resp.error == KERR_NONE && resp.commit >= rt->leave_index) {
            rt->obs_req_id = 0;
            rt->leave_confirmed = true;
            return;
        }
        bool hint = resp.error == KERR_NOT_CONTROLLER && resp.leader != from &&
                    resp.leader != rt->node && is_voter(rt, resp.leader);
        return observe_retry(rt, hint ? resp.leader : RAFT_NONE, hint ? 0 : CTL_OBSERVE_POLL_MS);
    }
    if (resp.error != KERR_NONE) {
        /* follow the hint if it names another voter; else ask the next one */
        bool hint = resp.error == KERR_NOT_CONTROLLER && resp.leader != from &&
                    resp.leader != rt->node && is_voter(rt, resp.leader);
        return observe_retry(rt, hint ? resp.leader : RAFT_NONE, hint ? 0 : CTL_OBSERVE_POLL_MS);
    }
    if (resp.from != rt->applied + 1)
        return observe_retry(rt, from, 0); /* an answer to an older question: ask again */
    rt->obs_req_id = 0;
    rt->obs_leader = from;
    rt->obs_target = from;
    if (resp.term > rt->obs_term)
        rt->obs_term = resp.term;
    if (resp.commit > rt->obs_commit)
        rt->obs_commit = resp.commit;
    int rc = observe_apply(rt, &resp);
    if (rc != 0)
        log_warn("ctl_observer_bad_batches", "node=%d from=%d applied=%lld", rt->node, from,
                 (long long)rt->applied);
    /* batches came (more may follow), or the leader held the fetch (it answers as soon as its
     * commit moves): ask again at once; an empty answer at once (a leader of an older release,
     * which does not hold fetches): the next poll */
    bool got = rc == 0 && resp.len > 0;
    bool held = rc == 0 && rt->now - rt->obs_sent_ms >= CTL_FETCH_PARK_MS / 2;
    rt->obs_next_ms = rt->now + (got || held ? 0 : CTL_OBSERVE_POLL_MS);
}

/* The state every runtime starts from, voter or observer. */
static struct ctl_runtime *runtime_new(int32_t node_id, const struct ctl_runtime_options *opt,
                                       int64_t now_ms)
{
    struct ctl_runtime *rt = mem_calloc(1, sizeof(*rt));
    rt->node = node_id;
    rt->opt = *opt;
    if (rt->opt.request_timeout_ms <= 0)
        rt->opt.request_timeout_ms = CTL_REQUEST_TIMEOUT_MS;
    if (rt->opt.session_timeout_ms <= 0)
        rt->opt.session_timeout_ms = CTL_SESSION_TIMEOUT_MS;
    rt->rng = opt->seed ^ ((uint64_t)(uint32_t)node_id << 32) ^ (uint64_t)time_mono_ns();
    rt->now = now_ms;
    rt->applied = -1;
    rt->joined_applied = -1;
    rt->lead_term = -1;
    if (opt->host) {
        snprintf(rt->obs_host, sizeof(rt->obs_host), "%s", opt->host);
        rt->obs_port = opt->port;
    }
    ctl_image_init(&rt->committed);
    ctl_image_init(&rt->work);
    ctl_sessions_init(&rt->sessions);
    return rt;
}

int ctl_runtime_open_observer(int32_t node_id, const struct ctl_voter *voters, size_t n_voters,
                              const char *host, int port, const struct ctl_runtime_options *opt,
                              int64_t now_ms, struct ctl_runtime **out)
{
    if (!opt->send_frame || n_voters < 1 || n_voters > RAFT_VOTERS_MAX || node_id < 0 || !host ||
        strlen(host) < 1 || strlen(host) > CTL_MFETCH_HOST_MAX || port <= 0 || port > 65535)
        return -ERR_INVALID;
    for (size_t i = 0; i < n_voters; i++) {
        if (voters[i].id < 0 || voters[i].id == node_id)
            return -ERR_INVALID;
        for (size_t j = 0; j < i; j++)
            if (voters[j].id == voters[i].id)
                return -ERR_INVALID;
    }
    struct ctl_runtime *rt = runtime_new(node_id, opt, now_ms);
    rt->observer = true;
    for (size_t i = 0; i < n_voters; i++)
        rt->obs_voters[i] = voters[i].id;
    rt->n_obs_voters = n_voters;
    rt->obs_next_voter = (size_t)(next_rand(rt) % n_voters); /* observers spread their polls */
    rt->obs_leader = RAFT_NONE;
    rt->obs_commit = -1;
    snprintf(rt->obs_host, sizeof(rt->obs_host), "%s", host);
    rt->obs_port = port;
    observe_retry(rt, RAFT_NONE, 0);
    log_info("ctl_observer_open", "node=%d voters=%zu", node_id, n_voters);
    *out = rt;
    return 0;
}

/* ---- voter changes ------------------------------------------------------------------------ */

static bool ids_have(const int32_t *ids, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Leader: moves the group's configuration towards the committed image's voters to be, one step
 * per call, as a partition's leader moves its replicas (broker/cluster.c move_one): the new
 * voters join as learners, are promoted with the removals in one joint change once caught up;
 * learners nobody asks for are dropped. A change still on its way is waited for. */
static void drive_voters(struct ctl_runtime *rt)
{
    const struct ctl_rec_voters *t = &rt->committed.voters;
    if (!rt->leading || t->n == 0 || replica_failed(rt->rp))
        return;
    const struct raft *r = replica_raft(rt->rp);
    const struct raft_conf *conf = raft_conf(r);
    if (raft_conf_is_joint(conf) || raft_conf_index(r) > raft_commit(r))
        return;
    int32_t add[RAFT_LEARNERS_MAX];
    size_t n_add = 0;
    for (int32_t i = 0; i < t->n; i++)
        if (!ids_have(conf->voters, conf->n_voters, t->ids[i]) && n_add < RAFT_LEARNERS_MAX)
            add[n_add++] = t->ids[i];
    bool same_voters = ctl_ids_same_set(conf->voters, conf->n_voters, t->ids, t->n);
    if (same_voters && conf->n_learners == 0)
        return; /* there */
    int rc;
    const char *step;
    bool learners_ok = conf->n_learners == n_add;
    for (size_t i = 0; i < n_add && learners_ok; i++)
        learners_ok = ids_have(conf->learners, conf->n_learners, add[i]);
    if (n_add > 0 && !learners_ok) {
        rc = replica_propose_members(rt->rp, conf->voters, conf->n_voters, add, n_add);
        step = "learners";
    } else {
        int64_t commit = raft_commit(r);
        for (size_t i = 0; i < n_add; i++) {
            int64_t m = raft_match_index(r, add[i]);
            if (m < 0 || m < commit - CTL_VOTER_CATCH_UP_SLACK)
                return; /* still catching up */
        }
        rc = replica_propose_members(rt->rp, (const int32_t *)t->ids, (size_t)t->n, NULL, 0);
        step = same_voters ? "drop_learners" : "voters";
    }
    if (rc == 0)
        log_info("ctl_voters_change", "node=%d step=%s target=%d learners=%zu", rt->node, step,
                 t->n, n_add);
}

/* The plog of the metadata log in dir. */
static int open_log(const char *dir, struct flusher *fl, struct plog **out)
{
    struct plog_config cfg = {.segment_bytes = 64 << 20,
                              .segment_ms = -1,
                              .retention_ms = -1,
                              .retention_bytes = -1,
                              .index_interval_bytes = 4096};
    int rc = plog_open(dir, &cfg, fl, NULL, false, out, NULL);
    if (rc != 0)
        *out = NULL;
    return rc;
}

/* Binds the group's replica to rt->log: bootstrap[0..n) is the configuration before any the
 * log holds (n 0: learnt from the leader, as a node that joins). */
static int open_replica(struct ctl_runtime *rt, const int32_t *bootstrap, size_t n)
{
    struct replica_options ro;
    replica_options_default(&ro, rt->node, rt->opt.seed ^ (uint64_t)(uint32_t)rt->node);
    ro.raft = rt->opt.raft;
    ro.raft.id = rt->node;
    ro.raft.seed = rt->opt.seed ^ (uint64_t)(uint32_t)rt->node;
    ro.bootstrap.n_voters = (uint8_t)n;
    for (size_t i = 0; i < n; i++)
        ro.bootstrap.voters[i] = bootstrap[i];
    ro.send = send_cb;
    ro.on_commit = commit_cb;
    ro.data = rt;
    return replica_open(rt->log, &ro, rt->now, &rt->rp);
}

/* Observer: the committed image names this node among the voters to be; it opens an empty
 * metadata log in opt.meta_dir with no configuration (it cannot campaign) and waits for the
 * leader, which adds it as a learner. The image and applied index stay: replay resumes above
 * them once the log holds them. Returns 1 if it is a voter replica now, 0, or an error (kept
 * an observer, tried again next tick). */
static int maybe_become_voter(struct ctl_runtime *rt)
{
    const struct ctl_rec_voters *t = &rt->committed.voters;
    if (!rt->opt.meta_dir || rt->closing || !ids_have((const int32_t *)t->ids, (size_t)t->n, rt->node))
        return 0;
    if (rt->opt.on_member_change) { /* durable first: a restart must come back as a voter */
        int rc = rt->opt.on_member_change(rt, true, rt->opt.data);
        if (rc != 0)
            return rc;
    }
    (void)io_remove_tree(AT_FDCWD, rt->opt.meta_dir); /* a removal's leftovers, if any */
    int rc = open_log(rt->opt.meta_dir, rt->opt.flusher, &rt->log);
    if (rc == 0) {
        int dfd = open(rt->opt.meta_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = dfd < 0 ? -errno : io_write_file_atomic(dfd, CTL_JOINED_FILE, "1\n", 2, true);
        if (dfd >= 0)
            close(dfd);
        if (rc != 0) {
            plog_close(rt->log);
            rt->log = NULL;
        }
    }
    if (rc == 0) {
        rc = open_replica(rt, NULL, 0);
        if (rc != 0) {
            rt->rp = NULL;
            plog_close(rt->log);
            rt->log = NULL;
        }
    }
    if (rc != 0) {
        log_error("ctl_become_voter_failed", "node=%d dir=%s err=\"%s\"", rt->node,
                  rt->opt.meta_dir, err_str(rc));
        return rc;
    }
    rt->observer = false;
    rt->joined_applied = rt->applied;
    rt->obs_req_id = 0; /* a fetch in flight is dropped when it comes */
    log_info("ctl_became_voter", "node=%d applied=%lld", rt->node, (long long)rt->applied);
    return 1;
}

/* Voter replica: the committed image leaves this node out of the voters to be and the group no
 * longer needs it (its configuration does not name it, or names it only on the old side of a
 * committed joint one, whose successor needs no vote of it), and it does not lead: it closes
 * and deletes its metadata log and observes the voters to be. */
static void maybe_become_observer(struct ctl_runtime *rt)
{
    const struct ctl_rec_voters *t = &rt->committed.voters;
    if (!rt->opt.meta_dir || rt->closing || rt->leading || t->n == 0 ||
        ids_have((const int32_t *)t->ids, (size_t)t->n, rt->node))
        return;
    const struct raft *r = replica_raft(rt->rp);
    const struct raft_conf *conf = raft_conf(r);
    if (raft_role(r) == RAFT_LEADER || ids_have(conf->voters, conf->n_voters, rt->node) ||
        raft_conf_has_learner(conf, rt->node))
        return; /* the group still counts on it */
    if (raft_conf_has_member(conf, rt->node) && raft_conf_index(r) > raft_commit(r) &&
        !(rt->leave_confirmed && rt->leave_index == raft_conf_index(r))) {
        /* Only on the old side of a joint configuration it has not seen committed: once that
         * commits the leader appends the new one and stops writing to this node, which so
         * may never learn it. It asks the voters to be (a metadata fetch answers with the
         * leader's commit index, observe_response) rather than leave while its vote may
         * still be needed. */
        size_t n = 0;
        for (int32_t i = 0; i < t->n; i++)
            rt->obs_voters[n++] = t->ids[i];
        rt->n_obs_voters = n;
        if (rt->leave_index != raft_conf_index(r)) {
            rt->leave_index = raft_conf_index(r);
            rt->leave_confirmed = false;
            observe_retry(rt, RAFT_NONE, 0);
        }
        observe_poll(rt);
        return;
    }
    for (size_t i = 0; i < rt->n_pend;) { /* proposals of ours the log no longer decides */
        if (!rt->pend[i]->forwarded)
            pend_fail(rt, i, KERR_NOT_CONTROLLER);
        else
            i++;
    }
    size_t n = 0;
    for (int32_t i = 0; i < t->n; i++)
        if (t->ids[i] != rt->node)
            rt->obs_voters[n++] = t->ids[i];
    rt->n_obs_voters = n;
    replica_close(rt->rp);
    rt->rp = NULL;
    int rc = plog_destroy(rt->log);
    rt->log = NULL;
    if (rc != 0)
        log_warn("ctl_metadata_log_not_removed", "node=%d dir=%s err=\"%s\"", rt->node,
                 rt->opt.meta_dir, err_str(rc));
    mem_free(rt->parked);
    rt->parked = NULL;
    rt->n_parked = rt->cap_parked = 0;
    rt->observer = true;
    rt->leave_confirmed = false;
    rt->leave_index = 0;
    rt->obs_commit = rt->applied;
    rt->obs_term = 0;
    observe_retry(rt, RAFT_NONE, 0);
    log_info("ctl_became_observer", "node=%d voters=%zu applied=%lld", rt->node, n,
             (long long)rt->applied);
    if (rt->opt.on_member_change)
        (void)rt->opt.on_member_change(rt, false, rt->opt.data);
}

size_t ctl_runtime_voters(const struct ctl_runtime *rt, int32_t *ids, size_t cap)
{
    size_t n = 0;
    if (rt->observer) {
        for (size_t i = 0; i < rt->n_obs_voters && n < cap; i++)
            ids[n++] = rt->obs_voters[i];
        return n;
    }
    const struct raft_conf *conf = raft_conf(replica_raft(rt->rp));
    for (size_t i = 0; i < conf->n_voters && n < cap; i++)
        ids[n++] = conf->voters[i];
    return n;
}

/* ---- open / close -------------------------------------------------------------------------- */

static bool dir_joined(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return false;
    bool joined = faccessat(dfd, CTL_JOINED_FILE, F_OK, 0) == 0;
    close(dfd);
    return joined;
}

bool ctl_runtime_dir_joined(const char *dir)
{
    return dir_joined(dir);
}

int ctl_runtime_open(const char *dir, int32_t node_id, const struct ctl_voter *voters,
                     size_t n_voters, const struct ctl_runtime_options *opt, int64_t now_ms,
                     struct ctl_runtime **out)
{
    bool joined = opt->joined || dir_joined(dir);
    if (!opt->send_raft || !opt->send_frame || n_voters > RAFT_VOTERS_MAX || node_id < 0 ||
        (n_voters < 1 && !joined))
        return -ERR_INVALID;
    bool member = false;
    int32_t ids[RAFT_VOTERS_MAX];
    for (size_t i = 0; i < n_voters; i++) {
        if (voters[i].id < 0)
            return -ERR_INVALID;
        for (size_t j = 0; j < i; j++)
            if (voters[j].id == voters[i].id)
                return -ERR_INVALID;
        member |= voters[i].id == node_id;
        ids[i] = voters[i].id;
    }
    if (!member && !joined)
        return -ERR_INVALID;
    struct ctl_runtime *rt = runtime_new(node_id, opt, now_ms);
    int rc = open_log(dir, opt->flusher, &rt->log);
    if (rc != 0)
        goto out_free;
    if (plog_start_offset(rt->log) > 0) {
        rc = -ERR_UNSUPPORTED; /* needs a metadata snapshot: a later step */
        goto out_close_log;
    }
    rc = open_replica(rt, ids, joined ? 0 : n_voters);
    if (rc != 0)
        goto out_close_log;
    int64_t commit = raft_commit(replica_raft(rt->rp));
    if (commit > rt->applied) {
        int64_t through;
        rc = replay(rt, &rt->committed, 0, commit, &through);
        if (rc != 0)
            goto out_close_replica;
        rt->applied = through;
    }
    log_info("ctl_runtime_open", "node=%d dir=%s commit=%lld records=%llu skipped=%llu", node_id,
             dir, (long long)commit, (unsigned long long)rt->committed.records_applied,
             (unsigned long long)rt->skipped);
    *out = rt;
    return 0;

out_close_replica:
    replica_close(rt->rp);
out_close_log:
    plog_close(rt->log);
out_free:
    ctl_sessions_free(&rt->sessions);
    ctl_image_free(&rt->work);
    ctl_image_free(&rt->committed);
    mem_free(rt);
    return rc;
}

void ctl_runtime_close(struct ctl_runtime *rt)
{
    if (!rt)
        return;
    rt->closing = true;
    while (rt->n_pend > 0)
        pend_fail(rt, 0, KERR_NOT_CONTROLLER);
    mem_free(rt->pend);
    mem_free(rt->parked); /* held fetches: their observers time out and ask another voter */
    if (rt->rp)
        replica_close(rt->rp);
    if (rt->log)
        plog_close(rt->log);
    ctl_sessions_free(&rt->sessions);
    ctl_image_free(&rt->work);
    ctl_image_free(&rt->committed);
    mem_free(rt);
}

/* ---- queries ------------------------------------------------------------------------------- */

const struct ctl_image *ctl_runtime_image(const struct ctl_runtime *rt)
{
    return &rt->committed;
}

int32_t ctl_runtime_leader(const struct ctl_runtime *rt)
{
    return rt->observer ? rt->obs_leader : raft_leader(replica_raft(rt->rp));
}

int64_t ctl_runtime_term(const struct ctl_runtime *rt)
{
    return rt->observer ? rt->obs_term : raft_term(replica_raft(rt->rp));
}

enum raft_role ctl_runtime_role(const struct ctl_runtime *rt)
{
    return rt->observer ? RAFT_FOLLOWER : raft_role(replica_raft(rt->rp));
}

bool ctl_runtime_is_observer(const struct ctl_runtime *rt)
{
    return rt->observer;
}

bool ctl_runtime_caught_up(const struct ctl_runtime *rt)
{
    if (rt->observer)
        return rt->obs_leader != RAFT_NONE && rt->applied >= rt->obs_commit;
    struct replica_status st;
    replica_status(rt->rp, &st);
    return st.leader != RAFT_NONE && rt->applied >= st.commit;
}

int32_t ctl_runtime_node(const struct ctl_runtime *rt)
{
    return rt->node;
}

int64_t ctl_runtime_applied(const struct ctl_runtime *rt)
{
    return rt->applied;
}

size_t ctl_runtime_pending(const struct ctl_runtime *rt)
{
    return rt->n_pend;
}

uint64_t ctl_runtime_skipped(const struct ctl_runtime *rt)
{
    return rt->skipped;
}

struct replica *ctl_runtime_replica(const struct ctl_runtime *rt)
{
    return rt->rp;
}
