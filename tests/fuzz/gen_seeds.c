/* Writes seed corpora for the fuzz targets: gen_seeds DIR creates DIR/fuzz_request (one valid
 * request per API, version and sample variant, with and without unknown tagged fields),
 * DIR/fuzz_batch and DIR/fuzz_compact (plain and compressed batches, under several modes) and
 * DIR/fuzz_decompress (each codec's output, raw snappy included), DIR/fuzz_raft_rpc (Raft RPC
 * frames), DIR/fuzz_scram (SASL messages: mode byte + message, see fuzz_scram.c). Built and run
 * by tests/fuzz/run; nothing here is committed output. */
#include <errno.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/iobuf.h"
#include "base/mem.h"
#include "controller/mfetch.h"
#include "group/group.h"
#include "group/records.h"
#include "kafka/api.h"
#include "kafka/batch.h"
#include "kafka/compress.h"
#include "kmsg_testenc.h"
#include "replication/rpc.h"
#include "storage/kvstore.h"

static const char *root;
static int written;

static void put(const char *target, const void *prefix, size_t plen, const void *p, size_t len)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", root, target);
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s/seed-%04d", root, target, written++);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(prefix, 1, plen, f) != plen || fwrite(p, 1, len, f) != len || fclose(f)) {
        perror(path);
        exit(1);
    }
}

static void request_seeds(void)
{
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    for (int i = 0; i < n; i++)
        for (int16_t v = apis[i].min_version; v <= apis[i].max_version; v++)
            for (int var = 0; var < TSAMPLE_VARIANTS; var++)
                for (int tags = 0; tags < 2; tags++) {
                    if (tags && !kafka_api_flexible(apis[i].key, v))
                        continue;
                    tenc_unknown_tags = tags;
                    size_t len;
                    uint8_t *req = tbuild_request(apis[i].key, v, var, &len);
                    put("fuzz_request", "", 0, req, len);
                    mem_free(req);
                }
    tenc_unknown_tags = false;
}

static uint8_t *plain_batch(size_t *len)
{
    struct kbytes keys[3] = {{(const uint8_t *)"k1", 2}, {NULL, -1}, {(const uint8_t *)"", 0}};
    struct kbytes vals[3] = {
        {(const uint8_t *)"value one", 9}, {NULL, -1}, {(const uint8_t *)"3", 1}};
    struct iobuf b;
    iobuf_init(&b);
    kbatch_build(&b, 1700000000000LL, keys, vals, 3);
    uint8_t *out = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    return out;
}

static void batch_seeds(void)
{
    size_t len;
    uint8_t *plain = plain_batch(&len);
    for (uint8_t mode = 0; mode < 4; mode++)
        put("fuzz_batch", &mode, 1, plain, len);
    static const uint8_t compact_modes[] = {0x01, 0x17, 0x8b, 0xf5};
    for (size_t i = 0; i < sizeof(compact_modes); i++)
        put("fuzz_compact", &compact_modes[i], 1, plain, len);
    for (int codec = KCOMPRESSION_GZIP; codec <= KCOMPRESSION_ZSTD; codec++) {
        uint8_t *c;
        size_t clen;
        if (kcompress_compress(codec, plain + KBATCH_HEADER_SIZE, len - KBATCH_HEADER_SIZE, &c,
                               &clen) != 0)
            exit(1);
        size_t blen = KBATCH_HEADER_SIZE + clen;
        uint8_t *batch = mem_alloc(blen);
        memcpy(batch, plain, KBATCH_HEADER_SIZE);
        memcpy(batch + KBATCH_HEADER_SIZE, c, clen);
        batch[KBATCH_OFF_ATTRIBUTES + 1] = (uint8_t)codec;
        uint32_t bl = (uint32_t)(blen - KBATCH_LOG_OVERHEAD);
        uint8_t be[4] = {(uint8_t)(bl >> 24), (uint8_t)(bl >> 16), (uint8_t)(bl >> 8), (uint8_t)bl};
        memcpy(batch + KBATCH_OFF_LENGTH, be, 4);
        kbatch_update_crc(batch, blen);
        uint8_t mode = 1; /* keep length and CRC right after mutation */
        put("fuzz_batch", &mode, 1, batch, blen);
        uint8_t cmode = (uint8_t)(0x91 | codec << 2); /* length/CRC fixed, some superseded */
        put("fuzz_compact", &cmode, 1, batch, blen);
        put("fuzz_decompress", &batch[KBATCH_OFF_ATTRIBUTES + 1], 1, c, clen);
        mem_free(batch);
        mem_free(c);
    }
    /* raw snappy */
    size_t rlen = snappy_max_compressed_length(len);
    char *raw = mem_alloc(rlen);
    if (snappy_compress((const char *)plain, len, raw, &rlen) != SNAPPY_OK)
        exit(1);
    uint8_t codec = KCOMPRESSION_SNAPPY;
    put("fuzz_decompress", &codec, 1, raw, rlen);
    mem_free(raw);
    mem_free(plain);
}

