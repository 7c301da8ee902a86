/* TLS listeners (tls_listeners.h): the glue between a listener's TLS hook in net/ and its
 * context in security/.
 *
 * Owns one tls_context and one listener_tls per TLS listener; cfg->listeners[i].tls points at
 * the latter until tls_listeners_free (after the broker, and so the listener, has stopped).
 * With cluster.ssl.* also the cluster's server and client contexts and their hooks
 * (cfg->cluster_tls, cfg->cluster_dial_tls), with the same lifetime. The admin listener's
 * context (admin_ctx, with admin_hook) is one more, and the schema registry listener's
 * (registry_ctx, registry_hook) another, reloaded with the others on SIGHUP; their files are
 * watched the same way (tls_context_get at each accept). */
#include "server/tls_listeners.h"

#include <stdio.h>
#include <string.h>

#include "base/mem.h"
#include "net/conn.h"
#include "net/dial.h"
#include "security/protocol.h"
#include "security/tls_context.h"

struct tls_listeners {
    struct tls_context *ctx[BROKER_LISTENERS_MAX];
    struct listener_tls hook[BROKER_LISTENERS_MAX];
    int n;
    struct tls_context *cluster_server; /* cluster.ssl.*, or NULL */
    struct tls_context *cluster_client;
    struct listener_tls cluster_hook;
    struct dial_tls cluster_dial;
    struct tls_context *admin_ctx; /* NULL: the admin listener is plain HTTP */
    struct listener_tls admin_hook;
    struct tls_context *registry_ctx; /* NULL: the registry's listener is plain HTTP */
    struct listener_tls registry_hook;
};

static struct ssl_ctx_st *ctx_get(int64_t now_ms, void *data)
{
    return tls_context_get(data, now_ms);
}

static int principal(const char *subject, char *out, size_t cap, void *data)
{
    return tls_context_principal(data, subject, out, cap);
}

/* cluster.ssl.*: the inter-broker contexts into t. Returns 0 or -1 with err. */
static int cluster_start(struct tls_listeners *t, struct broker_config *cfg, char *err,
                         size_t errcap)
{
    for (int client = 0; client < 2; client++) {
        struct tls_context **ctx = client ? &t->cluster_client : &t->cluster_server;
        if (tls_context_new_cluster(cfg->cluster_ssl_keystore_location,
                                    cfg->cluster_ssl_key_password,
                                    cfg->cluster_ssl_truststore_location, client, ctx, err,
                                    errcap) != 0)
            return -1;
    }
    t->cluster_hook = (struct listener_tls){.ctx_get = ctx_get, .data = t->cluster_server};
    t->cluster_dial = (struct dial_tls){.ctx_get = ctx_get, .data = t->cluster_client};
    cfg->cluster_tls = &t->cluster_hook;
    cfg->cluster_dial_tls = &t->cluster_dial;
    return 0;
}

/* An HTTP listener's context from settings (NULL: none, plain HTTP) into *ctx and *hook.
 * Returns 0 or -1 with err naming what (its keys). */
static int http_start(const struct tls_settings *settings, const char *name, const char *what,
                      struct tls_context **ctx, struct listener_tls *hook, char *err, size_t errcap)
{
    if (!settings)
        return 0;
    char cerr[1024];
    if (tls_context_new(settings, name, ctx, cerr, sizeof(cerr)) != 0) {
        snprintf(err, errcap, "%s: %s", what, cerr);
        return -1;
    }
    *hook = (struct listener_tls){
        .ctx_get = ctx_get,
        .data = *ctx,
        .handshake_timeout_ms = tls_context_handshake_timeout_ms(*ctx),
    };
    return 0;
}

int tls_listeners_start(struct broker_config *cfg, struct tls_listeners **out, char *err,
                        size_t errcap)
{
    *out = NULL;
    struct tls_listeners *t = NULL;
    if (cfg->cluster_ssl_keystore_location[0]) {
        t = mem_calloc(1, sizeof(*t));
        if (cluster_start(t, cfg, err, errcap) != 0) {
            tls_listeners_free(t);
            cfg->cluster_tls = NULL;
            cfg->cluster_dial_tls = NULL;
            return -1;
        }
    }
    for (int i = 0; i < cfg->n_listeners; i++) {
        struct broker_listener *bl = &cfg->listeners[i];
        if (!security_protocol_tls(bl->protocol))
            continue;
        if (!t)
            t = mem_calloc(1, sizeof(*t));
        char cerr[1024];
        struct tls_context *ctx;
        if (tls_context_new(bl->ssl, bl->name, &ctx, cerr, sizeof(cerr)) != 0) {
            snprintf(err, errcap, "listener %s: %s", bl->name, cerr);
            tls_listeners_free(t);
            for (int j = 0; j < i; j++)
                cfg->listeners[j].tls = NULL;
            cfg->cluster_tls = NULL;
            cfg->cluster_dial_tls = NULL;
            return -1;
        }
        t->ctx[t->n] = ctx;
        t->hook[t->n] = (struct listener_tls){
            .ctx_get = ctx_get,
            .principal = principal,
            .data = ctx,
            .handshake_timeout_ms = tls_context_handshake_timeout_ms(ctx),
        };
        bl->tls = &t->hook[t->n];
        t->n++;
    }
    if ((cfg->admin_ssl && cfg->admin_port >= 0) ||
        (cfg->registry_ssl && cfg->registry_port >= 0)) {
        if (!t)
            t = mem_calloc(1, sizeof(*t));
        if (http_start(cfg->admin_port >= 0 ? cfg->admin_ssl : NULL, "admin",
                       "admin.listener (admin.listener.ssl.*)", &t->admin_ctx, &t->admin_hook, err,
                       errcap) != 0 ||
            http_start(cfg->registry_port >= 0 ? cfg->registry_ssl : NULL, "schema-registry",
                       "schema.registry.listener (schema.registry.listener.ssl.*)",
                       &t->registry_ctx, &t->registry_hook, err, errcap) != 0) {
            tls_listeners_free(t);
            for (int j = 0; j < cfg->n_listeners; j++)
                cfg->listeners[j].tls = NULL;
            cfg->cluster_tls = NULL;
            cfg->cluster_dial_tls = NULL;
            return -1;
        }
    }
    *out = t;
    return 0;
}

void tls_listeners_reload(struct tls_listeners *t)
{
    for (int i = 0; t && i < t->n; i++)
        tls_context_reload(t->ctx[i], "sighup");
    if (t && t->cluster_server) {
        tls_context_reload(t->cluster_server, "sighup");
        tls_context_reload(t->cluster_client, "sighup");
    }
    if (t && t->admin_ctx)
        tls_context_reload(t->admin_ctx, "sighup");
    if (t && t->registry_ctx)
        tls_context_reload(t->registry_ctx, "sighup");
}

const struct listener_tls *tls_listeners_admin(const struct tls_listeners *t)
{
    return t && t->admin_ctx ? &t->admin_hook : NULL;
}

const struct listener_tls *tls_listeners_registry(const struct tls_listeners *t)
{
    return t && t->registry_ctx ? &t->registry_hook : NULL;
}

void tls_listeners_free(struct tls_listeners *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        tls_context_free(t->ctx[i]);
    tls_context_free(t->cluster_server);
    tls_context_free(t->cluster_client);
    tls_context_free(t->admin_ctx);
    tls_context_free(t->registry_ctx);
    mem_free(t);
}
