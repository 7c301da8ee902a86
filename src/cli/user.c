/* `streampulse user create|list|delete`: the SCRAM users of the cluster, through Kafka's
 * AlterUserScramCredentials (51) and DescribeUserScramCredentials (50), KIP-554, sent raw
 * (cli/kraw.h) to the first broker of -b that answers (a PLAINTEXT listener: the loopback
 * default). As kafka-configs does it, the password never leaves this process: a random salt is
 * drawn here and only PBKDF2(password, salt, iterations) goes to the broker, which keeps
 * StoredKey and ServerKey (security/scram.h). The password is read from standard input
 * (--password-stdin: its first line), never from the command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "base/strbuf.h"
#include "cli/common.h"
#include "cli/kraw.h"
#include "security/scram.h"

#define KEY_DESCRIBE 50
#define KEY_ALTER 51
#define ERR_RESOURCE_NOT_FOUND 91

enum { OPT_MECHANISM = CLI_OPT_CMD, OPT_ITERATIONS, OPT_PASSWORD_STDIN };

static const char user_help[] =
    "Usage: streampulse user create NAME [--mechanism M] [--iterations N] --password-stdin\n"
    "       streampulse user delete NAME [--mechanism M]\n"
    "       streampulse user list [NAME...]\n"
    "\n"
    "SCRAM users, kept in the metadata log (every broker knows them) and checked by SASL\n"
    "listeners for PLAIN and SCRAM. create sets (or replaces) NAME's credential for one\n"
    "mechanism; delete removes it (without --mechanism: every mechanism NAME has); list\n"
    "prints each user's mechanisms and iteration counts.\n"
    "\n"
    "Options:\n"
    "      --mechanism M      SCRAM-SHA-256 (default) or SCRAM-SHA-512\n"
    "      --iterations N     PBKDF2 iterations, 4096..16384 (default 4096)\n"
    "      --password-stdin   read the password from the first line of standard input\n"
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

int cli_user(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_COMMON_LONGOPTS,
        {"mechanism", required_argument, NULL, OPT_MECHANISM},
        {"iterations", required_argument, NULL, OPT_ITERATIONS},
        {"password-stdin", no_argument, NULL, OPT_PASSWORD_STDIN},
        {NULL, 0, NULL, 0},
    };
    struct cli_common c;
    cli_common_init(&c, "user");
    int rc = CLI_EXIT_USAGE, opt, mech = 0;
    long long iterations = SCRAM_ITER_MIN;
    bool pw_stdin = false;
    struct listed *ls = NULL;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        int h = cli_common_opt(&c, opt, optarg);
        if (h < 0)
            goto out;
        if (h == 1)
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
    rc = CLI_EXIT_FAIL;
    if (list) {
        int n;
        if (describe(&c, names, n_names, &ls, &n) != 0)
            goto out;
        for (int i = 0; i < n; i++)
            for (int k = 0; k < ls[i].n; k++)
                printf("%s\t%s\titerations=%d\n", ls[i].user,
                       scram_mech_name(ls[i].mechs[k]) ? scram_mech_name(ls[i].mechs[k]) : "?",
                       (int)ls[i].iterations[k]);
        rc = CLI_EXIT_OK;
        goto out;
    }
    struct strbuf body;
    strbuf_init(&body);
    if (create) {
        if (!pw_stdin) {
            cli_error(&c, "give the password on standard input, with --password-stdin");
            strbuf_destroy(&body);
            rc = CLI_EXIT_USAGE;
            goto out;
        }
        if (mech == 0)
            mech = SCRAM_SHA_256;
        char pw[SCRAM_PASSWORD_MAX + 2];
        ssize_t pl = cli_read_line(pw, sizeof(pw));
        uint8_t salt[SCRAM_SALT_DEFAULT_LEN], salted[SCRAM_KEY_MAX];
        size_t klen = scram_key_len(mech);
        int e = pl <= 0 || pl > SCRAM_PASSWORD_MAX ? -1 : scram_salt_random(salt, sizeof(salt));
        if (e == 0)
            e = scram_salted_password(mech, pw, (size_t)pl, salt, sizeof(salt),
                                      (int32_t)iterations, salted);
        OPENSSL_cleanse(pw, sizeof(pw));
        if (e != 0) {
            cli_error(&c, pl <= 0 ? "no password on standard input"
                          : pl > SCRAM_PASSWORD_MAX ? "the password is longer than 1024 bytes"
                                                    : "cannot derive the salted password");
            strbuf_destroy(&body);
            goto out;
        }
        kraw_warray(&body, 0); /* deletions */
        kraw_warray(&body, 1);
        kraw_wcstr(&body, names[0]);
        kraw_w8(&body, (int8_t)mech);
        kraw_w32(&body, (int32_t)iterations);
        w_bytes(&body, salt, sizeof(salt));
        w_bytes(&body, salted, klen);
        OPENSSL_cleanse(salted, sizeof(salted));
        kraw_wuvar(&body, 0);
        kraw_wuvar(&body, 0);
        rc = alter(&c, &body, "creating");
        if (rc == CLI_EXIT_OK)
            printf("user %s: %s credential set\n", names[0], scram_mech_name(mech));
    } else {
        int mechs[2], nm = 0;
        if (mech != 0) {
            mechs[nm++] = mech;
        } else { /* every mechanism the user has */
            int n;
            if (describe(&c, names, 1, &ls, &n) != 0) {
                strbuf_destroy(&body);
                goto out;
            }
            for (int k = 0; n > 0 && k < ls[0].n; k++)
                mechs[nm++] = ls[0].mechs[k];
            if (nm == 0) {
                cli_error(&c, "user %s has no credential", names[0]);
                strbuf_destroy(&body);
                goto out;
            }
        }
        kraw_warray(&body, nm);
        for (int k = 0; k < nm; k++) {
            kraw_wcstr(&body, names[0]);
            kraw_w8(&body, (int8_t)mechs[k]);
            kraw_wuvar(&body, 0);
        }
        kraw_warray(&body, 0); /* upsertions */
        kraw_wuvar(&body, 0);
        rc = alter(&c, &body, "deleting");
        if (rc == CLI_EXIT_OK)
            printf("user %s: %d credential(s) deleted\n", names[0], nm);
    }
    strbuf_destroy(&body);
out:
    free(ls);
    cli_common_free(&c);
    return rc;
}
