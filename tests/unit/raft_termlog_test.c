/* The term-range log model (raft/termlog.h) and configuration encoding (raft/conf.h). */
#include "base/endian.h"
#include "base/errors.h"
#include "raft/conf.h"
#include "raft/termlog.h"
#include "test.h"

/* Log: [0..2] t1, [3..9] t3 (entries [3..4], [5..9]), [10..10] t4. */
static void build(struct termlog *t)
{
    termlog_init(t, 0, 0);
    termlog_append(t, 0, 2, 1);
    termlog_append(t, 3, 4, 3);
    termlog_append(t, 5, 9, 3);
    termlog_append(t, 10, 10, 4);
}

TEST(raft_termlog_keeps_one_range_per_term)
{
    struct termlog t;
    build(&t);
    ASSERT(termlog_check(&t));
    ASSERT_EQ(t.n, 3u);
    ASSERT_EQ(t.last, 10);
    ASSERT_EQ(termlog_term_at(&t, -1), 0);
    ASSERT_EQ(termlog_term_at(&t, 0), 1);
    ASSERT_EQ(termlog_term_at(&t, 2), 1);
    ASSERT_EQ(termlog_term_at(&t, 3), 3);
    ASSERT_EQ(termlog_term_at(&t, 9), 3);
    ASSERT_EQ(termlog_term_at(&t, 10), 4);
    ASSERT_EQ(termlog_term_at(&t, 11), -1);
    ASSERT_EQ(termlog_term_at(&t, -2), -1);
    ASSERT_EQ(termlog_range_first(&t, 7), 3);
    termlog_free(&t);
}

TEST(raft_termlog_truncate_and_compact)
{
    struct termlog t;
    build(&t);
    termlog_truncate(&t, 5);
    ASSERT(termlog_check(&t));
    ASSERT_EQ(t.last, 4);
    ASSERT_EQ(t.n, 2u);
    termlog_truncate(&t, 3);
    ASSERT_EQ(t.n, 1u);
    ASSERT_EQ(termlog_last_term(&t), 1);
    termlog_append(&t, 3, 6, 5);
    termlog_compact(&t, 3);
    ASSERT(termlog_check(&t));
    ASSERT_EQ(t.start, 3);
    ASSERT_EQ(t.prev_term, 1);
    ASSERT_EQ(termlog_term_at(&t, 2), 1);
    ASSERT_EQ(termlog_term_at(&t, 1), -1);
    termlog_compact(&t, 7); /* everything */
    ASSERT(termlog_check(&t));
    ASSERT_EQ(t.n, 0u);
    ASSERT_EQ(t.last, 6);
    ASSERT_EQ(t.prev_term, 5);
    ASSERT_EQ(termlog_last_term(&t), 5);
    termlog_reset(&t, 20, 7);
    ASSERT(termlog_check(&t));
    ASSERT_EQ(termlog_term_at(&t, 19), 7);
    termlog_free(&t);
}

TEST(raft_termlog_find_le_lands_on_entry_ends)
{
    struct termlog t;
    build(&t);
    ASSERT_EQ(termlog_find_le(&t, 10, 4), 10);
    ASSERT_EQ(termlog_find_le(&t, 10, 3), 9);
    ASSERT_EQ(termlog_find_le(&t, 7, 3), 7);
    ASSERT_EQ(termlog_find_le(&t, 7, 2), 2);
    ASSERT_EQ(termlog_find_le(&t, 7, 0), -1);
    ASSERT_EQ(termlog_find_le(&t, -1, 9), -1);
    /* The leader-side variant never returns an index whose term is lower than asked: such an
     * index may lie inside one of the leader's entries. */
    ASSERT_EQ(termlog_find_le_boundary(&t, 7, 3), 7);
    ASSERT_EQ(termlog_find_le_boundary(&t, 7, 5), 2);
    ASSERT_EQ(termlog_find_le_boundary(&t, 10, 9), 9);
    ASSERT_EQ(termlog_find_le_boundary(&t, 7, 2), 2);
    termlog_free(&t);
}

