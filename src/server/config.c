#include "server/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/check.h"
#include "base/log.h"
#include "base/mem.h"
#include "broker/topic_config.h"
#include "broker/sasl.h"
#include "security/acl.h"
#include "security/protocol.h"
#include "security/tls_context.h"

enum ctype {
    C_INT,      /* int32 field */
    C_LONG,     /* int64 field */
    C_BOOL,     /* bool field */
    C_DOUBLE,   /* double field */
    C_STR,      /* char[] field */
    C_LISTENERS,  /* listeners: NAME://host:port,... (settled with the protocol map) */
    C_ADVERTISED, /* advertised.listeners: NAME://host:port,... */
    C_PROTOMAP,   /* listener.security.protocol.map: NAME:PROTOCOL,... */
    C_SSL_STR,    /* char[] field of struct tls_settings (also listener.name.<l>.<key>) */
    C_SSL_LONG,   /* int64 field of struct tls_settings */
    C_REFUSED,    /* a Kafka key StreamPulse does not take; doc says what to use instead */
    C_PATH,     /* char[] field, one directory */
    C_POLICY,   /* cleanup policy text */
    C_TSTYPE,   /* CreateTime | LogAppendTime */
    C_CODEC,    /* compression.type: producer | uncompressed | gzip | snappy | lz4 | zstd */
    C_LEVEL,    /* log level */
    C_ADMIN,    /* admin_host + admin_port: host:port, or empty to disable */
    C_REGISTRY, /* registry_host + registry_port: host:port, or empty to disable */
    C_VOTERS,   /* quorum_voters text + voters[]: id@host:port,... or empty */
    C_CLUSTER,  /* cluster_host + cluster_port: host:port, or empty */
    C_BOOTSTRAP, /* quorum_bootstrap text + bootstrap[]: host:port,... or empty */
    C_ADMIN_SSL, /* admin.listener.<ssl key>: char[] field of the admin listener's tls_settings */
    C_REGISTRY_SSL, /* schema.registry.listener.<ssl key>: the registry listener's, likewise */
};

struct key {
    const char *name;
    enum ctype type;
    size_t off;       /* field offset in struct broker_config */
    size_t size;      /* field size (strings) */
    const char *dflt; /* default, as text */
    int64_t min, max; /* integer bounds */
    int64_t scale;    /* alias unit: the value is multiplied by this (hours -> ms) */
    int priority;     /* among keys writing the same field, the higher wins */
    const char *doc;
};

#define F(field) offsetof(struct broker_config, field), sizeof(((struct broker_config *)0)->field)
#define S(field) offsetof(struct tls_settings, field), sizeof(((struct tls_settings *)0)->field)
#define LMAX INT64_MAX
#define IMAX INT32_MAX

