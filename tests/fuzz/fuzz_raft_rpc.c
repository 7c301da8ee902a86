/* libFuzzer target: inter-broker Raft RPC frames (replication/rpc.h) as they arrive from a peer.
 * The input is decoded twice: once as a whole frame (header and CRC checked), and once with the
 * CRC bypassed (first byte = frame type, rest = body), so the body decoders see arbitrary bytes
 * rather than only the rare inputs with a matching CRC. A decoded batch must re-encode, and the
 * re-encoded frame must decode to the same number of messages. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/iobuf.h"
#include "base/mem.h"
#include "controller/mfetch.h"
#include "controller/request.h"
#include "replication/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void reencode(const struct rpc_header *h, const struct rpc_batch *bt)
{
    struct rpc_builder b;
    rpc_builder_init(&b, h->type);
    size_t added = 0;
    for (size_t i = 0; i < bt->n_items; i++) {
        const struct rpc_item *it = &bt->items[i];
        if (it->group.topic_len < 1 || it->group.partition < 0 || !raft_conf_valid(&it->msg.conf))
            abort();
        if (h->type == RPC_HEARTBEATS && it->msg.term < 0)
            abort();
        rpc_builder_add(&b, &it->group, &it->msg);
        added++;
    }
    struct iobuf out;
    iobuf_init(&out);
    rpc_builder_finish(&b, h->from, h->to, &out);
    rpc_builder_destroy(&b);
    size_t len;
    uint8_t *f = iobuf_flatten(&out, &len);
    iobuf_destroy(&out);
    struct rpc_header h2;
    const uint8_t *body;
    size_t body_len;
    struct rpc_batch bt2;
    if (!f || len < 4 || rpc_decode_header(f + 4, len - 4, &h2, &body, &body_len) != 0 ||
        rpc_decode_batch(&h2, body, body_len, &bt2) != 0 || bt2.n_items != added ||
        bt2.n_entries != bt->n_entries)
        abort();
    rpc_batch_free(&bt2);
    mem_free(f);
}

/* A controller command that decodes encodes back to exactly its bytes (the form is canonical). */
/* A metadata fetch or answer that decodes encodes back to exactly its bytes; the answer's
 * batches are walked to their end or first error. */
static void mfetch_body(uint8_t type, const uint8_t *p, size_t len)
{
    struct iobuf b;
    iobuf_init(&b);
    if (type == RPC_METADATA_FETCH) {
        struct ctl_mfetch_req req;
        if (ctl_mfetch_req_decode(p, len, &req) != 0)
            goto out;
        ctl_mfetch_req_encode(&req, &b);
    } else {
        struct ctl_mfetch_resp resp;
        if (ctl_mfetch_resp_decode(p, len, &resp) != 0)
            goto out;
        size_t pos = 0, bl;
        const uint8_t *bt;
        int64_t base, last;
        while (ctl_mfetch_next_batch(resp.data, resp.len, &pos, &bt, &bl, &base, &last) == 1)
            if (bt + bl > resp.data + resp.len || last < base)
                abort();
        ctl_mfetch_resp_encode(&resp, &b);
    }
    size_t len2;
    uint8_t *p2 = iobuf_flatten(&b, &len2);
    if (len2 != len || memcmp(p2, p, len) != 0)
        abort();
    mem_free(p2);
out:
    iobuf_destroy(&b);
}

static void controller_body(uint8_t type, const uint8_t *p, size_t len)
{
    if (type == RPC_METADATA_FETCH || type == RPC_METADATA_RESPONSE)
        return mfetch_body(type, p, len);
    if (type == RPC_CONTROLLER_RESPONSE) {
        struct ctl_answer a;
        (void)ctl_answer_decode(p, len, &a);
        return;
    }
    struct ctl_request req;
    if (ctl_request_decode(p, len, &req) != 0)
        return;
    struct iobuf b;
    iobuf_init(&b);
    ctl_request_encode(&req, &b);
    size_t len2;
    uint8_t *p2 = iobuf_flatten(&b, &len2);
    iobuf_destroy(&b);
    if (len2 != len || memcmp(p2, p, len) != 0)
        abort();
    mem_free(p2);
    ctl_request_free(&req);
}

static void decode_body(const struct rpc_header *h, const uint8_t *body, size_t len)
{
    if (h->type == RPC_HELLO) {
        struct rpc_hello hello;
        (void)rpc_decode_hello(body, len, &hello);
    } else if (h->type == RPC_HELLO_OK) {
        const uint8_t *nonce, *proof;
        if (rpc_decode_hello_ok(body, len, &nonce, &proof) == 0 && (nonce == NULL) != (proof == NULL))
            abort();
    } else if (h->type == RPC_AUTH) {
        const uint8_t *proof;
        (void)rpc_decode_auth(body, len, &proof);
    } else if (h->type == RPC_QUORUM_DESCRIBE) {
        uint16_t v;
        const uint8_t *nonce;
        (void)rpc_decode_quorum_describe(body, len, &v, &nonce);
    } else if (h->type == RPC_QUORUM_INFO) {
        /* an answer that decodes encodes back to exactly its bytes (the form is canonical),
         * its proof (if any) included */
        struct rpc_quorum_info info;
        const uint8_t *proof;
        if (rpc_decode_quorum_info(body, len, &info, &proof) == 0) {
            struct iobuf b;
            iobuf_init(&b);
            rpc_encode_quorum_info(&b, h->from, h->to, &info, proof);
            size_t len2;
            uint8_t *f = iobuf_flatten(&b, &len2);
            iobuf_destroy(&b);
            if (len2 != 4 + RPC_HEADER_BYTES + len || memcmp(f + 4 + RPC_HEADER_BYTES, body, len))
                abort();
            mem_free(f);
        }
    } else if (h->type == RPC_ERROR) {
        struct rpc_error e;
        (void)rpc_decode_error(body, len, &e);
    } else if (rpc_is_controller_type(h->type)) {
        struct rpc_controller c;
        if (rpc_decode_controller(body, len, &c) == 0) {
            if (c.len > RPC_CONTROLLER_BODY_MAX || c.body + c.len != body + len)
                abort();
            controller_body(h->type, c.body, c.len);
        }
    } else if (h->type == RPC_RAFT || h->type == RPC_HEARTBEATS) {
        struct rpc_batch bt;
        if (rpc_decode_batch(h, body, len, &bt) == 0) {
            reencode(h, &bt);
            rpc_batch_free(&bt);
        } else if (bt.items || bt.n_items) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    if (rpc_decode_header(data, size, &h, &body, &body_len) == 0)
        decode_body(&h, body, body_len);
    if (size >= 1) {
        struct rpc_header raw = {data[0] % RPC_FRAME_TYPE_END_, 1, 2};
        decode_body(&raw, data + 1, size - 1);
    }
    return 0;
}
