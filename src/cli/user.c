/* `streampulse user create|list|delete`: the SCRAM users of the cluster, two ways.
 *
 * Through a Kafka listener (-b, the default): Kafka's AlterUserScramCredentials (51) and
 * DescribeUserScramCredentials (50), KIP-554, sent raw (cli/kraw.h) to the first broker of -b
 * that answers (a PLAINTEXT listener: the loopback default).
 *
 * Through an admin listener (--admin HOST:PORT, cli/admin_client.h; server/admin.h): GET and
 * POST /v1/users, DELETE /v1/users/NAME, so that a cluster whose every Kafka listener asks for
 * SASL gets its first user without a PLAINTEXT listener. The admin listener answers a change
 * once it is submitted (202); this command then polls GET /v1/users until the change is
 * visible there (the credential with the salt sent, or the deleted ones gone), for at most
 * --timeout, and fails naming the wait otherwise.
 *
 * Either way, as kafka-configs does it, the password never leaves this process: a random salt
 * is drawn here and only PBKDF2(password, salt, iterations) goes to the broker, which keeps
 * StoredKey and ServerKey (security/scram.h). The password is read from standard input
 * (--password-stdin: its first line), never from the command line; an admin listener's own
 * password then comes from --admin-password-file or $STREAMPULSE_ADMIN_PASSWORD (standard input
 * is the new user's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "base/json.h"
#include "base/json_parse.h"
#include "base/strbuf.h"
#include "base/time.h"
#include "cli/admin_client.h"
#include "cli/common.h"
#include "cli/kraw.h"
#include "base/base64.h"
#include "security/scram.h"

#define KEY_DESCRIBE 50
#define KEY_ALTER 51
#define ERR_RESOURCE_NOT_FOUND 91
#define POLL_MS 100

enum { OPT_MECHANISM = CLI_OPT_CMD, OPT_ITERATIONS, OPT_PASSWORD_STDIN };

static const char user_help[] =
    "Usage: streampulse user create NAME [--mechanism M] [--iterations N] --password-stdin\n"
    "       streampulse user delete NAME [--mechanism M]\n"
    "       streampulse user list [NAME...]\n"
    "       ... [--admin HOST:PORT [--admin-cafile PEM [--admin-user NAME\n"
    "            [--admin-password-file FILE]]]]\n"
    "\n"
    "SCRAM users, kept in the metadata log (every broker knows them) and checked by SASL\n"
    "listeners for PLAIN and SCRAM. create sets (or replaces) NAME's credential for one\n"
    "mechanism; delete removes it (without --mechanism: every mechanism NAME has); list\n"
    "prints each user's mechanisms and iteration counts.\n"
    "\n"
    "By default through a Kafka listener (-b; it must let this client in: a PLAINTEXT one, or\n"
    "-X security.protocol=... with a user's credentials). With --admin, through a broker's\n"
    "admin listener instead (HTTP on loopback, as `cluster status` uses it): the way to create\n"
    "the first user of a cluster whose every Kafka listener asks for SASL. A change is done\n"
    "once it shows there (waited for up to --timeout).\n"
    "\n"
    "Options:\n"
    "      --mechanism M      SCRAM-SHA-256 (default) or SCRAM-SHA-512\n"
    "      --iterations N     PBKDF2 iterations, 4096..16384 (default 4096)\n"
    "      --password-stdin   read the password from the first line of standard input\n"
    "      --admin HOST:PORT        a broker's admin listener (e.g. " ADMIN_DEFAULT_ADDR ")\n"
    ADMIN_CLIENT_HELP
    "                               With --password-stdin (the new user's password on\n"
    "                               standard input) the admin password comes from\n"
    "                               --admin-password-file or $STREAMPULSE_ADMIN_PASSWORD.\n"
    "\n" CLI_COMMON_HELP;


static void w_bytes(struct strbuf *b, const uint8_t *p, size_t n)
{
    kraw_wuvar(b, (uint32_t)n + 1);
    strbuf_append(b, p, n);
}

/* Sends one AlterUserScramCredentials; prints its results. Returns a CLI_EXIT_* code. */
static int alter(const struct cli_common *c, const struct strbuf *body, const char *doing)
{
    struct strbuf resp;
    strbuf_init(&resp);
    char err[512];
    int rc = CLI_EXIT_FAIL;
    if (kraw_call(c->brokers, KEY_ALTER, 0, body, c->timeout_ms, &resp, err, sizeof(err)) != 0) {
        cli_error(c, "AlterUserScramCredentials: %s", err);
        goto out;
    }
    struct kraw_reader r = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
    (void)kraw_r32(&r); /* throttle */
    int32_t n = kraw_rarray(&r);
    int failed = 0;
    for (int32_t i = 0; i < n && !r.bad; i++) {
        char user[512], msg[512];
        kraw_rcstr(&r, user, sizeof(user));
        int16_t ec = kraw_r16(&r);
        if (!kraw_rcstr(&r, msg, sizeof(msg)))
            msg[0] = '\0';
        kraw_rtags(&r);
        if (ec != 0) {
            cli_error(c, "%s %s: %s (error %d)", doing, user, msg[0] ? msg : "refused", ec);
            failed++;
        }
    }
    kraw_rtags(&r);
    if (r.bad)
        cli_error(c, "AlterUserScramCredentials: malformed answer");
    else if (failed == 0)
        rc = CLI_EXIT_OK;
out:
    strbuf_destroy(&resp);
    return rc;
}

