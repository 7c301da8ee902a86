/* Metadata fetch: how a broker that is not a controller voter (an observer, KRaft's word) reads
 * the committed metadata log. The bodies of the RPC_METADATA_FETCH and RPC_METADATA_RESPONSE
 * frames (replication/rpc.h); pure codec, no I/O. The runtime (controller/runtime.h) serves fetches at
 * the leader and polls them in observer mode.
 *
 * Request body (big-endian):
 *   i64 from        the first log offset wanted (>= 0): the observer's applied index + 1
 *   i32 max_bytes   bound on the batches returned (1..CTL_MFETCH_BYTES_MAX)
 *   u16 n + n bytes the observer's cluster host (1..CTL_MFETCH_HOST_MAX, no NUL)
 *   i32 port        its cluster port (1..65535): where the answer can be sent (the leader adds
 *                   the observer as a transport peer: replication/transport.h)
 * Response body:
 *   i16 error       KERR_NONE, or KERR_NOT_CONTROLLER (this node does not lead: see leader)
 *   i32 leader      the leader as the answering node knows it (-1: unknown)
 *   i64 term        the answering node's term
 *   i64 commit      the leader's commit index (-1: nothing committed)
 *   i64 from        the request's from, echoed
 *   u32 n + n bytes whole record batches of the metadata log, the first at offset `from`, in
 *                   log order, every one ending at or below commit (0 bytes when none)
 *
 * Decoding takes network bytes: every length is checked against the bytes left and its bound,
 * the body must end exactly where the frame does; malformed input gives -ERR_CORRUPT. The
 * batches themselves are checked by the observer as it applies them (ctl_mfetch_next_batch). */
#ifndef SP_CONTROLLER_MFETCH_H
#define SP_CONTROLLER_MFETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/iobuf.h"
#include "replication/rpc.h"

#define CTL_MFETCH_HOST_MAX 255
#define CTL_MFETCH_RESP_FIXED (2 + 4 + 8 + 8 + 8 + 4)
/* Batch bytes of one response: a frame body (RPC_CONTROLLER_BODY_MAX) less the fixed fields.
 * A request asks for less (the first batch is sent whole even above max_bytes). */
#define CTL_MFETCH_BYTES_MAX (RPC_CONTROLLER_BODY_MAX - CTL_MFETCH_RESP_FIXED)

struct ctl_mfetch_req {
    int64_t from;
    int32_t max_bytes;
    char host[CTL_MFETCH_HOST_MAX + 1];
    int32_t port;
};

struct ctl_mfetch_resp {
    int16_t error;
    int32_t leader;
    int64_t term;
    int64_t commit;
    int64_t from;
    const uint8_t *data; /* decoded: points into the body */
    size_t len;
};

/* Appends the request body to out. req must be valid (CHECK: built by our own code). */
void ctl_mfetch_req_encode(const struct ctl_mfetch_req *req, struct iobuf *out);
/* Returns 0 and *out, or -ERR_CORRUPT. */
int ctl_mfetch_req_decode(const uint8_t *p, size_t len, struct ctl_mfetch_req *out);

/* Appends the response body to out (resp->len <= CTL_MFETCH_BYTES_MAX, CHECK). */
void ctl_mfetch_resp_encode(const struct ctl_mfetch_resp *resp, struct iobuf *out);
/* Returns 0 and *out (data points into p), or -ERR_CORRUPT. */
int ctl_mfetch_resp_decode(const uint8_t *p, size_t len, struct ctl_mfetch_resp *out);

/* Walks the batches of a response: at *pos in data[0, len), one batch whose framing holds
 * (header complete, batch length within what is left and at least a header, last offset >=
 * base offset). Returns 1 with its bytes [*batch, *batch + *batch_len), its base and last
 * offsets, and *pos advanced; 0 at the end (*pos == len); -ERR_CORRUPT for a cut or bad batch
 * (*pos unchanged). */
int ctl_mfetch_next_batch(const uint8_t *data, size_t len, size_t *pos, const uint8_t **batch,
                          size_t *batch_len, int64_t *base, int64_t *last);

#endif
