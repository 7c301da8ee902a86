/* Broker lifecycle and request dispatch.
 *
 * State: a broker is STARTING (broker_start: catalog locked, logs recovered, flusher and
 * listener up), RUNNING (frames dispatched on the reactor thread), then STOPPED (broker_stop:
 * listener closed, parked requests answered, logs closed cleanly, marker written).
 *
 * Invariants:
 *  1. Every frame gets exactly one of: a response in request order, no response (Produce
 *     acks=0), or the connection closed (malformed frame, unknown API, unsupported version of
 *     an API other than ApiVersions).
 *  2. The scratch arena is empty between requests: handlers copy what they keep.
 *  3. Bytes from the network are never trusted: decoders bound every length before use. */
#include "broker/broker.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/authz.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "broker/legacy.h"
#include "broker/producers.h"
#include "broker/quotas.h"
#include "broker/sasl.h"
#include "broker/schemas.h"
#include "kafka/api.h"
#include "kafka/errors.h"
#include "storage/catalog.h"
#include "storage/cleaner.h"
#include "storage/fdcache.h"
#include "storage/flusher.h"
#include "storage/kvstore.h"
#include "storage/plog.h"

#define MAX_QUEUED_RESPONSE_BYTES (64u << 20)
#define MAX_INFLIGHT_REQUESTS 1000

typedef int (*handler_fn)(struct request *req);

/* log.max.open.files, or from the descriptor limit: what the connections and the broker's own
 * files (listeners, the metadata log, the transport: OPEN_FILES_RESERVE) leave over. */
#define OPEN_FILES_RESERVE 256
static size_t open_files_limit(const struct broker_config *cfg)
{
    if (cfg->log_max_open_files > 0)
        return (size_t)MAX(cfg->log_max_open_files, FDCACHE_MIN_LIMIT);
    struct rlimit rl;
    uint64_t nofile = 1u << 20;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        nofile = rl.rlim_cur;
    uint64_t reserve = (uint64_t)cfg->max_connections + OPEN_FILES_RESERVE;
    uint64_t limit = nofile > reserve + 1024 ? nofile - reserve : nofile / 2;
    return (size_t)MAX(limit, (uint64_t)FDCACHE_MIN_LIMIT);
}

static handler_fn handler_for(int16_t key)
{
    switch (key) {
    case KAPI_API_VERSIONS:
        return handle_api_versions;
    case KAPI_METADATA:
        return handle_metadata;
    case KAPI_PRODUCE:
        return handle_produce;
    case KAPI_FETCH:
        return handle_fetch;
    case KAPI_LIST_OFFSETS:
        return handle_list_offsets;
    case KAPI_CREATE_TOPICS:
        return handle_create_topics;
    case KAPI_DELETE_TOPICS:
        return handle_delete_topics;
    case KAPI_CREATE_PARTITIONS:
        return handle_create_partitions;
    case KAPI_DESCRIBE_CONFIGS:
        return handle_describe_configs;
    case KAPI_ALTER_CONFIGS:
        return handle_alter_configs;
    case KAPI_DELETE_RECORDS:
        return handle_delete_records;
    case KAPI_INIT_PRODUCER_ID:
        return handle_init_producer_id;
    case KAPI_FIND_COORDINATOR:
        return handle_find_coordinator;
    case KAPI_JOIN_GROUP:
        return handle_join_group;
    case KAPI_SYNC_GROUP:
        return handle_sync_group;
    case KAPI_HEARTBEAT:
        return handle_heartbeat;
    case KAPI_LEAVE_GROUP:
        return handle_leave_group;
    case KAPI_OFFSET_COMMIT:
        return handle_offset_commit;
    case KAPI_OFFSET_FETCH:
        return handle_offset_fetch;
    case KAPI_DESCRIBE_GROUPS:
        return handle_describe_groups;
    case KAPI_LIST_GROUPS:
        return handle_list_groups;
    case KAPI_DELETE_GROUPS:
        return handle_delete_groups;
    case KAPI_OFFSET_DELETE:
        return handle_offset_delete;
    case KAPI_INCREMENTAL_ALTER_CONFIGS:
        return handle_incremental_alter_configs;
    case KAPI_DESCRIBE_LOG_DIRS:
        return handle_describe_log_dirs;
    case KAPI_DESCRIBE_CLUSTER:
        return handle_describe_cluster;
    case KAPI_ALTER_PARTITION_REASSIGNMENTS:
        return handle_alter_partition_reassignments;
    case KAPI_LIST_PARTITION_REASSIGNMENTS:
        return handle_list_partition_reassignments;
    case KAPI_DESCRIBE_ACLS:
        return handle_describe_acls;
    case KAPI_CREATE_ACLS:
        return handle_create_acls;
    case KAPI_DELETE_ACLS:
        return handle_delete_acls;
    case KAPI_SASL_HANDSHAKE:
        return handle_sasl_handshake;
    case KAPI_SASL_AUTHENTICATE:
        return handle_sasl_authenticate;
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS:
        return handle_describe_user_scram_credentials;
    case KAPI_DESCRIBE_CLIENT_QUOTAS:
        return handle_describe_client_quotas;
    case KAPI_ALTER_CLIENT_QUOTAS:
        return handle_alter_client_quotas;
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS:
        return handle_alter_user_scram_credentials;
    case KAPI_ADD_RAFT_VOTER:
        return handle_add_raft_voter;
    case KAPI_REMOVE_RAFT_VOTER:
        return handle_remove_raft_voter;
    case KAPI_OFFSET_FOR_LEADER_EPOCH:
        return handle_offset_for_leader_epoch;
    case KAPI_ELECT_LEADERS:
        return handle_elect_leaders;
    }
    return NULL;
}

