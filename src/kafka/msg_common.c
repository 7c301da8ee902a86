/* Shared reader/writer helpers of the message codecs (see msg_int.h). */
#include "kafka/msg_int.h"

bool kmsg_version_ok(int16_t key, int16_t v)
{
    const struct kafka_api_info *api = kafka_api_find(key);
    return api && v >= api->min_version && v <= api->max_version;
}

struct kstr kmsg_rd_str(struct kreader *r, bool flex)
{
    struct kstr s = kr_str(r, flex);
    if (s.len < 0)
        r->err = true;
    return s;
}

int32_t kmsg_rd_array(struct kreader *r, bool flex, size_t min_elem_bytes)
{
    int32_t n = kr_array(r, flex, min_elem_bytes);
    if (n < 0) {
        r->err = true;
        return 0;
    }
    return n;
}

void *kmsg_alloc(struct arena *a, int32_t n, size_t size)
{
    if (n <= 0)
        return NULL;
    return arena_calloc(a, (size_t)n, size);
}

int32_t *kmsg_rd_i32s(struct kreader *r, bool flex, struct arena *a, bool nullable, int32_t *n)
{
    int32_t count = nullable ? kr_array(r, flex, 4) : kmsg_rd_array(r, flex, 4);
    int32_t *v = kmsg_alloc(a, count, sizeof(*v));
    for (int32_t i = 0; i < count; i++)
        v[i] = kr_i32(r);
    *n = count;
    return v;
}

struct kstr *kmsg_rd_strs(struct kreader *r, bool flex, struct arena *a, bool nullable, int32_t *n)
{
    size_t min = kmsg_min_str(flex);
    int32_t count = nullable ? kr_array(r, flex, min) : kmsg_rd_array(r, flex, min);
    struct kstr *v = kmsg_alloc(a, count, sizeof(*v));
    for (int32_t i = 0; i < count; i++)
        v[i] = kmsg_rd_str(r, flex);
    *n = count;
    return v;
}

void kmsg_wr_nstr(struct kwriter *w, bool flex, struct kstr s)
{
    DCHECK(s.len >= -1 && (flex || s.len <= INT16_MAX));
    kw_str(w, flex, s);
}

void kmsg_wr_str(struct kwriter *w, bool flex, struct kstr s)
{
    DCHECK(s.len >= 0);
    kmsg_wr_nstr(w, flex, s);
}

void kmsg_wr_array(struct kwriter *w, bool flex, int32_t n)
{
    DCHECK(n >= 0);
    kw_array(w, flex, n);
}

void kmsg_wr_i32s(struct kwriter *w, bool flex, const int32_t *v, int32_t n)
{
    kmsg_wr_array(w, flex, n);
    for (int32_t i = 0; i < n; i++)
        kw_i32(w, v[i]);
}
