/* The node's small-state store (storage/kvstore.h).
 *
 * Owns: the map of directories to their values (memory: the truth), the log file, a buffer of
 * records not yet written to it, and the descriptor of the directory holding the file.
 *
 * File: an 8-byte header ("SPKV", version 1), then records, each
 *     crc32c u32 | body_len u32 | body: op u8 | dir_len u8 | name_len u8 | dir | name | value
 * with the CRC over body_len and body. PUT sets (dir, name) to the value; DEL removes it (no
 * value); DEL_DIR removes every value of dir (no name, no value). Replay applies records in
 * order and stops at the first that does not check out: a crash leaves a prefix of what was
 * written (a torn or missing page ends it; nothing after it counts, since a sync covers
 * everything before it, a hole is only ever in the unsynced tail).
 *
 * Invariants (kv_check):
 *   1. seq_synced <= seq_written <= seq_put, and seq_written < seq_put while records are
 *      buffered (seq_put counts changes, seq_written those handed to the file, seq_synced
 *      those a returned fdatasync covers).
 *   2. Unless must_rewrite, the file from the header to file_end holds whole records whose
 *      replay, followed by the buffer's, gives the map; live_bytes is what writing the map
 *      afresh would take.
 *   3. Once must_rewrite (a write or sync failed: what the file holds past the last good
 *      record is unknown), nothing is appended: the next flush or sync writes the map to a new
 *      file, fdatasyncs it and renames it over the old one, or fails.
 *   4. Every directory in the map has at least one value.
 *
 * A directory's values are one blob of items (name_len u8 | name | value_len u32 | value): a
 * partition has a few, and one allocation each keeps fifty thousand of them small. */
#include "storage/kvstore.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/strmap.h"
#include "base/time.h"
#include "storage/io.h"

#define KV_MAGIC "SPKV"
#define KV_VERSION 1
#define KV_HEADER_BYTES 8
#define KV_REC_HEADER 8 /* crc, body_len */
#define KV_BODY_FIXED 3 /* op, dir_len, name_len */
#define KV_BODY_MAX (KV_BODY_FIXED + KV_DIR_MAX + KV_NAME_MAX + KV_VALUE_MAX)
#define KV_BUFFER_BYTES (64 << 10) /* records buffered before a write */
#define KV_BUFFER_MS 1000          /* nor kept longer than this when more come */
#define KV_REWRITE_SLACK (8 << 20) /* a file this much beyond 4x what it holds is rewritten */

enum { OP_PUT = 1, OP_DEL = 2, OP_DEL_DIR = 3 };

struct kv_dir {
    uint8_t *blob; /* items: name_len u8 | name | value_len u32 | value */
    uint32_t len;
    uint32_t n; /* items */
};

struct kvstore {
    char *path;
    char *name;           /* the file's name in its directory */
    int dirfd;            /* the directory holding the file */
    struct fileref *file; /* open read-write */
    int64_t file_end;     /* bytes the file holds */
    uint8_t *buf;         /* records not yet written */
    size_t buf_len;
    size_t buf_cap;
    int64_t buf_since_ms; /* when the oldest buffered record was made */
    pthread_mutex_t mu;   /* guards dirs and the blobs against readers on other threads */
    struct strmap dirs;   /* dir -> struct kv_dir * */
    int64_t live_bytes;
    uint64_t seq_put;
    uint64_t seq_written;
    uint64_t seq_synced;
    bool must_rewrite;
    int syncs_in_flight;   /* kv_sync_begin without its kv_sync_end yet */
    bool closed;           /* kv_close ran: freed at the last kv_sync_end */
    int64_t rewrite_above; /* compaction is next tried when the file passes this */
    struct kv_stats st;
};

static int64_t record_bytes(size_t dlen, size_t nlen, size_t vlen)
{
    return KV_REC_HEADER + KV_BODY_FIXED + (int64_t)(dlen + nlen + vlen);
}

