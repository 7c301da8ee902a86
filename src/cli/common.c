/* Common options, librdkafka configuration and error reporting for the client sub-commands.
 *
 * librdkafka logs from its own threads (connection refused, broker down, ...). By default those
 * lines are kept out of the user's way: log_cb remembers the latest warning or error so that a
 * failure can be explained in one sentence, and only -v prints them as they come. Configuration
 * warnings (facility CONFWARN) are always shown, since they point at a mistake in -X.
 */
#include "cli/common.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base/mem.h"
#include "base/time.h"

volatile sig_atomic_t cli_interrupted;
volatile sig_atomic_t cli_signal; /* the first SIGINT/SIGTERM received, 0 if none */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_last[512]; /* latest warning/error line from librdkafka, under log_lock */
static bool log_verbose;   /* print every librdkafka log line (-v) */
static bool log_hide_role; /* drop "X is a producer property and will be ignored" warnings */

static void on_signal(int sig)
{
    if (!cli_signal)
        cli_signal = sig;
    cli_interrupted = 1;
}

void cli_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a read from stdin must return EINTR */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

void cli_common_init(struct cli_common *c, const char *cmd)
{
    memset(c, 0, sizeof(*c));
    c->cmd = cmd;
    const char *env = getenv("STREAMPULSE_BROKERS");
    c->brokers = (env && env[0]) ? env : CLI_DEFAULT_BROKERS;
    c->timeout_ms = CLI_DEFAULT_TIMEOUT_MS;
}

void cli_common_free(struct cli_common *c)
{
    mem_free(c->props);
    c->props = NULL;
    c->props_len = c->props_cap = 0;
}

void cli_getopt_reset(void)
{
    optind = 0; /* GNU: 0 re-initialises getopt completely */
    opterr = 1;
}

const char *cli_sub_command(struct cli_common *c, const char *help, const char *const *subs,
                            size_t n_subs, int argc, char **argv, char *cmd_buf, size_t cmd_cap,
                            int *rc)
{
    const char *sub = argc > 1 ? argv[1] : NULL;
    if (!sub || !strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
        fputs(help, sub ? stdout : stderr);
        *rc = sub ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        return NULL;
    }
    for (size_t i = 0; i < n_subs; i++) {
        if (strcmp(sub, subs[i]) != 0)
            continue;
        snprintf(cmd_buf, cmd_cap, "%s %s", c->cmd, subs[i]);
        c->cmd = cmd_buf;
        return subs[i];
    }
    char known[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n_subs && used < sizeof(known); i++)
        used +=
            (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "", subs[i]);
    cli_error(c, "unknown sub-command '%s' (%s)", sub, known);
    fprintf(stderr, "Run 'streampulse %s --help' for usage.\n", c->cmd);
    *rc = CLI_EXIT_USAGE;
    return NULL;
}

void cli_error(const struct cli_common *c, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "streampulse %s: %s\n", c->cmd, msg);
}

ssize_t cli_read_line(char *buf, size_t cap)
{
    if (!fgets(buf, (int)cap, stdin))
        return -1;
    size_t n = strlen(buf);
    if (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    else if (!feof(stdin))
        return -1; /* longer than cap */
    if (n > 0 && buf[n - 1] == '\r')
        buf[--n] = '\0';
    return (ssize_t)n;
}

int cli_parse_int(const struct cli_common *c, const char *option, const char *s, long long min,
                  long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') {
        cli_error(c, "%s: '%s' is not a whole number", option, s);
        return -1;
    }
    if (v < min || v > max) {
        cli_error(c, "%s: %lld is out of range [%lld, %lld]", option, v, min, max);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_split_kv(const char *s, char **key, const char **value)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s)
        return -1;
    *key = mem_strndup(s, (size_t)(eq - s));
    *value = eq + 1;
    return 0;
}

