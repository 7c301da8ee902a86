/* The metadata fetch codec (controller/mfetch.h) and an observer runtime
 * (ctl_runtime_open_observer) facing a fake controller: a bare transport for node 1 whose
 * answers the test writes by hand, so hostile answers can be aimed at the fetch in flight. */
#include <unistd.h>

#include "base/errors.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "controller/mfetch.h"
#include "controller/records.h"
#include "controller/request.h"
#include "controller/runtime.h"
#include "kafka/batch.h"
#include "kafka/errors.h"
#include "net/conn.h"
#include "net_test_util.h"
#include "replication/transport.h"
#include "test.h"

static uint8_t *flat(struct iobuf *b, size_t *len)
{
    uint8_t *p = iobuf_flatten(b, len);
    iobuf_destroy(b);
    return p;
}

TEST(controller_mfetch_codec_roundtrip_and_hostile_bytes)
{
    struct ctl_mfetch_req req = {.from = 42, .max_bytes = 4096, .host = "10.0.0.7", .port = 9093};
    struct iobuf b;
    iobuf_init(&b);
    ctl_mfetch_req_encode(&req, &b);
    size_t len;
    uint8_t *p = flat(&b, &len);
    struct ctl_mfetch_req got;
    ASSERT_EQ(ctl_mfetch_req_decode(p, len, &got), 0);
    ASSERT_EQ(got.from, 42);
    ASSERT_EQ(got.max_bytes, 4096);
    ASSERT_STREQ(got.host, "10.0.0.7");
    ASSERT_EQ(got.port, 9093);
    for (size_t cut = 0; cut < len; cut++)
        ASSERT_EQ(ctl_mfetch_req_decode(p, cut, &got), -ERR_CORRUPT);
    uint8_t *longer = mem_alloc(len + 1);
    memcpy(longer, p, len);
    longer[len] = 0;
    ASSERT_EQ(ctl_mfetch_req_decode(longer, len + 1, &got), -ERR_CORRUPT); /* trailing byte */
    mem_free(longer);
    p[0] = 0x80; /* negative from */
    ASSERT_EQ(ctl_mfetch_req_decode(p, len, &got), -ERR_CORRUPT);
    p[0] = 0;
    p[14] = 0; /* a NUL in the host */
    ASSERT_EQ(ctl_mfetch_req_decode(p, len, &got), -ERR_CORRUPT);
    mem_free(p);

    uint8_t data[100];
    memset(data, 0xab, sizeof(data));
    struct ctl_mfetch_resp resp = {KERR_NONE, 2, 5, 99, 42, data, sizeof(data)};
    iobuf_init(&b);
    ctl_mfetch_resp_encode(&resp, &b);
    p = flat(&b, &len);
    ASSERT_EQ(len, CTL_MFETCH_RESP_FIXED + sizeof(data));
    struct ctl_mfetch_resp r;
    ASSERT_EQ(ctl_mfetch_resp_decode(p, len, &r), 0);
    ASSERT_EQ(r.leader, 2);
    ASSERT_EQ(r.term, 5);
    ASSERT_EQ(r.commit, 99);
    ASSERT_EQ(r.from, 42);
    ASSERT_EQ(r.len, sizeof(data));
    ASSERT_MEMEQ(r.data, data, sizeof(data));
    for (size_t cut = 0; cut < len; cut++)
        ASSERT_EQ(ctl_mfetch_resp_decode(p, cut, &r), -ERR_CORRUPT);
    p[CTL_MFETCH_RESP_FIXED - 4] = 0x7f; /* data length far beyond the body */
    ASSERT_EQ(ctl_mfetch_resp_decode(p, len, &r), -ERR_CORRUPT);
    mem_free(p);

    /* batch walking: a cut or nonsense batch is an error, never a read past the end */
    uint8_t hdr[KBATCH_HEADER_SIZE];
    kbatch_build_empty_control(hdr);
    size_t pos = 0;
    const uint8_t *bt;
    size_t bl;
    int64_t base, last;
    ASSERT_EQ(ctl_mfetch_next_batch(hdr, sizeof(hdr), &pos, &bt, &bl, &base, &last), 1);
    ASSERT_EQ(bl, sizeof(hdr));
    ASSERT_EQ(ctl_mfetch_next_batch(hdr, sizeof(hdr), &pos, &bt, &bl, &base, &last), 0);
    pos = 0;
    ASSERT_EQ(ctl_mfetch_next_batch(hdr, sizeof(hdr) - 1, &pos, &bt, &bl, &base, &last),
              -ERR_CORRUPT);
    ASSERT_EQ(pos, 0);
    hdr[8] = 0x10; /* batch length beyond the buffer */
    ASSERT_EQ(ctl_mfetch_next_batch(hdr, sizeof(hdr), &pos, &bt, &bl, &base, &last), -ERR_CORRUPT);
}

