/* ACLs and the authorizer's decision (security/acl.h). The expected answers are what Kafka's
 * StandardAuthorizer and AclBindingFilter give for the same bindings and requests. */
#include "base/errors.h"
#include "security/acl.h"
#include "test.h"

#define HOST "10.0.0.1"

static struct acl_binding binding(enum acl_resource_type rt, const char *name,
                                  enum acl_pattern_type pt, const char *principal, const char *host,
                                  enum acl_operation op, enum acl_permission perm)
{
    struct acl_binding b;
    memset(&b, 0, sizeof(b));
    b.resource_type = rt;
    b.pattern_type = pt;
    b.operation = op;
    b.permission = perm;
    ASSERT_EQ(acl_binding_set_strings(&b, name, strlen(name), principal, strlen(principal), host,
                                      strlen(host)),
              0);
    return b;
}

static void add(struct acl_store *s, enum acl_resource_type rt, const char *name,
                enum acl_pattern_type pt, const char *principal, const char *host,
                enum acl_operation op, enum acl_permission perm)
{
    struct acl_binding b = binding(rt, name, pt, principal, host, op, perm);
    bool added = false;
    ASSERT_EQ(acl_store_add(s, &b, &added), 0);
    ASSERT(added);
}

/* A binding on a topic from any host. */
static void topic(struct acl_store *s, const char *name, enum acl_pattern_type pt,
                  const char *principal, enum acl_operation op, enum acl_permission perm)
{
    add(s, ACL_RESOURCE_TOPIC, name, pt, principal, "*", op, perm);
}

static enum acl_result az(const struct acl_store *s, const char *principal, enum acl_operation op,
                          enum acl_resource_type rt, const char *name)
{
    return acl_authorize(s, principal, HOST, op, rt, name, NULL);
}

static enum acl_result az_topic(const struct acl_store *s, const char *principal,
                                enum acl_operation op, const char *name)
{
    return az(s, principal, op, ACL_RESOURCE_TOPIC, name);
}

TEST(security_acl_literal_wildcard_and_prefixed_patterns_cover_names)
{
    struct acl_store *s = acl_store_new(64);
    topic(s, "orders", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_ALLOW);
    topic(s, "pay-", ACL_PATTERN_PREFIXED, "User:bob", ACL_OP_WRITE, ACL_PERM_ALLOW);
    topic(s, "ord*", ACL_PATTERN_LITERAL, "User:dave", ACL_OP_READ, ACL_PERM_ALLOW);
    topic(s, "*", ACL_PATTERN_PREFIXED, "User:erin", ACL_OP_READ, ACL_PERM_ALLOW);
    add(s, ACL_RESOURCE_GROUP, "*", ACL_PATTERN_LITERAL, "User:carol", "*", ACL_OP_READ,
        ACL_PERM_ALLOW);

    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "orders"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "orders2"), ACL_DENIED); /* not a prefix */
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "order"), ACL_DENIED);
    ASSERT_EQ(az(s, "User:alice", ACL_OP_READ, ACL_RESOURCE_GROUP, "orders"), ACL_DENIED);

    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_WRITE, "pay-1"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_WRITE, "pay-"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_WRITE, "pay"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_WRITE, "xpay-1"), ACL_DENIED);

    /* LITERAL "*" is every group; a "*" inside a name or after PREFIXED is just a byte. */
    ASSERT_EQ(az(s, "User:carol", ACL_OP_READ, ACL_RESOURCE_GROUP, "g1"), ACL_ALLOWED);
    ASSERT_EQ(az(s, "User:carol", ACL_OP_READ, ACL_RESOURCE_GROUP, "anything"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:carol", ACL_OP_READ, "g1"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:dave", ACL_OP_READ, "orders"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:dave", ACL_OP_READ, "ord*"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:erin", ACL_OP_READ, "orders"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:erin", ACL_OP_READ, "*x"), ACL_ALLOWED);
    acl_store_free(s);
}

TEST(security_acl_wildcard_principal_applies_to_everyone)
{
    struct acl_store *s = acl_store_new(64);
    topic(s, "public", ACL_PATTERN_LITERAL, "User:*", ACL_OP_READ, ACL_PERM_ALLOW);
    topic(s, "private", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_ALLOW);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "public"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_READ, "public"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "private"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_READ, "private"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:alicex", ACL_OP_READ, "private"), ACL_DENIED);
    acl_store_free(s);
}

TEST(security_acl_host_must_equal_or_be_wildcard)
{
    struct acl_store *s = acl_store_new(64);
    add(s, ACL_RESOURCE_TOPIC, "t", ACL_PATTERN_LITERAL, "User:alice", "10.0.0.1", ACL_OP_READ,
        ACL_PERM_ALLOW);
    add(s, ACL_RESOURCE_TOPIC, "t2", ACL_PATTERN_LITERAL, "User:alice", "*", ACL_OP_READ,
        ACL_PERM_ALLOW);
    add(s, ACL_RESOURCE_TOPIC, "t2", ACL_PATTERN_LITERAL, "User:alice", "10.0.0.9", ACL_OP_READ,
        ACL_PERM_DENY);
    add(s, ACL_RESOURCE_TOPIC, "t6", ACL_PATTERN_LITERAL, "User:alice", "2001:db8::1", ACL_OP_READ,
        ACL_PERM_ALLOW);
    const char *p = "User:alice";
    ASSERT_EQ(acl_authorize(s, p, "10.0.0.1", ACL_OP_READ, ACL_RESOURCE_TOPIC, "t", NULL),
              ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, p, "10.0.0.2", ACL_OP_READ, ACL_RESOURCE_TOPIC, "t", NULL),
              ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, p, "10.0.0.2", ACL_OP_READ, ACL_RESOURCE_TOPIC, "t2", NULL),
              ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, p, "10.0.0.9", ACL_OP_READ, ACL_RESOURCE_TOPIC, "t2", NULL),
              ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, p, "2001:db8::1", ACL_OP_READ, ACL_RESOURCE_TOPIC, "t6", NULL),
              ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, p, "2001:db8::2", ACL_OP_READ, ACL_RESOURCE_TOPIC, "t6", NULL),
              ACL_DENIED);
    acl_store_free(s);
}

