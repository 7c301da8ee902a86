#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/mem.h"
#include "storage/prefetch.h"
#include "test.h"

#define SMALL_BYTES 3000
#define BIG_BYTES (3 * PREFETCH_FILE_MAX)

static void write_file(const char *dir, const char *name, size_t len)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_CMP(fd, >=, 0);
    uint8_t *buf = mem_alloc(len);
    memset(buf, 0x5a, len);
    ASSERT_EQ(write(fd, buf, len), (ssize_t)len);
    mem_free(buf);
    ASSERT_EQ(fdatasync(fd), 0); /* clean: evict_file can drop it */
    close(fd);
}

static size_t resident_pages(const char *dir, const char *name, size_t off, size_t len);

/* Out of the page cache, as a restart after a power cut finds it. A page just written may sit
 * in another CPU's LRU batch, where POSIX_FADV_DONTNEED passes it over: asked again until
 * mincore shows none of the file (bounded). */
static void evict_file(const char *dir, const char *name, size_t len)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY);
    ASSERT_CMP(fd, >=, 0);
    for (int i = 0; i < 200; i++) {
        ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        if (resident_pages(dir, name, 0, len) == 0)
            break;
        usleep(5 * 1000);
    }
    close(fd);
    ASSERT_EQ(resident_pages(dir, name, 0, len), 0); /* the file never left the cache */
}

/* Pages of [off, off+len) of the file in the page cache. */
static size_t resident_pages(const char *dir, const char *name, size_t off, size_t len)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY);
    ASSERT_CMP(fd, >=, 0);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, off + len, PROT_READ, MAP_SHARED, fd, 0);
    ASSERT(m != MAP_FAILED);
    size_t n = (off + len + page - 1) / page;
    unsigned char *vec = mem_calloc(n, 1);
    ASSERT_EQ(mincore(m, off + len, vec), 0);
    size_t res = 0;
    for (size_t i = off / page; i < n; i++)
        res += vec[i] & 1;
    mem_free(vec);
    munmap(m, off + len);
    close(fd);
    return res;
}

/* Until the pages of [off, off+len) are resident (readahead(2) may still be reading them). */
static void wait_resident(const char *dir, const char *name, size_t off, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), want = (len + page - 1) / page;
    for (int i = 0; i < 500 && resident_pages(dir, name, off, len) < want; i++)
        usleep(10 * 1000);
    ASSERT_EQ(resident_pages(dir, name, off, len), want);
}

#define N_DIRS 20

static void make_dirs(const char *prefix, char dirs[N_DIRS][512], const char *ptrs[N_DIRS])
{
    for (int i = 0; i < N_DIRS; i++) {
        snprintf(dirs[i], 512, "%s/%s-%d", test_tmpdir(), prefix, i);
        if (i == 7) {
            ptrs[i] = dirs[i]; /* missing: skipped, as the open after it reports */
            continue;
        }
        ASSERT_EQ(mkdir(dirs[i], 0755), 0);
        write_file(dirs[i], "recovery-point", 30);
        write_file(dirs[i], "raft-hard-state", 64);
        write_file(dirs[i], "00000000000000000000.log", SMALL_BYTES);
        write_file(dirs[i], "00000000000000001000.log", BIG_BYTES);
        write_file(dirs[i], "00000000000000000000.index", SMALL_BYTES);
        write_file(dirs[i], "00000000000000001000.snapshot", SMALL_BYTES);
        char sub[600];
        snprintf(sub, sizeof(sub), "%s/sub", dirs[i]);
        ASSERT_EQ(mkdir(sub, 0755), 0); /* not a file: not read */
        ptrs[i] = dirs[i];
    }
    for (int i = 0; i < N_DIRS; i++) {
        if (i == 7)
            continue;
        evict_file(dirs[i], "recovery-point", 30);
        evict_file(dirs[i], "raft-hard-state", 64);
        evict_file(dirs[i], "00000000000000000000.log", SMALL_BYTES);
        evict_file(dirs[i], "00000000000000001000.log", BIG_BYTES);
        evict_file(dirs[i], "00000000000000000000.index", SMALL_BYTES);
        evict_file(dirs[i], "00000000000000001000.snapshot", SMALL_BYTES);
    }
}

/* That the files of dir a restart's open reads (its small files and the last segment's tail)
 * are read ahead (waited for: readahead(2) may still be reading them), and those it does not
 * read (an older segment, an index, a producer snapshot) are not. */
