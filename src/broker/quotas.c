/* Client quotas: DescribeClientQuotas (48) and AlterClientQuotas (49), KIP-546, over the QUOTA
 * records of the metadata image (every node holds them), and the byte-rate quotas they set
 * (producer_byte_rate, consumer_byte_rate), enforced as Kafka enforces them (KIP-13, KIP-219).
 *
 * Entities are users and client-ids, named or default (an "ip" entity is refused: it only
 * carries connection_creation_rate, which is not implemented). The quota of a request is the
 * most specific that exists, in Kafka's order: user+client, user+default client, user, default
 * user+client, default user+default client, default user, client, default client. request_percentage
 * and controller_mutation_rate are stored and described but not enforced.
 *
 * Enforcement. Each (user, client-id) pair seen while some byte-rate quota exists has a rate of
 * its own per direction: the bytes of the last QUOTA_SAMPLES one-second samples over their span
 * (at least QUOTA_SAMPLES - 1 seconds, so that a new client's first burst is not a high rate).
 * A Produce adds its batches' bytes, a Fetch its records' bytes; when the rate is above the
 * quota the response carries throttle_time_ms = (rate - quota) / quota x the window (at most
 * the window) and is held that long before it is sent (so a client that ignores the field is
 * slowed too; responses on a connection stay in order). The user of a connection is its
 * principal's name (User:NAME; ANONYMOUS without authentication).
 *
 * State: struct quota_state per broker (b->quotas, created at the first quota seen), a strmap
 * of tracked pairs bounded by QUOTA_CLIENTS_MAX (pairs idle for QUOTA_IDLE_MS are dropped when
 * it is full; beyond that a new pair is not tracked, and counted). Reactor thread only. */
#include "broker/quotas.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/strmap.h"
#include "base/time.h"
#include "broker/authz.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "broker/sasl.h"
#include "controller/image.h"
#include "controller/request.h"
#include "kafka/errors.h"

#define QUOTA_SAMPLES 11
#define QUOTA_SAMPLE_MS 1000
#define QUOTA_WINDOW_MS (QUOTA_SAMPLES * QUOTA_SAMPLE_MS)
#define QUOTA_CLIENTS_MAX 10000
#define QUOTA_IDLE_MS 60000

struct rate {
    int64_t start_ms[QUOTA_SAMPLES]; /* each sample's start (0: unused) */
    uint64_t bytes[QUOTA_SAMPLES];
};

struct quota_client {
    struct rate dir[2]; /* QUOTA_PRODUCE, QUOTA_FETCH */
    int64_t last_ms;
    size_t klen;        /* its key in the map: user NUL client */
    char key[CTL_USER_MAX + CTL_CLIENT_ID_MAX + 2];
};

struct quota_state {
    struct strmap clients; /* "user\0client" -> struct quota_client * */
    uint64_t untracked;    /* pairs not tracked: the table was full */
    uint64_t throttled[2]; /* responses held, per direction */
};

/* ---- enforcement ---- */

static const char *const dir_key[2] = {"producer_byte_rate", "consumer_byte_rate"};

static bool part_matches(int8_t kind, const char *name, int8_t want_kind, const char *want)
{
    return kind == want_kind && (kind != CTL_QUOTA_NAMED || !strcmp(name, want));
}

/* The quota of key for user/client in Kafka's order of precedence, or -1 when none. */
static double lookup(const struct ctl_image *img, const char *key, const char *user,
                     const char *client)
{
    static const int8_t order[8][2] = {
        {CTL_QUOTA_NAMED, CTL_QUOTA_NAMED},   {CTL_QUOTA_NAMED, CTL_QUOTA_DEFAULT},
        {CTL_QUOTA_NAMED, CTL_QUOTA_NONE},    {CTL_QUOTA_DEFAULT, CTL_QUOTA_NAMED},
        {CTL_QUOTA_DEFAULT, CTL_QUOTA_DEFAULT}, {CTL_QUOTA_DEFAULT, CTL_QUOTA_NONE},
        {CTL_QUOTA_NONE, CTL_QUOTA_NAMED},    {CTL_QUOTA_NONE, CTL_QUOTA_DEFAULT},
    };
    for (int o = 0; o < 8; o++)
        for (size_t i = 0; i < img->n_quotas; i++) {
            const struct ctl_rec_quota *q = &img->quotas[i];
            if (!strcmp(q->key, key) && part_matches(q->user_kind, q->user, order[o][0], user) &&
                part_matches(q->client_kind, q->client, order[o][1], client))
                return q->value;
        }
    return -1;
}

