/* ACLs and the authorizer's decision, as Kafka's StandardAuthorizer makes it. Pure: no I/O, no
 * clocks, no logging, no locks (one thread at a time per store); the only allocations are the
 * store's array and a parsed super.users list, both capped.
 *
 * A binding (struct acl_binding) says: PRINCIPAL from HOST is ALLOWed or DENYed OPERATION on the
 * resources of RESOURCE_TYPE that a PATTERN names. The pattern is LITERAL (the name itself, or
 * "*" for every resource of the type) or PREFIXED (every name that starts with it). Codes are
 * Kafka's wire values, so the fields of CreateAcls, DescribeAcls and DeleteAcls map 1:1; the
 * schema registry's two resource types (REGISTRY, SUBJECT) have codes of ours beyond Kafka's,
 * and the same rules.
 *
 * The decision (acl_authorize), for a request by principal P from host H to do operation OP on
 * the resource of type T named N:
 *   1. P is a super user: ALLOWED.
 *   2. A binding *matches the resource* when its type is T and its pattern covers N (LITERAL N,
 *      LITERAL "*", or PREFIXED with a prefix of N). It *applies* when it also names P or
 *      "User:*", and H or "*".
 *   3. DENIED if an applicable DENY binding's operation is OP or ALL. A DENY is never widened
 *      by implication: DENY READ does not deny DESCRIBE, DENY ALTER_CONFIGS does not deny
 *      DESCRIBE_CONFIGS, DENY DESCRIBE does not deny READ (Kafka's findResult).
 *   4. ALLOWED if an applicable ALLOW binding's operation is OP, or ALL, or implies OP:
 *      READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS.
 *      Nothing else implies anything (WRITE does not imply READ).
 *   5. No binding matches the resource at all (of any principal, host, operation or
 *      permission): allow.everyone.if.no.acl.found decides (default DENIED).
 *   6. Otherwise DENIED.
 *
 * Strings are NUL-terminated. Strings from the wire (length-counted, may hold a NUL byte) go
 * through acl_binding_set_strings or acl_str_copy first, which refuse NUL bytes: a filter or a
 * request name cut short at an embedded NUL would match what it does not say.
 *
 * Error codes (base/errors.h): -ERR_INVALID a malformed or non-storable value, -ERR_TOO_LARGE a
 * string over its limit below or a result that does not fit the caller's room, -ERR_LIMIT a
 * store or a super.users list at its cap. */
#ifndef SP_SECURITY_ACL_H
#define SP_SECURITY_ACL_H

#include <stdbool.h>
#include <stddef.h>

#define ACL_NAME_MAX 255        /* bytes of a resource name, NUL not counted (topics: 249) */
#define ACL_PRINCIPAL_MAX 255   /* bytes of a principal "User:NAME", NUL not counted */
#define ACL_HOST_MAX 63         /* bytes of a host ("*" or an IPv4/IPv6 literal) */
#define ACL_STORE_MAX 65536     /* most bindings a store may be created to hold */
#define ACL_SUPER_USERS_MAX 256 /* most distinct entries of super.users */
#define ACL_WILDCARD "*"        /* LITERAL name of every resource; host of every host */
#define ACL_WILDCARD_PRINCIPAL "User:*"
#define ACL_CLUSTER_NAME "kafka-cluster" /* the one CLUSTER resource's name */
#define ACL_REGISTRY_NAME "schema-registry" /* the one REGISTRY resource's name */

enum acl_resource_type {
    ACL_RESOURCE_UNKNOWN = 0,
    ACL_RESOURCE_ANY = 1, /* filters only */
    ACL_RESOURCE_TOPIC = 2,
    ACL_RESOURCE_GROUP = 3,
    ACL_RESOURCE_CLUSTER = 4,
    ACL_RESOURCE_TRANSACTIONAL_ID = 5,
    ACL_RESOURCE_DELEGATION_TOKEN = 6,
    ACL_RESOURCE_USER = 7,
    /* The schema registry's resources (Redpanda 25.2's "registry" and "subject"). Not Kafka's:
     * Redpanda keeps them off the Kafka ACL APIs (rpk sends them to the registry's own
     * /security/acls), so there is no wire code to share; these are ours, far above Kafka's
     * range so a future Kafka type cannot collide. */
    ACL_RESOURCE_REGISTRY = 100, /* the registry as a whole: one resource, ACL_REGISTRY_NAME */
    ACL_RESOURCE_SUBJECT = 101,  /* a subject, by name (LITERAL, PREFIXED, LITERAL "*") */
};