void response_begin(struct response *resp, const struct kreq_header *h)
{
    iobuf_init(&resp->buf);
    resp->w.b = &resp->buf;
    resp->errors_before = kw_error_codes_written();
    resp->api_key = h->api_key;
    resp->recv_ns = h->recv_ns;
    resp->stats = h->stats;
    resp->size_pos = kw_pos(&resp->w);
    kw_i32(&resp->w, 0);
    kmsg_encode_resp_header(&resp->w, h);
}

void response_seal(struct response *resp)
{
    size_t total = iobuf_total(&resp->buf) - resp->size_pos - 4;
    CHECK(total <= INT32_MAX);
    kw_patch_i32(&resp->w, resp->size_pos, (int32_t)total);
    bool error = kw_error_codes_written() != resp->errors_before;
    if (resp->stats)
        kreq_stats_completed(resp->stats, resp->api_key, resp->recv_ns, error);
}

void response_send(struct response *resp, struct conn_slot *slot)
{
    response_seal(resp);
    conn_slot_complete(slot, &resp->buf);
    iobuf_destroy(&resp->buf);
}

/* A response held for a quota. */
struct held_response {
    struct list_node node; /* in broker.held */
    struct broker *b;
    struct conn_slot *slot;
    struct iobuf buf;
    struct reactor_timer timer;
};

static void held_send(struct held_response *h)
{
    list_remove(&h->node);
    reactor_timer_stop(h->b->r, &h->timer);
    conn_slot_complete(h->slot, &h->buf);
    iobuf_destroy(&h->buf);
    mem_free(h);
}

static void held_due(struct reactor *r, struct reactor_timer *t, void *data)
{
    (void)r;
    (void)t;
    held_send(data);
}

void response_send_after(struct broker *b, struct response *resp, struct conn_slot *slot,
                         int64_t delay_ms)
{
    if (delay_ms <= 0 || b->stopping) {
        response_send(resp, slot);
        return;
    }
    response_seal(resp);
    struct held_response *h = mem_calloc(1, sizeof(*h));
    h->b = b;
    h->slot = slot;
    iobuf_init(&h->buf);
    iobuf_move(&h->buf, &resp->buf);
    iobuf_destroy(&resp->buf);
    list_push_back(&b->held, &h->node);
    reactor_timer_init(&h->timer, held_due, h);
    reactor_timer_start(b->r, &h->timer, delay_ms);
}

static void held_flush(struct broker *b)
{
    while (!list_empty(&b->held))
        held_send(LIST_ENTRY(b->held.next, struct held_response, node));
}

int16_t kafka_error_from_rc(int rc)
{
    switch (-rc) {
    case 0:
        return KERR_NONE;
    case ERR_OUT_OF_RANGE:
        return KERR_OFFSET_OUT_OF_RANGE;
    case ERR_CORRUPT:
        return KERR_CORRUPT_MESSAGE;
    case ERR_INVALID:
        return KERR_INVALID_RECORD;
    case ERR_TOO_LARGE:
        return KERR_MESSAGE_TOO_LARGE;
    case ERR_UNSUPPORTED:
        return KERR_UNSUPPORTED_COMPRESSION_TYPE;
    case ERR_NOT_FOUND:
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    default:
        return KERR_KAFKA_STORAGE_ERROR; /* ERR_FENCED, ENOSPC, EIO, ... */
    }
}

