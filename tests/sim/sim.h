/* The deterministic Raft simulator (issue 5 item 7).
 *
 * One process runs N real Raft cores (src/raft) in a world it controls entirely:
 *   - a virtual clock (ms) and an event queue ordered by (time, sequence number);
 *   - a network that delays, drops, duplicates and reorders messages and can cut any directed
 *     link (partitions, asymmetric too);
 *   - a disk per node that separates durable state from pending writes (ops since the last
 *     completed sync). A crash loses the pending writes, or keeps a random prefix of them, or
 *     keeps a prefix and tears the next entry (its bytes no longer match its CRC, so recovery
 *     cuts the log there, as segment recovery does);
 *   - clients proposing multi-index entries at random times; an entry is acknowledged when the
 *     node it was proposed at reports it committed.
 * Every random choice comes from one PRNG seeded by --seed, so a run replays byte for byte.
 *
 * The checker (check.c) runs after every event: one leader per term, log matching, leader
 * completeness, commit monotonic and backed by durable copies on a majority when it advances,
 * applied prefixes identical (against an oracle of the committed history), every acknowledged
 * entry durable on a majority with identical bytes, no committed entry ever cut, every core's
 * own invariants; and liveness: a leader within 2 election timeouts after every heal, and at
 * least 5 leader changes per seed.
 *
 * Files: sim.c (world, network, nodes, faults, client), storage.c (logs and the crash model),
 * check.c (oracle and invariants), main.c (command line, many seeds, summary). */
#ifndef SP_SIM_SIM_H
#define SP_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raft/raft.h"

#define SIM_SLOTS 16        /* node ids 1..SIM_SLOTS */
#define SIM_ELECTION_MS 150 /* base election timeout; randomized in [150, 300) */
#define SIM_HEARTBEAT_MS 50
#define SIM_LIVENESS_MS 600 /* 2 election timeouts (of the 300 ms maximum) */
#define SIM_TICK_MS 5

/* net: partitions, loss, transfers; crash: crashes with torn writes; membership: voter changes
 * among 3-5 voters; grow: a group that starts as a single voter (the single-node broker, which
 * commits without a no-op) and grows to up to 5 voters and back, with crashes. In membership
 * and grow, a new member mostly joins as a learner (raft/conf.h) that catches up and is
 * promoted to voter later (or dropped), sometimes before it has caught up. */
enum sim_profile { PROFILE_NET = 0, PROFILE_CRASH, PROFILE_MEMBERSHIP, PROFILE_GROW, PROFILE_COUNT };

struct rng {
    uint64_t s;
};
uint64_t rng_next(struct rng *g);
uint64_t rng_below(struct rng *g, uint64_t n);            /* [0, n) */
int64_t rng_range(struct rng *g, int64_t lo, int64_t hi); /* [lo, hi] */
bool rng_pm(struct rng *g, int per_mille); /* true with probability per_mille / 1000 */

/* ---- storage (storage.c) ------------------------------------------------------------------ */

struct sentry {
    int64_t first;
    int64_t last;
    int64_t term;
    uint8_t kind;
    uint32_t len;
    uint32_t crc;      /* over header fields and payload, as written; torn bytes break it */
    uint32_t data_crc; /* payload only (what a client compares) */
    uint64_t chain;    /* hash of the log up to and including this entry */
    uint8_t *payload;  /* owned */
};

struct slog {
    struct sentry *e;
    size_t n;
    size_t cap;
    int64_t start;            /* first index held */
    int64_t prev_term;        /* term of start - 1 */
    uint64_t prev_chain;      /* chain at start - 1 */
    struct raft_conf_at base; /* configuration in force at start - 1 */
};

enum op_type { OP_HS = 1, OP_TRUNC, OP_APPEND, OP_INSTALL };

/* A write handed to the disk and not yet covered by a completed sync. */
struct op {
    uint8_t type;
    uint64_t seq;
    int64_t term;          /* HS: term; INSTALL: term at index */
    int32_t vote;          /* HS */
    int64_t index;         /* TRUNC: from; INSTALL: index */
    uint64_t chain;        /* INSTALL: chain at index */
    struct raft_conf conf; /* INSTALL */
    struct sentry e;       /* APPEND (payload owned) */
};