enum acl_pattern_type {
    ACL_PATTERN_UNKNOWN = 0,
    ACL_PATTERN_ANY = 1,   /* filters only: any pattern type, the name compared exactly */
    ACL_PATTERN_MATCH = 2, /* filters only: the bindings that would cover the name */
    ACL_PATTERN_LITERAL = 3,
    ACL_PATTERN_PREFIXED = 4,
};

enum acl_operation {
    ACL_OP_UNKNOWN = 0,
    ACL_OP_ANY = 1, /* filters only */
    ACL_OP_ALL = 2,
    ACL_OP_READ = 3,
    ACL_OP_WRITE = 4,
    ACL_OP_CREATE = 5,
    ACL_OP_DELETE = 6,
    ACL_OP_ALTER = 7,
    ACL_OP_DESCRIBE = 8,
    ACL_OP_CLUSTER_ACTION = 9,
    ACL_OP_DESCRIBE_CONFIGS = 10,
    ACL_OP_ALTER_CONFIGS = 11,
    ACL_OP_IDEMPOTENT_WRITE = 12,
    ACL_OP_CREATE_TOKENS = 13,
    ACL_OP_DESCRIBE_TOKENS = 14,
};

enum acl_permission {
    ACL_PERM_UNKNOWN = 0,
    ACL_PERM_ANY = 1, /* filters only */
    ACL_PERM_DENY = 2,
    ACL_PERM_ALLOW = 3,
};

/* Zero is DENIED, so a result nobody set fails closed. */
enum acl_result {
    ACL_DENIED = 0,
    ACL_ALLOWED = 1,
};

/* One ACL. The strings live in the struct (fixed buffers, NUL-terminated), so a binding is a
 * plain value: copy it with =, no release. */
struct acl_binding {
    enum acl_resource_type resource_type;  /* TOPIC..USER, REGISTRY, SUBJECT */
    enum acl_pattern_type pattern_type;    /* LITERAL or PREFIXED */
    char resource_name[ACL_NAME_MAX + 1];  /* non-empty; LITERAL "*" is every resource */
    char principal[ACL_PRINCIPAL_MAX + 1]; /* "User:NAME", or "User:*" for everyone */
    char host[ACL_HOST_MAX + 1];           /* "*" or an IP address literal */
    enum acl_operation operation;          /* ALL..DESCRIBE_TOKENS */
    enum acl_permission permission;        /* DENY or ALLOW */
};

/* Which bindings DescribeAcls lists and DeleteAcls removes (Kafka's AclBindingFilter). The
 * strings are borrowed and NUL-terminated; NULL matches every value. */
struct acl_filter {
    enum acl_resource_type resource_type; /* ANY: every type */
    enum acl_pattern_type pattern_type;   /* ANY, MATCH, LITERAL or PREFIXED */
    const char *resource_name;            /* NULL: every name */
    const char *principal;                /* NULL: every principal; compared exactly */
    const char *host;                     /* NULL: every host; compared exactly */
    enum acl_operation operation;         /* ANY: every operation; else compared exactly */
    enum acl_permission permission;       /* ANY: both; else compared exactly */
};

/* A parsed super.users value (opaque). */
struct acl_super_users;

/* The authorizer's settings. */
struct acl_settings {
    const struct acl_super_users *super_users; /* NULL: none */
    bool allow_if_no_acl;                      /* allow.everyone.if.no.acl.found */
};

struct acl_store;

/* --- Strings and bindings --------------------------------------------------------------- */

/* Copies the len bytes at src into dst (room cap, NUL included) and NUL-terminates them.
 * Returns 0, -ERR_TOO_LARGE when len >= cap (dst is then ""), -ERR_INVALID when the bytes hold a
 * NUL (dst is then ""). src may be NULL only when len is 0. */
int acl_str_copy(char *dst, size_t cap, const char *src, size_t len);

