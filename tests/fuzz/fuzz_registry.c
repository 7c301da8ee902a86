/* libFuzzer target: the schema registry's REST semantics and its store (registry/rest.h,
 * registry/store.h) and the forwarded-request and follow codecs (broker/schemas_rpc.h), on
 * bytes as a client, another broker or another registry's `_schemas` topic would give them.
 *
 * Input: records, then a request, separated by blank lines ("\n\n"):
 *   KEY \t VALUE     one `_schemas` record per part (no tab: a tombstone of KEY)
 *   ...
 *   METHOD /path/segments?k=v&k2=v2 \n BODY       the last part
 * The records are applied to an empty store, the request evaluated, its writes applied (as
 * their commit would) and the request evaluated again; the whole input is also offered to the
 * forwarded-request decoder, and what decodes is evaluated too. Checked: every answer has a
 * status from 200 to 599 and a body; a write is only ever produced by a request that
 * reg_rest_is_write() calls one; every record a write produces is one the store applies; a
 * decoded forwarded request encodes back to the same bytes. The request is evaluated once more
 * with an authorization hook (registry/rest_authz.h) that allows by a hash of the resource and
 * operation: a denial is 403 (40301) and writes nothing. Nothing may crash, leak or read out of
 * bounds (ASan, UBSan). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/iobuf.h"
#include "base/mem.h"
#include "broker/schemas_rpc.h"
#include "registry/rest.h"
#include "registry/rest_authz.h"
#include "registry/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void evaluate(struct reg_store *st, const struct reg_rest_req *q, bool apply)
{
    struct reg_result res;
    reg_result_init(&res);
    reg_rest_handle(st, q, &res);
    if (res.status < 200 || res.status > 599 || (res.status >= 400 && res.body.len == 0))
        abort();
    if (res.n_writes > 0 && !reg_rest_is_write(q))
        abort();
    for (size_t i = 0; apply && i < res.n_writes; i++) {
        const struct reg_write *w = &res.writes[i];
        if (reg_store_apply(st, w->key.p, w->key.len, w->tombstone ? NULL : w->value.p,
                            w->value.len) != 0)
            abort(); /* our own records must load */
    }
    reg_result_free(&res);
}

/* Allows when the first byte of the name (the registry: none) and the operation sum to even. */
static bool some_allowed(void *data, enum reg_resource r, const char *name, enum reg_op op,
                         bool audit)
{
    (void)data;
    (void)audit;
    if ((r == REG_RESOURCE_REGISTRY) != (name == NULL))
        abort();
    unsigned char c = name ? (unsigned char)name[0] : 0;
    return ((unsigned)c + (unsigned)op) % 2 == 0;
}

static void evaluate_authorized(const struct reg_store *st, struct reg_rest_req q)
{
    const struct reg_authz z = {some_allowed, NULL};
    q.authz = &z;
    struct reg_result res;
    reg_result_init(&res);
    reg_rest_handle(st, &q, &res);
    if (res.status < 200 || res.status > 599 || (res.status == 403 && res.n_writes > 0))
        abort();
    if (res.status == 403 && !strstr(res.body.p ? res.body.p : "", "\"error_code\":40301"))
        abort();
    reg_result_free(&res);
}

/* Splits "METHOD path?query\nbody" (in place, NUL-terminated copy) into q. */
static void parse_request(char *text, size_t len, struct reg_rest_req *q)
{
    char *nl = memchr(text, '\n', len);
    q->body = nl ? nl + 1 : "";
    q->body_len = nl ? len - (size_t)(nl + 1 - text) : 0;
    if (nl)
        *nl = '\0';
    char *sp = strchr(text, ' ');
    q->method = text;
    if (!sp)
        return;
    *sp = '\0';
    char *path = sp + 1, *query = strchr(path, '?');
    if (query)
        *query++ = '\0';
    char *save;
    for (char *seg = strtok_r(path, "/", &save); seg && q->n_segs < REG_SEGS_MAX;
         seg = strtok_r(NULL, "/", &save))
        q->segs[q->n_segs++] = seg;
    for (char *kv = query ? strtok_r(query, "&", &save) : NULL; kv && q->n_params < REG_PARAMS_MAX;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq = '\0';
        q->params[q->n_params++] = (struct reg_param){kv, eq ? eq + 1 : ""};
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 64 * 1024)
        return 0;
    struct reg_store st;
    reg_store_init(&st);
    char *buf = mem_alloc(size + 1);
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *part = buf, *end = buf + size;
    for (;;) {
        char *sep = memmem(part, (size_t)(end - part), "\n\n", 2);
        if (!sep)
            break;
        char *tab = memchr(part, '\t', (size_t)(sep - part));
        if (tab)
            reg_store_apply(&st, part, (size_t)(tab - part), tab + 1, (size_t)(sep - tab - 1));
        else
            reg_store_apply(&st, part, (size_t)(sep - part), NULL, 0);
        part = sep + 2;
    }
    struct reg_rest_req q = {0};
    parse_request(part, (size_t)(end - part), &q);
    if (q.method[0]) {
        evaluate(&st, &q, true);
        evaluate(&st, &q, false);
        evaluate_authorized(&st, q);
    }
    struct schemas_req d;
    if (schemas_rpc_req_decode(data, size, &d) == 0) {
        struct iobuf out;
        iobuf_init(&out);
        schemas_rpc_req_encode(&out, &d.req);
        size_t n;
        uint8_t *again = iobuf_flatten(&out, &n);
        iobuf_destroy(&out);
        if (n != size || memcmp(again, data, size) != 0)
            abort();
        mem_free(again);
        evaluate(&st, &d.req, false);
        schemas_req_free(&d);
    }
    /* the follow codec: what decodes encodes back to the same bytes */
    struct schemas_follow_req fq;
    struct schemas_follow_answer fa;
    struct iobuf fout;
    iobuf_init(&fout);
    if (schemas_rpc_follow_req_decode(data, size, &fq) == 0)
        schemas_rpc_follow_req_encode(&fout, &fq);
    else if (schemas_rpc_follow_answer_decode(data, size, &fa) == 0)
        schemas_rpc_follow_answer_encode(&fout, &fa);
    if (fout.total) {
        size_t n;
        uint8_t *again = iobuf_flatten(&fout, &n);
        if (n != size || memcmp(again, data, size) != 0)
            abort();
        mem_free(again);
    }
    iobuf_destroy(&fout);
    mem_free(buf);
    reg_store_destroy(&st);
    return 0;
}
