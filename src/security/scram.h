/* SCRAM (RFC 5802) over SHA-256 (RFC 7677) and SHA-512: Kafka's SASL mechanisms SCRAM-SHA-256
 * and SCRAM-SHA-512. Credentials, the server's side of the exchange as a state machine the
 * broker drives once per connection, and the client's side (tests, inter-broker
 * authentication). Pure: no sockets, clocks or logging; randomness only where a function says
 * so; no allocation.
 *
 * The exchange, with the call that handles each message:
 *   C->S client-first  n,,n=user,r=CNONCE                  scram_server_client_first
 *   S->C server-first  r=CNONCE SNONCE,s=SALT64,i=ITER      scram_server_first
 *   C->S client-final  c=biws,r=CNONCE SNONCE,p=PROOF64     scram_server_client_final
 *   S->C server-final  v=SIGNATURE64  (or e=invalid-proof)  (written by the same call)
 *
 * As Kafka does it, and unlike RFC 5802: names and passwords are used as the bytes they are
 * (no SASLprep); there is no channel binding (the -PLUS mechanisms are not offered, so a
 * client's "y" flag is accepted and "p=" is refused); the extension tokenauth=true (KIP-48
 * delegation tokens) is recognised in client-first, other extensions are ignored.
 *
 * Error codes (base/errors.h and errno):
 *   -ERR_INVALID      a malformed message, or an argument out of its documented range
 *   -ERR_TOO_LARGE    a message, name, nonce, salt or password over its limit below
 *   -ERR_UNSUPPORTED  something this module refuses: channel binding (p=), a mandatory
 *                     extension (m=)
 *   -EACCES           authentication failed: a wrong proof or password, any proof against a
 *                     stand-in credential (scram_credential_fake), an authzid that is not the
 *                     user, a server's e= or wrong signature
 *   -EIO              OpenSSL failed (random bytes, PBKDF2, HMAC, digest)
 * The broker answers every nonzero result of the server calls with SASL_AUTHENTICATION_FAILED.
 * The reason strings (scram_server_reason) are for the broker's log and never for the client:
 * one of them says "unknown user". */
#ifndef SP_SECURITY_SCRAM_H
#define SP_SECURITY_SCRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum scram_mech {
    SCRAM_SHA_256 = 1, /* Kafka's mechanism codes (AlterUserScramCredentials) */
    SCRAM_SHA_512 = 2,
};

#define SCRAM_KEY_MAX 64          /* digest bytes: 32 for SHA-256, 64 for SHA-512 */
#define SCRAM_SALT_MAX 64         /* salt bytes (the controller's CTL_SALT_MAX) */
#define SCRAM_SALT_DEFAULT_LEN 32 /* salt bytes to draw for a new credential */
#define SCRAM_ITER_MIN 4096       /* Kafka's bounds on the iteration count */
#define SCRAM_ITER_MAX 16384
#define SCRAM_USER_MAX 255        /* user name bytes, unescaped (the controller's CTL_USER_MAX) */
#define SCRAM_PASSWORD_MAX 1024   /* password bytes */
#define SCRAM_NONCE_MAX 255       /* bytes of the client's and of the server's part of a nonce */
#define SCRAM_NONCE_RANDOM_LEN 32 /* characters of scram_nonce_random's nonce (24 bytes) */
#define SCRAM_MSG_MAX 1024        /* bytes of any message, either direction, NUL not counted */
#define SCRAM_SERVER_FINAL_MAX 96 /* room for a server-final message, NUL included */

/* One user's credential for one mechanism: what the store keeps, never the password. */
struct scram_credential {
    int mech;                          /* SCRAM_SHA_256 or SCRAM_SHA_512 */
    int32_t iterations;                /* SCRAM_ITER_MIN..SCRAM_ITER_MAX */
    uint8_t salt[SCRAM_SALT_MAX];      /* salt[0, salt_len) */
    size_t salt_len;                   /* 1..SCRAM_SALT_MAX */
    uint8_t stored_key[SCRAM_KEY_MAX]; /* H(ClientKey): the first scram_key_len(mech) bytes */
    uint8_t server_key[SCRAM_KEY_MAX]; /* HMAC(SaltedPassword, "Server Key"): the same */
    bool fake;                         /* a stand-in for an unknown user: never authenticates */
};

