/* cli_run(): dispatch of the client sub-commands. */
#include "cli/cli.h"

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
};

static void usage(FILE *out)
{
    fprintf(out, "Usage: streampulse COMMAND [OPTIONS]\n"
                 "\n"
                 "Commands:\n"
                 "  serve      run a broker (see: streampulse serve --help)\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n"
                 "Run 'streampulse COMMAND --help' for a command's options.\n"
                 "Client commands use librdkafka %s; exit codes: 0 ok, 1 failed, 2 bad usage,\n"
                 "130 interrupted.\n",
            rd_kafka_version_str());
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
            return commands[i].run(argc, argv);
        }
    }
    fprintf(stderr, "streampulse: unknown command '%s'\n\n", name);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
