#include "task/traceparent.h"

#include <stdio.h>
#include <string.h>

static bool lower_hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static bool all_zero(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return false;
    return true;
}

bool traceparent_parse(const char *s, size_t len, struct traceparent *out)
{
    if (len < TRACEPARENT_LEN || s[2] != '-' || s[35] != '-' || s[52] != '-')
        return false;
    if (!lower_hex(s, 2) || !lower_hex(s + 3, 32) || !lower_hex(s + 36, 16) ||
        !lower_hex(s + 53, 2))
        return false;
    if (memcmp(s, "ff", 2) == 0 || all_zero(s + 3, 32) || all_zero(s + 36, 16))
        return false;
    if (memcmp(s, "00", 2) == 0 ? len != TRACEPARENT_LEN
                                : len > TRACEPARENT_LEN && s[TRACEPARENT_LEN] != '-')
        return false;
    memcpy(out->version, s, 2);
    out->version[2] = '\0';
    memcpy(out->trace_id, s + 3, 32);
    out->trace_id[32] = '\0';
    memcpy(out->parent_id, s + 36, 16);
    out->parent_id[16] = '\0';
    memcpy(out->flags, s + 53, 2);
    out->flags[2] = '\0';
    return true;
}

void traceparent_child(const struct traceparent *tp, const uint8_t span_id[8],
                       char out[TRACEPARENT_LEN + 1])
{
    uint8_t id[8];
    memcpy(id, span_id, 8);
    bool zero = true;
    for (int i = 0; i < 8; i++)
        zero = zero && id[i] == 0;
    if (zero)
        id[7] = 1;
    char span[17];
    for (int i = 0; i < 8; i++)
        snprintf(span + 2 * i, 3, "%02x", id[i]);
    snprintf(out, TRACEPARENT_LEN + 1, "00-%s-%s-%s", tp->trace_id, span, tp->flags);
}
