/* The Raft core beyond the paper's §5: PreVote, CheckQuorum, leadership transfer, joint
 * consensus, the durable-majority commit rule, multi-index entries, conflict truncation across
 * term ranges, restarts, installs, and random input (FuzzStep). */
#include "base/errors.h"
#include "base/mem.h"
#include "raft_util.h"
#include "test.h"

static const int32_t V3[] = {1, 2, 3};

static struct rt_node *elect(struct rt_cluster *c)
{
    rt_advance(c, 400);
    struct rt_node *l = rt_leader(c);
    ASSERT(l);
    return l;
}

static struct rt_node *a_follower(struct rt_cluster *c, const struct rt_node * not )
{
    for (size_t i = 0; i < c->n; i++)
        if (&c->nodes[i] != not &&raft_role(c->nodes[i].r) == RAFT_FOLLOWER)
            return &c->nodes[i];
    return NULL;
}

/* ---- PreVote ------------------------------------------------------------------------------- */

/* A partitioned node never gets a PreVote majority, so its term does not run away, and when
 * it returns the leader is not disturbed (thesis §9.6). */
TEST(raft_prevote_isolated_node_keeps_its_term_and_cannot_disrupt)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    int64_t term = raft_term(l->r);
    struct rt_node *f = a_follower(&c, l);
    rt_isolate(&c, f->id, true);
    rt_advance(&c, 2000);
    ASSERT_EQ(raft_term(f->r), term);
    ASSERT_NE(raft_role(f->r), RAFT_LEADER);
    rt_isolate(&c, f->id, false);
    rt_advance(&c, 500);
    ASSERT(rt_leader(&c) == l);
    ASSERT_EQ(raft_term(l->r), term);
    ASSERT_EQ(raft_leader(f->r), l->id);
    rt_cluster_free(&c);
}

/* Without PreVote the same partition makes the returning node depose the leader. */
TEST(raft_prevote_off_isolated_node_raises_terms)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, false, false);
    struct rt_node *l = elect(&c);
    int64_t term = raft_term(l->r);
    struct rt_node *f = a_follower(&c, l);
    rt_isolate(&c, f->id, true);
    rt_advance(&c, 1000);
    ASSERT_CMP(raft_term(f->r), >, term + 1);
    rt_cluster_free(&c);
}

/* A PreVote is granted only to an up-to-date candidate and changes neither term nor vote. */
TEST(raft_prevote_granted_only_to_up_to_date_logs_without_side_effects)
{
    struct rt_node n;
    rt_node_init(&n, 1, V3, 3, (const int64_t[]){1, 1}, 2, 1, -1, true, true);
    struct raft_msg m = rt_msg(RAFT_MSG_PREVOTE, 2, 1, 2);
    m.index = 0;
    m.log_term = 1;
    rt_step(&n, &m);
    const struct raft_msg *out = rt_find(&n, RAFT_MSG_PREVOTE_RESP, 2);
    ASSERT(out && out->reject);
    ASSERT_EQ(out->term, 1);
    rt_clear(&n);
    m.index = 1;
    rt_step(&n, &m);
    out = rt_find(&n, RAFT_MSG_PREVOTE_RESP, 2);
    ASSERT(out && !out->reject);
    ASSERT_EQ(out->term, 2); /* the term asked for, so the candidate counts it */
    ASSERT_EQ(raft_term(n.r), 1);
    ASSERT_EQ(raft_vote(n.r), RAFT_NONE);
    ASSERT_EQ(n.hs_writes, 0);
    rt_node_free(&n);
}

/* A pre-candidate that wins the PreVote becomes a candidate of the next term. */
TEST(raft_prevote_majority_leads_to_real_election)
{
    struct rt_node n;
    rt_node_init(&n, 1, V3, 3, NULL, 0, 4, -1, true, true);
    ASSERT_EQ(raft_campaign(n.r), 0);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_PRECANDIDATE);
    ASSERT_EQ(raft_term(n.r), 4);
    const struct raft_msg *pv = rt_find(&n, RAFT_MSG_PREVOTE, 2);
    ASSERT(pv);
    ASSERT_EQ(pv->term, 5);
    rt_clear(&n);
    struct raft_msg g = rt_msg(RAFT_MSG_PREVOTE_RESP, 3, 1, 5);
    rt_step(&n, &g);
    ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE);
    ASSERT_EQ(raft_term(n.r), 5);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_VOTE), 2u);
    rt_node_free(&n);
}

/* A PreVote is promised to one candidate for a short while: an equally up-to-date rival is
 * refused (so two close timeouts do not both pass PreVote and split the real vote), a better
 * log overrides the promise, and the promise runs out after a third of the base timeout. */
TEST(raft_prevote_promise_refuses_equal_rivals_yields_to_better_logs)
{
    struct rt_node n;
    static const int32_t V5[] = {1, 2, 3, 4, 5};
    rt_node_init(&n, 1, V5, 5, (const int64_t[]){1, 1}, 2, 1, -1, true, true);
    struct raft_msg pv = rt_msg(RAFT_MSG_PREVOTE, 2, 1, 2);
    pv.index = 1;
    pv.log_term = 1;
    rt_step(&n, &pv);
    ASSERT(!rt_find(&n, RAFT_MSG_PREVOTE_RESP, 2)->reject);
    pv.from = 3; /* as good as 2: refused while the promise holds */
    rt_step(&n, &pv);
    ASSERT(rt_find(&n, RAFT_MSG_PREVOTE_RESP, 3)->reject);
    pv.from = 4; /* better than 2: granted */
    pv.index = 2;
    rt_step(&n, &pv);
    ASSERT(!rt_find(&n, RAFT_MSG_PREVOTE_RESP, 4)->reject);
    rt_clear(&n);
    raft_tick(n.r, 49);
    pv.from = 3;
    pv.index = 1;
    rt_step(&n, &pv);
    ASSERT(rt_find(&n, RAFT_MSG_PREVOTE_RESP, 3)->reject);
    rt_clear(&n);
    raft_tick(n.r, 50); /* the promise to 4 has run out */
    rt_step(&n, &pv);
    ASSERT(!rt_find(&n, RAFT_MSG_PREVOTE_RESP, 3)->reject);
    rt_node_free(&n);
}

/* ---- CheckQuorum ----------------------------------------------------------------------------- */

/* "a leader that hasn't heard from a quorum within an election timeout steps down". */
TEST(raft_checkquorum_isolated_leader_steps_down)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    int64_t term = raft_term(l->r);
    rt_isolate(&c, l->id, true);
    rt_advance(&c, 320);
    ASSERT_EQ(raft_role(l->r), RAFT_FOLLOWER);
    struct rt_node *l2 = rt_leader(&c);
    ASSERT(l2 && l2 != l);
    ASSERT_CMP(raft_term(l2->r), >, term);
    rt_isolate(&c, l->id, false);
    rt_advance(&c, 100);
    ASSERT_EQ(raft_term(l->r), raft_term(l2->r));
    ASSERT_EQ(raft_leader(l->r), l2->id);
    rt_cluster_free(&c);
}

/* A follower that heard from its leader within the election timeout ignores vote requests of a
 * higher term (no reply, no term change) unless they come from a leadership transfer. */
TEST(raft_checkquorum_lease_ignores_disruptive_vote_requests)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    struct rt_node *f = a_follower(&c, l);
    int64_t term = raft_term(f->r);
    int32_t other = 6 - l->id - f->id;
    struct raft_msg v = rt_msg(RAFT_MSG_VOTE, other, f->id, term + 1);
    v.index = raft_last_index(f->r);
    v.log_term = raft_term_at(f->r, v.index);
    rt_step(f, &v);
    ASSERT_EQ(rt_count(f, 0), 0u);
    ASSERT_EQ(raft_term(f->r), term);
    v.transfer = true;
    rt_step(f, &v);
    const struct raft_msg *out = rt_find(f, RAFT_MSG_VOTE_RESP, other);
    ASSERT(out && !out->reject);
    ASSERT_EQ(raft_term(f->r), term + 1);
    rt_cluster_free(&c);
}

/* ---- leadership transfer --------------------------------------------------------------------- */

TEST(raft_transfer_to_up_to_date_follower_is_immediate)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "a"), 0);
    rt_stabilize(&c);
    struct rt_node *f = a_follower(&c, l);
    int64_t term = raft_term(l->r);
    ASSERT_EQ(raft_transfer_leader(l->r, f->id), 0);
    rt_stabilize(&c);
    ASSERT_EQ(raft_role(f->r), RAFT_LEADER);
    ASSERT_EQ(raft_term(f->r), term + 1);
    ASSERT_EQ(raft_role(l->r), RAFT_FOLLOWER);
    rt_cluster_free(&c);
}

