/* streampulse topic alter NAME --replication-factor N: grows every partition of a topic to N
 * replicas. The new replicas are picked from the brokers Metadata lists, fewest replicas of the
 * topic first (then by id), and sent as one AlterPartitionReassignments (KIP-455) request; the
 * brokers carry it out (each partition's Raft leader adds the new replicas as learners and
 * promotes them once caught up). The command then polls ListPartitionReassignments until no
 * partition of the topic is being moved, for at most --timeout. Lowering the replication factor
 * is refused (not supported by the brokers yet). */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/mem.h"
#include "base/time.h"
#include "cli/common.h"
#include "cli/kraw.h"
#include "cli/topic_alter.h"

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

/* The partitions of topic still being reassigned (ListPartitionReassignments), or -1. */
static int moving(const struct cli_common *c, const char *topic, char *err, size_t errcap)
{
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    kraw_w32(&body, c->timeout_ms);
    kraw_warray(&body, -1); /* every reassignment */
    kraw_wuvar(&body, 0);
    int rc = kraw_call(c->brokers, KEY_LIST_REASSIGNMENTS, 0, &body, c->timeout_ms, &resp, err,
                       errcap);
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
                n += strcmp(name, topic) == 0;
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
    int np = t->partition_cnt;
    int32_t *rows = mem_calloc((size_t)np * (size_t)rf, sizeof(int32_t));
    int *load = mem_calloc((size_t)md->broker_cnt, sizeof(int));
    for (int p = 0; p < np; p++)
        for (int k = 0; k < t->partitions[p].replica_cnt; k++)
            for (int b = 0; b < md->broker_cnt; b++)
                load[b] += md->brokers[b].id == t->partitions[p].replicas[k];
    int changes = 0;
    for (int p = 0; p < np && rc == CLI_EXIT_FAIL; p++) {
        const struct rd_kafka_metadata_partition *mp = &t->partitions[p];
        int32_t *row = &rows[(size_t)p * (size_t)rf];
        int n = 0;
        if (mp->replica_cnt > rf) {
            cli_error(c, "partition %d has %d replicas: lowering the replication factor is not "
                      "supported yet", mp->id, mp->replica_cnt);
            goto out_free;
        }
        for (int k = 0; k < mp->replica_cnt; k++)
            row[n++] = mp->replicas[k];
        changes += n < rf;
        while (n < rf) { /* the broker with the fewest replicas of the topic, then the lowest id */
            int best = -1;
            for (int b = 0; b < md->broker_cnt; b++) {
                if (has(row, n, md->brokers[b].id))
                    continue;
                if (best < 0 || load[b] < load[best] ||
                    (load[b] == load[best] && md->brokers[b].id < md->brokers[best].id))
                    best = b;
            }
            row[n++] = md->brokers[best].id;
            load[best]++;
        }
    }
    if (changes == 0) {
        printf("topic %s already has replication factor %d\n", topic, rf);
        rc = CLI_EXIT_OK;
        goto out_free;
    }
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    kraw_w32(&body, c->timeout_ms);
    kraw_warray(&body, 1);
    kraw_wcstr(&body, topic);
    kraw_warray(&body, np);
    for (int p = 0; p < np; p++) {
        kraw_w32(&body, t->partitions[p].id);
        kraw_warray(&body, rf);
        for (int k = 0; k < rf; k++)
            kraw_w32(&body, rows[(size_t)p * (size_t)rf + (size_t)k]);
        kraw_wuvar(&body, 0);
    }
    kraw_wuvar(&body, 0);
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
            int32_t n = kraw_rarray(&r);
            for (int32_t j = 0; j < n && !r.bad; j++) {
                int32_t pi = kraw_r32(&r);
                int16_t pe = kraw_r16(&r);
                kraw_rcstr(&r, msg, sizeof(msg));
                kraw_rtags(&r);
                if (pe != 0) {
                    cli_error(c, "partition %d: %s (error %d)", pi, msg, pe);
                    failed++;
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
    if (failed != 0)
        goto out_free;
    printf("reassigning %d partition(s) of %s to replication factor %d\n", changes, topic, rf);
    fflush(stdout);
    int64_t end = time_mono_ms() + c->timeout_ms;
    for (;;) {
        int m = moving(c, topic, err, sizeof(err));
        if (m < 0) {
            cli_error(c, "%s", err);
            break;
        }
        if (m == 0) {
            printf("topic %s now has replication factor %d\n", topic, rf);
            rc = CLI_EXIT_OK;
            break;
        }
        if (cli_interrupted) {
            rc = CLI_EXIT_INTERRUPTED;
            break;
        }
        if (time_mono_ms() >= end) {
            cli_error(c, "%d partition(s) of %s still catching up after %d ms (the move goes on; "
                      "see 'streampulse cluster status')", m, topic, c->timeout_ms);
            break;
        }
        usleep(POLL_MS * 1000);
    }
out_free:
    mem_free(rows);
    mem_free(load);
out:
    rd_kafka_metadata_destroy(md);
    return rc;
}