static void assert_read_ahead(const char *dir)
{
    wait_resident(dir, "recovery-point", 0, 30);
    wait_resident(dir, "raft-hard-state", 0, 64);
    wait_resident(dir, "00000000000000001000.log", BIG_BYTES - PREFETCH_FILE_MAX,
                  PREFETCH_FILE_MAX);
    ASSERT_EQ(resident_pages(dir, "00000000000000001000.log", 0, PREFETCH_FILE_MAX), 0);
    ASSERT_EQ(resident_pages(dir, "00000000000000000000.log", 0, SMALL_BYTES), 0);
    ASSERT_EQ(resident_pages(dir, "00000000000000000000.index", 0, SMALL_BYTES), 0);
    ASSERT_EQ(resident_pages(dir, "00000000000000001000.snapshot", 0, SMALL_BYTES), 0);
}

TEST(storage_prefetch_reads_what_an_open_reads_once_and_stays_within_its_window)
{
    static char dirs[N_DIRS][512];
    const char *ptrs[N_DIRS];
    make_dirs("w", dirs, ptrs);

    struct prefetch *pf = prefetch_start(ptrs, N_DIRS, 3, 5);
    ASSERT(pf != NULL);
    prefetch_wait_idle(pf);
    /* only the first five: the opener has not moved */
    wait_resident(dirs[0], "recovery-point", 0, 30);
    wait_resident(dirs[4], "raft-hard-state", 0, 64);
    ASSERT_EQ(resident_pages(dirs[5], "raft-hard-state", 0, 64), 0);
    /* of the last segment, its tail only; no older segment, index or producer snapshot */
    assert_read_ahead(dirs[2]);

    /* then, the missing 7th included, all */
    for (size_t at = 4; at < N_DIRS; at += 4) {
        prefetch_reached(pf, at);
        prefetch_reached(pf, at - 2); /* an older position never pulls the window back */
        prefetch_wait_idle(pf);
        if (at + 6 < N_DIRS)
            ASSERT_EQ(resident_pages(dirs[at + 6], "raft-hard-state", 0, 64), 0);
    }
    for (int i = 0; i < N_DIRS; i++)
        if (i != 7)
            assert_read_ahead(dirs[i]);

    struct prefetch_stats st;
    prefetch_stop(pf, &st);
    ASSERT_EQ(st.dirs, (uint64_t)(N_DIRS - 1));
    ASSERT_EQ(st.missed, 0);
    /* three files looked at in each, once; the kernel may have brought back the odd one
     * evicted above (its own read-ahead), which is then found cached rather than read */
    ASSERT_EQ(st.files + st.cached, (uint64_t)(N_DIRS - 1) * 3);
    ASSERT_CMP(st.files, >=, (uint64_t)(N_DIRS - 1) * 2);
    ASSERT_CMP(st.bytes, <=, (uint64_t)(N_DIRS - 1) * (30 + 64 + PREFETCH_FILE_MAX));
    ASSERT_CMP(st.bytes, >=, (uint64_t)(N_DIRS - 1) / 2 * PREFETCH_FILE_MAX);
}

TEST(storage_prefetch_never_reads_behind_the_opener)
{
    static char dirs[N_DIRS][512];
    const char *ptrs[N_DIRS];
    make_dirs("b", dirs, ptrs);
    struct prefetch *pf = prefetch_start(ptrs, N_DIRS, 2, 2);
    ASSERT(pf != NULL);
    prefetch_wait_idle(pf);
    wait_resident(dirs[1], "recovery-point", 0, 30);
    /* the opener went on to the 11th on its own: the 3rd to the 11th are its business now */
    prefetch_reached(pf, 10);
    prefetch_wait_idle(pf);
    struct prefetch_stats st;
    prefetch_stop(pf, &st);
    assert_read_ahead(dirs[11]);
    for (int i = 2; i <= 10; i++)
        if (i != 7)
            ASSERT_EQ(resident_pages(dirs[i], "recovery-point", 0, 30), 0);
    ASSERT_EQ(st.dirs, 3);
}

