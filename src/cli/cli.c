/* cli_run(): dispatch of the client sub-commands. */
#include "cli/cli.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <librdkafka/rdkafka.h>

#include "cli/common.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"topic", cli_topic, "create, list, describe, alter and delete topics"},
    {"produce", cli_produce, "write stdin lines to a topic as records"},
    {"consume", cli_consume, "print a topic's records (lines, a format string or JSON)"},
    {"bench", cli_bench, "produce/consume throughput and produce latency percentiles"},
    {"group", cli_group, "list, describe (members, committed offsets, lag), delete, reset-offsets"},
    {"worker", cli_worker, "run a command per record: retries with backoff, dead letters"},
    {"dlq", cli_dlq, "replay dead letters to the topic they came from"},
    {"cluster", cli_cluster, "cluster status, voters add|remove, decommission"},
    {"user", cli_user, "create, list and delete SCRAM users (SASL PLAIN and SCRAM)"},
    {"acl", cli_acl, "add, list and remove ACLs (as kafka-acls does)"},
    {"schema", cli_schema, "register, get, list, check and delete schemas; compatibility levels"},
    {"leader-election", cli_leader_election,
     "move leaderships to preferred replicas (as kafka-leader-election does)"},
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: streampulse COMMAND [OPTIONS]\n"
                 "\n"
                 "Commands:\n"
                 "  serve      run a broker (see: streampulse serve --help)\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n"
            "Run 'streampulse COMMAND --help' for a command's options.\n"
            "Client commands use librdkafka %s; exit codes: 0 ok, 1 failed, 2 bad usage,\n"
            "130 interrupted.\n",
            rd_kafka_version_str());
}

/* The command cleaned up after SIGINT/SIGTERM; now end the way an uncaught signal would, so
 * that a calling shell sees "killed by SIGINT" and stops its script too (it ignores a SIGINT
 * that the child handled and turned into a plain exit status). */
static void die_by_signal(int sig)
{
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

int cli_run(int argc, char **argv)
{
    if (argc < 1 || !argv[0]) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[0];
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        for (size_t i = 0; argc > 1 && i < sizeof(commands) / sizeof(commands[0]); i++) {
            if (strcmp(argv[1], commands[i].name) == 0) {
                /* "streampulse help produce" is "streampulse produce --help" */
                char *sub[] = {argv[1], (char *)"--help", NULL};
                return commands[i].run(2, sub);
            }
        }
        usage(stdout);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(name, commands[i].name) == 0) {
            cli_signals_install();
            int rc = commands[i].run(argc, argv);
            if (rc == CLI_EXIT_INTERRUPTED && cli_signal)
                die_by_signal(cli_signal);
            return rc;
        }
    }
    fprintf(stderr, "streampulse: unknown command '%s'\n\n", name);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
