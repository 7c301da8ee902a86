/* Connections over real loopback sockets: framing, ordering, limits, closing. The test process
 * is both the client (plain sockets) and the server (a listener on port 0 driven through
 * reactor_run_once). */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/check.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net/reactor.h"
#include "net_test_util.h"
#include "test.h"

enum srv_mode {
    SRV_ECHO,        /* respond at once with the frame, size-prefixed */
    SRV_HOLD,        /* reserve a slot per frame and keep it for the test to complete */
    SRV_CLOSE_FIRST, /* conn_close() from inside the first on_frame */
    SRV_BIG,         /* respond at once with resp_bytes bytes of a pattern */
    SRV_CLOSE_SLOTS, /* in the first on_frame: reserve 2 slots, close, complete one, hold one */
    SRV_CLOSE_LISTENER, /* listener_close() from inside the first on_frame */
};

#define SRV_MAX_FRAMES 4096

struct srv {
    struct reactor *r;
    struct listener *l;
    enum srv_mode mode;
    size_t resp_bytes;
    int frames;
    uint8_t *frame[SRV_MAX_FRAMES]; /* copies of what on_frame saw */
    size_t frame_len[SRV_MAX_FRAMES];
    struct conn_slot *held[SRV_MAX_FRAMES];
    int nheld;
    struct conn *conn; /* the last opened */
    int opens;
    int closes;
    bool closing_seen_in_frame;
    uint64_t last_id;
};

static void srv_on_frame(struct conn *c, uint8_t *frame, size_t len, void *data)
{
    struct srv *s = data;
    ASSERT(!conn_closing(c));
    ASSERT(s->frames < SRV_MAX_FRAMES);
    s->frame[s->frames] = mem_dup(frame, len);
    s->frame_len[s->frames] = len;
    s->frames++;
    struct iobuf resp;
    iobuf_init(&resp);
    switch (s->mode) {
    case SRV_ECHO: {
        uint8_t hdr[4];
        nt_put_be32(hdr, (uint32_t)len);
        iobuf_append(&resp, hdr, 4);
        iobuf_append(&resp, frame, len);
        conn_slot_complete(conn_slot_reserve(c), &resp);
        ASSERT_EQ(iobuf_pending(&resp), 0); /* moved out */
        break;
    }
    case SRV_HOLD:
        s->held[s->nheld++] = conn_slot_reserve(c);
        break;
    case SRV_CLOSE_FIRST:
        conn_close(c);
        s->closing_seen_in_frame = conn_closing(c);
        break;
    case SRV_BIG: {
        uint8_t *p = iobuf_reserve(&resp, s->resp_bytes);
        for (size_t i = 0; i < s->resp_bytes; i++)
            p[i] = (uint8_t)(i * 7 + (size_t)s->frames);
        iobuf_commit(&resp, s->resp_bytes);
        conn_slot_complete(conn_slot_reserve(c), &resp);
        break;
    }
    case SRV_CLOSE_SLOTS: {
        struct conn_slot *first = conn_slot_reserve(c);
        struct conn_slot *second = conn_slot_reserve(c);
        conn_close(c);
        ASSERT(conn_closing(c));
        /* closed but on_close not run yet: completing drops the bytes */
        iobuf_append(&resp, "dropped", 7);
        conn_slot_complete(first, &resp);
        ASSERT_EQ(iobuf_pending(&resp), 0);
        /* a slot reserved on a closed connection is valid too */
        struct iobuf more;
        iobuf_init(&more);
        iobuf_append(&more, "also dropped", 12);
        conn_slot_complete(conn_slot_reserve(c), &more);
        s->held[s->nheld++] = second;
        break;
    }
    case SRV_CLOSE_LISTENER:
        conn_slot_complete(conn_slot_reserve(c), &resp);
        listener_close(s->l);
        s->l = NULL;
        /* on_close already ran for this connection (inside listener_close), but the frame
         * being delivered and c itself stay valid until this callback returns */
        ASSERT(conn_closing(c));
        ASSERT(conn_get_user(c) == s);
        break;
    }
}

