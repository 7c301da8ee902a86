/* DescribeClientQuotas (key 48) and AlterClientQuotas (49), v0-1, flexible from v1
 * (DescribeClientQuotasRequest/Response.json, AlterClientQuotasRequest/Response.json; KIP-546).
 * An entity is a list of (type, name) parts; a null name is the type's default. */
#include "kafka/msg_int.h"

static int32_t rd_entity(struct kreader *r, bool f, struct arena *a,
                         struct kquota_entity_part **out)
{
    int32_t n = kmsg_rd_array(r, f, 2 * kmsg_min_str(f) + kmsg_min_tags(f));
    *out = kmsg_alloc(a, n, sizeof(**out));
    for (int32_t i = 0; i < n; i++) {
        (*out)[i].type = kmsg_rd_str(r, f);
        (*out)[i].name = kr_str(r, f);
        kr_tags(r, f);
    }
    return n;
}

static void wr_entity(struct kwriter *w, bool f, const struct kquota_entity_part *e, int32_t n)
{
    kmsg_wr_array(w, f, n);
    for (int32_t i = 0; i < n; i++) {
        kmsg_wr_str(w, f, e[i].type);
        kmsg_wr_nstr(w, f, e[i].name);
        kw_tags(w, f);
    }
}

int kmsg_decode_describe_quotas(struct kreader *r, int16_t v, struct arena *a,
                                struct describe_quotas_req *out)
{
    if (!kmsg_version_ok(KAPI_DESCRIBE_CLIENT_QUOTAS, v))
        return -ERR_UNSUPPORTED;
    bool f = v >= 1;
    *out = (struct describe_quotas_req){0};
    int32_t n = kmsg_rd_array(r, f, 2 * kmsg_min_str(f) + 1 + kmsg_min_tags(f));
    out->components = kmsg_alloc(a, n, sizeof(*out->components));
    out->n_components = n;
    for (int32_t i = 0; i < n; i++) {
        struct describe_quotas_component *c = &out->components[i];
        c->entity_type = kmsg_rd_str(r, f);
        c->match_type = kr_i8(r);
        c->match = kr_str(r, f);
        kr_tags(r, f);
    }
    out->strict = kr_bool(r);
    kr_tags(r, f);
    return kmsg_rd_done(r);
}

void kmsg_encode_describe_quotas(struct kwriter *w, int16_t v,
                                 const struct describe_quotas_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DESCRIBE_CLIENT_QUOTAS, v));
    bool f = v >= 1;
    kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kmsg_wr_nstr(w, f, resp->error_message);
    kw_array(w, f, resp->n_entries); /* nullable: -1 with an error */
    for (int32_t i = 0; i < resp->n_entries; i++) {
        const struct describe_quotas_entry *e = &resp->entries[i];
        wr_entity(w, f, e->entity, e->n_entity);
        kmsg_wr_array(w, f, e->n_values);
        for (int32_t j = 0; j < e->n_values; j++) {
            kmsg_wr_str(w, f, e->values[j].key);
            kw_f64(w, e->values[j].value);
            kw_tags(w, f);
        }
        kw_tags(w, f);
    }
    kw_tags(w, f);
}

int kmsg_decode_alter_quotas(struct kreader *r, int16_t v, struct arena *a,
                             struct alter_quotas_req *out)
{
    if (!kmsg_version_ok(KAPI_ALTER_CLIENT_QUOTAS, v))
        return -ERR_UNSUPPORTED;
    bool f = v >= 1;
    *out = (struct alter_quotas_req){0};
    int32_t n = kmsg_rd_array(r, f, 2 * (f ? 1 : 4) + kmsg_min_tags(f));
    out->entries = kmsg_alloc(a, n, sizeof(*out->entries));
    out->n_entries = n;
    for (int32_t i = 0; i < n; i++) {
        struct alter_quotas_entry *e = &out->entries[i];
        e->n_entity = rd_entity(r, f, a, &e->entity);
        int32_t m = kmsg_rd_array(r, f, kmsg_min_str(f) + 8 + 1 + kmsg_min_tags(f));
        e->ops = kmsg_alloc(a, m, sizeof(*e->ops));
        e->n_ops = m;
        for (int32_t j = 0; j < m; j++) {
            e->ops[j].key = kmsg_rd_str(r, f);
            e->ops[j].value = kr_f64(r);
            e->ops[j].remove = kr_bool(r);
            kr_tags(r, f);
        }
        kr_tags(r, f);
    }
    out->validate_only = kr_bool(r);
    kr_tags(r, f);
    return kmsg_rd_done(r);
}

void kmsg_encode_alter_quotas(struct kwriter *w, int16_t v, const struct alter_quotas_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_ALTER_CLIENT_QUOTAS, v));
    bool f = v >= 1;
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, f, resp->n_entries);
    for (int32_t i = 0; i < resp->n_entries; i++) {
        const struct alter_quotas_result *e = &resp->entries[i];
        kw_error_code(w, e->error_code);
        kmsg_wr_nstr(w, f, e->error_message);
        wr_entity(w, f, e->entity, e->n_entity);
        kw_tags(w, f);
    }
    kw_tags(w, f);
}
