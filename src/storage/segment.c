/* Segment files: append, scan, validate, index, truncate, seal.
 *
 * Design: a segment never copies batch bytes on the hot path. Appends are one pwrite of the
 * caller's buffer; reads return positions, never bytes. Headers are read through a buffered
 * scanner (one pread fills up to SEGMENT_SCAN_BUF bytes; callers hint how far they need so a
 * short read stays short). Everything read back from the file is checked before use: a header
 * with an impossible length, an offset that does not chain, or an index entry that does not
 * point at the batch it names is reported, never trusted (invariants in segment.h). */
#include "storage/segment.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/mem.h"
#include "kafka/batch.h"
#include "storage/epoch_cache.h"
#include "storage/io.h"

#define FIND_FILL_BYTES 16384 /* a forward search from an index entry rarely goes further */

/* ---- scanner ---- */

void scanner_init(struct batch_scanner *s, int fd, int64_t pos, int64_t limit, uint8_t *buf,
                  size_t cap)
{
    *s = (struct batch_scanner){.fd = fd,
                                .pos = pos,
                                .limit = limit,
                                .fill_end = limit,
                                .buf = buf,
                                .cap = cap,
                                .data = buf};
}

void scanner_init_seg(struct batch_scanner *s, int fd, const struct segment *seg, int64_t pos,
                      uint8_t *buf, size_t cap)
{
    scanner_init(s, fd, pos, seg->size, buf, cap);
    s->win = seg->win;
}

/* The bytes [pos, pos + n) of the file as window w holds them, or NULL when it lacks any. */
static const uint8_t *window_at(const struct segment_window *w, int64_t pos, size_t n)
{
    if (!w || pos < w->pos || (uint64_t)(pos - w->pos) > w->len ||
        n > w->len - (size_t)(pos - w->pos))
        return NULL;
    return w->bytes + (pos - w->pos);
}

/* Makes at least n bytes from pos available in the buffer (n <= cap, pos + n <= limit). */
static int scanner_fill(struct batch_scanner *s, int64_t pos, size_t n)
{
    if (pos >= s->buf_pos && pos + (int64_t)n <= s->buf_pos + (int64_t)s->buf_len)
        return 0;
    if (window_at(s->win, pos, n)) {
        s->data = s->win->bytes;
        s->buf_pos = s->win->pos;
        s->buf_len = s->win->len;
        return 0;
    }
    int64_t want = MAX((int64_t)n, s->fill_end - pos);
    want = MIN(want, (int64_t)s->cap);
    want = MIN(want, s->limit - pos);
    if (want < (int64_t)n)
        return -ERR_SHORT;
    ssize_t got = io_pread_full(s->fd, s->buf, (size_t)want, pos);
    if (got < 0)
        return (int)got;
    s->data = s->buf;
    s->buf_pos = pos;
    s->buf_len = (size_t)got;
    return (size_t)got < n ? -ERR_SHORT : 0;
}

int scanner_next(struct batch_scanner *s, struct batch_info *b, const char **why)
{
    *why = NULL;
    if (s->pos >= s->limit)
        return 0;
    if (s->limit - s->pos < KBATCH_HEADER_SIZE) {
        *why = "partial_header";
        return -ERR_SHORT;
    }
    int rc = scanner_fill(s, s->pos, KBATCH_HEADER_SIZE);
    if (rc != 0) {
        *why = rc == -ERR_SHORT ? "file_shorter_than_expected" : "read_error";
        return rc;
    }
    const uint8_t *p = s->data + (s->pos - s->buf_pos);
    int32_t blen = (int32_t)be_get32(p + KBATCH_OFF_LENGTH);
    if (blen < KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD) {
        *why = "batch_length_too_small";
        return -ERR_CORRUPT;
    }
    int64_t size = (int64_t)blen + KBATCH_LOG_OVERHEAD;
    if (size > s->limit - s->pos) {
        *why = "batch_past_end_of_file";
        return -ERR_SHORT;
    }
    if ((int8_t)p[KBATCH_OFF_MAGIC] != KBATCH_MAGIC) {
        *why = "bad_magic";
        return -ERR_CORRUPT;
    }
    int64_t base = (int64_t)be_get64(p);
    int32_t delta = (int32_t)be_get32(p + 23);
    if (base < 0 || delta < 0 || base > INT64_MAX - delta - 1) {
        *why = "bad_offsets";
        return -ERR_CORRUPT;
    }
    *b = (struct batch_info){
        .pos = s->pos,
        .base = base,
        .last = base + delta,
        .size = size,
        .max_ts = (int64_t)be_get64(p + KBATCH_OFF_MAX_TIMESTAMP),
        .epoch = (int32_t)be_get32(p + KBATCH_OFF_LEADER_EPOCH),
        .records = (int32_t)be_get32(p + KBATCH_OFF_RECORDS_COUNT),
    };
    s->pos += size;
    return 1;
}

