/* Kafka's security protocols, the value side of listener.security.protocol.map. */
#ifndef SP_SECURITY_PROTOCOL_H
#define SP_SECURITY_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>

enum security_protocol {
    SECURITY_PLAINTEXT = 0,
    SECURITY_SSL,
    SECURITY_SASL_PLAINTEXT,
    SECURITY_SASL_SSL,
};

/* "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL" (exact, upper case as Kafka spells them).
 * Returns the protocol or -1. */
int security_protocol_parse(const char *s, size_t len);
const char *security_protocol_name(enum security_protocol p);
/* Whether connections of p are TLS connections (SSL, SASL_SSL). */
bool security_protocol_tls(enum security_protocol p);
/* Whether p authenticates with SASL (SASL_PLAINTEXT, SASL_SSL). */
bool security_protocol_sasl(enum security_protocol p);

#endif
