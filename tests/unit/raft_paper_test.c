/* The Raft paper's §5, sentence by sentence (in the manner of etcd-raft's raft_paper_test.go,
 * written anew for this core). Each test quotes the rule it checks. Indexes are Kafka offsets
 * (the first entry is index 0; index -1 with term 0 is the empty prefix), and every new leader
 * appends a no-op first. */
#include "raft_util.h"
#include "test.h"

static const int32_t V3[] = {1, 2, 3};
static const int32_t V5[] = {1, 2, 3, 4, 5};

/* A standalone node 1 of voters v, PreVote and CheckQuorum off unless a test says so. */
static void node3(struct rt_node *n, const int64_t *terms, size_t count, int64_t term,
                  int64_t commit)
{
    rt_node_init(n, 1, V3, 3, terms, count, term, commit, false, false);
}

/* Makes a standalone node leader by campaigning and granting votes from the others. */
static void make_leader(struct rt_node *n)
{
    ASSERT_EQ(raft_campaign(n->r), 0);
    rt_ready(n);
    const struct raft_conf *c = raft_conf(n->r);
    for (size_t i = 0; i < c->n_voters && raft_role(n->r) != RAFT_LEADER; i++) {
        if (c->voters[i] == n->id)
            continue;
        struct raft_msg m = rt_msg(RAFT_MSG_VOTE_RESP, c->voters[i], n->id, raft_term(n->r));
        ASSERT_EQ(rt_step(n, &m), 0);
    }
    ASSERT_EQ(raft_role(n->r), RAFT_LEADER);
    rt_clear(n);
}

static struct raft_msg append_msg(int32_t from, int64_t term, int64_t prev, int64_t prev_term,
                                  int64_t commit)
{
    struct raft_msg m = rt_msg(RAFT_MSG_APPEND, from, 1, term);
    m.index = prev;
    m.log_term = prev_term;
    m.commit = commit;
    return m;
}

static struct raft_msg ack_msg(int32_t from, int64_t term, int64_t index)
{
    struct raft_msg m = rt_msg(RAFT_MSG_APPEND_RESP, from, 1, term);
    m.index = index;
    return m;
}

/* §5.1 "If one server's current term is smaller than the other's, then it updates its current
 * term to the larger value. If a candidate or leader discovers that its term is out of date, it
 * immediately reverts to follower state." */
TEST(raft_paper_higher_term_updates_term_and_reverts_to_follower)
{
    for (int role = 0; role < 3; role++) {
        struct rt_node n;
        node3(&n, NULL, 0, 0, -1);
        if (role == 1) {
            ASSERT_EQ(raft_campaign(n.r), 0);
            rt_ready(&n);
            ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE);
        } else if (role == 2) {
            make_leader(&n);
        }
        struct raft_msg m = append_msg(2, 5, -1, 0, -1);
        ASSERT_EQ(rt_step(&n, &m), 0);
        ASSERT_EQ(raft_term(n.r), 5);
        ASSERT_EQ(raft_role(n.r), RAFT_FOLLOWER);
        ASSERT_EQ(raft_leader(n.r), 2);
        ASSERT_EQ(n.hs_term, 5);
        rt_node_free(&n);
    }
}

/* §5.1 "If a server receives a request with a stale term number, it rejects the request."
 * The stale leader is told our term (so it steps down) when PreVote or CheckQuorum is on. */
TEST(raft_paper_stale_term_request_rejected)
{
    for (int quorum = 0; quorum < 2; quorum++) {
        struct rt_node n;
        rt_node_init(&n, 1, V3, 3, NULL, 0, 3, -1, false, quorum == 1);
        struct raft_msg m = append_msg(2, 2, -1, 0, -1);
        struct raft_entry e = {.first = 0, .last = 0, .term = 2, .kind = RAFT_ENTRY_DATA};
        m.entries = &e;
        m.n_entries = 1;
        ASSERT_EQ(rt_step(&n, &m), 0);
        ASSERT_EQ(raft_term(n.r), 3);
        ASSERT_EQ(raft_last_index(n.r), -1);
        ASSERT_EQ(raft_leader(n.r), RAFT_NONE);
        ASSERT_EQ(rt_count(&n, 0), quorum ? 1u : 0u);
        if (quorum) {
            const struct raft_msg *out = rt_find(&n, RAFT_MSG_HEARTBEAT_RESP, 2);
            ASSERT(out);
            ASSERT_EQ(out->term, 3);
        }
        rt_node_free(&n);
    }
}

