#include "base/duration.h"

#include <stdio.h>
#include <string.h>

static int unit_ms(const char *u, size_t len, int64_t *out)
{
    static const struct {
        const char *name;
        int64_t ms;
    } units[] = {
        {"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", 3600 * 1000}, {"d", 24 * 3600 * 1000},
    };
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strlen(units[i].name) == len && memcmp(units[i].name, u, len) == 0) {
            *out = units[i].ms;
            return 0;
        }
    }
    return -1;
}

int duration_parse_ms(const char *s, size_t len, const char *bare_unit, int64_t *out_ms)
{
    size_t i = 0;
    /* Integer and fraction parts as exact integers: no strtod, no locale. Up to 15 digits
     * each, which keeps every intermediate product exact in 64 bits. */
    int64_t whole = 0, frac = 0, frac_scale = 1;
    size_t int_digits = 0, frac_digits = 0;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, int_digits++) {
        if (int_digits >= 15)
            return -1;
        whole = whole * 10 + (s[i] - '0');
    }
    if (i < len && s[i] == '.') {
        i++;
        for (; i < len && s[i] >= '0' && s[i] <= '9'; i++, frac_digits++) {
            if (frac_digits >= 9)
                return -1;
            frac = frac * 10 + (s[i] - '0');
            frac_scale *= 10;
        }
        if (frac_digits == 0)
            return -1;
    }
    if (int_digits == 0 && frac_digits == 0)
        return -1;
    int64_t mult;
    if (i == len) {
        if (!bare_unit || unit_ms(bare_unit, strlen(bare_unit), &mult) != 0)
            return -1;
    } else if (unit_ms(s + i, len - i, &mult) != 0) {
        return -1;
    }
    if (whole > DURATION_MAX_MS / mult)
        return -1;
    /* frac/frac_scale * mult, rounded to the nearest millisecond */
    int64_t ms = whole * mult + (frac * mult + frac_scale / 2) / frac_scale;
    if (ms > DURATION_MAX_MS)
        return -1;
    *out_ms = ms;
    return 0;
}

const char *duration_format(int64_t ms, char *buf, size_t cap)
{
    static const struct {
        const char *name;
        int64_t ms;
    } units[] = {{"d", 24 * 3600 * 1000}, {"h", 3600 * 1000}, {"m", 60 * 1000}, {"s", 1000}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (ms >= units[i].ms && ms % units[i].ms == 0) {
            snprintf(buf, cap, "%lld%s", (long long)(ms / units[i].ms), units[i].name);
            return buf;
        }
    }
    if (ms >= 1000) {
        /* seconds with as many decimals as needed (at most 3) */
        int64_t frac = ms % 1000;
        int digits = 3;
        while (frac % 10 == 0) {
            frac /= 10;
            digits--;
        }
        snprintf(buf, cap, "%lld.%0*llds", (long long)(ms / 1000), digits, (long long)frac);
        return buf;
    }
    snprintf(buf, cap, "%lldms", (long long)ms);
    return buf;
}