bool scanner_crc_ok(struct batch_scanner *s, const struct batch_info *b, int *err)
{
    *err = scanner_fill(s, b->pos, KBATCH_HEADER_SIZE);
    if (*err != 0)
        return false;
    uint32_t want = be_get32(s->data + (b->pos - s->buf_pos) + KBATCH_OFF_CRC);
    uint32_t crc = 0;
    int64_t q = b->pos + KBATCH_OFF_ATTRIBUTES, end = b->pos + b->size;
    while (q < end) {
        *err = scanner_fill(s, q, (size_t)MIN(end - q, (int64_t)s->cap));
        if (*err != 0)
            return false;
        int64_t avail = MIN(end - q, s->buf_pos + (int64_t)s->buf_len - q);
        crc = crc32c(crc, s->data + (q - s->buf_pos), (size_t)avail);
        q += avail;
    }
    return crc == want;
}

/* ---- files ---- */

void segment_file_name(char *buf, size_t cap, int64_t base, const char *ext)
{
    snprintf(buf, cap, "%020" PRId64 "%s", base, ext);
}

bool segment_name_offset(const char *name, int64_t *offset)
{
    int64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (name[i] < '0' || name[i] > '9' || v > (INT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (name[i] - '0');
    }
    *offset = v;
    return true;
}

static struct segment *segment_new(int64_t base, int fd, int64_t size)
{
    struct segment *seg = mem_calloc(1, sizeof(*seg));
    seg->base = base;
    seg->end = base;
    seg->size = size;
    seg->max_ts = -1;
    seg->max_ts_offset = -1;
    seg->first_append_ms = -1;
    seg->gaps_below = -1;
    static uint64_t next_id; /* segments are made on the reactor thread and the cleaner's */
    seg->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    fdcache_adopt(NULL, &seg->fe, fileref_new(fd));
    oindex_init(&seg->oidx);
    tindex_init(&seg->tidx);
    return seg;
}

int segment_create(int dirfd, int64_t base, struct segment **out)
{
    char name[SEGMENT_NAME_MAX];
    /* stale indexes of an earlier segment with this base must not describe the new one */
    segment_file_name(name, sizeof(name), base, ".index");
    io_unlink(dirfd, name);
    segment_file_name(name, sizeof(name), base, ".timeindex");
    io_unlink(dirfd, name);
    segment_file_name(name, sizeof(name), base, ".log");
    int fd = io_create(dirfd, name, O_RDWR | O_TRUNC, 0644);
    if (fd < 0)
        return fd;
    struct segment *seg = segment_new(base, fd, 0);
    seg->index_loaded = true;
    /* new segments are dirty from birth: everything after a dirty segment must be too
     * (plog invariant 4), and a roll's flush must reach the sealed segment before it */
    seg->dirty = true;
    *out = seg;
    return 0;
}

int segment_open(int dirfd, int64_t base, struct segment **out)
{
    char name[SEGMENT_NAME_MAX];
    segment_file_name(name, sizeof(name), base, ".log");
    int fd = io_open_noatime(dirfd, name, O_RDWR);
    if (fd < 0)
        return fd;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = -errno;
        close(fd);
        return e;
    }
    /* positions are u32 in the index; a larger file is not one of ours */
    if (st.st_size > (off_t)UINT32_MAX) {
        close(fd);
        return -ERR_CORRUPT;
    }
    *out = segment_new(base, fd, (int64_t)st.st_size);
    return 0;
}

struct segment *segment_adopt(int64_t base, int fd)
{
    struct segment *seg = segment_new(base, fd, 0);
    seg->index_loaded = true;
    return seg;
}

