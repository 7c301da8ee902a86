#include <stdio.h>

#include "cli/cli.h"

int cli_run(int argc, char **argv)
{
    fprintf(stderr, "streampulse: unknown command '%s'\n", argv[0]);
    return 2;
}
