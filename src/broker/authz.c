/* Authorization of client requests (broker/authz.h).
 *
 * State: one struct authz per broker while the authorizer is on (b->authz; NULL when off):
 *   - store: the committed image's ACL bindings, hosts in canonical form; rebuilt lazily, at
 *     the first check after authz_image_changed set dirty (a rebuild is O(n log n) in the
 *     bindings; metadata changes are rare next to requests);
 *   - super_users: super.users parsed once at start;
 *   - allowed / denied: counters of decisions; last_log_ms / unlogged: the rate limit of the
 *     denial log line.
 * Invariant: when dirty is false, store holds exactly the image's bindings (those whose host
 * canonicalises; a binding whose host does not parse is left out, so it matches no client).
 *
 * Each session's host (session.acl_host) is computed at its first check: the peer address
 * without its port and brackets, as inet_ntop writes it. */
#include "broker/authz.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "broker/sasl.h"
#include "controller/image.h"

#define LOG_EVERY_MS 1000

struct authz {
    struct acl_store *store;
    struct acl_super_users *super_users;
    struct acl_settings settings;
    bool dirty;
    uint64_t allowed, denied;
    int64_t last_log_ms;
    uint64_t unlogged;
};

int authz_start(struct broker *b, char *err, size_t errcap)
{
    if (!b->cfg->authorizer_enabled)
        return 0;
    struct authz *z = mem_calloc(1, sizeof(*z));
    if (acl_super_users_parse(b->cfg->super_users, &z->super_users, err, errcap) != 0) {
        mem_free(z);
        return -1;
    }
    z->store = acl_store_new(ACL_STORE_MAX);
    z->settings = (struct acl_settings){z->super_users, b->cfg->allow_everyone_if_no_acl_found};
    z->dirty = true;
    b->authz = z;
    log_info("authorizer_on", "super_users=%zu allow_everyone_if_no_acl_found=%s",
             acl_super_users_count(z->super_users), z->settings.allow_if_no_acl ? "true" : "false");
    return 0;
}

void authz_stop(struct broker *b)
{
    struct authz *z = b->authz;
    if (!z)
        return;
    acl_store_free(z->store);
    acl_super_users_free(z->super_users);
    mem_free(z);
    b->authz = NULL;
}

void authz_image_changed(struct broker *b)
{
    if (b->authz)
        b->authz->dirty = true;
}

bool authz_on(const struct broker *b)
{
    return b->authz != NULL;
}

void authz_counts(const struct broker *b, uint64_t *allowed, uint64_t *denied)
{
    *allowed = b->authz ? b->authz->allowed : 0;
    *denied = b->authz ? b->authz->denied : 0;
}

/* src cut to cap - 1 bytes (the record and binding limits differ; a cut host fails to parse
 * and a cut name fails acl_binding_check's callers' length checks first). */
static void copy(char *dst, size_t cap, const char *src, size_t src_cap)
{
    size_t n = strnlen(src, (cap < src_cap ? cap : src_cap) - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void authz_binding_from_rec(struct acl_binding *out, const struct ctl_rec_acl *r)
{
    memset(out, 0, sizeof(*out));
    out->resource_type = (enum acl_resource_type)r->resource_type;
    out->pattern_type = (enum acl_pattern_type)r->pattern_type;
    out->operation = (enum acl_operation)r->operation;
    out->permission = (enum acl_permission)r->permission;
    copy(out->resource_name, sizeof(out->resource_name), r->resource_name, sizeof(r->resource_name));
    copy(out->principal, sizeof(out->principal), r->principal, sizeof(r->principal));
    copy(out->host, sizeof(out->host), r->host, sizeof(r->host));
}

void authz_rec_from_binding(struct ctl_rec_acl *out, const struct acl_binding *b)
{
    memset(out, 0, sizeof(*out));
    out->resource_type = (int8_t)b->resource_type;
    out->pattern_type = (int8_t)b->pattern_type;
    out->operation = (int8_t)b->operation;
    out->permission = (int8_t)b->permission;
    copy(out->resource_name, sizeof(out->resource_name), b->resource_name, sizeof(b->resource_name));
    copy(out->principal, sizeof(out->principal), b->principal, sizeof(b->principal));
    copy(out->host, sizeof(out->host), b->host, sizeof(b->host));
}

/* An address literal in inet_ntop's form (IPv4-mapped IPv6 as IPv4) into out; "*" stays.
 * Returns false for anything else. */
static bool canonical_host(const char *in, char *out, size_t cap)
{
    if (!strcmp(in, ACL_WILDCARD)) {
        copy(out, cap, in, cap);
        return true;
    }
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, in, &a4) == 1)
        return inet_ntop(AF_INET, &a4, out, (socklen_t)cap) != NULL;
    if (inet_pton(AF_INET6, in, &a6) != 1)
        return false;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) {
        memcpy(&a4, &a6.s6_addr[12], 4);
        return inet_ntop(AF_INET, &a4, out, (socklen_t)cap) != NULL;
    }
    return inet_ntop(AF_INET6, &a6, out, (socklen_t)cap) != NULL;
}

static void rebuild(struct broker *b, struct authz *z)
{
    const struct ctl_image *img = cluster_image(b->cluster);
    acl_store_clear(z->store);
    for (size_t i = 0; img && i < img->n_acls; i++) {
        struct acl_binding bd;
        authz_binding_from_rec(&bd, &img->acls[i]);
        char host[ACL_HOST_MAX + 1];
        if (!canonical_host(bd.host, host, sizeof(host)))
            continue;
        memcpy(bd.host, host, sizeof(host));
        (void)acl_store_add(z->store, &bd, NULL); /* the image holds valid, distinct bindings */
    }
    z->dirty = false;
}

