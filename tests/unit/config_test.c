#include <stdio.h>

#include "broker/topic_config.h"
#include "server/config.h"
#include "security/protocol.h"
#include "security/tls_context.h"
#include "storage/plog.h"
#include "test.h"

TEST(config_defaults_need_no_file)
{
    struct broker_config c;
    char err[512];
    ASSERT_EQ(config_load(&c, NULL, NULL, 0, err, sizeof(err)), 0);
    ASSERT_STREQ(c.listener_host, "127.0.0.1");
    ASSERT_EQ(c.listener_port, 9092);
    ASSERT_STREQ(c.advertised_host, "127.0.0.1");
    ASSERT_EQ(c.advertised_port, 9092);
    ASSERT_STREQ(c.log_dirs, "./data");
    ASSERT_EQ(c.num_partitions, 1);
    ASSERT(c.auto_create_topics);
    ASSERT_EQ(c.log_retention_ms, 604800000LL);
    ASSERT_EQ(c.log_segment_bytes, 1073741824LL);
    ASSERT_EQ(c.message_max_bytes, 1048588);
    ASSERT_EQ(c.socket_request_max_bytes, 104857600);
    ASSERT_EQ(c.node_id, 1);
    bool found = false;
    for (int i = 0; i < c.n_entries; i++)
        if (!strcmp(c.entries[i].name, "log.retention.ms")) {
            found = true;
            ASSERT(c.entries[i].is_default);
            ASSERT_STREQ(c.entries[i].value, "604800000");
        }
    ASSERT(found);
    config_free(&c);
}

TEST(config_file_then_set_precedence)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/sp.properties", test_tmpdir());
    FILE *f = fopen(path, "w");
    fprintf(f, "# comment\n! also comment\n\nlisteners = PLAINTEXT://0.0.0.0:19092\n"
               "num.partitions=3\nlog.retention.hours: 1\nauto.create.topics.enable false\n");
    fclose(f);
    char *sets[] = {"num.partitions=5", "log.dirs=/tmp/x"};
    struct broker_config c;
    char err[512];
    ASSERT_EQ(config_load(&c, path, sets, 2, err, sizeof(err)), 0);
    ASSERT_STREQ(c.listener_host, "0.0.0.0");
    ASSERT_EQ(c.listener_port, 19092);
    ASSERT_STREQ(c.advertised_host, "127.0.0.1"); /* wildcard bind advertises loopback */
    ASSERT_EQ(c.num_partitions, 5);
    ASSERT_EQ(c.log_retention_ms, 3600000LL);
    ASSERT(!c.auto_create_topics);
    ASSERT_STREQ(c.log_dirs, "/tmp/x");
    config_free(&c);

    /* the most precise retention key wins whatever the order */
    char *sets2[] = {"log.retention.ms=5000", "log.retention.hours=2"};
    ASSERT_EQ(config_load(&c, NULL, sets2, 2, err, sizeof(err)), 0);
    ASSERT_EQ(c.log_retention_ms, 5000);
    config_free(&c);
}

