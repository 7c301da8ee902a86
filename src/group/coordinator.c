/* The group coordinator (see coordinator.h).
 *
 * Owns: the groups (strmap id -> struct cgroup, each with its timer), the state of each
 * partition of __consumer_offsets (loaded, loading, not ours), and the appends in flight
 * (struct pending).
 *
 * Invariants (coordinator_check):
 *  1. Every group in the map is not Dead; a Dead group is removed in the same call that kills
 *     it.
 *  2. A group's timer is armed iff group_next_deadline is finite (rearm after every input).
 *  3. A group that was never stored (generation 0), is Empty and has no offsets and no pending
 *     member ids does not stay in the map (a failed JoinGroup leaves nothing behind).
 *  4. Every struct pending is answered exactly once, by its append's completion or at once when
 *     the append is refused.
 *  5. Groups exist only for partitions that are LOADED or LOADING (coordinator_unload drops
 *     the others' at once; a completion for a partition that is no longer ours applies nothing).
 *
 * A partition's groups are LOADING between coordinator_load_begin and _end; requests for them
 * are refused with COORDINATOR_LOAD_IN_PROGRESS. With cfg.cluster a partition is NOT_OWNED
 * until this broker leads it (requests: NOT_COORDINATOR). */
#include "group/coordinator.h"

#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/strmap.h"
#include "base/time.h"
#include "group/records.h"
#include "kafka/batch.h"
#include "kafka/errors.h"

enum pstate { PART_LOADED, PART_LOADING, PART_NOT_OWNED };

struct cgroup {
    struct group *g;
    struct coordinator *c;
    struct reactor_timer timer;
};

struct coordinator {
    struct reactor *r;
    struct coordinator_config cfg;
    struct coordinator_io io;
    struct group_hooks hooks;
    struct strmap groups; /* id -> struct cgroup * */
    int32_t n_partitions;
    uint8_t *pstate;  /* per partition: enum pstate */
    bool start_owned; /* partitions start LOADED (!cfg.cluster) or NOT_OWNED */
    struct reactor_timer expire_timer;
    uint64_t skipped_records; /* replayed records that did not decode */
};

/* ---- time ---- */

static int64_t now_ms(const struct coordinator *c)
{
    return reactor_now_ms(c->r);
}

/* ---- batches ---- */

/* Records of one batch under construction. */
struct recs {
    struct iobuf keys;
    struct iobuf values;
    size_t *key_len;
    int32_t *value_len; /* -1: tombstone */
    int32_t n, cap;
};

static void recs_init(struct recs *rs)
{
    memset(rs, 0, sizeof(*rs));
    iobuf_init(&rs->keys);
    iobuf_init(&rs->values);
}

static void recs_destroy(struct recs *rs)
{
    iobuf_destroy(&rs->keys);
    iobuf_destroy(&rs->values);
    mem_free(rs->key_len);
    mem_free(rs->value_len);
}

/* Starts a record: the caller writes its key to *kw, then its value to *vw (or nothing for a
 * tombstone), then calls recs_end. */
static void recs_end(struct recs *rs, size_t key_before, size_t value_before, bool tombstone)
{
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 8;
        rs->key_len = mem_realloc(rs->key_len, (size_t)rs->cap * sizeof(*rs->key_len));
        rs->value_len = mem_realloc(rs->value_len, (size_t)rs->cap * sizeof(*rs->value_len));
    }
    rs->key_len[rs->n] = iobuf_total(&rs->keys) - key_before;
    rs->value_len[rs->n] = tombstone ? -1 : (int32_t)(iobuf_total(&rs->values) - value_before);
    rs->n++;
}

static void recs_offset(struct recs *rs, struct kstr group, struct kstr topic, int32_t partition,
                        const struct grec_offset_value *v)
{
    struct kwriter kw = {&rs->keys}, vw = {&rs->values};
    size_t kb = iobuf_total(&rs->keys), vb = iobuf_total(&rs->values);
    grec_encode_offset_key(&kw, group, topic, partition);
    if (v)
        grec_encode_offset_value(&vw, v);
    recs_end(rs, kb, vb, v == NULL);
}

static void recs_group(struct recs *rs, struct kstr group, const struct group *g)
{
    struct kwriter kw = {&rs->keys}, vw = {&rs->values};
    size_t kb = iobuf_total(&rs->keys), vb = iobuf_total(&rs->values);
    grec_encode_group_key(&kw, group);
    if (g)
        grec_encode_group_value(&vw, g);
    recs_end(rs, kb, vb, g == NULL);
}