/* The request is answered by closing the connection: an error for its API's metrics. */
static void log_bad_request(struct broker *b, struct conn *c, const char *why, int16_t key,
                            int16_t version)
{
    kreq_stats_for(&b->req_stats, handler_for(key) ? key : -1)->errors++;
    log_warn("request_rejected", "peer=%s reason=%s api_key=%d api_version=%d action=close",
             conn_peer(c), why, key, version);
}

static void on_frame(struct conn *c, uint8_t *frame, size_t len, void *data)
{
    struct session *s = conn_get_user(c);
    struct broker *b = s->b;
    struct request req = {
        .b = b, .s = s, .conn = c, .arena = &b->scratch, .frame = frame, .frame_len = len};
    int64_t recv_ns = time_mono_ns();
    if (s->sasl && sasl_failed(s)) { /* nothing more after a failed authentication */
        conn_close(c);
        return;
    }
    if (s->sasl && sasl_raw_pending(s)) { /* SaslHandshake v0: a raw token, no Kafka header */
        sasl_raw_token(s, frame, len);
        return;
    }
    kr_init(&req.body, frame, len);
    if (kmsg_decode_header(&req.body, &req.hdr) != 0) {
        kreq_stats_for(&b->req_stats, -1)->requests++;
        log_bad_request(b, c, "bad_header", -1, -1);
        conn_close(c);
        return;
    }
    int16_t key = req.hdr.api_key, ver = req.hdr.api_version;
    const struct kafka_api_info *api = kafka_api_find(key);
    handler_fn fn = handler_for(key);
    if (!api || !fn) {
        kreq_stats_for(&b->req_stats, -1)->requests++;
        log_bad_request(b, c, "unknown_api_key", key, ver);
        conn_close(c);
        return;
    }
    if (s->sasl && !sasl_allows(s, key)) { /* a SASL listener's connection (broker/sasl.h) */
        kreq_stats_for(&b->req_stats, key)->requests++;
        log_bad_request(b, c, "not_authenticated", key, ver);
        conn_close(c);
        return;
    }
    kreq_stats_for(&b->req_stats, key)->requests++;
    req.hdr.recv_ns = recv_ns;
    req.hdr.stats = &b->req_stats;
    if (ver < api->min_version || ver > api->max_version) {
        if (key == KAPI_API_VERSIONS) {
            api_versions_reply_unsupported(&req);
        } else {
            log_bad_request(b, c, "unsupported_version", key, ver);
            conn_close(c);
        }
        arena_reset(&b->scratch);
        return;
    }
    int rc = fn(&req);
    if (rc != 0) {
        log_bad_request(b, c, "malformed_body", key, ver);
        conn_close(c);
    }
    arena_reset(&b->scratch);
}

static void on_open(struct conn *c, void *data)
{
    struct broker *b = data;
    struct session *s = mem_calloc(1, sizeof(*s));
    s->b = b;
    s->conn = c;
    list_init(&s->fetch_ops);
    conn_set_user(c, s);
    sasl_session_open(s);
    log_debug("connection_opened", "peer=%s id=%llu", conn_peer(c), (unsigned long long)conn_id(c));
}

static void on_close(struct conn *c, void *data)
{
    struct session *s = conn_get_user(c);
    if (!s)
        return;
    fetch_cancel_session(s);
    sasl_session_close(s);
    log_debug("connection_closed", "peer=%s id=%llu", conn_peer(c), (unsigned long long)conn_id(c));
    conn_set_user(c, NULL);
    mem_free(s);
}

static void on_flusher(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct broker *b = data;
    flusher_poll(b->fl);
}

static void on_retention_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct broker *b = data;
    topics_apply_retention(b);
    reactor_timer_start(r, t, b->cfg->log_retention_check_interval_ms);
}

/* A standalone node elects itself and registers within a few ms (three syncs); this bounds the
 * wait for a sick disk. */
#define STANDALONE_LIVE_MAX_MS 10000

static void on_cleaner(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct broker *b = data;
    /* a pass ended: a thread is free, and the log may need another pass (full key map) */
    if (cleaner_poll(b->cleaner) > 0)
        topics_offer_cleaning(b);
}

static void on_cleaner_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct broker *b = data;
    topics_offer_cleaning(b);
    reactor_timer_start(r, t, b->cfg->log_cleaner_backoff_ms);
}

