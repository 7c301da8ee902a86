/* DescribeConfigs (key 32) v0-4 (v3 adds each config's type and documentation), AlterConfigs (key
 * 33) v0-2 and IncrementalAlterConfigs (key 44) v0-1 (DescribeConfigs*.json, AlterConfigs*.json,
 * IncrementalAlterConfigs*.json; flexible from v4, v2 and v1). IncrementalAlterConfigs answers with
 * AlterConfigs' fields. */
#include "kafka/msg_int.h"

/* ---- DescribeConfigs ---- */

int kmsg_decode_describe_configs(struct kreader *r, int16_t v, struct arena *a,
                                 struct describe_configs_req *out)
{
    if (!kmsg_version_ok(KAPI_DESCRIBE_CONFIGS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_DESCRIBE_CONFIGS, v);
    *out = (struct describe_configs_req){0};
    size_t res_min = 1 + kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, res_min);
    out->resources = kmsg_alloc(a, n, sizeof(*out->resources));
    out->n_resources = n;
    for (int32_t i = 0; i < n; i++) {
        struct describe_configs_req_resource *res = &out->resources[i];
        res->resource_type = kr_i8(r);
        res->resource_name = kmsg_rd_str(r, flex);
        res->configuration_keys = kmsg_rd_strs(r, flex, a, true, &res->n_configuration_keys);
        kr_tags(r, flex);
    }
    if (v >= 1)
        out->include_synonyms = kr_bool(r);
    if (v >= 3)
        out->include_documentation = kr_bool(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

static void encode_config(struct kwriter *w, int16_t v, bool flex,
                          const struct describe_configs_entry *c)
{
    kmsg_wr_str(w, flex, c->name);
    kmsg_wr_nstr(w, flex, c->value); /* nullable */
    kw_bool(w, c->read_only);
    if (v == 0)
        kw_bool(w, c->is_default);
    if (v >= 1)
        kw_i8(w, c->config_source);
    kw_bool(w, c->is_sensitive);
    if (v >= 1) {
        kmsg_wr_array(w, flex, c->n_synonyms);
        for (int32_t i = 0; i < c->n_synonyms; i++) {
            const struct describe_configs_synonym *s = &c->synonyms[i];
            kmsg_wr_str(w, flex, s->name);
            kmsg_wr_nstr(w, flex, s->value); /* nullable */
            kw_i8(w, s->source);
            kw_tags(w, flex);
        }
    }
    if (v >= 3) {
        kw_i8(w, c->config_type);
        kmsg_wr_nstr(w, flex, c->documentation); /* nullable */
    }
    kw_tags(w, flex);
}

void kmsg_encode_describe_configs(struct kwriter *w, int16_t v,
                                  const struct describe_configs_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DESCRIBE_CONFIGS, v));
    bool flex = kafka_api_flexible(KAPI_DESCRIBE_CONFIGS, v);
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        const struct describe_configs_result *res = &resp->results[i];
        kw_error_code(w, res->error_code);
        kmsg_wr_nstr(w, flex, res->error_message); /* nullable */
        kw_i8(w, res->resource_type);
        kmsg_wr_str(w, flex, res->resource_name);
        kmsg_wr_array(w, flex, res->n_configs);
        for (int32_t j = 0; j < res->n_configs; j++)
            encode_config(w, v, flex, &res->configs[j]);
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- AlterConfigs ---- */

int kmsg_decode_alter_configs(struct kreader *r, int16_t v, struct arena *a,
                              struct alter_configs_req *out)
{
    if (!kmsg_version_ok(KAPI_ALTER_CONFIGS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_ALTER_CONFIGS, v);
    *out = (struct alter_configs_req){0};
    size_t res_min = 1 + kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    size_t config_min = 2 * kmsg_min_str(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, res_min);
    out->resources = kmsg_alloc(a, n, sizeof(*out->resources));
    out->n_resources = n;
    for (int32_t i = 0; i < n; i++) {
        struct alter_configs_req_resource *res = &out->resources[i];
        res->resource_type = kr_i8(r);
        res->resource_name = kmsg_rd_str(r, flex);
        int32_t nc = kmsg_rd_array(r, flex, config_min);
        res->configs = kmsg_alloc(a, nc, sizeof(*res->configs));
        res->n_configs = nc;
        for (int32_t j = 0; j < nc; j++) {
            res->configs[j].name = kmsg_rd_str(r, flex);
            res->configs[j].value = kr_str(r, flex); /* nullable */
            kr_tags(r, flex);
        }
        kr_tags(r, flex);
    }
    out->validate_only = kr_bool(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_alter_configs(struct kwriter *w, int16_t v, const struct alter_configs_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_ALTER_CONFIGS, v));
    bool flex = kafka_api_flexible(KAPI_ALTER_CONFIGS, v);
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_responses);
    for (int32_t i = 0; i < resp->n_responses; i++) {
        const struct alter_configs_resp_resource *res = &resp->responses[i];
        kw_error_code(w, res->error_code);
        kmsg_wr_nstr(w, flex, res->error_message); /* nullable */
        kw_i8(w, res->resource_type);
        kmsg_wr_str(w, flex, res->resource_name);
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- IncrementalAlterConfigs ---- */

int kmsg_decode_incremental_alter_configs(struct kreader *r, int16_t v, struct arena *a,
                                          struct incremental_alter_configs_req *out)
{
    if (!kmsg_version_ok(KAPI_INCREMENTAL_ALTER_CONFIGS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_INCREMENTAL_ALTER_CONFIGS, v);
    *out = (struct incremental_alter_configs_req){0};
    size_t res_min = 1 + kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    size_t config_min = kmsg_min_str(flex) + 1 + kmsg_min_str(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, res_min);
    out->resources = kmsg_alloc(a, n, sizeof(*out->resources));
    out->n_resources = n;
    for (int32_t i = 0; i < n; i++) {
        struct incremental_alter_configs_req_resource *res = &out->resources[i];
        res->resource_type = kr_i8(r);
        res->resource_name = kmsg_rd_str(r, flex);
        int32_t nc = kmsg_rd_array(r, flex, config_min);
        res->configs = kmsg_alloc(a, nc, sizeof(*res->configs));
        res->n_configs = nc;
        for (int32_t j = 0; j < nc; j++) {
            res->configs[j].name = kmsg_rd_str(r, flex);
            res->configs[j].config_operation = kr_i8(r);
            res->configs[j].value = kr_str(r, flex); /* nullable */
            kr_tags(r, flex);
        }
        kr_tags(r, flex);
    }
    out->validate_only = kr_bool(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_incremental_alter_configs(struct kwriter *w, int16_t v,
                                           const struct alter_configs_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_INCREMENTAL_ALTER_CONFIGS, v));
    bool flex = kafka_api_flexible(KAPI_INCREMENTAL_ALTER_CONFIGS, v);
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_responses);
    for (int32_t i = 0; i < resp->n_responses; i++) {
        const struct alter_configs_resp_resource *res = &resp->responses[i];
        kw_error_code(w, res->error_code);
        kmsg_wr_nstr(w, flex, res->error_message); /* nullable */
        kw_i8(w, res->resource_type);
        kmsg_wr_str(w, flex, res->resource_name);
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}
