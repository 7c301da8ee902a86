/* TLS server contexts from Kafka's ssl.* settings (tls_context.h), and their reload.
 *
 * Owns: a copy of the settings, the parsed principal mapping rules, the current SSL_CTX (one
 * reference; every connection's SSL holds its own) and the stamps of the files it was built
 * from.
 *
 * Invariants:
 *  1. ctx is never NULL between tls_context_new and tls_context_free.
 *  2. cur_* are the stamps the files had just before ctx was built; bad_* the stamps of the
 *     last failed rebuild (all-zero when the last rebuild worked). An automatic rebuild happens
 *     only when the stamps differ from both.
 *  3. OpenSSL's error queue is empty when any function here returns.
 *
 * States: LOADED --files changed (tls_context_get) or SIGHUP (tls_context_reload)--> rebuild:
 *   success: LOADED with the new ctx (the old one freed once its connections are gone);
 *   failure: LOADED with the old ctx, failure logged and the failing stamps remembered. */
#include "security/tls_context.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "security/principal.h"

#define CHECK_INTERVAL_MS 1000
#define DEFAULT_HANDSHAKE_TIMEOUT_MS 10000
#define SESSION_ID_CONTEXT "streampulse"
#define READ_BUFFER_BYTES (64 * 1024)

struct stamp {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    bool exists;
};

struct tls_context {
    char name[64];
    char pfx[16];   /* the settings' prefix in messages: "ssl.", "cluster.ssl." */
    bool client;    /* a client context (tls_context_new_cluster) */
    struct tls_settings s;
    struct principal_rules *rules;
    SSL_CTX *ctx;
    struct stamp cur_key, cur_trust; /* invariant 2 */
    struct stamp bad_key, bad_trust;
    int64_t checked_ms; /* when the stamps were last looked at */
    struct tls_context_stats stats;
};

/* ---- settings ---- */

static bool list_next(const char **p, char *item, size_t cap)
{
    while (**p == ' ' || **p == ',')
        (*p)++;
    if (!**p)
        return false;
    size_t n = strcspn(*p, ",");
    size_t m = n;
    while (m && (*p)[m - 1] == ' ')
        m--;
    if (m >= cap)
        m = cap - 1;
    memcpy(item, *p, m);
    item[m] = '\0';
    *p += n;
    return true;
}

/* ssl.enabled.protocols into OpenSSL versions. Returns 0 or -1 with err. */
static int parse_protocols(const char *v, int *min, int *max, char *err, size_t errcap)
{
    *min = 0;
    *max = 0;
    char item[64];
    const char *p = v;
    while (list_next(&p, item, sizeof(item))) {
        int ver;
        if (!strcmp(item, "TLSv1.2")) {
            ver = TLS1_2_VERSION;
        } else if (!strcmp(item, "TLSv1.3")) {
            ver = TLS1_3_VERSION;
        } else if (!strcmp(item, "TLSv1") || !strcmp(item, "TLSv1.1") || !strcmp(item, "SSLv3") ||
                   !strcmp(item, "SSLv2Hello")) {
            snprintf(err, errcap, "%s is not allowed: TLSv1.2 is the oldest protocol accepted",
                     item);
            return -1;
        } else {
            snprintf(err, errcap, "unknown protocol '%s' (expected TLSv1.2 and/or TLSv1.3)", item);
            return -1;
        }
        if (!*min || ver < *min)
            *min = ver;
        if (ver > *max)
            *max = ver;
    }
    if (!*min) {
        snprintf(err, errcap, "no protocol given (expected TLSv1.2 and/or TLSv1.3)");
        return -1;
    }
    return 0;
}

int tls_settings_check_value(const char *key, const char *value, char *err, size_t errcap)
{
    if (!strcmp(key, "ssl.keystore.type") || !strcmp(key, "ssl.truststore.type")) {
        if (strcasecmp(value, "PEM") != 0) {
            snprintf(err, errcap, "only PEM is supported (convert a %s store with openssl)",
                     value);
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "ssl.client.auth")) {
        if (strcmp(value, "none") && strcmp(value, "requested") && strcmp(value, "required")) {
            snprintf(err, errcap, "expected none, requested or required");
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "ssl.enabled.protocols")) {
        int min, max;
        return parse_protocols(value, &min, &max, err, errcap);
    }
    if (!strcmp(key, "ssl.principal.mapping.rules")) {
        struct principal_rules *r;
        if (principal_rules_parse(value, &r, err, errcap) != 0)
            return -1;
        principal_rules_free(r);
        return 0;
    }
    return 0;
}