/* The leader first brings a lagging transferee up to date, refusing proposals meanwhile. */
TEST(raft_transfer_catches_up_a_slow_follower_first)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    struct rt_node *f = a_follower(&c, l);
    rt_isolate(&c, f->id, true);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(rt_propose(&c, l->id, 2, "b"), 0);
    rt_stabilize(&c);
    ASSERT_EQ(raft_transfer_leader(l->r, f->id), 0);
    rt_ready(l);
    ASSERT_EQ(rt_count(l, RAFT_MSG_TIMEOUT_NOW), 0u);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "c"), -ERR_NOT_LEADER);
    rt_isolate(&c, f->id, false);
    rt_advance(&c, 120); /* appends lost in the partition are re-sent within 2 heartbeats */
    ASSERT_EQ(raft_role(f->r), RAFT_LEADER);
    ASSERT_CMP(raft_last_index(f->r), >=, 10);
    rt_cluster_free(&c);
}

/* A follower that restarted and has not heard from this term's leader yet still follows its
 * TimeoutNow (only that leader sends one in this term): the transfer is not lost. */
TEST(raft_transfer_to_a_just_restarted_follower)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "a"), 0);
    rt_stabilize(&c);
    struct rt_node *f = a_follower(&c, l);
    int32_t fid = f->id;
    int64_t term = raft_term(l->r);
    rt_node_restart(&c, fid, true, true);
    f = rt_node(&c, fid);
    ASSERT_EQ(raft_leader(f->r), RAFT_NONE);
    ASSERT_EQ(raft_term(f->r), term);
    struct raft_msg tn = rt_msg(RAFT_MSG_TIMEOUT_NOW, l->id, fid, term);
    ASSERT_EQ(rt_step(f, &tn), 0);
    ASSERT_EQ(raft_role(f->r), RAFT_CANDIDATE); /* a transfer skips PreVote */
    rt_stabilize(&c);
    ASSERT_EQ(raft_role(f->r), RAFT_LEADER);
    ASSERT_EQ(raft_term(f->r), term + 1);
    /* a TimeoutNow from a node that is not the leader it knows changes nothing */
    struct rt_node *other = rt_node(&c, 6 - fid - l->id); /* neither f nor the old leader */
    struct raft_msg bad = rt_msg(RAFT_MSG_TIMEOUT_NOW, l->id, other->id, raft_term(other->r));
    rt_step(other, &bad);
    ASSERT_EQ(raft_role(other->r), RAFT_FOLLOWER);
    ASSERT_EQ(raft_leader(other->r), fid);
    rt_cluster_free(&c);
}

TEST(raft_transfer_gives_up_after_an_election_timeout)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    struct rt_node *f = a_follower(&c, l);
    c.cut[l->id - 1][f->id - 1] = true; /* the transferee never hears from the leader */
    ASSERT_EQ(rt_propose(&c, l->id, 1, "a"), 0);
    ASSERT_EQ(raft_transfer_leader(l->r, f->id), 0);
    ASSERT_EQ(raft_transferee(l->r), f->id);
    rt_advance(&c, 200);
    ASSERT_EQ(raft_transferee(l->r), RAFT_NONE);
    ASSERT_EQ(raft_role(l->r), RAFT_LEADER);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "b"), 0);
    rt_cluster_free(&c);
}

TEST(raft_transfer_rejects_self_non_voters_and_followers)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    ASSERT_EQ(raft_transfer_leader(l->r, l->id), -ERR_INVALID);
    ASSERT_EQ(raft_transfer_leader(l->r, 9), -ERR_INVALID);
    struct rt_node *f = a_follower(&c, l);
    ASSERT_EQ(raft_transfer_leader(f->r, l->id), -ERR_NOT_LEADER);
    /* RAFT_NONE picks the most up-to-date voter. */
    ASSERT_EQ(raft_transfer_leader(l->r, RAFT_NONE), 0);
    rt_stabilize(&c);
    ASSERT(rt_leader(&c) != l);
    rt_cluster_free(&c);
}

/* ---- joint consensus ------------------------------------------------------------------------- */

static void cluster_with_spare(struct rt_cluster *c, size_t voters, size_t total)
{
    memset(c, 0, sizeof(*c));
    int32_t v[RT_NODES_MAX];
    for (size_t i = 0; i < voters; i++)
        v[i] = (int32_t)i + 1;
    for (size_t i = 0; i < total; i++)
        rt_node_init(&c->nodes[i], (int32_t)i + 1, v, voters, NULL, 0, 0, -1, true, true);
    c->n = total;
}

TEST(raft_joint_consensus_adds_a_voter_through_c_old_new)
{
    struct rt_cluster c;
    cluster_with_spare(&c, 3, 4);
    struct rt_node *l = elect(&c);
    ASSERT_EQ(rt_propose(&c, l->id, 3, "a"), 0);
    rt_stabilize(&c);
    ASSERT_EQ(raft_propose_conf(l->r, (const int32_t[]){1, 2, 3, 4}, 4), 0);
    ASSERT(raft_conf_is_joint(raft_conf(l->r)));
    ASSERT_EQ(raft_propose_conf(l->r, V3, 3), -ERR_BUSY);
    rt_stabilize(&c);
    for (size_t i = 0; i < 4; i++) {
        const struct raft_conf *k = raft_conf(c.nodes[i].r);
        ASSERT(!raft_conf_is_joint(k));
        ASSERT_EQ(k->n_voters, 4);
        ASSERT(raft_conf_has(k, 4));
        ASSERT(rt_logs_equal(&c.nodes[i], l));
    }
    ASSERT_EQ(raft_commit(l->r), raft_last_index(l->r));
    ASSERT_EQ(raft_conf_index(l->r), raft_last_index(l->r)); /* C_new is the last entry */
    /* The new voter counts: with two voters cut off, nothing commits (2 of 4). */
    int cut = 0;
    for (int32_t id = 1; id <= 4 && cut < 2; id++) {
        if (id != l->id) {
            rt_isolate(&c, id, true);
            cut++;
        }
    }
    int64_t commit = raft_commit(l->r);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "b"), 0);
    rt_stabilize(&c);
    ASSERT_EQ(raft_commit(l->r), commit);
    rt_cluster_free(&c);
}

/* A learner (raft/conf.h) gets the whole log and follows commits, but its acknowledgements
 * never make a majority and it never stands for election; the change that adds it is one simple
 * configuration entry. Leadership cannot be handed to it. */
TEST(raft_learner_replicates_but_never_counts_or_campaigns)
{
    struct rt_cluster c;
    cluster_with_spare(&c, 3, 4);
    struct rt_node *l = elect(&c);
    ASSERT_EQ(rt_propose(&c, l->id, 3, "a"), 0);
    rt_stabilize(&c);
    ASSERT_EQ(raft_propose_members(l->r, V3, 3, (const int32_t[]){4}, 1), 0);
    ASSERT(!raft_conf_is_joint(raft_conf(l->r))); /* no majority changes: no joint step */
    ASSERT_EQ(raft_propose_members(l->r, V3, 3, NULL, 0), -ERR_BUSY);
    rt_stabilize(&c);
    struct rt_node *n4 = rt_node(&c, 4);
    for (size_t i = 0; i < 4; i++) {
        const struct raft_conf *k = raft_conf(c.nodes[i].r);
        ASSERT_EQ(k->n_voters, 3);
        ASSERT_EQ(k->n_learners, 1);
        ASSERT(raft_conf_has_learner(k, 4) && !raft_conf_has(k, 4));
    }
    ASSERT(rt_logs_equal(n4, l));
    ASSERT_EQ(raft_commit(n4->r), raft_commit(l->r));
    ASSERT_EQ(raft_match_index(l->r, 4), raft_last_index(l->r));
    ASSERT_EQ(raft_transfer_leader(l->r, 4), -ERR_INVALID);
    /* Two voters cut off: the leader and the learner hold the entry, which is not a majority. */
    int32_t cut[2];
    int k = 0;
    for (int32_t id = 1; id <= 3; id++)
        if (id != l->id)
            cut[k++] = id;
    rt_isolate(&c, cut[0], true);
    rt_isolate(&c, cut[1], true);
    int64_t commit = raft_commit(l->r);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "b"), 0);
    rt_stabilize(&c);
    ASSERT_EQ(raft_match_index(l->r, 4), raft_last_index(l->r));
    ASSERT_EQ(raft_commit(l->r), commit);
    rt_isolate(&c, cut[0], false);
    rt_isolate(&c, cut[1], false);
    rt_advance(&c, 200); /* heartbeats bring the cut voters back */
    ASSERT_CMP(raft_commit(l->r), >, commit);
    /* The leader cut off: a voter takes over; the learner, for all its election timeouts,
     * never campaigns and never leads. */
    int64_t t4 = raft_term(n4->r);
    int32_t old = l->id;
    rt_isolate(&c, old, true);
    rt_advance(&c, 3000);
    ASSERT_EQ(raft_role(n4->r), RAFT_FOLLOWER);
    struct rt_node *l2 = NULL;
    for (size_t i = 0; i < 4; i++)
        if (c.nodes[i].id != old && raft_role(c.nodes[i].r) == RAFT_LEADER)
            l2 = &c.nodes[i];
    ASSERT(l2 && l2->id != 4);
    ASSERT_EQ(raft_leader(n4->r), l2->id);
    ASSERT_EQ(raft_term(n4->r), raft_term(l2->r)); /* it followed, it did not run */
    ASSERT_CMP(raft_term(n4->r), >, t4);
    ASSERT_EQ(raft_campaign(n4->r), -ERR_INVALID);
    rt_cluster_free(&c);
}

