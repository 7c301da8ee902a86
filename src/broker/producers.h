/* Idempotent producers in the broker (DESIGN.md §8): InitProducerId, and each partition's
 * producer state (broker/producer_state.h) kept consistent with its log.
 *
 * Partition state lifecycle (partition_producers_*):
 *   open: load the newest valid snapshot at or below LEO (snapshots above LEO are deleted:
 *     they describe batches that are gone), then replay the batch headers after it. At a
 *     restart (the log's open listing at hand) the load waits for the state's first use: an
 *     idempotent batch to judge or appended, a roll, a truncation, the accessors below;
 *   append: producers_before_append judges a client's batch; every batch the log takes (a
 *     client's, a Raft follower's copy, the broker's own) is recorded through the plog's
 *     appended hook, so every replica's table (and its snapshots) describe its whole log;
 *   roll (plog hook): write <offset>.snapshot for the new segment's base, keep the newest
 *     SNAPSHOTS_KEPT;
 *   suffix truncation (plog hook): delete snapshots above the new LEO, rebuild as at open;
 *   reset (plog hook, a Raft install emptied the log): delete every snapshot, start empty;
 *   prefix truncation and retention: nothing (as in Kafka, a producer's state outlives its
 *     batches until it expires);
 *   close: a snapshot at LEO, so that a clean restart scans nothing (none for a state never
 *     loaded: the one it would load from is still there, and no idempotent batch followed);
 * If a rebuild cannot read the log, idempotent appends are refused (KAFKA_STORAGE_ERROR,
 * retriable) until a rebuild succeeds (retried on the next idempotent append); other appends
 * go on.
 */
#ifndef SP_BROKER_PRODUCERS_H
#define SP_BROKER_PRODUCERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct broker;
struct kbatch_header;
struct partition;
struct produce_resp_partition;
struct pstate;

#define SNAPSHOTS_KEPT 2

/* Broker level: the producer-id allocator (local block source in log.dirs, with a floor one
 * past the highest producer id found in the partitions' loaded state, a restart's pending ones
 * not read for it: call after the topics are loaded) and the periodic expiry sweep. Returns 0 or a negative code with err set. */
int broker_producers_start(struct broker *b, char *err, size_t errcap);
/* Asks for a producer-id block now if none is at hand (pid_allocator_prefetch): called once the
 * broker is registered with the controller. */
void broker_producers_prefetch(struct broker *b);
/* Frees what broker_producers_start made; safe if it never ran or ran already. */
void broker_producers_stop(struct broker *b);

/* Opens p's producer state (p->log must be open): recovery as described above; installs the
 * plog hooks. Never fails: a log that cannot be read leaves the state "broken" (see above). */
void partition_producers_open(struct broker *b, struct partition *p);
/* Writes the closing snapshot (unless destroy, or the log is fenced) and frees the state. Call
 * before the log is closed. sync false leaves the snapshot unsynced, for a stop that syncs the
 * filesystem next (plog_close_many; a snapshot lost or torn is rebuilt from the log). */
void partition_producers_close(struct partition *p, bool destroy, bool sync);

/* Judges a client's batch (header h) before it is appended at now_ms. Batches without a
 * producer id pass. Returns KERR_NONE to append; KERR_NONE with *duplicate set when the batch
 * is one of the producer's last batches again (out has the original's base offset, log append
 * time and the log start offset; nothing is to be appended); or the error for the response:
 * INVALID_RECORD (negative epoch or sequence), OUT_OF_ORDER_SEQUENCE_NUMBER,
 * INVALID_PRODUCER_EPOCH, KAFKA_STORAGE_ERROR (state broken). */
int16_t producers_before_append(struct partition *p, const struct kbatch_header *h, int64_t now_ms,
                                struct produce_resp_partition *out, bool *duplicate);

/* The partition's table (tests, metrics): loaded first if the restart left it for later. */
struct pstate *partition_producers_table(struct partition *p);
/* Whether the restart left the state for its first use (tests). */
bool partition_producers_pending(const struct partition *p);

/* What the last rebuild did, and the state now (tests, metrics); loads a pending state first. */
struct producers_stats {
    int64_t snapshot_offset;  /* the snapshot the last rebuild loaded, -1 if none */
    int64_t scanned_from;     /* where its header scan began */
    int64_t batches_replayed; /* tracked batches it replayed */
    int invalid_snapshots;    /* snapshots it rejected (and deleted) */
    int snapshots;            /* snapshot files now */
    bool broken;
};
void partition_producers_stats(struct partition *p, struct producers_stats *out);

#endif
