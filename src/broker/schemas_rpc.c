/* Codec of the registry's forwarded requests (see schemas_rpc.h). Stateless. */
#include "broker/schemas_rpc.h"

#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "broker/schemas.h"
#include "kafka/wire.h"

/* Bytes a copy of req needs: every string with its NUL, and the body with one. */
static size_t req_size(const struct reg_rest_req *r)
{
    size_t n = strlen(r->method) + 1 + r->body_len + 1;
    for (size_t i = 0; i < r->n_segs; i++)
        n += strlen(r->segs[i]) + 1;
    for (size_t i = 0; i < r->n_params; i++)
        n += strlen(r->params[i].key) + 1 + strlen(r->params[i].value) + 1;
    return n;
}

static const char *put(char **at, const char *s, size_t n)
{
    char *d = *at;
    memcpy(d, s, n);
    d[n] = '\0';
    *at += n + 1;
    return d;
}

void schemas_req_copy(struct schemas_req *dst, const struct reg_rest_req *src)
{
    memset(dst, 0, sizeof(*dst));
    dst->blob = mem_alloc(req_size(src));
    char *at = dst->blob;
    struct reg_rest_req *r = &dst->req;
    r->method = put(&at, src->method, strlen(src->method));
    r->n_segs = src->n_segs;
    for (size_t i = 0; i < src->n_segs; i++)
        r->segs[i] = put(&at, src->segs[i], strlen(src->segs[i]));
    r->n_params = src->n_params;
    for (size_t i = 0; i < src->n_params; i++) {
        r->params[i].key = put(&at, src->params[i].key, strlen(src->params[i].key));
        r->params[i].value = put(&at, src->params[i].value, strlen(src->params[i].value));
    }
    r->body = put(&at, src->body ? src->body : "", src->body_len);
    r->body_len = src->body_len;
}

void schemas_req_free(struct schemas_req *r)
{
    mem_free(r->blob);
    r->blob = NULL;
}

void schemas_rpc_req_encode(struct iobuf *out, const struct reg_rest_req *req)
{
    struct kwriter w = {out};
    kw_i8(&w, SCHEMAS_RPC_KIND);
    kw_cstr(&w, false, req->method);
    kw_i8(&w, (int8_t)req->n_segs);
    for (size_t i = 0; i < req->n_segs; i++)
        kw_cstr(&w, false, req->segs[i]);
    kw_i8(&w, (int8_t)req->n_params);
    for (size_t i = 0; i < req->n_params; i++) {
        kw_cstr(&w, false, req->params[i].key);
        kw_cstr(&w, false, req->params[i].value);
    }
    kw_bytes(&w, false, (struct kbytes){(const uint8_t *)req->body, (int32_t)req->body_len});
}

/* A string field: 0..SCHEMAS_RPC_STR_MAX bytes without NUL. */
static struct kstr read_str(struct kreader *r)
{
    struct kstr s = kr_str(r, false);
    if (s.len < 0 || s.len > SCHEMAS_RPC_STR_MAX || memchr(s.p, '\0', (size_t)s.len))
        r->err = true;
    return r->err ? (struct kstr){"", 0} : s;
}

int schemas_rpc_req_decode(const uint8_t *p, size_t len, struct schemas_req *out)
{
    struct kreader r;
    kr_init(&r, p, len);
    struct kstr method, segs[REG_SEGS_MAX], keys[REG_PARAMS_MAX], vals[REG_PARAMS_MAX];
    int8_t kind = kr_i8(&r);
    method = read_str(&r);
    int8_t n_segs = kr_i8(&r);
    if (n_segs < 0 || n_segs > REG_SEGS_MAX)
        r.err = true;
    for (int i = 0; !r.err && i < n_segs; i++)
        segs[i] = read_str(&r);
    int8_t n_params = r.err ? 0 : kr_i8(&r);
    if (n_params < 0 || n_params > REG_PARAMS_MAX)
        r.err = true;
    for (int i = 0; !r.err && i < n_params; i++) {
        keys[i] = read_str(&r);
        vals[i] = read_str(&r);
    }
    struct kbytes body = r.err ? (struct kbytes){NULL, 0} : kr_bytes(&r, false);
    if (r.err || kind != SCHEMAS_RPC_KIND || method.len == 0 || body.len < 0 ||
        (size_t)body.len > SCHEMAS_BODY_MAX || kr_left(&r) != 0)
        return -ERR_CORRUPT;
    /* NUL-terminated views, then one owned copy of them all */
    char tmp_method[SCHEMAS_RPC_STR_MAX + 1];
    memcpy(tmp_method, method.p, (size_t)method.len);
    tmp_method[method.len] = '\0';
    struct reg_rest_req view = {.method = tmp_method, .n_segs = (size_t)n_segs,
                                .n_params = (size_t)n_params, .body = (const char *)body.p,
                                .body_len = (size_t)body.len};
    char *scratch = mem_alloc(len + 2 * (REG_SEGS_MAX + 2 * REG_PARAMS_MAX));
    char *at = scratch;
    for (int i = 0; i < n_segs; i++)
        view.segs[i] = put(&at, segs[i].p, (size_t)segs[i].len);
    for (int i = 0; i < n_params; i++) {
        view.params[i].key = put(&at, keys[i].p, (size_t)keys[i].len);
        view.params[i].value = put(&at, vals[i].p, (size_t)vals[i].len);
    }
    schemas_req_copy(out, &view);
    mem_free(scratch);
    return 0;
}

