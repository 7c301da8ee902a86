/* The inter-broker Raft RPC codec (replication/rpc.h): round trips, coalesced heartbeats, and hostile
 * input (truncations, bit flips, huge counts). */
#include "base/check.h"
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/mem.h"
#include "net_test_util.h"
#include "replication/rpc.h"
#include "test.h"

static struct rpc_group grp(const char *topic, int32_t partition)
{
    struct rpc_group g = {topic, strlen(topic), partition};
    return g;
}

/* Flattens out and strips the size prefix (checked). */
static uint8_t *take_frame(struct iobuf *out, size_t *len)
{
    size_t n;
    uint8_t *p = iobuf_flatten(out, &n);
    ASSERT(p != NULL);
    ASSERT_CMP(n, >=, 4);
    uint32_t size = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
    ASSERT_EQ(size, n - 4);
    memmove(p, p + 4, n - 4);
    *len = n - 4;
    iobuf_destroy(out);
    return p;
}

static bool msg_eq(const struct raft_msg *a, const struct raft_msg *b)
{
    if (a->type != b->type || a->reject != b->reject || a->transfer != b->transfer ||
        a->from != b->from || a->to != b->to || a->term != b->term || a->index != b->index ||
        a->log_term != b->log_term || a->commit != b->commit || a->last != b->last ||
        a->n_entries != b->n_entries || !raft_conf_equal(&a->conf, &b->conf))
        return false;
    for (size_t i = 0; i < a->n_entries; i++) {
        const struct raft_entry *x = &a->entries[i], *y = &b->entries[i];
        if (x->first != y->first || x->last != y->last || x->term != y->term ||
            x->kind != y->kind || x->len != y->len ||
            (x->len && memcmp(x->payload, y->payload, x->len) != 0))
            return false;
    }
    return true;
}

static struct raft_msg base_msg(uint8_t type)
{
    struct raft_msg m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    m.from = 1;
    m.to = 2;
    m.term = 7;
    m.index = 41;
    m.log_term = 6;
    m.commit = 40;
    m.last = 44;
    return m;
}

static const uint8_t payload_a[] = "record batch A bytes";
static const uint8_t payload_b[] = {0, 1, 2, 3, 255};

/* One message of every type (APPEND with entries, INSTALL with a joint conf). */
static size_t all_types(struct raft_msg *ms, struct raft_entry *ents)
{
    size_t n = 0;
    for (uint8_t t = RAFT_MSG_APPEND; t < RAFT_MSG_TYPE_END_; t++) {
        struct raft_msg m = base_msg(t);
        if (t == RAFT_MSG_APPEND) {
            ents[0] = (struct raft_entry){42, 43, 7, RAFT_ENTRY_DATA, payload_a, sizeof(payload_a)};
            ents[1] = (struct raft_entry){44, 44, 7, RAFT_ENTRY_NOOP, NULL, 0};
            ents[2] = (struct raft_entry){45, 45, 7, RAFT_ENTRY_CONFIG, payload_b,
                                          sizeof(payload_b)};
            m.entries = ents;
            m.n_entries = 3;
            m.last = 45;
        }
        if (t == RAFT_MSG_APPEND_RESP || t == RAFT_MSG_VOTE_RESP)
            m.reject = true;
        if (t == RAFT_MSG_VOTE)
            m.transfer = true;
        if (t == RAFT_MSG_INSTALL) {
            m.conf.n_voters = 3;
            m.conf.voters[0] = 1, m.conf.voters[1] = 2, m.conf.voters[2] = 4;
            m.conf.n_old = 2;
            m.conf.old[0] = 1, m.conf.old[1] = 2;
        }
        if (t == RAFT_MSG_HEARTBEAT || t == RAFT_MSG_HEARTBEAT_RESP) {
            m.index = -1; /* what heartbeats decode to */
            m.log_term = 0;
            m.last = 0;
        }
        ms[n++] = m;
    }
    return n;
}

