/* A small regular-expression engine with Java's syntax and matching rules, for the patterns of
 * ssl.principal.mapping.rules (Kafka compiles them with java.util.regex).
 *
 * Supported, with java.util.regex's meaning: literals; `.` (any byte but \n and \r); classes
 * `[...]` and `[^...]` with ranges and the escapes below; `\d \D \w \W \s \S`; `\t \n \r \f \a
 * \e \xhh`; a backslash before any other non-alphanumeric byte quotes it; anchors `^` (start)
 * and `$` (end, or before a final line terminator); groups `( )` (capturing) and `(?: )`;
 * alternation `|`, tried left to right; quantifiers `* + ? {n} {n,} {n,m}`, greedy or lazy
 * (a trailing `?`). Matching is backtracking with Java's priorities, so `^CN=(.*?),.*$` captures
 * up to the first comma. Anything else Java has (possessive quantifiers, lookaround,
 * back-references, named groups, flags, nested or intersected classes, \b, \p{...}, \Q...\E)
 * is refused at compile time with a message naming it, rather than matched differently.
 *
 * Subjects are bytes (Java matches UTF-16 units: the two agree on ASCII). A match is bounded: it
 * gives up after REGEX_STEPS_MAX steps, so no pattern can hold the reactor for long.
 *
 * Pure computation, no global state: safe on any thread. */
#ifndef SP_SECURITY_REGEX_H
#define SP_SECURITY_REGEX_H

#include <stdbool.h>
#include <stddef.h>

#define REGEX_GROUPS_MAX 32       /* capturing groups in one pattern */
#define REGEX_PROGRAM_MAX 8192    /* instructions after expanding counted repetitions */
#define REGEX_STEPS_MAX 100000    /* VM steps per match or search call (all start positions) */

struct regex;

/* A match's capture groups: group 0 is the whole match. start[i] = -1: group i did not take
 * part in the match. */
struct regex_match {
    long start[REGEX_GROUPS_MAX + 1];
    long end[REGEX_GROUPS_MAX + 1];
};

/* Compiles pattern[0, len). Returns 0 with *out (release with regex_free), or -1 with a message
 * in err naming what is wrong and where. */
int regex_compile(const char *pattern, size_t len, struct regex **out, char *err, size_t errcap);
void regex_free(struct regex *re);
/* Capturing groups of the pattern (not counting group 0). */
int regex_groups(const struct regex *re);

/* Result of the matching functions. */
enum regex_result { REGEX_NOMATCH = 0, REGEX_MATCH = 1, REGEX_TOO_COMPLEX = -1 };

/* Whether the whole of s[0, len) matches (Java's Matcher.matches()). m may be NULL. */
enum regex_result regex_full_match(const struct regex *re, const char *s, size_t len,
                                   struct regex_match *m);
/* The first match starting at or after `from` (Java's Matcher.find(from)). */
enum regex_result regex_search(const struct regex *re, const char *s, size_t len, size_t from,
                               struct regex_match *m);

#endif
