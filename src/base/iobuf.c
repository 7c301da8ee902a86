#include "base/iobuf.h"

#include <string.h>
#include <unistd.h>

#include "base/check.h"
#include "base/mem.h"

#define IOBUF_MIN_CHUNK 1024

struct fileref *fileref_new(int fd)
{
    struct fileref *f = mem_alloc(sizeof(*f));
    f->fd = fd;
    f->refs = 1;
    return f;
}

struct fileref *fileref_get(struct fileref *f)
{
    __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
    return f;
}

void fileref_put(struct fileref *f)
{
    if (!f)
        return;
    if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        close(f->fd);
        mem_free(f);
    }
}

void iobuf_init(struct iobuf *b)
{
    memset(b, 0, sizeof(*b));
}

static void chunk_release(struct iobuf_chunk *c)
{
    if (c->file)
        fileref_put(c->file);
    else
        mem_free(c->data);
}

void iobuf_destroy(struct iobuf *b)
{
    for (size_t i = b->head; i < b->n; i++)
        chunk_release(&b->chunks[i]);
    mem_free(b->chunks);
    iobuf_init(b);
}

static struct iobuf_chunk *chunk_push(struct iobuf *b)
{
    if (b->head > 0 && b->n == b->cap) {
        /* reclaim consumed slots at the front */
        memmove(b->chunks, b->chunks + b->head, (b->n - b->head) * sizeof(*b->chunks));
        b->n -= b->head;
        b->head = 0;
    }
    MEM_GROW(b->chunks, b->cap, b->n + 1);
    struct iobuf_chunk *c = &b->chunks[b->n++];
    memset(c, 0, sizeof(*c));
    return c;
}

uint8_t *iobuf_reserve(struct iobuf *b, size_t n)
{
    struct iobuf_chunk *c = b->n > b->head ? &b->chunks[b->n - 1] : NULL;
    if (c && !c->file && c->cap - c->len >= n)
        return c->data + c->len;
    if (c && !c->file) {
        /* grow the tail memory chunk in place: positions stay valid, pointers do not */
        size_t ncap = c->cap * 2;
        while (ncap - c->len < n)
            ncap *= 2;
        c->data = mem_realloc(c->data, ncap);
        c->cap = ncap;
        return c->data + c->len;
    }
    c = chunk_push(b);
    c->cap = n > IOBUF_MIN_CHUNK ? n : IOBUF_MIN_CHUNK;
    c->data = mem_alloc(c->cap);
    return c->data;
}

void iobuf_commit(struct iobuf *b, size_t n)
{
    CHECK(b->n > b->head);
    struct iobuf_chunk *c = &b->chunks[b->n - 1];
    CHECK(!c->file && c->len + n <= c->cap);
    c->len += n;
    b->total += n;
}

void iobuf_append(struct iobuf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    uint8_t *dst = iobuf_reserve(b, n);
    memcpy(dst, p, n);
    iobuf_commit(b, n);
}

void iobuf_append_file(struct iobuf *b, struct fileref *f, off_t off, size_t len)
{
    if (len == 0)
        return;
    struct iobuf_chunk *c = chunk_push(b);
    c->file = fileref_get(f);
    c->file_off = off;
    c->len = len;
    b->total += len;
}

void iobuf_move(struct iobuf *dst, struct iobuf *src)
{
    for (size_t i = src->head; i < src->n; i++) {
        struct iobuf_chunk *s = &src->chunks[i];
        size_t skip = i == src->head ? src->head_off : 0;
        if (s->len == skip) {
            chunk_release(s);
            continue;
        }
        if (skip) {
            if (s->file) {
                s->file_off += (off_t)skip;
            } else {
                memmove(s->data, s->data + skip, s->len - skip);
            }
            s->len -= skip;
        }
        struct iobuf_chunk *d = chunk_push(dst);
        *d = *s;
        dst->total += s->len;
    }
    mem_free(src->chunks);
    iobuf_init(src);
}

void iobuf_patch(struct iobuf *b, size_t pos, const void *p, size_t n)
{
    const uint8_t *src = p;
    size_t start = b->consumed - b->head_off; /* absolute position of chunks[head] */
    CHECK(pos >= b->consumed && pos + n <= b->total);
    for (size_t i = b->head; i < b->n && n > 0; i++) {
        struct iobuf_chunk *c = &b->chunks[i];
        if (pos < start + c->len) {
            CHECK(!c->file);
            size_t in = pos - start;
            size_t k = MIN(n, c->len - in);
            memcpy(c->data + in, src, k);
            src += k;
            pos += k;
            n -= k;
        }
        start += c->len;
    }
    CHECK(n == 0);
}

void iobuf_consume(struct iobuf *b, size_t n)
{
    CHECK(n <= iobuf_pending(b));
    b->consumed += n;
    while (n > 0) {
        struct iobuf_chunk *c = &b->chunks[b->head];
        size_t left = c->len - b->head_off;
        if (n < left) {
            b->head_off += n;
            return;
        }
        n -= left;
        chunk_release(c);
        b->head++;
        b->head_off = 0;
    }
    /* drop fully consumed zero-length chunks too */
    while (b->head < b->n && b->chunks[b->head].len == 0) {
        chunk_release(&b->chunks[b->head]);
        b->head++;
    }
    if (b->head == b->n) {
        b->head = b->n = 0;
        b->head_off = 0;
    }
}

uint8_t *iobuf_flatten(const struct iobuf *b, size_t *len)
{
    size_t total = iobuf_pending(b);
    uint8_t *out = mem_alloc(total);
    size_t o = 0;
    for (size_t i = b->head; i < b->n; i++) {
        const struct iobuf_chunk *c = &b->chunks[i];
        size_t skip = i == b->head ? b->head_off : 0;
        size_t k = c->len - skip;
        if (!c->file) {
            memcpy(out + o, c->data + skip, k);
        } else {
            size_t got = 0;
            while (got < k) {
                ssize_t r = pread(c->file->fd, out + o + got, k - got,
                                  c->file_off + (off_t)skip + (off_t)got);
                if (r <= 0) {
                    mem_free(out);
                    return NULL;
                }
                got += (size_t)r;
            }
        }
        o += k;
    }
    *len = total;
    return out;
}
