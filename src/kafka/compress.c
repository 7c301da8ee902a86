/* Placeholder until the codec lands: every codec is unsupported. */
#include "kafka/compress.h"

#include "base/errors.h"

int kcompress_decompress(int codec, const uint8_t *in, size_t len, size_t max_out, uint8_t **out,
                         size_t *out_len)
{
    return -ERR_UNSUPPORTED;
}

int kcompress_compress(int codec, const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
    return -ERR_UNSUPPORTED;
}

const char *kcompress_name(int codec)
{
    return "unknown";
}
