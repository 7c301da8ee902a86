/* The schema registry listener's TLS configuration (schema.registry.listener.ssl.*) and the rule
 * that binds it beyond loopback with BASIC only with HTTPS. */
#include <string.h>

#include "security/tls_context.h"
#include "server/config.h"
#include "test.h"

#define RKS "schema.registry.listener.ssl.keystore.location=/etc/streampulse/registry.pem"
#define BASIC "schema.registry.authentication.method=BASIC"

static int load(struct broker_config *c, char **sets, int n, char *err, size_t cap)
{
    int rc = config_load(c, NULL, sets, n, err, cap);
    if (rc == 0)
        config_free(c);
    return rc;
}

TEST(config_registry_listener_basic_beyond_loopback_needs_https)
{
    struct broker_config c;
    char err[1024];
    /* the default: plain HTTP on loopback */
    ASSERT_EQ(config_load(&c, NULL, NULL, 0, err, sizeof(err)), 0);
    ASSERT(c.registry_ssl == NULL);
    config_free(&c);
    /* loopback with BASIC, and beyond loopback without credentials: plain HTTP, as before */
    char *loop_basic[] = {"schema.registry.listener=[::1]:9", BASIC};
    ASSERT_EQ(load(&c, loop_basic, 2, err, sizeof(err)), 0);
    char *wide_none[] = {"schema.registry.listener=0.0.0.0:9"};
    ASSERT_EQ(load(&c, wide_none, 1, err, sizeof(err)), 0);
    /* BASIC beyond loopback without a keystore: refused, naming the keys */
    const char *wide[] = {"0.0.0.0:9", "10.1.2.3:9", "[::]:9", "registry.example.com:9"};
    for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
        char set[80];
        snprintf(set, sizeof(set), "schema.registry.listener=%s", wide[i]);
        char *sets[] = {set, BASIC};
        ASSERT_EQ(load(&c, sets, 2, err, sizeof(err)), -1);
        ASSERT(strstr(err, "is not a loopback address"));
        ASSERT(strstr(err, "schema.registry.authentication.method=BASIC"));
        ASSERT(strstr(err, "schema.registry.listener.ssl.keystore.location"));
    }
    char *v6[] = {"schema.registry.listener=[::]:9", BASIC};
    ASSERT_EQ(load(&c, v6, 2, err, sizeof(err)), -1);
    ASSERT(strstr(err, "schema.registry.listener=[::]:9 is not"));
    /* with one: HTTPS */
    char *https[] = {"schema.registry.listener=0.0.0.0:9", BASIC, RKS};
    ASSERT_EQ(config_load(&c, NULL, https, 3, err, sizeof(err)), 0);
    ASSERT(c.registry_ssl != NULL);
    ASSERT_STREQ(c.registry_ssl->keystore_location, "/etc/streampulse/registry.pem");
    config_free(&c);
    ASSERT(c.registry_ssl == NULL);
    /* the listener off: its TLS ignored */
    char *off[] = {"schema.registry.listener=", RKS};
    ASSERT_EQ(config_load(&c, NULL, off, 2, err, sizeof(err)), 0);
    ASSERT(c.registry_ssl == NULL);
    config_free(&c);
    /* client certificates need a trust store, named with the registry's prefix */
    char *mtls[] = {RKS, "schema.registry.listener.ssl.client.auth=required"};
    ASSERT_EQ(load(&c, mtls, 2, err, sizeof(err)), -1);
    ASSERT(strstr(err, "schema.registry.listener (schema.registry.listener.ssl.*)"));
    char *bad_auth[] = {"schema.registry.listener.ssl.client.auth=sometimes"};
    ASSERT_EQ(load(&c, bad_auth, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "schema.registry.listener.ssl.client.auth"));
    char *unknown[] = {"schema.registry.listener.ssl.nonsense=1"};
    ASSERT_EQ(load(&c, unknown, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "unknown config key 'schema.registry.listener.ssl.nonsense'"));
}

TEST(config_registry_listener_ssl_settings_are_its_own)
{
    struct broker_config c;
    char err[1024];
    char *sets[] = {RKS,
                    "schema.registry.listener.ssl.key.password=pw",
                    "schema.registry.listener.ssl.enabled.protocols=TLSv1.3",
                    "admin.listener.ssl.enabled.protocols=TLSv1.2",
                    "ssl.cipher.suites=TLS_AES_128_GCM_SHA256"};
    ASSERT_EQ(config_load(&c, NULL, sets, 5, err, sizeof(err)), 0);
    ASSERT(c.registry_ssl != NULL && c.admin_ssl == NULL);
    ASSERT_STREQ(c.registry_ssl->key_password, "pw");
    ASSERT_STREQ(c.registry_ssl->enabled_protocols, "TLSv1.3");
    ASSERT_STREQ(c.registry_ssl->cipher_suites, "");
    ASSERT_STREQ(c.registry_ssl->client_auth, "none");
    int seen = 0;
    for (int i = 0; i < c.n_entries; i++) {
        const struct broker_config_entry *e = &c.entries[i];
        if (!strcmp(e->name, "schema.registry.listener.ssl.key.password")) {
            seen++;
            ASSERT(e->sensitive);
        } else if (!strcmp(e->name, "schema.registry.listener.ssl.keystore.location")) {
            seen++;
            ASSERT_STREQ(e->value, "/etc/streampulse/registry.pem");
            ASSERT(!e->sensitive && !e->is_default);
        }
    }
    ASSERT_EQ(seen, 2);
    config_free(&c);
}