TEST(security_acl_deny_beats_allow)
{
    struct acl_store *s = acl_store_new(64);
    topic(s, "t", ACL_PATTERN_LITERAL, "User:*", ACL_OP_ALL, ACL_PERM_ALLOW);
    topic(s, "t", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_DENY);
    topic(s, "t", ACL_PATTERN_LITERAL, "User:bob", ACL_OP_ALL, ACL_PERM_DENY);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "t"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_WRITE, "t"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:carol", ACL_OP_READ, "t"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_READ, "t"), ACL_DENIED); /* DENY ALL */
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_WRITE, "t"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_DESCRIBE, "t"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:bob", ACL_OP_ALTER_CONFIGS, "t"), ACL_DENIED);

    /* A DENY on another pattern that covers the name (prefix, "*"), or for everyone, wins. */
    topic(s, "pay", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_WRITE, ACL_PERM_ALLOW);
    topic(s, "pa", ACL_PATTERN_PREFIXED, "User:alice", ACL_OP_WRITE, ACL_PERM_DENY);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_WRITE, "pay"), ACL_DENIED);
    topic(s, "q", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_WRITE, ACL_PERM_ALLOW);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_WRITE, "q"), ACL_ALLOWED);
    topic(s, "*", ACL_PATTERN_LITERAL, "User:*", ACL_OP_WRITE, ACL_PERM_DENY);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_WRITE, "q"), ACL_DENIED);
    acl_store_free(s);
}

/* An ALLOW of op on topic t, then whether want is ALLOWED for its principal. */
static enum acl_result allow_then_ask(enum acl_operation op, enum acl_operation want)
{
    struct acl_store *s = acl_store_new(4);
    topic(s, "t", ACL_PATTERN_LITERAL, "User:alice", op, ACL_PERM_ALLOW);
    enum acl_result r = az_topic(s, "User:alice", want, "t");
    acl_store_free(s);
    return r;
}

TEST(security_acl_allow_implies_describe_and_describe_configs)
{
    const enum acl_operation implies_describe[] = {ACL_OP_READ, ACL_OP_WRITE, ACL_OP_DELETE,
                                                   ACL_OP_ALTER, ACL_OP_DESCRIBE};
    for (size_t i = 0; i < sizeof(implies_describe) / sizeof(implies_describe[0]); i++) {
        ASSERT_EQ(allow_then_ask(implies_describe[i], ACL_OP_DESCRIBE), ACL_ALLOWED);
        ASSERT_EQ(allow_then_ask(implies_describe[i], implies_describe[i]), ACL_ALLOWED);
    }
    ASSERT_EQ(allow_then_ask(ACL_OP_CREATE, ACL_OP_DESCRIBE), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_ALTER_CONFIGS, ACL_OP_DESCRIBE), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_DESCRIBE_CONFIGS, ACL_OP_DESCRIBE), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_ALTER_CONFIGS, ACL_OP_DESCRIBE_CONFIGS), ACL_ALLOWED);
    ASSERT_EQ(allow_then_ask(ACL_OP_ALTER, ACL_OP_DESCRIBE_CONFIGS), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_DESCRIBE_CONFIGS, ACL_OP_ALTER_CONFIGS), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_ALTER, ACL_OP_ALTER_CONFIGS), ACL_DENIED);
    /* Implication goes one way, to DESCRIBE only. */
    ASSERT_EQ(allow_then_ask(ACL_OP_WRITE, ACL_OP_READ), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_READ, ACL_OP_WRITE), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_DESCRIBE, ACL_OP_READ), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_ALTER, ACL_OP_DELETE), ACL_DENIED);
    ASSERT_EQ(allow_then_ask(ACL_OP_WRITE, ACL_OP_IDEMPOTENT_WRITE), ACL_DENIED);
    for (int op = ACL_OP_READ; op <= ACL_OP_DESCRIBE_TOKENS; op++)
        ASSERT_EQ(allow_then_ask(ACL_OP_ALL, (enum acl_operation)op), ACL_ALLOWED);
}

TEST(security_acl_deny_is_not_widened_by_implication)
{
    struct acl_store *s = acl_store_new(64);
    /* Kafka's findResult: implication applies to ALLOW only. */
    topic(s, "a", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_ALL, ACL_PERM_ALLOW);
    topic(s, "a", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_DENY);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "a"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_DESCRIBE, "a"), ACL_ALLOWED);

    topic(s, "b", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_ALLOW);
    topic(s, "b", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_DESCRIBE, ACL_PERM_DENY);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "b"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_DESCRIBE, "b"), ACL_DENIED);

    topic(s, "c", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_ALL, ACL_PERM_ALLOW);
    topic(s, "c", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_ALTER_CONFIGS, ACL_PERM_DENY);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_ALTER_CONFIGS, "c"), ACL_DENIED);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_DESCRIBE_CONFIGS, "c"), ACL_ALLOWED);

    /* A DENY of one operation leaves another one's ALLOW alone. */
    topic(s, "d", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_WRITE, ACL_PERM_ALLOW);
    topic(s, "d", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_DENY);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_DESCRIBE, "d"), ACL_ALLOWED);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_WRITE, "d"), ACL_ALLOWED);
    acl_store_free(s);
}

TEST(security_acl_super_users_are_always_allowed)
{
    struct acl_super_users *su;
    char err[128];
    ASSERT_EQ(acl_super_users_parse("User:admin;User:ops", &su, err, sizeof(err)), 0);
    struct acl_settings set = {.super_users = su, .allow_if_no_acl = false};
    struct acl_store *s = acl_store_new(8);
    const char *h = HOST;
    const enum acl_resource_type T = ACL_RESOURCE_TOPIC;

    ASSERT_EQ(acl_authorize(s, "User:admin", h, ACL_OP_READ, T, "t", &set), ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, "User:alice", h, ACL_OP_READ, T, "t", &set), ACL_DENIED);
    topic(s, "t", ACL_PATTERN_LITERAL, "User:*", ACL_OP_ALL, ACL_PERM_DENY);
    ASSERT_EQ(acl_authorize(s, "User:admin", h, ACL_OP_READ, T, "t", &set), ACL_ALLOWED);
    ASSERT_EQ(
        acl_authorize(s, "User:ops", h, ACL_OP_ALTER, ACL_RESOURCE_CLUSTER, ACL_CLUSTER_NAME, &set),
        ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, "User:Admin", h, ACL_OP_READ, T, "t", &set), ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, "User:admin", h, ACL_OP_READ, T, "t", NULL), ACL_DENIED);
    acl_store_free(s);
    acl_super_users_free(su);
}

