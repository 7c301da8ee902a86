/* Base64 (RFC 4648 section 4: the standard alphabet A-Z a-z 0-9 + /, '=' padding): the SASL
 * messages of security/scram.h (salts, proofs and signatures travel base64-encoded), HTTP Basic
 * credentials, the worker's binary environment values (task/jobenv.h), Protobuf descriptors
 * and bytes fields in the schema registry.
 *
 * Decoding is strict, since its input comes from clients: the length is a multiple of 4, every
 * character is in the alphabet, '=' appears only as the one or two last characters, and the
 * bits the padding leaves unused are zero. So each byte string has exactly one accepted
 * encoding. No whitespace, no line breaks, no URL-safe alphabet. */
#ifndef SP_BASE_BASE64_H
#define SP_BASE_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Characters of the encoding of n bytes, without the terminating NUL. */
#define B64_ENCODED_LEN(n) (((n) + 2) / 3 * 4)
/* Bytes that the decoding of n characters can hold at most. */
#define B64_DECODED_MAX(n) ((n) / 4 * 3)

/* Encodes in[0, len) into out: B64_ENCODED_LEN(len) characters and a NUL. cap must be at least
 * B64_ENCODED_LEN(len) + 1 (CHECKed: sizing the buffer is the caller's job). Returns the number
 * of characters written, NUL not counted. */
size_t b64_encode(const void *in, size_t len, char *out, size_t cap);

/* Decodes in[0, len) into out, which has room for cap bytes. Returns 0 with the byte count in
 * *out_len; -ERR_INVALID if in is not a strict encoding (see above); -ERR_TOO_LARGE if the bytes
 * would not fit in cap. Never writes beyond out[cap - 1]; on error out's contents are
 * unspecified. An empty input decodes to zero bytes. */
int b64_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len);

#endif
