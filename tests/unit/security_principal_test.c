/* ssl.principal.mapping.rules and the Java-syntax regex subset under them (security/). The
 * expected names are what Kafka's SslPrincipalMapper gives for the same rules and subjects. */
#include "base/errors.h"
#include "security/principal.h"
#include "security/regex.h"
#include "test.h"

static enum regex_result full(const char *pat, const char *s, struct regex_match *m)
{
    struct regex *re;
    char err[256];
    if (regex_compile(pat, strlen(pat), &re, err, sizeof(err)) != 0)
        test_fail(__FILE__, __LINE__, "pattern '%s' refused: %s", pat, err);
    enum regex_result r = regex_full_match(re, s, strlen(s), m);
    regex_free(re);
    return r;
}

static void refused(const char *pat, const char *needle)
{
    struct regex *re = NULL;
    char err[256] = "";
    ASSERT_EQ(regex_compile(pat, strlen(pat), &re, err, sizeof(err)), -1);
    if (!strstr(err, needle))
        fprintf(stderr, "pattern '%s': error '%s' does not say '%s'\n", pat, err, needle);
    ASSERT(strstr(err, needle) != NULL);
}

TEST(regex_lazy_and_greedy_captures_as_java)
{
    struct regex_match m;
    const char *dn = "CN=alice,OU=eng,O=acme,C=US";
    ASSERT_EQ(full("^CN=(.*?),.*$", dn, &m), REGEX_MATCH);
    ASSERT_EQ(m.start[1], 3);
    ASSERT_EQ(m.end[1], 8); /* lazy: up to the first comma */
    ASSERT_EQ(full("^CN=(.*),.*$", dn, &m), REGEX_MATCH);
    ASSERT_EQ(m.end[1], 22); /* greedy: up to the last comma */
    ASSERT_EQ(full("CN=(a|al|ali)(ce|ice),.*", dn, &m), REGEX_MATCH);
    ASSERT_EQ(m.end[1] - m.start[1], 2); /* alternatives in order: "al" + "ice" */
    ASSERT_EQ(full("[A-Z]{2}=\\w+(,[A-Z]+=[^,]+){3}", dn, &m), REGEX_MATCH);
    ASSERT_EQ(m.start[1], 22); /* a group in a loop keeps its last iteration */
    ASSERT_EQ(full("CN=alice", dn, NULL), REGEX_NOMATCH); /* the whole subject must match */
    ASSERT_EQ(full("(a*)*b", "aaab", &m), REGEX_MATCH);
    ASSERT_EQ(full("(a*)*", "", &m), REGEX_MATCH); /* empty iterations end the loop */
    ASSERT_EQ(full("x{2,3}?y", "xxxy", NULL), REGEX_MATCH);
    ASSERT_EQ(full("x{2,3}y", "xxxxy", NULL), REGEX_NOMATCH);
    ASSERT_EQ(full("a.c", "a\nc", NULL), REGEX_NOMATCH);  /* . is not a line terminator */
    ASSERT_EQ(full("abc$", "abc\n", NULL), REGEX_NOMATCH); /* matches() needs the whole input */
    ASSERT_EQ(full("[]a-]+", "]-a", NULL), REGEX_MATCH);
    ASSERT_EQ(full("[^,]+\\x2C\\s\\d", "ab, 7", NULL), REGEX_MATCH);
    ASSERT_EQ(full("a\\/b\\.c", "a/b.c", NULL), REGEX_MATCH);
}

TEST(regex_search_gives_the_leftmost_match)
{
    struct regex *re;
    char err[256];
    ASSERT_EQ(regex_compile("o+", 2, &re, err, sizeof(err)), 0);
    struct regex_match m;
    ASSERT_EQ(regex_search(re, "foo boo", 7, 0, &m), REGEX_MATCH);
    ASSERT_EQ(m.start[0], 1);
    ASSERT_EQ(m.end[0], 3);
    ASSERT_EQ(regex_search(re, "foo boo", 7, 3, &m), REGEX_MATCH);
    ASSERT_EQ(m.start[0], 5);
    ASSERT_EQ(regex_search(re, "foo boo", 7, 7, &m), REGEX_NOMATCH);
    regex_free(re);
}

TEST(regex_refuses_what_it_would_match_differently_from_java)
{
    refused("a(?=b)", "(?");
    refused("(?<n>a)", "(?");
    refused("a++", "possessive");
    refused("(a)\\1", "unsupported escape \\1");
    refused("\\bword", "unsupported escape \\b");
    refused("\\p{L}", "unsupported escape \\p");
    refused("[a[b]]", "nested");
    refused("[a-z&&[^e]]", "intersections");
    refused("*a", "dangling");
    refused("a**", "dangling");
    refused("a{2", "illegal repetition");
    refused("a{3,2}", "illegal repetition");
    refused("a{1001}", "illegal repetition");
    refused("(ab", "unclosed group");
    refused("ab)", "unmatched closing");
    refused("[ab", "unclosed character class");
    refused("[z-a]", "illegal character range");
    refused("ab\\", "backslash ends");
    refused("((((a{1000}){1000})))", "too large");
}

TEST(regex_gives_up_on_patterns_that_explode)
{
    /* catastrophic backtracking: bounded by the step limit, not by time */
    struct regex_match m;
    char s[64];
    memset(s, 'a', 40);
    s[40] = '!';
    s[41] = '\0';
    ASSERT_EQ(full("(a|aa|aaa)*b", s, &m), REGEX_TOO_COMPLEX);
}