/* The batch of the records as one flat buffer (mem_free it). */
static uint8_t *recs_batch(struct recs *rs, size_t *len)
{
    size_t kl, vl;
    uint8_t *kflat = iobuf_flatten(&rs->keys, &kl);
    uint8_t *vflat = iobuf_flatten(&rs->values, &vl);
    struct kbytes *keys = mem_calloc((size_t)rs->n, sizeof(*keys));
    struct kbytes *values = mem_calloc((size_t)rs->n, sizeof(*values));
    size_t ko = 0, vo = 0;
    for (int32_t i = 0; i < rs->n; i++) {
        keys[i] = (struct kbytes){kflat + ko, (int32_t)rs->key_len[i]};
        ko += rs->key_len[i];
        if (rs->value_len[i] < 0) {
            values[i] = (struct kbytes){NULL, -1};
        } else {
            values[i] = (struct kbytes){vflat + vo, rs->value_len[i]};
            vo += (size_t)rs->value_len[i];
        }
    }
    struct iobuf out;
    iobuf_init(&out);
    kbatch_build(&out, time_wall_ms(), keys, values, rs->n);
    uint8_t *batch = iobuf_flatten(&out, len);
    iobuf_destroy(&out);
    mem_free(keys);
    mem_free(values);
    mem_free(kflat);
    mem_free(vflat);
    return batch;
}

/* ---- appends in flight ---- */

struct pending {
    struct coordinator *c;
    int32_t partition;
    uint8_t *batch;
    size_t len;
    bool apply;    /* replay the records into memory once durable (commits) */
    int16_t **ecs; /* error codes to set if the write fails */
    int32_t n_ecs;
    void (*done)(void *arg);
    void *arg;
};

static void apply_batch(struct coordinator *c, int32_t p, const uint8_t *batch, size_t len);

static void pending_finish(struct pending *pd, int rc)
{
    struct coordinator *c = pd->c;
    bool ours = pd->partition < c->n_partitions && c->pstate[pd->partition] == PART_LOADED;
    if (rc == 0 && pd->apply && ours)
        apply_batch(c, pd->partition, pd->batch, pd->len);
    if (rc != 0) {
        log_warn("group_write_failed", "partition=%d error=\"%s\"", pd->partition, err_str(rc));
        /* a coordinator that lost its partition sends clients looking for the new one */
        for (int32_t i = 0; i < pd->n_ecs; i++)
            *pd->ecs[i] = ours ? KERR_COORDINATOR_NOT_AVAILABLE : KERR_NOT_COORDINATOR;
    }
    if (pd->done)
        pd->done(pd->arg);
    mem_free(pd->ecs);
    mem_free(pd->batch);
    mem_free(pd);
}

static void append_done(void *arg, int rc, int64_t base_offset)
{
    pending_finish(arg, rc);
}

/* Writes the records; returns whether done will be called (it is not when there is nothing to
 * write: then the caller answers now). On a refused append the error codes are set and done is
 * called at once. Takes ownership of ecs. */
static bool write_records(struct coordinator *c, int32_t p, struct recs *rs, bool apply,
                          int16_t **ecs, int32_t n_ecs, void (*done)(void *arg), void *arg)
{
    if (rs->n == 0) {
        mem_free(ecs);
        return false;
    }
    struct pending *pd = mem_calloc(1, sizeof(*pd));
    pd->c = c;
    pd->partition = p;
    pd->batch = recs_batch(rs, &pd->len);
    pd->apply = apply;
    pd->ecs = ecs;
    pd->n_ecs = n_ecs;
    pd->done = done;
    pd->arg = arg;
    int rc = c->io.append(c->io.ctx, p, pd->batch, pd->len, append_done, pd);
    if (rc != 0)
        pending_finish(pd, rc);
    return true;
}

/* ---- groups ---- */

static void on_group_timer(struct reactor *r, struct reactor_timer *t, void *data);

static struct cgroup *find(struct coordinator *c, struct kstr id)
{
    if (id.len <= 0)
        return NULL;
    return strmap_get(&c->groups, id.p, (size_t)id.len);
}

static struct cgroup *create(struct coordinator *c, struct kstr id)
{
    struct cgroup *cg = mem_calloc(1, sizeof(*cg));
    cg->c = c;
    cg->g = group_new(id, &c->cfg.group, &c->hooks, time_wall_ms());
    reactor_timer_init(&cg->timer, on_group_timer, cg);
    strmap_put(&c->groups, id.p, (size_t)id.len, cg);
    return cg;
}

static void drop(struct coordinator *c, struct cgroup *cg)
{
    reactor_timer_stop(c->r, &cg->timer);
    strmap_del(&c->groups, cg->g->id, strlen(cg->g->id));
    group_free(cg->g, KERR_NOT_COORDINATOR);
    mem_free(cg);
}

/* After every input: drop a group that is gone or was never worth keeping, else rearm. */
static void touch(struct coordinator *c, struct cgroup *cg)
{
    struct group *g = cg->g;
    if (g->state == GROUP_DEAD || (g->state == GROUP_EMPTY && g->generation == 0 &&
                                   group_offset_count(g) == 0 && g->n_pending == 0)) {
        drop(c, cg);
        return;
    }
    int64_t d = group_next_deadline(g);
    if (d == INT64_MAX)
        reactor_timer_stop(c->r, &cg->timer);
    else
        reactor_timer_start(c->r, &cg->timer, d - now_ms(c));
}