static uint8_t *encode_all(size_t *len)
{
    struct raft_msg ms[RAFT_MSG_TYPE_END_];
    struct raft_entry ents[3];
    size_t n = all_types(ms, ents);
    struct rpc_builder b;
    rpc_builder_init(&b, RPC_RAFT);
    for (size_t i = 0; i < n; i++) {
        struct rpc_group g = grp(i % 2 ? "orders" : RPC_CONTROLLER_TOPIC, (int32_t)i);
        rpc_builder_add(&b, &g, &ms[i]);
    }
    struct iobuf out;
    iobuf_init(&out);
    rpc_builder_finish(&b, 1, 2, &out);
    rpc_builder_destroy(&b);
    return take_frame(&out, len);
}

TEST(raft_rpc_roundtrip_every_type)
{
    struct raft_msg ms[RAFT_MSG_TYPE_END_];
    struct raft_entry ents[3];
    size_t n = all_types(ms, ents);
    size_t len;
    uint8_t *f = encode_all(&len);

    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_RAFT);
    ASSERT_EQ(h.from, 1);
    ASSERT_EQ(h.to, 2);
    struct rpc_batch bt;
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), 0);
    ASSERT_EQ(bt.n_items, n);
    ASSERT_EQ(bt.n_entries, 3);
    for (size_t i = 0; i < n; i++) {
        const struct rpc_item *it = &bt.items[i];
        const char *topic = i % 2 ? "orders" : RPC_CONTROLLER_TOPIC;
        ASSERT_EQ(it->group.topic_len, strlen(topic));
        ASSERT_MEMEQ(it->group.topic, topic, strlen(topic));
        ASSERT_EQ(it->group.partition, (int32_t)i);
        ASSERT(msg_eq(&it->msg, &ms[i]));
    }
    /* Zero copy: entry payloads point into the frame. */
    const struct raft_entry *e = &bt.items[0].msg.entries[0];
    ASSERT(e->payload >= f && e->payload + e->len <= f + len);
    rpc_batch_free(&bt);
    mem_free(f);
}

TEST(raft_rpc_hello_and_error_roundtrip)
{
    struct iobuf out;
    iobuf_init(&out);
    rpc_encode_hello(&out, 3, 5, "cluster-xyz", NULL);
    size_t len;
    uint8_t *f = take_frame(&out, &len);
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_HELLO);
    ASSERT_EQ(h.from, 3);
    ASSERT_EQ(h.to, 5);
    struct rpc_hello hello;
    ASSERT_EQ(rpc_decode_hello(body, body_len, &hello), 0);
    ASSERT_EQ(hello.version, RPC_VERSION);
    ASSERT_EQ(hello.cluster_id_len, 11);
    ASSERT_MEMEQ(hello.cluster_id, "cluster-xyz", 11);
    /* A hello is not a batch. */
    struct rpc_batch bt;
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    mem_free(f);

    rpc_encode_hello_ok(&out, 5, 3, NULL, NULL);
    f = take_frame(&out, &len);
    ASSERT_EQ(len, RPC_HEADER_BYTES);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_HELLO_OK);
    ASSERT_EQ(body_len, 0);
    mem_free(f);

    rpc_encode_error(&out, 5, 3, RPC_ERR_CLUSTER, "wrong cluster");
    f = take_frame(&out, &len);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_ERROR);
    struct rpc_error err;
    ASSERT_EQ(rpc_decode_error(body, body_len, &err), 0);
    ASSERT_EQ(err.code, RPC_ERR_CLUSTER);
    ASSERT_EQ(err.text_len, 13);
    ASSERT_MEMEQ(err.text, "wrong cluster", 13);
    /* Wrong version: distinguishable, header still readable. */
    f[1] = RPC_VERSION + 1;
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), -ERR_UNSUPPORTED);
    ASSERT_EQ(h.type, RPC_ERROR);
    mem_free(f);
}

