/* The inter-broker Raft transport: carries raft_msg between brokers in replication/rpc.h frames.
 *
 * Each broker runs one transport on its reactor. It listens on the cluster address for its
 * peers' inbound connections and keeps one outbound connection per peer (net/dial.h), used only
 * for sending. So between two brokers A and B there are two TCP connections: A->B carries A's
 * messages, B->A carries B's.
 *
 * Handshake. An outbound connection starts with HELLO (cluster id, protocol version, from =
 * this node, to = the peer). The acceptor answers HELLO_OK, or an ERROR frame and closes, when
 * the cluster id differs, the sender is not a configured peer (unless accept_any_node: then any
 * node id but its own is accepted, the cluster id still checked) or is itself, the frame is not
 * addressed to it, or the version is not spoken (each refusal logged: raft_peer_refused). The
 * sender sends nothing else until HELLO_OK. Inbound frames after the handshake must come from
 * the node that said HELLO and be RAFT or HEARTBEATS frames that decode; anything else closes
 * the connection (logged: raft_inbound_bad_frame). Other connections are unaffected.
 *
 * Authentication (security/peer_auth.h). With a cluster secret both sides prove they hold it:
 * the HELLO carries the dialer's nonce, HELLO_OK the acceptor's nonce and proof, and the dialer
 * sends AUTH with its proof before anything else; the acceptor takes no other frame before a
 * good AUTH, the dialer no HELLO_OK without a good proof (both refusals: RPC_ERR_AUTH, logged
 * raft_peer_refused / raft_peer_unreachable). A QUORUM_DESCRIBE must carry a nonce and its
 * QUORUM_INFO carries a proof. Without a secret a HELLO with a nonce is accepted as one without,
 * and a peer that has one refuses us: both sides need the same secret (fail closed).
 *
 * TLS (cluster.ssl.*). With tls_server and tls_client set, the cluster listener is a TLS
 * endpoint (net/conn.h struct listener_tls) whose contexts demand a client certificate, and every
 * dial is a TLS client (net/dial.h struct dial_tls) whose context verifies the server's: both
 * chain to the cluster's CA (what the contexts check is security/tls_context.h's business; the
 * transport only moves bytes through them). The inbound handshake must finish within
 * handshake_timeout_ms of the accept, the outbound one within the same timer as the HELLO_OK.
 * A peer that fails the handshake (plaintext, another CA, no certificate, silence) is closed
 * before any frame is read from it, logged rate-limited by net/conn (tls_handshake_failed
 * listener=cluster) and counted (tls_failures_in); an outbound failure is logged as any failed
 * attempt (raft_peer_unreachable, with the TLS reason) and counted (tls_failures_out). The
 * HELLO and the secret's proofs then run inside the session, unchanged.
 *
 * Reconnects. A failed attempt (refused, timed out, handshake refused) or a dropped connection
 * schedules the next attempt after an exponential backoff with jitter: from backoff_min_ms
 * doubling to backoff_max_ms, each delay drawn from [delay/2, delay]; a successful handshake
 * resets it. Log lines per state change only: raft_peer_connected, raft_peer_disconnected,
 * raft_peer_unreachable (the first failure while down), never one per attempt.
 *
 * Sending. transport_send queues a message for a peer (copying its entry payloads), and
 * transport_flush, called by the owner once per reactor iteration or tick, sends what was
 * queued: per peer at most one HEARTBEATS frame (every heartbeat and heartbeat response queued
 * since the last flush, all groups together) and as few RAFT frames as the frame cap allows.
 * Raft tolerates lost messages, so the transport never blocks and never buffers without bound:
 * a message for a peer that is not connected, one beyond the peer's queue cap
 * (queue_max_bytes: queued messages + bytes not yet taken by the socket), one larger than a
 * frame may be, and those queued when a connection drops are dropped and counted.
 *
 * Receiving. Each message of a received frame is handed to on_msg(from, group, msg, data) in
 * frame order; the group's topic and the entries' payloads point into the received frame and
 * are valid during the call only (raft_step's contract needs them until raft_advance: the owner
 * copies them or steps and advances within the callback).
 *
 * Controller frames. transport_send_controller sends one CONTROLLER_REQUEST or
 * CONTROLLER_RESPONSE frame (replication/rpc.h) to a peer at once, on the same outbound connection
 * (after the RAFT/HEARTBEATS frames already flushed; not reordered with other controller frames
 * to that peer). It is dropped like a Raft message when the peer is not connected or its queue
 * is full: the sender (controller/runtime.h) times requests out. Received ones go to the
 * on_controller callback set by transport_set_controller_cb; without one they are dropped
 * (counted in ctl_dropped), which is not a protocol error.
 *
 * Peers at run time. transport_add_peer adds a peer (or changes a peer's address) after
 * transport_new: a broker learns the other brokers' cluster addresses from the metadata image
 * (voters are known from the config, the other brokers from their registration). A node that
 * is not a peer yet can still be heard when accept_any_node is set (its frames reach the
 * callbacks; nothing can be sent to it until it is added). Peers are never removed.
 *
 * All on the reactor thread. Does not touch the broker: the owner maps groups to cores. */