/* Digest bytes of mech: 32, 64, or 0 for a code that is no mechanism. */
size_t scram_key_len(int mech);
/* "SCRAM-SHA-256" or "SCRAM-SHA-512"; NULL for a code that is no mechanism. */
const char *scram_mech_name(int mech);
/* The mechanism named name[0, len) (exact, as Kafka spells it), or -ERR_UNSUPPORTED. */
int scram_mech_parse(const char *name, size_t len);
bool scram_iterations_valid(int32_t iterations);
/* A user name as the store keeps it: 1..SCRAM_USER_MAX bytes, none below 0x20 nor 0x7f (the
 * same rule as the controller's ctl_user_name_valid). */
bool scram_user_valid(const char *name, size_t len);

/* Credentials. Each fills *out (all of it: unused key bytes are zero) and returns 0, or
 * -ERR_INVALID (unknown mech, iterations outside SCRAM_ITER_MIN..SCRAM_ITER_MAX, empty or
 * too long salt or password, a salted password that is not scram_key_len(mech) bytes) or
 * -EIO, leaving *out zeroed. The password and the salted password, and everything derived
 * from them but the two keys, are wiped (OPENSSL_cleanse) before the call returns; the
 * caller wipes its own copies. */

/* From a password: SaltedPassword = PBKDF2-HMAC(password, salt, iterations). salt comes from
 * the caller (scram_salt_random for a new credential) so that tests are deterministic. Costs
 * `iterations` HMACs: keep it off the broker's event loop. */
int scram_credential_from_password(struct scram_credential *out, int mech, const char *password,
                                   size_t password_len, const uint8_t *salt, size_t salt_len,
                                   int32_t iterations);
/* SaltedPassword = PBKDF2-HMAC(password, salt, iterations) into out (scram_key_len(mech)
 * bytes): what AlterUserScramCredentials carries, so that a client (`streampulse user`) sends
 * no password. Same limits and costs as scram_credential_from_password; returns 0,
 * -ERR_INVALID or -EIO. The caller wipes out. */
int scram_salted_password(int mech, const char *password, size_t password_len,
                          const uint8_t *salt, size_t salt_len, int32_t iterations, uint8_t *out);
/* From an already salted password, as AlterUserScramCredentials (API 51) carries it. Cheap. */
int scram_credential_from_salted(struct scram_credential *out, int mech,
                                 const uint8_t *salted_password, size_t salted_len,
                                 const uint8_t *salt, size_t salt_len, int32_t iterations);
/* A stand-in for a user the store does not have, so that the exchange goes on as for a real
 * user and only fails at client-final (-EACCES, the same answer as a wrong password): the
 * broker must not reveal which users exist. The salt (SCRAM_SALT_DEFAULT_LEN bytes) and the
 * keys are HMACs of a per-process secret over mech and the name, so one process gives one
 * name the same salt every time; pass the iteration count real credentials are made with.
 * The secret is drawn with RAND_bytes on first use, once, under pthread_once (no explicit
 * initialisation; thread-safe); if that draw failed, every call returns -EIO. Returns 0,
 * -ERR_INVALID (mech, iterations, or a name scram_user_valid refuses) or -EIO. */
int scram_credential_fake(struct scram_credential *out, int mech, const char *user, size_t user_len,
                          int32_t iterations);
/* len (<= SCRAM_SALT_MAX, CHECKed) random bytes (RAND_bytes) into salt. Returns 0 or -EIO. */
int scram_salt_random(uint8_t *salt, size_t len);
/* A server (or client) nonce: 24 random bytes, base64-encoded (SCRAM_NONCE_RANDOM_LEN printable
 * characters, no ','), NUL-terminated in out. cap >= SCRAM_NONCE_RANDOM_LEN + 1 (CHECKed).
 * Returns 0 or -EIO. */
int scram_nonce_random(char *out, size_t cap);

/* Server side. States, and the call that leaves each:
 *   START       scram_server_client_first  -> LOOKUP (the broker looks the user up)
 *   LOOKUP      scram_server_first         -> CHALLENGED
 *   CHALLENGED  scram_server_client_final  -> DONE (authenticated)
 * Any error, or a call out of this order, moves to FAILED for good (-ERR_INVALID "out of
 * order" from then on). The struct is plain memory the broker may embed or allocate (3.3 KB
 * on x86-64); read it only through the functions below. It holds copies of the credential's
 * keys from server-first until client-final: scram_server_destroy wipes them if the
 * connection goes before. */
enum scram_server_state {
    SCRAM_SERVER_START,
    SCRAM_SERVER_LOOKUP,
    SCRAM_SERVER_CHALLENGED,
    SCRAM_SERVER_DONE,
    SCRAM_SERVER_FAILED,
};

#define SCRAM_GS2_MAX (2 + 2 + 3 * SCRAM_USER_MAX + 1) /* "y,a=" escaped-authzid "," */