/* A learner that caught up is promoted by naming it a voter: C_old,new then C_new, without it
 * among the learners; it counts from then on. A restart keeps what the log says it is. */
TEST(raft_learner_promoted_through_joint_consensus)
{
    struct rt_cluster c;
    cluster_with_spare(&c, 3, 5);
    struct rt_node *l = elect(&c);
    ASSERT_EQ(raft_propose_members(l->r, V3, 3, (const int32_t[]){4, 5}, 2), 0);
    rt_stabilize(&c);
    ASSERT_EQ(rt_propose(&c, l->id, 2, "a"), 0);
    rt_stabilize(&c);
    /* refused: a learner among the voters and the learners, a voter made a learner while the
     * voters change, an unchanged configuration */
    ASSERT_EQ(raft_propose_members(l->r, (const int32_t[]){1, 2, 3, 4}, 4,
                                   (const int32_t[]){4}, 1), -ERR_INVALID);
    ASSERT_EQ(raft_propose_members(l->r, (const int32_t[]){1, 2, 4}, 3,
                                   (const int32_t[]){3, 5}, 2), -ERR_INVALID);
    ASSERT_EQ(raft_propose_members(l->r, V3, 3, (const int32_t[]){5, 4}, 2), -ERR_INVALID);
    /* raft_propose_conf keeps learner 5 and promotes 4 */
    ASSERT_EQ(raft_propose_conf(l->r, (const int32_t[]){1, 2, 3, 4}, 4), 0);
    const struct raft_conf *j = raft_conf(l->r);
    ASSERT(raft_conf_is_joint(j));
    ASSERT(raft_conf_has(j, 4) && raft_conf_has_learner(j, 5) && j->n_learners == 1);
    rt_stabilize(&c);
    for (size_t i = 0; i < 5; i++) {
        const struct raft_conf *k = raft_conf(c.nodes[i].r);
        ASSERT(!raft_conf_is_joint(k));
        ASSERT_EQ(k->n_voters, 4);
        ASSERT(raft_conf_has(k, 4) && !raft_conf_has_learner(k, 4));
        ASSERT(raft_conf_has_learner(k, 5));
        ASSERT(rt_logs_equal(&c.nodes[i], l));
    }
    /* 4 counts now: with two of the other voters cut off, 2 of 4 is not a majority */
    int cut = 0;
    for (int32_t id = 1; id <= 3 && cut < 2; id++)
        if (id != l->id) {
            rt_isolate(&c, id, true);
            cut++;
        }
    int64_t commit = raft_commit(l->r);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "b"), 0);
    rt_stabilize(&c);
    ASSERT_EQ(raft_commit(l->r), commit);
    for (int32_t id = 1; id <= 3; id++)
        rt_isolate(&c, id, false);
    rt_stabilize(&c);
    /* the learner restarts: its configuration comes back from its log */
    rt_node_restart(&c, 5, true, true);
    ASSERT(raft_conf_has_learner(raft_conf(rt_node(&c, 5)->r), 5));
    rt_stabilize(&c);
    /* learners dropped alone: one simple entry */
    l = rt_leader(&c);
    ASSERT_EQ(raft_propose_members(l->r, (const int32_t[]){1, 2, 3, 4}, 4, NULL, 0), 0);
    ASSERT(!raft_conf_is_joint(raft_conf(l->r)));
    rt_stabilize(&c);
    ASSERT_EQ(raft_conf(rt_node(&c, 1)->r)->n_learners, 0);
    rt_cluster_free(&c);
}

TEST(raft_joint_consensus_removed_leader_steps_down_and_hands_over)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    int32_t keep[2], k = 0;
    for (int32_t id = 1; id <= 3; id++)
        if (id != l->id)
            keep[k++] = id;
    ASSERT_EQ(raft_propose_conf(l->r, keep, 2), 0);
    rt_stabilize(&c);
    ASSERT_EQ(raft_role(l->r), RAFT_FOLLOWER);
    ASSERT(!raft_conf_has(raft_conf(l->r), l->id));
    struct rt_node *l2 = rt_leader(&c);
    ASSERT(l2 && l2 != l); /* TimeoutNow: no election timeout needed */
    rt_advance(&c, 1000);
    ASSERT_EQ(raft_role(l->r), RAFT_FOLLOWER); /* a non-voter never campaigns */
    ASSERT_EQ(rt_propose(&c, rt_leader(&c)->id, 1, "z"), 0);
    rt_stabilize(&c);
    rt_cluster_free(&c);
}

/* Shrinking {1,2} to {1}: the leader (1) loses its own, undurable copy of C_new in a crash while
 * node 2 holds it. Node 1 (back in C_old,new) needs node 2's vote and cannot get it (its log is
 * shorter); node 2, removed by a C_new that is not committed, still stands for election, counts
 * votes in C_new, commits it and hands leadership back to node 1. */
TEST(raft_removed_member_leads_until_its_uncommitted_c_new_commits)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 2, true, true);
    rt_campaign(&c, 1);
    struct rt_node *n1 = rt_node(&c, 1), *n2 = rt_node(&c, 2);
    ASSERT_EQ(raft_role(n1->r), RAFT_LEADER);
    ASSERT_EQ(rt_propose(&c, 1, 2, "ab"), 0);
    rt_stabilize(&c);
    n1->auto_sync = false;
    ASSERT_EQ(raft_propose_conf(n1->r, (const int32_t[]){1}, 1), 0);
    rt_ready(n1);
    rt_sync(n1);
    rt_stabilize(&c); /* C_old,new commits; node 1 appends C_new, not durable */
    int64_t c_new = raft_conf_index(n1->r);
    ASSERT(!raft_conf_is_joint(raft_conf(n1->r)));
    ASSERT(raft_commit(n1->r) < c_new);
    /* the append that carried C_new to node 2 (the leader stops replicating to a removed
     * member once C_new is in its log; messages in flight still arrive) */
    uint8_t enc[RAFT_CONF_ENCODED_MAX];
    size_t len = raft_conf_encode(raft_conf(n1->r), enc);
    struct raft_entry e = {.first = c_new,
                           .last = c_new,
                           .term = raft_term(n1->r),
                           .kind = RAFT_ENTRY_CONFIG,
                           .payload = enc,
                           .len = len};
    struct raft_msg m = rt_msg(RAFT_MSG_APPEND, 1, 2, raft_term(n1->r));
    m.index = c_new - 1;
    m.log_term = raft_term_at(n1->r, c_new - 1);
    m.commit = raft_commit(n1->r);
    m.last = c_new;
    m.entries = &e;
    m.n_entries = 1;
    ASSERT_EQ(rt_step(n2, &m), 0);
    ASSERT_EQ(raft_conf_index(n2->r), c_new);
    rt_clear(n2);
    /* node 1 crashes and loses its unsynced C_new */
    ASSERT_EQ(rt_last(n1), c_new);
    mem_free(n1->log[n1->n_log - 1].payload);
    n1->n_log--;
    ASSERT_EQ(n1->confs[n1->n_confs - 1].index, c_new);
    n1->n_confs--;
    n1->auto_sync = true;
    rt_node_restart(&c, 1, true, true);
    ASSERT(raft_conf_is_joint(raft_conf(n1->r)));
    rt_advance(&c, 3000);
    ASSERT(rt_leader(&c) == n1);
    ASSERT(!raft_conf_is_joint(raft_conf(n1->r)));
    ASSERT_EQ(raft_conf(n1->r)->n_voters, 1);
    ASSERT(raft_commit(n1->r) >= c_new);
    ASSERT_EQ(raft_role(n2->r), RAFT_FOLLOWER);
    ASSERT_EQ(rt_propose(&c, 1, 1, "z"), 0);
    rt_stabilize(&c);
    rt_cluster_free(&c);
}

