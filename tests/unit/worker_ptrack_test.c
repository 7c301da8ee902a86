/* task/ptrack: which records a worker may start, and how far it may commit. */
#include "base/mem.h"
#include "task/ptrack.h"
#include "test.h"

struct rec {
    struct ptrack_rec r;
    char key[8];
};

static struct rec *add(struct ptrack *pt, int64_t off, const char *key, int64_t due)
{
    struct rec *x = mem_calloc(1, sizeof(*x));
    x->r.offset = off;
    x->r.due_ms = due;
    if (key) {
        snprintf(x->key, sizeof(x->key), "%s", key);
        x->r.key = x->key;
        x->r.key_len = strlen(key);
    }
    ptrack_add(pt, &x->r);
    ptrack_check(pt);
    return x;
}

static int64_t next_off(struct ptrack *pt, int64_t now)
{
    int64_t wake = INT64_MAX;
    struct ptrack_rec *r = ptrack_next(pt, now, &wake);
    return r ? r->offset : -1;
}

static void start(struct ptrack *pt, int64_t now, int64_t want)
{
    int64_t wake = INT64_MAX;
    struct ptrack_rec *r = ptrack_next(pt, now, &wake);
    if (!r)
        test_fail(__FILE__, __LINE__, "nothing to start, wanted offset %lld", (long long)want);
    ASSERT_EQ(r->offset, want);
    ptrack_set_state(pt, r, PTRACK_RUNNING);
    ptrack_check(pt);
}

static void pop_all(struct ptrack *pt)
{
    struct ptrack_rec *r;
    while ((r = ptrack_pop_done(pt)))
        mem_free(r);
    ptrack_check(pt);
}

TEST(worker_ptrack_partition_order_runs_one_at_a_time_and_commits_in_order)
{
    struct ptrack pt;
    ptrack_init(&pt, PTRACK_ORDER_PARTITION);
    ASSERT_EQ(ptrack_commit_offset(&pt), -1);
    struct rec *a = add(&pt, 10, "k", 0), *b = add(&pt, 11, "j", 0), *c = add(&pt, 14, NULL, 0);
    start(&pt, 0, 10);
    ASSERT_EQ(next_off(&pt, 0), -1);               /* one in flight per partition */
    ptrack_set_state(&pt, &a->r, PTRACK_SETTLING); /* failed, its retry copy being written */
    start(&pt, 0, 11);                             /* the next one need not wait for that */
    ptrack_set_state(&pt, &b->r, PTRACK_DONE);
    pop_all(&pt);
    ASSERT_EQ(ptrack_commit_offset(&pt), 10); /* 11 is done, but 10 is not yet */
    ptrack_set_state(&pt, &a->r, PTRACK_DONE);
    pop_all(&pt);
    ASSERT_EQ(ptrack_commit_offset(&pt), 14); /* the gap 12..13 is skipped */
    start(&pt, 0, 14);
    ptrack_set_state(&pt, &c->r, PTRACK_DONE);
    pop_all(&pt);
    ASSERT_EQ(ptrack_commit_offset(&pt), 15);
    ASSERT_EQ(ptrack_count(&pt), 0);
    ptrack_destroy(&pt);
}

TEST(worker_ptrack_abandoned_run_goes_back_and_holds_the_commit)
{
    struct ptrack pt;
    ptrack_init(&pt, PTRACK_ORDER_NONE);
    struct rec *a = add(&pt, 0, NULL, 0), *b = add(&pt, 1, NULL, 0);
    start(&pt, 0, 0);
    start(&pt, 0, 1);
    ptrack_set_state(&pt, &b->r, PTRACK_DONE);
    ptrack_set_state(&pt, &a->r, PTRACK_WAITING); /* killed: must run again */
    pop_all(&pt);
    ASSERT_EQ(ptrack_commit_offset(&pt), 0);
    start(&pt, 0, 0);
    ptrack_set_state(&pt, &a->r, PTRACK_DONE);
    pop_all(&pt);
    ASSERT_EQ(ptrack_commit_offset(&pt), 2);
    ptrack_destroy(&pt);
}

TEST(worker_ptrack_key_order_parallel_across_keys_serial_within)
{
    struct ptrack pt;
    ptrack_init(&pt, PTRACK_ORDER_KEY);
    struct rec *a1 = add(&pt, 0, "a", 0);
    add(&pt, 1, "a", 0);
    struct rec *b1 = add(&pt, 2, "b", 0);
    add(&pt, 3, NULL, 0);
    add(&pt, 4, NULL, 0);
    add(&pt, 5, "b", 0);
    add(&pt, 6, "c", 0);
    start(&pt, 0, 0); /* a */
    start(&pt, 0, 2); /* b: not behind a */
    start(&pt, 0, 3); /* keyless records never wait */
    start(&pt, 0, 4);
    start(&pt, 0, 6);                /* c */
    ASSERT_EQ(next_off(&pt, 0), -1); /* 1 waits for a@0, 5 for b@2 */
    ptrack_set_state(&pt, &b1->r, PTRACK_DONE);
    start(&pt, 0, 5);
    ptrack_set_state(&pt, &a1->r, PTRACK_SETTLING);
    start(&pt, 0, 1);
    ptrack_destroy(&pt);
    /* the records are leaked on purpose: the test process ends */
}

