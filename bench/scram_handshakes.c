/* scram_handshakes: how many SCRAM authentications a broker's SASL_PLAINTEXT listener completes
 * per second, each on a new connection, as a client that connects, logs in and leaves.
 *
 *   build/bench/scram_handshakes -b HOST:PORT -u USER --password-stdin
 *       [--mechanism SCRAM-SHA-256|SCRAM-SHA-512] [--seconds D | --handshakes N]
 *       [--concurrency C] [--timeout-ms T]
 *
 * One handshake: connect (TCP_NODELAY); SaslHandshake v1 naming the mechanism; SaslAuthenticate
 * v1 carrying client-first, answered by server-first; SaslAuthenticate v1 carrying client-final
 * with the proof, answered by server-final, whose server signature is checked; close. SCRAM as
 * RFC 5802 and RFC 7677 define it and Kafka uses it: no SASLprep, no channel binding ("n,,").
 *
 * The first handshake runs alone and derives the salted password (PBKDF2 with the salt and the
 * iteration count of its server-first), which is then kept, as clients that cache it do: the
 * figure is the broker's work, not the client's PBKDF2. Then C threads (default 1, at most 64)
 * each run handshakes back to back, one connection at a time, for D seconds (default 3) or until
 * N handshakes (after the first) are done. A later server-first with another salt or count than
 * the first's fails the run (the credential changed under it).
 *
 * Prints a line for people on stderr and one for scripts on stdout:
 *   scram_handshakes mechanism=M concurrency=C handshakes=N secs=F handshakes_per_s=F
 *     p50_ms=F p99_ms=F max_ms=F first_ms=F pbkdf2_ms=F iterations=I client_cpu_s=F
 * Latencies run from connect() to the checked server signature. first_ms is the first
 * handshake's, its PBKDF2 (pbkdf2_ms) included; the rest of the line leaves it out. secs is the
 * wall time of the threads' run and client_cpu_s this process's CPU time (user + system) in it.
 *
 * Exit 1 at the first failure, with the reason on stderr: no connection, a Kafka error code (a
 * listener without SASL answers ILLEGAL_SASL_STATE, a wrong password SASL_AUTHENTICATION_FAILED),
 * an answer that is malformed or not what SCRAM expects, a wrong server signature, no answer
 * within T ms (default 10000). Exit 2 on a usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#define KEY_MAX 64        /* digest bytes: 32 for SHA-256, 64 for SHA-512 */
#define SALT_MAX 128      /* salt bytes we take from a server-first */
#define USER_MAX 255      /* user name bytes */
#define PASSWORD_MAX 1024 /* password bytes */
#define MSG_MAX 2048      /* bytes of a SCRAM message, either direction */
#define FRAME_MAX 65536   /* bytes of a response frame */
#define ITER_MIN 4096     /* Kafka's bounds on the iteration count: a client that took more */
#define ITER_MAX 16384    /* would let a server make it burn CPU */
#define CNONCE_RAW 18     /* random bytes of the client nonce: 24 base64 characters, no '=' */
#define CONCURRENCY_MAX 64
#define CLIENT_ID "scram_handshakes"

enum { API_SASL_HANDSHAKE = 17, API_SASL_AUTHENTICATE = 36 };

struct mech {
    const char *name;    /* as SaslHandshake names it */
    const char *md_name; /* the digest, as OpenSSL fetches it */
    size_t key_len;      /* its output bytes */
};

static const struct mech mechs[] = {
    {"SCRAM-SHA-256", "SHA256", 32},
    {"SCRAM-SHA-512", "SHA512", 64},
};

/* What every thread reads; written only before the threads start, but for the atomics. */
struct shared {
    struct sockaddr_storage addr; /* the listener */
    socklen_t addr_len;
    const struct mech *mech;
    char user_esc[3 * USER_MAX + 1]; /* the name as client-first carries it (=2C, =3D) */
    char password[PASSWORD_MAX + 2]; /* room for the newline fgets keeps */
    size_t password_len;
    int timeout_ms;         /* per connect, send and receive */
    bool have_salted;       /* the first handshake has derived salted[] */
    uint8_t salt[SALT_MAX]; /* the first server-first's salt, salt[0, salt_len) */
    size_t salt_len;
    int32_t iterations;      /* and its iteration count */
    uint8_t salted[KEY_MAX]; /* SaltedPassword, mech->key_len bytes */
    double pbkdf2_ms;        /* what deriving it took */
    int64_t deadline_ns;     /* threads start no handshake after this (0: none) */
    atomic_long remaining;   /* handshakes the threads may still start */
    atomic_bool stop;        /* a thread failed: the others stop too */
};