int tls_settings_check(const struct tls_settings *s, const char *what, char *err, size_t errcap)
{
    if (!s->keystore_location[0]) {
        snprintf(err, errcap, "%s needs ssl.keystore.location (a PEM file with its private key "
                 "and certificate chain)", what);
        return -1;
    }
    if (strcmp(s->client_auth, "none") != 0 && !s->truststore_location[0]) {
        snprintf(err, errcap, "%s has ssl.client.auth=%s and needs ssl.truststore.location (the "
                 "CA certificates client certificates must chain to)", what, s->client_auth);
        return -1;
    }
    return 0;
}

/* ---- building ---- */

/* The reasons OpenSSL queued, joined, into buf; clears the queue. */
static const char *ssl_errors(char *buf, size_t cap)
{
    buf[0] = '\0';
    size_t len = 0;
    unsigned long e;
    while ((e = ERR_get_error()) != 0) {
        char one[256];
        ERR_error_string_n(e, one, sizeof(one));
        /* "error:0A000086:SSL routines::certificate verify failed": keep what follows "::" */
        const char *r = strstr(one, "::");
        r = r ? r + 2 : one;
        if (len + strlen(r) + 3 >= cap)
            continue;
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? "; " : "", r);
    }
    if (!len)
        snprintf(buf, cap, "%s", "unknown OpenSSL error");
    return buf;
}

static int password_cb(char *buf, int size, int rwflag, void *userdata)
{
    const char *pw = userdata;
    size_t n = strlen(pw);
    if (n == 0 || size <= 0)
        return 0;
    if (n > (size_t)size)
        n = (size_t)size;
    memcpy(buf, pw, n);
    return (int)n;
}

static bool is_tls13_suite(const char *name)
{
    static const char *const suites[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                         "TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_CCM_SHA256",
                                         "TLS_AES_128_CCM_8_SHA256"};
    for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
        if (!strcmp(name, suites[i]))
            return true;
    return false;
}

/* ssl.cipher.suites: IANA names (as Kafka takes them) or OpenSSL's, TLS 1.3 suites apart. An
 * empty list keeps OpenSSL's defaults. May narrow *min / *max to the versions that keep a
 * suite. Returns 0 or -1 with err. */
static int apply_ciphers(SSL_CTX *ctx, const char *v, int *min, int *max, char *err,
                         size_t errcap)
{
    if (!v[0])
        return 0;
    char tls12[4096] = "", tls13[1024] = "", item[128];
    size_t n12 = 0, n13 = 0;
    const char *p = v;
    SSL_CTX *probe = SSL_CTX_new(TLS_server_method());
    if (!probe) {
        snprintf(err, errcap, "cannot create an OpenSSL context");
        return -1;
    }
    int rc = -1;
    while (list_next(&p, item, sizeof(item))) {
        if (is_tls13_suite(item)) {
            n13 += (size_t)snprintf(tls13 + n13, sizeof(tls13) - n13, "%s%s", n13 ? ":" : "",
                                    item);
            continue;
        }
        const char *name = OPENSSL_cipher_name(item);
        if (!name || !strcmp(name, "(NONE)"))
            name = item; /* maybe OpenSSL's own name */
        if (SSL_CTX_set_cipher_list(probe, name) != 1) {
            ERR_clear_error();
            snprintf(err, errcap, "ssl.cipher.suites: unknown cipher suite '%s'", item);
            goto out;
        }
        n12 += (size_t)snprintf(tls12 + n12, sizeof(tls12) - n12, "%s%s", n12 ? ":" : "", name);
        if (n12 >= sizeof(tls12) || n13 >= sizeof(tls13)) {
            snprintf(err, errcap, "ssl.cipher.suites: too many cipher suites");
            goto out;
        }
    }
    if (n12 == 0) {
        if (*max < TLS1_3_VERSION) {
            snprintf(err, errcap, "ssl.cipher.suites lists only TLS 1.3 suites but "
                     "ssl.enabled.protocols has no TLSv1.3");
            goto out;
        }
        *min = TLS1_3_VERSION;
    } else if (SSL_CTX_set_cipher_list(ctx, tls12) != 1) {
        snprintf(err, errcap, "ssl.cipher.suites: OpenSSL refused '%s'", tls12);
        goto out;
    }
    if (n13 == 0) {
        if (*min > TLS1_2_VERSION) {
            snprintf(err, errcap, "ssl.cipher.suites lists only TLS 1.2 suites but "
                     "ssl.enabled.protocols has no TLSv1.2");
            goto out;
        }
        *max = TLS1_2_VERSION;
    } else if (SSL_CTX_set_ciphersuites(ctx, tls13) != 1) {
        snprintf(err, errcap, "ssl.cipher.suites: OpenSSL refused '%s'", tls13);
        goto out;
    }
    rc = 0;
out:
    SSL_CTX_free(probe);
    ERR_clear_error();
    return rc;
}