/* In C_old,new every commit needs a majority of C_old and a majority of C_new. */
TEST(raft_joint_consensus_commit_needs_both_majorities)
{
    struct rt_node n;
    rt_node_init(&n, 1, V3, 3, NULL, 0, 0, -1, false, false);
    ASSERT_EQ(raft_campaign(n.r), 0);
    rt_ready(&n);
    struct raft_msg g = rt_msg(RAFT_MSG_VOTE_RESP, 2, 1, 1);
    rt_step(&n, &g);
    struct raft_msg a = rt_msg(RAFT_MSG_APPEND_RESP, 2, 1, 1);
    a.index = 0;
    rt_step(&n, &a);
    ASSERT_EQ(raft_commit(n.r), 0);
    ASSERT_EQ(raft_propose_conf(n.r, (const int32_t[]){1, 4, 5}, 3), 0); /* index 1 */
    rt_ready(&n);
    for (int32_t f = 2; f <= 3; f++) {
        a = rt_msg(RAFT_MSG_APPEND_RESP, f, 1, 1);
        a.index = 1;
        rt_step(&n, &a);
    }
    ASSERT_EQ(raft_commit(n.r), 0); /* C_old agrees, C_new has only the leader */
    a = rt_msg(RAFT_MSG_APPEND_RESP, 4, 1, 1);
    a.index = 1;
    rt_step(&n, &a);
    ASSERT_EQ(raft_commit(n.r), 1);
    /* C_old,new committed: the leader appended C_new by itself. */
    ASSERT_EQ(raft_last_index(n.r), 2);
    ASSERT(!raft_conf_is_joint(raft_conf(n.r)));
    ASSERT_EQ(raft_conf(n.r)->n_voters, 3);
    ASSERT(raft_conf_has(raft_conf(n.r), 5));
    ASSERT(!raft_conf_has(raft_conf(n.r), 2));
    rt_node_free(&n);
}

/* A follower that truncates an uncommitted config entry goes back to the configuration before. */
TEST(raft_joint_consensus_truncated_config_entry_is_rolled_back)
{
    struct rt_node n;
    rt_node_init(&n, 1, V3, 3, NULL, 0, 1, -1, true, true);
    uint8_t enc[RAFT_CONF_ENCODED_MAX];
    struct raft_conf joint = {.n_voters = 3, .voters = {1, 2, 4}, .n_old = 3, .old = {1, 2, 3}};
    size_t len = raft_conf_encode(&joint, enc);
    struct raft_entry e[2] = {
        {.first = 0, .last = 0, .term = 1, .kind = RAFT_ENTRY_NOOP},
        {.first = 1, .last = 1, .term = 1, .kind = RAFT_ENTRY_CONFIG, .payload = enc, .len = len},
    };
    struct raft_msg m = rt_msg(RAFT_MSG_APPEND, 2, 1, 1);
    m.entries = e;
    m.n_entries = 2;
    ASSERT_EQ(rt_step(&n, &m), 0);
    ASSERT(raft_conf_is_joint(raft_conf(n.r)));
    struct raft_entry e2 = {.first = 1, .last = 3, .term = 2, .kind = RAFT_ENTRY_DATA};
    m = rt_msg(RAFT_MSG_APPEND, 3, 1, 2);
    m.index = 0;
    m.log_term = 1;
    m.entries = &e2;
    m.n_entries = 1;
    ASSERT_EQ(rt_step(&n, &m), 0);
    ASSERT(!raft_conf_is_joint(raft_conf(n.r)));
    ASSERT(raft_conf_has(raft_conf(n.r), 3));
    ASSERT_EQ(raft_conf_index(n.r), -1);
    ASSERT_EQ(raft_last_index(n.r), 3);
    rt_node_free(&n);
}

/* ---- the durable-majority commit rule -------------------------------------------------------- */

/* A leader's own copy counts only once it is durable: with its entries unsynced, one follower's
 * acknowledgement is not a majority of three; two are. */
TEST(raft_commit_counts_leader_copy_only_once_durable)
{
    for (int variant = 0; variant < 2; variant++) {
        struct rt_node n;
        rt_node_init(&n, 1, V3, 3, NULL, 0, 0, -1, false, false);
        n.auto_sync = false;
        ASSERT_EQ(raft_campaign(n.r), 0);
        rt_ready(&n);
        rt_sync(&n); /* the hard state; nothing in the log yet */
        struct raft_msg g = rt_msg(RAFT_MSG_VOTE_RESP, 2, 1, 1);
        rt_step(&n, &g);
        ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
        ASSERT_EQ(raft_durable_index(n.r), -1);
        struct raft_msg a = rt_msg(RAFT_MSG_APPEND_RESP, 2, 1, 1);
        a.index = 0;
        rt_step(&n, &a);
        ASSERT_EQ(raft_commit(n.r), -1);
        if (variant == 0) {
            rt_sync(&n);
            rt_ready(&n);
        } else {
            a.from = 3;
            rt_step(&n, &a);
        }
        ASSERT_EQ(raft_commit(n.r), 0);
        rt_node_free(&n);
    }
}

/* A follower acknowledges entries only once they are durable. */
TEST(raft_follower_acknowledges_only_durable_entries)
{
    struct rt_node n;
    rt_node_init(&n, 1, V3, 3, NULL, 0, 1, -1, true, true);
    n.auto_sync = false;
    struct raft_entry e = {.first = 0, .last = 4, .term = 1, .kind = RAFT_ENTRY_DATA};
    struct raft_msg m = rt_msg(RAFT_MSG_APPEND, 2, 1, 1);
    m.entries = &e;
    m.n_entries = 1;
    ASSERT_EQ(rt_step(&n, &m), 0);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_APPEND_RESP), 0u);
    ASSERT_EQ(rt_last(&n), 4);
    rt_sync(&n);
    rt_ready(&n);
    const struct raft_msg *ack = rt_find(&n, RAFT_MSG_APPEND_RESP, 2);
    ASSERT(ack && !ack->reject);
    ASSERT_EQ(ack->index, 4);
    rt_node_free(&n);
}

/* A durability notice for an entry that was truncated meanwhile is recognised and ignored. */
TEST(raft_stale_persisted_notice_is_ignored)
{
    struct rt_node n;
    rt_node_init(&n, 1, V3, 3, NULL, 0, 1, -1, true, true);
    n.auto_sync = false;
    struct raft_entry e = {.first = 0, .last = 2, .term = 1, .kind = RAFT_ENTRY_DATA};
    struct raft_msg m = rt_msg(RAFT_MSG_APPEND, 2, 1, 1);
    m.entries = &e;
    m.n_entries = 1;
    rt_step(&n, &m);
    struct raft_entry e2 = {.first = 0, .last = 5, .term = 2, .kind = RAFT_ENTRY_DATA};
    m = rt_msg(RAFT_MSG_APPEND, 3, 1, 2);
    m.entries = &e2;
    m.n_entries = 1;
    rt_step(&n, &m);
    raft_persisted(n.r, 2, 1); /* the old write's sync finishing late */
    ASSERT_EQ(raft_durable_index(n.r), -1);
    raft_persisted(n.r, 5, 2);
    ASSERT_EQ(raft_durable_index(n.r), 5);
    rt_node_free(&n);
}

/* Found by the simulator (crash seed 2520): a candidate that won with others' votes led before
 * its own term was durable, crashed, came back below that term, won it again (repeat votes are
 * granted) and led the same term twice with a different log. A node leads only once its term
 * and vote are durable, even when it does not need its own vote. */
TEST(raft_leads_only_once_its_term_and_vote_are_durable)
{
    static const int32_t V5[] = {1, 2, 3, 4, 5};
    struct rt_node n;
    rt_node_init(&n, 1, V5, 5, NULL, 0, 0, -1, false, false);
    n.auto_sync = false;
    ASSERT_EQ(raft_campaign(n.r), 0);
    rt_ready(&n);
    for (int32_t f = 2; f <= 4; f++) {
        struct raft_msg g = rt_msg(RAFT_MSG_VOTE_RESP, f, 1, 1);
        rt_step(&n, &g);
    }
    ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE); /* a majority without it, but not yet durable */
    ASSERT_EQ(rt_count(&n, RAFT_MSG_APPEND), 0u);
    raft_persisted_hard_state(n.r, 1, 1);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    ASSERT_EQ(rt_count(&n, RAFT_MSG_APPEND), 4u);
    rt_node_free(&n);
}