TEST(security_acl_allow_everyone_if_no_acl_found_both_ways)
{
    struct acl_store *s = acl_store_new(64);
    struct acl_settings open = {.super_users = NULL, .allow_if_no_acl = true};
    struct acl_settings closed = {.super_users = NULL, .allow_if_no_acl = false};
    const char *a = "User:alice", *h = HOST;
    const enum acl_resource_type T = ACL_RESOURCE_TOPIC;
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "t", &open), ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "t", &closed), ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "t", NULL), ACL_DENIED); /* default */

    /* An ACL for someone else, another host or another operation means an ACL was found. */
    topic(s, "t", ACL_PATTERN_LITERAL, "User:bob", ACL_OP_READ, ACL_PERM_ALLOW);
    add(s, T, "u", ACL_PATTERN_LITERAL, a, "10.9.9.9", ACL_OP_READ, ACL_PERM_ALLOW);
    topic(s, "v", ACL_PATTERN_LITERAL, a, ACL_OP_WRITE, ACL_PERM_ALLOW);
    topic(s, "w-", ACL_PATTERN_PREFIXED, "User:bob", ACL_OP_READ, ACL_PERM_ALLOW);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "t", &open), ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "u", &open), ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "v", &open), ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "w-1", &open), ACL_DENIED);
    /* ... but not one on a pattern that does not cover the name, or on another type. */
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "t2", &open), ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "w", &open), ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, ACL_RESOURCE_GROUP, "t", &open), ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, a, h, ACL_OP_READ, T, "t2", &closed), ACL_DENIED);
    /* A matching ALLOW answers whatever the setting. */
    ASSERT_EQ(acl_authorize(s, "User:bob", h, ACL_OP_READ, T, "t", &closed), ACL_ALLOWED);
    acl_store_free(s);
}

TEST(security_acl_authorize_fails_closed_on_non_concrete_requests)
{
    struct acl_super_users *su;
    ASSERT_EQ(acl_super_users_parse("User:admin", &su, NULL, 0), 0);
    struct acl_settings set = {.super_users = su, .allow_if_no_acl = true};
    struct acl_store *s = acl_store_new(8);
    const char *h = HOST;
    ASSERT_EQ(acl_authorize(s, "User:a", h, ACL_OP_READ, ACL_RESOURCE_TOPIC, "t", &set),
              ACL_ALLOWED);
    ASSERT_EQ(acl_authorize(s, "User:a", h, ACL_OP_ANY, ACL_RESOURCE_TOPIC, "t", &set), ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, "User:admin", h, ACL_OP_UNKNOWN, ACL_RESOURCE_TOPIC, "t", &set),
              ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, "User:a", h, (enum acl_operation)15, ACL_RESOURCE_TOPIC, "t", &set),
              ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, "User:admin", h, ACL_OP_READ, ACL_RESOURCE_ANY, "t", &set),
              ACL_DENIED);
    ASSERT_EQ(acl_authorize(s, "User:a", h, ACL_OP_READ, (enum acl_resource_type)8, "t", &set),
              ACL_DENIED);
    acl_store_free(s);
    acl_super_users_free(su);
}

TEST(security_acl_may_describe_topic_follows_describe)
{
    struct acl_store *s = acl_store_new(8);
    topic(s, "t", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_WRITE, ACL_PERM_ALLOW);
    topic(s, "u", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_ALLOW);
    topic(s, "u", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_DESCRIBE, ACL_PERM_DENY);
    ASSERT(acl_may_describe_topic(s, "User:alice", HOST, "t", NULL));
    ASSERT(!acl_may_describe_topic(s, "User:bob", HOST, "t", NULL));
    ASSERT(!acl_may_describe_topic(s, "User:alice", HOST, "u", NULL));
    ASSERT(!acl_may_describe_topic(s, "User:alice", HOST, "none", NULL));
    struct acl_settings open = {.super_users = NULL, .allow_if_no_acl = true};
    ASSERT(acl_may_describe_topic(s, "User:alice", HOST, "none", &open));
    acl_store_free(s);
}

/* The filter-matching fixture: one binding per index. */
static struct acl_store *filter_fixture(void)
{
    struct acl_store *s = acl_store_new(64);
    topic(s, "orders-1", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_ALLOW);
    topic(s, "*", ACL_PATTERN_LITERAL, "User:*", ACL_OP_DESCRIBE, ACL_PERM_ALLOW);
    topic(s, "orders-", ACL_PATTERN_PREFIXED, "User:bob", ACL_OP_WRITE, ACL_PERM_DENY);
    topic(s, "orders-1x", ACL_PATTERN_PREFIXED, "User:alice", ACL_OP_READ, ACL_PERM_ALLOW);
    topic(s, "orders-1", ACL_PATTERN_PREFIXED, "User:alice", ACL_OP_ALL, ACL_PERM_ALLOW);
    topic(s, "orders-2", ACL_PATTERN_LITERAL, "User:alice", ACL_OP_READ, ACL_PERM_ALLOW);
    add(s, ACL_RESOURCE_GROUP, "orders-1", ACL_PATTERN_LITERAL, "User:alice", "10.0.0.7",
        ACL_OP_READ, ACL_PERM_ALLOW);
    return s;
}

/* The matching bindings of s, one letter each: TOPIC as "<L|P>name", GROUP as "G", joined by ','
 * in store order. */
static const char *matches(const struct acl_store *s, const struct acl_filter *f)
{
    static char out[512];
    out[0] = '\0';
    size_t pos = 0;
    const struct acl_binding *b;
    while ((b = acl_store_next(s, f, &pos)) != NULL) {
        ASSERT(acl_filter_matches(f, b));
        if (out[0] != '\0')
            strcat(out, ",");
        if (b->resource_type == ACL_RESOURCE_GROUP) {
            strcat(out, "G");
            continue;
        }
        strcat(out, b->pattern_type == ACL_PATTERN_LITERAL ? "L" : "P");
        strcat(out, b->resource_name);
    }
    return out;
}

