/* streampulse: the broker (`serve`) and the client sub-commands, in one binary. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "server/crash.h"
#include "server/huge_pages.h"
#include "server/server.h"
#include "server/version.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: streampulse <command> [options]\n"
                 "\n"
                 "  serve      run a broker (streampulse serve --help)\n"
                 "  topic      create, list, describe, alter, delete topics\n"
                 "  produce    write stdin lines as records\n"
                 "  consume    print records\n"
                 "  group      list, describe, delete consumer groups; reset their offsets\n"
                 "  worker     run a command per record: a task queue with retries and dead letters\n"
                 "  dlq        replay dead letters (dlq replay)\n"
                 "  bench      produce/consume throughput and latency\n"
                 "  version    print the version\n"
                 "\n"
                 "Each command takes --help.\n");
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "serve"))
        huge_pages_exec(argv);
    crash_handler_install();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "serve"))
        return server_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("streampulse %s\n", STREAMPULSE_VERSION);
        return 0;
    }
    if ((!strcmp(cmd, "help") || !strcmp(cmd, "-h") || !strcmp(cmd, "--help")) && argc == 2) {
        usage(stdout);
        return 0;
    }
    return cli_run(argc - 1, argv + 1);
}
