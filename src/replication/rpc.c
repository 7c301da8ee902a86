/* The inter-broker Raft RPC codec (layout and contracts in replication/rpc.h).
 *
 * Encoding appends to plain growable byte arrays (the builder's topic table and its one or two
 * message sections) and assembles the frame at rpc_builder_finish, when the topic table is
 * complete. Decoding uses a bounds-checked reader with a sticky error and runs twice over a
 * RAFT/HEARTBEATS body: a first pass validates everything and counts messages and entries, a
 * second fills arrays of exactly those sizes. So nothing is allocated for a malformed body
 * beyond its topic table (bounded by its bytes), and never more than O(body bytes). */
#include <string.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/mem.h"
#include "base/varint.h"
#include "replication/rpc.h"

#define RPC_FLAG_REJECT 0x1u
#define RPC_FLAG_TRANSFER 0x2u
#define RPC_MSG_FIXED_BYTES (4 + 1 + 1 + 5 * 8) /* after the topic index */
#define RPC_ENTRY_FIXED_BYTES (3 * 8 + 1 + 4)
#define RPC_HB_MIN_BYTES 5

_Static_assert(RPC_HEADER_BYTES == 16, "header layout");

/* ---- small writers ------------------------------------------------------------------------- */

struct wbuf {
    uint8_t **p;
    size_t *len;
    size_t *cap;
};

static uint8_t *wb_room(struct wbuf w, size_t n)
{
    MEM_GROW(*w.p, *w.cap, *w.len + n);
    uint8_t *at = *w.p + *w.len;
    *w.len += n;
    return at;
}

static void wb_u8(struct wbuf w, uint8_t v)
{
    *wb_room(w, 1) = v;
}
static void wb_u32(struct wbuf w, uint32_t v)
{
    be_put32(wb_room(w, 4), v);
}
static void wb_i64(struct wbuf w, int64_t v)
{
    be_put64(wb_room(w, 8), (uint64_t)v);
}
static void wb_bytes(struct wbuf w, const void *p, size_t n)
{
    if (n)
        memcpy(wb_room(w, n), p, n);
}
static void wb_uvar(struct wbuf w, uint64_t v)
{
    uint8_t tmp[VARINT64_MAX_BYTES];
    wb_bytes(w, tmp, uvarint64_put(tmp, v));
}
static void wb_var(struct wbuf w, int64_t v)
{
    uint8_t tmp[VARINT64_MAX_BYTES];
    wb_bytes(w, tmp, varint64_put(tmp, v));
}

/* Writes size prefix + header for a body of body_len bytes into hdr (4 + 16 bytes); the CRC
 * still has to be continued over the body: returns the CRC of the header part. */
static uint32_t frame_head(uint8_t *hdr, uint8_t type, int32_t from, int32_t to, size_t body_len)
{
    CHECK(body_len <= (size_t)INT32_MAX - RPC_HEADER_BYTES);
    be_put32(hdr, (uint32_t)(RPC_HEADER_BYTES + body_len));
    uint8_t *h = hdr + 4;
    h[0] = RPC_MAGIC;
    h[1] = RPC_VERSION;
    h[2] = type;
    h[3] = 0;
    be_put32(h + 4, (uint32_t)from);
    be_put32(h + 8, (uint32_t)to);
    return crc32c(0, h, 12);
}

static void emit_frame(struct iobuf *out, uint8_t type, int32_t from, int32_t to,
                       const uint8_t *body, size_t len)
{
    uint8_t hdr[4 + RPC_HEADER_BYTES];
    uint32_t crc = frame_head(hdr, type, from, to, len);
    be_put32(hdr + 4 + 12, crc32c(crc, body, len));
    iobuf_append(out, hdr, sizeof(hdr));
    iobuf_append(out, body, len);
}

void rpc_encode_hello(struct iobuf *out, int32_t from, int32_t to, const char *cluster_id,
                      const uint8_t *nonce)
{
    size_t n = strlen(cluster_id);
    CHECK(n >= 1 && n <= RPC_CLUSTER_ID_MAX);
    uint8_t body[4 + RPC_CLUSTER_ID_MAX + RPC_NONCE_LEN];
    be_put16(body, RPC_VERSION);
    be_put16(body + 2, (uint16_t)n);
    memcpy(body + 4, cluster_id, n);
    if (nonce)
        memcpy(body + 4 + n, nonce, RPC_NONCE_LEN);
    emit_frame(out, RPC_HELLO, from, to, body, 4 + n + (nonce ? RPC_NONCE_LEN : 0));
}