static int load_keystore(SSL_CTX *ctx, const struct tls_settings *s, const char *pfx, char *err,
                         size_t errcap)
{
    char why[512];
    const char *path = s->keystore_location;
    SSL_CTX_set_default_passwd_cb(ctx, password_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)s->key_password);
    int rc = -1;
    if (SSL_CTX_use_certificate_chain_file(ctx, path) != 1) {
        snprintf(err, errcap, "%skeystore.location %s: no usable certificate chain: %s", pfx,
                 path, ssl_errors(why, sizeof(why)));
        goto out;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, path, SSL_FILETYPE_PEM) != 1) {
        unsigned long e = ERR_peek_error();
        if (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH) {
            snprintf(err, errcap, "%skeystore.location %s: the private key does not belong to "
                     "the certificate: %s", pfx, path, ssl_errors(why, sizeof(why)));
            goto out;
        }
        snprintf(err, errcap, "%skeystore.location %s: cannot read the private key%s%s%s: %s",
                 pfx, path, s->key_password[0] ? " (is " : " (if it is encrypted, set ", pfx,
                 s->key_password[0] ? "key.password right?)" : "key.password)",
                 ssl_errors(why, sizeof(why)));
        goto out;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        snprintf(err, errcap, "%skeystore.location %s: the private key does not belong to the "
                 "certificate: %s", pfx, path, ssl_errors(why, sizeof(why)));
        goto out;
    }
    rc = 0;
out:
    /* the password is only needed while loading; the settings it points into stay put anyway */
    SSL_CTX_set_default_passwd_cb(ctx, NULL);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
    return rc;
}

static int load_truststore(SSL_CTX *ctx, const struct tls_settings *s, const char *pfx,
                           bool client, char *err, size_t errcap)
{
    char why[512];
    const char *path = s->truststore_location;
    if (!path[0])
        return 0;
    if (SSL_CTX_load_verify_locations(ctx, path, NULL) != 1) {
        snprintf(err, errcap, "%struststore.location %s: %s", pfx, path,
                 ssl_errors(why, sizeof(why)));
        return -1;
    }
    /* the CA names sent in CertificateRequest, so clients pick the right certificate (and a
     * trust store without any is refused on the client side too) */
    STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(path);
    if (!names) {
        snprintf(err, errcap, "%struststore.location %s: no CA certificate in it: %s", pfx, path,
                 ssl_errors(why, sizeof(why)));
        return -1;
    }
    if (client)
        sk_X509_NAME_pop_free(names, X509_NAME_free);
    else
        SSL_CTX_set_client_CA_list(ctx, names);
    return 0;
}

/* A server context (client false: ssl.client.auth decides what is asked of clients) or a client
 * one (the server's certificate must chain to the trust store; no host name is checked: see
 * tls_context_new_cluster). pfx: how the settings are named in messages ("ssl."). */
static SSL_CTX *build(const struct tls_settings *s, const char *pfx, bool client, char *err,
                      size_t errcap)
{
    int min, max;
    if (parse_protocols(s->enabled_protocols, &min, &max, err, errcap) != 0)
        return NULL;
    SSL_CTX *ctx = SSL_CTX_new(client ? TLS_client_method() : TLS_server_method());
    if (!ctx) {
        char why[256];
        snprintf(err, errcap, "cannot create an OpenSSL context: %s",
                 ssl_errors(why, sizeof(why)));
        return NULL;
    }
    /* No renegotiation (a denial-of-service lever and never needed by Kafka clients); kernel TLS
     * where the kernel has it (Fetch's file bytes then go out with SSL_sendfile). */
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                 SSL_OP_ENABLE_KTLS |
                                 (client ? 0 : SSL_OP_CIPHER_SERVER_PREFERENCE));
    /* Idle connections hold no record buffers; SSL_write may take a record at a time and be
     * retried from another buffer with the same bytes (net/tls.c). */
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* No server-side session cache (memory bounded by connections, not by handshakes); TLS 1.3
     * tickets still resume. The id context keeps resumption legal with client certificates. */
    /* Read ahead: one read(2) takes several records (produce requests arrive as many 16 KiB
     * records) instead of two reads (header, body) per record; net/conn.c drains what OpenSSL
     * buffered (tls_pending). The buffer is released when empty (SSL_MODE_RELEASE_BUFFERS). */
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, READ_BUFFER_BYTES);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_session_id_context(ctx, (const unsigned char *)SESSION_ID_CONTEXT,
                                   sizeof(SESSION_ID_CONTEXT) - 1);
    if (apply_ciphers(ctx, s->cipher_suites, &min, &max, err, errcap) != 0)
        goto out_free;
    SSL_CTX_set_min_proto_version(ctx, min);
    SSL_CTX_set_max_proto_version(ctx, max);
    if (load_keystore(ctx, s, pfx, err, errcap) != 0 ||
        load_truststore(ctx, s, pfx, client, err, errcap) != 0)
        goto out_free;
    int mode = SSL_VERIFY_NONE;
    if (client)
        mode = SSL_VERIFY_PEER; /* the chain only: no SSL_set1_host (see the header) */
    else if (!strcmp(s->client_auth, "requested"))
        mode = SSL_VERIFY_PEER;
    else if (!strcmp(s->client_auth, "required"))
        mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(ctx, mode, NULL);
    ERR_clear_error();
    return ctx;