static struct principal_rules *rules(const char *text)
{
    struct principal_rules *r;
    char err[512];
    if (principal_rules_parse(text, &r, err, sizeof(err)) != 0)
        test_fail(__FILE__, __LINE__, "rules '%s' refused: %s", text, err);
    return r;
}

static const char *map(const struct principal_rules *r, const char *dn, char *out, size_t cap,
                       int *rc)
{
    *rc = principal_rules_map(r, dn, strlen(dn), out, cap);
    return out;
}

TEST(principal_rules_map_as_kafka)
{
    char out[PRINCIPAL_NAME_MAX];
    int rc;
    const char *dn = "CN=Duke,OU=ServiceUsers,O=Org,C=US";
    struct principal_rules *r = rules("DEFAULT");
    ASSERT_STREQ(map(r, dn, out, sizeof(out), &rc), dn);
    ASSERT_EQ(rc, 0);
    principal_rules_free(r);

    /* Kafka's documented examples */
    r = rules("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),"
              "ST=(.*?),C=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,DEFAULT");
    ASSERT_STREQ(map(r, dn, out, sizeof(out), &rc), "Duke");
    ASSERT_STREQ(map(r, "CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", out, sizeof(out), &rc),
                 "duke@sme");
    ASSERT_STREQ(map(r, "cn=duke,ou=JavaSoft,o=Sun Microsystems", out, sizeof(out), &rc), "duke");
    ASSERT_STREQ(map(r, "OU=JavaSoft,O=Sun Microsystems,C=US", out, sizeof(out), &rc),
                 "OU=JavaSoft,O=Sun Microsystems,C=US"); /* falls through to DEFAULT */
    principal_rules_free(r);

    r = rules("RULE:^CN=([^,]*),.*$/$1/U");
    ASSERT_STREQ(map(r, "CN=alice,O=acme", out, sizeof(out), &rc), "ALICE");
    map(r, "O=acme", out, sizeof(out), &rc);
    ASSERT_EQ(rc, -ERR_NOT_FOUND); /* no rule applies: Kafka refuses the connection */
    ASSERT_STREQ(out, "");
    principal_rules_free(r);
}

TEST(principal_replacement_follows_java_replace_all)
{
    char out[PRINCIPAL_NAME_MAX];
    int rc;
    /* every match is replaced, an empty match after the whole one included ("xx") */
    struct principal_rules *r = rules("RULE:.*/x/");
    ASSERT_STREQ(map(r, "abc", out, sizeof(out), &rc), "xx");
    principal_rules_free(r);
    r = rules("RULE:(O=[^,]*),?(.*)/[$1]$2/");
    ASSERT_STREQ(map(r, "O=a,O=b", out, sizeof(out), &rc), "[O=a]O=b");
    principal_rules_free(r);
    /* $12 with one group: group 1 then "2"; $5 with one group is text; \$ and \\ are text */
    r = rules("RULE:^CN=(\\w+).*$/$12-$5-\\$1-\\\\/");
    ASSERT_STREQ(map(r, "CN=bob,O=x", out, sizeof(out), &rc), "bob2-$5-$1-\\");
    principal_rules_free(r);
    /* a slash inside the pattern and the replacement (unescaped, even in a class, it would end
     * the part, as in Kafka) */
    r = rules("RULE:^CN=([^\\/]*)\\/(.*)$/$2\\/$1/");
    ASSERT_STREQ(map(r, "CN=a/b", out, sizeof(out), &rc), "b/a");
    principal_rules_free(r);
    /* spaces around rules, empty entries */
    r = rules("  RULE:^CN=(.*?),.*$/$1/L , , DEFAULT  ");
    ASSERT_STREQ(map(r, "CN=Eve,O=x", out, sizeof(out), &rc), "eve");
    ASSERT_STREQ(map(r, "O=x", out, sizeof(out), &rc), "O=x");
    principal_rules_free(r);
    /* a name longer than the room given */
    r = rules("DEFAULT");
    map(r, "CN=a-rather-long-name", out, 8, &rc);
    ASSERT_EQ(rc, -ERR_TOO_LARGE);
    ASSERT_STREQ(out, "");
    principal_rules_free(r);
}

static void rules_refused(const char *text, const char *needle)
{
    struct principal_rules *r = NULL;
    char err[512] = "";
    ASSERT_EQ(principal_rules_parse(text, &r, err, sizeof(err)), -1);
    if (!strstr(err, needle))
        fprintf(stderr, "rules '%s': error '%s' does not say '%s'\n", text, err, needle);
    ASSERT(strstr(err, needle) != NULL);
}

TEST(principal_rules_refuse_bad_rules_by_name)
{
    rules_refused("DEFAULTX", "unexpected text");
    rules_refused("RULE:^CN=(.*)$/$1/X", "unexpected text");
    rules_refused("RULE:^CN=(.*)$/$1", "after the replacement");
    rules_refused("RULE:^CN=(.*)$", "after the pattern");
    rules_refused("rule:a/b/", "expected DEFAULT or RULE");
    rules_refused("DEFAULT,RULE:(a/b/", "rule 2");
    rules_refused("RULE:(a/b/", "unclosed group");
    rules_refused("RULE:a/$1/", "no capturing group");
    rules_refused("RULE:(a)/$x/", "group number");
    rules_refused("RULE:(a)/${name}/", "named group");
}
