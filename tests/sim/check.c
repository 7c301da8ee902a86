/* The simulator's safety checker.
 *
 * The oracle is the committed history: whenever a leader's commit index advances, the leader's
 * entries up to it are appended to the oracle (after checking that they are durable on a
 * majority of its configuration and agree with what the oracle already holds). Everything
 * else is compared with the oracle through chain hashes: a chain fingerprints a whole log
 * prefix, so equal chains at an index mean identical logs (bytes included) up to it.
 *
 * Properties (each failure names the property):
 *   election safety      at most one leader per term, and only once (not again after a crash)
 *   log matching         an entry (term, index) has one layout and one prefix in every log
 *   leader completeness  a leader of term T holds everything committed by leaders of terms < T
 *   commit               monotonic per incarnation, at an entry end, backed by durable copies
 *                        on a majority when a leader advances it, never beyond the oracle
 *                        elsewhere; applying it yields the oracle's prefix (state machine
 *                        safety)
 *   no committed cut     no truncation or install ever removes a committed entry
 *   acknowledged         every acknowledged entry is durable on a majority of the latest
 *                        committed configuration (its C_new side if joint: see ack_conf),
 *                        with identical bytes, after every event
 */
#include <string.h>

#include "base/check.h"
#include "base/mem.h"
#include "sim.h"

static uint64_t key(int64_t term, int64_t index, int tag)
{
    return ((uint64_t)term << 42) ^ ((uint64_t)index << 1) ^ (uint64_t)tag ^ 0x8000000000000000ULL;
}

void check_init(struct sim *s, const struct raft_conf *bootstrap)
{
    s->orc_conf = *bootstrap;
    s->acked_max = -1;
}

void check_free(struct sim *s)
{
    mem_free(s->orc);
    mem_free(s->marks);
    u64map_free(&s->leaders);
    u64map_free(&s->layout);
    u64map_free(&s->chains);
}

static int64_t orc_last(const struct sim *s)
{
    return s->n_orc ? s->orc[s->n_orc - 1].last : -1;
}

bool oracle_chain(const struct sim *s, int64_t index, uint64_t *chain)
{
    if (index == -1) {
        *chain = 0;
        return true;
    }
    size_t lo = 0, hi = s->n_orc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->orc[mid].last < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == s->n_orc || s->orc[lo].last != index)
        return false;
    *chain = s->orc[lo].chain;
    return true;
}

/* Whether node n's durable image holds the committed entry ending at index (chain). */
static bool dur_holds(const struct node *n, int64_t index, uint64_t chain)
{
    if (!n->used)
        return false;
    const struct slog *d = &n->dur;
    if (index < d->start - 1)
        return true; /* compacted or installed past it: only committed entries are */
    uint64_t c;
    return slog_chain_at(d, index, &c) && c == chain;
}

static bool side_ok(struct sim *s, const int32_t *ids, size_t k, int64_t index, uint64_t chain,
                    int *have, int *need)
{
    if (k == 0)
        return true;
    int cnt = 0;
    for (size_t i = 0; i < k; i++) {
        struct node *n = sim_node(s, ids[i]);
        if (n && dur_holds(n, index, chain))
            cnt++;
    }
    *have = cnt;
    *need = (int)k / 2 + 1;
    return cnt >= *need;
}

bool check_durable_majority(struct sim *s, const struct raft_conf *c, int64_t index, uint64_t chain,
                            int *have, int *need)
{
    *have = *need = 0;
    if (c->n_voters == 0)
        return false;
    return side_ok(s, c->voters, c->n_voters, index, chain, have, need) &&
           side_ok(s, c->old, c->n_old, index, chain, have, need);
}