/* __consumer_offsets records for fuzz_group_records: selector byte, then the record part. */
static void put_record(uint8_t selector, struct iobuf *b)
{
    size_t len;
    uint8_t *p = iobuf_flatten(b, &len);
    put("fuzz_group_records", &selector, 1, p, len);
    mem_free(p);
    iobuf_destroy(b);
    iobuf_init(b);
}

static void group_record_seeds(void)
{
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    grec_encode_offset_key(&w, kstr_c("group-1"), kstr_c("orders"), 3);
    put_record(0, &b);
    grec_encode_group_key(&w, kstr_c("group-1"));
    put_record(0, &b);
    struct grec_offset_value v = {42, 7, kstr_c("meta"), 1700000000000};
    grec_encode_offset_value(&w, &v);
    put_record(1, &b);
    static const struct group_config cfg = {1, 1 << 30, 0, 64, 1 << 20};
    static const struct group_hooks hooks = {NULL, NULL, NULL, NULL};
    struct group_restore_member m[2] = {
        {kstr_c("m-1"), KSTR_NULL, kstr_c("c"), kstr_c("/h"), 30000, 10000,
         {(const uint8_t *)"sub", 3}, {(const uint8_t *)"asg", 3}},
        {kstr_c("m-2"), kstr_c("inst"), kstr_c("c"), kstr_c("/h"), 30000, 10000,
         {(const uint8_t *)"sub", 3}, {(const uint8_t *)"", 0}},
    };
    struct group_restore r = {kstr_c("consumer"), 3, kstr_c("range"), kstr_c("m-1"), 5, m, 2};
    struct group *g = group_new(kstr_c("group-1"), &cfg, &hooks, 0);
    group_restore(g, &r, 0);
    grec_encode_group_value(&w, g);
    put_record(2, &b);
    group_free(g, 0);
    iobuf_destroy(&b);
}

/* Inter-broker Raft RPC frames for fuzz_raft_rpc: each whole frame, and each as type byte +
 * body (the target's CRC-bypassing half). */
static void put_rpc(struct iobuf *b)
{
    size_t len;
    uint8_t *p = iobuf_flatten(b, &len);
    put("fuzz_raft_rpc", NULL, 0, p + 4, len - 4);
    put("fuzz_raft_rpc", p + 4 + 2, 1, p + 4 + RPC_HEADER_BYTES, len - 4 - RPC_HEADER_BYTES);
    mem_free(p);
    iobuf_destroy(b);
}

static void raft_rpc_seeds(void)
{
    struct iobuf b;
    iobuf_init(&b);
    rpc_encode_hello(&b, 1, 2, "cluster", NULL);
    put_rpc(&b);
    rpc_encode_error(&b, 2, 1, RPC_ERR_CLUSTER, "wrong cluster");
    put_rpc(&b);
    static const uint8_t command[] = {2, 0, 6, 'o', 'r', 'd', 'e', 'r', 's'};
    rpc_encode_controller(&b, RPC_CONTROLLER_REQUEST, 2, 1, 7, command, sizeof(command));
    put_rpc(&b);
    rpc_encode_controller(&b, RPC_CONTROLLER_RESPONSE, 1, 2, 7, NULL, 0);
    put_rpc(&b);
    {
        struct ctl_mfetch_req fr = {
            .from = 3, .max_bytes = 4096, .host = "127.0.0.1", .port = 9093};
        struct iobuf body;
        iobuf_init(&body);
        ctl_mfetch_req_encode(&fr, &body);
        uint8_t hdr[KBATCH_HEADER_SIZE];
        kbatch_build_empty_control(hdr);
        struct ctl_mfetch_resp resp = {0, 1, 2, 3, 3, hdr, sizeof(hdr)};
        size_t fl;
        uint8_t *f = iobuf_flatten(&body, &fl);
        iobuf_destroy(&body);
        rpc_encode_controller(&b, RPC_METADATA_FETCH, 4, 1, 9, f, fl);
        put_rpc(&b);
        mem_free(f);
        iobuf_init(&body);
        ctl_mfetch_resp_encode(&resp, &body);
        f = iobuf_flatten(&body, &fl);
        iobuf_destroy(&body);
        rpc_encode_controller(&b, RPC_METADATA_RESPONSE, 1, 4, 9, f, fl);
        put_rpc(&b);
        mem_free(f);
    }
    static const uint8_t payload[] = "batch";
    struct raft_entry e[2] = {{10, 12, 3, RAFT_ENTRY_DATA, payload, sizeof(payload)},
                              {13, 13, 3, RAFT_ENTRY_NOOP, NULL, 0}};
    struct rpc_builder rb;
    rpc_builder_init(&rb, RPC_RAFT);
    for (uint8_t t = RAFT_MSG_APPEND; t < RAFT_MSG_TYPE_END_; t++) {
        struct raft_msg m = {.type = t, .term = 3, .index = 9, .log_term = 2, .commit = 8,
                             .last = 13};
        if (t == RAFT_MSG_APPEND) {
            m.entries = e;
            m.n_entries = 2;
        }
        if (t == RAFT_MSG_INSTALL) {
            m.conf.n_voters = 2;
            m.conf.voters[0] = 1;
            m.conf.voters[1] = 2;
        }
        struct rpc_group g = {t % 2 ? "orders" : RPC_CONTROLLER_TOPIC, t % 2 ? 6 : 18, t};
        rpc_builder_add(&rb, &g, &m);
    }
    rpc_builder_finish(&rb, 1, 2, &b);
    put_rpc(&b);
    rpc_builder_destroy(&rb);
    rpc_builder_init(&rb, RPC_HEARTBEATS);
    for (int i = 0; i < 8; i++) {
        struct raft_msg m = {.type = i % 2 ? RAFT_MSG_HEARTBEAT : RAFT_MSG_HEARTBEAT_RESP,
                             .term = 4, .commit = i - 1, .reject = i == 3};
        struct rpc_group g = {i % 3 ? "orders" : "users", i % 3 ? 6 : 5, i};
        rpc_builder_add(&rb, &g, &m);
    }
    rpc_builder_finish(&rb, 1, 2, &b);
    put_rpc(&b);
    rpc_builder_destroy(&rb);
}