#ifndef SP_RAFT_TRANSPORT_H
#define SP_RAFT_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/conn.h"
#include "net/dial.h"
#include "net/reactor.h"
#include "raft/raft.h"
#include "replication/rpc.h"
#include "security/peer_auth.h"

struct transport;

struct transport_peer_config {
    int32_t id;       /* node id, >= 0 */
    const char *host; /* address to dial (copied) */
    int port;
};

/* A field left at 0 takes the default in its comment. */
struct transport_config {
    int32_t self_id;                           /* this node, >= 0 */
    const char *cluster_id;                    /* 1..RPC_CLUSTER_ID_MAX bytes (copied) */
    const char *listen_host;                   /* cluster listener address: "0.0.0.0" */
    int listen_port;                           /* 0: an ephemeral port (tests) */
    const struct transport_peer_config *peers; /* the other voters; an entry for self_id is
                                                  skipped; ids unique */
    size_t n_peers;
    size_t queue_max_bytes;       /* per peer: 16 MiB */
    size_t max_frame_bytes;       /* frames sent and received: 100 MiB (conn's default) */
    int64_t backoff_min_ms;       /* first reconnect delay: 50 */
    int64_t backoff_max_ms;       /* cap: 2000 */
    int64_t handshake_timeout_ms; /* connect (+ TLS) + HELLO_OK, and an inbound TLS
                                     handshake: 2000 */
    uint64_t seed;                /* jitter PRNG */
    bool accept_any_node;         /* inbound HELLO from any node id (see above) */
    const struct peer_secret *secret; /* cluster.secret.file (copied); NULL or len 0: none */
    /* cluster.ssl.*: TLS on the listener (its handshake_timeout_ms is replaced by the one
     * above) and on the dials; both or neither, borrowed: they must outlive the transport */
    const struct listener_tls *tls_server;
    const struct dial_tls *tls_client;
};

#define TRANSPORT_PEERS_MAX 1024                /* transport_add_peer's bound */
#define TRANSPORT_ANY_NODE_CONNECTIONS_MAX 4096 /* inbound connections with accept_any_node */

/* A received message: from = the sending node. */
typedef void (*transport_msg_cb)(int32_t from, const struct rpc_group *g,
                                 const struct raft_msg *m, void *data);

/* Opens the listener and starts connecting to every peer. Returns 0 and *out (release with
 * transport_free), -ERR_INVALID (bad config, or only one of tls_server and tls_client), or
 * -errno from the listener (EADDRINUSE...). */
int transport_new(struct reactor *r, const struct transport_config *cfg, transport_msg_cb on_msg,
                  void *data, struct transport **out);
/* Closes every connection; no callback runs afterwards. Call before reactor_free, and not from
 * inside on_msg. */
void transport_free(struct transport *t);

int transport_port(const struct transport *t); /* the bound cluster port */

