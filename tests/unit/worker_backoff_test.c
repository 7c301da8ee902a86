/* The worker's pure pieces: durations and retry schedules (base/duration, task/backoff). */
#include "base/duration.h"
#include "task/backoff.h"
#include "test.h"

static int64_t dur(const char *s, const char *bare)
{
    int64_t ms = -2;
    if (duration_parse_ms(s, strlen(s), bare, &ms) != 0)
        return -1;
    return ms;
}

TEST(worker_duration_parses_units_and_fractions)
{
    ASSERT_EQ(dur("100ms", NULL), 100);
    ASSERT_EQ(dur("1s", NULL), 1000);
    ASSERT_EQ(dur("1.5s", NULL), 1500);
    ASSERT_EQ(dur("0.0015s", NULL), 2); /* rounded to the nearest ms */
    ASSERT_EQ(dur("5m", NULL), 300000);
    ASSERT_EQ(dur("2h", NULL), 7200000);
    ASSERT_EQ(dur("1d", NULL), 86400000);
    ASSERT_EQ(dur(".5s", NULL), 500);
    ASSERT_EQ(dur("0s", NULL), 0);
    ASSERT_EQ(dur("30", "s"), 30000);
    ASSERT_EQ(dur("2.5", "s"), 2500);
    ASSERT_EQ(dur("365d", NULL), DURATION_MAX_MS);
}

TEST(worker_duration_refuses_junk)
{
    const char *bad[] = {"",
                         "s",
                         "1",
                         "1x",
                         "1 s",
                         "-1s",
                         "1.s",
                         "1..5s",
                         "1e3s",
                         "0x1s",
                         "inf",
                         "366d",
                         "99999999999999999999s",
                         "1sms",
                         "ms"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (dur(bad[i], NULL) != -1)
            test_fail(__FILE__, __LINE__, "'%s' was accepted", bad[i]);
    }
    ASSERT_EQ(dur("1", NULL), -1);
    ASSERT_EQ(dur("1", "parsecs"), -1);
}

TEST(worker_duration_formats_shortest_exact_form)
{
    char buf[32];
    ASSERT_STREQ(duration_format(300000, buf, sizeof(buf)), "5m");
    ASSERT_STREQ(duration_format(1500, buf, sizeof(buf)), "1.5s");
    ASSERT_STREQ(duration_format(1050, buf, sizeof(buf)), "1.05s");
    ASSERT_STREQ(duration_format(100, buf, sizeof(buf)), "100ms");
    ASSERT_STREQ(duration_format(0, buf, sizeof(buf)), "0ms");
    ASSERT_STREQ(duration_format(86400000, buf, sizeof(buf)), "1d");
}

TEST(worker_backoff_parses_the_issue_example_and_defaults)
{
    struct backoff b;
    char err[256];
    ASSERT_EQ(backoff_parse("1s,2x,max=5m", &b, err, sizeof(err)), 0);
    ASSERT_EQ(b.first_ms, 1000);
    ASSERT(b.factor == 2.0);
    ASSERT_EQ(b.max_ms, 300000);
    ASSERT(b.jitter == 0.2);
    ASSERT_EQ(backoff_parse("jitter=10%,max=1s,100ms,1.5x", &b, err, sizeof(err)), 0);
    ASSERT_EQ(b.first_ms, 100);
    ASSERT(b.factor == 1.5);
    ASSERT_EQ(b.max_ms, 1000);
    ASSERT(b.jitter > 0.0999 && b.jitter < 0.1001);
    /* only a first delay: the default cap does not undercut it */
    ASSERT_EQ(backoff_parse("10m", &b, err, sizeof(err)), 0);
    ASSERT_EQ(b.first_ms, 600000);
    ASSERT_EQ(b.max_ms, 600000);
    char out[64];
    ASSERT_EQ(backoff_parse("100ms,2x,max=1s,jitter=0", &b, err, sizeof(err)), 0);
    ASSERT_STREQ(backoff_format(&b, out, sizeof(out)), "100ms,2x,max=1s,jitter=0");
}

TEST(worker_backoff_refuses_bad_specs_in_words)
{
    const char *bad[] = {
        "",          "1s,",        ",1s",         "1s,2x,2x",       "0s",        "1s,0.5x", "1s,x",
        "1s,max=0s", "1s,max=abc", "1s,jitter=2", "1s,jitter=101%", "2m,max=1m", "fast",    "1s,2y",
        "1s;2x",     "1s,1001x",   "1s,1s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct backoff b;
        char err[256] = "";
        if (backoff_parse(bad[i], &b, err, sizeof(err)) != -1)
            test_fail(__FILE__, __LINE__, "'%s' was accepted", bad[i]);
        if (!err[0])
            test_fail(__FILE__, __LINE__, "'%s': no reason given", bad[i]);
    }
}

TEST(worker_backoff_grows_and_caps)
{
    struct backoff b;
    char err[256];
    ASSERT_EQ(backoff_parse("100ms,2x,max=1s", &b, err, sizeof(err)), 0);
    int64_t want[] = {100, 200, 400, 800, 1000, 1000, 1000};
    for (int n = 1; n <= 7; n++)
        ASSERT_EQ(backoff_base_ms(&b, n), want[n - 1]);
    ASSERT_EQ(backoff_base_ms(&b, 0), 100);
    ASSERT_EQ(backoff_base_ms(&b, 1000000), 1000); /* factor^n overflows to inf: capped */
    ASSERT_EQ(backoff_parse("1s,1x", &b, err, sizeof(err)), 0);
    ASSERT_EQ(backoff_base_ms(&b, 50), 1000);
}

TEST(worker_backoff_jitter_stays_within_bounds)
{
    struct backoff b;
    char err[256];
    ASSERT_EQ(backoff_parse("1s,2x,max=5m,jitter=0.25", &b, err, sizeof(err)), 0);
    for (int n = 1; n <= 12; n++) {
        int64_t base = backoff_base_ms(&b, n);
        ASSERT_EQ(backoff_delay_ms(&b, n, 0.0), base); /* no jitter drawn: the full delay */
        for (int i = 0; i <= 1000; i++) {
            double u = i / 1000.0; /* includes 1.0, which is clamped below 1 */
            int64_t d = backoff_delay_ms(&b, n, u);
            ASSERT_CMP(d, <=, base);
            ASSERT_CMP((double)d, >, base * 0.75 - 1);
        }
    }
    /* out-of-range draws are clamped, never produce a delay outside the bounds */
    ASSERT_EQ(backoff_delay_ms(&b, 1, -5), 1000);
    ASSERT_CMP(backoff_delay_ms(&b, 1, 7), >=, 750);
    ASSERT_EQ(backoff_parse("1ms,jitter=1", &b, err, sizeof(err)), 0);
    ASSERT_EQ(backoff_delay_ms(&b, 1, 0.999), 1); /* never below 1 ms */
}
