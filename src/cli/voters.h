/* The metadata quorum's voters from the CLI (cli/voters.c): `streampulse cluster voters
 * add|remove NODE` (argv[0] is "voters"), and the same change for other commands. */
#ifndef SP_CLI_VOTERS_H
#define SP_CLI_VOTERS_H

int cli_cluster_voters(int argc, char **argv);

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/common.h"

/* Adds node to the metadata quorum's voters or removes it, asking again while the change runs
 * (for at most c->timeout_ms). Returns 1 once done, 0 if it was so before (add: a voter already;
 * remove: no voter), -1 with the reason in err. */
int cli_voters_change(const struct cli_common *c, bool add, int32_t node, char *err, size_t errcap);

#endif
