/* PLAIN and SCRAM steps of one connection's SASL exchange (contract in broker/sasl_mech.h),
 * against the metadata image's SCRAM credentials (controller/image.h USER_SCRAM).
 *
 * PLAIN: one token; the password is checked against each credential the user has (SCRAM-SHA-512
 * first; security/sasl_plain.h), an unknown user's against a stand-in so that it costs the
 * same. SCRAM: client-first -> server-first (an unknown user gets one made from a
 * stand-in credential), client-final -> server-final; a delegation token (tokenauth=true) is
 * refused: StreamPulse has none.
 *
 * State: scram_started says whether m->scram holds an exchange (wiped by sasl_mech_reset). The
 * PBKDF2 of PLAIN runs on the caller's thread (the reactor): a few milliseconds per PLAIN login
 * at 4096 iterations. */
#include "broker/sasl_mech.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "broker/config.h"
#include "controller/image.h"
#include "security/sasl_plain.h"

void sasl_mech_reset(struct sasl_mech *m)
{
    if (m->scram_started)
        scram_server_destroy(&m->scram);
    OPENSSL_cleanse(m->out, sizeof(m->out));
    m->scram_started = false;
}

/* The image's credential of user for mech, as security/scram.h takes it. */
static bool find_credential(const struct ctl_image *img, const char *user, int mech,
                            struct scram_credential *out)
{
    const struct ctl_rec_user *u = ctl_image_user(img, user, (int8_t)mech);
    if (!u)
        return false;
    memset(out, 0, sizeof(*out));
    out->mech = mech;
    out->iterations = u->iterations;
    out->salt_len = u->salt_len;
    memcpy(out->salt, u->salt, u->salt_len);
    memcpy(out->stored_key, u->stored_key, u->key_len);
    memcpy(out->server_key, u->server_key, u->key_len);
    return true;
}

int sasl_mech_check_password(const struct ctl_image *img, const char *user, size_t user_len,
                             const char *password, size_t password_len, const char **why)
{
    if (!scram_user_valid(user, user_len)) {
        *why = "invalid user name";
        return -EACCES;
    }
    char name[SCRAM_USER_MAX + 1];
    memcpy(name, user, user_len);
    name[user_len] = '\0';
    /* any credential of the user's may hold the password: SHA-512's, then SHA-256's */
    static const int order[] = {SCRAM_SHA_512, SCRAM_SHA_256};
    bool known = false;
    int rc = -EACCES;
    for (size_t i = 0; i < 2 && rc != 0 && img; i++) {
        struct scram_credential cred;
        if (!find_credential(img, name, order[i], &cred))
            continue;
        known = true;
        rc = sasl_plain_verify(&cred, password, password_len);
        OPENSSL_cleanse(&cred, sizeof(cred));
    }
    if (!known) { /* the same work for an unknown user */
        struct scram_credential cred;
        if (scram_credential_fake(&cred, SCRAM_SHA_256, name, user_len, SCRAM_ITER_MIN) == 0)
            (void)sasl_plain_verify(&cred, password, password_len);
        OPENSSL_cleanse(&cred, sizeof(cred));
    }
    if (rc != 0) {
        *why = known ? "wrong password" : "unknown user";
        return -EACCES;
    }
    return 0;
}

static int plain_step(const struct ctl_image *img, const uint8_t *tok, size_t len, char *user,
                      size_t cap, const char **why)
{
    struct sasl_plain p;
    if (sasl_plain_parse((const char *)tok, len, &p, why) != 0)
        return -1;
    if (sasl_mech_check_password(img, p.user, p.user_len, p.password, p.password_len, why) != 0)
        return -1;
    snprintf(user, cap, "%.*s", (int)p.user_len, p.user);
    return 1;
}

static int scram_step(struct sasl_mech *m, int mech, const struct ctl_image *img,
                      const uint8_t *tok, size_t len, struct kbytes *out, char *user, size_t cap,
                      const char **why)
{
    size_t out_len = 0;
    if (!m->scram_started) {
        scram_server_init(&m->scram, mech);
        m->scram_started = true;
        if (scram_server_client_first(&m->scram, (const char *)tok, len) != 0) {
            *why = scram_server_reason(&m->scram);
            return -1;
        }
        if (scram_server_token_auth(&m->scram)) {
            *why = "delegation tokens are not supported";
            return -1;
        }
        size_t ulen;
        const char *name = scram_server_user(&m->scram, &ulen);
        struct scram_credential cred;
        if (!find_credential(img, name, mech, &cred) &&
            scram_credential_fake(&cred, mech, name, ulen, SCRAM_ITER_MIN) != 0) {
            *why = "cannot make a stand-in credential";
            return -1;
        }
        char nonce[SCRAM_NONCE_RANDOM_LEN + 1];
        int rc = scram_nonce_random(nonce, sizeof(nonce));
        if (rc == 0)
            rc = scram_server_first(&m->scram, &cred, nonce, strlen(nonce), m->out,
                                    sizeof(m->out), &out_len);
        OPENSSL_cleanse(&cred, sizeof(cred));
        if (rc != 0) {
            *why = scram_server_reason(&m->scram) ? scram_server_reason(&m->scram) : "server-first";
            return -1;
        }
        *out = (struct kbytes){(const uint8_t *)m->out, (int32_t)out_len};
        return 0;
    }
    int rc = scram_server_client_final(&m->scram, (const char *)tok, len, m->out, sizeof(m->out),
                                       &out_len);
    if (rc != 0) {
        *why = scram_server_reason(&m->scram);
        return -1;
    }
    snprintf(user, cap, "%s", scram_server_user(&m->scram, NULL));
    *out = (struct kbytes){(const uint8_t *)m->out, (int32_t)out_len};
    return 1;
}

int sasl_mech_step(struct sasl_mech *m, unsigned mechanism, const struct ctl_image *img,
                   const uint8_t *tok, size_t len, struct kbytes *out, char *user, size_t cap,
                   const char **why)
{
    *out = (struct kbytes){(const uint8_t *)"", 0};
    *why = "";
    if (mechanism == BROKER_SASL_PLAIN)
        return plain_step(img, tok, len, user, cap, why);
    int mech = mechanism == BROKER_SASL_SCRAM_SHA256 ? SCRAM_SHA_256 : SCRAM_SHA_512;
    return scram_step(m, mech, img, tok, len, out, user, cap, why);
}
