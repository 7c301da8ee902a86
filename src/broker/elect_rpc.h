/* The ELECT request and answer between brokers (ElectLeaders, broker/elect.h): the bodies of the
 * RPC_BROKER_REQUEST and RPC_BROKER_RESPONSE frames of the cluster transport (replication/rpc.h),
 * whose request id pairs an answer with its request. Pure codec, no I/O.
 *
 * Request body (big-endian):
 *   u8  kind         ELECT_RPC_ELECT (the only kind so far)
 *   i8  type         Kafka's election type: 0 PREFERRED, 1 UNCLEAN
 *   i32 timeout_ms   how long the answering broker may wait for the leadership to move (>= 0)
 *   u16 n + n bytes  topic (1..ELECT_RPC_TOPIC_MAX, no NUL)
 *   i32 partition    (>= 0)
 * Answer body:
 *   u8  kind         ELECT_RPC_ELECT
 *   i16 error        a Kafka error code: the partition's result, or NOT_LEADER_OR_FOLLOWER when
 *                    the answering broker does not lead the partition (then see leader)
 *   i32 leader       the partition's leader as the answering broker knows it (-1: unknown)
 *   u16 n + n bytes  message (0..ELECT_RPC_MESSAGE_MAX, no NUL; empty: none)
 *
 * Decoding takes network bytes: every length is checked against the bytes left and its bound,
 * the body must end exactly where the frame does, the kind and type must be known; anything
 * else is -ERR_CORRUPT. */
#ifndef SP_BROKER_ELECT_RPC_H
#define SP_BROKER_ELECT_RPC_H

#include <stddef.h>
#include <stdint.h>

#define ELECT_RPC_ELECT 1
#define ELECT_RPC_TOPIC_MAX 249
#define ELECT_RPC_MESSAGE_MAX 255
#define ELECT_RPC_REQ_MAX (1 + 1 + 4 + 2 + ELECT_RPC_TOPIC_MAX + 4)
#define ELECT_RPC_ANSWER_MAX (1 + 2 + 4 + 2 + ELECT_RPC_MESSAGE_MAX)

struct elect_rpc_req {
    int8_t type; /* KAFKA_ELECTION_* */
    int32_t timeout_ms;
    char topic[ELECT_RPC_TOPIC_MAX + 1];
    int32_t partition;
};

struct elect_rpc_answer {
    int16_t error;
    int32_t leader;
    char message[ELECT_RPC_MESSAGE_MAX + 1];
};

/* The body of q into buf (ELECT_RPC_REQ_MAX bytes); returns its length. q must be valid as
 * the decoder checks it (CHECK: built by our own code). */
size_t elect_rpc_req_encode(const struct elect_rpc_req *q, uint8_t *buf);
/* Returns 0 and *out, or -ERR_CORRUPT. */
int elect_rpc_req_decode(const uint8_t *p, size_t len, struct elect_rpc_req *out);
/* The body of a into buf (ELECT_RPC_ANSWER_MAX bytes); a message longer than
 * ELECT_RPC_MESSAGE_MAX is cut to it. Returns its length. */
size_t elect_rpc_answer_encode(const struct elect_rpc_answer *a, uint8_t *buf);
/* Returns 0 and *out, or -ERR_CORRUPT. */
int elect_rpc_answer_decode(const uint8_t *p, size_t len, struct elect_rpc_answer *out);

#endif
