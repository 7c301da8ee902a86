/* SCRAM (scram.h): credentials, and the server's and the client's side of RFC 5802's exchange.
 *
 * Owns nothing beyond the structs its callers pass in, except one process-wide secret for the
 * stand-in credentials of unknown users: 32 bytes drawn with RAND_bytes on first use under
 * pthread_once, never changed afterwards (so a name keeps its stand-in salt for the life of
 * the process, as a real user keeps its salt).
 *
 * Messages. Every message is first checked whole (1..SCRAM_MSG_MAX bytes, no NUL), then split
 * at ',' into attributes "x=value": no SCRAM value contains a ',' (names escape it, nonces
 * exclude it, base64 lacks it). Attributes come in the order the RFC fixes; extensions
 * ("name=value", name of letters) only where it allows them. Values are spans into the
 * message, so nothing is read past its end; copies go into fixed buffers whose sizes the
 * limits in scram.h bound (static_asserts below).
 *
 * Server invariants (scram_server_check):
 *  1. mech is a mechanism; state is one of enum scram_server_state.
 *  2. user, gs2, bare and first hold at most their limits.
 *  3. In LOOKUP, CHALLENGED and DONE: user is a valid name, NUL-terminated; gs2 ends in ',';
 *     the client nonce lies inside bare, followed by its end or a ','.
 *  4. In CHALLENGED and DONE: first is "r=", the client nonce, the server's part (nonce_len >
 *     cnonce_len), then more.
 *  5. Outside CHALLENGED the key copies are zero.
 *
 * Server flow: START -client_first-> LOOKUP (the broker fetches the user's credential or makes
 * a stand-in) -server_first-> CHALLENGED (keys and the fake flag copied, server-first kept)
 * -client_final-> DONE: AuthMessage = bare "," first "," client-final-without-proof;
 * ClientKey = proof XOR HMAC(StoredKey, AuthMessage); authenticated iff H(ClientKey) ==
 * StoredKey (CRYPTO_memcmp) and the credential is real. A stand-in goes through the same
 * computation and then fails, with the answer a wrong password gets. Any error: FAILED.
 *
 * Client flow: START -first-> SENT_FIRST -server_first-> GOT_FIRST (nonce, salt, count kept)
 * -final-> SENT_FINAL (PBKDF2, proof sent, only the expected ServerSignature kept) -server_final->
 * DONE. Any error: FAILED. */
#include "security/scram.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/base64.h"

#define SECRET_LEN 32
#define NONCE_RANDOM_BYTES 24
#define AUTH_MESSAGE_MAX (3 * SCRAM_MSG_MAX + 2)

static_assert(B64_ENCODED_LEN(NONCE_RANDOM_BYTES) == SCRAM_NONCE_RANDOM_LEN, "nonce length");
static_assert(SCRAM_NONCE_RANDOM_LEN <= SCRAM_NONCE_MAX, "random nonce within the limit");
static_assert(SCRAM_SALT_DEFAULT_LEN <= SCRAM_SALT_MAX && SCRAM_SALT_MAX <= SCRAM_KEY_MAX,
              "salt sizes (a stand-in salt is cut from one HMAC-SHA-512)");
static_assert(2 + B64_ENCODED_LEN(SCRAM_KEY_MAX) + 1 <= SCRAM_SERVER_FINAL_MAX,
              "server-final fits");
/* The longest server-first: "r=" both nonce parts ",s=" salt ",i=" five digits. */
static_assert(2 + 2 * SCRAM_NONCE_MAX + 3 + B64_ENCODED_LEN(SCRAM_SALT_MAX) + 3 + 5 <=
                  SCRAM_MSG_MAX,
              "server-first fits");

/* ---- Text: spans, fields, a bounded writer ---------------------------------------------- */

struct span {
    const char *p;
    size_t len;
};

/* The comma-separated fields of a message, in order. */
struct fields {
    const char *msg;
    size_t len;
    size_t pos; /* where the next field starts */
    bool done;  /* the last field was taken (it had no ',' after it) */
};

static void fields_init(struct fields *f, const char *msg, size_t len)
{
    *f = (struct fields){msg, len, 0, false};
}

/* Takes the next field. A message that ends in ',' has an empty last field. */
static bool field_next(struct fields *f, struct span *out)
{
    if (f->done)
        return false;
    const char *start = f->msg + f->pos;
    const char *comma = memchr(start, ',', f->len - f->pos);
    out->p = start;
    out->len = comma ? (size_t)(comma - start) : f->len - f->pos;
    f->pos += out->len + (comma ? 1 : 0);
    f->done = comma == NULL;
    return true;
}

/* Whether field is "<name>=...": *value is then what follows the '='. */
static bool attr(struct span field, char name, struct span *value)
{
    if (field.len < 2 || field.p[0] != name || field.p[1] != '=')
        return false;
    *value = (struct span){field.p + 2, field.len - 2};
    return true;
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Whether field is an extension: one or more letters, '=', a non-empty value. */
static bool extension(struct span field, struct span *name, struct span *value)
{
    size_t i = 0;
    while (i < field.len && is_alpha(field.p[i]))
        i++;
    if (i == 0 || i + 1 >= field.len || field.p[i] != '=')
        return false;
    *name = (struct span){field.p, i};
    *value = (struct span){field.p + i + 1, field.len - i - 1};
    return true;
}

static bool span_is(struct span s, const char *text)
{
    return s.len == strlen(text) && memcmp(s.p, text, s.len) == 0;
}

static bool span_is_nocase(struct span s, const char *text)
{
    return s.len == strlen(text) && strncasecmp(s.p, text, s.len) == 0;
}

/* RFC 5802's printable: %x21-7E but ','. */
static bool printable(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] < 0x21 || p[i] > 0x7e || p[i] == ',')
            return false;
    return true;
}

