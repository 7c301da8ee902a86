/* __consumer_offsets record codec (see records.h). */
#include "group/records.h"

#include <string.h>

#include "base/check.h"
#include "base/errors.h"

/* ---- keys ---- */

int grec_decode_key(const uint8_t *p, size_t len, struct grec_key *out)
{
    struct kreader r;
    kr_init(&r, p, len);
    *out = (struct grec_key){0};
    out->version = kr_i16(&r);
    if (!kr_ok(&r))
        return -ERR_CORRUPT;
    switch (out->version) {
    case GREC_KEY_OFFSET_V0:
    case GREC_KEY_OFFSET_V1:
        out->group = kr_str(&r, false);
        out->topic = kr_str(&r, false);
        out->partition = kr_i32(&r);
        if (out->topic.len < 0)
            return -ERR_CORRUPT;
        break;
    case GREC_KEY_GROUP:
        out->group = kr_str(&r, false);
        break;
    default:
        return -ERR_UNSUPPORTED;
    }
    if (!kr_ok(&r) || out->group.len < 0 || kr_left(&r) != 0)
        return -ERR_CORRUPT;
    return 0;
}

void grec_encode_offset_key(struct kwriter *w, struct kstr group, struct kstr topic,
                            int32_t partition)
{
    kw_i16(w, GREC_KEY_OFFSET_V1);
    kw_str(w, false, group);
    kw_str(w, false, topic);
    kw_i32(w, partition);
}

void grec_encode_group_key(struct kwriter *w, struct kstr group)
{
    kw_i16(w, GREC_KEY_GROUP);
    kw_str(w, false, group);
}

/* ---- offset values ---- */

int grec_decode_offset_value(const uint8_t *p, size_t len, struct grec_offset_value *out)
{
    struct kreader r;
    kr_init(&r, p, len);
    *out = (struct grec_offset_value){.leader_epoch = -1};
    int16_t v = kr_i16(&r);
    if (!kr_ok(&r))
        return -ERR_CORRUPT;
    if (v < 0 || v > 4)
        return -ERR_UNSUPPORTED;
    bool flex = v >= 4;
    out->offset = kr_i64(&r);
    if (v >= 3)
        out->leader_epoch = kr_i32(&r);
    out->metadata = kr_str(&r, flex);
    out->commit_ts_ms = kr_i64(&r);
    if (v == 1)
        (void)kr_i64(&r); /* expireTimestamp */
    kr_tags(&r, flex);
    if (!kr_ok(&r) || out->metadata.len < 0)
        return -ERR_CORRUPT;
    return 0; /* later versions may append fields: bytes left over are ignored */
}

void grec_encode_offset_value(struct kwriter *w, const struct grec_offset_value *v)
{
    kw_i16(w, 3);
    kw_i64(w, v->offset);
    kw_i32(w, v->leader_epoch);
    kw_str(w, false, v->metadata.len >= 0 ? v->metadata : kstr_c(""));
    kw_i64(w, v->commit_ts_ms);
}

/* ---- group values ---- */

int grec_decode_group_value(const uint8_t *p, size_t len, struct arena *a,
                            struct group_restore *out)
{
    struct kreader r;
    kr_init(&r, p, len);
    *out = (struct group_restore){.protocol_name = KSTR_NULL, .leader_id = KSTR_NULL,
                                  .state_ts_wall_ms = -1};
    int16_t v = kr_i16(&r);
    if (!kr_ok(&r))
        return -ERR_CORRUPT;
    if (v < 0 || v > 4)
        return -ERR_UNSUPPORTED;
    bool flex = v >= 4;
    out->protocol_type = kr_str(&r, flex);
    out->generation = kr_i32(&r);
    out->protocol_name = kr_str(&r, flex);
    out->leader_id = kr_str(&r, flex);
    if (v >= 2)
        out->state_ts_wall_ms = kr_i64(&r);
    /* smallest member: four strings, two int32s (one before v1), two byte arrays */
    size_t min = 3 * (flex ? 1 : 2) + (v >= 3 ? (flex ? 1 : 2) : 0) + 4 + (v >= 1 ? 4 : 0) +
                 2 * (flex ? 1 : 4) + (flex ? 1 : 0);
    int32_t n = kr_array(&r, flex, min);
    if (n < 0)
        return -ERR_CORRUPT;
    struct group_restore_member *m =
        n > 0 ? arena_calloc(a, (size_t)n, sizeof(*m)) : NULL;
    for (int32_t i = 0; i < n && kr_ok(&r); i++) {
        m[i].member_id = kr_str(&r, flex);
        m[i].instance_id = v >= 3 ? kr_str(&r, flex) : KSTR_NULL;
        m[i].client_id = kr_str(&r, flex);
        m[i].client_host = kr_str(&r, flex);
        m[i].rebalance_timeout_ms = v >= 1 ? kr_i32(&r) : -1;
        m[i].session_timeout_ms = kr_i32(&r);
        m[i].subscription = kr_bytes(&r, flex);
        m[i].assignment = kr_bytes(&r, flex);
        kr_tags(&r, flex);
        if (m[i].member_id.len < 0 || m[i].client_id.len < 0 || m[i].client_host.len < 0 ||
            m[i].subscription.len < 0 || m[i].assignment.len < 0)
            return -ERR_CORRUPT;
    }
    kr_tags(&r, flex);
    if (!kr_ok(&r) || out->protocol_type.len < 0)
        return -ERR_CORRUPT;
    out->members = m;
    out->n_members = n;
    return 0;
}

