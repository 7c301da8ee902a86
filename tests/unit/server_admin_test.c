/* The admin listener's configuration (admin.listener, admin.listener.ssl.*) and the rule that
 * binds it beyond loopback only with HTTPS and super users. */
#include <string.h>

#include "security/tls_context.h"
#include "server/config.h"
#include "test.h"

#define KS "admin.listener.ssl.keystore.location=/etc/streampulse/admin.pem"

TEST(config_admin_listener_default_set_and_disable)
{
    struct broker_config c;
    char err[512];
    ASSERT_EQ(config_load(&c, NULL, NULL, 0, err, sizeof(err)), 0);
    ASSERT_STREQ(c.admin_host, "127.0.0.1");
    ASSERT_EQ(c.admin_port, 9644);
    config_free(&c);
    char *on[] = {"admin.listener=0.0.0.0:0", KS, "super.users=User:admin"};
    ASSERT_EQ(config_load(&c, NULL, on, 3, err, sizeof(err)), 0);
    ASSERT_STREQ(c.admin_host, "0.0.0.0");
    ASSERT_EQ(c.admin_port, 0);
    config_free(&c);
    char *v6[] = {"admin.listener=http://[::1]:9700"};
    ASSERT_EQ(config_load(&c, NULL, v6, 1, err, sizeof(err)), 0);
    ASSERT_STREQ(c.admin_host, "::1");
    ASSERT_EQ(c.admin_port, 9700);
    bool found = false;
    for (int i = 0; i < c.n_entries; i++)
        if (!strcmp(c.entries[i].name, "admin.listener")) {
            found = true;
            ASSERT_STREQ(c.entries[i].value, "[::1]:9700");
            ASSERT(!c.entries[i].is_default);
        }
    ASSERT(found);
    config_free(&c);
    char *off[] = {"admin.listener="};
    ASSERT_EQ(config_load(&c, NULL, off, 1, err, sizeof(err)), 0);
    ASSERT_EQ(c.admin_port, -1);
    config_free(&c);
    char *bad[] = {"admin.listener=localhost"};
    ASSERT_EQ(config_load(&c, NULL, bad, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "admin.listener"));
}

static int load(struct broker_config *c, char **sets, int n, char *err, size_t cap)
{
    int rc = config_load(c, NULL, sets, n, err, cap);
    if (rc == 0)
        config_free(c);
    return rc;
}

TEST(config_admin_listener_beyond_loopback_needs_https_and_super_users)
{
    struct broker_config c;
    char err[1024];
    /* loopback without a keystore: plain HTTP, as always */
    const char *loop[] = {"127.0.0.1:0", "127.0.0.2:9", "127.255.1.1:9",
                          "localhost:9", "[::1]:9",     "[::ffff:127.0.0.1]:9"};
    for (size_t i = 0; i < sizeof(loop) / sizeof(loop[0]); i++) {
        char set[64];
        snprintf(set, sizeof(set), "admin.listener=%s", loop[i]);
        char *sets[] = {set};
        ASSERT_EQ(config_load(&c, NULL, sets, 1, err, sizeof(err)), 0);
        ASSERT(c.admin_ssl == NULL);
        config_free(&c);
    }
    /* anything else is refused without one, with a message naming the keys */
    const char *wide[] = {"0.0.0.0:9",  "http://:9",          "[::]:9",
                          "10.1.2.3:9", "128.0.0.1:9",        "broker1.example.com:9",
                          "[::2]:9",    "[::ffff:10.0.0.1]:9"};
    for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++) {
        char set[64];
        snprintf(set, sizeof(set), "admin.listener=%s", wide[i]);
        char *sets[] = {set, "super.users=User:admin"};
        ASSERT_EQ(load(&c, sets, 2, err, sizeof(err)), -1);
        ASSERT(strstr(err, "is not a loopback address"));
        ASSERT(strstr(err, "admin.listener.ssl.keystore.location"));
        ASSERT(strstr(err, "super.users"));
    }
    /* with a keystore, super.users must name somebody */
    char *no_super[] = {"admin.listener=0.0.0.0:9", KS};
    ASSERT_EQ(load(&c, no_super, 2, err, sizeof(err)), -1);
    ASSERT(strstr(err, "super.users is empty"));
    char *loop_no_super[] = {"admin.listener=127.0.0.1:9", KS};
    ASSERT_EQ(load(&c, loop_no_super, 2, err, sizeof(err)), -1);
    ASSERT(strstr(err, "super.users is empty"));
    /* client certificates need a trust store, named with the admin prefix */
    char *mtls[] = {"admin.listener=0.0.0.0:9", KS, "super.users=User:admin",
                    "admin.listener.ssl.client.auth=required"};
    ASSERT_EQ(load(&c, mtls, 4, err, sizeof(err)), -1);
    ASSERT(strstr(err, "admin.listener (admin.listener.ssl.*)"));
    ASSERT(strstr(err, "ssl.truststore.location"));
    /* bad values and unknown keys are refused by name */
    char *bad_auth[] = {"admin.listener.ssl.client.auth=sometimes"};
    ASSERT_EQ(load(&c, bad_auth, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "admin.listener.ssl.client.auth"));
    char *unknown[] = {"admin.listener.ssl.nonsense=1"};
    ASSERT_EQ(load(&c, unknown, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "unknown config key 'admin.listener.ssl.nonsense'"));
    char *not_ssl[] = {"admin.listener.log.dirs=/x"};
    ASSERT_EQ(load(&c, not_ssl, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "unknown config key"));
    char *refused[] = {"admin.listener.ssl.keystore.key=PEM"};
    ASSERT_EQ(load(&c, refused, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "not supported"));
}