struct listed {
    char user[512];
    int mechs[2];
    int32_t iterations[2];
    int n;
};

/* DescribeUserScramCredentials of names[0..n) (n 0: every user) into *out (mem_free'd by the
 * caller), *n_out entries; users without a credential are left out. Returns 0 or -1. */
static int describe(const struct cli_common *c, char **names, int n, struct listed **out,
                    int *n_out)
{
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    kraw_warray(&body, n == 0 ? -1 : n);
    for (int i = 0; i < n; i++) {
        kraw_wcstr(&body, names[i]);
        kraw_wuvar(&body, 0);
    }
    kraw_wuvar(&body, 0);
    char err[512];
    int rc = kraw_call(c->brokers, KEY_DESCRIBE, 0, &body, c->timeout_ms, &resp, err, sizeof(err));
    *out = NULL;
    *n_out = 0;
    if (rc != 0) {
        cli_error(c, "DescribeUserScramCredentials: %s", err);
        goto out;
    }
    struct kraw_reader r = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
    (void)kraw_r32(&r);
    int16_t top = kraw_r16(&r);
    char msg[512];
    if (!kraw_rcstr(&r, msg, sizeof(msg)))
        msg[0] = '\0';
    int32_t nr = kraw_rarray(&r);
    *out = calloc(nr > 0 ? (size_t)nr : 1, sizeof(**out));
    for (int32_t i = 0; i < nr && !r.bad; i++) {
        struct listed *l = &(*out)[*n_out];
        kraw_rcstr(&r, l->user, sizeof(l->user));
        int16_t ec = kraw_r16(&r);
        char emsg[512];
        if (!kraw_rcstr(&r, emsg, sizeof(emsg)))
            emsg[0] = '\0';
        int32_t nc = kraw_rarray(&r);
        for (int32_t j = 0; j < nc && !r.bad; j++) {
            int8_t mech = kraw_r8(&r);
            int32_t iter = kraw_r32(&r);
            kraw_rtags(&r);
            if (l->n < 2) {
                l->mechs[l->n] = mech;
                l->iterations[l->n++] = iter;
            }
        }
        kraw_rtags(&r);
        if (ec == 0)
            (*n_out)++;
        else if (ec != ERR_RESOURCE_NOT_FOUND)
            cli_error(c, "%s: %s (error %d)", l->user, emsg, ec);
    }
    rc = r.bad || top != 0 ? -1 : 0;
    if (top != 0)
        cli_error(c, "DescribeUserScramCredentials: %s (error %d)", msg, top);
out:
    strbuf_destroy(&body);
    strbuf_destroy(&resp);
    return rc;
}

/* ---- through an admin listener ---- */

struct admin_ctx {
    const struct cli_common *c;
    struct admin_client ac;
    const char *addr;
};

/* Reports an answer other than the one expected: its JSON error's text, and a hint. */
static void report(struct admin_ctx *x, const char *what, int status, const struct strbuf *body)
{
    struct json_doc d;
    const char *why = NULL;
    if (json_parse(&d, body->p, body->len, NULL, NULL, 0) == 0)
        why = json_get_str(d.root, "error", NULL);
    /* a JSON error is this listener's own reason: the hints are for answers without one */
    cli_error(x->c, "%s: %s answered HTTP %d%s%.300s%s", what, x->addr, status, why ? ": " : "",
              why ? why : "", why ? "" : admin_client_status_hint(&x->ac, status));
    json_doc_free(&d);
}

