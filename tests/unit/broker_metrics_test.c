/* Request accounting on the request path (broker/metrics.h): which bucket a request lands in,
 * what counts as an error, and that a later completion is measured from the frame's arrival. */
#include <time.h>

#include "base/iobuf.h"
#include "base/time.h"
#include "broker/metrics.h"
#include "kafka/msg.h"
#include "test.h"

/* The error-code tally that response_send compares before and after an encoding. */
static uint64_t errors_in_produce(int16_t e0, int16_t e1)
{
    struct produce_resp_partition ps[2] = {
        {.index = 0, .error_code = e0, .log_append_time_ms = -1, .error_message = KSTR_NULL},
        {.index = 1, .error_code = e1, .log_append_time_ms = -1, .error_message = KSTR_NULL}};
    struct produce_resp_topic t = {kstr_c("t"), ps, 2};
    struct produce_resp resp = {&t, 1, 0};
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    uint64_t before = kw_error_codes_written();
    kmsg_encode_produce(&w, 7, &resp);
    iobuf_destroy(&b);
    return kw_error_codes_written() - before;
}

TEST(kafka_encoders_tally_nonzero_error_codes)
{
    ASSERT_EQ(errors_in_produce(0, 0), 0);
    ASSERT_EQ(errors_in_produce(0, 56), 1); /* one partition's KAFKA_STORAGE_ERROR */
    ASSERT_EQ(errors_in_produce(3, 56), 2);
    struct api_versions_resp av = {.error_code = 35};
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    uint64_t before = kw_error_codes_written();
    kmsg_encode_api_versions(&w, 0, &av);
    ASSERT_EQ(kw_error_codes_written() - before, 1);
    iobuf_destroy(&b);
}

TEST(kreq_stats_buckets_errors_and_latency)
{
    static struct kreq_stats s; /* 16 KiB: not on the stack */
    kreq_stats_init(&s);
    kreq_stats_for(&s, KAPI_PRODUCE)->requests++;
    kreq_stats_for(&s, -1)->requests++;
    kreq_stats_for(&s, 9999)->errors++;
    ASSERT_EQ(s.api[KAPI_PRODUCE].requests, 1);
    ASSERT_EQ(s.api[KREQ_STATS_UNKNOWN].requests, 1);
    ASSERT_EQ(s.api[KREQ_STATS_UNKNOWN].errors, 1);

    /* a response completed 30 ms after its frame arrived (a parked request) */
    int64_t recv = time_mono_ns();
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    kreq_stats_completed(&s, KAPI_FETCH, recv, false);
    const struct histogram *h = &s.api[KAPI_FETCH].latency;
    ASSERT_EQ(h->count, 1);
    ASSERT_CMP(h->sum, >=, 30000000);
    ASSERT_EQ(histogram_cumulative(h, 7), 0); /* le=0.01 */
    ASSERT_EQ(histogram_cumulative(h, h->n_bounds), 1);
    ASSERT_EQ(s.api[KAPI_FETCH].errors, 0);

    kreq_stats_completed(&s, KAPI_FETCH, time_mono_ns(), true);
    ASSERT_EQ(s.api[KAPI_FETCH].errors, 1);
    ASSERT_EQ(h->count, 2);
    /* no stamp (recv 0): counted as an error if it is one, but no latency */
    kreq_stats_completed(&s, KAPI_FETCH, 0, true);
    ASSERT_EQ(s.api[KAPI_FETCH].errors, 2);
    ASSERT_EQ(h->count, 2);
}