static struct kstr kstr_or_null(const char *s)
{
    return s ? kstr_c(s) : KSTR_NULL;
}

void grec_encode_group_value(struct kwriter *w, const struct group *g)
{
    kw_i16(w, 3);
    kw_str(w, false, kstr_c(g->protocol_type ? g->protocol_type : ""));
    kw_i32(w, g->generation);
    kw_str(w, false, kstr_or_null(g->protocol_name));
    kw_str(w, false, kstr_or_null(g->leader_id));
    kw_i64(w, g->state_ts_wall_ms);
    bool members = g->state == GROUP_STABLE || g->state == GROUP_COMPLETING_REBALANCE;
    int32_t n = members ? g->n_members : 0;
    kw_array(w, false, n);
    for (int32_t i = 0; i < n; i++) {
        const struct group_member *m = g->members[i];
        const struct group_protocol *p = NULL;
        for (int32_t k = 0; k < m->n_protocols; k++)
            if (g->protocol_name && strcmp(m->protocols[k].name, g->protocol_name) == 0)
                p = &m->protocols[k];
        kw_str(w, false, kstr_c(m->member_id));
        kw_str(w, false, kstr_or_null(m->instance_id));
        kw_str(w, false, kstr_c(m->client_id));
        kw_str(w, false, kstr_c(m->client_host));
        kw_i32(w, m->rebalance_timeout_ms);
        kw_i32(w, m->session_timeout_ms);
        kw_bytes(w, false, p ? (struct kbytes){p->metadata, p->metadata_len}
                             : (struct kbytes){(const uint8_t *)"", 0});
        kw_bytes(w, false, (struct kbytes){m->assignment, m->assignment_len});
    }
}

/* ---- partition choice ---- */

/* Decodes one code point; invalid or truncated sequences yield U+FFFD and consume one byte. */
static uint32_t utf8_next(const uint8_t **pp, const uint8_t *end)
{
    const uint8_t *p = *pp;
    uint8_t c = *p;
    int n = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (n < 0 || end - p <= n) {
        *pp = p + 1;
        return n == 0 ? c : 0xFFFD;
    }
    uint32_t cp = n == 0 ? c : (uint32_t)(c & (0x3F >> n));
    for (int i = 1; i <= n; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *pp = p + 1;
            return 0xFFFD;
        }
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        *pp = p + 1;
        return 0xFFFD;
    }
    *pp = p + n + 1;
    return cp;
}

int32_t grec_java_hash(struct kstr s)
{
    uint32_t h = 0;
    const uint8_t *p = (const uint8_t *)s.p, *end = p + (s.len > 0 ? s.len : 0);
    while (p < end) {
        uint32_t cp = utf8_next(&p, end);
        if (cp >= 0x10000) { /* a surrogate pair in UTF-16 */
            cp -= 0x10000;
            h = 31 * h + (0xD800 + (cp >> 10));
            h = 31 * h + (0xDC00 + (cp & 0x3FF));
        } else {
            h = 31 * h + cp;
        }
    }
    return (int32_t)h;
}

int32_t grec_partition_for(struct kstr group, int32_t n_partitions)
{
    CHECK(n_partitions > 0);
    int32_t h = grec_java_hash(group);
    int32_t abs = h == INT32_MIN ? 0 : (h < 0 ? -h : h); /* Kafka's Utils.abs */
    return abs % n_partitions;
}
