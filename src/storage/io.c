#include "storage/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/mem.h"

static int real_openat(int dirfd, const char *name, int flags, mode_t mode)
{
    return openat(dirfd, name, flags, mode);
}

const struct storage_io storage_io_default = {
    .pwrite = pwrite,
    .fdatasync = fdatasync,
    .fsync = fsync,
    .ftruncate = ftruncate,
    .openat = real_openat,
    .renameat = renameat,
    .unlinkat = unlinkat,
    .syncfs = syncfs,
};

static const struct storage_io *current_io = &storage_io_default;

void storage_io_set(const struct storage_io *io)
{
    __atomic_store_n(&current_io, io ? io : &storage_io_default, __ATOMIC_RELEASE);
}

const struct storage_io *storage_io_get(void)
{
    return __atomic_load_n(&current_io, __ATOMIC_ACQUIRE);
}

int io_pwrite_all(int fd, const void *buf, size_t n, off_t off, size_t *written)
{
    const struct storage_io *io = storage_io_get();
    const uint8_t *p = buf;
    size_t done = 0;
    int rc = 0;
    while (done < n) {
        ssize_t w = io->pwrite(fd, p + done, n - done, off + (off_t)done);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            rc = -errno;
            break;
        }
        if (w == 0) { /* no progress and no error: treat as a full disk rather than spin */
            rc = -ENOSPC;
            break;
        }
        done += (size_t)w;
    }
    if (written)
        *written = done;
    return rc;
}

int io_fdatasync(int fd)
{
    return storage_io_get()->fdatasync(fd) == 0 ? 0 : -errno;
}

int io_fsync_dir(int dirfd)
{
    return storage_io_get()->fsync(dirfd) == 0 ? 0 : -errno;
}

int io_syncfs(int fd)
{
    const struct storage_io *io = storage_io_get();
    if (!io->syncfs)
        return -ENOSYS; /* a table without it (older tests' fault injection): callers fall back */
    return io->syncfs(fd) == 0 ? 0 : -errno;
}

bool io_syncfs_reports_errors(void)
{
    static int known = -1; /* the kernel does not change under a running process */
    if (known < 0) {
        struct utsname u;
        int major = 0, minor = 0;
        known = uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
                (major > 5 || (major == 5 && minor >= 8));
    }
    return known == 1;
}

int io_ftruncate(int fd, off_t len)
{
    const struct storage_io *io = storage_io_get();
    for (;;) {
        if (io->ftruncate(fd, len) == 0)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
}

int io_create(int dirfd, const char *name, int flags, mode_t mode)
{
    int fd = storage_io_get()->openat(dirfd, name, flags | O_CREAT | O_CLOEXEC, mode);
    return fd >= 0 ? fd : -errno;
}

int io_rename(int dirfd, const char *from, const char *to)
{
    return storage_io_get()->renameat(dirfd, from, dirfd, to) == 0 ? 0 : -errno;
}

int io_unlink(int dirfd, const char *name)
{
    if (storage_io_get()->unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    return -errno;
}

void io_suffixed_name(char *out, size_t cap, const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    if (n + s <= IO_NAME_MAX) {
        snprintf(out, cap, "%s%s", name, suffix);
        return;
    }
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ULL;
    int keep = (int)(IO_NAME_MAX - s - 17);
    snprintf(out, cap, "%.*s~%016llx%s", keep, name, (unsigned long long)h, suffix);
}

int io_write_file_atomic(int dirfd, const char *name, const void *data, size_t len, bool sync)
{
    char tmp[IO_NAME_MAX + 1];
    if (strlen(name) > IO_NAME_MAX)
        return -ENAMETOOLONG;
    io_suffixed_name(tmp, sizeof(tmp), name, ".tmp");
    int fd = io_create(dirfd, tmp, O_WRONLY | O_TRUNC, 0644);
    if (fd < 0)
        return fd;
    int rc = io_pwrite_all(fd, data, len, 0, NULL);
    if (rc == 0 && sync)
        rc = io_fdatasync(fd);
    close(fd);
    if (rc == 0)
        rc = io_rename(dirfd, tmp, name);
    if (rc != 0) {
        io_unlink(dirfd, tmp);
        return rc;
    }
    if (sync)
        rc = io_fsync_dir(dirfd);
    return rc;
}

ssize_t io_pread_full(int fd, void *buf, size_t n, off_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, (uint8_t *)buf + done, n - done, off + (off_t)done);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    return (ssize_t)done;
}

ssize_t io_pread_upto(int fd, void *buf, size_t n, off_t off)
{
    ssize_t r;
    do
        r = pread(fd, buf, n, off);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : r;
}

int io_open_noatime(int dirfd, const char *name, int flags)
{
    int fd = openat(dirfd, name, flags | O_CLOEXEC | O_NOATIME);
    if (fd < 0 && errno == EPERM)
        fd = openat(dirfd, name, flags | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

long io_thread_blocks_read(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_THREAD, &ru) == 0 ? ru.ru_inblock : -1;
}

ssize_t io_read_small_file(int dirfd, const char *name, void *buf, size_t cap)
{
    int fd = io_open_noatime(dirfd, name, O_RDONLY);
    if (fd < 0)
        return fd;
    char extra;
    struct iovec iov[2] = {{buf, cap}, {&extra, 1}};
    ssize_t n;
    do
        n = preadv(fd, iov, 2, 0);
    while (n < 0 && errno == EINTR);
    n = n < 0 ? -errno : n > (ssize_t)cap ? -ERR_TOO_LARGE : n;
    close(fd);
    return n;
}

int io_dir_list_read(struct io_dir_list *l, int dirfd)
{
    l->len = 0;
    l->count = 0;
    char buf[8192] __attribute__((aligned(8)));
    for (;;) {
        ssize_t n = getdents64(dirfd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return 0;
        for (ssize_t off = 0; off < n;) {
            const struct dirent64 *de = (const struct dirent64 *)(buf + off);
            off += de->d_reclen;
            const char *name = de->d_name;
            if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))
                continue;
            size_t k = strlen(name) + 1;
            MEM_GROW(l->names, l->cap, l->len + k);
            memcpy(l->names + l->len, name, k);
            l->len += k;
            l->count++;
        }
    }
}

const char *io_dir_list_next(const struct io_dir_list *l, size_t *pos)
{
    if (*pos >= l->len)
        return NULL;
    const char *name = l->names + *pos;
    *pos += strlen(name) + 1;
    return name;
}

bool io_dir_list_has(const struct io_dir_list *l, const char *name)
{
    size_t pos = 0;
    for (const char *n; (n = io_dir_list_next(l, &pos)) != NULL;)
        if (strcmp(n, name) == 0)
            return true;
    return false;
}

void io_dir_list_free(struct io_dir_list *l)
{
    mem_free(l->names);
    *l = (struct io_dir_list){0};
}

static int remove_tree_at(int dirfd, const char *name, int depth)
{
    const struct storage_io *io = storage_io_get();
    if (io->unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -errno;
    if (depth <= 0)
        return -ELOOP;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = -errno;
        close(fd);
        return e;
    }
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        int r = remove_tree_at(fd, de->d_name, depth - 1);
        if (r != 0 && rc == 0)
            rc = r;
    }
    closedir(d);
    if (io->unlinkat(dirfd, name, AT_REMOVEDIR) != 0 && errno != ENOENT && rc == 0)
        rc = -errno;
    return rc;
}

int io_remove_tree(int dirfd, const char *name)
{
    return remove_tree_at(dirfd, name, 8);
}

bool io_has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), s = strlen(suffix);
    return n >= s && memcmp(name + n - s, suffix, s) == 0;
}