static bool nonce_valid(const char *p, size_t len)
{
    return len >= 1 && len <= SCRAM_NONCE_MAX && printable(p, len);
}

/* A writer into a fixed buffer, always NUL-terminated; once something does not fit, nothing
 * more is written and over stays set. */
struct wbuf {
    char *p;
    size_t cap; /* bytes of p, the NUL's included */
    size_t len;
    bool over;
};

static struct wbuf wbuf_init(char *p, size_t cap)
{
    CHECK(cap >= 1);
    p[0] = '\0';
    return (struct wbuf){p, cap, 0, false};
}

static void put(struct wbuf *w, const void *s, size_t n)
{
    if (w->over || n > w->cap - 1 - w->len) {
        w->over = true;
        return;
    }
    memcpy(w->p + w->len, s, n);
    w->len += n;
    w->p[w->len] = '\0';
}

static void put_str(struct wbuf *w, const char *s)
{
    put(w, s, strlen(s));
}

static void put_b64(struct wbuf *w, const uint8_t *b, size_t n)
{
    char text[B64_ENCODED_LEN(SCRAM_KEY_MAX) + 1];
    CHECK(n <= SCRAM_KEY_MAX);
    put(w, text, b64_encode(b, n, text, sizeof(text)));
}

/* A saslname: ',' as "=2C" and '=' as "=3D". */
static void put_name(struct wbuf *w, const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (name[i] == ',')
            put_str(w, "=2C");
        else if (name[i] == '=')
            put_str(w, "=3D");
        else
            put(w, &name[i], 1);
    }
}

/* Unescapes a saslname into out (room for SCRAM_USER_MAX bytes and a NUL). Returns 0,
 * -ERR_INVALID (an '=' that does not begin =2C or =3D; a name scram_user_valid refuses) or
 * -ERR_TOO_LARGE. */
static int unescape_name(struct span v, char *out, size_t *out_len)
{
    size_t n = 0;
    for (size_t i = 0; i < v.len; i++) {
        char c = v.p[i];
        if (c == '=') {
            if (v.len - i < 3)
                return -ERR_INVALID;
            if (v.p[i + 1] == '2' && v.p[i + 2] == 'C')
                c = ',';
            else if (v.p[i + 1] == '3' && v.p[i + 2] == 'D')
                c = '=';
            else
                return -ERR_INVALID;
            i += 2;
        }
        if (n == SCRAM_USER_MAX)
            return -ERR_TOO_LARGE;
        out[n++] = c;
    }
    out[n] = '\0';
    if (!scram_user_valid(out, n))
        return -ERR_INVALID;
    *out_len = n;
    return 0;
}

/* An iteration count: 1 to 5 decimal digits, no sign, no leading zero. */
static bool parse_count(struct span v, int32_t *out)
{
    if (v.len < 1 || v.len > 5 || v.p[0] == '0')
        return false;
    int32_t n = 0;
    for (size_t i = 0; i < v.len; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return false;
        n = n * 10 + (v.p[i] - '0');
    }
    *out = n;
    return true;
}

/* The checks every received message gets before it is parsed. */
static int msg_check(const char *msg, size_t len, const char **why)
{
    if (len == 0) {
        *why = "empty message";
        return -ERR_INVALID;
    }
    if (len > SCRAM_MSG_MAX) {
        *why = "message too long";
        return -ERR_TOO_LARGE;
    }
    if (memchr(msg, '\0', len)) {
        *why = "NUL byte in message";
        return -ERR_INVALID;
    }
    return 0;
}

/* Every extension left in f is well formed (their meaning is ignored). */
static int extensions_rest(struct fields *f, const char **why)
{
    struct span field, name, value;
    while (field_next(f, &field)) {
        if (!extension(field, &name, &value)) {
            *why = "malformed extension";
            return -ERR_INVALID;
        }
    }
    return 0;
}

/* AuthMessage = a "," b "," c, into buf (AUTH_MESSAGE_MAX bytes). Returns its length. */
static size_t auth_message(char *buf, const char *a, size_t a_len, const char *b, size_t b_len,
                           const char *c, size_t c_len)
{
    CHECK(a_len <= SCRAM_MSG_MAX && b_len <= SCRAM_MSG_MAX && c_len <= SCRAM_MSG_MAX);
    memcpy(buf, a, a_len);
    buf[a_len] = ',';
    memcpy(buf + a_len + 1, b, b_len);
    buf[a_len + 1 + b_len] = ',';
    memcpy(buf + a_len + b_len + 2, c, c_len);
    return a_len + b_len + c_len + 2;
}

/* ---- Crypto ------------------------------------------------------------------------------ */

size_t scram_key_len(int mech)
{
    return mech == SCRAM_SHA_256 ? 32 : mech == SCRAM_SHA_512 ? 64 : 0;
}

static const EVP_MD *mech_md(int mech)
{
    return mech == SCRAM_SHA_256 ? EVP_sha256() : EVP_sha512();
}

/* OpenSSL failed: leave its error queue empty, as tls_context.c does. */
static int crypto_failed(void)
{
    ERR_clear_error();
    return -EIO;
}

