/* libFuzzer target: ssl.principal.mapping.rules (security/principal.h) and the regex subset under
 * it (security/regex.h), our own parsers of operator text applied to certificate subjects.
 *
 * The input is split at its first NUL: the part before is the rules value (parsed as a
 * NUL-terminated string), the part after is a subject, given in an exact-size copy so an
 * over-read is an ASan report. Checked: a parse either succeeds or explains itself (non-empty
 * message); a mapping returns one of its documented codes, writes a NUL-terminated name that
 * fits the room given (several sizes) and is empty on failure; mapping twice gives the same
 * answer. The bare regex is run from the first 8 start positions. The rules part is also compiled as a bare regex and run (full match, then every
 * search position) against the subject: results are documented codes, match bounds lie inside
 * the subject and within the requested start, and a full match covers the whole subject. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "security/principal.h"
#include "security/regex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_map(const struct principal_rules *r, const char *subj, size_t len, size_t cap)
{
    char *out = mem_alloc(cap);
    int rc = principal_rules_map(r, subj, len, out, cap);
    if (rc != 0 && rc != -ERR_NOT_FOUND && rc != -ERR_TOO_LARGE && rc != -ERR_LIMIT)
        abort();
    size_t n = strnlen(out, cap);
    if (n >= cap || (rc != 0 && n != 0))
        abort();
    if (cap == PRINCIPAL_NAME_MAX) {
        char *again = mem_alloc(cap);
        if (principal_rules_map(r, subj, len, again, cap) != rc || strcmp(out, again) != 0)
            abort();
        mem_free(again);
    }
    mem_free(out);
}

static void check_regex(const char *pat, size_t plen, const char *subj, size_t len)
{
    struct regex *re;
    char err[256];
    err[0] = '\0';
    if (regex_compile(pat, plen, &re, err, sizeof(err)) != 0) {
        if (!err[0])
            abort();
        return;
    }
    struct regex_match m;
    enum regex_result r = regex_full_match(re, subj, len, &m);
    if (r == REGEX_MATCH && (m.start[0] != 0 || m.end[0] != (long)len))
        abort();
    for (size_t from = 0; from <= len && from < 8; from++) {
        r = regex_search(re, subj, len, from, &m);
        if (r != REGEX_MATCH && r != REGEX_NOMATCH && r != REGEX_TOO_COMPLEX)
            abort();
        if (r != REGEX_MATCH)
            continue;
        for (int g = 0; g <= regex_groups(re); g++) {
            if (m.start[g] < 0)
                continue;
            if (m.start[g] > m.end[g] || m.end[g] > (long)len)
                abort();
        }
        if (m.start[0] < (long)from)
            abort();
    }
    regex_free(re);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t rlen = nul ? (size_t)(nul - data) : size;
    char *rules_text = mem_alloc(rlen + 1);
    memcpy(rules_text, data, rlen);
    rules_text[rlen] = '\0';
    size_t slen = nul ? size - rlen - 1 : 0;
    char *subj = mem_alloc(slen ? slen : 1);
    if (slen)
        memcpy(subj, nul + 1, slen);

    struct principal_rules *r;
    char err[512];
    err[0] = '\0';
    if (principal_rules_parse(rules_text, &r, err, sizeof(err)) == 0) {
        size_t caps[] = {1, 64, PRINCIPAL_NAME_MAX};
        for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
            check_map(r, subj, slen, caps[i]);
        principal_rules_free(r);
    } else if (!err[0]) {
        abort();
    }
    if (rlen <= 256 && slen <= 512)
        check_regex(rules_text, rlen, subj, slen);
    mem_free(subj);
    mem_free(rules_text);
    return 0;
}