/* Invariants 1 and 4 (2 is what replay at the next open checks). */
__attribute__((unused)) static void kv_check(const struct kvstore *kv)
{
    CHECK(kv->seq_synced <= kv->seq_written && kv->seq_written <= kv->seq_put);
    CHECK(kv->buf_len == 0 || kv->seq_written < kv->seq_put);
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&kv->dirs, &it, &k, &v))
        CHECK(((struct kv_dir *)v)->n > 0);
}

/* ---- memory ---- */

/* Finds name in d: the item's offset in the blob and its value, or -1. */
static int64_t item_find(const struct kv_dir *d, const char *name, size_t nlen, const uint8_t **val,
                         uint32_t *vlen)
{
    for (uint32_t off = 0; off < d->len;) {
        uint8_t l = d->blob[off];
        uint32_t vl = be_get32(d->blob + off + 1 + l);
        if (l == nlen && memcmp(d->blob + off + 1, name, nlen) == 0) {
            if (val)
                *val = d->blob + off + 1 + l + 4;
            if (vlen)
                *vlen = vl;
            return off;
        }
        off += 1 + l + 4 + vl;
    }
    return -1;
}

static void item_remove(struct kv_dir *d, uint32_t off)
{
    uint8_t l = d->blob[off];
    uint32_t size = 1 + l + 4 + be_get32(d->blob + off + 1 + l);
    memmove(d->blob + off, d->blob + off + size, d->len - off - size);
    d->len -= size;
    d->n--;
}

static void dir_free(struct kv_dir *d)
{
    mem_free(d->blob);
    mem_free(d);
}

static void mem_set_locked(struct kvstore *kv, const char *dir, size_t dlen, const char *name,
                           size_t nlen, const void *val, size_t vlen)
{
    struct kv_dir *d = strmap_get(&kv->dirs, dir, dlen);
    if (!d) {
        d = mem_calloc(1, sizeof(*d));
        strmap_put(&kv->dirs, dir, dlen, d);
    }
    const uint8_t *old;
    uint32_t old_len;
    int64_t off = item_find(d, name, nlen, &old, &old_len);
    if (off >= 0 && old_len == vlen) { /* most puts replace a value of the same size */
        if (vlen)
            memcpy((uint8_t *)old, val, vlen);
        return;
    }
    if (off >= 0) {
        kv->live_bytes -= record_bytes(dlen, nlen, old_len);
        item_remove(d, (uint32_t)off);
    }
    d->blob = mem_realloc(d->blob, d->len + 1 + nlen + 4 + vlen);
    uint8_t *p = d->blob + d->len;
    p[0] = (uint8_t)nlen;
    memcpy(p + 1, name, nlen);
    be_put32(p + 1 + nlen, (uint32_t)vlen);
    if (vlen)
        memcpy(p + 1 + nlen + 4, val, vlen);
    d->len += (uint32_t)(1 + nlen + 4 + vlen);
    d->n++;
    kv->live_bytes += record_bytes(dlen, nlen, vlen);
}

/* Returns whether something was removed. */
static bool mem_del_locked(struct kvstore *kv, const char *dir, size_t dlen, const char *name,
                           size_t nlen)
{
    struct kv_dir *d = strmap_get(&kv->dirs, dir, dlen);
    uint32_t vlen;
    int64_t off = d ? item_find(d, name, nlen, NULL, &vlen) : -1;
    if (off < 0)
        return false;
    kv->live_bytes -= record_bytes(dlen, nlen, vlen);
    item_remove(d, (uint32_t)off);
    if (d->n == 0)
        dir_free(strmap_del(&kv->dirs, dir, dlen));
    return true;
}

static bool mem_del_dir_locked(struct kvstore *kv, const char *dir, size_t dlen)
{
    struct kv_dir *d = strmap_del(&kv->dirs, dir, dlen);
    if (!d)
        return false;
    for (uint32_t off = 0; off < d->len;) {
        uint8_t l = d->blob[off];
        uint32_t vl = be_get32(d->blob + off + 1 + l);
        kv->live_bytes -= record_bytes(dlen, l, vl);
        off += 1 + l + 4 + vl;
    }
    dir_free(d);
    return true;
}

