/* Outbound TLS connections (net/dial.h with struct dial_tls) against a net/conn echo listener
 * with a TLS endpoint, on loopback, both ends on one reactor. The contexts are the
 * inter-broker ones (security/tls_context.h tls_context_new_cluster) over PEM files made for
 * each test: the server requires a client certificate, the client verifies the server's. */
#include <errno.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net/dial.h"
#include "net_test_util.h"
#include "security/tls_context.h"
#include "test.h"
#include "tls_test_util.h"

/* ---- the server: echoes every frame; "bye" closes the connection ---- */

struct srv {
    struct listener *l;
    struct tls_context *ctx; /* NULL: a plaintext listener */
    struct listener_tls tls;
    int frames;
    char principal[CONN_PRINCIPAL_MAX];
};

static struct ssl_ctx_st *srv_ctx_get(int64_t now_ms, void *data)
{
    return tls_context_get(data, now_ms);
}

static void srv_frame(struct conn *c, uint8_t *frame, size_t len, void *data)
{
    struct srv *s = data;
    s->frames++;
    snprintf(s->principal, sizeof(s->principal), "%s", conn_principal(c));
    if (len == 3 && memcmp(frame, "bye", 3) == 0) {
        conn_close(c);
        return;
    }
    struct iobuf resp;
    iobuf_init(&resp);
    uint8_t hdr[4];
    nt_put_be32(hdr, (uint32_t)len);
    iobuf_append(&resp, hdr, 4);
    iobuf_append(&resp, frame, len);
    conn_slot_complete(conn_slot_reserve(c), &resp);
}

/* ctx NULL: plaintext. Takes ctx. */
static void srv_start(struct reactor *r, struct srv *s, struct tls_context *ctx)
{
    memset(s, 0, sizeof(*s));
    s->ctx = ctx;
    s->tls = (struct listener_tls){.ctx_get = srv_ctx_get, .data = ctx,
                                   .handshake_timeout_ms = 2000};
    struct conn_handler h = {.on_frame = srv_frame, .data = s};
    struct listener_endpoint ep = {"cluster", "127.0.0.1", 0, ctx ? &s->tls : NULL};
    ASSERT_EQ(listener_open_endpoints(r, &ep, 1, NULL, &h, &s->l, NULL), 0);
}

static void srv_stop(struct srv *s)
{
    listener_close(s->l);
    tls_context_free(s->ctx);
}

static struct conn_stats srv_stats(const struct srv *s)
{
    struct conn_stats st;
    listener_get_stats(s->l, &st);
    return st;
}

/* ---- contexts ---- */

/* The cluster context (server or client) of pki p, written to files named name. */
static struct tls_context *cluster_ctx(const struct pki *p, const char *name, bool client)
{
    char keystore[512], ca[512], err[1024];
    pki_write(p, test_tmpdir(), name, keystore, ca, sizeof(keystore));
    struct tls_context *t = NULL;
    if (tls_context_new_cluster(keystore, "", ca, client, &t, err, sizeof(err)) != 0)
        test_fail(__FILE__, __LINE__, "tls_context_new_cluster: %s", err);
    return t;
}

/* A client context presenting the certificate of pki `key` and trusting pki `trust`'s CA. */
static struct tls_context *mixed_client_ctx(const struct pki *key, const struct pki *trust)
{
    char ks[512], ca[512], ks2[512], ca2[512], err[1024];
    pki_write(key, test_tmpdir(), "key", ks, ca, sizeof(ks));
    pki_write(trust, test_tmpdir(), "trust", ks2, ca2, sizeof(ks2));
    struct tls_context *t = NULL;
    if (tls_context_new_cluster(ks, "", ca2, true, &t, err, sizeof(err)) != 0)
        test_fail(__FILE__, __LINE__, "tls_context_new_cluster: %s", err);
    return t;
}

/* ---- the client ---- */

struct client {
    struct dial *d;
    struct dial_tls tls;
    int connects;
    int frames;
    size_t bytes;
    size_t bad_bytes; /* echoed bytes that differ from what was sent */
    int closes;
    int close_err;
    char close_why[256];
};

static uint8_t pattern(size_t i)
{
    return (uint8_t)(i * 7 + (i >> 9));
}

