/* streampulse: the broker (serve) and the client sub-commands, in one binary. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int main(int argc, char **argv)
{
    /* cli branch stand-in until the lead reconciles main.c: everything but serve goes to the CLI. */
    if (argc >= 2 && strcmp(argv[1], "serve") != 0)
        return cli_run(argc - 1, argv + 1);
    fprintf(stderr, "streampulse: serve: not yet\n");
    return 2;
}
