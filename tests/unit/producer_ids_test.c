/* Producer-id allocation (broker/producer_ids.h): no id is ever handed out twice, across
 * restarts, crashes and write failures. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/mem.h"
#include "broker/producer_ids.h"
#include "storage/io.h"
#include "test.h"

static struct pid_allocator *open_alloc(int64_t floor)
{
    struct pid_source *src;
    char err[256];
    int rc = pid_local_source_open(test_tmpdir(), floor, &src, err, sizeof(err));
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "open: %s", err);
    return pid_allocator_new(src);
}

static int64_t file_value(void)
{
    char path[512], buf[256];
    snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), PID_FILE);
    FILE *f = fopen(path, "r");
    ASSERT(f != NULL);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    long long v = -1;
    ASSERT_EQ(sscanf(buf, "version=1\nnext.block.start=%lld\n", &v), 1);
    return v;
}

static void write_raw(const char *text)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), PID_FILE);
    FILE *f = fopen(path, "w");
    ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
}

TEST(producer_ids_never_repeat_across_restarts_and_are_persisted_before_use)
{
    int64_t max_seen = -1;
    for (int run = 0; run < 4; run++) {
        struct pid_allocator *a = open_alloc(0);
        int n = 700 + run * 400; /* ends mid-block: the rest of the block is skipped */
        for (int i = 0; i < n; i++) {
            int64_t id;
            ASSERT_EQ(pid_allocator_next(a, &id), 0);
            ASSERT_CMP(id, >, max_seen);
            max_seen = id;
            /* the file already covers every id handed out */
            ASSERT_CMP(file_value(), >, id);
            ASSERT(pid_allocator_issued(a, id));
        }
        ASSERT(!pid_allocator_issued(a, file_value()));
        ASSERT(!pid_allocator_issued(a, -1));
        pid_allocator_free(a); /* no shutdown step: a crash looks the same */
    }
    ASSERT_CMP(max_seen, >=, 700 + 1100 + 1500);
}

static int fail_sync(int fd)
{
    errno = EIO;
    return -1;
}

TEST(producer_ids_a_block_that_cannot_be_persisted_is_not_used)
{
    struct pid_allocator *a = open_alloc(0);
    int64_t id, last = -1;
    for (int i = 0; i < PID_BLOCK_SIZE * PID_PREFETCH_PERCENT / 100 - 1; i++) {
        ASSERT_EQ(pid_allocator_next(a, &id), 0);
        last = id;
    }
    int64_t persisted = file_value();
    struct storage_io io = storage_io_default;
    io.fdatasync = fail_sync;
    storage_io_set(&io);
    /* the rest of the current block still comes out; then nothing */
    int ok = 0;
    while (pid_allocator_next(a, &id) == 0) {
        ASSERT_CMP(id, <, persisted);
        ok++;
    }
    ASSERT_EQ(last + ok + 1, persisted);
    ASSERT_EQ(pid_allocator_next(a, &id), -EIO);
    ASSERT_EQ(file_value(), persisted);
    storage_io_set(NULL);
    ASSERT_EQ(pid_allocator_next(a, &id), 0);
    ASSERT_EQ(id, persisted);
    ASSERT_EQ(file_value(), persisted + PID_BLOCK_SIZE);
    pid_allocator_free(a);
}

TEST(producer_ids_floor_missing_and_corrupt_files)
{
    int64_t id;
    /* missing file: start at the floor */
    struct pid_allocator *a = open_alloc(123456);
    ASSERT_EQ(pid_allocator_next(a, &id), 0);
    ASSERT_EQ(id, 123456);
    pid_allocator_free(a);
    /* a file below the floor (ids in the logs above it): the floor wins */
    a = open_alloc(500000);
    ASSERT_EQ(pid_allocator_next(a, &id), 0);
    ASSERT_EQ(id, 500000);
    pid_allocator_free(a);
    /* the file wins over a lower floor */
    a = open_alloc(0);
    ASSERT_EQ(pid_allocator_next(a, &id), 0);
    ASSERT_EQ(id, 500000 + PID_BLOCK_SIZE);
    pid_allocator_free(a);
    /* corrupt files: bad CRC, leading zeros, trailing bytes, garbage */
    static const char *bad[] = {
        "version=1\nnext.block.start=5000\ncrc32c=00000000\n",
        "version=1\nnext.block.start=05000\ncrc32c=00000000\n",
        "version=2\nnext.block.start=5000\n",
        "",
        "\xff\xfe garbage",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_raw(bad[i]);
        a = open_alloc(777);
        ASSERT_EQ(pid_allocator_next(a, &id), 0);
        ASSERT_EQ(id, 777 + PID_CORRUPT_MARGIN);
        pid_allocator_free(a);
    }
    /* and what the allocator writes reads back */
    a = open_alloc(0);
    ASSERT_EQ(pid_allocator_next(a, &id), 0);
    ASSERT_EQ(id, 777 + PID_CORRUPT_MARGIN + PID_BLOCK_SIZE);
    pid_allocator_free(a);
}

/* A source that hands out a block only when told to (a controller source's shape). */
struct slow_source {
    struct pid_source base;
    bool ready;
    int64_t next;
    int asked;
};

static int slow_next(struct pid_source *s, struct pid_block *out)
{
    struct slow_source *x = (struct slow_source *)s;
    x->asked++;
    if (!x->ready)
        return -EAGAIN;
    x->ready = false;
    *out = (struct pid_block){x->next, 10};
    x->next += 100; /* blocks need not be contiguous */
    return 0;
}

static int64_t slow_end(const struct pid_source *s)
{
    return ((const struct slow_source *)s)->next;
}

static void slow_destroy(struct pid_source *s)
{
    mem_free(s);
}

TEST(producer_ids_asynchronous_source_is_asked_early_and_may_say_not_yet)
{
    struct slow_source *src = mem_calloc(1, sizeof(*src));
    src->base = (struct pid_source){slow_next, slow_end, slow_destroy};
    src->next = 50;
    struct pid_allocator *a = pid_allocator_new(&src->base);
    int64_t id;
    ASSERT_EQ(pid_allocator_next(a, &id), -EAGAIN);
    src->ready = true;
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ(pid_allocator_next(a, &id), 0);
        ASSERT_EQ(id, 50 + i);
    }
    int asked = src->asked;
    ASSERT_EQ(pid_allocator_next(a, &id), 0); /* the 9th of 10: 90% used, asks early */
    ASSERT_EQ(id, 58);
    ASSERT_EQ(src->asked, asked + 1);
    ASSERT_EQ(pid_allocator_next(a, &id), 0);
    ASSERT_EQ(id, 59);
    ASSERT_EQ(pid_allocator_next(a, &id), -EAGAIN); /* block used up, next not there yet */
    src->ready = true;
    ASSERT_EQ(pid_allocator_next(a, &id), 0);
    ASSERT_EQ(id, 150);
    ASSERT(pid_allocator_issued(a, 150));
    ASSERT(!pid_allocator_issued(a, 250));
    pid_allocator_free(a);
}