static int hmac(int mech, const uint8_t *key, size_t key_len, const void *data, size_t len,
                uint8_t *out)
{
    unsigned int n = 0;
    if (!HMAC(mech_md(mech), key, (int)key_len, data, len, out, &n) || n != scram_key_len(mech))
        return crypto_failed();
    return 0;
}

static int digest(int mech, const uint8_t *in, size_t len, uint8_t *out)
{
    unsigned int n = 0;
    if (EVP_Digest(in, len, out, &n, mech_md(mech), NULL) != 1 || n != scram_key_len(mech))
        return crypto_failed();
    return 0;
}

/* SaltedPassword = PBKDF2-HMAC(password, salt, iterations), scram_key_len(mech) bytes. */
static int salt_password(int mech, const char *password, size_t password_len, const uint8_t *salt,
                         size_t salt_len, int32_t iterations, uint8_t *out)
{
    if (PKCS5_PBKDF2_HMAC(password, (int)password_len, salt, (int)salt_len, iterations,
                          mech_md(mech), (int)scram_key_len(mech), out) != 1)
        return crypto_failed();
    return 0;
}

/* ClientKey, StoredKey = H(ClientKey) and ServerKey from a salted password. */
static int derive_keys(int mech, const uint8_t *salted, uint8_t *client_key, uint8_t *stored_key,
                       uint8_t *server_key)
{
    size_t n = scram_key_len(mech);
    int rc = hmac(mech, salted, n, "Client Key", 10, client_key);
    if (rc == 0)
        rc = digest(mech, client_key, n, stored_key);
    if (rc == 0)
        rc = hmac(mech, salted, n, "Server Key", 10, server_key);
    return rc;
}

/* ---- Mechanisms and credentials ---------------------------------------------------------- */

const char *scram_mech_name(int mech)
{
    return mech == SCRAM_SHA_256 ? "SCRAM-SHA-256" : mech == SCRAM_SHA_512 ? "SCRAM-SHA-512" : NULL;
}

int scram_mech_parse(const char *name, size_t len)
{
    struct span s = {name, len};
    if (span_is(s, "SCRAM-SHA-256"))
        return SCRAM_SHA_256;
    if (span_is(s, "SCRAM-SHA-512"))
        return SCRAM_SHA_512;
    return -ERR_UNSUPPORTED;
}

bool scram_iterations_valid(int32_t iterations)
{
    return iterations >= SCRAM_ITER_MIN && iterations <= SCRAM_ITER_MAX;
}

