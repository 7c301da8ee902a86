/* TLS for the broker's SSL listeners: one security/tls_context per listener, wired into the
 * listener_tls hook that net/ calls at accept and handshake time; for the inter-broker
 * transport (cluster.ssl.*): a server context behind the cluster listener's listener_tls hook
 * and a client one behind the dial_tls hook of its dials and of the bootstrap query; and the
 * admin listener's (admin.listener.ssl.*), handed to server/httpd.c through the same kind of
 * hook. */
#ifndef SP_SERVER_TLS_LISTENERS_H
#define SP_SERVER_TLS_LISTENERS_H

#include <stddef.h>

#include "broker/config.h"

struct tls_listeners;

/* Builds the context of every TLS listener of cfg and sets its cfg->listeners[i].tls, with
 * cluster.ssl.* the two inter-broker contexts (setting cfg->cluster_tls and
 * cfg->cluster_dial_tls), the admin listener's when cfg->admin_ssl is set and the schema
 * registry listener's when cfg->registry_ssl is (before
 * broker_start). Returns 0 with *out (NULL when there is no TLS at all; release with
 * tls_listeners_free after broker_stop and admin_stop), or -1 with a message in err naming the
 * listener, the setting and the file. */
int tls_listeners_start(struct broker_config *cfg, struct tls_listeners **out, char *err,
                        size_t errcap);
/* Rebuilds every context now (SIGHUP): new connections get the new certificates, connections
 * already open keep theirs. A context that fails to build is logged and keeps the old one. */
void tls_listeners_reload(struct tls_listeners *t);
void tls_listeners_free(struct tls_listeners *t);
/* The admin listener's hook (valid until tls_listeners_free), or NULL: plain HTTP. t may be
 * NULL. */
const struct listener_tls *tls_listeners_admin(const struct tls_listeners *t);
/* The schema registry listener's hook (cfg->registry_ssl set), likewise. */
const struct listener_tls *tls_listeners_registry(const struct tls_listeners *t);

#endif