void segment_attach(struct segment *seg, struct fdcache *fc, const char *dir)
{
    CHECK(!seg->fe.cache && seg->fe.file);
    seg->fc = fc;
    seg->dir = dir;
    seg->fe.owner = dir; /* the plog's own string: one owner per partition */
    if (fc) {
        struct fileref *f = seg->fe.file;
        seg->fe.file = NULL;
        fdcache_adopt(fc, &seg->fe, f);
    }
}

int segment_file(const struct segment *cseg, struct fileref **out)
{
    /* the descriptor is a cache: opening it again changes nothing the segment describes */
    struct segment *seg = (struct segment *)cseg;
    CHECK(seg->fe.file || seg->dir);
    char name[SEGMENT_NAME_MAX];
    if (!seg->fe.file)
        segment_file_name(name, sizeof(name), seg->base, ".log");
    return fdcache_open(seg->fc, &seg->fe, seg->dir, name, O_RDWR, out);
}

/* Whether a batch at base may follow expect (the offset after the previous batch). */
static bool offset_follows(const struct segment *seg, int64_t expect, int64_t base)
{
    return base == expect || (base > expect && base <= seg->gaps_below);
}

void segment_window_drop(struct segment *seg)
{
    mem_free(seg->win);
    seg->win = NULL;
}

/* Keeps what scanner s last read of seg's file (below its size) as seg's window. */
static void keep_window(struct segment *seg, const struct batch_scanner *s)
{
    segment_window_drop(seg);
    int64_t end = MIN(s->buf_pos + (int64_t)s->buf_len, seg->size);
    if (s->data != s->buf || end <= s->buf_pos)
        return;
    size_t len = (size_t)(end - s->buf_pos);
    seg->win = mem_alloc(sizeof(*seg->win) + len);
    seg->win->pos = s->buf_pos;
    seg->win->len = len;
    memcpy(seg->win->bytes, s->buf, len);
}

ssize_t segment_read_at(const struct segment *seg, int64_t pos, void *buf, size_t n)
{
    const uint8_t *p = window_at(seg->win, pos, n);
    if (p) {
        memcpy(buf, p, n);
        return (ssize_t)n;
    }
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    ssize_t got = io_pread_full(f->fd, buf, n, pos);
    fileref_put(f);
    return got;
}

void segment_free(struct segment *seg)
{
    if (!seg)
        return;
    fdcache_forget(&seg->fe);
    segment_window_drop(seg);
    oindex_free(&seg->oidx);
    tindex_free(&seg->tidx);
    mem_free(seg);
}

int segment_remove_files(int dirfd, int64_t base)
{
    static const char *const exts[] = {".log", ".index", ".timeindex"};
    int rc = 0;
    for (size_t i = 0; i < ARRAY_LEN(exts); i++) {
        char name[SEGMENT_NAME_MAX];
        segment_file_name(name, sizeof(name), base, exts[i]);
        int r = io_unlink(dirfd, name);
        if (r != 0 && rc == 0)
            rc = r;
    }
    return rc;
}

/* ---- in-memory state ---- */

static uint32_t rel_of(const struct segment *seg, int64_t offset)
{
    return (uint32_t)(offset - seg->base);
}

void segment_note_batch(struct segment *seg, const struct batch_info *b, int32_t interval)
{
    CHECK(seg->index_loaded);
    CHECK(b->base >= seg->base && b->last - seg->base <= SEGMENT_REL_MAX);
    if (b->max_ts > seg->max_ts) {
        seg->max_ts = b->max_ts;
        seg->max_ts_offset = b->base;
    }
    if (b->pos > 0 && seg->bytes_since_index >= MAX(interval, 1)) {
        oindex_append(&seg->oidx, rel_of(seg, b->base), (uint32_t)b->pos);
        if (seg->max_ts >= 0)
            tindex_maybe_append(&seg->tidx, seg->max_ts, rel_of(seg, seg->max_ts_offset));
        seg->bytes_since_index = 0;
    }
    seg->bytes_since_index += b->size;
    seg->size = b->pos + b->size;
    seg->end = b->last + 1;
}

