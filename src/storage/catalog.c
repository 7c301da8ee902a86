/* The data directory: lock, clean-shutdown marker, topic files (storage/catalog.h).
 *
 * Owns: the open, flock()ed .lock file and the directory path.
 *
 * Invariants:
 *   1. While a catalog is open its process holds LOCK_EX on <dir>/.lock (released by close).
 *   2. The clean marker exists only between a clean catalog_close and the next catalog_open.
 *   3. A topic file is replaced atomically (temp, fsync, rename, directory fsync): a reader
 *      sees the old or the new content, never a mix. Temp files are debris of a crash.
 *   4. Names that reach the file system are checked here, whatever the caller did, by Kafka's
 *      topic-name rule (kafka/names.h): only [A-Za-z0-9._-] (so no '/'), not "." or "..", at
 *      most 249 bytes. A name may start with '.' (".foo" is a legal topic): the partition
 *      directories still end in "-N" and topic files in ".topic", so neither can collide with
 *      the catalog's own dot-files.
 *
 * Topic files are read as untrusted input: size-capped, every line key=value, required keys
 * present exactly once, numbers in range. */
#include "storage/catalog.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "kafka/names.h"
#include "storage/io.h"

#define CATALOG_NAME_MAX KTOPIC_NAME_MAX
#define TOPIC_FILE_MAX (1 << 20)
#define TOPIC_PARTITIONS_MAX 1000000
#define LOCK_FILE ".lock"
#define CLEAN_FILE ".clean_shutdown"
#define TOPICS_DIR "topics"
#define TOPIC_SUFFIX ".topic"

struct catalog {
    char *dir;
    int dirfd;    /* the data directory */
    int topicsfd; /* <dir>/topics */
    int lockfd;   /* flock()ed */
};

static bool name_ok(const char *name)
{
    return ktopic_name_legal(name, strlen(name));
}

/* mkdir -p for the data directory itself. */
static int make_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof(buf))
        return -ENAMETOOLONG;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != 0)
            continue;
        char c = buf[i];
        buf[i] = 0;
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -errno;
        buf[i] = c;
    }
    return 0;
}

/* Removes <name>.deleted directories left by an interrupted topic deletion. */
static void remove_deleted_dirs(struct catalog *cat)
{
    int fd = openat(cat->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strlen(de->d_name) > strlen(".deleted") && io_has_suffix(de->d_name, ".deleted")) {
            MEM_GROW(names, cap, n + 1);
            names[n++] = mem_strdup(de->d_name);
        }
    }
    closedir(d);
    for (size_t i = 0; i < n; i++) {
        int rc = io_remove_tree(cat->dirfd, names[i]);
        if (rc != 0)
            log_warn("deleted_dir_remove_failed", "dir=%s name=%s error=\"%s\"", cat->dir,
                     names[i], err_str(rc));
        mem_free(names[i]);
    }
    mem_free(names);
}

int catalog_open(const char *dir, struct catalog **out, bool *was_clean)
{
    int rc = make_dirs(dir);
    if (rc != 0)
        return rc;
    struct catalog *cat = mem_calloc(1, sizeof(*cat));
    cat->dir = mem_strdup(dir);
    cat->topicsfd = cat->lockfd = -1;
    cat->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cat->dirfd < 0) {
        rc = -errno;
        goto out_free;
    }
    cat->lockfd = openat(cat->dirfd, LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (cat->lockfd < 0) {
        rc = -errno;
        goto out_free;
    }
    if (flock(cat->lockfd, LOCK_EX | LOCK_NB) != 0) {
        rc = errno == EWOULDBLOCK ? -EBUSY : -errno;
        log_error("data_dir_locked", "dir=%s error=\"%s\"", dir,
                  rc == -EBUSY ? "another process holds the lock" : err_str(rc));
        goto out_free;
    }
    /* a directory without topics/ is new: nothing to recover, so it counts as clean */
    bool fresh = mkdirat(cat->dirfd, TOPICS_DIR, 0755) == 0;
    if (!fresh && errno != EEXIST) {
        rc = -errno;
        goto out_free;
    }
    cat->topicsfd = openat(cat->dirfd, TOPICS_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cat->topicsfd < 0) {
        rc = -errno;
        goto out_free;
    }
    struct stat st;
    bool marker = fstatat(cat->dirfd, CLEAN_FILE, &st, 0) == 0;
    *was_clean = marker || fresh;
    if (marker) {
        /* from here on a crash must count as unclean */
        rc = io_unlink(cat->dirfd, CLEAN_FILE);
        if (rc == 0)
            rc = io_fsync_dir(cat->dirfd);
        if (rc != 0)
            goto out_free;
    }
    remove_deleted_dirs(cat);
    *out = cat;
    return 0;

out_free:
    if (cat->topicsfd >= 0)
        close(cat->topicsfd);
    if (cat->lockfd >= 0)
        close(cat->lockfd);
    if (cat->dirfd >= 0)
        close(cat->dirfd);
    mem_free(cat->dir);
    mem_free(cat);
    return rc;
}