/* §5.2 "When servers start up, they begin as followers." */
TEST(raft_paper_servers_start_as_followers)
{
    struct rt_node n;
    node3(&n, (const int64_t[]){1, 1, 2}, 3, 2, -1);
    ASSERT_EQ(raft_role(n.r), RAFT_FOLLOWER);
    ASSERT_EQ(raft_term(n.r), 2);
    ASSERT_EQ(raft_leader(n.r), RAFT_NONE);
    ASSERT_EQ(raft_last_index(n.r), 2);
    rt_node_free(&n);
}

/* §5.2 "Leaders send periodic heartbeats (AppendEntries RPCs that carry no log entries) to all
 * followers in order to maintain their authority." Here a heartbeat is its own message type,
 * carrying the commit index (capped at what each follower is known to hold). */
TEST(raft_paper_leader_sends_periodic_heartbeats)
{
    struct rt_node n;
    node3(&n, NULL, 0, 0, -1);
    make_leader(&n);
    raft_tick(n.r, 49);
    rt_ready(&n);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_HEARTBEAT), 0u);
    raft_tick(n.r, 50);
    rt_ready(&n);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_HEARTBEAT), 2u);
    for (int32_t to = 2; to <= 3; to++) {
        const struct raft_msg *m = rt_find(&n, RAFT_MSG_HEARTBEAT, to);
        ASSERT(m);
        ASSERT_EQ(m->term, 1);
        ASSERT_EQ(m->commit, -1);
        ASSERT_EQ(m->n_entries, 0u);
    }
    rt_clear(&n);
    raft_tick(n.r, 100);
    rt_ready(&n);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_HEARTBEAT), 2u);
    rt_node_free(&n);
}

/* §5.2 "If a follower receives no communication over a period of time called the election
 * timeout, then it assumes there is no viable leader and begins an election to choose a new
 * leader. To begin an election, a follower increments its current term and transitions to
 * candidate state. It then votes for itself and issues RequestVote RPCs in parallel to each of
 * the other servers." And the candidate that times out starts a new election. */
TEST(raft_paper_follower_and_candidate_start_elections_on_timeout)
{
    struct rt_node n;
    node3(&n, NULL, 0, 0, -1);
    for (int64_t t = 1; t <= 300 && raft_role(n.r) == RAFT_FOLLOWER; t++)
        raft_tick(n.r, t);
    ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE);
    rt_ready(&n);
    ASSERT_EQ(raft_term(n.r), 1);
    ASSERT_EQ(n.hs_term, 1);
    ASSERT_EQ(n.hs_vote, 1);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_VOTE), 2u);
    for (int32_t to = 2; to <= 3; to++) {
        const struct raft_msg *m = rt_find(&n, RAFT_MSG_VOTE, to);
        ASSERT(m);
        ASSERT_EQ(m->term, 1);
    }
    rt_clear(&n);
    /* Nobody answers: the candidate times out and tries again in the next term. */
    for (int64_t t = 301; t <= 1000 && raft_term(n.r) == 1; t++)
        raft_tick(n.r, t);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE);
    ASSERT_EQ(raft_term(n.r), 2);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_VOTE), 2u);
    rt_node_free(&n);
}

/* §5.2 "A candidate wins an election if it receives votes from a majority of the servers in the
 * full cluster for the same term." ... "the candidate neither wins nor loses" on a split. */
