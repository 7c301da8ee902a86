/* Inter-broker peer authentication: the proofs by which two nodes that hold the cluster's shared
 * secret (cluster.secret.file) show each other they do, without sending it.
 *
 * The handshake (replication/transport.c runs it; the frames are replication/rpc.h's):
 *   dialer   -> HELLO      cluster id, from, to, nonce_d (16 random bytes)
 *   acceptor -> HELLO_OK   nonce_a (16 random bytes), proof("sp-accept", ...)
 *   dialer   -> AUTH       proof("sp-dial", ...)
 * where proof(label, ...) = HMAC-SHA256(secret, label 0x00 cluster_id 0x00 from to nonce_d
 * nonce_a), from and to being the dialer's and the acceptor's node ids as 4 big-endian bytes.
 * Each side checks the other's proof (constant-time compare) before it takes any other frame,
 * so a process without the secret can neither be accepted nor pose as the node dialled; fresh
 * nonces on both sides make every proof good for one connection only. A QUORUM_INFO answer is
 * proved the same way over its bytes ("sp-quorum", nonce of the QUORUM_DESCRIBE).
 *
 * This authenticates the start of a connection, not each frame: on a network where an attacker
 * can inject into an established TCP stream the inter-broker traffic still needs TLS (not
 * implemented yet).
 *
 * Pure except for peer_auth_nonce (OpenSSL's RAND_bytes) and peer_auth_load (reads a file). */
#ifndef SP_SECURITY_PEER_AUTH_H
#define SP_SECURITY_PEER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PEER_AUTH_NONCE 16
#define PEER_AUTH_PROOF 32
#define PEER_AUTH_SECRET_MIN 32  /* bytes of a secret at least */
#define PEER_AUTH_SECRET_MAX 1024

/* The shared secret. */
struct peer_secret {
    uint8_t key[PEER_AUTH_SECRET_MAX];
    size_t len; /* 0: none */
};

/* Reads the secret from path: the file's bytes, without one trailing "\n" or "\r\n". Refused
 * (-1 with the reason in err): an unreadable file, one shorter than PEER_AUTH_SECRET_MIN or
 * longer than PEER_AUTH_SECRET_MAX bytes, or one that other users may read (mode & 077: a
 * secret any local user can read protects nothing). Returns 0. */
int peer_auth_load(const char *path, struct peer_secret *out, char *err, size_t errcap);

/* Fills out with random bytes. Returns 0, or -EIO when OpenSSL has no randomness. */
int peer_auth_nonce(uint8_t out[PEER_AUTH_NONCE]);

/* proof(label, ...) of the handshake above into out. */
void peer_auth_hello_proof(const struct peer_secret *s, const char *label, const char *cluster_id,
                           int32_t from, int32_t to, const uint8_t nonce_d[PEER_AUTH_NONCE],
                           const uint8_t nonce_a[PEER_AUTH_NONCE], uint8_t out[PEER_AUTH_PROOF]);

/* HMAC-SHA256(secret, label 0x00 nonce msg) into out (QUORUM_INFO). */
void peer_auth_msg_proof(const struct peer_secret *s, const char *label,
                         const uint8_t nonce[PEER_AUTH_NONCE], const uint8_t *msg, size_t len,
                         uint8_t out[PEER_AUTH_PROOF]);

/* Constant-time equality of two proofs. */
bool peer_auth_equal(const uint8_t a[PEER_AUTH_PROOF], const uint8_t b[PEER_AUTH_PROOF]);

#endif
