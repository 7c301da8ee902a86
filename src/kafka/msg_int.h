/* Helpers shared by the kafka/msg_*.c codecs. Private to kafka/: the contract is msg.h.
 *
 * Decoders follow one pattern:
 *   1. refuse a version outside the API's range in kafka/api.h (-ERR_UNSUPPORTED),
 *   2. set *out to the defaults of fields the version lacks,
 *   3. read every field of the version with the sticky reader, bounding every array count by
 *      the smallest encoded size of one element (so an absurd count fails before allocating),
 *      skipping the tagged-field section that ends every structure in flexible versions,
 *   4. check the reader once at the end (kmsg_rd_done).
 * A null in a string or array the schema does not allow to be null is corrupt, as it is for
 * Kafka's generated Java parsers ("non-nullable field ... was serialized as null").
 *
 * Encoders write exactly the fields of the version, and an empty tagged-field section at the
 * end of every structure in flexible versions. A null in a field that cannot be null is a
 * broker bug (DCHECK). */
#ifndef SP_KAFKA_MSG_INT_H
#define SP_KAFKA_MSG_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/check.h"
#include "base/errors.h"
#include "kafka/api.h"
#include "kafka/msg.h"
#include "kafka/wire.h"

/* Smallest encoded size of one field of each kind, for kr_array()'s element bound. */
static inline size_t kmsg_min_str(bool flex)
{
    return flex ? 1 : 2; /* uvarint length / int16 length */
}
static inline size_t kmsg_min_array(bool flex)
{
    return flex ? 1 : 4; /* uvarint count / int32 count */
}
static inline size_t kmsg_min_bytes(bool flex)
{
    return flex ? 1 : 4; /* uvarint length / int32 length */
}
static inline size_t kmsg_min_tags(bool flex)
{
    return flex ? 1 : 0; /* uvarint field count */
}

/* Whether (key, v) lies in the range kafka/api.h declares for key. */
bool kmsg_version_ok(int16_t key, int16_t v);

/* A string the schema forbids to be null: a null sets the reader's error. */
struct kstr kmsg_rd_str(struct kreader *r, bool flex);
/* An array count the schema forbids to be null: returns 0 and sets the error on a null. */
int32_t kmsg_rd_array(struct kreader *r, bool flex, size_t min_elem_bytes);
/* Zeroed arena memory for n elements; NULL when n <= 0 (null or empty arrays). */
void *kmsg_alloc(struct arena *a, int32_t n, size_t size);
/* [] int32 and [] string arrays; *n is -1 for a null (only accepted when nullable). */
int32_t *kmsg_rd_i32s(struct kreader *r, bool flex, struct arena *a, bool nullable, int32_t *n);
struct kstr *kmsg_rd_strs(struct kreader *r, bool flex, struct arena *a, bool nullable, int32_t *n);

static inline int kmsg_rd_done(const struct kreader *r)
{
    return kr_ok(r) ? 0 : -ERR_CORRUPT;
}

/* Writers for strings that must not be null, nullable strings, arrays that must not be null,
 * and [] int32 arrays. A string longer than an int16 length allows in a non-flexible version is
 * a broker bug (DCHECKed): kw_str would truncate its length. */
void kmsg_wr_str(struct kwriter *w, bool flex, struct kstr s);
void kmsg_wr_nstr(struct kwriter *w, bool flex, struct kstr s);
void kmsg_wr_array(struct kwriter *w, bool flex, int32_t n);
void kmsg_wr_i32s(struct kwriter *w, bool flex, const int32_t *v, int32_t n);

#endif
