#include "raft_util.h"

#include "base/check.h"
#include "base/mem.h"
#include "test.h"

void rt_options(struct raft_options *o, int32_t id, bool pre_vote, bool check_quorum)
{
    raft_options_default(o, id, 0x5eed0000u + (uint64_t)id);
    o->pre_vote = pre_vote;
    o->check_quorum = check_quorum;
}

/* ---- storage ------------------------------------------------------------------------------- */

int64_t rt_last(const struct rt_node *n)
{
    return n->n_log ? n->log[n->n_log - 1].last : n->start - 1;
}

const struct rt_entry *rt_entry_at(const struct rt_node *n, int64_t index)
{
    for (size_t i = 0; i < n->n_log; i++)
        if (n->log[i].first <= index && index <= n->log[i].last)
            return &n->log[i];
    return NULL;
}

int64_t rt_term_at(const struct rt_node *n, int64_t index)
{
    if (index == n->start - 1)
        return n->prev_term;
    const struct rt_entry *e = rt_entry_at(n, index);
    return e ? e->term : -1;
}

static void st_append(struct rt_node *n, const struct raft_entry *e)
{
    ASSERT_EQ(e->first, rt_last(n) + 1);
    MEM_GROW(n->log, n->cap_log, n->n_log + 1);
    struct rt_entry *d = &n->log[n->n_log++];
    *d = (struct rt_entry){.first = e->first,
                           .last = e->last,
                           .term = e->term,
                           .kind = e->kind,
                           .payload = e->len ? mem_dup(e->payload, e->len) : NULL,
                           .len = e->len};
    if (e->kind == RAFT_ENTRY_CONFIG) {
        ASSERT(n->n_confs < ARRAY_LEN(n->confs));
        struct raft_conf_at *c = &n->confs[n->n_confs++];
        c->index = e->last;
        ASSERT_EQ(raft_conf_decode(&c->conf, e->payload, e->len), 0);
    }
}

static void st_truncate(struct rt_node *n, int64_t from)
{
    size_t k = n->n_log;
    while (k > 0 && n->log[k - 1].first >= from)
        k--;
    /* The core only ever cuts at an entry boundary. */
    ASSERT(k == 0 ? from <= n->start || n->n_log == 0 || from == n->log[0].first
                  : n->log[k - 1].last == from - 1);
    for (size_t i = k; i < n->n_log; i++)
        mem_free(n->log[i].payload);
    n->n_log = k;
    while (n->n_confs > 1 && n->confs[n->n_confs - 1].index >= from)
        n->n_confs--;
}

static void st_install(struct rt_node *n, int64_t index, int64_t term, const struct raft_conf *c)
{
    for (size_t i = 0; i < n->n_log; i++)
        mem_free(n->log[i].payload);
    n->n_log = 0;
    n->start = index + 1;
    n->prev_term = term;
    n->confs[0] = (struct raft_conf_at){.index = index, .conf = *c};
    n->n_confs = 1;
}

void rt_node_set_log(struct rt_node *n, const int64_t *terms, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        struct raft_entry e = {.first = rt_last(n) + 1,
                               .last = rt_last(n) + 1,
                               .term = terms[i],
                               .kind = RAFT_ENTRY_DATA,
                               .payload = (const uint8_t *)"x",
                               .len = 1};
        st_append(n, &e);
    }
}

void rt_node_add(struct rt_node *n, int64_t n_indexes, int64_t term)
{
    struct raft_entry e = {.first = rt_last(n) + 1,
                           .last = rt_last(n) + n_indexes,
                           .term = term,
                           .kind = RAFT_ENTRY_DATA,
                           .payload = (const uint8_t *)"m",
                           .len = 1};
    st_append(n, &e);
}

