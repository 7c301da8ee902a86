/* Strict base64 (base64.h).
 *
 * Stateless. Invariants:
 *  1. b64_encode writes exactly B64_ENCODED_LEN(len) + 1 bytes.
 *  2. b64_decode writes at most cap bytes, and only after it has checked that the decoded
 *     length (known from the input length and its padding) fits.
 *  3. decode(encode(x)) == x, and decode accepts no other spelling of x (padding bits zero). */
#include "base/base64.h"

#include <stdbool.h>

#include "base/check.h"
#include "base/errors.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t b64_encode(const void *in, size_t len, char *out, size_t cap)
{
    CHECK(cap >= B64_ENCODED_LEN(len) + 1);
    const uint8_t *p = in;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 3) {
        size_t left = len - i;
        uint32_t v = (uint32_t)p[i] << 16;
        if (left > 1)
            v |= (uint32_t)p[i + 1] << 8;
        if (left > 2)
            v |= p[i + 2];
        out[o++] = alphabet[v >> 18];
        out[o++] = alphabet[(v >> 12) & 63];
        out[o++] = left > 1 ? alphabet[(v >> 6) & 63] : '=';
        out[o++] = left > 2 ? alphabet[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

/* The value of an alphabet character, or -1. */
static int digit(char ch)
{
    unsigned char c = (unsigned char)ch;
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decodes one quantum of 4 characters of which the first `data` (2..4) carry bits, the rest
 * being padding. Returns false on a bad character or nonzero padding bits. */
static bool quantum(const char *q, size_t data, uint8_t *out)
{
    uint32_t v = 0;
    for (size_t j = 0; j < 4; j++) {
        int d = j < data ? digit(q[j]) : 0;
        if (d < 0)
            return false;
        v = v << 6 | (uint32_t)d;
    }
    /* The bits below the last whole byte must be zero: 2 data characters give one byte (12
     * bits carried, 4 unused), 3 give two bytes (18 carried, 2 unused). */
    if ((data == 2 && (v & 0xffff) != 0) || (data == 3 && (v & 0xff) != 0))
        return false;
    out[0] = (uint8_t)(v >> 16);
    if (data > 2)
        out[1] = (uint8_t)(v >> 8);
    if (data > 3)
        out[2] = (uint8_t)v;
    return true;
}

int b64_decode(const char *in, size_t len, uint8_t *out, size_t cap, size_t *out_len)
{
    *out_len = 0;
    if (len % 4 != 0)
        return -ERR_INVALID;
    size_t pad = 0;
    if (len > 0 && in[len - 1] == '=')
        pad = in[len - 2] == '=' ? 2 : 1;
    size_t n = len / 4 * 3 - pad;
    if (n > cap)
        return -ERR_TOO_LARGE;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        size_t data = i + 4 == len ? 4 - pad : 4;
        if (!quantum(in + i, data, out + o))
            return -ERR_INVALID;
        o += data - 1;
    }
    *out_len = o;
    return 0;
}
