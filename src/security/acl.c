/* ACLs and the authorizer's decision (acl.h): Kafka's StandardAuthorizer semantics over a sorted
 * array.
 *
 * What it owns: a store owns one array of bindings (values: the strings live in each binding),
 * grown by doubling up to the cap it was created with; a super.users list owns its array of
 * principals. Nothing else is allocated, nothing is shared, nothing is kept between calls.
 *
 * Invariants of a store (store_check, under DCHECK at the entry and exit of every function that
 * changes it, and at the entry of acl_authorize):
 *  1. v[0, n) is sorted strictly ascending by binding_cmp: no two bindings are equal, and the
 *     bindings of one resource type are contiguous.
 *  2. Every v[i] passes acl_binding_check, and its bytes past each string's NUL are zero.
 *  3. n <= max <= ACL_STORE_MAX, and n <= cap.
 * A store has no states: acl_store_add, acl_store_remove and acl_store_clear are its only
 * changes, each done wholly or (on an error return) not at all.
 *
 * The decision procedure (acl_authorize; Kafka: StandardAuthorizerData.authorize, findAclRule,
 * checkSection and findResult):
 *  1. A request whose operation or resource type is not concrete is DENIED.
 *  2. A super user (exact string among super.users) is ALLOWED.
 *  3. Binary search to the first binding of the resource type, then walk that type's bindings.
 *     A binding whose pattern does not cover the name (pattern_covers: LITERAL equal, LITERAL
 *     "*", PREFIXED prefix) is skipped. Every other one sets `matched` (the resource has ACLs,
 *     whoever they are for), then binding_verdict asks whether it applies to the principal
 *     ("User:*" too) and host ("*" too) and what it says about the operation:
 *       DENY  applies when its operation is the requested one or ALL. Kafka widens only ALLOW
 *             by implication (findResult: "this rule only applies to ALLOW ACLs. So for
 *             example, a DENY ACL for READ on a resource does not DENY describe"), so a DENY
 *             READ leaves DESCRIBE to the ALLOWs, and a DENY DESCRIBE does not deny READ.
 *       ALLOW applies when its operation is the requested one, ALL, or implies it (allow_grants:
 *             READ/WRITE/DELETE/ALTER imply DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS).
 *     The first applicable DENY ends the walk: DENIED.
 *  4. An applicable ALLOW was seen: ALLOWED. Else nothing matched the resource: the setting
 *     allow.everyone.if.no.acl.found decides. Else DENIED.
 * Kafka walks its reverse-sorted tree in two sections (the name and its prefixes, then LITERAL
 * "*") to visit only covering patterns; visiting every binding of the type and testing the
 * pattern gives the same set, hence the same answer. */
#include "security/acl.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"

#define USER_PREFIX "User:"
#define USER_PREFIX_LEN 5

struct acl_store {
    struct acl_binding *v; /* v[0, n): sorted by binding_cmp, no duplicates */
    size_t n;              /* bindings held */
    size_t cap;            /* elements allocated */
    size_t max;            /* most bindings it may hold */
};

struct acl_super_users {
    char (*v)[ACL_PRINCIPAL_MAX + 1]; /* v[0, n): distinct principals, in the order given */
    size_t n;                         /* entries */
    size_t cap;                       /* elements allocated */
};

/* --- Strings and bindings --------------------------------------------------------------- */

static bool in_range(int v, int lo, int hi)
{
    return v >= lo && v <= hi;
}

static bool terminated(const char *buf, size_t cap)
{
    return memchr(buf, '\0', cap) != NULL;
}

int acl_str_copy(char *dst, size_t cap, const char *src, size_t len)
{
    CHECK(dst != NULL && cap > 0);
    dst[0] = '\0';
    if (len >= cap)
        return -ERR_TOO_LARGE;
    if (len == 0)
        return 0;
    if (memchr(src, '\0', len) != NULL)
        return -ERR_INVALID;
    memcpy(dst, src, len);
    dst[len] = '\0';
    return 0;
}

int acl_binding_set_strings(struct acl_binding *b, const char *name, size_t name_len,
                            const char *principal, size_t principal_len, const char *host,
                            size_t host_len)
{
    int rc = acl_str_copy(b->resource_name, sizeof(b->resource_name), name, name_len);
    if (rc == 0)
        rc = acl_str_copy(b->principal, sizeof(b->principal), principal, principal_len);
    if (rc == 0)
        rc = acl_str_copy(b->host, sizeof(b->host), host, host_len);
    if (rc != 0) {
        b->resource_name[0] = '\0';
        b->principal[0] = '\0';
        b->host[0] = '\0';
    }
    return rc;
}