void rpc_encode_hello_ok(struct iobuf *out, int32_t from, int32_t to, const uint8_t *nonce,
                         const uint8_t *proof)
{
    CHECK((nonce == NULL) == (proof == NULL));
    uint8_t body[RPC_NONCE_LEN + RPC_PROOF_LEN];
    if (nonce) {
        memcpy(body, nonce, RPC_NONCE_LEN);
        memcpy(body + RPC_NONCE_LEN, proof, RPC_PROOF_LEN);
    }
    emit_frame(out, RPC_HELLO_OK, from, to, body, nonce ? sizeof(body) : 0);
}

void rpc_encode_auth(struct iobuf *out, int32_t from, int32_t to,
                     const uint8_t proof[RPC_PROOF_LEN])
{
    emit_frame(out, RPC_AUTH, from, to, proof, RPC_PROOF_LEN);
}

void rpc_encode_quorum_describe(struct iobuf *out, int32_t from, const uint8_t *nonce)
{
    uint8_t body[2 + RPC_NONCE_LEN];
    be_put16(body, RPC_VERSION);
    if (nonce)
        memcpy(body + 2, nonce, RPC_NONCE_LEN);
    emit_frame(out, RPC_QUORUM_DESCRIBE, from, 0, body, 2 + (nonce ? RPC_NONCE_LEN : 0));
}

void rpc_encode_quorum_info(struct iobuf *out, int32_t from, int32_t to,
                            const struct rpc_quorum_info *info, const uint8_t *proof)
{
    uint8_t body[RPC_QUORUM_INFO_MAX + RPC_PROOF_LEN];
    size_t o = rpc_quorum_info_body(info, body);
    if (proof) {
        memcpy(body + o, proof, RPC_PROOF_LEN);
        o += RPC_PROOF_LEN;
    }
    emit_frame(out, RPC_QUORUM_INFO, from, to, body, o);
}

size_t rpc_quorum_info_body(const struct rpc_quorum_info *info, uint8_t *body)
{
    size_t n = strlen(info->cluster_id);
    CHECK(n >= 1 && n <= RPC_CLUSTER_ID_MAX);
    CHECK(info->n_voters >= 1 && info->n_voters <= RPC_QUORUM_VOTERS_MAX);
    size_t o = 0;
    be_put16(body + o, (uint16_t)n);
    memcpy(body + o + 2, info->cluster_id, n);
    o += 2 + n;
    be_put32(body + o, (uint32_t)info->leader);
    body[o + 4] = (uint8_t)info->n_voters;
    o += 5;
    for (size_t i = 0; i < info->n_voters; i++) {
        const struct rpc_quorum_voter *v = &info->voters[i];
        size_t h = strlen(v->host);
        CHECK(v->id >= 0 && h >= 1 && h <= RPC_HOST_MAX && v->port >= 1 && v->port <= 65535);
        be_put32(body + o, (uint32_t)v->id);
        be_put16(body + o + 4, (uint16_t)h);
        memcpy(body + o + 6, v->host, h);
        be_put16(body + o + 6 + h, (uint16_t)v->port);
        o += 8 + h;
    }
    return o;
}

void rpc_encode_error(struct iobuf *out, int32_t from, int32_t to, int16_t code, const char *text)
{
    size_t n = MIN(strlen(text), (size_t)RPC_ERROR_TEXT_MAX);
    uint8_t body[4 + RPC_ERROR_TEXT_MAX];
    be_put16(body, (uint16_t)code);
    be_put16(body + 2, (uint16_t)n);
    memcpy(body + 4, text, n);
    emit_frame(out, RPC_ERROR, from, to, body, 4 + n);
}

