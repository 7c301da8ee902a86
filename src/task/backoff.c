#include "task/backoff.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/duration.h"

/* A decimal number (digits, optionally '.' digits) that fills s[0..len). No strtod, so no
 * locale and no "inf"/"nan"/hex surprises. */
static int parse_number(const char *s, size_t len, double *out)
{
    double v = 0, scale = 1;
    bool dot = false;
    size_t digits = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.' && !dot) {
            dot = true;
        } else if (s[i] >= '0' && s[i] <= '9' && digits < 15) {
            digits++;
            if (dot) {
                scale /= 10;
                v += (s[i] - '0') * scale;
            } else {
                v = v * 10 + (s[i] - '0');
            }
        } else {
            return -1;
        }
    }
    if (digits == 0)
        return -1;
    *out = v;
    return 0;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);
    return len >= n && memcmp(s, prefix, n) == 0;
}

/* One comma-separated item into *b; seen[] flags first/factor/max/jitter given. */
static int parse_item(const char *s, size_t len, struct backoff *b, bool seen[4], char *err,
                      size_t err_cap)
{
    int which;
    if (len == 0) {
        snprintf(err, err_cap, "empty item");
        return -1;
    }
    if (has_prefix(s, len, "max=")) {
        which = 2;
        if (duration_parse_ms(s + 4, len - 4, NULL, &b->max_ms) != 0 || b->max_ms <= 0) {
            snprintf(err, err_cap, "max=%.*s: not a duration such as 5m or 30s", (int)(len - 4),
                     s + 4);
            return -1;
        }
    } else if (has_prefix(s, len, "jitter=")) {
        which = 3;
        const char *v = s + 7;
        size_t vlen = len - 7;
        bool pct = vlen > 0 && v[vlen - 1] == '%';
        double j;
        if (parse_number(v, pct ? vlen - 1 : vlen, &j) != 0 || (pct ? j > 100 : j > 1)) {
            snprintf(err, err_cap, "jitter=%.*s: not a fraction in [0, 1] or a percentage",
                     (int)vlen, v);
            return -1;
        }
        b->jitter = pct ? j / 100 : j;
    } else if (s[len - 1] == 'x') {
        which = 1;
        if (parse_number(s, len - 1, &b->factor) != 0 || b->factor < 1 || b->factor > 1000) {
            snprintf(err, err_cap, "%.*s: the factor must be a number in [1, 1000] before 'x'",
                     (int)len, s);
            return -1;
        }
    } else {
        which = 0;
        if (duration_parse_ms(s, len, NULL, &b->first_ms) != 0 || b->first_ms <= 0) {
            snprintf(err, err_cap,
                     "'%.*s' is not a delay (such as 500ms or 1s), a factor (2x), max=DURATION "
                     "or jitter=FRACTION",
                     (int)len, s);
            return -1;
        }
    }
    if (seen[which]) {
        static const char *const names[] = {"first delay", "factor", "max", "jitter"};
        snprintf(err, err_cap, "the %s is given twice", names[which]);
        return -1;
    }
    seen[which] = true;
    return 0;
}

int backoff_parse(const char *spec, struct backoff *out, char *err, size_t err_cap)
{
    struct backoff b = {.first_ms = 1000, .factor = 2, .max_ms = 5 * 60 * 1000, .jitter = 0.2};
    bool seen[4] = {false, false, false, false};
    const char *p = spec;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (parse_item(p, len, &b, seen, err, err_cap) != 0)
            return -1;
        if (!comma)
            break;
        p = comma + 1;
    }
    if (b.first_ms > b.max_ms) {
        if (seen[2]) {
            snprintf(err, err_cap, "the first delay (%lld ms) is above max (%lld ms)",
                     (long long)b.first_ms, (long long)b.max_ms);
            return -1;
        }
        b.max_ms = b.first_ms; /* a default max never lowers an explicit first delay */
    }
    *out = b;
    return 0;
}

int64_t backoff_base_ms(const struct backoff *b, int attempt)
{
    if (attempt < 1)
        attempt = 1;
    double d = (double)b->first_ms * pow(b->factor, attempt - 1);
    if (!(d < (double)b->max_ms)) /* also catches inf */
        return b->max_ms;
    return (int64_t)d;
}

int64_t backoff_delay_ms(const struct backoff *b, int attempt, double u)
{
    if (!(u >= 0))
        u = 0;
    if (u >= 1)
        u = nextafter(1.0, 0.0);
    double d = (double)backoff_base_ms(b, attempt) * (1 - b->jitter * u);
    int64_t ms = (int64_t)ceil(d);
    return ms < 1 ? 1 : ms;
}

const char *backoff_format(const struct backoff *b, char *buf, size_t cap)
{
    char first[32], max[32];
    snprintf(buf, cap, "%s,%gx,max=%s,jitter=%g",
             duration_format(b->first_ms, first, sizeof(first)), b->factor,
             duration_format(b->max_ms, max, sizeof(max)), b->jitter);
    return buf;
}