static const struct key keys[] = {
    {"node.id", C_INT, F(node_id), "1", 0, IMAX, 1, 0,
     "this broker's id"},
    {"listeners", C_LISTENERS, F(listener_host), "PLAINTEXT://127.0.0.1:9092", 0, 0, 1, 0,
     "where clients connect: `NAME://host:port,...` (up to 8; port 0 picks a free port); each "
     "name's protocol comes from the map below (\"TLS\")"},
    {"advertised.listeners", C_ADVERTISED, F(advertised_host), "", 0, 0, 1, 0,
     "`NAME://host:port,...`: the address Metadata and FindCoordinator give a client of "
     "listener NAME; a listener not named here advertises its bind address (a wildcard: "
     "127.0.0.1)"},
    {"listener.security.protocol.map", C_PROTOMAP, 0, 0,
     "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL", 0, 0, 1, 0,
     "`NAME:PROTOCOL` for every listener name; as in Kafka a value replaces the whole map: "
     "`PLAINTEXT`, `SSL`, `SASL_PLAINTEXT` or `SASL_SSL`"},
    {"ssl.keystore.type", C_SSL_STR, S(keystore_type), "PEM", 0, 0, 1, 0,
     "the only type (JKS and PKCS12 are refused: convert with `openssl`)"},
    {"ssl.keystore.location", C_SSL_STR, S(keystore_location), "", 0, 0, 1, 0,
     "SSL listeners: one PEM file with the private key and the certificate chain (leaf first), "
     "Kafka's PEM keystore"},
    {"ssl.key.password", C_SSL_STR, S(key_password), "", 0, 0, 1, 0,
     "password of an encrypted private key (reported as sensitive by DescribeConfigs)"},
    {"ssl.truststore.type", C_SSL_STR, S(truststore_type), "PEM", 0, 0, 1, 0,
     "the only type"},
    {"ssl.truststore.location", C_SSL_STR, S(truststore_location), "", 0, 0, 1, 0,
     "PEM CA certificates that client certificates must chain to"},
    {"ssl.client.auth", C_SSL_STR, S(client_auth), "none", 0, 0, 1, 0,
     "`none`, `requested` or `required`: client certificates (mTLS)"},
    {"ssl.enabled.protocols", C_SSL_STR, S(enabled_protocols), "TLSv1.2,TLSv1.3", 0, 0, 1, 0,
     "TLSv1.2 and/or TLSv1.3; nothing older"},
    {"ssl.cipher.suites", C_SSL_STR, S(cipher_suites), "", 0, 0, 1, 0,
     "comma-separated IANA names as Kafka takes them (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`, "
     "`TLS_AES_128_GCM_SHA256`) or OpenSSL's; a list without TLS 1.3 suites means TLS 1.2 only"},
    {"ssl.principal.mapping.rules", C_SSL_STR, S(principal_mapping_rules), "DEFAULT", 0, 0, 1, 0,
     "client certificate subject to principal: `DEFAULT`, `RULE:pattern/replacement/[L|U]`, "
     "... as Kafka's"},
    {"ssl.handshake.timeout.ms", C_SSL_LONG, S(handshake_timeout_ms), "10000", 100, 600000, 1, 0,
     "StreamPulse's own: a TLS handshake must be done this soon after the accept, else the "
     "connection is closed"},
    {"ssl.keystore.certificate.chain", C_REFUSED, 0, 0, "", 0, 0, 1, 0,
     "put the PEM in a file and set ssl.keystore.location"},
    {"ssl.keystore.key", C_REFUSED, 0, 0, "", 0, 0, 1, 0,
     "put the PEM in a file and set ssl.keystore.location"},
    {"ssl.truststore.certificates", C_REFUSED, 0, 0, "", 0, 0, 1, 0,
     "put the PEM in a file and set ssl.truststore.location"},
    {"ssl.keystore.password", C_REFUSED, 0, 0, "", 0, 0, 1, 0,
     "a PEM keystore has no store password: set ssl.key.password for an encrypted key"},
    {"ssl.truststore.password", C_REFUSED, 0, 0, "", 0, 0, 1, 0,
     "a PEM trust store has no password"},
    {"log.dirs", C_PATH, F(log_dirs), "./data", 0, 0, 1, 0,
     "data directory (one)"},
    {"log.dir", C_PATH, F(log_dirs), "./data", 0, 0, 1, -1, "alias of log.dirs"},
    {"num.partitions", C_INT, F(num_partitions), "1", 1, 100000, 1, 0,
     "partitions of auto-created topics"},
    {"default.replication.factor", C_INT, F(default_replication_factor), "1", 1, 32767, 1, 0,
     "replication factor when a client asks for -1"},
    {"auto.create.topics.enable", C_BOOL, F(auto_create_topics), "true", 0, 0, 1, 0,
     "create unknown topics asked for in Metadata"},
    {"delete.topic.enable", C_BOOL, F(delete_topic_enable), "true", 0, 0, 1, 0,
     "allow DeleteTopics"},
    {"log.retention.ms", C_LONG, F(log_retention_ms), "604800000", -1, LMAX, 1, 2,
     "delete closed segments older than this; -1 keeps forever"},
    {"log.retention.minutes", C_LONG, F(log_retention_ms), "10080", -1, LMAX / 60000, 60000, 1,
     "retention in minutes (log.retention.ms wins)"},
    {"log.retention.hours", C_LONG, F(log_retention_ms), "168", -1, LMAX / 3600000, 3600000, 0,
     "retention in hours (log.retention.ms/minutes win)"},
    {"log.retention.bytes", C_LONG, F(log_retention_bytes), "-1", -1, LMAX, 1, 0,
     "per-partition size limit"},
    {"log.segment.bytes", C_LONG, F(log_segment_bytes), "1073741824", 14, IMAX, 1, 0,
     "roll segments at this size"},
    {"log.roll.ms", C_LONG, F(log_roll_ms), "604800000", 1, LMAX, 1, 1,
     "roll a non-empty segment older than this"},
    {"log.roll.hours", C_LONG, F(log_roll_ms), "168", 1, LMAX / 3600000, 3600000, 0,
     "segment age limit in hours (log.roll.ms wins)"},
    {"log.retention.check.interval.ms", C_LONG, F(log_retention_check_interval_ms), "300000", 1, LMAX, 1, 0,
     "how often retention runs"},
    {"log.index.interval.bytes", C_INT, F(log_index_interval_bytes), "4096", 0, IMAX, 1, 0,
     "offset index density"},
    {"log.cleanup.policy", C_POLICY, F(log_cleanup_policy), "delete", 0, 0, 1, 0,
     "default topic cleanup policy"},
    {"compression.type", C_CODEC, F(compression_type), "producer", 0, 0, 1, 0,
     "the codec batches are stored in: `producer` (as the producer compressed them), "
     "`uncompressed`, `gzip`, `snappy`, `lz4` or `zstd` (batches in another codec are "
     "recompressed on produce, at a CPU cost: `make bench`); topics override it"},
    {"log.message.timestamp.type", C_TSTYPE, F(log_message_timestamp_type), "CreateTime", 0, 0, 1, 0,
     "or `LogAppendTime`"},
    {"message.max.bytes", C_INT, F(message_max_bytes), "1048588", 0, IMAX, 1, 0,
     "largest record batch accepted"},
    {"socket.request.max.bytes", C_INT, F(socket_request_max_bytes), "104857600", 64, IMAX, 1, 0,
     "largest request; larger frames close the connection"},
    {"max.connections", C_INT, F(max_connections), "10000", 1, 1000000, 1, 0,
     "client connections at once"},
    {"fetch.max.bytes", C_INT, F(fetch_max_bytes), "57671680", 1024, IMAX, 1, 0,
     "cap on one Fetch response"},
    {"min.insync.replicas", C_INT, F(min_insync_replicas), "1", 1, IMAX, 1, 0,
     "default of the topic setting"},
    {"log.cleaner.delete.retention.ms", C_LONG, F(log_cleaner_delete_retention_ms), "86400000", 0, LMAX, 1, 0,
     "tombstones stay at least this long after their first clean"},
    {"log.cleaner.min.compaction.lag.ms", C_LONG, F(log_cleaner_min_compaction_lag_ms), "0", 0, LMAX, 1, 0,
     "records younger than this are not compacted yet"},
    {"log.cleaner.min.cleanable.ratio", C_DOUBLE, F(log_cleaner_min_cleanable_ratio), "0.5", 0, 1, 1, 0,
     "clean a log when dirty / cleanable bytes exceeds this"},
    {"log.cleaner.enable", C_BOOL, F(log_cleaner_enable), "true", 0, 0, 1, 0,
     "compact topics with `cleanup.policy=compact`"},
    {"log.cleaner.backoff.ms", C_LONG, F(log_cleaner_backoff_ms), "15000", 1, LMAX, 1, 0,
     "how often the cleaner looks for logs to clean"},
    {"log.cleaner.threads", C_INT, F(log_cleaner_threads), "1", 1, 64, 1, 0,
     "cleaner threads (logs cleaned at once)"},
    {"log.cleaner.dedupe.buffer.size", C_LONG, F(log_cleaner_dedupe_buffer_size), "134217728", 65536, LMAX, 1, 0,
     "memory of the cleaners' key maps (24 bytes a key, all threads); a dirty range with more "
     "keys is cleaned in several passes"},
    {"log.cleaner.io.max.bytes.per.second", C_LONG, F(log_cleaner_io_max_bytes_per_second), "9223372036854775807", 1, LMAX, 1, 0,
     "cleaner read+write rate limit"},
    {"log.flush.interval.messages", C_LONG, F(log_flush_interval_messages), "9223372036854775807", 1, LMAX, 1, 0,
     "fsync acks=0/1 data after this many messages"},
    {"log.flush.interval.ms", C_LONG, F(log_flush_interval_ms), "9223372036854775807", 0, LMAX, 1, 0,
     "fsync unsynced acks=0/1 data once this long has passed since the last fsync"},
    {"producer.id.expiration.ms", C_LONG, F(producer_id_expiration_ms), "86400000", 1, LMAX, 1, 0,
     "forget an idempotent producer's state after this long without a write"},
    {"producer.state.max.producers", C_INT, F(producer_state_max_producers), "1000", 1, 262144, 1, 0,
     "idempotent producers tracked per partition; beyond it the least recently used is "
     "forgotten"},
    {"log.max.open.files", C_INT, F(log_max_open_files), "0", 0, IMAX, 1, 0,
     "StreamPulse's own: descriptors of log segments and partition directories kept open at "
     "once (least recently used ones are closed and opened again when needed, so the partition "
     "count is not bounded by `ulimit -n`); 0: the descriptor limit less `max.connections` and "
     "256 for the rest (half the limit if that leaves little); at least 16"},
    {"max.partitions", C_INT, F(max_partitions), "10000", 1, 1000000, 1, 0,
     "cap on partitions across all topics"},
    {"log.level", C_LEVEL, F(log_level), "info", 0, 0, 1, 0,
     "`debug`, `info`, `warn`, `error`"},
    {"group.initial.rebalance.delay.ms", C_INT, F(group_initial_rebalance_delay_ms), "3000", 0, IMAX, 1, 0,
     "a new group waits this long for more members before its first rebalance (0 for tests)"},
    {"group.min.session.timeout.ms", C_INT, F(group_min_session_timeout_ms), "6000", 1, IMAX, 1, 0,
     "smallest `session.timeout.ms` a consumer may ask for"},
    {"group.max.session.timeout.ms", C_INT, F(group_max_session_timeout_ms), "1800000", 1, IMAX, 1, 0,
     "largest one"},
    {"group.max.size", C_INT, F(group_max_size), "1000", 1, 100000, 1, 0,
     "members of one group (`GROUP_MAX_SIZE_REACHED` beyond)"},
    {"group.max.metadata.bytes", C_INT, F(group_max_metadata_bytes), "1048576", 1024, 67108864, 1, 0,
     "StreamPulse's own: one member's JoinGroup protocol metadata and one SyncGroup "
     "assignment; larger ones get `INVALID_REQUEST`"},
    {"offsets.topic.num.partitions", C_INT, F(offsets_topic_num_partitions), "16", 1, 1000, 1, 0,
     "partitions of `__consumer_offsets` (fixed once it exists)"},
    {"offsets.retention.minutes", C_INT, F(offsets_retention_minutes), "10080", 1, IMAX, 1, 0,
     "committed offsets of a group that has been empty this long expire"},
    {"offsets.retention.check.interval.ms", C_LONG, F(offsets_retention_check_interval_ms), "600000", 1, LMAX, 1, 0,
     "how often they are expired"},
    {"offset.metadata.max.bytes", C_INT, F(offset_metadata_max_bytes), "4096", 0, IMAX, 1, 0,
     "metadata string of a committed offset (`OFFSET_METADATA_TOO_LARGE`)"},
    {"sasl.enabled.mechanisms", C_STR, F(sasl_enabled_mechanisms), "SCRAM-SHA-256,SCRAM-SHA-512",
     0, 0, 1, 0,
     "SASL_PLAINTEXT and SASL_SSL listeners: the mechanisms offered, of `PLAIN`, `SCRAM-SHA-256` "
     "and `SCRAM-SHA-512` (credentials: `streampulse user create`)"},
    {"connections.max.reauth.ms", C_LONG, F(connections_max_reauth_ms), "0", 0, LMAX, 1, 0,
     "KIP-368: a SASL session lasts this long; the client must re-authenticate before it ends "
     "(0: sessions never end)"},
    {"connection.failed.authentication.delay.ms", C_LONG, F(connection_failed_auth_delay_ms),
     "100", 0, 10000, 1, 0,
     "a failed SASL authentication is answered this much later, times the failures from the "
     "same address in the last minute (at most 32), so passwords cannot be tried at wire speed"},
    {"authorizer.class.name", C_STR, F(authorizer_class_name), "", 0, 0, 1, 0,
     "`org.apache.kafka.metadata.authorizer.StandardAuthorizer` (or `kafka.security.authorizer."
     "AclAuthorizer`, or `acl`) turns on ACLs: every request is checked against the ACLs of the "
     "metadata log (`streampulse acl`); empty: everyone may do everything"},
    {"super.users", C_STR, F(super_users), "", 0, 0, 1, 0,
     "`User:NAME;User:OTHER`: principals the authorizer allows everything; with "
     "`admin.listener.ssl.keystore.location`, also the users the admin listener serves"},
    {"allow.everyone.if.no.acl.found", C_BOOL, F(allow_everyone_if_no_acl_found), "false", 0, 0,
     1, 0,
     "with the authorizer on: a resource that no ACL names is open to everyone (false: only "
     "to super users)"},
    {"schema.registry.listener", C_REGISTRY, F(registry_host), "127.0.0.1:8081", 0, 0, 1, 0,
     "the schema registry's REST API (Confluent's): `host:port`; empty turns it off. The "
     "default address is best effort (a second broker on the machine runs without); one set "
     "explicitly must be free, else the broker refuses to start"},
    {"schema.registry.topic.replication.factor", C_INT, F(registry_replication_factor), "3", 1,
     32767, 1, 0,
     "replicas of `_schemas` when the registry creates it (at most the brokers registered then)"},
    {"schema.registry.authentication.method", C_STR, F(registry_auth_method), "NONE", 0, 0, 1, 0,
     "`BASIC`: every request to the schema registry needs HTTP Basic credentials, the name "
     "and password of a SCRAM user (`streampulse user`; either mechanism); wrong ones get 401, "
     "held longer after each failure from that address. `NONE` (the default): no "
     "credentials are asked. With the authorizer on (`authorizer.class.name`) each request is "
     "also checked against the ACLs of the registry's resource types (`streampulse acl "
     "--registry-subject`, `--registry-global`) for the Basic user's `User:NAME` (with NONE: "
     "`User:ANONYMOUS`). BASIC beyond loopback needs "
     "`schema.registry.listener.ssl.keystore.location`, else the broker refuses to start"},
    {"schema.registry.listener.ssl.keystore.location", C_REGISTRY_SSL, S(keystore_location), "",
     0, 0, 1, 0,
     "HTTPS on the schema registry's listener: a PEM file with its private key and certificate "
     "chain (as `ssl.keystore.location`); reloaded on SIGHUP and when the file changes"},
    {"schema.registry.listener.ssl.key.password", C_REGISTRY_SSL, S(key_password), "", 0, 0, 1,
     0, "password of an encrypted schema registry listener key (reported as sensitive)"},
    {"schema.registry.listener.ssl.truststore.location", C_REGISTRY_SSL, S(truststore_location),
     "", 0, 0, 1, 0,
     "PEM CA certificates that registry clients' certificates must chain to, with "
     "`schema.registry.listener.ssl.client.auth` (in addition to Basic credentials, never "
     "instead)"},
    {"schema.registry.listener.ssl.client.auth", C_REGISTRY_SSL, S(client_auth), "none", 0, 0, 1,
     0, "`none`, `requested` or `required`: client certificates on the schema registry listener"},
    {"admin.listener", C_ADMIN, F(admin_host), "127.0.0.1:9644", 0, 0, 1, 0,
     "HTTP admin listener (`/metrics`, `/healthz`, `/v1/...`); empty turns it off; port 0 "
     "picks a free port. Beyond loopback (anything but 127.0.0.0/8, `::1`, `localhost`) it "
     "must have `admin.listener.ssl.keystore.location` and `super.users`, else the broker "
     "refuses to start"},
    {"admin.listener.ssl.keystore.location", C_ADMIN_SSL, S(keystore_location), "", 0, 0, 1, 0,
     "HTTPS on the admin listener: a PEM file with its private key and certificate chain (as "
     "`ssl.keystore.location`). With it every path but `/healthz` needs HTTP Basic "
     "credentials of a SCRAM user (`streampulse user create`) named in `super.users` (401 "
     "without or with wrong ones, 403 for a user who is not a super user)"},
    {"admin.listener.ssl.key.password", C_ADMIN_SSL, S(key_password), "", 0, 0, 1, 0,
     "password of an encrypted admin listener key (reported as sensitive)"},
    {"admin.listener.ssl.truststore.location", C_ADMIN_SSL, S(truststore_location), "", 0, 0,
     1, 0,
     "PEM CA certificates that admin clients' certificates must chain to, with "
     "`admin.listener.ssl.client.auth` (a certificate is asked for in addition to the Basic "
     "credentials, never instead)"},
    {"admin.listener.ssl.client.auth", C_ADMIN_SSL, S(client_auth), "none", 0, 0, 1, 0,
     "`none`, `requested` or `required`: client certificates on the admin listener"},
    {"offsets.topic.replication.factor", C_INT, F(offsets_topic_replication_factor), "3", 1, 32767, 1, 0,
     "replicas of `__consumer_offsets` partitions (at most the brokers registered when it is "
     "created)"},
    {"auto.leader.rebalance.enable", C_BOOL, F(auto_leader_rebalance_enable), "true", 0, 0, 1, 0,
     "each partition's leader hands the leadership to the partition's preferred "
     "replica (the first of its replicas) once that broker is live and caught up"},
    {"leader.imbalance.check.interval.seconds", C_INT, F(leader_imbalance_check_interval_s), "300", 1, IMAX, 1, 0,
     "how often each broker looks for partitions to hand back (min 1)"},
    {"controller.quorum.voters", C_VOTERS, F(quorum_voters), "", 0, 0, 1, 0,
     "`id@host:port,...`: a static metadata quorum, each voter with the inter-broker address "
     "that the broker of that `node.id` listens on (ids unique, ports 1-65535, at most 7); "
     "empty: this node is the only voter of a quorum of its own (a single node, \"Running a "
     "three-node cluster\")"},
    {"controller.quorum.bootstrap.servers", C_BOOTSTRAP, F(quorum_bootstrap), "", 0, 0, 1, 0,
     "`host:port,...`: cluster listeners of running nodes (at most 7); a node started with "
     "them instead of `controller.quorum.voters` asks them which cluster it joins and who "
     "its voters are, then registers as a broker of that cluster (\"Growing a single node\" "
     "in the README); needs `cluster.listener`"},
    {"controller.quorum.bootstrap.timeout.ms", C_LONG, F(quorum_bootstrap_timeout_ms), "30000", 100, LMAX, 1, 0,
     "how long startup asks the bootstrap servers, round after round, before it gives up"},
    {"cluster.secret.file", C_STR, F(cluster_secret_file), "", 0, 0, 1, 0,
     "a file (mode 600, 32 to 1024 bytes, e.g. `openssl rand -hex 32`) holding the cluster's "
     "inter-broker secret: every node must have the same; nodes prove it to each other (HMAC, "
     "the secret never sent) before any Raft or controller traffic, so a process without it "
     "cannot join, vote or append. Empty: peers are told apart by the cluster id only (keep "
     "`cluster.listener` on a trusted network), or by their certificates with "
     "`cluster.ssl.*`; it works alone and together with TLS"},
    {"cluster.ssl.keystore.location", C_STR, F(cluster_ssl_keystore_location), "", 0, 0, 1, 0,
     "turns TLS on for the inter-broker listener and every inter-broker connection: one PEM file "
     "with this node's private key and certificate chain (leaf first), as `ssl.keystore.location`; "
     "inbound connections must present a client certificate that chains to "
     "`cluster.ssl.truststore.location` (mTLS, TLS 1.2 at least), outbound ones present this "
     "certificate and verify the peer's chain. Host names are not verified (nodes are dialled by "
     "address): use a CA of the cluster's own. Reloaded when the files change and on SIGHUP"},
    {"cluster.ssl.key.password", C_STR, F(cluster_ssl_key_password), "", 0, 0, 1, 0,
     "password of an encrypted private key in `cluster.ssl.keystore.location` (sensitive)"},
    {"cluster.ssl.truststore.location", C_STR, F(cluster_ssl_truststore_location), "", 0, 0, 1, 0,
     "PEM CA certificates of the cluster (required with `cluster.ssl.keystore.location`): peers' "
     "certificates, both ways, must chain to them"},
    {"cluster.listener", C_CLUSTER, F(cluster_host), "", 0, 0, 1, 0,
     "inter-broker `host:port` (port 0: any free port): by default a voter's own entry in "
     "`controller.quorum.voters`, and 127.0.0.1 on any free port for a single node; required, "
     "at a fixed port, for a broker that is not a voter"},
};