TEST(config_refuses_unknown_keys_and_bad_values_by_name)
{
    struct broker_config c;
    char err[512];
    char *bad1[] = {"no.such.key=1"};
    ASSERT_EQ(config_load(&c, NULL, bad1, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "no.such.key") != NULL);
    char *bad2[] = {"num.partitions=zero"};
    ASSERT_EQ(config_load(&c, NULL, bad2, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "num.partitions") != NULL);
    char *bad3[] = {"num.partitions=0"};
    ASSERT_EQ(config_load(&c, NULL, bad3, 1, err, sizeof(err)), -1);
    char *bad4[] = {"listeners=PLAINTEXT://127.0.0.1:99999"};
    ASSERT_EQ(config_load(&c, NULL, bad4, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "listeners") != NULL);
    char *bad5[] = {"auto.create.topics.enable=yes"};
    ASSERT_EQ(config_load(&c, NULL, bad5, 1, err, sizeof(err)), -1);
    char *bad6[] = {"log.cleanup.policy=shred"};
    ASSERT_EQ(config_load(&c, NULL, bad6, 1, err, sizeof(err)), -1);
    char *bad7[] = {"noequals"};
    ASSERT_EQ(config_load(&c, NULL, bad7, 1, err, sizeof(err)), -1);
    char *bad8[] = {"log.dirs=/a,/b"};
    ASSERT_EQ(config_load(&c, NULL, bad8, 1, err, sizeof(err)), -1);
    ASSERT_EQ(config_load(&c, "/nonexistent/file.properties", NULL, 0, err, sizeof(err)), -1);
    ASSERT(strstr(err, "/nonexistent/file.properties") != NULL);

    char path[300];
    snprintf(path, sizeof(path), "%s/bad.properties", test_tmpdir());
    FILE *f = fopen(path, "w");
    fprintf(f, "node.id=1\nmessage.max.bytes=-5\n");
    fclose(f);
    ASSERT_EQ(config_load(&c, path, NULL, 0, err, sizeof(err)), -1);
    ASSERT(strstr(err, ":2:") != NULL); /* names the line */
    ASSERT(strstr(err, "message.max.bytes") != NULL);
}

TEST(config_listener_forms)
{
    char host[256], err[200];
    int port;
    ASSERT_EQ(config_parse_listener("PLAINTEXT://[::1]:9093", host, sizeof(host), &port, err,
                                    sizeof(err)), 0);
    ASSERT_STREQ(host, "::1");
    ASSERT_EQ(port, 9093);
    ASSERT_EQ(config_parse_listener("localhost:0", host, sizeof(host), &port, err, sizeof(err)), 0);
    ASSERT_STREQ(host, "localhost");
    ASSERT_EQ(port, 0);
    ASSERT_EQ(config_parse_listener("SSL://h:1", host, sizeof(host), &port, err, sizeof(err)), -1);
    ASSERT_EQ(config_parse_listener("PLAINTEXT://h", host, sizeof(host), &port, err, sizeof(err)),
              -1);
    ASSERT_EQ(config_parse_listener("PLAINTEXT://a:1,PLAINTEXT://b:2", host, sizeof(host), &port,
                                    err, sizeof(err)), -1);
}

TEST(topic_config_validation_and_resolution)
{
    char err[256];
    ASSERT(topic_config_validate("retention.ms", 12, "-1", 2, err, sizeof(err)));
    ASSERT(!topic_config_validate("retention.ms", 12, "-2", 2, err, sizeof(err)));
    ASSERT(strstr(err, "retention.ms") != NULL);
    ASSERT(!topic_config_validate("segment.bytes", 13, "1x", 2, err, sizeof(err)));
    ASSERT(!topic_config_validate("bogus.key", 9, "1", 1, err, sizeof(err)));
    ASSERT(strstr(err, "Unknown topic config name: bogus.key") != NULL);
    ASSERT(topic_config_validate("cleanup.policy", 14, "compact,delete", 14, err, sizeof(err)));
    ASSERT(!topic_config_validate("cleanup.policy", 14, "shred", 5, err, sizeof(err)));
    ASSERT(!topic_config_validate("min.cleanable.dirty.ratio", 25, "1.5", 3, err, sizeof(err)));
    ASSERT(topic_config_validate("preallocate", 11, "true", 4, err, sizeof(err)));
    /* compression.type: Kafka's six values, nothing else (not "none", not upper case) */
    const char *codecs[] = {"uncompressed", "gzip", "snappy", "lz4", "zstd", "producer"};
    for (size_t i = 0; i < 6; i++)
        ASSERT(topic_config_validate("compression.type", 16, codecs[i], strlen(codecs[i]), err,
                                     sizeof(err)));
    ASSERT(!topic_config_validate("compression.type", 16, "none", 4, err, sizeof(err)));
    ASSERT(strstr(err, "uncompressed, zstd, lz4, snappy, gzip, producer") != NULL);
    ASSERT(!topic_config_validate("compression.type", 16, "LZ4", 3, err, sizeof(err)));

    struct broker_config c;
    ASSERT_EQ(config_load(&c, NULL, NULL, 0, err, sizeof(err)), 0);
    struct topic_config_kv kvs[] = {{"retention.ms", "1000"},
                                    {"cleanup.policy", "compact"},
                                    {"segment.bytes", "2048"}};
    struct topic_config tc;
    topic_config_resolve(&tc, &c, kvs, 3);
    ASSERT_EQ(tc.retention_ms, 1000);
    ASSERT_EQ(tc.segment_bytes, 2048);
    ASSERT(tc.cleanup_compact);
    ASSERT(!tc.cleanup_delete);
    ASSERT_EQ(tc.max_message_bytes, 1048588); /* broker default */
    struct plog_config pc;
    topic_config_to_plog(&tc, &pc);
    ASSERT_EQ(pc.retention_ms, -1); /* compact-only topics are not deleted by time */
    ASSERT_EQ(pc.segment_bytes, 2048);
    config_free(&c);
}