static void lock(const struct kvstore *kv)
{
    CHECK(pthread_mutex_lock((pthread_mutex_t *)&kv->mu) == 0);
}

static void unlock(const struct kvstore *kv)
{
    CHECK(pthread_mutex_unlock((pthread_mutex_t *)&kv->mu) == 0);
}

static void mem_set(struct kvstore *kv, const char *dir, size_t dlen, const char *name, size_t nlen,
                    const void *val, size_t vlen)
{
    lock(kv);
    mem_set_locked(kv, dir, dlen, name, nlen, val, vlen);
    unlock(kv);
}

static bool mem_del(struct kvstore *kv, const char *dir, size_t dlen, const char *name, size_t nlen)
{
    lock(kv);
    bool removed = mem_del_locked(kv, dir, dlen, name, nlen);
    unlock(kv);
    return removed;
}

static bool mem_del_dir(struct kvstore *kv, const char *dir, size_t dlen)
{
    lock(kv);
    bool removed = mem_del_dir_locked(kv, dir, dlen);
    unlock(kv);
    return removed;
}

/* ---- records ---- */

static void encode(uint8_t *p, int op, const char *dir, size_t dlen, const char *name, size_t nlen,
                   const void *val, size_t vlen)
{
    uint32_t body = (uint32_t)(KV_BODY_FIXED + dlen + nlen + vlen);
    be_put32(p + 4, body);
    p[8] = (uint8_t)op;
    p[9] = (uint8_t)dlen;
    p[10] = (uint8_t)nlen;
    memcpy(p + 11, dir, dlen);
    if (nlen)
        memcpy(p + 11 + dlen, name, nlen);
    if (vlen)
        memcpy(p + 11 + dlen + nlen, val, vlen);
    be_put32(p, crc32c(0, p + 4, 4 + body));
}

/* Applies the record at p (n bytes available): its size, or 0 if it does not check out. */
static size_t replay_one(struct kvstore *kv, const uint8_t *p, size_t n)
{
    if (n < KV_REC_HEADER + KV_BODY_FIXED)
        return 0;
    uint32_t body = be_get32(p + 4);
    if (body < KV_BODY_FIXED || body > KV_BODY_MAX || body > n - KV_REC_HEADER ||
        crc32c(0, p + 4, 4 + (size_t)body) != be_get32(p))
        return 0;
    int op = p[8];
    size_t dlen = p[9], nlen = p[10];
    if (dlen == 0 || KV_BODY_FIXED + dlen + nlen > body || nlen > KV_NAME_MAX)
        return 0;
    const char *dir = (const char *)p + 11, *name = dir + dlen;
    if (memchr(dir, 0, dlen) || memchr(name, 0, nlen)) /* keys are C strings */
        return 0;
    size_t vlen = body - KV_BODY_FIXED - dlen - nlen;
    if (op == OP_PUT && nlen > 0)
        mem_set(kv, dir, dlen, name, nlen, name + nlen, vlen);
    else if (op == OP_DEL && nlen > 0 && vlen == 0)
        mem_del(kv, dir, dlen, name, nlen);
    else if (op == OP_DEL_DIR && nlen == 0 && vlen == 0)
        mem_del_dir(kv, dir, dlen);
    else
        return 0;
    return KV_REC_HEADER + body;
}

/* Appends a record to the buffer; writes the buffer out when it is full or old. */
static int append(struct kvstore *kv, int op, const char *dir, size_t dlen, const char *name,
                  size_t nlen, const void *val, size_t vlen)
{
    size_t size = (size_t)record_bytes(dlen, nlen, vlen);
    MEM_GROW(kv->buf, kv->buf_cap, kv->buf_len + size);
    encode(kv->buf + kv->buf_len, op, dir, dlen, name, nlen, val, vlen);
    int64_t now = time_mono_ms();
    if (kv->buf_len == 0)
        kv->buf_since_ms = now;
    kv->buf_len += size;
    kv->seq_put++;
    kv->st.puts++;
    if (kv->buf_len >= KV_BUFFER_BYTES || now - kv->buf_since_ms >= KV_BUFFER_MS)
        return kv_flush(kv);
    return 0;
}

