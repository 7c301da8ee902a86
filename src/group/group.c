/* The classic group protocol for one group (see group.h).
 *
 * States and the function that performs each transition:
 *
 *   Empty --join--> PreparingRebalance                   prepare_rebalance()
 *   PreparingRebalance --all joined / deadline--> CompletingRebalance   complete_join()
 *   PreparingRebalance --nobody left--> Empty            complete_join()
 *   CompletingRebalance --leader's SyncGroup--> Stable   group_sync() -> finish_sync()
 *   CompletingRebalance --member change / sync deadline--> PreparingRebalance  prepare_rebalance()
 *   Stable --member joins, leaves, expires, changes protocols--> PreparingRebalance
 *   Empty --deleted / expired--> Dead                     group_mark_dead()
 *
 * Invariants (group_check):
 *  1. Member ids are unique among members and pending ids; instance ids are unique among
 *     members; n_members + n_pending <= max_size.
 *  2. join_waiter is set only in PreparingRebalance (a member answered at once holds none);
 *     sync_waiter only in CompletingRebalance.
 *  3. Empty and Dead have no members (Empty may have pending ids; Dead has none); the other
 *     states have members, except PreparingRebalance, which may have lost them all and
 *     completes at its next step.
 *  4. leader_id names a member whenever there are members; none otherwise.
 *  5. protocol_name is set exactly in CompletingRebalance and Stable, and every member supports
 *     it.
 *  6. Every waiter handed in is answered exactly once (by the hooks).
 *
 * Deadlines: a member's session deadline (ignored while it awaits join or sync), a pending id's
 * deadline, the rebalance deadline (PreparingRebalance: complete with whoever joined;
 * CompletingRebalance: evict members that did not sync and rebalance again), and the initial
 * rebalance delay of a group that was Empty. */
#include "group/group.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/check.h"
#include "base/log.h"
#include "base/mem.h"
#include "kafka/errors.h"

const char *group_state_name(enum group_state s)
{
    switch (s) {
    case GROUP_EMPTY:
        return "Empty";
    case GROUP_PREPARING_REBALANCE:
        return "PreparingRebalance";
    case GROUP_COMPLETING_REBALANCE:
        return "CompletingRebalance";
    case GROUP_STABLE:
        return "Stable";
    case GROUP_DEAD:
        return "Dead";
    }
    return "Unknown";
}

bool group_state_parse(struct kstr name, enum group_state *out)
{
    for (int s = GROUP_EMPTY; s <= GROUP_DEAD; s++) {
        const char *n = group_state_name((enum group_state)s);
        if (name.len >= 0 && (size_t)name.len == strlen(n) &&
            strncasecmp(name.p, n, (size_t)name.len) == 0) {
            *out = (enum group_state)s;
            return true;
        }
    }
    return false;
}

/* ---- small helpers ---- */

static bool str_is(const char *s, struct kstr k)
{
    return s && k.len >= 0 && strlen(s) == (size_t)k.len && memcmp(s, k.p, (size_t)k.len) == 0;
}

/* Ids are kept as C strings: one with a NUL byte inside could not be told apart. */
static bool has_nul(struct kstr k)
{
    return k.len > 0 && memchr(k.p, '\0', (size_t)k.len) != NULL;
}

static char *dup_kstr(struct kstr k)
{
    return k.len < 0 ? NULL : mem_strndup(k.p ? k.p : "", (size_t)k.len);
}

static struct kstr kstr_of(const char *s)
{
    return s ? kstr_c(s) : KSTR_NULL;
}

static uint8_t *dup_bytes(struct kbytes b, int32_t *len)
{
    *len = b.len > 0 ? b.len : 0;
    return b.len > 0 ? mem_dup(b.p, (size_t)b.len) : NULL;
}

static struct kbytes bytes_of(const uint8_t *p, int32_t len)
{
    return (struct kbytes){p ? p : (const uint8_t *)"", len};
}

static void set_state(struct group *g, enum group_state s, int64_t wall_ms)
{
    if (g->state != s)
        log_debug("group_state", "group=%s from=%s to=%s generation=%d", g->id,
                  group_state_name(g->state), group_state_name(s), g->generation);
    g->state = s;
    g->state_ts_wall_ms = wall_ms;
}

static void store(struct group *g)
{
    if (g->hooks->store)
        g->hooks->store(g->hooks->env, g);
}

/* ---- members ---- */

static struct group_member *find_member(const struct group *g, struct kstr id)
{
    for (int32_t i = 0; i < g->n_members; i++)
        if (str_is(g->members[i]->member_id, id))
            return g->members[i];
    return NULL;
}

static struct group_member *find_instance(const struct group *g, struct kstr instance_id)
{
    if (instance_id.len < 0)
        return NULL;
    for (int32_t i = 0; i < g->n_members; i++)
        if (g->members[i]->instance_id && str_is(g->members[i]->instance_id, instance_id))
            return g->members[i];
    return NULL;
}

static int32_t find_pending(const struct group *g, struct kstr id)
{
    for (int32_t i = 0; i < g->n_pending; i++)
        if (str_is(g->pending[i].member_id, id))
            return i;
    return -1;
}

static void remove_pending_at(struct group *g, int32_t i)
{
    mem_free(g->pending[i].member_id);
    g->pending[i] = g->pending[--g->n_pending];
}

static void free_protocols(struct group_member *m)
{
    for (int32_t i = 0; i < m->n_protocols; i++) {
        mem_free(m->protocols[i].name);
        mem_free(m->protocols[i].metadata);
    }
    mem_free(m->protocols);
    m->protocols = NULL;
    m->n_protocols = 0;
}

static void set_protocols(struct group_member *m, const struct join_group_protocol *p, int32_t n)
{
    free_protocols(m);
    m->protocols = mem_calloc((size_t)(n > 0 ? n : 1), sizeof(*m->protocols));
    for (int32_t i = 0; i < n; i++) {
        m->protocols[i].name = dup_kstr(p[i].name);
        m->protocols[i].metadata = dup_bytes(p[i].metadata, &m->protocols[i].metadata_len);
    }
    m->n_protocols = n;
}

