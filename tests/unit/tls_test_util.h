/* Keys and certificates for the TLS tests, made in memory (EC P-256, valid for an hour either
 * side of now): a CA, a server certificate (CN=localhost, usable for both ends: no extended
 * key usage) and a client certificate (CN=alice, O=acme), both signed by that CA. */
#ifndef SP_TLS_TEST_UTIL_H
#define SP_TLS_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include <openssl/evp.h>
#include <openssl/x509.h>

struct pki {
    EVP_PKEY *ca_key;
    X509 *ca;
    EVP_PKEY *srv_key;
    X509 *srv;
    EVP_PKEY *cli_key;
    X509 *cli;
};

/* A certificate for key, signed by issuer (NULL: self-signed), as a CA or not. */
X509 *pki_cert(const char *subject_cn, const char *org, EVP_PKEY *key, X509 *issuer,
               EVP_PKEY *issuer_key, long serial, bool ca);
/* A fresh CA called ca_cn and its two certificates. */
void pki_make(struct pki *p, const char *ca_cn);
void pki_free(struct pki *p);
/* Writes two PEM files into dir: <name>-keystore.pem (the server key, its certificate and the
 * CA: a Kafka PEM keystore) and <name>-ca.pem (the CA), and gives their paths (cap bytes
 * each). */
void pki_write(const struct pki *p, const char *dir, const char *name, char *keystore,
               char *ca, size_t cap);

#endif
