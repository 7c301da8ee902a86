/* A TLS listener's server context: OpenSSL 3's SSL_CTX built from Kafka's ssl.* settings, kept
 * current as its files change; and the inter-broker transport's two contexts from cluster.ssl.*
 * (tls_context_new_cluster), reloaded the same way.
 *
 * Settings (Kafka's names; a listener may override each as listener.name.<name>.ssl.*):
 *   ssl.keystore.type=PEM            the only keystore type
 *   ssl.keystore.location            one PEM file: the private key and the certificate chain
 *                                    (leaf first), in any order, as Kafka's PEM keystore
 *   ssl.key.password                 the key's password if it is encrypted
 *   ssl.truststore.type=PEM
 *   ssl.truststore.location          PEM CA certificates that client certificates must chain to
 *   ssl.client.auth                  none | requested | required
 *   ssl.enabled.protocols            TLSv1.2,TLSv1.3 (nothing older is accepted)
 *   ssl.cipher.suites                IANA names (Kafka's), or OpenSSL's; empty: OpenSSL's
 *   ssl.principal.mapping.rules      security/principal.h
 *   ssl.handshake.timeout.ms         (StreamPulse) a handshake must finish this soon
 *
 * Reload: tls_context_get() looks at the keystore's and trust store's inode, size and mtime at
 * most once per second and rebuilds the context when they changed; tls_context_reload() rebuilds
 * it at once (SIGHUP). A rebuild that fails is logged and the previous context stays; the same
 * failing files are not retried until they change again. Connections keep the context they
 * started with (an SSL holds a reference on its SSL_CTX), so a reload never disturbs them.
 *
 * All on the reactor thread. */
#ifndef SP_SECURITY_TLS_CONTEXT_H
#define SP_SECURITY_TLS_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TLS_PATH_MAX 4096

struct tls_settings {
    char keystore_type[16];                /* ssl.keystore.type */
    char keystore_location[TLS_PATH_MAX];  /* ssl.keystore.location */
    char key_password[1024];               /* ssl.key.password (sensitive) */
    char truststore_type[16];              /* ssl.truststore.type */
    char truststore_location[TLS_PATH_MAX];/* ssl.truststore.location */
    char client_auth[16];                  /* ssl.client.auth */
    char enabled_protocols[128];           /* ssl.enabled.protocols */
    char cipher_suites[2048];              /* ssl.cipher.suites */
    char principal_mapping_rules[4096];    /* ssl.principal.mapping.rules */
    int64_t handshake_timeout_ms;          /* ssl.handshake.timeout.ms */
};

/* Checks one setting's value, by its key without a listener prefix ("ssl.client.auth"), as far as
 * that is possible without reading files (cipher suite names are checked when the context is
 * built). Keys that take any text pass. Returns 0 or -1 with a message in err. */
int tls_settings_check_value(const char *key, const char *value, char *err, size_t errcap);
/* Checks that settings for a TLS listener are complete: a keystore, and a trust store when
 * client certificates are asked for. what names the settings in messages ("listener SECURE").
 * Returns 0 or -1 with err. */
int tls_settings_check(const struct tls_settings *s, const char *what, char *err, size_t errcap);

struct tls_context;
struct ssl_ctx_st;

/* Builds the context of the listener called name from s (copied). Returns 0 with *out (release
 * with tls_context_free), or -1 with a message in err naming the setting and file at fault. */
int tls_context_new(const struct tls_settings *s, const char *name, struct tls_context **out,
                    char *err, size_t errcap);
/* The inter-broker contexts (cluster.ssl.keystore.location, .key.password,
 * .truststore.location; both locations required): client false gives the cluster listener's
 * server context, which requires a client certificate that chains to the trust store (mTLS);
 * client true the dialer's, which presents the keystore's certificate and verifies that the
 * server's chains to the trust store. TLS 1.2 at least, OpenSSL's default cipher suites. No
 * host name is verified: nodes are dialled by address, often an IP, and the trust store is
 * the cluster's own CA, so a certificate it signed is a node of the cluster (a CA that also
 * signs other services' certificates would let those join: do not share it). Messages name
 * the cluster.ssl.* settings. Returns 0 with *out, or -1 with err. */
int tls_context_new_cluster(const char *keystore, const char *key_password,
                            const char *truststore, bool client, struct tls_context **out,
                            char *err, size_t errcap);
void tls_context_free(struct tls_context *t);

/* The context for a connection accepted now (borrowed: SSL_new takes its own reference).
 * Checks the files at most once per second (now_ms: a monotonic clock) and reloads on change. */
struct ssl_ctx_st *tls_context_get(struct tls_context *t, int64_t now_ms);
/* Rebuilds the context now, whatever the files' stamps. Returns 0, or -1 (logged; the old
 * context stays). */
int tls_context_reload(struct tls_context *t, const char *why);

/* The principal of a client certificate with subject (RFC 2253): "User:" + the mapped name,
 * into out. Returns 0, or a negative code of principal_rules_map (no rule applies, ...). */
int tls_context_principal(const struct tls_context *t, const char *subject, char *out,
                          size_t cap);
int64_t tls_context_handshake_timeout_ms(const struct tls_context *t);

struct tls_context_stats {
    uint64_t reloads;         /* successful rebuilds after the first */
    uint64_t reload_failures; /* rebuilds that failed (the old context stayed) */
};
void tls_context_get_stats(const struct tls_context *t, struct tls_context_stats *out);

#endif
