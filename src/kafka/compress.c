/* Record-section codecs of Kafka batches (see compress.h).
 *
 * Decompression never trusts a size the input declares. The streaming codecs (gzip, lz4, zstd)
 * decode into a buffer that grows by doubling up to max_out; once it is full, one more step
 * into a one-byte scratch buffer tells whether the stream has more to give (-ERR_TOO_LARGE) or
 * has ended. Snappy blocks declare their length up front, and that length is checked against
 * what is left of max_out before anything is allocated. Hence:
 *   1. no decompression allocates more than max_out bytes of output (plus the codec's own
 *      bounded state: zstd windows are capped at 2^27 bytes and shrink with max_out),
 *   2. every failure frees what was allocated and leaves *out untouched,
 *   3. input that ends inside a frame, or carries bytes after the last frame that do not start
 *      a new one, is -ERR_CORRUPT.
 *
 * Compression writes what Kafka's Java clients write: gzip with a gzip header, snappy in the
 * xerial framing (32 KiB blocks), lz4 frames with independent 64 KiB blocks (the Java reader
 * refuses dependent blocks), zstd frames at level 3. */
#include "kafka/compress.h"

#include <errno.h>
#include <limits.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <stdbool.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "kafka/batch.h"

/* Inputs are record sections of one batch, far below this; zlib counts in 32-bit units. */
#define IN_MAX ((size_t)INT32_MAX)

#define XERIAL_HEADER_SIZE 16
#define XERIAL_BLOCK_SIZE (32 * 1024)
static const uint8_t xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

#define ZSTD_LEVEL 3
#define ZSTD_WINDOW_LOG_MIN 23 /* 8 MiB: what compression levels up to 19 use */
#define ZSTD_WINDOW_LOG_MAX 27 /* zstd's own default limit */

/* ---- output buffer ---- */

struct outbuf {
    uint8_t *p;
    size_t len; /* bytes produced */
    size_t cap; /* bytes allocated, <= max */
    size_t max; /* max_out */
};

static void out_init(struct outbuf *o, size_t max, size_t hint)
{
    o->max = max;
    o->len = 0;
    o->cap = MIN(max, MAX(hint, (size_t)4096));
    o->p = mem_alloc(o->cap);
}

/* Makes room for more output unless the buffer already holds max bytes. */
static bool out_room(struct outbuf *o)
{
    if (o->len < o->cap)
        return true;
    if (o->cap >= o->max)
        return false;
    o->cap = o->cap <= o->max / 2 ? MAX(o->cap * 2, (size_t)4096) : o->max;
    o->cap = MIN(o->cap, o->max);
    o->p = mem_realloc(o->p, o->cap);
    return true;
}

/* Makes the buffer hold at least need bytes (need <= max). */
static void out_reserve(struct outbuf *o, size_t need)
{
    if (need <= o->cap)
        return;
    size_t cap = MAX(need, o->cap <= o->max / 2 ? o->cap * 2 : o->max);
    o->cap = MIN(cap, o->max);
    o->p = mem_realloc(o->p, o->cap);
}

/* ---- streaming decoders ---- */

/* One step of a streaming decoder: reads from in[*pos..len), writes at most dst_cap bytes to
 * dst and reports them in *produced. Sets *ended when the input so far forms complete frames
 * whose output has all been delivered. Returns 0 or a negative error. */
typedef int (*step_fn)(void *ctx, const uint8_t *in, size_t len, size_t *pos, uint8_t *dst,
                       size_t dst_cap, size_t *produced, bool *ended);

static int drive(step_fn step, void *ctx, const uint8_t *in, size_t len, size_t max_out,
                 uint8_t **out, size_t *out_len)
{
    struct outbuf o;
    out_init(&o, max_out, len * 4);
    size_t pos = 0;
    bool ended = false;
    int rc;
    for (;;) {
        uint8_t scratch[1];
        bool probing = !out_room(&o);
        uint8_t *dst = probing ? scratch : o.p + o.len;
        size_t dst_cap = probing ? sizeof(scratch) : o.cap - o.len;
        size_t before = pos, produced = 0;
        rc = step(ctx, in, len, &pos, dst, dst_cap, &produced, &ended);
        if (rc != 0)
            goto out_free;
        if (probing && produced > 0) {
            rc = -ERR_TOO_LARGE;
            goto out_free;
        }
        o.len += produced;
        if (ended && pos == len)
            break;
        /* With room to write and no progress, the decoder waits for input that never comes. */
        if (produced == 0 && pos == before) {
            rc = -ERR_CORRUPT;
            goto out_free;
        }
    }
    *out = o.p;
    *out_len = o.len;
    return 0;

out_free:
    mem_free(o.p);
    return rc;
}

/* gzip (and zlib: inflate detects the header). Concatenated gzip members are accepted, as
 * Java's GZIPInputStream does. */
