/* The idempotent-producer rules of broker/producer_state.h, against hand-computed outcomes. */
#include "base/crc32c.h"
#include "base/errors.h"
#include "base/mem.h"
#include "broker/producer_state.h"
#include "test.h"

#define DAY 86400000LL
#define T0 1700000000000LL

static struct pstate *table(int max, int64_t exp)
{
    return pstate_new(&(struct pstate_limits){max, exp});
}

/* Records a batch of n records with sequences from seq at offset off. */
static void put(struct pstate *t, int64_t pid, int16_t epoch, int32_t seq, int32_t n, int64_t off,
                int64_t now)
{
    struct pstate_batch b = {seq, pstate_last_seq(seq, n - 1), off, off + n - 1, now - 5};
    pstate_update(t, pid, epoch, &b, now);
    pstate_check_invariants(t);
}

static enum pstate_verdict check(struct pstate *t, int64_t pid, int16_t epoch, int32_t seq,
                                 int32_t n, int64_t now, struct pstate_batch *dup)
{
    struct pstate_batch scratch;
    return pstate_check(t, pid, epoch, seq, pstate_last_seq(seq, n - 1), now, dup ? dup : &scratch);
}

TEST(producer_state_duplicates_of_the_last_five_batches_get_their_offsets)
{
    struct pstate *t = table(10, DAY);
    /* 7 batches of 10: sequences 0..69 at offsets 100.., with another producer in between */
    for (int i = 0; i < 7; i++) {
        put(t, 42, 0, i * 10, 10, 100 + i * 20, T0);
        put(t, 43, 0, i * 10, 10, 110 + i * 20, T0);
    }
    for (int i = 2; i < 7; i++) {
        struct pstate_batch dup;
        ASSERT_EQ(check(t, 42, 0, i * 10, 10, T0, &dup), PSTATE_DUPLICATE);
        ASSERT_EQ(dup.first_offset, 100 + i * 20);
        ASSERT_EQ(dup.last_offset, 109 + i * 20);
        ASSERT_EQ(dup.first_seq, i * 10);
        ASSERT_EQ(dup.last_seq, i * 10 + 9);
        ASSERT_EQ(dup.timestamp, T0 - 5);
    }
    /* older than the kept five: out of order, as in Kafka */
    ASSERT_EQ(check(t, 42, 0, 0, 10, T0, NULL), PSTATE_OUT_OF_ORDER);
    ASSERT_EQ(check(t, 42, 0, 10, 10, T0, NULL), PSTATE_OUT_OF_ORDER);
    /* same first sequence but a different range is no duplicate */
    ASSERT_EQ(check(t, 42, 0, 60, 5, T0, NULL), PSTATE_OUT_OF_ORDER);
    /* the next one */
    ASSERT_EQ(check(t, 42, 0, 70, 3, T0, NULL), PSTATE_APPEND);
    int n;
    struct pstate_batch kept[PSTATE_BATCHES];
    ASSERT(pstate_get(t, 42, NULL, kept, &n, NULL));
    ASSERT_EQ(n, 5);
    ASSERT_EQ(kept[0].first_seq, 20);
    ASSERT_EQ(kept[4].last_seq, 69);
    pstate_free(t);
}

TEST(producer_state_gaps_are_out_of_order_and_unknown_producers_take_any_sequence)
{
    struct pstate *t = table(10, DAY);
    /* an unknown producer: any sequence, any epoch */
    ASSERT_EQ(check(t, 7, 3, 12345, 4, T0, NULL), PSTATE_APPEND);
    put(t, 7, 3, 12345, 4, 0, T0);
    ASSERT_EQ(check(t, 7, 3, 12349, 1, T0, NULL), PSTATE_APPEND);
    ASSERT_EQ(check(t, 7, 3, 12350, 1, T0, NULL), PSTATE_OUT_OF_ORDER); /* skips 12349 */
    ASSERT_EQ(check(t, 7, 3, 12348, 1, T0, NULL), PSTATE_OUT_OF_ORDER); /* overlaps */
    ASSERT_EQ(check(t, 7, 3, 0, 1, T0, NULL), PSTATE_OUT_OF_ORDER);
    ASSERT_EQ(check(t, 8, 0, 99, 1, T0, NULL), PSTATE_APPEND); /* another, unknown */
    pstate_free(t);
}