/* ---- an observer against a fake controller ---- */

static struct {
    struct reactor *r;
    int port[5];
    struct transport *t1, *t4;
    struct ctl_runtime *obs;
    size_t fetches;     /* fetches node 1 received */
    uint64_t fetch_id;  /* the last one's request id */
    int64_t fetch_from; /* ... and offset */
    size_t requests;    /* controller requests node 1 received (forwarded commands)... */
    uint64_t req_id;    /* ...the last one's id */
    int changes;        /* the observer's on_image_change calls */
    size_t answers;     /* controller responses the observer received */
} F;

static void no_msg(int32_t from, const struct rpc_group *g, const struct raft_msg *m, void *data)
{
}

static void fake_ctl(int32_t from, uint8_t type, uint64_t id, const uint8_t *body, size_t len,
                     void *data)
{
    struct ctl_mfetch_req req;
    ASSERT_EQ(from, 4);
    if (type == RPC_CONTROLLER_REQUEST) {
        F.requests++;
        F.req_id = id;
        return;
    }
    ASSERT_EQ(type, RPC_METADATA_FETCH);
    ASSERT_EQ(ctl_mfetch_req_decode(body, len, &req), 0);
    ASSERT_EQ(req.port, F.port[4]);
    F.fetches++;
    F.fetch_id = id;
    F.fetch_from = req.from;
}

static void obs_ctl(int32_t from, uint8_t type, uint64_t id, const uint8_t *body, size_t len,
                    void *data)
{
    if (type == RPC_CONTROLLER_RESPONSE)
        F.answers++;
    ctl_runtime_deliver(F.obs, from, type, id, body, len);
}

static int obs_send_frame(struct ctl_runtime *rt, int32_t to, uint8_t type, uint64_t id,
                          const uint8_t *body, size_t len, void *data)
{
    return transport_send_controller(F.t4, to, type, id, body, len);
}

static void obs_change(struct ctl_runtime *rt, const struct ctl_image *before,
                       const struct ctl_image *after, void *data)
{
    F.changes++;
}

static void done_cb(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    *(int16_t *)data = a->error;
}

static void pump(void)
{
    ASSERT_EQ(reactor_run_once(F.r, 5), 0);
    ctl_runtime_tick(F.obs, time_mono_ms());
    transport_flush(F.t1);
    transport_flush(F.t4);
}

#define FPUMP_UNTIL(cond, ms)                                                                      \
    do {                                                                                           \
        int64_t end_ = time_mono_ms() + (ms);                                                      \
        while (!(cond) && time_mono_ms() < end_)                                                   \
            pump();                                                                                \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, "timed out waiting for %s", #cond);                      \
    } while (0)

static bool t1_ready(void)
{
    struct transport_peer_stats st;
    ASSERT_EQ(transport_peer_stats(F.t1, 4, &st), 0);
    return st.connected;
}

static int free_port(void)
{
    int port;
    int fd = listener_bind_tcp("127.0.0.1", 0, &port);
    ASSERT(fd >= 0);
    close(fd);
    return port;
}

/* A batch of one REGISTER_BROKER record for node id at base offset `base`. */
static uint8_t *broker_batch(int32_t id, int64_t base, size_t *len)
{
    struct ctl_rec rec = {.type = CTL_REC_REGISTER_BROKER};
    rec.broker.node_id = id;
    rec.broker.incarnation.b[0] = 1;
    snprintf(rec.broker.host, sizeof(rec.broker.host), "h%d", id);
    rec.broker.port = 9000 + id;
    struct iobuf v;
    iobuf_init(&v);
    struct kwriter w = {&v};
    ctl_rec_encode(&w, &rec);
    size_t vl;
    uint8_t *val = flat(&v, &vl);
    struct kbytes key = {NULL, -1}, value = {val, (int32_t)vl};
    struct iobuf b;
    iobuf_init(&b);
    kbatch_build(&b, 1, &key, &value, 1);
    uint8_t *p = flat(&b, len);
    mem_free(val);
    for (int i = 0; i < 8; i++) /* baseOffset, outside the CRC */
        p[i] = (uint8_t)((uint64_t)base >> (56 - 8 * i));
    return p;
}

/* Waits for the next fetch, then answers it with body. */
static void answer_next(const uint8_t *body, size_t len, uint64_t id_delta)
{
    size_t n = F.fetches;
    FPUMP_UNTIL(F.fetches > n && t1_ready(), 3000);
    ASSERT_EQ(
        transport_send_controller(F.t1, 4, RPC_METADATA_RESPONSE, F.fetch_id + id_delta, body, len),
        0);
    for (int i = 0; i < 5; i++)
        pump();
}

