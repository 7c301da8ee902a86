/* A writer for the Prometheus text exposition format (version 0.0.4), the body of /metrics.
 *
 *   # HELP streampulse_kafka_requests_total Kafka requests received, by API.
 *   # TYPE streampulse_kafka_requests_total counter
 *   streampulse_kafka_requests_total{api="Produce"} 1027
 *
 * Callers write each family once: prom_family() (HELP and TYPE), then all its samples, so that
 * every sample of a family is contiguous, as the format requires. Metric and label names are
 * the caller's constants ([a-zA-Z_:][a-zA-Z0-9_:]*, checked in debug builds); label values are
 * arbitrary bytes (topic names, group ids from clients) and are escaped here: backslash, double
 * quote and line feed get a backslash, and ill-formed UTF-8 becomes U+FFFD, so the output is
 * always valid UTF-8 that parses back to the same value for well-formed input.
 *
 * Histograms are written as _bucket{le="..."} lines (cumulative, ending with le="+Inf"), _sum
 * and _count; `divisor` converts the histogram's unit to the exposed one (1e9: ns -> seconds;
 * a division, unlike multiplying by 1e-9, gives 30 and not 30.000000000000004 for 30e9 ns). */
#ifndef SP_BASE_PROM_H
#define SP_BASE_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/histogram.h"
#include "base/strbuf.h"

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

struct prom_label {
    const char *name;  /* constant label name */
    const char *value; /* value bytes (need not be NUL-terminated) */
    size_t len;        /* of value */
};

/* A label from a NUL-terminated value. */
static inline struct prom_label prom_label(const char *name, const char *value)
{
    return (struct prom_label){name, value, strlen(value)};
}

/* "# HELP name help" and "# TYPE name type" (help escaped: backslash and line feed). */
void prom_family(struct strbuf *out, const char *name, enum prom_type type, const char *help);
/* One sample line: name{labels} value. n may be 0 (no braces then). */
void prom_sample_u64(struct strbuf *out, const char *name, const struct prom_label *labels,
                     size_t n, uint64_t v);
void prom_sample_i64(struct strbuf *out, const char *name, const struct prom_label *labels,
                     size_t n, int64_t v);
void prom_sample_f64(struct strbuf *out, const char *name, const struct prom_label *labels,
                     size_t n, double v);
/* The _bucket, _sum and _count lines of one histogram (labels besides le). */
void prom_histogram(struct strbuf *out, const char *name, const struct prom_label *labels, size_t n,
                    const struct histogram *h, double divisor);

/* Escaped label value, without the quotes. */
void prom_escape_label_value(struct strbuf *out, const char *v, size_t len);
/* A float as the format spells it: NaN, +Inf, -Inf, or the shortest decimal that reads back
 * to the same double. */
void prom_format_f64(struct strbuf *out, double v);

#endif
