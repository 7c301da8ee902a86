/* Output of consumed records: a kcat-like format string, or one JSON object per record.
 *
 * Format string (--format), no newline is added (end the format with \n):
 *   %k key   %v value (%s too, as in kcat)   %p partition   %o offset
 *   %t timestamp (ms since the epoch, -1 if none)   %T topic
 *   %h headers as k=v,k=v   %K key length   %S value length (-1 when null)   %% a '%'
 *   escapes: \n \t \r \\ \0 and \xNN (two hex digits)
 *   A null key or value prints as nothing.
 *
 * JSON (--json), one object per line, fields in this order:
 *   {"topic":str,"partition":int,"offset":int,"timestamp":int|null,"key":str|null,
 *    "value":str|null,"headers":[{"key":str,"value":str|null},...]}
 * Strings are escaped per RFC 8259 (\" \\ \b \f \n \r \t, other control bytes as \u00XX).
 * Well-formed UTF-8 passes through unchanged; each byte that is not part of a well-formed UTF-8
 * sequence is written as \u00XX, i.e. read as Latin-1. So text (UTF-8 or Latin-1) stays readable,
 * but binary payloads are not recoverable byte for byte from the JSON: a lone byte 0xE9 and the
 * character U+00E9 both come out as "\u00e9".
 */
#ifndef SP_CLI_FORMAT_H
#define SP_CLI_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include <librdkafka/rdkafka.h>

struct fmt;

/* Compiles spec. Returns 0 and *out (release with fmt_free), or -1 with the reason in err. */
int fmt_compile(const char *spec, struct fmt **out, char *err, size_t err_cap);
void fmt_free(struct fmt *f);

/* Bytes written in place of a record's key or value (a record decoded through its schema). */
struct fmt_bytes {
    const void *p;
    size_t len;
};

/* Writes one record through a compiled format string; key and value, when not NULL, replace
 * the record's own (%k, %v, %K, %S). m must be librdkafka's own message (its headers and
 * timestamp are looked up through it), never a copy. */
void fmt_write(FILE *out, const struct fmt *f, const rd_kafka_message_t *m,
               const struct fmt_bytes *key, const struct fmt_bytes *value);

/* Writes one record as a JSON object followed by '\n'. key_json / value_json, when not NULL,
 * are JSON texts written as the key's / value's member instead of the bytes as a string (a
 * record decoded through its schema, cli/schema_decode.h). */
void fmt_write_json(FILE *out, const rd_kafka_message_t *m, const char *key_json,
                    const char *value_json);

/* Writes p[0..len) as a quoted JSON string, escaped as described above. */
void fmt_json_string(FILE *out, const void *p, size_t len);

#endif