TEST(raft_single_node_commits_after_its_own_sync)
{
    static const int32_t V1[] = {1};
    struct rt_node n;
    rt_node_init(&n, 1, V1, 1, NULL, 0, 0, -1, true, true);
    n.auto_sync = false;
    ASSERT_EQ(raft_campaign(n.r), 0);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE); /* its own vote counts once durable */
    rt_sync(&n);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    ASSERT_EQ(raft_last_index(n.r), -1); /* a sole voter appends no no-op */
    ASSERT_EQ(raft_commit(n.r), -1);
    ASSERT_EQ(raft_propose(n.r, 10, (const uint8_t *)"x", 1, NULL, NULL, NULL), 0);
    rt_ready(&n);
    ASSERT_EQ(raft_commit(n.r), -1);
    rt_sync(&n);
    rt_ready(&n);
    ASSERT_EQ(raft_commit(n.r), 9);
    ASSERT_EQ(n.applied, 9);
    rt_node_free(&n);
}

/* A sole voter does not wait out an election timeout: its first tick makes it leader. */
TEST(raft_sole_voter_campaigns_at_once)
{
    static const int32_t V1[] = {1};
    struct rt_node n;
    rt_node_init(&n, 1, V1, 1, NULL, 0, 0, -1, true, true);
    ASSERT(raft_next_deadline(n.r) <= 0);
    raft_tick(n.r, 0);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    ASSERT_EQ(raft_term(n.r), 1);
    rt_node_free(&n);
    /* a voter of three still waits: its deadline is an election timeout away */
    static const int32_t V3x[] = {1, 2, 3};
    rt_node_init(&n, 1, V3x, 3, NULL, 0, 0, -1, true, true);
    ASSERT(raft_next_deadline(n.r) >= 150);
    raft_tick(n.r, 0);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_FOLLOWER);
    rt_node_free(&n);
}

/* A sole voter whose vote takes longer than election timeouts to become durable (a restart's
 * thousands of stores queued) stays a candidate of its term: a new term would only wait for
 * another store. Once the store returns it leads that term. */
TEST(raft_sole_voter_candidate_waits_for_its_store)
{
    static const int32_t V1[] = {1};
    struct rt_node n;
    rt_node_init(&n, 1, V1, 1, NULL, 0, 0, -1, true, true);
    n.auto_sync = false;
    raft_tick(n.r, 0);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE);
    ASSERT_EQ(raft_term(n.r), 1);
    for (int64_t t = 100; t <= 10000; t += 100) {
        raft_tick(n.r, t);
        rt_ready(&n);
        ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE);
        ASSERT_EQ(raft_term(n.r), 1);
        ASSERT(raft_next_deadline(n.r) > t);
    }
    rt_sync(&n);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    ASSERT_EQ(raft_term(n.r), 1);
    rt_node_free(&n);
}

/* A restarted sole voter commits the entries of earlier terms it holds at once, without an
 * entry of its own term. */
TEST(raft_sole_voter_commits_earlier_terms_without_a_noop)
{
    static const int32_t V1[] = {1};
    static const int64_t terms[] = {1, 1, 2, 3, 3};
    struct rt_node n;
    rt_node_init(&n, 1, V1, 1, terms, 5, 3, -1, true, true);
    ASSERT_EQ(raft_commit(n.r), -1);
    raft_tick(n.r, 0);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    ASSERT_EQ(raft_term(n.r), 4);
    ASSERT_EQ(raft_last_index(n.r), 4);
    ASSERT_EQ(raft_commit(n.r), 4);
    rt_node_free(&n);
}

/* raft_relaxed lets a sole voter commit entries before they are durable, up to the first that
 * asks for durability; a voter of a larger group ignores it. */
TEST(raft_sole_voter_relaxed_commit)
{
    static const int32_t V1[] = {1};
    struct rt_node n;
    rt_node_init(&n, 1, V1, 1, NULL, 0, 0, -1, true, true);
    raft_tick(n.r, 0);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    n.auto_sync = false;
    ASSERT_EQ(raft_propose(n.r, 5, (const uint8_t *)"a", 1, NULL, NULL, NULL), 0); /* 0..4 */
    ASSERT_EQ(raft_propose(n.r, 5, (const uint8_t *)"b", 1, NULL, NULL, NULL), 0); /* 5..9 */
    rt_ready(&n);
    ASSERT_EQ(raft_commit(n.r), -1);
    raft_relaxed(n.r, 4); /* 0..4 needs no sync; 5..9 does */
    rt_ready(&n);
    ASSERT_EQ(raft_commit(n.r), 4);
    raft_relaxed(n.r, 2); /* never lowers */
    raft_relaxed(n.r, 100); /* clamped to the log */
    rt_ready(&n);
    ASSERT_EQ(raft_commit(n.r), 9);
    /* voters cannot change until the commit is durable */
    static const int32_t V12[] = {1, 2};
    ASSERT_EQ(raft_propose_conf(n.r, V12, 2), -ERR_BUSY);
    rt_sync(&n);
    rt_ready(&n);
    ASSERT_EQ(raft_propose_conf(n.r, V12, 2), 0);
    rt_ready(&n);
    /* now joint: relaxed no longer counts, and node 2 hears of a durable commit only */
    ASSERT_EQ(raft_propose(n.r, 1, (const uint8_t *)"c", 1, NULL, NULL, NULL), 0);
    raft_relaxed(n.r, raft_last_index(n.r));
    rt_ready(&n);
    ASSERT_EQ(raft_commit(n.r), 9);
    const struct raft_msg *m = rt_find(&n, RAFT_MSG_APPEND, 2);
    ASSERT(m != NULL);
    ASSERT(m->commit <= raft_durable_index(n.r));
    rt_node_free(&n);
}

/* raft_write_failed: a leader whose last entries could not be written steps down with its log
 * cut back; entries at or below the commit index cannot be taken back. */
TEST(raft_write_failed_cuts_back_and_steps_down)
{
    static const int32_t V1[] = {1};
    struct rt_node n;
    rt_node_init(&n, 1, V1, 1, NULL, 0, 0, -1, true, true);
    raft_tick(n.r, 0);
    rt_ready(&n);
    ASSERT_EQ(raft_propose(n.r, 2, (const uint8_t *)"a", 1, NULL, NULL, NULL), 0); /* 0..1 */
    rt_ready(&n);
    ASSERT_EQ(raft_commit(n.r), 1);
    n.auto_sync = false;
    ASSERT_EQ(raft_propose(n.r, 3, (const uint8_t *)"b", 1, NULL, NULL, NULL), 0); /* 2..4 */
    rt_ready(&n);
    ASSERT_EQ(raft_write_failed(n.r, 1), -ERR_INVALID); /* committed */
    ASSERT_EQ(raft_write_failed(n.r, 2), 0);
    ASSERT_EQ(raft_role(n.r), RAFT_FOLLOWER);
    ASSERT_EQ(raft_last_index(n.r), 1);
    ASSERT_EQ(raft_commit(n.r), 1);
    raft_check(n.r);
    rt_ready(&n);
    n.auto_sync = true;
    raft_tick(n.r, 10);
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    rt_node_free(&n);
}

/* A leader of three never takes raft_relaxed into account. */
TEST(raft_relaxed_ignored_with_several_voters)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    rt_campaign(&c, 1);
    struct rt_node *l = rt_node(&c, 1);
    ASSERT_EQ(raft_role(l->r), RAFT_LEADER);
    ASSERT_EQ(raft_last_index(l->r), 0); /* its no-op */
    rt_isolate(&c, 1, true);
    int64_t before = raft_commit(l->r);
    ASSERT_EQ(rt_propose(&c, 1, 3, "x"), 0);
    raft_relaxed(l->r, raft_last_index(l->r));
    rt_stabilize(&c);
    ASSERT_EQ(raft_commit(l->r), before);
    rt_cluster_free(&c);
}

TEST(raft_propose_refused_off_the_leader)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    struct rt_node *f = a_follower(&c, l);
    ASSERT_EQ(rt_propose(&c, f->id, 1, "x"), -ERR_NOT_LEADER);
    ASSERT_EQ(raft_propose(l->r, 0, NULL, 0, NULL, NULL, NULL), -ERR_INVALID);
    ASSERT_EQ(raft_propose_conf(f->r, V3, 3), -ERR_NOT_LEADER);
    rt_cluster_free(&c);
}

/* ---- pipelining (probe / replicate) ------------------------------------------------------- */

/* The leader's APPENDs with entries in its outbox to `to`, in order. */
static size_t appends_to(const struct rt_msg *msgs, size_t k, int32_t to,
                         const struct raft_msg **out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < k; i++) {
        const struct raft_msg *m = &msgs[i].m;
        if (m->type == RAFT_MSG_APPEND && m->to == to && m->n_entries > 0) {
            ASSERT(n < cap);
            out[n++] = m;
        }
    }
    return n;
}

