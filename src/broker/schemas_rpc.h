/* The schema registry's forwarded requests between brokers (broker/schemas.h): the bodies of
 * RPC_BROKER_REQUEST and RPC_BROKER_RESPONSE frames whose first byte is SCHEMAS_RPC_KIND, and
 * an owned copy of a REST request. Pure codec, no I/O.
 *
 * Request body (Kafka wire primitives, kafka/wire.h):
 *   i8 kind | string method | i8 n_segs, n strings | i8 n_params, n (string key, string value)
 *   | bytes body
 * Answer body:
 *   i8 kind | i16 HTTP status | i8 raw (1: the body is a raw schema, text/plain for Protobuf)
 *   | bytes body
 * Follow request (SCHEMAS_FOLLOW_KIND; a broker without a replica of `_schemas` asks the
 * leader for the records it lacks):
 *   i8 kind | i64 from (the next offset the asker's store needs) | i32 wait_ms (how long the
 *   leader may hold the request while it has nothing from `from` on; 0: answer at once)
 * Follow answer:
 *   i8 kind | i16 error (SCHEMAS_FOLLOW_OK, or SCHEMAS_FOLLOW_NOT_LEADER) | i32 leader (the
 *   Raft leader the answering broker knows, -1 if none) | i64 from (echoed) | i64 high
 *   watermark | i64 next (the offset after the batches) | bytes batches (whole record
 *   batches as the log holds them, from the one holding `from`; null with an error)
 * A forwarded request's answer with status 421 ("not the leader": asked again) has, as its
 * body, the decimal id of the Raft leader the answering broker knows, or nothing.
 * Decoding takes network bytes: every count and length is checked against its bound
 * (REG_SEGS_MAX, REG_PARAMS_MAX, SCHEMAS_RPC_STR_MAX, SCHEMAS_BODY_MAX) and the bytes left, no
 * string may hold a NUL, and the body must end where the frame does; else -ERR_CORRUPT. */
#ifndef SP_BROKER_SCHEMAS_RPC_H
#define SP_BROKER_SCHEMAS_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/iobuf.h"
#include "registry/rest.h"

#define SCHEMAS_RPC_STR_MAX 4096
#define SCHEMAS_FOLLOW_OK 0
#define SCHEMAS_FOLLOW_NOT_LEADER 1
#define SCHEMAS_FOLLOW_WAIT_MAX 10000   /* ms */
#define SCHEMAS_FOLLOW_BYTES (1u << 20) /* batches per answer, unless the first is larger */

/* A request that owns its strings (one block). */
struct schemas_req {
    struct reg_rest_req req;
    char *blob;
};

/* Deep copy of src into *dst (release with schemas_req_free). */
void schemas_req_copy(struct schemas_req *dst, const struct reg_rest_req *src);
void schemas_req_free(struct schemas_req *r);

void schemas_rpc_req_encode(struct iobuf *out, const struct reg_rest_req *req);
/* 0 with *out (release with schemas_req_free), or -ERR_CORRUPT. */
int schemas_rpc_req_decode(const uint8_t *p, size_t len, struct schemas_req *out);

void schemas_rpc_answer_encode(struct iobuf *out, int status, bool raw, const char *body,
                               size_t len);
/* 0 with the fields (body points into p), or -ERR_CORRUPT. */
int schemas_rpc_answer_decode(const uint8_t *p, size_t len, int *status, bool *raw,
                              const char **body, size_t *body_len);

struct schemas_follow_req {
    int64_t from;
    int32_t wait_ms;
};
struct schemas_follow_answer {
    int16_t error;
    int32_t leader;
    int64_t from, high_watermark, next;
    const uint8_t *batches; /* into the decoded frame */
    size_t batches_len;
};

void schemas_rpc_follow_req_encode(struct iobuf *out, const struct schemas_follow_req *q);
/* 0, or -ERR_CORRUPT (from < 0, wait_ms outside 0..SCHEMAS_FOLLOW_WAIT_MAX, trailing bytes). */
int schemas_rpc_follow_req_decode(const uint8_t *p, size_t len, struct schemas_follow_req *q);
void schemas_rpc_follow_answer_encode(struct iobuf *out, const struct schemas_follow_answer *a);
/* 0, or -ERR_CORRUPT: an unknown error, a leader below -1, offsets that are negative or out of
 * order (from <= next, next <= high watermark unless no batch came), batches with an error,
 * trailing bytes. */
int schemas_rpc_follow_answer_decode(const uint8_t *p, size_t len, struct schemas_follow_answer *a);

#endif
