/* Broker observability: per-API request accounting on the request path, and the text views of
 * the broker's state that the admin listener serves (server/admin.c).
 *
 * Request accounting (the hot path: counter increments and one histogram bucket per request,
 * nothing that grows with partitions or groups):
 *   - a request is counted when its frame is decoded (kreq_stats_received), under its API key,
 *     or under "unknown" when the key is not one we implement or the header does not decode;
 *   - its latency runs from the frame's arrival (kreq_header.recv_ns, stamped in on_frame) to
 *     the completion of its response (response_send), so a parked acks=all produce or a
 *     long-polling fetch is measured with its wait; every copy of the header carries the stamp
 *     and the kreq_stats to count into, so responses completed later need no other link;
 *   - an error is a response carrying a non-zero error code anywhere (top-level, per topic or
 *     per partition: counted as the encoders write them, see kw_error_code), or a
 *     request answered by closing the connection (malformed, unsupported version, unknown key).
 *   Requests that get no response (Produce acks=0) are counted, but have no latency.
 *
 * Scrape-time views (O(topics + partitions + groups + committed offsets), on the reactor
 * thread, only when asked): the Prometheus text of every metric (broker_metrics_write), the
 * JSON of topics and groups (broker_topics_json, broker_groups_json) and the health verdict
 * (broker_health). Output is sorted (topics by name, partitions by index, groups by id) so
 * that successive scrapes line up.
 *
 * All on the reactor thread. */
#ifndef SP_BROKER_METRICS_H
#define SP_BROKER_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/histogram.h"
#include "base/strbuf.h"
#include "kafka/api.h"

struct broker;

/* Index of the bucket for API keys we do not implement (and undecodable headers). */
#define KREQ_STATS_UNKNOWN (KAFKA_API_KEY_MAX + 1)

struct kreq_api_stats {
    uint64_t requests;        /* frames received for this API */
    uint64_t errors;          /* responses with an error code, or closes */
    struct histogram latency; /* ns, frame received -> response completed */
};

struct kreq_stats {
    struct kreq_api_stats api[KREQ_STATS_UNKNOWN + 1]; /* by API key; [UNKNOWN]: the rest */
};

void kreq_stats_init(struct kreq_stats *s);

/* The stats of API key `key`, which the caller knows to be implemented; any other value (-1
 * for an unknown key or an undecodable header) selects the "unknown" bucket. */
static inline struct kreq_api_stats *kreq_stats_for(struct kreq_stats *s, int key)
{
    return &s->api[key >= 0 && key <= KAFKA_API_KEY_MAX ? key : KREQ_STATS_UNKNOWN];
}

/* A response for a request received at recv_ns (monotonic) is complete. */
void kreq_stats_completed(struct kreq_stats *s, int16_t key, int64_t recv_ns, bool error);

/* Appends every broker metric in the Prometheus text format. */
void broker_metrics_write(struct broker *b, struct strbuf *out);

/* Appends {"topics":[...]}: every topic with its partitions (offsets, HW, size, segments,
 * leader epoch, fenced) and its config overrides. */
void broker_topics_json(struct broker *b, struct strbuf *out);
/* Appends {"groups":[...]}: every group with its state, protocol, members (with their
 * assignments when the consumer protocol is used) and committed offsets with lag. */
void broker_groups_json(struct broker *b, struct strbuf *out);

/* True when the broker serves normally. Otherwise false, with one line per reason appended to
 * why (stopping; partitions fenced after a write or fsync error). */
bool broker_health(struct broker *b, struct strbuf *why);

#endif