void rpc_encode_controller(struct iobuf *out, uint8_t type, int32_t from, int32_t to,
                           uint64_t request_id, const uint8_t *body, size_t len)
{
    CHECK(rpc_is_controller_type(type));
    CHECK(len <= RPC_CONTROLLER_BODY_MAX && (len == 0 || body));
    uint8_t fixed[12];
    be_put64(fixed, request_id);
    be_put32(fixed + 8, (uint32_t)len);
    uint8_t hdr[4 + RPC_HEADER_BYTES];
    uint32_t crc = frame_head(hdr, type, from, to, sizeof(fixed) + len);
    crc = crc32c(crc, fixed, sizeof(fixed));
    be_put32(hdr + 4 + 12, crc32c(crc, body, len));
    iobuf_append(out, hdr, sizeof(hdr));
    iobuf_append(out, fixed, sizeof(fixed));
    if (len)
        iobuf_append(out, body, len);
}

/* ---- builder ------------------------------------------------------------------------------- */

void rpc_builder_init(struct rpc_builder *b, uint8_t type)
{
    CHECK(type == RPC_RAFT || type == RPC_HEARTBEATS);
    memset(b, 0, sizeof(*b));
    b->type = type;
    strmap_init(&b->topics);
}

void rpc_builder_destroy(struct rpc_builder *b)
{
    strmap_destroy(&b->topics);
    mem_free(b->table);
    mem_free(b->body[0]);
    mem_free(b->body[1]);
    memset(b, 0, sizeof(*b));
}

bool rpc_builder_empty(const struct rpc_builder *b)
{
    return b->n[0] == 0 && b->n[1] == 0;
}

size_t rpc_builder_count(const struct rpc_builder *b)
{
    return (size_t)b->n[0] + b->n[1];
}

size_t rpc_builder_bytes(const struct rpc_builder *b)
{
    /* prefix + header + topic count + table + section counts + sections */
    return 4 + RPC_HEADER_BYTES + VARINT64_MAX_BYTES + b->table_len + 2 * VARINT64_MAX_BYTES +
           b->len[0] + b->len[1];
}

size_t rpc_msg_size(const struct rpc_group *g, const struct raft_msg *m)
{
    size_t n =
        1 + g->topic_len + VARINT64_MAX_BYTES + RPC_MSG_FIXED_BYTES + 4 + 1 + RAFT_CONF_ENCODED_MAX;
    for (size_t i = 0; i < m->n_entries; i++)
        n += RPC_ENTRY_FIXED_BYTES + m->entries[i].len;
    return n;
}

static uint32_t topic_index(struct rpc_builder *b, const struct rpc_group *g)
{
    CHECK(g->topic_len >= 1 && g->topic_len <= RPC_TOPIC_MAX && g->partition >= 0);
    void *v = strmap_get(&b->topics, g->topic, g->topic_len);
    if (v)
        return (uint32_t)((uintptr_t)v - 1);
    uint32_t idx = (uint32_t)b->n_topics++;
    strmap_put(&b->topics, g->topic, g->topic_len, (void *)(uintptr_t)(idx + 1));
    struct wbuf w = {&b->table, &b->table_len, &b->table_cap};
    wb_u8(w, (uint8_t)g->topic_len);
    wb_bytes(w, g->topic, g->topic_len);
    return idx;
}

static void add_heartbeat(struct rpc_builder *b, uint32_t topic, const struct rpc_group *g,
                          const struct raft_msg *m)
{
    int s = m->type == RAFT_MSG_HEARTBEAT ? 0 : 1;
    CHECK(m->term >= 0 && m->n_entries == 0);
    struct wbuf w = {&b->body[s], &b->len[s], &b->cap[s]};
    wb_uvar(w, topic);
    wb_uvar(w, (uint64_t)g->partition);
    wb_uvar(w, (uint64_t)m->term);
    wb_var(w, m->commit);
    wb_u8(w, m->reject ? RPC_FLAG_REJECT : 0);
    b->n[s]++;
}