static int cleaner_begin(struct broker *b, char *err, size_t errcap)
{
    const struct broker_config *cfg = b->cfg;
    if (!cfg->log_cleaner_enable)
        return 0;
    struct cleaner_config cc = {cfg->log_cleaner_threads, cfg->log_cleaner_dedupe_buffer_size,
                                cfg->log_cleaner_io_max_bytes_per_second,
                                true /* partition logs are Raft logs: every offset stays */};
    int rc = cleaner_start(&cc, &b->cleaner);
    if (rc == 0) {
        rc = reactor_add(b->r, cleaner_fd(b->cleaner), REACTOR_READ, on_cleaner, b);
        if (rc != 0) {
            cleaner_stop(b->cleaner);
            b->cleaner = NULL;
        }
    }
    if (rc != 0) {
        snprintf(err, errcap, "cannot start the log cleaner: %s", err_str(rc));
        return rc;
    }
    reactor_timer_init(&b->cleaner_timer, on_cleaner_timer, b);
    reactor_timer_start(b->r, &b->cleaner_timer, cfg->log_cleaner_backoff_ms);
    return 0;
}

/* Stops the cleaner; passes still running are abandoned (their logs stay consistent). */
static void cleaner_end(struct broker *b)
{
    if (!b->cleaner)
        return;
    reactor_timer_stop(b->r, &b->cleaner_timer);
    reactor_del(b->r, cleaner_fd(b->cleaner));
    cleaner_stop(b->cleaner);
    b->cleaner = NULL;
}

/* Hands the store's buffered records to the file now and then, so that a kill -9 loses little
 * of what was put (only a longer recovery: what must survive is synced when put). */
static void on_kv_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct broker *b = data;
    (void)kv_flush(b->kv); /* a failure is logged, and the next sync rewrites the file */
    reactor_timer_start(r, t, KV_FLUSH_MS);
}

static void on_flush_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct broker *b = data;
    flush_policy_tick(b);
    if (b->flush_tick_ms > 0)
        reactor_timer_start(r, t, b->flush_tick_ms);
}

/* flush.ms is rarely set: the timer runs only while some topic has a finite value, at a
 * period that serves the smallest one (within [10 ms, 1 s]). */
void flush_timer_update(struct broker *b)
{
    int64_t min_ms = INT64_MAX;
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        const struct topic *t = v;
        if (t->cfg.flush_ms < min_ms)
            min_ms = t->cfg.flush_ms;
    }
    int64_t tick = 0;
    if (min_ms < INT64_MAX / 2)
        tick = min_ms < 10 ? 10 : min_ms > 1000 ? 1000 : min_ms;
    if (tick == b->flush_tick_ms)
        return;
    b->flush_tick_ms = tick;
    if (tick > 0)
        reactor_timer_start(b->r, &b->flush_timer, tick);
    else
        reactor_timer_stop(b->r, &b->flush_timer);
}

/* meta.properties holds the cluster id (and the node id that created the directory). */
static int load_cluster_id(struct broker *b, char *err, size_t errcap)
{
    char path[BROKER_PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/meta.properties", catalog_dir(b->cat));
    FILE *f = fopen(path, "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof(line), f)) {
            if (strncmp(line, "cluster.id=", 11) == 0) {
                size_t n = strcspn(line + 11, "\r\n");
                if (n > 0 && n < sizeof(b->cluster_id)) {
                    memcpy(b->cluster_id, line + 11, n);
                    b->cluster_id[n] = '\0';
                }
            }
        }
        fclose(f);
        if (b->cluster_id[0])
            return 0;
        log_warn("meta_properties_invalid", "path=%s action=regenerate", path);
    }
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    uint8_t rnd[22];
    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
        for (size_t i = 0; i < sizeof(rnd); i++)
            rnd[i] = (uint8_t)(time_mono_ns() >> (i % 8));
    }
    for (size_t i = 0; i < sizeof(rnd); i++)
        b->cluster_id[i] = alphabet[rnd[i] & 63];
    b->cluster_id[sizeof(rnd)] = '\0';
    char tmp[BROKER_PATH_MAX + 40];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errcap, "cannot write %s: %s", tmp, strerror(errno));
        return -errno;
    }
    fprintf(f, "version=1\ncluster.id=%s\nnode.id=%d\n", b->cluster_id, b->cfg->node_id);
    if (fflush(f) != 0 || fdatasync(fileno(f)) != 0) {
        int e = errno;
        fclose(f);
        snprintf(err, errcap, "cannot write %s: %s", tmp, strerror(e));
        return -e;
    }
    fclose(f);
    if (rename(tmp, path) != 0) {
        snprintf(err, errcap, "cannot rename %s: %s", tmp, strerror(errno));
        return -errno;
    }
    return 0;
}

