/* SipHash-2-4 (Aumasson and Bernstein): a keyed hash with 64- or 128-bit output.
 *
 * Used where an attacker may choose the inputs and a collision costs correctness, not just
 * speed: the log cleaner's key map, where two keys that hash alike would let one record
 * supersede another. With a random key per use, inputs cannot be chosen to collide. */
#ifndef SP_BASE_SIPHASH_H
#define SP_BASE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_SIZE 16

/* The 64-bit variant. */
uint64_t siphash64(const uint8_t key[SIPHASH_KEY_SIZE], const void *data, size_t len);
/* The 128-bit variant: out[0] holds the first 8 output bytes (little-endian), out[1] the rest. */
void siphash128(const uint8_t key[SIPHASH_KEY_SIZE], const void *data, size_t len,
                uint64_t out[2]);

#endif