TEST(raft_conf_encode_decode_roundtrip_and_reject_garbage)
{
    struct raft_conf c = {.n_voters = 3, .voters = {4, 5, 6}, .n_old = 2, .old = {1, 2}};
    uint8_t buf[RAFT_CONF_ENCODED_MAX];
    size_t len = raft_conf_encode(&c, buf);
    ASSERT_EQ(len, 4u + 5 * 4);
    struct raft_conf d;
    ASSERT_EQ(raft_conf_decode(&d, buf, len), 0);
    ASSERT(raft_conf_equal(&c, &d));
    ASSERT(raft_conf_is_joint(&d));
    ASSERT(raft_conf_has(&d, 1) && raft_conf_has(&d, 6) && !raft_conf_has(&d, 3));
    char text[64];
    ASSERT_STREQ(raft_conf_format(&d, text, sizeof(text)), "1,2->4,5,6");
    ASSERT_EQ(raft_conf_decode(&d, buf, len - 1), -ERR_CORRUPT);
    ASSERT_EQ(raft_conf_decode(&d, NULL, 0), -ERR_CORRUPT);
    buf[7] = 4;  /* voters[0] := 4 again... */
    buf[11] = 4; /* ...and voters[1] too: a duplicate */
    ASSERT_EQ(raft_conf_decode(&d, buf, len), -ERR_CORRUPT);
    len = raft_conf_encode(&c, buf);
    buf[2] = RAFT_VOTERS_MAX + 1;
    ASSERT_EQ(raft_conf_decode(&d, buf, len), -ERR_CORRUPT);
    len = raft_conf_encode(&c, buf);
    buf[4] = 0x80; /* negative id */
    ASSERT_EQ(raft_conf_decode(&d, buf, len), -ERR_CORRUPT);
    /* Every byte string up to 12 bytes long decodes or is refused; never crashes. */
    for (uint32_t v = 0; v < 200000; v++) {
        uint8_t b[12];
        uint32_t x = v * 2654435761u;
        for (size_t i = 0; i < sizeof(b); i++)
            b[i] = (uint8_t)(x >> (i % 4 * 8)) ^ (uint8_t)i;
        b[0] = 'R';
        b[1] = 1;
        b[2] %= 3;
        b[3] %= 2;
        int rc = raft_conf_decode(&d, b, 4 + (v % 9));
        ASSERT(rc == 0 || rc == -ERR_CORRUPT);
        if (rc == 0)
            ASSERT(raft_conf_valid(&d));
    }
}

/* Learners: version 2 of the encoding, only when there are any (a learner-less configuration
 * still encodes to version 1, byte for byte what releases before learners wrote); a learner
 * that is also a voter, a version 2 with no learners, and too many learners are refused. */
TEST(raft_conf_learners_encode_as_version_2)
{
    struct raft_conf c = {.n_voters = 3, .voters = {1, 2, 3}, .n_learners = 2, .learners = {4, 9}};
    ASSERT(raft_conf_valid(&c));
    uint8_t buf[RAFT_CONF_ENCODED_MAX];
    size_t len = raft_conf_encode(&c, buf);
    ASSERT_EQ(len, 5u + 5 * 4);
    ASSERT_EQ(buf[1], 2);
    ASSERT_EQ(buf[4], 2);
    struct raft_conf d;
    ASSERT_EQ(raft_conf_decode(&d, buf, len), 0);
    ASSERT(raft_conf_equal(&c, &d));
    ASSERT(raft_conf_has_learner(&d, 9) && !raft_conf_has(&d, 9) && raft_conf_has_member(&d, 9));
    ASSERT(!raft_conf_has_learner(&d, 1) && raft_conf_has_member(&d, 1));
    char text[64];
    ASSERT_STREQ(raft_conf_format(&d, text, sizeof(text)), "1,2,3 +4,9");
    struct raft_conf joint = c;
    joint.n_old = 1;
    joint.old[0] = 1;
    ASSERT_STREQ(raft_conf_format(&joint, text, sizeof(text)), "1->1,2,3 +4,9");
    /* learners differ: not equal */
    struct raft_conf e = c;
    e.learners[1] = 8;
    ASSERT(!raft_conf_equal(&c, &e));
    /* no learners: version 1, the old bytes */
    struct raft_conf plain = {.n_voters = 2, .voters = {1, 2}};
    len = raft_conf_encode(&plain, buf);
    ASSERT_EQ(len, 4u + 2 * 4);
    ASSERT_EQ(buf[1], 1);
    /* refusals */
    len = raft_conf_encode(&c, buf);
    buf[4] = 0; /* version 2 without learners */
    ASSERT_EQ(raft_conf_decode(&d, buf, len - 8), -ERR_CORRUPT);
    len = raft_conf_encode(&c, buf);
    buf[4] = RAFT_LEARNERS_MAX + 1;
    ASSERT_EQ(raft_conf_decode(&d, buf, len), -ERR_CORRUPT);
    len = raft_conf_encode(&c, buf);
    be_put32(buf + len - 4, 2); /* learner 9 := 2, a voter */
    ASSERT_EQ(raft_conf_decode(&d, buf, len), -ERR_CORRUPT);
    ASSERT_EQ(d.n_voters, 0);
    len = raft_conf_encode(&c, buf);
    ASSERT_EQ(raft_conf_decode(&d, buf, len + 0), 0);
    ASSERT_EQ(raft_conf_decode(&d, buf, len - 1), -ERR_CORRUPT);
    struct raft_conf lonely = {.n_learners = 1, .learners = {4}}; /* learners but no voters */
    ASSERT(!raft_conf_valid(&lonely));
    struct raft_conf dup = {.n_voters = 1, .voters = {1}, .n_learners = 2, .learners = {4, 4}};
    ASSERT(!raft_conf_valid(&dup));
}