bool acl_principal_valid(const char *p)
{
    size_t len = strlen(p);
    if (len <= USER_PREFIX_LEN || len > ACL_PRINCIPAL_MAX)
        return false;
    if (memcmp(p, USER_PREFIX, USER_PREFIX_LEN) != 0)
        return false;
    for (size_t i = USER_PREFIX_LEN; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x20 || c == 0x7f)
            return false;
    }
    return true;
}

static bool host_valid(const char *h)
{
    unsigned char addr[sizeof(struct in6_addr)];
    if (strcmp(h, ACL_WILDCARD) == 0)
        return true;
    return inet_pton(AF_INET, h, addr) == 1 || inet_pton(AF_INET6, h, addr) == 1;
}

bool acl_resource_type_concrete(enum acl_resource_type t)
{
    return in_range((int)t, ACL_RESOURCE_TOPIC, ACL_RESOURCE_USER) || t == ACL_RESOURCE_REGISTRY ||
           t == ACL_RESOURCE_SUBJECT;
}

static bool types_storable(const struct acl_binding *b)
{
    return acl_resource_type_concrete(b->resource_type) &&
           (b->pattern_type == ACL_PATTERN_LITERAL || b->pattern_type == ACL_PATTERN_PREFIXED) &&
           in_range((int)b->operation, ACL_OP_ALL, ACL_OP_DESCRIBE_TOKENS) &&
           (b->permission == ACL_PERM_DENY || b->permission == ACL_PERM_ALLOW);
}

int acl_binding_check(const struct acl_binding *b)
{
    if (!types_storable(b))
        return -ERR_INVALID;
    if (!terminated(b->resource_name, sizeof(b->resource_name)) ||
        !terminated(b->principal, sizeof(b->principal)) || !terminated(b->host, sizeof(b->host)))
        return -ERR_INVALID;
    if (b->resource_name[0] == '\0' || !acl_principal_valid(b->principal) || !host_valid(b->host))
        return -ERR_INVALID;
    /* the registry is one resource: a prefix or another name would cover nothing or it */
    if (b->resource_type == ACL_RESOURCE_REGISTRY &&
        (b->pattern_type != ACL_PATTERN_LITERAL ||
         (strcmp(b->resource_name, ACL_REGISTRY_NAME) && strcmp(b->resource_name, ACL_WILDCARD))))
        return -ERR_INVALID;
    return 0;
}

/* A copy of b with zeroes past each string's end (invariant 2), so stored bytes never depend on
 * what the caller left in its buffers. */
static void binding_copy(struct acl_binding *dst, const struct acl_binding *b)
{
    memset(dst, 0, sizeof(*dst));
    dst->resource_type = b->resource_type;
    dst->pattern_type = b->pattern_type;
    dst->operation = b->operation;
    dst->permission = b->permission;
    strcpy(dst->resource_name, b->resource_name);
    strcpy(dst->principal, b->principal);
    strcpy(dst->host, b->host);
}

static int cmp_int(int a, int b)
{
    return (a > b) - (a < b);
}

/* The store's order: resource type first, so each type's bindings are one run. */
static int binding_cmp(const struct acl_binding *a, const struct acl_binding *b)
{
    int c = cmp_int((int)a->resource_type, (int)b->resource_type);
    if (c == 0)
        c = strcmp(a->resource_name, b->resource_name);
    if (c == 0)
        c = cmp_int((int)a->pattern_type, (int)b->pattern_type);
    if (c == 0)
        c = strcmp(a->principal, b->principal);
    if (c == 0)
        c = strcmp(a->host, b->host);
    if (c == 0)
        c = cmp_int((int)a->operation, (int)b->operation);
    if (c == 0)
        c = cmp_int((int)a->permission, (int)b->permission);
    return c;
}

/* Whether the stored pattern of b covers the resource named name. */
static bool pattern_covers(const struct acl_binding *b, const char *name)
{
    if (b->pattern_type == ACL_PATTERN_PREFIXED)
        return strncmp(name, b->resource_name, strlen(b->resource_name)) == 0;
    return strcmp(b->resource_name, name) == 0 || strcmp(b->resource_name, ACL_WILDCARD) == 0;
}

