/* Quorum discovery: how a node started with controller.quorum.bootstrap.servers (KIP-853's
 * name) learns the cluster it joins. It dials one bootstrap address after another (cluster
 * listeners of running nodes), sends a QUORUM_DESCRIBE frame (replication/rpc.h) instead of a
 * HELLO and reads back one QUORUM_INFO: the cluster id its HELLOs must carry and the metadata
 * quorum's voters, which it then observes (controller/runtime.h "Observers").
 *
 * Blocking: it runs once at startup, before the reactor; every connect, write and read is
 * bounded by the deadline. No state survives the call. */
#ifndef SP_REPLICATION_DISCOVER_H
#define SP_REPLICATION_DISCOVER_H

#include <stddef.h>
#include <stdint.h>

#include "replication/rpc.h"

struct peer_secret;
struct dial_tls;

struct discover_server {
    const char *host;
    int port;
};

/* Asks servers[0..n) in turn, round after round, until one answers or timeout_ms has passed
 * (each attempt bounded by what is left, and by 2 s). self is this node's id (the frame's
 * `from`). With a secret (not NULL, len > 0) the QUORUM_DESCRIBE carries a nonce and only an
 * answer with a good proof of the secret is taken (security/peer_auth.h); a server that
 * answers without one fails that attempt, with the reason in err. With tls (cluster.ssl.*, not
 * NULL) each attempt is a TLS client session over the socket (net/tls.h, its context from
 * tls->ctx_get), its handshake bounded by the attempt's deadline like every read and write; a
 * server whose certificate the context does not accept, or one that is not TLS, fails the
 * attempt. Returns 0 and *out (valid as rpc_decode_quorum_info checks it), or -ERR_TIMEOUT with
 * the last failure in err ("127.0.0.1:9093: connection refused", "127.0.0.1:9093: TLS
 * handshake failed: certificate verify failed: ...", or the ERROR frame's text a server
 * sent). */
int discover_quorum(const struct discover_server *servers, size_t n, int32_t self,
                    const struct peer_secret *secret, const struct dial_tls *tls,
                    int64_t timeout_ms, struct rpc_quorum_info *out, char *err, size_t errcap);

#endif