TEST(config_admin_listener_ssl_settings_are_its_own)
{
    struct broker_config c;
    char err[1024];
    /* the Kafka listeners' ssl.* values do not reach the admin listener, and its own keys
     * (the table's rows and any other ssl.* key under the prefix) do not reach them */
    char *sets[] = {"admin.listener=0.0.0.0:9",
                    KS,
                    "super.users=User:admin;User:ops",
                    "admin.listener.ssl.key.password=pw",
                    "admin.listener.ssl.enabled.protocols=TLSv1.3",
                    "admin.listener.ssl.handshake.timeout.ms=2500",
                    "ssl.cipher.suites=TLS_AES_128_GCM_SHA256",
                    "ssl.client.auth=required",
                    "ssl.truststore.location=/etc/ca.pem"};
    ASSERT_EQ(config_load(&c, NULL, sets, 9, err, sizeof(err)), 0);
    ASSERT(c.admin_ssl != NULL);
    ASSERT_STREQ(c.admin_ssl->keystore_location, "/etc/streampulse/admin.pem");
    ASSERT_STREQ(c.admin_ssl->key_password, "pw");
    ASSERT_STREQ(c.admin_ssl->enabled_protocols, "TLSv1.3");
    ASSERT_EQ(c.admin_ssl->handshake_timeout_ms, 2500);
    ASSERT_STREQ(c.admin_ssl->client_auth, "none");
    ASSERT_STREQ(c.admin_ssl->truststore_location, "");
    ASSERT_STREQ(c.admin_ssl->cipher_suites, "");
    ASSERT_STREQ(c.admin_ssl->keystore_type, "PEM");
    /* DescribeConfigs: the rows of the table, the password sensitive */
    int seen = 0;
    for (int i = 0; i < c.n_entries; i++) {
        const struct broker_config_entry *e = &c.entries[i];
        if (!strcmp(e->name, "admin.listener.ssl.keystore.location")) {
            ASSERT_STREQ(e->value, "/etc/streampulse/admin.pem");
            ASSERT(!e->is_default);
            seen++;
        } else if (!strcmp(e->name, "admin.listener.ssl.key.password")) {
            ASSERT_STREQ(e->value, "");
            ASSERT(e->sensitive);
            seen++;
        } else if (!strcmp(e->name, "admin.listener.ssl.client.auth")) {
            ASSERT_STREQ(e->value, "none");
            ASSERT(e->is_default);
            seen++;
        } else if (!strcmp(e->name, "ssl.client.auth")) {
            ASSERT_STREQ(e->value, "required");
            seen++;
        }
    }
    ASSERT_EQ(seen, 4);
    config_free(&c);
    ASSERT(c.admin_ssl == NULL);
}

TEST(config_host_is_loopback_names_only_loopback)
{
    ASSERT(config_host_is_loopback("127.0.0.1"));
    ASSERT(config_host_is_loopback("127.0.0.2"));
    ASSERT(config_host_is_loopback("127.255.255.254"));
    ASSERT(config_host_is_loopback("localhost"));
    ASSERT(config_host_is_loopback("::1"));
    ASSERT(config_host_is_loopback("::ffff:127.0.0.1"));
    ASSERT(!config_host_is_loopback(""));
    ASSERT(!config_host_is_loopback("0.0.0.0"));
    ASSERT(!config_host_is_loopback("::"));
    ASSERT(!config_host_is_loopback("126.255.255.255"));
    ASSERT(!config_host_is_loopback("128.0.0.1"));
    ASSERT(!config_host_is_loopback("127.0.0.1.example.com"));
    ASSERT(!config_host_is_loopback("LOCALHOST.")); /* names other than localhost: unknown */
    ASSERT(!config_host_is_loopback("::ffff:10.0.0.1"));
    ASSERT(!config_host_is_loopback("fe80::1"));
}