void check_role(struct sim *s, struct node *n, const struct raft_ready *rd)
{
    if (rd->role != RAFT_LEADER || (n->role == RAFT_LEADER && n->term == rd->term))
        return;
    uint64_t who;
    if (u64map_get(&s->leaders, key(rd->term, 0, 0), &who)) {
        /* Twice by the same node (after a crash) is as bad: two logs under one term. */
        sim_fail(s, "election safety: term %lld led by n%d and again by n%d", (long long)rd->term,
                 (int)who, n->id);
        return;
    }
    u64map_put(&s->leaders, key(rd->term, 0, 0), (uint64_t)n->id);
    s->st.leader_changes++;
    /* Leader completeness: everything committed under earlier terms is in this log. */
    int64_t m = -1;
    for (size_t i = s->n_marks; i-- > 0;) {
        if (s->marks[i].term < rd->term) {
            m = s->marks[i].index;
            break;
        }
    }
    if (m < 0 || m < n->cur.start - 1)
        return;
    uint64_t want, got;
    CHECK(oracle_chain(s, m, &want));
    if (!slog_chain_at(&n->cur, m, &got) || got != want)
        sim_fail(s, "leader completeness: n%d leads term %lld without committed index %lld", n->id,
                 (long long)rd->term, (long long)m);
}

void check_append(struct sim *s, struct node *n, const struct sentry *e)
{
    uint64_t v;
    uint64_t k1 = key(e->term, e->first, 0);
    if (u64map_get(&s->layout, k1, &v)) {
        if ((int64_t)v != e->last)
            sim_fail(s,
                     "log matching: n%d has an entry [%lld..%lld] of term %lld, another log "
                     "[%lld..%lld]",
                     n->id, (long long)e->first, (long long)e->last, (long long)e->term,
                     (long long)e->first, (long long)v);
    } else {
        u64map_put(&s->layout, k1, (uint64_t)e->last);
    }
    uint64_t k2 = key(e->term, e->last, 1);
    if (u64map_get(&s->chains, k2, &v)) {
        if (v != e->chain)
            sim_fail(s,
                     "log matching: n%d's entry ending at %lld (term %lld) follows a "
                     "different prefix than another log's",
                     n->id, (long long)e->last, (long long)e->term);
    } else {
        u64map_put(&s->chains, k2, e->chain);
    }
}

void check_cut(struct sim *s, struct node *n, int64_t from, const char *what)
{
    long k = slog_find(&n->cur, from);
    if (k < 0)
        return;
    const struct sentry *e = &n->cur.e[k];
    uint64_t c;
    if (e->last <= orc_last(s) && oracle_chain(s, e->last, &c) && c == e->chain)
        sim_fail(s, "%s at %lld on n%d removes committed entry [%lld..%lld] term %lld", what,
                 (long long)from, n->id, (long long)e->first, (long long)e->last,
                 (long long)e->term);
}

void check_install(struct sim *s, struct node *n, int64_t index, uint64_t *chain)
{
    if (!oracle_chain(s, index, chain))
        sim_fail(s, "install on n%d at %lld: not the end of a committed entry", n->id,
                 (long long)index);
    check_cut(s, n, index + 1, "install");
}

static void oracle_extend(struct sim *s, struct node *n, int64_t commit, int64_t term)
{
    const struct slog *l = &n->cur;
    int64_t last = orc_last(s);
    uint64_t want, got;
    if (last >= l->start - 1) {
        CHECK(oracle_chain(s, last, &want));
        if (!slog_chain_at(l, last, &got) || got != want) {
            sim_fail(s, "commit: leader n%d's log disagrees with the committed history at %lld",
                     n->id, (long long)last);
            return;
        }
    } else {
        sim_fail(s, "commit: leader n%d's log starts after the committed history", n->id);
        return;
    }
    for (long k = last < l->start ? 0 : slog_find(l, last) + 1; k >= 0 && (size_t)k < l->n; k++) {
        const struct sentry *e = &l->e[k];
        if (e->last > commit)
            break;
        CHECK(e->first == orc_last(s) + 1);
        MEM_GROW(s->orc, s->cap_orc, s->n_orc + 1);
        s->orc[s->n_orc++] =
            (struct oentry){.first = e->first, .last = e->last, .term = e->term, .chain = e->chain};
        if (e->kind == RAFT_ENTRY_CONFIG)
            CHECK(raft_conf_decode(&s->orc_conf, e->payload, e->len) == 0);
    }
    if (orc_last(s) != commit) {
        sim_fail(s, "commit: leader n%d committed %lld, not an entry end", n->id,
                 (long long)commit);
        return;
    }
    MEM_GROW(s->marks, s->cap_marks, s->n_marks + 1);
    s->marks[s->n_marks++] = (struct mark){.index = commit, .term = term};
    s->st.max_commit = commit;
}

