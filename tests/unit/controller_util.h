/* Helpers shared by the controller tests. */
#ifndef SP_TEST_CONTROLLER_UTIL_H
#define SP_TEST_CONTROLLER_UTIL_H

#include <stdint.h>
#include <string.h>

#include "base/iobuf.h"
#include "base/mem.h"
#include "controller/image.h"
#include "controller/records.h"

static inline struct kuuid ctu_uuid(uint32_t n)
{
    struct kuuid u;
    memset(u.b, 0, sizeof(u.b));
    u.b[0] = 0xAB;
    u.b[12] = (uint8_t)(n >> 24);
    u.b[13] = (uint8_t)(n >> 16);
    u.b[14] = (uint8_t)(n >> 8);
    u.b[15] = (uint8_t)n;
    return u;
}

/* One record's value bytes (mem_free them). */
static inline uint8_t *ctu_encode(const struct ctl_rec *r, size_t *len)
{
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    ctl_rec_encode(&w, r);
    uint8_t *p = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    return p;
}

/* The image's snapshot bytes (mem_free them). */
static inline uint8_t *ctu_snapshot(const struct ctl_image *img, size_t *len)
{
    struct iobuf b;
    iobuf_init(&b);
    ctl_image_snapshot_encode(img, &b);
    uint8_t *p = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    return p;
}

#endif