static void answer_batches(int64_t commit, const uint8_t *data, size_t dlen, uint64_t id_delta)
{
    size_t n = F.fetches;
    FPUMP_UNTIL(F.fetches > n && t1_ready(), 3000);
    struct ctl_mfetch_resp r = {KERR_NONE, 1, 3, commit, F.fetch_from, data, dlen};
    struct iobuf b;
    iobuf_init(&b);
    ctl_mfetch_resp_encode(&r, &b);
    size_t len;
    uint8_t *p = flat(&b, &len);
    ASSERT_EQ(
        transport_send_controller(F.t1, 4, RPC_METADATA_RESPONSE, F.fetch_id + id_delta, p, len),
        0);
    mem_free(p);
    for (int i = 0; i < 5; i++)
        pump();
}

TEST(controller_observer_hostile_answers_refused)
{
    memset(&F, 0, sizeof(F));
    log_set_level(getenv("CTL_RUNTIME_TEST_LOG") ? LOG_INFO : LOG_ERROR);
    F.r = reactor_new();
    F.port[1] = free_port();
    F.port[4] = free_port();
    struct transport_peer_config p1 = {1, "127.0.0.1", F.port[1]};
    struct transport_peer_config p4 = {4, "127.0.0.1", F.port[4]};
    struct transport_config c1 = {.self_id = 1,
                                  .cluster_id = "obs",
                                  .listen_host = "127.0.0.1",
                                  .listen_port = F.port[1],
                                  .peers = &p4,
                                  .n_peers = 1};
    struct transport_config c4 = {.self_id = 4,
                                  .cluster_id = "obs",
                                  .listen_host = "127.0.0.1",
                                  .listen_port = F.port[4],
                                  .peers = &p1,
                                  .n_peers = 1};
    ASSERT_EQ(transport_new(F.r, &c1, no_msg, NULL, &F.t1), 0);
    ASSERT_EQ(transport_new(F.r, &c4, no_msg, NULL, &F.t4), 0);
    transport_set_controller_cb(F.t1, fake_ctl, NULL);
    transport_set_controller_cb(F.t4, obs_ctl, NULL);
    struct ctl_voter v = {1, "127.0.0.1", F.port[1]};
    struct ctl_runtime_options o;
    ctl_runtime_options_default(&o);
    o.send_frame = obs_send_frame;
    o.on_image_change = obs_change;
    /* a voter id, bad address: refused */
    ASSERT_EQ(ctl_runtime_open_observer(1, &v, 1, "127.0.0.1", F.port[4], &o, 0, &F.obs),
              -ERR_INVALID);
    ASSERT_EQ(ctl_runtime_open_observer(4, &v, 1, "", F.port[4], &o, 0, &F.obs), -ERR_INVALID);
    ASSERT_EQ(
        ctl_runtime_open_observer(4, &v, 1, "127.0.0.1", F.port[4], &o, time_mono_ms(), &F.obs), 0);
    ASSERT_EQ(ctl_runtime_leader(F.obs), RAFT_NONE);

    size_t l0, l1;
    uint8_t *b0 = broker_batch(7, 0, &l0), *b1 = broker_batch(8, 1, &l1);
    const struct ctl_image *img = ctl_runtime_image(F.obs);

    /* garbage body, a wrong request id, an answer for another offset: nothing applied */
    static const uint8_t junk[] = {1, 2, 3};
    answer_next(junk, sizeof(junk), 0);
    answer_batches(0, b0, l0, 1000);
    ASSERT_EQ(ctl_runtime_applied(F.obs), -1);
    /* a batch above the reported commit, a gap, a cut batch: refused */
    answer_batches(-1, b0, l0, 0);
    ASSERT_EQ(ctl_runtime_applied(F.obs), -1);
    answer_batches(1, b1, l1, 0); /* starts at 1, the observer needs 0 */
    ASSERT_EQ(ctl_runtime_applied(F.obs), -1);
    answer_batches(0, b0, l0 - 3, 0);
    ASSERT_EQ(ctl_runtime_applied(F.obs), -1);
    ASSERT_EQ(img->n_brokers, 0);
    ASSERT_EQ(F.changes, 0);
    ASSERT(!ctl_runtime_caught_up(F.obs));

    /* a good answer with a cut second batch: the first is applied, the rest asked again */
    size_t both_len = l0 + l1 - 10;
    uint8_t *both = mem_alloc(l0 + l1);
    memcpy(both, b0, l0);
    memcpy(both + l0, b1, l1);
    answer_batches(1, both, both_len, 0);
    ASSERT_EQ(ctl_runtime_applied(F.obs), 0);
    ASSERT(ctl_image_broker(img, 7) != NULL);
    ASSERT_EQ(F.changes, 1);
    ASSERT_EQ(ctl_runtime_leader(F.obs), 1);
    ASSERT_EQ(ctl_runtime_term(F.obs), 3);
    ASSERT(!ctl_runtime_caught_up(F.obs)); /* commit 1 reported, 0 applied */
    FPUMP_UNTIL(F.fetch_from == 1, 3000);  /* asks from 1 at once */
    answer_batches(1, b1, l1, 0);
    ASSERT_EQ(ctl_runtime_applied(F.obs), 1);
    ASSERT(ctl_image_broker(img, 8) != NULL);
    ASSERT(ctl_runtime_caught_up(F.obs));
    ASSERT_EQ(ctl_runtime_skipped(F.obs), 0);

    /* a batch whose record does not decode (CRC broken): skipped like a voter skips it */
    uint8_t *b2 = broker_batch(9, 2, &l0);
    b2[l0 - 1] ^= 0xff;
    answer_batches(2, b2, l0, 0);
    ASSERT_EQ(ctl_runtime_applied(F.obs), 2);
    ASSERT(ctl_image_broker(img, 9) == NULL);
    ASSERT_EQ(ctl_runtime_skipped(F.obs), 1);

    /* "not the leader": no leader known until someone answers */
    struct ctl_mfetch_resp nl = {KERR_NOT_CONTROLLER, -1, 3, -1, 3, NULL, 0};
    struct iobuf b;
    iobuf_init(&b);
    ctl_mfetch_resp_encode(&nl, &b);
    size_t len;
    uint8_t *p = flat(&b, &len);
    answer_next(p, len, 0);
    ASSERT_EQ(ctl_runtime_leader(F.obs), RAFT_NONE);
    mem_free(p);

    /* a command with no leader known waits for one (a broker forwards through a change of
     * controller), is sent to the leader the next answer names, and answered by it */
    struct ctl_request hb = {.type = CTL_REQ_HEARTBEAT};
    hb.reg.node_id = 4;
    int16_t err = -1;
    ctl_runtime_submit(F.obs, &hb, done_cb, &err);
    ASSERT_EQ(err, -1);
    ASSERT_EQ(ctl_runtime_pending(F.obs), 1);
    for (int i = 0; i < 5; i++)
        pump();
    ASSERT_EQ(F.requests, 0);
    answer_batches(2, NULL, 0, 0); /* leader 1, term 3 */
    ASSERT_EQ(ctl_runtime_leader(F.obs), 1);
    FPUMP_UNTIL(F.requests == 1, 3000);
    uint8_t ans[CTL_ANSWER_BYTES];
    /* it answers NOT_CONTROLLER: not sent to it again in the same term, still waiting */
    ctl_answer_encode(&(struct ctl_answer){.error = KERR_NOT_CONTROLLER}, ans);
    size_t answers = F.answers;
    ASSERT_EQ(transport_send_controller(F.t1, 4, RPC_CONTROLLER_RESPONSE, F.req_id, ans,
                                        sizeof(ans)),
              0);
    FPUMP_UNTIL(F.answers == answers + 1, 3000); /* the observer has taken the answer */
    ASSERT_EQ(ctl_runtime_pending(F.obs), 1);
    for (int i = 0; i < 20; i++)
        pump();
    ASSERT_EQ(F.requests, 1);
    ASSERT_EQ(err, -1);
    /* a second command goes to the leader and its answer is the command's */
    int16_t err2 = -1;
    ctl_runtime_submit(F.obs, &hb, done_cb, &err2);
    FPUMP_UNTIL(F.requests == 2, 3000);
    ctl_answer_encode(&(struct ctl_answer){.error = KERR_NONE}, ans);
    ASSERT_EQ(transport_send_controller(F.t1, 4, RPC_CONTROLLER_RESPONSE, F.req_id, ans,
                                        sizeof(ans)),
              0);
    FPUMP_UNTIL(err2 == KERR_NONE, 3000);
    ASSERT_EQ(ctl_runtime_pending(F.obs), 1);
    mem_free(b2);
    mem_free(both);
    mem_free(b0);
    mem_free(b1);
    ctl_runtime_close(F.obs); /* answers the one still waiting */
    ASSERT_EQ(err, KERR_NOT_CONTROLLER);
    transport_free(F.t4);
    transport_free(F.t1);
    reactor_free(F.r);
    nt_leak_check();
}