static uint8_t *encode_heartbeats(size_t n_groups, size_t *len)
{
    struct rpc_builder b;
    rpc_builder_init(&b, RPC_HEARTBEATS);
    char topic[32];
    for (size_t i = 0; i < n_groups; i++) {
        snprintf(topic, sizeof(topic), "topic-%zu", i % 10);
        struct rpc_group g = grp(topic, (int32_t)(i / 10));
        struct raft_msg m = base_msg(i % 3 ? RAFT_MSG_HEARTBEAT : RAFT_MSG_HEARTBEAT_RESP);
        m.term = (int64_t)(i % 50) + 1;
        m.commit = (int64_t)i * 1000 - 1;
        m.reject = i % 7 == 0;
        rpc_builder_add(&b, &g, &m);
    }
    ASSERT_EQ(rpc_builder_count(&b), n_groups);
    struct iobuf out;
    iobuf_init(&out);
    size_t est = rpc_builder_bytes(&b);
    rpc_builder_finish(&b, 1, 2, &out);
    ASSERT(rpc_builder_empty(&b));
    ASSERT_CMP(iobuf_total(&out), <=, est);
    rpc_builder_destroy(&b);
    return take_frame(&out, len);
}

TEST(raft_rpc_heartbeats_coalesce_ten_thousand_groups)
{
    size_t n_groups = 10000, len;
    uint8_t *f = encode_heartbeats(n_groups, &len);
    /* Compact: a few bytes per group, the topic names once. */
    ASSERT_CMP(len, <, n_groups * 12);
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_HEARTBEATS);
    struct rpc_batch bt;
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), 0);
    ASSERT_EQ(bt.n_items, n_groups);
    /* Heartbeats first, then responses; each keeps its own fields. */
    bool seen[10000] = {false};
    size_t n_hb = 0;
    for (size_t k = 0; k < bt.n_items; k++) {
        const struct rpc_item *it = &bt.items[k];
        ASSERT_EQ(it->group.topic_len, 7);
        size_t i = (size_t)it->group.partition * 10 + (size_t)(it->group.topic[6] - '0');
        ASSERT_CMP(i, <, n_groups);
        ASSERT(!seen[i]);
        seen[i] = true;
        ASSERT_EQ(it->msg.type, i % 3 ? RAFT_MSG_HEARTBEAT : RAFT_MSG_HEARTBEAT_RESP);
        if (it->msg.type == RAFT_MSG_HEARTBEAT) {
            ASSERT_EQ(k, n_hb);
            n_hb++;
        }
        ASSERT_EQ(it->msg.term, (int64_t)(i % 50) + 1);
        ASSERT_EQ(it->msg.commit, (int64_t)i * 1000 - 1);
        ASSERT_EQ(it->msg.reject, i % 7 == 0);
        ASSERT_EQ(it->msg.index, -1);
        ASSERT_EQ(it->msg.from, 1);
        ASSERT_EQ(it->msg.to, 2);
    }
    rpc_batch_free(&bt);
    mem_free(f);
}

/* Decodes a frame completely; returns 0 if every part decoded. */
static int decode_any(const uint8_t *f, size_t len, bool skip_crc)
{
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    int rc;
    if (skip_crc) {
        if (len < RPC_HEADER_BYTES)
            return -ERR_CORRUPT;
        h.type = f[2];
        h.from = 1;
        h.to = 2;
        body = f + RPC_HEADER_BYTES;
        body_len = len - RPC_HEADER_BYTES;
    } else if ((rc = rpc_decode_header(f, len, &h, &body, &body_len)) != 0) {
        return rc;
    }
    if (h.type == RPC_HELLO) {
        struct rpc_hello hello;
        return rpc_decode_hello(body, body_len, &hello);
    }
    if (h.type == RPC_ERROR) {
        struct rpc_error e;
        return rpc_decode_error(body, body_len, &e);
    }
    if (h.type == RPC_HELLO_OK)
        return 0;
    struct rpc_batch bt;
    rc = rpc_decode_batch(&h, body, body_len, &bt);
    if (rc == 0) {
        /* A decoded batch re-encodes (its messages are well-formed enough for the encoder). */
        struct rpc_builder b;
        rpc_builder_init(&b, h.type);
        for (size_t i = 0; i < bt.n_items; i++) {
            ASSERT(bt.items[i].group.topic_len >= 1);
            ASSERT(bt.items[i].group.partition >= 0);
            ASSERT(raft_conf_valid(&bt.items[i].msg.conf));
            if (h.type == RPC_RAFT || bt.items[i].msg.term >= 0)
                rpc_builder_add(&b, &bt.items[i].group, &bt.items[i].msg);
        }
        rpc_builder_destroy(&b);
        rpc_batch_free(&bt);
    } else {
        ASSERT(bt.items == NULL && bt.n_items == 0);
    }
    return rc;
}

