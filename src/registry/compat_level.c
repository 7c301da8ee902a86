#include "registry/compat_level.h"

#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include "base/errors.h"
#include "base/mem.h"
#include "base/strbuf.h"

static const char *const names[COMPAT_LEVEL_COUNT] = {
    [COMPAT_NONE] = "NONE",
    [COMPAT_BACKWARD] = "BACKWARD",
    [COMPAT_BACKWARD_TRANSITIVE] = "BACKWARD_TRANSITIVE",
    [COMPAT_FORWARD] = "FORWARD",
    [COMPAT_FORWARD_TRANSITIVE] = "FORWARD_TRANSITIVE",
    [COMPAT_FULL] = "FULL",
    [COMPAT_FULL_TRANSITIVE] = "FULL_TRANSITIVE",
};

int compat_level_parse(const char *s, size_t len, enum compat_level *out)
{
    for (int i = 0; i < COMPAT_LEVEL_COUNT; i++) {
        size_t n = strlen(names[i]);
        if (n == len && strncasecmp(s, names[i], len) == 0) {
            *out = (enum compat_level)i;
            return 0;
        }
    }
    return -ERR_INVALID;
}

const char *compat_level_name(enum compat_level level)
{
    if ((unsigned)level >= COMPAT_LEVEL_COUNT)
        return "?";
    return names[level];
}

bool compat_level_transitive(enum compat_level level)
{
    return level == COMPAT_BACKWARD_TRANSITIVE || level == COMPAT_FORWARD_TRANSITIVE ||
           level == COMPAT_FULL_TRANSITIVE;
}

bool compat_level_backward(enum compat_level level)
{
    return level == COMPAT_BACKWARD || level == COMPAT_BACKWARD_TRANSITIVE ||
           level == COMPAT_FULL || level == COMPAT_FULL_TRANSITIVE;
}

bool compat_level_forward(enum compat_level level)
{
    return level == COMPAT_FORWARD || level == COMPAT_FORWARD_TRANSITIVE || level == COMPAT_FULL ||
           level == COMPAT_FULL_TRANSITIVE;
}

void compat_reasons_init(struct compat_reasons *r)
{
    r->items = NULL;
    r->n = 0;
    r->cap = 0;
}

void compat_reasons_add(struct compat_reasons *r, const char *fmt, ...)
{
    if (!r)
        return;
    struct strbuf sb;
    strbuf_init(&sb);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    MEM_GROW(r->items, r->cap, r->n + 1);
    r->items[r->n++] = sb.p ? sb.p : mem_strdup(""); /* the list takes the buffer */
}

void compat_reasons_free(struct compat_reasons *r)
{
    for (size_t i = 0; i < r->n; i++)
        mem_free(r->items[i]);
    mem_free(r->items);
    compat_reasons_init(r);
}

/* One earlier version against the new schema, in the level's directions. */
static bool check_one(enum compat_level level, const void *new_schema, const void *old,
                      compat_can_read_fn can_read, void *data, struct compat_reasons *reasons)
{
    bool ok = true;
    if (compat_level_forward(level))
        ok = can_read(old, new_schema, "old", "new", reasons, data) && ok;
    if (compat_level_backward(level))
        ok = can_read(new_schema, old, "new", "old", reasons, data) && ok;
    return ok;
}

bool compat_check(enum compat_level level, const void *new_schema, const void *const *earlier,
                  size_t n_earlier, compat_can_read_fn can_read, void *data,
                  struct compat_reasons *reasons, size_t *failed_at)
{
    if (level == COMPAT_NONE || n_earlier == 0)
        return true;
    size_t stop = compat_level_transitive(level) ? 0 : n_earlier - 1;
    for (size_t i = n_earlier; i-- > stop;) {
        if (!check_one(level, new_schema, earlier[i], can_read, data, reasons)) {
            if (failed_at)
                *failed_at = i;
            return false;
        }
    }
    return true;
}