/* A replicating leader sends each new entry at once without waiting for answers, contiguous
 * (each append's prev is the previous one's last), up to RAFT_INFLIGHT_MAX in flight; an
 * acknowledgement frees the window and the next append carries everything held back. */
TEST(raft_pipeline_window_sends_without_answers_stops_at_the_window_resumes_on_acks)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    int64_t last0 = raft_last_index(l->r);
    for (int i = 0; i < RAFT_INFLIGHT_MAX + 3; i++)
        ASSERT_EQ(rt_propose(&c, l->id, 1, "x"), 0);
    int32_t f = l->id == 2 ? 3 : 2;
    size_t k0, k;
    struct rt_msg *msgs = rt_take(l, &k0);
    const struct raft_msg *a[2 * RAFT_INFLIGHT_MAX];
    size_t n = appends_to(msgs, k0, f, a, ARRAY_LEN(a));
    ASSERT_EQ(n, (size_t)RAFT_INFLIGHT_MAX);
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ(a[i]->index, last0 + (int64_t)i);
        ASSERT_EQ(a[i]->last, last0 + (int64_t)i + 1);
        ASSERT_EQ(a[i]->n_entries, 1u);
    }
    /* No answers: more proposals send nothing to f. */
    ASSERT_EQ(rt_propose(&c, l->id, 1, "y"), 0);
    struct rt_msg *more = rt_take(l, &k);
    const struct raft_msg *b[4];
    ASSERT_EQ(appends_to(more, k, f, b, ARRAY_LEN(b)), 0u);
    rt_msgs_free(more, k);
    /* The follower answers the first two appends (one ack covers both): two slots free, and
     * one append carries the four entries held back. */
    struct rt_node *fn = rt_node(&c, f);
    rt_step(fn, a[0]);
    rt_step(fn, a[1]);
    size_t fk;
    struct rt_msg *acks = rt_take(fn, &fk);
    ASSERT_CMP(fk, >=, 1u);
    rt_step(l, &acks[fk - 1].m);
    ASSERT_EQ(raft_match_index(l->r, f), last0 + 2);
    rt_msgs_free(acks, fk);
    more = rt_take(l, &k);
    ASSERT_EQ(appends_to(more, k, f, b, ARRAY_LEN(b)), 1u);
    ASSERT_EQ(b[0]->index, last0 + RAFT_INFLIGHT_MAX);
    ASSERT_EQ(b[0]->last, raft_last_index(l->r));
    ASSERT_EQ(b[0]->n_entries, 4u);
    rt_msgs_free(more, k);
    rt_msgs_free(msgs, k0);
    /* Everything still converges once messages flow. */
    rt_advance(&c, 300);
    for (size_t i = 0; i < c.n; i++)
        ASSERT(rt_logs_equal(&c.nodes[i], l));
    ASSERT_EQ(raft_commit(l->r), raft_last_index(l->r));
    rt_cluster_free(&c);
}

/* A reject sends a replicating leader back to probing: one append at a time, from the hint,
 * until one is acknowledged; then it pipelines again. */
TEST(raft_pipeline_reject_falls_back_to_probing_until_an_ack)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    int32_t f = l->id == 2 ? 3 : 2;
    int64_t match = raft_match_index(l->r, f);
    ASSERT_EQ(match, raft_last_index(l->r));
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(rt_propose(&c, l->id, 1, "x"), 0);
    rt_clear(l);
    /* f rejects the second in-flight append (its prev, match + 1, is missing there). */
    struct raft_msg rej = rt_msg(RAFT_MSG_APPEND_RESP, f, l->id, raft_term(l->r));
    rej.reject = true;
    rej.index = match + 1;
    rej.last = match;
    rej.log_term = raft_term(l->r);
    rt_step(l, &rej);
    size_t kp, k;
    struct rt_msg *probe = rt_take(l, &kp);
    const struct raft_msg *a[4], *pa[4];
    ASSERT_EQ(appends_to(probe, kp, f, pa, ARRAY_LEN(pa)), 1u);
    ASSERT_EQ(pa[0]->index, match); /* the probe restarts right after the hint */
    ASSERT_EQ(pa[0]->last, match + 3);
    /* Probing: new entries wait for the probe's answer. */
    ASSERT_EQ(rt_propose(&c, l->id, 1, "y"), 0);
    struct rt_msg *msgs = rt_take(l, &k);
    ASSERT_EQ(appends_to(msgs, k, f, a, ARRAY_LEN(a)), 0u);
    rt_msgs_free(msgs, k);
    /* A reject of an older append changes nothing. */
    rej.index = match - 1;
    rej.last = match - 1;
    rt_step(l, &rej);
    ASSERT_EQ(rt_count(l, RAFT_MSG_APPEND), 0u);
    /* The probe is acknowledged: replicating again, the rest goes out and later entries go
     * out at once. */
    struct rt_node *fn = rt_node(&c, f);
    rt_step(fn, pa[0]);
    rt_msgs_free(probe, kp);
    const struct raft_msg *ack = rt_find(fn, RAFT_MSG_APPEND_RESP, l->id);
    ASSERT(ack && !ack->reject && ack->index == match + 3);
    rt_step(l, ack);
    rt_clear(fn);
    msgs = rt_take(l, &k);
    ASSERT_EQ(appends_to(msgs, k, f, a, ARRAY_LEN(a)), 1u);
    ASSERT_EQ(a[0]->index, match + 3);
    rt_msgs_free(msgs, k);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "z"), 0);
    msgs = rt_take(l, &k);
    ASSERT_EQ(appends_to(msgs, k, f, a, ARRAY_LEN(a)), 1u);
    ASSERT_EQ(a[0]->index, match + 4);
    rt_msgs_free(msgs, k);
    rt_advance(&c, 300);
    for (size_t i = 0; i < c.n; i++)
        ASSERT(rt_logs_equal(&c.nodes[i], l));
    rt_cluster_free(&c);
}

/* The adapter may send only a prefix of an append (lowering m->last): the next append of a
 * replicating leader continues right after that prefix, so a backlog goes out as a pipeline of
 * contiguous appends. */
TEST(raft_pipeline_continues_after_a_prefix_the_adapter_sent)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    int32_t f = l->id == 2 ? 3 : 2;
    int64_t last0 = raft_last_index(l->r);
    l->append_max_entries = 1;
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(raft_propose(l->r, 2, (const uint8_t *)"ab", 2, NULL, NULL, NULL), 0);
    rt_ready(l);
    size_t k;
    struct rt_msg *msgs = rt_take(l, &k);
    const struct raft_msg *a[8];
    ASSERT_EQ(appends_to(msgs, k, f, a, ARRAY_LEN(a)), 3u);
    for (size_t i = 0; i < 3; i++) {
        ASSERT_EQ(a[i]->index, last0 + 2 * (int64_t)i);
        ASSERT_EQ(a[i]->last, last0 + 2 * (int64_t)i + 2);
    }
    rt_msgs_free(msgs, k);
    rt_cluster_free(&c);
}

/* A window without progress for a heartbeat interval is checked with an empty append at its
 * end, not re-sent: a follower that only fsyncs slowly gets no entries twice, and one that
 * lost an append rejects the check and is probed again from its hint. */
TEST(raft_pipeline_stalled_window_checked_not_resent)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    int32_t f = l->id == 2 ? 3 : 2;
    struct rt_node *fn = rt_node(&c, f);
    int64_t match = raft_match_index(l->r, f);
    /* Slow durability: f gets the appends but reports nothing durable. */
    fn->auto_sync = false;
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(rt_propose(&c, l->id, 1, "x"), 0);
    rt_stabilize(&c);
    ASSERT_EQ(rt_last(fn), raft_last_index(l->r));
    for (int t = 0; t < 40; t++) { /* 200 ms: the leader's messages to f go by hand */
        c.now_ms += 5;
        for (size_t i = 0; i < c.n; i++)
            raft_tick(c.nodes[i].r, c.now_ms);
        rt_ready(l);
        size_t k;
        struct rt_msg *msgs = rt_take(l, &k);
        for (size_t i = 0; i < k; i++) {
            const struct raft_msg *m = &msgs[i].m;
            if (m->to != f)
                continue;
            ASSERT(m->type != RAFT_MSG_APPEND || m->n_entries == 0);
            rt_step(fn, m);
        }
        rt_msgs_free(msgs, k);
        rt_stabilize(&c);
    }
    ASSERT_EQ(raft_match_index(l->r, f), match);
    /* Its fsync completes: the answer to a check acknowledges the whole window. */
    fn->auto_sync = true;
    rt_sync(fn);
    rt_advance(&c, 60);
    ASSERT_EQ(raft_match_index(l->r, f), raft_last_index(l->r));
    /* Appends lost: the check is rejected and f is repaired within two heartbeats. */
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(rt_propose(&c, l->id, 1, "y"), 0);
    rt_clear(l);
    int rejects = c.rejects;
    rt_advance(&c, 100);
    ASSERT_CMP(c.rejects, >, rejects);
    ASSERT_EQ(raft_match_index(l->r, f), raft_last_index(l->r));
    ASSERT(rt_logs_equal(fn, l));
    rt_cluster_free(&c);
}