int rt_compact(struct rt_node *n, int64_t index)
{
    int rc = raft_compact(n->r, index);
    if (rc != 0)
        return rc;
    size_t k = 0;
    while (k < n->n_log && n->log[k].last < index)
        k++;
    ASSERT(k == n->n_log || n->log[k].first == index);
    n->prev_term = rt_term_at(n, index - 1);
    for (size_t i = 0; i < k; i++)
        mem_free(n->log[i].payload);
    if (k > 0)
        memmove(n->log, n->log + k, (n->n_log - k) * sizeof(*n->log));
    n->n_log -= k;
    n->start = index;
    /* The configuration in force before the new start stays first. */
    size_t c = 0;
    while (c + 1 < n->n_confs && n->confs[c + 1].index < index)
        c++;
    memmove(n->confs, n->confs + c, (n->n_confs - c) * sizeof(*n->confs));
    n->n_confs -= c;
    return 0;
}

bool rt_logs_equal(const struct rt_node *a, const struct rt_node *b)
{
    if (a->n_log != b->n_log || a->start != b->start)
        return false;
    for (size_t i = 0; i < a->n_log; i++) {
        const struct rt_entry *x = &a->log[i], *y = &b->log[i];
        if (x->first != y->first || x->last != y->last || x->term != y->term ||
            x->kind != y->kind || x->len != y->len ||
            (x->len && memcmp(x->payload, y->payload, x->len) != 0))
            return false;
    }
    return true;
}

/* ---- messages ------------------------------------------------------------------------------ */

static void msg_copy(struct rt_msg *d, const struct raft_msg *m)
{
    d->m = *m;
    d->m.entries = NULL;
    if (m->n_entries) {
        d->m.entries = mem_calloc(m->n_entries, sizeof(*d->m.entries));
        for (size_t i = 0; i < m->n_entries; i++) {
            d->m.entries[i] = m->entries[i];
            d->m.entries[i].payload =
                m->entries[i].len ? mem_dup(m->entries[i].payload, m->entries[i].len) : NULL;
        }
    }
}

static void msg_free(struct rt_msg *d)
{
    for (size_t i = 0; i < d->m.n_entries; i++)
        mem_free((void *)d->m.entries[i].payload);
    mem_free(d->m.entries);
}

void rt_msgs_free(struct rt_msg *msgs, size_t count)
{
    for (size_t i = 0; i < count; i++)
        msg_free(&msgs[i]);
    mem_free(msgs);
}

/* Attaches the storage's entries for an outgoing APPEND (contract 4 of raft.h). */
static void attach_entries(struct rt_node *n, struct raft_msg *m, struct raft_entry *buf,
                           size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n_log && k < cap; i++) {
        const struct rt_entry *e = &n->log[i];
        if (e->first <= m->index)
            continue;
        if (e->last > m->last)
            break;
        if (n->append_max_entries > 0 && (int)k >= n->append_max_entries)
            break;
        if (k == 0)
            ASSERT_EQ(e->first, m->index + 1);
        buf[k++] = (struct raft_entry){.first = e->first,
                                       .last = e->last,
                                       .term = e->term,
                                       .kind = e->kind,
                                       .payload = e->payload,
                                       .len = e->len};
    }
    m->entries = buf;
    m->n_entries = k;
    m->last = k ? buf[k - 1].last : m->index;
}

static void outbox_push(struct rt_node *n, struct raft_msg *m)
{
    MEM_GROW(n->out, n->cap_out, n->n_out + 1);
    if (m->type == RAFT_MSG_APPEND) {
        struct raft_entry *buf = mem_calloc(n->n_log + 1, sizeof(*buf));
        attach_entries(n, m, buf, n->n_log + 1);
        msg_copy(&n->out[n->n_out++], m);
        mem_free(buf);
    } else {
        msg_copy(&n->out[n->n_out++], m);
    }
}

/* ---- nodes --------------------------------------------------------------------------------- */

void rt_sync(struct rt_node *n)
{
    raft_persisted_hard_state(n->r, n->hs_term, n->hs_vote);
    raft_persisted(n->r, rt_last(n), rt_term_at(n, rt_last(n)));
}

