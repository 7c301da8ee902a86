/* The log cleaner's broker settings and the topic settings it reads. */
#include "broker/config.h"
#include "broker/topic_config.h"
#include "server/config.h"
#include "storage/plog.h"
#include "test.h"

TEST(config_log_cleaner_keys_defaults_and_bounds)
{
    struct broker_config c;
    char err[512];
    ASSERT_EQ(config_load(&c, NULL, NULL, 0, err, sizeof(err)), 0);
    ASSERT(c.log_cleaner_enable);
    ASSERT_EQ(c.log_cleaner_backoff_ms, 15000);
    ASSERT_EQ(c.log_cleaner_threads, 1);
    ASSERT_EQ(c.log_cleaner_dedupe_buffer_size, 134217728);
    ASSERT_EQ(c.log_cleaner_io_max_bytes_per_second, INT64_MAX);
    config_free(&c);
    char *sets[] = {"log.cleaner.enable=false", "log.cleaner.backoff.ms=200",
                    "log.cleaner.threads=3", "log.cleaner.dedupe.buffer.size=1048576",
                    "log.cleaner.io.max.bytes.per.second=5000000"};
    ASSERT_EQ(config_load(&c, NULL, sets, 5, err, sizeof(err)), 0);
    ASSERT(!c.log_cleaner_enable);
    ASSERT_EQ(c.log_cleaner_backoff_ms, 200);
    ASSERT_EQ(c.log_cleaner_threads, 3);
    ASSERT_EQ(c.log_cleaner_dedupe_buffer_size, 1048576);
    ASSERT_EQ(c.log_cleaner_io_max_bytes_per_second, 5000000);
    config_free(&c);
    char *bad[] = {"log.cleaner.threads=0"};
    ASSERT(config_load(&c, NULL, bad, 1, err, sizeof(err)) != 0);
    ASSERT(strstr(err, "log.cleaner.threads") != NULL);
    char *bad2[] = {"log.cleaner.dedupe.buffer.size=100"};
    ASSERT(config_load(&c, NULL, bad2, 1, err, sizeof(err)) != 0);
    ASSERT(strstr(err, "log.cleaner.dedupe.buffer.size") != NULL);
}

TEST(config_compaction_settings_reach_the_log)
{
    struct broker_config bc;
    char err[512];
    char *sets[] = {"log.cleaner.delete.retention.ms=777", "log.cleaner.min.cleanable.ratio=0.25"};
    ASSERT_EQ(config_load(&bc, NULL, sets, 2, err, sizeof(err)), 0);
    struct topic_config_kv kv[] = {{"cleanup.policy", "compact,delete"},
                                   {"min.compaction.lag.ms", "1234"}};
    struct topic_config tc;
    topic_config_resolve(&tc, &bc, kv, 2);
    struct plog_config pc;
    topic_config_to_plog(&tc, &pc);
    ASSERT(pc.compact);
    ASSERT_EQ(pc.delete_retention_ms, 777);
    ASSERT_EQ(pc.min_compaction_lag_ms, 1234);
    ASSERT(pc.min_cleanable_dirty_ratio > 0.2499 && pc.min_cleanable_dirty_ratio < 0.2501);
    ASSERT_EQ(pc.retention_ms, tc.retention_ms); /* compact,delete: retention applies too */
    struct topic_config_kv kv2[] = {{"cleanup.policy", "delete"}};
    topic_config_resolve(&tc, &bc, kv2, 1);
    topic_config_to_plog(&tc, &pc);
    ASSERT(!pc.compact);
    config_free(&bc);
}
