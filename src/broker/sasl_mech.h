/* The SASL mechanisms a broker connection authenticates with (broker/sasl_mech.c): PLAIN and
 * SCRAM-SHA-256 / SCRAM-SHA-512, against the SCRAM credentials of the metadata image. Holds one
 * exchange's state; broker/sasl.c feeds it the client's tokens in order. */
#ifndef SP_BROKER_SASL_MECH_H
#define SP_BROKER_SASL_MECH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka/wire.h"
#include "security/scram.h"

struct ctl_image;

struct sasl_mech {
    bool scram_started;
    struct scram_server scram;
    char out[SCRAM_MSG_MAX + 1]; /* the last answer token */
};

/* Forgets the exchange (wiping its secrets); the struct may start a new one. */
void sasl_mech_reset(struct sasl_mech *m);
/* Takes the client's next token tok[0, len) for mechanism (a BROKER_SASL_* bit). *out gets the
 * answer token (valid until the next call; empty when there is none). Returns 1 when the
 * client authenticated (its user name in user, cap bytes, NUL-terminated), 0 when another
 * token is expected, -1 when the exchange failed (*why says why, for the log only: it may
 * name an unknown user). */
int sasl_mech_step(struct sasl_mech *m, unsigned mechanism, const struct ctl_image *img,
                   const uint8_t *tok, size_t len, struct kbytes *out, char *user, size_t cap,
                   const char **why);

/* Whether password[0, password_len) is that of user[0, user_len) (untrusted; a name
 * scram_user_valid refuses fails) under one of the SCRAM credentials img holds for the user:
 * SCRAM-SHA-512's, then SCRAM-SHA-256's (PBKDF2 with the credential's salt and count, then
 * StoredKey compared in constant time: security/sasl_plain.h). An unknown user is checked
 * against a stand-in credential, so that it costs the same. PLAIN and the admin listener's
 * Basic authentication check passwords this way. img NULL: no user is known. Returns 0, or
 * -EACCES with *why ("wrong password", "unknown user", ...: for the log only). PBKDF2 runs on
 * the caller's thread: a few milliseconds at 4096 iterations. */
int sasl_mech_check_password(const struct ctl_image *img, const char *user, size_t user_len,
                             const char *password, size_t password_len, const char **why);

#endif
