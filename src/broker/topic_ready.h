/* Waiting for a topic's new partitions to be served, before CreateTopics and CreatePartitions
 * answer.
 *
 * The controller commits a topic (or its new partitions) before any broker has made their
 * replicas and before their Raft groups have elected anyone: a client that produces right after
 * the answer used to find partitions without a leader (Metadata leader -1), and librdkafka then
 * holds their records until a later metadata refresh, hundreds of milliseconds (the worker's
 * first retries waited ~750 ms more than their schedule). As Redpanda does, the answer waits
 * until this broker's Metadata names a leader for every new partition, bounded by the request's
 * timeout_ms and by TOPIC_READY_MAX_MS; the answer is success either way (the topic exists).
 *
 * A partition is ready here when the broker's image has it, this broker has made its replica if
 * it is one of the replicas (cluster.c reconcile), and cluster_partition_leader names a leader
 * (the Raft leader a local replica knows, else the image's preferred replica).
 *
 * Everything runs on the reactor thread; a wait is looked at every TOPIC_READY_POLL_MS. */
#ifndef SP_BROKER_TOPIC_READY_H
#define SP_BROKER_TOPIC_READY_H

#include <stdint.h>

struct broker;

#define TOPIC_READY_MAX_MS 5000 /* longest wait, whatever the request's timeout_ms */
#define TOPIC_READY_POLL_MS 5

typedef void (*topic_ready_fn)(void *data);

/* Calls done(data) once partitions [first, end) of topic are ready here, or max_ms (capped at
 * TOPIC_READY_MAX_MS) from now; at once (before returning) when they already are or max_ms <= 0.
 * topic is copied. */
void topic_ready_wait(struct broker *b, const char *topic, int32_t first, int32_t end,
                      int64_t max_ms, topic_ready_fn done, void *data);

/* Calls every waiting done now (the broker stops) and frees the state. */
void topic_ready_stop(struct broker *b);

#endif