out_free:
    SSL_CTX_free(ctx);
    ERR_clear_error();
    return NULL;
}

/* ---- stamps and reload ---- */

static struct stamp stamp_of(const char *path)
{
    struct stamp st = {0};
    struct stat sb;
    if (!path[0] || stat(path, &sb) != 0)
        return st;
    st.exists = true;
    st.dev = sb.st_dev;
    st.ino = sb.st_ino;
    st.size = sb.st_size;
    st.mtime = sb.st_mtim;
    return st;
}

static bool stamp_eq(const struct stamp *a, const struct stamp *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* "subject=... serial=... not_after=..." of the context's certificate, for the log. */
static void describe_cert(SSL_CTX *ctx, char *buf, size_t cap)
{
    X509 *cert = SSL_CTX_get0_certificate(ctx);
    if (!cert) {
        snprintf(buf, cap, "subject=none");
        return;
    }
    char subject[512] = "", serial[128] = "", after[64] = "";
    BIO *b = BIO_new(BIO_s_mem());
    if (b) {
        X509_NAME_print_ex(b, X509_get_subject_name(cert), 0,
                           XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
        int n = BIO_read(b, subject, sizeof(subject) - 1);
        subject[n > 0 ? n : 0] = '\0';
        (void)BIO_reset(b);
        ASN1_TIME_print(b, X509_get0_notAfter(cert));
        n = BIO_read(b, after, sizeof(after) - 1);
        after[n > 0 ? n : 0] = '\0';
        BIO_free(b);
    }
    BIGNUM *bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), NULL);
    char *hex = bn ? BN_bn2hex(bn) : NULL;
    snprintf(serial, sizeof(serial), "%s", hex ? hex : "?");
    OPENSSL_free(hex);
    BN_free(bn);
    char qs[600], qa[100];
    snprintf(buf, cap, "subject=%s serial=%s not_after=%s",
             log_quote(qs, sizeof(qs), subject, strlen(subject)), serial,
             log_quote(qa, sizeof(qa), after, strlen(after)));
    ERR_clear_error();
}

static int rebuild(struct tls_context *t, const char *why)
{
    struct stamp key = stamp_of(t->s.keystore_location);
    struct stamp trust = stamp_of(t->s.truststore_location);
    char err[1024];
    SSL_CTX *ctx = build(&t->s, t->pfx, t->client, err, sizeof(err));
    if (!ctx) {
        t->bad_key = key;
        t->bad_trust = trust;
        t->stats.reload_failures++;
        char q[1100];
        log_warn("tls_reload_failed", "listener=%s why=%s reason=%s action=keep_old_certificate",
                 t->name, why, log_quote(q, sizeof(q), err, strlen(err)));
        return -1;
    }
    SSL_CTX_free(t->ctx); /* connections still using it hold their own references */
    t->ctx = ctx;
    t->cur_key = key;
    t->cur_trust = trust;
    memset(&t->bad_key, 0, sizeof(t->bad_key));
    memset(&t->bad_trust, 0, sizeof(t->bad_trust));
    t->stats.reloads++;
    char desc[800];
    describe_cert(ctx, desc, sizeof(desc));
    log_info("tls_reloaded", "listener=%s why=%s %s", t->name, why, desc);
    return 0;
}