static void add_raft(struct rpc_builder *b, uint32_t topic, const struct rpc_group *g,
                     const struct raft_msg *m)
{
    CHECK(m->n_entries == 0 || m->type == RAFT_MSG_APPEND);
    CHECK(m->n_entries <= RAFT_MSG_ENTRIES_MAX);
    struct wbuf w = {&b->body[0], &b->len[0], &b->cap[0]};
    wb_uvar(w, topic);
    wb_u32(w, (uint32_t)g->partition);
    wb_u8(w, m->type);
    wb_u8(w, (uint8_t)((m->reject ? RPC_FLAG_REJECT : 0) | (m->transfer ? RPC_FLAG_TRANSFER : 0)));
    wb_i64(w, m->term);
    wb_i64(w, m->index);
    wb_i64(w, m->log_term);
    wb_i64(w, m->commit);
    wb_i64(w, m->last);
    if (m->type == RAFT_MSG_APPEND) {
        wb_u32(w, (uint32_t)m->n_entries);
        for (size_t i = 0; i < m->n_entries; i++) {
            const struct raft_entry *e = &m->entries[i];
            CHECK(e->kind >= RAFT_ENTRY_DATA && e->kind <= RAFT_ENTRY_CONFIG);
            CHECK(e->len <= UINT32_MAX);
            wb_i64(w, e->first);
            wb_i64(w, e->last);
            wb_i64(w, e->term);
            wb_u8(w, e->kind);
            wb_u32(w, (uint32_t)e->len);
            wb_bytes(w, e->payload, e->len);
        }
    } else if (m->type == RAFT_MSG_INSTALL) {
        uint8_t conf[RAFT_CONF_ENCODED_MAX];
        size_t n = raft_conf_encode(&m->conf, conf);
        wb_u8(w, (uint8_t)n);
        wb_bytes(w, conf, n);
    }
    b->n[0]++;
}

void rpc_builder_add(struct rpc_builder *b, const struct rpc_group *g, const struct raft_msg *m)
{
    CHECK(m->type >= RAFT_MSG_APPEND && m->type < RAFT_MSG_TYPE_END_);
    bool hb = m->type == RAFT_MSG_HEARTBEAT || m->type == RAFT_MSG_HEARTBEAT_RESP;
    CHECK(b->type == RPC_RAFT || hb);
    uint32_t topic = topic_index(b, g);
    if (b->type == RPC_HEARTBEATS)
        add_heartbeat(b, topic, g, m);
    else
        add_raft(b, topic, g, m);
}

void rpc_builder_finish(struct rpc_builder *b, int32_t from, int32_t to, struct iobuf *out)
{
    uint8_t mid[3 * VARINT64_MAX_BYTES];
    size_t mid_len = uvarint64_put(mid, b->n_topics);
    uint8_t cnt[2][VARINT64_MAX_BYTES];
    size_t cnt_len[2];
    if (b->type == RPC_RAFT) {
        be_put32(cnt[0], b->n[0]);
        cnt_len[0] = 4;
        cnt_len[1] = 0;
    } else {
        cnt_len[0] = uvarint64_put(cnt[0], b->n[0]);
        cnt_len[1] = uvarint64_put(cnt[1], b->n[1]);
    }
    size_t body_len = mid_len + b->table_len + cnt_len[0] + b->len[0] + cnt_len[1] + b->len[1];
    uint8_t hdr[4 + RPC_HEADER_BYTES];
    uint32_t crc = frame_head(hdr, b->type, from, to, body_len);
    crc = crc32c(crc, mid, mid_len);
    crc = crc32c(crc, b->table, b->table_len);
    for (int s = 0; s < 2; s++) {
        crc = crc32c(crc, cnt[s], cnt_len[s]);
        crc = crc32c(crc, b->body[s], b->len[s]);
    }
    be_put32(hdr + 4 + 12, crc);
    iobuf_append(out, hdr, sizeof(hdr));
    iobuf_append(out, mid, mid_len);
    iobuf_append(out, b->table, b->table_len);
    for (int s = 0; s < 2; s++) {
        iobuf_append(out, cnt[s], cnt_len[s]);
        iobuf_append(out, b->body[s], b->len[s]);
    }
    /* Empty for reuse, keeping the buffers (a peer's builders serve every tick). */
    strmap_destroy(&b->topics);
    strmap_init(&b->topics);
    b->table_len = 0;
    b->n_topics = 0;
    b->len[0] = b->len[1] = 0;
    b->n[0] = b->n[1] = 0;
}

/* ---- reader -------------------------------------------------------------------------------- */

