/* The simulated world: event queue, network, disks, nodes, faults and clients (see sim.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/mem.h"
#include "sim.h"

const char *profile_name(enum sim_profile p)
{
    switch (p) {
    case PROFILE_NET:
        return "net";
    case PROFILE_CRASH:
        return "crash";
    case PROFILE_MEMBERSHIP:
        return "membership";
    case PROFILE_GROW:
        return "grow";
    default:
        return "?";
    }
}

void sim_trace(struct sim *s, const char *fmt, ...)
{
    if (!s->cfg.verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("%8lld ", (long long)s->now);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
}

void sim_fail(struct sim *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    s->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof(s->why), fmt, ap);
    va_end(ap);
    sim_trace(s, "VIOLATION %s", s->why);
}

struct node *sim_node(struct sim *s, int32_t id)
{
    if (id < 1 || id > SIM_SLOTS)
        return NULL;
    struct node *n = &s->nodes[id - 1];
    return n->used ? n : NULL;
}

/* ---- events ---------------------------------------------------------------------------------- */

static bool ev_less(const struct event *a, const struct event *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static void schedule(struct sim *s, int64_t at, uint8_t type, int32_t node, uint32_t inc,
                     uint64_t arg, struct smsg *msg)
{
    MEM_GROW(s->heap, s->cap_heap, s->n_heap + 1);
    struct event ev = {.at = at,
                       .seq = ++s->ev_seq,
                       .type = type,
                       .node = node,
                       .inc = inc,
                       .arg = arg,
                       .msg = msg};
    size_t i = s->n_heap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&ev, &s->heap[p]))
            break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = ev;
}

