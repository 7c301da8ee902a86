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

struct listener {
    struct reactor *r;
    int fd;   /* listening socket; -1 once closed */
    int port; /* bound port */
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
};

/* Takes over fd (an accepted, non-blocking socket), registers it, runs on_open. */
void conn_start(struct listener *l, int fd, const struct sockaddr *peer, socklen_t peer_len);
/* Closes c if still open, runs on_close, detaches its slots and drops the listener's
 * reference; c is freed once no callback holds it. */
void conn_finalize(struct conn *c);
void listener_unref(struct listener *l);

#endif
