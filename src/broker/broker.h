/* The broker: Kafka request dispatch on top of the topic registry and the partition logs.
 *
 * One broker runs on one reactor thread and owns all its state (DESIGN.md §2). server/ creates
 * it after loading the configuration and stops it on SIGTERM/SIGINT. */
#ifndef SP_BROKER_BROKER_H
#define SP_BROKER_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include "broker/config.h"
#include "net/reactor.h"

struct broker;

/* What startup found, for the startup line. */
struct broker_startup {
    int topics;
    int partitions;
    int64_t recovery_ms;      /* time spent opening (and recovering) logs */
    int segments_validated;   /* segments scanned batch by batch */
    int64_t truncated_bytes;  /* bytes cut from torn or corrupt tails */
    bool clean;               /* the previous run shut down cleanly */
    char cluster_id[32];
};

/* Opens the data directory (taking its lock), loads topics and recovers their logs, starts the
 * flusher and the listener on r. cfg is borrowed and must outlive the broker. Returns 0, or a
 * negative code with a message in err (e.g. the directory is locked by another broker, the
 * port is in use). */
int broker_start(struct reactor *r, const struct broker_config *cfg, struct broker **out,
                 struct broker_startup *info, char *err, size_t errcap);

/* Clean shutdown: stops accepting, closes connections, answers or drops parked requests,
 * closes every log (indexes and checkpoints written, data synced), writes the clean-shutdown
 * marker, releases the lock. */
void broker_stop(struct broker *b);

/* The port the listener is bound to (useful with port 0): the first of cfg->listeners, and
 * listener i. */
int broker_port(const struct broker *b);
int broker_listener_port(const struct broker *b, int i);

#endif