/* ---- the file ---- */

/* Writes the map to a new file, syncs it and renames it over the old one. On failure the old
 * file and must_rewrite stay as they were. */
uint8_t *kv_image(const struct kvstore *kv, size_t *len_out)
{
    size_t cap = KV_HEADER_BYTES + (size_t)kv->live_bytes;
    uint8_t *out = mem_alloc(cap);
    memcpy(out, KV_MAGIC, 4);
    be_put32(out + 4, KV_VERSION);
    size_t len = KV_HEADER_BYTES;
    size_t it = 0;
    const char *dir;
    void *v;
    while (strmap_next(&kv->dirs, &it, &dir, &v)) {
        const struct kv_dir *d = v;
        size_t dlen = strlen(dir);
        for (uint32_t off = 0; off < d->len;) {
            uint8_t l = d->blob[off];
            uint32_t vl = be_get32(d->blob + off + 1 + l);
            encode(out + len, OP_PUT, dir, dlen, (const char *)d->blob + off + 1, l,
                   d->blob + off + 1 + l + 4, vl);
            len += (size_t)record_bytes(dlen, l, vl);
            off += 1 + l + 4 + vl;
        }
    }
    CHECK(len == cap); /* invariant 2: live_bytes is the image's size */
    *len_out = len;
    return out;
}