int broker_start(struct reactor *r, const struct broker_config *cfg, struct broker **out,
                 struct broker_startup *info, char *err, size_t errcap)
{
    struct broker *b = mem_calloc(1, sizeof(*b));
    b->r = r;
    b->cfg = cfg;
    strmap_init(&b->topics);
    arena_init(&b->scratch, 64 * 1024);
    list_init(&b->sasl_held);
    list_init(&b->held);
    kreq_stats_init(&b->req_stats);
    memset(info, 0, sizeof(*info));
    int rc;

    bool clean = false;
    rc = catalog_open(cfg->log_dirs, &b->cat, &clean);
    if (rc != 0) {
        if (rc == -EBUSY)
            snprintf(err, errcap,
                     "data directory %s is locked by another broker (only one broker may use a "
                     "data directory)",
                     cfg->log_dirs);
        else
            snprintf(err, errcap, "cannot open data directory %s: %s", cfg->log_dirs, err_str(rc));
        goto out_free;
    }
    info->clean = clean;
    rc = load_cluster_id(b, err, errcap);
    if (rc != 0)
        goto out_catalog;
    snprintf(info->cluster_id, sizeof(info->cluster_id), "%s", b->cluster_id);

    rc = flusher_start(&b->fl);
    if (rc != 0) {
        snprintf(err, errcap, "cannot start the flusher thread: %s", err_str(rc));
        goto out_catalog;
    }
    b->flusher_fd = flusher_fd(b->fl);
    rc = reactor_add(r, b->flusher_fd, REACTOR_READ, on_flusher, b);
    if (rc != 0) {
        snprintf(err, errcap, "cannot watch the flusher: %s", err_str(rc));
        goto out_flusher;
    }

    b->files = fdcache_new(open_files_limit(cfg));
    log_info("open_files_limit", "log_max_open_files=%zu", open_files_limit(cfg));
    int64_t t0 = time_mono_ms();
    char kvpath[BROKER_PATH_MAX + sizeof(KV_FILE) + 1];
    snprintf(kvpath, sizeof(kvpath), "%s/%s", cfg->log_dirs, KV_FILE);
    rc = kv_open(kvpath, &b->kv);
    if (rc != 0) {
        snprintf(err, errcap, "cannot open %s: %s", kvpath, err_str(rc));
        goto out_kv;
    }
    reactor_timer_init(&b->kv_timer, on_kv_timer, b);
    reactor_timer_start(r, &b->kv_timer, KV_FLUSH_MS);
    rc = topics_load(b, info);
    info->recovery_ms = time_mono_ms() - t0;
    if (rc != 0) {
        snprintf(err, errcap, "cannot load topics from %s: %s", cfg->log_dirs, err_str(rc));
        goto out_topics;
    }
    rc = broker_producers_start(b, err, errcap);
    if (rc != 0)
        goto out_topics;
    info->clean = clean;
    rc = groups_start(b, err, errcap);
    if (rc != 0)
        goto out_topics;
    if (authz_start(b, err, errcap) != 0) {
        rc = -ERR_INVALID;
        goto out_topics;
    }

    struct conn_limits lim = {
        .max_frame_bytes = (size_t)cfg->socket_request_max_bytes,
        .max_queued_bytes = MAX_QUEUED_RESPONSE_BYTES,
        .max_inflight = MAX_INFLIGHT_REQUESTS,
        .max_connections = cfg->max_connections,
    };
    struct conn_handler h = {
        .on_frame = on_frame, .on_close = on_close, .on_open = on_open, .data = b};
    struct listener_endpoint eps[BROKER_LISTENERS_MAX];
    for (int i = 0; i < cfg->n_listeners; i++)
        eps[i] = (struct listener_endpoint){cfg->listeners[i].name, cfg->listeners[i].host,
                                            cfg->listeners[i].port, cfg->listeners[i].tls};
    int bad = 0;
    rc = listener_open_endpoints(r, eps, cfg->n_listeners, &lim, &h, &b->lis, &bad);
    if (rc != 0) {
        snprintf(err, errcap, "cannot listen on %s:%d (listener %s): %s", cfg->listeners[bad].host,
                 cfg->listeners[bad].port, cfg->listeners[bad].name, err_str(rc));
        goto out_groups;
    }
    b->advertised_port = cfg->advertised_port > 0 ? cfg->advertised_port : listener_port(b->lis);

