/* libFuzzer target: the SASL parsers of security/ that read client (and server) bytes: SCRAM's
 * client-first and client-final on the server side, server-first and server-final on the
 * client side (security/scram.h), PLAIN (security/sasl_plain.h) and strict base64
 * (security/base64.h).
 *
 * Byte 0 picks the parser (mod 8), the rest is the message, given in an exact-size copy so an
 * over-read is an ASan report:
 *   0 server client-first             4 client server-final (after the RFC 7677 client-final)
 *   1 server client-final, SHA-256    5 PLAIN message
 *   2 server client-final, SHA-512    6 base64 decode
 *   3 client server-first             7 client-first, then server-first for it
 * Modes 1, 2 and 4 start from exchanges built once (PBKDF2 only then, the RFC 7677 one and a
 * SHA-512 one, 4096 iterations), copied for every input, so a run costs a few HMACs at most.
 * Checked: every result is a documented code; the invariants hold after every call
 * (scram_server_check, which the calls also DCHECK); answers are NUL-terminated, of their
 * stated length, "v=" exactly on success and a documented "e=" otherwise; a parsed name is a
 * valid one; PLAIN's parts partition the message; a base64 decoding re-encodes to the input. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "base/base64.h"
#include "security/sasl_plain.h"
#include "security/scram.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RFC_CNONCE "rOprNGfwEbeRWgbNEkqO"
#define RFC_SNONCE "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
#define RFC_SALT_B64 "W22ZaJ0SNY7soEsUEjb6gQ=="

static struct scram_credential cred256, cred512;
static struct scram_server server256, server512; /* CHALLENGED */
static struct scram_client client_first_sent;    /* SENT_FIRST */
static struct scram_client client_final_sent;    /* SENT_FINAL */

static void need(bool ok)
{
    if (!ok)
        abort();
}

static void challenged(struct scram_server *s, int mech, const struct scram_credential *cred,
                       const char *client_first)
{
    char out[SCRAM_MSG_MAX + 1];
    size_t n;
    scram_server_init(s, mech);
    need(scram_server_client_first(s, client_first, strlen(client_first)) == 0);
    need(scram_server_first(s, cred, RFC_SNONCE, strlen(RFC_SNONCE), out, sizeof(out), &n) == 0);
}

static void setup(void)
{
    uint8_t salt[SCRAM_SALT_MAX];
    size_t salt_len;
    need(b64_decode(RFC_SALT_B64, strlen(RFC_SALT_B64), salt, sizeof(salt), &salt_len) == 0);
    need(scram_credential_from_password(&cred256, SCRAM_SHA_256, "pencil", 6, salt, salt_len,
                                        4096) == 0);
    need(scram_credential_from_password(&cred512, SCRAM_SHA_512, "pencil", 6, salt, salt_len,
                                        4096) == 0);
    challenged(&server256, SCRAM_SHA_256, &cred256, "n,,n=user,r=" RFC_CNONCE);
    challenged(&server512, SCRAM_SHA_512, &cred512, "n,,n=user,r=" RFC_CNONCE);

    char m[SCRAM_MSG_MAX + 1];
    size_t n;
    scram_client_init(&client_first_sent, SCRAM_SHA_256);
    need(scram_client_first(&client_first_sent, "user", 4, RFC_CNONCE, strlen(RFC_CNONCE), m,
                            sizeof(m), &n) == 0);
    client_final_sent = client_first_sent;
    const char *first = "r=" RFC_CNONCE RFC_SNONCE ",s=" RFC_SALT_B64 ",i=4096";
    need(scram_client_server_first(&client_final_sent, first, strlen(first)) == 0);
    need(scram_client_final(&client_final_sent, "pencil", 6, m, sizeof(m), &n) == 0);
}

static bool documented(int rc)
{
    return rc == 0 || rc == -ERR_INVALID || rc == -ERR_TOO_LARGE || rc == -ERR_UNSUPPORTED ||
           rc == -EACCES;
}

static void check_server_first_parse(struct scram_server *s, int rc)
{
    need(documented(rc) && scram_server_check(s));
    size_t len = 0;
    const char *user = scram_server_user(s, &len);
    need((rc == 0) == (user != NULL));
    need(rc != 0 || (scram_user_valid(user, len) && strlen(user) == len));
    need(rc == 0 || scram_server_reason(s) != NULL);
}

static void client_first_msg(const char *msg, size_t len)
{
    struct scram_server s;
    scram_server_init(&s, SCRAM_SHA_256);
    check_server_first_parse(&s, scram_server_client_first(&s, msg, len));
}

