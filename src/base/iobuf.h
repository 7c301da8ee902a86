/* Output buffers made of memory chunks and file ranges.
 *
 * A response is built into an iobuf: encoders append bytes to the tail memory chunk, and Fetch
 * appends file ranges (struct fileref + offset + length) so that segment bytes go to the socket
 * with sendfile(2) without being copied through user space.
 *
 * Positions are absolute byte positions from the start of the buffer (0 .. iobuf_total()); they
 * stay valid as the buffer grows, unlike pointers returned by iobuf_reserve().
 *
 * Ownership: an iobuf owns its memory chunks and holds one reference on every fileref it points
 * to; iobuf_destroy() releases both. */
#ifndef SP_BASE_IOBUF_H
#define SP_BASE_IOBUF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A reference-counted file descriptor. The storage layer holds one per segment file; every iobuf
 * chunk that points into the file holds another, so a segment deleted by retention while its
 * bytes are still queued on a socket keeps its descriptor until they are sent. Reference counts
 * are atomic: the flusher thread holds references too. */
struct fileref {
    int fd;   /* owned: closed when refs drops to zero */
    int refs; /* atomic */
};

struct fileref *fileref_new(int fd); /* takes ownership of fd; refs = 1 */
struct fileref *fileref_get(struct fileref *f);
void fileref_put(struct fileref *f); /* NULL is fine */

struct iobuf_chunk {
    struct fileref *file; /* NULL for a memory chunk */
    uint8_t *data;        /* memory chunk: owned bytes */
    size_t len;           /* bytes of content in this chunk */
    size_t cap;           /* memory chunk: bytes allocated */
    off_t file_off;       /* file chunk: where the range starts in the file */
};

struct iobuf {
    struct iobuf_chunk *chunks; /* in order */
    size_t n;                   /* chunks in use */
    size_t cap;                 /* chunks allocated */
    size_t head;                /* first chunk not yet fully consumed */
    size_t head_off;            /* bytes of chunks[head] already consumed */
    size_t total;               /* bytes ever appended */
    size_t consumed;            /* bytes consumed (sent) */
};

void iobuf_init(struct iobuf *b);
void iobuf_destroy(struct iobuf *b); /* leaves an empty, reusable buffer */

/* Total bytes appended, and bytes not yet consumed. */
static inline size_t iobuf_total(const struct iobuf *b)
{
    return b->total;
}
static inline size_t iobuf_pending(const struct iobuf *b)
{
    return b->total - b->consumed;
}

/* Returns space for n contiguous bytes at the tail; the pointer is valid until the next append.
 * Call iobuf_commit() with the bytes actually written (<= n). */
uint8_t *iobuf_reserve(struct iobuf *b, size_t n);
void iobuf_commit(struct iobuf *b, size_t n);
void iobuf_append(struct iobuf *b, const void *p, size_t n);
/* Appends [off, off+len) of f; takes its own reference on f. */
void iobuf_append_file(struct iobuf *b, struct fileref *f, off_t off, size_t len);
/* Moves all of src's content to the end of dst; src is left empty. */
void iobuf_move(struct iobuf *dst, struct iobuf *src);

/* Overwrites n bytes at absolute position pos; they must lie in memory chunks. */
void iobuf_patch(struct iobuf *b, size_t pos, const void *p, size_t n);

/* Marks n bytes as consumed from the front, freeing chunks that are done. */
void iobuf_consume(struct iobuf *b, size_t n);

/* Copies all unconsumed content (reading file ranges with pread) into a new mem_alloc'd buffer
 * of *len bytes. For tests and small control paths, not the data path. Returns NULL on a read
 * error. */
uint8_t *iobuf_flatten(const struct iobuf *b, size_t *len);

#endif
