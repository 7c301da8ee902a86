/* Helpers shared by the storage unit tests. */
#ifndef SP_TEST_STORAGE_UTIL_H
#define SP_TEST_STORAGE_UTIL_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/batch.h"
#include "kafka/compress.h"
#include "storage/plog.h"
#include "test.h"

/* A valid uncompressed batch of n records of value_size bytes, all with timestamp ts;
 * mem_alloc'd, *len its size. Values encode `seed` so batches differ. */
static inline uint8_t *su_batch(int n, int value_size, int64_t ts, int seed, size_t *len)
{
    struct kbytes *vals = mem_calloc((size_t)n, sizeof(*vals));
    uint8_t *data = mem_alloc((size_t)(n * value_size) + 1);
    for (int i = 0; i < n * value_size; i++)
        data[i] = (uint8_t)(seed * 31 + i);
    for (int i = 0; i < n; i++)
        vals[i] = (struct kbytes){data + i * value_size, value_size};
    struct iobuf b;
    iobuf_init(&b);
    kbatch_build(&b, ts, NULL, vals, n);
    uint8_t *out = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    mem_free(vals);
    mem_free(data);
    return out;
}

static inline struct plog_config su_config(void)
{
    return (struct plog_config){.segment_bytes = 1 << 20,
                                .segment_ms = -1,
                                .retention_ms = -1,
                                .retention_bytes = -1,
                                .index_interval_bytes = 4096};
}

static inline const char *su_dir(const char *name)
{
    static char buf[8][512];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 512, "%s/%s", test_tmpdir(), name);
    return p;
}

static inline struct plog *su_open(const char *dir, const struct plog_config *cfg, bool clean,
                                   struct plog_recovery *rec)
{
    struct plog *log = NULL;
    int rc = plog_open(dir, cfg, NULL, NULL, clean, &log, rec);
    ASSERT_EQ(rc, 0);
    return log;
}

/* Appends a batch (n records, value_size bytes each); returns its base offset. */
static inline int64_t su_append(struct plog *log, int n, int value_size, int64_t ts, int32_t epoch)
{
    size_t len;
    uint8_t *b = su_batch(n, value_size, ts, (int)plog_end_offset(log), &len);
    int64_t base = -1;
    ASSERT_EQ(plog_append(log, b, len, epoch, ts, &base), 0);
    mem_free(b);
    return base;
}

/* Reads the bytes a read result names. */
static inline uint8_t *su_read_bytes(const struct plog_read_result *r)
{
    uint8_t *buf = mem_alloc(r->len ? r->len : 1);
    ASSERT_EQ(pread(r->file->fd, buf, r->len, r->pos), (ssize_t)r->len);
    return buf;
}

static inline int64_t su_file_size(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (int64_t)st.st_size;
}

static inline bool su_exists(const char *dir, const char *name)
{
    return su_file_size(dir, name) >= 0;
}

static inline const char *su_seg(int64_t base, const char *ext)
{
    static char buf[8][64];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, 64, "%020lld%s", (long long)base, ext);
    return p;
}

/* Walks batch headers in a byte range: count and the offsets they cover. */
static inline int su_count_batches(const uint8_t *p, size_t len, int64_t *first, int64_t *next)
{
    int n = 0;
    size_t pos = 0;
    while (pos < len) {
        struct kbatch_header h;
        kbatch_parse_header(p + pos, &h);
        if (n == 0 && first)
            *first = h.base_offset;
        if (next)
            *next = kbatch_last_offset(&h) + 1;
        ASSERT(kbatch_crc_ok(p + pos, kbatch_size(&h)));
        pos += kbatch_size(&h);
        n++;
    }
    ASSERT_EQ(pos, len);
    return n;
}

/* One record for su_kbatch: key NULL = null key, value NULL = tombstone. */
struct su_rec {
    const char *key;
    const char *value;
    int64_t ts;
};

/* A batch of n keyed records (offset deltas 0..n-1), compressed with codec, from producer
 * pid/pepoch/seq (-1s for none); baseTimestamp = first ts, maxTimestamp = largest. mem_alloc'd. */
static inline uint8_t *su_kbatch(const struct su_rec *recs, int n, int codec, int64_t pid,
                                 int16_t pepoch, int32_t seq, size_t *len)
{
    struct iobuf rb;
    iobuf_init(&rb);
    struct kwriter rw = {&rb};
    int64_t base_ts = recs[0].ts, max_ts = recs[0].ts;
    for (int i = 0; i < n; i++) {
        struct kbytes k = recs[i].key ? (struct kbytes){(const uint8_t *)recs[i].key,
                                                        (int32_t)strlen(recs[i].key)}
                                      : (struct kbytes){NULL, -1};
        struct kbytes v = recs[i].value ? (struct kbytes){(const uint8_t *)recs[i].value,
                                                          (int32_t)strlen(recs[i].value)}
                                        : (struct kbytes){NULL, -1};
        struct krecord_header h = {kstr_c("h"), {(const uint8_t *)"v", 1}};
        krecord_encode(&rw, recs[i].ts - base_ts, i, k, v, &h, i % 2);
        if (recs[i].ts > max_ts)
            max_ts = recs[i].ts;
    }
    size_t plen;
    uint8_t *plain = iobuf_flatten(&rb, &plen);
    iobuf_destroy(&rb);
    uint8_t *section = plain;
    size_t slen = plen;
    if (codec != KCOMPRESSION_NONE)
        ASSERT_EQ(kcompress_compress(codec, plain, plen, &section, &slen), 0);
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    kw_i64(&w, 0);
    kw_i32(&w, (int32_t)(KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD + slen));
    kw_i32(&w, -1);
    kw_i8(&w, KBATCH_MAGIC);
    kw_u32(&w, 0);
    kw_i16(&w, (int16_t)codec);
    kw_i32(&w, n - 1);
    kw_i64(&w, base_ts);
    kw_i64(&w, max_ts);
    kw_i64(&w, pid);
    kw_i16(&w, pepoch);
    kw_i32(&w, seq);
    kw_i32(&w, n);
    kw_raw(&w, section, slen);
    uint8_t *out = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    kbatch_update_crc(out, *len);
    if (section != plain)
        mem_free(section);
    mem_free(plain);
    return out;
}

/* Appends a keyed batch to log (epoch 0); returns its base offset. */
static inline int64_t su_append_recs(struct plog *log, const struct su_rec *recs, int n, int codec,
                                     int64_t pid, int32_t seq)
{
    size_t len;
    uint8_t *b = su_kbatch(recs, n, codec, pid, pid >= 0 ? 0 : -1, seq, &len);
    int64_t base = -1;
    ASSERT_EQ(plog_append(log, b, len, 0, recs[0].ts, &base), 0);
    mem_free(b);
    return base;
}

/* The recovery point's offset as dir's file holds it (its first 20 digits), -1 without one. */
static inline int64_t su_recovery_point_on_disk(const char *dir)
{
    char path[1024], buf[64] = {0};
    snprintf(path, sizeof(path), "%s/recovery-point", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return n >= 20 ? strtoll(buf, NULL, 10) : -1;
}

/* Runs fn in a child that exits without closing anything: the kill -9 of a broker (the page
 * cache keeps what was written, nothing is flushed or checkpointed at close). */
static inline void su_crash_after(void (*fn)(const char *dir, void *arg), const char *dir,
                                  void *arg)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ASSERT_CMP(pid, >=, 0);
    if (pid == 0) {
        fn(dir, arg);
        _exit(0);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#endif