/* Adds bytes at now and returns the rate in bytes per second. */
static double rate_add(struct rate *r, int64_t now, uint64_t bytes)
{
    int64_t slot_start = now - now % QUOTA_SAMPLE_MS;
    int i = (int)((now / QUOTA_SAMPLE_MS) % QUOTA_SAMPLES);
    if (r->start_ms[i] != slot_start) {
        r->start_ms[i] = slot_start;
        r->bytes[i] = 0;
    }
    r->bytes[i] += bytes;
    uint64_t total = 0;
    int64_t oldest = now;
    for (int k = 0; k < QUOTA_SAMPLES; k++) {
        if (r->start_ms[k] == 0 || now - r->start_ms[k] >= QUOTA_WINDOW_MS)
            continue;
        total += r->bytes[k];
        if (r->start_ms[k] < oldest)
            oldest = r->start_ms[k];
    }
    int64_t span = now - oldest;
    if (span < (QUOTA_SAMPLES - 1) * QUOTA_SAMPLE_MS)
        span = (QUOTA_SAMPLES - 1) * QUOTA_SAMPLE_MS;
    return (double)total * 1000.0 / (double)span;
}

static struct quota_client *client_of(struct quota_state *st, const char *key, size_t klen,
                                      int64_t now)
{
    struct quota_client *c = strmap_get(&st->clients, key, klen);
    if (c)
        return c;
    if (st->clients.len >= QUOTA_CLIENTS_MAX) { /* drop the idle ones */
        struct quota_client *idle[256];
        size_t n = 0, it = 0;
        const char *k;
        void *v;
        while (n < 256 && strmap_next(&st->clients, &it, &k, &v))
            if (now - ((struct quota_client *)v)->last_ms > QUOTA_IDLE_MS)
                idle[n++] = v;
        for (size_t i = 0; i < n; i++) {
            strmap_del(&st->clients, idle[i]->key, idle[i]->klen);
            mem_free(idle[i]);
        }
        if (st->clients.len >= QUOTA_CLIENTS_MAX) {
            st->untracked++;
            return NULL;
        }
    }
    c = mem_calloc(1, sizeof(*c));
    memcpy(c->key, key, klen);
    c->klen = klen;
    strmap_put(&st->clients, key, klen, c);
    return c;
}

int32_t quota_account(struct request *req, enum quota_dir dir, uint64_t bytes)
{
    return quota_account_session(req->b, req->s, req->hdr.client_id, dir, bytes);
}

int32_t quota_account_session(struct broker *b, struct session *s, struct kstr cid,
                              enum quota_dir dir, uint64_t bytes)
{
    const struct ctl_image *img = cluster_image(b->cluster);
    if (!img || img->n_quotas == 0)
        return 0;
    const char *principal = session_principal(s);
    const char *user = strncmp(principal, "User:", 5) == 0 ? principal + 5 : principal;
    char client[CTL_CLIENT_ID_MAX + 1];
    size_t cl = cid.len > 0 ? (size_t)cid.len : 0;
    if (cl > CTL_CLIENT_ID_MAX)
        cl = CTL_CLIENT_ID_MAX;
    memcpy(client, cl ? cid.p : "", cl);
    client[cl] = '\0';
    double quota = lookup(img, dir_key[dir], user, client);
    if (quota <= 0)
        return 0;
    if (!b->quotas) {
        b->quotas = mem_calloc(1, sizeof(*b->quotas));
        strmap_init(&b->quotas->clients);
    }
    char key[CTL_USER_MAX + CTL_CLIENT_ID_MAX + 2];
    size_t ul = strnlen(user, CTL_USER_MAX);
    memcpy(key, user, ul);
    key[ul] = '\0';
    memcpy(key + ul + 1, client, cl);
    int64_t now = time_mono_ms();
    struct quota_client *c = client_of(b->quotas, key, ul + 1 + cl, now);
    if (!c)
        return 0;
    c->last_ms = now;
    double rate = rate_add(&c->dir[dir], now, bytes);
    if (rate <= quota)
        return 0;
    double t = (rate - quota) / quota * QUOTA_WINDOW_MS;
    int32_t ms = t > QUOTA_WINDOW_MS ? QUOTA_WINDOW_MS : (int32_t)ceil(t);
    b->quotas->throttled[dir]++;
    return ms;
}