static int append_at(int fd, struct segment *seg, const uint8_t *batch, size_t len,
                   const struct batch_info *b, int32_t interval)
{
    CHECK(b->pos == seg->size && (int64_t)len == b->size);
    size_t written = 0;
    int rc = io_pwrite_all(fd, batch, len, (off_t)seg->size, &written);
    seg->dirty = true;
    if (rc == 0) {
        segment_note_batch(seg, b, interval);
        return 0;
    }
    if (rc != -ENOSPC)
        return rc;
    /* cut any partial write so the file still ends on a batch boundary */
    int t = io_ftruncate(fd, (off_t)seg->size);
    if (t != 0)
        return t == -ENOSPC ? -EIO : t;
    return -ENOSPC;
}

int segment_append(struct segment *seg, const uint8_t *batch, size_t len,
                   const struct batch_info *b, int32_t interval)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = append_at(f->fd, seg, batch, len, b, interval);
    fileref_put(f);
    return rc;
}

/* ---- index files ---- */

static int write_index_file(int dirfd, int64_t base, const char *ext, const uint8_t *data,
                            size_t len, struct fileref **out)
{
    char name[SEGMENT_NAME_MAX], tmp[SEGMENT_NAME_MAX + 8];
    segment_file_name(name, sizeof(name), base, ext);
    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    int fd = io_create(dirfd, tmp, O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        return fd;
    int rc = io_pwrite_all(fd, data, len, 0, NULL);
    if (rc == 0)
        rc = io_rename(dirfd, tmp, name);
    if (rc != 0) {
        io_unlink(dirfd, tmp);
        close(fd);
        return rc;
    }
    *out = fileref_new(fd);
    return 0;
}

int segment_seal(struct segment *seg, int dirfd, struct fileref **files, int *n_files)
{
    CHECK(seg->index_loaded);
    segment_window_drop(seg);
    *n_files = 0;
    if (seg->max_ts >= 0)
        tindex_maybe_append(&seg->tidx, seg->max_ts, rel_of(seg, seg->max_ts_offset));
    size_t len;
    uint8_t *data = oindex_encode(&seg->oidx, &len);
    int rc = write_index_file(dirfd, seg->base, ".index", data, len, &files[*n_files]);
    mem_free(data);
    if (rc == 0)
        (*n_files)++;
    data = tindex_encode(&seg->tidx, &len);
    int rc2 = write_index_file(dirfd, seg->base, ".timeindex", data, len, &files[*n_files]);
    mem_free(data);
    if (rc2 == 0)
        (*n_files)++;
    seg->sealed = true;
    return rc != 0 ? rc : rc2;
}

/* Reads a whole index file of at most max_len bytes into a mem_alloc'd buffer. */
static int read_index_file(int dirfd, int64_t base, const char *ext, size_t max_len, uint8_t **out,
                           size_t *len)
{
    char name[SEGMENT_NAME_MAX];
    segment_file_name(name, sizeof(name), base, ext);
    int fd = io_open_noatime(dirfd, name, O_RDONLY);
    if (fd < 0)
        return fd;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        goto out_close;
    }
    if ((uint64_t)st.st_size > max_len) {
        rc = -ERR_CORRUPT;
        goto out_close;
    }
    *len = (size_t)st.st_size;
    *out = mem_alloc(*len ? *len : 1);
    ssize_t got = io_pread_full(fd, *out, *len, 0);
    if (got != (ssize_t)*len) {
        mem_free(*out);
        *out = NULL;
        rc = got < 0 ? (int)got : -ERR_CORRUPT;
    }
out_close:
    close(fd);
    return rc;
}

/* Loads both index files (validated against rel_limit/pos_limit) into seg. */
static int load_index_files(struct segment *seg, int dirfd, uint64_t rel_limit)
{
    /* one entry per batch at most, and a batch is at least KBATCH_HEADER_SIZE bytes */
    size_t max_entries = (size_t)(seg->size / KBATCH_HEADER_SIZE) + 1;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc =
        read_index_file(dirfd, seg->base, ".index", max_entries * OINDEX_ENTRY_SIZE, &buf, &len);
    if (rc == 0)
        rc = oindex_decode(&seg->oidx, buf, len, rel_limit, (uint64_t)seg->size);
    mem_free(buf);
    if (rc != 0)
        return rc;
    buf = NULL;
    rc = read_index_file(dirfd, seg->base, ".timeindex", (max_entries + 1) * TINDEX_ENTRY_SIZE,
                         &buf, &len);
    if (rc == 0)
        rc = tindex_decode(&seg->tidx, buf, len, rel_limit);
    mem_free(buf);
    if (rc != 0)
        oindex_free(&seg->oidx);
    return rc;
}