void catalog_close(struct catalog *cat, bool clean)
{
    if (!cat)
        return;
    if (clean) {
        int rc = io_write_file_atomic(cat->dirfd, CLEAN_FILE, "", 0, true);
        if (rc != 0)
            log_error("clean_marker_write_failed", "dir=%s error=\"%s\"", cat->dir, err_str(rc));
    }
    close(cat->topicsfd);
    close(cat->lockfd); /* releases the flock */
    close(cat->dirfd);
    mem_free(cat->dir);
    mem_free(cat);
}

const char *catalog_dir(const struct catalog *cat)
{
    return cat->dir;
}

/* ---- topic files ---- */

static void topic_clear(struct catalog_topic *t)
{
    mem_free(t->name);
    for (int32_t i = 0; i < t->n_configs; i++) {
        mem_free(t->configs[i].key);
        mem_free(t->configs[i].value);
    }
    mem_free(t->configs);
    memset(t, 0, sizeof(*t));
}

void catalog_topics_free(struct catalog_topic *topics, int32_t n)
{
    for (int32_t i = 0; i < n; i++)
        topic_clear(&topics[i]);
    mem_free(topics);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Parses a topic file's text into t (name already set). Returns 0 or -ERR_CORRUPT. */
static int parse_topic(const char *p, size_t len, struct catalog_topic *t)
{
    const char *end = p + len;
    bool have_partitions = false, have_id = false;
    size_t cap_configs = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        size_t line_len = (size_t)(line_end - p);
        if (line_len == 0) {
            p = line_end + (nl ? 1 : 0);
            continue;
        }
        const char *eq = memchr(p, '=', line_len);
        if (!eq || eq == p || memchr(p, 0, line_len))
            return -ERR_CORRUPT;
        size_t klen = (size_t)(eq - p), vlen = (size_t)(line_end - eq - 1);
        const char *v = eq + 1;
        if (klen == 10 && memcmp(p, "partitions", 10) == 0) {
            if (have_partitions || vlen == 0 || vlen > 10)
                return -ERR_CORRUPT;
            int64_t n = 0;
            for (size_t i = 0; i < vlen; i++) {
                if (v[i] < '0' || v[i] > '9')
                    return -ERR_CORRUPT;
                n = n * 10 + (v[i] - '0');
            }
            if (n < 1 || n > TOPIC_PARTITIONS_MAX)
                return -ERR_CORRUPT;
            t->partitions = (int32_t)n;
            have_partitions = true;
        } else if (klen == 2 && memcmp(p, "id", 2) == 0) {
            if (have_id || vlen != 32)
                return -ERR_CORRUPT;
            for (size_t i = 0; i < 16; i++) {
                int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);
                if (hi < 0 || lo < 0)
                    return -ERR_CORRUPT;
                t->id[i] = (uint8_t)(hi << 4 | lo);
            }
            have_id = true;
        } else if (klen > 7 && memcmp(p, "config.", 7) == 0) {
            MEM_GROW(t->configs, cap_configs, (size_t)t->n_configs + 1);
            t->configs[t->n_configs].key = mem_strndup(p + 7, klen - 7);
            t->configs[t->n_configs].value = mem_strndup(v, vlen);
            t->n_configs++;
        } else {
            return -ERR_CORRUPT;
        }
        p = line_end + (nl ? 1 : 0);
    }
    return have_partitions && have_id ? 0 : -ERR_CORRUPT;
}

static int load_topic(struct catalog *cat, const char *file, struct catalog_topic *t)
{
    size_t nlen = strlen(file) - strlen(TOPIC_SUFFIX);
    memset(t, 0, sizeof(*t));
    t->name = mem_strndup(file, nlen);
    if (!name_ok(t->name)) {
        topic_clear(t);
        return -ERR_INVALID;
    }
    char *buf = mem_alloc(TOPIC_FILE_MAX);
    ssize_t n = io_read_small_file(cat->topicsfd, file, buf, TOPIC_FILE_MAX);
    int rc = n < 0 ? (int)n : parse_topic(buf, (size_t)n, t);
    mem_free(buf);
    if (rc != 0)
        topic_clear(t);
    return rc;
}