static bool ev_pop(struct sim *s, struct event *out)
{
    if (s->n_heap == 0)
        return false;
    *out = s->heap[0];
    struct event last = s->heap[--s->n_heap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->n_heap)
            break;
        if (c + 1 < s->n_heap && ev_less(&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!ev_less(&s->heap[c], &last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->n_heap > 0)
        s->heap[i] = last;
    return true;
}

/* ---- network --------------------------------------------------------------------------------- */

static bool link_cut(const struct sim *s, int32_t from, int32_t to)
{
    return s->cut[from - 1][to - 1];
}

static void net_send(struct sim *s, struct smsg *m)
{
    int32_t from = m->m.from, to = m->m.to;
    if (to < 1 || to > SIM_SLOTS || link_cut(s, from, to) || rng_pm(&s->rng, s->drop_pm)) {
        smsg_free(m);
        return;
    }
    int64_t delay = rng_range(&s->rng, 1, 5);
    if (rng_pm(&s->rng, s->slow_pm))
        delay += rng_range(&s->rng, 10, 60); /* overtaken by later messages: reordering */
    if (rng_pm(&s->rng, s->dup_pm))
        schedule(s, s->now + rng_range(&s->rng, 1, 40), EV_DELIVER, to, 0, 0, smsg_dup(m));
    schedule(s, s->now + delay, EV_DELIVER, to, 0, 0, m);
}

/* ---- disks ----------------------------------------------------------------------------------- */

static struct op *op_push(struct node *n, uint8_t type)
{
    MEM_GROW(n->ops, n->cap_ops, n->n_ops + 1);
    struct op *o = &n->ops[n->n_ops++];
    memset(o, 0, sizeof(*o));
    o->type = type;
    o->seq = ++n->op_seq;
    return o;
}

static void op_apply(struct node *n, const struct op *o)
{
    switch (o->type) {
    case OP_HS:
        n->hs_term = o->term;
        n->hs_vote = o->vote;
        break;
    case OP_TRUNC:
        CHECK(slog_truncate(&n->dur, o->index));
        break;
    case OP_APPEND:
        slog_append(&n->dur, &o->e);
        break;
    case OP_INSTALL:
        slog_install(&n->dur, o->index, o->term, o->chain, &o->conf);
        break;
    }
}

static void ops_drop(struct node *n, size_t k)
{
    if (k == 0)
        return;
    for (size_t i = 0; i < k; i++)
        if (n->ops[i].type == OP_APPEND)
            sentry_free(&n->ops[i].e);
    memmove(n->ops, n->ops + k, (n->n_ops - k) * sizeof(*n->ops));
    n->n_ops -= k;
}

static void sync_schedule(struct sim *s, struct node *n)
{
    if (n->sync_pending || n->n_ops == 0 || !n->up)
        return;
    n->sync_pending = true;
    int64_t lat = rng_range(&s->rng, 1, 8);
    if (rng_pm(&s->rng, 60))
        lat += rng_range(&s->rng, 10, 50);
    schedule(s, s->now + lat, EV_SYNC, n->id, n->inc, n->op_seq, NULL);
}

static void pump(struct sim *s, struct node *n);

static void sync_done(struct sim *s, struct node *n, uint64_t covers)
{
    n->sync_pending = false;
    size_t k = 0;
    while (k < n->n_ops && n->ops[k].seq <= covers)
        op_apply(n, &n->ops[k++]);
    ops_drop(n, k);
    n->synced = covers;
    raft_persisted_hard_state(n->r, n->hs_term, n->hs_vote);
    int64_t last = slog_last(&n->dur);
    raft_persisted(n->r, last, slog_term_at(&n->dur, last));
    pump(s, n);
    sync_schedule(s, n);
}

/* ---- nodes ------------------------------------------------------------------------------------
 */

static void node_start(struct sim *s, struct node *n)
{
    struct raft_term_start *terms = mem_alloc((n->dur.n + 1) * sizeof(*terms));
    size_t nt = 0;
    for (size_t i = 0; i < n->dur.n; i++)
        if (nt == 0 || terms[nt - 1].term != n->dur.e[i].term)
            terms[nt++] =
                (struct raft_term_start){.term = n->dur.e[i].term, .first = n->dur.e[i].first};
    struct raft_conf_at confs[256];
    size_t nc = slog_confs(&n->dur, confs, ARRAY_LEN(confs));
    struct raft_restore st = {.term = n->hs_term,
                              .vote = n->hs_vote,
                              .log_start = n->dur.start,
                              .log_last = slog_last(&n->dur),
                              .prev_term = n->dur.prev_term,
                              .terms = terms,
                              .n_terms = nt,
                              .confs = confs,
                              .n_confs = nc,
                              .commit = -1};
    struct raft_options o;
    raft_options_default(&o, n->id, rng_next(&s->rng));
    o.election_timeout_ms = SIM_ELECTION_MS;
    o.heartbeat_ms = SIM_HEARTBEAT_MS;
    int rc = raft_new(&o, &st, s->now, &n->r);
    mem_free(terms);
    if (rc != 0) {
        sim_fail(s, "n%d: raft_new refused the restored state (%d)", n->id, rc);
        return;
    }
    slog_copy(&n->cur, &n->dur);
    n->up = true;
    n->inc++;
    n->role = RAFT_FOLLOWER;
    n->term = raft_term(n->r);
    n->commit = raft_commit(n->r);
    n->applied = n->commit;
    n->conf = *raft_conf(n->r);
    n->synced = n->op_seq;
    n->restart_at = 0;
    schedule(s, s->now + rng_range(&s->rng, 1, SIM_TICK_MS), EV_TICK, n->id, n->inc, 0, NULL);
    char cb[64];
    sim_trace(s, "n%d start term=%lld log=[%lld..%lld] conf=%s", n->id, (long long)n->term,
              (long long)n->dur.start, (long long)slog_last(&n->dur),
              raft_conf_format(&n->conf, cb, sizeof(cb)));
}

static void node_boot(struct sim *s, int32_t id, const struct raft_conf *base)
{
    struct node *n = &s->nodes[id - 1];
    CHECK(!n->used);
    memset(n, 0, sizeof(*n));
    n->id = id;
    n->used = true;
    n->hs_vote = RAFT_NONE;
    struct raft_conf_at b = {.index = -1, .conf = *base};
    slog_init(&n->cur, 0, 0, 0, &b);
    slog_init(&n->dur, 0, 0, 0, &b);
    n->joined_ms = s->now;
    node_start(s, n);
}

/* Recovery after a crash: entries whose bytes no longer match their CRC (a torn write) are cut
 * together with everything after them. */
static void recover(struct sim *s, struct node *n)
{
    for (size_t i = 0; i < n->dur.n; i++) {
        if (sentry_crc(&n->dur.e[i]) != n->dur.e[i].crc) {
            sim_trace(s, "n%d recovery cuts a torn entry at %lld", n->id,
                      (long long)n->dur.e[i].first);
            CHECK(slog_truncate(&n->dur, n->dur.e[i].first));
            s->st.torn++;
            return;
        }
    }
}

static void node_down(struct sim *s, struct node *n)
{
    raft_free(n->r);
    n->r = NULL;
    n->up = false;
    n->inc++;
    n->sync_pending = false;
    n->crash_now = false;
    n->n_props = 0; /* their fate is unknown to the client: never acknowledged */
}

enum crash_mode { CRASH_LOSE = 0, CRASH_PREFIX, CRASH_TORN };

static void node_crash(struct sim *s, struct node *n, int64_t down_ms)
{
    enum crash_mode mode = (enum crash_mode)rng_below(&s->rng, 3);
    size_t keep = mode == CRASH_LOSE ? 0 : (size_t)rng_below(&s->rng, n->n_ops + 1);
    for (size_t i = 0; i < keep; i++)
        op_apply(n, &n->ops[i]);
    if (mode == CRASH_TORN && keep < n->n_ops && n->ops[keep].type == OP_APPEND) {
        struct op *o = &n->ops[keep];
        if (o->e.len > 0)
            o->e.payload[rng_below(&s->rng, o->e.len)] ^= (uint8_t)(1 + rng_below(&s->rng, 255));
        else
            o->e.crc ^= 1;
        op_apply(n, o); /* written partly: recovery will notice */
    }
    sim_trace(s, "n%d CRASH mode=%s pending=%zu kept=%zu down=%lldms", n->id,
              mode == CRASH_LOSE     ? "lose"
              : mode == CRASH_PREFIX ? "prefix"
                                     : "torn",
              n->n_ops, keep, (long long)down_ms);
    ops_drop(n, n->n_ops);
    recover(s, n);
    node_down(s, n);
    s->st.crashes++;
    n->restart_at = s->now + down_ms;
    schedule(s, n->restart_at, EV_RESTART, n->id, n->inc, 0, NULL);
}

static void node_decommission(struct sim *s, struct node *n)
{
    sim_trace(s, "n%d decommissioned", n->id);
    if (n->up)
        node_down(s, n);
    slog_free(&n->cur);
    slog_free(&n->dur);
    ops_drop(n, n->n_ops);
    mem_free(n->ops);
    mem_free(n->props);
    memset(n, 0, sizeof(*n));
    n->id = (int32_t)(n - s->nodes) + 1;
    n->member = MEMBER_REMOVED; /* slot never reused */
}

/* ---- the adapter: consuming readies ------------------------------------------------------------
 */

static struct smsg *fill_append(struct sim *s, struct node *n, const struct raft_msg *m)
{
    const struct sentry *ents[32];
    size_t k = 0;
    long i = m->index + 1 <= slog_last(&n->cur) ? slog_find(&n->cur, m->index + 1) : -1;
    if (i >= 0 && n->cur.e[i].first != m->index + 1) {
        sim_fail(s, "n%d asked to send from %lld, inside an entry", n->id, (long long)m->index + 1);
        i = -1;
    }
    for (; i >= 0 && (size_t)i < n->cur.n && k < ARRAY_LEN(ents); i++) {
        if (n->cur.e[i].last > m->last)
            break;
        ents[k++] = &n->cur.e[i];
    }
    if (k > 1 && rng_pm(&s->rng, s->trim_pm))
        k = (size_t)rng_range(&s->rng, 1, (int64_t)k - 1); /* the adapter sends a prefix */
    struct raft_msg out = *m;
    out.last = k ? ents[k - 1]->last : m->index;
    return smsg_new(&out, ents, k);
}

static void write_entries(struct sim *s, struct node *n, const struct raft_ready *rd)
{
    if (rd->hard_state_changed) {
        struct op *o = op_push(n, OP_HS);
        o->term = rd->hs_term;
        o->vote = rd->hs_vote;
    }
    if (rd->install) {
        uint64_t chain = 0;
        check_install(s, n, rd->install_index, &chain);
        slog_install(&n->cur, rd->install_index, rd->install_term, chain, &rd->install_conf);
        struct op *o = op_push(n, OP_INSTALL);
        o->index = rd->install_index;
        o->term = rd->install_term;
        o->chain = chain;
        o->conf = rd->install_conf;
        s->st.installs++;
        sim_trace(s, "n%d install at %lld", n->id, (long long)rd->install_index);
    }
    if (rd->truncate_from >= 0) {
        check_cut(s, n, rd->truncate_from, "truncation");
        if (!slog_truncate(&n->cur, rd->truncate_from))
            sim_fail(s, "n%d told to truncate at %lld, inside an entry or before its log", n->id,
                     (long long)rd->truncate_from);
        op_push(n, OP_TRUNC)->index = rd->truncate_from;
    }
    for (size_t i = 0; i < rd->n_entries && !s->failed; i++) {
        const struct raft_entry *re = &rd->entries[i];
        struct sentry e = {.first = re->first,
                           .last = re->last,
                           .term = re->term,
                           .kind = re->kind,
                           .len = (uint32_t)re->len,
                           .payload = (uint8_t *)re->payload};
        if (e.first != slog_last(&n->cur) + 1) {
            sim_fail(s, "n%d told to append at %lld after %lld", n->id, (long long)e.first,
                     (long long)slog_last(&n->cur));
            return;
        }
        e.data_crc = crc32c(0, e.payload, e.len);
        e.crc = sentry_crc(&e);
        e.chain = chain_next(slog_last_chain(&n->cur), &e);
        check_append(s, n, &e);
        slog_append(&n->cur, &e);
        struct op *o = op_push(n, OP_APPEND);
        sentry_copy(&o->e, &e);
    }
}

static void settle_proposals(struct sim *s, struct node *n)
{
    size_t kept = 0;
    for (size_t i = 0; i < n->n_props; i++) {
        struct proposal *p = &n->props[i];
        if (p->last > n->commit) {
            n->props[kept++] = *p;
            continue;
        }
        if (check_ack(s, n, p))
            sim_trace(s, "n%d ack [%lld..%lld] term %lld", n->id, (long long)p->first,
                      (long long)p->last, (long long)p->term);
    }
    n->n_props = kept;
}

static void pump(struct sim *s, struct node *n)
{
    for (int guard = 0; !s->failed && n->up && raft_has_ready(n->r); guard++) {
        CHECK(guard < 10000);
        struct raft_conf conf_before = n->conf;
        enum raft_role role_before = n->role;
        struct raft_ready rd;
        raft_ready(n->r, &rd);
        write_entries(s, n, &rd);
        if (rd.soft_state_changed) {
            check_role(s, n, &rd);
            if (rd.role != n->role || rd.term != n->term) {
                char cb[64];
                sim_trace(s, "n%d %s term=%lld last=%lld commit=%lld conf=%s", n->id,
                          raft_role_name(rd.role), (long long)rd.term,
                          (long long)raft_last_index(n->r), (long long)rd.commit,
                          raft_conf_format(raft_conf(n->r), cb, sizeof(cb)));
            }
        }
        for (size_t i = 0; i < rd.n_msgs; i++) {
            const struct raft_msg *m = &rd.msgs[i];
            net_send(s, m->type == RAFT_MSG_APPEND ? fill_append(s, n, m) : smsg_new(m, NULL, 0));
        }
        if (rd.commit_changed)
            check_commit(s, n, &rd, &conf_before, role_before);
        n->role = rd.role;
        n->term = rd.term;
        n->commit = rd.commit;
        bool wrote = rd.hard_state_changed || rd.n_entries || rd.truncate_from >= 0 || rd.install;
        raft_advance(n->r, &rd);
        n->conf = *raft_conf(n->r);
        if ((wrote && rng_pm(&s->rng, s->crash_write_pm)) ||
            (rd.hard_state_changed && rng_pm(&s->rng, s->crash_vote_pm)) ||
            (rd.commit_changed && role_before == RAFT_LEADER &&
             rng_pm(&s->rng, s->crash_commit_pm)))
            n->crash_now = true;
        if (rd.commit_changed)
            settle_proposals(s, n);
    }
    sync_schedule(s, n);
}

/* ---- client -------------------------------------------------------------------------------------
 */

static struct node *best_leader(struct sim *s)
{
    struct node *best = NULL;
    for (int i = 0; i < SIM_SLOTS; i++) {
        struct node *n = &s->nodes[i];
        if (n->used && n->up && raft_role(n->r) == RAFT_LEADER &&
            (!best || raft_term(n->r) > raft_term(best->r)))
            best = n;
    }
    return best;
}

static struct node *random_up(struct sim *s)
{
    struct node *pick[SIM_SLOTS];
    size_t k = 0;
    for (int i = 0; i < SIM_SLOTS; i++)
        if (s->nodes[i].used && s->nodes[i].up)
            pick[k++] = &s->nodes[i];
    return k ? pick[rng_below(&s->rng, k)] : NULL;
}

static void client(struct sim *s)
{
    struct node *n = best_leader(s);
    if (!n || rng_pm(&s->rng, 150))
        n = random_up(s);
    if (n) {
        uint8_t payload[48];
        uint32_t len = (uint32_t)rng_range(&s->rng, 8, 40);
        uint64_t id = (uint64_t)++s->st.proposals;
        memcpy(payload, &id, 8);
        for (uint32_t i = 8; i < len; i++)
            payload[i] = (uint8_t)rng_next(&s->rng);
        struct proposal p = {.len = len, .data_crc = crc32c(0, payload, len)};
        int64_t count = rng_range(&s->rng, 1, 4);
        if (raft_propose(n->r, count, payload, len, &p.first, &p.last, &p.term) == 0) {
            MEM_GROW(n->props, n->cap_props, n->n_props + 1);
            n->props[n->n_props++] = p;
            pump(s, n);
        }
    }
    schedule(s, s->now + rng_range(&s->rng, 2, 12), EV_CLIENT, 0, 0, 0, NULL);
}

/* ---- faults -------------------------------------------------------------------------------------
 */

static void heal_links(struct sim *s)
{
    memset(s->cut, 0, sizeof(s->cut));
}

static void isolate(struct sim *s, int32_t id)
{
    for (int j = 0; j < SIM_SLOTS; j++) {
        if (j == id - 1)
            continue;
        s->cut[id - 1][j] = true;
        s->cut[j][id - 1] = true;
    }
    sim_trace(s, "net: isolate n%d", id);
}

static size_t live_ids(struct sim *s, int32_t *ids)
{
    size_t k = 0;
    for (int i = 0; i < SIM_SLOTS; i++)
        if (s->nodes[i].used)
            ids[k++] = s->nodes[i].id;
    return k;
}

static void bipartition(struct sim *s)
{
    int32_t ids[SIM_SLOTS];
    size_t k = live_ids(s, ids);
    if (k < 2)
        return;
    for (size_t i = k - 1; i > 0; i--) {
        size_t j = rng_below(&s->rng, i + 1);
        int32_t t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
    size_t split = (size_t)rng_range(&s->rng, 1, (int64_t)k - 1);
    for (size_t a = 0; a < split; a++)
        for (size_t b = split; b < k; b++) {
            s->cut[ids[a] - 1][ids[b] - 1] = true;
            s->cut[ids[b] - 1][ids[a] - 1] = true;
        }
    sim_trace(s, "net: bipartition, %zu | %zu", split, k - split);
}

static void asymmetric(struct sim *s, int32_t id, bool outgoing)
{
    for (int j = 0; j < SIM_SLOTS; j++) {
        if (j == id - 1)
            continue;
        if (outgoing)
            s->cut[id - 1][j] = true;
        else
            s->cut[j][id - 1] = true;
    }
    sim_trace(s, "net: n%d can %s", id, outgoing ? "receive but not send" : "send but not receive");
}

static void random_cuts(struct sim *s)
{
    for (int a = 0; a < SIM_SLOTS; a++)
        for (int b = 0; b < SIM_SLOTS; b++)
            if (a != b && rng_pm(&s->rng, 200))
                s->cut[a][b] = true;
    sim_trace(s, "net: random link cuts");
}

static void compact_some(struct sim *s)
{
    struct node *n = random_up(s);
    if (!n)
        return;
    int64_t limit = MIN(raft_commit(n->r), raft_durable_index(n->r));
    limit -= rng_range(&s->rng, 0, 30);
    long k = limit >= n->cur.start ? slog_find(&n->cur, limit) : -1;
    if (k < 0)
        return;
    if (n->cur.e[k].last > limit)
        k--;
    if (k < 0)
        return;
    int64_t at = n->cur.e[k].last + 1;
    if (raft_compact(n->r, at) != 0)
        return;
    slog_compact(&n->cur, at);
    slog_compact(&n->dur, at);
    s->st.compactions++;
    sim_trace(s, "n%d compacts below %lld", n->id, (long long)at);
}

static void transfer(struct sim *s)
{
    struct node *l = best_leader(s);
    if (!l)
        return;
    const struct raft_conf *c = raft_conf(l->r);
    int32_t to = rng_pm(&s->rng, 300) ? RAFT_NONE : c->voters[rng_below(&s->rng, c->n_voters)];
    int rc = raft_transfer_leader(l->r, to);
    sim_trace(s, "n%d transfer leadership to %d: %d", l->id, (int)to, rc);
    pump(s, l);
}

static int32_t free_slot(struct sim *s)
{
    for (int i = 0; i < SIM_SLOTS; i++)
        if (!s->nodes[i].used && s->nodes[i].member == MEMBER_NONE)
            return i + 1;
    return 0;
}

/* The learner path (raft/conf.h): a free slot joins as a learner (one simple entry), catches
 * up, and is later promoted to voter (joint consensus, taking it off the learners), or dropped.
 * Promotion may come before it has caught up: then C_old,new waits for it, which must stay
 * safe. Returns whether it acted (else change_voters goes on with a plain voter change). */
static bool change_learners(struct sim *s, struct node *l, const struct raft_conf *c)
{
    int32_t v[RAFT_VOTERS_MAX], ln[RAFT_LEARNERS_MAX];
    size_t n = c->n_voters, nl = c->n_learners;
    memcpy(v, c->voters, n * sizeof(*v));
    memcpy(ln, c->learners, nl * sizeof(*ln));
    char a[64], b[64];
    raft_conf_format(c, a, sizeof(a));
    const char *what;
    int32_t added = 0;
    if (nl > 0 && n < RAFT_VOTERS_MAX && rng_pm(&s->rng, 750)) {
        size_t i = rng_below(&s->rng, nl);
        v[n++] = ln[i]; /* promote */
        ln[i] = ln[--nl];
        what = "promote";
    } else if (nl > 0 && rng_pm(&s->rng, 500)) {
        size_t i = rng_below(&s->rng, nl);
        ln[i] = ln[--nl]; /* drop one */
        what = "drop learner";
    } else if (nl < RAFT_LEARNERS_MAX && (added = free_slot(s)) != 0) {
        ln[nl++] = added;
        what = "add learner";
    } else {
        return false;
    }
    if (added) {
        struct raft_conf empty = {0};
        node_boot(s, added, &empty);
        s->nodes[added - 1].member = MEMBER_JOINING;
    }
    struct raft_conf want = {.n_voters = (uint8_t)n, .n_learners = (uint8_t)nl};
    memcpy(want.voters, v, n * sizeof(*v));
    memcpy(want.learners, ln, nl * sizeof(*ln));
    int rc = raft_propose_members(l->r, v, n, ln, nl);
    sim_trace(s, "n%d %s: %s -> %s: %d", l->id, what, a, raft_conf_format(&want, b, sizeof(b)),
              rc);
    if (rc == 0) {
        s->st.conf_changes++;
        s->st.learner_changes++;
    }
    pump(s, l);
    return true;
}

static void change_voters(struct sim *s)
{
    struct node *l = best_leader(s);
    if (!l)
        return;
    const struct raft_conf *c = raft_conf(l->r);
    if (raft_conf_is_joint(c) || raft_conf_index(l->r) > raft_commit(l->r))
        return;
    if ((c->n_learners > 0 || rng_pm(&s->rng, 400)) && change_learners(s, l, c))
        return;
    int32_t v[RAFT_VOTERS_MAX];
    size_t n = c->n_voters;
    memcpy(v, c->voters, n * sizeof(*v));
    /* 3 voters: add or replace; 4: any; 5: remove or replace. Growing from one voter (grow
     * profile): 1: add; 2: add or remove, down to a single voter again. */
    bool grow = s->cfg.profile == PROFILE_GROW;
    int kind = n <= 1              ? 0
               : n == 2 && grow    ? (rng_pm(&s->rng, 600) ? 0 : 1)
               : n <= 3            ? (rng_pm(&s->rng, 700) ? 0 : grow && rng_pm(&s->rng, 300) ? 1 : 2)
               : n >= 5            ? (rng_pm(&s->rng, 700) ? 1 : 2)
                                   : (int)rng_below(&s->rng, 3);
    int32_t added = 0;
    if (kind >= 1) {
        size_t i = rng_below(&s->rng, n);
        if (rng_pm(&s->rng, 300))
            for (size_t k = 0; k < n; k++)
                if (v[k] == l->id)
                    i = k; /* remove the leader itself */
        v[i] = v[--n];
    }
    if (kind != 1 && (added = free_slot(s)) != 0)
        v[n++] = added;
    if (n < (grow ? 1 : 3))
        return;
    if (added) {
        struct raft_conf empty = {0};
        node_boot(s, added, &empty);
        s->nodes[added - 1].member = MEMBER_JOINING;
    }
    char a[64], b[64];
    struct raft_conf want = {.n_voters = (uint8_t)n};
    memcpy(want.voters, v, n * sizeof(*v));
    raft_conf_format(c, a, sizeof(a)); /* c is gone once the proposal changes the conf */
    int rc = raft_propose_conf(l->r, v, n);
    sim_trace(s, "n%d propose voters %s -> %s: %d", l->id, a, raft_conf_format(&want, b, sizeof(b)),
              rc);
    if (rc == 0)
        s->st.conf_changes++;
    pump(s, l);
}

/* Whether a live node other than n has n in its configuration in force. */
static bool named_by_others(struct sim *s, const struct node *n)
{
    for (int j = 0; j < SIM_SLOTS; j++) {
        const struct node *o = &s->nodes[j];
        if (o != n && o->used && o->up && raft_conf_has_member(raft_conf(o->r), n->id))
            return true;
    }
    return false;
}

/* Members that a committed configuration dropped (or that never made it in) are shut down for
 * good once no live node's configuration names them. */
static void membership_tidy(struct sim *s)
{
    for (int i = 0; i < SIM_SLOTS; i++) {
        struct node *n = &s->nodes[i];
        if (!n->used)
            continue;
        bool committed_in = raft_conf_has_member(&s->orc_conf, n->id);
        if (committed_in) {
            n->member = MEMBER_VOTER;
            continue;
        }
        bool named = named_by_others(s, n);
        bool stale_joiner = n->member == MEMBER_JOINING && s->now - n->joined_ms > 3000;
        if (!named && (n->member == MEMBER_VOTER || stale_joiner)) {
            n->member = MEMBER_REMOVED;
            schedule(s, s->now + rng_range(&s->rng, 200, 800), EV_DECOMMISSION, n->id, 0, 0, NULL);
        }
    }
}

static void crash_one(struct sim *s, struct node *n)
{
    if (n && n->up)
        node_crash(s, n, rng_range(&s->rng, 20, 1000));
}

static void power_loss(struct sim *s)
{
    sim_trace(s, "POWER LOSS");
    for (int i = 0; i < SIM_SLOTS; i++)
        if (s->nodes[i].used && s->nodes[i].up)
            node_crash(s, &s->nodes[i], rng_range(&s->rng, 50, 600));
}

static void net_weather(struct sim *s)
{
    s->drop_pm = (int)rng_range(&s->rng, 0, 200);
    s->dup_pm = (int)rng_range(&s->rng, 0, 80);
    s->slow_pm = (int)rng_range(&s->rng, 0, 200);
    sim_trace(s, "net: drop=%d dup=%d slow=%d per mille", s->drop_pm, s->dup_pm, s->slow_pm);
}

enum action {
    A_ISOLATE_LEADER,
    A_ISOLATE_ANY,
    A_BIPARTITION,
    A_LEADER_MUTE,
    A_LEADER_DEAF,
    A_RANDOM_CUTS,
    A_HEAL_LINKS,
    A_WEATHER,
    A_TRANSFER,
    A_COMPACT,
    A_CRASH_LEADER,
    A_CRASH_ANY,
    A_POWER_LOSS,
    A_VOTERS,
    A_COUNT,
};

static const int weights[PROFILE_COUNT][A_COUNT] = {
    /*            iso-L iso bip mute deaf cuts heal wthr xfer cmpct crL crA pwr voters */
    [PROFILE_NET] = {22, 10, 10, 8, 8, 8, 10, 10, 8, 6, 0, 0, 0, 0},
    [PROFILE_CRASH] = {10, 4, 5, 4, 4, 2, 8, 6, 5, 10, 25, 14, 4, 0},
    [PROFILE_MEMBERSHIP] = {8, 4, 4, 3, 3, 2, 8, 5, 6, 6, 8, 6, 2, 30},
    [PROFILE_GROW] = {6, 4, 3, 3, 3, 2, 8, 5, 5, 6, 10, 6, 3, 30},
};

static void fault(struct sim *s)
{
    int total = 0;
    for (int a = 0; a < A_COUNT; a++)
        total += weights[s->cfg.profile][a];
    int pick = (int)rng_below(&s->rng, (uint64_t)total);
    enum action act = A_HEAL_LINKS;
    for (int a = 0; a < A_COUNT; a++) {
        if (pick < weights[s->cfg.profile][a]) {
            act = (enum action)a;
            break;
        }
        pick -= weights[s->cfg.profile][a];
    }
    struct node *l = best_leader(s);
    switch (act) {
    case A_ISOLATE_LEADER:
        if (l)
            isolate(s, l->id);
        break;
    case A_ISOLATE_ANY: {
        struct node *n = random_up(s);
        if (n)
            isolate(s, n->id);
        break;
    }
    case A_BIPARTITION:
        bipartition(s);
        break;
    case A_LEADER_MUTE:
    case A_LEADER_DEAF:
        if (l)
            asymmetric(s, l->id, act == A_LEADER_MUTE);
        break;
    case A_RANDOM_CUTS:
        random_cuts(s);
        break;
    case A_HEAL_LINKS:
        heal_links(s);
        sim_trace(s, "net: links healed");
        break;
    case A_WEATHER:
        net_weather(s);
        break;
    case A_TRANSFER:
        transfer(s);
        break;
    case A_COMPACT:
        compact_some(s);
        break;
    case A_CRASH_LEADER:
        crash_one(s, l);
        break;
    case A_CRASH_ANY:
        crash_one(s, random_up(s));
        break;
    case A_POWER_LOSS:
        power_loss(s);
        break;
    case A_VOTERS:
        change_voters(s);
        break;
    case A_COUNT:
        break;
    }
}

/* Liveness: some node leads, followed (same term, same leader) by a majority of each side of
 * its configuration. */
static bool has_leader(struct sim *s)
{
    for (int i = 0; i < SIM_SLOTS; i++) {
        struct node *l = &s->nodes[i];
        if (!l->used || !l->up || raft_role(l->r) != RAFT_LEADER)
            continue;
        const struct raft_conf *c = raft_conf(l->r);
        const int32_t *sides[2] = {c->voters, c->old};
        size_t ns[2] = {c->n_voters, c->n_old};
        bool ok = true;
        for (int sd = 0; sd < 2 && ok; sd++) {
            size_t cnt = 0;
            for (size_t k = 0; k < ns[sd]; k++) {
                struct node *f = sim_node(s, sides[sd][k]);
                if (f && f->up && raft_term(f->r) == raft_term(l->r) && raft_leader(f->r) == l->id)
                    cnt++;
            }
            ok = ns[sd] == 0 || cnt >= ns[sd] / 2 + 1;
        }
        if (ok)
            return true;
    }
    return false;
}

static void heal(struct sim *s)
{
    s->healing = true;
    s->heal_at = s->now;
    s->st.heals++;
    heal_links(s);
    s->drop_pm = s->dup_pm = s->slow_pm = 0;
    s->crash_write_pm = s->crash_vote_pm = s->crash_commit_pm = 0;
    for (int i = 0; i < SIM_SLOTS; i++) {
        struct node *n = &s->nodes[i];
        if (n->used && !n->up)
            node_start(s, n);
    }
    sim_trace(s, "HEAL");
    s->awaiting_leader = true;
    schedule(s, s->now + SIM_LIVENESS_MS, EV_LIVENESS, 0, 0, 0, NULL);
    schedule(s, s->now + rng_range(&s->rng, 900, 1500), EV_CHAOS, 0, 0, 0, NULL);
}

/* ---- the run ------------------------------------------------------------------------------------
 */

static void dispatch(struct sim *s, struct event *ev)
{
    struct node *n = ev->node ? sim_node(s, ev->node) : NULL;
    switch (ev->type) {
    case EV_TICK:
        if (n && n->up && n->inc == ev->inc) {
            raft_tick(n->r, s->now);
            pump(s, n);
            schedule(s, s->now + SIM_TICK_MS, EV_TICK, n->id, n->inc, 0, NULL);
        }
        break;
    case EV_DELIVER: {
        struct smsg *m = ev->msg;
        int32_t from = m->m.from;
        if (n && n->up && from >= 1 && from <= SIM_SLOTS && !link_cut(s, from, n->id)) {
            raft_step(n->r, &m->m);
            pump(s, n);
        }
        smsg_free(m);
        break;
    }
    case EV_SYNC:
        if (n && n->up && n->inc == ev->inc)
            sync_done(s, n, ev->arg);
        break;
    case EV_CLIENT:
        client(s);
        break;
    case EV_FAULT:
        if (!s->healing && ev->arg == s->chaos_gen) {
            fault(s);
            schedule(s, s->now + rng_range(&s->rng, 100, 500), EV_FAULT, 0, 0, s->chaos_gen, NULL);
        }
        if (s->cfg.profile == PROFILE_MEMBERSHIP || s->cfg.profile == PROFILE_GROW)
            membership_tidy(s);
        break;
    case EV_RESTART:
        if (n && !n->up && n->inc == ev->inc)
            node_start(s, n);
        break;
    case EV_HEAL:
        heal(s);
        break;
    case EV_LIVENESS:
        if (s->awaiting_leader && !has_leader(s))
            sim_fail(s, "liveness: no leader within %d ms of the heal at %lld", SIM_LIVENESS_MS,
                     (long long)s->heal_at);
        s->awaiting_leader = false;
        if (s->cfg.profile == PROFILE_MEMBERSHIP || s->cfg.profile == PROFILE_GROW)
            membership_tidy(s);
        break;
    case EV_CHAOS:
        s->healing = false;
        s->chaos_gen++;
        s->trim_pm = (int)rng_range(&s->rng, 50, 400);
        if (s->cfg.profile != PROFILE_NET) {
            s->crash_write_pm = (int)rng_range(&s->rng, 0, 15);
            s->crash_vote_pm = rng_pm(&s->rng, 500) ? (int)rng_range(&s->rng, 0, 300) : 0;
            s->crash_commit_pm = rng_pm(&s->rng, 500) ? (int)rng_range(&s->rng, 0, 30) : 0;
        }
        sim_trace(s,
                  "CHAOS trim=%d crash_after_write=%d crash_after_vote=%d crash_after_commit=%d "
                  "per mille",
                  s->trim_pm, s->crash_write_pm, s->crash_vote_pm, s->crash_commit_pm);
        schedule(s, s->now + rng_range(&s->rng, 50, 300), EV_FAULT, 0, 0, s->chaos_gen, NULL);
        schedule(s, s->now + rng_range(&s->rng, 1500, 3000), EV_HEAL, 0, 0, 0, NULL);
        break;
    case EV_DECOMMISSION:
        /* still out of the committed configuration, and named by no live node's (a member
         * that was down when this was scheduled may have come back with a configuration, not
         * yet committed, that needs it: an operator would not remove that node either) */
        if (n && !raft_conf_has_member(&s->orc_conf, n->id) && !named_by_others(s, n))
            node_decommission(s, n);
        break;
    }
}

static void sim_free(struct sim *s)
{
    for (int i = 0; i < SIM_SLOTS; i++)
        if (s->nodes[i].used)
            node_decommission(s, &s->nodes[i]);
    for (size_t i = 0; i < s->n_heap; i++)
        smsg_free(s->heap[i].msg);
    mem_free(s->heap);
    check_free(s);
}

int sim_run(const struct sim_config *cfg, struct sim_stats *out, char *why, size_t why_cap)
{
    struct sim *s = mem_calloc(1, sizeof(*s));
    s->cfg = *cfg;
    s->rng.s = cfg->seed * 0x2545f4914f6cdd1dULL + (uint64_t)cfg->profile;
    s->n_initial = cfg->profile == PROFILE_GROW         ? 1
                   : cfg->profile == PROFILE_MEMBERSHIP ? 3
                                                        : (rng_pm(&s->rng, 500) ? 3 : 5);
    struct raft_conf boot = {.n_voters = (uint8_t)s->n_initial};
    for (int i = 0; i < s->n_initial; i++)
        boot.voters[i] = i + 1;
    check_init(s, &boot);
    for (int i = 0; i < s->n_initial; i++) {
        node_boot(s, i + 1, &boot);
        s->nodes[i].member = MEMBER_VOTER;
    }
    sim_trace(s, "profile=%s seed=%llu nodes=%d", profile_name(cfg->profile),
              (unsigned long long)cfg->seed, s->n_initial);
    schedule(s, 0, EV_HEAL, 0, 0, 0, NULL);
    schedule(s, 1, EV_CLIENT, 0, 0, 0, NULL);
    struct event ev;
    while (!s->failed && ev_pop(s, &ev)) {
        if (ev.at > cfg->duration_ms) {
            smsg_free(ev.msg);
            break;
        }
        s->now = ev.at;
        s->st.events++;
        dispatch(s, &ev);
        if (!s->failed)
            check_step(s);
        for (int i = 0; i < SIM_SLOTS && !s->failed; i++) {
            struct node *n = &s->nodes[i];
            if (n->used && n->up && n->crash_now) {
                n->crash_now = false;
                sim_trace(s, "n%d fault site: crash right after a write", n->id);
                node_crash(s, n, rng_range(&s->rng, 1, 40));
            }
        }
        if (s->awaiting_leader && has_leader(s)) {
            s->awaiting_leader = false;
            s->st.heal_leader_max_ms = MAX(s->st.heal_leader_max_ms, s->now - s->heal_at);
            s->st.heals_slow += s->now - s->heal_at > 400;
            sim_trace(s, "leader established %lld ms after the heal",
                      (long long)(s->now - s->heal_at));
        }
    }
    if (!s->failed && s->st.leader_changes < 5)
        sim_fail(s, "only %d leader changes (at least 5 wanted)", s->st.leader_changes);
    *out = s->st;
    int rc = s->failed ? -1 : 0;
    if (s->failed)
        snprintf(why, why_cap, "%s (at %lld ms)", s->why, (long long)s->now);
    sim_free(s);
    mem_free(s);
    return rc;
}
