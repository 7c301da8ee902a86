/* The SCRAM users through the admin listener (server/admin.c routes GET and POST /v1/users and
 * DELETE /v1/users/NAME here): the broker's side, so that server/ never reads the metadata
 * image nor builds controller commands. The same store as DescribeUserScramCredentials and
 * AlterUserScramCredentials (broker/users.c: USER_SCRAM records in the metadata log), so a
 * cluster whose every Kafka listener asks for SASL gets its first user through the admin
 * listener instead of a PLAINTEXT listener kept for the purpose.
 *
 * The admin listener answers synchronously, so a change is answered once it is submitted to
 * the controller (HTTP 202) and becomes visible in GET /v1/users once the metadata log has
 * committed it and this broker has applied it; a client waits by polling (`streampulse user
 * --admin` does). The controller's answer is logged: user_changed, or user_change_failed with
 * the Kafka error (the user deleted meanwhile, no controller). Changes are logged when
 * submitted (user_change_submitted: the name, mechanism and the client's address, never a
 * password, salt or key).
 *
 * JSON shapes (base/json.h writes them; base/json_parse.h reads the bodies, strictly):
 *   GET  -> {"users":[{"name":N,"credentials":[{"mechanism":"SCRAM-SHA-256",
 *                                                "iterations":4096,"salt":B64}, ...]}, ...]}
 *           users by name, each credential by mechanism. The salt is no secret (SCRAM sends
 *           it to every client that starts an exchange as the user); it tells one credential
 *           from the one it replaced. StoredKey and ServerKey never leave the broker.
 *   POST <- {"name":N, "mechanism":M?, "iterations":I?, and either "password":P or
 *            "salt":B64 with "salted_password":B64}
 *           mechanism SCRAM-SHA-256 (default) or SCRAM-SHA-512; iterations 4096 (default) ..
 *           16384; a password of 1..1024 bytes without NUL, from which the broker draws a salt
 *           (SCRAM_SALT_DEFAULT_LEN bytes) and computes PBKDF2 (on the reactor thread: a few
 *           ms, at most ~20 ms at 16384 iterations of SHA-512); or the salted form that
 *           AlterUserScramCredentials carries, so that the password never leaves the client (a
 *           salt of 1..64 bytes and PBKDF2(password, salt, iterations), the mechanism's digest
 *           length). Any other member, a member of the wrong type, or both forms is refused.
 *        -> {"name":N,"mechanism":M,"iterations":I,"salt":B64}: the credential submitted.
 *   DELETE -> {"name":N,"mechanisms":[M, ...]}: the credentials submitted for deletion.
 * Reactor thread only. */
#ifndef SP_BROKER_ADMIN_USERS_H
#define SP_BROKER_ADMIN_USERS_H

#include <stddef.h>

#include "base/strbuf.h"

struct broker;

#define ADMIN_USERS_BODY_VALUES_MAX 16 /* JSON values in a POST body */

/* Every function below returns -ERR_CLOSED, doing nothing, while the broker stops (its
 * cluster gone). */

/* GET /v1/users into out. Returns 0. */
int broker_users_json(struct broker *b, struct strbuf *out);

/* POST /v1/users: body[0, len) (untrusted) from the client at peer. Returns 0 with the
 * submitted credential in *answer; -ERR_INVALID with the reason in err (for the client: the
 * body is not JSON, a member is missing, mistyped, unknown or out of range, an unknown
 * mechanism, both forms); -EIO when OpenSSL failed. The decoded password is wiped. */
int broker_user_set(struct broker *b, const char *peer, const char *body, size_t len,
                    struct strbuf *answer, char *err, size_t errcap);

/* DELETE /v1/users/NAME: name[0, name_len) (decoded from the path; untrusted), mechanism NULL
 * for every credential the user has. Returns 0 with the credentials submitted for deletion in
 * *answer; -ERR_INVALID (not a user name, an unknown mechanism) or -ERR_NOT_FOUND (the user
 * has no credential, or none for that mechanism) with the reason in err. */
int broker_user_delete(struct broker *b, const char *peer, const char *name, size_t name_len,
                       const char *mechanism, size_t mechanism_len, struct strbuf *answer,
                       char *err, size_t errcap);

#endif