static void cl_connect(struct dial *d, void *data)
{
    ((struct client *)data)->connects++;
}

static void cl_frame(struct dial *d, uint8_t *frame, size_t len, void *data)
{
    struct client *cl = data;
    cl->frames++;
    cl->bytes += len;
    for (size_t i = 0; i < len; i++)
        cl->bad_bytes += frame[i] != pattern(i);
}

static void cl_close(struct dial *d, int err, void *data)
{
    struct client *cl = data;
    cl->closes++;
    cl->close_err = err;
    const char *why = dial_tls_error(d);
    snprintf(cl->close_why, sizeof(cl->close_why), "%s", why ? why : "");
    cl->d = NULL;
}

static struct ssl_ctx_st *cl_ctx_get(int64_t now_ms, void *data)
{
    return tls_context_get(data, now_ms);
}

/* ctx NULL: plaintext. */
static void cl_open(struct reactor *r, struct client *cl, int port, struct tls_context *ctx)
{
    memset(cl, 0, sizeof(*cl));
    cl->tls = (struct dial_tls){.ctx_get = cl_ctx_get, .data = ctx};
    struct dial_handler h = {cl_connect, cl_frame, cl_close, cl};
    ASSERT_EQ(dial_open(r, "127.0.0.1", port, 8u << 20, ctx ? &cl->tls : NULL, &h, &cl->d), 0);
}

/* A frame of n pattern bytes, as two chunks (header and body) or, split, as many small ones:
 * the record gathering of dial.c over chunk boundaries. */
static void send_pattern(struct dial *d, size_t n, bool split)
{
    struct iobuf b;
    iobuf_init(&b);
    uint8_t hdr[4];
    nt_put_be32(hdr, (uint32_t)n);
    iobuf_append(&b, hdr, 4);
    uint8_t *p = mem_alloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(i);
    size_t step = split ? 1000 : n;
    for (size_t off = 0; off < n; off += step) {
        struct iobuf part;
        iobuf_init(&part);
        iobuf_append(&part, p + off, MIN(step, n - off));
        iobuf_move(&b, &part);
    }
    mem_free(p);
    dial_send(d, &b);
}

static void send_text(struct dial *d, const char *s)
{
    struct iobuf b;
    iobuf_init(&b);
    uint8_t hdr[4];
    nt_put_be32(hdr, (uint32_t)strlen(s));
    iobuf_append(&b, hdr, 4);
    iobuf_append(&b, s, strlen(s));
    dial_send(d, &b);
}

/* ---- tests ---- */

/* Frames queued before the handshake, small and large (several MiB: many records, the socket
 * full on both sides), split over many chunks or not, all come back intact; the server saw
 * the client's certificate; the session ends with the server's close as an ordinary EOF. */
TEST_T(net_dial_tls_frames_round_trip, 30)
{
    log_set_level(LOG_ERROR);
    struct reactor *r = reactor_new();
    struct pki p;
    pki_make(&p, "Cluster CA");
    struct srv s;
    srv_start(r, &s, cluster_ctx(&p, "srv", false));
    struct tls_context *cctx = cluster_ctx(&p, "cli", true);
    struct client cl;
    cl_open(r, &cl, listener_port(s.l), cctx);
    ASSERT(dial_tls_on(cl.d));
    ASSERT(!dial_tls_established(cl.d));
    send_pattern(cl.d, 10, false); /* waits for the handshake */
    NT_PUMP_UNTIL(r, cl.frames == 1, 5000);
    ASSERT_EQ(cl.connects, 1);
    ASSERT(dial_tls_established(cl.d));
    ASSERT_STREQ(s.principal, "User:CN=localhost");
    size_t sizes[] = {1, 16383, 16384, 16385, 100000, 3u << 20, 5u << 20};
    size_t want = 10;
    for (size_t i = 0; i < ARRAY_LEN(sizes); i++) {
        send_pattern(cl.d, sizes[i], i % 2 == 1);
        want += sizes[i];
    }
    NT_PUMP_UNTIL(r, cl.frames == 1 + (int)ARRAY_LEN(sizes), 20000);
    ASSERT_EQ(cl.bytes, want);
    ASSERT_EQ(cl.bad_bytes, 0);
    ASSERT_EQ(dial_pending(cl.d), 0);
    struct conn_stats st = srv_stats(&s);
    ASSERT_EQ(st.tls_handshakes, 1);
    ASSERT_EQ(st.tls_handshake_failures, 0);
    ASSERT_CMP(st.bytes_in, >=, want); /* plaintext bytes counted by the server */
    send_text(cl.d, "bye");
    NT_PUMP_UNTIL(r, cl.closes == 1, 3000);
    ASSERT_EQ(cl.close_err, -ERR_CLOSED);
    ASSERT_STREQ(cl.close_why, "");
    srv_stop(&s);
    tls_context_free(cctx);
    reactor_free(r);
    pki_free(&p);
    nt_leak_check();
}