int cli_common_opt(struct cli_common *c, int opt, const char *arg)
{
    switch (opt) {
    case 'b':
        if (!arg[0]) {
            cli_error(c, "--bootstrap-server needs HOST:PORT[,...]");
            return -1;
        }
        c->brokers = arg;
        return 1;
    case 'X':
        if (!strchr(arg, '=') || arg[0] == '=') {
            cli_error(c, "-X needs KEY=VALUE, got '%s'", arg);
            return -1;
        }
        MEM_GROW(c->props, c->props_cap, c->props_len + 1);
        c->props[c->props_len++] = arg;
        return 1;
    case CLI_OPT_TIMEOUT: {
        char *end;
        errno = 0;
        double secs = strtod(arg, &end);
        if (errno != 0 || end == arg || *end != '\0' || !(secs > 0) || secs > 86400) {
            cli_error(c, "--timeout: '%s' is not a number of seconds in (0, 86400]", arg);
            return -1;
        }
        c->timeout_ms = (int)(secs * 1000 + 0.5);
        if (c->timeout_ms < 1)
            c->timeout_ms = 1;
        return 1;
    }
    case 'v':
        c->verbose = true;
        return 1;
    case 'h':
        c->help = true;
        return 1;
    default:
        return 0;
    }
}

static void log_cb(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    (void)rk;
    bool confwarn = strcmp(fac, "CONFWARN") == 0;
    if (confwarn && log_hide_role && strstr(buf, " property and will be ignored by this "))
        return;
    if (log_verbose || confwarn)
        fprintf(stderr, "rdkafka %s: %s\n", fac, buf);
    if (level <= 4) { /* LOG_WARNING and worse */
        /* "[thrd:main]: text" -> "text" */
        const char *text = buf;
        if (strncmp(text, "[thrd:", 6) == 0 && strstr(text, "]: "))
            text = strstr(text, "]: ") + 3;
        pthread_mutex_lock(&log_lock);
        snprintf(log_last, sizeof(log_last), "%s", text);
        pthread_mutex_unlock(&log_lock);
    }
}

void cli_log_hide_role_warnings(bool hide)
{
    log_hide_role = hide;
}

void cli_last_log_error(char *buf, size_t cap)
{
    pthread_mutex_lock(&log_lock);
    snprintf(buf, cap, "%s", log_last);
    pthread_mutex_unlock(&log_lock);
}

rd_kafka_conf_t *cli_conf_new(const struct cli_common *c)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char err[256];
    log_verbose = c->verbose;
    rd_kafka_conf_set_log_cb(conf, log_cb);
    /* Neither can fail: both are valid properties with valid values. */
    rd_kafka_conf_set(conf, "bootstrap.servers", c->brokers, err, sizeof(err));
    rd_kafka_conf_set(conf, "client.id", "streampulse-cli", err, sizeof(err));
    /* Idle connections closed by the broker are normal; don't report them as errors. */
    rd_kafka_conf_set(conf, "log.connection.close", "false", err, sizeof(err));
    return conf;
}

int cli_conf_set(const struct cli_common *c, rd_kafka_conf_t *conf, const char *key,
                 const char *value)
{
    char err[512];
    if (rd_kafka_conf_set(conf, key, value, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
        cli_error(c, "cannot set %s=%s: %s", key, value, err);
        return -1;
    }
    return 0;
}

int cli_conf_apply_user(const struct cli_common *c, rd_kafka_conf_t *conf)
{
    for (size_t i = 0; i < c->props_len; i++) {
        char *key;
        const char *value;
        if (cli_split_kv(c->props[i], &key, &value) != 0) {
            cli_error(c, "-X needs KEY=VALUE, got '%s'", c->props[i]);
            return -1;
        }
        int rc = cli_conf_set(c, conf, key, value);
        free(key);
        if (rc != 0)
            return -1;
    }
    return 0;
}

rd_kafka_t *cli_client_new(const struct cli_common *c, rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
    char err[512];
    rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof(err));
    if (!rk) {
        rd_kafka_conf_destroy(conf); /* rd_kafka_new() leaves it to us on failure */
        cli_error(c, "cannot create the client: %s", err);
        return NULL;
    }
    return rk;
}