static void set_assignment(struct group_member *m, struct kbytes a)
{
    mem_free(m->assignment);
    m->assignment = dup_bytes(a, &m->assignment_len);
}

static const struct group_protocol *member_protocol(const struct group_member *m, const char *name)
{
    if (!name)
        return NULL;
    for (int32_t i = 0; i < m->n_protocols; i++)
        if (strcmp(m->protocols[i].name, name) == 0)
            return &m->protocols[i];
    return NULL;
}

static bool protocols_equal(const struct group_member *m, const struct join_group_protocol *p,
                            int32_t n)
{
    if (m->n_protocols != n)
        return false;
    for (int32_t i = 0; i < n; i++) {
        const struct group_protocol *q = &m->protocols[i];
        int32_t len = p[i].metadata.len > 0 ? p[i].metadata.len : 0;
        if (!str_is(q->name, p[i].name) || q->metadata_len != len ||
            (len > 0 && memcmp(q->metadata, p[i].metadata.p, (size_t)len) != 0))
            return false;
    }
    return true;
}

static void answer_join(struct group *g, struct group_member *m, int16_t error_code)
{
    void *w = m->join_waiter;
    if (!w)
        return;
    m->join_waiter = NULL;
    struct group_join_result res = {.error_code = error_code,
                                    .generation_id = -1,
                                    .protocol_type = KSTR_NULL,
                                    .protocol_name = KSTR_NULL,
                                    .leader_id = kstr_c(""),
                                    .member_id = kstr_of(m->member_id)};
    g->hooks->join_done(w, &res);
}

static void answer_sync(struct group *g, struct group_member *m, int16_t error_code)
{
    void *w = m->sync_waiter;
    if (!w)
        return;
    m->sync_waiter = NULL;
    struct group_sync_result res = {.error_code = error_code,
                                    .protocol_type = KSTR_NULL,
                                    .protocol_name = KSTR_NULL,
                                    .assignment = bytes_of(NULL, 0)};
    if (error_code == KERR_NONE) {
        res.protocol_type = kstr_of(g->protocol_type);
        res.protocol_name = kstr_of(g->protocol_name);
        res.assignment = bytes_of(m->assignment, m->assignment_len);
    }
    g->hooks->sync_done(w, &res);
}

static void member_free(struct group_member *m)
{
    free_protocols(m);
    mem_free(m->assignment);
    mem_free(m->member_id);
    mem_free(m->instance_id);
    mem_free(m->client_id);
    mem_free(m->client_host);
    mem_free(m);
}

static void add_member(struct group *g, struct group_member *m)
{
    if (g->n_members == g->cap_members) {
        g->cap_members = g->cap_members ? g->cap_members * 2 : 4;
        g->members = mem_realloc(g->members, (size_t)g->cap_members * sizeof(*g->members));
    }
    g->members[g->n_members++] = m;
    if (!g->leader_id)
        g->leader_id = mem_strdup(m->member_id);
}

/* Unlinks and frees m, answering its waiters with UNKNOWN_MEMBER_ID; a new leader is elected if
 * it was the leader. The caller decides what the group does next. */
static void remove_member(struct group *g, struct group_member *m)
{
    answer_join(g, m, KERR_UNKNOWN_MEMBER_ID);
    answer_sync(g, m, KERR_UNKNOWN_MEMBER_ID);
    for (int32_t i = 0; i < g->n_members; i++) {
        if (g->members[i] == m) {
            memmove(&g->members[i], &g->members[i + 1],
                    (size_t)(g->n_members - i - 1) * sizeof(*g->members));
            g->n_members--;
            break;
        }
    }
    if (g->leader_id && strcmp(g->leader_id, m->member_id) == 0) {
        mem_free(g->leader_id);
        g->leader_id = g->n_members ? mem_strdup(g->members[0]->member_id) : NULL;
    }
    member_free(m);
}

static char *new_member_id(struct group *g, struct kstr client_id)
{
    /* Kafka's form: clientId-UUID. The client id is cut so the id stays short. */
    char buf[128];
    int n = client_id.len > 64 ? 64 : (client_id.len > 0 ? client_id.len : 0);
    uint64_t x = ++g->id_seq * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)g ^
                 (uint64_t)g->state_ts_wall_ms * 0xBF58476D1CE4E5B9ull;
    snprintf(buf, sizeof(buf), "%.*s-%08" PRIx32 "-%04" PRIx32 "-%016" PRIx64, n,
             client_id.p ? client_id.p : "", (uint32_t)(x >> 32), (uint32_t)(g->id_seq & 0xffff),
             x);
    return mem_strdup(buf);
}

/* ---- protocols ---- */

/* Whether every member supports protocol `name`. */
static bool all_support(const struct group *g, const char *name)
{
    for (int32_t i = 0; i < g->n_members; i++)
        if (!member_protocol(g->members[i], name))
            return false;
    return true;
}

/* The protocol of the next generation: among those every member supports, the one most
 * members list first (each member votes for its most preferred candidate); ties go to the
 * leader's order of preference. NULL if there is no common protocol. */
static const char *select_protocol(const struct group *g)
{
    const struct group_member *ref = g->n_members ? g->members[0] : NULL;
    for (int32_t i = 0; i < g->n_members; i++)
        if (g->leader_id && strcmp(g->members[i]->member_id, g->leader_id) == 0)
            ref = g->members[i];
    if (!ref)
        return NULL;
    const char *best = NULL;
    int32_t best_votes = -1;
    for (int32_t c = 0; c < ref->n_protocols; c++) {
        const char *cand = ref->protocols[c].name;
        if (!all_support(g, cand))
            continue;
        int32_t votes = 0;
        for (int32_t i = 0; i < g->n_members; i++) {
            const struct group_member *m = g->members[i];
            for (int32_t k = 0; k < m->n_protocols; k++) {
                if (all_support(g, m->protocols[k].name)) {
                    votes += strcmp(m->protocols[k].name, cand) == 0;
                    break;
                }
            }
        }
        if (votes > best_votes) {
            best = cand;
            best_votes = votes;
        }
    }
    return best;
}