struct reader {
    const uint8_t *p;
    const uint8_t *end;
    bool bad; /* sticky: once set, every read yields 0 */
};

static size_t rd_left(const struct reader *r)
{
    return r->bad ? 0 : (size_t)(r->end - r->p);
}

static const uint8_t *rd_take(struct reader *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *at = r->p;
    r->p += n;
    return at;
}

static uint8_t rd_u8(struct reader *r)
{
    const uint8_t *p = rd_take(r, 1);
    return p ? p[0] : 0;
}

static uint16_t rd_u16(struct reader *r)
{
    const uint8_t *p = rd_take(r, 2);
    return p ? (uint16_t)((p[0] << 8) | p[1]) : 0;
}

static uint32_t rd_u32(struct reader *r)
{
    const uint8_t *p = rd_take(r, 4);
    return p ? ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3] : 0;
}

static int64_t rd_i64(struct reader *r)
{
    uint64_t hi = rd_u32(r);
    uint64_t lo = rd_u32(r);
    return (int64_t)((hi << 32) | lo);
}

static uint64_t rd_uvar(struct reader *r)
{
    uint64_t v = 0;
    if (r->bad)
        return 0;
    size_t n = uvarint64_get(r->p, r->end, &v);
    if (n == 0) {
        r->bad = true;
        return 0;
    }
    r->p += n;
    return v;
}

static int64_t rd_var(struct reader *r)
{
    int64_t v = 0;
    if (r->bad)
        return 0;
    size_t n = varint64_get(r->p, r->end, &v);
    if (n == 0) {
        r->bad = true;
        return 0;
    }
    r->p += n;
    return v;
}

/* ---- decoding ------------------------------------------------------------------------------ */

int rpc_decode_header(const uint8_t *frame, size_t len, struct rpc_header *h, const uint8_t **body,
                      size_t *body_len)
{
    memset(h, 0, sizeof(*h));
    if (len < RPC_HEADER_BYTES || frame[0] != RPC_MAGIC)
        return -ERR_CORRUPT;
    h->type = frame[2];
    h->from = (int32_t)be_get32(frame + 4);
    h->to = (int32_t)be_get32(frame + 8);
    if (frame[1] != RPC_VERSION)
        return -ERR_UNSUPPORTED;
    uint32_t crc = crc32c(crc32c(0, frame, 12), frame + RPC_HEADER_BYTES, len - RPC_HEADER_BYTES);
    if (crc != be_get32(frame + 12))
        return -ERR_CORRUPT;
    if (h->type < RPC_HELLO || h->type >= RPC_FRAME_TYPE_END_ || frame[3] != 0 || h->from < 0 ||
        h->to < 0)
        return -ERR_CORRUPT;
    *body = frame + RPC_HEADER_BYTES;
    *body_len = len - RPC_HEADER_BYTES;
    return 0;
}

int rpc_decode_hello(const uint8_t *body, size_t len, struct rpc_hello *out)
{
    struct reader r = {body, body + len, false};
    memset(out, 0, sizeof(*out));
    out->version = rd_u16(&r);
    size_t n = rd_u16(&r);
    const uint8_t *id = rd_take(&r, n);
    if (r.bad || n < 1 || n > RPC_CLUSTER_ID_MAX)
        return -ERR_CORRUPT;
    if (r.end - r.p == RPC_NONCE_LEN)
        out->nonce = rd_take(&r, RPC_NONCE_LEN);
    if (r.p != r.end)
        return -ERR_CORRUPT;
    out->cluster_id = (const char *)id;
    out->cluster_id_len = n;
    return 0;
}

int rpc_decode_hello_ok(const uint8_t *body, size_t len, const uint8_t **nonce,
                        const uint8_t **proof)
{
    *nonce = *proof = NULL;
    if (len == 0)
        return 0;
    if (len != RPC_NONCE_LEN + RPC_PROOF_LEN)
        return -ERR_CORRUPT;
    *nonce = body;
    *proof = body + RPC_NONCE_LEN;
    return 0;
}

int rpc_decode_auth(const uint8_t *body, size_t len, const uint8_t **proof)
{
    *proof = len == RPC_PROOF_LEN ? body : NULL;
    return *proof ? 0 : -ERR_CORRUPT;
}