TEST(storage_prefetch_nothing_to_do_and_a_stop_midway)
{
    ASSERT(prefetch_start(NULL, 0, 4, 100) == NULL);
    const char *one[1] = {test_tmpdir()};
    ASSERT(prefetch_start(one, 1, 0, 100) == NULL);
    prefetch_reached(NULL, 3);
    struct prefetch_stats st = {.dirs = 9};
    prefetch_stop(NULL, &st);
    ASSERT_EQ(st.dirs, 0);

    /* stopped with most of the list left: returns, reads nothing more, frees everything */
    static char dirs[N_DIRS][512];
    const char *ptrs[N_DIRS];
    make_dirs("s", dirs, ptrs);
    struct prefetch *pf = prefetch_start(ptrs, N_DIRS, 2, 2);
    ASSERT(pf != NULL);
    prefetch_wait_idle(pf);
    prefetch_stop(pf, &st);
    ASSERT_EQ(st.dirs, 2);
    ASSERT_EQ(resident_pages(dirs[5], "raft-hard-state", 0, 64), 0);
}

TEST(storage_prefetch_reads_a_big_tail_whose_first_page_alone_is_cached)
{
    /* the state the prefetcher's one-byte probe leaves on a busy machine when it reads its own
     * page (prefetch.c, cached()): that page cached, the rest of the tail not; the tail must
     * still be read ahead */
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/probe", test_tmpdir());
    ASSERT_EQ(mkdir(dir, 0755), 0);
    const char *name = "00000000000000000000.log";
    write_file(dir, name, BIG_BYTES);
    evict_file(dir, name, BIG_BYTES);
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDONLY);
    ASSERT_CMP(fd, >=, 0);
    ASSERT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0); /* this read: its page only */
    char b;
    ASSERT_EQ(pread(fd, &b, 1, BIG_BYTES - PREFETCH_FILE_MAX), 1);
    close(fd);
    ASSERT_EQ(resident_pages(dir, name, BIG_BYTES - PREFETCH_FILE_MAX, PREFETCH_FILE_MAX), 1);

    const char *ptrs[1] = {dir};
    struct prefetch *pf = prefetch_start(ptrs, 1, 1, 1);
    ASSERT(pf != NULL);
    prefetch_wait_idle(pf);
    struct prefetch_stats st;
    prefetch_stop(pf, &st);
    ASSERT_EQ(st.cached, 1); /* the probe found its page */
    wait_resident(dir, name, BIG_BYTES - PREFETCH_FILE_MAX, PREFETCH_FILE_MAX);
    ASSERT_EQ(resident_pages(dir, name, 0, PREFETCH_FILE_MAX), 0);
}

TEST(storage_prefetch_only_samples_a_warm_cache)
{
    /* 300 directories whose files were just written (cached): after a streak of them found
     * cached, only one in 64 is looked at, and none is read again */
    enum { N = 300 };
    static char dirs[N][512];
    const char *ptrs[N];
    for (int i = 0; i < N; i++) {
        snprintf(dirs[i], 512, "%s/h-%d", test_tmpdir(), i);
        ASSERT_EQ(mkdir(dirs[i], 0755), 0);
        char path[600];
        snprintf(path, sizeof(path), "%.500s/raft-hard-state", dirs[i]);
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        ASSERT_CMP(fd, >=, 0);
        ASSERT_EQ(write(fd, "x", 1), 1);
        close(fd);
        ptrs[i] = dirs[i];
    }
    struct prefetch *pf = prefetch_start(ptrs, N, 1, N);
    ASSERT(pf != NULL);
    prefetch_wait_idle(pf);
    struct prefetch_stats st;
    prefetch_stop(pf, &st);
    ASSERT_EQ(st.files, 0);
    ASSERT_EQ(st.cached, st.dirs);
    ASSERT_CMP(st.dirs, >=, 8);
    ASSERT_CMP(st.dirs, <=, 8 + (N - 8) / 64 + 1);

    /* the same, but the opener reports a read of its own halfway: every directory is looked
     * at again until a new streak of cached ones */
    pf = prefetch_start(ptrs, N, 1, N / 2);
    ASSERT(pf != NULL);
    prefetch_wait_idle(pf);
    prefetch_missed(pf);
    prefetch_reached(pf, N / 2 - 1);
    prefetch_wait_idle(pf);
    prefetch_stop(pf, &st);
    ASSERT_EQ(st.missed, 1);
    ASSERT_EQ(st.files, 0);
    ASSERT_CMP(st.dirs, >=, 16);
    ASSERT_CMP(st.dirs, <=, 16 + 2 * ((N / 2 - 8) / 64 + 1));
}