/* With appends pipelined, each durability step of a follower is acknowledged at once, even
 * though more entries (not yet durable) arrived meanwhile. */
TEST(raft_follower_acknowledges_each_durable_step_of_a_pipeline)
{
    struct rt_node n;
    rt_node_init(&n, 1, V3, 3, NULL, 0, 1, -1, true, true);
    n.auto_sync = false;
    struct raft_entry e1 = {.first = 0, .last = 2, .term = 1, .kind = RAFT_ENTRY_DATA};
    struct raft_entry e2 = {.first = 3, .last = 5, .term = 1, .kind = RAFT_ENTRY_DATA};
    struct raft_msg m = rt_msg(RAFT_MSG_APPEND, 2, 1, 1);
    m.entries = &e1;
    m.n_entries = 1;
    ASSERT_EQ(rt_step(&n, &m), 0);
    raft_persisted_hard_state(n.r, n.hs_term, n.hs_vote);
    m.index = 2;
    m.log_term = 1;
    m.entries = &e2;
    ASSERT_EQ(rt_step(&n, &m), 0);
    rt_clear(&n);
    raft_persisted(n.r, 2, 1);
    rt_ready(&n);
    const struct raft_msg *ack = rt_find(&n, RAFT_MSG_APPEND_RESP, 2);
    ASSERT(ack && !ack->reject);
    ASSERT_EQ(ack->index, 2);
    rt_clear(&n);
    raft_persisted(n.r, 5, 1);
    rt_ready(&n);
    ack = rt_find(&n, RAFT_MSG_APPEND_RESP, 2);
    ASSERT(ack && !ack->reject);
    ASSERT_EQ(ack->index, 5);
    rt_node_free(&n);
}

/* ---- multi-index entries and truncation --------------------------------------------------------
 */

TEST(raft_multi_index_entries_replicate_as_ranges)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    int64_t first, last;
    ASSERT_EQ(raft_propose(l->r, 5, (const uint8_t *)"five", 4, &first, &last, NULL), 0);
    ASSERT_EQ(first, 1);
    ASSERT_EQ(last, 5);
    ASSERT_EQ(raft_propose(l->r, 3, (const uint8_t *)"three", 5, &first, &last, NULL), 0);
    ASSERT_EQ(first, 6);
    ASSERT_EQ(last, 8);
    rt_stabilize(&c);
    for (size_t i = 0; i < 3; i++) {
        struct rt_node *n = &c.nodes[i];
        ASSERT(rt_logs_equal(n, l));
        ASSERT_EQ(n->n_log, 3u);
        ASSERT_EQ(raft_commit(n->r), 8);
        ASSERT_EQ(raft_term_at(n->r, 3), raft_term(l->r));
        const struct rt_entry *e = rt_entry_at(n, 7);
        ASSERT(e && e->first == 6 && e->last == 8 && e->len == 5);
    }
    rt_cluster_free(&c);
}

/* A follower with a long divergent tail over several terms of multi-index entries is repaired
 * with a handful of probes thanks to the term hint, and cut exactly at an entry boundary. */
TEST(raft_conflict_truncation_across_term_ranges_is_fast)
{
    struct rt_cluster c;
    memset(&c, 0, sizeof(c));
    c.n = 3;
    for (int i = 0; i < 3; i++)
        rt_node_init(&c.nodes[i], i + 1, V3, 3, NULL, 0, 0, -1, false, false);
    /* Common prefix [0..4] of term 1, then the leader has terms 2 and 4, the follower 3
     * (their cores are restarted from these logs below). */
    for (int i = 0; i < 2; i++) {
        rt_node_add(&c.nodes[i], 1, 1);
        rt_node_add(&c.nodes[i], 4, 1);
    }
    struct rt_node *l = &c.nodes[0], *f = &c.nodes[1];
    for (int k = 0; k < 20; k++)
        rt_node_add(l, 1 + k % 3, k < 10 ? 2 : 4);
    for (int k = 0; k < 30; k++)
        rt_node_add(f, 2 + k % 4, 3);
    l->hs_term = 4;
    f->hs_term = 3;
    c.nodes[2].hs_term = 3;
    rt_node_restart(&c, 1, false, false);
    rt_node_restart(&c, 2, false, false);
    rt_node_restart(&c, 3, false, false);
    rt_campaign(&c, 1);
    ASSERT_EQ(raft_role(l->r), RAFT_LEADER);
    rt_stabilize(&c);
    ASSERT(rt_logs_equal(l, f));
    ASSERT_CMP(c.rejects, <=, 3);
    rt_cluster_free(&c);
}

/* ---- restarts and installs ---------------------------------------------------------------------
 */

TEST(raft_restart_restores_term_vote_log_and_config)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(rt_propose(&c, l->id, 1 + i, "r"), 0);
    rt_stabilize(&c);
    struct rt_node *f = a_follower(&c, l);
    int64_t term = raft_term(f->r), last = raft_last_index(f->r);
    int32_t vote = raft_vote(f->r);
    rt_node_restart(&c, f->id, true, true);
    ASSERT_EQ(raft_term(f->r), term);
    ASSERT_EQ(raft_vote(f->r), vote);
    ASSERT_EQ(raft_last_index(f->r), last);
    ASSERT_EQ(raft_durable_index(f->r), last);
    ASSERT_EQ(raft_role(f->r), RAFT_FOLLOWER);
    ASSERT_EQ(raft_conf(f->r)->n_voters, 3);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "s"), 0);
    rt_advance(&c, 100);
    ASSERT(rt_logs_equal(f, l));
    ASSERT_EQ(raft_commit(f->r), raft_commit(l->r));
    rt_cluster_free(&c);
}

/* A follower that needs entries the leader has compacted away restarts its log after the
 * leader's install point, then catches up from there. */
TEST(raft_install_when_follower_is_behind_the_leaders_log_start)
{
    struct rt_cluster c;
    rt_cluster_init(&c, 3, true, true);
    struct rt_node *l = elect(&c);
    struct rt_node *f = a_follower(&c, l);
    rt_isolate(&c, f->id, true);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(rt_propose(&c, l->id, 2, "i"), 0);
    rt_stabilize(&c);
    int64_t commit = raft_commit(l->r);
    ASSERT_EQ(commit, 20);
    for (size_t i = 0; i < 3; i++)
        if (&c.nodes[i] != f)
            ASSERT_EQ(rt_compact(&c.nodes[i], 15), 0);
    ASSERT_EQ(raft_log_start(l->r), 15);
    ASSERT_EQ(rt_compact(l, 30), -ERR_INVALID); /* beyond commit */
    rt_isolate(&c, f->id, false);
    ASSERT_EQ(rt_propose(&c, l->id, 1, "j"), 0);
    rt_advance(&c, 100);
    ASSERT_EQ(raft_log_start(f->r), 15);
    ASSERT_EQ(f->start, 15);
    ASSERT(rt_logs_equal(f, l));
    ASSERT_EQ(raft_commit(f->r), raft_commit(l->r));
    /* ... and survives a restart in that state. */
    rt_node_restart(&c, f->id, true, true);
    ASSERT_EQ(raft_log_start(f->r), 15);
    ASSERT_EQ(raft_term_at(f->r, 14), raft_term(l->r));
    rt_cluster_free(&c);
}

TEST(raft_new_rejects_inconsistent_restored_state)
{
    struct raft_options o;
    rt_options(&o, 1, true, true);
    struct raft_conf_at conf = {.index = -1, .conf = {.n_voters = 1, .voters = {1}}};
    struct raft_term_start t[2] = {{.term = 2, .first = 0}, {.term = 1, .first = 3}};
    struct raft_restore st = {.term = 3,
                              .vote = RAFT_NONE,
                              .log_start = 0,
                              .log_last = 5,
                              .terms = t,
                              .n_terms = 2,
                              .confs = &conf,
                              .n_confs = 1,
                              .commit = -1};
    struct raft *r;
    ASSERT_EQ(raft_new(&o, &st, 0, &r), -ERR_CORRUPT); /* terms go backwards */
    t[1].term = 3;
    st.terms = t;
    ASSERT_EQ(raft_new(&o, &st, 0, &r), 0);
    raft_free(r);
    st.log_last = 2; /* a range beyond the last index */
    ASSERT_EQ(raft_new(&o, &st, 0, &r), -ERR_CORRUPT);
    st.log_last = 5;
    conf.index = 0; /* the first config must precede the log */
    ASSERT_EQ(raft_new(&o, &st, 0, &r), -ERR_CORRUPT);
    conf.index = -1;
    conf.conf.voters[0] = -4;
    ASSERT_EQ(raft_new(&o, &st, 0, &r), -ERR_CORRUPT);
    conf.conf.voters[0] = 1;
    st.term = 1; /* below the last log term: raised, and the hard state rewritten */
    ASSERT_EQ(raft_new(&o, &st, 0, &r), 0);
    ASSERT_EQ(raft_term(r), 3);
    ASSERT(raft_has_ready(r));
    struct raft_ready rd;
    raft_ready(r, &rd);
    ASSERT(rd.hard_state_changed);
    ASSERT_EQ(rd.hs_term, 3);
    raft_advance(r, &rd);
    raft_free(r);
}

