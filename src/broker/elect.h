/* ElectLeaders (Kafka API 43, KIP-460) on partitions that are Raft groups.
 *
 * A Kafka controller elects a leader by writing it into the partition's state. Here every
 * partition is a Raft group that elects its own leaders, so:
 *   - a PREFERRED election is a Raft leadership transfer to the preferred replica (the first of
 *     the partition's replicas), started by the partition's current Raft leader, as
 *     preferred-leader balancing does (broker/cluster_configs.h, auto.leader.rebalance.enable):
 *     raft_transfer_leader brings the transferee up to date and has it campaign at once;
 *   - an UNCLEAN election cannot happen: a Raft leader needs the votes of a majority of the
 *     group's voters, and always holds the whole committed log. A partition with a leader is
 *     answered ELECTION_NOT_NEEDED (as Kafka answers it), one without
 *     ELIGIBLE_LEADERS_NOT_AVAILABLE with a message that says why: it gets a leader by itself
 *     as soon as a majority of its replicas is live.
 *
 * The request may reach any broker (the asker) and the partition's leader may be another one;
 * only a broker with a replica of the partition knows who leads it (the metadata image names
 * the replicas, it is not told of Raft elections). For each partition the asker:
 *   1. answers from its image: UNKNOWN_TOPIC_OR_PARTITION ("No such topic as t", "No such
 *      partition as t-9", as Kafka's controller says), and INVALID_REQUEST for a partition
 *      named twice;
 *   2. picks the broker to ask: the leader its own replica knows, else (no replica here, or a
 *      failed one) the preferred replica if live, else the first live replica; its replica
 *      knowing no leader, it asks again every ELECT_RETRY_MS (an election is under way);
 *   3. asks it: itself directly, another broker with an ELECT request on the cluster transport
 *      (broker/elect_rpc.h, RPC_BROKER_REQUEST frames, answered as soon as the leader side has
 *      a result); NOT_LEADER_OR_FOLLOWER naming a leader sends the question on to that leader,
 *      at most ELECT_HOPS_MAX times;
 *   4. given NONE while it has a replica itself, waits (within the deadline) until that replica
 *      sees the preferred replica lead, so a Metadata request to this broker right after the
 *      answer shows the new leader.
 * The response goes once every partition has a result, or at timeout_ms: a partition still
 * without one gets REQUEST_TIMED_OUT (the transfer may still complete), or
 * PREFERRED_LEADER_NOT_AVAILABLE if it had no leader the whole time.
 *
 * Leader side (the broker asked, for one partition):
 *   UNCLEAN    ELECTION_NOT_NEEDED if a leader is known here (whether or not this broker leads),
 *              else ELIGIBLE_LEADERS_NOT_AVAILABLE;
 *   PREFERRED  not leading: NOT_LEADER_OR_FOLLOWER with the leader known here (-1: none);
 *              leading, and the preferred replica: ELECTION_NOT_NEEDED;
 *              the preferred replica not live (registered, unfenced), not a voter of the group,
 *              or behind the commit index: PREFERRED_LEADER_NOT_AVAILABLE, saying which;
 *              else host_transfer to it and a wait, looked at every ELECT_POLL_MS: NONE once
 *              this replica sees the preferred replica lead; the transfer started again when it
 *              gave up (after an election timeout) while this broker still leads and the
 *              preferred replica is still ready; NOT_LEADER_OR_FOLLOWER when a third broker won;
 *              REQUEST_TIMED_OUT at the deadline.
 *
 * With topic_partitions null every partition of the image is asked (internal topics too), and,
 * as in Kafka, partitions answered ELECTION_NOT_NEEDED are left out of the response (and topics
 * left with none). Without ALTER on the cluster (authorizer on): CLUSTER_AUTHORIZATION_FAILED
 * at the top (v1+) and for every partition named (none when all were asked).
 *
 * Compatibility: the BROKER_* frames are new; a broker of an older release refuses one as a bad
 * frame and closes that connection (the asker reconnects, and its question times out).
 *
 * Everything runs on the reactor thread and never blocks it: the response slot is parked until
 * the result is known. */
#ifndef SP_BROKER_ELECT_H
#define SP_BROKER_ELECT_H

#include <stddef.h>
#include <stdint.h>

struct broker;

#define ELECT_POLL_MS 10   /* waits and items looked at again */
#define ELECT_RETRY_MS 100 /* asking again: no leader known, or the broker not reachable */
#define ELECT_HOPS_MAX 4   /* NOT_LEADER_OR_FOLLOWER answers followed per partition */
/* The broker asked has this much less time, so that its answer (a REQUEST_TIMED_OUT with its
 * reason) arrives before the deadline. */
#define ELECT_SLACK_MS 100
#define ELECT_TIMEOUT_MAX_MS 300000 /* timeout_ms is cut to this */
#define ELECT_ITEMS_MAX (1 << 20)   /* partitions of one request; beyond: INVALID_REQUEST */
#define ELECT_WAITS_MAX 65536       /* transfers awaited at once on the leader side */

/* A BROKER_REQUEST or BROKER_RESPONSE frame from broker `from` (cluster.c's controller frame
 * callback; body valid during the call only). Malformed requests are answered
 * INVALID_REQUEST; malformed answers, and answers nobody waits for any more, are dropped. */
void elect_deliver(struct broker *b, int32_t from, uint8_t type, uint64_t request_id,
                   const uint8_t *body, size_t len);

/* Answers every ElectLeaders request in flight as at its deadline and frees the state. Before
 * the transport closes (cluster_stop). No-op when nothing was ever asked. */
void elect_stop(struct broker *b);

#endif