static struct acl_filter pattern_filter(enum acl_resource_type rt, enum acl_pattern_type pt,
                                        const char *name)
{
    struct acl_filter f = {.resource_type = rt,
                           .pattern_type = pt,
                           .resource_name = name,
                           .operation = ACL_OP_ANY,
                           .permission = ACL_PERM_ANY};
    return f;
}

TEST(security_acl_filter_pattern_any_match_literal_prefixed_as_kafka)
{
    struct acl_store *s = filter_fixture();
    const enum acl_resource_type T = ACL_RESOURCE_TOPIC;
    struct acl_filter f = pattern_filter(T, ACL_PATTERN_MATCH, "orders-1");
    ASSERT_STREQ(matches(s, &f), "L*,Porders-,Lorders-1,Porders-1");
    f = pattern_filter(T, ACL_PATTERN_ANY, "orders-1");
    ASSERT_STREQ(matches(s, &f), "Lorders-1,Porders-1");
    f = pattern_filter(T, ACL_PATTERN_LITERAL, "orders-1");
    ASSERT_STREQ(matches(s, &f), "Lorders-1");
    f = pattern_filter(T, ACL_PATTERN_PREFIXED, "orders-");
    ASSERT_STREQ(matches(s, &f), "Porders-");
    f = pattern_filter(T, ACL_PATTERN_PREFIXED, "orders-1");
    ASSERT_STREQ(matches(s, &f), "Porders-1");
    f = pattern_filter(T, ACL_PATTERN_LITERAL, "*"); /* only the wildcard binding itself */
    ASSERT_STREQ(matches(s, &f), "L*");
    f = pattern_filter(T, ACL_PATTERN_ANY, "*");
    ASSERT_STREQ(matches(s, &f), "L*");
    f = pattern_filter(T, ACL_PATTERN_MATCH, "orders-1xy");
    ASSERT_STREQ(matches(s, &f), "L*,Porders-,Porders-1,Porders-1x");
    f = pattern_filter(T, ACL_PATTERN_MATCH, "zzz");
    ASSERT_STREQ(matches(s, &f), "L*");
    f = pattern_filter(T, ACL_PATTERN_MATCH, NULL);
    ASSERT_STREQ(matches(s, &f), "L*,Porders-,Lorders-1,Porders-1,Porders-1x,Lorders-2");
    f = pattern_filter(T, ACL_PATTERN_LITERAL, NULL);
    ASSERT_STREQ(matches(s, &f), "L*,Lorders-1,Lorders-2");
    f = pattern_filter(ACL_RESOURCE_ANY, ACL_PATTERN_ANY, NULL);
    ASSERT_STREQ(matches(s, &f), "L*,Porders-,Lorders-1,Porders-1,Porders-1x,Lorders-2,G");
    f = pattern_filter(ACL_RESOURCE_ANY, ACL_PATTERN_MATCH, "orders-1");
    ASSERT_STREQ(matches(s, &f), "L*,Porders-,Lorders-1,Porders-1,G");
    f = pattern_filter(ACL_RESOURCE_GROUP, ACL_PATTERN_ANY, NULL);
    ASSERT_STREQ(matches(s, &f), "G");
    acl_store_free(s);
}

TEST(security_acl_filter_entry_fields_compare_exactly)
{
    struct acl_store *s = filter_fixture();
    struct acl_filter f = pattern_filter(ACL_RESOURCE_ANY, ACL_PATTERN_ANY, NULL);
    f.principal = "User:*"; /* the wildcard binding only, not everyone's */
    ASSERT_STREQ(matches(s, &f), "L*");
    f.principal = "User:bob";
    ASSERT_STREQ(matches(s, &f), "Porders-");
    f.principal = NULL;
    f.host = "10.0.0.7";
    ASSERT_STREQ(matches(s, &f), "G");
    f.host = "*";
    ASSERT_STREQ(matches(s, &f), "L*,Porders-,Lorders-1,Porders-1,Porders-1x,Lorders-2");
    f.host = NULL;
    f.operation = ACL_OP_READ; /* not the ALL binding: the operation is compared, not implied */
    ASSERT_STREQ(matches(s, &f), "Lorders-1,Porders-1x,Lorders-2,G");
    f.operation = ACL_OP_ALL;
    ASSERT_STREQ(matches(s, &f), "Porders-1");
    f.operation = ACL_OP_ANY;
    f.permission = ACL_PERM_DENY;
    ASSERT_STREQ(matches(s, &f), "Porders-");
    f.permission = ACL_PERM_ALLOW;
    f.principal = "User:alice";
    f.resource_type = ACL_RESOURCE_TOPIC;
    f.pattern_type = ACL_PATTERN_MATCH;
    f.resource_name = "orders-1";
    ASSERT_STREQ(matches(s, &f), "Lorders-1,Porders-1");
    acl_store_free(s);
}

TEST(security_acl_filter_with_unknown_fields_is_refused_and_matches_nothing)
{
    struct acl_store *s = filter_fixture();
    struct acl_filter ok = pattern_filter(ACL_RESOURCE_ANY, ACL_PATTERN_ANY, NULL);
    ASSERT_EQ(acl_filter_check(&ok), 0);
    struct acl_filter bad[6] = {ok, ok, ok, ok, ok, ok};
    bad[0].resource_type = ACL_RESOURCE_UNKNOWN;
    bad[1].pattern_type = ACL_PATTERN_UNKNOWN;
    bad[2].operation = ACL_OP_UNKNOWN;
    bad[3].permission = ACL_PERM_UNKNOWN;
    bad[4].resource_type = (enum acl_resource_type)8;
    bad[5].operation = (enum acl_operation)15;
    for (size_t i = 0; i < 6; i++) {
        ASSERT_EQ(acl_filter_check(&bad[i]), -ERR_INVALID);
        ASSERT_STREQ(matches(s, &bad[i]), "");
        ASSERT(!acl_filter_matches(&bad[i], acl_store_get(s, 0)));
        size_t n = 99;
        ASSERT_EQ(acl_store_remove(s, &bad[i], NULL, 0, &n), -ERR_INVALID);
        ASSERT_EQ(n, 0);
    }
    ASSERT_EQ(acl_store_count(s), 7);
    acl_store_free(s);
}

