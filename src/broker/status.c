/* The JSON views (/v1/topics, /v1/groups) and the health verdict (/healthz). See metrics.h. */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "base/mem.h"
#include "broker/internal.h"
#include "broker/metrics.h"
#include "broker/snapshot.h"
#include "group/coordinator.h"
#include "group/group.h"
#include "storage/plog.h"

#define FENCED_LISTED_MAX 20

/* Kafka prints topic ids as unpadded URL-safe base64 of the 16 bytes. */
static void topic_id_text(const uint8_t id[16], char out[23])
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < 16; i += 3) {
        uint32_t v = (uint32_t)id[i] << 16;
        if (i + 1 < 16)
            v |= (uint32_t)id[i + 1] << 8;
        if (i + 2 < 16)
            v |= id[i + 2];
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        if (i + 1 < 16)
            out[o++] = b64[v >> 6 & 63];
        if (i + 2 < 16)
            out[o++] = b64[v & 63];
    }
    out[o] = '\0';
}

static void partition_json(struct json *j, const struct partition *p)
{
    json_obj_begin(j);
    json_key(j, "partition");
    json_i64(j, p->index);
    json_key(j, "log_start_offset");
    json_i64(j, plog_start_offset(p->log));
    json_key(j, "log_end_offset");
    json_i64(j, plog_end_offset(p->log));
    json_key(j, "high_watermark");
    json_i64(j, plog_high_watermark(p->log));
    json_key(j, "durable_offset");
    json_i64(j, plog_durable_offset(p->log));
    json_key(j, "size_bytes");
    json_i64(j, plog_size_bytes(p->log));
    json_key(j, "segments");
    json_i64(j, plog_segment_count(p->log));
    json_key(j, "leader_epoch");
    json_i64(j, p->leader_epoch);
    json_key(j, "fenced");
    json_bool(j, plog_fenced(p->log));
    json_key(j, "appended_records");
    json_u64(j, p->records_in);
    json_key(j, "appended_bytes");
    json_u64(j, p->bytes_in);
    json_obj_end(j);
}