static int rebuild_index_at(int fd, struct segment *seg, int32_t interval)
{
    oindex_free(&seg->oidx);
    tindex_free(&seg->tidx);
    int64_t size = seg->size;
    seg->index_loaded = true;
    seg->end = seg->base;
    seg->max_ts = -1;
    seg->max_ts_offset = -1;
    seg->bytes_since_index = 0;
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner s;
    scanner_init(&s, fd, 0, size, buf, sizeof(buf));
    int64_t expect = seg->base;
    int rc;
    for (;;) {
        struct batch_info b;
        const char *why;
        rc = scanner_next(&s, &b, &why);
        if (rc <= 0)
            break;
        if (b.base < expect || b.last - seg->base > SEGMENT_REL_MAX) {
            rc = -ERR_CORRUPT;
            break;
        }
        segment_note_batch(seg, &b, interval);
        expect = b.last + 1;
    }
    seg->size = size;
    if (rc != 0) {
        segment_unload_index(seg);
        return rc == -ERR_SHORT ? -ERR_CORRUPT : rc;
    }
    return 0;
}

int segment_rebuild_index(struct segment *seg, int32_t interval)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = rebuild_index_at(f->fd, seg, interval);
    fileref_put(f);
    return rc;
}

int segment_load_index(struct segment *seg, int dirfd, int32_t interval)
{
    if (seg->index_loaded)
        return 0;
    int rc = load_index_files(seg, dirfd, (uint64_t)(seg->end - seg->base));
    /* an empty time index for a non-empty segment means the file was lost, not that no batch
     * had a timestamp (producers of magic 2 always set one) */
    if (rc == 0 && seg->size > 0 && seg->tidx.n == 0)
        rc = -ERR_CORRUPT;
    if (rc == 0) {
        seg->index_loaded = true;
        return 0;
    }
    oindex_free(&seg->oidx);
    tindex_free(&seg->tidx);
    int64_t end = seg->end;
    rc = segment_rebuild_index(seg, interval);
    if (rc != 0)
        return rc;
    /* a sealed segment ends where the next begins even if its last batches were lost: reads
     * stop at the real end of the file and move on */
    seg->end = MAX(seg->end, end);
    if (seg->sealed) {
        struct fileref *files[2];
        int n = 0;
        segment_seal(seg, dirfd, files, &n);
        for (int i = 0; i < n; i++)
            fileref_put(files[i]);
    }
    return 1;
}

void segment_unload_index(struct segment *seg)
{
    oindex_free(&seg->oidx);
    tindex_free(&seg->tidx);
    seg->index_loaded = false;
}

static int load_tail_at(int fd, struct segment *seg, int dirfd, int32_t interval)
{
    segment_window_drop(seg);
    /* a segment one read holds is scanned whole, its indexes rebuilt on the way: the index
     * files would cost two opens and reads more than the scan they spare */
    int rc = seg->size <= SEGMENT_SCAN_BUF
                 ? 0
                 : load_index_files(seg, dirfd, (uint64_t)SEGMENT_REL_MAX + 1);
    if (rc != 0)
        return -ERR_CORRUPT;
    seg->index_loaded = true;
    struct oindex_entry last = {0, 0};
    bool have = oindex_floor(&seg->oidx, UINT32_MAX, &last);
    struct tindex_entry tl;
    if (tindex_last(&seg->tidx, &tl)) {
        seg->max_ts = tl.ts;
        seg->max_ts_offset = seg->base + tl.rel;
    }
    int64_t size = seg->size;
    seg->end = seg->base + last.rel;
    seg->bytes_since_index = 0;
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner s;
    scanner_init(&s, fd, last.pos, size, buf, sizeof(buf));
    int64_t expect = seg->base + last.rel;
    for (;;) {
        struct batch_info b;
        const char *why;
        rc = scanner_next(&s, &b, &why);
        if (rc <= 0)
            break;
        if (!offset_follows(seg, expect, b.base) || b.last - seg->base > SEGMENT_REL_MAX) {
            rc = -ERR_CORRUPT;
            break;
        }
        if (have && b.pos == last.pos) {
            /* already indexed: only account for it */
            if (b.max_ts > seg->max_ts) {
                seg->max_ts = b.max_ts;
                seg->max_ts_offset = b.base;
            }
            seg->bytes_since_index = b.size;
            seg->size = b.pos + b.size;
            seg->end = b.last + 1;
        } else {
            segment_note_batch(seg, &b, interval);
        }
        expect = b.last + 1;
    }
    seg->size = size;
    if (rc == 0 && tindex_last(&seg->tidx, &tl) && seg->base + tl.rel >= seg->end && size > 0)
        rc = -ERR_CORRUPT;
    if (rc != 0) {
        segment_unload_index(seg);
        seg->end = seg->base;
        seg->max_ts = -1;
        seg->max_ts_offset = -1;
        return rc < 0 && rc != -ERR_SHORT && rc != -ERR_CORRUPT ? rc : -ERR_CORRUPT;
    }
    keep_window(seg, &s);
    return 0;
}