TEST(security_acl_store_add_ignores_duplicates_and_keeps_order)
{
    struct acl_store *s = acl_store_new(3);
    struct acl_binding c = binding(ACL_RESOURCE_TOPIC, "c", ACL_PATTERN_LITERAL, "User:a", "*",
                                   ACL_OP_READ, ACL_PERM_ALLOW);
    struct acl_binding a = c, g = c;
    strcpy(a.resource_name, "a");
    g.resource_type = ACL_RESOURCE_GROUP;
    bool added = true;
    ASSERT_EQ(acl_store_add(s, &g, &added), 0);
    ASSERT(added);
    ASSERT_EQ(acl_store_add(s, &c, &added), 0);
    ASSERT_EQ(acl_store_add(s, &c, &added), 0);
    ASSERT(!added);
    ASSERT_EQ(acl_store_count(s), 2);
    ASSERT_EQ(acl_store_add(s, &a, NULL), 0);
    ASSERT_STREQ(acl_store_get(s, 0)->resource_name, "a");
    ASSERT_STREQ(acl_store_get(s, 1)->resource_name, "c");
    ASSERT_EQ(acl_store_get(s, 2)->resource_type, ACL_RESOURCE_GROUP);

    /* Full: a new binding is refused, a duplicate is still fine. */
    struct acl_binding d = c;
    d.permission = ACL_PERM_DENY;
    ASSERT_EQ(acl_store_add(s, &d, &added), -ERR_LIMIT);
    ASSERT(!added);
    ASSERT_EQ(acl_store_add(s, &a, &added), 0);
    ASSERT(!added);
    ASSERT_EQ(acl_store_count(s), 3);

    /* Garbage past a string's NUL does not make a second copy. */
    acl_store_clear(s);
    ASSERT_EQ(acl_store_count(s), 0);
    struct acl_binding dirty = c;
    memset(dirty.resource_name, 'x', sizeof(dirty.resource_name));
    strcpy(dirty.resource_name, "c");
    ASSERT_EQ(acl_store_add(s, &dirty, &added), 0);
    ASSERT(added);
    const char *stored = acl_store_get(s, 0)->resource_name;
    for (size_t i = 1; i < sizeof(dirty.resource_name); i++)
        ASSERT_EQ(stored[i], 0); /* the store keeps zeroes past the NUL, not the caller's bytes */
    ASSERT_EQ(acl_store_add(s, &c, &added), 0);
    ASSERT(!added);
    ASSERT_EQ(acl_store_count(s), 1);
    acl_store_free(s);
}

TEST(security_acl_store_remove_returns_what_it_removed)
{
    struct acl_store *s = filter_fixture();
    struct acl_binding out[8];
    size_t n = 0;
    struct acl_filter f = pattern_filter(ACL_RESOURCE_TOPIC, ACL_PATTERN_MATCH, "orders-1");
    /* Too little room: nothing removed, the count told. */
    ASSERT_EQ(acl_store_remove(s, &f, out, 3, &n), -ERR_TOO_LARGE);
    ASSERT_EQ(n, 4);
    ASSERT_EQ(acl_store_count(s), 7);
    ASSERT_EQ(acl_store_remove(s, &f, NULL, 0, &n), -ERR_TOO_LARGE);
    ASSERT_EQ(n, 4);

    ASSERT_EQ(acl_store_remove(s, &f, out, 8, &n), 0);
    ASSERT_EQ(n, 4);
    ASSERT_STREQ(out[0].resource_name, "*");
    ASSERT_STREQ(out[1].resource_name, "orders-");
    ASSERT_EQ(out[1].permission, ACL_PERM_DENY);
    ASSERT_STREQ(out[1].principal, "User:bob");
    ASSERT_STREQ(out[2].resource_name, "orders-1");
    ASSERT_EQ(out[2].pattern_type, ACL_PATTERN_LITERAL);
    ASSERT_EQ(out[3].pattern_type, ACL_PATTERN_PREFIXED);
    ASSERT_EQ(out[3].operation, ACL_OP_ALL);
    ASSERT_EQ(acl_store_count(s), 3);
    struct acl_filter all = pattern_filter(ACL_RESOURCE_ANY, ACL_PATTERN_ANY, NULL);
    ASSERT_STREQ(matches(s, &all), "Porders-1x,Lorders-2,G");

    /* Nothing matches: nothing removed, out untouched. */
    ASSERT_EQ(acl_store_remove(s, &f, NULL, 0, &n), 0);
    ASSERT_EQ(n, 0);
    ASSERT_EQ(acl_store_remove(s, &all, out, 8, &n), 0);
    ASSERT_EQ(n, 3);
    ASSERT_EQ(acl_store_count(s), 0);
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_READ, "orders-2"), ACL_DENIED);
    acl_store_free(s);
}

static int check_strings(const char *principal, const char *host)
{
    struct acl_binding b = binding(ACL_RESOURCE_TOPIC, "t", ACL_PATTERN_LITERAL, principal, host,
                                   ACL_OP_READ, ACL_PERM_ALLOW);
    return acl_binding_check(&b);
}