TEST(config_single_node_by_default)
{
    struct broker_config c;
    char err[512];
    ASSERT_EQ(config_load(&c, NULL, NULL, 0, err, sizeof(err)), 0);
    ASSERT_EQ(c.n_voters, 0); /* standalone: the only voter of its own quorum */
    ASSERT_STREQ(c.cluster_host, "127.0.0.1");
    ASSERT_EQ(c.cluster_port, 0); /* any free port */
    ASSERT_EQ(c.default_replication_factor, 1);
    ASSERT_EQ(c.offsets_topic_replication_factor, 3);
    config_free(&c);
}

/* Alone, cluster.listener sets the standalone node's inter-broker address. */
TEST(config_cluster_listener_alone_sets_the_address)
{
    struct broker_config c;
    char err[512];
    char *sets[] = {"cluster.listener=127.0.0.1:19094"};
    ASSERT_EQ(config_load(&c, NULL, sets, 1, err, sizeof(err)), 0);
    ASSERT_EQ(c.n_voters, 0);
    ASSERT_STREQ(c.cluster_host, "127.0.0.1");
    ASSERT_EQ(c.cluster_port, 19094);
    config_free(&c);
}

TEST(config_quorum_voters_parse_and_give_the_cluster_address)
{
    struct broker_config c;
    char err[512];
    char *sets[] = {"controller.quorum.voters=1@127.0.0.1:19093, 2@localhost:29093,3@[::1]:39093",
                    "node.id=2", "default.replication.factor=3",
                    "offsets.topic.replication.factor=2"};
    ASSERT_EQ(config_load(&c, NULL, sets, 4, err, sizeof(err)), 0);
    ASSERT_EQ(c.n_voters, 3);
    ASSERT_EQ(c.voters[0].id, 1);
    ASSERT_STREQ(c.voters[0].host, "127.0.0.1");
    ASSERT_EQ(c.voters[0].port, 19093);
    ASSERT_EQ(c.voters[1].id, 2);
    ASSERT_STREQ(c.voters[1].host, "localhost");
    ASSERT_EQ(c.voters[2].id, 3);
    ASSERT_STREQ(c.voters[2].host, "::1");
    ASSERT_EQ(c.voters[2].port, 39093);
    ASSERT_STREQ(c.cluster_host, "localhost"); /* node 2's own entry */
    ASSERT_EQ(c.cluster_port, 29093);
    ASSERT_EQ(c.default_replication_factor, 3);
    ASSERT_EQ(c.offsets_topic_replication_factor, 2);
    bool found = false;
    for (int i = 0; i < c.n_entries; i++)
        if (!strcmp(c.entries[i].name, "controller.quorum.voters")) {
            found = true;
            ASSERT(!c.entries[i].is_default);
            ASSERT(strstr(c.entries[i].value, "2@localhost:29093") != NULL);
        }
    ASSERT(found);
    config_free(&c);

    /* a broker that is not a voter names its own inter-broker address */
    char *sets2[] = {"controller.quorum.voters=1@127.0.0.1:19093", "node.id=4",
                     "cluster.listener=127.0.0.1:49093"};
    ASSERT_EQ(config_load(&c, NULL, sets2, 3, err, sizeof(err)), 0);
    ASSERT_EQ(c.n_voters, 1);
    ASSERT_STREQ(c.cluster_host, "127.0.0.1");
    ASSERT_EQ(c.cluster_port, 49093);
    config_free(&c);

    /* a voter may repeat its own entry as cluster.listener */
    char *sets3[] = {"controller.quorum.voters=1@127.0.0.1:19093", "node.id=1",
                     "cluster.listener=127.0.0.1:19093"};
    ASSERT_EQ(config_load(&c, NULL, sets3, 3, err, sizeof(err)), 0);
    ASSERT_EQ(c.cluster_port, 19093);
    config_free(&c);

    /* a voter may listen elsewhere than its entry (peers reach it through a proxy) */
    char *sets4[] = {"controller.quorum.voters=1@127.0.0.1:19093", "node.id=1",
                     "cluster.listener=127.0.0.1:19094"};
    ASSERT_EQ(config_load(&c, NULL, sets4, 3, err, sizeof(err)), 0);
    ASSERT_EQ(c.cluster_port, 19094);
    config_free(&c);
}

