/* Metadata fetch codec (contract in controller/mfetch.h). */
#include "controller/mfetch.h"

#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "kafka/batch.h"
#include "kafka/wire.h"

void ctl_mfetch_req_encode(const struct ctl_mfetch_req *req, struct iobuf *out)
{
    size_t hl = strlen(req->host);
    CHECK(req->from >= 0 && req->max_bytes > 0 &&
          (uint32_t)req->max_bytes <= CTL_MFETCH_BYTES_MAX && hl >= 1 &&
          hl <= CTL_MFETCH_HOST_MAX && req->port > 0 && req->port <= 65535);
    struct kwriter w = {out};
    kw_i64(&w, req->from);
    kw_i32(&w, req->max_bytes);
    kw_i16(&w, (int16_t)hl);
    kw_raw(&w, req->host, hl);
    kw_i32(&w, req->port);
}

int ctl_mfetch_req_decode(const uint8_t *p, size_t len, struct ctl_mfetch_req *out)
{
    memset(out, 0, sizeof(*out));
    struct kreader r;
    kr_init(&r, p, len);
    out->from = kr_i64(&r);
    out->max_bytes = kr_i32(&r);
    uint16_t hl = (uint16_t)kr_i16(&r);
    if (!kr_ok(&r) || hl < 1 || hl > CTL_MFETCH_HOST_MAX || hl > kr_left(&r))
        return -ERR_CORRUPT;
    const uint8_t *h = kr_raw(&r, hl);
    out->port = kr_i32(&r);
    if (!kr_ok(&r) || kr_left(&r) != 0 || out->from < 0 || out->max_bytes <= 0 ||
        (uint32_t)out->max_bytes > CTL_MFETCH_BYTES_MAX || out->port <= 0 || out->port > 65535 ||
        memchr(h, 0, hl))
        return -ERR_CORRUPT;
    memcpy(out->host, h, hl);
    out->host[hl] = '\0';
    return 0;
}

void ctl_mfetch_resp_encode(const struct ctl_mfetch_resp *resp, struct iobuf *out)
{
    CHECK(resp->len <= CTL_MFETCH_BYTES_MAX && (resp->len == 0 || resp->data));
    struct kwriter w = {out};
    kw_i16(&w, resp->error);
    kw_i32(&w, resp->leader);
    kw_i64(&w, resp->term);
    kw_i64(&w, resp->commit);
    kw_i64(&w, resp->from);
    kw_u32(&w, (uint32_t)resp->len);
    if (resp->len)
        kw_raw(&w, resp->data, resp->len);
}

int ctl_mfetch_resp_decode(const uint8_t *p, size_t len, struct ctl_mfetch_resp *out)
{
    memset(out, 0, sizeof(*out));
    struct kreader r;
    kr_init(&r, p, len);
    out->error = kr_i16(&r);
    out->leader = kr_i32(&r);
    out->term = kr_i64(&r);
    out->commit = kr_i64(&r);
    out->from = kr_i64(&r);
    uint32_t n = kr_u32(&r);
    if (!kr_ok(&r) || n > CTL_MFETCH_BYTES_MAX || n != kr_left(&r) || out->leader < -1 ||
        out->term < 0 || out->commit < -1 || out->from < 0)
        return -ERR_CORRUPT;
    out->data = n ? kr_raw(&r, n) : NULL;
    out->len = n;
    return kr_ok(&r) ? 0 : -ERR_CORRUPT;
}

int ctl_mfetch_next_batch(const uint8_t *data, size_t len, size_t *pos, const uint8_t **batch,
                          size_t *batch_len, int64_t *base, int64_t *last)
{
    if (*pos >= len)
        return 0;
    size_t left = len - *pos;
    if (left < KBATCH_HEADER_SIZE)
        return -ERR_CORRUPT;
    const uint8_t *p = data + *pos;
    struct kbatch_header h;
    kbatch_parse_header(p, &h);
    if (h.batch_length < KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD ||
        (size_t)h.batch_length > left - KBATCH_LOG_OVERHEAD || h.base_offset < 0 ||
        h.last_offset_delta < 0 || h.base_offset > INT64_MAX - h.last_offset_delta)
        return -ERR_CORRUPT;
    *batch = p;
    *batch_len = kbatch_size(&h);
    *base = h.base_offset;
    *last = kbatch_last_offset(&h);
    *pos += *batch_len;
    return 1;
}
