/* Moving replicas from the CLI, with Kafka's AlterPartitionReassignments and
 * ListPartitionReassignments (KIP-455) sent raw (cli/kraw.h).
 *
 * `topic alter NAME --replication-factor N`: every partition of the topic gets N replicas. New
 * ones are picked from the brokers Metadata lists, fewest replicas of the topic first (then by
 * id); when N is lower, the first N replicas stay (the preferred leader first).
 *
 * `cluster decommission NODE`: every partition with a replica on NODE (internal topics too)
 * gets, in its place, the broker with the fewest replicas of that topic that it lacks; with no
 * such broker the partition keeps one replica fewer. Then NODE leaves the metadata quorum's
 * voters if it is one (cli/voters.c), and holds nothing: it can be stopped.
 *
 * Both send the moves as one AlterPartitionReassignments; the brokers carry them out (each
 * partition's Raft leader adds the new replicas as learners, then one joint change makes the
 * target the voters) and the command polls ListPartitionReassignments until nothing it moved is
 * in progress, for at most --timeout. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/mem.h"
#include "base/time.h"
#include "cli/common.h"
#include "cli/kraw.h"
#include "cli/reassign.h"
#include "cli/voters.h"

#define KEY_ALTER_REASSIGNMENTS 45
#define KEY_LIST_REASSIGNMENTS 46
#define POLL_MS 200

static bool has(const int32_t *v, int n, int32_t id)
{
    for (int i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

/* The partitions of topic (NULL: of any topic) still being reassigned
 * (ListPartitionReassignments), or -1. */
static int moving(const struct cli_common *c, const char *topic, char *err, size_t errcap)
{
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    kraw_w32(&body, c->timeout_ms);
    kraw_warray(&body, -1); /* every reassignment */
    kraw_wuvar(&body, 0);
    int rc =
        kraw_call(c->brokers, KEY_LIST_REASSIGNMENTS, 0, &body, c->timeout_ms, &resp, err, errcap);
    int n = 0;
    if (rc == 0) {
        struct kraw_reader r = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
        (void)kraw_r32(&r); /* throttle */
        int16_t ec = kraw_r16(&r);
        char msg[256], name[256];
        kraw_rcstr(&r, msg, sizeof(msg));
        int32_t nt = kraw_rarray(&r);
        for (int32_t i = 0; i < nt && !r.bad; i++) {
            kraw_rcstr(&r, name, sizeof(name));
            int32_t np = kraw_rarray(&r);
            for (int32_t j = 0; j < np && !r.bad; j++) {
                (void)kraw_r32(&r);
                for (int k = 0; k < 3; k++) { /* replicas, adding, removing */
                    int32_t m = kraw_rarray(&r);
                    for (int32_t x = 0; x < m && !r.bad; x++)
                        (void)kraw_r32(&r);
                }
                kraw_rtags(&r);
                n += !topic || strcmp(name, topic) == 0;
            }
            kraw_rtags(&r);
        }
        if (r.bad) {
            snprintf(err, errcap, "malformed ListPartitionReassignments answer");
            rc = -1;
        } else if (ec != 0) {
            snprintf(err, errcap, "ListPartitionReassignments: %s", msg[0] ? msg : "error");
            rc = -1;
        }
    }
    strbuf_destroy(&body);
    strbuf_destroy(&resp);
    return rc == 0 ? n : -1;
}

/* One partition's new replicas. */
struct move {
    const char *topic; /* the metadata's */
    int32_t partition;
    int n;
    int32_t replicas[16];
};

/* Sends moves[0..n) (grouped by topic, in order) as one AlterPartitionReassignments. Returns
 * 0, or -1 with every refusal printed. */
