/* Principal mapping rules (principal.h): a parser for the rule list and its replacements, and
 * the mapping itself (full match, then replace-all).
 *
 * A parsed rule holds its compiled pattern and its replacement as a list of parts, each either
 * literal bytes (escapes already removed) or a group reference resolved against the pattern's
 * group count, so mapping a subject never parses anything.
 *
 * Invariants:
 *  1. Every group reference of a replacement names a group the pattern has (0 .. groups).
 *  2. principal_rules_map writes at most cap bytes, NUL included, whatever it returns. */
#include "security/principal.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "security/regex.h"

#define TEXT_MAX 16384 /* bytes of a rules value */

struct part {
    int group;  /* -1: literal bytes lit[off, off + len) */
    size_t off;
    size_t len;
};

struct rule {
    bool is_default;
    struct regex *re;
    char *lit;          /* the replacement's literal bytes */
    struct part *parts;
    size_t n_parts;
    char fold;          /* 'L', 'U' or 0 */
};

struct principal_rules {
    struct rule rules[PRINCIPAL_RULES_MAX];
    int n;
};

static bool is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static void rule_clear(struct rule *r)
{
    regex_free(r->re);
    mem_free(r->lit);
    mem_free(r->parts);
    memset(r, 0, sizeof(*r));
}

void principal_rules_free(struct principal_rules *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->n; i++)
        rule_clear(&r->rules[i]);
    mem_free(r);
}

/* Reads a rule part up to an unescaped '/': pattern or replacement, escapes kept. Returns its
 * length, or -1 if the text ends first. */
static long scan_part(const char *s, size_t len, size_t from)
{
    for (size_t i = from; i < len; i++) {
        if (s[i] == '\\') {
            if (i + 1 >= len)
                return -1;
            i++;
        } else if (s[i] == '/') {
            return (long)(i - from);
        }
    }
    return -1;
}

static void add_part(struct rule *r, size_t *cap, int group, size_t off, size_t len)
{
    if (group < 0 && len == 0)
        return;
    if (group < 0 && r->n_parts > 0 && r->parts[r->n_parts - 1].group < 0 &&
        r->parts[r->n_parts - 1].off + r->parts[r->n_parts - 1].len == off) {
        r->parts[r->n_parts - 1].len += len;
        return;
    }
    MEM_GROW(r->parts, *cap, r->n_parts + 1);
    r->parts[r->n_parts++] = (struct part){group, off, len};
}

/* Parses a replacement (Java's appendReplacement syntax, with Kafka's treatment of references
 * to missing groups) into r->parts. Returns 0 or -1 with err. */
static int parse_replacement(struct rule *r, const char *s, size_t len, char *err, size_t errcap)
{
    int groups = regex_groups(r->re);
    r->lit = mem_alloc(len + 1);
    size_t n_lit = 0, cap = 0;
    for (size_t i = 0; i < len;) {
        char c = s[i];
        if (c == '\\') {
            /* scan_part guarantees a byte follows */
            add_part(r, &cap, -1, n_lit, 1);
            r->lit[n_lit++] = s[i + 1];
            i += 2;
            continue;
        }
        if (c != '$') {
            add_part(r, &cap, -1, n_lit, 1);
            r->lit[n_lit++] = c;
            i++;
            continue;
        }
        if (i + 1 < len && s[i + 1] == '{') {
            snprintf(err, errcap, "named group references (${...}) are not supported");
            return -1;
        }
        if (i + 1 >= len || !isdigit((unsigned char)s[i + 1])) {
            snprintf(err, errcap, "'$' must be followed by a group number (write \\$ for a "
                     "dollar sign)");
            return -1;
        }
        size_t d0 = i + 1, d1 = d0;
        while (d1 < len && isdigit((unsigned char)s[d1]))
            d1++;
        if (s[d0] != '0') {
            if (groups == 0) {
                snprintf(err, errcap, "the replacement refers to group $%c but the pattern has "
                         "no capturing group", s[d0]);
                return -1;
            }
            /* Kafka: drop trailing digits while too big; a first digit too big is text */
            long n = 0;
            for (size_t k = d0; k < d1 && n <= REGEX_GROUPS_MAX * 10L; k++)
                n = n * 10 + (s[k] - '0');
            while (n > groups && n >= 10)
                n /= 10;
            if (n > groups) {
                add_part(r, &cap, -1, n_lit, 1);
                r->lit[n_lit++] = '$';
                i++;
                continue;
            }
        }
        /* Java: the first digit, then more while the number still names a group */
        int ref = s[d0] - '0';
        size_t k = d0 + 1;
        while (k < d1 && ref * 10 + (s[k] - '0') <= groups) {
            ref = ref * 10 + (s[k] - '0');
            k++;
        }
        CHECK(ref <= groups);
        add_part(r, &cap, ref, 0, 0);
        i = k;
    }
    return 0;
}