/* --- Filters ---------------------------------------------------------------------------- */

int acl_filter_check(const struct acl_filter *f)
{
    if ((f->resource_type != ACL_RESOURCE_ANY && !acl_resource_type_concrete(f->resource_type)) ||
        !in_range((int)f->pattern_type, ACL_PATTERN_ANY, ACL_PATTERN_PREFIXED) ||
        !in_range((int)f->operation, ACL_OP_ANY, ACL_OP_DESCRIBE_TOKENS) ||
        !in_range((int)f->permission, ACL_PERM_ANY, ACL_PERM_ALLOW))
        return -ERR_INVALID;
    return 0;
}

/* Kafka's ResourcePatternFilter.matches. */
static bool pattern_filter_matches(const struct acl_filter *f, const struct acl_binding *b)
{
    if (f->resource_type != ACL_RESOURCE_ANY && f->resource_type != b->resource_type)
        return false;
    bool any_type = f->pattern_type == ACL_PATTERN_ANY || f->pattern_type == ACL_PATTERN_MATCH;
    if (!any_type && f->pattern_type != b->pattern_type)
        return false;
    if (f->resource_name == NULL)
        return true;
    /* ANY, or the binding's own type: the name as written, no wildcard or prefix reading. */
    if (f->pattern_type != ACL_PATTERN_MATCH)
        return strcmp(f->resource_name, b->resource_name) == 0;
    return pattern_covers(b, f->resource_name);
}

/* Kafka's AccessControlEntryFilter.matches. */
static bool entry_filter_matches(const struct acl_filter *f, const struct acl_binding *b)
{
    if (f->principal != NULL && strcmp(f->principal, b->principal) != 0)
        return false;
    if (f->host != NULL && strcmp(f->host, b->host) != 0)
        return false;
    if (f->operation != ACL_OP_ANY && f->operation != b->operation)
        return false;
    return f->permission == ACL_PERM_ANY || f->permission == b->permission;
}

bool acl_filter_matches(const struct acl_filter *f, const struct acl_binding *b)
{
    return pattern_filter_matches(f, b) && entry_filter_matches(f, b);
}

/* --- The store -------------------------------------------------------------------------- */

__attribute__((unused)) static bool store_check(const struct acl_store *s)
{
    if (s->max < 1 || s->max > ACL_STORE_MAX || s->n > s->max || s->n > s->cap)
        return false;
    for (size_t i = 0; i < s->n; i++) {
        if (acl_binding_check(&s->v[i]) != 0)
            return false;
        if (i > 0 && binding_cmp(&s->v[i - 1], &s->v[i]) >= 0)
            return false;
    }
    return true;
}

struct acl_store *acl_store_new(size_t max_bindings)
{
    CHECK(max_bindings >= 1 && max_bindings <= ACL_STORE_MAX);
    struct acl_store *s = mem_calloc(1, sizeof(*s));
    s->max = max_bindings;
    return s;
}

void acl_store_free(struct acl_store *s)
{
    if (s == NULL)
        return;
    mem_free(s->v);
    mem_free(s);
}

void acl_store_clear(struct acl_store *s)
{
    s->n = 0;
    DCHECK(store_check(s));
}

size_t acl_store_count(const struct acl_store *s)
{
    return s->n;
}

const struct acl_binding *acl_store_get(const struct acl_store *s, size_t i)
{
    CHECK(i < s->n);
    return &s->v[i];
}