#define NKEYS ((int)ARRAY_LEN(keys))

static const struct key *find_key(const char *name)
{
    for (int i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

int config_parse_listener(const char *s, char *host, size_t hostcap, int *port, char *err,
                          size_t errcap)
{
    const char *p = s;
    const char *sep = strstr(p, "://");
    if (sep) {
        size_t plen = (size_t)(sep - p);
        /* the listener name may be anything Kafka allows (PLAINTEXT, INTERNAL...), but the
         * security protocol is plaintext only for now */
        if (plen == 0) {
            snprintf(err, errcap, "missing listener name before ://");
            return -1;
        }
        if ((plen == 3 && !strncmp(p, "SSL", 3)) || !strncmp(p, "SASL_", 5)) {
            snprintf(err, errcap, "%.*s listeners are not supported yet (PLAINTEXT only)",
                     (int)plen, p);
            return -1;
        }
        p = sep + 3;
    }
    if (strchr(p, ',')) {
        snprintf(err, errcap, "only one listener is supported");
        return -1;
    }
    const char *colon;
    const char *h = p;
    size_t hlen;
    if (*p == '[') {
        const char *close = strchr(p, ']');
        if (!close || close[1] != ':') {
            snprintf(err, errcap, "bad IPv6 address in '%s' (expected [addr]:port)", s);
            return -1;
        }
        h = p + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(p, ':');
        if (!colon) {
            snprintf(err, errcap, "missing :port in '%s'", s);
            return -1;
        }
        hlen = (size_t)(colon - p);
    }
    if (hlen >= hostcap) {
        snprintf(err, errcap, "host name too long in '%s'", s);
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(colon + 1, &end, 10);
    if (errno || *end || colon[1] == '\0' || v < 0 || v > 65535) {
        snprintf(err, errcap, "bad port in '%s' (0-65535)", s);
        return -1;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (int)v;
    return 0;
}

/* Parses controller.quorum.voters: "id@host:port" entries separated by commas (spaces around
 * them allowed). Ids unique, ports 1..65535, at most BROKER_VOTERS_MAX entries. */
static int parse_voters(const char *value, struct broker_voter *out, int *n_out, char *err,
                        size_t errcap)
{
    int n = 0;
    const char *p = value;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, ",");
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        char ent[BROKER_HOST_MAX + 32];
        if (len == 0 || len >= sizeof(ent)) {
            snprintf(err, errcap, "%s entry %d", len ? "too long" : "empty", n + 1);
            return -1;
        }
        memcpy(ent, p, len);
        ent[len] = '\0';
        if (n == BROKER_VOTERS_MAX) {
            snprintf(err, errcap, "more than %d voters", BROKER_VOTERS_MAX);
            return -1;
        }
        char *at = strchr(ent, '@');
        if (!at) {
            snprintf(err, errcap, "entry '%s' is not id@host:port", ent);
            return -1;
        }
        *at = '\0';
        char *end;
        errno = 0;
        long id = strtol(ent, &end, 10);
        if (errno || *end || !ent[0] || id < 0 || id > INT32_MAX) {
            snprintf(err, errcap, "bad node id '%s' (0-%d)", ent, INT32_MAX);
            return -1;
        }
        char lerr[200];
        struct broker_voter *v = &out[n];
        if (config_parse_listener(at + 1, v->host, sizeof(v->host), &v->port, lerr,
                                  sizeof(lerr)) != 0 || strstr(at + 1, "://")) {
            snprintf(err, errcap, "entry %ld: %s", id, strstr(at + 1, "://") ?
                     "expected host:port" : lerr);
            return -1;
        }
        if (v->port == 0 || !v->host[0]) {
            snprintf(err, errcap, "entry %ld: needs a host and a port from 1 to 65535", id);
            return -1;
        }
        v->id = (int32_t)id;
        for (int i = 0; i < n; i++)
            if (out[i].id == v->id) {
                snprintf(err, errcap, "node id %ld appears twice", id);
                return -1;
            }
        n++;
        p += strcspn(p, ",");
        if (*p == ',') {
            p++;
            if (!*p) {
                snprintf(err, errcap, "empty entry %d", n + 1);
                return -1;
            }
        }
    }
    *n_out = n;
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* ---- listeners, advertised.listeners, listener.security.protocol.map ---- */

#define KEYS_MAX 128

struct lentry {
    char name[BROKER_LISTENER_NAME_MAX];
    char host[BROKER_HOST_MAX];
    int port;
};

struct protomap_entry {
    char name[BROKER_LISTENER_NAME_MAX];
    int protocol;
};

/* listener.name.<name>.ssl.* settings of one listener, applied over the plain ssl.* keys. */
struct ssl_override {
    char name[BROKER_LISTENER_NAME_MAX]; /* upper case */
    struct tls_settings s;
    bool set[KEYS_MAX]; /* by index in keys[] */
};

struct state {
    struct broker_config *cfg;
    bool set[KEYS_MAX]; /* key explicitly given */
    struct lentry listeners[BROKER_LISTENERS_MAX];
    int n_listeners;
    struct lentry advertised[BROKER_LISTENERS_MAX];
    int n_advertised;
    struct protomap_entry map[BROKER_LISTENERS_MAX * 2];
    int n_map;
    struct tls_settings *ssl; /* the plain ssl.* keys */
    struct tls_settings *admin_ssl; /* admin.listener.ssl.*: each key's default unless given */
    struct tls_settings *registry_ssl; /* schema.registry.listener.ssl.*: likewise */
    struct ssl_override *overrides; /* BROKER_LISTENERS_MAX of them */
    int n_overrides;
};

/* Splits value at commas into trimmed entries; calls fn on each non-empty one. An empty entry
 * between commas is an error. Returns 0 or -1 with err. */
static int split_list(const char *value, int (*fn)(const char *s, size_t len, void *arg, char *err,
                                                   size_t errcap),
                      void *arg, char *err, size_t errcap)
{
    const char *p = value;
    int n = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        const char *q = p;
        size_t m = len;
        while (m && isspace((unsigned char)*q)) {
            q++;
            m--;
        }
        while (m && isspace((unsigned char)q[m - 1]))
            m--;
        if (m == 0) {
            snprintf(err, errcap, "empty entry %d", n + 1);
            return -1;
        }
        if (fn(q, m, arg, err, errcap) != 0)
            return -1;
        n++;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

static void upcase(char *dst, const char *src, size_t len)
{
    for (size_t i = 0; i < len; i++)
        dst[i] = (char)toupper((unsigned char)src[i]);
    dst[len] = '\0';
}

/* Kafka's listener names: letters, digits, '_' and '-' (compared in upper case). */
static bool name_ok(const char *s, size_t len)
{
    if (len == 0 || len >= BROKER_LISTENER_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-')
            return false;
    return true;
}

struct lparse {
    struct lentry *out;
    int *n;
};

/* One NAME://host:port entry (a bare host:port is PLAINTEXT, as before listener names). */
static int parse_lentry(const char *s, size_t len, void *arg, char *err, size_t errcap)
{
    struct lparse *lp = arg;
    char ent[BROKER_HOST_MAX + BROKER_LISTENER_NAME_MAX + 16];
    if (len >= sizeof(ent)) {
        snprintf(err, errcap, "entry '%.40s...' is too long", s);
        return -1;
    }
    memcpy(ent, s, len);
    ent[len] = '\0';
    const char *sep = strstr(ent, "://");
    const char *hp = ent;
    struct lentry e = {0};
    if (sep) {
        size_t nlen = (size_t)(sep - ent);
        if (!name_ok(ent, nlen)) {
            snprintf(err, errcap, "bad listener name in '%s' (letters, digits, _ and -)", ent);
            return -1;
        }
        upcase(e.name, ent, nlen);
        hp = sep + 3;
    } else {
        snprintf(e.name, sizeof(e.name), "PLAINTEXT");
    }
    char lerr[200];
    if (config_parse_listener(hp, e.host, sizeof(e.host), &e.port, lerr, sizeof(lerr)) != 0) {
        snprintf(err, errcap, "%s", lerr);
        return -1;
    }
    for (int i = 0; i < *lp->n; i++)
        if (!strcmp(lp->out[i].name, e.name)) {
            snprintf(err, errcap, "listener name %s appears twice", e.name);
            return -1;
        }
    if (*lp->n == BROKER_LISTENERS_MAX) {
        snprintf(err, errcap, "more than %d listeners", BROKER_LISTENERS_MAX);
        return -1;
    }
    lp->out[(*lp->n)++] = e;
    return 0;
}

static int parse_map_entry(const char *s, size_t len, void *arg, char *err, size_t errcap)
{
    struct state *st = arg;
    const char *colon = memchr(s, ':', len);
    if (!colon) {
        snprintf(err, errcap, "entry '%.*s' is not NAME:PROTOCOL", (int)len, s);
        return -1;
    }
    size_t nlen = (size_t)(colon - s);
    const char *proto = colon + 1;
    size_t plen = len - nlen - 1;
    while (nlen && isspace((unsigned char)s[nlen - 1]))
        nlen--;
    while (plen && isspace((unsigned char)*proto)) {
        proto++;
        plen--;
    }
    if (!name_ok(s, nlen)) {
        snprintf(err, errcap, "bad listener name in '%.*s'", (int)len, s);
        return -1;
    }
    int p = security_protocol_parse(proto, plen);
    if (p < 0) {
        snprintf(err, errcap, "unknown security protocol '%.*s' for %.*s (expected PLAINTEXT, "
                 "SSL, SASL_PLAINTEXT or SASL_SSL)", (int)plen, proto, (int)nlen, s);
        return -1;
    }
    struct protomap_entry e = {.protocol = p};
    upcase(e.name, s, nlen);
    for (int i = 0; i < st->n_map; i++)
        if (!strcmp(st->map[i].name, e.name)) {
            snprintf(err, errcap, "listener name %s appears twice", e.name);
            return -1;
        }
    if (st->n_map == (int)ARRAY_LEN(st->map)) {
        snprintf(err, errcap, "more than %d entries", (int)ARRAY_LEN(st->map));
        return -1;
    }
    st->map[st->n_map++] = e;
    return 0;
}

static bool is_ssl(const struct key *k)
{
    return k->type == C_SSL_STR || k->type == C_SSL_LONG;
}

/* Which struct a key's off is into: 0 broker_config, 1 the ssl.* settings, 2 the admin
 * listener's, 3 the schema registry listener's. */
static int field_space(const struct key *k)
{
    return k->type == C_ADMIN_SSL      ? 2
           : k->type == C_REGISTRY_SSL ? 3
           : is_ssl(k)                 ? 1
                                       : 0;
}

/* Whether a and b write the same field (aliases such as log.retention.hours/.ms). */
static bool same_field(const struct key *a, const struct key *b)
{
    if (a->type == C_LISTENERS || a->type == C_ADVERTISED || a->type == C_PROTOMAP ||
        a->type == C_REFUSED)
        return a == b;
    if (b->type == C_LISTENERS || b->type == C_ADVERTISED || b->type == C_PROTOMAP ||
        b->type == C_REFUSED)
        return false;
    return a->off == b->off && field_space(a) == field_space(b);
}

/* An ssl.* value into the settings s. Returns 0 or -1 with err. */
static int apply_ssl(const struct key *k, struct tls_settings *s, const char *name,
                     const char *value, char *err, size_t errcap)
{
    char *field = (char *)s + k->off;
    char verr[400];
    if (k->type == C_SSL_LONG) {
        char *end;
        errno = 0;
        long long iv = strtoll(value, &end, 10);
        if (errno || *end || !*value || iv < k->min || iv > k->max) {
            snprintf(err, errcap, "bad value '%s' for %s: expected an integer from %" PRId64
                     " to %" PRId64, value, name, k->min, k->max);
            return -1;
        }
        *(int64_t *)field = iv;
        return 0;
    }
    if (strlen(value) >= k->size) {
        snprintf(err, errcap, "value of %s is too long", name);
        return -1;
    }
    if (tls_settings_check_value(k->name, value, verr, sizeof(verr)) != 0) {
        snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, verr);
        return -1;
    }
    strcpy(field, value);
    return 0;
}

/* listener.name.<listener>.<ssl key>=value: Kafka's per-listener override. Returns 0, 1 if name
 * is not of that form, or -1 with err. */
static int apply_override(struct state *st, const char *name, const char *value, char *err,
                          size_t errcap)
{
    static const char prefix[] = "listener.name.";
    if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
        return 1;
    const char *ln = name + sizeof(prefix) - 1;
    const char *dot = strchr(ln, '.');
    const struct key *k = dot ? find_key(dot + 1) : NULL;
    if (!dot || !name_ok(ln, (size_t)(dot - ln)) || !k) {
        snprintf(err, errcap, "unknown config key '%s'", name);
        return -1;
    }
    if (!is_ssl(k)) {
        snprintf(err, errcap, "unknown config key '%s': only ssl.* settings can be set per "
                 "listener", name);
        return -1;
    }
    char lname[BROKER_LISTENER_NAME_MAX];
    upcase(lname, ln, (size_t)(dot - ln));
    struct ssl_override *o = NULL;
    for (int i = 0; i < st->n_overrides; i++)
        if (!strcmp(st->overrides[i].name, lname))
            o = &st->overrides[i];
    if (!o) {
        if (st->n_overrides == BROKER_LISTENERS_MAX) {
            snprintf(err, errcap, "%s: ssl settings for more than %d listeners", name,
                     BROKER_LISTENERS_MAX);
            return -1;
        }
        o = &st->overrides[st->n_overrides++];
        snprintf(o->name, sizeof(o->name), "%s", lname);
    }
    if (apply_ssl(k, &o->s, name, value, err, errcap) != 0)
        return -1;
    o->set[k - keys] = true;
    return 0;
}

/* admin.listener.<ssl key>=value, schema.registry.listener.<ssl key>=value: a TLS setting of
 * the admin or the schema registry's listener (the explicit rows of keys[] and every other
 * ssl.* key alike). Returns 0, 1 if name is not of that form, or -1 with err. */
static int apply_http_ssl(struct state *st, const char *name, const char *value, char *err,
                          size_t errcap)
{
    static const char admin[] = "admin.listener.", registry[] = "schema.registry.listener.";
    size_t skip;
    struct tls_settings *into;
    if (strncmp(name, admin, sizeof(admin) - 1) == 0) {
        skip = sizeof(admin) - 1;
        into = st->admin_ssl;
    } else if (strncmp(name, registry, sizeof(registry) - 1) == 0) {
        skip = sizeof(registry) - 1;
        into = st->registry_ssl;
    } else {
        return 1;
    }
    const struct key *k = find_key(name + skip);
    if (!k || (!is_ssl(k) && k->type != C_REFUSED) || strncmp(k->name, "ssl.", 4) != 0) {
        snprintf(err, errcap, "unknown config key '%s'", name);
        return -1;
    }
    if (k->type == C_REFUSED) {
        if (!*value)
            return 0;
        snprintf(err, errcap, "%s is not supported: %s", name, k->doc);
        return -1;
    }
    return apply_ssl(k, into, name, value, err, errcap);
}

/* Applies name=value. Returns 0 or -1 with err. */
/* The host and port fields of a host:port key (C_ADMIN, C_REGISTRY, C_CLUSTER). */
static void hostport_field(struct broker_config *cfg, enum ctype type, char **host,
                           size_t *hostcap, int **port)
{
    if (type == C_ADMIN) {
        *host = cfg->admin_host;
        *port = &cfg->admin_port;
    } else if (type == C_REGISTRY) {
        *host = cfg->registry_host;
        *port = &cfg->registry_port;
    } else {
        *host = cfg->cluster_host;
        *port = &cfg->cluster_port;
    }
    *hostcap = BROKER_HOST_MAX;
}

static int apply(struct state *st, const char *name, const char *value, char *err, size_t errcap)
{
    int arc = apply_http_ssl(st, name, value, err, errcap);
    if (arc <= 0)
        return arc;
    const struct key *k = find_key(name);
    if (!k) {
        int rc = apply_override(st, name, value, err, errcap);
        if (rc <= 0)
            return rc;
        snprintf(err, errcap, "unknown config key '%s'", name);
        return -1;
    }
    if (is_ssl(k))
        return apply_ssl(k, st->ssl, name, value, err, errcap);
    char *field = (char *)st->cfg + k->off;
    int64_t iv = 0;
    char *end;
    switch (k->type) {
    case C_INT:
    case C_LONG:
        errno = 0;
        iv = strtoll(value, &end, 10);
        if (errno || *end || !*value || iv < k->min || iv > k->max) {
            snprintf(err, errcap, "bad value '%s' for %s: expected an integer from %" PRId64
                     " to %" PRId64, value, name, k->min, k->max);
            return -1;
        }
        if (k->scale > 1 && iv > 0)
            iv *= k->scale;
        /* aliases (hours/minutes/ms) write the same field: the most precise key wins */
        for (int i = 0; i < NKEYS; i++) {
            if (same_field(&keys[i], k) && st->set[i] && keys[i].priority > k->priority)
                return 0;
        }
        if (k->type == C_INT)
            *(int32_t *)field = (int32_t)iv;
        else
            *(int64_t *)field = iv;
        return 0;
    case C_BOOL:
        if (strcmp(value, "true") == 0)
            *(bool *)field = true;
        else if (strcmp(value, "false") == 0)
            *(bool *)field = false;
        else {
            snprintf(err, errcap, "bad value '%s' for %s: expected true or false", value, name);
            return -1;
        }
        return 0;
    case C_DOUBLE: {
        errno = 0;
        double d = strtod(value, &end);
        if (errno || *end || !*value || !(d >= (double)k->min && d <= (double)k->max)) {
            snprintf(err, errcap, "bad value '%s' for %s: expected a number from %" PRId64
                     " to %" PRId64, value, name, k->min, k->max);
            return -1;
        }
        *(double *)field = d;
        return 0;
    }
    case C_STR:
    case C_PATH:
        if (strlen(value) >= k->size) {
            snprintf(err, errcap, "value of %s is too long", name);
            return -1;
        }
        if (k->type == C_PATH && (!*value || strchr(value, ','))) {
            snprintf(err, errcap, "bad value '%s' for %s: expected one directory", value, name);
            return -1;
        }
        for (int i = 0; i < NKEYS; i++) {
            if (same_field(&keys[i], k) && st->set[i] && keys[i].priority > k->priority)
                return 0;
        }
        strcpy(field, value);
        return 0;
    case C_POLICY:
    case C_TSTYPE:
    case C_CODEC: {
        const char *tkey = k->type == C_POLICY   ? "cleanup.policy"
                           : k->type == C_CODEC ? "compression.type"
                                                : "message.timestamp.type";
        char terr[256];
        if (!topic_config_validate(tkey, strlen(tkey), value, strlen(value), terr, sizeof(terr))) {
            snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, terr);
            return -1;
        }
        if (strlen(value) >= k->size) {
            snprintf(err, errcap, "value of %s is too long", name);
            return -1;
        }
        strcpy(field, value);
        return 0;
    }
    case C_LEVEL:
        if (log_level_parse(value) < 0) {
            snprintf(err, errcap, "bad value '%s' for %s: expected debug, info, warn or error",
                     value, name);
            return -1;
        }
        strcpy(field, value);
        return 0;
    case C_ADMIN:
    case C_REGISTRY:
    case C_CLUSTER: {
        char *host;
        size_t hostcap;
        int *port;
        hostport_field(st->cfg, k->type, &host, &hostcap, &port);
        char lerr[200];
        host[0] = '\0';
        *port = -1;
        if (!*value)
            return 0;
        if ((k->type == C_CLUSTER && strstr(value, "://")) ||
            config_parse_listener(value, host, hostcap, port, lerr, sizeof(lerr)) != 0) {
            host[0] = '\0';
            *port = -1;
            snprintf(err, errcap,
                     "bad value '%s' for %s: expected host:port (port 0-65535; 0: any free port), "
                     "or empty to disable", value, name);
            return -1;
        }
        return 0;
    }
    case C_VOTERS: {
        char verr[400];
        if (strlen(value) >= k->size) {
            snprintf(err, errcap, "value of %s is too long", name);
            return -1;
        }
        struct broker_voter v[BROKER_VOTERS_MAX];
        int n = 0;
        if (parse_voters(value, v, &n, verr, sizeof(verr)) != 0) {
            snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, verr);
            return -1;
        }
        strcpy(field, value);
        memcpy(st->cfg->voters, v, sizeof(v));
        st->cfg->n_voters = n;
        return 0;
    }
    case C_BOOTSTRAP: {
        if (strlen(value) >= k->size) {
            snprintf(err, errcap, "value of %s is too long", name);
            return -1;
        }
        int n = 0;
        char berr[400] = "";
        for (const char *p = value; *p;) {
            while (*p == ' ' || *p == '\t')
                p++;
            size_t len = strcspn(p, ",");
            char ent[BROKER_HOST_MAX + 16];
            while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
                len--;
            if (len == 0 || len >= sizeof(ent) || n == BROKER_VOTERS_MAX) {
                snprintf(berr, sizeof(berr), "%s", n == BROKER_VOTERS_MAX ? "more than 7 servers"
                         : len ? "entry too long" : "empty entry");
                break;
            }
            memcpy(ent, p, len);
            ent[len] = '\0';
            struct broker_voter *v = &st->cfg->bootstrap[n];
            char lerr[200];
            if (strstr(ent, "://") ||
                config_parse_listener(ent, v->host, sizeof(v->host), &v->port, lerr,
                                      sizeof(lerr)) != 0 || v->port == 0 || !v->host[0]) {
                snprintf(berr, sizeof(berr), "entry '%s' is not host:port (port 1-65535)", ent);
                break;
            }
            v->id = -1;
            n++;
            p += strcspn(p, ",");
            if (*p == ',')
                p++;
        }
        if (berr[0]) {
            st->cfg->n_bootstrap = 0;
            snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, berr);
            return -1;
        }
        strcpy(field, value);
        st->cfg->n_bootstrap = n;
        return 0;
    }
    case C_LISTENERS:
    case C_ADVERTISED: {
        bool adv = k->type == C_ADVERTISED;
        struct lentry tmp[BROKER_LISTENERS_MAX];
        int n = 0;
        struct lparse lp = {tmp, &n};
        char lerr[400];
        if (!*value && !adv) {
            snprintf(err, errcap, "bad value '' for %s: at least one listener is needed", name);
            return -1;
        }
        if (split_list(value, parse_lentry, &lp, lerr, sizeof(lerr)) != 0) {
            snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, lerr);
            return -1;
        }
        for (int i = 0; i < n && adv; i++)
            if (tmp[i].port == 0 || !tmp[i].host[0]) {
                snprintf(err, errcap, "bad value '%s' for %s: %s needs a host and a port from 1 "
                         "to 65535", value, name, tmp[i].name);
                return -1;
            }
        memcpy(adv ? st->advertised : st->listeners, tmp, sizeof(tmp));
        *(adv ? &st->n_advertised : &st->n_listeners) = n;
        return 0;
    }
    case C_PROTOMAP: {
        char merr[400];
        int saved = st->n_map;
        st->n_map = 0;
        if (split_list(value, parse_map_entry, st, merr, sizeof(merr)) != 0) {
            st->n_map = saved;
            snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, merr);
            return -1;
        }
        return 0;
    }
    case C_SSL_STR:
    case C_SSL_LONG:
        return apply_ssl(k, st->ssl, name, value, err, errcap); /* not reached: see above */
    case C_REFUSED:
        if (!*value)
            return 0;
        snprintf(err, errcap, "%s is not supported: %s", name, k->doc);
        return -1;
    case C_ADMIN_SSL:
    case C_REGISTRY_SSL:
        return -1; /* not reached: apply_http_ssl took it */
    }
    return -1;
}

