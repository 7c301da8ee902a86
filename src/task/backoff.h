/* Retry schedules: exponential backoff with jitter, parsed from a short spec.
 *
 *   SPEC  := ITEM ("," ITEM)*
 *   ITEM  := DURATION          the first delay (default 1s)
 *          | NUMBER "x"        the factor between one delay and the next, >= 1 (default 2x;
 *                              1x gives a constant delay)
 *          | "max=" DURATION   the cap on any delay (default 5m)
 *          | "jitter=" NUMBER ["%"]   the fraction of each delay that is random, in [0, 1]
 *                              (or 0%..100%; default 0.2)
 *
 * DURATION is base/duration.h's ("100ms", "1.5s", "5m"). Each item at most once, in any order;
 * items left out take their defaults. Example: "1s,2x,max=5m".
 *
 * The delay after failed attempt n (n >= 1) is
 *
 *   base(n)  = min(max, first * factor^(n-1))
 *   delay(n) = base(n) * (1 - jitter * u),  u uniform in [0, 1)
 *
 * so every delay lies in (base(n) * (1 - jitter), base(n)]: jitter only ever shortens a delay,
 * and max is a true upper bound. Pure: the caller supplies u.
 */
#ifndef SP_TASK_BACKOFF_H
#define SP_TASK_BACKOFF_H

#include <stddef.h>
#include <stdint.h>

struct backoff {
    int64_t first_ms; /* delay after the first failure, > 0 */
    double factor;    /* growth per failure, in [1, 1000] */
    int64_t max_ms;   /* cap on every delay, >= first_ms */
    double jitter;    /* random share of each delay, in [0, 1] */
};

#define BACKOFF_DEFAULT_SPEC "1s,2x,max=5m,jitter=0.2"

/* Parses spec into *out. Returns 0, or -1 with a one-line reason in err (NUL-terminated). */
int backoff_parse(const char *spec, struct backoff *out, char *err, size_t err_cap);

/* base(n) above, for n >= 1 (n < 1 counts as 1); never overflows. */
int64_t backoff_base_ms(const struct backoff *b, int attempt);

/* delay(n) above; u is clamped into [0, 1). The result is >= 1 ms. */
int64_t backoff_delay_ms(const struct backoff *b, int attempt, double u);

/* The spec in canonical form ("1s,2x,max=5m,jitter=0.2") into buf. Returns buf. */
const char *backoff_format(const struct backoff *b, char *buf, size_t cap);

#endif