TEST(worker_ptrack_due_times_hold_records_without_blocking_others)
{
    struct ptrack pt;
    ptrack_init(&pt, PTRACK_ORDER_NONE);
    add(&pt, 0, NULL, 500);
    add(&pt, 1, NULL, 100);
    add(&pt, 2, NULL, 300);
    int64_t wake = INT64_MAX;
    ASSERT(ptrack_next(&pt, 50, &wake) == NULL);
    ASSERT_EQ(wake, 100);
    /* nothing changed: the cached answer, with the same wake-up time */
    wake = INT64_MAX;
    ASSERT(ptrack_next(&pt, 60, &wake) == NULL);
    ASSERT_EQ(wake, 100);
    start(&pt, 100, 1);
    wake = INT64_MAX;
    ASSERT(ptrack_next(&pt, 100, &wake) == NULL);
    ASSERT_EQ(wake, 300);
    start(&pt, 450, 2);
    start(&pt, 500, 0);
    ASSERT_EQ(ptrack_commit_offset(&pt), 0);
    ptrack_destroy(&pt);
}

TEST(worker_ptrack_partition_order_waits_for_due_head)
{
    struct ptrack pt;
    ptrack_init(&pt, PTRACK_ORDER_PARTITION);
    add(&pt, 0, NULL, 200);
    add(&pt, 1, NULL, 0);
    int64_t wake = INT64_MAX;
    ASSERT(ptrack_next(&pt, 0, &wake) == NULL); /* 1 may not overtake 0 */
    ASSERT_EQ(wake, 200);
    start(&pt, 200, 0);
    ptrack_destroy(&pt);
}

TEST(worker_ptrack_random_walk_keeps_invariants)
{
    /* random adds, starts and completions in every order; the commit offset never goes back
     * and never passes a record that is not done */
    for (int order = 0; order < 3; order++) {
        struct ptrack pt;
        ptrack_init(&pt, (enum ptrack_order)order);
        struct rec *live[256];
        size_t n_live = 0;
        int64_t next_offset = 0, last_commit = -1;
        uint64_t seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(order + 1);
        for (int step = 0; step < 20000; step++) {
            seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
            unsigned op = (unsigned)(seed >> 33) % 4;
            if (op == 0 && n_live < 256) {
                next_offset += 1 + (int64_t)((seed >> 20) % 3);
                char k[2] = {(char)('a' + (seed >> 40) % 4), 0};
                live[n_live++] = add(&pt, next_offset, (seed >> 50) % 5 ? k : NULL, 0);
            } else if (op == 1) {
                int64_t wake = INT64_MAX;
                struct ptrack_rec *r = ptrack_next(&pt, 0, &wake);
                if (r)
                    ptrack_set_state(&pt, r, PTRACK_RUNNING);
            } else if (n_live > 0) {
                struct rec *x = live[(seed >> 24) % n_live];
                if (x->r.state == PTRACK_RUNNING)
                    ptrack_set_state(&pt, &x->r, op == 2 ? PTRACK_DONE : PTRACK_SETTLING);
                else if (x->r.state == PTRACK_SETTLING)
                    ptrack_set_state(&pt, &x->r, PTRACK_DONE);
            }
            struct ptrack_rec *r;
            while ((r = ptrack_pop_done(&pt))) {
                for (size_t i = 0; i < n_live; i++) {
                    if (&live[i]->r == r) {
                        live[i] = live[--n_live];
                        break;
                    }
                }
                mem_free(r);
            }
            ptrack_check(&pt);
            int64_t c = ptrack_commit_offset(&pt);
            ASSERT_CMP(c, >=, last_commit);
            for (size_t i = 0; i < n_live; i++)
                if (live[i]->r.state != PTRACK_DONE)
                    ASSERT_CMP(c, <=, live[i]->r.offset);
            last_commit = c;
            /* order: never two RUNNING with the same key (KEY) or two at all (PARTITION) */
            if (order == PTRACK_ORDER_PARTITION)
                ASSERT_CMP(pt.running, <=, 1);
            if (order == PTRACK_ORDER_KEY) {
                for (struct ptrack_rec *p = pt.head; p; p = p->next)
                    for (struct ptrack_rec *q = p->next; q; q = q->next)
                        if (p->state == PTRACK_RUNNING && q->state == PTRACK_RUNNING && p->key &&
                            q->key && p->key_len == q->key_len &&
                            !memcmp(p->key, q->key, p->key_len))
                            test_fail(__FILE__, __LINE__, "same key running twice");
            }
        }
        ptrack_destroy(&pt);
    }
}