static void torture(uint8_t *f, size_t len)
{
    /* Every truncation is rejected (the CRC covers everything, and a body cut short fails). */
    for (size_t cut = 0; cut < len; cut++) {
        ASSERT_NE(decode_any(f, cut, false), 0);
        int rc = decode_any(f, cut, true);
        ASSERT(rc == 0 || rc == -ERR_CORRUPT);
    }
    ASSERT_EQ(decode_any(f, len, false), 0);
    /* Every single-bit flip: caught by the CRC; past the CRC, it decodes to something
     * well-formed or is rejected, without sanitizer findings. */
    for (size_t bit = 0; bit < len * 8; bit++) {
        f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        ASSERT_NE(decode_any(f, len, false), 0);
        int rc = decode_any(f, len, true);
        ASSERT(rc == 0 || rc == -ERR_CORRUPT);
        f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
}

TEST(raft_rpc_truncations_and_bit_flips_rejected)
{
    size_t len;
    uint8_t *f = encode_all(&len);
    torture(f, len);
    mem_free(f);
    f = encode_heartbeats(30, &len);
    torture(f, len);
    mem_free(f);
    struct iobuf out;
    iobuf_init(&out);
    rpc_encode_hello(&out, 3, 5, "c1", NULL);
    f = take_frame(&out, &len);
    torture(f, len);
    mem_free(f);
    rpc_encode_error(&out, 3, 5, RPC_ERR_NODE, "unknown node");
    f = take_frame(&out, &len);
    torture(f, len);
    mem_free(f);
}

/* Builds a frame around a hand-made body with a valid CRC. */
static size_t make_frame(uint8_t *dst, uint8_t type, const uint8_t *body, size_t n)
{
    dst[0] = RPC_MAGIC;
    dst[1] = RPC_VERSION;
    dst[2] = type;
    dst[3] = 0;
    memset(dst + 4, 0, 8);
    dst[7] = 1;
    dst[11] = 2;
    uint32_t crc = crc32c(crc32c(0, dst, 12), body, n);
    dst[12] = (uint8_t)(crc >> 24), dst[13] = (uint8_t)(crc >> 16);
    dst[14] = (uint8_t)(crc >> 8), dst[15] = (uint8_t)crc;
    if (n)
        memcpy(dst + RPC_HEADER_BYTES, body, n);
    return RPC_HEADER_BYTES + n;
}

TEST(raft_rpc_huge_counts_rejected_before_allocation)
{
    uint8_t f[256];
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    struct rpc_batch bt;
    nt_alloc_peak_reset();
    /* A topic table of 2^62 topics. */
    uint8_t b1[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x3f, 1, 'a'};
    size_t len = make_frame(f, RPC_RAFT, b1, sizeof(b1));
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    /* One topic, then 2^32 - 1 messages. */
    uint8_t b2[] = {1, 1, 'a', 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    len = make_frame(f, RPC_RAFT, b2, sizeof(b2));
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    /* Heartbeats: 2^40 of them. */
    uint8_t b3[] = {1, 1, 'a', 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0, 0, 0, 0, 0};
    len = make_frame(f, RPC_HEARTBEATS, b3, sizeof(b3));
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    /* An APPEND announcing 65536 entries and a 4 GiB payload. */
    uint8_t b4[128] = {1, 1, 'a', 0, 0, 0, 1, 0, 0, 0, 0, 0, RAFT_MSG_APPEND, 0};
    size_t n = 14 + 40;
    b4[n++] = 0, b4[n++] = 1, b4[n++] = 0, b4[n++] = 0;
    len = make_frame(f, RPC_RAFT, b4, n);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    n -= 4;
    b4[n++] = 0, b4[n++] = 0, b4[n++] = 0, b4[n++] = 1; /* one entry */
    memset(b4 + n, 0, 24);
    n += 24;
    b4[n++] = RAFT_ENTRY_DATA;
    b4[n++] = 0xff, b4[n++] = 0xff, b4[n++] = 0xff, b4[n++] = 0xff;
    len = make_frame(f, RPC_RAFT, b4, n);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    /* None of the above allocated anything sized by its counts. */
    if (nt_alloc_peak_available())
        ASSERT_CMP(nt_alloc_peak(), <, 4096);
    /* The same with an empty payload decodes: the frames above were wrong only in their counts. */
    b4[n - 4] = 0, b4[n - 3] = 0, b4[n - 2] = 0, b4[n - 1] = 0;
    len = make_frame(f, RPC_RAFT, b4, n);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), 0);
    ASSERT_EQ(bt.n_items, 1);
    ASSERT_EQ(bt.n_entries, 1);
    ASSERT_EQ(bt.items[0].msg.type, RAFT_MSG_APPEND);
    rpc_batch_free(&bt);
}