int segment_load_tail(struct segment *seg, int dirfd, int32_t interval)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = load_tail_at(f->fd, seg, dirfd, interval);
    fileref_put(f);
    return rc;
}

int segment_load_meta(struct segment *seg, int dirfd, int32_t interval)
{
    if (seg->size == 0) {
        seg->max_ts = -1;
        return 0;
    }
    char name[SEGMENT_NAME_MAX];
    segment_file_name(name, sizeof(name), seg->base, ".timeindex");
    int fd = io_open_noatime(dirfd, name, O_RDONLY);
    bool ok = false;
    if (fd >= 0) {
        struct stat st;
        uint8_t e[TINDEX_ENTRY_SIZE];
        if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size % TINDEX_ENTRY_SIZE == 0 &&
            io_pread_full(fd, e, sizeof(e), st.st_size - TINDEX_ENTRY_SIZE) == (ssize_t)sizeof(e)) {
            int64_t ts = (int64_t)be_get64(e);
            uint32_t rel = be_get32(e + 8);
            if (ts >= 0 && (int64_t)rel < seg->end - seg->base) {
                seg->max_ts = ts;
                seg->max_ts_offset = seg->base + rel;
                ok = true;
            }
        }
        close(fd);
    }
    if (ok)
        return 0;
    return segment_load_index(seg, dirfd, interval);
}

/* ---- recovery ---- */

static int recover_at(int fd, struct segment *seg, int32_t interval, int32_t *epoch, struct epoch_cache *ec,
                    struct segment_recovery *rec)
{
    *rec = (struct segment_recovery){.cut_offset = -1};
    segment_window_drop(seg);
    int64_t size = seg->size;
    oindex_free(&seg->oidx);
    tindex_free(&seg->tidx);
    seg->index_loaded = true;
    seg->end = seg->base;
    seg->size = 0;
    seg->max_ts = -1;
    seg->max_ts_offset = -1;
    seg->bytes_since_index = 0;
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner s;
    scanner_init(&s, fd, 0, size, buf, sizeof(buf));
    int64_t expect = seg->base;
    const char *why = NULL;
    int64_t cut_pos = -1;
    for (;;) {
        struct batch_info b;
        int rc = scanner_next(&s, &b, &why);
        if (rc == 0)
            break;
        if (rc == -ERR_SHORT || rc == -ERR_CORRUPT) {
            cut_pos = s.pos;
            break;
        }
        if (rc < 0)
            return rc;
        if (!offset_follows(seg, expect, b.base))
            why = "offset_not_contiguous";
        else if (b.last - seg->base > SEGMENT_REL_MAX)
            why = "relative_offset_overflow";
        else if (b.epoch < *epoch)
            why = "leader_epoch_decreased";
        if (!why) {
            int err;
            if (!scanner_crc_ok(&s, &b, &err)) {
                if (err != 0 && err != -ERR_SHORT)
                    return err;
                why = "crc_mismatch";
            }
        }
        if (why) {
            cut_pos = b.pos;
            break;
        }
        segment_note_batch(seg, &b, interval);
        if (b.epoch > *epoch) {
            epoch_cache_assign(ec, b.epoch, b.base);
            *epoch = b.epoch;
        }
        expect = b.last + 1;
    }
    rec->valid_bytes = seg->size;
    keep_window(seg, &s); /* below the cut: those bytes stay */
    if (cut_pos < 0)
        return 0;
    int rc = io_ftruncate(fd, (off_t)cut_pos);
    if (rc != 0)
        return rc;
    seg->dirty = true;
    rec->cut_bytes = size - cut_pos;
    rec->cut_offset = expect;
    rec->reason = why;
    return 0;
}

