/* storage/io.h's reads: a directory listed at once (io_dir_list_*), a small file read with one
 * call (io_read_small_file), io_pread_upto, and opens that leave access times alone
 * (io_open_noatime). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "storage/io.h"
#include "storage_util.h"

static void put_file(const char *dir, const char *name, const char *text)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

TEST(storage_io_dir_list_names_has_and_relist)
{
    const char *dir = su_dir("list");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT(dfd >= 0);
    struct io_dir_list l = {0};
    ASSERT_EQ(io_dir_list_read(&l, dfd), 0);
    ASSERT_EQ(l.count, 0); /* "." and ".." are left out */
    size_t pos = 0;
    ASSERT(io_dir_list_next(&l, &pos) == NULL);

    /* more names than one 8 KiB getdents64 buffer holds: every one comes back, once */
    enum { N = 400 };
    char name[64];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof(name), "%020d.some-longer-suffix", i);
        put_file(dir, name, "x");
    }
    put_file(dir, "recovery-point", "1");
    ASSERT_EQ(lseek(dfd, 0, SEEK_SET), 0);
    ASSERT_EQ(io_dir_list_read(&l, dfd), 0);
    ASSERT_EQ(l.count, N + 1);
    int seen[N] = {0};
    pos = 0;
    size_t n = 0;
    for (const char *s; (s = io_dir_list_next(&l, &pos)) != NULL; n++) {
        int i;
        if (sscanf(s, "%d.some-longer-suffix", &i) == 1 && strlen(s) == 39) {
            ASSERT(i >= 0 && i < N);
            seen[i]++;
        } else {
            ASSERT_STREQ(s, "recovery-point");
        }
    }
    ASSERT_EQ(n, N + 1);
    for (int i = 0; i < N; i++)
        ASSERT_EQ(seen[i], 1);
    ASSERT(io_dir_list_has(&l, "recovery-point"));
    ASSERT(io_dir_list_has(&l, "00000000000000000399.some-longer-suffix"));
    ASSERT(!io_dir_list_has(&l, "recovery"));
    ASSERT(!io_dir_list_has(&l, "recovery-point2"));
    ASSERT(!io_dir_list_has(&l, "."));

    /* a snapshot: a later file is not in it until listed again */
    put_file(dir, "leader-epoch-checkpoint", "0\n0\n");
    ASSERT(!io_dir_list_has(&l, "leader-epoch-checkpoint"));
    ASSERT_EQ(lseek(dfd, 0, SEEK_SET), 0);
    ASSERT_EQ(io_dir_list_read(&l, dfd), 0);
    ASSERT_EQ(l.count, N + 2);
    ASSERT(io_dir_list_has(&l, "leader-epoch-checkpoint"));
    io_dir_list_free(&l);
    ASSERT_EQ(l.count, 0);
    ASSERT(!io_dir_list_has(&l, "recovery-point"));
    close(dfd);
    ASSERT_EQ(io_dir_list_read(&l, dfd), -EBADF);
    io_dir_list_free(&l);
}

TEST(storage_io_read_small_file_whole_or_too_large)
{
    const char *dir = su_dir("small");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT(dfd >= 0);
    char buf[8];
    ASSERT_EQ(io_read_small_file(dfd, "none", buf, sizeof(buf)), -ENOENT);
    put_file(dir, "empty", "");
    ASSERT_EQ(io_read_small_file(dfd, "empty", buf, sizeof(buf)), 0);
    put_file(dir, "short", "abc");
    ASSERT_EQ(io_read_small_file(dfd, "short", buf, sizeof(buf)), 3);
    ASSERT_MEMEQ(buf, "abc", 3);
    put_file(dir, "exact", "12345678"); /* exactly cap: whole, not too large */
    ASSERT_EQ(io_read_small_file(dfd, "exact", buf, sizeof(buf)), 8);
    ASSERT_MEMEQ(buf, "12345678", 8);
    put_file(dir, "over", "123456789");
    ASSERT_EQ(io_read_small_file(dfd, "over", buf, sizeof(buf)), -ERR_TOO_LARGE);
    ASSERT_EQ(io_read_small_file(dfd, ".", buf, sizeof(buf)), -EISDIR);

    int fd = openat(dfd, "over", O_RDONLY | O_CLOEXEC);
    ASSERT(fd >= 0);
    ASSERT_EQ(io_pread_upto(fd, buf, sizeof(buf), 4), 5); /* the file ends first */
    ASSERT_MEMEQ(buf, "56789", 5);
    ASSERT_EQ(io_pread_upto(fd, buf, sizeof(buf), 9), 0);
    close(fd);
    ASSERT_EQ(io_pread_upto(fd, buf, sizeof(buf), 0), -EBADF);
    close(dfd);
}

/* io_open_noatime: reads through it leave the access time as it was (relatime would write it:
 * the file was read last before its last change), and a missing file is -ENOENT. */
TEST(storage_io_open_noatime_reads_leave_the_access_time)
{
    const char *dir = su_dir("noatime");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    put_file(dir, "f", "some bytes");
    char path[600];
    snprintf(path, sizeof(path), "%s/f", dir);
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    struct timespec ts[2] = {{st.st_mtim.tv_sec - 100, 0}, {0, UTIME_OMIT}};
    ASSERT_EQ(utimensat(AT_FDCWD, path, ts, 0), 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT(dfd >= 0);
    ASSERT_EQ(io_open_noatime(dfd, "none", O_RDONLY), -ENOENT);
    int fd = io_open_noatime(dfd, "f", O_RDWR);
    ASSERT(fd >= 0);
    ASSERT(fcntl(fd, F_GETFL) & O_NOATIME);
    ASSERT(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    char buf[16];
    ASSERT_EQ(io_pread_upto(fd, buf, sizeof(buf), 0), 10);
    close(fd);
    ASSERT_EQ(stat(path, &st), 0);
    ASSERT_EQ((int64_t)st.st_atim.tv_sec, (int64_t)ts[0].tv_sec);
    close(dfd);
}
