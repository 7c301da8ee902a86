/* The group state machine (group/group.c) driven with a fake clock: transitions, timeouts,
 * static membership, protocol selection and every error code of misuse. */
#include <string.h>

#include "base/mem.h"
#include "group/group.h"
#include "kafka/errors.h"
#include "test.h"

/* ---- harness: waiters record what the group answered ---- */

struct answer {
    bool done;
    int calls;
    int16_t error_code;
    int32_t generation;
    char member_id[128];
    char leader_id[128];
    char protocol[32];
    int32_t n_members;        /* join: members listed (leader only) */
    char members[8][128];     /* join: their ids */
    char assignment[64];      /* sync */
};

static void join_done(void *waiter, const struct group_join_result *r)
{
    struct answer *a = waiter;
    a->done = true;
    a->calls++;
    a->error_code = r->error_code;
    a->generation = r->generation_id;
    snprintf(a->member_id, sizeof(a->member_id), "%.*s", r->member_id.len, r->member_id.p);
    snprintf(a->leader_id, sizeof(a->leader_id), "%.*s", r->leader_id.len, r->leader_id.p);
    snprintf(a->protocol, sizeof(a->protocol), "%.*s", r->protocol_name.len > 0 ? r->protocol_name.len : 0,
             r->protocol_name.p ? r->protocol_name.p : "");
    a->n_members = r->n_members;
    for (int32_t i = 0; i < r->n_members && i < 8; i++)
        snprintf(a->members[i], sizeof(a->members[i]), "%.*s", r->members[i].member_id.len,
                 r->members[i].member_id.p);
}

static void sync_done(void *waiter, const struct group_sync_result *r)
{
    struct answer *a = waiter;
    a->done = true;
    a->calls++;
    a->error_code = r->error_code;
    snprintf(a->assignment, sizeof(a->assignment), "%.*s", r->assignment.len,
             (const char *)r->assignment.p);
}

static int stores;
static void on_store(void *env, struct group *g)
{
    stores++;
}

static struct group_config cfg = {.min_session_timeout_ms = 1000,
                                  .max_session_timeout_ms = 60000,
                                  .initial_rebalance_delay_ms = 0,
                                  .max_size = 5,
                                  .max_metadata_bytes = 1000};
static const struct group_hooks hooks = {join_done, sync_done, on_store, NULL};

static struct group *mk(void)
{
    stores = 0;
    return group_new(kstr_c("g"), &cfg, &hooks, 0);
}

static struct join_group_protocol range_rr[2] = {
    {{"range", 5}, {(const uint8_t *)"R", 1}},
    {{"roundrobin", 10}, {(const uint8_t *)"Q", 1}},
};
static struct join_group_protocol rr_only[1] = {{{"roundrobin", 10}, {(const uint8_t *)"Q", 1}}};
static struct join_group_protocol sticky_only[1] = {{{"sticky", 6}, {(const uint8_t *)"S", 1}}};

static struct group_join_req jreq(const char *member, const char *instance)
{
    return (struct group_join_req){.member_id = kstr_c(member),
                                   .instance_id = instance ? kstr_c(instance) : KSTR_NULL,
                                   .client_id = kstr_c("client"),
                                   .client_host = kstr_c("/127.0.0.1"),
                                   .protocol_type = kstr_c("consumer"),
                                   .session_timeout_ms = 10000,
                                   .rebalance_timeout_ms = 20000,
                                   .protocols = range_rr,
                                   .n_protocols = 2};
}

static void join(struct group *g, struct group_join_req r, int64_t now, struct answer *a)
{
    memset(a, 0, sizeof(*a));
    group_join(g, &r, now, now, a);
}

/* Joins a member without an id (JoinGroup v3 style: no MEMBER_ID_REQUIRED round). */
static void join_new(struct group *g, int64_t now, struct answer *a)
{
    join(g, jreq("", NULL), now, a);
}

static void sync_(struct group *g, const char *member, int32_t gen, int64_t now,
                  const struct sync_group_assignment *as, int32_t n, struct answer *a)
{
    memset(a, 0, sizeof(*a));
    struct group_sync_req r = {.member_id = kstr_c(member),
                               .instance_id = KSTR_NULL,
                               .generation_id = gen,
                               .protocol_type = KSTR_NULL,
                               .protocol_name = KSTR_NULL,
                               .assignments = as,
                               .n_assignments = n};
    group_sync(g, &r, now, now, a);
}

