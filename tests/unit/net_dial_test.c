/* Outbound framed connections (net/dial.h) against a net/conn echo listener on loopback. */
#include <errno.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net/dial.h"
#include "net_test_util.h"
#include "test.h"

/* Server: echoes each frame; a frame "big" is answered with a frame announcing 1 GiB. */
static void echo_frame(struct conn *c, uint8_t *frame, size_t len, void *data)
{
    struct iobuf resp;
    iobuf_init(&resp);
    uint8_t hdr[4];
    if (len == 3 && memcmp(frame, "big", 3) == 0) {
        nt_put_be32(hdr, 1u << 30);
        iobuf_append(&resp, hdr, 4);
        iobuf_append(&resp, "0123456789", 10);
    } else {
        nt_put_be32(hdr, (uint32_t)len);
        iobuf_append(&resp, hdr, 4);
        iobuf_append(&resp, frame, len);
    }
    conn_slot_complete(conn_slot_reserve(c), &resp);
}

struct client {
    struct dial *d;
    int connects;
    int frames;
    size_t bytes;
    int closes;
    int close_err;
    bool close_in_frame;
};

static void cl_connect(struct dial *d, void *data)
{
    struct client *cl = data;
    cl->connects++;
}

static void cl_frame(struct dial *d, uint8_t *frame, size_t len, void *data)
{
    struct client *cl = data;
    cl->frames++;
    cl->bytes += len;
    if (len == 2 * 1000 * 1000) {
        for (size_t i = 0; i < len; i++)
            ASSERT_EQ(frame[i], (uint8_t)(i * 7));
    }
    if (cl->close_in_frame) {
        dial_close(d);
        cl->d = NULL;
    }
}

static void cl_close(struct dial *d, int err, void *data)
{
    struct client *cl = data;
    cl->closes++;
    cl->close_err = err;
    cl->d = NULL;
}

static struct dial *open_client(struct reactor *r, int port, struct client *cl)
{
    struct dial_handler h = {cl_connect, cl_frame, cl_close, cl};
    struct dial *d;
    ASSERT_EQ(dial_open(r, "127.0.0.1", port, 4u << 20, NULL, &h, &d), 0);
    cl->d = d;
    return d;
}

static void send_frame(struct dial *d, const void *p, size_t n)
{
    struct iobuf b;
    iobuf_init(&b);
    uint8_t hdr[4];
    nt_put_be32(hdr, (uint32_t)n);
    iobuf_append(&b, hdr, 4);
    iobuf_append(&b, p, n);
    dial_send(d, &b);
    ASSERT_EQ(iobuf_pending(&b), 0);
}

TEST(net_dial_frames_roundtrip_and_oversized_reply_closes)
{
    log_set_level(LOG_ERROR);
    struct reactor *r = reactor_new();
    struct conn_handler h = {echo_frame, NULL, NULL, NULL};
    struct conn_limits lim = {0};
    struct listener *l;
    ASSERT_EQ(listener_open(r, "127.0.0.1", 0, &lim, &h, &l), 0);
    struct client cl = {0};
    open_client(r, listener_port(l), &cl);
    /* Queued before the connection is up: sent once it is. */
    send_frame(cl.d, "hello", 5);
    size_t big = 2 * 1000 * 1000;
    uint8_t *p = mem_alloc(big);
    for (size_t i = 0; i < big; i++)
        p[i] = (uint8_t)(i * 7);
    send_frame(cl.d, p, big);
    mem_free(p);
    NT_PUMP_UNTIL(r, cl.frames == 2, 5000);
    ASSERT_EQ(cl.connects, 1);
    ASSERT_EQ(cl.bytes, 5 + big);
    ASSERT_EQ(dial_pending(cl.d), 0);
    /* A reply announcing 1 GiB (above the 4 MiB cap) closes the connection at once. */
    nt_alloc_peak_reset();
    send_frame(cl.d, "big", 3);
    NT_PUMP_UNTIL(r, cl.closes == 1, 3000);
    ASSERT_EQ(cl.close_err, -ERR_TOO_LARGE);
    ASSERT(cl.d == NULL);
    if (nt_alloc_peak_available())
        ASSERT_CMP(nt_alloc_peak(), <, 1u << 20);
    /* Closing from inside on_frame: no callback afterwards. */
    struct client c2 = {.close_in_frame = true};
    open_client(r, listener_port(l), &c2);
    send_frame(c2.d, "a", 1);
    send_frame(c2.d, "b", 1);
    NT_PUMP_UNTIL(r, c2.frames == 1, 3000);
    nt_pump_for(r, 50);
    ASSERT_EQ(c2.frames, 1);
    ASSERT_EQ(c2.closes, 0);
    /* dial_close from outside a callback, with bytes queued. */
    struct client c3 = {0};
    open_client(r, listener_port(l), &c3);
    send_frame(c3.d, "x", 1);
    dial_close(c3.d);
    nt_pump_for(r, 50);
    ASSERT_EQ(c3.connects + c3.frames + c3.closes, 0);
    listener_close(l);
    reactor_free(r);
    nt_leak_check();
}

TEST(net_dial_refused_and_eof_reported_once)
{
    log_set_level(LOG_ERROR);
    struct reactor *r = reactor_new();
    int port;
    int fd = listener_bind_tcp("127.0.0.1", 0, &port);
    ASSERT(fd >= 0);
    close(fd); /* nobody listens there now */
    struct client cl = {0};
    struct dial_handler h = {cl_connect, cl_frame, cl_close, &cl};
    struct dial *d = NULL;
    int rc = dial_open(r, "127.0.0.1", port, 1024, NULL, &h, &d);
    if (rc == 0) {
        NT_PUMP_UNTIL(r, cl.closes == 1, 3000);
        ASSERT_EQ(cl.close_err, -ECONNREFUSED);
    } else {
        ASSERT_EQ(rc, -ECONNREFUSED);
    }
    ASSERT_EQ(cl.connects, 0);

    /* EOF from the server. */
    struct conn_handler ch = {echo_frame, NULL, NULL, NULL};
    struct conn_limits lim = {0};
    struct listener *l;
    ASSERT_EQ(listener_open(r, "127.0.0.1", 0, &lim, &ch, &l), 0);
    struct client c2 = {0};
    open_client(r, listener_port(l), &c2);
    NT_PUMP_UNTIL(r, c2.connects == 1 && listener_connection_count(l) == 1, 3000);
    listener_close(l);
    NT_PUMP_UNTIL(r, c2.closes == 1, 3000);
    ASSERT_EQ(c2.close_err, -ERR_CLOSED);
    nt_pump_for(r, 20);
    ASSERT_EQ(c2.closes, 1);
    reactor_free(r);
    nt_leak_check();
}