TEST(producer_state_epochs_fence_older_ones_and_a_new_epoch_starts_at_zero)
{
    struct pstate *t = table(10, DAY);
    put(t, 5, 2, 0, 10, 0, T0);
    put(t, 5, 2, 10, 10, 10, T0);
    ASSERT_EQ(check(t, 5, 1, 20, 1, T0, NULL), PSTATE_STALE_EPOCH);
    ASSERT_EQ(check(t, 5, 1, 0, 10, T0, NULL), PSTATE_STALE_EPOCH); /* even a "duplicate" */
    ASSERT_EQ(check(t, 5, 3, 20, 1, T0, NULL), PSTATE_OUT_OF_ORDER);
    ASSERT_EQ(check(t, 5, 3, 0, 4, T0, NULL), PSTATE_APPEND);
    put(t, 5, 3, 0, 4, 20, T0);
    int16_t epoch;
    int n;
    ASSERT(pstate_get(t, 5, &epoch, NULL, &n, NULL));
    ASSERT_EQ(epoch, 3);
    ASSERT_EQ(n, 1); /* the old epoch's batches are gone */
    ASSERT_EQ(check(t, 5, 2, 10, 10, T0, NULL), PSTATE_STALE_EPOCH);
    struct pstate_batch dup;
    ASSERT_EQ(check(t, 5, 3, 0, 4, T0, &dup), PSTATE_DUPLICATE);
    ASSERT_EQ(dup.first_offset, 20);
    ASSERT_EQ(check(t, 5, 3, 4, 1, T0, NULL), PSTATE_APPEND);
    pstate_free(t);
}

TEST(producer_state_sequences_wrap_at_int32_max)
{
    ASSERT_EQ(pstate_last_seq(0, 0), 0);
    ASSERT_EQ(pstate_last_seq(10, 4), 14);
    ASSERT_EQ(pstate_last_seq(INT32_MAX, 0), INT32_MAX);
    ASSERT_EQ(pstate_last_seq(INT32_MAX - 1, 1), INT32_MAX);
    ASSERT_EQ(pstate_last_seq(INT32_MAX - 1, 2), 0);
    ASSERT_EQ(pstate_last_seq(INT32_MAX - 1, 3), 1);
    ASSERT_EQ(pstate_last_seq(INT32_MAX, 5), 4);
    ASSERT_EQ(pstate_last_seq(5, INT32_MAX), 4);

    struct pstate *t = table(10, DAY);
    put(t, 1, 0, INT32_MAX - 9, 10, 0, T0); /* ends exactly at INT32_MAX */
    ASSERT_EQ(check(t, 1, 0, 0, 5, T0, NULL), PSTATE_APPEND);
    ASSERT_EQ(check(t, 1, 0, 1, 5, T0, NULL), PSTATE_OUT_OF_ORDER);
    put(t, 1, 0, 0, 5, 10, T0);
    ASSERT_EQ(check(t, 1, 0, 5, 1, T0, NULL), PSTATE_APPEND);

    put(t, 2, 0, INT32_MAX - 2, 6, 100, T0); /* wraps inside the batch: last 2 */
    struct pstate_batch dup;
    ASSERT_EQ(check(t, 2, 0, INT32_MAX - 2, 6, T0, &dup), PSTATE_DUPLICATE);
    ASSERT_EQ(dup.last_seq, 2);
    ASSERT_EQ(dup.first_offset, 100);
    ASSERT_EQ(check(t, 2, 0, 3, 1, T0, NULL), PSTATE_APPEND);
    ASSERT_EQ(check(t, 2, 0, 0, 1, T0, NULL), PSTATE_OUT_OF_ORDER);
    pstate_free(t);
}

TEST(producer_state_expires_idle_producers)
{
    struct pstate *t = table(10, 1000);
    put(t, 1, 0, 0, 10, 0, T0);
    put(t, 2, 0, 0, 10, 10, T0 + 600);
    /* just before the limit the state holds; at the limit the producer is unknown */
    ASSERT_EQ(check(t, 1, 0, 0, 10, T0 + 999, NULL), PSTATE_DUPLICATE);
    ASSERT_EQ(check(t, 1, 0, 77, 1, T0 + 999, NULL), PSTATE_OUT_OF_ORDER);
    ASSERT_EQ(check(t, 1, 0, 77, 1, T0 + 1000, NULL), PSTATE_APPEND);
    ASSERT_EQ(check(t, 1, 0, 0, 10, T0 + 1000, NULL), PSTATE_APPEND);
    ASSERT_EQ(pstate_count(t), 2); /* lookups ignore it; the sweep frees it */
    ASSERT_EQ(pstate_expire(t, T0 + 1000), 1);
    ASSERT_EQ(pstate_count(t), 1);
    ASSERT(!pstate_get(t, 1, NULL, NULL, NULL, NULL));
    ASSERT(pstate_get(t, 2, NULL, NULL, NULL, NULL));
    /* an expired entry that writes again starts over (old batches are not duplicates) */
    put(t, 2, 0, 500, 1, 20, T0 + 5000);
    int n;
    ASSERT(pstate_get(t, 2, NULL, NULL, &n, NULL));
    ASSERT_EQ(n, 1);
    ASSERT_EQ(check(t, 2, 0, 0, 10, T0 + 5000, NULL), PSTATE_OUT_OF_ORDER);
    ASSERT_EQ(pstate_expire(t, T0 + 5999), 0);
    ASSERT_EQ(pstate_expire(t, T0 + 6000), 1);
    ASSERT_EQ(pstate_count(t), 0);
    pstate_free(t);
}

