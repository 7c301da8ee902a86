/* Raw Kafka requests from the CLI (contract in cli/kraw.h). */
#include "cli/kraw.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/endian.h"
#include "base/mem.h"
#include "base/varint.h"
#include "cli/common.h"

#define KRAW_RESPONSE_MAX (16u << 20)
#define KRAW_CORRELATION 0x5350 /* "SP" */

void kraw_w8(struct strbuf *b, int8_t v)
{
    uint8_t x = (uint8_t)v;
    strbuf_append(b, &x, 1);
}

void kraw_w16(struct strbuf *b, int16_t v)
{
    uint8_t x[2];
    be_put16(x, (uint16_t)v);
    strbuf_append(b, x, 2);
}

void kraw_w32(struct strbuf *b, int32_t v)
{
    uint8_t x[4];
    be_put32(x, (uint32_t)v);
    strbuf_append(b, x, 4);
}

void kraw_wuvar(struct strbuf *b, uint32_t v)
{
    uint8_t x[8];
    strbuf_append(b, x, uvarint32_put(x, v));
}

void kraw_wcstr(struct strbuf *b, const char *s)
{
    if (!s) {
        kraw_wuvar(b, 0);
        return;
    }
    size_t n = strlen(s);
    kraw_wuvar(b, (uint32_t)n + 1);
    strbuf_append(b, s, n);
}

void kraw_warray(struct strbuf *b, int32_t n)
{
    kraw_wuvar(b, n < 0 ? 0 : (uint32_t)n + 1);
}

static const uint8_t *take(struct kraw_reader *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    return at;
}

int8_t kraw_r8(struct kraw_reader *r)
{
    const uint8_t *p = take(r, 1);
    return p ? (int8_t)p[0] : 0;
}

int16_t kraw_r16(struct kraw_reader *r)
{
    const uint8_t *p = take(r, 2);
    return p ? (int16_t)be_get16(p) : 0;
}

int32_t kraw_r32(struct kraw_reader *r)
{
    const uint8_t *p = take(r, 4);
    return p ? (int32_t)be_get32(p) : 0;
}

uint32_t kraw_ruvar(struct kraw_reader *r)
{
    uint32_t v = 0;
    size_t n = r->bad ? 0 : uvarint32_get(r->p, r->end, &v);
    if (n == 0) {
        r->bad = true;
        return 0;
    }
    r->p += n;
    return v;
}

bool kraw_rcstr(struct kraw_reader *r, char *buf, size_t cap)
{
    uint32_t n = kraw_ruvar(r);
    buf[0] = '\0';
    if (n == 0)
        return false;
    const uint8_t *s = take(r, n - 1);
    if (!s)
        return false;
    size_t k = n - 1 < cap - 1 ? n - 1 : cap - 1;
    memcpy(buf, s, k);
    buf[k] = '\0';
    return true;
}

int32_t kraw_rarray(struct kraw_reader *r)
{
    uint32_t n = kraw_ruvar(r);
    if (n == 0)
        return -1;
    if (n - 1 > (size_t)(r->end - r->p)) { /* every element takes a byte at least */
        r->bad = true;
        return 0;
    }
    return (int32_t)(n - 1);
}

void kraw_rtags(struct kraw_reader *r)
{
    uint32_t n = kraw_ruvar(r);
    for (uint32_t i = 0; i < n && !r->bad; i++) {
        (void)kraw_ruvar(r);
        (void)take(r, kraw_ruvar(r));
    }
}

static int io_all(int fd, void *buf, size_t len, bool writing)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = writing ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                            : recv(fd, (char *)buf + done, len - done, 0);
        if (n <= 0)
            return -1; /* closed, timed out (EAGAIN) or interrupted: the caller says which */
        done += (size_t)n;
    }
    return 0;
}

int kraw_call(const char *brokers, int16_t key, int16_t version, const struct strbuf *body,
              int timeout_ms, struct strbuf *out, char *err, size_t errcap)
{
    char list[1024];
    snprintf(list, sizeof(list), "%s", brokers);
    int fd = -1;
    char addr[300] = "";
    char *save = NULL;
    for (char *a = strtok_r(list, ",", &save); a && fd < 0; a = strtok_r(NULL, ",", &save)) {
        snprintf(addr, sizeof(addr), "%s", a);
        fd = cli_tcp_connect(a, timeout_ms, "", err, errcap);
    }
    if (fd < 0)
        return -1;
    struct strbuf req;
    strbuf_init(&req);
    kraw_w32(&req, 0); /* size, filled below */
    kraw_w16(&req, key);
    kraw_w16(&req, version);
    kraw_w32(&req, KRAW_CORRELATION);
    kraw_w16(&req, 11); /* client id: a non-compact string even in header v2 */
    strbuf_append(&req, "streampulse", 11);
    kraw_wuvar(&req, 0); /* tagged fields */
    strbuf_append(&req, body->p ? body->p : "", body->len);
    be_put32((uint8_t *)req.p, (uint32_t)(req.len - 4));
    int rc = io_all(fd, req.p, req.len, true);
    strbuf_destroy(&req);
    uint8_t size[4];
    if (rc == 0)
        rc = io_all(fd, size, 4, false);
    uint32_t n = rc == 0 ? be_get32(size) : 0;
    if (rc != 0) {
        snprintf(err, errcap, "%s: %s", addr,
                 errno == EAGAIN ? "no answer in time" : "the connection closed without an answer "
                                                         "(a broker without this API?)");
        close(fd);
        return -1;
    }
    if (n < 5 || n > KRAW_RESPONSE_MAX) {
        snprintf(err, errcap, "%s sent a response of %u bytes", addr, n);
        close(fd);
        return -1;
    }
    uint8_t *resp = mem_alloc(n);
    rc = io_all(fd, resp, n, false);
    close(fd);
    if (rc != 0) {
        snprintf(err, errcap, "%s: the answer ended early", addr);
        mem_free(resp);
        return -1;
    }
    struct kraw_reader r = {resp, resp + n, false};
    int32_t corr = kraw_r32(&r);
    kraw_rtags(&r);
    if (r.bad || corr != KRAW_CORRELATION) {
        snprintf(err, errcap, "%s sent an answer that is not for this request", addr);
        mem_free(resp);
        return -1;
    }
    strbuf_append(out, r.p, (size_t)(r.end - r.p));
    mem_free(resp);
    return 0;
}
