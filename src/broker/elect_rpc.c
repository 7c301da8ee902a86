/* ELECT request and answer bodies (see elect_rpc.h). */
#include "broker/elect_rpc.h"

#include <stdbool.h>
#include <string.h>

#include "base/check.h"
#include "base/endian.h"
#include "base/errors.h"
#include "kafka/msg.h"

struct rd {
    const uint8_t *p, *end;
    bool bad;
};

static const uint8_t *take(struct rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    return at;
}

static uint8_t rd_u8(struct rd *r)
{
    const uint8_t *p = take(r, 1);
    return p ? p[0] : 0;
}

static uint16_t rd_u16(struct rd *r)
{
    const uint8_t *p = take(r, 2);
    return p ? be_get16(p) : 0;
}

static uint32_t rd_u32(struct rd *r)
{
    const uint8_t *p = take(r, 4);
    return p ? be_get32(p) : 0;
}

/* A u16-length string of min..max bytes without NUL into out (max + 1 bytes). */
static void rd_str(struct rd *r, size_t min, size_t max, char *out)
{
    size_t n = rd_u16(r);
    const uint8_t *s = r->bad || n < min || n > max ? NULL : take(r, n);
    if (!s || memchr(s, 0, n)) {
        r->bad = true;
        out[0] = '\0';
        return;
    }
    memcpy(out, s, n);
    out[n] = '\0';
}

static size_t put_str(uint8_t *buf, const char *s, size_t n)
{
    be_put16(buf, (uint16_t)n);
    memcpy(buf + 2, s, n);
    return 2 + n;
}

size_t elect_rpc_req_encode(const struct elect_rpc_req *q, uint8_t *buf)
{
    size_t tn = strlen(q->topic);
    CHECK(tn >= 1 && tn <= ELECT_RPC_TOPIC_MAX && q->partition >= 0 && q->timeout_ms >= 0);
    CHECK(q->type == KAFKA_ELECTION_PREFERRED || q->type == KAFKA_ELECTION_UNCLEAN);
    size_t n = 0;
    buf[n++] = ELECT_RPC_ELECT;
    buf[n++] = (uint8_t)q->type;
    be_put32(buf + n, (uint32_t)q->timeout_ms);
    n += 4;
    n += put_str(buf + n, q->topic, tn);
    be_put32(buf + n, (uint32_t)q->partition);
    return n + 4;
}

int elect_rpc_req_decode(const uint8_t *p, size_t len, struct elect_rpc_req *out)
{
    struct rd r = {p, p + len, false};
    memset(out, 0, sizeof(*out));
    uint8_t kind = rd_u8(&r);
    out->type = (int8_t)rd_u8(&r);
    out->timeout_ms = (int32_t)rd_u32(&r);
    rd_str(&r, 1, ELECT_RPC_TOPIC_MAX, out->topic);
    out->partition = (int32_t)rd_u32(&r);
    bool type_ok = out->type == KAFKA_ELECTION_PREFERRED || out->type == KAFKA_ELECTION_UNCLEAN;
    if (r.bad || r.p != r.end || kind != ELECT_RPC_ELECT || !type_ok || out->timeout_ms < 0 ||
        out->partition < 0)
        return -ERR_CORRUPT;
    return 0;
}

size_t elect_rpc_answer_encode(const struct elect_rpc_answer *a, uint8_t *buf)
{
    size_t mn = strnlen(a->message, ELECT_RPC_MESSAGE_MAX);
    size_t n = 0;
    buf[n++] = ELECT_RPC_ELECT;
    be_put16(buf + n, (uint16_t)a->error);
    n += 2;
    be_put32(buf + n, (uint32_t)a->leader);
    n += 4;
    return n + put_str(buf + n, a->message, mn);
}

int elect_rpc_answer_decode(const uint8_t *p, size_t len, struct elect_rpc_answer *out)
{
    struct rd r = {p, p + len, false};
    memset(out, 0, sizeof(*out));
    uint8_t kind = rd_u8(&r);
    out->error = (int16_t)rd_u16(&r);
    out->leader = (int32_t)rd_u32(&r);
    rd_str(&r, 0, ELECT_RPC_MESSAGE_MAX, out->message);
    if (r.bad || r.p != r.end || kind != ELECT_RPC_ELECT || out->leader < -1)
        return -ERR_CORRUPT;
    return 0;
}