static void expect_refused(const char *set1, const char *set2, const char *named)
{
    struct broker_config c;
    char err[512];
    char *sets[] = {(char *)set1, (char *)set2};
    int n = set2 ? 2 : 1;
    ASSERT_EQ(config_load(&c, NULL, sets, n, err, sizeof(err)), -1);
    if (!strstr(err, named))
        fprintf(stderr, "error '%s' does not name '%s'\n", err, named);
    ASSERT(strstr(err, named) != NULL);
}

TEST(config_refuses_bad_cluster_keys_by_name)
{
    const char *q = "controller.quorum.voters";
    expect_refused("controller.quorum.voters=1@127.0.0.1:19093,1@127.0.0.1:29093", NULL, q);
    expect_refused("controller.quorum.voters=1@127.0.0.1:0", NULL, q);
    expect_refused("controller.quorum.voters=1@127.0.0.1:70000", NULL, q);
    expect_refused("controller.quorum.voters=1@127.0.0.1", NULL, q);
    expect_refused("controller.quorum.voters=127.0.0.1:19093", NULL, q);
    expect_refused("controller.quorum.voters=x@127.0.0.1:19093", NULL, q);
    expect_refused("controller.quorum.voters=-1@127.0.0.1:19093", NULL, q);
    expect_refused("controller.quorum.voters=1@127.0.0.1:19093,", NULL, q);
    expect_refused("controller.quorum.voters=1@127.0.0.1:19093,,2@h:1", NULL, q);
    expect_refused("controller.quorum.voters=1@:19093", NULL, q);
    expect_refused("controller.quorum.voters=1@PLAINTEXT://h:19093", NULL, q);
    expect_refused("controller.quorum.voters=1@h:1,2@h:2,3@h:3,4@h:4,5@h:5,6@h:6,7@h:7,8@h:8",
                   NULL, q);
    /* node.id not among the voters and no cluster.listener */
    expect_refused("controller.quorum.voters=2@127.0.0.1:19093", "node.id=1",
                   "cluster.listener");
    /* a broker that is not a voter needs a fixed port the voters can dial */
    expect_refused("controller.quorum.voters=2@127.0.0.1:19093", "cluster.listener=127.0.0.1:0",
                   "cluster.listener");
    expect_refused("cluster.listener=127.0.0.1", NULL, "cluster.listener");
    expect_refused("cluster.listener=127.0.0.1:70000", NULL, "cluster.listener");
    expect_refused("offsets.topic.replication.factor=0", NULL, "offsets.topic.replication.factor");
    expect_refused("default.replication.factor=0", NULL, "default.replication.factor");
}