TEST(raft_paper_election_won_by_majority_in_one_round)
{
    struct {
        size_t size;
        int grants;
        int rejects;
        enum raft_role want;
    } cases[] = {
        {1, 0, 0, RAFT_LEADER},    {3, 1, 0, RAFT_LEADER},    {3, 2, 0, RAFT_LEADER},
        {5, 2, 0, RAFT_LEADER},    {5, 4, 0, RAFT_LEADER},    {3, 0, 0, RAFT_CANDIDATE},
        {5, 1, 0, RAFT_CANDIDATE}, {5, 1, 2, RAFT_CANDIDATE}, {3, 0, 2, RAFT_FOLLOWER},
        {5, 0, 3, RAFT_FOLLOWER},  {5, 1, 3, RAFT_FOLLOWER},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct rt_node n;
        rt_node_init(&n, 1, V5, cases[i].size, NULL, 0, 0, -1, false, false);
        ASSERT_EQ(raft_campaign(n.r), 0);
        rt_ready(&n);
        int32_t from = 2;
        for (int g = 0; g < cases[i].grants; g++) {
            struct raft_msg m = rt_msg(RAFT_MSG_VOTE_RESP, from++, 1, 1);
            rt_step(&n, &m);
        }
        for (int k = 0; k < cases[i].rejects; k++) {
            struct raft_msg m = rt_msg(RAFT_MSG_VOTE_RESP, from++, 1, 1);
            m.reject = true;
            rt_step(&n, &m);
        }
        if (raft_role(n.r) != cases[i].want)
            test_fail(__FILE__, __LINE__, "case %zu: role %s", i, raft_role_name(raft_role(n.r)));
        rt_node_free(&n);
    }
}

/* §5.2 "Each server will vote for at most one candidate in a given term, on a
 * first-come-first-served basis." And the vote is durable before the reply leaves: the ready
 * carries the hard state to persist, and the grant only follows the durability report. */
TEST(raft_paper_follower_votes_once_per_term_first_come)
{
    struct rt_node n;
    node3(&n, NULL, 0, 1, -1);
    struct raft_msg v2 = rt_msg(RAFT_MSG_VOTE, 2, 1, 1);
    ASSERT_EQ(raft_step(n.r, &v2), 0);
    struct raft_ready rd;
    raft_ready(n.r, &rd);
    ASSERT(rd.hard_state_changed);
    ASSERT_EQ(rd.hs_term, 1);
    ASSERT_EQ(rd.hs_vote, 2);
    ASSERT_EQ(rd.n_msgs, 0u);
    raft_advance(n.r, &rd);
    ASSERT(!raft_has_ready(n.r));
    raft_persisted_hard_state(n.r, 1, 3); /* not the hard state we wrote: ignored */
    ASSERT(!raft_has_ready(n.r));
    raft_persisted_hard_state(n.r, 1, 2);
    raft_ready(n.r, &rd);
    ASSERT(!rd.hard_state_changed);
    ASSERT_EQ(rd.n_msgs, 1u);
    ASSERT_EQ(rd.msgs[0].type, RAFT_MSG_VOTE_RESP);
    ASSERT(!rd.msgs[0].reject);
    raft_advance(n.r, &rd);

    struct raft_msg v3 = rt_msg(RAFT_MSG_VOTE, 3, 1, 1);
    rt_step(&n, &v3);
    const struct raft_msg *out = rt_find(&n, RAFT_MSG_VOTE_RESP, 3);
    ASSERT(out && out->reject);
    rt_step(&n, &v2); /* a repeated request from the one we voted for is granted again */
    out = rt_find(&n, RAFT_MSG_VOTE_RESP, 2);
    ASSERT(out && !out->reject);
    ASSERT_EQ(raft_vote(n.r), 2);
    rt_node_free(&n);
}

/* §5.2 "While waiting for votes, a candidate may receive an AppendEntries RPC from another
 * server claiming to be leader. If the leader's term ... is at least as large as the
 * candidate's current term, then the candidate recognizes the leader as legitimate and returns
 * to follower state." */
TEST(raft_paper_candidate_falls_back_to_follower_on_leader_message)
{
    for (int64_t term = 1; term <= 2; term++) {
        struct rt_node n;
        node3(&n, NULL, 0, 0, -1);
        ASSERT_EQ(raft_campaign(n.r), 0);
        rt_ready(&n);
        struct raft_msg m = append_msg(2, term, -1, 0, -1);
        ASSERT_EQ(rt_step(&n, &m), 0);
        ASSERT_EQ(raft_role(n.r), RAFT_FOLLOWER);
        ASSERT_EQ(raft_term(n.r), term);
        ASSERT_EQ(raft_leader(n.r), 2);
        rt_node_free(&n);
    }
}

