/* The inter-broker Raft RPC codec: frames that carry Raft messages between brokers. Pure: no I/O.
 *
 * A frame is what follows the 4-byte big-endian size prefix of net/conn (the size prefix is not
 * part of it; rpc_frame_finish writes it for the sender). Layout (all integers big-endian):
 *
 *   header (RPC_HEADER_BYTES = 16)
 *     u8  magic        RPC_MAGIC
 *     u8  version      RPC_VERSION (another value: -ERR_UNSUPPORTED, so HELLO can say why)
 *     u8  type         enum rpc_frame_type
 *     u8  flags        0
 *     i32 from         sender node id (>= 0)
 *     i32 to           receiver node id (>= 0)
 *     u32 crc          CRC-32C of header bytes [0, 12) followed by the body: every bit of the
 *                      frame but the crc itself is covered, so any single-bit flip is caught
 *   body, by type:
 *     HELLO       u16 protocol version, u16 n + n bytes cluster id (1..RPC_CLUSTER_ID_MAX),
 *                 then, from a node with the cluster secret, RPC_NONCE_LEN bytes nonce
 *     HELLO_OK    empty, or (an acceptor with the secret) RPC_NONCE_LEN bytes nonce +
 *                 RPC_PROOF_LEN bytes proof (security/peer_auth.h)
 *     AUTH        RPC_PROOF_LEN bytes proof: the dialer's, right after HELLO_OK
 *     QUORUM_DESCRIBE  u16 protocol version, then (with the secret) RPC_NONCE_LEN bytes nonce:
 *                 sent instead of a HELLO by a node that does not
 *                 know the cluster yet (controller.quorum.bootstrap.servers); answered with one
 *                 QUORUM_INFO (or an ERROR), then the connection closes
 *     QUORUM_INFO u16 n + n bytes cluster id (1..RPC_CLUSTER_ID_MAX), i32 leader (-1: unknown),
 *                 u8 n_voters (1..RPC_QUORUM_VOTERS_MAX), each: i32 id (>= 0),
 *                 u16 n + n bytes host (1..RPC_HOST_MAX), u16 port (1..65535); ids distinct;
 *                 then (with the secret) RPC_PROOF_LEN bytes proof of the bytes before it
 *     ERROR       i16 code (enum rpc_error_code), u16 n + n bytes text (0..RPC_ERROR_TEXT_MAX)
 *     RAFT        topic table, u32 n_msgs, n_msgs messages:
 *                   uvarint topic index, i32 partition,
 *                   u8 type (enum raft_msg_type), u8 flags (bit 0 reject, bit 1 transfer),
 *                   i64 term, index, log_term, commit, last,
 *                   APPEND only:  u32 n_entries (<= RAFT_MSG_ENTRIES_MAX), each entry
 *                                 i64 first, last, term, u8 kind, u32 len, len payload bytes
 *                   INSTALL only: u8 n + n bytes raft_conf encoding (raft/conf.h)
 *     HEARTBEATS  topic table, then two sections, heartbeats then heartbeat responses:
 *                   uvarint n, n times: uvarint topic index, uvarint partition,
 *                   uvarint term, zigzag varint commit, u8 flags (bit 0 reject)
 *     CONTROLLER_REQUEST, CONTROLLER_RESPONSE, METADATA_FETCH, METADATA_RESPONSE,
 *     BROKER_REQUEST, BROKER_RESPONSE
 *                 u64 request id, u32 n (<= RPC_CONTROLLER_BODY_MAX) + n bytes: an opaque
 *                 controller command or answer (controller/runtime.h owns its format),
 *                 a metadata fetch or its answer (controller/mfetch.h), or a request from
 *                 one broker to another, such as a partition leader, and its answer
 *                 (broker/elect_rpc.h owns that format); a response carries the id of the
 *                 request it answers. They travel as the controller's do (the same callback:
 *                 transport_set_controller_cb), so "controller frames" below means all six.
 *                 A node of a release before BROKER_* refuses them as a bad frame (it closes
 *                 the connection; the sender reconnects).
 *   topic table: uvarint n_topics, each u8 len (1..RPC_TOPIC_MAX) + len bytes. A message names
 *   its group by an index into it, so 10,000 heartbeats of one topic cost ~8 bytes each.
 *
 * A raft_msg's from/to are the frame's. Heartbeats carry term, commit and reject only; they
 * decode with index -1, log_term 0, last 0, as raft.c makes them.
 *
 * Decoding never trusts its input: every count and length is checked against the bytes left
 * before anything is allocated, every enum against its range, the CRC first. Malformed input
 * gives -ERR_CORRUPT. Decoded messages point into the frame (topic names, entry payloads):
 * valid as long as the frame bytes are. */
#ifndef SP_RAFT_RPC_H
#define SP_RAFT_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/iobuf.h"
#include "base/strmap.h"
#include "raft/raft.h"