struct scram_server {
    enum scram_server_state state;
    int mech;
    bool token_auth;               /* client-first had tokenauth=true */
    bool fake;                     /* the credential was a stand-in */
    const char *reason;            /* why it failed (static text), or NULL */
    char user[SCRAM_USER_MAX + 1]; /* unescaped, NUL-terminated */
    size_t user_len;
    char gs2[SCRAM_GS2_MAX + 1]; /* the gs2 header as received ("n,," ...) */
    size_t gs2_len;
    char bare[SCRAM_MSG_MAX + 1]; /* client-first-message-bare as received */
    size_t bare_len;
    size_t cnonce_off; /* the client nonce: bare[cnonce_off, +cnonce_len) */
    size_t cnonce_len;
    char first[SCRAM_MSG_MAX + 1]; /* server-first as sent; nonce at first[2, 2+nonce_len) */
    size_t first_len;
    size_t nonce_len;                  /* client nonce + server nonce */
    uint8_t stored_key[SCRAM_KEY_MAX]; /* the credential's, CHALLENGED only; zero otherwise */
    uint8_t server_key[SCRAM_KEY_MAX];
};

/* Starts an exchange for mech (SCRAM_SHA_256 or SCRAM_SHA_512: CHECKed, the broker picked it
 * from the handshake). */
void scram_server_init(struct scram_server *s, int mech);
/* Parses client-first msg[0, len) (untrusted: at most SCRAM_MSG_MAX bytes, no NUL inside):
 * gs2 header "n,," or "y,," with an optional "a=authzid" that must equal the user name,
 * "n=" name (=2C for ',', =3D for '=', no other escape; scram_user_valid once unescaped),
 * "r=" nonce (1..SCRAM_NONCE_MAX printable ASCII characters but ','), then optional
 * extensions NAME=VALUE (NAME letters, VALUE non-empty). Returns 0 (state LOOKUP: read the
 * name with scram_server_user), -ERR_INVALID, -ERR_TOO_LARGE, -ERR_UNSUPPORTED (p= channel
 * binding, m= extension) or -EACCES (authzid differs from the name). */
int scram_server_client_first(struct scram_server *s, const char *msg, size_t len);
/* The user name client-first gave (NUL-terminated; *len its length if len is not NULL), in
 * states LOOKUP, CHALLENGED and DONE; NULL in START and FAILED. Authenticated only in DONE.
 * Valid while s is. */
const char *scram_server_user(const struct scram_server *s, size_t *len);
/* Whether client-first carried tokenauth=true: the name is then a delegation token id and the
 * credential the token's. */
bool scram_server_token_auth(const struct scram_server *s);
/* Writes server-first for cred (not NULL: the user's, or scram_credential_fake's for an
 * unknown user; its mech must be s's) and the server's part of the nonce, server_nonce[0,
 * nonce_len) (1..SCRAM_NONCE_MAX printable characters but ','; scram_nonce_random gives one),
 * into out (NUL-terminated, *out_len its length; cap >= SCRAM_MSG_MAX + 1, CHECKed). Copies
 * the keys it needs, so cred may go afterwards. Returns 0 (state CHALLENGED) or -ERR_INVALID. */
int scram_server_first(struct scram_server *s, const struct scram_credential *cred,
                       const char *server_nonce, size_t nonce_len, char *out, size_t cap,
                       size_t *out_len);
/* Parses client-final msg[0, len) (untrusted, as client-first): "c=" the base64 of the gs2
 * header exactly as client-first sent it, "r=" the whole nonce of server-first, optional
 * extensions (the nonce may also be the client nonce followed by the whole nonce, as
 * librdkafka 2.0.2 sends it and Kafka accepts), and last "p=" the base64 proof of scram_key_len
 * bytes; then checks the proof in
 * constant time. Writes the server-final answer into out (cap >= SCRAM_SERVER_FINAL_MAX,
 * CHECKed; NUL-terminated, *out_len its length):
 *   0              "v=" base64 ServerSignature; state DONE, the user authenticated
 *   -EACCES        "e=invalid-proof" (wrong proof, or a stand-in credential)
 *   -ERR_INVALID   "e=channel-bindings-dont-match" (c=), "e=other-error" (r= is not the
 *                  nonce), "e=invalid-encoding" (anything else malformed)
 *   -ERR_TOO_LARGE "e=invalid-encoding"
 *   -EIO           "e=other-error" (OpenSSL failed)
 *   out of order   -ERR_INVALID, "e=other-error"
 * The broker may send out to the client as the last SaslAuthenticate bytes or, as Kafka does
 * on failure, send an error code and no bytes. The keys are wiped on every return. */