TEST(security_acl_binding_check_refuses_what_cannot_be_stored)
{
    const struct acl_binding ok = binding(ACL_RESOURCE_TOPIC, "t", ACL_PATTERN_LITERAL, "User:a",
                                          "*", ACL_OP_READ, ACL_PERM_ALLOW);
    struct acl_binding bad[16];
    size_t nb = 0;
    bad[nb] = ok, bad[nb++].resource_type = ACL_RESOURCE_ANY;
    bad[nb] = ok, bad[nb++].resource_type = ACL_RESOURCE_UNKNOWN;
    bad[nb] = ok, bad[nb++].resource_type = (enum acl_resource_type)8;
    bad[nb] = ok, bad[nb++].pattern_type = ACL_PATTERN_ANY;
    bad[nb] = ok, bad[nb++].pattern_type = ACL_PATTERN_MATCH;
    bad[nb] = ok, bad[nb++].pattern_type = ACL_PATTERN_UNKNOWN;
    bad[nb] = ok, bad[nb++].operation = ACL_OP_ANY;
    bad[nb] = ok, bad[nb++].operation = ACL_OP_UNKNOWN;
    bad[nb] = ok, bad[nb++].operation = (enum acl_operation)15;
    bad[nb] = ok, bad[nb++].permission = ACL_PERM_ANY;
    bad[nb] = ok, bad[nb++].permission = ACL_PERM_UNKNOWN;
    bad[nb] = ok, bad[nb++].resource_name[0] = '\0';
    bad[nb] = ok, memset(bad[nb++].resource_name, 'a', sizeof(ok.resource_name));
    bad[nb] = ok, memset(bad[nb++].host, '1', sizeof(ok.host));
    bad[nb] = ok, memset(bad[nb++].principal, 'a', sizeof(ok.principal));
    for (size_t i = 0; i < nb; i++)
        ASSERT_EQ(acl_binding_check(&bad[i]), -ERR_INVALID);

    struct acl_binding good[8];
    size_t ng = 0;
    good[ng++] = ok;
    good[ng] = ok, strcpy(good[ng++].resource_name, "*");
    good[ng] = ok, good[ng++].pattern_type = ACL_PATTERN_PREFIXED;
    good[ng] = ok, good[ng].operation = ACL_OP_ALL, good[ng++].permission = ACL_PERM_DENY;
    good[ng] = ok, good[ng++].resource_type = ACL_RESOURCE_USER;
    good[ng] = ok, good[ng++].operation = ACL_OP_DESCRIBE_TOKENS;
    for (size_t i = 0; i < ng; i++)
        ASSERT_EQ(acl_binding_check(&good[i]), 0);

    const char *bad_principals[] = {"alice",     "user:alice", "User:",  "Group:x",
                                    "User:a\nb", "User:a\x7f", ":alice", "User"};
    for (size_t i = 0; i < sizeof(bad_principals) / sizeof(bad_principals[0]); i++)
        ASSERT_EQ(check_strings(bad_principals[i], "*"), -ERR_INVALID);
    ASSERT_EQ(check_strings("User:*", "*"), 0);
    ASSERT_EQ(check_strings("User:CN=alice, OU=eng", "*"), 0);

    const char *bad_hosts[] = {"",   "localhost",   "10.0.0.256",   "*x",
                               "**", "10.0.0.1/24", "fe80::1%eth0", " 10.0.0.1"};
    for (size_t i = 0; i < sizeof(bad_hosts) / sizeof(bad_hosts[0]); i++)
        ASSERT_EQ(check_strings("User:a", bad_hosts[i]), -ERR_INVALID);
    ASSERT_EQ(check_strings("User:a", "::1"), 0);
    ASSERT_EQ(check_strings("User:a", "2001:db8::1"), 0);
    ASSERT_EQ(check_strings("User:a", "0:0:0:0:0:0:0:1"), 0);
    ASSERT_EQ(check_strings("User:a", "192.168.1.1"), 0);

    /* The store refuses the same and keeps nothing. */
    struct acl_store *s = acl_store_new(8);
    struct acl_binding b = binding(ACL_RESOURCE_TOPIC, "t", ACL_PATTERN_LITERAL, "user:a", "*",
                                   ACL_OP_READ, ACL_PERM_ALLOW);
    bool added = true;
    ASSERT_EQ(acl_store_add(s, &b, &added), -ERR_INVALID);
    ASSERT(!added);
    ASSERT_EQ(acl_store_count(s), 0);
    acl_store_free(s);
}

TEST(security_acl_wire_strings_are_bounded_and_nul_free)
{
    char buf[8];
    ASSERT_EQ(acl_str_copy(buf, sizeof(buf), "abcdefg", 7), 0);
    ASSERT_STREQ(buf, "abcdefg");
    ASSERT_EQ(acl_str_copy(buf, sizeof(buf), "abcdefgh", 8), -ERR_TOO_LARGE);
    ASSERT_STREQ(buf, "");
    ASSERT_EQ(acl_str_copy(buf, sizeof(buf), "ab\0cd", 5), -ERR_INVALID);
    ASSERT_STREQ(buf, "");
    ASSERT_EQ(acl_str_copy(buf, sizeof(buf), NULL, 0), 0);
    ASSERT_STREQ(buf, "");

    struct acl_binding b;
    memset(&b, 0, sizeof(b));
    char name[ACL_NAME_MAX + 1];
    memset(name, 'n', sizeof(name));
    ASSERT_EQ(acl_binding_set_strings(&b, name, ACL_NAME_MAX, "User:a", 6, "*", 1), 0);
    ASSERT_EQ(strlen(b.resource_name), ACL_NAME_MAX);
    ASSERT_EQ(acl_binding_set_strings(&b, name, ACL_NAME_MAX + 1, "User:a", 6, "*", 1),
              -ERR_TOO_LARGE);
    ASSERT_STREQ(b.resource_name, "");
    ASSERT_STREQ(b.principal, "");
    ASSERT_EQ(acl_binding_set_strings(&b, "t", 1, "User:a\0b", 8, "*", 1), -ERR_INVALID);
    ASSERT_STREQ(b.resource_name, "");
    ASSERT_EQ(acl_binding_set_strings(&b, "t", 1, "User:a", 6,
                                      "1111:2222:3333:4444:5555:6666:"
                                      "7777:8888:9999:0000:1111:2222:3333",
                                      64),
              -ERR_TOO_LARGE);
}