/* One member joined and synced: a Stable group of one. */
static struct group *stable_one(char *id_out)
{
    struct group *g = mk();
    struct answer a, s;
    join_new(g, 0, &a);
    ASSERT(a.done);
    ASSERT_EQ(a.error_code, KERR_NONE);
    strcpy(id_out, a.member_id);
    struct sync_group_assignment as = {kstr_c(id_out), {(const uint8_t *)"A0", 2}};
    sync_(g, id_out, a.generation, 0, &as, 1, &s);
    ASSERT_EQ(s.error_code, KERR_NONE);
    ASSERT_EQ(g->state, GROUP_STABLE);
    return g;
}

/* ---- transitions ---- */

TEST(group_single_member_joins_syncs_and_becomes_stable)
{
    struct group *g = mk();
    struct answer a, s;
    join_new(g, 0, &a);
    ASSERT(a.done); /* all members joined: no waiting */
    ASSERT_EQ(a.error_code, KERR_NONE);
    ASSERT_EQ(a.generation, 1);
    ASSERT_STREQ(a.leader_id, a.member_id);
    ASSERT_STREQ(a.protocol, "range");
    ASSERT_EQ(a.n_members, 1); /* the leader gets the member list */
    ASSERT(strncmp(a.member_id, "client-", 7) == 0);
    ASSERT_EQ(g->state, GROUP_COMPLETING_REBALANCE);
    struct sync_group_assignment as = {kstr_c(a.member_id), {(const uint8_t *)"P0,P1", 5}};
    sync_(g, a.member_id, 1, 5, &as, 1, &s);
    ASSERT(s.done);
    ASSERT_EQ(s.error_code, KERR_NONE);
    ASSERT_STREQ(s.assignment, "P0,P1");
    ASSERT_EQ(g->state, GROUP_STABLE);
    ASSERT_EQ(stores, 1); /* the assignment is persisted */
    ASSERT_EQ(group_heartbeat(g, kstr_c(a.member_id), KSTR_NULL, 1, 100), KERR_NONE);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_v4_join_requires_a_member_id_first)
{
    struct group *g = mk();
    struct answer a, b;
    struct group_join_req r = jreq("", NULL);
    r.require_known_member_id = true;
    join(g, r, 0, &a);
    ASSERT_EQ(a.error_code, KERR_MEMBER_ID_REQUIRED);
    ASSERT(a.member_id[0]);
    ASSERT_EQ(g->state, GROUP_EMPTY);
    ASSERT_EQ(g->n_pending, 1);
    /* a pending id heartbeats fine, an invented one does not */
    ASSERT_EQ(group_heartbeat(g, kstr_c(a.member_id), KSTR_NULL, 0, 1), KERR_NONE);
    ASSERT_EQ(group_heartbeat(g, kstr_c("nobody"), KSTR_NULL, 0, 1), KERR_UNKNOWN_MEMBER_ID);
    r.member_id = kstr_c(a.member_id);
    join(g, r, 10, &b);
    ASSERT_EQ(b.error_code, KERR_NONE);
    ASSERT_STREQ(b.member_id, a.member_id);
    ASSERT_EQ(g->n_pending, 0);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_pending_member_id_expires_after_session_timeout)
{
    struct group *g = mk();
    struct answer a;
    struct group_join_req r = jreq("", NULL);
    r.require_known_member_id = true;
    join(g, r, 0, &a);
    ASSERT_EQ(group_next_deadline(g), 10000);
    group_tick(g, 9999, 9999);
    ASSERT_EQ(g->n_pending, 1);
    group_tick(g, 10000, 10000);
    ASSERT_EQ(g->n_pending, 0);
    r.member_id = kstr_c(a.member_id);
    join(g, r, 10001, &a);
    ASSERT_EQ(a.error_code, KERR_UNKNOWN_MEMBER_ID);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_second_member_triggers_rebalance_and_both_get_assignments)
{
    char id1[128];
    struct group *g = stable_one(id1);
    struct answer b, a2, s1, s2;
    join_new(g, 100, &b);
    ASSERT(!b.done); /* waits for the first member to rejoin */
    ASSERT_EQ(g->state, GROUP_PREPARING_REBALANCE);
    ASSERT_EQ(group_heartbeat(g, kstr_c(id1), KSTR_NULL, 1, 150), KERR_REBALANCE_IN_PROGRESS);
    /* commits of the old generation are still accepted while preparing */
    ASSERT_EQ(group_commit_allowed(g, kstr_c(id1), KSTR_NULL, 1, 150), KERR_NONE);
    join(g, jreq(id1, NULL), 200, &a2);
    ASSERT(a2.done && b.done);
    ASSERT_EQ(a2.generation, 2);
    ASSERT_EQ(b.generation, 2);
    ASSERT_STREQ(a2.leader_id, id1); /* the leader stays */
    ASSERT_EQ(a2.n_members, 2);
    ASSERT_EQ(b.n_members, 0);
    /* the follower syncs first and waits for the leader */
    sync_(g, b.member_id, 2, 210, NULL, 0, &s2);
    ASSERT(!s2.done);
    ASSERT_EQ(group_commit_allowed(g, kstr_c(b.member_id), KSTR_NULL, 2, 210),
              KERR_REBALANCE_IN_PROGRESS);
    struct sync_group_assignment as[2] = {{kstr_c(id1), {(const uint8_t *)"P0", 2}},
                                          {kstr_c(b.member_id), {(const uint8_t *)"P1", 2}}};
    sync_(g, id1, 2, 220, as, 2, &s1);
    ASSERT(s1.done && s2.done);
    ASSERT_STREQ(s1.assignment, "P0");
    ASSERT_STREQ(s2.assignment, "P1");
    ASSERT_EQ(g->state, GROUP_STABLE);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_initial_rebalance_delay_collects_members)
{
    struct group_config c = cfg;
    c.initial_rebalance_delay_ms = 3000;
    struct group *g = group_new(kstr_c("g"), &c, &hooks, 0);
    struct answer a, b;
    join_new(g, 0, &a);
    ASSERT(!a.done);
    ASSERT_EQ(group_next_deadline(g), 3000);
    join_new(g, 1000, &b); /* extends the delay to 4000 */
    ASSERT(!b.done);
    group_tick(g, 3000, 3000);
    ASSERT(!a.done);
    ASSERT_EQ(group_next_deadline(g), 4000);
    group_tick(g, 4000, 4000);
    ASSERT(a.done && b.done);
    ASSERT_EQ(a.generation, 1);
    ASSERT_EQ(a.n_members + b.n_members, 2); /* one of them leads, seeing both */
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_silent_member_is_evicted_after_its_session_timeout)
{
    char id1[128];
    struct group *g = stable_one(id1);
    struct answer b, a2, s1, s2;
    join_new(g, 100, &b);
    join(g, jreq(id1, NULL), 100, &a2);
    struct sync_group_assignment as[2] = {{kstr_c(id1), {(const uint8_t *)"P0", 2}},
                                          {kstr_c(b.member_id), {(const uint8_t *)"P1", 2}}};
    sync_(g, b.member_id, 2, 100, NULL, 0, &s2);
    sync_(g, id1, 2, 100, as, 2, &s1);
    ASSERT_EQ(g->state, GROUP_STABLE);
    /* b heartbeats, the leader goes silent */
    for (int64_t t = 3000; t <= 12000; t += 3000)
        ASSERT_EQ(group_heartbeat(g, kstr_c(b.member_id), KSTR_NULL, 2, t), KERR_NONE);
    ASSERT_EQ(group_next_deadline(g), 100 + 10000);
    group_tick(g, 10099, 10099);
    ASSERT_EQ(g->n_members, 2);
    group_tick(g, 10100, 10100);
    ASSERT_EQ(g->n_members, 1);
    ASSERT_EQ(g->state, GROUP_PREPARING_REBALANCE);
    ASSERT_STREQ(g->leader_id, b.member_id); /* a new leader */
    ASSERT_EQ(group_heartbeat(g, kstr_c(b.member_id), KSTR_NULL, 2, 10200),
              KERR_REBALANCE_IN_PROGRESS);
    struct answer b2;
    join(g, jreq(b.member_id, NULL), 10300, &b2);
    ASSERT(b2.done);
    ASSERT_EQ(b2.generation, 3);
    ASSERT_EQ(b2.n_members, 1);
    /* the evicted member is told it is unknown */
    ASSERT_EQ(group_heartbeat(g, kstr_c(id1), KSTR_NULL, 3, 10400), KERR_UNKNOWN_MEMBER_ID);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_rebalance_timeout_drops_members_that_did_not_rejoin)
{
    char id1[128];
    struct group *g = stable_one(id1);
    struct answer b;
    join_new(g, 0, &b);
    ASSERT(!b.done);
    /* id1 keeps heartbeating but never rejoins: after its rebalance timeout (20 s) it is out */
    for (int64_t t = 1000; t < 20000; t += 1000) {
        ASSERT_EQ(group_heartbeat(g, kstr_c(id1), KSTR_NULL, 1, t), KERR_REBALANCE_IN_PROGRESS);
        group_tick(g, t, t);
    }
    ASSERT(!b.done);
    ASSERT_EQ(group_next_deadline(g), 20000);
    group_tick(g, 20000, 20000);
    ASSERT(b.done);
    ASSERT_EQ(b.error_code, KERR_NONE);
    ASSERT_EQ(b.generation, 2);
    ASSERT_STREQ(b.leader_id, b.member_id);
    ASSERT_EQ(g->n_members, 1);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_leave_rebalances_and_last_leave_empties_the_group)
{
    char id1[128];
    struct group *g = stable_one(id1);
    int before = stores;
    ASSERT_EQ(group_leave(g, kstr_c("stranger"), KSTR_NULL, 10, 10), KERR_UNKNOWN_MEMBER_ID);
    ASSERT_EQ(group_leave(g, kstr_c(id1), KSTR_NULL, 10, 10), KERR_NONE);
    ASSERT_EQ(g->state, GROUP_EMPTY); /* no one left to wait for */
    ASSERT_EQ(g->generation, 2);
    ASSERT_EQ(stores, before + 1);
    ASSERT(!g->leader_id);
    ASSERT_EQ(group_next_deadline(g), INT64_MAX);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_leave_of_a_waiting_member_answers_its_join)
{
    char id1[128];
    struct group *g = stable_one(id1);
    struct answer b;
    join_new(g, 0, &b);
    ASSERT(!b.done);
    ASSERT_EQ(g->n_members, 2);
    char waiting[128];
    strcpy(waiting, g->members[1]->member_id);
    ASSERT_EQ(group_leave(g, kstr_c(waiting), KSTR_NULL, 5, 5), KERR_NONE);
    ASSERT(b.done);
    ASSERT_EQ(b.error_code, KERR_UNKNOWN_MEMBER_ID);
    group_free(g, KERR_NOT_COORDINATOR);
}

