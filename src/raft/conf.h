/* Raft group configurations (who votes), their encoding in config-change entries, and quorums.
 *
 * A configuration is either simple (C: voters) or joint (C_old,new: voters = C_new and
 * old = C_old, both non-empty). In a joint configuration every decision (an election, a commit)
 * needs a majority of each side, as in the Raft paper §6 and the thesis §4.3.
 *
 * Node ids are Kafka node.ids: >= 0. RAFT_NONE (-1) means "no node".
 *
 * Either kind may also name learners: members that receive the log as voters do but never
 * vote, never count towards a majority and never stand for election (the thesis §4.2.1: a new
 * replica catches up as a learner, then a voter change promotes it, so that adding it never
 * stalls commits while it copies the log). A learner is in neither side.
 *
 * Encoding of a config-change entry's payload (the core decodes what it replicates itself, so it
 * is never trusted: raft_conf_decode checks everything):
 *   byte 0     'R'         magic
 *   byte 1     1 or 2      version: 1 without learners (what releases before learners wrote,
 *                          and still what a learner-less configuration encodes to), 2 with
 *   byte 2     n_voters    0..RAFT_VOTERS_MAX
 *   byte 3     n_old       0..RAFT_VOTERS_MAX
 *   byte 4     n_learners  1..RAFT_LEARNERS_MAX (version 2 only)
 *   then n_voters, n_old, and (version 2) n_learners int32 big-endian ids.
 */
#ifndef SP_RAFT_CONF_H
#define SP_RAFT_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAFT_NONE (-1)
#define RAFT_VOTERS_MAX 7
#define RAFT_LEARNERS_MAX 7
#define RAFT_CONF_ENCODED_MAX (5 + 4 * (2 * RAFT_VOTERS_MAX + RAFT_LEARNERS_MAX))

struct raft_conf {
    uint8_t n_voters;                  /* C_new, or the only configuration */
    uint8_t n_old;                     /* > 0 only while joint: C_old */
    uint8_t n_learners;                /* non-voting members */
    int32_t voters[RAFT_VOTERS_MAX];   /* ids, no duplicates */
    int32_t old[RAFT_VOTERS_MAX];      /* ids, no duplicates */
    int32_t learners[RAFT_LEARNERS_MAX]; /* ids, no duplicates, in neither side */
};

/* Well-formed: counts within bounds, ids >= 0, no duplicate within a side or among learners,
 * no learner in either side, n_old == 0 unless n_voters > 0, learners only beside voters. An
 * empty configuration (no voters at all) is well-formed: a node that has not yet learnt its
 * group's configuration has it. */
bool raft_conf_valid(const struct raft_conf *c);
bool raft_conf_is_joint(const struct raft_conf *c);
/* id votes in c (in either side when joint). */
bool raft_conf_has(const struct raft_conf *c, int32_t id);
/* id is a learner of c. */
bool raft_conf_has_learner(const struct raft_conf *c, int32_t id);
/* id is a member of c: a voter (either side) or a learner. */
bool raft_conf_has_member(const struct raft_conf *c, int32_t id);
bool raft_conf_side_has(const int32_t *ids, size_t n, int32_t id);
bool raft_conf_equal(const struct raft_conf *a, const struct raft_conf *b);

/* Encodes c (which must be valid: CHECK) into buf of at least RAFT_CONF_ENCODED_MAX bytes;
 * returns the length. */
size_t raft_conf_encode(const struct raft_conf *c, uint8_t *buf);
/* Decodes and validates. Returns 0, or -ERR_CORRUPT (c is then zeroed). */
int raft_conf_decode(struct raft_conf *c, const uint8_t *p, size_t len);

/* Writes a short text form ("1,2,3", "1,2,3->1,2,4", "1,2,3 +4,5" with learners 4 and 5) into
 * buf; returns buf. */
const char *raft_conf_format(const struct raft_conf *c, char *buf, size_t cap);

#endif