TEST(producer_state_evicts_the_least_recently_used_beyond_its_cap)
{
    struct pstate *t = table(3, DAY);
    put(t, 1, 0, 0, 1, 0, T0);
    put(t, 2, 0, 0, 1, 1, T0);
    put(t, 3, 0, 0, 1, 2, T0);
    put(t, 1, 0, 1, 1, 3, T0); /* 1 is now the most recent */
    put(t, 4, 0, 0, 1, 4, T0); /* 2 goes */
    ASSERT_EQ(pstate_count(t), 3);
    ASSERT_EQ(pstate_evictions(t), 1);
    ASSERT(!pstate_get(t, 2, NULL, NULL, NULL, NULL));
    ASSERT(pstate_get(t, 1, NULL, NULL, NULL, NULL));
    ASSERT(pstate_get(t, 3, NULL, NULL, NULL, NULL));
    /* an evicted producer is an unknown one again */
    ASSERT_EQ(check(t, 2, 0, 99, 1, T0, NULL), PSTATE_APPEND);
    ASSERT_EQ(pstate_max_pid(t), 4);
    pstate_set_limits(t, &(struct pstate_limits){1, DAY});
    ASSERT_EQ(pstate_count(t), 1);
    ASSERT(pstate_get(t, 4, NULL, NULL, NULL, NULL));
    for (int64_t pid = 100; pid < 5000; pid++) /* the index grows and stays consistent */
        put(t, pid, 0, 0, 1, pid * 2, T0);
    ASSERT_EQ(pstate_count(t), 1);
    pstate_free(t);
}

/* ---- snapshots ---- */

static void same_entry(struct pstate *a, struct pstate *b, int64_t pid)
{
    int16_t ea, eb;
    int na, nb;
    int64_t la, lb;
    struct pstate_batch ba[PSTATE_BATCHES], bb[PSTATE_BATCHES];
    ASSERT(pstate_get(a, pid, &ea, ba, &na, &la));
    ASSERT(pstate_get(b, pid, &eb, bb, &nb, &lb));
    ASSERT_EQ(ea, eb);
    ASSERT_EQ(na, nb);
    ASSERT_EQ(la, lb);
    ASSERT_MEMEQ(ba, bb, (size_t)na * sizeof(ba[0]));
}

static struct pstate *sample(void)
{
    struct pstate *t = table(100, DAY);
    for (int i = 0; i < 9; i++) {
        put(t, 1000 + i % 3, (int16_t)(i / 3), (i / 3) ? (i % 3) * 7 : 0, 1 + i, i * 50, T0 + i);
        put(t, 77, 0, i * 2, 2, i * 50 + 20, T0 + 100 + i);
    }
    put(t, 1LL << 50, 32766, INT32_MAX - 1, 4, 2000, T0 + 1000); /* wraps */
    return t;
}

