/* The CLI's client of brokers' admin listeners (server/admin.h), for `cluster status` and
 * `user ... --admin`: one HTTP/1.0 request per call over a blocking socket with send and
 * receive timeouts, the answer read until the server closes (and checked against its
 * Content-Length). Internal to src/cli/.
 *
 * With --admin-cafile the request goes over TLS (OpenSSL's client, TLS 1.2 at least): the
 * server's certificate must chain to that CA file and name the host given (its IP address or
 * DNS name); there is no way to turn the check off. With --admin-user the request carries HTTP
 * Basic credentials (an admin listener with HTTPS asks for a super user's), over TLS only. The
 * password never comes from the command line: the first line of standard input
 * (--admin-password-stdin), the first line of a file (--admin-password-file, e.g. /dev/fd/3,
 * for a command that reads another password from standard input), or
 * $STREAMPULSE_ADMIN_PASSWORD, in that order of precedence (the two flags exclude each other).
 * It is wiped once encoded, and the encoding when the client is freed. */
#ifndef SP_CLI_ADMIN_CLIENT_H
#define SP_CLI_ADMIN_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

#define ADMIN_DEFAULT_ADDR "127.0.0.1:9644"
#define ADMIN_ANSWER_MAX (16u << 20) /* bytes of an answer */

/* Long-option ids of the admin flags, for commands' getopt tables (past cli/common.h's). */
enum {
    ADMIN_OPT_ADDR = 400,
    ADMIN_OPT_CAFILE,
    ADMIN_OPT_USER,
    ADMIN_OPT_PASSWORD_STDIN,
    ADMIN_OPT_PASSWORD_FILE,
};

/* clang-format off */
#define ADMIN_CLIENT_LONGOPTS                                                                      \
    {"admin", required_argument, NULL, ADMIN_OPT_ADDR},                                            \
    {"admin-cafile", required_argument, NULL, ADMIN_OPT_CAFILE},                                   \
    {"admin-user", required_argument, NULL, ADMIN_OPT_USER},                                       \
    {"admin-password-stdin", no_argument, NULL, ADMIN_OPT_PASSWORD_STDIN},                         \
    {"admin-password-file", required_argument, NULL, ADMIN_OPT_PASSWORD_FILE}
/* clang-format on */

#define ADMIN_CLIENT_HELP                                                                          \
    "      --admin-cafile PEM       HTTPS: the CA certificates the admin listener's\n"             \
    "                               certificate must chain to (it must also name the HOST\n"       \
    "                               given: its IP address or DNS name)\n"                          \
    "      --admin-user NAME        HTTP Basic credentials of a super user (HTTPS only); the\n"    \
    "                               password from the first line of standard input with\n"         \
    "      --admin-password-stdin   or of a file with\n"                                           \
    "      --admin-password-file F  (e.g. /dev/fd/3), else $STREAMPULSE_ADMIN_PASSWORD\n"

/* The admin flags as given. */
struct admin_client_opts {
    const char *addr;          /* --admin HOST:PORT[,...], or NULL */
    const char *cafile;        /* --admin-cafile, or NULL */
    const char *user;          /* --admin-user, or NULL */
    bool password_stdin;       /* --admin-password-stdin */
    const char *password_file; /* --admin-password-file, or NULL */
};

/* Takes one getopt result into o if it is an admin flag. Returns 1 if it was, else 0. */
int admin_client_opt(struct admin_client_opts *o, int opt, const char *arg);

/* How to reach the admin listeners: plain HTTP, or HTTPS verified against a CA file, with or
 * without Basic credentials. */
struct admin_client {
    const char *cmd;        /* "cluster status", "user create": prefixes messages */
    struct ssl_ctx_st *ctx; /* HTTPS: verifies against --admin-cafile; NULL: plain */
    char *auth;             /* "Basic base64(user:password)", or NULL (wiped, freed) */
};

/* Sets up ac from o (reading the password as o says). Returns 0, or CLI_EXIT_USAGE /
 * CLI_EXIT_FAIL with the reason printed ("streampulse CMD: ..."). Release with
 * admin_client_free() either way. */
int admin_client_init(struct admin_client *ac, const char *cmd, const struct admin_client_opts *o);
void admin_client_free(struct admin_client *ac);

/* One request to addr ("host:port"): METHOD path (already percent-encoded), with a JSON body
 * when body is not NULL. Returns 0 with the answer's status in *status and its body in *out
 * (appended), or -1 with the reason in err (no connection, TLS failed, no HTTP answer, an
 * answer too large or cut short). */
int admin_client_call(const struct admin_client *ac, const char *addr, int timeout_ms,
                      const char *method, const char *path, const char *body, size_t body_len,
                      int *status, struct strbuf *out, char *err, size_t errcap);

/* What a status other than 2xx means to the user: " (the user name or password is wrong)" and
 * the like, or "" when there is nothing to add. */
const char *admin_client_status_hint(const struct admin_client *ac, int status);

/* Percent-encodes s for a path segment or query value (RFC 3986: every byte but the unreserved
 * ones) onto out. */
void admin_client_encode(struct strbuf *out, const char *s, size_t len);

#endif
