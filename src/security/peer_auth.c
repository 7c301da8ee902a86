/* Inter-broker peer authentication proofs (security/peer_auth.h). Stateless. */
#include "security/peer_auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "base/check.h"

int peer_auth_load(const char *path, struct peer_secret *out, char *err, size_t errcap)
{
    memset(out, 0, sizeof(*out));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errcap, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errcap, "%s is not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(err, errcap, "%s may be read by other users (mode %03o): chmod 600 it",
                 path, (unsigned)(st.st_mode & 0777));
        close(fd);
        return -1;
    }
    uint8_t buf[PEER_AUTH_SECRET_MAX + 3];
    size_t n = 0;
    ssize_t got;
    while (n < sizeof(buf) && (got = read(fd, buf + n, sizeof(buf) - n)) > 0)
        n += (size_t)got;
    close(fd);
    if (n > 0 && buf[n - 1] == '\n')
        n--;
    if (n > 0 && buf[n - 1] == '\r')
        n--;
    if (n < PEER_AUTH_SECRET_MIN || n > PEER_AUTH_SECRET_MAX) {
        snprintf(err, errcap, "%s holds %zu bytes: a secret is %d to %d bytes (e.g. `openssl rand "
                 "-hex 32`)", path, n, PEER_AUTH_SECRET_MIN, PEER_AUTH_SECRET_MAX);
        OPENSSL_cleanse(buf, sizeof(buf));
        return -1;
    }
    memcpy(out->key, buf, n);
    out->len = n;
    OPENSSL_cleanse(buf, sizeof(buf));
    return 0;
}

int peer_auth_nonce(uint8_t out[PEER_AUTH_NONCE])
{
    return RAND_bytes(out, PEER_AUTH_NONCE) == 1 ? 0 : -EIO;
}

static void put32(uint8_t *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)(u >> 24);
    p[1] = (uint8_t)(u >> 16);
    p[2] = (uint8_t)(u >> 8);
    p[3] = (uint8_t)u;
}

/* HMAC-SHA256 over the concatenation of parts. */
static void hmac_parts(const struct peer_secret *s, const uint8_t *const *parts,
                       const size_t *lens, size_t n, uint8_t out[PEER_AUTH_PROOF])
{
    CHECK(s->len >= PEER_AUTH_SECRET_MIN);
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", digest, 0),
                           OSSL_PARAM_construct_end()};
    size_t got = 0;
    bool ok = ctx && EVP_MAC_init(ctx, s->key, s->len, params) == 1;
    for (size_t i = 0; ok && i < n; i++)
        ok = EVP_MAC_update(ctx, parts[i], lens[i]) == 1;
    ok = ok && EVP_MAC_final(ctx, out, &got, PEER_AUTH_PROOF) == 1 && got == PEER_AUTH_PROOF;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
    if (!ok) /* a proof nobody can match: the handshake fails closed */
        CHECK(RAND_bytes(out, PEER_AUTH_PROOF) == 1);
}

void peer_auth_hello_proof(const struct peer_secret *s, const char *label, const char *cluster_id,
                           int32_t from, int32_t to, const uint8_t nonce_d[PEER_AUTH_NONCE],
                           const uint8_t nonce_a[PEER_AUTH_NONCE], uint8_t out[PEER_AUTH_PROOF])
{
    uint8_t ids[8];
    put32(ids, from);
    put32(ids + 4, to);
    static const uint8_t zero = 0;
    const uint8_t *parts[] = {(const uint8_t *)label, &zero, (const uint8_t *)cluster_id, &zero,
                              ids, nonce_d, nonce_a};
    size_t lens[] = {strlen(label), 1, strlen(cluster_id), 1, sizeof(ids), PEER_AUTH_NONCE,
                     PEER_AUTH_NONCE};
    hmac_parts(s, parts, lens, sizeof(lens) / sizeof(lens[0]), out);
}

void peer_auth_msg_proof(const struct peer_secret *s, const char *label,
                         const uint8_t nonce[PEER_AUTH_NONCE], const uint8_t *msg, size_t len,
                         uint8_t out[PEER_AUTH_PROOF])
{
    static const uint8_t zero = 0;
    const uint8_t *parts[] = {(const uint8_t *)label, &zero, nonce, msg};
    size_t lens[] = {strlen(label), 1, PEER_AUTH_NONCE, len};
    hmac_parts(s, parts, lens, sizeof(lens) / sizeof(lens[0]), out);
}

bool peer_auth_equal(const uint8_t a[PEER_AUTH_PROOF], const uint8_t b[PEER_AUTH_PROOF])
{
    return CRYPTO_memcmp(a, b, PEER_AUTH_PROOF) == 0;
}