TEST(producer_state_snapshot_round_trip_keeps_every_batch_and_the_lru_order)
{
    struct pstate *t = sample();
    size_t len;
    uint8_t *snap = pstate_encode(t, 5000, T0 + 2000, &len);
    ASSERT_EQ(len, PSTATE_HEADER_BYTES + pstate_count(t) * PSTATE_ENTRY_BYTES + 4);
    struct pstate *u = table(100, DAY);
    int64_t off = -1;
    ASSERT_EQ(pstate_decode(u, snap, len, T0 + 2000, &off), 0);
    ASSERT_EQ(off, 5000);
    ASSERT_EQ(pstate_count(u), pstate_count(t));
    for (int64_t pid = 1000; pid < 1003; pid++)
        same_entry(t, u, pid);
    same_entry(t, u, 77);
    same_entry(t, u, 1LL << 50);
    /* LRU order survives: with room for two, the two most recently used stay */
    struct pstate *v = table(2, DAY);
    ASSERT_EQ(pstate_decode(v, snap, len, T0 + 2000, &off), 0);
    ASSERT_EQ(pstate_count(v), 2);
    ASSERT(pstate_get(v, 1LL << 50, NULL, NULL, NULL, NULL));
    ASSERT(pstate_get(v, 77, NULL, NULL, NULL, NULL));
    /* expired entries are left out when loading */
    struct pstate *w = table(100, 1000);
    ASSERT_EQ(pstate_decode(w, snap, len, T0 + 1099, &off), 0);
    ASSERT_EQ(pstate_count(w), 2); /* 77 (last at T0+108) and the wrapping one */
    /* an empty table encodes to header + CRC and decodes to an empty table */
    struct pstate *e = table(5, DAY);
    mem_free(snap);
    snap = pstate_encode(e, 7, T0, &len);
    ASSERT_EQ(len, PSTATE_HEADER_BYTES + 4);
    ASSERT_EQ(pstate_decode(e, snap, len, T0, &off), 0);
    ASSERT_EQ(off, 7);
    ASSERT_EQ(pstate_count(e), 0);
    mem_free(snap);
    pstate_free(e);
    pstate_free(w);
    pstate_free(v);
    pstate_free(u);
    pstate_free(t);
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* Applies a change to a copy of snap, fixes the CRC, and expects the decode to fail. */
static void rejects(const uint8_t *snap, size_t len, size_t at, uint64_t v, int n)
{
    uint8_t *c = mem_dup(snap, len);
    put_be(c + at, v, n);
    put_be(c + len - 4, crc32c(0, c, len - 4), 4);
    struct pstate *t = table(100, DAY);
    int64_t off;
    if (pstate_decode(t, c, len, T0, &off) != -ERR_CORRUPT)
        test_fail(__FILE__, __LINE__, "accepted a snapshot with %d bytes at %zu set to %llu", n, at,
                  (unsigned long long)v);
    ASSERT_EQ(pstate_count(t), 0);
    pstate_free(t);
    mem_free(c);
}

TEST(producer_state_snapshot_rejects_torn_flipped_and_implausible_bytes)
{
    struct pstate *t = table(10, DAY);
    put(t, 9, 1, 0, 3, 10, T0);
    put(t, 9, 1, 3, 3, 20, T0);
    put(t, 11, 0, 0, 1, 30, T0);
    size_t len;
    uint8_t *snap = pstate_encode(t, 31, T0, &len);
    struct pstate *u = table(10, DAY);
    int64_t off;
    ASSERT_EQ(pstate_decode(u, snap, len, T0, &off), 0);
    pstate_free(u);
    /* every truncation and every flipped byte */
    for (size_t n = 0; n < len; n++) {
        u = table(10, DAY);
        ASSERT_EQ(pstate_decode(u, snap, n, T0, &off), -ERR_CORRUPT);
        pstate_free(u);
    }
    for (size_t i = 0; i < len; i++) {
        uint8_t *c = mem_dup(snap, len);
        c[i] ^= 0xff;
        u = table(10, DAY);
        ASSERT_EQ(pstate_decode(u, c, len, T0, &off), -ERR_CORRUPT);
        ASSERT_EQ(pstate_count(u), 0);
        pstate_free(u);
        mem_free(c);
    }
    /* a valid CRC over implausible content */
    size_t e0 = PSTATE_HEADER_BYTES, e1 = e0 + PSTATE_ENTRY_BYTES;
    rejects(snap, len, 4, 2, 2);                  /* version */
    rejects(snap, len, 6, 1, 2);                  /* reserved */
    rejects(snap, len, 8, 30, 8);                 /* offset below a kept batch */
    rejects(snap, len, 16, 3, 4);                 /* count vs length */
    rejects(snap, len, e0, (uint64_t)-1, 8);      /* producer id */
    rejects(snap, len, e0 + 16, 0xffff, 2);       /* epoch */
    rejects(snap, len, e0 + 18, 0, 1);            /* no batch */
    rejects(snap, len, e0 + 18, 6, 1);            /* six batches */
    rejects(snap, len, e0 + 19, 1, 1);            /* reserved */
    rejects(snap, len, e0 + 18, 1, 1);            /* n = 1 but slot 2 in use */
    rejects(snap, len, e0 + 24, (uint64_t)-5, 4); /* first sequence */
    rejects(snap, len, e0 + 24 + 32 + 8, 12, 8);  /* batches overlap */
    rejects(snap, len, e0 + 24 + 8, 13, 8);       /* first offset after last */
    rejects(snap, len, e1, 9, 8);                 /* the same producer twice */
    mem_free(snap);
    pstate_free(t);
}
