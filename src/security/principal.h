/* ssl.principal.mapping.rules: from a client certificate's subject to a principal name, as
 * Kafka's SslPrincipalMapper does it.
 *
 * The value is a list of rules separated by commas (spaces around them ignored; empty entries
 * skipped), tried in order; the first that applies gives the name:
 *   DEFAULT                          the subject itself ("CN=alice,OU=eng,O=acme,C=US")
 *   RULE:pattern/replacement/[L|U]   applies when pattern (a Java regex, security/regex.h)
 *                                    matches the whole subject; the name is then the subject
 *                                    with every match of pattern replaced by replacement
 *                                    (Java's String.replaceAll: $1.. are groups, \x quotes x),
 *                                    lower-cased with /L or upper-cased with /U (ASCII).
 * In pattern and replacement a backslash quotes the next byte, so `\/` is a slash that does not
 * end the part (and reaches the regex or the replacement as `\/`). As in Kafka, a reference $N to
 * a group the pattern does not have loses trailing digits while it is >= 10 and still too big,
 * and is plain text if even its first digit names no group. Unlike Kafka, a replacement that
 * names a group when the pattern has none, or a `$` followed by no digit, is refused when the
 * rules are parsed (Kafka would fail each connection instead).
 *
 * The subject comes from a certificate the trust store verified; the patterns come from the
 * operator. Both are bounded: a subject longer than PRINCIPAL_SUBJECT_MAX does not map, and
 * patterns run under the regex step limit. */
#ifndef SP_SECURITY_PRINCIPAL_H
#define SP_SECURITY_PRINCIPAL_H

#include <stddef.h>

#define PRINCIPAL_RULES_MAX 64       /* rules in one value */
#define PRINCIPAL_SUBJECT_MAX 4096   /* bytes of a subject that can be mapped */
#define PRINCIPAL_NAME_MAX 1024      /* bytes of a mapped name, NUL included */

struct principal_rules;

/* Parses the rules in text. Returns 0 with *out (release with principal_rules_free), or -1 with
 * a message in err that quotes the rule at fault. */
int principal_rules_parse(const char *text, struct principal_rules **out, char *err,
                          size_t errcap);
void principal_rules_free(struct principal_rules *r);

/* Maps subject[0, len) to a name in out (NUL-terminated; cap >= 1). Returns 0, -ERR_NOT_FOUND
 * when no rule applies (Kafka refuses the connection then), -ERR_TOO_LARGE when the subject
 * or the name is too long for the limits above or for cap, -ERR_LIMIT when a pattern gave up
 * (regex step limit). */
int principal_rules_map(const struct principal_rules *r, const char *subject, size_t len,
                        char *out, size_t cap);

#endif
