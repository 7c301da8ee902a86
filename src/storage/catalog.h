/* The data directory (log.dirs): its lock, the clean-shutdown marker, and the persisted list of
 * topics with their partition counts and config overrides.
 *
 * Layout:
 *   <dir>/.lock                 flock()ed while a broker owns the directory
 *   <dir>/.clean_shutdown       written by catalog_close(clean=true), consumed by catalog_open
 *   <dir>/topics/<name>.topic   one file per topic: "partitions=N", "id=<32 hex>" and
 *                               "config.<key>=<value>" lines; written to a temp file, fsynced,
 *                               renamed, directory fsynced (never half-written)
 *   <dir>/<name>-<partition>/   each partition's log (storage/plog.h)
 *
 * The controller's metadata log is the source of truth for which topics exist (broker/cluster.c
 * brings topics/ to its image); topics/ lets a broker open its local logs before the quorum
 * has replayed that log. */
#ifndef SP_STORAGE_CATALOG_H
#define SP_STORAGE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct catalog;

struct catalog_kv {
    char *key;   /* owned by whoever owns the catalog_topic */
    char *value;
};

struct catalog_topic {
    char *name;
    int32_t partitions;
    uint8_t id[16]; /* topic id (random at creation) */
    struct catalog_kv *configs;
    int32_t n_configs;
};

/* Opens the data directory, creating it if missing, and takes its lock.
 * Returns -EBUSY if another process holds the lock (the message names the directory),
 * -errno otherwise. *was_clean tells whether the previous run shut down cleanly, or the
 * directory is new (the marker is removed at open, so a crash from here on counts as
 * unclean). */
int catalog_open(const char *dir, struct catalog **out, bool *was_clean);

/* Writes the clean-shutdown marker if clean (fsynced), releases the lock, frees. */
void catalog_close(struct catalog *cat, bool clean);

const char *catalog_dir(const struct catalog *cat);

/* Loads every topic file. On success *topics is a mem_alloc'd array of *n entries; release with
 * catalog_topics_free(). A file that cannot be parsed is logged (event=topic_file_invalid) and
 * skipped, never fatal; temp files left by a crash are removed. */
int catalog_load(struct catalog *cat, struct catalog_topic **topics, int32_t *n);
void catalog_topics_free(struct catalog_topic *topics, int32_t n);

/* Atomically writes (creates or replaces) a topic's file. */
int catalog_save_topic(struct catalog *cat, const struct catalog_topic *t);

/* Removes a topic's file, then its partition directories <name>-<i> for i < partitions
 * (renamed to <name>-<i>.deleted first, so a crash mid-delete leaves nothing that loads;
 * catalog_open removes leftover *.deleted directories). */
int catalog_delete_topic(struct catalog *cat, const char *name, int32_t partitions);

/* Path of a partition's log directory into buf. */
void catalog_partition_dir(const struct catalog *cat, const char *topic, int32_t partition,
                           char *buf, size_t cap);

#endif