/* Every mismatch fails the connection before a frame is delivered either way, once, and says
 * why: a client certificate from another CA (the server's verify), a server certificate from
 * another CA (the client's verify), a TLS client on a plaintext listener, a plaintext client on
 * a TLS listener. */
TEST_T(net_dial_tls_refusals, 30)
{
    log_set_level(LOG_ERROR);
    struct reactor *r = reactor_new();
    struct pki good, evil;
    pki_make(&good, "Cluster CA");
    pki_make(&evil, "Evil CA");
    struct srv s;
    srv_start(r, &s, cluster_ctx(&good, "srv", false));
    int port = listener_port(s.l);
    struct client cl;

    /* the client presents evil's certificate, trusts the cluster's CA */
    struct tls_context *c1 = mixed_client_ctx(&evil, &good);
    cl_open(r, &cl, port, c1);
    send_text(cl.d, "hello");
    NT_PUMP_UNTIL(r, cl.closes == 1, 5000);
    ASSERT_EQ(cl.close_err, -EPROTO);
    ASSERT(strstr(cl.close_why, "alert") != NULL); /* the server's alert */
    ASSERT_EQ(cl.frames, 0);
    ASSERT_EQ(s.frames, 0);
    NT_PUMP_UNTIL(r, srv_stats(&s).tls_handshake_failures == 1, 3000);
    ASSERT_EQ(srv_stats(&s).tls_handshakes, 0);
    tls_context_free(c1);

    /* the client trusts evil's CA only: the cluster's certificate is refused by the client */
    struct tls_context *c2 = mixed_client_ctx(&good, &evil);
    cl_open(r, &cl, port, c2);
    send_text(cl.d, "hello");
    NT_PUMP_UNTIL(r, cl.closes == 1, 5000);
    ASSERT_EQ(cl.close_err, -EPROTO);
    ASSERT_EQ(cl.connects, 0);
    ASSERT(strstr(cl.close_why, "handshake: certificate verify failed") == cl.close_why);
    NT_PUMP_UNTIL(r, srv_stats(&s).tls_handshake_failures == 2, 3000);
    ASSERT_EQ(s.frames, 0);
    tls_context_free(c2);

    /* a plaintext client on the TLS listener: closed, nothing delivered */
    cl_open(r, &cl, port, NULL);
    send_text(cl.d, "hello");
    NT_PUMP_UNTIL(r, cl.closes == 1, 5000);
    ASSERT_EQ(cl.frames, 0);
    ASSERT_EQ(s.frames, 0);
    NT_PUMP_UNTIL(r, srv_stats(&s).tls_handshake_failures == 3, 3000);

    /* a TLS client on a plaintext listener: the ClientHello is not a frame; closed */
    struct srv plain;
    srv_start(r, &plain, NULL);
    struct tls_context *c3 = cluster_ctx(&good, "cli", true);
    cl_open(r, &cl, listener_port(plain.l), c3);
    send_text(cl.d, "hello");
    NT_PUMP_UNTIL(r, cl.closes == 1, 5000);
    ASSERT_EQ(cl.close_err, -EPROTO);
    ASSERT_EQ(cl.connects, 0);
    ASSERT(strstr(cl.close_why, "handshake: ") == cl.close_why);
    ASSERT_EQ(plain.frames, 0);
    nt_pump_for(r, 20);
    ASSERT_EQ(cl.closes, 1);
    srv_stop(&plain);
    tls_context_free(c3);

    srv_stop(&s);
    reactor_free(r);
    pki_free(&good);
    pki_free(&evil);
    nt_leak_check();
}
