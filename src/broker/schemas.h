/* The schema registry's service: Confluent's REST API (registry/rest.h) over the `_schemas`
 * topic, answered by every broker.
 *
 * Reads are answered from this broker's store (registry/store.h), which follows its replica of
 * `_schemas`-0: every committed record is applied in offset order. A broker without a replica
 * (more brokers than the topic's replication factor) follows the topic through its leader
 * instead (long polls, broker/schemas_rpc.h), so every broker answers reads, validates
 * produces and filters listings from its own store. Writes (registrations,
 * deletes, config and mode changes) are evaluated by the partition's Raft leader only, one at a
 * time against a store that has applied everything its log holds, appended as one batch, and
 * answered once committed; a broker that does not lead it forwards the request to the leader
 * over the cluster transport (RPC_BROKER_REQUEST, kind SCHEMAS_RPC_KIND) and relays the answer.
 * The topic (one partition,
 * compacted, schema.registry.topic.replication.factor replicas at most the brokers registered)
 * is created at the first write.
 *
 * Requests wait (queued, bounded by SCHEMAS_OPS_MAX) while there is no leader, while the topic
 * is being created, and while this broker's store is catching up after a start; each is
 * answered within SCHEMAS_TIMEOUT_MS (else 50002, or 50003 when a forward got no answer).
 *
 * All on the reactor thread. */
#ifndef SP_BROKER_SCHEMAS_H
#define SP_BROKER_SCHEMAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct broker;
struct reg_rest_req;
struct reg_result;

#define SCHEMAS_TOPIC "_schemas"
#define SCHEMAS_RPC_KIND 2 /* the first byte of the transport bodies (1 is broker/elect_rpc.h) */
#define SCHEMAS_FOLLOW_KIND 3 /* ... of a follow request or answer (broker/schemas_rpc.h) */
#define SCHEMAS_TIMEOUT_MS 8000
#define SCHEMAS_OPS_MAX 1024
#define SCHEMAS_BODY_MAX (1u << 20) /* bytes of a request or an answer body */

/* The answer: res is valid during the call only (the callee copies what it keeps). */
typedef void (*schemas_done_fn)(void *arg, const struct reg_result *res);

/* Handles one REST request (copied: req need not outlive the call). done is called exactly
 * once, possibly before this returns, and at the latest when the broker stops. */
void schemas_handle(struct broker *b, const struct reg_rest_req *req, schemas_done_fn done,
                    void *arg);

/* Produce-side validation (topic configs confluent.key.schema.validation /
 * confluent.value.schema.validation, or Redpanda's redpanda.*.schema.id.validation): every
 * record's key or value must be null or start with Confluent's framing (magic byte 0, a
 * big-endian schema id) naming an id that a live version of subject TOPIC-key / TOPIC-value
 * uses (TopicNameStrategy), as this broker's store knows it. batch[0, len) is a validated
 * batch. Returns true, or false with a message (for the produce response) in why. */
bool schemas_validate_batch(struct broker *b, const char *topic, const uint8_t *batch, size_t len,
                            bool keys, bool values, char *why, size_t whycap);

#endif
