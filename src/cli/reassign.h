/* Moving replicas from the CLI (cli/reassign.c): `topic alter --replication-factor` (called by
 * cli/topic.c) and `cluster decommission` (called by cli/cluster.c). */
#ifndef SP_CLI_REASSIGN_H
#define SP_CLI_REASSIGN_H

#include <librdkafka/rdkafka.h>

#include "cli/common.h"

/* Moves every partition of topic to rf replicas (AlterPartitionReassignments: more on the
 * brokers with the fewest replicas of the topic; fewer: the first rf stay) and waits until the
 * moves are done, for at most c->timeout_ms. Returns a CLI_EXIT_* code. */
int topic_alter_replication(struct cli_common *c, const char *topic, int rf, rd_kafka_t *rk);

/* `streampulse cluster decommission NODE` (argv[0] is "decommission"). */
int cli_cluster_decommission(int argc, char **argv);

#endif