TEST(security_acl_names_format_and_parse_as_kafka_cli)
{
    ASSERT_STREQ(acl_operation_name(ACL_OP_READ), "Read");
    ASSERT_STREQ(acl_operation_name(ACL_OP_CLUSTER_ACTION), "ClusterAction");
    ASSERT_STREQ(acl_operation_name(ACL_OP_DESCRIBE_CONFIGS), "DescribeConfigs");
    ASSERT_STREQ(acl_operation_name(ACL_OP_IDEMPOTENT_WRITE), "IdempotentWrite");
    ASSERT_STREQ(acl_operation_name(ACL_OP_DESCRIBE_TOKENS), "DescribeTokens");
    ASSERT_STREQ(acl_operation_name(ACL_OP_ALL), "All");
    ASSERT_STREQ(acl_operation_name((enum acl_operation)99), "Unknown");
    ASSERT_STREQ(acl_resource_type_name(ACL_RESOURCE_TOPIC), "Topic");
    ASSERT_STREQ(acl_resource_type_name(ACL_RESOURCE_TRANSACTIONAL_ID), "TransactionalId");
    ASSERT_STREQ(acl_resource_type_name(ACL_RESOURCE_DELEGATION_TOKEN), "DelegationToken");
    ASSERT_STREQ(acl_resource_type_name((enum acl_resource_type)8), "Unknown");
    ASSERT_STREQ(acl_pattern_type_name(ACL_PATTERN_PREFIXED), "PREFIXED");
    ASSERT_STREQ(acl_pattern_type_name(ACL_PATTERN_LITERAL), "LITERAL");
    ASSERT_STREQ(acl_pattern_type_name((enum acl_pattern_type)5), "UNKNOWN");
    ASSERT_STREQ(acl_permission_name(ACL_PERM_ALLOW), "Allow");
    ASSERT_STREQ(acl_permission_name(ACL_PERM_DENY), "Deny");

    ASSERT_EQ(acl_operation_parse("Read"), ACL_OP_READ);
    ASSERT_EQ(acl_operation_parse("READ"), ACL_OP_READ);
    ASSERT_EQ(acl_operation_parse("read"), ACL_OP_READ);
    ASSERT_EQ(acl_operation_parse("ClusterAction"), ACL_OP_CLUSTER_ACTION);
    ASSERT_EQ(acl_operation_parse("CLUSTERACTION"), ACL_OP_CLUSTER_ACTION);
    ASSERT_EQ(acl_operation_parse("cluster_action"), ACL_OP_CLUSTER_ACTION);
    ASSERT_EQ(acl_operation_parse("alterconfigs"), ACL_OP_ALTER_CONFIGS);
    ASSERT_EQ(acl_operation_parse("any"), ACL_OP_ANY);
    ASSERT_EQ(acl_resource_type_parse("topic"), ACL_RESOURCE_TOPIC);
    ASSERT_EQ(acl_resource_type_parse("TransactionalId"), ACL_RESOURCE_TRANSACTIONAL_ID);
    ASSERT_EQ(acl_resource_type_parse("TRANSACTIONAL_ID"), ACL_RESOURCE_TRANSACTIONAL_ID);
    ASSERT_EQ(acl_resource_type_parse("delegationtoken"), ACL_RESOURCE_DELEGATION_TOKEN);
    ASSERT_EQ(acl_pattern_type_parse("Prefixed"), ACL_PATTERN_PREFIXED);
    ASSERT_EQ(acl_pattern_type_parse("literal"), ACL_PATTERN_LITERAL);
    ASSERT_EQ(acl_pattern_type_parse("MATCH"), ACL_PATTERN_MATCH);
    ASSERT_EQ(acl_permission_parse("allow"), ACL_PERM_ALLOW);
    ASSERT_EQ(acl_permission_parse("Deny"), ACL_PERM_DENY);

    const char *junk[] = {"",      "Reads", "cluster action", "Cluster_Actio",
                          " read", "ALL_",  "topics",         "prefix"};
    for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
        ASSERT_EQ(acl_operation_parse(junk[i]), ACL_OP_UNKNOWN);
        ASSERT_EQ(acl_resource_type_parse(junk[i]), ACL_RESOURCE_UNKNOWN);
        ASSERT_EQ(acl_pattern_type_parse(junk[i]), ACL_PATTERN_UNKNOWN);
        ASSERT_EQ(acl_permission_parse(junk[i]), ACL_PERM_UNKNOWN);
    }
    ASSERT_EQ(acl_operation_parse(NULL), ACL_OP_UNKNOWN);

    for (int op = ACL_OP_UNKNOWN; op <= ACL_OP_DESCRIBE_TOKENS; op++)
        ASSERT_EQ(acl_operation_parse(acl_operation_name((enum acl_operation)op)), op);
    for (int t = ACL_RESOURCE_UNKNOWN; t <= ACL_RESOURCE_USER; t++)
        ASSERT_EQ(acl_resource_type_parse(acl_resource_type_name((enum acl_resource_type)t)), t);
    for (int t = ACL_PATTERN_UNKNOWN; t <= ACL_PATTERN_PREFIXED; t++)
        ASSERT_EQ(acl_pattern_type_parse(acl_pattern_type_name((enum acl_pattern_type)t)), t);
    for (int p = ACL_PERM_UNKNOWN; p <= ACL_PERM_ALLOW; p++)
        ASSERT_EQ(acl_permission_parse(acl_permission_name((enum acl_permission)p)), p);
}

static int parse_su(const char *text, size_t *count, char *err, size_t errcap)
{
    struct acl_super_users *su = (struct acl_super_users *)1;
    int rc = acl_super_users_parse(text, &su, err, errcap);
    if (rc != 0) {
        ASSERT(su == NULL);
        return rc;
    }
    *count = acl_super_users_count(su);
    acl_super_users_free(su);
    return 0;
}

static void su_refused(const char *text, int rc, const char *needle)
{
    char err[160] = "x";
    size_t n = 0;
    ASSERT_EQ(parse_su(text, &n, err, sizeof(err)), rc);
    if (!strstr(err, needle))
        fprintf(stderr, "super.users '%.40s': error '%s' does not say '%s'\n", text, err, needle);
    ASSERT(strstr(err, needle) != NULL);
}

TEST(security_acl_super_users_parse_reports_bad_entries)
{
    struct acl_super_users *su;
    ASSERT_EQ(acl_super_users_parse(" User:a ; ;User:b;\tUser:a;User:CN=x, O=y;", &su, NULL, 0), 0);
    ASSERT_EQ(acl_super_users_count(su), 3);
    ASSERT(acl_super_users_contains(su, "User:a"));
    ASSERT(acl_super_users_contains(su, "User:b"));
    ASSERT(acl_super_users_contains(su, "User:CN=x, O=y"));
    ASSERT(!acl_super_users_contains(su, " User:a"));
    ASSERT(!acl_super_users_contains(su, "User:c"));
    acl_super_users_free(su);
    ASSERT(!acl_super_users_contains(NULL, "User:a"));
    ASSERT_EQ(acl_super_users_count(NULL), 0);

    size_t n = 99;
    ASSERT_EQ(parse_su(NULL, &n, NULL, 0), 0);
    ASSERT_EQ(n, 0);
    ASSERT_EQ(parse_su(" ; ;", &n, NULL, 0), 0);
    ASSERT_EQ(n, 0);
    ASSERT_EQ(parse_su("User:a,User:b", &n, NULL, 0), 0); /* ';' separates, a comma does not */
    ASSERT_EQ(n, 1);

    su_refused("User:a;alice;User:b", -ERR_INVALID, "'alice'");
    su_refused("User:a;user:bob", -ERR_INVALID, "'user:bob'");
    su_refused("User:", -ERR_INVALID, "'User:'");
    su_refused("User:*", -ERR_INVALID, "User:* is not everyone");
    su_refused("Group:ops", -ERR_INVALID, "'Group:ops'");

    char long_text[400] = "User:";
    memset(long_text + 5, 'z', 300);
    long_text[305] = '\0';
    su_refused(long_text, -ERR_TOO_LARGE, "...");

    static char many[ACL_SUPER_USERS_MAX * 12 + 32];
    many[0] = '\0';
    for (int i = 0; i <= ACL_SUPER_USERS_MAX; i++)
        sprintf(many + strlen(many), "User:u%d;", i);
    su_refused(many, -ERR_LIMIT, "'User:u256'");
    ASSERT_EQ(parse_su(many + strlen("User:u0;"), &n, NULL, 0), 0); /* exactly the cap */
    ASSERT_EQ(n, ACL_SUPER_USERS_MAX);
}

