/* The ELECT request and answer between brokers (broker/elect_rpc.h): round trips, and every
 * malformed body refused. */
#include <string.h>

#include "base/endian.h"
#include "base/errors.h"
#include "broker/elect_rpc.h"
#include "kafka/errors.h"
#include "kafka/msg.h"
#include "test.h"

TEST(elect_rpc_request_roundtrip_and_layout)
{
    struct elect_rpc_req q = {.type = KAFKA_ELECTION_UNCLEAN, .timeout_ms = 30000, .partition = 7};
    strcpy(q.topic, "orders");
    uint8_t buf[ELECT_RPC_REQ_MAX];
    size_t n = elect_rpc_req_encode(&q, buf);
    static const uint8_t want[] = {1,   1,   0,   0,   0x75, 0x30, 0, 6, 'o',
                                   'r', 'd', 'e', 'r', 's',  0,    0, 0, 7};
    ASSERT_EQ(n, sizeof(want));
    ASSERT_MEMEQ(buf, want, n);
    struct elect_rpc_req got;
    ASSERT_EQ(elect_rpc_req_decode(buf, n, &got), 0);
    ASSERT_EQ(got.type, KAFKA_ELECTION_UNCLEAN);
    ASSERT_EQ(got.timeout_ms, 30000);
    ASSERT_STREQ(got.topic, "orders");
    ASSERT_EQ(got.partition, 7);

    /* the longest topic fits the bound */
    memset(q.topic, 'x', ELECT_RPC_TOPIC_MAX);
    q.topic[ELECT_RPC_TOPIC_MAX] = '\0';
    n = elect_rpc_req_encode(&q, buf);
    ASSERT_EQ(n, (size_t)ELECT_RPC_REQ_MAX);
    ASSERT_EQ(elect_rpc_req_decode(buf, n, &got), 0);
    ASSERT_EQ(strlen(got.topic), (size_t)ELECT_RPC_TOPIC_MAX);
}

TEST(elect_rpc_request_refuses_malformed_bodies)
{
    struct elect_rpc_req q = {.type = KAFKA_ELECTION_PREFERRED, .timeout_ms = 5, .partition = 0};
    strcpy(q.topic, "t");
    uint8_t buf[ELECT_RPC_REQ_MAX + 1];
    size_t n = elect_rpc_req_encode(&q, buf);
    struct elect_rpc_req got;
    for (size_t k = 0; k < n; k++) /* every strict prefix */
        ASSERT_EQ(elect_rpc_req_decode(buf, k, &got), -ERR_CORRUPT);
    buf[n] = 0; /* a trailing byte */
    ASSERT_EQ(elect_rpc_req_decode(buf, n + 1, &got), -ERR_CORRUPT);
    uint8_t bad[ELECT_RPC_REQ_MAX];
    memcpy(bad, buf, n);
    bad[0] = 2; /* an unknown kind */
    ASSERT_EQ(elect_rpc_req_decode(bad, n, &got), -ERR_CORRUPT);
    memcpy(bad, buf, n);
    bad[1] = 2; /* an unknown election type */
    ASSERT_EQ(elect_rpc_req_decode(bad, n, &got), -ERR_CORRUPT);
    memcpy(bad, buf, n);
    bad[2] = 0x80; /* a negative timeout */
    ASSERT_EQ(elect_rpc_req_decode(bad, n, &got), -ERR_CORRUPT);
    memcpy(bad, buf, n);
    bad[8] = '\0'; /* a NUL in the topic */
    ASSERT_EQ(elect_rpc_req_decode(bad, n, &got), -ERR_CORRUPT);
    memcpy(bad, buf, n);
    bad[n - 4] = 0xff; /* a negative partition */
    ASSERT_EQ(elect_rpc_req_decode(bad, n, &got), -ERR_CORRUPT);
    memcpy(bad, buf, n);
    bad[7] = 0; /* an empty topic (the rest then runs over) */
    ASSERT_EQ(elect_rpc_req_decode(bad, n, &got), -ERR_CORRUPT);
    memcpy(bad, buf, n);
    be_put16(bad + 6, ELECT_RPC_TOPIC_MAX + 1); /* longer than any topic */
    ASSERT_EQ(elect_rpc_req_decode(bad, n, &got), -ERR_CORRUPT);
}

TEST(elect_rpc_answer_roundtrip_and_refusals)
{
    struct elect_rpc_answer a = {.error = KERR_NOT_LEADER_OR_FOLLOWER, .leader = 3};
    strcpy(a.message, "Broker 2 does not lead t-0");
    uint8_t buf[ELECT_RPC_ANSWER_MAX + 1];
    size_t n = elect_rpc_answer_encode(&a, buf);
    ASSERT_EQ(n, 1 + 2 + 4 + 2 + strlen(a.message));
    struct elect_rpc_answer got;
    ASSERT_EQ(elect_rpc_answer_decode(buf, n, &got), 0);
    ASSERT_EQ(got.error, KERR_NOT_LEADER_OR_FOLLOWER);
    ASSERT_EQ(got.leader, 3);
    ASSERT_STREQ(got.message, a.message);
    for (size_t k = 0; k < n; k++)
        ASSERT_EQ(elect_rpc_answer_decode(buf, k, &got), -ERR_CORRUPT);
    buf[n] = 'x';
    ASSERT_EQ(elect_rpc_answer_decode(buf, n + 1, &got), -ERR_CORRUPT);
    buf[3] = 0xff; /* leader below -1 */
    ASSERT_EQ(elect_rpc_answer_decode(buf, n, &got), -ERR_CORRUPT);

    /* no message, no leader */
    a = (struct elect_rpc_answer){.error = KERR_NONE, .leader = -1};
    n = elect_rpc_answer_encode(&a, buf);
    ASSERT_EQ(n, (size_t)9);
    ASSERT_EQ(elect_rpc_answer_decode(buf, n, &got), 0);
    ASSERT_EQ(got.leader, -1);
    ASSERT_STREQ(got.message, "");
    /* a full-length message survives */
    memset(a.message, 'm', ELECT_RPC_MESSAGE_MAX);
    a.message[ELECT_RPC_MESSAGE_MAX] = '\0';
    n = elect_rpc_answer_encode(&a, buf);
    ASSERT_EQ(n, (size_t)ELECT_RPC_ANSWER_MAX);
    ASSERT_EQ(elect_rpc_answer_decode(buf, n, &got), 0);
    ASSERT_EQ(strlen(got.message), (size_t)ELECT_RPC_MESSAGE_MAX);
}
