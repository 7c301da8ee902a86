/* SASL PLAIN (sasl_plain.h): the message parser and the password check against a SCRAM
 * credential.
 *
 * Stateless. Invariants:
 *  1. sasl_plain_parse reads only msg[0, len) and, on success, gives spans that partition it
 *     around its two NULs; on failure *out is all NULL and zero.
 *  2. sasl_plain_verify keeps nothing derived from the password: the credential it derives
 *     for the comparison is wiped on every path. */
#include "security/sasl_plain.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

#include "base/errors.h"

static int refuse(struct sasl_plain *out, const char **why, int rc, const char *reason)
{
    memset(out, 0, sizeof(*out));
    if (why)
        *why = reason;
    return rc;
}

int sasl_plain_parse(const char *msg, size_t len, struct sasl_plain *out, const char **why)
{
    memset(out, 0, sizeof(*out));
    if (len == 0)
        return refuse(out, why, -ERR_INVALID, "empty message");
    if (len > SASL_PLAIN_MSG_MAX)
        return refuse(out, why, -ERR_TOO_LARGE, "message too long");
    const char *nul1 = memchr(msg, '\0', len);
    if (!nul1)
        return refuse(out, why, -ERR_INVALID, "no NUL after authzid");
    size_t zlen = (size_t)(nul1 - msg);
    const char *user = nul1 + 1;
    const char *nul2 = memchr(user, '\0', len - zlen - 1);
    if (!nul2)
        return refuse(out, why, -ERR_INVALID, "no NUL after authcid");
    size_t ulen = (size_t)(nul2 - user);
    const char *password = nul2 + 1;
    size_t plen = len - zlen - 1 - ulen - 1;
    if (memchr(password, '\0', plen))
        return refuse(out, why, -ERR_INVALID, "NUL in password");
    if (zlen > SASL_PLAIN_ID_MAX || ulen > SASL_PLAIN_ID_MAX || plen > SCRAM_PASSWORD_MAX)
        return refuse(out, why, -ERR_TOO_LARGE, "authzid, authcid or password too long");
    if (!scram_user_valid(user, ulen))
        return refuse(out, why, -ERR_INVALID, "authcid empty or not a valid user name");
    if (plen == 0)
        return refuse(out, why, -ERR_INVALID, "empty password");
    if (zlen != 0 && (zlen != ulen || memcmp(msg, user, ulen) != 0))
        return refuse(out, why, -EACCES, "authzid is not the user name");
    *out = (struct sasl_plain){msg, zlen, user, ulen, password, plen};
    return 0;
}

int sasl_plain_verify(const struct scram_credential *cred, const char *password, size_t len)
{
    if (len < 1 || len > SCRAM_PASSWORD_MAX)
        return -ERR_INVALID;
    struct scram_credential derived;
    int rc = scram_credential_from_password(&derived, cred->mech, password, len, cred->salt,
                                            cred->salt_len, cred->iterations);
    size_t n = scram_key_len(cred->mech);
    bool match = rc == 0 && CRYPTO_memcmp(derived.stored_key, cred->stored_key, n) == 0;
    OPENSSL_cleanse(&derived, sizeof(derived));
    if (rc != 0)
        return rc;
    /* A stand-in fails after the same derivation a real credential costs. */
    return match && !cred->fake ? 0 : -EACCES;
}