static int rewrite(struct kvstore *kv)
{
    size_t len;
    uint8_t *out = kv_image(kv, &len);
    char tmp[KV_DIR_MAX + 16];
    snprintf(tmp, sizeof(tmp), "%s.tmp", kv->name);
    int fd = io_create(kv->dirfd, tmp, O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
    int rc = fd < 0 ? fd : io_pwrite_all(fd, out, len, 0, NULL);
    if (rc == 0)
        rc = io_fdatasync(fd);
    if (rc == 0)
        rc = io_rename(kv->dirfd, tmp, kv->name);
    mem_free(out);
    if (rc != 0) {
        if (fd >= 0)
            close(fd);
        io_unlink(kv->dirfd, tmp);
        kv->st.write_errors++;
        log_warn("kvstore_rewrite_failed", "path=%s error=\"%s\"", kv->path, err_str(rc));
        return rc;
    }
    /* the name is the new file's now: appends go there whatever follows */
    fileref_put(kv->file);
    kv->file = fileref_new(fd);
    kv->file_end = (int64_t)len;
    kv->buf_len = 0;
    kv->seq_written = kv->seq_put;
    kv->rewrite_above = 4 * kv->live_bytes + KV_REWRITE_SLACK;
    kv->st.rewrites++;
    rc = io_fsync_dir(kv->dirfd);
    if (rc != 0) { /* the rename may not last: rewrite again at the next sync */
        kv->must_rewrite = true;
        kv->st.write_errors++;
        log_warn("kvstore_rewrite_failed", "path=%s error=\"%s\"", kv->path, err_str(rc));
        return rc;
    }
    kv->seq_synced = kv->seq_put;
    kv->must_rewrite = false;
    kv->st.syncs++;
    return 0;
}

int kv_flush(struct kvstore *kv)
{
    if (!kv->file) { /* held in memory only (kv_open_bytes) */
        kv->buf_len = 0;
        kv->seq_written = kv->seq_synced = kv->seq_put;
        return 0;
    }
    if (kv->must_rewrite)
        return rewrite(kv);
    if (kv->buf_len == 0)
        return 0;
    if (kv->file_end + (int64_t)kv->buf_len > kv->rewrite_above) {
        if (rewrite(kv) == 0)
            return 0;
        if (kv->must_rewrite) /* renamed, but not durably: the next sync rewrites again */
            return -EIO;
        /* the old file is intact: go on appending, and try again when it has grown more */
        kv->rewrite_above = kv->file_end + (int64_t)kv->buf_len + KV_REWRITE_SLACK;
    }
    size_t n = kv->buf_len;
    kv->buf_len = 0;
    int rc = io_pwrite_all(kv->file->fd, kv->buf, n, kv->file_end, NULL);
    if (rc != 0) {
        kv->must_rewrite = true; /* invariant 3: a torn record may end the file now */
        kv->st.write_errors++;
        log_warn("kvstore_write_failed", "path=%s error=\"%s\"", kv->path, err_str(rc));
        return rc;
    }
    kv->file_end += (int64_t)n;
    kv->seq_written = kv->seq_put;
    return 0;
}

int kv_sync_begin(struct kvstore *kv, struct fileref **file, uint64_t *seq)
{
    if (!kv->file)
        return -ERR_INVALID;
    int rc = kv_flush(kv);
    if (rc != 0)
        return rc;
    *seq = kv->seq_written;
    *file = fileref_get(kv->file);
    kv->syncs_in_flight++;
    return 0;
}

static void kv_free(struct kvstore *kv);

void kv_sync_end(struct kvstore *kv, uint64_t seq, int rc)
{
    CHECK(kv->syncs_in_flight > 0);
    kv->syncs_in_flight--;
    if (kv->closed) { /* kv_close synced everything itself */
        if (kv->syncs_in_flight == 0)
            kv_free(kv);
        return;
    }
    if (rc == 0) {
        if (seq > kv->seq_synced)
            kv->seq_synced = seq;
        kv->st.syncs++;
        return;
    }
    /* after a failed fdatasync what the file holds is unknown: a new one, whole */
    kv->must_rewrite = true;
    kv->seq_written = kv->seq_synced;
    kv->st.write_errors++;
    log_warn("kvstore_sync_failed", "path=%s error=\"%s\"", kv->path, err_str(rc));
}

int kv_sync(struct kvstore *kv)
{
    if (!kv->file) /* in memory only: nothing to make durable */
        return kv_flush(kv);
    if (kv_synced(kv))
        return 0;
    struct fileref *f;
    uint64_t seq;
    int rc = kv_sync_begin(kv, &f, &seq);
    if (rc != 0)
        return rc;
    rc = seq > kv->seq_synced ? io_fdatasync(f->fd) : 0;
    kv_sync_end(kv, seq, rc);
    fileref_put(f);
    return rc;
}

bool kv_synced(const struct kvstore *kv)
{
    return kv->seq_synced == kv->seq_put && !kv->must_rewrite;
}

/* ---- the interface ---- */

static bool key_ok(const char *dir, size_t dlen, size_t nlen)
{
    return dlen > 0 && dlen <= KV_DIR_MAX && nlen <= KV_NAME_MAX && !memchr(dir, '\0', dlen);
}

int kv_peek(const struct kvstore *kv, const char *dir, const char *name, const void **val,
            size_t *len)
{
    lock(kv);
    const struct kv_dir *d = strmap_get(&kv->dirs, dir, strlen(dir));
    const uint8_t *v = NULL;
    uint32_t vlen = 0;
    bool found = d && item_find(d, name, strlen(name), &v, &vlen) >= 0;
    unlock(kv);
    if (!found)
        return -ENOENT;
    *val = v;
    *len = vlen;
    return 0;
}

ssize_t kv_get(const struct kvstore *kv, const char *dir, const char *name, void *buf, size_t cap)
{
    const void *val;
    size_t len;
    if (kv_peek(kv, dir, name, &val, &len) != 0)
        return -ENOENT;
    if (len > cap)
        return -ERR_TOO_LARGE;
    memcpy(buf, val, len);
    return (ssize_t)len;
}

bool kv_has_dir(const struct kvstore *kv, const char *dir)
{
    lock(kv);
    bool has = strmap_get(&kv->dirs, dir, strlen(dir)) != NULL;
    unlock(kv);
    return has;
}

int kv_put(struct kvstore *kv, const char *dir, const char *name, const void *val, size_t len)
{
    size_t dlen = strlen(dir), nlen = strlen(name);
    if (!key_ok(dir, dlen, nlen) || nlen == 0 || len > KV_VALUE_MAX)
        return -ERR_INVALID;
    mem_set(kv, dir, dlen, name, nlen, val, len);
    int rc = append(kv, OP_PUT, dir, dlen, name, nlen, val, len);
    DCHECK((kv_check(kv), true));
    return rc;
}

int kv_del(struct kvstore *kv, const char *dir, const char *name)
{
    size_t dlen = strlen(dir), nlen = strlen(name);
    if (!key_ok(dir, dlen, nlen) || nlen == 0)
        return -ERR_INVALID;
    if (!mem_del(kv, dir, dlen, name, nlen))
        return 0;
    return append(kv, OP_DEL, dir, dlen, name, nlen, NULL, 0);
}

int kv_del_dir(struct kvstore *kv, const char *dir)
{
    size_t dlen = strlen(dir);
    if (!key_ok(dir, dlen, 0))
        return -ERR_INVALID;
    if (!mem_del_dir(kv, dir, dlen))
        return 0;
    return append(kv, OP_DEL_DIR, dir, dlen, "", 0, NULL, 0);
}

void kv_get_stats(const struct kvstore *kv, struct kv_stats *out)
{
    *out = kv->st;
    out->dirs = kv->dirs.len;
    out->values = 0;
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&kv->dirs, &it, &k, &v))
        out->values += ((struct kv_dir *)v)->n;
    out->live_bytes = kv->live_bytes;
    out->file_bytes = kv->file_end + (int64_t)kv->buf_len;
}

