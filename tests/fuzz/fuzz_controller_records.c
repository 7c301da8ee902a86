/* libFuzzer target: __cluster_metadata records as they come back from the log
 * (controller/records.h) and the image they build (controller/image.h).
 * The first byte picks the mode:
 *   even: one record value. A record that decodes must be valid and encode back to exactly the
 *         input bytes; it is then applied to an empty image.
 *   odd:  a framed list (ctl_recs_decode, at most 512 records), applied in order to an image
 *         (refusals are fine). The image must pass its checker, and its snapshot must rebuild
 *         an image with byte-identical snapshot. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/iobuf.h"
#include "base/mem.h"
#include "controller/image.h"
#include "controller/records.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t *snapshot_bytes(const struct ctl_image *img, size_t *len)
{
    struct iobuf b;
    iobuf_init(&b);
    ctl_image_snapshot_encode(img, &b);
    uint8_t *p = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    return p;
}

static void one_record(const uint8_t *p, size_t len)
{
    struct ctl_rec r;
    if (ctl_rec_decode(p, len, &r) != 0)
        return;
    if (!ctl_rec_valid(&r))
        abort();
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    ctl_rec_encode(&w, &r);
    size_t len2;
    uint8_t *p2 = iobuf_flatten(&b, &len2);
    if (len2 != len || memcmp(p2, p, len) != 0)
        abort();
    mem_free(p2);
    iobuf_destroy(&b);
    struct ctl_image img;
    ctl_image_init(&img);
    (void)ctl_image_apply(&img, &r);
    ctl_image_check(&img);
    ctl_image_free(&img);
}

static void record_list(const uint8_t *p, size_t len)
{
    struct ctl_recs l;
    ctl_recs_init(&l);
    (void)ctl_recs_decode(p, len, 512, &l);
    struct ctl_image img;
    ctl_image_init(&img);
    for (size_t i = 0; i < l.n; i++)
        (void)ctl_image_apply(&img, &l.v[i]);
    ctl_image_check(&img);

    struct ctl_recs snap;
    ctl_recs_init(&snap);
    ctl_image_snapshot(&img, &snap);
    struct ctl_image copy;
    ctl_image_init(&copy);
    if (ctl_image_apply_all(&copy, &snap) != 0)
        abort();
    size_t l1, l2;
    uint8_t *s1 = snapshot_bytes(&img, &l1);
    uint8_t *s2 = snapshot_bytes(&copy, &l2);
    if (l1 != l2 || memcmp(s1, s2, l1) != 0)
        abort();
    mem_free(s1);
    mem_free(s2);
    ctl_image_free(&copy);
    ctl_recs_free(&snap);
    ctl_image_free(&img);
    ctl_recs_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    uint8_t *copy = mem_alloc(len ? len : 1); /* exact size: an over-read is an ASan report */
    memcpy(copy, data + 1, len);
    if (data[0] % 2 == 0)
        one_record(copy, len);
    else
        record_list(copy, len);
    mem_free(copy);
    return 0;
}