int scram_server_client_final(struct scram_server *s, const char *msg, size_t len, char *out,
                              size_t cap, size_t *out_len);
/* Whether the exchange ended with the user authenticated (state DONE). */
bool scram_server_authenticated(const struct scram_server *s);
/* Why the exchange failed, for the broker's log only (static text; "unknown user" for a
 * stand-in credential), or NULL when it has not failed. */
const char *scram_server_reason(const struct scram_server *s);
/* Wipes s (keys included). s may be initialised again. */
void scram_server_destroy(struct scram_server *s);
/* The invariants of s (see scram.c); every public server call DCHECKs them on entry and exit. */
bool scram_server_check(const struct scram_server *s);

/* Client side. States: START -scram_client_first-> SENT_FIRST -scram_client_server_first->
 * GOT_FIRST -scram_client_final-> SENT_FINAL -scram_client_server_final-> DONE; any error or a
 * call out of order -> FAILED for good. */
enum scram_client_state {
    SCRAM_CLIENT_START,
    SCRAM_CLIENT_SENT_FIRST,
    SCRAM_CLIENT_GOT_FIRST,
    SCRAM_CLIENT_SENT_FINAL,
    SCRAM_CLIENT_DONE,
    SCRAM_CLIENT_FAILED,
};

struct scram_client {
    enum scram_client_state state;
    int mech;
    const char *reason;           /* why it failed (static text), or NULL */
    char bare[SCRAM_MSG_MAX + 1]; /* client-first-message-bare as sent */
    size_t bare_len;
    size_t cnonce_len;             /* the client nonce ends bare */
    char first[SCRAM_MSG_MAX + 1]; /* server-first as received */
    size_t first_len;
    size_t nonce_len; /* the whole nonce, first[2, 2+nonce_len) */
    uint8_t salt[SCRAM_SALT_MAX];
    size_t salt_len;
    int32_t iterations;
    uint8_t server_signature[SCRAM_KEY_MAX]; /* expected in server-final (SENT_FINAL) */
};

void scram_client_init(struct scram_client *c, int mech); /* mech CHECKed as for the server */
/* Writes client-first "n,,n=NAME,r=NONCE" for user[0, user_len) (scram_user_valid; escaped
 * here) and nonce[0, nonce_len) (1..SCRAM_NONCE_MAX printable characters but ','; see
 * scram_nonce_random) into out (cap >= SCRAM_MSG_MAX + 1, CHECKed; NUL-terminated, *out_len its
 * length). Returns 0, -ERR_INVALID or -ERR_TOO_LARGE. */
int scram_client_first(struct scram_client *c, const char *user, size_t user_len, const char *nonce,
                       size_t nonce_len, char *out, size_t cap, size_t *out_len);
/* Parses server-first msg[0, len) strictly: "r=" a nonce that starts with ours and is longer,
 * "s=" a base64 salt of 1..SCRAM_SALT_MAX bytes, "i=" a decimal count (no sign, no leading
 * zero) within SCRAM_ITER_MIN..SCRAM_ITER_MAX (a client that took more would let a server make
 * it burn CPU; fewer would weaken the exchange), optional extensions. Returns 0,
 * -ERR_INVALID, -ERR_TOO_LARGE or -ERR_UNSUPPORTED (m=). */
int scram_client_server_first(struct scram_client *c, const char *msg, size_t len);
/* Computes the proof from password[0, password_len) (1..SCRAM_PASSWORD_MAX bytes; PBKDF2 with
 * server-first's salt and count: keep it off an event loop) and writes client-final
 * "c=biws,r=NONCE,p=PROOF" into out (cap >= SCRAM_MSG_MAX + 1, CHECKed; NUL-terminated).
 * Keeps only the ServerSignature it expects; the rest is wiped. Returns 0, -ERR_INVALID,
 * -ERR_TOO_LARGE (the message would exceed SCRAM_MSG_MAX) or -EIO. */
int scram_client_final(struct scram_client *c, const char *password, size_t password_len, char *out,
                       size_t cap, size_t *out_len);
/* Checks server-final msg[0, len): "v=" the expected ServerSignature (constant-time compare)
 * and optional extensions. Returns 0 (state DONE: the server knew the credential), -EACCES
 * (a wrong signature, or the server's "e=" error), -ERR_INVALID or -ERR_TOO_LARGE. */
int scram_client_server_final(struct scram_client *c, const char *msg, size_t len);
/* Why the exchange failed (static text), or NULL. */
const char *scram_client_reason(const struct scram_client *c);
/* Wipes c. */
void scram_client_destroy(struct scram_client *c);

#endif