/* ---- open and close ---- */

static bool header_ok(const uint8_t *data, size_t size)
{
    return size >= KV_HEADER_BYTES && memcmp(data, KV_MAGIC, 4) == 0 &&
           be_get32(data + 4) == KV_VERSION;
}

/* Applies the whole records at the start of data: the bytes they take. */
static size_t replay_records(struct kvstore *kv, const uint8_t *data, size_t size)
{
    size_t pos = 0;
    while (pos < size) {
        size_t n = replay_one(kv, data + pos, size - pos);
        if (n == 0)
            break;
        pos += n;
    }
    return pos;
}

/* Applies the records of a file's bytes; *valid is where the last good one ends. 0, or
 * -ERR_CORRUPT when the bytes do not start with a store's header. */
static int replay_bytes(struct kvstore *kv, const uint8_t *data, size_t size, size_t *valid)
{
    if (!header_ok(data, size))
        return -ERR_CORRUPT;
    *valid = KV_HEADER_BYTES + replay_records(kv, data + KV_HEADER_BYTES, size - KV_HEADER_BYTES);
    return 0;
}

/* replay's reads: more than the largest record, so that a record that does not check out in a
 * full buffer is bad, not cut short; small enough to stay in the cache (a buffer for the whole
 * file cost a restart a page fault for every 4 KiB of it). */
#define KV_REPLAY_CHUNK (2u << 20)
_Static_assert(KV_REPLAY_CHUNK > KV_REC_HEADER + KV_BODY_MAX, "a record fits a replay read");

/* Reads the file a chunk at a time and applies its records; *torn when something follows the
 * last good one. */