/* Kafka's supportsProtocols: an Empty group takes any non-empty type and protocol list; a
 * group with members needs the same type and one protocol every current member supports. */
static bool protocols_acceptable(const struct group *g, const struct group_join_req *req)
{
    if (req->protocol_type.len <= 0 || req->n_protocols <= 0)
        return false;
    if (g->n_members == 0)
        return true;
    if (!str_is(g->protocol_type, req->protocol_type))
        return false;
    for (int32_t i = 0; i < req->n_protocols; i++) {
        char *name = dup_kstr(req->protocols[i].name);
        bool ok = all_support(g, name);
        mem_free(name);
        if (ok)
            return true;
    }
    return false;
}

static int64_t metadata_bytes(const struct join_group_protocol *p, int32_t n)
{
    int64_t total = 0;
    for (int32_t i = 0; i < n; i++)
        total += (p[i].name.len > 0 ? p[i].name.len : 0) +
                 (p[i].metadata.len > 0 ? p[i].metadata.len : 0);
    return total;
}

/* ---- the rebalance ---- */

static int32_t max_rebalance_timeout(const struct group *g)
{
    int32_t t = 0;
    for (int32_t i = 0; i < g->n_members; i++)
        t = MAX(t, g->members[i]->rebalance_timeout_ms);
    return t;
}

static void prepare_rebalance(struct group *g, int64_t now, int64_t wall_ms, const char *why)
{
    if (g->state == GROUP_COMPLETING_REBALANCE) {
        /* assignments of the aborted generation are void; followers waiting learn it */
        for (int32_t i = 0; i < g->n_members; i++) {
            set_assignment(g->members[i], bytes_of(NULL, 0));
            answer_sync(g, g->members[i], KERR_REBALANCE_IN_PROGRESS);
        }
    }
    bool from_empty = g->state == GROUP_EMPTY;
    g->rebalance_deadline_ms = now + max_rebalance_timeout(g);
    g->initial_delay_until_ms = 0;
    if (from_empty && g->cfg->initial_rebalance_delay_ms > 0)
        g->initial_delay_until_ms =
            MIN(now + g->cfg->initial_rebalance_delay_ms, g->rebalance_deadline_ms);
    mem_free(g->protocol_name);
    g->protocol_name = NULL;
    log_info("group_rebalance", "group=%s reason=\"%s\" generation=%d members=%d", g->id, why,
             g->generation, g->n_members);
    set_state(g, GROUP_PREPARING_REBALANCE, wall_ms);
}

static void maybe_prepare_rebalance(struct group *g, int64_t now, int64_t wall_ms, const char *why)
{
    if (g->state == GROUP_STABLE || g->state == GROUP_COMPLETING_REBALANCE ||
        g->state == GROUP_EMPTY)
        prepare_rebalance(g, now, wall_ms, why);
}

static bool all_joined(const struct group *g)
{
    if (g->n_pending > 0)
        return false;
    for (int32_t i = 0; i < g->n_members; i++)
        if (!g->members[i]->join_waiter)
            return false;
    return true;
}

static void send_join_results(struct group *g, int64_t now)
{
    int32_t n = g->n_members;
    struct group_join_member_view *views = mem_calloc((size_t)(n ? n : 1), sizeof(*views));
    for (int32_t i = 0; i < n; i++) {
        const struct group_member *m = g->members[i];
        const struct group_protocol *p = member_protocol(m, g->protocol_name);
        views[i].member_id = kstr_of(m->member_id);
        views[i].instance_id = kstr_of(m->instance_id);
        views[i].metadata = p ? bytes_of(p->metadata, p->metadata_len) : bytes_of(NULL, 0);
    }
    for (int32_t i = 0; i < n; i++) {
        struct group_member *m = g->members[i];
        m->session_deadline_ms = now + m->session_timeout_ms;
        void *w = m->join_waiter;
        if (!w)
            continue; /* a static member that has not rejoined yet */
        m->join_waiter = NULL;
        bool leader = strcmp(m->member_id, g->leader_id) == 0;
        struct group_join_result res = {.error_code = KERR_NONE,
                                        .generation_id = g->generation,
                                        .protocol_type = kstr_of(g->protocol_type),
                                        .protocol_name = kstr_of(g->protocol_name),
                                        .leader_id = kstr_of(g->leader_id),
                                        .member_id = kstr_of(m->member_id),
                                        .members = leader ? views : NULL,
                                        .n_members = leader ? n : 0};
        g->hooks->join_done(w, &res);
    }
    mem_free(views);
}

/* Ends PreparingRebalance: members that did not rejoin are dropped (static ones keep their
 * slot), a leader that did not rejoin is replaced, the next generation starts. */
static void complete_join(struct group *g, int64_t now, int64_t wall_ms)
{
    for (int32_t i = g->n_members - 1; i >= 0; i--) {
        struct group_member *m = g->members[i];
        if (!m->join_waiter && !m->instance_id) {
            log_info("group_member_removed", "group=%s member=%s reason=not_rejoined", g->id,
                     m->member_id);
            remove_member(g, m);
        }
    }
    while (g->n_pending > 0)
        remove_pending_at(g, g->n_pending - 1);
    struct group_member *leader = NULL;
    for (int32_t i = 0; i < g->n_members; i++)
        if (g->leader_id && strcmp(g->members[i]->member_id, g->leader_id) == 0)
            leader = g->members[i];
    if ((!leader || !leader->join_waiter) && g->n_members > 0) {
        struct group_member *joined = NULL;
        for (int32_t i = 0; i < g->n_members && !joined; i++)
            if (g->members[i]->join_waiter)
                joined = g->members[i];
        if (!joined) {
            /* only static members that have not rejoined: wait for them (or their sessions) */
            g->rebalance_deadline_ms = now + max_rebalance_timeout(g);
            for (int32_t i = 0; i < g->n_members; i++)
                g->rebalance_deadline_ms =
                    MAX(g->rebalance_deadline_ms, g->members[i]->session_deadline_ms);
            return;
        }
        mem_free(g->leader_id);
        g->leader_id = mem_strdup(joined->member_id);
    }
    g->generation++;
    g->initial_delay_until_ms = 0;
    if (g->n_members == 0) {
        mem_free(g->protocol_name);
        g->protocol_name = NULL;
        set_state(g, GROUP_EMPTY, wall_ms);
        log_info("group_empty", "group=%s generation=%d", g->id, g->generation);
        store(g);
        return;
    }
    const char *p = select_protocol(g);
    CHECK(p); /* every member was admitted with a protocol all others support */
    g->protocol_name = mem_strdup(p);
    set_state(g, GROUP_COMPLETING_REBALANCE, wall_ms);
    g->rebalance_deadline_ms = now + max_rebalance_timeout(g);
    log_info("group_generation", "group=%s generation=%d protocol=%s leader=%s members=%d", g->id,
             g->generation, g->protocol_name, g->leader_id, g->n_members);
    send_join_results(g, now);
}