int segment_recover(struct segment *seg, int32_t interval, int32_t *epoch, struct epoch_cache *ec,
                    struct segment_recovery *rec)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = recover_at(f->fd, seg, interval, epoch, ec, rec);
    fileref_put(f);
    return rc;
}

/* ---- reads ---- */

static int find_at(int fd, const struct segment *seg, int64_t from_pos, int64_t from_offset, bool exact,
                 int64_t offset, struct batch_info *b)
{
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner s;
    scanner_init_seg(&s, fd, seg, from_pos, buf, sizeof(buf));
    /* starting at the wanted batch needs its header only */
    s.fill_end = from_pos + (from_offset == offset ? KBATCH_HEADER_SIZE : FIND_FILL_BYTES);
    int64_t prev_last = from_offset >= 0 ? from_offset - 1 : seg->base - 1;
    bool first = true;
    for (;;) {
        const char *why;
        int rc = scanner_next(&s, b, &why);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return rc == -ERR_SHORT ? -ERR_CORRUPT : rc;
        if (first && from_offset >= 0 && (exact ? b->base != from_offset : b->base < from_offset))
            return -ERR_CORRUPT;
        if (b->base <= prev_last)
            return -ERR_CORRUPT;
        first = false;
        if (b->last >= offset)
            return 1;
        prev_last = b->last;
    }
}

int segment_find(const struct segment *seg, int64_t from_pos, int64_t from_offset, bool exact,
                 int64_t offset, struct batch_info *b)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = find_at(f->fd, seg, from_pos, from_offset, exact, offset, b);
    fileref_put(f);
    return rc;
}

static int extend_at(int fd, const struct segment *seg, const struct batch_info *first, int64_t max_offset,
                   size_t max_bytes, size_t *len, int64_t *next_offset, struct batch_info *stop)
{
    stop->size = 0;
    int64_t start = first->pos;
    int64_t cur_end = first->pos + first->size;
    int64_t cur_next = first->last + 1;
    int64_t budget_end = (uint64_t)max_bytes >= (uint64_t)(seg->size - start)
                             ? seg->size
                             : start + (int64_t)max_bytes;
    budget_end = MAX(budget_end, cur_end);
    *len = (size_t)(cur_end - start);
    *next_offset = cur_next;
    if (cur_end >= budget_end)
        return 0;
    if (budget_end == seg->size && max_offset >= seg->end) {
        /* the rest of the segment: nothing to scan */
        *len = (size_t)(seg->size - start);
        *next_offset = seg->end;
        return 0;
    }
    int64_t scan_from = cur_end, expect_base = -1;
    if (seg->index_loaded && max_offset > seg->base) {
        int64_t max_rel = MIN(max_offset - seg->base, (int64_t)UINT32_MAX);
        struct oindex_entry e;
        if (oindex_floor_bounded(&seg->oidx, (uint32_t)max_rel, (uint32_t)budget_end, &e) &&
            (int64_t)e.pos > cur_end) {
            scan_from = e.pos;
            expect_base = seg->base + e.rel;
            cur_end = e.pos;
            cur_next = expect_base;
        }
    }
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner s;
    scanner_init_seg(&s, fd, seg, scan_from, buf, sizeof(buf));
    s.fill_end = budget_end + KBATCH_HEADER_SIZE;
    for (;;) {
        struct batch_info b;
        const char *why;
        int rc = scanner_next(&s, &b, &why);
        if (rc == 0)
            break;
        if (rc < 0)
            return rc == -ERR_SHORT ? -ERR_CORRUPT : rc;
        if (expect_base >= 0 && b.base != expect_base)
            return -ERR_CORRUPT;
        expect_base = -1;
        if (b.base < cur_next)
            return -ERR_CORRUPT;
        if (b.pos + b.size > budget_end || b.last >= max_offset) {
            *stop = b;
            break;
        }
        cur_end = b.pos + b.size;
        cur_next = b.last + 1;
    }
    *len = (size_t)(cur_end - start);
    *next_offset = cur_next;
    return 0;
}

