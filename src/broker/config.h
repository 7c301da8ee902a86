/* The broker's configuration as typed values. server/config.c fills it from defaults, the
 * config file and --set overrides (Kafka key names); the broker only reads it. */
#ifndef SP_BROKER_CONFIG_H
#define SP_BROKER_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#define BROKER_HOST_MAX 256
#define BROKER_PATH_MAX 4096
#define BROKER_VOTERS_MAX 7 /* entries of controller.quorum.voters (= RAFT_VOTERS_MAX) */

#define BROKER_SASL_PLAIN (1u << 0)
#define BROKER_SASL_SCRAM_SHA256 (1u << 1)
#define BROKER_SASL_SCRAM_SHA512 (1u << 2)

/* One entry of controller.quorum.voters: node id@host:port, the inter-broker (cluster)
 * address on which the broker with that node.id listens. */
struct broker_voter {
    int32_t id;
    char host[BROKER_HOST_MAX];
    int port;
};

/* One entry of listeners: NAME://host:port with its security protocol and advertised address.
 * listener_host/port and advertised_host/port below repeat the first one. */
#define BROKER_LISTENERS_MAX 8
#define BROKER_LISTENER_NAME_MAX 64
struct tls_settings;  /* security/tls_context.h: read by server/ only */
struct listener_tls;  /* net/conn.h: TLS for listener_open_endpoints */
struct dial_tls;      /* net/dial.h: TLS for dial_open */
struct broker_listener {
    char name[BROKER_LISTENER_NAME_MAX];   /* PLAINTEXT, SECURE, ... (upper case) */
    int protocol;                          /* enum security_protocol (security/protocol.h) */
    char host[BROKER_HOST_MAX];            /* bind address ("" or 0.0.0.0: every interface) */
    int port;                              /* 0: any free port */
    char advertised_host[BROKER_HOST_MAX]; /* what Metadata gives clients of this listener */
    int advertised_port;                   /* 0: the bound port */
    struct tls_settings *ssl;              /* SSL listeners: owned by the config, else NULL */
    const struct listener_tls *tls;        /* set by server/ before broker_start; NULL: none */
};

/* One broker config entry as DescribeConfigs reports it. */
struct broker_config_entry {
    const char *name;
    char *value;     /* text form (owned by the config) */
    bool is_default; /* not set by the file or --set */
    bool sensitive;
};

struct broker_config {
    int32_t node_id;                          /* node.id */
    char listener_host[BROKER_HOST_MAX];      /* the first of listeners (cluster registration) */
    int listener_port;
    char advertised_host[BROKER_HOST_MAX];    /* its advertised address */
    int advertised_port;                      /* its advertised port (0: the bound port) */
    struct broker_listener listeners[BROKER_LISTENERS_MAX]; /* listeners, in their order */
    int n_listeners;
    char log_dirs[BROKER_PATH_MAX];           /* log.dirs (one directory) */
    int32_t num_partitions;                   /* num.partitions */
    int32_t default_replication_factor;       /* default.replication.factor */
    bool auto_create_topics;                  /* auto.create.topics.enable */
    bool delete_topic_enable;                 /* delete.topic.enable */
    int64_t log_retention_ms;                 /* log.retention.ms (-1 forever) */
    int64_t log_retention_bytes;              /* log.retention.bytes (-1 unlimited) */
    int64_t log_segment_bytes;                /* log.segment.bytes */
    int64_t log_roll_ms;                      /* log.roll.ms */
    int64_t log_retention_check_interval_ms;  /* log.retention.check.interval.ms */
    int32_t log_index_interval_bytes;         /* log.index.interval.bytes */
    char log_cleanup_policy[32];              /* log.cleanup.policy */
    char log_message_timestamp_type[32];      /* log.message.timestamp.type */
    char compression_type[16];                /* compression.type */
    int32_t message_max_bytes;                /* message.max.bytes */
    int32_t socket_request_max_bytes;         /* socket.request.max.bytes */
    int32_t max_connections;                  /* max.connections */
    int32_t fetch_max_bytes;                  /* fetch.max.bytes: cap of one Fetch response */
    int32_t min_insync_replicas;              /* min.insync.replicas */
    int64_t log_cleaner_delete_retention_ms;  /* log.cleaner.delete.retention.ms */
    int64_t log_cleaner_min_compaction_lag_ms;/* log.cleaner.min.compaction.lag.ms */
    double log_cleaner_min_cleanable_ratio;   /* log.cleaner.min.cleanable.ratio */
    bool log_cleaner_enable;                  /* log.cleaner.enable */
    int64_t log_cleaner_backoff_ms;           /* log.cleaner.backoff.ms: idle check interval */
    int32_t log_cleaner_threads;              /* log.cleaner.threads */
    int64_t log_cleaner_dedupe_buffer_size;   /* log.cleaner.dedupe.buffer.size: key maps */
    int64_t log_cleaner_io_max_bytes_per_second; /* log.cleaner.io.max.bytes.per.second */
    int64_t log_flush_interval_messages;      /* log.flush.interval.messages */
    int64_t log_flush_interval_ms;            /* log.flush.interval.ms */
    int32_t max_partitions;                   /* max.partitions: a cap on all partitions */
    int32_t log_max_open_files;               /* log.max.open.files: 0 = from ulimit -n */
    int64_t producer_id_expiration_ms;        /* producer.id.expiration.ms */
    int32_t producer_state_max_producers;     /* producer.state.max.producers: per partition */
    char log_level[16];                       /* log.level: debug|info|warn|error */
    int32_t group_initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms */
    int32_t group_min_session_timeout_ms;     /* group.min.session.timeout.ms */
    int32_t group_max_session_timeout_ms;     /* group.max.session.timeout.ms */
    int32_t group_max_size;                   /* group.max.size: members per group */
    int32_t group_max_metadata_bytes;         /* group.max.metadata.bytes (StreamPulse's) */
    int32_t offsets_topic_num_partitions;     /* offsets.topic.num.partitions */
    int32_t offsets_retention_minutes;        /* offsets.retention.minutes */
    int64_t offsets_retention_check_interval_ms; /* offsets.retention.check.interval.ms */
    int32_t offset_metadata_max_bytes;        /* offset.metadata.max.bytes */
    char admin_host[BROKER_HOST_MAX];         /* admin.listener: HTTP /metrics, /healthz, /v1 */
    int admin_port;                           /* -1: admin listener disabled (empty value) */
    struct tls_settings *admin_ssl;           /* admin.listener.ssl.*: HTTPS and Basic auth
                                                 (owned by the config); NULL: plain HTTP */
    char registry_host[BROKER_HOST_MAX];      /* schema.registry.listener: the REST API */
    struct tls_settings *registry_ssl;        /* schema.registry.listener.ssl.*: HTTPS (owned
                                                 by the config); NULL: plain HTTP */
    int registry_port;                        /* -1: no schema registry (empty value) */
    int32_t registry_replication_factor;      /* schema.registry.topic.replication.factor */
    char registry_auth_method[16];            /* schema.registry.authentication.method */
    bool registry_basic_auth;                 /* ... is BASIC (set by config_load) */
    int32_t offsets_topic_replication_factor; /* offsets.topic.replication.factor */
    bool auto_leader_rebalance_enable;        /* auto.leader.rebalance.enable */
    int32_t leader_imbalance_check_interval_s; /* leader.imbalance.check.interval.seconds */