bool scram_user_valid(const char *name, size_t len)
{
    if (len < 1 || len > SCRAM_USER_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return false;
    return true;
}

static bool params_valid(int mech, const uint8_t *salt, size_t salt_len, int32_t iterations)
{
    return scram_key_len(mech) != 0 && scram_iterations_valid(iterations) && salt &&
           salt_len >= 1 && salt_len <= SCRAM_SALT_MAX;
}

int scram_credential_from_salted(struct scram_credential *out, int mech,
                                 const uint8_t *salted_password, size_t salted_len,
                                 const uint8_t *salt, size_t salt_len, int32_t iterations)
{
    memset(out, 0, sizeof(*out));
    if (!params_valid(mech, salt, salt_len, iterations) || !salted_password ||
        salted_len != scram_key_len(mech))
        return -ERR_INVALID;
    out->mech = mech;
    out->iterations = iterations;
    memcpy(out->salt, salt, salt_len);
    out->salt_len = salt_len;
    uint8_t client_key[SCRAM_KEY_MAX];
    int rc = derive_keys(mech, salted_password, client_key, out->stored_key, out->server_key);
    OPENSSL_cleanse(client_key, sizeof(client_key));
    if (rc != 0)
        OPENSSL_cleanse(out, sizeof(*out));
    return rc;
}

int scram_salted_password(int mech, const char *password, size_t password_len,
                          const uint8_t *salt, size_t salt_len, int32_t iterations, uint8_t *out)
{
    if (!params_valid(mech, salt, salt_len, iterations) || !password || password_len < 1 ||
        password_len > SCRAM_PASSWORD_MAX)
        return -ERR_INVALID;
    return salt_password(mech, password, password_len, salt, salt_len, iterations, out);
}

int scram_credential_from_password(struct scram_credential *out, int mech, const char *password,
                                   size_t password_len, const uint8_t *salt, size_t salt_len,
                                   int32_t iterations)
{
    memset(out, 0, sizeof(*out));
    uint8_t salted[SCRAM_KEY_MAX];
    int rc = scram_salted_password(mech, password, password_len, salt, salt_len, iterations,
                                   salted);
    if (rc == 0)
        rc = scram_credential_from_salted(out, mech, salted, scram_key_len(mech), salt, salt_len,
                                          iterations);
    OPENSSL_cleanse(salted, sizeof(salted));
    return rc;
}

static pthread_once_t secret_once = PTHREAD_ONCE_INIT;
static uint8_t secret[SECRET_LEN];
static bool secret_ok;

static void secret_draw(void)
{
    secret_ok = RAND_bytes(secret, SECRET_LEN) == 1;
    if (!secret_ok)
        ERR_clear_error();
}

/* HMAC-SHA-512(secret, tag NUL mech user): 64 bytes no one computes without the secret. */
static int secret_mac(const char *tag, int mech, const char *user, size_t user_len, uint8_t *out)
{
    uint8_t data[16 + 1 + SCRAM_USER_MAX];
    size_t tag_len = strlen(tag);
    CHECK(tag_len < 16 && user_len <= SCRAM_USER_MAX);
    memcpy(data, tag, tag_len + 1);
    data[tag_len + 1] = (uint8_t)mech;
    memcpy(data + tag_len + 2, user, user_len);
    return hmac(SCRAM_SHA_512, secret, SECRET_LEN, data, tag_len + 2 + user_len, out);
}

int scram_credential_fake(struct scram_credential *out, int mech, const char *user, size_t user_len,
                          int32_t iterations)
{
    memset(out, 0, sizeof(*out));
    if (scram_key_len(mech) == 0 || !scram_iterations_valid(iterations) ||
        !scram_user_valid(user, user_len))
        return -ERR_INVALID;
    pthread_once(&secret_once, secret_draw);
    if (!secret_ok)
        return -EIO;
    uint8_t mac[SCRAM_KEY_MAX];
    size_t n = scram_key_len(mech);
    int rc = secret_mac("salt", mech, user, user_len, mac);
    memcpy(out->salt, mac, SCRAM_SALT_DEFAULT_LEN);
    if (rc == 0)
        rc = secret_mac("stored", mech, user, user_len, mac);
    memcpy(out->stored_key, mac, n);
    if (rc == 0)
        rc = secret_mac("server", mech, user, user_len, mac);
    memcpy(out->server_key, mac, n);
    OPENSSL_cleanse(mac, sizeof(mac));
    if (rc != 0) {
        OPENSSL_cleanse(out, sizeof(*out));
        return rc;
    }
    out->mech = mech;
    out->iterations = iterations;
    out->salt_len = SCRAM_SALT_DEFAULT_LEN;
    out->fake = true;
    return 0;
}

int scram_salt_random(uint8_t *salt, size_t len)
{
    CHECK(len <= SCRAM_SALT_MAX);
    if (RAND_bytes(salt, (int)len) != 1)
        return crypto_failed();
    return 0;
}

int scram_nonce_random(char *out, size_t cap)
{
    CHECK(cap >= SCRAM_NONCE_RANDOM_LEN + 1);
    uint8_t raw[NONCE_RANDOM_BYTES];
    out[0] = '\0';
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return crypto_failed();
    b64_encode(raw, sizeof(raw), out, cap);
    return 0;
}

/* ---- Server ------------------------------------------------------------------------------ */

static bool keys_zero(const uint8_t *a, const uint8_t *b)
{
    uint8_t any = 0;
    for (size_t i = 0; i < SCRAM_KEY_MAX; i++)
        any |= a[i] | b[i];
    return any == 0;
}

bool scram_server_check(const struct scram_server *s)
{
    if (scram_key_len(s->mech) == 0 || (unsigned)s->state > SCRAM_SERVER_FAILED)
        return false;
    if (s->user_len > SCRAM_USER_MAX || s->gs2_len > SCRAM_GS2_MAX || s->bare_len > SCRAM_MSG_MAX ||
        s->first_len > SCRAM_MSG_MAX)
        return false;
    bool zero = keys_zero(s->stored_key, s->server_key);
    if (s->state == SCRAM_SERVER_START || s->state == SCRAM_SERVER_FAILED)
        return zero;
    if (!scram_user_valid(s->user, s->user_len) || s->user[s->user_len] != '\0')
        return false;
    if (s->gs2_len < 3 || s->gs2[s->gs2_len - 1] != ',')
        return false;
    size_t end = s->cnonce_off + s->cnonce_len;
    if (s->cnonce_len < 1 || end > s->bare_len || (end < s->bare_len && s->bare[end] != ','))
        return false;
    if (s->state == SCRAM_SERVER_LOOKUP)
        return zero;
    if (s->nonce_len <= s->cnonce_len || 2 + s->nonce_len >= s->first_len ||
        memcmp(s->first, "r=", 2) != 0 ||
        memcmp(s->first + 2, s->bare + s->cnonce_off, s->cnonce_len) != 0)
        return false;
    return s->state == SCRAM_SERVER_CHALLENGED || zero;
}

void scram_server_init(struct scram_server *s, int mech)
{
    CHECK(scram_key_len(mech) != 0);
    memset(s, 0, sizeof(*s));
    s->state = SCRAM_SERVER_START;
    s->mech = mech;
    DCHECK(scram_server_check(s));
}

static void server_wipe_keys(struct scram_server *s)
{
    OPENSSL_cleanse(s->stored_key, sizeof(s->stored_key));
    OPENSSL_cleanse(s->server_key, sizeof(s->server_key));
}

static int server_fail(struct scram_server *s, int rc, const char *why)
{
    s->state = SCRAM_SERVER_FAILED;
    s->reason = why;
    server_wipe_keys(s);
    DCHECK(scram_server_check(s));
    return rc;
}

/* gs2-header: "n" or "y", ',', nothing or "a=" authzid, ','. */
static int parse_gs2(struct fields *f, char *authzid, size_t *authzid_len, const char **why)
{
    struct span flag, az, v;
    *why = "malformed gs2 header";
    if (!field_next(f, &flag) || f->done)
        return -ERR_INVALID;
    if (attr(flag, 'p', &v)) {
        *why = "channel binding requested (p=)";
        return -ERR_UNSUPPORTED;
    }
    if (flag.len != 1 || (flag.p[0] != 'n' && flag.p[0] != 'y'))
        return -ERR_INVALID;
    if (!field_next(f, &az) || f->done)
        return -ERR_INVALID;
    *authzid_len = 0;
    if (az.len == 0)
        return 0;
    *why = "malformed authzid (a=)";
    if (!attr(az, 'a', &v))
        return -ERR_INVALID;
    return unescape_name(v, authzid, authzid_len);
}

/* The extensions after the nonce: tokenauth (at most once) is noted, the others ignored. */
static int client_first_extensions(struct scram_server *s, struct fields *f, const char **why)
{
    bool seen = false;
    struct span field, name, value;
    while (field_next(f, &field)) {
        *why = "malformed extension";
        if (!extension(field, &name, &value))
            return -ERR_INVALID;
        if (!span_is(name, "tokenauth"))
            continue;
        *why = "tokenauth given twice";
        if (seen)
            return -ERR_INVALID;
        seen = true;
        s->token_auth = span_is_nocase(value, "true");
    }
    return 0;
}

/* client-first-message-bare: "n=" name, "r=" nonce, extensions. bare is where it starts. */
static int parse_bare(struct scram_server *s, struct fields *f, const char *bare, const char **why)
{
    struct span field = {NULL, 0}, v;
    field_next(f, &field);
    if (attr(field, 'm', &v)) {
        *why = "mandatory extension (m=)";
        return -ERR_UNSUPPORTED;
    }
    *why = "no user name (n=)";
    if (!attr(field, 'n', &v))
        return -ERR_INVALID;
    *why = "malformed user name";
    int rc = unescape_name(v, s->user, &s->user_len);
    if (rc != 0)
        return rc;
    *why = "no nonce (r=)";
    if (!field_next(f, &field) || !attr(field, 'r', &v))
        return -ERR_INVALID;
    *why = "client nonce too long";
    if (v.len > SCRAM_NONCE_MAX)
        return -ERR_TOO_LARGE;
    *why = "malformed client nonce";
    if (!nonce_valid(v.p, v.len))
        return -ERR_INVALID;
    s->cnonce_off = (size_t)(v.p - bare);
    s->cnonce_len = v.len;
    return client_first_extensions(s, f, why);
}

static int parse_client_first(struct scram_server *s, const char *msg, size_t len, const char **why)
{
    struct fields f;
    fields_init(&f, msg, len);
    char authzid[SCRAM_USER_MAX + 1];
    size_t authzid_len = 0;
    int rc = parse_gs2(&f, authzid, &authzid_len, why);
    if (rc != 0)
        return rc;
    size_t gs2_len = f.pos;
    CHECK(gs2_len <= SCRAM_GS2_MAX); /* flag, commas, an authzid unescape_name bounded */
    memcpy(s->gs2, msg, gs2_len);
    s->gs2[gs2_len] = '\0';
    s->gs2_len = gs2_len;
    memcpy(s->bare, msg + gs2_len, len - gs2_len);
    s->bare[len - gs2_len] = '\0';
    s->bare_len = len - gs2_len;
    rc = parse_bare(s, &f, msg + gs2_len, why);
    if (rc != 0)
        return rc;
    if (authzid_len != 0 &&
        (authzid_len != s->user_len || memcmp(authzid, s->user, s->user_len) != 0)) {
        *why = "authzid is not the user name";
        return -EACCES;
    }
    return 0;
}

int scram_server_client_first(struct scram_server *s, const char *msg, size_t len)
{
    DCHECK(scram_server_check(s));
    if (s->state != SCRAM_SERVER_START)
        return server_fail(s, -ERR_INVALID, "out of order");
    const char *why = NULL;
    int rc = msg_check(msg, len, &why);
    if (rc == 0)
        rc = parse_client_first(s, msg, len, &why);
    if (rc != 0)
        return server_fail(s, rc, why);
    s->state = SCRAM_SERVER_LOOKUP;
    DCHECK(scram_server_check(s));
    return 0;
}

const char *scram_server_user(const struct scram_server *s, size_t *len)
{
    bool known = s->state == SCRAM_SERVER_LOOKUP || s->state == SCRAM_SERVER_CHALLENGED ||
                 s->state == SCRAM_SERVER_DONE;
    if (len)
        *len = known ? s->user_len : 0;
    return known ? s->user : NULL;
}

bool scram_server_token_auth(const struct scram_server *s)
{
    return s->token_auth;
}

static bool credential_fits(const struct scram_credential *cred, int mech)
{
    return cred->mech == mech && scram_iterations_valid(cred->iterations) && cred->salt_len >= 1 &&
           cred->salt_len <= SCRAM_SALT_MAX;
}

int scram_server_first(struct scram_server *s, const struct scram_credential *cred,
                       const char *server_nonce, size_t nonce_len, char *out, size_t cap,
                       size_t *out_len)
{
    CHECK(cap >= SCRAM_MSG_MAX + 1);
    DCHECK(scram_server_check(s));
    out[0] = '\0';
    *out_len = 0;
    if (s->state != SCRAM_SERVER_LOOKUP)
        return server_fail(s, -ERR_INVALID, "out of order");
    if (!credential_fits(cred, s->mech))
        return server_fail(s, -ERR_INVALID, "credential does not fit the mechanism");
    if (!nonce_valid(server_nonce, nonce_len))
        return server_fail(s, -ERR_INVALID, "malformed server nonce");
    char iterations[16];
    snprintf(iterations, sizeof(iterations), "%d", (int)cred->iterations);
    struct wbuf w = wbuf_init(s->first, sizeof(s->first));
    put_str(&w, "r=");
    put(&w, s->bare + s->cnonce_off, s->cnonce_len);
    put(&w, server_nonce, nonce_len);
    put_str(&w, ",s=");
    put_b64(&w, cred->salt, cred->salt_len);
    put_str(&w, ",i=");
    put_str(&w, iterations);
    CHECK(!w.over); /* the static_assert on the longest server-first */
    s->first_len = w.len;
    s->nonce_len = s->cnonce_len + nonce_len;
    size_t n = scram_key_len(s->mech);
    memcpy(s->stored_key, cred->stored_key, n);
    memcpy(s->server_key, cred->server_key, n);
    s->fake = cred->fake;
    memcpy(out, s->first, s->first_len + 1);
    *out_len = s->first_len;
    s->state = SCRAM_SERVER_CHALLENGED;
    DCHECK(scram_server_check(s));
    return 0;
}

/* Whether c= (v) is the base64 of the gs2 header client-first sent, exactly. */
static bool cbind_matches(const struct scram_server *s, struct span v)
{
    char want[B64_ENCODED_LEN(SCRAM_GS2_MAX) + 1];
    size_t n = b64_encode(s->gs2, s->gs2_len, want, sizeof(want));
    return v.len == n && memcmp(v.p, want, n) == 0;
}

struct final_msg {
    struct span proof;        /* p= value, base64 */
    size_t without_proof_len; /* msg[0, this) is client-final-message-without-proof */
};

/* client-final: "c=", "r=", extensions, "p=" last. *answer is the e= to send on failure. */
static int parse_client_final(const struct scram_server *s, const char *msg, size_t len,
                              struct final_msg *fm, const char **why, const char **answer)
{
    struct fields f;
    fields_init(&f, msg, len);
    struct span field, v, name, value;
    *why = "no channel binding (c=)";
    if (!field_next(&f, &field) || !attr(field, 'c', &v))
        return -ERR_INVALID;
    if (!cbind_matches(s, v)) {
        *why = "c= is not client-first's gs2 header";
        *answer = "e=channel-bindings-dont-match";
        return -ERR_INVALID;
    }
    *why = "no nonce (r=)";
    if (!field_next(&f, &field) || !attr(field, 'r', &v))
        return -ERR_INVALID;
    /* The whole nonce of server-first, or (librdkafka 2.0.2's client-final, which Kafka's
     * server takes: it checks that the nonce ends with server-first's) the client nonce
     * followed by that whole nonce. The proof covers the message as sent either way. */
    const char *cnonce = s->bare + s->cnonce_off;
    bool doubled = v.len == s->cnonce_len + s->nonce_len &&
                   memcmp(v.p, cnonce, s->cnonce_len) == 0 &&
                   memcmp(v.p + s->cnonce_len, s->first + 2, s->nonce_len) == 0;
    bool whole = v.len == s->nonce_len && memcmp(v.p, s->first + 2, s->nonce_len) == 0;
    if (!whole && !doubled) {
        *why = "nonce is not server-first's";
        *answer = "e=other-error";
        return -ERR_INVALID;
    }
    while (field_next(&f, &field)) {
        if (attr(field, 'p', &v)) {
            *why = "proof (p=) is not the last attribute";
            if (!f.done)
                return -ERR_INVALID;
            fm->proof = v;
            fm->without_proof_len = (size_t)(field.p - msg) - 1;
            return 0;
        }
        *why = "malformed extension";
        if (!extension(field, &name, &value))
            return -ERR_INVALID;
    }
    *why = "no proof (p=)";
    return -ERR_INVALID;
}

/* Checks the proof; computes the ServerSignature into sig either way. */
static int verify_proof(struct scram_server *s, const char *msg, const struct final_msg *fm,
                        uint8_t *sig, const char **why)
{
    size_t n = scram_key_len(s->mech);
    uint8_t proof[SCRAM_KEY_MAX];
    size_t proof_len;
    if (b64_decode(fm->proof.p, fm->proof.len, proof, sizeof(proof), &proof_len) != 0 ||
        proof_len != n) {
        *why = "proof (p=) is not base64 of the digest length";
        return -ERR_INVALID;
    }
    char auth[AUTH_MESSAGE_MAX];
    size_t auth_len = auth_message(auth, s->bare, s->bare_len, s->first, s->first_len, msg,
                                   fm->without_proof_len);
    uint8_t client_sig[SCRAM_KEY_MAX], client_key[SCRAM_KEY_MAX], stored[SCRAM_KEY_MAX];
    int rc = hmac(s->mech, s->stored_key, n, auth, auth_len, client_sig);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            client_key[i] = proof[i] ^ client_sig[i];
        rc = digest(s->mech, client_key, n, stored);
    }
    if (rc == 0)
        rc = hmac(s->mech, s->server_key, n, auth, auth_len, sig);
    bool match = rc == 0 && CRYPTO_memcmp(stored, s->stored_key, n) == 0;
    OPENSSL_cleanse(client_sig, sizeof(client_sig));
    OPENSSL_cleanse(client_key, sizeof(client_key));
    OPENSSL_cleanse(stored, sizeof(stored));
    if (rc != 0) {
        *why = "crypto failure";
        return rc;
    }
    /* A stand-in fails here, after the same work as a real credential. */
    if (s->fake) {
        *why = "unknown user";
        return -EACCES;
    }
    if (!match) {
        *why = "invalid proof";
        return -EACCES;
    }
    return 0;
}