static int apply_line(struct state *st, char *line, const char *where, char *err, size_t errcap)
{
    char *s = trim(line);
    if (!*s || *s == '#' || *s == '!')
        return 0;
    size_t klen = strcspn(s, "=: \t");
    char *v = s + klen;
    if (*v == '\0') {
        snprintf(err, errcap, "%s: expected key=value, got '%s'", where, s);
        return -1;
    }
    *v++ = '\0';
    v = trim(v);
    if (*v == '=' || *v == ':')
        v = trim(v + 1);
    char kerr[512];
    if (apply(st, s, v, kerr, sizeof(kerr)) != 0) {
        snprintf(err, errcap, "%s: %s", where, kerr);
        return -1;
    }
    const struct key *k = find_key(s);
    if (k)
        st->set[k - keys] = true; /* listener.name.* overrides are recorded by apply */
    return 0;
}

static void describe(struct broker_config *cfg, const struct state *st)
{
    cfg->entries = mem_calloc((size_t)NKEYS, sizeof(*cfg->entries));
    cfg->n_entries = 0;
    for (int i = 0; i < NKEYS; i++) {
        const struct key *k = &keys[i];
        if (k->scale > 1 || k->priority < 0)
            continue; /* aliases are reported through the key they set */
        if (k->type == C_REFUSED)
            continue;
        const char *field = field_space(k) == 1   ? (const char *)st->ssl + k->off
                            : field_space(k) == 2 ? (const char *)st->admin_ssl + k->off
                            : field_space(k) == 3 ? (const char *)st->registry_ssl + k->off
                                                  : (const char *)cfg + k->off;
        char buf[BROKER_PATH_MAX + 64];
        bool sensitive = field_space(k) != 0
                             ? k->off == offsetof(struct tls_settings, key_password)
                             : k->off == offsetof(struct broker_config, cluster_ssl_key_password);
        switch (k->type) {
        case C_INT:
            snprintf(buf, sizeof(buf), "%" PRId32, *(const int32_t *)field);
            break;
        case C_LONG:
            snprintf(buf, sizeof(buf), "%" PRId64, *(const int64_t *)field);
            break;
        case C_BOOL:
            snprintf(buf, sizeof(buf), "%s", *(const bool *)field ? "true" : "false");
            break;
        case C_DOUBLE:
            snprintf(buf, sizeof(buf), "%g", *(const double *)field);
            break;
        case C_LISTENERS:
        case C_ADVERTISED: {
            size_t n = 0;
            buf[0] = '\0';
            for (int j = 0; j < cfg->n_listeners && n < sizeof(buf); j++) {
                const struct broker_listener *bl = &cfg->listeners[j];
                bool adv = k->type == C_ADVERTISED;
                const char *h = adv ? bl->advertised_host : bl->host;
                int port = adv ? bl->advertised_port : bl->port;
                n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                                      strchr(h, ':') ? "%s%s://[%s]:%d" : "%s%s://%s:%d",
                                      j ? "," : "", bl->name, h, port);
            }
            break;
        }
        case C_PROTOMAP: {
            size_t n = 0;
            buf[0] = '\0';
            for (int j = 0; j < st->n_map && n < sizeof(buf); j++)
                n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s:%s", j ? "," : "",
                                      st->map[j].name,
                                      security_protocol_name(st->map[j].protocol));
            break;
        }
        case C_SSL_LONG:
            snprintf(buf, sizeof(buf), "%" PRId64, *(const int64_t *)field);
            break;
        case C_CLUSTER:
        case C_ADMIN:
        case C_REGISTRY: {
            char *host;
            size_t hostcap;
            int *port;
            hostport_field((struct broker_config *)cfg, k->type, &host, &hostcap, &port);
            if (*port < 0)
                buf[0] = '\0';
            else
                snprintf(buf, sizeof(buf), strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, *port);
            break;
        }
        default:
            snprintf(buf, sizeof(buf), "%s", field);
            break;
        }
        bool set = st->set[i];
        for (int j = 0; j < NKEYS; j++)
            if (same_field(&keys[j], k) && st->set[j])
                set = true;
        struct broker_config_entry *e = &cfg->entries[cfg->n_entries++];
        e->name = k->name;
        e->value = mem_strdup(sensitive ? "" : buf);
        e->is_default = !set;
        e->sensitive = sensitive;
    }
}

