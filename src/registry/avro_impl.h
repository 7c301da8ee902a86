/* Internals shared by the Avro files (avro_schema.c, avro_canonical.c, avro_compat.c); not
 * for other callers, whose contract is registry/avro.h. */
#ifndef SP_REGISTRY_AVRO_IMPL_H
#define SP_REGISTRY_AVRO_IMPL_H

#include "base/arena.h"
#include "registry/avro.h"

struct avro_schema {
    struct json_doc doc; /* the text's JSON tree (properties and defaults point into it) */
    struct arena arena;  /* the model and its strings */
    const struct avro_node *root;
    const struct avro_node **named; /* named types defined in the text, in order */
    size_t n_named;
    const struct avro_schema **refs; /* the references it was parsed with */
    size_t n_refs;
    struct strmap **indexes; /* the nodes' lookup maps (mem_alloc'd, freed with it) */
    size_t n_indexes;
    size_t cap_indexes;
};

/* v as Jackson writes a JsonNode (compact; see avro_canonical.c for the spelling). */
void avro_json_write(struct strbuf *out, const struct json_value *v);
/* s[0, n) as a Jackson string literal, quotes included. */
void avro_json_string(struct strbuf *out, const char *s, size_t n);

#endif