static void answer_text(char *out, size_t *out_len, const char *text)
{
    size_t n = strlen(text);
    CHECK(n < SCRAM_SERVER_FINAL_MAX);
    memcpy(out, text, n + 1);
    *out_len = n;
}

int scram_server_client_final(struct scram_server *s, const char *msg, size_t len, char *out,
                              size_t cap, size_t *out_len)
{
    CHECK(cap >= SCRAM_SERVER_FINAL_MAX);
    DCHECK(scram_server_check(s));
    if (s->state != SCRAM_SERVER_CHALLENGED) {
        answer_text(out, out_len, "e=other-error");
        return server_fail(s, -ERR_INVALID, "out of order");
    }
    const char *why = NULL, *answer = "e=invalid-encoding";
    struct final_msg fm;
    uint8_t sig[SCRAM_KEY_MAX];
    int rc = msg_check(msg, len, &why);
    if (rc == 0)
        rc = parse_client_final(s, msg, len, &fm, &why, &answer);
    if (rc == 0) {
        rc = verify_proof(s, msg, &fm, sig, &why);
        answer = rc == -EACCES ? "e=invalid-proof" : rc == -EIO ? "e=other-error" : answer;
    }
    if (rc != 0) {
        OPENSSL_cleanse(sig, sizeof(sig));
        answer_text(out, out_len, answer);
        return server_fail(s, rc, why);
    }
    struct wbuf w = wbuf_init(out, SCRAM_SERVER_FINAL_MAX);
    put_str(&w, "v=");
    put_b64(&w, sig, scram_key_len(s->mech));
    CHECK(!w.over);
    *out_len = w.len;
    OPENSSL_cleanse(sig, sizeof(sig));
    server_wipe_keys(s);
    s->state = SCRAM_SERVER_DONE;
    DCHECK(scram_server_check(s));
    return 0;
}