TEST(raft_rpc_bad_enums_rejected)
{
    uint8_t f[256];
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    struct rpc_batch bt;
    uint8_t b[64] = {1, 1, 'a', 0, 0, 0, 1, 0, 0, 0, 0, 0, RAFT_MSG_VOTE, 0};
    size_t n = 14 + 40;
    size_t len = make_frame(f, RPC_RAFT, b, n);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), 0);
    rpc_batch_free(&bt);
    uint8_t bad_types[] = {0, RAFT_MSG_TYPE_END_, 255};
    for (size_t i = 0; i < ARRAY_LEN(bad_types); i++) {
        b[12] = bad_types[i];
        len = make_frame(f, RPC_RAFT, b, n);
        ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
        ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    }
    b[12] = RAFT_MSG_VOTE;
    b[13] = 4; /* unknown flag */
    len = make_frame(f, RPC_RAFT, b, n);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    b[13] = 0;
    /* body: topic table [0, 3), n_msgs [3, 7), topic index 7, partition [8, 12), type 12 */
    b[7] = 1; /* topic index 1 of a table of 1 */
    len = make_frame(f, RPC_RAFT, b, n);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    b[7] = 0;
    b[8] = 0x80; /* negative partition */
    len = make_frame(f, RPC_RAFT, b, n);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    /* Unknown frame type, negative node id, nonzero flags: caught after the CRC. */
    len = make_frame(f, RPC_FRAME_TYPE_END_, NULL, 0);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), -ERR_CORRUPT);
    len = make_frame(f, 0, NULL, 0);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), -ERR_CORRUPT);
    f[0] = RPC_MAGIC ^ 1;
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), -ERR_CORRUPT);
}