    reactor_timer_init(&b->flush_timer, on_flush_timer, b);
    flush_timer_update(b);
    reactor_timer_init(&b->retention_timer, on_retention_timer, b);
    reactor_timer_start(r, &b->retention_timer, cfg->log_retention_check_interval_ms);
    rc = cleaner_begin(b, err, errcap);
    if (rc != 0) {
        reactor_timer_stop(r, &b->retention_timer);
        reactor_timer_stop(r, &b->flush_timer);
        listener_close(b->lis);
        goto out_groups;
    }
    /* a data directory a single-node release wrote is upgraded in place (broker/legacy.c) */
    bool legacy = legacy_pending(b);
    rc = legacy ? legacy_prepare(b, err, errcap) : 0;
    if (rc == 0)
        rc = cluster_start(b, err, errcap);
    if (rc == 0 && cfg->n_voters == 0 && cluster_await_live(b, STANDALONE_LIVE_MAX_MS) != 0) {
        snprintf(err, errcap,
                 "the node did not register with its own controller within %d ms of opening "
                 "its replicas",
                 STANDALONE_LIVE_MAX_MS);
        cluster_stop(b);
        rc = -ERR_TIMEOUT;
    }
    if (rc == 0 && legacy) {
        rc = legacy_import(b, err, errcap);
        if (rc != 0)
            cluster_stop(b);
    }
    if (rc != 0) {
        cleaner_end(b);
        reactor_timer_stop(r, &b->retention_timer);
        reactor_timer_stop(r, &b->flush_timer);
        listener_close(b->lis);
        goto out_groups;
    }
    *out = b;
    return 0;

out_groups:
    topics_close_all(b);
    groups_stop(b);
out_topics:
    authz_stop(b);
    topics_close_all(b);
    broker_producers_stop(b);
    reactor_timer_stop(r, &b->kv_timer);
    kv_close(b->kv);
out_kv:
    fdcache_free(b->files);
    reactor_del(r, b->flusher_fd);
out_flusher:
    flusher_stop(b->fl);
out_catalog:
    catalog_close(b->cat, false);
out_free:
    strmap_destroy(&b->topics);
    arena_destroy(&b->scratch);
    mem_free(b);
    return rc < 0 ? rc : -ERR_INVALID;
}

void broker_stop(struct broker *b)
{
    cluster_handover(b, 1000); /* while clients and the transport still run */
    b->stopping = true;
    reactor_timer_stop(b->r, &b->retention_timer);
    cleaner_end(b); /* before the logs close: finishes or drops passes in flight */
    reactor_timer_stop(b->r, &b->flush_timer);
    broker_producers_stop(b);
    listener_close(b->lis); /* on_close cancels parked fetches */
    sasl_stop(b);           /* answers still held for failed exchanges: dropped */
    held_flush(b);          /* responses held for quotas: to connections now closed */
    quota_stop(b);
    cluster_stop(b);        /* replicas closed before their logs */
    topics_close_all(b);    /* answers parked produces, closes logs */
    schemas_stop(b);        /* after the logs: its write in flight has been answered */
    groups_stop(b);         /* after the logs: group appends in flight have been answered */
    authz_stop(b);
    reactor_timer_stop(b->r, &b->kv_timer);
    int krc = kv_close(b->kv); /* every log is closed: their last puts made durable */
    if (krc != 0)
        log_error("kvstore_close_failed", "error=\"%s\"", err_str(krc));
    fdcache_free(b->files); /* every log is closed */
    flusher_poll(b->fl);
    reactor_del(b->r, b->flusher_fd);
    flusher_stop(b->fl);
    catalog_close(b->cat, true);
    strmap_destroy(&b->topics);
    arena_destroy(&b->scratch);
    mem_free(b);
}

int broker_port(const struct broker *b)
{
    return listener_port(b->lis);
}

int broker_listener_port(const struct broker *b, int i)
{
    return listener_endpoint_port(b->lis, i);
}

void broker_advertised(const struct broker *b, const struct conn *c, struct kstr *host,
                       int32_t *port)
{
    int i = conn_endpoint(c);
    const struct broker_listener *l = &b->cfg->listeners[i];
    *host = kstr_c(l->advertised_host);
    *port = l->advertised_port > 0 ? l->advertised_port : listener_endpoint_port(b->lis, i);
}