bool scram_server_authenticated(const struct scram_server *s)
{
    return s->state == SCRAM_SERVER_DONE;
}

const char *scram_server_reason(const struct scram_server *s)
{
    return s->state == SCRAM_SERVER_FAILED ? s->reason : NULL;
}

void scram_server_destroy(struct scram_server *s)
{
    OPENSSL_cleanse(s, sizeof(*s));
}

/* ---- Client ------------------------------------------------------------------------------ */

void scram_client_init(struct scram_client *c, int mech)
{
    CHECK(scram_key_len(mech) != 0);
    memset(c, 0, sizeof(*c));
    c->state = SCRAM_CLIENT_START;
    c->mech = mech;
}

static int client_fail(struct scram_client *c, int rc, const char *why)
{
    c->state = SCRAM_CLIENT_FAILED;
    c->reason = why;
    OPENSSL_cleanse(c->server_signature, sizeof(c->server_signature));
    return rc;
}

int scram_client_first(struct scram_client *c, const char *user, size_t user_len, const char *nonce,
                       size_t nonce_len, char *out, size_t cap, size_t *out_len)
{
    CHECK(cap >= SCRAM_MSG_MAX + 1);
    out[0] = '\0';
    *out_len = 0;
    if (c->state != SCRAM_CLIENT_START)
        return client_fail(c, -ERR_INVALID, "out of order");
    if (user_len > SCRAM_USER_MAX || nonce_len > SCRAM_NONCE_MAX)
        return client_fail(c, -ERR_TOO_LARGE, "user name or nonce too long");
    if (!scram_user_valid(user, user_len) || !nonce_valid(nonce, nonce_len))
        return client_fail(c, -ERR_INVALID, "malformed user name or nonce");
    struct wbuf w = wbuf_init(out, SCRAM_MSG_MAX + 1);
    put_str(&w, "n,,n=");
    put_name(&w, user, user_len);
    put_str(&w, ",r=");
    put(&w, nonce, nonce_len);
    if (w.over) {
        out[0] = '\0';
        return client_fail(c, -ERR_TOO_LARGE, "client-first too long");
    }
    c->bare_len = w.len - 3;
    memcpy(c->bare, out + 3, c->bare_len + 1);
    c->cnonce_len = nonce_len;
    *out_len = w.len;
    c->state = SCRAM_CLIENT_SENT_FIRST;
    return 0;
}

