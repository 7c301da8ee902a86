#include "task/jobenv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/base64.h"
#include "base/mem.h"

void jobenv_init(struct jobenv *e)
{
    memset(e, 0, sizeof(*e));
}

void jobenv_free(struct jobenv *e)
{
    for (size_t i = 0; i < e->len; i++)
        mem_free(e->vars[i]);
    mem_free(e->vars);
    memset(e, 0, sizeof(*e));
}


static bool is_name(const char *var, const char *name, size_t name_len)
{
    return strncmp(var, name, name_len) == 0 && var[name_len] == '=';
}

/* Removes the entry named name or name_B64; returns the value length it had, or 0. */
static size_t unset(struct jobenv *e, const char *name, bool *was_header)
{
    size_t n = strlen(name);
    char b64[JOBENV_HNAME_MAX + 32];
    int bn = snprintf(b64, sizeof(b64), "%s_B64", name);
    for (size_t i = 0; i < e->len; i++) {
        char *v = e->vars[i];
        bool hit = is_name(v, name, n) ||
                   (bn > 0 && (size_t)bn < sizeof(b64) && is_name(v, b64, (size_t)bn));
        if (!hit)
            continue;
        size_t vlen = strlen(strchr(v, '=') + 1);
        *was_header = strncmp(v, JOBENV_HEADER_PREFIX, strlen(JOBENV_HEADER_PREFIX)) == 0;
        mem_free(v);
        e->vars[i] = e->vars[--e->len];
        return vlen;
    }
    *was_header = false;
    return 0;
}

/* Appends "name=value" or "name_B64=base64(value)"; returns the stored value length. */
static size_t put(struct jobenv *e, const char *name, const void *value, size_t len)
{
    size_t n = strlen(name);
    bool binary = len > 0 && memchr(value, '\0', len) != NULL;
    size_t vlen = binary ? B64_ENCODED_LEN(len) : len;
    char *s = mem_alloc(n + (binary ? 4 : 0) + 1 + vlen + 1);
    memcpy(s, name, n);
    size_t o = n;
    if (binary) {
        memcpy(s + o, "_B64", 4);
        o += 4;
    }
    s[o++] = '=';
    if (binary) {
        b64_encode(value, len, s + o, B64_ENCODED_LEN(len) + 1);
    } else {
        if (len)
            memcpy(s + o, value, len);
        s[o + len] = '\0';
    }
    MEM_GROW(e->vars, e->cap, e->len + 1);
    e->vars[e->len++] = s;
    return vlen;
}

bool jobenv_set(struct jobenv *e, const char *name, const void *value, size_t len)
{
    if (len > JOBENV_VALUE_MAX)
        return false;
    bool was_header;
    size_t old = unset(e, name, &was_header);
    if (was_header) {
        e->header_vars--;
        e->header_bytes -= old;
    }
    put(e, name, value, len);
    return true;
}

void jobenv_setf(struct jobenv *e, const char *name, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof(buf))
        n = (int)sizeof(buf) - 1;
    jobenv_set(e, name, buf, (size_t)n);
}

size_t jobenv_header_name(const char *name, size_t len, char *out, size_t cap)
{
    size_t plen = strlen(JOBENV_HEADER_PREFIX);
    if (len == 0 || len > JOBENV_HNAME_MAX || plen + len + 1 > cap)
        return 0;
    memcpy(out, JOBENV_HEADER_PREFIX, plen);
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (c >= 'a' && c <= 'z')
            c = (char)(c - 'a' + 'A');
        else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            c = '_';
        out[plen + i] = c;
    }
    out[plen + len] = '\0';
    return plen + len;
}

bool jobenv_add_header(struct jobenv *e, const char *name, size_t name_len, const void *value,
                       size_t value_len)
{
    char var[JOBENV_HNAME_MAX + 16];
    if (!value)
        value_len = 0;
    if (value_len > JOBENV_HVALUE_MAX || !jobenv_header_name(name, name_len, var, sizeof(var))) {
        e->dropped++;
        return false;
    }
    bool binary = value_len > 0 && memchr(value, '\0', value_len) != NULL;
    size_t stored = binary ? B64_ENCODED_LEN(value_len) : value_len;
    bool was_header;
    size_t old = unset(e, var, &was_header);
    if (was_header) {
        /* the later header replaces the earlier one: its budget is freed first */
        e->header_vars--;
        e->header_bytes -= old;
    }
    if (e->header_vars >= JOBENV_HEADERS_MAX || e->header_bytes + stored > JOBENV_HBYTES_MAX) {
        e->dropped++;
        return false;
    }
    put(e, var, value, value_len);
    e->header_vars++;
    e->header_bytes += stored;
    return true;
}

char **jobenv_envp(const struct jobenv *e, char *const *base)
{
    size_t nbase = 0;
    while (base && base[nbase])
        nbase++;
    char **envp = mem_calloc(nbase + e->len + 1, sizeof(*envp));
    for (size_t i = 0; i < nbase; i++)
        envp[i] = base[i];
    for (size_t i = 0; i < e->len; i++)
        envp[nbase + i] = e->vars[i];
    envp[nbase + e->len] = NULL;
    return envp;
}