static void srv_on_open(struct conn *c, void *data)
{
    struct srv *s = data;
    s->opens++;
    s->conn = c;
    ASSERT(conn_id(c) != s->last_id);
    s->last_id = conn_id(c);
    ASSERT(strncmp(conn_peer(c), "127.0.0.1:", 10) == 0);
    conn_set_user(c, s);
}

static void srv_on_close(struct conn *c, void *data)
{
    struct srv *s = data;
    ASSERT(conn_get_user(c) == s);
    ASSERT(conn_closing(c));
    s->closes++;
    if (s->conn == c)
        s->conn = NULL;
}

static struct srv *srv_start(enum srv_mode mode, struct conn_limits lim)
{
    struct srv *s = mem_calloc(1, sizeof(*s));
    s->mode = mode;
    s->r = reactor_new();
    ASSERT(s->r != NULL);
    struct conn_handler h = {
        .on_frame = srv_on_frame,
        .on_close = srv_on_close,
        .on_open = srv_on_open,
        .data = s,
    };
    ASSERT_EQ(listener_open(s->r, "127.0.0.1", 0, &lim, &h, &s->l), 0);
    ASSERT_CMP(listener_port(s->l), >, 0);
    return s;
}

static struct conn_limits default_limits(void)
{
    return (struct conn_limits){
        .max_frame_bytes = 100 << 20,
        .max_queued_bytes = 64 << 20,
        .max_inflight = 1000,
        .max_connections = 100,
    };
}

/* Closes everything, checks on_close ran for every open, and that nothing leaked. */
static void srv_stop(struct srv *s)
{
    if (s->l)
        listener_close(s->l);
    ASSERT_EQ(s->closes, s->opens);
    for (int i = 0; i < s->frames; i++)
        mem_free(s->frame[i]);
    reactor_free(s->r);
    mem_free(s);
    nt_leak_check();
}

static struct conn_stats srv_stats(const struct srv *s)
{
    struct conn_stats st;
    listener_get_stats(s->l, &st);
    return st;
}

/* Builds n frames whose payloads are "frame-<i>" padded with i bytes. */
static size_t build_frames(uint8_t *buf, int n)
{
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        char payload[256];
        int len = snprintf(payload, sizeof(payload), "frame-%d:", i);
        for (int k = 0; k < i; k++)
            payload[len++] = (char)('a' + k % 26);
        off += nt_frame(buf + off, payload, (uint32_t)len);
    }
    return off;
}

static void check_frames(const struct srv *s, const uint8_t *buf, int n)
{
    ASSERT_EQ(s->frames, n);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        uint32_t len = nt_get_be32(buf + off);
        ASSERT_EQ(s->frame_len[i], len);
        ASSERT_MEMEQ(s->frame[i], buf + off + 4, len);
        off += 4 + len;
    }
}