int rpc_decode_quorum_describe(const uint8_t *body, size_t len, uint16_t *version,
                               const uint8_t **nonce)
{
    struct reader r = {body, body + len, false};
    *version = rd_u16(&r);
    *nonce = NULL;
    if (!r.bad && r.end - r.p == RPC_NONCE_LEN)
        *nonce = rd_take(&r, RPC_NONCE_LEN);
    return r.bad || r.p != r.end ? -ERR_CORRUPT : 0;
}

int rpc_decode_quorum_info(const uint8_t *body, size_t len, struct rpc_quorum_info *out,
                           const uint8_t **proof)
{
    if (proof)
        *proof = NULL;
    /* a proof is the last RPC_PROOF_LEN bytes, when the rest decodes exactly without them */
    if (proof && len > RPC_PROOF_LEN &&
        rpc_decode_quorum_info(body, len - RPC_PROOF_LEN, out, NULL) == 0) {
        *proof = body + len - RPC_PROOF_LEN;
        return 0;
    }
    struct reader r = {body, body + len, false};
    memset(out, 0, sizeof(*out));
    size_t n = rd_u16(&r);
    const uint8_t *id = rd_take(&r, n);
    if (r.bad || n < 1 || n > RPC_CLUSTER_ID_MAX)
        goto bad;
    memcpy(out->cluster_id, id, n);
    if (memchr(out->cluster_id, '\0', n))
        goto bad;
    out->leader = (int32_t)rd_u32(&r);
    out->n_voters = rd_u8(&r);
    if (r.bad || out->leader < -1 || out->n_voters < 1 || out->n_voters > RPC_QUORUM_VOTERS_MAX)
        goto bad;
    for (size_t i = 0; i < out->n_voters; i++) {
        struct rpc_quorum_voter *v = &out->voters[i];
        v->id = (int32_t)rd_u32(&r);
        size_t h = rd_u16(&r);
        const uint8_t *host = rd_take(&r, h);
        v->port = rd_u16(&r);
        if (r.bad || v->id < 0 || h < 1 || h > RPC_HOST_MAX || memchr(host, '\0', h) ||
            v->port < 1)
            goto bad;
        memcpy(v->host, host, h);
        for (size_t j = 0; j < i; j++)
            if (out->voters[j].id == v->id)
                goto bad;
    }
    if (r.p != r.end)
        goto bad;
    return 0;
bad:
    memset(out, 0, sizeof(*out));
    return -ERR_CORRUPT;
}

int rpc_decode_error(const uint8_t *body, size_t len, struct rpc_error *out)
{
    struct reader r = {body, body + len, false};
    memset(out, 0, sizeof(*out));
    out->code = (int16_t)rd_u16(&r);
    size_t n = rd_u16(&r);
    const uint8_t *text = rd_take(&r, n);
    if (r.bad || r.p != r.end || n > RPC_ERROR_TEXT_MAX)
        return -ERR_CORRUPT;
    out->text = (const char *)text;
    out->text_len = n;
    return 0;
}

int rpc_decode_controller(const uint8_t *body, size_t len, struct rpc_controller *out)
{
    struct reader r = {body, body + len, false};
    memset(out, 0, sizeof(*out));
    uint64_t id = (uint64_t)rd_i64(&r);
    size_t n = rd_u32(&r);
    if (r.bad || n > RPC_CONTROLLER_BODY_MAX)
        return -ERR_CORRUPT;
    const uint8_t *p = rd_take(&r, n);
    if (r.bad || r.p != r.end)
        return -ERR_CORRUPT;
    out->request_id = id;
    out->body = p;
    out->len = n;
    return 0;
}

struct topic_ref {
    const char *name;
    size_t len;
};