static void on_group_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct cgroup *cg = data;
    group_tick(cg->g, now_ms(cg->c), time_wall_ms());
    touch(cg->c, cg);
}

static void store_group(void *env, struct group *g)
{
    struct coordinator *c = env;
    struct recs rs;
    recs_init(&rs);
    struct kstr id = kstr_c(g->id);
    recs_group(&rs, id, g);
    write_records(c, coordinator_partition_for(c, id), &rs, false, NULL, 0, NULL, NULL);
    recs_destroy(&rs);
}

static enum pstate group_pstate(const struct coordinator *c, struct kstr group_id)
{
    return c->pstate[coordinator_partition_for(c, group_id)];
}

/* Common checks of a request naming a group: NONE or the error to answer with. */
static int16_t check_group_id(const struct coordinator *c, struct kstr group_id)
{
    if (group_id.len <= 0 || memchr(group_id.p, '\0', (size_t)group_id.len))
        return KERR_INVALID_GROUP_ID;
    switch (group_pstate(c, group_id)) {
    case PART_LOADED:
        break;
    case PART_LOADING:
        return KERR_COORDINATOR_LOAD_IN_PROGRESS;
    case PART_NOT_OWNED:
        return KERR_NOT_COORDINATOR;
    }
    return KERR_NONE;
}

static struct cgroup *find_or_create(struct coordinator *c, struct kstr id, int16_t *ec)
{
    struct cgroup *cg = find(c, id);
    if (cg)
        return cg;
    if ((int64_t)c->groups.len >= c->cfg.max_groups) {
        log_warn("group_refused", "reason=\"too many groups\" max_groups=%d", c->cfg.max_groups);
        *ec = KERR_COORDINATOR_NOT_AVAILABLE;
        return NULL;
    }
    return create(c, id);
}

/* ---- lifecycle ---- */

static void on_expire_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct coordinator *c = data;
    coordinator_expire(c, time_wall_ms());
    reactor_timer_start(r, t, c->cfg.offsets_retention_check_ms);
}

struct coordinator *coordinator_new(struct reactor *r, const struct coordinator_config *cfg,
                                    const struct coordinator_io *io)
{
    CHECK(cfg->offsets_partitions > 0);
    struct coordinator *c = mem_calloc(1, sizeof(*c));
    c->r = r;
    c->cfg = *cfg;
    c->io = *io;
    c->hooks = (struct group_hooks){io->join_done, io->sync_done, store_group, c};
    strmap_init(&c->groups);
    c->start_owned = !cfg->cluster;
    c->n_partitions = 0;
    coordinator_set_partitions(c, cfg->offsets_partitions);
    reactor_timer_init(&c->expire_timer, on_expire_timer, c);
    reactor_timer_start(r, &c->expire_timer, cfg->offsets_retention_check_ms);
    return c;
}

void coordinator_free(struct coordinator *c)
{
    reactor_timer_stop(c->r, &c->expire_timer);
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&c->groups, &it, &k, &v)) {
        struct cgroup *cg = v;
        reactor_timer_stop(c->r, &cg->timer);
        group_free(cg->g, KERR_NOT_COORDINATOR);
        mem_free(cg);
    }
    strmap_destroy(&c->groups);
    mem_free(c->pstate);
    mem_free(c);
}

void coordinator_set_partitions(struct coordinator *c, int32_t n)
{
    CHECK(n > 0);
    if (n == c->n_partitions)
        return;
    if (c->n_partitions > 0)
        log_warn("offsets_topic_partitions", "configured=%d existing=%d action=use_existing",
                 c->n_partitions, n);
    /* groups were placed by the old count: none may stay */
    for (int32_t p = 0; p < c->n_partitions; p++)
        coordinator_unload(c, p);
    mem_free(c->pstate);
    c->n_partitions = n;
    c->pstate = mem_calloc((size_t)n, sizeof(*c->pstate));
    for (int32_t p = 0; p < n; p++)
        c->pstate[p] = c->start_owned ? PART_LOADED : PART_NOT_OWNED;
}

int32_t coordinator_partitions(const struct coordinator *c)
{
    return c->n_partitions;
}

int32_t coordinator_partition_for(const struct coordinator *c, struct kstr group_id)
{
    return grec_partition_for(group_id, c->n_partitions);
}

struct group *coordinator_find(struct coordinator *c, struct kstr group_id)
{
    struct cgroup *cg = find(c, group_id);
    return cg ? cg->g : NULL;
}

size_t coordinator_group_count(const struct coordinator *c)
{
    return c->groups.len;
}

/* ---- replay ---- */