TEST(config_listeners_with_protocols_and_advertised_addresses)
{
    struct broker_config c;
    char err[512];
    char *sets[] = {"listeners=PLAINTEXT://127.0.0.1:9092, secure://0.0.0.0:9093",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SECURE:SSL",
                    "advertised.listeners=SECURE://broker.example:19093",
                    "ssl.keystore.location=/k.pem", "ssl.client.auth=required",
                    "ssl.truststore.location=/ca.pem", "ssl.key.password=hunter2",
                    "listener.name.secure.ssl.client.auth=requested",
                    "listener.name.secure.ssl.principal.mapping.rules=RULE:^CN=(.*?),.*$/$1/"};
    ASSERT_EQ(config_load(&c, NULL, sets, 9, err, sizeof(err)), 0);
    ASSERT_EQ(c.n_listeners, 2);
    ASSERT_STREQ(c.listeners[0].name, "PLAINTEXT");
    ASSERT_EQ(c.listeners[0].protocol, SECURITY_PLAINTEXT);
    ASSERT_STREQ(c.listeners[0].advertised_host, "127.0.0.1");
    ASSERT_EQ(c.listeners[0].advertised_port, 9092);
    ASSERT(c.listeners[0].ssl == NULL);
    ASSERT_STREQ(c.listeners[1].name, "SECURE"); /* names are upper-cased, as Kafka does */
    ASSERT_EQ(c.listeners[1].protocol, SECURITY_SSL);
    ASSERT_STREQ(c.listeners[1].host, "0.0.0.0");
    ASSERT_STREQ(c.listeners[1].advertised_host, "broker.example");
    ASSERT_EQ(c.listeners[1].advertised_port, 19093);
    ASSERT(c.listeners[1].ssl != NULL);
    ASSERT_STREQ(c.listeners[1].ssl->keystore_location, "/k.pem");
    ASSERT_STREQ(c.listeners[1].ssl->client_auth, "requested"); /* the override wins */
    ASSERT_STREQ(c.listeners[1].ssl->principal_mapping_rules, "RULE:^CN=(.*?),.*$/$1/");
    ASSERT_STREQ(c.listeners[1].ssl->enabled_protocols, "TLSv1.2,TLSv1.3");
    ASSERT_EQ(c.listeners[1].ssl->handshake_timeout_ms, 10000);
    /* the first listener stays the broker's own address (cluster registration) */
    ASSERT_STREQ(c.listener_host, "127.0.0.1");
    ASSERT_EQ(c.listener_port, 9092);
    bool pw = false, lis = false;
    for (int i = 0; i < c.n_entries; i++) {
        if (!strcmp(c.entries[i].name, "ssl.key.password")) {
            pw = true;
            ASSERT(c.entries[i].sensitive);
            ASSERT_STREQ(c.entries[i].value, "");
        }
        if (!strcmp(c.entries[i].name, "listeners")) {
            lis = true;
            ASSERT_STREQ(c.entries[i].value,
                         "PLAINTEXT://127.0.0.1:9092,SECURE://0.0.0.0:9093");
        }
    }
    ASSERT(pw && lis);
    config_free(&c);

    /* the default map has SSL:SSL; a port of 0 twice is fine (each picks one) */
    char *sets2[] = {"listeners=SSL://:0,PLAINTEXT://localhost:0",
                     "ssl.keystore.location=/k.pem"};
    ASSERT_EQ(config_load(&c, NULL, sets2, 2, err, sizeof(err)), 0);
    ASSERT_EQ(c.listeners[0].protocol, SECURITY_SSL);
    ASSERT_STREQ(c.listeners[0].advertised_host, "127.0.0.1"); /* wildcard: loopback */
    ASSERT_EQ(c.listeners[0].advertised_port, 0);              /* the bound port, later */
    ASSERT_STREQ(c.listeners[1].advertised_host, "localhost");
    config_free(&c);
}

static void expect_refused3(const char *a, const char *b, const char *c3, const char *named)
{
    struct broker_config c;
    char err[512];
    char *sets[] = {(char *)a, (char *)b, (char *)c3};
    int n = c3 ? 3 : b ? 2 : 1;
    ASSERT_EQ(config_load(&c, NULL, sets, n, err, sizeof(err)), -1);
    if (!strstr(err, named))
        fprintf(stderr, "error '%s' does not name '%s'\n", err, named);
    ASSERT(strstr(err, named) != NULL);
}