static void maybe_complete_join(struct group *g, int64_t now, int64_t wall_ms)
{
    if (g->state != GROUP_PREPARING_REBALANCE)
        return;
    bool delayed = g->initial_delay_until_ms > now;
    if ((all_joined(g) && !delayed) || now >= g->rebalance_deadline_ms)
        complete_join(g, now, wall_ms);
}

/* A member is gone (left, expired): the group reacts by its state. */
static void member_gone(struct group *g, struct group_member *m, int64_t now, int64_t wall_ms,
                        const char *why)
{
    log_info("group_member_removed", "group=%s member=%s reason=%s", g->id, m->member_id, why);
    remove_member(g, m);
    if (g->state == GROUP_STABLE || g->state == GROUP_COMPLETING_REBALANCE)
        prepare_rebalance(g, now, wall_ms, why);
    maybe_complete_join(g, now, wall_ms);
}

/* ---- public: lifecycle ---- */

struct group *group_new(struct kstr id, const struct group_config *cfg,
                        const struct group_hooks *hooks, int64_t wall_ms)
{
    struct group *g = mem_calloc(1, sizeof(*g));
    g->id = dup_kstr(id);
    g->state = GROUP_EMPTY;
    g->cfg = cfg;
    g->hooks = hooks;
    g->state_ts_wall_ms = wall_ms;
    strmap_init(&g->offsets);
    return g;
}

void group_free(struct group *g, int16_t error_code)
{
    for (int32_t i = 0; i < g->n_members; i++) {
        answer_join(g, g->members[i], error_code);
        answer_sync(g, g->members[i], error_code);
        member_free(g->members[i]);
    }
    mem_free(g->members);
    while (g->n_pending > 0)
        remove_pending_at(g, g->n_pending - 1);
    mem_free(g->pending);
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&g->offsets, &it, &k, &v)) {
        struct group_offset *o = v;
        mem_free(o->topic);
        mem_free(o->metadata);
        mem_free(o);
    }
    strmap_destroy(&g->offsets);
    mem_free(g->protocol_type);
    mem_free(g->protocol_name);
    mem_free(g->leader_id);
    mem_free(g->id);
    mem_free(g);
}

void group_mark_dead(struct group *g)
{
    CHECK(g->n_members == 0);
    while (g->n_pending > 0)
        remove_pending_at(g, g->n_pending - 1);
    g->state = GROUP_DEAD;
}

/* ---- public: JoinGroup ---- */

static void join_error(struct group *g, void *waiter, int16_t error_code, struct kstr member_id)
{
    struct group_join_result res = {.error_code = error_code,
                                    .generation_id = -1,
                                    .protocol_type = KSTR_NULL,
                                    .protocol_name = KSTR_NULL,
                                    .leader_id = kstr_c(""),
                                    .member_id = member_id.len >= 0 ? member_id : kstr_c("")};
    g->hooks->join_done(waiter, &res);
}

/* Answers a member of a generation in progress with the current generation at once (a
 * rejoin with unchanged metadata). */
static void join_current(struct group *g, struct group_member *m, void *waiter, bool as_leader)
{
    int32_t n = as_leader ? g->n_members : 0;
    struct group_join_member_view *views = mem_calloc((size_t)(n ? n : 1), sizeof(*views));
    for (int32_t i = 0; i < n; i++) {
        const struct group_member *x = g->members[i];
        const struct group_protocol *p = member_protocol(x, g->protocol_name);
        views[i] = (struct group_join_member_view){kstr_of(x->member_id), kstr_of(x->instance_id),
                                                   p ? bytes_of(p->metadata, p->metadata_len)
                                                     : bytes_of(NULL, 0)};
    }
    struct group_join_result res = {.error_code = KERR_NONE,
                                    .generation_id = g->generation,
                                    .protocol_type = kstr_of(g->protocol_type),
                                    .protocol_name = kstr_of(g->protocol_name),
                                    .leader_id = kstr_of(g->leader_id),
                                    .member_id = kstr_of(m->member_id),
                                    .members = views,
                                    .n_members = n};
    g->hooks->join_done(waiter, &res);
    mem_free(views);
}

static void update_member(struct group_member *m, const struct group_join_req *req,
                          void *waiter)
{
    set_protocols(m, req->protocols, req->n_protocols);
    m->session_timeout_ms = req->session_timeout_ms;
    m->rebalance_timeout_ms =
        req->rebalance_timeout_ms > 0 ? req->rebalance_timeout_ms : req->session_timeout_ms;
    m->join_waiter = waiter;
}

static struct group_member *new_member(struct group *g, char *member_id,
                                       const struct group_join_req *req, void *waiter,
                                       int64_t now)
{
    struct group_member *m = mem_calloc(1, sizeof(*m));
    m->member_id = member_id;
    m->instance_id = dup_kstr(req->instance_id);
    m->client_id = dup_kstr(req->client_id.len >= 0 ? req->client_id : kstr_c(""));
    m->client_host = dup_kstr(req->client_host.len >= 0 ? req->client_host : kstr_c(""));
    m->session_deadline_ms = now + req->session_timeout_ms;
    update_member(m, req, waiter);
    if (g->n_members == 0) {
        mem_free(g->protocol_type);
        g->protocol_type = dup_kstr(req->protocol_type);
    }
    add_member(g, m);
    return m;
}