static void apply_group_record(struct coordinator *c, struct kstr id, struct kbytes value)
{
    struct cgroup *cg = find(c, id);
    if (value.len < 0) { /* tombstone */
        if (!cg)
            return;
        if (group_offset_count(cg->g) > 0) {
            struct group_restore empty = {
                kstr_c(""), cg->g->generation, KSTR_NULL, KSTR_NULL, time_wall_ms(), NULL, 0};
            group_restore(cg->g, &empty, now_ms(c));
            touch(c, cg);
        } else {
            drop(c, cg);
        }
        return;
    }
    struct arena a;
    arena_init(&a, 4096);
    struct group_restore r;
    int rc = grec_decode_group_value(value.p, (size_t)value.len, &a, &r);
    if (rc != 0) {
        c->skipped_records++;
    } else {
        int16_t ec = KERR_NONE;
        if (!cg)
            cg = find_or_create(c, id, &ec);
        if (cg) {
            group_restore(cg->g, &r, now_ms(c));
            touch(c, cg);
        }
    }
    arena_destroy(&a);
}

static void apply_offset_record(struct coordinator *c, const struct grec_key *k,
                                struct kbytes value)
{
    struct cgroup *cg = find(c, k->group);
    if (value.len < 0) {
        if (cg) {
            group_offset_del(cg->g, k->topic, k->partition);
            touch(c, cg);
        }
        return;
    }
    struct grec_offset_value v;
    if (grec_decode_offset_value(value.p, (size_t)value.len, &v) != 0) {
        c->skipped_records++;
        return;
    }
    int16_t ec = KERR_NONE;
    if (!cg)
        cg = find_or_create(c, k->group, &ec);
    if (cg)
        group_offset_put(cg->g, k->topic, k->partition, v.offset, v.leader_epoch, v.metadata,
                         v.commit_ts_ms);
}

void coordinator_load_record(struct coordinator *c, int32_t p, struct kbytes key,
                             struct kbytes value)
{
    struct grec_key k;
    if (key.len <= 0 || grec_decode_key(key.p, (size_t)key.len, &k) != 0 || k.group.len <= 0 ||
        memchr(k.group.p, '\0', (size_t)k.group.len)) {
        c->skipped_records++;
        return;
    }
    if (k.version == GREC_KEY_GROUP)
        apply_group_record(c, k.group, value);
    else
        apply_offset_record(c, &k, value);
}

/* Replays a batch this coordinator built itself (a commit that became durable). */
static void apply_batch(struct coordinator *c, int32_t p, const uint8_t *batch, size_t len)
{
    struct kbatch_header h;
    CHECK(len >= KBATCH_HEADER_SIZE);
    kbatch_parse_header(batch, &h);
    struct krecord_iter it;
    krecord_iter_init(&it, batch + KBATCH_HEADER_SIZE, len - KBATCH_HEADER_SIZE, h.records_count);
    struct krecord rec;
    while (krecord_iter_next(&it, &rec) == 1)
        coordinator_load_record(c, p, rec.key, rec.value);
}

void coordinator_load_begin(struct coordinator *c, int32_t p)
{
    CHECK(p >= 0 && p < c->n_partitions);
    coordinator_unload(c, p); /* a replay starts from nothing */
    c->pstate[p] = PART_LOADING;
}

void coordinator_load_end(struct coordinator *c, int32_t p)
{
    CHECK(p >= 0 && p < c->n_partitions);
    c->pstate[p] = PART_LOADED;
    if (c->skipped_records)
        log_warn("group_records_skipped", "partition=%d records=%llu", p,
                 (unsigned long long)c->skipped_records);
    c->skipped_records = 0;
}

/* Every group, in a fresh array (*n entries; free it): a map that is changed while walked
 * would skip entries. */
static struct cgroup **all_groups(const struct coordinator *c, size_t *n)
{
    struct cgroup **all = mem_calloc(c->groups.len ? c->groups.len : 1, sizeof(*all));
    size_t it = 0, k = 0;
    const char *key;
    void *v;
    while (strmap_next(&c->groups, &it, &key, &v))
        all[k++] = v;
    *n = k;
    return all;
}

void coordinator_unload(struct coordinator *c, int32_t p)
{
    CHECK(p >= 0 && p < c->n_partitions);
    size_t n, k = 0;
    struct cgroup **all = all_groups(c, &n);
    for (size_t i = 0; i < n; i++) {
        if (coordinator_partition_for(c, kstr_c(all[i]->g->id)) != p)
            continue;
        drop(c, all[i]); /* waiting JoinGroup/SyncGroup: NOT_COORDINATOR */
        k++;
    }
    mem_free(all);
    if (k > 0)
        log_info("groups_unloaded", "partition=%d groups=%zu", p, k);
    c->pstate[p] = PART_NOT_OWNED;
}

bool coordinator_owns(const struct coordinator *c, int32_t p)
{
    return p >= 0 && p < c->n_partitions && c->pstate[p] != PART_NOT_OWNED;
}

/* ---- invariants ---- */

__attribute__((unused)) static void coordinator_check(const struct coordinator *c)
{
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&c->groups, &it, &k, &v)) {
        const struct cgroup *cg = v;
        CHECK(cg->c == c);
        CHECK(cg->g->state != GROUP_DEAD);
        CHECK(reactor_timer_active(&cg->timer) == (group_next_deadline(cg->g) != INT64_MAX));
        group_check(cg->g);
    }
}