static int gzip_step(void *ctx, const uint8_t *in, size_t len, size_t *pos, uint8_t *dst,
                     size_t dst_cap, size_t *produced, bool *ended)
{
    z_stream *zs = ctx;
    if (*ended) {
        if (len - *pos < 2 || in[*pos] != 0x1f || in[*pos + 1] != 0x8b)
            return -ERR_CORRUPT; /* trailing bytes that are not another member */
        if (inflateReset(zs) != Z_OK)
            return -ERR_CORRUPT;
        *ended = false;
    }
    zs->next_in = (Bytef *)(in + *pos);
    zs->avail_in = (uInt)(len - *pos);
    zs->next_out = dst;
    zs->avail_out = (uInt)MIN(dst_cap, (size_t)UINT_MAX);
    int ret = inflate(zs, Z_NO_FLUSH);
    *pos = len - zs->avail_in;
    *produced = (size_t)(zs->next_out - dst);
    switch (ret) {
    case Z_STREAM_END:
        *ended = true;
        return 0;
    case Z_OK:
    case Z_BUF_ERROR: /* no progress possible: drive() sees it */
        return 0;
    case Z_MEM_ERROR:
        return -ENOMEM;
    default:
        return -ERR_CORRUPT;
    }
}

static int gzip_decompress(const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
                           size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 15 + 32) != Z_OK)
        return -ENOMEM;
    int rc = drive(gzip_step, &zs, in, len, max_out, out, out_len);
    inflateEnd(&zs);
    return rc;
}

static int lz4_step(void *ctx, const uint8_t *in, size_t len, size_t *pos, uint8_t *dst,
                    size_t dst_cap, size_t *produced, bool *ended)
{
    size_t src_size = len - *pos;
    size_t dst_size = dst_cap;
    size_t ret = LZ4F_decompress(ctx, dst, &dst_size, in + *pos, &src_size, NULL);
    if (LZ4F_isError(ret))
        return -ERR_CORRUPT;
    *pos += src_size;
    *produced = dst_size;
    *ended = ret == 0; /* 0: the frame is complete and flushed; a new one may follow */
    return 0;
}

static int lz4_decompress(const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
                          size_t *out_len)
{
    LZ4F_dctx *dctx;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION)))
        return -ENOMEM;
    int rc = drive(lz4_step, dctx, in, len, max_out, out, out_len);
    LZ4F_freeDecompressionContext(dctx);
    return rc;
}

static int zstd_step(void *ctx, const uint8_t *in, size_t len, size_t *pos, uint8_t *dst,
                     size_t dst_cap, size_t *produced, bool *ended)
{
    ZSTD_inBuffer ib = {in, len, *pos};
    ZSTD_outBuffer ob = {dst, dst_cap, 0};
    size_t ret = ZSTD_decompressStream(ctx, &ob, &ib);
    if (ZSTD_isError(ret))
        return ZSTD_getErrorCode(ret) == ZSTD_error_memory_allocation ? -ENOMEM : -ERR_CORRUPT;
    *pos = ib.pos;
    *produced = ob.pos;
    *ended = ret == 0; /* 0: a frame is complete and flushed */
    return 0;
}

static int zstd_decompress(const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
                           size_t *out_len)
{
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (!dctx)
        return -ENOMEM;
    /* A frame may ask for a window up to 2^27 regardless of its size; allow what the output cap
     * could need, but never less than common producer settings use. */
    int window_log = ZSTD_WINDOW_LOG_MIN;
    while (window_log < ZSTD_WINDOW_LOG_MAX && ((size_t)1 << window_log) < max_out)
        window_log++;
    int rc = -ENOMEM;
    if (!ZSTD_isError(ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, window_log)))
        rc = drive(zstd_step, dctx, in, len, max_out, out, out_len);
    ZSTD_freeDCtx(dctx);
    return rc;
}

/* ---- snappy ---- */