TEST(config_refuses_bad_listeners_by_name)
{
    const char *ks = "ssl.keystore.location=/k.pem";
    expect_refused3("listener.security.protocol.map=SECURE:TLS", NULL, NULL,
                    "unknown security protocol 'TLS'");
    expect_refused3("listener.security.protocol.map=SECURE", NULL, NULL, "NAME:PROTOCOL");
    expect_refused3("listener.security.protocol.map=A:SSL,a:PLAINTEXT", NULL, NULL,
                    "listener name A appears twice");
    expect_refused3("listeners=PLAINTEXT://h:1,plaintext://h:2", NULL, NULL,
                    "listener name PLAINTEXT appears twice");
    expect_refused3("listeners=PLAINTEXT://h:1,SSL://h:1", ks, NULL,
                    "port 1 is given to both PLAINTEXT and SSL");
    expect_refused3("listeners=SECURE://h:1", NULL, NULL,
                    "listener SECURE has no security protocol in listener.security.protocol.map");
    expect_refused3("listeners=PLAINTEXT://h:1,SECURE://h:2",
                    "listener.security.protocol.map=SECURE:SSL", ks,
                    "listener PLAINTEXT has no security protocol"); /* the map replaces Kafka's */
    /* SASL_SSL needs what SSL needs; bad SASL mechanisms are named */
    expect_refused3("listeners=SASL_SSL://h:1", NULL, NULL,
                    "listener SASL_SSL (SASL_SSL) needs ssl.keystore.location");
    expect_refused3("listeners=SASL_PLAINTEXT://h:1", "sasl.enabled.mechanisms=PLAIN,GSSAPI", NULL,
                    "unknown or unsupported mechanism 'GSSAPI'");
    expect_refused3("listeners=SASL_PLAINTEXT://h:1", "sasl.enabled.mechanisms=", NULL,
                    "sasl.enabled.mechanisms is empty");
    expect_refused3("listeners=PLAIN TEXT://h:1", NULL, NULL, "bad listener name");
    expect_refused3("listeners=PLAINTEXT://h:1,,SSL://h:2", NULL, NULL, "empty entry 2");
    expect_refused3("listeners=", NULL, NULL, "at least one listener");
    expect_refused3("listeners=PLAINTEXT://h:1,A://h:2,B://h:3,C://h:4,D://h:5,E://h:6,F://h:7,"
                    "G://h:8,H://h:9", NULL, NULL, "more than 8 listeners");
    expect_refused3("advertised.listeners=OTHER://h:1", NULL, NULL,
                    "advertised.listeners: OTHER is not one of listeners");
    expect_refused3("advertised.listeners=PLAINTEXT://h:0", NULL, NULL, "port from 1 to 65535");
    expect_refused3("advertised.listeners=PLAINTEXT://:9092", NULL, NULL, "needs a host");
    /* TLS settings */
    expect_refused3("listeners=SSL://h:1", NULL, NULL, "listener SSL (SSL) needs "
                    "ssl.keystore.location");
    expect_refused3("listeners=SSL://h:1", ks, "ssl.client.auth=required",
                    "needs ssl.truststore.location");
    expect_refused3("ssl.client.auth=maybe", NULL, NULL, "ssl.client.auth: expected none, "
                    "requested or required");
    expect_refused3("ssl.enabled.protocols=TLSv1.1,TLSv1.2", NULL, NULL,
                    "TLSv1.1 is not allowed: TLSv1.2 is the oldest");
    expect_refused3("ssl.enabled.protocols=TLSv9", NULL, NULL, "unknown protocol 'TLSv9'");
    expect_refused3("ssl.keystore.type=JKS", NULL, NULL, "ssl.keystore.type: only PEM");
    expect_refused3("ssl.principal.mapping.rules=RULE:(a/b/", NULL, NULL,
                    "ssl.principal.mapping.rules: rule 1");
    expect_refused3("ssl.handshake.timeout.ms=5", NULL, NULL, "ssl.handshake.timeout.ms");
    expect_refused3("ssl.keystore.password=x", NULL, NULL,
                    "ssl.keystore.password is not supported");
    expect_refused3("listener.name.nope.ssl.client.auth=none", NULL, NULL,
                    "there is no listener NOPE in listeners");
    expect_refused3("listener.name.plaintext.num.partitions=3", NULL, NULL,
                    "only ssl.* settings can be set per listener");
    expect_refused3("listener.name.plaintext.ssl.client.auth=sometimes", NULL, NULL,
                    "listener.name.plaintext.ssl.client.auth");
    expect_refused3("listener.name.secure.no.such=1", NULL, NULL,
                    "unknown config key 'listener.name.secure.no.such'");
}

