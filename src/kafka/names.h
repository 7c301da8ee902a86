/* Kafka's rule for topic names: 1 to 249 characters of ASCII letters, digits, '.', '_' and
 * '-', and not "." or "..". (A name may start with '.': ".foo" is a legal topic.) */
#ifndef SP_KAFKA_NAMES_H
#define SP_KAFKA_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define KTOPIC_NAME_MAX 249

/* NULL if name[0..len) is a legal topic name, else why not (a constant sentence, e.g. for an
 * error message). */
const char *ktopic_name_problem(const char *name, size_t len);

static inline bool ktopic_name_legal(const char *name, size_t len)
{
    return ktopic_name_problem(name, len) == NULL;
}

#endif
