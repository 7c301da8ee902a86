/* Compatibility levels of the schema registry, independent of the schema language.
 *
 * A level says which earlier versions of a subject a new schema is checked against, and in
 * which direction (Confluent's CompatibilityChecker):
 *
 *   NONE                  nothing is checked
 *   BACKWARD              the new schema can read data written with the latest version
 *   FORWARD               the latest version can read data written with the new schema
 *   FULL                  both
 *   *_TRANSITIVE          the same against every earlier version, not only the latest
 *
 * The language (Avro, Protobuf, JSON Schema) gives one directed check, "can reader read what
 * writer wrote", through a callback; compat_check() applies the level with it. Reasons are
 * worded by the callback with the roles it is given ("new", "old"), as Confluent's verbose
 * messages are. Pure functions, no global state. */
#ifndef SP_REGISTRY_COMPAT_LEVEL_H
#define SP_REGISTRY_COMPAT_LEVEL_H

#include <stdbool.h>
#include <stddef.h>

enum compat_level {
    COMPAT_NONE,
    COMPAT_BACKWARD,
    COMPAT_BACKWARD_TRANSITIVE,
    COMPAT_FORWARD,
    COMPAT_FORWARD_TRANSITIVE,
    COMPAT_FULL,
    COMPAT_FULL_TRANSITIVE,
};
#define COMPAT_LEVEL_COUNT 7

/* The level named s[0, len), case-insensitively as Confluent accepts ("backward" works).
 * Returns 0 and sets *out, or -ERR_INVALID for any other text. */
int compat_level_parse(const char *s, size_t len, enum compat_level *out);
/* The upper-case name ("FULL_TRANSITIVE"). Never NULL. */
const char *compat_level_name(enum compat_level level);
/* Checked against every earlier version rather than the latest only. */
bool compat_level_transitive(enum compat_level level);
/* The new schema must read the old ones (BACKWARD, FULL and their transitive forms). */
bool compat_level_backward(enum compat_level level);
/* The old schemas must read the new one (FORWARD, FULL and their transitive forms). */
bool compat_level_forward(enum compat_level level);

/* A list of reason strings; the list owns them. */
struct compat_reasons {
    char **items; /* n strings, each malloc'd */
    size_t n;
    size_t cap;
};

void compat_reasons_init(struct compat_reasons *r);
/* Appends a formatted reason. r may be NULL (nothing is kept): callers that only want the
 * verdict pass NULL down. */
void compat_reasons_add(struct compat_reasons *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void compat_reasons_free(struct compat_reasons *r);

/* One directed check: true when `reader` can read all data written with `writer`. When false,
 * it appends at least one reason to `reasons` (which may be NULL), naming the reader's and the
 * writer's roles as reader_role and writer_role ("new" / "old"). */
typedef bool (*compat_can_read_fn)(const void *reader, const void *writer, const char *reader_role,
                                   const char *writer_role, struct compat_reasons *reasons,
                                   void *data);

/* Judges new_schema against the subject's earlier versions earlier[0, n_earlier) (oldest
 * first) at `level`, with the language's can_read. As Confluent does: the latest only, or for
 * a transitive level every earlier version from the newest back, stopping at the first
 * version that fails; FULL runs both directions (the old-reads-new reasons first) and reports
 * both. Returns true when compatible (always for NONE or no earlier version). When false,
 * *failed_at (if not NULL) is the index in earlier[] of the version that failed, and reasons
 * (may be NULL) hold why; the caller adds the version and schema text if it wants them. */
bool compat_check(enum compat_level level, const void *new_schema, const void *const *earlier,
                  size_t n_earlier, compat_can_read_fn can_read, void *data,
                  struct compat_reasons *reasons, size_t *failed_at);

#endif
