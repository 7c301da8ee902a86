/* The text builders behind the admin listener: strbuf, UTF-8 checks, histograms, the
 * Prometheus text writer and the JSON writer. */
#include <math.h>

#include "base/check.h"
#include "base/histogram.h"
#include "base/json.h"
#include "base/prom.h"
#include "base/strbuf.h"
#include "test.h"

TEST(strbuf_printf_grows_and_stays_terminated)
{
    struct strbuf s;
    strbuf_init(&s);
    ASSERT_STREQ(strbuf_str(&s), "");
    char big[1000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    strbuf_printf(&s, "%s|%d", big, 42);
    ASSERT_EQ(s.len, 1002);
    ASSERT_EQ(s.p[s.len], '\0');
    ASSERT_STREQ(s.p + 999, "|42");
    strbuf_reset(&s);
    strbuf_putc(&s, 'a');
    strbuf_append(&s, "bc", 2);
    ASSERT_STREQ(strbuf_str(&s), "abc");
    strbuf_destroy(&s);
    ASSERT_EQ(s.len, 0);
}

TEST(utf8_seq_len_accepts_well_formed_only)
{
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"a", 1), 1);
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xc3\xa9", 2), 2);         /* é */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 3), 3);     /* € */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4); /* emoji */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\x80", 1), 0);             /* continuation */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xc0\xaf", 2), 0);         /* overlong / */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xe0\x80\xaf", 3), 0);     /* overlong */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xed\xa0\x80", 3), 0);     /* surrogate */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xe2\x82", 2), 0);         /* cut short */
    ASSERT_EQ(utf8_seq_len((const unsigned char *)"\xc3\x41", 2), 0);         /* bad tail */
}

static const uint64_t bounds3[] = {10, 20, 30};

TEST(histogram_buckets_are_upper_inclusive)
{
    struct histogram h;
    histogram_init(&h, bounds3, 3);
    uint64_t obs[] = {0, 10, 11, 20, 21, 30, 31, 1000};
    for (size_t i = 0; i < ARRAY_LEN(obs); i++)
        histogram_observe(&h, obs[i]);
    ASSERT_EQ(h.buckets[0], 2); /* 0, 10 */
    ASSERT_EQ(h.buckets[1], 2); /* 11, 20 */
    ASSERT_EQ(h.buckets[2], 2); /* 21, 30 */
    ASSERT_EQ(h.buckets[3], 2); /* 31, 1000: +Inf */
    ASSERT_EQ(histogram_cumulative(&h, 0), 2);
    ASSERT_EQ(histogram_cumulative(&h, 2), 6);
    ASSERT_EQ(histogram_cumulative(&h, 3), 8);
    ASSERT_EQ(h.count, 8);
    ASSERT_EQ(h.sum, 0 + 10 + 11 + 20 + 21 + 30 + 31 + 1000);

    struct histogram g;
    histogram_init(&g, bounds3, 3);
    histogram_observe(&g, 15);
    histogram_merge(&g, &h);
    ASSERT_EQ(g.buckets[1], 3);
    ASSERT_EQ(g.count, 9);
    ASSERT_EQ(g.sum, h.sum + 15);
}

TEST(histogram_latency_bounds_ascend_within_limit)
{
    struct histogram h;
    histogram_init(&h, histogram_latency_ns, histogram_latency_ns_count); /* CHECKs ascending */
    ASSERT_CMP(histogram_latency_ns_count, <=, HISTOGRAM_BOUNDS_MAX);
    ASSERT_EQ(histogram_latency_ns[0], 50000);
    ASSERT_EQ(histogram_latency_ns[histogram_latency_ns_count - 1], 60000000000LL);
    histogram_observe(&h, 3000000); /* 3 ms: in the le=0.005 bucket */
    ASSERT_EQ(h.buckets[6], 1);
    ASSERT_EQ(histogram_latency_ns[6], 5000000);
}

static const char *escaped_label(const char *v, size_t len, struct strbuf *s)
{
    strbuf_reset(s);
    prom_escape_label_value(s, v, len);
    return strbuf_str(s);
}

TEST(prom_label_values_are_escaped)
{
    struct strbuf s;
    strbuf_init(&s);
    ASSERT_STREQ(escaped_label("plain-topic.1", 13, &s), "plain-topic.1");
    ASSERT_STREQ(escaped_label("a\\b\"c\nd", 7, &s), "a\\\\b\\\"c\\nd");
    /* well-formed UTF-8 kept, ill-formed bytes become U+FFFD */
    ASSERT_STREQ(escaped_label("caf\xc3\xa9", 5, &s), "caf\xc3\xa9");
    ASSERT_STREQ(escaped_label("x\xffy\xc3", 4, &s), "x\xef\xbf\xbdy\xef\xbf\xbd");
    /* length-delimited: bytes after len are not read */
    ASSERT_STREQ(escaped_label("abcdef", 3, &s), "abc");
    strbuf_destroy(&s);
}