/* §5.2 "Raft uses randomized election timeouts to ensure that split votes are rare ...
 * election timeouts are chosen randomly from a fixed interval (e.g., 150–300ms)." */
TEST(raft_paper_election_timeouts_randomized_in_150_300)
{
    int64_t seen_min = 1000, seen_max = 0;
    int distinct = 0;
    bool hit[301] = {false};
    for (int seed = 0; seed < 400; seed++) {
        struct raft_options o;
        raft_options_default(&o, 1, (uint64_t)seed * 7919);
        o.pre_vote = false;
        struct raft_conf_at c = {.index = -1, .conf = {.n_voters = 3, .voters = {1, 2, 3}}};
        struct raft_restore st = {
            .vote = RAFT_NONE, .log_last = -1, .confs = &c, .n_confs = 1, .commit = -1};
        struct raft *r;
        ASSERT_EQ(raft_new(&o, &st, 0, &r), 0);
        int64_t t = 0;
        while (raft_role(r) == RAFT_FOLLOWER && t < 400)
            raft_tick(r, ++t);
        ASSERT_CMP(t, >=, 150);
        ASSERT_CMP(t, <, 300);
        seen_min = MIN(seen_min, t);
        seen_max = MAX(seen_max, t);
        if (!hit[t]) {
            hit[t] = true;
            distinct++;
        }
        raft_free(r);
    }
    /* Spread over the whole interval, so that two servers rarely time out together. */
    ASSERT_CMP(distinct, >, 100);
    ASSERT_CMP(seen_min, <, 160);
    ASSERT_CMP(seen_max, >, 290);
}

/* §5.3 "Once a leader has been elected, it begins servicing client requests. ... The leader
 * appends the command to its log as a new entry, then issues AppendEntries RPCs in parallel to
 * each of the other servers to replicate the entry." */
TEST(raft_paper_leader_replicates_new_entries)
{
    struct rt_node n;
    node3(&n, NULL, 0, 0, -1);
    make_leader(&n);
    /* The no-op went out first; once acknowledged, the next entry follows it. */
    for (int32_t f = 2; f <= 3; f++) {
        struct raft_msg a = ack_msg(f, 1, 0);
        rt_step(&n, &a);
    }
    rt_clear(&n);
    int64_t first, last, term;
    ASSERT_EQ(raft_propose(n.r, 1, (const uint8_t *)"a", 1, &first, &last, &term), 0);
    ASSERT_EQ(first, 1);
    ASSERT_EQ(last, 1);
    ASSERT_EQ(term, 1);
    rt_ready(&n);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_APPEND), 2u);
    for (int32_t f = 2; f <= 3; f++) {
        const struct raft_msg *m = rt_find(&n, RAFT_MSG_APPEND, f);
        ASSERT(m);
        ASSERT_EQ(m->index, 0);
        ASSERT_EQ(m->log_term, 1);
        ASSERT_EQ(m->commit, 0);
        ASSERT_EQ(m->n_entries, 1u);
        ASSERT_EQ(m->entries[0].first, 1);
        ASSERT_EQ(m->entries[0].term, 1);
        ASSERT_EQ(m->entries[0].len, 1u);
        ASSERT_EQ(m->entries[0].payload[0], 'a');
    }
    ASSERT_EQ(raft_last_index(n.r), 1);
    rt_node_free(&n);
}

/* §5.3 "A log entry is committed once the leader that created the entry has replicated it on a
 * majority of the servers." (Durably: the leader's own copy counts once synced.) */
TEST(raft_paper_leader_commits_once_on_a_majority)
{
    for (int acks = 0; acks <= 4; acks++) {
        struct rt_node n;
        rt_node_init(&n, 1, V5, 5, NULL, 0, 0, -1, false, false);
        make_leader(&n);
        for (int32_t f = 2; f < 2 + acks; f++) {
            struct raft_msg a = ack_msg(f, 1, 0);
            rt_step(&n, &a);
        }
        ASSERT_EQ(raft_commit(n.r), acks >= 2 ? 0 : -1);
        ASSERT_EQ(n.applied, acks >= 2 ? 0 : -1);
        rt_node_free(&n);
    }
}