/* Reads the topic table; *out allocated only for a count its bytes can hold. */
static int read_topics(struct reader *r, struct topic_ref **out, size_t *n_out)
{
    uint64_t n = rd_uvar(r);
    *out = NULL;
    *n_out = 0;
    if (r->bad || n > rd_left(r) / 2)
        return -ERR_CORRUPT;
    struct topic_ref *t = n ? mem_calloc(n, sizeof(*t)) : NULL;
    for (size_t i = 0; i < n; i++) {
        size_t len = rd_u8(r);
        t[i].name = (const char *)rd_take(r, len);
        t[i].len = len;
        if (r->bad || len < 1 || len > RPC_TOPIC_MAX) {
            mem_free(t);
            return -ERR_CORRUPT;
        }
    }
    *out = t;
    *n_out = n;
    return 0;
}

struct decode_ctx {
    const struct rpc_header *h;
    const struct topic_ref *topics;
    size_t n_topics;
    struct rpc_batch *out;   /* NULL in the counting pass */
    size_t n_items;          /* items seen so far */
    size_t n_entries;        /* entries seen so far */
    struct rpc_item scratch; /* the counting pass decodes into it */
};

static struct rpc_item *next_item(struct decode_ctx *c)
{
    struct rpc_item *it = c->out ? &c->out->items[c->n_items] : &c->scratch;
    c->n_items++;
    memset(it, 0, sizeof(*it));
    it->msg.from = c->h->from;
    it->msg.to = c->h->to;
    return it;
}

static bool read_group(struct reader *r, struct decode_ctx *c, struct rpc_group *g, bool var)
{
    uint64_t topic = rd_uvar(r);
    uint64_t part = var ? rd_uvar(r) : rd_u32(r);
    if (r->bad || topic >= c->n_topics || part > INT32_MAX)
        return false;
    g->topic = c->topics[topic].name;
    g->topic_len = c->topics[topic].len;
    g->partition = (int32_t)part;
    return true;
}

static bool read_heartbeat(struct reader *r, struct decode_ctx *c, uint8_t type)
{
    struct rpc_item *it = next_item(c);
    if (!read_group(r, c, &it->group, true))
        return false;
    uint64_t term = rd_uvar(r);
    int64_t commit = rd_var(r);
    uint8_t flags = rd_u8(r);
    if (r->bad || term > INT64_MAX || (flags & ~RPC_FLAG_REJECT) != 0)
        return false;
    it->msg.type = type;
    it->msg.term = (int64_t)term;
    it->msg.commit = commit;
    it->msg.index = -1;
    it->msg.reject = flags & RPC_FLAG_REJECT;
    return true;
}

static bool read_entries(struct reader *r, struct decode_ctx *c, struct raft_msg *m)
{
    uint32_t n = rd_u32(r);
    if (r->bad || n > RAFT_MSG_ENTRIES_MAX || n > rd_left(r) / RPC_ENTRY_FIXED_BYTES)
        return false;
    if (c->out && n)
        m->entries = &c->out->entries[c->n_entries];
    m->n_entries = n;
    for (uint32_t i = 0; i < n; i++) {
        struct raft_entry e;
        e.first = rd_i64(r);
        e.last = rd_i64(r);
        e.term = rd_i64(r);
        e.kind = rd_u8(r);
        e.len = rd_u32(r);
        e.payload = rd_take(r, e.len);
        if (r->bad || e.kind < RAFT_ENTRY_DATA || e.kind > RAFT_ENTRY_CONFIG)
            return false;
        if (c->out)
            m->entries[i] = e;
    }
    c->n_entries += n;
    return true;
}

static bool read_raft_msg(struct reader *r, struct decode_ctx *c)
{
    struct rpc_item *it = next_item(c);
    struct raft_msg *m = &it->msg;
    if (!read_group(r, c, &it->group, false))
        return false;
    m->type = rd_u8(r);
    uint8_t flags = rd_u8(r);
    m->term = rd_i64(r);
    m->index = rd_i64(r);
    m->log_term = rd_i64(r);
    m->commit = rd_i64(r);
    m->last = rd_i64(r);
    if (r->bad || m->type < RAFT_MSG_APPEND || m->type >= RAFT_MSG_TYPE_END_ ||
        (flags & ~(RPC_FLAG_REJECT | RPC_FLAG_TRANSFER)) != 0)
        return false;
    m->reject = flags & RPC_FLAG_REJECT;
    m->transfer = flags & RPC_FLAG_TRANSFER;
    if (m->type == RAFT_MSG_APPEND)
        return read_entries(r, c, m);
    if (m->type == RAFT_MSG_INSTALL) {
        size_t n = rd_u8(r);
        const uint8_t *conf = rd_take(r, n);
        return !r->bad && raft_conf_decode(&m->conf, conf, n) == 0;
    }
    return true;
}