#define RPC_MAGIC 0xA7
#define RPC_VERSION 1
#define RPC_HEADER_BYTES 16
#define RPC_TOPIC_MAX 249 /* Kafka's topic name limit */
#define RPC_CLUSTER_ID_MAX 255
#define RPC_ERROR_TEXT_MAX 1024
#define RPC_HOST_MAX 255
#define RPC_QUORUM_VOTERS_MAX RAFT_VOTERS_MAX
#define RPC_CONTROLLER_TOPIC "__cluster_metadata" /* the controller group: partition 0 */
#define RPC_CONTROLLER_BODY_MAX (2u << 20)         /* bytes of one controller command/answer */
#define RPC_NONCE_LEN 16                           /* = PEER_AUTH_NONCE */
#define RPC_PROOF_LEN 32                           /* = PEER_AUTH_PROOF */
#define RPC_QUORUM_INFO_MAX                                                                        \
    (2 + RPC_CLUSTER_ID_MAX + 4 + 1 + RPC_QUORUM_VOTERS_MAX * (4 + 2 + RPC_HOST_MAX + 2))

enum rpc_frame_type {
    RPC_HELLO = 1,
    RPC_HELLO_OK,
    RPC_ERROR,
    RPC_RAFT,
    RPC_HEARTBEATS,
    RPC_CONTROLLER_REQUEST,  /* a command forwarded to the controller leader */
    RPC_CONTROLLER_RESPONSE, /* its answer */
    RPC_METADATA_FETCH,      /* an observer asks for committed metadata (controller/mfetch.h) */
    RPC_METADATA_RESPONSE,   /* the controller leader's answer */
    RPC_QUORUM_DESCRIBE,     /* who are the voters? (a joining node, before any HELLO) */
    RPC_QUORUM_INFO,         /* the answer */
    RPC_AUTH,                /* the dialer's proof (security/peer_auth.h) */
    RPC_BROKER_REQUEST,      /* a broker asks another (broker/elect_rpc.h) */
    RPC_BROKER_RESPONSE,     /* its answer */
    RPC_FRAME_TYPE_END_,
};

enum rpc_error_code {
    RPC_ERR_VERSION = 1,    /* protocol version not spoken */
    RPC_ERR_CLUSTER = 2,    /* another cluster id */
    RPC_ERR_NODE = 3,       /* unknown node id, self id, or not the node addressed */
    RPC_ERR_PROTOCOL = 4,   /* a frame out of place or malformed */
    RPC_ERR_AUTH = 5,       /* no proof, or a wrong one, where the cluster secret is set */
};

/* A Raft group: topic + partition. The topic is not NUL-terminated. */
struct rpc_group {
    const char *topic;
    size_t topic_len; /* 1..RPC_TOPIC_MAX */
    int32_t partition; /* >= 0 */
};

struct rpc_header {
    uint8_t type; /* enum rpc_frame_type */
    int32_t from;
    int32_t to;
};

/* ---- encoding ------------------------------------------------------------------------------ */

/* Appends a complete small frame (size prefix, header, body) to out. */
/* nonce NULL: none (no cluster secret). */
void rpc_encode_hello(struct iobuf *out, int32_t from, int32_t to, const char *cluster_id,
                      const uint8_t *nonce);
/* nonce and proof: both NULL (no cluster secret) or both set. */
void rpc_encode_hello_ok(struct iobuf *out, int32_t from, int32_t to, const uint8_t *nonce,
                         const uint8_t *proof);
void rpc_encode_auth(struct iobuf *out, int32_t from, int32_t to,
                     const uint8_t proof[RPC_PROOF_LEN]);
void rpc_encode_error(struct iobuf *out, int32_t from, int32_t to, int16_t code,
                      const char *text);
/* The metadata quorum as a node knows it: what a joining node needs to take part. */
struct rpc_quorum_voter {
    int32_t id;
    char host[RPC_HOST_MAX + 1];
    int port;
};
struct rpc_quorum_info {
    char cluster_id[RPC_CLUSTER_ID_MAX + 1];
    int32_t leader; /* -1: unknown */
    size_t n_voters;
    struct rpc_quorum_voter voters[RPC_QUORUM_VOTERS_MAX];
};
void rpc_encode_quorum_describe(struct iobuf *out, int32_t from, const uint8_t *nonce);
/* The QUORUM_INFO body of info (without a proof) into buf (RPC_QUORUM_INFO_MAX bytes);
 * returns its length. info must be valid as rpc_decode_quorum_info checks it (CHECK: built by
 * our own code). */
size_t rpc_quorum_info_body(const struct rpc_quorum_info *info, uint8_t *buf);
/* proof NULL: none. */
void rpc_encode_quorum_info(struct iobuf *out, int32_t from, int32_t to,
                            const struct rpc_quorum_info *info, const uint8_t *proof);
/* type is RPC_CONTROLLER_REQUEST, RPC_CONTROLLER_RESPONSE, RPC_METADATA_FETCH,
 * RPC_METADATA_RESPONSE, RPC_BROKER_REQUEST or RPC_BROKER_RESPONSE (rpc_is_controller_type);
 * len <= RPC_CONTROLLER_BODY_MAX (CHECK: bodies are built by our own code). */
