/* Test harness for the Raft core: nodes with in-memory logs, an outbox per node, manual or
 * synchronous message delivery, manual or automatic durability. Not a simulator (that is
 * tests/sim): time only moves when a test says so, and messages move in a fixed order. */
#ifndef SP_TEST_RAFT_UTIL_H
#define SP_TEST_RAFT_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/check.h"
#include "raft/raft.h"

#define RT_NODES_MAX 8

struct rt_entry {
    int64_t first;
    int64_t last;
    int64_t term;
    uint8_t kind;
    uint8_t *payload; /* owned */
    size_t len;
};

/* An owned copy of a message (entries and payloads too). */
struct rt_msg {
    struct raft_msg m; /* m.entries points into this copy */
};

struct rt_node {
    int32_t id;
    struct raft *r;
    /* The node's storage. */
    struct rt_entry *log;
    size_t n_log;
    size_t cap_log;
    int64_t start;                 /* first index held */
    int64_t prev_term;             /* term of start - 1 */
    struct raft_conf_at confs[64]; /* bootstrap + config entries seen (for restarts) */
    size_t n_confs;
    int64_t hs_term;
    int32_t hs_vote;
    bool auto_sync;  /* report durability right after each ready (default true) */
    int64_t applied; /* highest commit seen in a ready */
    int hs_writes;   /* hard-state writes seen */
    /* Messages produced and not yet taken. */
    struct rt_msg *out;
    size_t n_out;
    size_t cap_out;
    int append_max_entries; /* > 0: attach at most this many entries per APPEND */
};

struct rt_cluster {
    struct rt_node nodes[RT_NODES_MAX];
    size_t n;
    int64_t now_ms;
    bool cut[RT_NODES_MAX][RT_NODES_MAX]; /* cut[a][b]: a's messages to b are dropped */
    int rejects;                          /* rejected APPEND_RESPs delivered so far */
};

/* Options every test node uses: PreVote and CheckQuorum as given, seed from the id. */
void rt_options(struct raft_options *o, int32_t id, bool pre_vote, bool check_quorum);

/* A cluster of n nodes with ids 1..n, all voters, empty logs, now = 0. */
void rt_cluster_init(struct rt_cluster *c, size_t n, bool pre_vote, bool check_quorum);
void rt_cluster_free(struct rt_cluster *c);
struct rt_node *rt_node(struct rt_cluster *c, int32_t id);

/* (Re)creates node id's core from its storage (a restart). voters: the bootstrap config. */
void rt_node_restart(struct rt_cluster *c, int32_t id, bool pre_vote, bool check_quorum);
/* Puts entries of the given terms (one index each, starting at the log start) into a node's
 * storage before its core is (re)started. */
void rt_node_set_log(struct rt_node *n, const int64_t *terms, size_t count);
/* A standalone node (id, voters) with a log of the given terms (one index each, from 0),
 * term hs_term and a restored commit index. */
void rt_node_init(struct rt_node *n, int32_t id, const int32_t *voters, size_t n_voters,
                  const int64_t *terms, size_t count, int64_t hs_term, int64_t commit,
                  bool pre_vote, bool check_quorum);
void rt_node_free(struct rt_node *n);

/* Processes every ready of a node: writes, hard state, outbox, (auto) durability. */
void rt_ready(struct rt_node *n);
/* Reports everything stored so far (hard state and log) as durable. */
void rt_sync(struct rt_node *n);
/* Steps a message into a node and processes its readies. Returns raft_step's result. */
int rt_step(struct rt_node *n, const struct raft_msg *m);
/* Removes and returns the node's outbox; *count gets its length. Free with rt_msgs_free. */
struct rt_msg *rt_take(struct rt_node *n, size_t *count);
void rt_msgs_free(struct rt_msg *msgs, size_t count);
/* Number of outbox messages of a type (0: any). */
size_t rt_count(const struct rt_node *n, uint8_t type);
/* The first outbox message of a type to `to` (RAFT_NONE: any), or NULL. */
const struct raft_msg *rt_find(const struct rt_node *n, uint8_t type, int32_t to);
void rt_clear(struct rt_node *n);

/* Delivers all messages until none is left (cut links drop). Returns messages delivered. */
int rt_stabilize(struct rt_cluster *c);
/* Advances every node's clock by ms in 5 ms steps, stabilizing after each. */
void rt_advance(struct rt_cluster *c, int64_t ms);
/* Makes id campaign and stabilizes. */
void rt_campaign(struct rt_cluster *c, int32_t id);
/* Cuts (or restores) both directions between id and every other node. */
void rt_isolate(struct rt_cluster *c, int32_t id, bool isolated);
/* Proposes a data entry of n_indexes with a text payload at id; returns raft_propose's rc. */
int rt_propose(struct rt_cluster *c, int32_t id, int64_t n_indexes, const char *text);

/* The node with the highest term among those that are leaders, or NULL. */
struct rt_node *rt_leader(struct rt_cluster *c);
/* Appends an entry of n_indexes offsets and the given term to a node's storage (before its
 * core is started, or to build logs by hand). */
void rt_node_add(struct rt_node *n, int64_t n_indexes, int64_t term);
/* Discards the node's storage below index and tells the core (raft_compact's rc). */
int rt_compact(struct rt_node *n, int64_t index);

/* Storage helpers. */
int64_t rt_last(const struct rt_node *n);
int64_t rt_term_at(const struct rt_node *n, int64_t index); /* -1 if absent */
const struct rt_entry *rt_entry_at(const struct rt_node *n, int64_t index);
/* Whether two nodes store identical logs (same entries, terms and payloads). */
bool rt_logs_equal(const struct rt_node *a, const struct rt_node *b);

/* A message builder for direct step tests. */
struct raft_msg rt_msg(uint8_t type, int32_t from, int32_t to, int64_t term);

#endif