static int send_moves(struct cli_common *c, const struct move *moves, int n)
{
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    kraw_w32(&body, c->timeout_ms);
    int topics = 0;
    for (int i = 0; i < n; i++)
        topics += i == 0 || strcmp(moves[i].topic, moves[i - 1].topic) != 0;
    kraw_warray(&body, topics);
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && strcmp(moves[j].topic, moves[i].topic) == 0)
            j++;
        kraw_wcstr(&body, moves[i].topic);
        kraw_warray(&body, j - i);
        for (int k = i; k < j; k++) {
            kraw_w32(&body, moves[k].partition);
            kraw_warray(&body, moves[k].n);
            for (int r = 0; r < moves[k].n; r++)
                kraw_w32(&body, moves[k].replicas[r]);
            kraw_wuvar(&body, 0);
        }
        kraw_wuvar(&body, 0);
        i = j;
    }
    kraw_wuvar(&body, 0);
    char err[512];
    int failed = 0;
    if (kraw_call(c->brokers, KEY_ALTER_REASSIGNMENTS, 0, &body, c->timeout_ms, &resp, err,
                  sizeof(err)) != 0) {
        cli_error(c, "AlterPartitionReassignments: %s", err);
        failed = -1;
    } else {
        struct kraw_reader r = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
        (void)kraw_r32(&r);
        int16_t ec = kraw_r16(&r);
        char msg[512], name[256];
        kraw_rcstr(&r, msg, sizeof(msg));
        if (ec != 0) {
            cli_error(c, "AlterPartitionReassignments: %s (error %d)", msg, ec);
            failed = -1;
        }
        int32_t nt = kraw_rarray(&r);
        for (int32_t i = 0; i < nt && !r.bad; i++) {
            kraw_rcstr(&r, name, sizeof(name));
            int32_t np = kraw_rarray(&r);
            for (int32_t j = 0; j < np && !r.bad; j++) {
                int32_t pi = kraw_r32(&r);
                int16_t pe = kraw_r16(&r);
                kraw_rcstr(&r, msg, sizeof(msg));
                kraw_rtags(&r);
                if (pe != 0) {
                    cli_error(c, "%s partition %d: %s (error %d)", name, pi, msg, pe);
                    failed = -1;
                }
            }
            kraw_rtags(&r);
        }
        if (r.bad) {
            cli_error(c, "AlterPartitionReassignments: malformed answer");
            failed = -1;
        }
    }
    strbuf_destroy(&body);
    strbuf_destroy(&resp);
    return failed;
}

/* Polls until nothing of topic (NULL: of any topic) is being moved, for at most c->timeout_ms
 * from now. Returns a CLI_EXIT_* code (the failure printed). */
static int wait_moves(struct cli_common *c, const char *topic)
{
    char err[512];
    int64_t end = time_mono_ms() + c->timeout_ms;
    for (;;) {
        int m = moving(c, topic, err, sizeof(err));
        if (m < 0) {
            cli_error(c, "%s", err);
            return CLI_EXIT_FAIL;
        }
        if (m == 0)
            return CLI_EXIT_OK;
        if (cli_interrupted)
            return CLI_EXIT_INTERRUPTED;
        if (time_mono_ms() >= end) {
            cli_error(c,
                      "%d partition(s)%s%s still moving after %d ms (the moves go on; see "
                      "'streampulse cluster status')",
                      m, topic ? " of " : "", topic ? topic : "", c->timeout_ms);
            return CLI_EXIT_FAIL;
        }
        usleep(POLL_MS * 1000);
    }
}

/* The index in md->brokers of the broker with the fewest replicas (load) among those row lacks
 * and that are not `skip`; -1 if none. */
static int least_loaded(const struct rd_kafka_metadata *md, const int *load, const int32_t *row,
                        int n, int32_t skip)
{
    int best = -1;
    for (int b = 0; b < md->broker_cnt; b++) {
        if (md->brokers[b].id == skip || has(row, n, md->brokers[b].id))
            continue;
        if (best < 0 || load[b] < load[best] ||
            (load[b] == load[best] && md->brokers[b].id < md->brokers[best].id))
            best = b;
    }
    return best;
}

/* load[b]: the replicas of topic t on md->brokers[b]. */
static void topic_load(const struct rd_kafka_metadata *md, const struct rd_kafka_metadata_topic *t,
                       int *load)
{
    memset(load, 0, (size_t)md->broker_cnt * sizeof(*load));
    for (int p = 0; p < t->partition_cnt; p++)
        for (int k = 0; k < t->partitions[p].replica_cnt; k++)
            for (int b = 0; b < md->broker_cnt; b++)
                load[b] += md->brokers[b].id == t->partitions[p].replicas[k];
}