/* One thread's state. */
struct worker {
    pthread_t thread;
    struct shared *sh;
    EVP_MAC_CTX *hmac; /* HMAC over mech's digest, re-keyed for each use */
    EVP_MD *md;        /* mech's digest */
    int32_t corr;      /* the last correlation id sent */
    double *lat_ms;    /* lat_ms[0, n): each handshake's latency */
    size_t n;
    size_t cap;
    char err[512]; /* why it failed ("" if it did not) */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

__attribute__((format(printf, 2, 3))) static int fail(struct worker *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof(w->err), fmt, ap);
    va_end(ap);
    return -1;
}

static const char *kafka_error_name(int code)
{
    switch (code) {
    case 33:
        return "UNSUPPORTED_SASL_MECHANISM";
    case 34:
        return "ILLEGAL_SASL_STATE";
    case 35:
        return "UNSUPPORTED_VERSION";
    case 58:
        return "SASL_AUTHENTICATION_FAILED";
    default:
        return "error";
    }
}

/* ---- crypto ---- */

static int crypto_open(struct worker *w)
{
    const struct mech *m = w->sh->mech;
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    w->md = EVP_MD_fetch(NULL, m->md_name, NULL);
    w->hmac = mac ? EVP_MAC_CTX_new(mac) : NULL;
    EVP_MAC_free(mac); /* the context holds its own reference */
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)m->md_name, 0),
        OSSL_PARAM_construct_end(),
    };
    /* the digest is set once: setting it again at each init would fetch it again */
    if (!w->md || !w->hmac || !EVP_MAC_CTX_set_params(w->hmac, params))
        return fail(w, "OpenSSL: cannot set up HMAC-%s", m->md_name);
    return 0;
}

static void crypto_close(struct worker *w)
{
    EVP_MAC_CTX_free(w->hmac);
    EVP_MD_free(w->md);
    w->hmac = NULL;
    w->md = NULL;
}

static int hmac(struct worker *w, const uint8_t *key, size_t key_len, const void *data, size_t len,
                uint8_t *out)
{
    size_t out_len = 0;
    if (!EVP_MAC_init(w->hmac, key, key_len, NULL) || !EVP_MAC_update(w->hmac, data, len) ||
        !EVP_MAC_final(w->hmac, out, &out_len, KEY_MAX) || out_len != w->sh->mech->key_len)
        return fail(w, "OpenSSL: HMAC failed");
    return 0;
}

static int digest(struct worker *w, const uint8_t *data, size_t len, uint8_t *out)
{
    unsigned out_len = 0;
    if (!EVP_Digest(data, len, out, &out_len, w->md, NULL) || out_len != w->sh->mech->key_len)
        return fail(w, "OpenSSL: digest failed");
    return 0;
}

/* base64 of in[0, len) into out (cap >= 4 * ceil(len / 3) + 1), NUL-terminated. */
static void b64_encode(const uint8_t *in, size_t len, char *out)
{
    EVP_EncodeBlock((unsigned char *)out, in, (int)len);
}

/* Decodes in[0, len) (padded base64, nothing else) into out (cap bytes); returns the byte
 * count, or -1 if it is not base64 or does not fit. */
static int b64_decode(const char *in, size_t len, uint8_t *out, size_t cap)
{
    if (len == 0 || len % 4 != 0 || len / 4 * 3 > cap)
        return -1;
    size_t pad = in[len - 1] == '=' ? (in[len - 2] == '=' ? 2 : 1) : 0;
    for (size_t i = 0; i < len - pad; i++)
        if (in[i] == '=')
            return -1;
    int n = EVP_DecodeBlock(out, (const unsigned char *)in, (int)len);
    return n < 0 ? -1 : n - (int)pad;
}

/* ---- the wire ---- */

/* A request being built: the size prefix is filled in by send_request. */
struct wbuf {
    uint8_t b[MSG_MAX + 256];
    size_t n;
};

static void put(struct wbuf *w, const void *p, size_t len)
{
    if (w->n + len <= sizeof(w->b))
        memcpy(w->b + w->n, p, len);
    w->n += len; /* an overflow is caught by send_request */
}

