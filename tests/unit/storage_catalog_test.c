#include <errno.h>
#include <sys/stat.h>

#include "base/errors.h"
#include "storage/catalog.h"
#include "storage_util.h"

static void make_file(const char *path, const char *content)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_CMP(fd, >=, 0);
    ASSERT_EQ(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
}

TEST(storage_catalog_lock_refuses_second_open)
{
    const char *dir = su_dir("data/nested");
    struct catalog *a, *b;
    bool clean;
    ASSERT_EQ(catalog_open(dir, &a, &clean), 0);
    ASSERT(clean); /* a new directory has nothing to recover */
    ASSERT_STREQ(catalog_dir(a), dir);
    ASSERT_EQ(catalog_open(dir, &b, &clean), -EBUSY);
    catalog_close(a, false);
    ASSERT_EQ(catalog_open(dir, &b, &clean), 0);
    catalog_close(b, false);
}

TEST(storage_catalog_clean_marker_round_trip)
{
    const char *dir = su_dir("data");
    struct catalog *c;
    bool clean = false;
    ASSERT_EQ(catalog_open(dir, &c, &clean), 0);
    ASSERT(clean); /* new directory */
    catalog_close(c, false);
    ASSERT_EQ(catalog_open(dir, &c, &clean), 0);
    ASSERT(!clean); /* existing directory, no marker */
    catalog_close(c, true);
    ASSERT(su_exists(dir, ".clean_shutdown"));
    ASSERT_EQ(catalog_open(dir, &c, &clean), 0);
    ASSERT(clean);
    /* consumed at open: a crash from here on is unclean */
    ASSERT(!su_exists(dir, ".clean_shutdown"));
    catalog_close(c, false);
    ASSERT_EQ(catalog_open(dir, &c, &clean), 0);
    ASSERT(!clean);
    catalog_close(c, false);
}

TEST(storage_catalog_keeps_topics_whose_names_start_with_a_dot)
{
    /* ".foo" is a legal Kafka topic; its files must not be mistaken for the catalog's own */
    struct catalog *c;
    bool clean;
    ASSERT_EQ(catalog_open(su_dir("data"), &c, &clean), 0);
    struct catalog_topic t = {.name = ".foo", .partitions = 2};
    ASSERT_EQ(catalog_save_topic(c, &t), 0);
    struct catalog_topic *ts;
    int32_t n;
    ASSERT_EQ(catalog_load(c, &ts, &n), 0);
    ASSERT_EQ(n, 1);
    ASSERT_STREQ(ts[0].name, ".foo");
    catalog_topics_free(ts, n);
    /* a deletion interrupted after the rename leaves .foo-0.deleted: the next open sweeps it */
    char pdir[600], debris[700];
    catalog_partition_dir(c, ".foo", 0, pdir, sizeof(pdir));
    snprintf(debris, sizeof(debris), "%s.deleted", pdir);
    ASSERT_EQ(mkdir(debris, 0755), 0);
    catalog_close(c, true);
    ASSERT_EQ(catalog_open(su_dir("data"), &c, &clean), 0);
    struct stat st;
    ASSERT_EQ(stat(debris, &st), -1);
    ASSERT_EQ(catalog_load(c, &ts, &n), 0);
    ASSERT_EQ(n, 1);
    catalog_topics_free(ts, n);
    ASSERT_EQ(catalog_delete_topic(c, ".foo", 2), 0);
    ASSERT_EQ(catalog_load(c, &ts, &n), 0);
    ASSERT_EQ(n, 0);
    catalog_topics_free(ts, n);
    catalog_close(c, false);
}

