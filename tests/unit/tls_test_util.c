/* Test keys and certificates (tls_test_util.h). */
#include "tls_test_util.h"

#include <stdio.h>

#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "test.h"

X509 *pki_cert(const char *subject_cn, const char *org, EVP_PKEY *key, X509 *issuer,
               EVP_PKEY *issuer_key, long serial, bool ca)
{
    X509 *x = X509_new();
    ASSERT(x != NULL);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    if (org)
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)org, -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)subject_cn, -1,
                               -1, 0);
    X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name);
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer ? issuer : x, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &v3, NID_basic_constraints,
                                              ca ? "critical,CA:TRUE" : "CA:FALSE");
    X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    ASSERT(X509_sign(x, issuer_key, EVP_sha256()) > 0);
    return x;
}

void pki_make(struct pki *p, const char *ca_cn)
{
    p->ca_key = EVP_EC_gen("P-256");
    p->srv_key = EVP_EC_gen("P-256");
    p->cli_key = EVP_EC_gen("P-256");
    ASSERT(p->ca_key && p->srv_key && p->cli_key);
    p->ca = pki_cert(ca_cn, NULL, p->ca_key, NULL, p->ca_key, 1, true);
    p->srv = pki_cert("localhost", NULL, p->srv_key, p->ca, p->ca_key, 2, false);
    p->cli = pki_cert("alice", "acme", p->cli_key, p->ca, p->ca_key, 3, false);
}

void pki_free(struct pki *p)
{
    X509_free(p->ca);
    X509_free(p->srv);
    X509_free(p->cli);
    EVP_PKEY_free(p->ca_key);
    EVP_PKEY_free(p->srv_key);
    EVP_PKEY_free(p->cli_key);
}

void pki_write(const struct pki *p, const char *dir, const char *name, char *keystore,
               char *ca, size_t cap)
{
    snprintf(keystore, cap, "%s/%s-keystore.pem", dir, name);
    snprintf(ca, cap, "%s/%s-ca.pem", dir, name);
    FILE *f = fopen(keystore, "w");
    ASSERT(f != NULL);
    ASSERT_EQ(PEM_write_PrivateKey(f, p->srv_key, NULL, NULL, 0, NULL, NULL), 1);
    ASSERT_EQ(PEM_write_X509(f, p->srv), 1);
    ASSERT_EQ(PEM_write_X509(f, p->ca), 1);
    ASSERT_EQ(fclose(f), 0);
    f = fopen(ca, "w");
    ASSERT(f != NULL);
    ASSERT_EQ(PEM_write_X509(f, p->ca), 1);
    ASSERT_EQ(fclose(f), 0);
}