/* Appends one raw snappy block to o. */
static int snappy_block(const uint8_t *in, size_t len, struct outbuf *o)
{
    size_t n;
    if (snappy_uncompressed_length((const char *)in, len, &n) != SNAPPY_OK)
        return -ERR_CORRUPT;
    if (n > o->max - o->len)
        return -ERR_TOO_LARGE;
    out_reserve(o, o->len + n);
    size_t got = n;
    if (snappy_uncompress((const char *)in, len, (char *)o->p + o->len, &got) != SNAPPY_OK ||
        got != n)
        return -ERR_CORRUPT;
    o->len += n;
    return 0;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static bool is_xerial(const uint8_t *in, size_t len)
{
    return len >= XERIAL_HEADER_SIZE && memcmp(in, xerial_magic, sizeof(xerial_magic)) == 0;
}

/* Xerial framing: magic, int32 version, int32 min compatible version, then blocks of
 * [int32 big-endian length][raw snappy]. The versions are not checked (no client varies them). */
static int snappy_decompress(const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
                             size_t *out_len)
{
    struct outbuf o;
    out_init(&o, max_out, 0);
    int rc = 0;
    if (!is_xerial(in, len)) {
        rc = snappy_block(in, len, &o);
    } else {
        size_t pos = XERIAL_HEADER_SIZE;
        while (rc == 0 && pos < len) {
            if (len - pos < 4) {
                rc = -ERR_CORRUPT;
                break;
            }
            size_t blen = be32(in + pos);
            pos += 4;
            if (blen > len - pos) {
                rc = -ERR_CORRUPT;
                break;
            }
            rc = snappy_block(in + pos, blen, &o);
            pos += blen;
        }
    }
    if (rc != 0) {
        mem_free(o.p);
        return rc;
    }
    *out = o.p;
    *out_len = o.len;
    return 0;
}

static int snappy_compress_xerial(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
    size_t blocks = (len + XERIAL_BLOCK_SIZE - 1) / XERIAL_BLOCK_SIZE;
    size_t cap =
        XERIAL_HEADER_SIZE + blocks * (4 + snappy_max_compressed_length(XERIAL_BLOCK_SIZE));
    uint8_t *buf = mem_alloc(cap);
    memcpy(buf, xerial_magic, sizeof(xerial_magic));
    put_be32(buf + 8, 1);  /* version */
    put_be32(buf + 12, 1); /* minimum compatible version */
    size_t pos = XERIAL_HEADER_SIZE;
    for (size_t off = 0; off < len; off += XERIAL_BLOCK_SIZE) {
        size_t n = MIN((size_t)XERIAL_BLOCK_SIZE, len - off);
        size_t clen = cap - pos - 4;
        if (snappy_compress((const char *)in + off, n, (char *)buf + pos + 4, &clen) != SNAPPY_OK) {
            mem_free(buf);
            return -ERR_INVALID;
        }
        put_be32(buf + pos, (uint32_t)clen);
        pos += 4 + clen;
    }
    *out = buf;
    *out_len = pos;
    return 0;
}

/* ---- one-shot compressors ---- */

static int gzip_compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return -ENOMEM;
    size_t cap = deflateBound(&zs, (uLong)len);
    uint8_t *buf = mem_alloc(cap);
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    zs.next_out = buf;
    zs.avail_out = (uInt)cap;
    int ret = deflate(&zs, Z_FINISH);
    size_t n = cap - zs.avail_out;
    deflateEnd(&zs);
    if (ret != Z_STREAM_END) {
        mem_free(buf);
        return -ERR_INVALID;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

static int lz4_compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    size_t cap = LZ4F_compressFrameBound(len, &prefs);
    uint8_t *buf = mem_alloc(cap);
    size_t n = LZ4F_compressFrame(buf, cap, in, len, &prefs);
    if (LZ4F_isError(n)) {
        mem_free(buf);
        return -ERR_INVALID;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

static int zstd_compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
    size_t cap = ZSTD_compressBound(len);
    uint8_t *buf = mem_alloc(cap);
    size_t n = ZSTD_compress(buf, cap, in, len, ZSTD_LEVEL);
    if (ZSTD_isError(n)) {
        mem_free(buf);
        return -ERR_INVALID;
    }
    *out = buf;
    *out_len = n;
    return 0;
}

static int copy_out(const uint8_t *in, size_t len, size_t max_out, uint8_t **out, size_t *out_len)
{
    if (len > max_out)
        return -ERR_TOO_LARGE;
    *out = mem_alloc(len);
    if (len > 0)
        memcpy(*out, in, len);
    *out_len = len;
    return 0;
}

/* ---- public ---- */

int kcompress_decompress(int codec, const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
                         size_t *out_len)
{
    if (len > IN_MAX)
        return -ERR_TOO_LARGE;
    switch (codec) {
    case KCOMPRESSION_NONE:
        return copy_out(in, len, max_out, out, out_len);
    case KCOMPRESSION_GZIP:
        return gzip_decompress(in, len, max_out, out, out_len);
    case KCOMPRESSION_SNAPPY:
        return snappy_decompress(in, len, max_out, out, out_len);
    case KCOMPRESSION_LZ4:
        return lz4_decompress(in, len, max_out, out, out_len);
    case KCOMPRESSION_ZSTD:
        return zstd_decompress(in, len, max_out, out, out_len);
    default:
        return -ERR_UNSUPPORTED;
    }
}

int kcompress_compress(int codec, const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
    if (len > IN_MAX)
        return -ERR_TOO_LARGE;
    switch (codec) {
    case KCOMPRESSION_NONE:
        return copy_out(in, len, len, out, out_len);
    case KCOMPRESSION_GZIP:
        return gzip_compress(in, len, out, out_len);
    case KCOMPRESSION_SNAPPY:
        return snappy_compress_xerial(in, len, out, out_len);
    case KCOMPRESSION_LZ4:
        return lz4_compress(in, len, out, out_len);
    case KCOMPRESSION_ZSTD:
        return zstd_compress(in, len, out, out_len);
    default:
        return -ERR_UNSUPPORTED;
    }
}

const char *kcompress_name(int codec)
{
    switch (codec) {
    case KCOMPRESSION_NONE:
        return "none";
    case KCOMPRESSION_GZIP:
        return "gzip";
    case KCOMPRESSION_SNAPPY:
        return "snappy";
    case KCOMPRESSION_LZ4:
        return "lz4";
    case KCOMPRESSION_ZSTD:
        return "zstd";
    default:
        return "unknown";
    }
}