/* ---- JoinGroup, SyncGroup, Heartbeat, LeaveGroup ---- */

static void join_refuse(struct coordinator *c, void *waiter, int16_t ec, struct kstr member)
{
    struct group_join_result res = {.error_code = ec,
                                    .generation_id = -1,
                                    .protocol_type = KSTR_NULL,
                                    .protocol_name = KSTR_NULL,
                                    .leader_id = kstr_c(""),
                                    .member_id = member.len >= 0 ? member : kstr_c("")};
    c->io.join_done(waiter, &res);
}

void coordinator_join(struct coordinator *c, struct kstr group_id, const struct group_join_req *req,
                      void *waiter)
{
    int16_t ec = check_group_id(c, group_id);
    struct cgroup *cg = ec == KERR_NONE ? find(c, group_id) : NULL;
    if (ec == KERR_NONE && !cg && req->member_id.len > 0)
        ec = KERR_UNKNOWN_MEMBER_ID;
    if (ec == KERR_NONE && !cg)
        cg = find_or_create(c, group_id, &ec);
    if (ec != KERR_NONE) {
        join_refuse(c, waiter, ec, req->member_id);
        return;
    }
    group_join(cg->g, req, now_ms(c), time_wall_ms(), waiter);
    touch(c, cg);
    DCHECK((coordinator_check(c), true));
}

void coordinator_sync(struct coordinator *c, struct kstr group_id, const struct group_sync_req *req,
                      void *waiter)
{
    int16_t ec = check_group_id(c, group_id);
    struct cgroup *cg = ec == KERR_NONE ? find(c, group_id) : NULL;
    if (ec == KERR_NONE && !cg)
        ec = KERR_UNKNOWN_MEMBER_ID;
    if (ec != KERR_NONE) {
        struct group_sync_result res = {ec, KSTR_NULL, KSTR_NULL, {(const uint8_t *)"", 0}};
        c->io.sync_done(waiter, &res);
        return;
    }
    group_sync(cg->g, req, now_ms(c), time_wall_ms(), waiter);
    touch(c, cg);
    DCHECK((coordinator_check(c), true));
}

int16_t coordinator_heartbeat(struct coordinator *c, const struct heartbeat_req *req)
{
    int16_t ec = check_group_id(c, req->group_id);
    if (ec != KERR_NONE)
        return ec;
    struct cgroup *cg = find(c, req->group_id);
    if (!cg)
        return KERR_UNKNOWN_MEMBER_ID;
    ec = group_heartbeat(cg->g, req->member_id, req->group_instance_id, req->generation_id,
                         now_ms(c));
    touch(c, cg);
    return ec;
}

int16_t coordinator_leave(struct coordinator *c, struct kstr group_id,
                          const struct leave_group_member *members, int32_t n, int16_t *errors)
{
    int16_t ec = check_group_id(c, group_id);
    if (ec != KERR_NONE)
        return ec;
    struct cgroup *cg = find(c, group_id);
    for (int32_t i = 0; i < n; i++)
        errors[i] = KERR_UNKNOWN_MEMBER_ID;
    if (!cg)
        return KERR_NONE;
    if (cg->g->state == GROUP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    for (int32_t i = 0; i < n; i++)
        errors[i] = group_leave(cg->g, members[i].member_id, members[i].group_instance_id,
                                now_ms(c), time_wall_ms());
    touch(c, cg);
    return KERR_NONE;
}

/* ---- offsets ---- */

static void fill_commit_errors(struct offset_commit_resp *resp, int16_t ec)
{
    for (int32_t i = 0; i < resp->n_topics; i++)
        for (int32_t j = 0; j < resp->topics[i].n_partitions; j++)
            resp->topics[i].partitions[j].error_code = ec;
}

bool coordinator_commit(struct coordinator *c, const struct offset_commit_req *req,
                        struct offset_commit_resp *resp, void (*done)(void *arg), void *arg)
{
    int16_t ec = check_group_id(c, req->group_id);
    struct cgroup *cg = ec == KERR_NONE ? find(c, req->group_id) : NULL;
    if (ec == KERR_NONE && !cg) {
        if (req->generation_id < 0)
            cg = find_or_create(c, req->group_id, &ec); /* offsets without group management */
        else
            ec = KERR_ILLEGAL_GENERATION;
    }
    if (ec == KERR_NONE)
        ec = group_commit_allowed(cg->g, req->member_id, req->group_instance_id, req->generation_id,
                                  now_ms(c));
    if (ec != KERR_NONE) {
        fill_commit_errors(resp, ec);
        if (cg)
            touch(c, cg);
        return false;
    }
    int64_t total = 0;
    for (int32_t i = 0; i < req->n_topics; i++)
        total += req->topics[i].n_partitions;
    int16_t **ecs = mem_calloc((size_t)(total ? total : 1), sizeof(*ecs));
    int32_t n_ecs = 0;
    struct recs rs;
    recs_init(&rs);
    int64_t wall = time_wall_ms();
    for (int32_t i = 0; i < req->n_topics; i++) {
        const struct offset_commit_req_topic *t = &req->topics[i];
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct offset_commit_req_partition *p = &t->partitions[j];
            int16_t *out = &resp->topics[i].partitions[j].error_code;
            if (!c->io.partition_exists(c->io.ctx, t->name, p->partition_index)) {
                *out = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            } else if (p->committed_metadata.len > c->cfg.offset_metadata_max_bytes) {
                *out = KERR_OFFSET_METADATA_TOO_LARGE;
            } else {
                *out = KERR_NONE;
                /* OffsetCommit v1 may say when the commit was made (retention counts from it) */
                int64_t when = p->commit_timestamp >= 0 ? p->commit_timestamp : wall;
                struct grec_offset_value v = {p->committed_offset, p->committed_leader_epoch,
                                              p->committed_metadata, when};
                recs_offset(&rs, req->group_id, t->name, p->partition_index, &v);
                ecs[n_ecs++] = out;
            }
        }
    }
    bool pending = write_records(c, coordinator_partition_for(c, req->group_id), &rs, true, ecs,
                                 n_ecs, done, arg);
    recs_destroy(&rs);
    touch(c, cg);
    return pending;
}