int catalog_load(struct catalog *cat, struct catalog_topic **topics, int32_t *n)
{
    *topics = NULL;
    *n = 0;
    int fd = openat(cat->topicsfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = -errno;
        close(fd);
        return e;
    }
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *name = de->d_name;
        if (io_has_suffix(name, ".tmp")) {
            io_unlink(cat->topicsfd, name);
            continue;
        }
        if (strlen(name) <= strlen(TOPIC_SUFFIX) || !io_has_suffix(name, TOPIC_SUFFIX))
            continue;
        struct catalog_topic t;
        int rc = load_topic(cat, name, &t);
        if (rc != 0) {
            char q[300];
            log_warn("topic_file_invalid", "dir=%s file=%s error=\"%s\"", cat->dir,
                     log_quote(q, sizeof(q), name, strlen(name)), err_str(rc));
            continue;
        }
        MEM_GROW(*topics, cap, (size_t)*n + 1);
        (*topics)[(*n)++] = t;
    }
    closedir(d);
    return 0;
}

static bool text_ok(const char *s, bool allow_eq)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r' || (!allow_eq && *s == '='))
            return false;
    return true;
}

int catalog_save_topic(struct catalog *cat, const struct catalog_topic *t)
{
    if (!t->name || !name_ok(t->name) || t->partitions < 1 || t->partitions > TOPIC_PARTITIONS_MAX ||
        t->n_configs < 0)
        return -ERR_INVALID;
    size_t cap = 128;
    for (int32_t i = 0; i < t->n_configs; i++) {
        const struct catalog_kv *kv = &t->configs[i];
        if (!kv->key || !kv->value || !kv->key[0] || !text_ok(kv->key, false) ||
            !text_ok(kv->value, true))
            return -ERR_INVALID;
        cap += strlen(kv->key) + strlen(kv->value) + 16;
    }
    char *buf = mem_alloc(cap);
    size_t len = (size_t)snprintf(buf, cap, "partitions=%" PRId32 "\nid=", t->partitions);
    for (int i = 0; i < 16; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%02x", t->id[i]);
    len += (size_t)snprintf(buf + len, cap - len, "\n");
    for (int32_t i = 0; i < t->n_configs; i++)
        len += (size_t)snprintf(buf + len, cap - len, "config.%s=%s\n", t->configs[i].key,
                                t->configs[i].value);
    CHECK(len < cap);
    char file[CATALOG_NAME_MAX + 16];
    snprintf(file, sizeof(file), "%s" TOPIC_SUFFIX, t->name);
    int rc = io_write_file_atomic(cat->topicsfd, file, buf, len, true);
    mem_free(buf);
    return rc;
}

int catalog_delete_topic(struct catalog *cat, const char *name, int32_t partitions)
{
    if (!name_ok(name) || partitions < 0)
        return -ERR_INVALID;
    char file[CATALOG_NAME_MAX + 16];
    snprintf(file, sizeof(file), "%s" TOPIC_SUFFIX, name);
    int rc = io_unlink(cat->topicsfd, file);
    if (rc == 0)
        rc = io_fsync_dir(cat->topicsfd);
    if (rc != 0)
        return rc;
    /* rename first: a crash mid-removal leaves only *.deleted debris, which open removes */
    for (int32_t i = 0; i < partitions; i++) {
        char from[CATALOG_NAME_MAX + 16], to[IO_NAME_MAX + 1];
        snprintf(from, sizeof(from), "%s-%" PRId32, name, i);
        io_suffixed_name(to, sizeof(to), from, ".deleted");
        io_remove_tree(cat->dirfd, to);
        int r = io_rename(cat->dirfd, from, to);
        if (r != 0 && r != -ENOENT && rc == 0)
            rc = r;
    }
    int r = io_fsync_dir(cat->dirfd);
    if (rc == 0)
        rc = r;
    for (int32_t i = 0; i < partitions; i++) {
        char from[CATALOG_NAME_MAX + 16], to[IO_NAME_MAX + 1];
        snprintf(from, sizeof(from), "%s-%" PRId32, name, i);
        io_suffixed_name(to, sizeof(to), from, ".deleted");
        r = io_remove_tree(cat->dirfd, to);
        if (r != 0 && rc == 0)
            rc = r;
    }
    return rc;
}

void catalog_partition_dir(const struct catalog *cat, const char *topic, int32_t partition,
                           char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s-%" PRId32, cat->dir, topic, partition);
}