/* server-first: "r=" our nonce extended, "s=" salt, "i=" count, extensions. */
static int parse_server_first(struct scram_client *c, const char *msg, size_t len, const char **why)
{
    struct fields f;
    fields_init(&f, msg, len);
    struct span field = {NULL, 0}, v;
    field_next(&f, &field);
    if (attr(field, 'm', &v)) {
        *why = "mandatory extension (m=)";
        return -ERR_UNSUPPORTED;
    }
    *why = "nonce (r=) missing or not an extension of ours";
    const char *cnonce = c->bare + c->bare_len - c->cnonce_len;
    if (!attr(field, 'r', &v) || v.len <= c->cnonce_len || v.len > 2 * SCRAM_NONCE_MAX ||
        memcmp(v.p, cnonce, c->cnonce_len) != 0 || !printable(v.p, v.len))
        return -ERR_INVALID;
    c->nonce_len = v.len;
    *why = "salt (s=) missing or malformed";
    if (!field_next(&f, &field) || !attr(field, 's', &v))
        return -ERR_INVALID;
    int rc = b64_decode(v.p, v.len, c->salt, sizeof(c->salt), &c->salt_len);
    if (rc != 0)
        return rc;
    if (c->salt_len == 0)
        return -ERR_INVALID;
    *why = "iteration count (i=) missing or malformed";
    if (!field_next(&f, &field) || !attr(field, 'i', &v) || !parse_count(v, &c->iterations))
        return -ERR_INVALID;
    *why = "iteration count out of range";
    if (!scram_iterations_valid(c->iterations))
        return -ERR_INVALID;
    return extensions_rest(&f, why);
}

