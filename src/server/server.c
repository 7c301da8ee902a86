/* The serve command: parse options and config, start the broker on a reactor, run until
 * SIGTERM/SIGINT, then shut down cleanly (exit 0). SIGHUP reloads the TLS listeners'
 * certificates, the admin listener's included (new connections get them).
 *
 * States: CONFIGURING -> STARTING (broker_start) -> RUNNING (reactor_run) -> STOPPING
 * (signal seen: reactor_stop, broker_stop writes the clean-shutdown marker) -> exit. */
#include "server/server.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/broker.h"
#include "net/reactor.h"
#include "security/protocol.h"
#include "server/admin.h"
#include "server/registry_http.h"
#include "server/config.h"
#include "server/tls_listeners.h"
#include "server/version.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: streampulse serve [--config FILE] [--set key=value ...]\n"
                 "\n"
                 "Runs a Kafka-compatible broker. With no options: a single-node broker on\n"
                 "127.0.0.1:9092 with its data in ./data.\n"
                 "\n"
                 "  -c, --config FILE     read settings from a Java-style properties file\n"
                 "  -s, --set key=value   override one setting (repeatable; wins over the file)\n"
                 "  -h, --help            this text\n"
                 "  --config-reference    every setting as markdown (docs/CONFIG.md)\n"
                 "\n"
                 "Settings (Kafka names) and their defaults:\n");
    config_print_keys();
}

struct signal_watch {
    struct reactor *r;
    int fd;
    int signo; /* the signal that asked us to stop */
    struct tls_listeners *tls;
};

static void on_signal(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct signal_watch *sw = data;
    struct signalfd_siginfo si;
    while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
            sw->signo = (int)si.ssi_signo;
            reactor_stop(r);
        } else if (si.ssi_signo == SIGHUP) {
            log_info("sighup", "action=%s", sw->tls ? "reload_tls_certificates" : "none");
            tls_listeners_reload(sw->tls);
        }
    }
}

/* Whether key was set by the file or --set (not left at its default). */
static bool config_explicit(const struct broker_config *cfg, const char *key)
{
    for (int i = 0; i < cfg->n_entries; i++)
        if (strcmp(cfg->entries[i].name, key) == 0)
            return !cfg->entries[i].is_default;
    return false;
}

/* A listener of `key` at host:port failed to bind (rc). An address given explicitly must work
 * (else startup fails, like any listener); the default one is best effort, so that several
 * brokers started without configuration on one machine do not fail on the second one's port
 * (it then runs without). Returns 0 (go on without) or rc with err set. */
static int optional_listener_failed(const struct broker_config *cfg, const char *key,
                                    const char *event, const char *host, int port, int rc,
                                    char *err, size_t errcap)
{
    if (!config_explicit(cfg, key)) {
        log_warn(event,
                 "addr=%s:%d err=\"%s\" action=continue_without (set %s to choose another "
                 "address)",
                 host, port, err_str(rc), key);
        return 0;
    }
    snprintf(err, errcap, "cannot listen on %s %s:%d: %s (set %s= to disable)", key, host, port,
             err_str(rc), key);
    return rc;
}

/* Starts the admin listener (see optional_listener_failed). Returns 0 (*out may stay NULL) or
 * -errno with err set. */
static int start_admin(struct reactor *r, const struct broker_config *cfg,
                       const struct listener_tls *tls, struct broker *b, int64_t start_wall_ms,
                       struct admin **out, char *err, size_t errcap)
{
    *out = NULL;
    if (cfg->admin_port < 0)
        return 0;
    int rc = admin_start(r, cfg->admin_host, cfg->admin_port, tls, b, start_wall_ms, out);
    if (rc == 0)
        return 0;
    return optional_listener_failed(cfg, "admin.listener", "admin_listener_unavailable",
                                    cfg->admin_host, cfg->admin_port, rc, err, errcap);
}