/* The quorum's cross-key rules, once every key is read: a voter's cluster address is its own
 * voter entry, unless cluster.listener is also given: it then listens there, and its voter entry
 * is only how the peers reach it (through a proxy, as the fault tests do); a broker that is not
 * a voter needs cluster.listener, at a fixed port others can dial. Without voters the node is
 * standalone: cluster.listener if given, else 127.0.0.1 on any free port. */
static int cluster_settle(struct broker_config *cfg, char *err, size_t errcap)
{
    bool key = cfg->cluster_ssl_keystore_location[0] != '\0';
    bool trust = cfg->cluster_ssl_truststore_location[0] != '\0';
    if (key != trust) {
        snprintf(err, errcap, "%s is set but %s is not: TLS on the inter-broker listener needs "
                 "both (this node's key and certificate chain, and the cluster's CA)",
                 key ? "cluster.ssl.keystore.location" : "cluster.ssl.truststore.location",
                 key ? "cluster.ssl.truststore.location" : "cluster.ssl.keystore.location");
        return -1;
    }
    if (cfg->cluster_ssl_key_password[0] && !key) {
        snprintf(err, errcap, "cluster.ssl.key.password is set but cluster.ssl.keystore.location "
                 "is not");
        return -1;
    }
    bool listener_set = cfg->cluster_port >= 0;
    if (cfg->n_bootstrap > 0) {
        if (cfg->n_voters > 0) {
            snprintf(err, errcap, "set controller.quorum.voters (a static quorum) or "
                     "controller.quorum.bootstrap.servers (join a running cluster), not both");
            return -1;
        }
        if (!listener_set || cfg->cluster_port == 0 || !cfg->cluster_host[0] ||
            !strcmp(cfg->cluster_host, "0.0.0.0") || !strcmp(cfg->cluster_host, "::")) {
            snprintf(err, errcap, "controller.quorum.bootstrap.servers needs cluster.listener: "
                     "this node's inter-broker host:port, an address and a fixed port the "
                     "other nodes can dial");
            return -1;
        }
        return 0;
    }
    if (cfg->n_voters == 0) {
        if (!listener_set) {
            snprintf(cfg->cluster_host, sizeof(cfg->cluster_host), "127.0.0.1");
            cfg->cluster_port = 0;
        }
        return 0;
    }
    for (int i = 0; i < cfg->n_voters; i++) {
        const struct broker_voter *v = &cfg->voters[i];
        if (v->id != cfg->node_id)
            continue;
        if (listener_set)
            return 0; /* listens there; peers reach it through its voter entry (a proxy, NAT) */
        snprintf(cfg->cluster_host, sizeof(cfg->cluster_host), "%s", v->host);
        cfg->cluster_port = v->port;
        return 0;
    }
    if (!listener_set || cfg->cluster_port == 0) {
        snprintf(err, errcap, "node.id=%d is not in controller.quorum.voters: set "
                 "cluster.listener (its inter-broker host:port, a fixed port the voters can "
                 "dial)", cfg->node_id);
        return -1;
    }
    return 0;
}