/* A static member rejoins without its member id: it takes over its slot under a new id. */
static void replace_static_member(struct group *g, struct group_member *old,
                                  const struct group_join_req *req, int64_t now, int64_t wall_ms,
                                  void *waiter)
{
    answer_join(g, old, KERR_FENCED_INSTANCE_ID);
    answer_sync(g, old, KERR_FENCED_INSTANCE_ID);
    char *old_id = old->member_id;
    old->member_id = new_member_id(g, req->client_id);
    bool was_leader = g->leader_id && strcmp(g->leader_id, old_id) == 0;
    char *old_leader = g->leader_id ? mem_strdup(g->leader_id) : NULL;
    if (was_leader) {
        mem_free(g->leader_id);
        g->leader_id = mem_strdup(old->member_id);
    }
    log_info("group_static_member_replaced", "group=%s instance=%s old_member=%s new_member=%s",
             g->id, old->instance_id, old_id, old->member_id);
    mem_free(old_id);
    bool same = protocols_equal(old, req->protocols, req->n_protocols);
    update_member(old, req, NULL);
    old->session_deadline_ms = now + old->session_timeout_ms;
    if (g->state == GROUP_STABLE && same) {
        /* Same subscription: keep the assignment, no rebalance. Answer with the old leader id
         * so that a former leader does not take itself for the leader and reassign. */
        store(g);
        struct group_join_result res = {.error_code = KERR_NONE,
                                        .generation_id = g->generation,
                                        .protocol_type = kstr_of(g->protocol_type),
                                        .protocol_name = kstr_of(g->protocol_name),
                                        .leader_id = kstr_of(old_leader),
                                        .member_id = kstr_of(old->member_id)};
        g->hooks->join_done(waiter, &res);
    } else {
        old->join_waiter = waiter;
        maybe_prepare_rebalance(g, now, wall_ms, "static member rejoined with new metadata");
        maybe_complete_join(g, now, wall_ms);
    }
    mem_free(old_leader);
}

static void join_unknown(struct group *g, const struct group_join_req *req, int64_t now,
                         int64_t wall_ms, void *waiter)
{
    struct group_member *stat = find_instance(g, req->instance_id);
    if (stat) {
        replace_static_member(g, stat, req, now, wall_ms, waiter);
        return;
    }
    if (g->n_members + g->n_pending >= g->cfg->max_size) {
        join_error(g, waiter, KERR_GROUP_MAX_SIZE_REACHED, kstr_c(""));
        return;
    }
    char *id = new_member_id(g, req->client_id);
    if (req->require_known_member_id && req->instance_id.len < 0) {
        /* KIP-394: hand out the id; the member joins with it next */
        if (g->n_pending == g->cap_pending) {
            g->cap_pending = g->cap_pending ? g->cap_pending * 2 : 4;
            g->pending = mem_realloc(g->pending, (size_t)g->cap_pending * sizeof(*g->pending));
        }
        g->pending[g->n_pending++] =
            (struct group_pending){id, now + req->session_timeout_ms};
        join_error(g, waiter, KERR_MEMBER_ID_REQUIRED, kstr_c(id));
        return;
    }
    struct group_member *m = new_member(g, id, req, waiter, now);
    maybe_prepare_rebalance(g, now, wall_ms, m->instance_id ? "static member joined"
                                                             : "member joined");
    if (g->state == GROUP_PREPARING_REBALANCE && g->initial_delay_until_ms > now)
        g->initial_delay_until_ms = MIN(now + g->cfg->initial_rebalance_delay_ms,
                                        g->rebalance_deadline_ms);
    maybe_complete_join(g, now, wall_ms);
}

static void join_known(struct group *g, const struct group_join_req *req, int64_t now,
                       int64_t wall_ms, void *waiter)
{
    int32_t pi = find_pending(g, req->member_id);
    if (pi >= 0) {
        char *id = g->pending[pi].member_id;
        g->pending[pi].member_id = NULL;
        g->pending[pi] = g->pending[--g->n_pending];
        new_member(g, id, req, waiter, now);
        maybe_prepare_rebalance(g, now, wall_ms, "member joined");
        if (g->state == GROUP_PREPARING_REBALANCE && g->initial_delay_until_ms > now)
            g->initial_delay_until_ms = MIN(now + g->cfg->initial_rebalance_delay_ms,
                                            g->rebalance_deadline_ms);
        maybe_complete_join(g, now, wall_ms);
        return;
    }
    struct group_member *m = find_member(g, req->member_id);
    struct group_member *inst = find_instance(g, req->instance_id);
    if (req->instance_id.len >= 0 && inst && inst != m) {
        join_error(g, waiter, KERR_FENCED_INSTANCE_ID, req->member_id);
        return;
    }
    if (!m || g->state == GROUP_EMPTY) {
        join_error(g, waiter, KERR_UNKNOWN_MEMBER_ID, req->member_id);
        return;
    }
    switch (g->state) {
    case GROUP_PREPARING_REBALANCE:
        if (m->join_waiter)
            answer_join(g, m, KERR_REBALANCE_IN_PROGRESS); /* superseded by this request */
        update_member(m, req, waiter);
        maybe_complete_join(g, now, wall_ms);
        return;
    case GROUP_COMPLETING_REBALANCE:
    case GROUP_STABLE: {
        bool leader = strcmp(m->member_id, g->leader_id) == 0;
        bool same = protocols_equal(m, req->protocols, req->n_protocols);
        if (same && !(g->state == GROUP_STABLE && leader)) {
            /* it missed the answer of this generation, or rejoins for nothing: tell it again */
            m->session_deadline_ms = now + m->session_timeout_ms;
            join_current(g, m, waiter, leader && g->state == GROUP_COMPLETING_REBALANCE);
            return;
        }
        update_member(m, req, waiter);
        prepare_rebalance(g, now, wall_ms,
                          same ? "leader rejoined" : "member changed its protocols");
        maybe_complete_join(g, now, wall_ms);
        return;
    }
    case GROUP_EMPTY:
    case GROUP_DEAD:
        break;
    }
    join_error(g, waiter, KERR_UNKNOWN_MEMBER_ID, req->member_id);
}