/* Starts the schema registry's listener, the same way. */
static int start_registry(struct reactor *r, const struct broker_config *cfg,
                          const struct listener_tls *tls, struct broker *b,
                          struct registry_http **out, char *err, size_t errcap)
{
    *out = NULL;
    if (cfg->registry_port < 0)
        return 0;
    int rc = registry_http_start(r, cfg->registry_host, cfg->registry_port, tls,
                                 cfg->registry_basic_auth, b, out);
    if (rc == 0)
        return 0;
    return optional_listener_failed(cfg, "schema.registry.listener",
                                    "schema_registry_listener_unavailable", cfg->registry_host,
                                    cfg->registry_port, rc, err, errcap);
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

/* Large buffers (produce requests, replication frames, reads of the log) come and go at MiB
 * sizes. glibc serves them with fresh mmaps (or trims them off the heap top) and every reuse
 * faults its pages in again: in a VM that cost more than the copies themselves (measured: half
 * the leader's CPU in a 3-node acks=all run). Keep them on the heap and keep up to
 * HEAP_KEEP_BYTES of freed memory instead; idle memory is unchanged (nothing large is
 * allocated before load). */
#define MMAP_FROM_BYTES (32 << 20)
#define HEAP_KEEP_BYTES (64 << 20)

static void tune_malloc(void)
{
    mallopt(M_MMAP_THRESHOLD, MMAP_FROM_BYTES);
    mallopt(M_TRIM_THRESHOLD, HEAP_KEEP_BYTES);
}

int server_main(int argc, char **argv)
{
    tune_malloc();
    int64_t t_exec = time_mono_ms();
    int64_t start_wall_ms = time_wall_ms();
    const char *file = NULL;
    char **sets = mem_calloc((size_t)argc + 1, sizeof(char *));
    int nsets = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            mem_free(sets);
            return 0;
        } else if (!strcmp(a, "--config-reference")) { /* docs/CONFIG.md */
            config_write_reference(stdout);
            mem_free(sets);
            return 0;
        } else if ((!strcmp(a, "-c") || !strcmp(a, "--config")) && i + 1 < argc) {
            file = argv[++i];
        } else if (!strncmp(a, "--config=", 9)) {
            file = a + 9;
        } else if ((!strcmp(a, "-s") || !strcmp(a, "--set")) && i + 1 < argc) {
            sets[nsets++] = argv[++i];
        } else if (!strncmp(a, "--set=", 6)) {
            sets[nsets++] = (char *)a + 6;
        } else {
            fprintf(stderr, "streampulse serve: unknown or incomplete option '%s'\n\n", a);
            usage(stderr);
            mem_free(sets);
            return 2;
        }
    }
    struct broker_config cfg;
    char err[1024];
    if (config_load(&cfg, file, sets, nsets, err, sizeof(err)) != 0) {
        fprintf(stderr, "streampulse serve: configuration error: %s\n", err);
        mem_free(sets);
        return 2;
    }
    mem_free(sets);
    log_set_level((enum log_level)log_level_parse(cfg.log_level));
    struct tls_listeners *tls;
    if (tls_listeners_start(&cfg, &tls, err, sizeof(err)) != 0) {
        fprintf(stderr, "streampulse serve: configuration error: %s\n", err);
        config_free(&cfg);
        return 2;
    }
    raise_fd_limit();
    /* keep freed heap instead of returning it to the kernel after every burst: page faults
     * on the request/response path cost more than the memory (measured in net/ tests) */
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
    signal(SIGPIPE, SIG_IGN);

    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    struct reactor *r = reactor_new();
    if (sfd < 0 || !r) {
        log_error("startup_failed", "reason=\"%s\"", strerror(errno));
        tls_listeners_free(tls);
        config_free(&cfg);
        return 1;
    }
    struct signal_watch sw = {.r = r, .fd = sfd, .tls = tls};
    reactor_add(r, sfd, REACTOR_READ, on_signal, &sw);

    struct broker *b;
    struct broker_startup info;
    int rc = broker_start(r, &cfg, &b, &info, err, sizeof(err));
    if (rc != 0) {
        char q[1100];
        log_error("startup_failed", "reason=%s", log_quote(q, sizeof(q), err, strlen(err)));
        fprintf(stderr, "streampulse serve: %s\n", err);
        reactor_free(r);
        close(sfd);
        tls_listeners_free(tls);
        config_free(&cfg);
        return 1;
    }
    struct admin *adm = NULL;
    struct registry_http *reg = NULL;
    rc = start_admin(r, &cfg, tls_listeners_admin(tls), b, start_wall_ms, &adm, err, sizeof(err));
    if (rc == 0)
        rc = start_registry(r, &cfg, tls_listeners_registry(tls), b, &reg, err, sizeof(err));
    if (rc != 0) {
        char q[1100];
        log_error("startup_failed", "reason=%s", log_quote(q, sizeof(q), err, strlen(err)));
        fprintf(stderr, "streampulse serve: %s\n", err);
        admin_stop(adm);
        broker_stop(b);
        reactor_free(r);
        close(sfd);
        tls_listeners_free(tls);
        config_free(&cfg);
        return 1;
    }
    char admin_addr[BROKER_HOST_MAX + 16] = "off", registry_addr[BROKER_HOST_MAX + 16] = "off";
    if (adm)
        snprintf(admin_addr, sizeof(admin_addr), strchr(cfg.admin_host, ':') ? "[%s]:%d" : "%s:%d",
                 cfg.admin_host, admin_port(adm));
    if (reg)
        snprintf(registry_addr, sizeof(registry_addr),
                 strchr(cfg.registry_host, ':') ? "[%s]:%d" : "%s:%d", cfg.registry_host,
                 registry_http_port(reg));
    /* every listener as NAME/PROTOCOL@host:port, e.g. PLAINTEXT/PLAINTEXT@127.0.0.1:9092 */
    char lis[BROKER_LISTENERS_MAX * (BROKER_HOST_MAX + 96)];
    size_t ln = 0;
    lis[0] = '\0';
    for (int i = 0; i < cfg.n_listeners && ln < sizeof(lis); i++) {
        const struct broker_listener *bl = &cfg.listeners[i];
        ln += (size_t)snprintf(lis + ln, sizeof(lis) - ln, "%s%s/%s@%s:%d", i ? "," : "",
                               bl->name, security_protocol_name(bl->protocol), bl->host,
                               broker_listener_port(b, i));
    }
    log_info("broker_started",
             "version=%s node_id=%d listener=%s:%d advertised=%s:%d listeners=%s admin=%s "
             "admin_tls=%s schema_registry=%s data_dir=%s cluster_id=%s topics=%d partitions=%d clean_shutdown=%s "
             "recovery_ms=%lld segments_validated=%d truncated_bytes=%lld startup_ms=%lld",
             STREAMPULSE_VERSION, cfg.node_id, cfg.listener_host, broker_port(b),
             cfg.advertised_host, cfg.advertised_port > 0 ? cfg.advertised_port : broker_port(b),
             lis, admin_addr, adm && cfg.admin_ssl ? "https_basic_auth" : "off", registry_addr,
             cfg.log_dirs,
             info.cluster_id, info.topics, info.partitions, info.clean ? "true" : "false",
             (long long)info.recovery_ms, info.segments_validated,
             (long long)info.truncated_bytes, (long long)(time_mono_ms() - t_exec));

    rc = reactor_run(r);
    if (rc != 0)
        log_error("reactor_failed", "error=\"%s\"", err_str(rc));
    log_info("broker_stopping", "signal=%s", sw.signo == SIGINT ? "SIGINT" : "SIGTERM");
    registry_http_stop(reg); /* its requests still waiting are answered by broker_stop */
    admin_stop(adm);
    broker_stop(b);
    reactor_free(r);
    close(sfd);
    tls_listeners_free(tls); /* after the listener: no connection uses a context any more */
    log_info("broker_stopped", "clean=true");
    config_free(&cfg);
    return rc == 0 ? 0 : 1;
}