/* What a client of this listener is told: the advertised entry of its name, else its bind
 * address (a wildcard bind advertises loopback) and port (0: the bound port, known later). */
static void advertise(const struct state *st, const struct lentry *l, struct broker_listener *bl)
{
    for (int i = 0; i < st->n_advertised; i++)
        if (!strcmp(st->advertised[i].name, l->name)) {
            snprintf(bl->advertised_host, sizeof(bl->advertised_host), "%s",
                     st->advertised[i].host);
            bl->advertised_port = st->advertised[i].port;
            return;
        }
    const char *h = l->host;
    if (!*h || !strcmp(h, "0.0.0.0") || !strcmp(h, "::"))
        h = "127.0.0.1";
    snprintf(bl->advertised_host, sizeof(bl->advertised_host), "%s", h);
    bl->advertised_port = l->port;
}

/* The TLS settings of SSL listener bl: the plain ssl.* keys, then its listener.name.* ones. */
static int ssl_settle(const struct state *st, struct broker_listener *bl, char *err,
                      size_t errcap)
{
    bl->ssl = mem_alloc(sizeof(*bl->ssl));
    *bl->ssl = *st->ssl;
    for (int i = 0; i < st->n_overrides; i++) {
        const struct ssl_override *o = &st->overrides[i];
        if (strcmp(o->name, bl->name) != 0)
            continue;
        for (int j = 0; j < NKEYS; j++) {
            if (!o->set[j])
                continue;
            const struct key *k = &keys[j];
            memcpy((char *)bl->ssl + k->off, (const char *)&o->s + k->off, k->size);
        }
    }
    char what[BROKER_LISTENER_NAME_MAX + 32];
    snprintf(what, sizeof(what), "listener %s (%s)", bl->name,
             security_protocol_name(bl->protocol));
    return tls_settings_check(bl->ssl, what, err, errcap);
}

/* sasl.enabled.mechanisms into its bits: a comma list of known names, at least one. */
static int sasl_settle(struct broker_config *cfg, char *err, size_t errcap)
{
    cfg->sasl_mechanisms = 0;
    const char *p = cfg->sasl_enabled_mechanisms;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n > 0 && p[0] == ' ')
            p++, n--;
        while (n > 0 && p[n - 1] == ' ')
            n--;
        unsigned bit = sasl_mech_parse(p, n);
        cfg->sasl_mechanisms |= bit;
        if (!bit) {
            snprintf(err, errcap, "sasl.enabled.mechanisms: unknown or unsupported mechanism "
                     "'%.*s' (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 are)", (int)n, p);
            return -1;
        }
        if (!end)
            break;
        p = end + 1;
    }
    if (cfg->sasl_mechanisms == 0) {
        snprintf(err, errcap, "sasl.enabled.mechanisms is empty: name at least one of PLAIN, "
                 "SCRAM-SHA-256, SCRAM-SHA-512");
        return -1;
    }
    return 0;
}