static int cmp_offsets(const void *a, const void *b)
{
    const struct group_offset *x = *(const struct group_offset *const *)a;
    const struct group_offset *y = *(const struct group_offset *const *)b;
    int r = strcmp(x->topic, y->topic);
    return r ? r : (x->partition > y->partition) - (x->partition < y->partition);
}

static void fetch_all(const struct group *g, struct arena *a, struct offset_fetch_resp *resp)
{
    int32_t n = g ? group_offset_count(g) : 0;
    if (n == 0)
        return;
    const struct group_offset **all = arena_calloc(a, (size_t)n, sizeof(*all));
    size_t it = 0;
    int32_t k = 0;
    const struct group_offset *o;
    while ((o = group_offset_next(g, &it)) && k < n)
        all[k++] = o;
    qsort(all, (size_t)k, sizeof(*all), cmp_offsets);
    resp->topics = arena_calloc(a, (size_t)k, sizeof(*resp->topics));
    resp->n_topics = 0;
    for (int32_t i = 0; i < k; i++) {
        struct offset_fetch_resp_topic *t =
            resp->n_topics ? &resp->topics[resp->n_topics - 1] : NULL;
        if (!t || strcmp(t->name.p, all[i]->topic) != 0) {
            t = &resp->topics[resp->n_topics++];
            t->name = kstr_c(all[i]->topic);
            t->partitions = arena_calloc(a, (size_t)(k - i), sizeof(*t->partitions));
        }
        t->partitions[t->n_partitions++] = (struct offset_fetch_resp_partition){
            all[i]->partition, all[i]->offset, all[i]->leader_epoch, kstr_c(all[i]->metadata),
            KERR_NONE};
    }
}

void coordinator_fetch_offsets(struct coordinator *c, const struct offset_fetch_req *req,
                               struct arena *a, struct offset_fetch_resp *resp)
{
    *resp = (struct offset_fetch_resp){0};
    int16_t ec = check_group_id(c, req->group_id);
    if (ec == KERR_INVALID_GROUP_ID && req->group_id.len == 0)
        ec = KERR_NONE; /* Kafka answers an empty group id with no offsets */
    struct cgroup *cg = ec == KERR_NONE ? find(c, req->group_id) : NULL;
    resp->error_code = ec;
    if (req->n_topics < 0) {
        if (ec == KERR_NONE)
            fetch_all(cg ? cg->g : NULL, a, resp);
        return;
    }
    resp->n_topics = req->n_topics;
    resp->topics =
        arena_calloc(a, (size_t)(req->n_topics ? req->n_topics : 1), sizeof(*resp->topics));
    for (int32_t i = 0; i < req->n_topics; i++) {
        const struct offset_fetch_req_topic *rt = &req->topics[i];
        struct offset_fetch_resp_topic *t = &resp->topics[i];
        t->name = rt->name;
        t->n_partitions = rt->n_partition_indexes;
        t->partitions = arena_calloc(a, (size_t)(t->n_partitions ? t->n_partitions : 1),
                                     sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            int32_t pi = rt->partition_indexes[j];
            const struct group_offset *o = cg ? group_offset_get(cg->g, rt->name, pi) : NULL;
            t->partitions[j] = (struct offset_fetch_resp_partition){
                pi, o ? o->offset : -1, o ? o->leader_epoch : -1, kstr_c(o ? o->metadata : ""), ec};
        }
    }
}

/* ---- describe, list, delete ---- */

