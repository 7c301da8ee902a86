#include "base/errors.h"
#include "storage/epoch_cache.h"
#include "storage/index.h"
#include "storage_util.h"

TEST(storage_index_offset_lookup_and_truncate)
{
    struct oindex ix;
    oindex_init(&ix);
    for (uint32_t i = 1; i <= 100; i++)
        oindex_append(&ix, i * 10, i * 1000);
    struct oindex_entry e;
    ASSERT(!oindex_floor(&ix, 9, &e));
    ASSERT(oindex_floor(&ix, 10, &e));
    ASSERT_EQ(e.pos, 1000);
    ASSERT(oindex_floor(&ix, 555, &e));
    ASSERT_EQ(e.rel, 550);
    ASSERT(oindex_floor_bounded(&ix, 555, 3500, &e));
    ASSERT_EQ(e.rel, 30);
    ASSERT(oindex_floor_bounded(&ix, 25, 100000, &e));
    ASSERT_EQ(e.rel, 20);
    oindex_truncate(&ix, 5000);
    ASSERT_EQ(ix.n, 4);
    size_t len;
    uint8_t *buf = oindex_encode(&ix, &len);
    ASSERT_EQ(len, 32);
    struct oindex back;
    oindex_init(&back);
    ASSERT_EQ(oindex_decode(&back, buf, len, 1000, 1000000), 0);
    ASSERT_EQ(back.n, 4);
    ASSERT_EQ(back.e[3].pos, 4000);
    /* bounds and order are checked */
    ASSERT_EQ(oindex_decode(&back, buf, len, 40, 1000000), -ERR_CORRUPT);
    ASSERT_EQ(oindex_decode(&back, buf, len, 1000, 4000), -ERR_CORRUPT);
    ASSERT_EQ(oindex_decode(&back, buf, len - 1, 1000, 1000000), -ERR_CORRUPT);
    ASSERT_EQ(back.n, 0);
    buf[15] = 0; /* second entry's position below the first */
    buf[14] = 0;
    ASSERT_EQ(oindex_decode(&back, buf, len, 1000, 1000000), -ERR_CORRUPT);
    mem_free(buf);
    oindex_free(&back);
    oindex_free(&ix);
}

TEST(storage_index_time_lookup)
{
    struct tindex ix;
    tindex_init(&ix);
    ASSERT(tindex_maybe_append(&ix, 100, 0));
    ASSERT(!tindex_maybe_append(&ix, 100, 5)); /* not larger */
    ASSERT(tindex_maybe_append(&ix, 200, 10));
    ASSERT(tindex_maybe_append(&ix, 300, 20));
    struct tindex_entry e;
    ASSERT(!tindex_floor_below(&ix, 100, &e));
    ASSERT(tindex_floor_below(&ix, 101, &e));
    ASSERT_EQ(e.rel, 0);
    ASSERT(tindex_floor_below(&ix, 300, &e));
    ASSERT_EQ(e.rel, 10);
    size_t len;
    uint8_t *buf = tindex_encode(&ix, &len);
    ASSERT_EQ(len, 36);
    struct tindex back;
    tindex_init(&back);
    ASSERT_EQ(tindex_decode(&back, buf, len, 21), 0);
    ASSERT(tindex_last(&back, &e));
    ASSERT_EQ(e.ts, 300);
    ASSERT_EQ(tindex_decode(&back, buf, len, 20), -ERR_CORRUPT);
    buf[7] = 0xff; /* first timestamp now larger than the second */
    buf[6] = 0xff;
    ASSERT_EQ(tindex_decode(&back, buf, len, 21), -ERR_CORRUPT);
    tindex_truncate(&ix, 10);
    ASSERT_EQ(ix.n, 1);
    mem_free(buf);
    tindex_free(&back);
    tindex_free(&ix);
}

TEST(storage_epoch_cache_semantics_and_file)
{
    struct epoch_cache c;
    epoch_cache_init(&c);
    ASSERT(epoch_cache_assign(&c, 1, 0));
    ASSERT(!epoch_cache_assign(&c, 1, 10));
    ASSERT(epoch_cache_assign(&c, 3, 10));
    ASSERT(epoch_cache_assign(&c, 4, 25));
    ASSERT_EQ(epoch_cache_end_offset(&c, 1, 40), 10);
    ASSERT_EQ(epoch_cache_end_offset(&c, 2, 40), 10);
    ASSERT_EQ(epoch_cache_end_offset(&c, 4, 40), 40);
    ASSERT(epoch_cache_truncate_start(&c, 12));
    ASSERT_EQ(c.n, 2);
    ASSERT_EQ(c.e[0].epoch, 3);
    ASSERT_EQ(c.e[0].start, 12);
    ASSERT(epoch_cache_truncate_end(&c, 25));
    ASSERT_EQ(epoch_cache_last_epoch(&c), 3);
    const char *dir = su_dir("e");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ASSERT_EQ(epoch_cache_store(&c, dfd, true), 0);
    struct epoch_cache d;
    epoch_cache_init(&d);
    ASSERT_EQ(epoch_cache_load(&d, dfd), 0);
    ASSERT_EQ(d.n, 1);
    ASSERT_EQ(d.e[0].start, 12);
    /* malformed files are refused, never half-loaded */
    const char *bad[] = {"", "1\n0\n", "0\n2\n1 0\n", "0\n2\n5 0\n3 9\n", "0\n1\n1 -4\n",
                         "0\n1\n1 0\njunk", "0\n999999999\n1 0\n", "0\n1\n99999999999 0\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int fd = openat(dfd, EPOCH_CACHE_FILE, O_WRONLY | O_TRUNC);
        ASSERT_CMP(fd, >=, 0);
        ASSERT_EQ(write(fd, bad[i], strlen(bad[i])), (ssize_t)strlen(bad[i]));
        close(fd);
        ASSERT_EQ(epoch_cache_load(&d, dfd), -ERR_CORRUPT);
        ASSERT_EQ(d.n, 0);
    }
    close(dfd);
    epoch_cache_free(&c);
    epoch_cache_free(&d);
}
