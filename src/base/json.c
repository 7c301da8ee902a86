#include "base/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"

void json_init(struct json *j, struct strbuf *out)
{
    memset(j, 0, sizeof(*j));
    j->out = out;
}

/* Before any value: the comma between items, and the rule that object members need keys. */
static void before_value(struct json *j)
{
    if (j->depth == 0) {
        CHECK(!j->has_items[0]); /* one top-level value */
        j->has_items[0] = true;
        return;
    }
    if (j->in_object[j->depth]) {
        CHECK(j->key_pending);
        j->key_pending = false;
        return;
    }
    if (j->has_items[j->depth])
        strbuf_putc(j->out, ',');
    j->has_items[j->depth] = true;
}

static void open_container(struct json *j, bool object)
{
    before_value(j);
    CHECK(j->depth + 1 < JSON_DEPTH_MAX);
    j->depth++;
    j->in_object[j->depth] = object;
    j->has_items[j->depth] = false;
    strbuf_putc(j->out, object ? '{' : '[');
}

static void close_container(struct json *j, bool object)
{
    CHECK(j->depth > 0 && j->in_object[j->depth] == object && !j->key_pending);
    j->depth--;
    strbuf_putc(j->out, object ? '}' : ']');
}

void json_obj_begin(struct json *j)
{
    open_container(j, true);
}

void json_obj_end(struct json *j)
{
    close_container(j, true);
}

void json_arr_begin(struct json *j)
{
    open_container(j, false);
}

void json_arr_end(struct json *j)
{
    close_container(j, false);
}

void json_key(struct json *j, const char *key)
{
    CHECK(j->depth > 0 && j->in_object[j->depth] && !j->key_pending);
    if (j->has_items[j->depth])
        strbuf_putc(j->out, ',');
    j->has_items[j->depth] = true;
    json_escape(j->out, key, strlen(key));
    strbuf_putc(j->out, ':');
    j->key_pending = true;
}

void json_escape(struct strbuf *out, const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    strbuf_putc(out, '"');
    size_t i = 0;
    while (i < len) {
        size_t run = i;
        while (run < len && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        if (run > i) {
            strbuf_append(out, p + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = p[i];
        if (c >= 0x80) {
            size_t n = utf8_seq_len(p + i, len - i);
            if (n == 0) {
                strbuf_puts(out, "\\ufffd");
                i++;
            } else {
                strbuf_append(out, p + i, n);
                i += n;
            }
            continue;
        }
        switch (c) {
        case '"':
            strbuf_puts(out, "\\\"");
            break;
        case '\\':
            strbuf_puts(out, "\\\\");
            break;
        case '\n':
            strbuf_puts(out, "\\n");
            break;
        case '\r':
            strbuf_puts(out, "\\r");
            break;
        case '\t':
            strbuf_puts(out, "\\t");
            break;
        case '\b':
            strbuf_puts(out, "\\b");
            break;
        case '\f':
            strbuf_puts(out, "\\f");
            break;
        default:
            strbuf_printf(out, "\\u%04x", c);
            break;
        }
        i++;
    }
    strbuf_putc(out, '"');
}

void json_str(struct json *j, const char *s, size_t len)
{
    before_value(j);
    json_escape(j->out, s, len);
}

void json_cstr(struct json *j, const char *s)
{
    if (!s) {
        json_null(j);
        return;
    }
    json_str(j, s, strlen(s));
}

void json_i64(struct json *j, int64_t v)
{
    before_value(j);
    strbuf_printf(j->out, "%lld", (long long)v);
}

void json_u64(struct json *j, uint64_t v)
{
    before_value(j);
    strbuf_printf(j->out, "%llu", (unsigned long long)v);
}

void json_f64(struct json *j, double v)
{
    if (!isfinite(v)) {
        json_null(j);
        return;
    }
    before_value(j);
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    strbuf_puts(j->out, buf);
}

void json_bool(struct json *j, bool v)
{
    before_value(j);
    strbuf_puts(j->out, v ? "true" : "false");
}

void json_null(struct json *j)
{
    before_value(j);
    strbuf_puts(j->out, "null");
}

bool json_done(const struct json *j)
{
    return j->depth == 0 && !j->key_pending;
}