/* Sets b's resource name, principal and host from length-counted strings (as acl_str_copy).
 * Returns 0 or the first error of acl_str_copy; on error b's strings are all "". Checks nothing
 * else: call acl_binding_check before storing. */
int acl_binding_set_strings(struct acl_binding *b, const char *name, size_t name_len,
                            const char *principal, size_t principal_len, const char *host,
                            size_t host_len);

/* Whether the resource type is a concrete one (TOPIC..USER, REGISTRY, SUBJECT). */
bool acl_resource_type_concrete(enum acl_resource_type t);

/* Whether b may be stored: a concrete resource type (acl_resource_type_concrete), pattern type
 * (LITERAL or PREFIXED; a REGISTRY binding LITERAL ACL_REGISTRY_NAME or "*" only), operation
 * (ALL..DESCRIBE_TOKENS) and permission (DENY or ALLOW); each string NUL-terminated inside its
 * buffer; a non-empty resource name; a principal that is "User:" followed by a name of printable
 * bytes (no control bytes), "*" meaning everyone; a host that is "*" or a literal inet_pton reads
 * as IPv4 or IPv6. Returns 0 or -ERR_INVALID. */
int acl_binding_check(const struct acl_binding *b);

/* Whether the principal string p would be valid in a binding (see acl_binding_check). */
bool acl_principal_valid(const char *p);

/* --- Filters ---------------------------------------------------------------------------- */

/* Whether f may be used: no UNKNOWN (or out-of-range) type, pattern, operation or permission,
 * as Kafka's DeleteAcls/DescribeAcls refuse one. Returns 0 or -ERR_INVALID. A filter that fails
 * this check matches no binding. */
int acl_filter_check(const struct acl_filter *f);

/* Whether the stored binding b matches f, exactly as Kafka's AclBindingFilter.matches:
 *  - resource_type ANY or equal; operation ANY or equal; permission ANY or equal; principal and
 *    host NULL or byte-equal (no wildcard expansion: filter principal "User:*" matches only
 *    bindings for "User:*");
 *  - pattern_type LITERAL or PREFIXED: b's pattern type must be the same, and a non-NULL name
 *    must equal b's name;
 *  - pattern_type ANY: any pattern type, and a non-NULL name must equal b's name (so ANY "foo"
 *    matches LITERAL "foo" and PREFIXED "foo", but not LITERAL "*");
 *  - pattern_type MATCH: with a NULL name every pattern; else the bindings that would cover that
 *    name: LITERAL with the same name, LITERAL "*", and PREFIXED whose prefix the name starts
 *    with (MATCH "orders-1": LITERAL orders-1, LITERAL *, PREFIXED orders-, PREFIXED orders-1,
 *    not PREFIXED orders-1x).
 * b must be storable (acl_binding_check). */
bool acl_filter_matches(const struct acl_filter *f, const struct acl_binding *b);

/* --- The store -------------------------------------------------------------------------- */

/* A new empty store that will hold at most max_bindings (1..ACL_STORE_MAX; CHECKed). Release
 * with acl_store_free. */
struct acl_store *acl_store_new(size_t max_bindings);
void acl_store_free(struct acl_store *s); /* NULL is fine */

/* Removes every binding (keeps the allocation). */
void acl_store_clear(struct acl_store *s);

size_t acl_store_count(const struct acl_store *s);

/* The i-th binding (i < acl_store_count) in the store's order: by resource type, resource name
 * (bytewise), pattern type, principal, host, operation, permission. Its bytes past each string's
 * NUL are zero (whatever the caller's copy held), so two stored bindings compare with memcmp.
 * Valid until the store changes. */
const struct acl_binding *acl_store_get(const struct acl_store *s, size_t i);

/* Adds a copy of b. A binding equal in every field to a stored one is not added again.
 * Returns 0 (*added, if not NULL, says whether it was new), -ERR_INVALID when b fails
 * acl_binding_check, -ERR_LIMIT when the store already holds max_bindings. */
int acl_store_add(struct acl_store *s, const struct acl_binding *b, bool *added);

