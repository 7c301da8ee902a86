/* Who may use the admin listener over HTTPS (server/admin.c): a SCRAM user with its password
 * (HTTP Basic), whose principal User:NAME is in super.users; and the schema registry's listener
 * with schema.registry.authentication.method=BASIC (server/registry_http.c): any SCRAM user.
 *
 * The broker's side, so that server/ never reads the metadata image: the password is checked
 * against the image's SCRAM credentials as SASL PLAIN checks it (broker/sasl_mech.h: PBKDF2 with
 * the credential's salt and iterations, StoredKey compared in constant time, either mechanism;
 * an unknown user costs the same as a known one), then the principal against super.users
 * (security/acl.h). Reactor thread only. */
#ifndef SP_BROKER_ADMIN_AUTH_H
#define SP_BROKER_ADMIN_AUTH_H

#include <stddef.h>
#include <stdint.h>

struct broker;

/* Checks user[0, user_len):password[0, password_len) (untrusted bytes) from the client at peer
 * (its address without a port: the failure count's key and the log's). Returns
 *   0        a super user with the right password;
 *   -EACCES  an unknown user, a wrong password or an invalid name: *delay_ms is how long to
 *            hold the answer (connection.failed.authentication.delay.ms times the failures
 *            from peer in the last minute, the count SASL failures share: broker/sasl.h);
 *   -EPERM   the right password of a user who is not in super.users (*delay_ms 0).
 * The password is checked before super.users, so a 403 tells nothing to who lacks the
 * password. Failures are counted (broker_admin_auth_counts) and logged
 * (admin_authentication_failed, at most a line a second, with the count of lines left out).
 * PBKDF2 runs here, on the reactor thread: a few milliseconds per call. */
int broker_admin_authenticate(struct broker *b, const char *peer, const char *user, size_t user_len,
                              const char *password, size_t password_len, int64_t *delay_ms);

/* The same check for the schema registry's listener (schema.registry.authentication.method
 * BASIC), where every SCRAM user may come in: 0 or -EACCES (with *delay_ms), never -EPERM.
 * Counted and logged with the admin listener's. */
int broker_registry_authenticate(struct broker *b, const char *peer, const char *user,
                                 size_t user_len, const char *password, size_t password_len,
                                 int64_t *delay_ms);

/* Calls of broker_admin_authenticate by result, since the process started. */
struct broker_admin_auth_counts {
    uint64_t ok;
    uint64_t failed;    /* -EACCES */
    uint64_t forbidden; /* -EPERM */
};
void broker_admin_auth_counts(struct broker_admin_auth_counts *out);

#endif
