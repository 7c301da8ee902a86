/* A raw Kafka request from the CLI, for the APIs librdkafka 2.0.2 has no call for
 * (AlterPartitionReassignments, ListPartitionReassignments). Flexible versions only (request
 * header v2, response header v1), over a fresh plaintext connection; blocking, bounded.
 *
 * kraw_w* append big-endian fields and Kafka's compact forms to a strbuf; struct kraw_reader
 * reads them back with every length checked against the bytes left (a short or malformed answer
 * sets bad, and every later read returns 0). */
#ifndef SP_CLI_KRAW_H
#define SP_CLI_KRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

void kraw_w8(struct strbuf *b, int8_t v);
void kraw_w16(struct strbuf *b, int16_t v);
void kraw_w32(struct strbuf *b, int32_t v);
void kraw_wuvar(struct strbuf *b, uint32_t v);
void kraw_wcstr(struct strbuf *b, const char *s); /* compact string; NULL: null */
void kraw_warray(struct strbuf *b, int32_t n);    /* compact array length; -1: null */

struct kraw_reader {
    const uint8_t *p, *end;
    bool bad;
};
int8_t kraw_r8(struct kraw_reader *r);
int16_t kraw_r16(struct kraw_reader *r);
int32_t kraw_r32(struct kraw_reader *r);
uint32_t kraw_ruvar(struct kraw_reader *r);
/* A compact (nullable) string into buf (cap bytes, NUL-terminated, cut to fit); false if null. */
bool kraw_rcstr(struct kraw_reader *r, char *buf, size_t cap);
/* A compact array's length (-1: null), bounded by the bytes left. */
int32_t kraw_rarray(struct kraw_reader *r);
void kraw_rtags(struct kraw_reader *r); /* skips a tagged-field section */

/* Sends request (key, version) with body to the first broker of `brokers` (HOST:PORT[,...])
 * that accepts a connection; the response body (after its header) goes to *out. Returns 0, or
 * -1 with the reason in err. */
int kraw_call(const char *brokers, int16_t key, int16_t version, const struct strbuf *body,
              int timeout_ms, struct strbuf *out, char *err, size_t errcap);

#endif
