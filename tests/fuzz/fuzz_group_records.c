/* libFuzzer target: __consumer_offsets records as they come back from disk (group/records.h).
 * The first byte picks the decoder (key, offset value, group value); the rest is the input.
 * A decoded group value is restored into a group (group/group.c), which must stay consistent
 * (group_check) and re-encode; a decoded offset value must survive a v3 round trip. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "group/group.h"
#include "group/records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void offset_roundtrip(const struct grec_offset_value *v)
{
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    grec_encode_offset_value(&w, v);
    size_t len;
    uint8_t *p = iobuf_flatten(&b, &len);
    struct grec_offset_value d;
    if (grec_decode_offset_value(p, len, &d) != 0 || d.offset != v->offset ||
        d.leader_epoch != v->leader_epoch || d.commit_ts_ms != v->commit_ts_ms ||
        d.metadata.len != v->metadata.len)
        abort();
    mem_free(p);
    iobuf_destroy(&b);
}

static void group_roundtrip(const struct group_restore *r)
{
    static const struct group_config cfg = {1, 1 << 30, 0, 64, 1 << 20};
    static const struct group_hooks hooks = {NULL, NULL, NULL, NULL};
    struct group *g = group_new(kstr_c("fuzz"), &cfg, &hooks, 0);
    group_restore(g, r, 0);
    group_check(g);
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    grec_encode_group_value(&w, g);
    size_t len;
    uint8_t *p = iobuf_flatten(&b, &len);
    struct arena a;
    arena_init(&a, 0);
    struct group_restore r2;
    if (grec_decode_group_value(p, len, &a, &r2) != 0 || r2.n_members != g->n_members ||
        r2.generation != g->generation)
        abort();
    arena_destroy(&a);
    mem_free(p);
    iobuf_destroy(&b);
    group_free(g, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    uint8_t *copy = mem_alloc(len ? len : 1); /* exact size: an over-read is an ASan report */
    memcpy(copy, data + 1, len);
    switch (data[0] % 3) {
    case 0: {
        struct grec_key k;
        (void)grec_decode_key(copy, len, &k);
        break;
    }
    case 1: {
        struct grec_offset_value v;
        if (grec_decode_offset_value(copy, len, &v) == 0)
            offset_roundtrip(&v);
        break;
    }
    default: {
        struct arena a;
        arena_init(&a, 0);
        struct group_restore r;
        if (grec_decode_group_value(copy, len, &a, &r) == 0)
            group_roundtrip(&r);
        arena_destroy(&a);
        break;
    }
    }
    mem_free(copy);
    return 0;
}