void schemas_rpc_answer_encode(struct iobuf *out, int status, bool raw, const char *body,
                               size_t len)
{
    struct kwriter w = {out};
    kw_i8(&w, SCHEMAS_RPC_KIND);
    kw_i16(&w, (int16_t)status);
    kw_i8(&w, raw ? 1 : 0);
    kw_bytes(&w, false, (struct kbytes){(const uint8_t *)body, (int32_t)len});
}

int schemas_rpc_answer_decode(const uint8_t *p, size_t len, int *status, bool *raw,
                              const char **body, size_t *body_len)
{
    struct kreader r;
    kr_init(&r, p, len);
    int8_t kind = kr_i8(&r);
    int16_t st = kr_i16(&r);
    int8_t rw = kr_i8(&r);
    struct kbytes b = kr_bytes(&r, false);
    if (!kr_ok(&r) || kind != SCHEMAS_RPC_KIND || st < 100 || st > 599 || (rw != 0 && rw != 1) ||
        b.len < 0 || (size_t)b.len > SCHEMAS_BODY_MAX || kr_left(&r) != 0)
        return -ERR_CORRUPT;
    *status = st;
    *raw = rw == 1;
    *body = b.len ? (const char *)b.p : "";
    *body_len = (size_t)b.len;
    return 0;
}

void schemas_rpc_follow_req_encode(struct iobuf *out, const struct schemas_follow_req *q)
{
    struct kwriter w = {out};
    kw_i8(&w, SCHEMAS_FOLLOW_KIND);
    kw_i64(&w, q->from);
    kw_i32(&w, q->wait_ms);
}

int schemas_rpc_follow_req_decode(const uint8_t *p, size_t len, struct schemas_follow_req *q)
{
    struct kreader r;
    kr_init(&r, p, len);
    int8_t kind = kr_i8(&r);
    q->from = kr_i64(&r);
    q->wait_ms = kr_i32(&r);
    if (!kr_ok(&r) || kind != SCHEMAS_FOLLOW_KIND || q->from < 0 || q->wait_ms < 0 ||
        q->wait_ms > SCHEMAS_FOLLOW_WAIT_MAX || kr_left(&r) != 0)
        return -ERR_CORRUPT;
    return 0;
}

void schemas_rpc_follow_answer_encode(struct iobuf *out, const struct schemas_follow_answer *a)
{
    struct kwriter w = {out};
    kw_i8(&w, SCHEMAS_FOLLOW_KIND);
    kw_i16(&w, a->error);
    kw_i32(&w, a->leader);
    kw_i64(&w, a->from);
    kw_i64(&w, a->high_watermark);
    kw_i64(&w, a->next);
    kw_bytes(&w, false,
             a->error ? (struct kbytes){NULL, -1}
                      : (struct kbytes){a->batches, (int32_t)a->batches_len});
}

int schemas_rpc_follow_answer_decode(const uint8_t *p, size_t len, struct schemas_follow_answer *a)
{
    struct kreader r;
    kr_init(&r, p, len);
    int8_t kind = kr_i8(&r);
    a->error = kr_i16(&r);
    a->leader = kr_i32(&r);
    a->from = kr_i64(&r);
    a->high_watermark = kr_i64(&r);
    a->next = kr_i64(&r);
    struct kbytes b = kr_bytes(&r, false);
    if (!kr_ok(&r) || kind != SCHEMAS_FOLLOW_KIND || a->leader < -1 || kr_left(&r) != 0)
        return -ERR_CORRUPT;
    if (a->error == SCHEMAS_FOLLOW_NOT_LEADER) {
        if (b.len >= 0)
            return -ERR_CORRUPT;
        a->batches = NULL;
        a->batches_len = 0;
        return 0;
    }
    if (a->error != SCHEMAS_FOLLOW_OK || b.len < 0 || a->from < 0 || a->next < a->from ||
        a->high_watermark < 0 || (b.len > 0 && a->next > a->high_watermark) ||
        (b.len > 0) != (a->next > a->from))
        return -ERR_CORRUPT;
    a->batches = b.len ? b.p : NULL;
    a->batches_len = (size_t)b.len;
    return 0;
}
