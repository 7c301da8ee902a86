/* libFuzzer target: a request frame (header + body) through kmsg_decode_header and the body
 * decoder its header names, then through every other in-range version of that API.
 *
 * Oracle beyond "no crash, no leak, no UB": whatever decodes must survive a round trip through
 * the test-side encoder (tests/unit/kmsg_testenc.c): re-encode, decode again, re-encode, and
 * the two encodings must be identical. That catches decoders that accept bytes they then
 * misplace, and slices that point outside the input (ASan sees the encoder read them).
 *
 * Every API of kafka/api.h is covered through tdecode_req, the consumer-group APIs of
 * kafka/msg_group.h included (tests/unit/kmsg_testenc_group.c); gen_seeds writes a valid request
 * of each of them as a seed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/api.h"
#include "kafka/msg.h"
#include "kmsg_testenc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct arena arena;

static uint8_t *encode(int16_t key, int16_t v, const union kmsg_any_req *q, size_t *len)
{
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    tenc_req(&w, key, v, q);
    uint8_t *out = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    return out;
}

static void check_roundtrip(int16_t key, int16_t v, const union kmsg_any_req *q)
{
    size_t len1, len2;
    uint8_t *bytes1 = encode(key, v, q, &len1);
    struct kreader r;
    kr_init(&r, bytes1, len1);
    union kmsg_any_req q2;
    if (tdecode_req(&r, key, v, &arena, &q2) != 0 || kr_left(&r) != 0)
        abort(); /* a decoded request did not survive re-encoding */
    uint8_t *bytes2 = encode(key, v, &q2, &len2);
    if (len1 != len2 || memcmp(bytes1, bytes2, len1) != 0)
        abort(); /* decode(encode(x)) != x */
    mem_free(bytes1);
    mem_free(bytes2);
}

static void decode_body(int16_t key, int16_t v, const uint8_t *body, size_t len)
{
    /* an exact-size copy, so reading one byte too far is an ASan report */
    uint8_t *copy = mem_dup(body, len);
    struct kreader r;
    kr_init(&r, copy, len);
    union kmsg_any_req q;
    if (tdecode_req(&r, key, v, &arena, &q) == 0)
        check_roundtrip(key, v, &q);
    arena_reset(&arena);
    mem_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        arena_init(&arena, 0);
        ready = 1;
    }
    struct kreader r;
    kr_init(&r, data, size);
    struct kreq_header h;
    if (kmsg_decode_header(&r, &h) != 0)
        return 0;

    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    kmsg_encode_resp_header(&w, &h);
    iobuf_destroy(&b);

    const uint8_t *body = r.p;
    size_t len = kr_left(&r);
    decode_body(h.api_key, h.api_version, body, len);
    const struct kafka_api_info *api = kafka_api_find(h.api_key);
    if (api)
        for (int16_t v = api->min_version; v <= api->max_version; v++)
            if (v != h.api_version)
                decode_body(h.api_key, v, body, len);
    return 0;
}