TEST(security_acl_registry_and_subject_types_store_and_decide_as_kafka_types)
{
    struct acl_store *s = acl_store_new(64);
    add(s, ACL_RESOURCE_SUBJECT, "orders-", ACL_PATTERN_PREFIXED, "User:alice", "*", ACL_OP_WRITE,
        ACL_PERM_ALLOW);
    add(s, ACL_RESOURCE_SUBJECT, "orders-secret", ACL_PATTERN_LITERAL, "User:alice", "*",
        ACL_OP_ALL, ACL_PERM_DENY);
    add(s, ACL_RESOURCE_REGISTRY, ACL_REGISTRY_NAME, ACL_PATTERN_LITERAL, "User:ops", "*",
        ACL_OP_ALTER_CONFIGS, ACL_PERM_ALLOW);
    /* a topic of the same name is another resource */
    ASSERT_EQ(az_topic(s, "User:alice", ACL_OP_WRITE, "orders-value"), ACL_DENIED);
    ASSERT_EQ(az(s, "User:alice", ACL_OP_WRITE, ACL_RESOURCE_SUBJECT, "orders-value"), ACL_ALLOWED);
    ASSERT_EQ(az(s, "User:alice", ACL_OP_DESCRIBE, ACL_RESOURCE_SUBJECT, "orders-value"),
              ACL_ALLOWED); /* WRITE implies DESCRIBE */
    ASSERT_EQ(az(s, "User:alice", ACL_OP_READ, ACL_RESOURCE_SUBJECT, "orders-value"), ACL_DENIED);
    ASSERT_EQ(az(s, "User:alice", ACL_OP_WRITE, ACL_RESOURCE_SUBJECT, "orders-secret"), ACL_DENIED);
    ASSERT_EQ(az(s, "User:alice", ACL_OP_WRITE, ACL_RESOURCE_SUBJECT, "pay-value"), ACL_DENIED);
    ASSERT_EQ(az(s, "User:ops", ACL_OP_DESCRIBE_CONFIGS, ACL_RESOURCE_REGISTRY, ACL_REGISTRY_NAME),
              ACL_ALLOWED);
    ASSERT_EQ(az(s, "User:alice", ACL_OP_ALTER_CONFIGS, ACL_RESOURCE_REGISTRY, ACL_REGISTRY_NAME),
              ACL_DENIED);
    /* filters: by type, and ANY sees every type */
    struct acl_filter f = {ACL_RESOURCE_SUBJECT, ACL_PATTERN_ANY, NULL, NULL, NULL,
                           ACL_OP_ANY,           ACL_PERM_ANY};
    ASSERT_EQ(acl_filter_check(&f), 0);
    size_t pos = 0, n = 0;
    while (acl_store_next(s, &f, &pos))
        n++;
    ASSERT_EQ(n, 2);
    f.resource_type = ACL_RESOURCE_TOPIC;
    pos = 0;
    ASSERT(acl_store_next(s, &f, &pos) == NULL);
    f.resource_type = ACL_RESOURCE_ANY;
    pos = n = 0;
    while (acl_store_next(s, &f, &pos))
        n++;
    ASSERT_EQ(n, 3);
    f.resource_type = (enum acl_resource_type)99;
    ASSERT_EQ(acl_filter_check(&f), -ERR_INVALID);
    /* the registry is one resource: LITERAL, its name or "*" only */
    struct acl_binding b = binding(ACL_RESOURCE_REGISTRY, "*", ACL_PATTERN_LITERAL, "User:a", "*",
                                   ACL_OP_READ, ACL_PERM_ALLOW);
    ASSERT_EQ(acl_binding_check(&b), 0);
    b = binding(ACL_RESOURCE_REGISTRY, "schema-", ACL_PATTERN_PREFIXED, "User:a", "*", ACL_OP_READ,
                ACL_PERM_ALLOW);
    ASSERT_EQ(acl_binding_check(&b), -ERR_INVALID);
    b = binding(ACL_RESOURCE_REGISTRY, "other", ACL_PATTERN_LITERAL, "User:a", "*", ACL_OP_READ,
                ACL_PERM_ALLOW);
    ASSERT_EQ(acl_binding_check(&b), -ERR_INVALID);
    b = binding((enum acl_resource_type)8, "x", ACL_PATTERN_LITERAL, "User:a", "*", ACL_OP_READ,
                ACL_PERM_ALLOW);
    ASSERT_EQ(acl_binding_check(&b), -ERR_INVALID);
    ASSERT_EQ(acl_authorize(s, "User:ops", HOST, ACL_OP_ALTER_CONFIGS, (enum acl_resource_type)102,
                            ACL_REGISTRY_NAME, NULL),
              ACL_DENIED);
    /* names */
    ASSERT_STREQ(acl_resource_type_name(ACL_RESOURCE_REGISTRY), "Registry");
    ASSERT_STREQ(acl_resource_type_name(ACL_RESOURCE_SUBJECT), "Subject");
    ASSERT_STREQ(acl_resource_type_name((enum acl_resource_type)100), "Registry");
    ASSERT_EQ(acl_resource_type_parse("SUBJECT"), ACL_RESOURCE_SUBJECT);
    ASSERT_EQ(acl_resource_type_parse("registry"), ACL_RESOURCE_REGISTRY);
    acl_store_free(s);
}