/* §5.3 "The leader keeps track of the highest index it knows to be committed, and it includes
 * that index in future AppendEntries RPCs (including heartbeats) so that the other servers
 * eventually find out." */
TEST(raft_paper_leader_tells_followers_the_commit_index)
{
    struct rt_node n;
    node3(&n, NULL, 0, 0, -1);
    make_leader(&n);
    struct raft_msg a = ack_msg(2, 1, 0);
    rt_step(&n, &a);
    ASSERT_EQ(raft_commit(n.r), 0);
    /* Follower 2 gets an (empty) append carrying the new commit index. */
    const struct raft_msg *m = rt_find(&n, RAFT_MSG_APPEND, 2);
    ASSERT(m);
    ASSERT_EQ(m->commit, 0);
    rt_clear(&n);
    raft_tick(n.r, 50);
    rt_ready(&n);
    m = rt_find(&n, RAFT_MSG_HEARTBEAT, 2);
    ASSERT(m);
    ASSERT_EQ(m->commit, 0);
    m = rt_find(&n, RAFT_MSG_HEARTBEAT, 3);
    ASSERT(m);
    ASSERT_EQ(m->commit, -1); /* 3 is not known to hold index 0 */
    rt_node_free(&n);
}

/* §5.3 "This also commits all preceding entries in the leader's log, including entries created
 * by previous leaders." */
TEST(raft_paper_leader_commit_covers_preceding_entries)
{
    struct rt_node n;
    node3(&n, (const int64_t[]){1, 2, 2}, 3, 2, -1);
    make_leader(&n); /* term 3, no-op at index 3 */
    ASSERT_EQ(raft_last_index(n.r), 3);
    struct raft_msg a = ack_msg(2, 3, 3);
    rt_step(&n, &a);
    ASSERT_EQ(raft_commit(n.r), 3);
    rt_node_free(&n);
}

/* §5.3 "Once a follower learns that a log entry is committed, it applies the entry to its local
 * state machine (in log order)." */
TEST(raft_paper_follower_learns_commit_and_applies)
{
    struct rt_node n;
    node3(&n, NULL, 0, 1, -1);
    struct raft_entry e[3] = {
        {.first = 0, .last = 0, .term = 1, .kind = RAFT_ENTRY_NOOP},
        {.first = 1,
         .last = 4,
         .term = 1,
         .kind = RAFT_ENTRY_DATA,
         .payload = (void *)"b",
         .len = 1},
        {.first = 5,
         .last = 5,
         .term = 1,
         .kind = RAFT_ENTRY_DATA,
         .payload = (void *)"c",
         .len = 1},
    };
    struct raft_msg m = append_msg(2, 1, -1, 0, 4);
    m.entries = e;
    m.n_entries = 3;
    ASSERT_EQ(rt_step(&n, &m), 0);
    ASSERT_EQ(raft_commit(n.r), 4);
    ASSERT_EQ(n.applied, 4);
    ASSERT_EQ(rt_last(&n), 5);
    /* A later heartbeat moves it further, but never past what the follower holds. */
    struct raft_msg hb = rt_msg(RAFT_MSG_HEARTBEAT, 2, 1, 1);
    hb.commit = 9;
    rt_step(&n, &hb);
    ASSERT_EQ(raft_commit(n.r), 5);
    rt_node_free(&n);
}

/* §5.3 "When sending an AppendEntries RPC, the leader includes the index and term of the entry
 * in its log that immediately precedes the new entries. If the follower does not find an entry
 * in its log with the same index and term, then it refuses the new entries." With the fast
 * hint: the refusal names the follower's last index j <= prev whose term is <= prev's term. */
