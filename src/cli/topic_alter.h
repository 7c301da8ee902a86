/* topic alter --replication-factor (cli/reassign.c), called by cli/topic.c. */
#ifndef SP_CLI_TOPIC_ALTER_H
#define SP_CLI_TOPIC_ALTER_H

#include <librdkafka/rdkafka.h>

#include "cli/common.h"

/* Grows every partition of topic to rf replicas (AlterPartitionReassignments) and waits until
 * the moves are done, for at most c->timeout_ms. Returns a CLI_EXIT_* code. */
int topic_alter_replication(struct cli_common *c, const char *topic, int rf, rd_kafka_t *rk);

#endif