void slog_init(struct slog *l, int64_t start, int64_t prev_term, uint64_t prev_chain,
               const struct raft_conf_at *base);
void slog_free(struct slog *l);
void slog_copy(struct slog *dst, const struct slog *src);
int64_t slog_last(const struct slog *l);
/* Position of the entry holding index, or -1. */
long slog_find(const struct slog *l, int64_t index);
/* Chain at index if index ends an entry (or is start - 1); false otherwise. */
bool slog_chain_at(const struct slog *l, int64_t index, uint64_t *chain);
int64_t slog_term_at(const struct slog *l, int64_t index);
uint64_t slog_last_chain(const struct slog *l);
/* Cuts every entry from `from` on; false if from is inside an entry. */
bool slog_truncate(struct slog *l, int64_t from);
/* Appends a copy of e (e->first must be last + 1). */
void slog_append(struct slog *l, const struct sentry *e);
void slog_install(struct slog *l, int64_t index, int64_t term, uint64_t chain,
                  const struct raft_conf *conf);
/* Forgets entries below new_start (an entry boundary). */
void slog_compact(struct slog *l, int64_t new_start);
/* Configurations for raft_restore: base first, then every config entry. Returns the count. */
size_t slog_confs(const struct slog *l, struct raft_conf_at *out, size_t cap);

uint32_t sentry_crc(const struct sentry *e);
uint64_t chain_next(uint64_t prev, const struct sentry *e);
void sentry_copy(struct sentry *dst, const struct sentry *src);
void sentry_free(struct sentry *e);

/* ---- messages in flight ---------------------------------------------------------------------- */

struct smsg {
    struct raft_msg m; /* entries and their payloads live in the same allocation */
};
struct smsg *smsg_new(const struct raft_msg *m, const struct sentry *const *ents, size_t n);
struct smsg *smsg_dup(const struct smsg *s);
void smsg_free(struct smsg *s);

/* ---- nodes -------------------------------------------------------------------------------------
 */

struct proposal {
    int64_t first;
    int64_t last;
    int64_t term;
    uint32_t data_crc;
    uint32_t len;
};

enum member_state { MEMBER_NONE = 0, MEMBER_JOINING, MEMBER_VOTER, MEMBER_REMOVED };

struct node {
    int32_t id;
    bool used; /* the slot holds a node (up or down) */
    bool up;
    uint32_t inc; /* incarnation: bumped at every crash and restart */
    struct raft *r;
    struct slog cur; /* the log as the adapter sees it (writes applied) */
    struct slog dur; /* what survives a crash */
    int64_t hs_term; /* durable hard state */
    int32_t hs_vote;
    struct op *ops; /* pending writes, oldest first */
    size_t n_ops;
    size_t cap_ops;
    uint64_t op_seq;   /* last op sequence number given */
    uint64_t synced;   /* every op <= synced is durable */
    bool sync_pending; /* a sync event is scheduled */
    /* What the previous ready reported, for the checker. */
    enum raft_role role;
    int64_t term;
    int64_t commit;
    int64_t applied;
    struct raft_conf conf;
    struct proposal *props;
    size_t n_props;
    size_t cap_props;
    enum member_state member;
    int64_t joined_ms;
    int64_t restart_at; /* > 0: scheduled restart */
    bool crash_now;     /* the write fault site fired: crash before anything syncs */
};

/* ---- the world ----------------------------------------------------------------------------------
 */

enum ev_type {
    EV_TICK = 1,
    EV_DELIVER,
    EV_SYNC,
    EV_CLIENT,
    EV_FAULT,
    EV_RESTART,
    EV_HEAL,
    EV_LIVENESS,
    EV_CHAOS,
    EV_DECOMMISSION,
};

struct event {
    int64_t at;
    uint64_t seq;
    uint8_t type;
    int32_t node;
    uint32_t inc;
    uint64_t arg;
    struct smsg *msg;
};