TEST(prom_family_and_samples_format)
{
    struct strbuf s;
    strbuf_init(&s);
    prom_family(&s, "sp_x_total", PROM_COUNTER, "Counts \\ things\nacross lines.");
    struct prom_label l[] = {prom_label("topic", "t\"1"), prom_label("partition", "0")};
    prom_sample_u64(&s, "sp_x_total", l, 2, 18446744073709551615ull);
    prom_sample_i64(&s, "sp_x_total", NULL, 0, -5);
    prom_sample_f64(&s, "sp_x_total", l, 1, 0.1);
    ASSERT_STREQ(strbuf_str(&s), "# HELP sp_x_total Counts \\\\ things\\nacross lines.\n"
                                 "# TYPE sp_x_total counter\n"
                                 "sp_x_total{topic=\"t\\\"1\",partition=\"0\"} "
                                 "18446744073709551615\n"
                                 "sp_x_total -5\n"
                                 "sp_x_total{topic=\"t\\\"1\"} 0.1\n");
    strbuf_destroy(&s);
}

TEST(prom_floats_use_the_formats_spelling)
{
    struct strbuf s;
    strbuf_init(&s);
    double v[] = {NAN, INFINITY, -INFINITY, 0.1, 30e9 / 1e9, 5e-05, 1.0 / 3.0, 0.0};
    for (size_t i = 0; i < ARRAY_LEN(v); i++) {
        prom_format_f64(&s, v[i]);
        strbuf_putc(&s, ' ');
    }
    ASSERT_STREQ(strbuf_str(&s), "NaN +Inf -Inf 0.1 30 5e-05 0.3333333333333333 0 ");
    strbuf_destroy(&s);
}

TEST(prom_histogram_is_cumulative_with_inf_sum_count)
{
    struct histogram h;
    histogram_init(&h, bounds3, 3);
    histogram_observe(&h, 5);
    histogram_observe(&h, 25);
    histogram_observe(&h, 25);
    histogram_observe(&h, 99);
    struct strbuf s;
    strbuf_init(&s);
    struct prom_label l = prom_label("api", "Produce");
    prom_histogram(&s, "sp_lat_seconds", &l, 1, &h, 1000.0);
    ASSERT_STREQ(strbuf_str(&s), "sp_lat_seconds_bucket{api=\"Produce\",le=\"0.01\"} 1\n"
                                 "sp_lat_seconds_bucket{api=\"Produce\",le=\"0.02\"} 1\n"
                                 "sp_lat_seconds_bucket{api=\"Produce\",le=\"0.03\"} 3\n"
                                 "sp_lat_seconds_bucket{api=\"Produce\",le=\"+Inf\"} 4\n"
                                 "sp_lat_seconds_sum{api=\"Produce\"} 0.154\n"
                                 "sp_lat_seconds_count{api=\"Produce\"} 4\n");
    strbuf_reset(&s);
    struct histogram empty;
    histogram_init(&empty, bounds3, 3);
    prom_histogram(&s, "sp_f", NULL, 0, &empty, 1.0);
    ASSERT_STREQ(strbuf_str(&s), "sp_f_bucket{le=\"10\"} 0\nsp_f_bucket{le=\"20\"} 0\n"
                                 "sp_f_bucket{le=\"30\"} 0\nsp_f_bucket{le=\"+Inf\"} 0\n"
                                 "sp_f_sum 0\nsp_f_count 0\n");
    strbuf_destroy(&s);
}

TEST(json_strings_are_escaped)
{
    struct strbuf s;
    strbuf_init(&s);
    json_escape(&s, "q\"b\\s/\n\r\t\b\f\x01\x1f\x7f", 14);
    ASSERT_STREQ(strbuf_str(&s), "\"q\\\"b\\\\s/\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\"");
    strbuf_reset(&s);
    json_escape(&s, "a\0b", 3); /* NUL inside: escaped, not a terminator */
    ASSERT_STREQ(strbuf_str(&s), "\"a\\u0000b\"");
    strbuf_reset(&s);
    json_escape(&s, "\xc3\xa9\xff\xe2\x82", 5);
    ASSERT_STREQ(strbuf_str(&s), "\"\xc3\xa9\\ufffd\\ufffd\\ufffd\"");
    strbuf_destroy(&s);
}

TEST(json_writer_places_commas_and_colons)
{
    struct strbuf s;
    strbuf_init(&s);
    struct json j;
    json_init(&j, &s);
    json_obj_begin(&j);
    json_key(&j, "topics");
    json_arr_begin(&j);
    for (int i = 0; i < 2; i++) {
        json_obj_begin(&j);
        json_key(&j, "name");
        json_cstr(&j, i ? "b" : "a");
        json_key(&j, "n");
        json_i64(&j, -i);
        json_key(&j, "u");
        json_u64(&j, 18446744073709551615ull);
        json_key(&j, "ok");
        json_bool(&j, i == 0);
        json_key(&j, "none");
        json_cstr(&j, NULL);
        json_key(&j, "f");
        json_f64(&j, i ? NAN : 2.5);
        json_key(&j, "empty");
        json_arr_begin(&j);
        json_arr_end(&j);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_key(&j, "o");
    json_obj_begin(&j);
    json_obj_end(&j);
    json_obj_end(&j);
    ASSERT(json_done(&j));
    ASSERT_STREQ(strbuf_str(&s),
                 "{\"topics\":[{\"name\":\"a\",\"n\":0,\"u\":18446744073709551615,\"ok\":true,"
                 "\"none\":null,\"f\":2.5,\"empty\":[]},{\"name\":\"b\",\"n\":-1,"
                 "\"u\":18446744073709551615,\"ok\":false,\"none\":null,\"f\":null,\"empty\":[]}],"
                 "\"o\":{}}");
    strbuf_destroy(&s);
}