    /* SASL on SASL_PLAINTEXT / SASL_SSL listeners (broker/sasl.c) */
    char sasl_enabled_mechanisms[128];        /* sasl.enabled.mechanisms, as given */
    unsigned sasl_mechanisms;                 /* its BROKER_SASL_* bits */
    int64_t connections_max_reauth_ms;        /* connections.max.reauth.ms (0: never) */
    int64_t connection_failed_auth_delay_ms;  /* connection.failed.authentication.delay.ms */

    /* ACLs (broker/authz.c): on when authorizer.class.name names the StandardAuthorizer */
    char authorizer_class_name[128];          /* authorizer.class.name, as given */
    bool authorizer_enabled;                  /* it names one ("" : off) */
    char super_users[4096];                   /* super.users: User:A;User:B */
    bool allow_everyone_if_no_acl_found;      /* allow.everyone.if.no.acl.found */

    /* The metadata quorum. Every broker is a node of a cluster whose metadata lives in the
     * Raft log __cluster_metadata-0. With controller.quorum.voters (n_voters > 0) its voters
     * are that static list. Without it (n_voters == 0) the node is standalone: the only voter of
     * a quorum it started itself (a single node; DESIGN.md §6). cluster_host and cluster_port
     * are this broker's inter-broker address: cluster.listener if set, else its own voter entry,
     * else (standalone) 127.0.0.1 and port 0 (any free port: a single node is dialled by
     * nobody). */
    char quorum_voters[1024];                 /* controller.quorum.voters, as given */
    struct broker_voter voters[BROKER_VOTERS_MAX];
    int n_voters;
    /* controller.quorum.bootstrap.servers (KIP-853): instead of voters, cluster listeners of
     * running nodes that tell this node, at startup, which cluster it joins and who its voters
     * are (replication/discover.h); it then runs as an observer (a broker) of that quorum.
     * Needs cluster.listener at an address the others can dial. */
    char quorum_bootstrap[1024];              /* as given */
    struct broker_voter bootstrap[BROKER_VOTERS_MAX]; /* ids unused */
    int n_bootstrap;
    int64_t quorum_bootstrap_timeout_ms;      /* controller.quorum.bootstrap.timeout.ms */
    char cluster_host[BROKER_HOST_MAX];       /* cluster.listener, or this node's voter entry */
    int cluster_port;                         /* 0: any free port */
    char cluster_secret_file[BROKER_PATH_MAX]; /* cluster.secret.file: "" none */
    /* TLS on the inter-broker listener and dials (cluster.ssl.*; both locations or neither).
     * server/ builds the contexts from them and sets the two hooks before broker_start. */
    char cluster_ssl_keystore_location[BROKER_PATH_MAX];   /* PEM key + chain; "" no TLS */
    char cluster_ssl_key_password[1024];                   /* sensitive */
    char cluster_ssl_truststore_location[BROKER_PATH_MAX]; /* the cluster's CA (PEM) */
    const struct listener_tls *cluster_tls;   /* the listener's (client certificate required) */
    const struct dial_tls *cluster_dial_tls;  /* the dials' and the bootstrap query's */

    struct broker_config_entry *entries;      /* every key, for DescribeConfigs */
    int n_entries;
};

#endif