/* authorizer.class.name: one of the names of Kafka's ACL authorizers (ours answers for both),
 * our alias, or empty; super.users must parse (security/acl.h). */
static int authorizer_settle(struct broker_config *cfg, char *err, size_t errcap)
{
    static const char *const names[] = {
        "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "kafka.security.authorizer.AclAuthorizer",
        "acl",
    };
    const char *v = cfg->authorizer_class_name;
    cfg->authorizer_enabled = false;
    for (size_t i = 0; i < ARRAY_LEN(names) && *v; i++)
        cfg->authorizer_enabled |= strcmp(v, names[i]) == 0;
    if (*v && !cfg->authorizer_enabled) {
        snprintf(err, errcap, "authorizer.class.name: unknown authorizer '%s' (StreamPulse's is "
                 "org.apache.kafka.metadata.authorizer.StandardAuthorizer, also called acl)", v);
        return -1;
    }
    struct acl_super_users *su;
    char why[160];
    if (acl_super_users_parse(cfg->super_users, &su, why, sizeof(why)) != 0) {
        snprintf(err, errcap, "super.users: %s", why);
        return -1;
    }
    acl_super_users_free(su);
    return 0;
}

bool config_host_is_loopback(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (strcmp(host, "localhost") == 0)
        return true;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, host, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6) || (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
    return false; /* "" (every interface), other names: they may resolve to anything */
}

/* schema.registry.listener and its TLS: HTTPS when schema.registry.listener.ssl.keystore.location
 * is set; with BASIC, a listener beyond loopback needs HTTPS (the passwords would cross the
 * network in the clear), as the admin listener does. */
static int registry_settle(struct broker_config *cfg, const struct state *st, char *err,
                           size_t errcap)
{
    bool https = st->registry_ssl->keystore_location[0] != '\0';
    if (cfg->registry_port < 0) {
        if (https)
            log_warn("config_registry_ssl_ignored",
                     "reason=\"schema.registry.listener is empty (off)\"");
        return 0;
    }
    if (!https) {
        if (!cfg->registry_basic_auth || config_host_is_loopback(cfg->registry_host))
            return 0;
        snprintf(err, errcap, "schema.registry.listener=%s%s%s:%d is not a loopback address and "
                 "schema.registry.authentication.method=BASIC: beyond loopback the passwords "
                 "need HTTPS: set schema.registry.listener.ssl.keystore.location (a PEM file with "
                 "its key and certificate chain), or bind it to 127.0.0.1",
                 strchr(cfg->registry_host, ':') ? "[" : "", cfg->registry_host,
                 strchr(cfg->registry_host, ':') ? "]" : "", cfg->registry_port);
        return -1;
    }
    cfg->registry_ssl = mem_alloc(sizeof(*cfg->registry_ssl));
    *cfg->registry_ssl = *st->registry_ssl;
    return tls_settings_check(cfg->registry_ssl,
                              "schema.registry.listener (schema.registry.listener.ssl.*)", err,
                              errcap);
}

/* admin.listener and its TLS: HTTPS when admin.listener.ssl.keystore.location is set, which
 * then needs a super user to log in with; a listener beyond loopback needs HTTPS. */
static int admin_settle(struct broker_config *cfg, const struct state *st, char *err,
                        size_t errcap)
{
    bool https = st->admin_ssl->keystore_location[0] != '\0';
    if (cfg->admin_port < 0) {
        if (https)
            log_warn("config_admin_ssl_ignored", "reason=\"admin.listener is empty (off)\"");
        return 0;
    }
    char addr[BROKER_HOST_MAX + 16];
    snprintf(addr, sizeof(addr), strchr(cfg->admin_host, ':') ? "[%s]:%d" : "%s:%d",
             cfg->admin_host, cfg->admin_port);
    if (!https) {
        if (config_host_is_loopback(cfg->admin_host))
            return 0; /* plain HTTP for local clients, as always */
        snprintf(err, errcap, "admin.listener=%s is not a loopback address: beyond loopback the "
                 "admin listener needs HTTPS and authentication: set "
                 "admin.listener.ssl.keystore.location (a PEM file with its key and certificate "
                 "chain) and super.users (User:NAME of the SCRAM users who may log in), or bind "
                 "it to 127.0.0.1", addr);
        return -1;
    }
    struct acl_super_users *su;
    char why[160];
    size_t n_super = 0;
    if (acl_super_users_parse(cfg->super_users, &su, why, sizeof(why)) == 0) {
        n_super = acl_super_users_count(su);
        acl_super_users_free(su);
    }
    if (n_super == 0) {
        snprintf(err, errcap, "admin.listener=%s has HTTPS (admin.listener.ssl.keystore.location), "
                 "so every path but /healthz needs the HTTP Basic credentials of a super user, "
                 "but super.users is empty: set super.users=User:NAME for a SCRAM user "
                 "(streampulse user create NAME)", addr);
        return -1;
    }
    cfg->admin_ssl = mem_alloc(sizeof(*cfg->admin_ssl));
    *cfg->admin_ssl = *st->admin_ssl;
    return tls_settings_check(cfg->admin_ssl, "admin.listener (admin.listener.ssl.*)", err,
                              errcap);
}

/* listeners, advertised.listeners and listener.security.protocol.map together, once every key
 * is read: each listener's protocol from the map (SSL listeners get their TLS settings),
 * advertised names must be listeners, no port twice. The first listener is also the one in
 * listener_host/port and advertised_host/port. */