void coordinator_describe(struct coordinator *c, struct kstr group_id, struct arena *a,
                          struct describe_groups_group *out)
{
    *out = (struct describe_groups_group){.group_id = group_id,
                                          .group_state = kstr_c("Dead"),
                                          .protocol_type = kstr_c(""),
                                          .protocol_data = kstr_c(""),
                                          .authorized_operations =
                                              KAFKA_AUTHORIZED_OPERATIONS_OMITTED};
    int16_t ec = check_group_id(c, group_id);
    if (ec == KERR_INVALID_GROUP_ID) {
        out->error_code = KERR_INVALID_GROUP_ID;
        return;
    }
    if (ec != KERR_NONE) {
        out->error_code = ec;
        return;
    }
    struct cgroup *cg = find(c, group_id);
    if (!cg)
        return; /* Kafka describes an unknown group as Dead with no error */
    const struct group *g = cg->g;
    bool stable = g->state == GROUP_STABLE;
    out->group_state = kstr_c(group_state_name(g->state));
    out->protocol_type = kstr_c(g->protocol_type ? g->protocol_type : "");
    out->protocol_data = kstr_c(stable && g->protocol_name ? g->protocol_name : "");
    out->n_members = g->n_members;
    out->members =
        arena_calloc(a, (size_t)(g->n_members ? g->n_members : 1), sizeof(*out->members));
    for (int32_t i = 0; i < g->n_members; i++) {
        const struct group_member *m = g->members[i];
        struct describe_groups_member *d = &out->members[i];
        d->member_id = kstr_c(m->member_id);
        d->group_instance_id = m->instance_id ? kstr_c(m->instance_id) : KSTR_NULL;
        d->client_id = kstr_c(m->client_id);
        d->client_host = kstr_c(m->client_host);
        d->member_metadata = (struct kbytes){(const uint8_t *)"", 0};
        d->member_assignment = (struct kbytes){(const uint8_t *)"", 0};
        if (!stable)
            continue; /* as Kafka: metadata and assignment only once Stable */
        for (int32_t k = 0; k < m->n_protocols; k++)
            if (strcmp(m->protocols[k].name, g->protocol_name) == 0 && m->protocols[k].metadata)
                d->member_metadata =
                    (struct kbytes){m->protocols[k].metadata, m->protocols[k].metadata_len};
        if (m->assignment)
            d->member_assignment = (struct kbytes){m->assignment, m->assignment_len};
    }
}

void coordinator_list(struct coordinator *c, const struct list_groups_req *req, struct arena *a,
                      struct list_groups_resp *resp)
{
    *resp = (struct list_groups_resp){0};
    bool want[GROUP_DEAD + 1] = {0};
    for (int32_t i = 0; i < req->n_states_filter; i++) {
        enum group_state s;
        if (group_state_parse(req->states_filter[i], &s))
            want[s] = true;
    }
    resp->groups = arena_calloc(a, c->groups.len ? c->groups.len : 1, sizeof(*resp->groups));
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&c->groups, &it, &k, &v)) {
        const struct group *g = ((struct cgroup *)v)->g;
        if (req->n_states_filter > 0 && !want[g->state])
            continue;
        if (group_pstate(c, kstr_c(g->id)) != PART_LOADED)
            continue;
        resp->groups[resp->n_groups++] = (struct list_groups_group){
            kstr_c(g->id), kstr_c(g->protocol_type ? g->protocol_type : ""),
            kstr_c(group_state_name(g->state))};
    }
}

/* Tombstones for every offset of g (and the group record itself when with_group). */
static void recs_tombstones(struct recs *rs, const struct group *g, bool with_group)
{
    size_t it = 0;
    const struct group_offset *o;
    struct kstr id = kstr_c(g->id);
    while ((o = group_offset_next(g, &it)))
        recs_offset(rs, id, kstr_c(o->topic), o->partition, NULL);
    if (with_group)
        recs_group(rs, id, NULL);
}

int16_t coordinator_delete_group(struct coordinator *c, struct kstr group_id,
                                 void (*done)(void *arg), void *arg, bool *pending)
{
    *pending = false;
    int16_t ec = check_group_id(c, group_id);
    if (ec != KERR_NONE)
        return ec;
    struct cgroup *cg = find(c, group_id);
    if (!cg || cg->g->state == GROUP_DEAD)
        return KERR_GROUP_ID_NOT_FOUND;
    if (cg->g->n_members > 0)
        return KERR_NON_EMPTY_GROUP;
    struct recs rs;
    recs_init(&rs);
    recs_tombstones(&rs, cg->g, true);
    int32_t p = coordinator_partition_for(c, group_id);
    log_info("group_deleted", "group=%s offsets=%d", cg->g->id, group_offset_count(cg->g));
    group_mark_dead(cg->g);
    drop(c, cg);
    *pending = write_records(c, p, &rs, false, NULL, 0, done, arg);
    recs_destroy(&rs);
    return KERR_NONE;
}