void rt_ready(struct rt_node *n)
{
    for (int guard = 0; raft_has_ready(n->r); guard++) {
        ASSERT(guard < 1000);
        struct raft_ready rd;
        raft_ready(n->r, &rd);
        if (rd.hard_state_changed) {
            n->hs_term = rd.hs_term;
            n->hs_vote = rd.hs_vote;
            n->hs_writes++;
        }
        if (rd.install)
            st_install(n, rd.install_index, rd.install_term, &rd.install_conf);
        if (rd.truncate_from >= 0)
            st_truncate(n, rd.truncate_from);
        for (size_t i = 0; i < rd.n_entries; i++)
            st_append(n, &rd.entries[i]);
        for (size_t i = 0; i < rd.n_msgs; i++)
            outbox_push(n, &rd.msgs[i]);
        if (rd.commit_changed) {
            ASSERT_CMP(rd.commit, >=, n->applied);
            n->applied = rd.commit;
        }
        raft_advance(n->r, &rd);
        if (n->auto_sync)
            rt_sync(n);
    }
}

static void node_start(struct rt_node *n, int64_t commit, bool pre_vote, bool check_quorum,
                       int64_t now_ms)
{
    struct raft_term_start terms[256];
    size_t nt = 0;
    for (size_t i = 0; i < n->n_log; i++) {
        if (nt == 0 || terms[nt - 1].term != n->log[i].term) {
            ASSERT(nt < ARRAY_LEN(terms));
            terms[nt++] =
                (struct raft_term_start){.term = n->log[i].term, .first = n->log[i].first};
        }
    }
    struct raft_restore st = {.term = n->hs_term,
                              .vote = n->hs_vote,
                              .log_start = n->start,
                              .log_last = rt_last(n),
                              .prev_term = n->prev_term,
                              .terms = terms,
                              .n_terms = nt,
                              .confs = n->confs,
                              .n_confs = n->n_confs,
                              .commit = commit};
    struct raft_options o;
    rt_options(&o, n->id, pre_vote, check_quorum);
    ASSERT_EQ(raft_new(&o, &st, now_ms, &n->r), 0);
    n->applied = raft_commit(n->r);
}

void rt_node_init(struct rt_node *n, int32_t id, const int32_t *voters, size_t n_voters,
                  const int64_t *terms, size_t count, int64_t hs_term, int64_t commit,
                  bool pre_vote, bool check_quorum)
{
    memset(n, 0, sizeof(*n));
    n->id = id;
    n->hs_term = hs_term;
    n->hs_vote = RAFT_NONE;
    n->auto_sync = true;
    n->confs[0].index = -1;
    n->confs[0].conf.n_voters = (uint8_t)n_voters;
    if (n_voters > 0) /* none: a replica that learns its configuration from the log */
        memcpy(n->confs[0].conf.voters, voters, n_voters * sizeof(*voters));
    n->n_confs = 1;
    rt_node_set_log(n, terms, count);
    node_start(n, commit, pre_vote, check_quorum, 0);
}

void rt_node_free(struct rt_node *n)
{
    raft_free(n->r);
    n->r = NULL;
    for (size_t i = 0; i < n->n_log; i++)
        mem_free(n->log[i].payload);
    mem_free(n->log);
    n->log = NULL;
    n->n_log = n->cap_log = 0;
    for (size_t i = 0; i < n->n_out; i++)
        msg_free(&n->out[i]);
    mem_free(n->out);
    n->out = NULL;
    n->n_out = n->cap_out = 0;
}

void rt_node_restart(struct rt_cluster *c, int32_t id, bool pre_vote, bool check_quorum)
{
    struct rt_node *n = rt_node(c, id);
    raft_free(n->r);
    n->r = NULL;
    rt_clear(n);
    node_start(n, -1, pre_vote, check_quorum, c->now_ms);
}

struct rt_msg *rt_take(struct rt_node *n, size_t *count)
{
    struct rt_msg *m = n->out;
    *count = n->n_out;
    n->out = NULL;
    n->n_out = n->cap_out = 0;
    return m;
}

void rt_clear(struct rt_node *n)
{
    size_t k;
    struct rt_msg *m = rt_take(n, &k);
    rt_msgs_free(m, k);
}

size_t rt_count(const struct rt_node *n, uint8_t type)
{
    size_t k = 0;
    for (size_t i = 0; i < n->n_out; i++)
        if (type == 0 || n->out[i].m.type == type)
            k++;
    return k;
}

const struct raft_msg *rt_find(const struct rt_node *n, uint8_t type, int32_t to)
{
    for (size_t i = 0; i < n->n_out; i++)
        if (n->out[i].m.type == type && (to == RAFT_NONE || n->out[i].m.to == to))
            return &n->out[i].m;
    return NULL;
}