/* Removes every binding that matches f and copies them, in store order, to out[0, *n). If more
 * than cap match, removes none and returns -ERR_TOO_LARGE with *n the number that match (so
 * out = NULL, cap = 0 counts them). Returns 0, -ERR_INVALID for a filter that fails
 * acl_filter_check (*n = 0), or -ERR_TOO_LARGE. out may be NULL only when cap is 0. */
int acl_store_remove(struct acl_store *s, const struct acl_filter *f, struct acl_binding *out,
                     size_t cap, size_t *n);

/* Lists the bindings that match f, in store order: start with *pos = 0 and call until NULL.
 * Each pointer is valid until the store changes; do not change it between calls. A filter that
 * fails acl_filter_check yields nothing. */
const struct acl_binding *acl_store_next(const struct acl_store *s, const struct acl_filter *f,
                                         size_t *pos);

/* --- The decision ----------------------------------------------------------------------- */

/* Whether principal ("User:NAME") from host (the client's address as the broker writes it;
 * compared byte for byte with the bindings' hosts) may do operation on the resource of
 * resource_type named resource_name, by the rules at the top of this file. s NULL means the
 * defaults (no super users, allow.everyone.if.no.acl.found=false). Fails closed: an operation
 * or resource type that is not concrete (UNKNOWN, ANY, out of range) is DENIED, even for a
 * super user. The strings must not be NULL. O(log n + the bindings of resource_type). */
enum acl_result acl_authorize(const struct acl_store *store, const char *principal,
                              const char *host, enum acl_operation operation,
                              enum acl_resource_type resource_type, const char *resource_name,
                              const struct acl_settings *s);

/* Whether principal may DESCRIBE the topic (Metadata lists only the topics it may). */
bool acl_may_describe_topic(const struct acl_store *store, const char *principal, const char *host,
                            const char *topic, const struct acl_settings *s);

/* --- super.users ------------------------------------------------------------------------ */

/* Parses super.users: entries separated by ';', each trimmed of surrounding whitespace (bytes
 * <= 0x20, as Java's trim), empty entries skipped, duplicates kept once. Each entry must be a
 * valid principal (acl_principal_valid) other than "User:*" (Kafka compares super users as exact
 * strings, so "User:*" would mean a user named "*", never everyone: refused as a likely mistake).
 * text NULL or empty gives an empty list. Returns 0 with *out (release with
 * acl_super_users_free), or with *out NULL and a message quoting the entry at fault in err
 * (errcap bytes, NUL included; err may be NULL when errcap is 0): -ERR_INVALID for a malformed
 * entry, -ERR_TOO_LARGE for one over ACL_PRINCIPAL_MAX, -ERR_LIMIT for more than
 * ACL_SUPER_USERS_MAX entries. */
int acl_super_users_parse(const char *text, struct acl_super_users **out, char *err, size_t errcap);
void acl_super_users_free(struct acl_super_users *su); /* NULL is fine */

size_t acl_super_users_count(const struct acl_super_users *su); /* NULL: 0 */

/* Whether principal is one of su's entries (exact, case-sensitive). su NULL: false. */
bool acl_super_users_contains(const struct acl_super_users *su, const char *principal);

/* --- Names, as Kafka's kafka-acls CLI spells them ---------------------------------------- */

/* Never NULL. Operations, resource types and permissions in Kafka's Pascal case ("Read",
 * "ClusterAction", "TransactionalId", "Allow"; "Registry", "Subject"); pattern types in upper
 * case as Kafka prints them ("LITERAL", "PREFIXED"). A value out of range gives "Unknown" (or
 * "UNKNOWN"). */
const char *acl_resource_type_name(enum acl_resource_type t);
const char *acl_pattern_type_name(enum acl_pattern_type t);
const char *acl_operation_name(enum acl_operation op);
const char *acl_permission_name(enum acl_permission p);

/* Case-insensitive parses of the names above and of Kafka's enum spelling with underscores
 * ("cluster_action", "TRANSACTIONAL_ID"); "Any" gives ANY, "Match" MATCH. Anything else (NULL
 * included) gives UNKNOWN, as Kafka's fromString does. */
enum acl_resource_type acl_resource_type_parse(const char *s);
enum acl_pattern_type acl_pattern_type_parse(const char *s);
enum acl_operation acl_operation_parse(const char *s);
enum acl_permission acl_permission_parse(const char *s);

#endif