void quota_counts(const struct broker *b, uint64_t throttled[2])
{
    throttled[0] = b->quotas ? b->quotas->throttled[0] : 0;
    throttled[1] = b->quotas ? b->quotas->throttled[1] : 0;
}

void quota_stop(struct broker *b)
{
    struct quota_state *st = b->quotas;
    if (!st)
        return;
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&st->clients, &it, &k, &v))
        mem_free(v);
    strmap_destroy(&st->clients);
    mem_free(st);
    b->quotas = NULL;
}

/* ---- DescribeClientQuotas ---- */

/* A wire entity part type: 0 user, 1 client-id, -1 ip, -2 anything else. */
static int part_type(struct kstr t)
{
    if (kstr_eq(t, "user"))
        return 0;
    if (kstr_eq(t, "client-id"))
        return 1;
    return kstr_eq(t, "ip") ? -1 : -2;
}

/* Whether quota q's entity passes component c (Kafka's match types). */
static bool component_matches(const struct ctl_rec_quota *q, const struct describe_quotas_component *c)
{
    int t = part_type(c->entity_type);
    int8_t kind = t == 0 ? q->user_kind : q->client_kind;
    const char *name = t == 0 ? q->user : q->client;
    switch (c->match_type) {
    case 0: /* exact name */
        return kind == CTL_QUOTA_NAMED && c->match.len >= 0 && kstr_eq(c->match, name);
    case 1: /* the default */
        return kind == CTL_QUOTA_DEFAULT;
    default: /* any specified */
        return kind != CTL_QUOTA_NONE;
    }
}

static bool same_entity(const struct ctl_rec_quota *a, const struct ctl_rec_quota *b)
{
    return a->user_kind == b->user_kind && !strcmp(a->user, b->user) &&
           a->client_kind == b->client_kind && !strcmp(a->client, b->client);
}

static struct kquota_entity_part *entity_parts(struct arena *a, const struct ctl_rec_quota *q,
                                               int32_t *n)
{
    struct kquota_entity_part *e = arena_calloc(a, 2, sizeof(*e));
    *n = 0;
    if (q->user_kind != CTL_QUOTA_NONE)
        e[(*n)++] = (struct kquota_entity_part){
            kstr_c("user"), q->user_kind == CTL_QUOTA_NAMED
                                ? kstr_c(arena_strndup(a, q->user, strlen(q->user)))
                                : KSTR_NULL};
    if (q->client_kind != CTL_QUOTA_NONE)
        e[(*n)++] = (struct kquota_entity_part){
            kstr_c("client-id"), q->client_kind == CTL_QUOTA_NAMED
                                     ? kstr_c(arena_strndup(a, q->client, strlen(q->client)))
                                     : KSTR_NULL};
    return e;
}

static int16_t describe_check(const struct describe_quotas_req *dr, const char **why)
{
    for (int32_t i = 0; i < dr->n_components; i++) {
        const struct describe_quotas_component *c = &dr->components[i];
        int t = part_type(c->entity_type);
        if (t < 0) {
            *why = t == -1 ? "ip quotas are not supported" : "Unknown entity type";
            return KERR_INVALID_REQUEST;
        }
        if (c->match_type < 0 || c->match_type > 2 || (c->match_type == 0) != (c->match.len >= 0)) {
            *why = "A match type 0 needs a name to match, the others none";
            return KERR_INVALID_REQUEST;
        }
        for (int32_t j = 0; j < i; j++)
            if (part_type(dr->components[j].entity_type) == t) {
                *why = "Duplicate entity type in the filter";
                return KERR_INVALID_REQUEST;
            }
    }
    return KERR_NONE;
}