/* Parses "RULE:..." at s[0, len) (the whole entry up to its separator). Returns the bytes
 * consumed (up to the end of the /L or /U), or -1 with err. */
static long parse_rule(struct rule *r, const char *s, size_t len, char *err, size_t errcap)
{
    size_t p = 5; /* "RULE:" */
    long plen = scan_part(s, len, p);
    if (plen < 0) {
        snprintf(err, errcap, "expected RULE:pattern/replacement/ with an unescaped '/' after "
                 "the pattern");
        return -1;
    }
    char rerr[256];
    if (regex_compile(s + p, (size_t)plen, &r->re, rerr, sizeof(rerr)) != 0) {
        snprintf(err, errcap, "bad pattern: %s", rerr);
        return -1;
    }
    p += (size_t)plen + 1;
    long rlen = scan_part(s, len, p);
    if (rlen < 0) {
        snprintf(err, errcap, "expected RULE:pattern/replacement/ with an unescaped '/' after "
                 "the replacement");
        return -1;
    }
    char perr[256];
    if (parse_replacement(r, s + p, (size_t)rlen, perr, sizeof(perr)) != 0) {
        snprintf(err, errcap, "bad replacement: %s", perr);
        return -1;
    }
    p += (size_t)rlen + 1;
    if (p < len && (s[p] == 'L' || s[p] == 'U'))
        r->fold = s[p++];
    return (long)p;
}

int principal_rules_parse(const char *text, struct principal_rules **out, char *err,
                          size_t errcap)
{
    size_t len = strlen(text);
    if (len > TEXT_MAX) {
        snprintf(err, errcap, "the rules are longer than %d bytes", TEXT_MAX);
        return -1;
    }
    struct principal_rules *rs = mem_calloc(1, sizeof(*rs));
    size_t i = 0;
    for (;;) {
        while (i < len && is_space(text[i]))
            i++;
        if (i >= len)
            break;
        const char *s = text + i;
        size_t rest = len - i;
        size_t used = 0;
        struct rule r = {0};
        char rerr[400] = "";
        if (rest >= 7 && !memcmp(s, "DEFAULT", 7)) {
            r.is_default = true;
            used = 7;
        } else if (rest >= 5 && !memcmp(s, "RULE:", 5)) {
            long n = parse_rule(&r, s, rest, rerr, sizeof(rerr));
            if (n < 0)
                goto bad_rule;
            used = (size_t)n;
        } else if (s[0] == ',') {
            i++; /* an empty entry */
            continue;
        } else {
            snprintf(rerr, sizeof(rerr), "expected DEFAULT or RULE:pattern/replacement/[L|U]");
            goto bad_rule;
        }
        size_t j = used;
        while (j < rest && is_space(s[j]))
            j++;
        if (j < rest && s[j] != ',') {
            snprintf(rerr, sizeof(rerr), "unexpected text after the rule: '%.40s'", s + used);
            goto bad_rule;
        }
        if (rs->n == PRINCIPAL_RULES_MAX) {
            snprintf(rerr, sizeof(rerr), "more than %d rules", PRINCIPAL_RULES_MAX);
            goto bad_rule;
        }
        rs->rules[rs->n++] = r;
        i += j + (j < rest); /* past the comma */
        continue;

    bad_rule:
        rule_clear(&r);
        snprintf(err, errcap, "rule %d ('%.*s'): %s", rs->n + 1,
                 (int)MIN(strcspn(s, ","), (size_t)60), s, rerr);
        principal_rules_free(rs);
        return -1;
    }
    *out = rs;
    return 0;
}