int16_t coordinator_delete_offsets(struct coordinator *c, const struct offset_delete_req *req,
                                   struct offset_delete_resp *resp, void (*done)(void *arg),
                                   void *arg, bool *pending)
{
    *pending = false;
    int16_t ec = check_group_id(c, req->group_id);
    if (ec != KERR_NONE)
        return ec;
    struct cgroup *cg = find(c, req->group_id);
    if (!cg || cg->g->state == GROUP_DEAD)
        return KERR_GROUP_ID_NOT_FOUND;
    struct group *g = cg->g;
    bool active = g->state != GROUP_EMPTY;
    if (active && (!g->protocol_type || strcmp(g->protocol_type, "consumer") != 0))
        return KERR_NON_EMPTY_GROUP;
    struct recs rs;
    recs_init(&rs);
    for (int32_t i = 0; i < req->n_topics; i++) {
        const struct offset_delete_req_topic *t = &req->topics[i];
        bool subscribed = active && group_subscribes(g, t->name);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            int16_t *out = &resp->topics[i].partitions[j].error_code;
            int32_t pi = t->partitions[j];
            if (subscribed) {
                *out = KERR_GROUP_SUBSCRIBED_TO_TOPIC;
            } else if (!c->io.partition_exists(c->io.ctx, t->name, pi)) {
                *out = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            } else {
                *out = KERR_NONE;
                if (group_offset_del(g, t->name, pi))
                    recs_offset(&rs, req->group_id, t->name, pi, NULL);
            }
        }
    }
    *pending = write_records(c, coordinator_partition_for(c, req->group_id), &rs, false, NULL, 0,
                             done, arg);
    recs_destroy(&rs);
    touch(c, cg);
    return KERR_NONE;
}

/* ---- expiry and deleted topics ---- */

typedef bool (*offset_match_fn)(const struct group *g, const struct group_offset *o,
                                const void *arg);

/* Removes the offsets of every loaded group that match (writing their tombstones), then the
 * groups left Empty without offsets (a group tombstone; Dead). only_empty: look at Empty
 * groups only. why names the log event. */
static void drop_offsets(struct coordinator *c, bool only_empty, offset_match_fn match,
                         const void *arg, const char *why)
{
    size_t n, k = 0;
    struct cgroup **all = all_groups(c, &n), **doomed = all; /* doomed[k] trails all[gi] */
    for (size_t gi = 0; gi < n; gi++) {
        struct cgroup *cg = all[gi];
        struct group *g = cg->g;
        if (only_empty && g->state != GROUP_EMPTY)
            continue;
        struct kstr id = kstr_c(g->id);
        if (group_pstate(c, id) != PART_LOADED)
            continue;
        struct recs rs;
        recs_init(&rs);
        /* collect first: deleting while iterating the offset map would skip entries */
        int32_t n_off = group_offset_count(g), n_exp = 0;
        struct group_offset **exp = mem_calloc((size_t)(n_off ? n_off : 1), sizeof(*exp));
        size_t oit = 0;
        const struct group_offset *o;
        while ((o = group_offset_next(g, &oit)))
            if (match(g, o, arg))
                exp[n_exp++] = (struct group_offset *)o;
        for (int32_t i = 0; i < n_exp; i++)
            recs_offset(&rs, id, kstr_c(exp[i]->topic), exp[i]->partition, NULL);
        for (int32_t i = 0; i < n_exp; i++) {
            char *topic = mem_strdup(exp[i]->topic);
            group_offset_del(g, kstr_c(topic), exp[i]->partition);
            mem_free(topic);
        }
        mem_free(exp);
        bool gone = g->state == GROUP_EMPTY && group_offset_count(g) == 0 && g->n_pending == 0;
        if (gone)
            recs_group(&rs, id, NULL);
        if (n_exp || gone)
            log_info(why, "group=%s offsets=%d group_removed=%s", g->id, n_exp,
                     gone ? "true" : "false");
        write_records(c, coordinator_partition_for(c, id), &rs, false, NULL, 0, NULL, NULL);
        recs_destroy(&rs);
        if (gone)
            doomed[k++] = cg;
    }
    for (size_t i = 0; i < k; i++) {
        group_mark_dead(doomed[i]->g);
        drop(c, doomed[i]);
    }
    mem_free(all);
}

struct expiry {
    int64_t wall_ms;
    int64_t retention_ms;
};

static bool offset_expired(const struct group *g, const struct group_offset *o, const void *arg)
{
    const struct expiry *e = arg;
    return MAX(o->commit_ts_ms, g->state_ts_wall_ms) + e->retention_ms <= e->wall_ms;
}

void coordinator_expire(struct coordinator *c, int64_t wall_ms)
{
    struct expiry e = {wall_ms, c->cfg.offsets_retention_ms};
    drop_offsets(c, true, offset_expired, &e, "group_offsets_expired");
}

static bool offset_of_topic(const struct group *g, const struct group_offset *o, const void *arg)
{
    return strcmp(o->topic, arg) == 0;
}

void coordinator_forget_topic(struct coordinator *c, const char *topic)
{
    drop_offsets(c, false, offset_of_topic, topic, "group_offsets_of_deleted_topic");
}
