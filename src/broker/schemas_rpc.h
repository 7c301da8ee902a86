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

#endif
