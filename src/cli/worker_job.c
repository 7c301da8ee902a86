/* A worker job's life outside the scheduling: intake of a consumed record (copies and the
 * worker's own headers parsed), the handler's environment, starting it, its stderr tail, the
 * words for a failure and the retry or dead-letter copy.
 *
 * Handlers are started with posix_spawnp() (no fork of this multi-threaded process), in a
 * process group of their own (so --timeout and shutdown can kill everything they started),
 * with default signal dispositions and an empty signal mask. stdin is a memfd holding the
 * record's value, so a handler may read it at its own pace, or not at all, without ever
 * blocking the worker; stdout is the worker's; stderr is a pipe whose last WORKER_TAIL_MAX
 * bytes are kept for the error text.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "cli/common.h"
#include "cli/worker.h"
#include "cli/schema_decode.h"
#include "task/traceparent.h"

extern char **environ;

/* --- small helpers ------------------------------------------------------------------------ */

uint64_t worker_random(void)
{
    static uint64_t state;
    static bool seeded;
    if (!seeded) {
        if (getrandom(&state, sizeof(state), 0) != (ssize_t)sizeof(state))
            state = (uint64_t)time_mono_ns() ^ ((uint64_t)getpid() << 32);
        seeded = true;
    }
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The last header called name, or false. */
static bool hdr_last(const rd_kafka_headers_t *h, const char *name, const void **v, size_t *len)
{
    if (!h)
        return false;
    /* rd_kafka_header_get_last() takes a non-const list but does not change it */
    return rd_kafka_header_get_last((rd_kafka_headers_t *)h, name, v, len) ==
           RD_KAFKA_RESP_ERR_NO_ERROR;
}

char *hdr_get_str(const rd_kafka_headers_t *h, const char *name)
{
    const void *v;
    size_t len;
    if (!hdr_last(h, name, &v, &len) || len > WORKER_HVALUE_MAX)
        return NULL;
    return mem_strndup(v ? v : "", v ? len : 0);
}

bool hdr_get_int(const rd_kafka_headers_t *h, const char *name, int64_t min, int64_t max,
                 int64_t *out)
{
    const void *v;
    size_t len;
    if (!hdr_last(h, name, &v, &len) || !v || len == 0 || len > 20)
        return false;
    const char *s = v;
    bool neg = s[0] == '-';
    size_t i = neg ? 1 : 0;
    if (i == len)
        return false;
    int64_t n = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9' || n > (INT64_MAX - 9) / 10)
            return false;
        n = n * 10 + (s[i] - '0');
    }
    if (neg)
        n = -n;
    if (n < min || n > max)
        return false;
    *out = n;
    return true;
}

static bool in_list(const char *name, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcmp(name, list[i]) == 0)
            return true;
    return false;
}

rd_kafka_headers_t *hdr_copy_without(const rd_kafka_headers_t *h, const char *const *drop)
{
    if (!h)
        return NULL;
    size_t n = rd_kafka_header_cnt(h);
    rd_kafka_headers_t *out = rd_kafka_headers_new(n + 8);
    const char *name;
    const void *v;
    size_t len;
    for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &v, &len) == RD_KAFKA_RESP_ERR_NO_ERROR;
         i++) {
        if (!in_list(name, drop))
            rd_kafka_header_add(out, name, -1, v, v ? (ssize_t)len : 0);
    }
    return out;
}

char **worker_base_env(void)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = mem_calloc(n + 1, sizeof(*env));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = environ[i];
        /* inherited values of our own variables would pass for the record's */
        if (strncmp(e, "SP_", 3) == 0 || strncmp(e, "TRACEPARENT=", 12) == 0 ||
            strncmp(e, "TRACESTATE=", 11) == 0)
            continue;
        env[k++] = environ[i];
    }
    env[k] = NULL;
    return env;
}

/* --- intake ------------------------------------------------------------------------------- */