/* One pass over the messages; c->out NULL: validate and count only. */
static bool read_msgs(struct reader *r, struct decode_ctx *c)
{
    if (c->h->type == RPC_RAFT) {
        uint32_t n = rd_u32(r);
        if (r->bad || n > rd_left(r) / (1 + RPC_MSG_FIXED_BYTES))
            return false;
        for (uint32_t i = 0; i < n; i++)
            if (!read_raft_msg(r, c))
                return false;
    } else {
        for (int s = 0; s < 2; s++) {
            uint64_t n = rd_uvar(r);
            if (r->bad || n > rd_left(r) / RPC_HB_MIN_BYTES)
                return false;
            uint8_t type = s == 0 ? RAFT_MSG_HEARTBEAT : RAFT_MSG_HEARTBEAT_RESP;
            for (uint64_t i = 0; i < n; i++)
                if (!read_heartbeat(r, c, type))
                    return false;
        }
    }
    return !r->bad && r->p == r->end;
}

int rpc_decode_batch(const struct rpc_header *h, const uint8_t *body, size_t len,
                     struct rpc_batch *out)
{
    memset(out, 0, sizeof(*out));
    if (h->type != RPC_RAFT && h->type != RPC_HEARTBEATS)
        return -ERR_CORRUPT;
    struct reader r = {body, body + len, false};
    struct decode_ctx c = {.h = h};
    struct topic_ref *topics;
    if (read_topics(&r, &topics, &c.n_topics) != 0)
        return -ERR_CORRUPT;
    c.topics = topics;
    const uint8_t *msgs = r.p;
    if (!read_msgs(&r, &c)) {
        mem_free(topics);
        return -ERR_CORRUPT;
    }
    /* Second pass: counts are now known and bounded by the bytes just read. */
    out->items = c.n_items ? mem_calloc(c.n_items, sizeof(*out->items)) : NULL;
    out->entries = c.n_entries ? mem_calloc(c.n_entries, sizeof(*out->entries)) : NULL;
    out->n_items = c.n_items;
    out->n_entries = c.n_entries;
    struct reader r2 = {msgs, body + len, false};
    c.out = out;
    c.n_items = 0;
    c.n_entries = 0;
    bool ok = read_msgs(&r2, &c);
    CHECK(ok && c.n_items == out->n_items && c.n_entries == out->n_entries);
    mem_free(topics);
    return 0;
}

void rpc_batch_free(struct rpc_batch *b)
{
    mem_free(b->items);
    mem_free(b->entries);
    memset(b, 0, sizeof(*b));
}

bool rpc_is_controller_type(uint8_t type)
{
    return type == RPC_CONTROLLER_REQUEST || type == RPC_CONTROLLER_RESPONSE ||
           type == RPC_METADATA_FETCH || type == RPC_METADATA_RESPONSE ||
           type == RPC_BROKER_REQUEST || type == RPC_BROKER_RESPONSE;
}

const char *rpc_frame_type_name(uint8_t type)
{
    switch (type) {
    case RPC_HELLO:
        return "hello";
    case RPC_HELLO_OK:
        return "hello_ok";
    case RPC_ERROR:
        return "error";
    case RPC_RAFT:
        return "raft";
    case RPC_HEARTBEATS:
        return "heartbeats";
    case RPC_CONTROLLER_REQUEST:
        return "controller_request";
    case RPC_CONTROLLER_RESPONSE:
        return "controller_response";
    case RPC_METADATA_FETCH:
        return "metadata_fetch";
    case RPC_METADATA_RESPONSE:
        return "metadata_response";
    case RPC_QUORUM_DESCRIBE:
        return "quorum_describe";
    case RPC_QUORUM_INFO:
        return "quorum_info";
    case RPC_AUTH:
        return "auth";
    case RPC_BROKER_REQUEST:
        return "broker_request";
    case RPC_BROKER_RESPONSE:
        return "broker_response";
    default:
        return "unknown";
    }
}
