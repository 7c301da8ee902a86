/* Records decoded through the schema registry, for `consume --decode` and `worker --decode`:
 * a key or value framed the registry's way (magic byte 0, a 4-byte schema id, the encoded
 * data) becomes JSON through its schema (registry/schema.h: Avro's JSON encoding, Protobuf's
 * JSON mapping, a JSON Schema payload as is). Schemas are fetched from the registry's REST API
 * at the first record that names them (GET /schemas/ids/N, references through GET
 * /subjects/S/versions/V) and kept for the process's life. Internal to src/cli/. */
#ifndef SP_CLI_SCHEMA_DECODE_H
#define SP_CLI_SCHEMA_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

#define REGISTRY_DEFAULT_ADDR "127.0.0.1:8081"

struct cli_common;
struct schema_decoder;

/* addr: the registry's HOST:PORT (NULL: $STREAMPULSE_REGISTRY, else REGISTRY_DEFAULT_ADDR). */
struct schema_decoder *schema_decoder_new(const struct cli_common *c, const char *addr);
void schema_decoder_free(struct schema_decoder *d);

/* Decodes p[0, n) into out (JSON). Returns 1 when p is not framed (too short, another magic
 * byte: nothing written), 0 when decoded, -1 with the reason in err (the schema could not be
 * fetched or parsed, or the data does not decode with it). */
int schema_decoder_decode(struct schema_decoder *d, const void *p, size_t n, struct strbuf *out,
                          char *err, size_t errcap);

#endif