/* A copy of len bytes (NUL-terminated for convenience; len may be 0). */
static void *dup_bytes(const void *p, size_t len)
{
    char *d = mem_alloc(len + 1);
    if (len)
        memcpy(d, p, len);
    d[len] = '\0';
    return d;
}

/* --decode: the value as JSON through its schema into j->input, or why not. */
static void decode_value(struct worker *w, struct job *j)
{
    struct strbuf out;
    strbuf_init(&out);
    char err[512];
    int rc = schema_decoder_decode(w->decoder, j->value, j->value_len, &out, err, sizeof err);
    if (rc != 1 && j->value_len >= 5) {
        const uint8_t *b = j->value;
        j->schema_id = (int32_t)((uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 |
                                 (uint32_t)b[3] << 8 | (uint32_t)b[4]);
    }
    if (rc == 0) {
        j->input = mem_strndup(strbuf_str(&out), out.len);
        j->input_len = out.len;
    } else if (rc < 0) {
        j->decode_error = mem_strdup(err);
    }
    strbuf_destroy(&out);
}

struct job *job_from_message(struct worker *w, struct wpart *p, rd_kafka_message_t *m)
{
    struct job *j = mem_calloc(1, sizeof(*j));
    j->part = p;
    j->partition = m->partition;
    j->from_retry = p->is_retry;
    j->offset = m->offset;
    j->err_fd = -1;
    j->deadline_ms = INT64_MAX;
    rd_kafka_timestamp_type_t tstype;
    j->timestamp_ms = rd_kafka_message_timestamp(m, &tstype);
    if (m->key) {
        j->key = dup_bytes(m->key, m->key_len);
        j->key_len = m->key_len;
    }
    if (m->payload) {
        j->value = dup_bytes(m->payload, m->len);
        j->value_len = m->len;
    }
    j->schema_id = -1;
    if (w->decoder && j->value)
        decode_value(w, j);
    if (rd_kafka_message_detach_headers(m, &j->hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
        j->hdrs = NULL;

    /* A record of the jobs topic is a new job: attempt 1, its own coordinates. A retry copy
     * carries its history in our headers; values that do not parse are ignored. */
    j->attempt = 1;
    j->orig_partition = m->partition;
    j->orig_offset = m->offset;
    char *orig = NULL;
    if (p->is_retry) {
        int64_t v;
        if (hdr_get_int(j->hdrs, HDR_ATTEMPTS, 0, 1000000, &v))
            j->attempt = (int)v + 1;
        if (hdr_get_int(j->hdrs, HDR_NOT_BEFORE, 0, INT64_MAX / 2, &v)) {
            /* a not-before further away than the longest delay we would ever choose is
             * clamped: an untrusted header must not park a record (and the commit) for years */
            int64_t wait = v - time_wall_ms();
            if (wait > w->o.backoff.max_ms)
                wait = w->o.backoff.max_ms;
            if (wait > 0)
                j->rec.due_ms = time_mono_ms() + wait;
        }
        int64_t op, oo;
        orig = hdr_get_str(j->hdrs, HDR_ORIG_TOPIC);
        if (orig && orig[0] && strlen(orig) <= 249 &&
            hdr_get_int(j->hdrs, HDR_ORIG_PARTITION, 0, INT32_MAX, &op) &&
            hdr_get_int(j->hdrs, HDR_ORIG_OFFSET, 0, INT64_MAX, &oo)) {
            j->orig_partition = (int32_t)op;
            j->orig_offset = oo;
        } else {
            mem_free(orig);
            orig = NULL;
        }
    }
    j->orig_topic = orig ? orig : mem_strdup(p->topic);

    j->rec.offset = m->offset;
    j->rec.key = j->key;
    j->rec.key_len = j->key_len;
    return j;
}

void job_free(struct job *j)
{
    if (!j)
        return;
    if (j->err_fd >= 0)
        close(j->err_fd);
    mem_free(j->key);
    mem_free(j->value);
    mem_free(j->input);
    mem_free(j->decode_error);
    if (j->hdrs)
        rd_kafka_headers_destroy(j->hdrs);
    mem_free(j->orig_topic);
    mem_free(j->error);
    mem_free(j);
}

/* --- environment -------------------------------------------------------------------------- */

static void env_from_header(struct jobenv *e, const char *var, const rd_kafka_headers_t *h,
                            const char *name)
{
    const void *v;
    size_t len;
    if (hdr_last(h, name, &v, &len) && len <= WORKER_HVALUE_MAX)
        jobenv_set(e, var, v, v ? len : 0);
}

static void build_env(const struct worker *w, const struct job *j, struct jobenv *e)
{
    const struct wpart *p = j->part;
    jobenv_set(e, "SP_TOPIC", p->topic, strlen(p->topic));
    jobenv_setf(e, "SP_PARTITION", "%" PRId32, p->partition);
    jobenv_setf(e, "SP_OFFSET", "%" PRId64, j->offset);
    if (j->timestamp_ms >= 0)
        jobenv_setf(e, "SP_TIMESTAMP", "%" PRId64, j->timestamp_ms);
    jobenv_set(e, "SP_ORIG_TOPIC", j->orig_topic, strlen(j->orig_topic));
    jobenv_setf(e, "SP_ORIG_PARTITION", "%" PRId32, j->orig_partition);
    jobenv_setf(e, "SP_ORIG_OFFSET", "%" PRId64, j->orig_offset);
    jobenv_setf(e, "SP_ATTEMPT", "%d", j->attempt);
    jobenv_setf(e, "SP_MAX_ATTEMPTS", "%d", w->o.max_attempts);
    jobenv_set(e, "SP_GROUP", w->o.group, strlen(w->o.group));
    if (j->key && !jobenv_set(e, "SP_KEY", j->key, j->key_len))
        jobenv_set(e, "SP_KEY_DROPPED", "1", 1);
    if (!j->value)
        jobenv_set(e, "SP_VALUE_NULL", "1", 1);
    if (j->schema_id >= 0)
        jobenv_setf(e, "SP_SCHEMA_ID", "%" PRId32, j->schema_id);
    if (j->decode_error)
        jobenv_set(e, "SP_DECODE_ERROR", j->decode_error, strlen(j->decode_error));
    env_from_header(e, "SP_LAST_ERROR", j->hdrs, HDR_ERROR);
    env_from_header(e, "SP_REPLAY_OF", j->hdrs, HDR_REPLAY_OF);

    const void *v;
    size_t len;
    struct traceparent tp;
    if (hdr_last(j->hdrs, HDR_TRACEPARENT, &v, &len) && v && traceparent_parse(v, len, &tp))
        jobenv_set(e, "TRACEPARENT", v, len);
    if (hdr_last(j->hdrs, HDR_TRACESTATE, &v, &len) && v && len <= 512)
        jobenv_set(e, "TRACESTATE", v, len);

    const char *name;
    size_t plen = strlen(HDR_RESERVED_PREFIX);
    for (size_t i = 0; j->hdrs && rd_kafka_header_get_all(j->hdrs, i, &name, &v, &len) ==
                                      RD_KAFKA_RESP_ERR_NO_ERROR;
         i++) {
        if (strncmp(name, HDR_RESERVED_PREFIX, plen) == 0)
            continue; /* given above under their own names */
        jobenv_add_header(e, name, strlen(name), v, len);
    }
    if (e->dropped)
        jobenv_setf(e, "SP_HEADERS_DROPPED", "%zu", e->dropped);
}

/* --- running ------------------------------------------------------------------------------ */

/* A memfd holding the value, positioned at 0; -1 with errno on failure. */
static int value_fd(const struct job *j)
{
    int fd = memfd_create("streampulse-job", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    const char *p = j->input ? j->input : j->value; /* --decode: the JSON */
    size_t left = j->input ? j->input_len : j->value ? j->value_len : 0;
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        p += n;
        left -= (size_t)n;
    }
    if (lseek(fd, 0, SEEK_SET) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int job_spawn(struct worker *w, struct job *j)
{
    int in_fd = -1, pipefd[2] = {-1, -1};
    int rc = -1, err = 0;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    struct jobenv e;
    jobenv_init(&e);
    build_env(w, j, &e);
    char **envp = jobenv_envp(&e, w->base_env);

    in_fd = value_fd(j);
    if (in_fd < 0) {
        err = errno;
        goto out;
    }
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        err = errno;
        goto out;
    }
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in_fd, STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
    posix_spawnattr_init(&attr);
    sigset_t none, dfl;
    sigemptyset(&none);
    sigemptyset(&dfl);
    static const int reset[] = {SIGINT,  SIGTERM, SIGQUIT, SIGHUP,
                                SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2};
    for (size_t i = 0; i < sizeof(reset) / sizeof(reset[0]); i++)
        sigaddset(&dfl, reset[i]);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &dfl);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    pid_t pid;
    err = posix_spawnp(&pid, w->o.cmd[0], &fa, &attr, w->o.cmd, envp);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0)
        goto out;
    j->pid = pid;
    j->err_fd = pipefd[0];
    pipefd[0] = -1;
    fcntl(j->err_fd, F_SETFL, fcntl(j->err_fd, F_GETFL) | O_NONBLOCK);
    j->tail_len = j->tail_pos = 0;
    j->tail_cut = false;
    j->timed_out = j->stop_killed = false;
    j->started_ms = time_mono_ms();
    j->deadline_ms = w->o.run_timeout_ms > 0 ? j->started_ms + w->o.run_timeout_ms : INT64_MAX;
    rc = 0;
out:
    if (rc != 0) {
        char buf[256];
        snprintf(buf, sizeof(buf), "cannot start %s: %s", w->o.cmd[0], strerror(err));
        mem_free(j->error);
        j->error = mem_strdup(buf);
    }
    if (in_fd >= 0)
        close(in_fd);
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    mem_free(envp);
    jobenv_free(&e);
    return rc;
}

void job_read_stderr(struct job *j)
{
    char buf[4096];
    while (j->err_fd >= 0) {
        ssize_t n = read(j->err_fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0) { /* end of file (every writer closed it), or an error */
            close(j->err_fd);
            j->err_fd = -1;
            return;
        }
        for (ssize_t i = 0; i < n; i++) {
            j->tail[j->tail_pos] = buf[i];
            j->tail_pos = (j->tail_pos + 1) % WORKER_TAIL_MAX;
            if (j->tail_len < WORKER_TAIL_MAX)
                j->tail_len++;
            else
                j->tail_cut = true;
        }
    }
}

char *job_describe_failure(const struct worker *w, const struct job *j, int status)
{
    char head[128];
    char dur[32];
    if (j->timed_out)
        snprintf(head, sizeof(head), "timed out after %s (killed)",
                 duration_format(w->o.run_timeout_ms, dur, sizeof(dur)));
    else if (WIFEXITED(status))
        snprintf(head, sizeof(head), "exit status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(head, sizeof(head), "killed by signal %d (%s)", WTERMSIG(status),
                 sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
    else
        snprintf(head, sizeof(head), "wait status %d", status);

    /* the tail in order, without its trailing newlines */
    char tail[WORKER_TAIL_MAX + 1];
    size_t start = j->tail_len < WORKER_TAIL_MAX ? 0 : j->tail_pos;
    for (size_t i = 0; i < j->tail_len; i++) {
        char ch = j->tail[(start + i) % WORKER_TAIL_MAX];
        tail[i] = ch == '\0' ? ' ' : ch; /* a NUL would end the header value early */
    }
    size_t n = j->tail_len;
    while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r'))
        n--;
    tail[n] = '\0';
    size_t cap = strlen(head) + n + 32;
    char *out = mem_alloc(cap);
    if (n == 0)
        snprintf(out, cap, "%s", head);
    else
        snprintf(out, cap, "%s; stderr: %s%s", head, j->tail_cut ? "..." : "", tail);
    return out;
}

/* --- the retry or dead-letter copy -------------------------------------------------------- */

/* The headers of a copy: the record's own, except those we rewrite, plus ours. */
static rd_kafka_headers_t *copy_headers(const struct worker *w, const struct job *j)
{
    static const char *const rewritten[] = {
        HDR_ATTEMPTS,       HDR_NOT_BEFORE,  HDR_ORIG_TOPIC,
        HDR_ORIG_PARTITION, HDR_ORIG_OFFSET, HDR_ERROR,
        HDR_FAILED_AT,      HDR_TRACEPARENT, NULL,
    };
    rd_kafka_headers_t *h = hdr_copy_without(j->hdrs, rewritten);
    if (!h)
        h = rd_kafka_headers_new(8);
    char num[32];
    snprintf(num, sizeof(num), "%d", j->attempt);
    rd_kafka_header_add(h, HDR_ATTEMPTS, -1, num, -1);
    if (!j->to_dlq) {
        snprintf(num, sizeof(num), "%" PRId64, j->not_before_ms);
        rd_kafka_header_add(h, HDR_NOT_BEFORE, -1, num, -1);
    }
    rd_kafka_header_add(h, HDR_ORIG_TOPIC, -1, j->orig_topic, -1);
    snprintf(num, sizeof(num), "%" PRId32, j->orig_partition);
    rd_kafka_header_add(h, HDR_ORIG_PARTITION, -1, num, -1);
    snprintf(num, sizeof(num), "%" PRId64, j->orig_offset);
    rd_kafka_header_add(h, HDR_ORIG_OFFSET, -1, num, -1);
    rd_kafka_header_add(h, HDR_ERROR, -1, j->error ? j->error : "", -1);
    snprintf(num, sizeof(num), "%" PRId64, j->failed_at_ms);
    rd_kafka_header_add(h, HDR_FAILED_AT, -1, num, -1);

    /* the next attempt is a child span of the one that failed: same trace, new parent id */
    const void *v;
    size_t len;
    struct traceparent tp;
    if (hdr_last(j->hdrs, HDR_TRACEPARENT, &v, &len)) {
        if (v && traceparent_parse(v, len, &tp)) {
            uint8_t span[8];
            uint64_t r = worker_random();
            memcpy(span, &r, sizeof(span));
            char child[TRACEPARENT_LEN + 1];
            traceparent_child(&tp, span, child);
            rd_kafka_header_add(h, HDR_TRACEPARENT, -1, child, -1);
        } else {
            rd_kafka_header_add(h, HDR_TRACEPARENT, -1, v, v ? (ssize_t)len : 0);
        }
    }
    (void)w;
    return h;
}

int job_publish(struct worker *w, struct job *j)
{
    rd_kafka_topic_t *rkt = j->to_dlq ? w->dlq_rkt : w->retry_rkt;
    int32_t cnt = j->to_dlq ? w->dlq_partitions : w->retry_partitions;
    /* the copy keeps to the partition number of the original (so a key stays together) */
    int32_t partition = (j->to_dlq ? j->orig_partition : j->part->partition) % cnt;
    rd_kafka_headers_t *h = copy_headers(w, j);
    rd_kafka_resp_err_t err = rd_kafka_producev(
        w->prk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(j->value, j->value_len),
        RD_KAFKA_V_KEY(j->key, j->key_len), RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_OPAQUE(j),
        RD_KAFKA_V_END);
    if (err) {
        rd_kafka_headers_destroy(h); /* producev() took it only on success */
        log_warn("publish_failed", "topic=%s partition=%d offset=%" PRId64 " to=%s error=\"%s\"",
                 j->part->topic, (int)j->part->partition, j->offset, rd_kafka_topic_name(rkt),
                 rd_kafka_err2str(err));
        return -1;
    }
    w->inflight++;
    return 0;
}