void broker_topics_json(struct broker *b, struct strbuf *out)
{
    struct json j;
    json_init(&j, out);
    size_t n;
    struct topic **ts = snapshot_topics(b, &n);
    json_obj_begin(&j);
    json_key(&j, "topics");
    json_arr_begin(&j);
    for (size_t i = 0; i < n; i++) {
        const struct topic *t = ts[i];
        char id[23];
        topic_id_text(t->id, id);
        json_obj_begin(&j);
        json_key(&j, "name");
        json_cstr(&j, t->name);
        json_key(&j, "id");
        json_cstr(&j, id);
        json_key(&j, "internal");
        json_bool(&j, t->internal);
        json_key(&j, "partitions");
        json_arr_begin(&j);
        for (int32_t k = 0; k < t->n_parts; k++)
            partition_json(&j, t->parts[k]);
        json_arr_end(&j);
        json_key(&j, "configs");
        json_obj_begin(&j);
        for (int k = 0; k < t->n_overrides; k++) {
            json_key(&j, t->overrides[k].key);
            json_cstr(&j, t->overrides[k].value);
        }
        json_obj_end(&j);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    mem_free(ts);
}

/* A consumer-protocol assignment (version, [topic, [partition]], user data) as
 * [{"topic":..,"partitions":[..]}]; anything that does not decode as one is left out (the
 * member's "assignment_bytes" still says how big it is). */
static void assignment_json(struct json *j, const uint8_t *p, int32_t len)
{
    json_arr_begin(j);
    struct kreader r;
    kr_init(&r, p, len > 0 ? (size_t)len : 0);
    (void)kr_i16(&r); /* version: every version starts alike */
    int32_t nt = kr_array(&r, false, 6);
    for (int32_t t = 0; t < nt && kr_ok(&r); t++) {
        struct kstr topic = kr_str(&r, false);
        int32_t np = kr_array(&r, false, 4);
        if (!kr_ok(&r) || topic.len < 0)
            break;
        json_obj_begin(j);
        json_key(j, "topic");
        json_str(j, topic.p, (size_t)topic.len);
        json_key(j, "partitions");
        json_arr_begin(j);
        for (int32_t k = 0; k < np; k++)
            json_i64(j, kr_i32(&r));
        json_arr_end(j);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void member_json(struct json *j, const struct group *g, const struct group_member *m)
{
    json_obj_begin(j);
    json_key(j, "member_id");
    json_cstr(j, m->member_id);
    json_key(j, "group_instance_id");
    json_cstr(j, m->instance_id);
    json_key(j, "client_id");
    json_cstr(j, m->client_id);
    json_key(j, "client_host");
    json_cstr(j, m->client_host);
    json_key(j, "leader");
    json_bool(j, g->leader_id && strcmp(g->leader_id, m->member_id) == 0);
    json_key(j, "assignment_bytes");
    json_i64(j, m->assignment_len);
    if (g->protocol_type && strcmp(g->protocol_type, "consumer") == 0) {
        json_key(j, "assignment");
        assignment_json(j, m->assignment, m->assignment_len);
    }
    json_obj_end(j);
}

static void offsets_json(struct json *j, struct broker *b, const struct group *g)
{
    size_t n;
    const struct group_offset **os = snapshot_offsets(g, &n);
    json_arr_begin(j);
    for (size_t k = 0; k < n; k++) {
        const struct group_offset *o = os[k];
        const struct partition *p = partition_find(b, kstr_c(o->topic), o->partition);
        json_obj_begin(j);
        json_key(j, "topic");
        json_cstr(j, o->topic);
        json_key(j, "partition");
        json_i64(j, o->partition);
        json_key(j, "committed_offset");
        json_i64(j, o->offset);
        json_key(j, "log_end_offset"); /* what consumers can reach: the high watermark */
        if (p)
            json_i64(j, plog_high_watermark(p->log));
        else
            json_null(j);
        json_key(j, "lag");
        int64_t lag = snapshot_lag(b, o);
        if (lag >= 0)
            json_i64(j, lag);
        else
            json_null(j);
        json_key(j, "metadata");
        json_cstr(j, o->metadata);
        json_key(j, "commit_timestamp_ms");
        json_i64(j, o->commit_ts_ms);
        json_obj_end(j);
    }
    json_arr_end(j);
    mem_free(os);
}

void broker_groups_json(struct broker *b, struct strbuf *out)
{
    struct json j;
    json_init(&j, out);
    size_t n;
    struct group **gs = snapshot_groups(b, &n);
    json_obj_begin(&j);
    json_key(&j, "groups");
    json_arr_begin(&j);
    for (size_t i = 0; i < n; i++) {
        const struct group *g = gs[i];
        json_obj_begin(&j);
        json_key(&j, "group");
        json_cstr(&j, g->id);
        json_key(&j, "state");
        json_cstr(&j, group_state_name(g->state));
        json_key(&j, "protocol_type");
        json_cstr(&j, g->protocol_type ? g->protocol_type : "");
        json_key(&j, "protocol");
        json_cstr(&j, g->protocol_name ? g->protocol_name : "");
        json_key(&j, "generation");
        json_i64(&j, g->generation);
        json_key(&j, "leader");
        json_cstr(&j, g->leader_id);
        json_key(&j, "members");
        json_arr_begin(&j);
        for (int32_t k = 0; k < g->n_members; k++)
            member_json(&j, g, g->members[k]);
        json_arr_end(&j);
        json_key(&j, "offsets");
        offsets_json(&j, b, g);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    mem_free(gs);
}

bool broker_health(struct broker *b, struct strbuf *why)
{
    bool ok = true;
    if (b->stopping) {
        strbuf_puts(why, "stopping: the broker is shutting down\n");
        ok = false;
    }
    size_t n, fenced = 0;
    struct topic **ts = snapshot_topics(b, &n);
    for (size_t i = 0; i < n; i++) {
        for (int32_t k = 0; k < ts[i]->n_parts; k++) {
            if (!plog_fenced(ts[i]->parts[k]->log))
                continue;
            if (fenced++ < FENCED_LISTED_MAX)
                strbuf_printf(why,
                              "fenced: partition %s-%d refuses writes after a write or "
                              "fsync error\n",
                              ts[i]->name, (int)ts[i]->parts[k]->index);
        }
    }
    if (fenced > FENCED_LISTED_MAX)
        strbuf_printf(why, "fenced: %zu partitions in all\n", fenced);
    mem_free(ts);
    return ok && fenced == 0;
}