TEST(config_sasl_listeners_and_mechanisms)
{
    struct broker_config c;
    char err[512];
    char *sets[] = {"listeners=PLAINTEXT://127.0.0.1:1,SASL://127.0.0.1:2",
                    "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL:SASL_PLAINTEXT",
                    "sasl.enabled.mechanisms= PLAIN , SCRAM-SHA-512",
                    "connection.failed.authentication.delay.ms=250"};
    ASSERT_EQ(config_load(&c, NULL, sets, 4, err, sizeof(err)), 0);
    ASSERT_EQ(c.n_listeners, 2);
    ASSERT_EQ(c.listeners[1].protocol, SECURITY_SASL_PLAINTEXT);
    ASSERT_EQ(c.sasl_mechanisms, BROKER_SASL_PLAIN | BROKER_SASL_SCRAM_SHA512);
    ASSERT_EQ(c.connection_failed_auth_delay_ms, 250);
    ASSERT_EQ(c.connections_max_reauth_ms, 0);
    config_free(&c);
    char *dflt[] = {"node.id=1"};
    ASSERT_EQ(config_load(&c, NULL, dflt, 1, err, sizeof(err)), 0);
    ASSERT_EQ(c.sasl_mechanisms, BROKER_SASL_SCRAM_SHA256 | BROKER_SASL_SCRAM_SHA512);
    config_free(&c);
}

/* cluster.ssl.*: both locations or neither, a password only with a keystore; with both the
 * settings are taken as given (files are read later, by server/) and the password is reported
 * as sensitive, never as its value. */
TEST(config_cluster_ssl_keys)
{
    const char *ks = "cluster.ssl.keystore.location=/k.pem";
    const char *ts = "cluster.ssl.truststore.location=/ca.pem";
    expect_refused(ks, NULL, "cluster.ssl.keystore.location is set but "
                             "cluster.ssl.truststore.location is not");
    expect_refused(ts, NULL, "cluster.ssl.truststore.location is set but "
                             "cluster.ssl.keystore.location is not");
    expect_refused("cluster.ssl.key.password=pw", NULL, "cluster.ssl.key.password is set but");
    struct broker_config c;
    char err[512];
    char *sets[] = {(char *)ks, (char *)ts, "cluster.ssl.key.password=s3cret"};
    ASSERT_EQ(config_load(&c, NULL, sets, 3, err, sizeof(err)), 0);
    ASSERT_STREQ(c.cluster_ssl_keystore_location, "/k.pem");
    ASSERT_STREQ(c.cluster_ssl_truststore_location, "/ca.pem");
    ASSERT_STREQ(c.cluster_ssl_key_password, "s3cret");
    ASSERT(c.cluster_tls == NULL && c.cluster_dial_tls == NULL); /* server/ sets them */
    int seen = 0;
    for (int i = 0; i < c.n_entries; i++) {
        if (!strcmp(c.entries[i].name, "cluster.ssl.key.password")) {
            seen++;
            ASSERT(c.entries[i].sensitive);
            ASSERT_STREQ(c.entries[i].value, "");
            ASSERT(!c.entries[i].is_default);
        } else if (!strcmp(c.entries[i].name, "cluster.ssl.keystore.location")) {
            seen++;
            ASSERT(!c.entries[i].sensitive);
            ASSERT_STREQ(c.entries[i].value, "/k.pem");
        }
    }
    ASSERT_EQ(seen, 2);
    config_free(&c);
    ASSERT_STREQ(c.cluster_ssl_key_password, ""); /* wiped */
}