/* The first index whose binding is not below b. */
static size_t lower_bound(const struct acl_store *s, const struct acl_binding *b)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (binding_cmp(&s->v[mid], b) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first index whose resource type is not below t. */
static size_t type_start(const struct acl_store *s, enum acl_resource_type t)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((int)s->v[mid].resource_type < (int)t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int acl_store_add(struct acl_store *s, const struct acl_binding *b, bool *added)
{
    DCHECK(store_check(s));
    if (added != NULL)
        *added = false;
    int rc = acl_binding_check(b);
    if (rc != 0)
        return rc;
    size_t i = lower_bound(s, b);
    if (i < s->n && binding_cmp(&s->v[i], b) == 0)
        return 0;
    if (s->n >= s->max)
        return -ERR_LIMIT;
    MEM_GROW(s->v, s->cap, s->n + 1);
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
    binding_copy(&s->v[i], b);
    s->n++;
    if (added != NULL)
        *added = true;
    DCHECK(store_check(s));
    return 0;
}

static size_t count_matching(const struct acl_store *s, const struct acl_filter *f)
{
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        m += acl_filter_matches(f, &s->v[i]);
    return m;
}

int acl_store_remove(struct acl_store *s, const struct acl_filter *f, struct acl_binding *out,
                     size_t cap, size_t *n)
{
    DCHECK(store_check(s));
    CHECK(cap == 0 || out != NULL);
    *n = 0;
    if (acl_filter_check(f) != 0)
        return -ERR_INVALID;
    size_t m = count_matching(s, f);
    *n = m;
    if (m > cap)
        return -ERR_TOO_LARGE;
    size_t kept = 0, taken = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (acl_filter_matches(f, &s->v[i]))
            out[taken++] = s->v[i];
        else
            s->v[kept++] = s->v[i];
    }
    CHECK(taken == m);
    s->n = kept;
    DCHECK(store_check(s));
    return 0;
}

const struct acl_binding *acl_store_next(const struct acl_store *s, const struct acl_filter *f,
                                         size_t *pos)
{
    if (acl_filter_check(f) != 0)
        return NULL;
    while (*pos < s->n) {
        const struct acl_binding *b = &s->v[*pos];
        (*pos)++;
        if (acl_filter_matches(f, b))
            return b;
    }
    return NULL;
}

/* --- The decision ----------------------------------------------------------------------- */

struct request {
    const char *principal;
    const char *host;
    enum acl_operation op;
};

enum verdict {
    VERDICT_NONE,  /* the binding does not apply to this request */
    VERDICT_ALLOW, /* an ALLOW that grants the operation */
    VERDICT_DENY,  /* a DENY of the operation */
};

/* Whether an ALLOW of granted permits wanted: itself, ALL, or an implication. */
static bool allow_grants(enum acl_operation granted, enum acl_operation wanted)
{
    if (granted == ACL_OP_ALL || granted == wanted)
        return true;
    if (wanted == ACL_OP_DESCRIBE)
        return granted == ACL_OP_READ || granted == ACL_OP_WRITE || granted == ACL_OP_DELETE ||
               granted == ACL_OP_ALTER;
    if (wanted == ACL_OP_DESCRIBE_CONFIGS)
        return granted == ACL_OP_ALTER_CONFIGS;
    return false;
}

/* What b, whose pattern covers the resource, says about the request. */
static enum verdict binding_verdict(const struct acl_binding *b, const struct request *r)
{
    if (strcmp(b->principal, r->principal) != 0 &&
        strcmp(b->principal, ACL_WILDCARD_PRINCIPAL) != 0)
        return VERDICT_NONE;
    if (strcmp(b->host, ACL_WILDCARD) != 0 && strcmp(b->host, r->host) != 0)
        return VERDICT_NONE;
    if (b->permission == ACL_PERM_DENY)
        return b->operation == ACL_OP_ALL || b->operation == r->op ? VERDICT_DENY : VERDICT_NONE;
    return allow_grants(b->operation, r->op) ? VERDICT_ALLOW : VERDICT_NONE;
}

static enum acl_result decide(const struct acl_store *s, const struct request *r,
                              enum acl_resource_type type, const char *name, bool allow_if_none)
{
    bool matched = false, allowed = false;
    for (size_t i = type_start(s, type); i < s->n && s->v[i].resource_type == type; i++) {
        if (!pattern_covers(&s->v[i], name))
            continue;
        matched = true;
        enum verdict v = binding_verdict(&s->v[i], r);
        if (v == VERDICT_DENY)
            return ACL_DENIED;
        if (v == VERDICT_ALLOW)
            allowed = true;
    }
    if (allowed || (!matched && allow_if_none))
        return ACL_ALLOWED;
    return ACL_DENIED;
}

enum acl_result acl_authorize(const struct acl_store *store, const char *principal,
                              const char *host, enum acl_operation operation,
                              enum acl_resource_type resource_type, const char *resource_name,
                              const struct acl_settings *s)
{
    CHECK(store != NULL && principal != NULL && host != NULL && resource_name != NULL);
    DCHECK(store_check(store));
    if (!in_range((int)operation, ACL_OP_ALL, ACL_OP_DESCRIBE_TOKENS) ||
        !acl_resource_type_concrete(resource_type))
        return ACL_DENIED;
    if (s != NULL && acl_super_users_contains(s->super_users, principal))
        return ACL_ALLOWED;
    struct request r = {.principal = principal, .host = host, .op = operation};
    return decide(store, &r, resource_type, resource_name, s != NULL && s->allow_if_no_acl);
}

bool acl_may_describe_topic(const struct acl_store *store, const char *principal, const char *host,
                            const char *topic, const struct acl_settings *s)
{
    return acl_authorize(store, principal, host, ACL_OP_DESCRIBE, ACL_RESOURCE_TOPIC, topic, s) ==
           ACL_ALLOWED;
}

/* --- super.users ------------------------------------------------------------------------ */

static void entry_error(char *err, size_t errcap, const char *entry, size_t len, const char *why)
{
    if (errcap == 0)
        return;
    snprintf(err, errcap, "super.users entry '%.*s'%s: %s", (int)MIN(len, 64), entry,
             len > 64 ? "..." : "", why);
}

/* Adds the entry [p, p + len) (trimmed, non-empty) to su, or says why not. */
static int super_users_add(struct acl_super_users *su, const char *p, size_t len, char *err,
                           size_t errcap)
{
    char name[ACL_PRINCIPAL_MAX + 1];
    if (len > ACL_PRINCIPAL_MAX) {
        entry_error(err, errcap, p, len, "too long for a principal");
        return -ERR_TOO_LARGE;
    }
    memcpy(name, p, len);
    name[len] = '\0';
    if (!acl_principal_valid(name)) {
        entry_error(err, errcap, p, len, "not a principal User:NAME");
        return -ERR_INVALID;
    }
    if (strcmp(name, ACL_WILDCARD_PRINCIPAL) == 0) {
        entry_error(err, errcap, p, len, "a super user is one principal, User:* is not everyone");
        return -ERR_INVALID;
    }
    if (acl_super_users_contains(su, name))
        return 0;
    if (su->n >= ACL_SUPER_USERS_MAX) {
        entry_error(err, errcap, p, len, "too many super users");
        return -ERR_LIMIT;
    }
    MEM_GROW(su->v, su->cap, su->n + 1);
    memcpy(su->v[su->n++], name, len + 1);
    return 0;
}

static bool is_trimmed_space(char c)
{
    return (unsigned char)c <= 0x20;
}

int acl_super_users_parse(const char *text, struct acl_super_users **out, char *err, size_t errcap)
{
    struct acl_super_users *su = mem_calloc(1, sizeof(*su));
    const char *p = text != NULL ? text : "";
    int rc = 0;
    *out = NULL;
    if (errcap > 0)
        err[0] = '\0';
    while (rc == 0 && *p != '\0') {
        const char *end = strchrnul(p, ';');
        const char *next = *end == ';' ? end + 1 : end;
        while (p < end && is_trimmed_space(*p))
            p++;
        while (end > p && is_trimmed_space(end[-1]))
            end--;
        if (end > p)
            rc = super_users_add(su, p, (size_t)(end - p), err, errcap);
        p = next;
    }
    if (rc != 0) {
        acl_super_users_free(su);
        return rc;
    }
    *out = su;
    return 0;
}

void acl_super_users_free(struct acl_super_users *su)
{
    if (su == NULL)
        return;
    mem_free(su->v);
    mem_free(su);
}

size_t acl_super_users_count(const struct acl_super_users *su)
{
    return su != NULL ? su->n : 0;
}

bool acl_super_users_contains(const struct acl_super_users *su, const char *principal)
{
    if (su == NULL)
        return false;
    for (size_t i = 0; i < su->n; i++)
        if (strcmp(su->v[i], principal) == 0)
            return true;
    return false;
}

/* --- Names ------------------------------------------------------------------------------ */

/* One value's names; each table starts with its UNKNOWN (code 0). */
struct name {
    int code;
    const char *pascal; /* Kafka's SecurityUtils spelling: "ClusterAction" */
    const char *upper;  /* Kafka's enum constant: "CLUSTER_ACTION" */
};

static const struct name resource_names[] = {
    {ACL_RESOURCE_UNKNOWN, "Unknown", "UNKNOWN"},
    {ACL_RESOURCE_ANY, "Any", "ANY"},
    {ACL_RESOURCE_TOPIC, "Topic", "TOPIC"},
    {ACL_RESOURCE_GROUP, "Group", "GROUP"},
    {ACL_RESOURCE_CLUSTER, "Cluster", "CLUSTER"},
    {ACL_RESOURCE_TRANSACTIONAL_ID, "TransactionalId", "TRANSACTIONAL_ID"},
    {ACL_RESOURCE_DELEGATION_TOKEN, "DelegationToken", "DELEGATION_TOKEN"},
    {ACL_RESOURCE_USER, "User", "USER"},
    {ACL_RESOURCE_REGISTRY, "Registry", "REGISTRY"},
    {ACL_RESOURCE_SUBJECT, "Subject", "SUBJECT"},
};

static const struct name pattern_names[] = {
    {ACL_PATTERN_UNKNOWN, "Unknown", "UNKNOWN"},    {ACL_PATTERN_ANY, "Any", "ANY"},
    {ACL_PATTERN_MATCH, "Match", "MATCH"},          {ACL_PATTERN_LITERAL, "Literal", "LITERAL"},
    {ACL_PATTERN_PREFIXED, "Prefixed", "PREFIXED"},
};

static const struct name operation_names[] = {
    {ACL_OP_UNKNOWN, "Unknown", "UNKNOWN"},
    {ACL_OP_ANY, "Any", "ANY"},
    {ACL_OP_ALL, "All", "ALL"},
    {ACL_OP_READ, "Read", "READ"},
    {ACL_OP_WRITE, "Write", "WRITE"},
    {ACL_OP_CREATE, "Create", "CREATE"},
    {ACL_OP_DELETE, "Delete", "DELETE"},
    {ACL_OP_ALTER, "Alter", "ALTER"},
    {ACL_OP_DESCRIBE, "Describe", "DESCRIBE"},
    {ACL_OP_CLUSTER_ACTION, "ClusterAction", "CLUSTER_ACTION"},
    {ACL_OP_DESCRIBE_CONFIGS, "DescribeConfigs", "DESCRIBE_CONFIGS"},
    {ACL_OP_ALTER_CONFIGS, "AlterConfigs", "ALTER_CONFIGS"},
    {ACL_OP_IDEMPOTENT_WRITE, "IdempotentWrite", "IDEMPOTENT_WRITE"},
    {ACL_OP_CREATE_TOKENS, "CreateTokens", "CREATE_TOKENS"},
    {ACL_OP_DESCRIBE_TOKENS, "DescribeTokens", "DESCRIBE_TOKENS"},
};

static const struct name permission_names[] = {
    {ACL_PERM_UNKNOWN, "Unknown", "UNKNOWN"},
    {ACL_PERM_ANY, "Any", "ANY"},
    {ACL_PERM_DENY, "Deny", "DENY"},
    {ACL_PERM_ALLOW, "Allow", "ALLOW"},
};

static const struct name *name_of(const struct name *t, size_t n, int code)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].code == code)
            return &t[i];
    CHECK(t[0].code == 0);
    return &t[0];
}

