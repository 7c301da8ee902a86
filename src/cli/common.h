/* What every client sub-command shares: the common options (-b, -X, --timeout, -v, -h), building
 * a librdkafka configuration from them, reporting librdkafka's errors in words, topic metadata
 * look-ups and signal handling. Internal to src/cli/.
 *
 * Option precedence when a client is built: the command's own defaults first, then its flags
 * (--acks, --compression, ...), then every -X key=value in the order given, so -X always wins.
 */
#ifndef SP_CLI_COMMON_H
#define SP_CLI_COMMON_H

#include <getopt.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum cli_exit {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,
    CLI_EXIT_USAGE = 2,
    CLI_EXIT_INTERRUPTED = 130,
};

#define CLI_DEFAULT_BROKERS "127.0.0.1:9092"
#define CLI_DEFAULT_TIMEOUT_MS 10000

/* The options every client command takes. */
struct cli_common {
    const char *cmd;     /* "topic create", "produce", ...: prefixes error messages */
    const char *brokers; /* -b/--bootstrap-server, else $STREAMPULSE_BROKERS, else default */
    const char **props;  /* -X key=value arguments, in the order given (not owned) */
    size_t props_len;    /* entries used in props */
    size_t props_cap;    /* entries allocated in props */
    int timeout_ms;      /* --timeout: how long to wait for the cluster */
    bool verbose;        /* -v: pass librdkafka's log lines through to stderr */
    bool help;           /* -h/--help was given */
};

/* Long-option ids past the char range; each command numbers its own from CLI_OPT_CMD. */
enum {
    CLI_OPT_TIMEOUT = 256,
    CLI_OPT_CMD = 300,
};

#define CLI_COMMON_SHORTOPTS "b:X:vh"
/* clang-format off */
#define CLI_COMMON_LONGOPTS                                                                        \
    {"bootstrap-server", required_argument, NULL, 'b'},                                            \
    {"timeout", required_argument, NULL, CLI_OPT_TIMEOUT},                                         \
    {"verbose", no_argument, NULL, 'v'},                                                           \
    {"help", no_argument, NULL, 'h'}
/* clang-format on */

#define CLI_COMMON_HELP                                                                            \
    "Common options:\n"                                                                            \
    "  -b, --bootstrap-server HOST:PORT[,...]\n"                                                   \
    "                         brokers to bootstrap from (default: $STREAMPULSE_BROKERS,\n"         \
    "                         else " CLI_DEFAULT_BROKERS ")\n"                                     \
    "  -X KEY=VALUE           any librdkafka property, repeatable; applied last, so it\n"          \
    "                         overrides the command's own settings\n"                              \
    "      --timeout SECS     how long to wait for the cluster before giving up (default 10)\n"    \
    "  -v, --verbose          show librdkafka's log lines on stderr\n"                             \
    "  -h, --help             this help\n"

/* Set by SIGINT/SIGTERM once cli_signals_install() ran; loops poll it (and may clear it to
 * notice a second signal). */
extern volatile sig_atomic_t cli_interrupted;
/* The first of those signals received, never cleared; 0 if none. */
extern volatile sig_atomic_t cli_signal;

/* SIGINT and SIGTERM set cli_interrupted (without SA_RESTART, so a blocking read returns EINTR). */
void cli_signals_install(void);

/* Fills in defaults: brokers from $STREAMPULSE_BROKERS or CLI_DEFAULT_BROKERS. */
void cli_common_init(struct cli_common *c, const char *cmd);

/* The sub-command of a command with several (`topic create`, `group list`, ...): argv[1] must
 * be one of subs. Returns it, with c->cmd set to "<c->cmd> <sub>" (in cmd_buf). Otherwise
 * returns NULL with *rc set: no sub-command or help asked -> help printed (stderr and
 * CLI_EXIT_USAGE, or stdout and CLI_EXIT_OK); unknown -> an error naming the known ones,
 * CLI_EXIT_USAGE. */
const char *cli_sub_command(struct cli_common *c, const char *help, const char *const *subs,
                            size_t n_subs, int argc, char **argv, char *cmd_buf, size_t cmd_cap,
                            int *rc);
void cli_common_free(struct cli_common *c);

/* Handles one getopt result if it is a common option. Returns 1 if handled, 0 if opt is not a
 * common option, -1 if its argument is bad (the reason is printed). */