static void client_final_msg(const struct scram_server *tmpl, const char *msg, size_t len)
{
    struct scram_server s = *tmpl;
    char out[SCRAM_SERVER_FINAL_MAX];
    size_t n = SIZE_MAX;
    int rc = scram_server_client_final(&s, msg, len, out, sizeof(out), &n);
    need(documented(rc) && rc != -ERR_UNSUPPORTED && scram_server_check(&s));
    need(n < sizeof(out) && strlen(out) == n);
    need((rc == 0) == scram_server_authenticated(&s));
    if (rc == 0) {
        need(strncmp(out, "v=", 2) == 0);
        return;
    }
    static const char *const answers[] = {"e=invalid-proof", "e=invalid-encoding",
                                          "e=channel-bindings-dont-match", "e=other-error"};
    bool known = false;
    for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++)
        known |= strcmp(out, answers[i]) == 0;
    need(known && scram_server_reason(&s) != NULL);
    need(rc != -EACCES || strcmp(out, "e=invalid-proof") == 0);
}

static void server_first_msg(const char *msg, size_t len)
{
    struct scram_client c = client_first_sent;
    int rc = scram_client_server_first(&c, msg, len);
    need(documented(rc) && rc != -EACCES);
    if (rc != 0) {
        need(c.state == SCRAM_CLIENT_FAILED && scram_client_reason(&c) != NULL);
        return;
    }
    need(c.state == SCRAM_CLIENT_GOT_FIRST && scram_iterations_valid(c.iterations));
    need(c.salt_len >= 1 && c.salt_len <= SCRAM_SALT_MAX);
    need(c.nonce_len > strlen(RFC_CNONCE) &&
         memcmp(c.first + 2, RFC_CNONCE, strlen(RFC_CNONCE)) == 0);
}

static void server_final_msg(const char *msg, size_t len)
{
    struct scram_client c = client_final_sent;
    int rc = scram_client_server_final(&c, msg, len);
    need(documented(rc) && rc != -ERR_UNSUPPORTED);
    need((rc == 0) == (c.state == SCRAM_CLIENT_DONE));
}

static void plain_msg(const char *msg, size_t len)
{
    struct sasl_plain p;
    const char *why = NULL;
    int rc = sasl_plain_parse(msg, len, &p, &why);
    need(documented(rc) && rc != -ERR_UNSUPPORTED && (rc == 0) == (why == NULL));
    if (rc != 0) {
        need(!p.user && !p.password && !p.authzid);
        return;
    }
    need(p.authzid == msg && p.user == msg + p.authzid_len + 1 &&
         p.password == p.user + p.user_len + 1 &&
         p.authzid_len + p.user_len + p.password_len + 2 == len);
    need(scram_user_valid(p.user, p.user_len) && p.password_len >= 1);
}

static void base64_msg(const char *msg, size_t len)
{
    uint8_t out[64];
    size_t n = SIZE_MAX;
    int rc = b64_decode(msg, len, out, sizeof(out), &n);
    need(rc == 0 || rc == -ERR_INVALID || rc == -ERR_TOO_LARGE);
    if (rc != 0)
        return;
    char again[B64_ENCODED_LEN(sizeof(out)) + 1];
    need(n <= sizeof(out));
    need(b64_encode(out, n, again, sizeof(again)) == len && memcmp(again, msg, len) == 0);
}

/* client-first, then server-first for it: its nonce and salt must come out as given. */
static void whole_first_msg(const char *msg, size_t len)
{
    struct scram_server s;
    scram_server_init(&s, SCRAM_SHA_256);
    int rc = scram_server_client_first(&s, msg, len);
    check_server_first_parse(&s, rc);
    if (rc != 0)
        return;
    char out[SCRAM_MSG_MAX + 1];
    size_t n;
    need(scram_server_first(&s, &cred256, "snonce", 6, out, sizeof(out), &n) == 0);
    need(strlen(out) == n && scram_server_check(&s));
    need(memcmp(out, "r=", 2) == 0 && memcmp(out + 2, s.bare + s.cnonce_off, s.cnonce_len) == 0);
    need(strstr(out, "snonce,s=" RFC_SALT_B64 ",i=4096") != NULL);
    scram_server_destroy(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        setup();
        ready = true;
    }
    if (size < 1)
        return 0;
    size_t len = size - 1;
    char *msg = mem_alloc(len ? len : 1);
    memcpy(msg, data + 1, len);
    switch (data[0] % 8) {
    case 0:
        client_first_msg(msg, len);
        break;
    case 1:
        client_final_msg(&server256, msg, len);
        break;
    case 2:
        client_final_msg(&server512, msg, len);
        break;
    case 3:
        server_first_msg(msg, len);
        break;
    case 4:
        server_final_msg(msg, len);
        break;
    case 5:
        plain_msg(msg, len);
        break;
    case 6:
        base64_msg(msg, len);
        break;
    default:
        whole_first_msg(msg, len);
        break;
    }
    mem_free(msg);
    return 0;
}