int segment_extend(const struct segment *seg, const struct batch_info *first, int64_t max_offset,
                   size_t max_bytes, size_t *len, int64_t *next_offset, struct batch_info *stop)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = extend_at(f->fd, seg, first, max_offset, max_bytes, len, next_offset, stop);
    fileref_put(f);
    return rc;
}

static int find_timestamp_at(int fd, const struct segment *seg, int64_t from_pos, int64_t ts,
                           int64_t min_offset, struct batch_info *b)
{
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner s;
    scanner_init_seg(&s, fd, seg, from_pos, buf, sizeof(buf));
    for (;;) {
        const char *why;
        int rc = scanner_next(&s, b, &why);
        if (rc <= 0)
            return rc == -ERR_SHORT ? -ERR_CORRUPT : rc;
        if (b->max_ts >= ts && b->last >= min_offset)
            return 1;
    }
}

int segment_find_timestamp(const struct segment *seg, int64_t from_pos, int64_t ts,
                           int64_t min_offset, struct batch_info *b)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = find_timestamp_at(f->fd, seg, from_pos, ts, min_offset, b);
    fileref_put(f);
    return rc;
}

static int read_batch_at(int fd, const struct segment *seg, const struct batch_info *b, uint8_t *buf)
{
    CHECK(b->pos >= 0 && b->size > 0 && b->pos + b->size <= seg->size);
    ssize_t n = io_pread_full(fd, buf, (size_t)b->size, (off_t)b->pos);
    if (n < 0)
        return (int)n;
    return n == b->size ? 0 : -ERR_CORRUPT;
}

int segment_read_batch(const struct segment *seg, const struct batch_info *b, uint8_t *buf)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = read_batch_at(f->fd, seg, b, buf);
    fileref_put(f);
    return rc;
}

/* ---- truncation ---- */

static int truncate_at(int fd, struct segment *seg, const struct batch_info *b, int64_t new_end,
                     int32_t interval)
{
    CHECK(seg->index_loaded && b->pos <= seg->size && b->base >= seg->base);
    segment_window_drop(seg);
    int rc = io_ftruncate(fd, (off_t)b->pos);
    if (rc != 0)
        return rc;
    seg->dirty = true;
    seg->sealed = false;
    seg->size = b->pos;
    seg->end = new_end;
    oindex_truncate(&seg->oidx, (uint32_t)b->pos);
    tindex_truncate(&seg->tidx, rel_of(seg, b->base));
    /* the running max at the last index entry is in the time index; batches after it are
     * rescanned (at most about one index interval) */
    struct tindex_entry tl;
    seg->max_ts = -1;
    seg->max_ts_offset = -1;
    if (tindex_last(&seg->tidx, &tl)) {
        seg->max_ts = tl.ts;
        seg->max_ts_offset = seg->base + tl.rel;
    }
    struct oindex_entry ol = {0, 0};
    oindex_floor(&seg->oidx, UINT32_MAX, &ol);
    seg->bytes_since_index = seg->size - ol.pos;
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner s;
    scanner_init(&s, fd, ol.pos, seg->size, buf, sizeof(buf));
    for (;;) {
        struct batch_info x;
        const char *why;
        rc = scanner_next(&s, &x, &why);
        if (rc <= 0)
            break;
        if (x.max_ts > seg->max_ts) {
            seg->max_ts = x.max_ts;
            seg->max_ts_offset = x.base;
        }
    }
    (void)interval;
    return rc < 0 ? (rc == -ERR_SHORT ? -ERR_CORRUPT : rc) : 0;
}

int segment_truncate(struct segment *seg, const struct batch_info *b, int64_t new_end,
                     int32_t interval)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    rc = truncate_at(f->fd, seg, b, new_end, interval);
    fileref_put(f);
    return rc;
}
