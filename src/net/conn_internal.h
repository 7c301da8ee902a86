/* Private to net/: what listener.c and conn.c share. Not for use outside src/net/. */
#ifndef SP_NET_CONN_INTERNAL_H
#define SP_NET_CONN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/conn.h"
#include "net/reactor.h"

/* Size of the listener's shared read buffer, and of a connection's input buffer for frames
 * that fit in it. */
#define CONN_READ_CHUNK (64 * 1024)

/* One listening socket of a listener. */
struct listener_ep {
    struct listener *l;
    int index;
    int fd;   /* listening socket; -1 once closed */
    int port; /* bound port */
    char name[64];                  /* for logs; "" when none was given */
    const struct listener_tls *tls; /* NULL: plaintext */
    int64_t tls_warn_ms;            /* when a failed handshake was last logged */
    uint64_t tls_fail_unlogged;     /* failures since the last log line */
};

struct listener {
    struct reactor *r;
    struct listener_ep eps[LISTENER_ENDPOINTS_MAX];
    int n_eps;
    struct conn_limits lim;
    struct conn_handler h;
    int refs;    /* 1 until listener_close, +1 per struct conn not yet freed, +1 per active cb */
    bool closed; /* listener_close ran */
    bool accept_paused;                /* out of descriptors: accept_timer re-arms accepting */
    struct reactor_timer accept_timer; /* resumes accepting after EMFILE/ENFILE */
    int64_t refuse_warn_ms;            /* when connection_refused was last logged */
    int64_t pause_warn_ms;             /* when accept_paused was last logged */
    uint64_t refused_unlogged;         /* refusals since the last log line */
    struct conn *conns;                /* connections whose on_close has not run yet */
    int nopen;                         /* connections whose socket is open (the cap counts these) */
    struct conn_stats stats;
    uint8_t *scratch; /* CONN_READ_CHUNK bytes: reads land here when a connection holds no
                         partial frame, so idle connections own no input buffer */
    uint8_t *tls_wbuf; /* TLS_RECORD_MAX bytes (when an endpoint has TLS): a record's plaintext
                          is gathered here; OpenSSL encrypts it before the call returns */
};

/* Takes over fd (an accepted, non-blocking socket) of endpoint ep, registers it, runs on_open. */
void conn_start(struct listener_ep *ep, int fd, const struct sockaddr *peer, socklen_t peer_len);
/* True at most once per second for each *last_ms (rate-limited warnings). */
bool listener_warn_allowed(struct listener *l, int64_t *last_ms);
/* Closes c if still open, runs on_close, detaches its slots and drops the listener's
 * reference; c is freed once no callback holds it. */
void conn_finalize(struct conn *c);
void listener_unref(struct listener *l);

#endif