TEST(raft_paper_follower_checks_the_previous_entry)
{
    struct {
        int64_t prev, prev_term;
        bool reject;
        int64_t ack; /* accepted: acknowledged index */
        int64_t hint, hint_term;
    } cases[] = {
        {-1, 0, false, 0, 0, 0}, /* committed prefix: acknowledges up to commit */
        {0, 1, false, 0, 0, 0},  {1, 2, false, 1, 0, 0}, /* matches an uncommitted entry */
        {1, 1, true, 0, 0, 1}, /* index 1 has term 2: back to the end of term 1 */
        {2, 3, true, 0, 1, 2}, /* beyond our log: our last index */
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct rt_node n;
        node3(&n, (const int64_t[]){1, 2}, 2, 2, 0);
        struct raft_msg m = append_msg(2, 3, cases[i].prev, cases[i].prev_term, 0);
        ASSERT_EQ(rt_step(&n, &m), 0);
        const struct raft_msg *out = rt_find(&n, RAFT_MSG_APPEND_RESP, 2);
        ASSERT(out);
        ASSERT_EQ(out->reject, cases[i].reject);
        if (cases[i].reject) {
            ASSERT_EQ(out->index, cases[i].prev);
            ASSERT_EQ(out->last, cases[i].hint);
            ASSERT_EQ(out->log_term, cases[i].hint_term);
        } else {
            ASSERT_EQ(out->index, cases[i].ack);
        }
        rt_node_free(&n);
    }
}

/* §5.3 "If an existing entry conflicts with a new one (same index but different terms), delete
 * the existing entry and all that follow it; append any new entries not already in the log."
 * The writes come out as a truncation point and the entries to append. */
TEST(raft_paper_follower_deletes_conflicts_and_appends_new_entries)
{
    struct {
        int64_t prev, prev_term;
        int64_t terms[2];
        size_t n;
        int64_t want_trunc;
        size_t want_new;
        int64_t want[3];
        size_t want_n;
    } cases[] = {
        {1, 2, {3}, 1, -1, 1, {1, 2, 3}, 3},
        {0, 1, {3, 4}, 2, 1, 2, {1, 3, 4}, 3},
        {-1, 0, {1}, 1, -1, 0, {1, 2}, 2},
        {-1, 0, {3}, 1, 0, 1, {3}, 1},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct rt_node n;
        node3(&n, (const int64_t[]){1, 2}, 2, 2, -1);
        struct raft_entry e[2];
        for (size_t k = 0; k < cases[i].n; k++)
            e[k] = (struct raft_entry){.first = cases[i].prev + 1 + (int64_t)k,
                                       .last = cases[i].prev + 1 + (int64_t)k,
                                       .term = cases[i].terms[k],
                                       .kind = RAFT_ENTRY_DATA};
        struct raft_msg m = append_msg(2, 4, cases[i].prev, cases[i].prev_term, -1);
        m.entries = e;
        m.n_entries = cases[i].n;
        ASSERT_EQ(raft_step(n.r, &m), 0);
        struct raft_ready rd;
        raft_ready(n.r, &rd);
        ASSERT_EQ(rd.truncate_from, cases[i].want_trunc);
        ASSERT_EQ(rd.n_entries, cases[i].want_new);
        raft_advance(n.r, &rd);
        ASSERT_EQ(raft_last_index(n.r), (int64_t)cases[i].want_n - 1);
        for (size_t k = 0; k < cases[i].want_n; k++)
            ASSERT_EQ(raft_term_at(n.r, (int64_t)k), cases[i].want[k]);
        rt_node_free(&n);
    }
}

/* §5.3, Figure 7: "the leader handles inconsistencies by forcing the followers' logs to
 * duplicate its own", whatever the follower holds: missing entries (a, b), extra uncommitted
 * entries (c, d), or both (e, f). */