int handle_describe_client_quotas(struct request *req)
{
    struct describe_quotas_req dr;
    if (kmsg_decode_describe_quotas(&req->body, req->hdr.api_version, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct describe_quotas_resp resp = {.error_message = KSTR_NULL, .n_entries = -1};
    const char *why = NULL;
    if (!authz_allows_cluster(req, ACL_OP_DESCRIBE_CONFIGS)) {
        resp.error_code = KERR_CLUSTER_AUTHORIZATION_FAILED;
    } else if ((resp.error_code = describe_check(&dr, &why)) != KERR_NONE) {
        resp.error_message = kstr_c(why);
    } else {
        const struct ctl_image *img = cluster_image(req->b->cluster);
        resp.entries = arena_calloc(req->arena, img->n_quotas ? img->n_quotas : 1,
                                    sizeof(*resp.entries));
        resp.n_entries = 0;
        struct describe_quotas_entry *cur = NULL;
        const struct ctl_rec_quota *cur_q = NULL;
        for (size_t i = 0; i < img->n_quotas; i++) {
            const struct ctl_rec_quota *q = &img->quotas[i];
            bool ok = true;
            for (int32_t j = 0; j < dr.n_components && ok; j++)
                ok = component_matches(q, &dr.components[j]);
            int parts = (q->user_kind != CTL_QUOTA_NONE) + (q->client_kind != CTL_QUOTA_NONE);
            if (!ok || (dr.strict && parts != dr.n_components))
                continue;
            if (!cur_q || !same_entity(cur_q, q)) { /* the image groups an entity's keys */
                cur = &resp.entries[resp.n_entries++];
                cur->entity = entity_parts(req->arena, q, &cur->n_entity);
                cur->values = arena_calloc(req->arena, 4, sizeof(*cur->values));
                cur->n_values = 0;
                cur_q = q;
            }
            if (cur->n_values < 4)
                cur->values[cur->n_values++] = (struct kquota_value){
                    kstr_c(arena_strndup(req->arena, q->key, strlen(q->key))), q->value};
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_describe_quotas(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

/* ---- AlterClientQuotas ---- */

struct quotas_op {
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena;
    int pending;
    struct alter_quotas_resp resp;
};

struct quotas_item {
    struct quotas_op *op;
    struct alter_quotas_result *out;
};

static void op_release(struct quotas_op *op)
{
    if (--op->pending > 0)
        return;
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_alter_quotas(&r.w, op->hdr.api_version, &op->resp);
    response_send(&r, op->slot);
    arena_destroy(&op->arena);
    mem_free(op);
}

static void set_error(struct alter_quotas_result *res, int16_t ec, const char *msg)
{
    if (res->error_code != KERR_NONE || ec == KERR_NONE)
        return;
    res->error_code = ec;
    res->error_message = kstr_c(msg);
}

static void item_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct quotas_item *it = data;
    (void)rt;
    set_error(it->out, a->error,
              a->error == KERR_NOT_CONTROLLER || a->error == KERR_REQUEST_TIMED_OUT
                  ? "No controller answered; retry"
                  : kafka_error_name(a->error));
    struct quotas_op *op = it->op;
    mem_free(it);
    op_release(op);
}

/* The entity of an alteration as a QUOTA record's entity; NULL or the reason it is refused. */
static const char *entity_of(const struct alter_quotas_entry *e, struct ctl_rec_quota *q)
{
    memset(q, 0, sizeof(*q));
    if (e->n_entity < 1)
        return "An entity needs a user, a client-id or both";
    for (int32_t i = 0; i < e->n_entity; i++) {
        const struct kquota_entity_part *p = &e->entity[i];
        int t = part_type(p->type);
        if (t == -1)
            return "ip quotas are not supported";
        if (t < 0)
            return "Unknown entity type";
        int8_t *kind = t == 0 ? &q->user_kind : &q->client_kind;
        char *name = t == 0 ? q->user : q->client;
        size_t cap = t == 0 ? CTL_USER_MAX : CTL_CLIENT_ID_MAX;
        if (*kind != CTL_QUOTA_NONE)
            return "Duplicate entity type";
        if (p->name.len < 0) {
            *kind = CTL_QUOTA_DEFAULT;
            continue;
        }
        if (p->name.len == 0 || (size_t)p->name.len > cap || memchr(p->name.p, 0, (size_t)p->name.len))
            return "Bad entity name (1..255 bytes, no NUL)";
        *kind = CTL_QUOTA_NAMED;
        memcpy(name, p->name.p, (size_t)p->name.len);
    }
    return NULL;
}

int handle_alter_client_quotas(struct request *req)
{
    struct alter_quotas_req ar;
    if (kmsg_decode_alter_quotas(&req->body, req->hdr.api_version, req->arena, &ar) != 0)
        return -ERR_CORRUPT;
    struct quotas_op *op = mem_calloc(1, sizeof(*op));
    op->slot = conn_slot_reserve(req->conn);
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL; /* points into the frame */
    arena_init(&op->arena, 1024);
    op->pending = 1;
    op->resp.n_entries = ar.n_entries;
    op->resp.entries = arena_calloc(&op->arena, ar.n_entries ? (size_t)ar.n_entries : 1,
                                    sizeof(*op->resp.entries));
    bool allowed = authz_allows_cluster(req, ACL_OP_ALTER_CONFIGS);
    for (int32_t i = 0; i < ar.n_entries; i++) {
        const struct alter_quotas_entry *e = &ar.entries[i];
        struct alter_quotas_result *res = &op->resp.entries[i];
        res->error_message = KSTR_NULL;
        struct ctl_rec_quota base;
        const char *why = entity_of(e, &base);
        /* the answer names the entity as it was asked (copied: the frame goes away) */
        res->entity = arena_calloc(&op->arena, e->n_entity > 0 ? (size_t)e->n_entity : 1,
                                   sizeof(*res->entity));
        res->n_entity = e->n_entity;
        for (int32_t j = 0; j < e->n_entity; j++) {
            struct kstr t = e->entity[j].type, n = e->entity[j].name;
            res->entity[j].type = (struct kstr){arena_strndup(&op->arena, t.p ? t.p : "",
                                                              t.len > 0 ? (size_t)t.len : 0),
                                                t.len > 0 ? t.len : 0};
            res->entity[j].name = n.len < 0 ? KSTR_NULL
                                            : (struct kstr){arena_strndup(&op->arena, n.p ? n.p : "",
                                                                          (size_t)n.len),
                                                            n.len};
        }
        if (!allowed) {
            set_error(res, KERR_CLUSTER_AUTHORIZATION_FAILED, "AlterClientQuotas needs AlterConfigs on the cluster");
            continue;
        }
        if (why) {
            set_error(res, KERR_INVALID_REQUEST, why);
            continue;
        }
        struct ctl_rec_quota qs[16];
        int32_t n = 0;
        for (int32_t j = 0; j < e->n_ops && !why; j++) {
            const struct alter_quotas_op *o = &e->ops[j];
            struct ctl_rec_quota q = base;
            if (o->key.len <= 0 || o->key.len > CTL_QUOTA_KEY_MAX)
                why = "Unknown quota key";
            else
                memcpy(q.key, o->key.p, (size_t)o->key.len);
            if (!why && !ctl_quota_key_known(q.key))
                why = "Unknown quota key (producer_byte_rate, consumer_byte_rate, "
                      "request_percentage, controller_mutation_rate)";
            if (!why && !o->remove && !(isfinite(o->value) && o->value > 0))
                why = "A quota value must be positive";
            for (int32_t k = 0; !why && k < n; k++)
                if (!strcmp(qs[k].key, q.key))
                    why = "A key appears twice for the entity";
            if (!why && n == 16)
                why = "Too many operations for one entity";
            q.deleted = o->remove;
            q.value = o->remove ? 0 : o->value;
            if (!why)
                qs[n++] = q;
        }
        if (why) {
            set_error(res, KERR_INVALID_REQUEST, why);
            continue;
        }
        for (int32_t k = 0; k < n && !ar.validate_only; k++) {
            struct ctl_request cmd = {.type = CTL_REQ_QUOTA, .quota = qs[k]};
            struct quotas_item *it = mem_calloc(1, sizeof(*it));
            *it = (struct quotas_item){op, res};
            op->pending++;
            cluster_submit(req->b->cluster, &cmd, item_done, it);
        }
    }
    op_release(op);
    return 0;
}
