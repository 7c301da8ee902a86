/* `streampulse cluster voters add|remove NODE`: AddRaftVoter / RemoveRaftVoter (KIP-853) sent
 * raw (cli/kraw.h: librdkafka has no call for them) to the first broker of -b that answers,
 * which hands them to the controller. The controller answers once the quorum's voters are
 * the ones asked for, or REQUEST_TIMED_OUT while the change still runs: the command then
 * asks again, until --timeout. Exit 0 once the change is done (an answer "a voter already" or
 * "not a voter" to such a repeated question is that), 1 with the broker's reason otherwise:
 * asked first, a node that is a voter already cannot be added, nor one that is none removed. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/strbuf.h"
#include "base/time.h"
#include "cli/common.h"
#include "cli/kraw.h"
#include "cli/voters.h"

#define KEY_ADD_RAFT_VOTER 80
#define KEY_REMOVE_RAFT_VOTER 81
#define ERR_REQUEST_TIMED_OUT 7
#define ERR_NOT_CONTROLLER 41
#define ERR_DUPLICATE_VOTER 126
#define ERR_VOTER_NOT_FOUND 127
#define RETRY_PAUSE_MS 200

static const char voters_help[] =
    "Usage: streampulse cluster voters add|remove NODE [OPTIONS]\n"
    "\n"
    "Adds a broker to the metadata quorum's voters, or removes one (Kafka's AddRaftVoter /\n"
    "RemoveRaftVoter, KIP-853). The broker to add must be running and registered (started with\n"
    "controller.quorum.bootstrap.servers); it copies the metadata log as a learner first, then\n"
    "becomes a voter. A removed voter goes on as a broker that observes the metadata log.\n"
    "Waits until the change is done.\n"
    "\n" CLI_COMMON_HELP;

/* One request; returns the error code, or -1 (transport, reason in err). */
static int call(const struct cli_common *c, bool add, int32_t node, int timeout_ms, char *msg,
                size_t msgcap, char *err, size_t errcap)
{
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    kraw_wcstr(&body, NULL); /* cluster id: not checked */
    if (add)
        kraw_w32(&body, timeout_ms);
    kraw_w32(&body, node);
    static const uint8_t dir_id[16] = {0}; /* directory id: not used by StreamPulse */
    strbuf_append(&body, dir_id, sizeof(dir_id));
    if (add)
        kraw_warray(&body, 0); /* listeners: the broker's registration has its address */
    kraw_wuvar(&body, 0);
    int rc = kraw_call(c->brokers, add ? KEY_ADD_RAFT_VOTER : KEY_REMOVE_RAFT_VOTER, 0, &body,
                       timeout_ms + 5000, &resp, err, errcap);
    if (rc == 0) {
        struct kraw_reader r = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
        (void)kraw_r32(&r); /* throttle */
        rc = kraw_r16(&r);
        if (!kraw_rcstr(&r, msg, msgcap))
            msg[0] = '\0';
        kraw_rtags(&r);
        if (r.bad) {
            snprintf(err, errcap, "malformed answer");
            rc = -1;
        }
    }
    strbuf_destroy(&body);
    strbuf_destroy(&resp);
    return rc;
}

/* Asks until the answer is final (not REQUEST_TIMED_OUT or NOT_CONTROLLER, nor a failed
 * connection), for at most c->timeout_ms. Returns the last error code, or -1 (err). */
static int voters_call(const struct cli_common *c, bool add, int32_t node, int *attempts, char *msg,
                       size_t msgcap, char *err, size_t errcap)
{
    int64_t deadline = time_mono_ms() + c->timeout_ms;
    int ec;
    *attempts = 0;
    for (;;) {
        (*attempts)++;
        int64_t left = deadline - time_mono_ms();
        ec = call(c, add, node, left > 1000 ? (int)left : 1000, msg, msgcap, err, errcap);
        bool retry = ec == ERR_REQUEST_TIMED_OUT || ec == ERR_NOT_CONTROLLER || ec < 0;
        if (!retry || cli_interrupted || time_mono_ms() + RETRY_PAUSE_MS >= deadline)
            return ec;
        struct timespec ts = {0, RETRY_PAUSE_MS * 1000000L}; /* the controller is moving */
        nanosleep(&ts, NULL);
    }
}

int cli_voters_change(const struct cli_common *c, bool add, int32_t node, char *err, size_t errcap)
{
    char msg[512] = "";
    int attempts;
    int ec = voters_call(c, add, node, &attempts, msg, sizeof(msg), err, errcap);
    if (ec == 0)
        return 1;
    if ((add && ec == ERR_DUPLICATE_VOTER) || (!add && ec == ERR_VOTER_NOT_FOUND))
        return attempts > 1 ? 1 : 0;
    if (ec > 0)
        snprintf(err, errcap, "%s (error %d)", msg[0] ? msg : "refused", ec);
    return -1;
}

int cli_cluster_voters(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c, "cluster voters");
    int rc;
    if (cli_common_parse(&c, argc, argv, voters_help, &rc) != 0)
        goto out;
    /* the operands (getopt moves them after the options): add|remove NODE */
    long long node;
    if (argc - optind != 2 || (strcmp(argv[optind], "add") && strcmp(argv[optind], "remove"))) {
        fprintf(stderr, "%s", voters_help);
        goto out;
    }
    bool add = strcmp(argv[optind], "add") == 0;
    if (cli_parse_int(&c, "NODE", argv[optind + 1], 0, INT32_MAX, &node) != 0)
        goto out;
    cli_signals_install();
    char msg[512] = "", err[512] = "";
    int attempts;
    int ec = voters_call(&c, add, (int32_t)node, &attempts, msg, sizeof(msg), err, sizeof(err));
    if (cli_interrupted) {
        rc = CLI_EXIT_INTERRUPTED;
    } else if (ec == 0) {
        printf("node %lld %s the metadata quorum's voters\n", node,
               add ? "added to" : "removed from");
        rc = CLI_EXIT_OK;
    } else if (ec < 0) {
        cli_error(&c, "%s", err);
        rc = CLI_EXIT_FAIL;
    } else if (attempts > 1 &&
               ((add && ec == ERR_DUPLICATE_VOTER) || (!add && ec == ERR_VOTER_NOT_FOUND))) {
        /* an earlier attempt timed out, and the change it asked for is done */
        printf("node %lld %s the metadata quorum's voters\n", node,
               add ? "added to" : "removed from");
        rc = CLI_EXIT_OK;
    } else {
        cli_error(&c, "%s node %lld: %s (error %d)", add ? "adding" : "removing", node,
                  msg[0] ? msg : "refused", ec);
        rc = CLI_EXIT_FAIL;
    }
out:
    cli_common_free(&c);
    return rc;
}
