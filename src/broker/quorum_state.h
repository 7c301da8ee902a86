/* quorum.state: which metadata quorum a node belongs to, kept in its data directory (log.dirs)
 * so that a restart finds its cluster without asking controller.quorum.bootstrap.servers, which
 * may be gone by then (a decommissioned first node) or never set (a first node that has since
 * grown and been removed from the voters).
 *
 * Written by broker/cluster.c when the node joins a cluster by bootstrap, when it becomes a
 * voter or an observer by a voter change, and when the quorum's voters to be change. Read at
 * start (cluster_start). Format: text lines `key=value`, `#` comments:
 *   cluster.id=<id>                  the transport's and Metadata's cluster id (1..31 bytes)
 *   voters=<id>@<host>:<port>,...    1..BROKER_VOTERS_MAX voters with their cluster addresses
 *                                    ([v6] hosts in brackets)
 * The file is replaced atomically (storage/io.h); a file that does not parse is an error the
 * node refuses to start with (it never guesses a cluster). */
#ifndef SP_BROKER_QUORUM_STATE_H
#define SP_BROKER_QUORUM_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "broker/config.h"

#define QUORUM_STATE_FILE "quorum.state"
#define QUORUM_STATE_ID_MAX 31

struct quorum_state {
    char cluster_id[QUORUM_STATE_ID_MAX + 1];
    struct broker_voter voters[BROKER_VOTERS_MAX];
    size_t n_voters;
};

/* Reads dir/quorum.state. Returns 0, -ENOENT (no file: the node has none yet) or -ERR_CORRUPT
 * with why in err. */
int quorum_state_read(const char *dir, struct quorum_state *out, char *err, size_t errcap);
/* Replaces dir/quorum.state durably. st must hold an id and 1..BROKER_VOTERS_MAX voters.
 * Returns 0 or -errno. */
int quorum_state_write(const char *dir, const struct quorum_state *st);
/* Parses one "host:port" or "[v6]:port" into host (cap bytes) and port; false if it is none. */
bool quorum_split_addr(const char *addr, char *host, size_t cap, int *port);

#endif