int topic_alter_replication(struct cli_common *c, const char *topic, int rf, rd_kafka_t *rk)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 1, NULL, &md, c->timeout_ms);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        cli_error(c, "metadata: %s", rd_kafka_err2str(e));
        return CLI_EXIT_FAIL;
    }
    const struct rd_kafka_metadata_topic *t = NULL;
    for (int i = 0; i < md->topic_cnt; i++)
        if (strcmp(md->topics[i].topic, topic) == 0)
            t = &md->topics[i];
    int rc = CLI_EXIT_FAIL;
    if (!t || t->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
        t->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || t->partition_cnt == 0) {
        cli_error(c, "topic '%s' does not exist", topic);
        goto out;
    }
    if (rf > md->broker_cnt) {
        cli_error(c, "replication factor %d is more than the %d brokers the cluster has", rf,
                  md->broker_cnt);
        goto out;
    }
    if (rf > 16) {
        cli_error(c, "replication factor %d is more than 16", rf);
        goto out;
    }
    int np = t->partition_cnt;
    struct move *moves = mem_calloc((size_t)np, sizeof(*moves));
    int *load = mem_calloc((size_t)md->broker_cnt, sizeof(int));
    topic_load(md, t, load);
    int changes = 0;
    for (int p = 0; p < np; p++) {
        const struct rd_kafka_metadata_partition *mp = &t->partitions[p];
        struct move *mv = &moves[p];
        *mv = (struct move){.topic = t->topic, .partition = mp->id};
        /* lowering: the first rf replicas stay (the preferred leader first) */
        for (int k = 0; k < mp->replica_cnt && mv->n < rf; k++)
            mv->replicas[mv->n++] = mp->replicas[k];
        changes += mv->n < rf || mp->replica_cnt > rf;
        while (mv->n <
               rf) { /* the broker with the fewest replicas of the topic, then the lowest id */
            int best = least_loaded(md, load, mv->replicas, mv->n, -1);
            mv->replicas[mv->n++] = md->brokers[best].id;
            load[best]++;
        }
    }
    if (changes == 0) {
        printf("topic %s already has replication factor %d\n", topic, rf);
        rc = CLI_EXIT_OK;
    } else if (send_moves(c, moves, np) == 0) {
        printf("reassigning %d partition(s) of %s to replication factor %d\n", changes, topic, rf);
        fflush(stdout);
        rc = wait_moves(c, topic);
        if (rc == CLI_EXIT_OK)
            printf("topic %s now has replication factor %d\n", topic, rf);
    }
    mem_free(moves);
    mem_free(load);
out:
    rd_kafka_metadata_destroy(md);
    return rc;
}

/* Replicas of node in md. */
static int replicas_on(const struct rd_kafka_metadata *md, int32_t node)
{
    int n = 0;
    for (int i = 0; i < md->topic_cnt; i++)
        for (int p = 0; p < md->topics[i].partition_cnt; p++)
            n += has(md->topics[i].partitions[p].replicas, md->topics[i].partitions[p].replica_cnt,
                     node);
    return n;
}

static const char decommission_help[] =
    "Usage: streampulse cluster decommission NODE [OPTIONS]\n"
    "\n"
    "Moves every replica off broker NODE (internal topics too; each to the broker with the\n"
    "fewest replicas of its topic that lacks one, or, with none left, the partition keeps one\n"
    "replica fewer), then removes NODE from the metadata quorum's voters if it is one. Waits\n"
    "until all of it is done: NODE then leads and holds nothing, and can be stopped.\n"
    "\n" CLI_COMMON_HELP;