TEST(raft_next_deadline_names_the_next_timer)
{
    struct rt_node n;
    rt_node_init(&n, 1, V3, 3, NULL, 0, 0, -1, false, true);
    int64_t d = raft_next_deadline(n.r);
    ASSERT_CMP(d, >=, 150);
    ASSERT_CMP(d, <, 300);
    raft_tick(n.r, d - 1);
    ASSERT_EQ(raft_role(n.r), RAFT_FOLLOWER);
    raft_tick(n.r, d);
    ASSERT_EQ(raft_role(n.r), RAFT_CANDIDATE);
    rt_ready(&n);
    struct raft_msg g = rt_msg(RAFT_MSG_VOTE_RESP, 2, 1, 1);
    rt_step(&n, &g);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    ASSERT_EQ(raft_next_deadline(n.r), d + 50); /* the first heartbeat */
    rt_node_free(&n);
}

/* A leader alone in its group has no timer (thousands of such groups on one node cost nothing
 * while idle). */
TEST(raft_next_deadline_sole_leader_has_none)
{
    struct rt_node n;
    int32_t one[] = {1};
    rt_node_init(&n, 1, one, 1, NULL, 0, 0, -1, false, true);
    raft_tick(n.r, raft_next_deadline(n.r));
    rt_ready(&n);
    ASSERT_EQ(raft_role(n.r), RAFT_LEADER);
    ASSERT_EQ(raft_next_deadline(n.r), INT64_MAX);
    rt_node_free(&n);
}

/* ---- random input (FuzzStep) ------------------------------------------------------------------
 */

static uint64_t fz_state;

static uint64_t fz(void)
{
    uint64_t z = (fz_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int64_t fz_near(int64_t v, int64_t spread)
{
    switch (fz() % 8) {
    case 0:
        return (int64_t)fz(); /* anything at all */
    case 1:
        return -1 - (int64_t)(fz() % 3);
    default:
        return v - spread + (int64_t)(fz() % (uint64_t)(2 * spread + 1));
    }
}

static void fz_message(struct raft *r, struct raft_msg *m, struct raft_entry *ents,
                       uint8_t payload[][RAFT_CONF_ENCODED_MAX])
{
    *m = rt_msg((uint8_t)(fz() % (RAFT_MSG_TYPE_END_ + 1)), (int32_t)fz_near(2, 2),
                fz() % 16 ? raft_id(r) : (int32_t)fz_near(1, 3), fz_near(raft_term(r), 2));
    m->reject = fz() % 2;
    m->transfer = fz() % 4 == 0;
    int64_t last = raft_last_index(r);
    m->index = fz_near(last, 4);
    m->log_term = fz_near(raft_term_at(r, last), 2);
    m->commit = fz_near(raft_commit(r), 4);
    m->last = fz_near(last, 4);
    m->conf.n_voters = (uint8_t)(fz() % 4);
    for (int i = 0; i < m->conf.n_voters; i++)
        m->conf.voters[i] = (int32_t)fz_near(2, 2);
    if (m->type == RAFT_MSG_APPEND && fz() % 3) {
        size_t n = fz() % 5;
        int64_t next = m->index + 1, term = MAX(m->log_term, 1);
        for (size_t i = 0; i < n; i++) {
            struct raft_entry *e = &ents[i];
            e->first = fz() % 10 ? next : fz_near(next, 2);
            e->last = e->first + (int64_t)(fz() % 4) - (fz() % 10 == 0);
            term += fz() % 3 == 0;
            e->term = fz() % 10 ? MIN(term, m->term) : fz_near(term, 2);
            e->kind = (uint8_t)(fz() % 10 ? 1 + fz() % 3 : fz() % 256);
            e->payload = payload[i];
            e->len = fz() % 8;
            if (e->kind == RAFT_ENTRY_CONFIG && fz() % 2) {
                struct raft_conf k = {.n_voters = (uint8_t)(1 + fz() % 3)};
                for (int j = 0; j < k.n_voters; j++)
                    k.voters[j] = j + 1;
                e->len = raft_conf_encode(&k, payload[i]);
                e->last = e->first;
            } else {
                for (size_t j = 0; j < e->len; j++)
                    payload[i][j] = (uint8_t)fz();
            }
            next = e->last + 1;
        }
        m->entries = ents;
        m->n_entries = n;
    }
}

/* Random messages, ticks, proposals and durability notices at a leader (and at a follower):
 * nothing crashes, every invariant holds after every input. */
TEST_T(raft_fuzz_step_random_messages_never_crash, 60)
{
    for (uint64_t seed = 1; seed <= 24; seed++) {
        fz_state = seed;
        struct rt_cluster c;
        rt_cluster_init(&c, 3, seed % 2, seed % 3 != 0);
        struct rt_node *l = elect(&c);
        for (int i = 0; i < 5; i++)
            rt_propose(&c, l->id, 1 + i % 3, "f");
        rt_stabilize(&c);
        struct rt_node *targets[2] = {l, a_follower(&c, l)};
        int64_t now = c.now_ms;
        for (int step = 0; step < 3000; step++) {
            struct rt_node *n = targets[step % 2];
            uint8_t payload[5][RAFT_CONF_ENCODED_MAX];
            struct raft_entry ents[5];
            struct raft_msg m;
            switch (fz() % 10) {
            case 0:
                now += (int64_t)(fz() % 40);
                raft_tick(n->r, now);
                break;
            case 1:
                raft_propose(n->r, 1 + (int64_t)(fz() % 3), (const uint8_t *)"p", 1, NULL, NULL,
                             NULL);
                break;
            case 2:
                raft_persisted(n->r, fz_near(raft_last_index(n->r), 3),
                               fz_near(raft_term(n->r), 1));
                break;
            case 3:
                raft_compact(n->r, fz_near(raft_commit(n->r), 3));
                break;
            default:
                fz_message(n->r, &m, ents, payload);
                raft_step(n->r, &m);
                break;
            }
            raft_check(n->r);
            /* Consume the ready without applying it (storage is not the subject here). */
            while (raft_has_ready(n->r)) {
                struct raft_ready rd;
                raft_ready(n->r, &rd);
                raft_advance(n->r, &rd);
            }
            raft_check(n->r);
        }
        rt_cluster_free(&c);
    }
}

/* A sole voter adds a learner that hears nothing of the change at first (its replica is not
 * open yet: the messages are lost); an idle leader's heartbeats alone must bring it up to date
 * and keep it there (broker/cluster.c moves partitions of a single node this way). */
TEST(raft_sole_voter_learner_catches_up_when_idle)
{
    struct rt_cluster c;
    memset(&c, 0, sizeof(c));
    rt_node_init(&c.nodes[0], 1, (const int32_t[]){1}, 1, NULL, 0, 0, -1, true, true);
    rt_node_init(&c.nodes[1], 2, NULL, 0, NULL, 0, 0, -1, true, true); /* empty configuration */
    c.n = 2;
    rt_advance(&c, 400);
    struct rt_node *l = rt_node(&c, 1);
    ASSERT_EQ(raft_role(l->r), RAFT_LEADER);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(rt_propose(&c, 1, 100, "batch"), 0);
    rt_stabilize(&c);
    rt_isolate(&c, 2, true);
    ASSERT_EQ(raft_propose_members(l->r, (const int32_t[]){1}, 1, (const int32_t[]){2}, 1), 0);
    rt_stabilize(&c);
    rt_isolate(&c, 2, false);
    rt_advance(&c, 500);
    struct rt_node *n2 = rt_node(&c, 2);
    ASSERT_EQ(raft_match_index(l->r, 2), raft_last_index(l->r));
    ASSERT(rt_logs_equal(n2, l));
    ASSERT(raft_conf_has_learner(raft_conf(n2->r), 2));
    ASSERT_EQ(raft_role(n2->r), RAFT_FOLLOWER);
    rt_cluster_free(&c);
}