/* One request; *status its answer's. Returns 0, or -1 (reported). */
static int admin_call(struct admin_ctx *x, const char *method, const char *path,
                      const struct strbuf *body, int *status, struct strbuf *out)
{
    char err[512];
    if (admin_client_call(&x->ac, x->addr, x->c->timeout_ms, method, path, body ? body->p : NULL,
                          body ? body->len : 0, status, out, err, sizeof(err)) != 0) {
        cli_error(x->c, "%s", err);
        return -1;
    }
    return 0;
}

/* GET /v1/users into d: its "users" array in *users. Returns 0, or -1 (reported). */
static int admin_list(struct admin_ctx *x, struct json_doc *d, const struct json_value **users)
{
    struct strbuf body;
    strbuf_init(&body);
    int status = 0, rc = -1;
    memset(d, 0, sizeof(*d));
    if (admin_call(x, "GET", "/v1/users", NULL, &status, &body) != 0)
        goto out;
    if (status != 200) {
        report(x, "GET /v1/users", status, &body);
        goto out;
    }
    struct json_limits lim = {.depth_max = 8, .values_max = 1u << 22};
    char err[128];
    if (json_parse(d, body.p, body.len, &lim, err, sizeof(err)) != 0 ||
        !(*users = json_get(d->root, "users", JSON_ARRAY))) {
        cli_error(x->c, "GET /v1/users: %s answered no users list", x->addr);
        goto out;
    }
    rc = 0;
out:
    strbuf_destroy(&body);
    return rc;
}

static bool str_is(const struct json_value *v, const char *s)
{
    return v && v->type == JSON_STRING && v->str_len == strlen(s) && !memcmp(v->str, s, v->str_len);
}

/* name's entry in users, or NULL. */
static const struct json_value *user_entry(const struct json_value *users, const char *name)
{
    for (const struct json_value *u = users->child; u; u = u->next)
        if (str_is(json_member(u, "name"), name))
            return u;
    return NULL;
}

/* name's credential for mechanism mech (a name), or NULL. */
static const struct json_value *credential(const struct json_value *users, const char *name,
                                           const char *mech)
{
    const struct json_value *cs = json_get(user_entry(users, name), "credentials", JSON_ARRAY);
    for (const struct json_value *cr = cs ? cs->child : NULL; cr; cr = cr->next)
        if (str_is(json_member(cr, "mechanism"), mech))
            return cr;
    return NULL;
}

/* What a change waits for in GET /v1/users. */
struct visible {
    const char *name;
    const char *mech; /* NULL: every mechanism (a deletion) */
    const char *salt; /* a creation: the credential with this salt; NULL: a deletion */
};

static bool is_visible(const struct json_value *users, const struct visible *v)
{
    if (v->salt)
        return str_is(json_member(credential(users, v->name, v->mech), "salt"), v->salt);
    return v->mech ? !credential(users, v->name, v->mech) : !user_entry(users, v->name);
}