TEST(raft_rpc_controller_frames_roundtrip_and_validate)
{
    static const uint8_t cmd[] = {1, 2, 3, 4, 5, 6, 7};
    struct iobuf out;
    iobuf_init(&out);
    rpc_encode_controller(&out, RPC_CONTROLLER_REQUEST, 2, 1, 0x0102030405060708ull, cmd,
                          sizeof(cmd));
    size_t len;
    uint8_t *f = take_frame(&out, &len);
    ASSERT_EQ(len, RPC_HEADER_BYTES + 12 + sizeof(cmd));
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_CONTROLLER_REQUEST);
    ASSERT_EQ(h.from, 2);
    ASSERT_EQ(h.to, 1);
    struct rpc_controller c;
    ASSERT_EQ(rpc_decode_controller(body, body_len, &c), 0);
    ASSERT_UEQ(c.request_id, 0x0102030405060708ull);
    ASSERT_EQ(c.len, sizeof(cmd));
    ASSERT_MEMEQ(c.body, cmd, sizeof(cmd));
    /* Truncated anywhere, or with a trailing byte: corrupt. */
    for (size_t cut = 0; cut < body_len; cut++)
        ASSERT_EQ(rpc_decode_controller(body, cut, &c), -ERR_CORRUPT);
    uint8_t longer[64];
    memcpy(longer, body, body_len);
    longer[body_len] = 0;
    ASSERT_EQ(rpc_decode_controller(longer, body_len + 1, &c), -ERR_CORRUPT);
    /* A length above the cap is refused before it is compared with the bytes. */
    uint8_t huge[12] = {0};
    uint32_t n = RPC_CONTROLLER_BODY_MAX + 1;
    huge[8] = (uint8_t)(n >> 24);
    huge[9] = (uint8_t)(n >> 16);
    huge[10] = (uint8_t)(n >> 8);
    huge[11] = (uint8_t)n;
    ASSERT_EQ(rpc_decode_controller(huge, sizeof(huge), &c), -ERR_CORRUPT);
    /* Every bit of the frame is covered by the CRC. */
    for (size_t bit = 0; bit < len * 8; bit++) {
        f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        int rc = rpc_decode_header(f, len, &h, &body, &body_len);
        ASSERT(rc != 0);
        f[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    mem_free(f);

    /* An empty answer. */
    rpc_encode_controller(&out, RPC_CONTROLLER_RESPONSE, 1, 2, 7, NULL, 0);
    f = take_frame(&out, &len);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_CONTROLLER_RESPONSE);
    ASSERT_EQ(rpc_decode_controller(body, body_len, &c), 0);
    ASSERT_UEQ(c.request_id, 7);
    ASSERT_EQ(c.len, 0);
    ASSERT_STREQ(rpc_frame_type_name(RPC_CONTROLLER_RESPONSE), "controller_response");
    /* Not a batch. */
    struct rpc_batch bt;
    ASSERT_EQ(rpc_decode_batch(&h, body, body_len, &bt), -ERR_CORRUPT);
    mem_free(f);

    /* The metadata fetch frames share the controller body. */
    ASSERT(rpc_is_controller_type(RPC_METADATA_FETCH));
    ASSERT(rpc_is_controller_type(RPC_METADATA_RESPONSE));
    ASSERT(!rpc_is_controller_type(RPC_RAFT));
    ASSERT(!rpc_is_controller_type(RPC_HELLO));
    rpc_encode_controller(&out, RPC_METADATA_RESPONSE, 3, 1, 11, (const uint8_t *)"xyz", 3);
    f = take_frame(&out, &len);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_METADATA_RESPONSE);
    ASSERT_EQ(rpc_decode_controller(body, body_len, &c), 0);
    ASSERT_UEQ(c.request_id, 11);
    ASSERT_EQ(c.len, 3);
    ASSERT_STREQ(rpc_frame_type_name(RPC_METADATA_FETCH), "metadata_fetch");
    mem_free(f);
}

/* The discovery exchange of controller.quorum.bootstrap.servers: a QUORUM_INFO round-trips
 * field by field, and every malformed body (short, long, bad counts, empty or NUL-bearing
 * strings, port 0, duplicate voter ids, leader below -1) is refused whole. */