int cli_common_opt(struct cli_common *c, int opt, const char *arg);

/* Parses argv of a command that takes the common options only (operands are left at
 * argv[optind..], getopt moving them after the options). Returns 0 to go on; 1 with *rc set:
 * help was asked (printed to stdout, CLI_EXIT_OK) or an option is bad (the reason printed,
 * CLI_EXIT_USAGE). */
int cli_common_parse(struct cli_common *c, int argc, char **argv, const char *help, int *rc);

/* Resets getopt's state before a command parses its own argv (argv[0] is the command name). */
void cli_getopt_reset(void);

/* Prints "streampulse CMD: MESSAGE" to stderr. */
void cli_error(const struct cli_common *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses a whole decimal integer in [min, max] into *out. On error prints
 * "streampulse CMD: OPTION: ..." and returns -1. */
/* The first line of stdin into buf (cap bytes), without its line end ("\n" or "\r\n"): its
 * length, or -1 (no line, or one longer than cap - 1). For --password-stdin. */
ssize_t cli_read_line(char *buf, size_t cap);

int cli_parse_int(const struct cli_common *c, const char *option, const char *s, long long min,
                  long long max, long long *out);

/* Splits "key=value" at the first '='. Returns -1 if there is no '=' or the key is empty. On
 * success *key is a new string (release with free()) and *value points into s. */
int cli_split_kv(const char *s, char **key, const char **value);

/* A new configuration with bootstrap.servers, client.id and the CLI's log handling set.
 * Caller owns it (rd_kafka_conf_destroy, or pass it to cli_client_new). */
rd_kafka_conf_t *cli_conf_new(const struct cli_common *c);

/* Sets one property; on failure prints librdkafka's reason and returns -1. */
int cli_conf_set(const struct cli_common *c, rd_kafka_conf_t *conf, const char *key,
                 const char *value);

/* Applies every -X in order; -1 (reason printed) on the first bad one. */
int cli_conf_apply_user(const struct cli_common *c, rd_kafka_conf_t *conf);

/* Creates the client. Always consumes conf. Returns NULL (reason printed) on failure. */
rd_kafka_t *cli_client_new(const struct cli_common *c, rd_kafka_type_t type, rd_kafka_conf_t *conf);

/* Hides librdkafka's warnings that a -X property belongs to the other client role (for
 * commands that apply -X to both a producer and a consumer). */
void cli_log_hide_role_warnings(bool hide);

/* The most recent warning or error librdkafka logged (e.g. "Connect to ipv4#127.0.0.1:9092
 * failed: Connection refused"), or "" if none. */
void cli_last_log_error(char *buf, size_t cap);

/* Prints why the cluster could not be reached: "cannot reach the cluster at BROKERS within N s
 * (LAST LOG ERROR)" for timeouts and transport errors, else librdkafka's text for err. */
void cli_report_cluster_error(const struct cli_common *c, const char *doing,
                              rd_kafka_resp_err_t err);

/* Looks up topic's partition count with a Metadata request for that topic alone (so the broker
 * auto-creates it only if this client type asks for that), retrying while the topic's leader is
 * not yet available, for at most c->timeout_ms. Returns 0 with *partition_cnt > 0, or -1 with
 * the reason printed (cluster unreachable, "topic X does not exist", ...). */
int cli_topic_partition_count(const struct cli_common *c, rd_kafka_t *rk, const char *topic,
                              int *partition_cnt);

/* Seconds as a double from a monotonic nanosecond interval. */
double cli_secs(int64_t ns);

/* A blocking TCP connection to addr ("host:port"), with send and receive timeouts of
 * timeout_ms. Returns the socket, or -1 with the reason in err; `what` names the far end in
 * "cannot connect to <what><addr>" ("" or e.g. "the admin listener at "). */
int cli_tcp_connect(const char *addr, int timeout_ms, const char *what, char *err, size_t errcap);

int cli_topic(int argc, char **argv);
int cli_produce(int argc, char **argv);
int cli_consume(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_group(int argc, char **argv);
int cli_worker(int argc, char **argv);
int cli_dlq(int argc, char **argv);
int cli_cluster(int argc, char **argv);
int cli_user(int argc, char **argv);
int cli_acl(int argc, char **argv);
int cli_schema(int argc, char **argv);
int cli_leader_election(int argc, char **argv);

#endif