void check_commit(struct sim *s, struct node *n, const struct raft_ready *rd,
                  const struct raft_conf *conf_before, enum raft_role role_before)
{
    int64_t c = rd->commit;
    if (c < n->commit) {
        sim_fail(s, "commit on n%d went back from %lld to %lld", n->id, (long long)n->commit,
                 (long long)c);
        return;
    }
    uint64_t chain;
    if (c > slog_last(&n->cur) || (c >= n->cur.start - 1 && !slog_chain_at(&n->cur, c, &chain))) {
        sim_fail(s, "commit %lld on n%d is not the end of an entry it holds", (long long)c, n->id);
        return;
    }
    if (c < n->cur.start - 1)
        return; /* can only happen transiently around an install; nothing to compare */
    /* a leader's commit: also the one a sole voter makes as it becomes leader (no no-op) */
    if ((role_before == RAFT_LEADER || rd->role == RAFT_LEADER) && c > orc_last(s)) {
        int have, need;
        if (!check_durable_majority(s, conf_before, c, chain, &have, &need) &&
            !check_durable_majority(s, raft_conf(n->r), c, chain, &have, &need)) {
            sim_fail(s, "commit %lld by leader n%d is durable on only %d of the %d needed",
                     (long long)c, n->id, have, need);
            return;
        }
        oracle_extend(s, n, c, rd->term);
        return;
    }
    uint64_t want;
    if (c > orc_last(s) || !oracle_chain(s, c, &want)) {
        sim_fail(s, "commit %lld on n%d beyond what any leader committed (%lld)", (long long)c,
                 n->id, (long long)orc_last(s));
        return;
    }
    if (want != chain)
        sim_fail(s, "state machine safety: n%d applies a different history up to %lld", n->id,
                 (long long)c);
}

/* The configuration every later leader needs a majority of: the latest committed one, or, if
 * that is C_old,new, its C_new side. (Once C_old,new commits, a leader may append C_new and
 * commit with a majority of C_new alone: C_new's majority is all that is guaranteed, and all
 * that is needed, since every election from then on needs a majority of C_new too.) */
static struct raft_conf ack_conf(const struct sim *s)
{
    struct raft_conf c = s->orc_conf;
    c.n_old = 0;
    return c;
}

bool check_ack(struct sim *s, struct node *n, const struct proposal *p)
{
    long k = slog_find(&n->cur, p->first);
    if (k < 0)
        return false;
    const struct sentry *e = &n->cur.e[k];
    if (e->first != p->first || e->last != p->last || e->term != p->term ||
        e->data_crc != p->data_crc || e->len != p->len)
        return false; /* another entry took its place: the proposal was lost, never acked */
    uint64_t want;
    if (!oracle_chain(s, e->last, &want) || want != e->chain) {
        sim_fail(s, "acknowledged entry [%lld..%lld] on n%d is not in the committed history",
                 (long long)e->first, (long long)e->last, n->id);
        return false;
    }
    int have, need;
    struct raft_conf c = ack_conf(s);
    if (!check_durable_majority(s, &c, e->last, e->chain, &have, &need)) {
        sim_fail(s, "acknowledged entry [%lld..%lld] durable on only %d of the %d needed",
                 (long long)e->first, (long long)e->last, have, need);
        return false;
    }
    if (e->last > s->acked_max) {
        s->acked_max = e->last;
        s->acked_chain = e->chain;
    }
    s->st.acked++;
    return true;
}

void check_step(struct sim *s)
{
    for (int i = 0; i < SIM_SLOTS; i++)
        if (s->nodes[i].used && s->nodes[i].up)
            raft_check(s->nodes[i].r);
    if (s->acked_max < 0 || s->failed)
        return;
    /* Durability is a prefix property here, so the highest acknowledged entry having a
     * durable majority means every acknowledged entry has one. */
    int have, need;
    struct raft_conf c = ack_conf(s);
    if (!check_durable_majority(s, &c, s->acked_max, s->acked_chain, &have, &need))
        sim_fail(s, "acknowledged entry ending at %lld lost its durable majority (%d of %d)",
                 (long long)s->acked_max, have, need);
}