int scram_client_server_first(struct scram_client *c, const char *msg, size_t len)
{
    if (c->state != SCRAM_CLIENT_SENT_FIRST)
        return client_fail(c, -ERR_INVALID, "out of order");
    const char *why = NULL;
    int rc = msg_check(msg, len, &why);
    if (rc == 0)
        rc = parse_server_first(c, msg, len, &why);
    if (rc != 0)
        return client_fail(c, rc, why);
    memcpy(c->first, msg, len);
    c->first[len] = '\0';
    c->first_len = len;
    c->state = SCRAM_CLIENT_GOT_FIRST;
    return 0;
}

/* The proof for AuthMessage = bare "," first "," without; keeps the expected
 * ServerSignature in c. */
static int client_proof(struct scram_client *c, const char *password, size_t password_len,
                        const char *without, size_t without_len, uint8_t *proof)
{
    size_t n = scram_key_len(c->mech);
    char auth[AUTH_MESSAGE_MAX];
    size_t auth_len =
        auth_message(auth, c->bare, c->bare_len, c->first, c->first_len, without, without_len);
    uint8_t salted[SCRAM_KEY_MAX], client_key[SCRAM_KEY_MAX], stored[SCRAM_KEY_MAX];
    uint8_t server_key[SCRAM_KEY_MAX], client_sig[SCRAM_KEY_MAX];
    int rc =
        salt_password(c->mech, password, password_len, c->salt, c->salt_len, c->iterations, salted);
    if (rc == 0)
        rc = derive_keys(c->mech, salted, client_key, stored, server_key);
    if (rc == 0)
        rc = hmac(c->mech, stored, n, auth, auth_len, client_sig);
    if (rc == 0)
        rc = hmac(c->mech, server_key, n, auth, auth_len, c->server_signature);
    for (size_t i = 0; rc == 0 && i < n; i++)
        proof[i] = client_key[i] ^ client_sig[i];
    OPENSSL_cleanse(salted, sizeof(salted));
    OPENSSL_cleanse(client_key, sizeof(client_key));
    OPENSSL_cleanse(stored, sizeof(stored));
    OPENSSL_cleanse(server_key, sizeof(server_key));
    OPENSSL_cleanse(client_sig, sizeof(client_sig));
    return rc;
}

int scram_client_final(struct scram_client *c, const char *password, size_t password_len, char *out,
                       size_t cap, size_t *out_len)
{
    CHECK(cap >= SCRAM_MSG_MAX + 1);
    out[0] = '\0';
    *out_len = 0;
    if (c->state != SCRAM_CLIENT_GOT_FIRST)
        return client_fail(c, -ERR_INVALID, "out of order");
    if (!password || password_len < 1 || password_len > SCRAM_PASSWORD_MAX)
        return client_fail(c, -ERR_INVALID, "password empty or too long");
    size_t n = scram_key_len(c->mech);
    struct wbuf w = wbuf_init(out, SCRAM_MSG_MAX + 1);
    put_str(&w, "c=biws,r=");
    put(&w, c->first + 2, c->nonce_len);
    size_t without_len = w.len;
    if (w.over || without_len + 3 + B64_ENCODED_LEN(n) > SCRAM_MSG_MAX) {
        out[0] = '\0';
        return client_fail(c, -ERR_TOO_LARGE, "client-final too long");
    }
    uint8_t proof[SCRAM_KEY_MAX];
    int rc = client_proof(c, password, password_len, out, without_len, proof);
    if (rc != 0) {
        out[0] = '\0';
        return client_fail(c, rc, "crypto failure");
    }
    put_str(&w, ",p=");
    put_b64(&w, proof, n);
    OPENSSL_cleanse(proof, sizeof(proof));
    CHECK(!w.over);
    *out_len = w.len;
    c->state = SCRAM_CLIENT_SENT_FINAL;
    return 0;
}

static int parse_server_final(struct scram_client *c, const char *msg, size_t len, const char **why)
{
    struct fields f;
    fields_init(&f, msg, len);
    struct span field = {NULL, 0}, v;
    field_next(&f, &field);
    if (attr(field, 'e', &v)) {
        *why = "the server refused (e=)";
        return -EACCES;
    }
    uint8_t sig[SCRAM_KEY_MAX];
    size_t sig_len = 0, n = scram_key_len(c->mech);
    *why = "signature (v=) missing or malformed";
    if (!attr(field, 'v', &v) || b64_decode(v.p, v.len, sig, sizeof(sig), &sig_len) != 0 ||
        sig_len != n)
        return -ERR_INVALID;
    int rc = extensions_rest(&f, why);
    if (rc != 0)
        return rc;
    if (CRYPTO_memcmp(sig, c->server_signature, n) != 0) {
        *why = "wrong server signature";
        return -EACCES;
    }
    return 0;
}

int scram_client_server_final(struct scram_client *c, const char *msg, size_t len)
{
    if (c->state != SCRAM_CLIENT_SENT_FINAL)
        return client_fail(c, -ERR_INVALID, "out of order");
    const char *why = NULL;
    int rc = msg_check(msg, len, &why);
    if (rc == 0)
        rc = parse_server_final(c, msg, len, &why);
    if (rc != 0)
        return client_fail(c, rc, why);
    OPENSSL_cleanse(c->server_signature, sizeof(c->server_signature));
    c->state = SCRAM_CLIENT_DONE;
    return 0;
}

const char *scram_client_reason(const struct scram_client *c)
{
    return c->state == SCRAM_CLIENT_FAILED ? c->reason : NULL;
}

void scram_client_destroy(struct scram_client *c)
{
    OPENSSL_cleanse(c, sizeof(*c));
}
