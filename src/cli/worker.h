/* The task-queue worker (`streampulse worker`) and `streampulse dlq`: what their files share.
 * Internal to src/cli/. See worker.c for the design.
 */
#ifndef SP_CLI_WORKER_H
#define SP_CLI_WORKER_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "task/backoff.h"
#include "task/jobenv.h"
#include "task/ptrack.h"

/* Record headers the worker writes on the retry and dead-letter copies of a failed record. Every
 * value is text: numbers in decimal ASCII, times in milliseconds since the Unix epoch. */
#define HDR_ATTEMPTS "sp-attempts"             /* attempts made so far (1, 2, ...) */
#define HDR_NOT_BEFORE "sp-not-before"         /* retry copies: run no earlier than this */
#define HDR_ORIG_TOPIC "sp-orig-topic"         /* where the record was first produced */
#define HDR_ORIG_PARTITION "sp-orig-partition" /* ... */
#define HDR_ORIG_OFFSET "sp-orig-offset"       /* ... */
#define HDR_ERROR "sp-error"                   /* why the last attempt failed */
#define HDR_FAILED_AT "sp-failed-at"           /* when it failed */
#define HDR_REPLAY_OF "sp-replay-of"  /* dlq replay: "TOPIC/PARTITION/OFFSET" it came from */
#define HDR_TRACEPARENT "traceparent" /* W3C trace context */
#define HDR_TRACESTATE "tracestate"
#define HDR_RESERVED_PREFIX "sp-" /* headers starting so are the worker's, not SP_HEADER_* */

#define WORKER_TAIL_MAX 1024   /* bytes of a handler's stderr kept for the error text */
#define WORKER_HVALUE_MAX 8192 /* a header value the worker parses (orig topic, error, ...) */

struct cli_common;

struct worker_opts {
    const char *topic;       /* --topic: the jobs topic */
    const char *group;       /* --group */
    char *retry_topic;       /* --retry-topic, default TOPIC.retry (owned) */
    char *dlq_topic;         /* --dlq-topic, default TOPIC.dlq (owned) */
    int concurrency;         /* --concurrency: handlers running at once */
    int max_attempts;        /* --max-attempts */
    struct backoff backoff;  /* --backoff */
    int64_t run_timeout_ms;  /* --timeout per run, 0: none */
    int64_t grace_ms;        /* --grace at shutdown and when partitions are taken away */
    enum ptrack_order order; /* --order */
    bool drain;              /* --drain: exit once there is nothing left to do */
    bool decode;             /* --decode: the handler reads the value as JSON */
    const char *registry;    /* --registry */
    char **cmd;              /* the handler and its arguments, NULL-terminated (argv's) */
};

/* Tallies for the log lines and the final summary. */
struct worker_stats {
    uint64_t taken;         /* records taken from the consumer */
    uint64_t runs;          /* handler runs started */
    uint64_t succeeded;     /* runs that exited 0 */
    uint64_t failed;        /* runs that failed (exit status, signal, timeout, cannot start) */
    uint64_t retried;       /* retry copies acknowledged */
    uint64_t dead;          /* dead-letter copies acknowledged */
    uint64_t abandoned;     /* runs killed or ignored because of shutdown or a revocation */
    int64_t first_start_ms; /* monotonic, of the first run; 0 before */
    int64_t last_end_ms;    /* monotonic, of the latest run's end */
};

struct worker {
    struct cli_common *c;
    struct worker_opts o;
    rd_kafka_t *rk;              /* the consumer: group member of o.group */
    rd_kafka_t *prk;             /* the producer of retry and dead-letter copies */
    rd_kafka_topic_t *retry_rkt; /* handles on the producer */
    rd_kafka_topic_t *dlq_rkt;
    int32_t retry_partitions; /* partition counts, for the copies' partition */
    int32_t dlq_partitions;
    char **base_env;      /* see worker_base_env() */
    struct schema_decoder *decoder; /* --decode (cli/schema_decode.h), else NULL */
    struct wpart **parts; /* assigned partitions, each owned */
    size_t n_parts;
    size_t parts_cap;
    struct job **running; /* o.concurrency slots, n_running used */
    size_t n_running;
    struct job *republish; /* copies waiting to be produced again */
    size_t inflight;       /* copies handed to the producer, no delivery report yet */
    int wake_rd;           /* self-pipe: signals and librdkafka queue events */
    int wake_wr;
    bool stopping;                /* SIGTERM/SIGINT, --drain done, or a fatal error */
    bool purging;                 /* shutdown gave up undelivered copies: do not retry them */
    size_t rr;                    /* partition that start_jobs() looks at first (rotates) */
    int64_t stop_deadline_ms;     /* monotonic: the grace period ends */
    bool ever_assigned;           /* --drain: a first assignment happened */
    bool failed;                  /* a fatal error: exit 1 */
    int64_t commit_due_ms;        /* monotonic: next periodic commit */
    rd_kafka_resp_err_t last_err; /* latest consumer error logged, to not repeat it */
    struct worker_stats st;
};