static int parse_name(const struct name *t, size_t n, const char *s)
{
    if (s == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(s, t[i].pascal) == 0 || strcasecmp(s, t[i].upper) == 0)
            return t[i].code;
    return 0;
}

const char *acl_resource_type_name(enum acl_resource_type t)
{
    return name_of(resource_names, ARRAY_LEN(resource_names), (int)t)->pascal;
}

const char *acl_pattern_type_name(enum acl_pattern_type t)
{
    return name_of(pattern_names, ARRAY_LEN(pattern_names), (int)t)->upper;
}

const char *acl_operation_name(enum acl_operation op)
{
    return name_of(operation_names, ARRAY_LEN(operation_names), (int)op)->pascal;
}

const char *acl_permission_name(enum acl_permission p)
{
    return name_of(permission_names, ARRAY_LEN(permission_names), (int)p)->pascal;
}

enum acl_resource_type acl_resource_type_parse(const char *s)
{
    return (enum acl_resource_type)parse_name(resource_names, ARRAY_LEN(resource_names), s);
}

enum acl_pattern_type acl_pattern_type_parse(const char *s)
{
    return (enum acl_pattern_type)parse_name(pattern_names, ARRAY_LEN(pattern_names), s);
}

enum acl_operation acl_operation_parse(const char *s)
{
    return (enum acl_operation)parse_name(operation_names, ARRAY_LEN(operation_names), s);
}

enum acl_permission acl_permission_parse(const char *s)
{
    return (enum acl_permission)parse_name(permission_names, ARRAY_LEN(permission_names), s);
}