void group_join(struct group *g, const struct group_join_req *req, int64_t now, int64_t wall_ms,
                void *waiter)
{
    DCHECK((group_check(g), true));
    if (g->state == GROUP_DEAD)
        join_error(g, waiter, KERR_COORDINATOR_NOT_AVAILABLE, req->member_id);
    else if (req->session_timeout_ms < g->cfg->min_session_timeout_ms ||
             req->session_timeout_ms > g->cfg->max_session_timeout_ms)
        join_error(g, waiter, KERR_INVALID_SESSION_TIMEOUT, req->member_id);
    else if (metadata_bytes(req->protocols, req->n_protocols) > g->cfg->max_metadata_bytes ||
             has_nul(req->instance_id))
        join_error(g, waiter, KERR_INVALID_REQUEST, req->member_id);
    else if (!protocols_acceptable(g, req))
        join_error(g, waiter, KERR_INCONSISTENT_GROUP_PROTOCOL, req->member_id);
    else if (req->member_id.len == 0)
        join_unknown(g, req, now, wall_ms, waiter);
    else
        join_known(g, req, now, wall_ms, waiter);
    DCHECK((group_check(g), true));
}

/* ---- public: SyncGroup ---- */

static void sync_error(struct group *g, void *waiter, int16_t error_code)
{
    struct group_sync_result res = {.error_code = error_code,
                                    .protocol_type = KSTR_NULL,
                                    .protocol_name = KSTR_NULL,
                                    .assignment = bytes_of(NULL, 0)};
    g->hooks->sync_done(waiter, &res);
}

/* The leader's assignment arrived: every member gets its share, the group becomes Stable. */
static void finish_sync(struct group *g, const struct group_sync_req *req, int64_t now,
                        int64_t wall_ms)
{
    for (int32_t i = 0; i < g->n_members; i++)
        set_assignment(g->members[i], bytes_of(NULL, 0));
    for (int32_t i = 0; i < req->n_assignments; i++) {
        struct group_member *m = find_member(g, req->assignments[i].member_id);
        if (m) /* assignments for unknown members are ignored, as Kafka does */
            set_assignment(m, req->assignments[i].assignment);
    }
    set_state(g, GROUP_STABLE, wall_ms);
    store(g);
    for (int32_t i = 0; i < g->n_members; i++) {
        g->members[i]->session_deadline_ms = now + g->members[i]->session_timeout_ms;
        answer_sync(g, g->members[i], KERR_NONE);
    }
    log_info("group_stable", "group=%s generation=%d members=%d", g->id, g->generation,
             g->n_members);
}

