/* libFuzzer target: the node's small-state store (storage/kvstore.h) replaying untrusted bytes
 * as its file (what a crash, a bad disk or a hand edit leaves in `kvstore`), in memory
 * (kv_open_bytes: the replay kv_open runs, without the disk).
 *
 * Whatever the bytes, the replay must not crash: it refuses bytes that do not start with a
 * store's header (-ERR_CORRUPT) or applies the records up to the first that does not check
 * out. What it kept is a fixed point: the file a rewrite would write (kv_image) replays whole,
 * to the same directories, values and live bytes, and its own image has the same length. A put
 * then changes exactly its one value. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "storage/kvstore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const struct kvstore *a, const struct kvstore *b)
{
    struct kv_stats sa, sb;
    kv_get_stats(a, &sa);
    kv_get_stats(b, &sb);
    if (sa.dirs != sb.dirs || sa.values != sb.values || sa.live_bytes != sb.live_bytes)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kvstore *kv = NULL;
    size_t valid = 0;
    int rc = kv_open_bytes(data, size, &valid, &kv);
    if (rc != 0) {
        if (rc != -ERR_CORRUPT || kv != NULL)
            abort(); /* the only refusal of bytes is "not a store" */
        return 0;
    }
    if (valid < 8 || valid > size)
        abort();
    size_t len1, len2, valid2;
    uint8_t *img1 = kv_image(kv, &len1);
    struct kvstore *kv2 = NULL;
    if (kv_open_bytes(img1, len1, &valid2, &kv2) != 0 || valid2 != len1)
        abort();
    same(kv, kv2);
    uint8_t *img2 = kv_image(kv2, &len2);
    if (len2 != len1)
        abort();
    /* a put: one value more, or the same count with a new value */
    struct kv_stats before, after;
    kv_get_stats(kv2, &before);
    uint8_t back[16];
    size_t want = size < sizeof(back) ? size : sizeof(back);
    bool had = kv_get(kv2, "fuzz-0", "after", back, sizeof(back)) != -ENOENT;
    if (kv_put(kv2, "fuzz-0", "after", data, want) != 0)
        abort();
    kv_get_stats(kv2, &after);
    if (after.values != before.values + (had ? 0 : 1) ||
        kv_get(kv2, "fuzz-0", "after", back, sizeof(back)) != (ssize_t)want ||
        memcmp(back, data, want) != 0)
        abort();
    mem_free(img1);
    mem_free(img2);
    kv_close(kv2);
    kv_close(kv);
    return 0;
}
