#include "security/protocol.h"

#include <string.h>

static const char *const names[] = {
    [SECURITY_PLAINTEXT] = "PLAINTEXT",
    [SECURITY_SSL] = "SSL",
    [SECURITY_SASL_PLAINTEXT] = "SASL_PLAINTEXT",
    [SECURITY_SASL_SSL] = "SASL_SSL",
};

int security_protocol_parse(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
            return (int)i;
    return -1;
}

const char *security_protocol_name(enum security_protocol p)
{
    return (unsigned)p < sizeof(names) / sizeof(names[0]) ? names[p] : "UNKNOWN";
}

bool security_protocol_tls(enum security_protocol p)
{
    return p == SECURITY_SSL || p == SECURITY_SASL_SSL;
}

bool security_protocol_sasl(enum security_protocol p)
{
    return p == SECURITY_SASL_PLAINTEXT || p == SECURITY_SASL_SSL;
}