/* ---- errors ---- */

TEST(group_join_errors)
{
    struct group *g = mk();
    struct answer a;
    struct group_join_req r = jreq("", NULL);
    r.session_timeout_ms = 999;
    join(g, r, 0, &a);
    ASSERT_EQ(a.error_code, KERR_INVALID_SESSION_TIMEOUT);
    r.session_timeout_ms = 60001;
    join(g, r, 0, &a);
    ASSERT_EQ(a.error_code, KERR_INVALID_SESSION_TIMEOUT);
    r = jreq("", NULL);
    r.n_protocols = 0;
    join(g, r, 0, &a);
    ASSERT_EQ(a.error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    r = jreq("", NULL);
    r.protocol_type = kstr_c("");
    join(g, r, 0, &a);
    ASSERT_EQ(a.error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    /* metadata over the limit */
    static uint8_t big[1001];
    struct join_group_protocol huge[1] = {{kstr_c("range"), {big, sizeof(big)}}};
    r = jreq("", NULL);
    r.protocols = huge;
    r.n_protocols = 1;
    join(g, r, 0, &a);
    ASSERT_EQ(a.error_code, KERR_INVALID_REQUEST);
    ASSERT_EQ(g->n_members, 0);
    /* an unknown member id */
    join(g, jreq("ghost", NULL), 0, &a);
    ASSERT_EQ(a.error_code, KERR_UNKNOWN_MEMBER_ID);
    ASSERT_EQ(g->state, GROUP_EMPTY);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_join_with_other_protocol_type_or_no_common_protocol_is_inconsistent)
{
    char id1[128];
    struct group *g = stable_one(id1);
    struct answer a;
    struct group_join_req r = jreq("", NULL);
    r.protocol_type = kstr_c("connect");
    join(g, r, 0, &a);
    ASSERT_EQ(a.error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    r = jreq("", NULL);
    r.protocols = sticky_only;
    r.n_protocols = 1;
    join(g, r, 0, &a);
    ASSERT_EQ(a.error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    ASSERT_EQ(g->state, GROUP_STABLE); /* unharmed */
    ASSERT_EQ(g->n_members, 1);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_max_size_is_enforced)
{
    struct group *g = mk();
    struct answer a[6];
    struct group_join_req r = jreq("", NULL);
    r.require_known_member_id = true;
    for (int i = 0; i < 5; i++) {
        join(g, r, 0, &a[i]);
        ASSERT_EQ(a[i].error_code, KERR_MEMBER_ID_REQUIRED);
    }
    join(g, r, 0, &a[5]);
    ASSERT_EQ(a[5].error_code, KERR_GROUP_MAX_SIZE_REACHED);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_sync_and_heartbeat_errors)
{
    char id1[128];
    struct group *g = stable_one(id1);
    struct answer s;
    sync_(g, "intruder", 1, 10, NULL, 0, &s);
    ASSERT_EQ(s.error_code, KERR_UNKNOWN_MEMBER_ID);
    sync_(g, id1, 0, 10, NULL, 0, &s);
    ASSERT_EQ(s.error_code, KERR_ILLEGAL_GENERATION);
    ASSERT_EQ(group_heartbeat(g, kstr_c(id1), KSTR_NULL, 7, 10), KERR_ILLEGAL_GENERATION);
    ASSERT_EQ(group_heartbeat(g, kstr_c("intruder"), KSTR_NULL, 1, 10), KERR_UNKNOWN_MEMBER_ID);
    ASSERT_EQ(group_commit_allowed(g, kstr_c(id1), KSTR_NULL, 0, 10), KERR_ILLEGAL_GENERATION);
    ASSERT_EQ(group_commit_allowed(g, kstr_c("intruder"), KSTR_NULL, 1, 10),
              KERR_UNKNOWN_MEMBER_ID);
    /* an admin commit (generation -1) is refused while the group has members */
    ASSERT_EQ(group_commit_allowed(g, kstr_c(""), KSTR_NULL, -1, 10), KERR_UNKNOWN_MEMBER_ID);
    /* SyncGroup v5 with another protocol name */
    struct group_sync_req r = {.member_id = kstr_c(id1), .instance_id = KSTR_NULL,
                               .generation_id = 1, .protocol_type = kstr_c("consumer"),
                               .protocol_name = kstr_c("roundrobin")};
    memset(&s, 0, sizeof(s));
    group_sync(g, &r, 10, 10, &s);
    ASSERT_EQ(s.error_code, KERR_INCONSISTENT_GROUP_PROTOCOL);
    /* a Stable member re-syncing gets its assignment again */
    sync_(g, id1, 1, 10, NULL, 0, &s);
    ASSERT_EQ(s.error_code, KERR_NONE);
    ASSERT_STREQ(s.assignment, "A0");
    /* during a rebalance, SyncGroup is REBALANCE_IN_PROGRESS */
    struct answer b;
    join_new(g, 20, &b);
    sync_(g, id1, 1, 30, NULL, 0, &s);
    ASSERT_EQ(s.error_code, KERR_REBALANCE_IN_PROGRESS);
    group_free(g, KERR_NOT_COORDINATOR);
    ASSERT(b.done); /* answered by group_free */
    ASSERT_EQ(b.error_code, KERR_NOT_COORDINATOR);
}

TEST(group_admin_commit_allowed_only_when_empty)
{
    struct group *g = mk();
    ASSERT_EQ(group_commit_allowed(g, kstr_c(""), KSTR_NULL, -1, 0), KERR_NONE);
    ASSERT_EQ(group_commit_allowed(g, kstr_c("m"), KSTR_NULL, 3, 0), KERR_UNKNOWN_MEMBER_ID);
    group_mark_dead(g);
    ASSERT_EQ(group_commit_allowed(g, kstr_c(""), KSTR_NULL, -1, 0),
              KERR_COORDINATOR_NOT_AVAILABLE);
    struct answer a;
    join_new(g, 0, &a);
    ASSERT_EQ(a.error_code, KERR_COORDINATOR_NOT_AVAILABLE);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_leader_that_never_syncs_is_evicted_after_the_rebalance_timeout)
{
    char id1[128];
    struct group *g = stable_one(id1);
    struct answer b, a2, s2;
    join_new(g, 0, &b);
    join(g, jreq(id1, NULL), 0, &a2);
    ASSERT_EQ(g->state, GROUP_COMPLETING_REBALANCE);
    sync_(g, b.member_id, 2, 10, NULL, 0, &s2);
    ASSERT(!s2.done);
    ASSERT_EQ(group_next_deadline(g), 10000); /* the leader's session comes first */
    ASSERT_EQ(group_heartbeat(g, kstr_c(id1), KSTR_NULL, 2, 9000), KERR_NONE);
    group_tick(g, 19999, 19999); /* the leader's session (19000) ran out first */
    ASSERT(s2.done);
    ASSERT_EQ(s2.error_code, KERR_REBALANCE_IN_PROGRESS);
    ASSERT_EQ(g->n_members, 1);
    ASSERT_STREQ(g->leader_id, b.member_id);
    group_free(g, KERR_NOT_COORDINATOR);
}

/* ---- static membership ---- */

TEST(group_static_member_restart_keeps_assignment_without_rebalance)
{
    struct group *g = mk();
    struct answer a, b, a2, s1, s2;
    join(g, jreq("", "inst-a"), 0, &a);
    ASSERT_EQ(a.error_code, KERR_NONE);
    struct sync_group_assignment as1 = {kstr_c(a.member_id), {(const uint8_t *)"PA", 2}};
    sync_(g, a.member_id, 1, 0, &as1, 1, &s1);
    join(g, jreq("", "inst-b"), 10, &b);
    join(g, jreq(a.member_id, "inst-a"), 10, &a2);
    ASSERT(b.done && a2.done);
    struct sync_group_assignment as[2] = {{kstr_c(a.member_id), {(const uint8_t *)"PA", 2}},
                                          {kstr_c(b.member_id), {(const uint8_t *)"PB", 2}}};
    sync_(g, b.member_id, 2, 20, NULL, 0, &s2);
    sync_(g, a.member_id, 2, 20, as, 2, &s1);
    ASSERT_STREQ(s2.assignment, "PB");
    ASSERT_EQ(g->state, GROUP_STABLE);
    int stores_before = stores;

    /* inst-b restarts: it joins with no member id but its instance id */
    struct answer b2, sb;
    join(g, jreq("", "inst-b"), 5000, &b2);
    ASSERT(b2.done);
    ASSERT_EQ(b2.error_code, KERR_NONE);
    ASSERT_EQ(b2.generation, 2); /* same generation: no rebalance */
    ASSERT(strcmp(b2.member_id, b.member_id) != 0);
    ASSERT_STREQ(b2.leader_id, a.member_id);
    ASSERT_EQ(g->state, GROUP_STABLE);
    ASSERT_EQ(stores, stores_before + 1); /* the new member id is persisted */
    sync_(g, b2.member_id, 2, 5001, NULL, 0, &sb);
    ASSERT_EQ(sb.error_code, KERR_NONE);
    ASSERT_STREQ(sb.assignment, "PB"); /* its old partitions */
    /* the old incarnation is fenced; the leader heartbeats on undisturbed */
    ASSERT_EQ(group_heartbeat(g, kstr_c(b.member_id), kstr_c("inst-b"), 2, 5002),
              KERR_FENCED_INSTANCE_ID);
    ASSERT_EQ(group_heartbeat(g, kstr_c(a.member_id), kstr_c("inst-a"), 2, 5002), KERR_NONE);
    /* LeaveGroup by instance id with the stale member id is fenced too */
    ASSERT_EQ(group_leave(g, kstr_c(b.member_id), kstr_c("inst-b"), 5003, 5003),
              KERR_FENCED_INSTANCE_ID);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_static_leader_restart_is_not_told_it_leads)
{
    struct group *g = mk();
    struct answer a, s;
    join(g, jreq("", "inst-a"), 0, &a);
    struct sync_group_assignment as = {kstr_c(a.member_id), {(const uint8_t *)"PA", 2}};
    sync_(g, a.member_id, 1, 0, &as, 1, &s);
    struct answer a2;
    join(g, jreq("", "inst-a"), 100, &a2);
    ASSERT_EQ(a2.error_code, KERR_NONE);
    ASSERT_STREQ(a2.leader_id, a.member_id); /* the old id: it will not reassign */
    ASSERT_STREQ(g->leader_id, a2.member_id); /* but it does lead */
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_static_member_gone_past_session_timeout_triggers_rebalance)
{
    struct group *g = mk();
    struct answer a, s;
    join(g, jreq("", "inst-a"), 0, &a);
    struct sync_group_assignment as = {kstr_c(a.member_id), {(const uint8_t *)"PA", 2}};
    sync_(g, a.member_id, 1, 0, &as, 1, &s);
    group_tick(g, 10000, 10000);
    ASSERT_EQ(g->n_members, 0);
    ASSERT_EQ(g->state, GROUP_EMPTY);
    group_free(g, KERR_NOT_COORDINATOR);
}

/* ---- protocol selection ---- */

TEST(group_protocol_is_the_common_one_most_members_prefer)
{
    struct group *g = mk();
    struct answer a, b, c;
    struct group_join_req r = jreq("", NULL);
    join(g, r, 0, &a); /* alone: range (its first) */
    ASSERT_STREQ(a.protocol, "range");
    struct answer s;
    sync_(g, a.member_id, 1, 0, NULL, 0, &s);
    /* two members that only speak roundrobin */
    r.protocols = rr_only;
    r.n_protocols = 1;
    join(g, r, 10, &b);
    join(g, r, 10, &c);
    struct answer a2;
    join(g, jreq(a.member_id, NULL), 20, &a2);
    ASSERT(a2.done && b.done && c.done);
    ASSERT_STREQ(a2.protocol, "roundrobin"); /* the only common one */
    ASSERT_STREQ(g->protocol_name, "roundrobin");
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_rejoin_with_same_metadata_in_stable_changes_nothing)
{
    char id1[128];
    struct group *g = stable_one(id1);
    struct answer b, s;
    join_new(g, 0, &b);
    struct answer a2;
    join(g, jreq(id1, NULL), 0, &a2);
    struct sync_group_assignment as[2] = {{kstr_c(id1), {(const uint8_t *)"X", 1}},
                                          {kstr_c(b.member_id), {(const uint8_t *)"Y", 1}}};
    sync_(g, id1, 2, 0, as, 2, &s);
    ASSERT_EQ(g->state, GROUP_STABLE);
    /* the follower rejoins with unchanged metadata: answered at once, same generation */
    struct answer b2;
    join(g, jreq(b.member_id, NULL), 10, &b2);
    ASSERT(b2.done);
    ASSERT_EQ(b2.generation, 2);
    ASSERT_EQ(g->state, GROUP_STABLE);
    /* the leader rejoining starts a rebalance (it may want to reassign) */
    struct answer a3;
    join(g, jreq(id1, NULL), 20, &a3);
    ASSERT_EQ(g->state, GROUP_PREPARING_REBALANCE);
    group_free(g, KERR_NOT_COORDINATOR);
    ASSERT(a3.done);
}

/* ---- offsets and restore ---- */

TEST(group_offsets_put_get_delete)
{
    struct group *g = mk();
    group_offset_put(g, kstr_c("t"), 0, 5, -1, KSTR_NULL, 100);
    group_offset_put(g, kstr_c("t"), 1, 7, 3, kstr_c("m"), 101);
    group_offset_put(g, kstr_c("t"), 0, 6, 2, kstr_c("x"), 102); /* replaces */
    ASSERT_EQ(group_offset_count(g), 2);
    const struct group_offset *o = group_offset_get(g, kstr_c("t"), 0);
    ASSERT(o);
    ASSERT_EQ(o->offset, 6);
    ASSERT_EQ(o->leader_epoch, 2);
    ASSERT_STREQ(o->metadata, "x");
    ASSERT(!group_offset_get(g, kstr_c("t"), 2));
    ASSERT(!group_offset_get(g, kstr_c("u"), 0));
    ASSERT(group_offset_del(g, kstr_c("t"), 0));
    ASSERT(!group_offset_del(g, kstr_c("t"), 0));
    int n = 0;
    size_t it = 0;
    while (group_offset_next(g, &it))
        n++;
    ASSERT_EQ(n, 1);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_restore_brings_back_a_stable_group)
{
    struct group *g = mk();
    struct group_restore_member m[3] = {
        {kstr_c("m1"), KSTR_NULL, kstr_c("c1"), kstr_c("/h1"), 30000, 10000,
         {(const uint8_t *)"sub", 3}, {(const uint8_t *)"A1", 2}},
        {kstr_c("m2"), kstr_c("i2"), kstr_c("c2"), kstr_c("/h2"), -1, 6000,
         {(const uint8_t *)"sub", 3}, {(const uint8_t *)"A2", 2}},
        {kstr_c("m1"), KSTR_NULL, kstr_c("dup"), kstr_c(""), 1, 1, {NULL, 0}, {NULL, 0}},
    };
    struct group_restore r = {kstr_c("consumer"), 7, kstr_c("range"), kstr_c("m2"), 1234, m, 3};
    group_restore(g, &r, 1000);
    ASSERT_EQ(g->state, GROUP_STABLE);
    ASSERT_EQ(g->generation, 7);
    ASSERT_EQ(g->n_members, 2); /* the duplicate is skipped */
    ASSERT_STREQ(g->leader_id, "m2");
    ASSERT_EQ(group_heartbeat(g, kstr_c("m1"), KSTR_NULL, 7, 1500), KERR_NONE);
    struct answer s;
    sync_(g, "m2", 7, 1500, NULL, 0, &s);
    ASSERT_STREQ(s.assignment, "A2");
    /* m2 (6 s session, refreshed by its SyncGroup at 1500) expires first */
    group_tick(g, 7499, 7499);
    ASSERT_EQ(g->n_members, 2);
    group_tick(g, 7500, 7500);
    ASSERT_EQ(g->n_members, 1);
    ASSERT_EQ(g->state, GROUP_PREPARING_REBALANCE);
    /* an empty record restores an Empty group */
    struct group_restore e = {kstr_c("consumer"), 8, KSTR_NULL, KSTR_NULL, 1, NULL, 0};
    group_restore(g, &e, 8000);
    ASSERT_EQ(g->state, GROUP_EMPTY);
    ASSERT_EQ(g->generation, 8);
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_subscription_parsing)
{
    char id1[128];
    struct group *g = mk();
    /* ConsumerProtocolSubscription v0: version, topics ["orders", "pay"], user data null */
    static const uint8_t sub[] = {0, 0, 0, 0, 0, 2, 0, 6, 'o', 'r', 'd', 'e', 'r', 's',
                                  0, 3, 'p', 'a', 'y', 0xff, 0xff, 0xff, 0xff};
    struct join_group_protocol p[1] = {{kstr_c("range"), {sub, sizeof(sub)}}};
    struct group_join_req r = jreq("", NULL);
    r.protocols = p;
    r.n_protocols = 1;
    struct answer a;
    join(g, r, 0, &a);
    strcpy(id1, a.member_id);
    ASSERT(group_subscribes(g, kstr_c("orders")));
    ASSERT(group_subscribes(g, kstr_c("pay")));
    ASSERT(!group_subscribes(g, kstr_c("ord")));
    group_free(g, KERR_NOT_COORDINATOR);
}

TEST(group_state_names_parse_case_insensitively)
{
    enum group_state s;
    ASSERT(group_state_parse(kstr_c("stable"), &s));
    ASSERT_EQ(s, GROUP_STABLE);
    ASSERT(group_state_parse(kstr_c("PreparingRebalance"), &s));
    ASSERT_EQ(s, GROUP_PREPARING_REBALANCE);
    ASSERT(!group_state_parse(kstr_c("Stabl"), &s));
    ASSERT_STREQ(group_state_name(GROUP_COMPLETING_REBALANCE), "CompletingRebalance");
}