int cli_cluster_decommission(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c, "cluster decommission");
    int rc;
    rd_kafka_t *rk = NULL;
    const struct rd_kafka_metadata *md = NULL;
    struct move *moves = NULL;
    int *load = NULL;
    if (cli_common_parse(&c, argc, argv, decommission_help, &rc) != 0)
        goto out;
    long long node;
    if (argc - optind != 1) {
        fputs(decommission_help, stderr);
        goto out;
    }
    if (cli_parse_int(&c, "NODE", argv[optind], 0, INT32_MAX, &node) != 0)
        goto out;
    cli_signals_install();
    rc = CLI_EXIT_FAIL;
    rd_kafka_conf_t *conf = cli_conf_new(&c);
    if (cli_conf_set(&c, conf, "allow.auto.create.topics", "false") ||
        cli_conf_apply_user(&c, conf)) {
        rd_kafka_conf_destroy(conf);
        goto out;
    }
    if (!(rk = cli_client_new(&c, RD_KAFKA_PRODUCER, conf)))
        goto out;
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 1, NULL, &md, c.timeout_ms);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
        cli_report_cluster_error(&c, "metadata", e);
        goto out;
    }
    int total = 0;
    for (int i = 0; i < md->topic_cnt; i++)
        total += md->topics[i].partition_cnt;
    moves = mem_calloc((size_t)(total ? total : 1), sizeof(*moves));
    load = mem_calloc((size_t)(md->broker_cnt ? md->broker_cnt : 1), sizeof(int));
    int n = 0, shrunk = 0;
    for (int i = 0; i < md->topic_cnt; i++) {
        const struct rd_kafka_metadata_topic *t = &md->topics[i];
        topic_load(md, t, load);
        for (int p = 0; p < t->partition_cnt; p++) {
            const struct rd_kafka_metadata_partition *mp = &t->partitions[p];
            if (!has(mp->replicas, mp->replica_cnt, (int32_t)node))
                continue;
            struct move *mv = &moves[n];
            *mv = (struct move){.topic = t->topic, .partition = mp->id};
            for (int k = 0; k < mp->replica_cnt && mv->n < 16; k++)
                if (mp->replicas[k] != (int32_t)node)
                    mv->replicas[mv->n++] = mp->replicas[k];
            int best = least_loaded(md, load, mv->replicas, mv->n, (int32_t)node);
            if (best >= 0) {
                mv->replicas[mv->n++] = md->brokers[best].id;
                load[best]++;
            } else {
                shrunk++;
            }
            if (mv->n == 0) {
                cli_error(&c, "%s partition %d has no other broker to move to", t->topic, mp->id);
                goto out;
            }
            n++;
        }
    }
    if (n > 0) {
        if (send_moves(&c, moves, n) != 0)
            goto out;
        printf("moving %d replica(s) off node %lld%s\n", n, node,
               shrunk ? " (some partitions keep one replica fewer: no other broker)" : "");
        fflush(stdout);
        if ((rc = wait_moves(&c, NULL)) != CLI_EXIT_OK)
            goto out;
        rc = CLI_EXIT_FAIL;
        /* the image has the moves once they ended; Metadata through -b shows them a fetch
         * behind at most */
        int64_t end = time_mono_ms() + c.timeout_ms;
        int left;
        do {
            rd_kafka_metadata_destroy(md);
            md = NULL;
            e = rd_kafka_metadata(rk, 1, NULL, &md, c.timeout_ms);
            if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
                cli_report_cluster_error(&c, "metadata", e);
                goto out;
            }
            left = replicas_on(md, (int32_t)node);
            if (left > 0)
                usleep(POLL_MS * 1000);
        } while (left > 0 && !cli_interrupted && time_mono_ms() < end);
        if (left > 0) {
            cli_error(&c, "node %lld still holds %d replica(s)", node, left);
            goto out;
        }
    }
    char err[512];
    int vr = cli_voters_change(&c, false, (int32_t)node, err, sizeof(err));
    if (vr < 0) {
        cli_error(&c, "removing node %lld from the voters: %s", node, err);
        goto out;
    }
    printf("node %lld holds no replica%s: it can be stopped\n", node,
           vr == 1 ? " and is no longer a voter" : " and is no voter");
    rc = CLI_EXIT_OK;
out:
    mem_free(moves);
    mem_free(load);
    if (md)
        rd_kafka_metadata_destroy(md);
    if (rk)
        rd_kafka_destroy(rk);
    cli_common_free(&c);
    return rc;
}