int rt_step(struct rt_node *n, const struct raft_msg *m)
{
    int rc = raft_step(n->r, m);
    rt_ready(n);
    return rc;
}

struct raft_msg rt_msg(uint8_t type, int32_t from, int32_t to, int64_t term)
{
    return (struct raft_msg){
        .type = type, .from = from, .to = to, .term = term, .index = -1, .commit = -1, .last = -1};
}

/* ---- clusters ------------------------------------------------------------------------------ */

void rt_cluster_init(struct rt_cluster *c, size_t n, bool pre_vote, bool check_quorum)
{
    memset(c, 0, sizeof(*c));
    CHECK(n <= RT_NODES_MAX && n <= RAFT_VOTERS_MAX);
    int32_t voters[RT_NODES_MAX];
    for (size_t i = 0; i < n; i++)
        voters[i] = (int32_t)i + 1;
    for (size_t i = 0; i < n; i++)
        rt_node_init(&c->nodes[i], (int32_t)i + 1, voters, n, NULL, 0, 0, -1, pre_vote,
                     check_quorum);
    c->n = n;
}

void rt_cluster_free(struct rt_cluster *c)
{
    for (size_t i = 0; i < c->n; i++)
        rt_node_free(&c->nodes[i]);
}

struct rt_node *rt_node(struct rt_cluster *c, int32_t id)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id == id)
            return &c->nodes[i];
    return NULL;
}

static int index_of(struct rt_cluster *c, int32_t id)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->nodes[i].id == id)
            return (int)i;
    return -1;
}

int rt_stabilize(struct rt_cluster *c)
{
    int delivered = 0;
    for (int round = 0;; round++) {
        ASSERT(round < 10000);
        bool any = false;
        for (size_t i = 0; i < c->n; i++) {
            struct rt_node *n = &c->nodes[i];
            if (!n->r)
                continue;
            rt_ready(n);
            size_t k;
            struct rt_msg *msgs = rt_take(n, &k);
            for (size_t j = 0; j < k; j++) {
                int to = index_of(c, msgs[j].m.to);
                if (to < 0 || !c->nodes[to].r || c->cut[i][to])
                    continue;
                any = true;
                delivered++;
                if (msgs[j].m.type == RAFT_MSG_APPEND_RESP && msgs[j].m.reject)
                    c->rejects++;
                rt_step(&c->nodes[to], &msgs[j].m);
            }
            rt_msgs_free(msgs, k);
        }
        if (!any)
            return delivered;
    }
}

struct rt_node *rt_leader(struct rt_cluster *c)
{
    struct rt_node *best = NULL;
    for (size_t i = 0; i < c->n; i++) {
        struct rt_node *n = &c->nodes[i];
        if (n->r && raft_role(n->r) == RAFT_LEADER &&
            (!best || raft_term(n->r) > raft_term(best->r)))
            best = n;
    }
    return best;
}

void rt_advance(struct rt_cluster *c, int64_t ms)
{
    for (int64_t t = 0; t < ms; t += 5) {
        c->now_ms += 5;
        for (size_t i = 0; i < c->n; i++)
            if (c->nodes[i].r)
                raft_tick(c->nodes[i].r, c->now_ms);
        rt_stabilize(c);
    }
}

void rt_campaign(struct rt_cluster *c, int32_t id)
{
    ASSERT_EQ(raft_campaign(rt_node(c, id)->r), 0);
    rt_stabilize(c);
}

void rt_isolate(struct rt_cluster *c, int32_t id, bool isolated)
{
    int k = index_of(c, id);
    for (size_t i = 0; i < c->n; i++) {
        if ((int)i == k)
            continue;
        c->cut[k][i] = isolated;
        c->cut[i][k] = isolated;
    }
}

int rt_propose(struct rt_cluster *c, int32_t id, int64_t n_indexes, const char *text)
{
    struct rt_node *n = rt_node(c, id);
    int rc = raft_propose(n->r, n_indexes, (const uint8_t *)text, strlen(text), NULL, NULL, NULL);
    rt_ready(n);
    return rc;
}