TEST(raft_paper_leader_repairs_every_follower_of_figure_7)
{
    static const int64_t leader[] = {1, 1, 1, 4, 4, 5, 5, 6, 6, 6};
    static const struct {
        int64_t terms[12];
        size_t n;
    } followers[] = {
        {{1, 1, 1, 4, 4, 5, 5, 6, 6}, 9},
        {{1, 1, 1, 4}, 4},
        {{1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 6}, 11},
        {{1, 1, 1, 4, 4, 5, 5, 6, 6, 6, 7, 7}, 12},
        {{1, 1, 1, 4, 4, 4, 4}, 7},
        {{1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3}, 11},
    };
    for (size_t i = 0; i < ARRAY_LEN(followers); i++) {
        struct rt_cluster c;
        memset(&c, 0, sizeof(c));
        c.n = 3;
        rt_node_init(&c.nodes[0], 1, V3, 3, leader, ARRAY_LEN(leader), 8, -1, false, false);
        rt_node_init(&c.nodes[1], 2, V3, 3, followers[i].terms, followers[i].n, 7, -1, false,
                     false);
        rt_node_init(&c.nodes[2], 3, V3, 3, NULL, 0, 7, -1, false, false);
        rt_campaign(&c, 1);
        ASSERT_EQ(raft_role(c.nodes[0].r), RAFT_LEADER);
        ASSERT_EQ(rt_propose(&c, 1, 1, "x"), 0);
        rt_stabilize(&c);
        if (!rt_logs_equal(&c.nodes[0], &c.nodes[1]))
            test_fail(__FILE__, __LINE__, "follower %c not repaired", (char)('a' + i));
        ASSERT_EQ(raft_commit(c.nodes[1].r), raft_last_index(c.nodes[0].r));
        rt_cluster_free(&c);
    }
}

/* §5.4.1 "RequestVote RPC ... includes information about the candidate's log". */
TEST(raft_paper_vote_request_carries_last_entry)
{
    struct rt_node n;
    node3(&n, (const int64_t[]){1, 2, 2}, 3, 2, -1);
    ASSERT_EQ(raft_campaign(n.r), 0);
    rt_ready(&n);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_VOTE), 2u);
    const struct raft_msg *m = rt_find(&n, RAFT_MSG_VOTE, 3);
    ASSERT_EQ(m->term, 3);
    ASSERT_EQ(m->index, 2);
    ASSERT_EQ(m->log_term, 2);
    rt_node_free(&n);
}

/* §5.4.1 "the voter denies its vote if its own log is more up-to-date than that of the
 * candidate ... If the logs have last entries with different terms, then the log with the
 * later term is more up-to-date. If the logs end with the same term, then whichever log is
 * longer is more up-to-date." */
TEST(raft_paper_voter_denies_less_up_to_date_candidates)
{
    struct {
        int64_t terms[2];
        size_t n;
        int64_t cand_term, cand_index;
        bool reject;
    } cases[] = {
        {{1}, 1, 1, 0, false},    {{1}, 1, 1, 1, false}, {{1, 1}, 2, 1, 0, true},
        {{1}, 1, 2, 0, false},    {{1}, 1, 2, 1, false}, {{1, 1}, 2, 2, 0, false},
        {{2}, 1, 1, 0, true},     {{2}, 1, 1, 1, true},  {{2, 2}, 2, 1, 0, true},
        {{1, 1}, 2, 1, 1, false},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct rt_node n;
        node3(&n, cases[i].terms, cases[i].n, 2, -1);
        struct raft_msg m = rt_msg(RAFT_MSG_VOTE, 2, 1, 3);
        m.index = cases[i].cand_index;
        m.log_term = cases[i].cand_term;
        rt_step(&n, &m);
        const struct raft_msg *out = rt_find(&n, RAFT_MSG_VOTE_RESP, 2);
        ASSERT(out);
        if (out->reject != cases[i].reject)
            test_fail(__FILE__, __LINE__, "case %zu: reject=%d", i, out->reject);
        rt_node_free(&n);
    }
}

/* §5.4.2 "Raft never commits log entries from previous terms by counting replicas. Only log
 * entries from the leader's current term are committed by counting replicas" (Figure 8). */
TEST(raft_paper_leader_commits_only_current_term_entries_by_counting)
{
    static const int32_t V2[] = {1, 2};
    for (int64_t acked = 0; acked <= 3; acked++) {
        struct rt_node n;
        rt_node_init(&n, 1, V2, 2, (const int64_t[]){1, 2}, 2, 2, -1, false, false);
        make_leader(&n);                                               /* term 3: no-op at 2 */
        ASSERT_EQ(raft_propose(n.r, 1, NULL, 0, NULL, NULL, NULL), 0); /* index 3 */
        rt_ready(&n);
        struct raft_msg a = ack_msg(2, 3, acked);
        rt_step(&n, &a);
        ASSERT_EQ(raft_commit(n.r), acked >= 2 ? acked : -1);
        rt_node_free(&n);
    }
}
