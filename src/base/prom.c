#include "base/prom.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/check.h"

#if DCHECK_ENABLED
static bool name_valid(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++) {
        char c = *s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == ':'))
            return false;
    }
    return true;
}
#endif

static const char *type_name(enum prom_type t)
{
    switch (t) {
    case PROM_COUNTER:
        return "counter";
    case PROM_GAUGE:
        return "gauge";
    case PROM_HISTOGRAM:
        return "histogram";
    }
    return "untyped";
}

void prom_family(struct strbuf *out, const char *name, enum prom_type type, const char *help)
{
    DCHECK(name_valid(name));
    strbuf_printf(out, "# HELP %s ", name);
    for (const char *p = help; *p; p++) {
        if (*p == '\\')
            strbuf_puts(out, "\\\\");
        else if (*p == '\n')
            strbuf_puts(out, "\\n");
        else
            strbuf_putc(out, *p);
    }
    strbuf_printf(out, "\n# TYPE %s %s\n", name, type_name(type));
}

void prom_escape_label_value(struct strbuf *out, const char *v, size_t len)
{
    const unsigned char *p = (const unsigned char *)v;
    size_t i = 0;
    while (i < len) {
        size_t run = i; /* copy plain bytes in runs */
        while (run < len && p[run] < 0x80 && p[run] != '\\' && p[run] != '"' && p[run] != '\n')
            run++;
        if (run > i) {
            strbuf_append(out, p + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = p[i];
        if (c == '\\' || c == '"') {
            strbuf_putc(out, '\\');
            strbuf_putc(out, (char)c);
            i++;
        } else if (c == '\n') {
            strbuf_puts(out, "\\n");
            i++;
        } else {
            size_t n = utf8_seq_len(p + i, len - i);
            if (n == 0) {
                strbuf_puts(out, "\xef\xbf\xbd"); /* U+FFFD */
                i++;
            } else {
                strbuf_append(out, p + i, n);
                i += n;
            }
        }
    }
}

static void write_labels(struct strbuf *out, const struct prom_label *labels, size_t n,
                         const char *le)
{
    if (n == 0 && !le)
        return;
    strbuf_putc(out, '{');
    for (size_t i = 0; i < n; i++) {
        DCHECK(name_valid(labels[i].name));
        strbuf_printf(out, "%s%s=\"", i ? "," : "", labels[i].name);
        prom_escape_label_value(out, labels[i].value, labels[i].len);
        strbuf_putc(out, '"');
    }
    if (le)
        strbuf_printf(out, "%sle=\"%s\"", n ? "," : "", le);
    strbuf_putc(out, '}');
}

static const char *format_f64(char *buf, size_t cap, double v)
{
    if (isnan(v))
        return "NaN";
    if (isinf(v))
        return v > 0 ? "+Inf" : "-Inf";
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

void prom_format_f64(struct strbuf *out, double v)
{
    char buf[40];
    strbuf_puts(out, format_f64(buf, sizeof(buf), v));
}

void prom_sample_u64(struct strbuf *out, const char *name, const struct prom_label *labels,
                     size_t n, uint64_t v)
{
    DCHECK(name_valid(name));
    strbuf_puts(out, name);
    write_labels(out, labels, n, NULL);
    strbuf_printf(out, " %llu\n", (unsigned long long)v);
}

void prom_sample_i64(struct strbuf *out, const char *name, const struct prom_label *labels,
                     size_t n, int64_t v)
{
    DCHECK(name_valid(name));
    strbuf_puts(out, name);
    write_labels(out, labels, n, NULL);
    strbuf_printf(out, " %lld\n", (long long)v);
}

void prom_sample_f64(struct strbuf *out, const char *name, const struct prom_label *labels,
                     size_t n, double v)
{
    DCHECK(name_valid(name));
    strbuf_puts(out, name);
    write_labels(out, labels, n, NULL);
    strbuf_putc(out, ' ');
    prom_format_f64(out, v);
    strbuf_putc(out, '\n');
}

void prom_histogram(struct strbuf *out, const char *name, const struct prom_label *labels, size_t n,
                    const struct histogram *h, double divisor)
{
    DCHECK(name_valid(name));
    uint64_t cum = 0;
    for (uint32_t i = 0; i <= h->n_bounds; i++) {
        cum += h->buckets[i];
        char buf[40];
        const char *le =
            i < h->n_bounds ? format_f64(buf, sizeof(buf), (double)h->bounds[i] / divisor) : "+Inf";
        strbuf_printf(out, "%s_bucket", name);
        write_labels(out, labels, n, le);
        strbuf_printf(out, " %llu\n", (unsigned long long)cum);
    }
    strbuf_printf(out, "%s_sum", name);
    write_labels(out, labels, n, NULL);
    strbuf_putc(out, ' ');
    prom_format_f64(out, (double)h->sum / divisor);
    strbuf_printf(out, "\n%s_count", name);
    write_labels(out, labels, n, NULL);
    strbuf_printf(out, " %llu\n", (unsigned long long)cum);
}