static int16_t sync_validate(const struct group *g, const struct group_sync_req *req,
                             struct group_member **out)
{
    if (g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    struct group_member *m = find_member(g, req->member_id);
    struct group_member *inst = find_instance(g, req->instance_id);
    if (req->instance_id.len >= 0 && inst && inst != m)
        return KERR_FENCED_INSTANCE_ID;
    if (!m)
        return KERR_UNKNOWN_MEMBER_ID;
    if (req->generation_id != g->generation)
        return KERR_ILLEGAL_GENERATION;
    if ((req->protocol_type.len >= 0 && !str_is(g->protocol_type, req->protocol_type)) ||
        (req->protocol_name.len >= 0 && !str_is(g->protocol_name, req->protocol_name)))
        return KERR_INCONSISTENT_GROUP_PROTOCOL;
    for (int32_t i = 0; i < req->n_assignments; i++)
        if (req->assignments[i].assignment.len > g->cfg->max_metadata_bytes)
            return KERR_INVALID_REQUEST;
    *out = m;
    return KERR_NONE;
}

void group_sync(struct group *g, const struct group_sync_req *req, int64_t now, int64_t wall_ms,
                void *waiter)
{
    DCHECK((group_check(g), true));
    struct group_member *m = NULL;
    int16_t ec = sync_validate(g, req, &m);
    if (ec != KERR_NONE) {
        sync_error(g, waiter, ec);
    } else if (g->state == GROUP_PREPARING_REBALANCE) {
        sync_error(g, waiter, KERR_REBALANCE_IN_PROGRESS);
    } else if (g->state == GROUP_EMPTY) {
        sync_error(g, waiter, KERR_UNKNOWN_MEMBER_ID);
    } else if (g->state == GROUP_STABLE) {
        m->session_deadline_ms = now + m->session_timeout_ms;
        m->sync_waiter = waiter;
        answer_sync(g, m, KERR_NONE);
    } else { /* CompletingRebalance */
        if (m->sync_waiter)
            answer_sync(g, m, KERR_REBALANCE_IN_PROGRESS); /* superseded */
        m->sync_waiter = waiter;
        if (strcmp(m->member_id, g->leader_id) == 0)
            finish_sync(g, req, now, wall_ms);
    }
    DCHECK((group_check(g), true));
}

/* ---- public: Heartbeat, LeaveGroup, commits ---- */

int16_t group_heartbeat(struct group *g, struct kstr member_id, struct kstr instance_id,
                        int32_t generation_id, int64_t now)
{
    if (g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    struct group_member *m = find_member(g, member_id);
    struct group_member *inst = find_instance(g, instance_id);
    if (instance_id.len >= 0 && inst && inst != m)
        return KERR_FENCED_INSTANCE_ID;
    if (!m)
        return find_pending(g, member_id) >= 0 ? KERR_NONE : KERR_UNKNOWN_MEMBER_ID;
    if (generation_id != g->generation)
        return KERR_ILLEGAL_GENERATION;
    m->session_deadline_ms = now + m->session_timeout_ms;
    switch (g->state) {
    case GROUP_PREPARING_REBALANCE:
        return KERR_REBALANCE_IN_PROGRESS;
    case GROUP_COMPLETING_REBALANCE:
    case GROUP_STABLE:
        return KERR_NONE;
    default:
        return KERR_UNKNOWN_MEMBER_ID;
    }
}

int16_t group_leave(struct group *g, struct kstr member_id, struct kstr instance_id, int64_t now,
                    int64_t wall_ms)
{
    DCHECK((group_check(g), true));
    if (g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    struct group_member *m;
    if (instance_id.len >= 0) {
        m = find_instance(g, instance_id);
        if (!m)
            return KERR_UNKNOWN_MEMBER_ID;
        if (member_id.len > 0 && !str_is(m->member_id, member_id))
            return KERR_FENCED_INSTANCE_ID;
    } else {
        int32_t pi = find_pending(g, member_id);
        if (pi >= 0) {
            remove_pending_at(g, pi);
            maybe_complete_join(g, now, wall_ms);
            return KERR_NONE;
        }
        m = find_member(g, member_id);
        if (!m)
            return KERR_UNKNOWN_MEMBER_ID;
    }
    member_gone(g, m, now, wall_ms, "left");
    DCHECK((group_check(g), true));
    return KERR_NONE;
}

int16_t group_commit_allowed(struct group *g, struct kstr member_id, struct kstr instance_id,
                             int32_t generation_id, int64_t now)
{
    if (g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    struct group_member *m = find_member(g, member_id);
    struct group_member *inst = find_instance(g, instance_id);
    if (instance_id.len >= 0 && inst && inst != m)
        return KERR_FENCED_INSTANCE_ID;
    if (generation_id < 0 && g->state == GROUP_EMPTY)
        return KERR_NONE; /* offsets only, no group management */
    if (!m)
        return KERR_UNKNOWN_MEMBER_ID;
    if (generation_id != g->generation)
        return KERR_ILLEGAL_GENERATION;
    if (g->state == GROUP_COMPLETING_REBALANCE)
        return KERR_REBALANCE_IN_PROGRESS;
    m->session_deadline_ms = now + m->session_timeout_ms;
    return KERR_NONE;
}

/* ---- public: time ---- */

void group_tick(struct group *g, int64_t now, int64_t wall_ms)
{
    DCHECK((group_check(g), true));
    for (int32_t i = g->n_pending - 1; i >= 0; i--)
        if (g->pending[i].deadline_ms <= now)
            remove_pending_at(g, i);
    for (int32_t i = g->n_members - 1; i >= 0; i--) {
        if (i >= g->n_members)
            continue; /* removals below may have shrunk the array */
        struct group_member *m = g->members[i];
        if (!m->join_waiter && !m->sync_waiter && m->session_deadline_ms <= now)
            member_gone(g, m, now, wall_ms, "session_timeout");
    }
    if (g->state == GROUP_COMPLETING_REBALANCE && now >= g->rebalance_deadline_ms) {
        /* the leader never sent its assignment: evict whoever did not sync and start over */
        for (int32_t i = g->n_members - 1; i >= 0; i--)
            if (!g->members[i]->sync_waiter)
                remove_member(g, g->members[i]);
        prepare_rebalance(g, now, wall_ms, "sync timeout");
    }
    maybe_complete_join(g, now, wall_ms);
    DCHECK((group_check(g), true));
}

int64_t group_next_deadline(const struct group *g)
{
    int64_t t = INT64_MAX;
    for (int32_t i = 0; i < g->n_pending; i++)
        t = MIN(t, g->pending[i].deadline_ms);
    for (int32_t i = 0; i < g->n_members; i++) {
        const struct group_member *m = g->members[i];
        if (!m->join_waiter && !m->sync_waiter)
            t = MIN(t, m->session_deadline_ms);
    }
    if (g->state == GROUP_PREPARING_REBALANCE) {
        t = MIN(t, g->rebalance_deadline_ms);
        if (g->initial_delay_until_ms > 0)
            t = MIN(t, g->initial_delay_until_ms);
    }
    if (g->state == GROUP_COMPLETING_REBALANCE)
        t = MIN(t, g->rebalance_deadline_ms);
    return t;
}

/* ---- offsets ---- */

/* Map key: topic bytes, a NUL, then the partition as 4 bytes. */
static size_t offset_key(char *buf, size_t cap, struct kstr topic, int32_t partition)
{
    size_t tl = topic.len > 0 ? (size_t)topic.len : 0;
    CHECK(tl + 5 <= cap);
    if (tl)
        memcpy(buf, topic.p, tl);
    buf[tl] = '\0';
    memcpy(buf + tl + 1, &partition, 4);
    return tl + 5;
}

void group_offset_put(struct group *g, struct kstr topic, int32_t partition, int64_t offset,
                      int32_t leader_epoch, struct kstr metadata, int64_t commit_ts_ms)
{
    char key[32768 + 8];
    size_t klen = offset_key(key, sizeof(key), topic, partition);
    struct group_offset *o = strmap_get(&g->offsets, key, klen);
    if (!o) {
        o = mem_calloc(1, sizeof(*o));
        o->topic = dup_kstr(topic.len >= 0 ? topic : kstr_c(""));
        o->partition = partition;
        strmap_put(&g->offsets, key, klen, o);
    }
    mem_free(o->metadata);
    o->metadata = dup_kstr(metadata.len >= 0 ? metadata : kstr_c(""));
    o->offset = offset;
    o->leader_epoch = leader_epoch;
    o->commit_ts_ms = commit_ts_ms;
}

bool group_offset_del(struct group *g, struct kstr topic, int32_t partition)
{
    char key[32768 + 8];
    size_t klen = offset_key(key, sizeof(key), topic, partition);
    struct group_offset *o = strmap_del(&g->offsets, key, klen);
    if (!o)
        return false;
    mem_free(o->topic);
    mem_free(o->metadata);
    mem_free(o);
    return true;
}

const struct group_offset *group_offset_get(const struct group *g, struct kstr topic,
                                            int32_t partition)
{
    char key[32768 + 8];
    size_t klen = offset_key(key, sizeof(key), topic, partition);
    return strmap_get(&g->offsets, key, klen);
}

const struct group_offset *group_offset_next(const struct group *g, size_t *it)
{
    const char *k;
    void *v;
    return strmap_next(&g->offsets, it, &k, &v) ? v : NULL;
}

/* ConsumerProtocolSubscription: version int16, topics [string] (int32 count, int16 lengths),
 * then fields we do not need. */
static bool subscription_has(const uint8_t *p, int32_t len, struct kstr topic)
{
    struct kreader r;
    kr_init(&r, p, (size_t)(len > 0 ? len : 0));
    (void)kr_i16(&r);
    int32_t n = kr_array(&r, false, 2);
    for (int32_t i = 0; i < n && kr_ok(&r); i++) {
        struct kstr t = kr_str(&r, false);
        if (kr_ok(&r) && t.len == topic.len && t.len >= 0 &&
            memcmp(t.p, topic.p, (size_t)t.len) == 0)
            return true;
    }
    return false;
}

bool group_subscribes(const struct group *g, struct kstr topic)
{
    for (int32_t i = 0; i < g->n_members; i++) {
        const struct group_member *m = g->members[i];
        const struct group_protocol *p =
            member_protocol(m, g->protocol_name ? g->protocol_name
                                                : (m->n_protocols ? m->protocols[0].name : NULL));
        if (p && subscription_has(p->metadata, p->metadata_len, topic))
            return true;
    }
    return false;
}

/* ---- restore ---- */

void group_restore(struct group *g, const struct group_restore *r, int64_t now)
{
    for (int32_t i = 0; i < g->n_members; i++) {
        answer_join(g, g->members[i], KERR_REBALANCE_IN_PROGRESS);
        answer_sync(g, g->members[i], KERR_REBALANCE_IN_PROGRESS);
        member_free(g->members[i]);
    }
    g->n_members = 0;
    while (g->n_pending > 0)
        remove_pending_at(g, g->n_pending - 1);
    mem_free(g->leader_id);
    g->leader_id = NULL;
    mem_free(g->protocol_name);
    g->protocol_name = NULL;
    mem_free(g->protocol_type);
    g->protocol_type = r->protocol_type.len > 0 ? dup_kstr(r->protocol_type) : NULL;
    g->generation = r->generation;
    g->state_ts_wall_ms = r->state_ts_wall_ms;
    bool usable = r->protocol_name.len > 0 && r->n_members > 0 && g->protocol_type;
    for (int32_t i = 0; usable && i < r->n_members && g->n_members < g->cfg->max_size; i++) {
        const struct group_restore_member *rm = &r->members[i];
        if (rm->member_id.len <= 0 || has_nul(rm->member_id) || has_nul(rm->instance_id) ||
            find_member(g, rm->member_id) ||
            (rm->instance_id.len >= 0 && find_instance(g, rm->instance_id)))
            continue; /* a damaged record: skip the duplicate */
        struct group_member *m = mem_calloc(1, sizeof(*m));
        m->member_id = dup_kstr(rm->member_id);
        m->instance_id = dup_kstr(rm->instance_id);
        m->client_id = dup_kstr(rm->client_id.len >= 0 ? rm->client_id : kstr_c(""));
        m->client_host = dup_kstr(rm->client_host.len >= 0 ? rm->client_host : kstr_c(""));
        m->session_timeout_ms = MAX(rm->session_timeout_ms, 1);
        m->rebalance_timeout_ms =
            rm->rebalance_timeout_ms > 0 ? rm->rebalance_timeout_ms : m->session_timeout_ms;
        struct join_group_protocol p = {r->protocol_name, rm->subscription};
        if (p.metadata.len < 0)
            p.metadata = (struct kbytes){(const uint8_t *)"", 0};
        set_protocols(m, &p, 1);
        set_assignment(m, rm->assignment);
        m->session_deadline_ms = now + m->session_timeout_ms;
        add_member(g, m);
    }
    if (g->n_members > 0) {
        g->protocol_name = dup_kstr(r->protocol_name);
        if (r->leader_id.len > 0 && find_member(g, r->leader_id)) {
            mem_free(g->leader_id);
            g->leader_id = dup_kstr(r->leader_id);
        }
        g->state = GROUP_STABLE;
    } else {
        g->state = GROUP_EMPTY;
    }
    DCHECK((group_check(g), true));
}

/* ---- invariants ---- */

void group_check(const struct group *g)
{
    CHECK(g->n_members >= 0 && g->n_pending >= 0);
    CHECK(g->n_members + g->n_pending <= MAX(g->cfg->max_size, 0) || g->n_pending == 0);
    for (int32_t i = 0; i < g->n_members; i++) {
        const struct group_member *m = g->members[i];
        CHECK(m->member_id);
        CHECK(!m->join_waiter || g->state == GROUP_PREPARING_REBALANCE);
        CHECK(!m->sync_waiter || g->state == GROUP_COMPLETING_REBALANCE);
        for (int32_t j = i + 1; j < g->n_members; j++) {
            CHECK(strcmp(m->member_id, g->members[j]->member_id) != 0);
            CHECK(!m->instance_id || !g->members[j]->instance_id ||
                  strcmp(m->instance_id, g->members[j]->instance_id) != 0);
        }
        for (int32_t j = 0; j < g->n_pending; j++)
            CHECK(strcmp(m->member_id, g->pending[j].member_id) != 0);
    }
    if (g->state == GROUP_EMPTY || g->state == GROUP_DEAD)
        CHECK(g->n_members == 0);
    if (g->state == GROUP_DEAD)
        CHECK(g->n_pending == 0);
    if (g->state == GROUP_COMPLETING_REBALANCE || g->state == GROUP_STABLE) {
        CHECK(g->n_members > 0);
        CHECK(g->protocol_name);
        for (int32_t i = 0; i < g->n_members; i++)
            CHECK(member_protocol(g->members[i], g->protocol_name));
    } else {
        CHECK(!g->protocol_name);
    }
    if (g->n_members > 0) {
        CHECK(g->leader_id);
        bool found = false;
        for (int32_t i = 0; i < g->n_members; i++)
            found |= strcmp(g->members[i]->member_id, g->leader_id) == 0;
        CHECK(found);
    } else {
        CHECK(!g->leader_id);
    }
}