TEST(storage_catalog_topics_save_load_delete)
{
    const char *dir = su_dir("data");
    struct catalog *c;
    bool clean;
    ASSERT_EQ(catalog_open(dir, &c, &clean), 0);
    struct catalog_kv kvs[] = {{"retention.ms", "1000"}, {"cleanup.policy", "compact=x"}};
    struct catalog_topic t1 = {.name = "orders", .partitions = 3, .configs = kvs, .n_configs = 2};
    for (int i = 0; i < 16; i++)
        t1.id[i] = (uint8_t)(i * 17);
    struct catalog_topic t2 = {.name = "a.b_c-9", .partitions = 1};
    ASSERT_EQ(catalog_save_topic(c, &t1), 0);
    ASSERT_EQ(catalog_save_topic(c, &t2), 0);
    t1.partitions = 4; /* replace */
    ASSERT_EQ(catalog_save_topic(c, &t1), 0);
    /* debris: a temp file from a crash, a garbage topic file, a file of another kind */
    make_file(su_dir("data/topics/x.topic.tmp"), "partitions=1\n");
    make_file(su_dir("data/topics/junk.topic"), "\x01\x02 not a topic\n");
    make_file(su_dir("data/topics/noid.topic"), "partitions=2\n");
    make_file(su_dir("data/topics/zero.topic"), "partitions=0\nid=00000000000000000000000000000000\n");
    make_file(su_dir("data/topics/README"), "hello");
    struct catalog_topic *ts;
    int32_t n;
    ASSERT_EQ(catalog_load(c, &ts, &n), 0);
    ASSERT_EQ(n, 2);
    ASSERT(!su_exists(dir, "topics/x.topic.tmp"));
    const struct catalog_topic *o = strcmp(ts[0].name, "orders") == 0 ? &ts[0] : &ts[1];
    const struct catalog_topic *x = o == &ts[0] ? &ts[1] : &ts[0];
    ASSERT_STREQ(o->name, "orders");
    ASSERT_EQ(o->partitions, 4);
    ASSERT_MEMEQ(o->id, t1.id, 16);
    ASSERT_EQ(o->n_configs, 2);
    ASSERT_STREQ(o->configs[0].key, "retention.ms");
    ASSERT_STREQ(o->configs[0].value, "1000");
    ASSERT_STREQ(o->configs[1].value, "compact=x");
    ASSERT_STREQ(x->name, "a.b_c-9");
    ASSERT_EQ(x->partitions, 1);
    catalog_topics_free(ts, n);
    /* delete removes the file and the partition directories */
    char pdir[512];
    for (int p = 0; p < 4; p++) {
        catalog_partition_dir(c, "orders", p, pdir, sizeof(pdir));
        ASSERT_EQ(mkdir(pdir, 0755), 0);
        char f[600];
        snprintf(f, sizeof(f), "%s/00000000000000000000.log", pdir);
        make_file(f, "data");
    }
    catalog_partition_dir(c, "orders", 2, pdir, sizeof(pdir));
    char want[512];
    snprintf(want, sizeof(want), "%s/orders-2", dir);
    ASSERT_STREQ(pdir, want);
    ASSERT_EQ(catalog_delete_topic(c, "orders", 4), 0);
    ASSERT(!su_exists(dir, "topics/orders.topic"));
    ASSERT(!su_exists(dir, "orders-0"));
    ASSERT(!su_exists(dir, "orders-3"));
    ASSERT(!su_exists(dir, "orders-0.deleted"));
    ASSERT_EQ(catalog_load(c, &ts, &n), 0);
    ASSERT_EQ(n, 1);
    catalog_topics_free(ts, n);
    catalog_close(c, false);
}

TEST(storage_catalog_refuses_unsafe_names_and_values)
{
    struct catalog *c;
    bool clean;
    ASSERT_EQ(catalog_open(su_dir("data"), &c, &clean), 0);
    const char *bad[] = {"../evil", "a/b", ".", "..", "", "sp ace", "nl\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct catalog_topic t = {.name = (char *)bad[i], .partitions = 1};
        ASSERT_EQ(catalog_save_topic(c, &t), -ERR_INVALID);
        ASSERT_EQ(catalog_delete_topic(c, bad[i], 1), -ERR_INVALID);
    }
    char longname[260];
    memset(longname, 'a', 250);
    longname[250] = 0;
    struct catalog_topic t = {.name = longname, .partitions = 1};
    ASSERT_EQ(catalog_save_topic(c, &t), -ERR_INVALID);
    longname[249] = 0;
    ASSERT_EQ(catalog_save_topic(c, &t), 0);
    struct catalog_topic *ts;
    int32_t n;
    ASSERT_EQ(catalog_load(c, &ts, &n), 0);
    ASSERT_EQ(n, 1);
    ASSERT_STREQ(ts[0].name, longname);
    catalog_topics_free(ts, n);
    /* its partition directory's *.deleted name must fit NAME_MAX too */
    char pdir[600];
    catalog_partition_dir(c, longname, 0, pdir, sizeof(pdir));
    ASSERT_EQ(mkdir(pdir, 0755), 0);
    ASSERT_EQ(catalog_delete_topic(c, longname, 1), 0);
    struct stat st;
    ASSERT_EQ(stat(pdir, &st), -1);
    struct catalog_kv kv = {"k", "line\nbreak"};
    struct catalog_topic t2 = {.name = "ok", .partitions = 1, .configs = &kv, .n_configs = 1};
    ASSERT_EQ(catalog_save_topic(c, &t2), -ERR_INVALID);
    struct catalog_topic t3 = {.name = "ok", .partitions = 0};
    ASSERT_EQ(catalog_save_topic(c, &t3), -ERR_INVALID);
    catalog_close(c, false);
}

TEST(storage_catalog_open_removes_leftover_deleted_dirs)
{
    const char *dir = su_dir("data");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    ASSERT_EQ(mkdir(su_dir("data/t-0.deleted"), 0755), 0);
    make_file(su_dir("data/t-0.deleted/00000000000000000000.log"), "x");
    ASSERT_EQ(mkdir(su_dir("data/t-1"), 0755), 0);
    struct catalog *c;
    bool clean;
    ASSERT_EQ(catalog_open(dir, &c, &clean), 0);
    ASSERT(!su_exists(dir, "t-0.deleted"));
    ASSERT(su_exists(dir, "t-1"));
    catalog_close(c, false);
}