struct outbuf {
    char *p;
    size_t cap; /* usable bytes, the NUL excluded */
    size_t len;
    bool overflow;
};

static void out_put(struct outbuf *o, const char *s, size_t n)
{
    if (o->overflow || n > o->cap - o->len) {
        o->overflow = true;
        return;
    }
    memcpy(o->p + o->len, s, n);
    o->len += n;
}

static void expand(const struct rule *r, const char *subject, const struct regex_match *m,
                   struct outbuf *o)
{
    for (size_t i = 0; i < r->n_parts; i++) {
        const struct part *pt = &r->parts[i];
        if (pt->group < 0)
            out_put(o, r->lit + pt->off, pt->len);
        else if (m->start[pt->group] >= 0)
            out_put(o, subject + m->start[pt->group],
                    (size_t)(m->end[pt->group] - m->start[pt->group]));
    }
}

/* Java's String.replaceAll: every match from left to right, an empty match advancing by one. */
static int replace_all(const struct rule *r, const char *s, size_t len, struct outbuf *o)
{
    size_t copied = 0, from = 0;
    struct regex_match m;
    while (from <= len) {
        enum regex_result res = regex_search(r->re, s, len, from, &m);
        if (res == REGEX_TOO_COMPLEX)
            return -ERR_LIMIT;
        if (res == REGEX_NOMATCH)
            break;
        size_t ms = (size_t)m.start[0], me = (size_t)m.end[0];
        out_put(o, s + copied, ms - copied);
        expand(r, s, &m, o);
        copied = me;
        from = me == ms ? me + 1 : me;
    }
    out_put(o, s + copied, len - copied);
    return 0;
}

static int apply(const struct rule *r, const char *s, size_t len, struct outbuf *o)
{
    if (r->is_default) {
        out_put(o, s, len);
        return 0;
    }
    enum regex_result res = regex_full_match(r->re, s, len, NULL);
    if (res == REGEX_TOO_COMPLEX)
        return -ERR_LIMIT;
    if (res == REGEX_NOMATCH)
        return -ERR_NOT_FOUND;
    int rc = replace_all(r, s, len, o);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < o->len && r->fold; i++) {
        unsigned char c = (unsigned char)o->p[i];
        if (r->fold == 'L' && c >= 'A' && c <= 'Z')
            o->p[i] = (char)(c + 32);
        else if (r->fold == 'U' && c >= 'a' && c <= 'z')
            o->p[i] = (char)(c - 32);
    }
    return 0;
}

int principal_rules_map(const struct principal_rules *rs, const char *subject, size_t len,
                        char *out, size_t cap)
{
    CHECK(cap >= 1);
    out[0] = '\0';
    if (len > PRINCIPAL_SUBJECT_MAX)
        return -ERR_TOO_LARGE;
    size_t usable = MIN(cap, (size_t)PRINCIPAL_NAME_MAX) - 1;
    for (int i = 0; i < rs->n; i++) {
        struct outbuf o = {.p = out, .cap = usable};
        int rc = apply(&rs->rules[i], subject, len, &o);
        if (rc == -ERR_NOT_FOUND)
            continue;
        if (rc == 0 && o.overflow)
            rc = -ERR_TOO_LARGE;
        out[rc == 0 ? o.len : 0] = '\0';
        return rc;
    }
    return -ERR_NOT_FOUND;
}