/* SASL messages for fuzz_scram: the mode byte (fuzz_scram.c), then the message. The SCRAM ones
 * are the RFC 7677 exchange (user "user", password "pencil") and, for mode 2, the same with
 * SHA-512 (values from python3's hashlib), which the target's prepared exchanges accept. */
static void put_sasl(uint8_t mode, const char *msg, size_t len)
{
    put("fuzz_scram", &mode, 1, msg, len);
}

static void scram_seeds(void)
{
#define NONCE "rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    static const struct {
        uint8_t mode;
        const char *msg;
    } seeds[] = {
        {0, "n,,n=user,r=rOprNGfwEbeRWgbNEkqO"},
        {0, "y,a=a=2Cb=3D,n=a=2Cb=3D,r=abc,tokenauth=true,x=1"},
        {0, "p=tls-unique,,n=user,r=abc"},
        {1, "c=biws,r=" NONCE ",p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="},
        {1, "c=biws,r=" NONCE ",x=1,p=IhwEOhboL25RstTdvZrPEOlE5bjYNyL1Go4fmyTI92U="},
        {2, "c=biws,r=" NONCE ",p=gMGXRcevScNtxZ6/8lQYpGtnsNAc3mGcmNomv+xnoOMw+3R2xNJdMNnzMlTN8PPC"
            "6wdp6dybEmDYXYTxwnYPJQ=="},
        {3, "r=" NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"},
        {3, "r=" NONCE ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=16384,x=ext"},
        {4, "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="},
        {4, "e=invalid-proof"},
        {6, "Zm9vYmE="},
        {6, "W22ZaJ0SNY7soEsUEjb6gQ=="},
        {7, "n,,n=user,r=rOprNGfwEbeRWgbNEkqO,tokenauth=true"},
    };
#undef NONCE
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
        put_sasl(seeds[i].mode, seeds[i].msg, strlen(seeds[i].msg));
    static const char plain[] = "\0user\0pencil", plain_authzid[] = "user\0user\0pencil";
    put_sasl(5, plain, sizeof(plain) - 1);
    put_sasl(5, plain_authzid, sizeof(plain_authzid) - 1);
}

/* A store's file as the store writes it: a few directories' values, replaced and deleted ones
 * among them, and a file with only its header. */
static void kvstore_seeds(void)
{
    char dir[] = "/tmp/gen-seeds-kv.XXXXXX", path[64], tmp[80];
    if (!mkdtemp(dir))
        exit(1);
    snprintf(path, sizeof(path), "%s/kvstore", dir);
    for (int round = 0; round < 2; round++) {
        struct kvstore *kv;
        if (kv_open(path, &kv) != 0)
            exit(1);
        for (int i = 0; round > 0 && i < 6; i++) {
            char d[32], v[32];
            snprintf(d, sizeof(d), "topic-%d", i % 3);
            snprintf(v, sizeof(v), "value %d", i);
            kv_put(kv, d, i % 2 ? "recovery-point" : "raft-hard-state", v, strlen(v));
        }
        if (round > 0) {
            kv_del(kv, "topic-1", "raft-hard-state");
            kv_del_dir(kv, "topic-2");
        }
        if (kv_close(kv) != 0)
            exit(1);
        FILE *f = fopen(path, "rb");
        uint8_t buf[4096];
        size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;
        if (f)
            fclose(f);
        put("fuzz_kvstore", "", 0, buf, n);
    }
    unlink(path);
    snprintf(tmp, sizeof(tmp), "%s", dir);
    rmdir(tmp);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_seeds DIR\n");
        return 2;
    }
    root = argv[1];
    if (mkdir(root, 0755) != 0 && errno != EEXIST) {
        perror(root);
        return 1;
    }
    request_seeds();
    batch_seeds();
    group_record_seeds();
    raft_rpc_seeds();
    scram_seeds();
    kvstore_seeds();
    printf("%d seeds in %s\n", written, root);
    return 0;
}