bool rpc_is_controller_type(uint8_t type);
void rpc_encode_controller(struct iobuf *out, uint8_t type, int32_t from, int32_t to,
                           uint64_t request_id, const uint8_t *body, size_t len);

/* Accumulates the messages of one RAFT or HEARTBEATS frame. */
struct rpc_builder {
    uint8_t type;           /* RPC_RAFT or RPC_HEARTBEATS */
    struct strmap topics;   /* name -> index + 1 */
    uint8_t *table;         /* encoded topic names, in index order (no count) */
    size_t table_len;
    size_t table_cap;
    size_t n_topics;
    uint8_t *body[2];       /* RAFT: body[0]; HEARTBEATS: heartbeats, responses */
    size_t len[2];
    size_t cap[2];
    uint32_t n[2];          /* messages in each section */
};

void rpc_builder_init(struct rpc_builder *b, uint8_t type);
void rpc_builder_destroy(struct rpc_builder *b);
bool rpc_builder_empty(const struct rpc_builder *b);
/* Messages in the builder. */
size_t rpc_builder_count(const struct rpc_builder *b);
/* Bytes the frame would take now, size prefix included. */
size_t rpc_builder_bytes(const struct rpc_builder *b);
/* Bytes that adding m would add at most (for caps, before adding). */
size_t rpc_msg_size(const struct rpc_group *g, const struct raft_msg *m);

/* Adds m for group g. RAFT builders take any message type; HEARTBEATS builders only HEARTBEAT
 * and HEARTBEAT_RESP. The group, the message and its entries must be valid (CHECK: they come
 * from our own core, not the network); payload bytes are copied. */
void rpc_builder_add(struct rpc_builder *b, const struct rpc_group *g, const struct raft_msg *m);

/* Appends the frame (size prefix included) to out and empties the builder for reuse. */
void rpc_builder_finish(struct rpc_builder *b, int32_t from, int32_t to, struct iobuf *out);

/* ---- decoding ------------------------------------------------------------------------------ */

/* Checks a frame's header and CRC. Returns 0 with *h and the body [*body, *body + *body_len),
 * -ERR_UNSUPPORTED (magic right, version not ours: *h is filled), or -ERR_CORRUPT. */
int rpc_decode_header(const uint8_t *frame, size_t len, struct rpc_header *h,
                      const uint8_t **body, size_t *body_len);

struct rpc_hello {
    uint16_t version;
    const char *cluster_id; /* points into the frame; not NUL-terminated */
    size_t cluster_id_len;
    const uint8_t *nonce;   /* RPC_NONCE_LEN bytes in the frame, or NULL */
};
int rpc_decode_hello(const uint8_t *body, size_t len, struct rpc_hello *out);
/* HELLO_OK: both NULL (empty) or both set (pointing into the frame). */
int rpc_decode_hello_ok(const uint8_t *body, size_t len, const uint8_t **nonce,
                        const uint8_t **proof);
int rpc_decode_auth(const uint8_t *body, size_t len, const uint8_t **proof);

struct rpc_error {
    int16_t code;
    const char *text; /* points into the frame */
    size_t text_len;
};
int rpc_decode_error(const uint8_t *body, size_t len, struct rpc_error *out);

/* The body of a QUORUM_DESCRIBE: its protocol version and nonce (NULL: none). */
int rpc_decode_quorum_describe(const uint8_t *body, size_t len, uint16_t *version,
                               const uint8_t **nonce);
/* The body of a QUORUM_INFO, every bound above checked (strings NUL-terminated copies); *proof
 * (if proof is not NULL) points at its proof in the frame, or is NULL when it has none: the
 * proof covers body[0, len - RPC_PROOF_LEN). */
int rpc_decode_quorum_info(const uint8_t *body, size_t len, struct rpc_quorum_info *out,
                           const uint8_t **proof);

/* The body of a controller frame (rpc_is_controller_type). */
struct rpc_controller {
    uint64_t request_id;
    const uint8_t *body; /* points into the frame */
    size_t len;          /* <= RPC_CONTROLLER_BODY_MAX */
};
int rpc_decode_controller(const uint8_t *body, size_t len, struct rpc_controller *out);

/* One decoded message of a RAFT or HEARTBEATS frame. */
struct rpc_item {
    struct rpc_group group;
    struct raft_msg msg; /* entries point into rpc_batch.entries, payloads into the frame */
};

struct rpc_batch {
    struct rpc_item *items;
    size_t n_items;
    struct raft_entry *entries; /* every APPEND's entries, back to back */
    size_t n_entries;
};

/* Decodes the body of a RAFT or HEARTBEATS frame whose header is h (the CRC already checked by
 * rpc_decode_header; the fuzzer calls this directly). Returns 0 and *out (release with
 * rpc_batch_free), or -ERR_CORRUPT (*out empty). Allocates at most O(len). */
int rpc_decode_batch(const struct rpc_header *h, const uint8_t *body, size_t len,
                     struct rpc_batch *out);
void rpc_batch_free(struct rpc_batch *b);

const char *rpc_frame_type_name(uint8_t type);

#endif