TEST(raft_rpc_quorum_describe_and_info)
{
    struct iobuf out;
    iobuf_init(&out);
    rpc_encode_quorum_describe(&out, 9, NULL);
    size_t len;
    uint8_t *f = take_frame(&out, &len);
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_QUORUM_DESCRIBE);
    ASSERT_EQ(h.from, 9);
    uint16_t version = 0;
    const uint8_t *nonce;
    ASSERT_EQ(rpc_decode_quorum_describe(body, body_len, &version, &nonce), 0);
    ASSERT_EQ(version, RPC_VERSION);
    ASSERT(nonce == NULL);
    ASSERT_EQ(rpc_decode_quorum_describe(body, body_len - 1, &version, &nonce), -ERR_CORRUPT);
    struct rpc_hello hello; /* not a HELLO: the transport tells them apart by type */
    ASSERT_EQ(rpc_decode_hello(body, body_len, &hello), -ERR_CORRUPT);
    mem_free(f);

    struct rpc_quorum_info in = {.leader = 2, .n_voters = 3};
    snprintf(in.cluster_id, sizeof(in.cluster_id), "tGqFtfMeAOsMC0l9QVxeDw");
    in.voters[0] = (struct rpc_quorum_voter){1, "127.0.0.1", 9093};
    in.voters[1] = (struct rpc_quorum_voter){2, "broker-2.example.com", 65535};
    in.voters[2] = (struct rpc_quorum_voter){7, "::1", 1};
    rpc_encode_quorum_info(&out, 1, 9, &in, NULL);
    f = take_frame(&out, &len);
    ASSERT_EQ(rpc_decode_header(f, len, &h, &body, &body_len), 0);
    ASSERT_EQ(h.type, RPC_QUORUM_INFO);
    ASSERT_EQ(h.to, 9);
    struct rpc_quorum_info got;
    ASSERT_EQ(rpc_decode_quorum_info(body, body_len, &got, NULL), 0);
    ASSERT_STREQ(got.cluster_id, in.cluster_id);
    ASSERT_EQ(got.leader, 2);
    ASSERT_EQ(got.n_voters, 3);
    for (size_t i = 0; i < 3; i++) {
        ASSERT_EQ(got.voters[i].id, in.voters[i].id);
        ASSERT_STREQ(got.voters[i].host, in.voters[i].host);
        ASSERT_EQ(got.voters[i].port, in.voters[i].port);
    }
    /* every truncation and one extra byte */
    for (size_t cut = 0; cut < body_len; cut++)
        ASSERT_EQ(rpc_decode_quorum_info(body, cut, &got, NULL), -ERR_CORRUPT);
    uint8_t *b = mem_alloc(body_len + 1);
    memcpy(b, body, body_len);
    b[body_len] = 0;
    ASSERT_EQ(rpc_decode_quorum_info(b, body_len + 1, &got, NULL), -ERR_CORRUPT);
    /* layout: u16 22 + id, i32 leader at 24, u8 n at 28, voter 0 at 29: id, u16 9, host, port */
    size_t v0 = 2 + 22 + 4 + 1;
    struct {
        size_t at;
        uint8_t val;
    } bad[] = {
        {28, 0},           /* no voters */
        {28, RPC_QUORUM_VOTERS_MAX + 1},
        {24, 0xff},        /* leader -2 and below (0xff......02) */
        {5, 0},            /* a NUL inside the cluster id */
        {v0, 0x80},        /* voter id < 0 */
        {v0 + 6, 0},       /* a NUL inside the host */
        {v0 + 15, 0},      /* port 0: high byte ... */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        memcpy(b, body, body_len);
        b[bad[i].at] = bad[i].val;
        if (bad[i].at == v0 + 15)
            b[v0 + 16] = 0; /* ... and low byte */
        ASSERT_EQ(rpc_decode_quorum_info(b, body_len, &got, NULL), -ERR_CORRUPT);
        ASSERT_EQ(got.n_voters, 0); /* refused whole */
    }
    /* voter 2 takes voter 0's id */
    memcpy(b, body, body_len);
    size_t v2 = v0 + (4 + 2 + 9 + 2) + (4 + 2 + 20 + 2);
    ASSERT_EQ(be_get32(b + v2), 7);
    be_put32(b + v2, 1);
    ASSERT_EQ(rpc_decode_quorum_info(b, body_len, &got, NULL), -ERR_CORRUPT);
    mem_free(b);
    mem_free(f);
}
