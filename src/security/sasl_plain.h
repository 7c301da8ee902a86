/* SASL PLAIN (RFC 4616): the one client message "authzid NUL authcid NUL passwd", and the check
 * of its password against the SCRAM credential store (security/scram.h). StreamPulse keeps only
 * SCRAM credentials; a PLAIN password is checked by deriving that credential's StoredKey from
 * it (PBKDF2 with the credential's salt and count) and comparing in constant time.
 *
 * PLAIN sends the password itself: listeners should offer it over TLS only (SASL_SSL).
 *
 * Error codes: -ERR_INVALID (malformed), -ERR_TOO_LARGE (over a limit below), -EACCES (an
 * authzid that is not the user; a wrong password; a stand-in credential), -EIO (OpenSSL). The
 * broker answers each with SASL_AUTHENTICATION_FAILED; the reason strings are for its log. */
#ifndef SP_SECURITY_SASL_PLAIN_H
#define SP_SECURITY_SASL_PLAIN_H

#include <stddef.h>

#include "security/scram.h"

#define SASL_PLAIN_ID_MAX 255 /* bytes of authzid and of authcid (RFC 4616's minimum) */
#define SASL_PLAIN_MSG_MAX (SASL_PLAIN_ID_MAX + 1 + SASL_PLAIN_ID_MAX + 1 + SCRAM_PASSWORD_MAX)

/* The parts of a PLAIN message: spans into the message, which must outlive them. None is
 * NUL-terminated; password is the only copy there is (the caller wipes the message). */
struct sasl_plain {
    const char *authzid; /* empty (authzid_len 0) or the user */
    size_t authzid_len;
    const char *user; /* authcid: scram_user_valid */
    size_t user_len;
    const char *password; /* 1..SCRAM_PASSWORD_MAX bytes, no NUL */
    size_t password_len;
};

/* Parses msg[0, len) (untrusted): at most SASL_PLAIN_MSG_MAX bytes, exactly two NULs; authzid
 * empty or byte-equal to authcid; authcid a valid user name (scram_user_valid); password
 * 1..SCRAM_PASSWORD_MAX bytes. Returns 0 with *out filled, or -ERR_INVALID, -ERR_TOO_LARGE or
 * -EACCES with *why (if why is not NULL) a static reason for the log. */
int sasl_plain_parse(const char *msg, size_t len, struct sasl_plain *out, const char **why);

/* Whether password[0, len) is the one cred was made from: 0, -EACCES (wrong, or cred is a
 * stand-in from scram_credential_fake, checked with the same work so that the time taken does
 * not tell an unknown user), -ERR_INVALID (a password length outside 1..SCRAM_PASSWORD_MAX, or
 * a credential that is not valid) or -EIO. Costs cred->iterations HMACs: keep it off the event
 * loop. Everything derived from the password is wiped before it returns. */
int sasl_plain_verify(const struct scram_credential *cred, const char *password, size_t len);

#endif