struct sim_config {
    enum sim_profile profile;
    uint64_t seed;
    int64_t duration_ms;
    bool verbose;
};

/* Hash map of uint64 -> uint64 (keys != 0), open addressing. */
struct u64map {
    uint64_t *k;
    uint64_t *v;
    size_t cap;
    size_t n;
};
bool u64map_get(const struct u64map *m, uint64_t k, uint64_t *v);
void u64map_put(struct u64map *m, uint64_t k, uint64_t v);
void u64map_free(struct u64map *m);

struct oentry {
    int64_t first;
    int64_t last;
    int64_t term;
    uint64_t chain;
};

struct mark {
    int64_t index; /* committed up to here ... */
    int64_t term;  /* ... by a leader of this term */
};

struct sim_stats {
    int leader_changes;
    int elections_lost; /* unused counters are fine to print */
    int proposals;
    int acked;
    int crashes;
    int torn;
    int heals;
    int conf_changes;
    int learner_changes; /* of conf_changes: learners added, promoted or dropped */
    int installs;
    int compactions;
    int64_t events;
    int64_t max_commit;
    int64_t heal_leader_max_ms; /* slowest heal-to-leader time of the run */
    int heals_slow;             /* heals that took over 400 ms to a leader */
};

struct sim {
    struct sim_config cfg;
    struct rng rng;
    int64_t now;
    uint64_t ev_seq;
    struct event *heap;
    size_t n_heap;
    size_t cap_heap;
    struct node nodes[SIM_SLOTS];
    int n_initial;
    /* network */
    bool cut[SIM_SLOTS][SIM_SLOTS]; /* cut[a][b]: messages from a to b are lost */
    int drop_pm;
    int dup_pm;
    int slow_pm;
    int trim_pm;         /* APPENDs that carry only a prefix of what was asked */
    int crash_write_pm;  /* fault site: crash right after a ready that wrote something */
    int crash_vote_pm;   /* fault site: crash right after a ready that changed term/vote */
    int crash_commit_pm; /* fault site: crash a leader right after its commit index moved */
    bool healing;
    int64_t heal_at;
    uint64_t chaos_gen;   /* fault events of an earlier chaos phase are stale */
    bool awaiting_leader; /* since the last heal, no leader followed by a majority yet */
    /* checker */
    struct oentry *orc; /* the committed history */
    size_t n_orc;
    size_t cap_orc;
    struct mark *marks;
    size_t n_marks;
    size_t cap_marks;
    struct raft_conf orc_conf; /* latest committed configuration */
    struct u64map leaders;     /* term -> leader id */
    struct u64map layout;      /* (term, first) -> last */
    struct u64map chains;      /* (term, last) -> chain */
    int64_t acked_max;         /* highest acknowledged index, -1 */
    uint64_t acked_chain;
    struct sim_stats st;
    bool failed;
    char why[512];
};

/* sim.c */
int sim_run(const struct sim_config *cfg, struct sim_stats *out, char *why, size_t why_cap);
const char *profile_name(enum sim_profile p);
void sim_trace(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sim_fail(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct node *sim_node(struct sim *s, int32_t id);

/* check.c */
void check_init(struct sim *s, const struct raft_conf *bootstrap);
void check_free(struct sim *s);
void check_role(struct sim *s, struct node *n, const struct raft_ready *rd);
void check_append(struct sim *s, struct node *n, const struct sentry *e);
void check_cut(struct sim *s, struct node *n, int64_t from, const char *what);
void check_commit(struct sim *s, struct node *n, const struct raft_ready *rd,
                  const struct raft_conf *conf_before, enum raft_role role_before);
void check_install(struct sim *s, struct node *n, int64_t index, uint64_t *chain);
bool check_ack(struct sim *s, struct node *n, const struct proposal *p);
void check_step(struct sim *s);
bool check_durable_majority(struct sim *s, const struct raft_conf *c, int64_t index, uint64_t chain,
                            int *have, int *need);
bool oracle_chain(const struct sim *s, int64_t index, uint64_t *chain);

#endif