void cli_report_cluster_error(const struct cli_common *c, const char *doing,
                              rd_kafka_resp_err_t err)
{
    char last[512];
    cli_last_log_error(last, sizeof(last));
    if (err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT ||
        err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || err == RD_KAFKA_RESP_ERR__RESOLVE) {
        cli_error(c, "%s: cannot reach the cluster at %s within %.1f s%s%s%s", doing, c->brokers,
                  c->timeout_ms / 1000.0, last[0] ? " (" : "", last, last[0] ? ")" : "");
        return;
    }
    cli_error(c, "%s: %s", doing, rd_kafka_err2str(err));
}

double cli_secs(int64_t ns)
{
    return (double)ns / 1e9;
}

int cli_topic_partition_count(const struct cli_common *c, rd_kafka_t *rk, const char *topic,
                              int *partition_cnt)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    if (!rkt) {
        cli_error(c, "bad topic name '%s': %s", topic, rd_kafka_err2str(rd_kafka_last_error()));
        return -1;
    }
    int64_t deadline_ms = time_mono_ms() + c->timeout_ms;
    int rc = -1;
    for (;;) {
        int64_t left_ms = deadline_ms - time_mono_ms();
        if (left_ms < 1)
            left_ms = 1;
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, (int)left_ms);
        if (err) {
            cli_report_cluster_error(c, "metadata request", err);
            break;
        }
        rd_kafka_resp_err_t terr =
            md->topic_cnt == 1 ? md->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
        int cnt = md->topic_cnt == 1 ? md->topics[0].partition_cnt : 0;
        rd_kafka_metadata_destroy(md);
        if (!terr && cnt > 0) {
            *partition_cnt = cnt;
            rc = 0;
            break;
        }
        if (terr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
            cli_error(c, "topic '%s' does not exist", topic);
            break;
        }
        bool transient = !terr || terr == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                         terr == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
                         terr == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT;
        if (!transient) {
            cli_error(c, "topic '%s': %s", topic, rd_kafka_err2str(terr));
            break;
        }
        if (time_mono_ms() >= deadline_ms || cli_interrupted) {
            cli_error(c, "topic '%s' is not available within %.1f s: %s", topic,
                      c->timeout_ms / 1000.0,
                      terr ? rd_kafka_err2str(terr) : "no partitions reported");
            break;
        }
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    rd_kafka_topic_destroy(rkt);
    return rc;
}

int cli_tcp_connect(const char *addr, int timeout_ms, const char *what, char *err, size_t errcap)
{
    const char *colon = strrchr(addr, ':');
    if (!colon || colon == addr || !colon[1]) {
        snprintf(err, errcap, "'%s' is not HOST:PORT", addr);
        return -1;
    }
    char host[256];
    size_t hl = (size_t)(colon - addr);
    if (hl >= sizeof(host)) {
        snprintf(err, errcap, "host name too long");
        return -1;
    }
    memcpy(host, addr, hl);
    host[hl] = 0;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    int gai = getaddrinfo(host, colon + 1, &hints, &ai);
    if (gai != 0) {
        snprintf(err, errcap, "cannot resolve %s: %s", addr, gai_strerror(gai));
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errcap, "socket: %s", strerror(errno));
        freeaddrinfo(ai);
        return -1;
    }
    struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    if (rc != 0) {
        snprintf(err, errcap, "cannot connect to %s%s: %s", what, addr, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

int cli_common_parse(struct cli_common *c, int argc, char **argv, const char *help, int *rc)
{
    static const struct option longopts[] = {CLI_COMMON_LONGOPTS, {NULL, 0, NULL, 0}};
    int opt;
    cli_getopt_reset();
    *rc = CLI_EXIT_USAGE;
    while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        int h = cli_common_opt(c, opt, optarg);
        if (h < 0)
            return 1;
        if (h == 0) {
            cli_error(c, "unknown option or missing value: '%s'", argv[optind - 1]);
            return 1;
        }
    }
    if (c->help) {
        fputs(help, stdout);
        *rc = CLI_EXIT_OK;
        return 1;
    }
    return 0;
}