/* Adds peer id at host:port and starts connecting to it, or, for a known peer, takes the new
 * address for its next connection attempt (a live connection is kept). host is copied. Returns
 * 1 (added), 0 (known: same or updated address), -ERR_INVALID (id < 0, this node, bad host or
 * port) or -ERR_LIMIT (TRANSPORT_PEERS_MAX peers). */
int transport_add_peer(struct transport *t, int32_t id, const char *host, int port);
bool transport_has_peer(const struct transport *t, int32_t id);

/* Queues m (m->to is ignored: the frame says `to = peer`) for group g to peer. Entry payloads
 * are copied. Returns 0, -ERR_NOT_FOUND (not a peer), or, the message dropped and counted:
 * -ERR_CLOSED (peer not connected), -ERR_LIMIT (queue cap), -ERR_TOO_LARGE (above a frame). */
int transport_send(struct transport *t, int32_t peer, const struct rpc_group *g,
                   const struct raft_msg *m);

/* A received controller frame: rpc_is_controller_type(type), body valid during the call only. */
typedef void (*transport_ctl_cb)(int32_t from, uint8_t type, uint64_t request_id,
                                 const uint8_t *body, size_t len, void *data);
/* Sets (or with NULL removes) the controller frame callback. */
void transport_set_controller_cb(struct transport *t, transport_ctl_cb cb, void *data);
/* Fills *out with the metadata quorum as this node knows it and returns 0, or returns a
 * negative code (not known yet). Runs on the reactor thread. */
typedef int (*transport_describe_cb)(struct rpc_quorum_info *out, void *data);
/* Sets (or with NULL removes) the answer to a QUORUM_DESCRIBE frame, which a joining node sends
 * instead of a HELLO (controller.quorum.bootstrap.servers): the connection gets one QUORUM_INFO,
 * or an ERROR when cb is NULL or fails, and is closed. */
void transport_set_describe_cb(struct transport *t, transport_describe_cb cb, void *data);
/* Sends a controller frame now (see above). type as in rpc_encode_controller; len <=
 * RPC_CONTROLLER_BODY_MAX. Returns 0, -ERR_NOT_FOUND (not a peer), -ERR_CLOSED (not
 * connected), -ERR_LIMIT (queue cap) or -ERR_TOO_LARGE (above a frame): dropped and counted. */
int transport_send_controller(struct transport *t, int32_t peer, uint8_t type,
                              uint64_t request_id, const uint8_t *body, size_t len);

/* Sends everything queued (see above). */
void transport_flush(struct transport *t);

struct transport_peer_stats {
    bool connected;            /* outbound connection up (HELLO_OK received) */
    uint64_t frames_sent;      /* RAFT/HEARTBEATS frames */
    uint64_t bytes_sent;       /* their bytes, size prefixes included */
    uint64_t msgs_sent;        /* messages in them */
    uint64_t frames_received;  /* from this peer, on inbound connections */
    uint64_t bytes_received;
    uint64_t msgs_received;
    uint64_t drops;            /* messages dropped (see above) */
    uint64_t connects;         /* successful handshakes */
    uint64_t reconnects;       /* ... after the first */
    uint64_t connect_failures; /* failed attempts */
};

/* Returns 0 and *out, or -ERR_NOT_FOUND. */
int transport_peer_stats(const struct transport *t, int32_t peer,
                         struct transport_peer_stats *out);

struct transport_stats {
    uint64_t inbound_refused;    /* handshakes refused */
    uint64_t inbound_bad_frames; /* connections closed for a bad frame after the handshake */
    int inbound_connections;     /* open now */
    uint64_t ctl_received;       /* controller frames handed to on_controller */
    uint64_t ctl_dropped;        /* ... received without a callback set */
    uint64_t auth_failures;      /* handshakes without a good proof of the secret, either way */
    uint64_t tls_handshakes_in;  /* TLS: inbound handshakes completed */
    uint64_t tls_failures_in;    /* inbound connections closed at the TLS handshake */
    uint64_t tls_failures_out;   /* outbound attempts or connections ended by a TLS failure */
};
void transport_get_stats(const struct transport *t, struct transport_stats *out);

#endif
