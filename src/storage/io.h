/* The storage layer's I/O seam: the syscalls that can fail on a sick or full disk go through a
 * small table of function pointers, so tests can inject EIO/ENOSPC and a crash simulator can
 * record writes since the last sync. Reads (pread, fstat, readdir) call the OS directly.
 *
 * Table functions behave like the syscalls they stand for (return -1 and set errno). The io_*
 * helpers below wrap them with the project's conventions (0 or -errno, EINTR and short writes
 * retried) and are what storage code calls.
 *
 * The table is global and read with an atomic load, so the flusher thread sees the same one;
 * set it before starting work you want it to apply to. */
#ifndef SP_STORAGE_IO_H
#define SP_STORAGE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct storage_io {
    ssize_t (*pwrite)(int fd, const void *buf, size_t n, off_t off);
    int (*fdatasync)(int fd);
    int (*fsync)(int fd); /* directories */
    int (*ftruncate)(int fd, off_t len);
    int (*openat)(int dirfd, const char *name, int flags, mode_t mode); /* only with O_CREAT */
    int (*renameat)(int olddirfd, const char *oldname, int newdirfd, const char *newname);
    int (*unlinkat)(int dirfd, const char *name, int flags);
    int (*syncfs)(int fd); /* the whole filesystem of fd; NULL: io_syncfs gives -ENOSYS */
};

/* The real syscalls. */
extern const struct storage_io storage_io_default;

/* Installs io (NULL restores the default). The table must outlive its use. */
void storage_io_set(const struct storage_io *io);
const struct storage_io *storage_io_get(void);

/* Writes all n bytes at off, retrying EINTR and short writes. Returns 0 or -errno; *written (may
 * be NULL) receives the bytes that did reach the file, also on failure. */
int io_pwrite_all(int fd, const void *buf, size_t n, off_t off, size_t *written);
int io_fdatasync(int fd);
int io_fsync_dir(int dirfd);
/* Writes back every dirty file and the journal of fd's filesystem and waits (syncfs(2)). Only
 * Linux 5.8 and later report write-back errors of the files through it
 * (io_syncfs_reports_errors); earlier kernels return 0 regardless, so a caller that relies on
 * it for durability must check that first. */
int io_syncfs(int fd);
bool io_syncfs_reports_errors(void);
int io_ftruncate(int fd, off_t len);
/* openat(dirfd, name, flags | O_CLOEXEC | O_NOATIME): the fd or -errno. Without O_NOATIME where
 * the kernel refuses it (EPERM: a file the process does not own): a restart reads every
 * partition's files, and each first read would otherwise write its inode's access time, for
 * the open's syncfs to write back. */
int io_open_noatime(int dirfd, const char *name, int flags);
/* Creates (O_CREAT) name in dirfd: returns the fd or -errno. */
int io_create(int dirfd, const char *name, int flags, mode_t mode);
int io_rename(int dirfd, const char *from, const char *to);
/* Removes a file; a missing one is not an error. */
int io_unlink(int dirfd, const char *name);

/* Atomically replaces dirfd/name with len bytes: writes name.tmp, fdatasyncs it (if sync),
 * renames it over name and fsyncs the directory (if sync). On failure the old file is intact
 * and the temp file removed. Returns 0 or -errno. */
int io_write_file_atomic(int dirfd, const char *name, const void *data, size_t len, bool sync);

/* Reads a whole small regular file into buf (cap bytes) with one read: the length, -ENOENT,
 * -ERR_TOO_LARGE if it holds more than cap bytes, or another -errno. A read of a regular file
 * is short only at its end, so one preadv of cap + 1 bytes tells both. */
ssize_t io_read_small_file(int dirfd, const char *name, void *buf, size_t cap);

/* pread that retries EINTR and short reads; returns bytes read (less than n only at EOF) or
 * -errno. */
ssize_t io_pread_full(int fd, void *buf, size_t n, off_t off);
/* One pread (EINTR retried) of a regular file, which is short only at the file's end: the
 * bytes read or -errno. Saves io_pread_full's second read where the file may end before n. */
ssize_t io_pread_upto(int fd, void *buf, size_t n, off_t off);

/* Blocks the calling thread has asked the disk to read so far (its reads that missed the page
 * cache, getrusage's ru_inblock for the thread), or -1 if unknown. Two readings around a call
 * tell whether it waited for the disk. */
long io_thread_blocks_read(void);

/* The names in a directory, read at once (getdents64 on the caller's descriptor, which must be
 * at the start of the directory: fresh, or rewound). "." and ".." are left out. A snapshot:
 * it does not follow later changes, so a caller that creates or removes files lists again. */
struct io_dir_list {
    char *names; /* NUL-terminated names, one after another */
    size_t len;  /* bytes used in names */
    size_t cap;
    size_t count;
};
/* Fills l (replacing what it held) from dirfd. Returns 0 or -errno. */
int io_dir_list_read(struct io_dir_list *l, int dirfd);
/* Whether name is in l. */
bool io_dir_list_has(const struct io_dir_list *l, const char *name);
/* Iteration: start with *pos = 0; NULL after the last name. */
const char *io_dir_list_next(const struct io_dir_list *l, size_t *pos);
void io_dir_list_free(struct io_dir_list *l); /* leaves it empty */

/* Removes dirfd/name and, if it is a directory, everything below it (depth-limited). A missing
 * entry is not an error. Returns 0 or the first -errno. */
int io_remove_tree(int dirfd, const char *name);

/* name + suffix into out (cap >= IO_NAME_MAX + 1), shortened when it would exceed the file
 * system's IO_NAME_MAX bytes: a prefix of name, '~', a 64-bit hash of name, then the suffix
 * (so it still ends in suffix and stays unique). Used for temp and *.deleted names. */
#define IO_NAME_MAX 255
void io_suffixed_name(char *out, size_t cap, const char *name, const char *suffix);

/* Whether name ends with suffix. */
bool io_has_suffix(const char *name, const char *suffix);

#endif