TEST(net_conn_pipelined_frames_in_one_write)
{
    struct srv *s = srv_start(SRV_ECHO, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[8192];
    size_t n = build_frames(buf, 20);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    NT_PUMP_UNTIL(s->r, s->frames == 20, 2000);
    check_frames(s, buf, 20);
    /* echoes come back in order, byte-identical to what was sent */
    uint8_t back[8192];
    nt_read_exact(s->r, fd, back, n, 2000);
    ASSERT_MEMEQ(back, buf, n);
    struct conn_stats st = srv_stats(s);
    ASSERT_EQ(st.frames_in, 20);
    ASSERT_EQ(st.bytes_in, n);
    ASSERT_EQ(st.bytes_out, n);
    ASSERT_EQ(st.accepted, 1);
    ASSERT_EQ(listener_connection_count(s->l), 1);
    /* a client closing is noticed: on_close runs, the count drops */
    close(fd);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    ASSERT_EQ(listener_connection_count(s->l), 0);
    srv_stop(s);
}

TEST(net_conn_frames_split_byte_by_byte)
{
    struct srv *s = srv_start(SRV_ECHO, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[8192];
    size_t n = build_frames(buf, 12);
    for (size_t i = 0; i < n; i++) {
        ASSERT_EQ(write(fd, buf + i, 1), 1);
        ASSERT_EQ(reactor_run_once(s->r, 0), 0);
        ASSERT_EQ(reactor_run_once(s->r, 0), 0);
    }
    NT_PUMP_UNTIL(s->r, s->frames == 12, 2000);
    check_frames(s, buf, 12);
    uint8_t back[8192];
    nt_read_exact(s->r, fd, back, n, 2000);
    ASSERT_MEMEQ(back, buf, n);
    /* between events the connection keeps no input buffer once no partial frame is left */
    ASSERT_EQ(conn_rbuf_capacity(s->conn), 0);
    close(fd);
    srv_stop(s);
}

TEST(net_conn_large_frame_in_pieces_is_delivered_whole)
{
    struct srv *s = srv_start(SRV_HOLD, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    size_t len = 3 << 20;
    uint8_t *buf = mem_alloc(len + 4 + 8);
    nt_put_be32(buf, (uint32_t)len);
    for (size_t i = 0; i < len; i++)
        buf[4 + i] = (uint8_t)(i * 31 + 7);
    nt_frame(buf + 4 + len, "tail", 4); /* and a small frame right after it */
    size_t total = len + 4 + 8, off = 0;
    size_t piece = 100000;
    NT_PUMP_UNTIL(s->r, s->conn != NULL, 2000);
    while (off < total) {
        size_t k = MIN(piece, total - off);
        nt_write_all(s->r, fd, buf + off, k);
        off += k;
        nt_pump_for(s->r, 2);
        /* the buffer grows with what arrived, never to the announced size up front */
        if (s->frames == 0)
            ASSERT_CMP(conn_rbuf_capacity(s->conn), <=, MAX((size_t)64 << 10, 2 * off));
    }
    NT_PUMP_UNTIL(s->r, s->frames == 2, 2000);
    ASSERT_EQ(s->frame_len[0], len);
    ASSERT_MEMEQ(s->frame[0], buf + 4, len);
    ASSERT_EQ(s->frame_len[1], 4);
    ASSERT_MEMEQ(s->frame[1], "tail", 4);
    /* a busy connection keeps its large buffer for the next big frame ... */
    size_t cap = conn_rbuf_capacity(s->conn);
    ASSERT_CMP(cap, >=, len);
    nt_write_all(s->r, fd, buf, len + 4);
    NT_PUMP_UNTIL(s->r, s->frames == 3, 2000);
    ASSERT_MEMEQ(s->frame[2], buf + 4, len);
    ASSERT_EQ(conn_rbuf_capacity(s->conn), cap);
    /* ... and gives it back once input stops for a second */
    nt_pump_for(s->r, 1200);
    ASSERT_EQ(conn_rbuf_capacity(s->conn), 0);
    for (int i = 0; i < s->nheld; i++) {
        struct iobuf empty;
        iobuf_init(&empty);
        conn_slot_complete(s->held[i], &empty);
    }
    mem_free(buf);
    close(fd);
    srv_stop(s);
}

static void complete_with(struct conn_slot *slot, const char *text)
{
    struct iobuf b;
    iobuf_init(&b);
    iobuf_append(&b, text, strlen(text));
    conn_slot_complete(slot, &b);
    ASSERT_EQ(iobuf_pending(&b), 0);
}

TEST(net_conn_responses_leave_in_request_order)
{
    struct srv *s = srv_start(SRV_HOLD, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[1024];
    size_t n = build_frames(buf, 4);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    NT_PUMP_UNTIL(s->r, s->nheld == 4, 2000);

    /* slots 2, 4, 3 first: nothing may go out before slot 1 */
    complete_with(s->held[1], "two;");
    complete_with(s->held[3], "four;");
    complete_with(s->held[2], "three;");
    nt_pump_for(s->r, 20);
    ASSERT_EQ(nt_available(fd), 0);

    /* completing slot 1 outside any callback writes at once, in order, with no extra loop
     * iteration (loopback delivers synchronously) */
    complete_with(s->held[0], "one;");
    const char *want = "one;two;three;four;";
    ASSERT_EQ(nt_available(fd), strlen(want));
    char got[64] = {0};
    nt_read_exact(s->r, fd, got, strlen(want), 1000);
    ASSERT_STREQ(got, want);
    close(fd);
    srv_stop(s);
}

TEST(net_conn_oversized_frame_closes_before_delivery)
{
    struct conn_limits lim = default_limits();
    lim.max_frame_bytes = 1024;
    struct srv *s = srv_start(SRV_ECHO, lim);
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[2048];
    size_t n = nt_frame(buf, "ok", 2); /* a fine frame first: it is delivered */
    nt_put_be32(buf + n, 1025);
    memset(buf + n + 4, 'x', 1025);
    n += 4 + 1025;
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    nt_wait_closed(s->r, fd, 2000);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    ASSERT_EQ(s->frames, 1);
    ASSERT_EQ(s->frame_len[0], 2);
    close(fd);
    srv_stop(s);
}

TEST(net_conn_negative_size_closes)
{
    struct srv *s = srv_start(SRV_ECHO, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[8] = {0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4};
    ASSERT_EQ(write(fd, buf, 8), 8);
    nt_wait_closed(s->r, fd, 2000);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    ASSERT_EQ(s->frames, 0);
    close(fd);
    srv_stop(s);
}

TEST(net_conn_announced_size_is_not_allocated)
{
    struct conn_limits lim = default_limits();
    lim.max_frame_bytes = 128 << 20;
    struct srv *s = srv_start(SRV_ECHO, lim);
    int fd = nt_connect(listener_port(s->l), 0);
    NT_PUMP_UNTIL(s->r, s->conn != NULL, 2000);
    uint8_t buf[4096];
    nt_put_be32(buf, 100u << 20);
    memset(buf + 4, 'z', sizeof(buf) - 4);
    nt_alloc_peak_reset();
    ASSERT_EQ(write(fd, buf, 10), 10);
    nt_pump_for(s->r, 20);
    ASSERT_EQ(s->frames, 0);
    ASSERT(s->conn != NULL);
    /* 10 bytes arrived, 10 bytes are held */
    ASSERT_EQ(conn_rbuf_capacity(s->conn), 10);
    ASSERT_EQ(write(fd, buf + 10, 1000), 1000);
    nt_pump_for(s->r, 20);
    ASSERT_EQ(conn_rbuf_capacity(s->conn), 1010);
    ASSERT_EQ(s->frames, 0);
    /* and nothing was allocated for the announced size on the way, not even briefly: the
     * largest block is the 64 KiB read buffer */
    if (nt_alloc_peak_available())
        ASSERT_CMP(nt_alloc_peak(), <=, 64 << 10);
    ASSERT_EQ(listener_connection_count(s->l), 1);
    close(fd);
    srv_stop(s);
}

/* A response of memory + file ranges, larger than socket buffers can take at once. */
TEST_T(net_conn_file_ranges_arrive_byte_identical, 30)
{
    struct srv *s = srv_start(SRV_HOLD, default_limits());
    char path[512];
    snprintf(path, sizeof(path), "%s/segment.log", test_tmpdir());
    int ffd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT(ffd >= 0);
    size_t flen = 12 << 20;
    uint8_t *content = mem_alloc(flen);
    for (size_t i = 0; i < flen; i++)
        content[i] = (uint8_t)((i >> 8) ^ (i * 13));
    ASSERT_EQ(write(ffd, content, flen), (ssize_t)flen);
    struct fileref *f = fileref_new(ffd);

    int fd = nt_connect(listener_port(s->l), 8192);
    uint8_t req[64];
    size_t n = nt_frame(req, "fetch", 5);
    ASSERT_EQ(write(fd, req, n), (ssize_t)n);
    NT_PUMP_UNTIL(s->r, s->nheld == 1, 2000);

    /* header | 10 MiB of the file from offset 1000 | middle | 5000 bytes from offset 7 | end */
    size_t off1 = 1000, len1 = 10 << 20, off2 = 7, len2 = 5000;
    struct iobuf resp;
    iobuf_init(&resp);
    iobuf_append(&resp, "header", 6);
    iobuf_append_file(&resp, f, (off_t)off1, len1);
    iobuf_append(&resp, "middle", 6);
    iobuf_append_file(&resp, f, (off_t)off2, len2);
    iobuf_append(&resp, "end", 3);
    fileref_put(f); /* the response holds its own references */
    size_t total = iobuf_pending(&resp);
    conn_slot_complete(s->held[0], &resp);

    uint8_t *got = mem_alloc(total);
    nt_read_exact(s->r, fd, got, total, 20000);
    size_t o = 0;
    ASSERT_MEMEQ(got + o, "header", 6);
    o += 6;
    ASSERT_MEMEQ(got + o, content + off1, len1);
    o += len1;
    ASSERT_MEMEQ(got + o, "middle", 6);
    o += 6;
    ASSERT_MEMEQ(got + o, content + off2, len2);
    o += len2;
    ASSERT_MEMEQ(got + o, "end", 3);
    ASSERT_EQ(srv_stats(s).bytes_out, total);
    mem_free(got);
    mem_free(content);
    close(fd);
    srv_stop(s);
}

TEST(net_conn_file_shorter_than_range_closes)
{
    struct srv *s = srv_start(SRV_HOLD, default_limits());
    char path[512];
    snprintf(path, sizeof(path), "%s/short.log", test_tmpdir());
    int ffd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    ASSERT(ffd >= 0);
    uint8_t content[1000];
    memset(content, 'q', sizeof(content));
    ASSERT_EQ(write(ffd, content, sizeof(content)), (ssize_t)sizeof(content));
    struct fileref *f = fileref_new(ffd);
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t req[64];
    size_t n = nt_frame(req, "fetch", 5);
    ASSERT_EQ(write(fd, req, n), (ssize_t)n);
    NT_PUMP_UNTIL(s->r, s->nheld == 1, 2000);
    struct iobuf resp;
    iobuf_init(&resp);
    iobuf_append_file(&resp, f, 0, 5000); /* the file has only 1000 bytes */
    fileref_put(f);
    conn_slot_complete(s->held[0], &resp);
    /* what exists is sent, then the connection is closed rather than left hanging */
    ASSERT_EQ(nt_wait_closed(s->r, fd, 2000), 1000);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    close(fd);
    srv_stop(s);
}

TEST_T(net_conn_backpressure_on_queued_bytes, 30)
{
    struct conn_limits lim = default_limits();
    lim.max_queued_bytes = 256 << 10;
    struct srv *s = srv_start(SRV_BIG, lim);
    s->resp_bytes = 512 << 10;
    int fd = nt_connect(listener_port(s->l), 8192);
    enum { N = 40 };
    uint8_t buf[N * 16];
    size_t n = 0;
    for (int i = 0; i < N; i++)
        n += nt_frame(buf + n, "give me", 7);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    /* the client reads nothing: once the socket is full and 256 KiB are queued, frames stop */
    nt_pump_for(s->r, 300);
    int seen = s->frames;
    ASSERT_CMP(seen, >=, 1);
    ASSERT_CMP(seen, <, N);
    nt_pump_for(s->r, 100);
    ASSERT_EQ(s->frames, seen);
    /* reading everything lets the rest through */
    size_t total = (size_t)N * s->resp_bytes;
    uint8_t *got = mem_alloc(total);
    nt_read_exact(s->r, fd, got, total, 20000);
    ASSERT_EQ(s->frames, N);
    for (int i = 0; i < N; i++) {
        const uint8_t *p = got + (size_t)i * s->resp_bytes;
        for (size_t k = 0; k < s->resp_bytes; k += 4099)
            ASSERT_EQ(p[k], (uint8_t)(k * 7 + (size_t)(i + 1)));
    }
    mem_free(got);
    close(fd);
    srv_stop(s);
}

TEST(net_conn_backpressure_on_inflight_requests)
{
    struct conn_limits lim = default_limits();
    lim.max_inflight = 2;
    struct srv *s = srv_start(SRV_HOLD, lim);
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[1024];
    size_t n = build_frames(buf, 10);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    nt_pump_for(s->r, 50);
    /* pauses once reserved-and-unsent slots exceed 2 */
    ASSERT_EQ(s->frames, 3);
    /* completing out of order does not send (slot 1 is still missing), so nothing resumes */
    complete_with(s->held[2], "c");
    nt_pump_for(s->r, 20);
    ASSERT_EQ(s->frames, 3);
    complete_with(s->held[0], "a");
    complete_with(s->held[1], "b");
    /* all three sent: reading resumes and buffered frames flow again (without new bytes) */
    NT_PUMP_UNTIL(s->r, s->frames == 6, 2000);
    nt_pump_for(s->r, 20);
    ASSERT_EQ(s->frames, 6);
    for (int i = 3; i < 6; i++)
        complete_with(s->held[i], "x");
    NT_PUMP_UNTIL(s->r, s->frames == 9, 2000);
    nt_pump_for(s->r, 20);
    ASSERT_EQ(s->frames, 9);
    for (int i = 6; i < 9; i++)
        complete_with(s->held[i], "y");
    NT_PUMP_UNTIL(s->r, s->frames == 10, 2000);
    complete_with(s->held[9], "z");
    check_frames(s, buf, 10);
    char got[11] = {0};
    nt_read_exact(s->r, fd, got, 10, 1000);
    ASSERT_STREQ(got, "abcxxxyyyz");
    close(fd);
    srv_stop(s);
}

TEST(net_conn_cap_refuses_extra_connection)
{
    struct conn_limits lim = default_limits();
    lim.max_connections = 2;
    struct srv *s = srv_start(SRV_ECHO, lim);
    int port = listener_port(s->l);
    int a = nt_connect(port, 0);
    int b = nt_connect(port, 0);
    NT_PUMP_UNTIL(s->r, s->opens == 2, 2000);
    int c = nt_connect(port, 0);
    nt_wait_closed(s->r, c, 2000);
    struct conn_stats st = srv_stats(s);
    ASSERT_EQ(st.refused, 1);
    ASSERT_EQ(st.accepted, 2);
    ASSERT_EQ(s->opens, 2);
    ASSERT_EQ(listener_connection_count(s->l), 2);
    /* the first two still work */
    uint8_t buf[64];
    size_t n = nt_frame(buf, "hi", 2);
    ASSERT_EQ(write(a, buf, n), (ssize_t)n);
    ASSERT_EQ(write(b, buf, n), (ssize_t)n);
    uint8_t back[64];
    nt_read_exact(s->r, a, back, n, 2000);
    nt_read_exact(s->r, b, back, n, 2000);
    /* a slot frees up when one leaves */
    close(a);
    NT_PUMP_UNTIL(s->r, listener_connection_count(s->l) == 1, 2000);
    int d = nt_connect(port, 0);
    NT_PUMP_UNTIL(s->r, s->opens == 3, 2000);
    ASSERT_EQ(srv_stats(s).refused, 1);
    close(b);
    close(c);
    close(d);
    srv_stop(s);
}

TEST(net_conn_close_inside_on_frame)
{
    struct srv *s = srv_start(SRV_CLOSE_FIRST, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[1024];
    size_t n = build_frames(buf, 5);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    nt_wait_closed(s->r, fd, 2000);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    ASSERT_EQ(s->frames, 1); /* nothing delivered after the close */
    ASSERT(s->closing_seen_in_frame);
    nt_pump_for(s->r, 20);
    ASSERT_EQ(s->closes, 1);
    close(fd);
    srv_stop(s);
}

TEST(net_conn_slot_outlives_its_connection)
{
    struct srv *s = srv_start(SRV_HOLD, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[1024];
    size_t n = build_frames(buf, 3);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    NT_PUMP_UNTIL(s->r, s->nheld == 3, 2000);
    complete_with(s->held[1], "done before close"); /* waits behind slot 0 */
    close(fd);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    /* the connection is gone (freed); its slots are still ours to complete */
    complete_with(s->held[0], "late");
    complete_with(s->held[2], "later");
    nt_pump_for(s->r, 10);
    srv_stop(s);
}

TEST(net_conn_slots_around_close_inside_on_frame)
{
    struct srv *s = srv_start(SRV_CLOSE_SLOTS, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[1024];
    size_t n = build_frames(buf, 3);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    nt_wait_closed(s->r, fd, 2000);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    ASSERT_EQ(s->frames, 1);
    ASSERT_EQ(s->nheld, 1);
    complete_with(s->held[0], "after on_close");
    close(fd);
    srv_stop(s);
}

TEST(net_conn_listener_close_closes_every_connection)
{
    struct srv *s = srv_start(SRV_HOLD, default_limits());
    int port = listener_port(s->l);
    int fds[3];
    uint8_t buf[64];
    size_t n = nt_frame(buf, "req", 3);
    for (int i = 0; i < 3; i++) {
        fds[i] = nt_connect(port, 0);
        ASSERT_EQ(write(fds[i], buf, n), (ssize_t)n);
    }
    NT_PUMP_UNTIL(s->r, s->nheld == 3, 2000);
    listener_close(s->l);
    s->l = NULL;
    ASSERT_EQ(s->closes, 3); /* from inside listener_close */
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(nt_wait_closed(s->r, fds[i], 1000), 0);
        close(fds[i]);
    }
    /* the port no longer accepts */
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(probe, (struct sockaddr *)&sin, sizeof(sin)), -1);
    ASSERT_EQ(errno, ECONNREFUSED);
    close(probe);
    for (int i = 0; i < 3; i++)
        complete_with(s->held[i], "too late");
    nt_pump_for(s->r, 10);
    srv_stop(s);
}

TEST(net_conn_listener_close_from_inside_on_frame)
{
    struct srv *s = srv_start(SRV_CLOSE_LISTENER, default_limits());
    int port = listener_port(s->l);
    int other = nt_connect(port, 0);
    NT_PUMP_UNTIL(s->r, s->opens == 1, 2000);
    int fd = nt_connect(port, 0);
    uint8_t buf[1024];
    size_t n = build_frames(buf, 4);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    NT_PUMP_UNTIL(s->r, s->l == NULL, 2000);
    ASSERT_EQ(s->frames, 1);
    ASSERT_EQ(s->closes, 2);
    nt_wait_closed(s->r, fd, 1000);
    nt_wait_closed(s->r, other, 1000);
    nt_pump_for(s->r, 10);
    close(fd);
    close(other);
    srv_stop(s);
}

TEST(net_conn_frames_before_eof_are_delivered)
{
    struct srv *s = srv_start(SRV_HOLD, default_limits());
    int fd = nt_connect(listener_port(s->l), 0);
    uint8_t buf[1024];
    size_t n = build_frames(buf, 3);
    ASSERT_EQ(write(fd, buf, n), (ssize_t)n);
    close(fd); /* like an acks=0 producer that leaves at once */
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    check_frames(s, buf, 3);
    for (int i = 0; i < s->nheld; i++)
        complete_with(s->held[i], "nobody listens");
    srv_stop(s);
}

TEST(net_conn_accept_pauses_when_out_of_descriptors)
{
    struct srv *s = srv_start(SRV_ECHO, default_limits());
    int port = listener_port(s->l);
    /* clients connect (the kernel completes the handshake), then the process runs out of
     * descriptors so that accept4 fails with EMFILE */
    int fds[4];
    for (int i = 0; i < 4; i++)
        fds[i] = nt_connect(port, 0);
    int spare = dup(0);
    ASSERT(spare >= 0);
    struct rlimit old, lim;
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)spare; /* every descriptor number >= spare is now out of reach */
    close(spare);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
    /* level-triggered epoll would report the waiting connections on every iteration; the
     * listener must stop watching instead of spinning */
    int iterations = 0;
    int64_t end = time_mono_ms() + 150;
    while (time_mono_ms() < end) {
        ASSERT_EQ(reactor_run_once(s->r, 50), 0);
        iterations++;
    }
    ASSERT_CMP(iterations, <, 30);
    ASSERT_EQ(s->opens, 0);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
    /* with descriptors back, accepting resumes by itself */
    NT_PUMP_UNTIL(s->r, s->opens == 4, 2000);
    for (int i = 0; i < 4; i++)
        close(fds[i]);
    srv_stop(s);
}
