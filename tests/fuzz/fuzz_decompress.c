/* libFuzzer target: the decompressors on arbitrary input. Input: codec byte, then data.
 *
 * Checks beyond sanitizers: output never exceeds the cap, and what decompresses survives
 * compress + decompress unchanged. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "kafka/compress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_OUT (256 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int codec = data[0] % 5;
    size_t len = size - 1;
    uint8_t *in = mem_dup(data + 1, len);
    uint8_t *out = NULL;
    size_t out_len = 0;
    int rc = kcompress_decompress(codec, in, len, MAX_OUT, &out, &out_len);
    if (rc == 0) {
        if (out_len > MAX_OUT)
            abort();
        uint8_t *c, *d;
        size_t clen, dlen;
        if (kcompress_compress(codec, out, out_len, &c, &clen) != 0)
            abort();
        if (kcompress_decompress(codec, c, clen, out_len, &d, &dlen) != 0 || dlen != out_len ||
            (dlen && memcmp(d, out, dlen) != 0))
            abort();
        mem_free(c);
        mem_free(d);
        mem_free(out);
    } else if (rc != -ERR_CORRUPT && rc != -ERR_TOO_LARGE) {
        abort();
    }
    mem_free(in);
    return 0;
}
