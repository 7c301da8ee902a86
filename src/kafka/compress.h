/* Record-section compression codecs of Kafka batches: gzip (zlib), snappy (raw and the xerial
 * framing Java producers use), lz4 (frame format), zstd.
 *
 * kcompress_decompress: on success *out is a mem_alloc'd buffer of *out_len bytes, owned by the
 * caller (mem_free). Output beyond max_out bytes is refused with -ERR_TOO_LARGE, so a
 * decompression bomb costs at most max_out. Returns 0, -ERR_CORRUPT, -ERR_TOO_LARGE or
 * -ERR_UNSUPPORTED (unknown codec).
 *
 * kcompress_compress: produces what Kafka clients accept for that codec (snappy: xerial framing
 * as the Java client writes it; lz4: frame format). *out is mem_alloc'd, caller frees. */
#ifndef SP_KAFKA_COMPRESS_H
#define SP_KAFKA_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

int kcompress_decompress(int codec, const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
                         size_t *out_len);
int kcompress_compress(int codec, const uint8_t *in, size_t len, uint8_t **out, size_t *out_len);
const char *kcompress_name(int codec); /* "none", "gzip", ... or "unknown" */

#endif