static int context_new(const struct tls_settings *s, const char *name, const char *pfx,
                       bool client, struct tls_context **out, char *err, size_t errcap)
{
    struct tls_context *t = mem_calloc(1, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", name);
    snprintf(t->pfx, sizeof(t->pfx), "%s", pfx);
    t->client = client;
    t->s = *s;
    if (principal_rules_parse(s->principal_mapping_rules, &t->rules, err, errcap) != 0)
        goto out_free;
    t->cur_key = stamp_of(s->keystore_location);
    t->cur_trust = stamp_of(s->truststore_location);
    t->ctx = build(s, pfx, client, err, errcap);
    if (!t->ctx)
        goto out_rules;
    char desc[800];
    describe_cert(t->ctx, desc, sizeof(desc));
    log_info("tls_loaded", "listener=%s role=%s %s=%s protocols=%s %s", name,
             client ? "client" : "server", client ? "verify" : "client_auth",
             client ? "chain" : s->client_auth, s->enabled_protocols, desc);
    *out = t;
    return 0;

out_rules:
    principal_rules_free(t->rules);
out_free:
    mem_free(t);
    return -1;
}

int tls_context_new(const struct tls_settings *s, const char *name, struct tls_context **out,
                    char *err, size_t errcap)
{
    return context_new(s, name, "ssl.", false, out, err, errcap);
}

int tls_context_new_cluster(const char *keystore, const char *key_password,
                            const char *truststore, bool client, struct tls_context **out,
                            char *err, size_t errcap)
{
    struct tls_settings *s = mem_calloc(1, sizeof(*s));
    int rc = -1;
    if (snprintf(s->keystore_location, sizeof(s->keystore_location), "%s", keystore) >=
            (int)sizeof(s->keystore_location) ||
        snprintf(s->key_password, sizeof(s->key_password), "%s", key_password) >=
            (int)sizeof(s->key_password) ||
        snprintf(s->truststore_location, sizeof(s->truststore_location), "%s", truststore) >=
            (int)sizeof(s->truststore_location)) {
        snprintf(err, errcap, "cluster.ssl.*: a value is too long");
        goto out;
    }
    if (!keystore[0] || !truststore[0]) {
        snprintf(err, errcap, "cluster.ssl.keystore.location and cluster.ssl.truststore.location "
                 "are needed together");
        goto out;
    }
    snprintf(s->keystore_type, sizeof(s->keystore_type), "PEM");
    snprintf(s->truststore_type, sizeof(s->truststore_type), "PEM");
    snprintf(s->client_auth, sizeof(s->client_auth), "required");
    snprintf(s->enabled_protocols, sizeof(s->enabled_protocols), "TLSv1.2,TLSv1.3");
    snprintf(s->principal_mapping_rules, sizeof(s->principal_mapping_rules), "DEFAULT");
    rc = context_new(s, client ? "cluster-client" : "cluster", "cluster.ssl.", client, out, err,
                     errcap);
out:
    memset(s->key_password, 0, sizeof(s->key_password));
    mem_free(s);
    return rc;
}

void tls_context_free(struct tls_context *t)
{
    if (!t)
        return;
    SSL_CTX_free(t->ctx);
    principal_rules_free(t->rules);
    memset(t->s.key_password, 0, sizeof(t->s.key_password));
    mem_free(t);
}

struct ssl_ctx_st *tls_context_get(struct tls_context *t, int64_t now_ms)
{
    if (t->checked_ms == 0 || now_ms - t->checked_ms >= CHECK_INTERVAL_MS) {
        t->checked_ms = now_ms;
        struct stamp key = stamp_of(t->s.keystore_location);
        struct stamp trust = stamp_of(t->s.truststore_location);
        bool changed = !stamp_eq(&key, &t->cur_key) || !stamp_eq(&trust, &t->cur_trust);
        bool known_bad = stamp_eq(&key, &t->bad_key) && stamp_eq(&trust, &t->bad_trust);
        if (changed && !known_bad)
            rebuild(t, "file_changed");
    }
    return t->ctx;
}

int tls_context_reload(struct tls_context *t, const char *why)
{
    return rebuild(t, why);
}

int tls_context_principal(const struct tls_context *t, const char *subject, char *out,
                          size_t cap)
{
    static const char prefix[] = "User:";
    if (cap <= sizeof(prefix))
        return -ERR_TOO_LARGE;
    memcpy(out, prefix, sizeof(prefix) - 1);
    int rc = principal_rules_map(t->rules, subject, strlen(subject), out + sizeof(prefix) - 1,
                                 cap - (sizeof(prefix) - 1));
    if (rc != 0)
        out[0] = '\0';
    return rc;
}

int64_t tls_context_handshake_timeout_ms(const struct tls_context *t)
{
    return t->s.handshake_timeout_ms > 0 ? t->s.handshake_timeout_ms
                                         : DEFAULT_HANDSHAKE_TIMEOUT_MS;
}

void tls_context_get_stats(const struct tls_context *t, struct tls_context_stats *out)
{
    *out = t->stats;
}