/* Polls GET /v1/users until v holds, for at most --timeout. Returns a CLI_EXIT_* code. */
static int admin_wait(struct admin_ctx *x, const struct visible *v, const char *what)
{
    int64_t deadline = time_mono_ms() + x->c->timeout_ms;
    for (;;) {
        struct json_doc d;
        const struct json_value *users;
        int rc = admin_list(x, &d, &users);
        bool done = rc == 0 && is_visible(users, v);
        json_doc_free(&d);
        if (rc != 0)
            return CLI_EXIT_FAIL;
        if (done)
            return CLI_EXIT_OK;
        if (cli_interrupted)
            return CLI_EXIT_INTERRUPTED;
        if (time_mono_ms() >= deadline) {
            cli_error(x->c,
                      "%s was accepted by %s but does not show in GET /v1/users after %.1f s "
                      "(no controller? the broker logs user_change_failed if it was refused)",
                      what, x->addr, x->c->timeout_ms / 1000.0);
            return CLI_EXIT_FAIL;
        }
        struct timespec ts = {0, POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static int admin_print_list(struct admin_ctx *x, char **names, int n_names)
{
    struct json_doc d;
    const struct json_value *users;
    if (admin_list(x, &d, &users) != 0) {
        json_doc_free(&d);
        return CLI_EXIT_FAIL;
    }
    for (const struct json_value *u = users->child; u; u = u->next) {
        const struct json_value *name = json_get(u, "name", JSON_STRING);
        bool asked = n_names == 0;
        for (int i = 0; i < n_names && !asked && name; i++)
            asked = str_is(name, names[i]);
        const struct json_value *cs = json_get(u, "credentials", JSON_ARRAY);
        for (const struct json_value *cr = cs && asked ? cs->child : NULL; cr; cr = cr->next)
            printf("%s\t%s\titerations=%lld\n", name->str, json_get_str(cr, "mechanism", "?"),
                   (long long)json_get_int(cr, "iterations", -1));
    }
    json_doc_free(&d);
    return CLI_EXIT_OK;
}

static void b64_member(struct json *j, const char *key, const uint8_t *p, size_t n)
{
    char s[B64_ENCODED_LEN(SCRAM_KEY_MAX) + 1];
    b64_encode(p, n, s, sizeof(s));
    json_key(j, key);
    json_cstr(j, s);
    OPENSSL_cleanse(s, sizeof(s));
}

/* POST /v1/users of the salted credential, then waits until it shows. */
static int admin_create(struct admin_ctx *x, const char *name, int mech, int32_t iterations,
                        const uint8_t *salt, size_t salt_len, const uint8_t *salted)
{
    struct strbuf body, answer;
    strbuf_init(&body);
    strbuf_init(&answer);
    struct json j;
    json_init(&j, &body);
    json_obj_begin(&j);
    json_key(&j, "name");
    json_cstr(&j, name);
    json_key(&j, "mechanism");
    json_cstr(&j, scram_mech_name(mech));
    json_key(&j, "iterations");
    json_i64(&j, iterations);
    b64_member(&j, "salt", salt, salt_len);
    b64_member(&j, "salted_password", salted, scram_key_len(mech));
    json_obj_end(&j);
    int status = 0, rc = CLI_EXIT_FAIL;
    int call = admin_call(x, "POST", "/v1/users", &body, &status, &answer);
    OPENSSL_cleanse(body.p, body.len);
    if (call == 0 && status != 202)
        report(x, "creating the user", status, &answer);
    if (call == 0 && status == 202) {
        char salt64[B64_ENCODED_LEN(SCRAM_SALT_MAX) + 1];
        b64_encode(salt, salt_len, salt64, sizeof(salt64));
        struct visible v = {name, scram_mech_name(mech), salt64};
        rc = admin_wait(x, &v, "the credential");
    }
    strbuf_destroy(&body);
    strbuf_destroy(&answer);
    return rc;
}

/* DELETE /v1/users/NAME[?mechanism=M], then waits until it shows; *n_deleted the count of
 * credentials deleted. */
static int admin_delete(struct admin_ctx *x, const char *name, int mech, int *n_deleted)
{
    struct strbuf path, answer;
    strbuf_init(&path);
    strbuf_init(&answer);
    strbuf_puts(&path, "/v1/users/");
    admin_client_encode(&path, name, strlen(name));
    if (mech)
        strbuf_printf(&path, "?mechanism=%s", scram_mech_name(mech));
    int status = 0, rc = CLI_EXIT_FAIL;
    if (admin_call(x, "DELETE", strbuf_str(&path), NULL, &status, &answer) == 0) {
        if (status != 202) {
            report(x, "deleting the user", status, &answer);
        } else {
            struct json_doc d;
            if (json_parse(&d, answer.p, answer.len, NULL, NULL, 0) == 0) {
                const struct json_value *ms = json_get(d.root, "mechanisms", JSON_ARRAY);
                *n_deleted = ms ? (int)ms->n : 0;
            }
            json_doc_free(&d);
            struct visible v = {name, mech ? scram_mech_name(mech) : NULL, NULL};
            rc = admin_wait(x, &v, "the deletion");
        }
    }
    strbuf_destroy(&path);
    strbuf_destroy(&answer);
    return rc;
}

/* The salted credential of the password on standard input: 0, or a CLI_EXIT_* code
 * (reported). */
static int read_credential(const struct cli_common *c, int mech, int32_t iterations, uint8_t *salt,
                           uint8_t *salted)
{
    char pw[SCRAM_PASSWORD_MAX + 2];
    ssize_t pl = cli_read_line(pw, sizeof(pw));
    int e = pl <= 0 || pl > SCRAM_PASSWORD_MAX ? -1 : scram_salt_random(salt, SCRAM_SALT_DEFAULT_LEN);
    if (e == 0)
        e = scram_salted_password(mech, pw, (size_t)pl, salt, SCRAM_SALT_DEFAULT_LEN, iterations,
                                  salted);
    OPENSSL_cleanse(pw, sizeof(pw));
    if (e != 0) {
        cli_error(c, pl <= 0                    ? "no password on standard input"
                     : pl > SCRAM_PASSWORD_MAX ? "the password is longer than 1024 bytes"
                                               : "cannot derive the salted password");
        return CLI_EXIT_FAIL;
    }
    return 0;
}

/* create through a Kafka listener: one AlterUserScramCredentials upsertion. */
static int kafka_create(const struct cli_common *c, const char *name, int mech, int32_t iterations,
                        const uint8_t *salt, const uint8_t *salted)
{
    struct strbuf body;
    strbuf_init(&body);
    kraw_warray(&body, 0); /* deletions */
    kraw_warray(&body, 1);
    kraw_wcstr(&body, name);
    kraw_w8(&body, (int8_t)mech);
    kraw_w32(&body, iterations);
    w_bytes(&body, salt, SCRAM_SALT_DEFAULT_LEN);
    w_bytes(&body, salted, scram_key_len(mech));
    kraw_wuvar(&body, 0);
    kraw_wuvar(&body, 0);
    int rc = alter(c, &body, "creating");
    OPENSSL_cleanse(body.p, body.len);
    strbuf_destroy(&body);
    return rc;
}

/* delete through a Kafka listener: the mechanisms given, or every one the user has. */
static int kafka_delete(const struct cli_common *c, char **names, int mech, int *n_deleted)
{
    int mechs[2], nm = 0;
    struct listed *ls = NULL;
    if (mech != 0) {
        mechs[nm++] = mech;
    } else { /* every mechanism the user has */
        int n;
        if (describe(c, names, 1, &ls, &n) != 0) {
            free(ls);
            return CLI_EXIT_FAIL;
        }
        for (int k = 0; n > 0 && k < ls[0].n; k++)
            mechs[nm++] = ls[0].mechs[k];
        free(ls);
        if (nm == 0) {
            cli_error(c, "user %s has no credential", names[0]);
            return CLI_EXIT_FAIL;
        }
    }
    struct strbuf body;
    strbuf_init(&body);
    kraw_warray(&body, nm);
    for (int k = 0; k < nm; k++) {
        kraw_wcstr(&body, names[0]);
        kraw_w8(&body, (int8_t)mechs[k]);
        kraw_wuvar(&body, 0);
    }
    kraw_warray(&body, 0); /* upsertions */
    kraw_wuvar(&body, 0);
    int rc = alter(c, &body, "deleting");
    strbuf_destroy(&body);
    *n_deleted = nm;
    return rc;
}

static int kafka_list(const struct cli_common *c, char **names, int n_names)
{
    struct listed *ls = NULL;
    int n;
    if (describe(c, names, n_names, &ls, &n) != 0) {
        free(ls);
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < ls[i].n; k++)
            printf("%s\t%s\titerations=%d\n", ls[i].user,
                   scram_mech_name(ls[i].mechs[k]) ? scram_mech_name(ls[i].mechs[k]) : "?",
                   (int)ls[i].iterations[k]);
    free(ls);
    return CLI_EXIT_OK;
}

/* The admin flags' checks: 0, or CLI_EXIT_USAGE (reported). */
static int check_admin_flags(const struct cli_common *c, const struct admin_client_opts *ao,
                             bool pw_stdin)
{
    if (!ao->addr && (ao->cafile || ao->user || ao->password_stdin || ao->password_file)) {
        cli_error(c, "--admin-cafile, --admin-user and the admin password go with --admin");
        return CLI_EXIT_USAGE;
    }
    if (pw_stdin && ao->password_stdin) {
        cli_error(c, "--password-stdin and --admin-password-stdin cannot both read standard "
                     "input: give the admin password with --admin-password-file FILE or "
                     "$STREAMPULSE_ADMIN_PASSWORD");
        return CLI_EXIT_USAGE;
    }
    if (ao->addr && strchr(ao->addr, ',')) {
        cli_error(c, "--admin takes one HOST:PORT");
        return CLI_EXIT_USAGE;
    }
    return 0;
}

int cli_user(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_COMMON_LONGOPTS,
        ADMIN_CLIENT_LONGOPTS,
        {"mechanism", required_argument, NULL, OPT_MECHANISM},
        {"iterations", required_argument, NULL, OPT_ITERATIONS},
        {"password-stdin", no_argument, NULL, OPT_PASSWORD_STDIN},
        {NULL, 0, NULL, 0},
    };
    struct cli_common c;
    cli_common_init(&c, "user");
    struct admin_ctx x = {.c = &c};
    struct admin_client_opts ao = {0};
    int rc = CLI_EXIT_USAGE, opt, mech = 0;
    long long iterations = SCRAM_ITER_MIN;
    bool pw_stdin = false, admin_up = false;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        int h = cli_common_opt(&c, opt, optarg);
        if (h < 0)
            goto out;
        if (h == 1 || admin_client_opt(&ao, opt, optarg))
            continue;
        if (opt == OPT_MECHANISM) {
            mech = scram_mech_parse(optarg, strlen(optarg));
            if (mech < 0) {
                cli_error(&c, "--mechanism: '%s' is not SCRAM-SHA-256 or SCRAM-SHA-512", optarg);
                goto out;
            }
        } else if (opt == OPT_ITERATIONS) {
            if (cli_parse_int(&c, "--iterations", optarg, SCRAM_ITER_MIN, SCRAM_ITER_MAX,
                              &iterations) != 0)
                goto out;
        } else if (opt == OPT_PASSWORD_STDIN) {
            pw_stdin = true;
        } else {
            cli_error(&c, "unknown option or missing value: '%s'", argv[optind - 1]);
            goto out;
        }
    }
    if (c.help) {
        fputs(user_help, stdout);
        rc = CLI_EXIT_OK;
        goto out;
    }
    const char *sub = optind < argc ? argv[optind] : "";
    bool create = !strcmp(sub, "create"), del = !strcmp(sub, "delete"), list = !strcmp(sub, "list");
    if (!create && !del && !list) {
        fprintf(stderr, "%s", user_help);
        goto out;
    }
    char **names = argv + optind + 1;
    int n_names = argc - optind - 1;
    if ((create || del) && n_names != 1) {
        cli_error(&c, "%s takes one user NAME", sub);
        goto out;
    }
    if ((create || del) && !scram_user_valid(names[0], strlen(names[0]))) {
        cli_error(&c, "'%s' is not a user name (1-255 bytes, no control character)", names[0]);
        goto out;
    }
    if (create && !pw_stdin) {
        cli_error(&c, "give the password on standard input, with --password-stdin");
        goto out;
    }
    if (check_admin_flags(&c, &ao, pw_stdin) != 0)
        goto out;
    x.addr = ao.addr;
    if (x.addr) {
        rc = admin_client_init(&x.ac, create ? "user create" : del ? "user delete" : "user list",
                               &ao);
        admin_up = true;
        if (rc != 0)
            goto out;
    }
    if (list) {
        rc = x.addr ? admin_print_list(&x, names, n_names) : kafka_list(&c, names, n_names);
        goto out;
    }
    if (create) {
        if (mech == 0)
            mech = SCRAM_SHA_256;
        uint8_t salt[SCRAM_SALT_DEFAULT_LEN], salted[SCRAM_KEY_MAX];
        rc = read_credential(&c, mech, (int32_t)iterations, salt, salted);
        if (rc == 0)
            rc = x.addr ? admin_create(&x, names[0], mech, (int32_t)iterations, salt, sizeof(salt),
                                       salted)
                        : kafka_create(&c, names[0], mech, (int32_t)iterations, salt, salted);
        OPENSSL_cleanse(salted, sizeof(salted));
        if (rc == CLI_EXIT_OK)
            printf("user %s: %s credential set\n", names[0], scram_mech_name(mech));
        goto out;
    }
    int n_deleted = 0;
    rc = x.addr ? admin_delete(&x, names[0], mech, &n_deleted)
                : kafka_delete(&c, names, mech, &n_deleted);
    if (rc == CLI_EXIT_OK)
        printf("user %s: %d credential(s) deleted\n", names[0], n_deleted);
out:
    if (admin_up)
        admin_client_free(&x.ac);
    cli_common_free(&c);
    return rc;
}