static void put_i16(struct wbuf *w, int16_t v)
{
    uint8_t b[2] = {(uint8_t)((uint16_t)v >> 8), (uint8_t)v};
    put(w, b, 2);
}

static void put_i32(struct wbuf *w, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t b[4] = {(uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u};
    put(w, b, 4);
}

static void put_str(struct wbuf *w, const char *s)
{
    put_i16(w, (int16_t)strlen(s));
    put(w, s, strlen(s));
}

/* Starts a request: the size placeholder and a v1 request header. */
static void begin_request(struct worker *w, struct wbuf *b, int16_t api_key, int16_t version)
{
    b->n = 0;
    put_i32(b, 0);
    put_i16(b, api_key);
    put_i16(b, version);
    put_i32(b, ++w->corr);
    put_str(b, CLIENT_ID);
}

static int send_all(struct worker *w, int fd, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return fail(w, "send: %s", errno == EAGAIN ? "timed out" : strerror(errno));
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_request(struct worker *w, int fd, struct wbuf *b)
{
    if (b->n > sizeof(b->b))
        return fail(w, "a request of %zu bytes is over this client's limit", b->n);
    size_t n = b->n;
    b->n = 0;
    put_i32(b, (int32_t)(n - 4));
    b->n = n;
    return send_all(w, fd, b->b, b->n);
}

static int recv_all(struct worker *w, int fd, uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t n = recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return fail(w, "no answer within %d ms", w->sh->timeout_ms);
        if (n < 0)
            return fail(w, "recv: %s", strerror(errno));
        if (n == 0)
            return fail(w, "the broker closed the connection");
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* A bounds-checked reader whose error is sticky: once a read runs short, every later read
 * yields zero and err stays set; read the whole answer, then check once. */
struct rd {
    const uint8_t *p;
    size_t len;
    size_t off;
    bool err;
};

static const uint8_t *take(struct rd *r, size_t n)
{
    if (r->err || r->len - r->off < n) {
        r->err = true;
        return NULL;
    }
    r->off += n;
    return r->p + r->off - n;
}

static int16_t rd_i16(struct rd *r)
{
    const uint8_t *b = take(r, 2);
    return b ? (int16_t)(uint16_t)((unsigned)b[0] << 8 | b[1]) : 0;
}

static int32_t rd_i32(struct rd *r)
{
    const uint8_t *b = take(r, 4);
    return b ? (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3])
             : 0;
}

static void rd_skip(struct rd *r, size_t n)
{
    take(r, n);
}

/* A string or bytes field of n bytes (n < 0: null, as *len); its bytes, or NULL. */
static const char *rd_blob(struct rd *r, int32_t n, int32_t *len)
{
    *len = n;
    if (n < 0 || r->err)
        return NULL;
    return (const char *)take(r, (size_t)n);
}

/* Reads one response frame into buf (FRAME_MAX bytes) and checks its correlation id: *r then
 * reads the body after the v0 response header. */
static int recv_response(struct worker *w, int fd, uint8_t *buf, struct rd *r)
{
    uint8_t hdr[4];
    if (recv_all(w, fd, hdr, 4) != 0)
        return -1;
    struct rd h = {hdr, 4, 0, false};
    int32_t size = rd_i32(&h);
    if (size < 4 || size > FRAME_MAX)
        return fail(w, "an answer of %" PRId32 " bytes (this client takes 4..%d)", size, FRAME_MAX);
    if (recv_all(w, fd, buf, (size_t)size) != 0)
        return -1;
    *r = (struct rd){buf, (size_t)size, 0, false};
    int32_t corr = rd_i32(r);
    if (corr != w->corr)
        return fail(w, "an answer with correlation id %" PRId32 ", expected %" PRId32, corr,
                    w->corr);
    return 0;
}

static int sasl_handshake(struct worker *w, int fd, uint8_t *buf)
{
    struct wbuf b;
    begin_request(w, &b, API_SASL_HANDSHAKE, 1);
    put_str(&b, w->sh->mech->name);
    struct rd r;
    if (send_request(w, fd, &b) != 0 || recv_response(w, fd, buf, &r) != 0)
        return -1;
    int16_t code = rd_i16(&r);
    int32_t n = rd_i32(&r);
    char offered[256] = "";
    size_t used = 0;
    for (int32_t i = 0; i < n && !r.err; i++) {
        int32_t len;
        const char *s = rd_blob(&r, rd_i16(&r), &len);
        if (s && used < sizeof(offered))
            used += (size_t)snprintf(offered + used, sizeof(offered) - used, "%s%.*s", i ? "," : "",
                                     (int)len, s);
    }
    if (r.err || r.off != r.len)
        return fail(w, "SaslHandshake: a malformed answer (%zu bytes)", r.len);
    if (code != 0)
        return fail(w, "SaslHandshake %s: %s (%d); mechanisms offered: %s%s", w->sh->mech->name,
                    kafka_error_name(code), code, n > 0 ? offered : "none",
                    code == 34 ? " (is it a SASL_PLAINTEXT listener?)" : "");
    return 0;
}

/* One SaslAuthenticate v1 round trip: sends tok[0, len), and copies the answer token into out
 * (MSG_MAX + 1 bytes, NUL-terminated), *out_len its length. step names it in errors. */
static int sasl_authenticate(struct worker *w, int fd, uint8_t *buf, const char *step,
                             const char *tok, size_t len, char *out, size_t *out_len)
{
    struct wbuf b;
    begin_request(w, &b, API_SASL_AUTHENTICATE, 1);
    put_i32(&b, (int32_t)len);
    put(&b, tok, len);
    struct rd r;
    if (send_request(w, fd, &b) != 0 || recv_response(w, fd, buf, &r) != 0)
        return -1;
    int16_t code = rd_i16(&r);
    int32_t msg_len, tok_len;
    const char *msg = rd_blob(&r, rd_i16(&r), &msg_len);
    const char *ans = rd_blob(&r, rd_i32(&r), &tok_len);
    rd_skip(&r, 8); /* session_lifetime_ms */
    if (r.err || r.off != r.len)
        return fail(w, "SaslAuthenticate (%s): a malformed answer (%zu bytes)", step, r.len);
    if (code != 0)
        return fail(w, "SaslAuthenticate (%s): %s (%d): %.*s", step, kafka_error_name(code), code,
                    msg ? (int)msg_len : 6, msg ? msg : "(none)");
    if (!ans || tok_len == 0 || tok_len > MSG_MAX)
        return fail(w, "SaslAuthenticate (%s): an answer token of %" PRId32 " bytes", step,
                    tok_len);
    if (memchr(ans, '\0', (size_t)tok_len))
        return fail(w, "SaslAuthenticate (%s): a NUL byte in the answer token", step);
    memcpy(out, ans, (size_t)tok_len);
    out[tok_len] = '\0';
    *out_len = (size_t)tok_len;
    return 0;
}

/* ---- SCRAM ---- */

/* The value of attribute name ('r', 's', ...) at *p in msg, as "n=value" followed by ',' or
 * the end: *val and *len, and *p moves past it. false if *p does not start so. */
static bool attr(const char **p, char name, const char **val, size_t *len)
{
    const char *s = *p;
    if (s[0] != name || s[1] != '=')
        return false;
    *val = s + 2;
    const char *end = strchr(*val, ',');
    *len = end ? (size_t)(end - *val) : strlen(*val);
    *p = *val + *len + (end ? 1 : 0);
    return true;
}

/* server-first "r=NONCE,s=SALT,i=ITER[,ext...]": the whole nonce, the salt and the count. */
static int parse_server_first(struct worker *w, const char *msg, const char *cnonce,
                              const char **nonce, size_t *nonce_len, uint8_t *salt,
                              size_t *salt_len, int32_t *iterations)
{
    const char *p = msg, *s, *it;
    size_t s_len, it_len, cn_len = strlen(cnonce);
    if (!attr(&p, 'r', nonce, nonce_len) || !attr(&p, 's', &s, &s_len) ||
        !attr(&p, 'i', &it, &it_len))
        return fail(w, "server-first is not r=...,s=...,i=...: \"%.200s\"", msg);
    if (*nonce_len <= cn_len || memcmp(*nonce, cnonce, cn_len) != 0)
        return fail(w, "server-first's nonce does not extend ours: \"%.200s\"", msg);
    int n = b64_decode(s, s_len, salt, SALT_MAX);
    if (n <= 0)
        return fail(w, "server-first's salt is not base64 of 1..%d bytes: \"%.200s\"", SALT_MAX,
                    msg);
    *salt_len = (size_t)n;
    long v = 0;
    for (size_t i = 0; i < it_len && v <= ITER_MAX; i++) {
        if (it[i] < '0' || it[i] > '9' || (i == 0 && it[i] == '0'))
            return fail(w, "server-first's iteration count is not a number: \"%.200s\"", msg);
        v = v * 10 + (it[i] - '0');
    }
    if (it_len == 0 || v < ITER_MIN || v > ITER_MAX)
        return fail(w, "server-first's iteration count is outside %d..%d: \"%.200s\"", ITER_MIN,
                    ITER_MAX, msg);
    *iterations = (int32_t)v;
    return 0;
}

/* The salted password for this salt and count: derived by the first handshake (which alone
 * runs then), and the same one for every later handshake. */
static int salted_password(struct worker *w, const uint8_t *salt, size_t salt_len,
                           int32_t iterations)
{
    struct shared *sh = w->sh;
    if (sh->have_salted) {
        if (salt_len != sh->salt_len || memcmp(salt, sh->salt, salt_len) != 0 ||
            iterations != sh->iterations)
            return fail(w, "server-first gives another salt or iteration count than the first "
                           "handshake's: the credential changed during the run");
        return 0;
    }
    int64_t t0 = now_ns();
    if (!PKCS5_PBKDF2_HMAC(sh->password, (int)sh->password_len, salt, (int)salt_len, iterations,
                           w->md, (int)sh->mech->key_len, sh->salted))
        return fail(w, "OpenSSL: PBKDF2 failed");
    sh->pbkdf2_ms = (double)(now_ns() - t0) / 1e6;
    memcpy(sh->salt, salt, salt_len);
    sh->salt_len = salt_len;
    sh->iterations = iterations;
    sh->have_salted = true;
    return 0;
}

/* ClientProof and the ServerSignature to expect, for auth_msg (RFC 5802 section 3). */
static int proof_and_signature(struct worker *w, const char *auth_msg, size_t auth_len,
                               uint8_t *proof, uint8_t *server_sig)
{
    const struct shared *sh = w->sh;
    size_t k = sh->mech->key_len;
    uint8_t client_key[KEY_MAX], stored_key[KEY_MAX], client_sig[KEY_MAX], server_key[KEY_MAX];
    int rc = -1;
    if (hmac(w, sh->salted, k, "Client Key", 10, client_key) != 0 ||
        digest(w, client_key, k, stored_key) != 0 ||
        hmac(w, stored_key, k, auth_msg, auth_len, client_sig) != 0 ||
        hmac(w, sh->salted, k, "Server Key", 10, server_key) != 0 ||
        hmac(w, server_key, k, auth_msg, auth_len, server_sig) != 0)
        goto out_wipe;
    for (size_t i = 0; i < k; i++)
        proof[i] = client_key[i] ^ client_sig[i];
    rc = 0;
out_wipe:
    OPENSSL_cleanse(client_key, sizeof(client_key));
    OPENSSL_cleanse(stored_key, sizeof(stored_key));
    OPENSSL_cleanse(client_sig, sizeof(client_sig));
    OPENSSL_cleanse(server_key, sizeof(server_key));
    return rc;
}

/* server-final "v=SIGNATURE[,ext...]" must carry sig; "e=..." is the server's refusal. */
static int check_server_final(struct worker *w, const char *msg, const uint8_t *sig)
{
    const char *p = msg, *v;
    size_t v_len;
    uint8_t got[KEY_MAX + 3];
    if (attr(&p, 'e', &v, &v_len))
        return fail(w, "server-final refuses: \"%.200s\"", msg);
    if (!attr(&p, 'v', &v, &v_len))
        return fail(w, "server-final is not v=...: \"%.200s\"", msg);
    int n = b64_decode(v, v_len, got, sizeof(got));
    if (n != (int)w->sh->mech->key_len || CRYPTO_memcmp(got, sig, (size_t)n) != 0)
        return fail(w,
                    "server-final carries a wrong server signature: \"%.200s\" (the broker "
                    "does not know the credential, or computes it wrongly)",
                    msg);
    return 0;
}

/* The three round trips on a connected fd. */
static int authenticate(struct worker *w, int fd)
{
    const struct shared *sh = w->sh;
    size_t k = sh->mech->key_len;
    uint8_t buf[FRAME_MAX], raw[CNONCE_RAW], salt[SALT_MAX], proof[KEY_MAX], sig[KEY_MAX];
    char cnonce[CNONCE_RAW / 3 * 4 + 1], first[MSG_MAX + 1], final[MSG_MAX + 1];
    char msg[MSG_MAX + 1], auth[3 * MSG_MAX + 3], proof64[KEY_MAX / 3 * 4 + 5];
    size_t first_len, final_len, len = 0, salt_len = 0, nonce_len = 0;
    const char *nonce = NULL;
    int32_t iterations = 0;
    if (sasl_handshake(w, fd, buf) != 0)
        return -1;
    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return fail(w, "OpenSSL: RAND_bytes failed");
    b64_encode(raw, sizeof(raw), cnonce);
    /* client-first: the gs2 header "n,," then client-first-bare at first + 3 */
    first_len = (size_t)snprintf(first, sizeof(first), "n,,n=%s,r=%s", sh->user_esc, cnonce);
    if (sasl_authenticate(w, fd, buf, "client-first", first, first_len, msg, &len) != 0 ||
        parse_server_first(w, msg, cnonce, &nonce, &nonce_len, salt, &salt_len, &iterations) != 0 ||
        salted_password(w, salt, salt_len, iterations) != 0)
        return -1;
    /* client-final-without-proof; AuthMessage = bare "," server-first "," that */
    final_len = (size_t)snprintf(final, sizeof(final), "c=biws,r=%.*s", (int)nonce_len, nonce);
    size_t auth_len = (size_t)snprintf(auth, sizeof(auth), "%s,%s,%s", first + 3, msg, final);
    if (final_len >= sizeof(final) - sizeof(proof64) - 3 || auth_len >= sizeof(auth))
        return fail(w, "server-first is too long: %zu bytes", len);
    if (proof_and_signature(w, auth, auth_len, proof, sig) != 0)
        return -1;
    b64_encode(proof, k, proof64);
    final_len += (size_t)snprintf(final + final_len, sizeof(final) - final_len, ",p=%s", proof64);
    if (sasl_authenticate(w, fd, buf, "client-final", final, final_len, msg, &len) != 0)
        return -1;
    return check_server_final(w, msg, sig);
}

/* One handshake on a new connection; *ms its latency. */
static int handshake(struct worker *w, double *ms)
{
    const struct shared *sh = w->sh;
    struct timeval tv = {sh->timeout_ms / 1000, (sh->timeout_ms % 1000) * 1000};
    int one = 1;
    int64_t t0 = now_ns();
    int fd = socket(sh->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return fail(w, "socket: %s", strerror(errno));
    int rc = -1;
    /* SO_SNDTIMEO bounds connect() too */
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
        fail(w, "setsockopt: %s", strerror(errno));
        goto out_close;
    }
    if (connect(fd, (const struct sockaddr *)&sh->addr, sh->addr_len) != 0) {
        fail(w, "connect: %s", errno == EINPROGRESS ? "timed out" : strerror(errno));
        goto out_close;
    }
    rc = authenticate(w, fd);
    *ms = (double)(now_ns() - t0) / 1e6;
out_close:
    close(fd);
    return rc;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    while (!atomic_load(&sh->stop)) {
        if (sh->deadline_ns != 0 && now_ns() >= sh->deadline_ns)
            break;
        if (atomic_fetch_sub(&sh->remaining, 1) <= 0)
            break;
        double ms;
        if (handshake(w, &ms) != 0) {
            atomic_store(&sh->stop, true);
            break;
        }
        if (w->n == w->cap) {
            w->cap = w->cap ? 2 * w->cap : 4096;
            w->lat_ms = realloc(w->lat_ms, w->cap * sizeof(*w->lat_ms));
            if (!w->lat_ms) {
                fprintf(stderr, "scram_handshakes: out of memory\n");
                abort();
            }
        }
        w->lat_ms[w->n++] = ms;
    }
    return NULL;
}

/* ---- main ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank percentile p (0..1] of sorted v[0, n). */
static double percentile(const double *v, size_t n, double p)
{
    size_t rank = (size_t)(p * (double)n + 0.999999);
    return n ? v[rank > 0 ? rank - 1 : 0] : 0;
}

static int usage(int rc)
{
    fprintf(rc ? stderr : stdout,
            "usage: scram_handshakes -b HOST:PORT -u USER --password-stdin\n"
            "           [--mechanism SCRAM-SHA-256|SCRAM-SHA-512] [--seconds D | --handshakes N]\n"
            "           [--concurrency C] [--timeout-ms T]\n");
    return rc;
}

static int resolve(const char *hostport, struct shared *sh)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof(host)) {
        fprintf(stderr, "scram_handshakes: -b wants HOST:PORT, not '%s'\n", hostport);
        return -1;
    }
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { /* [v6]:port */
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    int rc = getaddrinfo(host, colon + 1, &hints, &ai);
    if (rc != 0) {
        fprintf(stderr, "scram_handshakes: %s: %s\n", hostport, gai_strerror(rc));
        return -1;
    }
    memcpy(&sh->addr, ai->ai_addr, ai->ai_addrlen);
    sh->addr_len = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

/* user as client-first's n= carries it: ',' as =2C and '=' as =3D. */
static int escape_user(const char *user, char *out, size_t cap)
{
    size_t n = strlen(user), o = 0;
    if (n == 0 || n > USER_MAX)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *e = user[i] == ',' ? "=2C" : user[i] == '=' ? "=3D" : NULL;
        if (o + 4 > cap)
            return -1;
        if (e) {
            memcpy(out + o, e, 3);
            o += 3;
        } else {
            out[o++] = user[i];
        }
    }
    out[o] = '\0';
    return 0;
}

static int read_password(struct shared *sh)
{
    if (!fgets(sh->password, sizeof(sh->password), stdin))
        return -1;
    size_t n = strlen(sh->password);
    if (n > 0 && sh->password[n - 1] == '\n')
        sh->password[--n] = '\0';
    if (n > 0 && sh->password[n - 1] == '\r')
        sh->password[--n] = '\0';
    sh->password_len = n;
    return n == 0 || n > PASSWORD_MAX ? -1 : 0;
}

static void report(const struct shared *sh, struct worker *ws, int conc, double first_ms,
                   double secs, double cpu)
{
    size_t total = 0;
    for (int i = 0; i < conc; i++)
        total += ws[i].n;
    double *all = malloc((total ? total : 1) * sizeof(*all));
    if (!all)
        abort();
    size_t off = 0;
    for (int i = 0; i < conc; i++) {
        memcpy(all + off, ws[i].lat_ms, ws[i].n * sizeof(*all));
        off += ws[i].n;
    }
    qsort(all, total, sizeof(*all), cmp_double);
    double rate = secs > 0 ? (double)total / secs : 0;
    double p50 = percentile(all, total, 0.50), p99 = percentile(all, total, 0.99);
    double max = total ? all[total - 1] : 0;
    fprintf(stderr,
            "scram_handshakes: %s, %d connection%s at a time: %zu handshakes in %.3f s, %.0f/s, "
            "p50 %.3f ms, p99 %.3f ms; the first (PBKDF2 of %" PRId32 " iterations, %.3f ms, "
            "included) %.3f ms\n",
            sh->mech->name, conc, conc > 1 ? "s" : "", total, secs, rate, p50, p99, sh->iterations,
            sh->pbkdf2_ms, first_ms);
    printf("scram_handshakes mechanism=%s concurrency=%d handshakes=%zu secs=%.3f "
           "handshakes_per_s=%.1f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f first_ms=%.3f "
           "pbkdf2_ms=%.3f iterations=%" PRId32 " client_cpu_s=%.3f\n",
           sh->mech->name, conc, total, secs, rate, p50, p99, max, first_ms, sh->pbkdf2_ms,
           sh->iterations, cpu);
    free(all);
}

/* The command line. */
struct opts {
    const char *brokers; /* -b HOST:PORT */
    const char *user;    /* -u NAME */
    double secs;         /* --seconds, if count is 0 */
    long count;          /* --handshakes after the first (0: run for secs) */
    long conc;           /* --concurrency */
};

/* Fills *o and sh's mech, user name, password and timeout; returns 0, 1 for --help, or -1 after
 * saying what is wrong. */
static int parse_args(int argc, char **argv, struct opts *o, struct shared *sh)
{
    const char *mech = "SCRAM-SHA-256";
    bool password_stdin = false;
    *o = (struct opts){.secs = 3, .conc = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            return 1;
        if (!strcmp(a, "--password-stdin")) {
            password_stdin = true;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (!strcmp(a, "-b") || !strcmp(a, "--bootstrap-server"))
            o->brokers = v;
        else if (!strcmp(a, "-u") || !strcmp(a, "--user"))
            o->user = v;
        else if (!strcmp(a, "-m") || !strcmp(a, "--mechanism"))
            mech = v;
        else if (!strcmp(a, "--seconds"))
            o->secs = atof(v);
        else if (!strcmp(a, "--handshakes"))
            o->count = atol(v);
        else if (!strcmp(a, "--concurrency"))
            o->conc = atol(v);
        else if (!strcmp(a, "--timeout-ms"))
            sh->timeout_ms = atoi(v);
        else
            return -1;
    }
    for (size_t i = 0; i < sizeof(mechs) / sizeof(mechs[0]); i++)
        if (!strcmp(mech, mechs[i].name))
            sh->mech = &mechs[i];
    if (!o->brokers || !o->user || !password_stdin) {
        fprintf(stderr, "scram_handshakes: -b, -u and --password-stdin are needed\n");
        return -1;
    }
    if (!sh->mech || !(o->secs > 0 && o->secs <= 600) || o->count < 0 || o->conc < 1 ||
        o->conc > CONCURRENCY_MAX || sh->timeout_ms < 1 || sh->timeout_ms > 600000) {
        fprintf(stderr,
                "scram_handshakes: --mechanism is SCRAM-SHA-256 or SCRAM-SHA-512, "
                "--seconds in (0, 600], --handshakes >= 0, --concurrency in 1..%d, "
                "--timeout-ms in 1..600000\n",
                CONCURRENCY_MAX);
        return -1;
    }
    if (escape_user(o->user, sh->user_esc, sizeof(sh->user_esc)) != 0) {
        fprintf(stderr, "scram_handshakes: the user name must have 1..%d bytes\n", USER_MAX);
        return -1;
    }
    if (read_password(sh) != 0) {
        fprintf(stderr, "scram_handshakes: --password-stdin: one line of 1..%d bytes\n",
                PASSWORD_MAX);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static struct shared sh = {.timeout_ms = 10000};
    struct opts o;
    int parsed = parse_args(argc, argv, &o, &sh);
    if (parsed != 0)
        return usage(parsed > 0 ? 0 : 2);
    if (resolve(o.brokers, &sh) != 0)
        return 1;
    const char *brokers = o.brokers, *user = o.user;
    long count = o.count, conc = o.conc;
    double secs = o.secs;

    int rc = 1;
    struct worker first = {.sh = &sh};
    struct worker *ws = calloc((size_t)conc, sizeof(*ws));
    double first_ms = 0;
    if (!ws)
        abort();
    if (crypto_open(&first) != 0 || handshake(&first, &first_ms) != 0) {
        fprintf(stderr, "scram_handshakes: the first handshake with %s as %s (%s) failed: %s\n",
                brokers, user, sh.mech->name, first.err);
        goto out_free;
    }
    sh.remaining = count > 0 ? count : LONG_MAX;
    int started = 0;
    for (; started < conc; started++) {
        ws[started].sh = &sh;
        if (crypto_open(&ws[started]) != 0) {
            fprintf(stderr, "scram_handshakes: %s\n", ws[started].err);
            goto out_free;
        }
    }
    double cpu0 = cpu_s();
    int64_t t0 = now_ns();
    sh.deadline_ns = count > 0 ? 0 : t0 + (int64_t)(secs * 1e9);
    for (started = 0; started < conc; started++) {
        if (pthread_create(&ws[started].thread, NULL, worker_main, &ws[started]) != 0) {
            fprintf(stderr, "scram_handshakes: cannot start a thread\n");
            atomic_store(&sh.stop, true);
            break;
        }
    }
    for (int i = 0; i < started; i++)
        pthread_join(ws[i].thread, NULL);
    double elapsed = (double)(now_ns() - t0) / 1e9, cpu = cpu_s() - cpu0;
    if (started < conc)
        goto out_free;
    for (int i = 0; i < conc; i++) {
        if (ws[i].err[0]) {
            fprintf(stderr, "scram_handshakes: a handshake with %s as %s (%s) failed: %s\n",
                    brokers, user, sh.mech->name, ws[i].err);
            goto out_free;
        }
    }
    report(&sh, ws, (int)conc, first_ms, elapsed, cpu);
    rc = 0;
out_free:
    for (int i = 0; i < conc; i++) {
        crypto_close(&ws[i]);
        free(ws[i].lat_ms);
    }
    crypto_close(&first);
    free(ws);
    OPENSSL_cleanse(sh.password, sizeof(sh.password));
    OPENSSL_cleanse(sh.salted, sizeof(sh.salted));
    return rc;
}
