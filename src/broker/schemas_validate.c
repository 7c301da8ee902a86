/* Produce-side schema id validation (see schemas.h): the records of one batch against the
 * registry's store. Stateless beyond the store it reads. */
#include <stdio.h>
#include <string.h>

#include "base/mem.h"
#include "broker/internal.h"
#include "broker/schemas.h"
#include "kafka/batch.h"
#include "kafka/compress.h"

#define VALIDATE_DECOMPRESSED_MAX (64u << 20)

/* Whether b is null or framed with an id that subject uses. */
static bool framed_ok(struct broker *b, const char *subject, struct kbytes v, int32_t *id)
{
    *id = -1;
    if (v.len < 0)
        return true; /* a tombstone or a record without a key: nothing to check */
    if (v.len < 5 || v.p[0] != 0)
        return false;
    *id = (int32_t)((uint32_t)v.p[1] << 24 | (uint32_t)v.p[2] << 16 | (uint32_t)v.p[3] << 8 |
                    (uint32_t)v.p[4]);
    return schemas_subject_uses(b, subject, *id);
}

bool schemas_validate_batch(struct broker *b, const char *topic, const uint8_t *batch, size_t len,
                            bool keys, bool values, char *why, size_t whycap)
{
    struct kbatch_header h;
    kbatch_parse_header(batch, &h);
    const uint8_t *recs = batch + KBATCH_HEADER_SIZE;
    size_t recs_len = len - KBATCH_HEADER_SIZE;
    uint8_t *plain = NULL;
    if (kbatch_compression(&h) != KCOMPRESSION_NONE) {
        size_t out_len;
        if (kcompress_decompress(kbatch_compression(&h), recs, recs_len,
                                 VALIDATE_DECOMPRESSED_MAX, &plain, &out_len) != 0) {
            snprintf(why, whycap, "the batch does not decompress");
            return false;
        }
        recs = plain;
        recs_len = out_len;
    }
    char key_subject[300], value_subject[300];
    snprintf(key_subject, sizeof key_subject, "%s-key", topic);
    snprintf(value_subject, sizeof value_subject, "%s-value", topic);
    struct krecord_iter it;
    krecord_iter_init(&it, recs, recs_len, h.records_count);
    struct krecord rec;
    bool ok = true;
    while (ok && krecord_iter_next(&it, &rec) == 1) {
        int32_t id = -1;
        const char *part = NULL, *subject = NULL;
        if (keys && !framed_ok(b, key_subject, rec.key, &id))
            part = "key", subject = key_subject;
        else if (values && !framed_ok(b, value_subject, rec.value, &id))
            part = "value", subject = value_subject;
        if (!part)
            continue;
        ok = false;
        if (id < 0)
            snprintf(why, whycap, "record %d: its %s does not start with the schema registry's "
                     "framing (magic byte 0, then a schema id)", rec.offset_delta, part);
        else
            snprintf(why, whycap, "record %d: its %s names schema id %d, which no version of "
                     "subject %s uses", rec.offset_delta, part, (int)id, subject);
    }
    mem_free(plain);
    return ok;
}
