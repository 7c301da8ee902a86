/* Opening a data directory that a single-node release wrote: its topics go into the metadata
 * log and its partition logs become Raft logs, with no manual step and nothing lost (see
 * broker/legacy.c for the steps and why a crash at any of them is harmless). */
#ifndef SP_BROKER_LEGACY_H
#define SP_BROKER_LEGACY_H

#include <stdbool.h>
#include <stddef.h>

struct broker;

/* After the local topics are loaded, before the cluster starts: whether log.dirs is such a
 * directory (a standalone node, no metadata log yet, topics in the catalog), or one whose
 * upgrade was under way when the broker stopped. */
bool legacy_pending(const struct broker *b);
/* Before the cluster starts: marks the upgrade as under way (durably) and raises every local
 * partition's leader epochs to 1 (storage/plog.h plog_raise_epochs). Returns 0 or a negative
 * code with err set (the broker then refuses to start; nothing is lost). */
int legacy_prepare(struct broker *b, char *err, size_t errcap);
/* Once the node is live in its own cluster: creates every local topic the metadata image lacks
 * through the controller (partition count and configs as they are, this node the one replica),
 * waits for the answers (running the reactor, at most 30 s) and removes the marker. Returns 0
 * or a negative code with err set. Not from inside a reactor callback. */
int legacy_import(struct broker *b, char *err, size_t errcap);

#endif