static int replay(struct kvstore *kv, int fd, bool *torn)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    *torn = false;
    if (st.st_size == 0) {
        *torn = true; /* created, never written whole: write it afresh */
        return 0;
    }
    size_t size = (size_t)st.st_size;
    size_t cap = MIN(size, (size_t)KV_REPLAY_CHUNK);
    uint8_t *buf = mem_alloc(cap);
    size_t have = 0;   /* bytes in buf */
    size_t buf_at = 0; /* the file offset of buf[0] */
    size_t valid = 0;  /* the file offset where the last good record ends */
    int rc = 0;
    for (bool eof = false; !eof;) {
        ssize_t got = io_pread_full(fd, buf + have, cap - have, (off_t)(buf_at + have));
        if (got < 0) {
            rc = (int)got;
            break;
        }
        eof = (size_t)got < cap - have || buf_at + have + (size_t)got >= size;
        have += (size_t)got;
        size_t pos = 0;
        if (buf_at == 0) {
            if (!header_ok(buf, have)) {
                rc = -ERR_CORRUPT;
                break;
            }
            pos = KV_HEADER_BYTES;
        }
        pos += replay_records(kv, buf + pos, have - pos);
        valid = buf_at + pos;
        if (pos < have && have - pos >= KV_REC_HEADER + KV_BODY_MAX)
            break; /* a whole record's room, and it does not check out */
        memmove(buf, buf + pos, have - pos);
        buf_at += pos;
        have -= pos;
    }
    mem_free(buf);
    if (rc != 0)
        return rc;
    *torn = valid < size;
    kv->file_end = (int64_t)valid;
    if (*torn)
        log_warn("kvstore_tail_dropped", "path=%s valid_bytes=%zu file_bytes=%zu", kv->path, valid,
                 size);
    return 0;
}

static struct kvstore *kv_new(const char *path, const char *name)
{
    struct kvstore *kv = mem_calloc(1, sizeof(*kv));
    kv->path = mem_strdup(path);
    kv->name = mem_strdup(name);
    kv->dirfd = -1;
    CHECK(pthread_mutex_init(&kv->mu, NULL) == 0);
    strmap_init(&kv->dirs);
    return kv;
}

int kv_open_bytes(const uint8_t *data, size_t len, size_t *valid, struct kvstore **out)
{
    struct kvstore *kv = kv_new("(memory)", "(memory)");
    int rc = replay_bytes(kv, data, len, valid);
    if (rc != 0) {
        kv_close(kv);
        return rc;
    }
    *out = kv;
    return 0;
}

int kv_open(const char *path, struct kvstore **out)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (strlen(name) == 0 || strlen(name) > KV_DIR_MAX)
        return -ERR_INVALID;
    struct kvstore *kv = kv_new(path, name);
    char *parent = slash ? mem_strndup(path, (size_t)(slash - path)) : mem_strdup(".");
    kv->dirfd = open(slash == path ? "/" : parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    mem_free(parent);
    int rc = kv->dirfd < 0 ? -errno : 0;
    int fd = -1;
    if (rc == 0) {
        fd = openat(kv->dirfd, name, O_RDWR | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
            fd = io_create(kv->dirfd, name, O_RDWR | O_CLOEXEC, 0644);
        else if (fd < 0)
            fd = -errno;
        rc = fd < 0 ? fd : 0;
    }
    bool torn = false;
    if (rc == 0) {
        kv->file = fileref_new(fd);
        rc = replay(kv, fd, &torn);
    }
    /* a torn tail must go before anything is appended after it; a file mostly made of
     * replaced values is compacted */
    if (rc == 0 && (torn || kv->file_end > 2 * kv->live_bytes + (1 << 20)))
        rc = rewrite(kv);
    kv->rewrite_above = 4 * kv->live_bytes + KV_REWRITE_SLACK;
    if (rc != 0) {
        log_error("kvstore_open_failed", "path=%s error=\"%s\"", path, err_str(rc));
        kv->seq_synced = kv->seq_written = kv->seq_put; /* nothing to write at close */
        kv_close(kv);
        return rc;
    }
    DCHECK((kv_check(kv), true));
    *out = kv;
    return 0;
}

int kv_close(struct kvstore *kv)
{
    if (!kv)
        return 0;
    int rc = kv->file ? kv_sync(kv) : 0;
    kv->closed = true;
    if (kv->syncs_in_flight == 0)
        kv_free(kv);
    return rc;
}

static void kv_free(struct kvstore *kv)
{
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&kv->dirs, &it, &k, &v))
        dir_free(v);
    strmap_destroy(&kv->dirs);
    CHECK(pthread_mutex_destroy(&kv->mu) == 0);
    fileref_put(kv->file);
    if (kv->dirfd >= 0)
        close(kv->dirfd);
    mem_free(kv->buf);
    mem_free(kv->name);
    mem_free(kv->path);
    mem_free(kv);
}