static struct authz *ready(struct broker *b)
{
    struct authz *z = b->authz;
    if (z && z->dirty)
        rebuild(b, z);
    return z;
}

static const char *session_host(struct session *s)
{
    if (!s->acl_host[0]) {
        char peer[80];
        copy(peer, sizeof(peer), conn_peer(s->conn), sizeof(peer));
        char *p = peer;
        char *colon = strrchr(p, ':');
        if (colon)
            *colon = '\0';
        if (*p == '[') {
            p++;
            char *close = strchr(p, ']');
            if (close)
                *close = '\0';
        }
        if (!canonical_host(p, s->acl_host, sizeof(s->acl_host)))
            snprintf(s->acl_host, sizeof(s->acl_host), "unknown");
    }
    return s->acl_host;
}

static void log_denied(struct authz *z, const char *api, const char *principal, const char *host,
                       enum acl_operation op, enum acl_resource_type t, const char *name)
{
    int64_t now = time_mono_ms();
    if (z->last_log_ms != 0 && now - z->last_log_ms < LOG_EVERY_MS) {
        z->unlogged++;
        return;
    }
    log_info("authorization_denied",
             "principal=%s host=%s operation=%s resource=%s:%s api=%s not_logged=%" PRIu64,
             principal, host, acl_operation_name(op), acl_resource_type_name(t), name, api,
             z->unlogged);
    z->last_log_ms = now;
    z->unlogged = 0;
}

/* The decision for principal from host, counted (and with audit, a denial logged as api's). */
static bool decide_for(struct authz *z, const char *api, const char *principal, const char *host,
                       enum acl_operation op, enum acl_resource_type t, struct kstr name,
                       bool audit)
{
    char nm[ACL_NAME_MAX + 1];
    bool ok = name.len > 0 && acl_str_copy(nm, sizeof(nm), name.p, (size_t)name.len) == 0;
    ok = ok && acl_authorize(z->store, principal, host, op, t, nm, &z->settings) == ACL_ALLOWED;
    if (ok) {
        z->allowed++;
        return true;
    }
    z->denied++;
    if (audit)
        log_denied(z, api, principal, host, op, t, name.len > 0 ? nm : "");
    return false;
}

static bool decide(struct request *req, enum acl_operation op, enum acl_resource_type t,
                   struct kstr name, bool audit)
{
    struct authz *z = ready(req->b);
    if (!z)
        return true;
    return decide_for(z, kafka_api_name(req->hdr.api_key), session_principal(req->s),
                      session_host(req->s), op, t, name, audit);
}

bool authz_allows_principal(struct broker *b, const char *principal, const char *host,
                            enum acl_operation op, enum acl_resource_type t, const char *name,
                            bool audit)
{
    struct authz *z = ready(b);
    if (!z)
        return true;
    /* a subject name may be longer than any binding's (ACL_NAME_MAX): no binding can name it,
     * but a super user may still do everything */
    if (strlen(name) > ACL_NAME_MAX && acl_super_users_contains(z->super_users, principal)) {
        z->allowed++;
        return true;
    }
    return decide_for(z, "SchemaRegistry", principal, host, op, t, kstr_c(name), audit);
}

bool authz_allows(struct request *req, enum acl_operation op, enum acl_resource_type t,
                  struct kstr name)
{
    return decide(req, op, t, name, true);
}

bool authz_allows_quiet(struct request *req, enum acl_operation op, enum acl_resource_type t,
                        struct kstr name)
{
    return decide(req, op, t, name, false);
}

bool authz_allows_cluster(struct request *req, enum acl_operation op)
{
    return decide(req, op, ACL_RESOURCE_CLUSTER, kstr_c(ACL_CLUSTER_NAME), true);
}

bool authz_allows_some_topic(struct request *req, enum acl_operation op)
{
    struct authz *z = ready(req->b);
    if (!z)
        return true;
    const char *principal = session_principal(req->s);
    const char *host = session_host(req->s);
    if (acl_super_users_contains(z->super_users, principal)) {
        z->allowed++;
        return true;
    }
    struct acl_filter f = {ACL_RESOURCE_TOPIC, ACL_PATTERN_ANY, NULL, NULL, NULL, ACL_OP_ANY,
                           ACL_PERM_ALLOW};
    size_t pos = 0;
    const struct acl_binding *bd;
    bool any_topic_acl = false;
    while ((bd = acl_store_next(z->store, &f, &pos)) != NULL) {
        any_topic_acl = true;
        bool applies = (!strcmp(bd->principal, principal) ||
                        !strcmp(bd->principal, ACL_WILDCARD_PRINCIPAL)) &&
                       (!strcmp(bd->host, host) || !strcmp(bd->host, ACL_WILDCARD)) &&
                       (bd->operation == op || bd->operation == ACL_OP_ALL);
        /* the topics it names are not all denied: the name itself (a PREFIXED binding's prefix
         * is one of the names it covers) passes the full decision */
        if (applies && acl_authorize(z->store, principal, host, op, ACL_RESOURCE_TOPIC,
                                     bd->resource_name, &z->settings) == ACL_ALLOWED) {
            z->allowed++;
            return true;
        }
    }
    if (!any_topic_acl && z->settings.allow_if_no_acl) {
        struct acl_filter deny = f;
        deny.permission = ACL_PERM_DENY;
        pos = 0;
        if (acl_store_next(z->store, &deny, &pos) == NULL) {
            z->allowed++;
            return true;
        }
    }
    z->denied++;
    log_denied(z, kafka_api_name(req->hdr.api_key), principal, host, op, ACL_RESOURCE_TOPIC,
               "(any)");
    return false;
}