static int listeners_settle(struct broker_config *cfg, const struct state *st, char *err,
                            size_t errcap)
{
    for (int i = 0; i < st->n_listeners; i++) {
        const struct lentry *l = &st->listeners[i];
        struct broker_listener *bl = &cfg->listeners[cfg->n_listeners++];
        snprintf(bl->name, sizeof(bl->name), "%s", l->name);
        snprintf(bl->host, sizeof(bl->host), "%s", l->host);
        bl->port = l->port;
        bl->protocol = -1;
        for (int j = 0; j < st->n_map; j++)
            if (!strcmp(st->map[j].name, l->name))
                bl->protocol = st->map[j].protocol;
        if (bl->protocol < 0) {
            snprintf(err, errcap, "listeners: listener %s has no security protocol in "
                     "listener.security.protocol.map (add %s:PLAINTEXT or %s:SSL to it)",
                     l->name, l->name, l->name);
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (l->port != 0 && st->listeners[j].port == l->port) {
                snprintf(err, errcap, "listeners: port %d is given to both %s and %s", l->port,
                         st->listeners[j].name, l->name);
                return -1;
            }
        advertise(st, l, bl);
        if (security_protocol_tls(bl->protocol) && ssl_settle(st, bl, err, errcap) != 0)
            return -1;
    }
    for (int i = 0; i < st->n_advertised; i++) {
        bool found = false;
        for (int j = 0; j < st->n_listeners; j++)
            found |= !strcmp(st->advertised[i].name, st->listeners[j].name);
        if (!found) {
            snprintf(err, errcap, "advertised.listeners: %s is not one of listeners",
                     st->advertised[i].name);
            return -1;
        }
    }
    for (int i = 0; i < st->n_overrides; i++) {
        const struct broker_listener *bl = NULL;
        for (int j = 0; j < cfg->n_listeners; j++)
            if (!strcmp(cfg->listeners[j].name, st->overrides[i].name))
                bl = &cfg->listeners[j];
        if (!bl) {
            char lower[BROKER_LISTENER_NAME_MAX];
            size_t n = strlen(st->overrides[i].name);
            for (size_t k = 0; k <= n; k++)
                lower[k] = (char)tolower((unsigned char)st->overrides[i].name[k]);
            snprintf(err, errcap, "listener.name.%s.*: there is no listener %s in listeners",
                     lower, st->overrides[i].name);
            return -1;
        }
        if (!bl->ssl)
            log_warn("config_ssl_ignored", "listener=%s protocol=%s reason=\"its "
                     "listener.name.* ssl settings do not apply to a plaintext listener\"",
                     bl->name, security_protocol_name(bl->protocol));
    }
    const struct broker_listener *first = &cfg->listeners[0];
    snprintf(cfg->listener_host, sizeof(cfg->listener_host), "%s", first->host);
    cfg->listener_port = first->port;
    snprintf(cfg->advertised_host, sizeof(cfg->advertised_host), "%s", first->advertised_host);
    cfg->advertised_port = first->advertised_port;
    return 0;
}

static void state_free(struct state *st)
{
    if (st->admin_ssl)
        memset(st->admin_ssl->key_password, 0, sizeof(st->admin_ssl->key_password));
    mem_free(st->admin_ssl);
    if (st->registry_ssl)
        memset(st->registry_ssl->key_password, 0, sizeof(st->registry_ssl->key_password));
    mem_free(st->registry_ssl);
    mem_free(st->ssl);
    mem_free(st->overrides);
}

static int config_read(struct state *stp, const char *file, char *const *sets, int nsets,
                       char *err, size_t errcap)
{
    struct state *st = stp;
    struct broker_config *cfg = st->cfg;
    for (int i = 0; i < NKEYS; i++) {
        if (keys[i].scale > 1 || keys[i].priority < 0)
            continue; /* defaults come from the primary key */
        char kerr[512];
        CHECK(apply(st, keys[i].name, keys[i].dflt, kerr, sizeof(kerr)) == 0);
        if (is_ssl(&keys[i])) { /* the HTTP listeners' TLS starts from the defaults too */
            CHECK(apply_ssl(&keys[i], st->admin_ssl, keys[i].name, keys[i].dflt, kerr,
                            sizeof(kerr)) == 0);
            CHECK(apply_ssl(&keys[i], st->registry_ssl, keys[i].name, keys[i].dflt, kerr,
                            sizeof(kerr)) == 0);
        }
    }

    if (file) {
        FILE *f = fopen(file, "r");
        if (!f) {
            snprintf(err, errcap, "cannot read config file %s: %s", file, strerror(errno));
            return -1;
        }
        char line[8192];
        int lineno = 0;
        while (fgets(line, sizeof(line), f)) {
            lineno++;
            char where[BROKER_PATH_MAX + 32];
            snprintf(where, sizeof(where), "%s:%d", file, lineno);
            if (strlen(line) == sizeof(line) - 1 && line[sizeof(line) - 2] != '\n') {
                snprintf(err, errcap, "%s: line too long", where);
                fclose(f);
                return -1;
            }
            if (apply_line(st, line, where, err, errcap) != 0) {
                fclose(f);
                return -1;
            }
        }
        fclose(f);
    }
    for (int i = 0; i < nsets; i++) {
        char *dup = mem_strdup(sets[i]);
        char where[64];
        snprintf(where, sizeof(where), "--set #%d", i + 1);
        if (!strchr(dup, '=')) {
            snprintf(err, errcap, "%s: expected key=value, got '%s'", where, sets[i]);
            mem_free(dup);
            return -1;
        }
        int rc = apply_line(st, dup, where, err, errcap);
        mem_free(dup);
        if (rc != 0)
            return -1;
    }
    if (listeners_settle(cfg, st, err, errcap) != 0)
        return -1;
    if (cluster_settle(cfg, err, errcap) != 0)
        return -1;
    if (sasl_settle(cfg, err, errcap) != 0)
        return -1;
    if (strcasecmp(cfg->registry_auth_method, "NONE") && strcasecmp(cfg->registry_auth_method,
                                                                     "BASIC")) {
        snprintf(err, errcap, "schema.registry.authentication.method: '%s' is not NONE or BASIC",
                 cfg->registry_auth_method);
        return -1;
    }
    cfg->registry_basic_auth = strcasecmp(cfg->registry_auth_method, "BASIC") == 0;
    if (authorizer_settle(cfg, err, errcap) != 0)
        return -1;
    if (admin_settle(cfg, st, err, errcap) != 0)
        return -1;
    if (registry_settle(cfg, st, err, errcap) != 0)
        return -1;
    if (cfg->default_replication_factor > 1 && cfg->n_voters == 0)
        log_warn("config_replication_factor", "default.replication.factor=%d but this node "
                 "starts alone: topics created with -1 fail until enough brokers join",
                 cfg->default_replication_factor);
    return 0;
}


static int config_load_state(struct broker_config *cfg, const char *file, char *const *sets,
                             int nsets, char *err, size_t errcap)
{
    static_assert(ARRAY_LEN(keys) <= KEYS_MAX, "state arrays hold KEYS_MAX keys");
    memset(cfg, 0, sizeof(*cfg));
    struct state st = {.cfg = cfg};
    st.ssl = mem_calloc(1, sizeof(*st.ssl));
    st.admin_ssl = mem_calloc(1, sizeof(*st.admin_ssl));
    st.registry_ssl = mem_calloc(1, sizeof(*st.registry_ssl));
    st.overrides = mem_calloc(BROKER_LISTENERS_MAX, sizeof(*st.overrides));
    int rc = config_read(&st, file, sets, nsets, err, errcap);
    if (rc == 0)
        describe(cfg, &st);
    state_free(&st);
    return rc;
}

int config_load(struct broker_config *cfg, const char *file, char *const *sets, int nsets,
                char *err, size_t errcap)
{
    int rc = config_load_state(cfg, file, sets, nsets, err, errcap);
    if (rc != 0)
        config_free(cfg);
    return rc;
}

void config_free(struct broker_config *cfg)
{
    memset(cfg->cluster_ssl_key_password, 0, sizeof(cfg->cluster_ssl_key_password));
    for (int i = 0; i < cfg->n_listeners; i++) {
        if (cfg->listeners[i].ssl)
            memset(cfg->listeners[i].ssl->key_password, 0,
                   sizeof(cfg->listeners[i].ssl->key_password));
        mem_free(cfg->listeners[i].ssl);
        cfg->listeners[i].ssl = NULL;
    }
    cfg->n_listeners = 0;
    if (cfg->admin_ssl)
        memset(cfg->admin_ssl->key_password, 0, sizeof(cfg->admin_ssl->key_password));
    mem_free(cfg->admin_ssl);
    cfg->admin_ssl = NULL;
    if (cfg->registry_ssl)
        memset(cfg->registry_ssl->key_password, 0, sizeof(cfg->registry_ssl->key_password));
    mem_free(cfg->registry_ssl);
    cfg->registry_ssl = NULL;
    for (int i = 0; i < cfg->n_entries; i++)
        mem_free(cfg->entries[i].value);
    mem_free(cfg->entries);
    cfg->entries = NULL;
    cfg->n_entries = 0;
}

/* s with every '|' as "\|" (a markdown table cell). */
static void md_cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
}

void config_write_reference(FILE *out)
{
    fprintf(out,
            "# Configuration reference\n\n"
            "Generated by `streampulse serve --config-reference` from the key table in\n"
            "`src/server/config.c` and the topic settings in `src/broker/topic_config.c` (`make docs`\n"
            "writes this file; `make test` fails when it is not current).\n\n"
            "`streampulse serve [--config FILE] [--set key=value ...]`. The file is Java-properties "
            "style\n(`key=value`, `#` comments). Keys are Kafka's; `--set` wins over the file. An "
            "unknown key or a\nbad value is named and the broker refuses to start.\n\n"
            "## Broker settings\n\n| key | default | meaning |\n|---|---|---|\n");
    for (int i = 0; i < NKEYS; i++) {
        fprintf(out, "| `%s` | ", keys[i].name);
        if (keys[i].dflt[0]) {
            fputc('`', out);
            md_cell(out, keys[i].dflt);
            fputc('`', out);
        } else {
            fputs(keys[i].type == C_ADVERTISED ? "(listeners)" : "(none)", out);
        }
        fputs(" | ", out);
        md_cell(out, keys[i].doc);
        fputs(" |\n", out);
    }
    fprintf(out, "| `listener.name.<name>.ssl.*` | (the `ssl.*` value) | any `ssl.*` setting for one "
                 "listener (its name in lower case, as Kafka writes it) |\n");
    fprintf(out, "| `admin.listener.ssl.*` | (the `ssl.*` default) | any other `ssl.*` setting "
                 "for the admin listener (`admin.listener.ssl.enabled.protocols`, ...); its TLS "
                 "is its own: the `ssl.*` values of the Kafka listeners do not apply to it |\n");
    fprintf(out, "| `schema.registry.listener.ssl.*` | (the `ssl.*` default) | any other `ssl.*` "
                 "setting for the schema registry's listener, likewise its own |\n");
    fprintf(out, "\n## Topic settings\n\n"
                 "CreateTopics `configs`, `streampulse topic create --config`, AlterConfigs. A topic "
                 "without its own\nvalue takes the broker setting named (or the fixed default).\n\n"
                 "| key | default |\n|---|---|\n");
    for (int i = 0; i < topic_config_key_count(); i++) {
        const char *bk = topic_config_broker_key(i);
        fprintf(out, "| `%s` | ", topic_config_key_name(i));
        if (bk)
            fprintf(out, "`%s`", bk);
        else if (*topic_config_default_text(i))
            fprintf(out, "`%s`", topic_config_default_text(i));
        else
            fputs("(empty)", out);
        fputs(" |\n", out);
    }
    fprintf(out, "\nAccepted for compatibility with tools that set them, with no effect: "
                 "`file.delete.delay.ms`,\n"
                 "`follower/leader.replication.throttled.replicas`, `max.compaction.lag.ms`,\n"
                 "`message.downconversion.enable`, `message.format.version` (as in Kafka 3.x: only "
                 "the v2\nrecord format is written), `message.timestamp.difference.max.ms`, "
                 "`preallocate`,\n`segment.index.bytes`, `segment.jitter.ms`, "
                 "`unclean.leader.election.enable`.\n");
    fprintf(out, "\nSchema id validation (Confluent Server's `confluent.key.schema.validation` and\n"
                 "`confluent.value.schema.validation`, or Redpanda's "
                 "`redpanda.key.schema.id.validation` and\n`redpanda.value.schema.id.validation`: "
                 "either name turns it on): every record's key or\nvalue must be null or start with "
                 "the schema registry's framing (magic byte 0, a 4-byte id) naming an\nid that a "
                 "live version of subject `TOPIC-key` or `TOPIC-value` uses; a batch with a record "
                 "that\ndoes not is refused with `INVALID_RECORD`.\n");
}

void config_print_keys(void)
{
    for (int i = 0; i < NKEYS; i++) {
        const struct key *k = &keys[i];
        const char *d = k->dflt[0] ? k->dflt : k->type == C_ADVERTISED ? "(listeners)" : "(none)";
        if (k->type == C_REFUSED)
            printf("  %-36s %-28s not supported: %s\n", k->name, "", k->doc);
        else
            printf("  %-36s %-28s %s\n", k->name, d, k->doc);
    }
    printf("  %-36s %-28s %s\n", "listener.name.<name>.ssl.*", "(the ssl.* value)",
           "any ssl.* setting for one listener (name in lower case, as Kafka)");
    printf("  %-36s %-28s %s\n", "admin.listener.ssl.*", "(the ssl.* default)",
           "any other ssl.* setting for the admin listener (not the Kafka listeners' values)");
    printf("  %-36s %-28s %s\n", "schema.registry.listener.ssl.*", "(the ssl.* default)",
           "any other ssl.* setting for the schema registry's listener, likewise");
}