/* One assigned partition of the jobs topic or of the retry topic. */
struct wpart {
    char *topic;         /* owned */
    int32_t partition;   /* its id */
    bool is_retry;       /* a partition of the retry topic: records have due times */
    struct ptrack pt;    /* records taken and not yet committed */
    bool paused;         /* paused by us: too many records buffered, or stopping */
    int64_t commit_sent; /* offset last sent in an OffsetCommit, -1 if none */
    int64_t committed;   /* offset last acknowledged, -1 if none */
    bool at_end;         /* --drain: reached the end, nothing taken since */
    int64_t must_reach;  /* --drain: our own retry copies end here; at_end needs this */
    bool revoking;       /* being given up: start nothing more from it */
};

/* One record taken from the consumer, from intake until committed (or abandoned). */
struct job {
    struct ptrack_rec rec;    /* first member: in part->pt while part is set */
    struct wpart *part;       /* NULL once orphaned: its partition was given up meanwhile */
    int32_t partition;        /* part's, kept for orphans */
    bool from_retry;          /* read from the retry topic */
    int64_t offset;           /* in part */
    int64_t timestamp_ms;     /* the record's timestamp, -1 if none */
    void *key;                /* owned copy, NULL for a null key */
    size_t key_len;           /* bytes at key */
    void *value;              /* owned copy, NULL for a null value */
    size_t value_len;         /* bytes at value */
    char *input;              /* --decode: the value as JSON, what the handler reads (owned);
                                 NULL: the value as it is */
    size_t input_len;
    int32_t schema_id;        /* --decode: the value's schema id, -1 if not framed */
    char *decode_error;       /* --decode: why the value did not decode (owned), or NULL */
    rd_kafka_headers_t *hdrs; /* owned, NULL if the record had none */
    int attempt;              /* this run's attempt number, from 1 */
    char *orig_topic;         /* owned: where the record was first produced */
    int32_t orig_partition;   /* ... */
    int64_t orig_offset;      /* ... */

    /* while running */
    pid_t pid;                  /* the handler (leader of its own process group), 0 if none */
    int err_fd;                 /* read end of its stderr pipe, -1 if closed */
    int64_t started_ms;         /* monotonic */
    int64_t deadline_ms;        /* monotonic; INT64_MAX without --timeout */
    bool timed_out;             /* killed for --timeout */
    bool stop_killed;           /* killed because the worker stops or gives the partition up */
    char tail[WORKER_TAIL_MAX]; /* the last bytes of its stderr (a ring) */
    size_t tail_len;            /* bytes in tail */
    size_t tail_pos;            /* next write position in tail */
    bool tail_cut;              /* more stderr came than tail holds */

    /* while settling: the retry or dead-letter copy */
    char *error;                /* owned: the failure in words, for sp-error */
    bool to_dlq;                /* the copy goes to the dead-letter topic */
    int64_t not_before_ms;      /* wall clock, retry copies */
    int64_t failed_at_ms;       /* wall clock */
    int publish_tries;          /* failed deliveries so far */
    bool in_producer;           /* handed to the producer, no delivery report yet */
    bool in_republish;          /* in worker.republish */
    int64_t republish_ms;       /* monotonic: when to try again */
    struct job *republish_next; /* in worker.republish while waiting to be produced again */
};

/* --- worker_job.c: a record's job from intake to its outcome ------------------------------ */

/* Builds a job from a consumed record of p (copies key and value, takes the headers). */
struct job *job_from_message(struct worker *w, struct wpart *p, rd_kafka_message_t *m);
void job_free(struct job *j);

/* Starts the handler for j. Returns 0, or -1 with j->error set (the run counts as failed). */
int job_spawn(struct worker *w, struct job *j);

/* Reads what j's handler wrote to stderr so far (non-blocking) into its tail. Closes err_fd
 * at end of file. */
void job_read_stderr(struct job *j);

/* The failure of j's run in words ("exit status 3; stderr: ...") from its wait status. */
char *job_describe_failure(const struct worker *w, const struct job *j, int status);

/* Produces j's retry or dead-letter copy (j->to_dlq, j->error, j->not_before_ms set). Returns
 * 0 if librdkafka took it (a delivery report follows), -1 if it must be tried again later. */
int job_publish(struct worker *w, struct job *j);

/* The parent's environment without SP_* / TRACEPARENT / TRACESTATE, as a NULL-terminated array
 * of pointers into environ. Release the array with mem_free(). */
char **worker_base_env(void);

/* Where dlq replay and the worker agree on header parsing: the last header name's value as a
 * NUL-terminated copy (at most WORKER_HVALUE_MAX bytes, else NULL); NULL if absent. Caller frees
 * with mem_free(). */
char *hdr_get_str(const rd_kafka_headers_t *h, const char *name);
/* The last header name's value as a whole decimal number in [min, max]; false if absent or not
 * such a number. */
bool hdr_get_int(const rd_kafka_headers_t *h, const char *name, int64_t min, int64_t max,
                 int64_t *out);
/* A copy of h without the headers named in drop (a NULL-terminated list); NULL if nothing
 * is left. */
rd_kafka_headers_t *hdr_copy_without(const rd_kafka_headers_t *h, const char *const *drop);

/* Random 64 bits (splitmix64 seeded from getrandom()). */
uint64_t worker_random(void);

#endif
