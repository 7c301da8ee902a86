/* `streampulse schema register|get|list|check|delete|config`: the schema registry's REST API
 * (Confluent's, on a broker's schema.registry.listener) from the command line. One HTTP
 * request per call (cli/admin_client.h's client, plain HTTP), the registry's answer printed
 * plainly: ids, schema texts, subject and version lists one per line. A registry error is
 * printed as "streampulse schema CMD: ERROR_CODE message" and exits 1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/json_parse.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "cli/admin_client.h"
#include "cli/common.h"
#include "cli/schema_decode.h"


#define SCHEMA_FILE_MAX (1u << 20)
#define REFS_MAX 64

enum {
    OPT_REGISTRY = CLI_OPT_CMD,
    OPT_FILE,
    OPT_TYPE,
    OPT_REFERENCE,
    OPT_NORMALIZE,
    OPT_VERSION,
    OPT_ID,
    OPT_DELETED,
    OPT_PERMANENT,
    OPT_LEVEL,
    OPT_DELETE,
    OPT_JSON,
};

static const char schema_help[] =
    "Usage: streampulse schema register SUBJECT [--file F] [--type T] [--reference R]...\n"
    "                                   [--normalize]\n"
    "       streampulse schema get SUBJECT [--version V] [--json]\n"
    "       streampulse schema get --id N [--json]\n"
    "       streampulse schema list [SUBJECT] [--deleted]\n"
    "       streampulse schema check SUBJECT [--file F] [--type T] [--reference R]...\n"
    "                                [--version V]\n"
    "       streampulse schema delete SUBJECT [--version V] [--permanent]\n"
    "       streampulse schema config [SUBJECT] [--level L | --delete]\n"
    "\n"
    "The schema registry built into every broker (Confluent's REST API on\n"
    "schema.registry.listener). register prints the schema's id (the same id for a schema\n"
    "registered before); get prints a version's schema text (latest by default), or with\n"
    "--json the registry's whole answer; list prints the subjects, or a subject's versions;\n"
    "check prints compatible or incompatible and why (against the versions the subject's\n"
    "compatibility level names, or one --version), exit 1 when incompatible; delete\n"
    "soft-deletes a version or the whole subject (--permanent: for good, once soft-deleted)\n"
    "and prints the versions deleted; config prints the compatibility level (of SUBJECT, or\n"
    "the global one), --level sets it, --delete removes the subject's own.\n"
    "\n"
    "Options:\n"
    "      --registry HOST:PORT  the registry (default: $STREAMPULSE_REGISTRY, else\n"
    "                            " REGISTRY_DEFAULT_ADDR ")\n"
    "      --file F              the schema text (default: standard input)\n"
    "      --type T              AVRO (default), PROTOBUF or JSON\n"
    "      --reference NAME=SUBJECT:VERSION\n"
    "                            a schema reference (an Avro type's full name, a .proto\n"
    "                            import path, a JSON $ref), repeatable\n"
    "      --normalize           register and compare the normalized form\n"
    "      --version V           a version number, or latest\n"
    "      --id N                a schema id\n"
    "      --deleted             include soft-deleted subjects or versions\n"
    "      --permanent           delete for good\n"
    "      --level L             NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD,\n"
    "                            FORWARD_TRANSITIVE, FULL or FULL_TRANSITIVE\n"
    "      --delete              config: remove the subject's own level\n"
    "      --json                get: print the registry's answer as is\n"
    "      --timeout SECS        how long to wait for an answer (default 10)\n"
    "  -h, --help                this help\n";

struct opts {
    const char *sub;
    const char *registry;
    const char *subject;
    const char *file;
    const char *type;
    const char *refs[REFS_MAX];
    size_t n_refs;
    bool normalize;
    const char *version;
    const char *id;
    bool deleted;
    bool permanent;
    const char *level;
    bool delete_level;
    bool json;
};

struct call {
    const struct cli_common *c;
    struct admin_client ac;
    const char *addr;
};

/* One request; the answer's body in *out. Returns the HTTP status, or -1 (printed). */
static int call(struct call *x, const char *method, const struct strbuf *path,
                const struct strbuf *body, struct strbuf *out)
{
    int status;
    char err[256];
    if (admin_client_call(&x->ac, x->addr, x->c->timeout_ms, method, strbuf_str(path),
                          body ? body->p : NULL, body ? body->len : 0, &status, out, err,
                          sizeof err) != 0) {
        cli_error(x->c, "%s", err);
        return -1;
    }
    return status;
}

/* Prints a registry error answer ("40401 Subject 'x' not found.") and returns CLI_EXIT_FAIL. */
static int registry_error(const struct cli_common *c, int status, const struct strbuf *body)
{
    struct json_doc d = {0};
    char err[64];
    if (json_parse(&d, body->p ? body->p : "", body->len, NULL, err, sizeof err) == 0 &&
        json_get(d.root, "message", JSON_STRING))
        cli_error(c, "%lld %s", (long long)json_get_int(d.root, "error_code", status),
                  json_get_str(d.root, "message", ""));
    else
        cli_error(c, "HTTP %d: %.200s", status, strbuf_str(body));
    json_doc_free(&d);
    return CLI_EXIT_FAIL;
}

static void path_seg(struct strbuf *p, const char *s)
{
    strbuf_putc(p, '/');
    admin_client_encode(p, s, strlen(s));
}

/* The schema text (from --file or stdin) and type and references into a JSON body. */
static int schema_body(const struct cli_common *c, const struct opts *o, struct strbuf *body)
{
    FILE *f = o->file ? fopen(o->file, "rb") : stdin;
    if (!f) {
        cli_error(c, "--file: cannot open %s: %s", o->file, strerror(errno));
        return -1;
    }
    struct strbuf text;
    strbuf_init(&text);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0 && text.len <= SCHEMA_FILE_MAX)
        strbuf_append(&text, buf, n);
    if (f != stdin)
        fclose(f);
    if (text.len > SCHEMA_FILE_MAX || text.len == 0) {
        cli_error(c, "the schema is %s", text.len ? "larger than 1 MiB" : "empty");
        strbuf_destroy(&text);
        return -1;
    }
    struct json j;
    json_init(&j, body);
    json_obj_begin(&j);
    json_key(&j, "schema");
    json_str(&j, text.p, text.len);
    if (o->type) {
        json_key(&j, "schemaType");
        json_cstr(&j, o->type);
    }
    if (o->n_refs) {
        json_key(&j, "references");
        json_arr_begin(&j);
        for (size_t i = 0; i < o->n_refs; i++) {
            /* NAME=SUBJECT:VERSION (the name may hold '=' only before the last one) */
            const char *eq = strrchr(o->refs[i], '='), *colon = eq ? strrchr(eq, ':') : NULL;
            long long v = 0;
            if (!eq || eq == o->refs[i] || !colon || colon == eq + 1 ||
                cli_parse_int(c, "--reference", colon + 1, 1, INT32_MAX, &v) != 0) {
                cli_error(c, "--reference: '%s' is not NAME=SUBJECT:VERSION", o->refs[i]);
                strbuf_destroy(&text);
                return -1;
            }
            json_obj_begin(&j);
            json_key(&j, "name");
            json_str(&j, o->refs[i], (size_t)(eq - o->refs[i]));
            json_key(&j, "subject");
            json_str(&j, eq + 1, (size_t)(colon - eq - 1));
            json_key(&j, "version");
            json_i64(&j, v);
            json_obj_end(&j);
        }
        json_arr_end(&j);
    }
    json_obj_end(&j);
    strbuf_destroy(&text);
    return 0;
}

/* Prints a JSON array's items one per line (strings bare). */
static void print_list(const struct strbuf *body)
{
    struct json_doc d = {0};
    char err[64];
    bool ok = json_parse(&d, body->p, body->len, NULL, err, sizeof err) == 0 &&
              d.root->type == JSON_ARRAY;
    for (const struct json_value *v = ok ? d.root->child : NULL; v; v = v->next) {
        if (v->type == JSON_STRING)
            printf("%s\n", v->str);
        else if (v->is_int)
            printf("%lld\n", (long long)v->int_value);
    }
    json_doc_free(&d);
}

static int run(struct call *x, const struct opts *o)
{
    const struct cli_common *c = x->c;
    struct strbuf path, body, out;
    strbuf_init(&path);
    strbuf_init(&body);
    strbuf_init(&out);
    int rc = CLI_EXIT_FAIL, st = -1;
    const char *sub = o->sub;
    const char *version = o->version ? o->version : "latest";
    if (!strcmp(sub, "register") || !strcmp(sub, "check")) {
        if (schema_body(c, o, &body) != 0)
            goto out;
        bool reg = !strcmp(sub, "register");
        if (!reg)
            strbuf_puts(&path, "/compatibility");
        strbuf_puts(&path, "/subjects");
        path_seg(&path, o->subject);
        strbuf_puts(&path, "/versions");
        if (!reg && o->version)
            path_seg(&path, o->version);
        strbuf_puts(&path, reg ? (o->normalize ? "?normalize=true" : "")
                               : (o->normalize ? "?verbose=true&normalize=true" : "?verbose=true"));
        st = call(x, "POST", &path, &body, &out);
    } else if (!strcmp(sub, "get")) {
        if (o->id) {
            strbuf_puts(&path, "/schemas/ids");
            path_seg(&path, o->id);
        } else {
            strbuf_puts(&path, "/subjects");
            path_seg(&path, o->subject);
            strbuf_puts(&path, "/versions");
            path_seg(&path, version);
        }
        if (o->deleted)
            strbuf_puts(&path, "?deleted=true");
        st = call(x, "GET", &path, NULL, &out);
    } else if (!strcmp(sub, "list")) {
        strbuf_puts(&path, "/subjects");
        if (o->subject) {
            path_seg(&path, o->subject);
            strbuf_puts(&path, "/versions");
        }
        if (o->deleted)
            strbuf_puts(&path, "?deleted=true");
        st = call(x, "GET", &path, NULL, &out);
    } else if (!strcmp(sub, "delete")) {
        strbuf_puts(&path, "/subjects");
        path_seg(&path, o->subject);
        if (o->version) {
            strbuf_puts(&path, "/versions");
            path_seg(&path, o->version);
        }
        if (o->permanent)
            strbuf_puts(&path, "?permanent=true");
        st = call(x, "DELETE", &path, NULL, &out);
    } else { /* config */
        strbuf_puts(&path, "/config");
        if (o->subject)
            path_seg(&path, o->subject);
        if (o->level) {
            struct json j;
            json_init(&j, &body);
            json_obj_begin(&j);
            json_key(&j, "compatibility");
            json_cstr(&j, o->level);
            json_obj_end(&j);
            st = call(x, "PUT", &path, &body, &out);
        } else {
            if (!o->delete_level && o->subject)
                strbuf_puts(&path, "?defaultToGlobal=true");
            st = call(x, o->delete_level ? "DELETE" : "GET", &path, NULL, &out);
        }
    }
    if (st < 0)
        goto out;
    if (st / 100 != 2) {
        rc = registry_error(c, st, &out);
        goto out;
    }
    rc = CLI_EXIT_OK;
    struct json_doc d = {0};
    char err[64];
    bool parsed = json_parse(&d, out.p ? out.p : "", out.len, NULL, err, sizeof err) == 0;
    const struct json_value *root = parsed ? d.root : NULL;
    if (!strcmp(sub, "register")) {
        printf("%lld\n", (long long)json_get_int(root, "id", -1));
    } else if (!strcmp(sub, "check")) {
        const struct json_value *ok = json_get(root, "is_compatible", JSON_BOOL);
        bool compatible = ok && ok->boolean;
        printf("%s\n", compatible ? "compatible" : "incompatible");
        const struct json_value *m = json_get(root, "messages", JSON_ARRAY);
        for (const struct json_value *v = m ? m->child : NULL; v; v = v->next)
            if (v->type == JSON_STRING)
                printf("  %s\n", v->str);
        rc = compatible ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    } else if (!strcmp(sub, "get")) {
        if (o->json)
            printf("%s\n", strbuf_str(&out));
        else
            printf("%s\n", json_get_str(root, "schema", ""));
    } else if (!strcmp(sub, "list") || (!strcmp(sub, "delete") && root && root->type == JSON_ARRAY)) {
        print_list(&out);
    } else if (!strcmp(sub, "delete")) {
        printf("%s\n", strbuf_str(&out));
    } else {
        const char *level = json_get_str(root, "compatibilityLevel", NULL);
        printf("%s\n", level ? level : json_get_str(root, "compatibility", ""));
    }
    json_doc_free(&d);
out:
    strbuf_destroy(&path);
    strbuf_destroy(&body);
    strbuf_destroy(&out);
    return rc;
}

static int parse(struct cli_common *c, struct opts *o, int argc, char **argv)
{
    static const struct option longopts[] = {
        {"timeout", required_argument, NULL, CLI_OPT_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {"registry", required_argument, NULL, OPT_REGISTRY},
        {"file", required_argument, NULL, OPT_FILE},
        {"type", required_argument, NULL, OPT_TYPE},
        {"reference", required_argument, NULL, OPT_REFERENCE},
        {"normalize", no_argument, NULL, OPT_NORMALIZE},
        {"version", required_argument, NULL, OPT_VERSION},
        {"id", required_argument, NULL, OPT_ID},
        {"deleted", no_argument, NULL, OPT_DELETED},
        {"permanent", no_argument, NULL, OPT_PERMANENT},
        {"level", required_argument, NULL, OPT_LEVEL},
        {"delete", no_argument, NULL, OPT_DELETE},
        {"json", no_argument, NULL, OPT_JSON},
        {NULL, 0, NULL, 0},
    };
    int opt;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        int h = cli_common_opt(c, opt, optarg);
        if (h < 0)
            return -1;
        if (h == 1)
            continue;
        switch (opt) {
        case OPT_REGISTRY: o->registry = optarg; break;
        case OPT_FILE: o->file = optarg; break;
        case OPT_TYPE: o->type = optarg; break;
        case OPT_REFERENCE:
            if (o->n_refs == REFS_MAX) {
                cli_error(c, "--reference: at most %d", REFS_MAX);
                return -1;
            }
            o->refs[o->n_refs++] = optarg;
            break;
        case OPT_NORMALIZE: o->normalize = true; break;
        case OPT_VERSION: o->version = optarg; break;
        case OPT_ID: o->id = optarg; break;
        case OPT_DELETED: o->deleted = true; break;
        case OPT_PERMANENT: o->permanent = true; break;
        case OPT_LEVEL: o->level = optarg; break;
        case OPT_DELETE: o->delete_level = true; break;
        case OPT_JSON: o->json = true; break;
        default:
            cli_error(c, "unknown option or missing value: '%s'", argv[optind - 1]);
            return -1;
        }
    }
    if (c->help)
        return 0;
    if (optind < argc)
        o->subject = argv[optind++];
    if (optind < argc) {
        cli_error(c, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    bool needs_subject = strcmp(o->sub, "list") && strcmp(o->sub, "config") &&
                         !(!strcmp(o->sub, "get") && o->id);
    if (needs_subject && !o->subject) {
        cli_error(c, "missing SUBJECT");
        return -1;
    }
    if (o->id && (o->subject || o->version)) {
        cli_error(c, "--id names a schema by itself: no SUBJECT or --version with it");
        return -1;
    }
    if (o->level && o->delete_level) {
        cli_error(c, "--level and --delete exclude each other");
        return -1;
    }
    if (o->delete_level && !o->subject) {
        cli_error(c, "--delete removes a subject's own level: name the SUBJECT");
        return -1;
    }
    return 0;
}

int cli_schema(int argc, char **argv)
{
    static const char *const subs[] = {"register", "get", "list", "check", "delete", "config"};
    struct cli_common c;
    cli_common_init(&c, "schema");
    struct opts o = {0};
    struct call x = {.c = &c};
    int rc = CLI_EXIT_USAGE;
    char cmd[32];
    o.sub = cli_sub_command(&c, schema_help, subs, sizeof subs / sizeof subs[0], argc, argv, cmd,
                            sizeof(cmd), &rc);
    if (!o.sub)
        goto out;
    if (parse(&c, &o, argc - 1, argv + 1) != 0) {
        fprintf(stderr, "Run 'streampulse schema --help' for usage.\n");
        goto out;
    }
    if (c.help) {
        fputs(schema_help, stdout);
        rc = CLI_EXIT_OK;
        goto out;
    }
    x.addr = o.registry ? o.registry : getenv("STREAMPULSE_REGISTRY");
    if (!x.addr || !*x.addr)
        x.addr = REGISTRY_DEFAULT_ADDR;
    struct admin_client_opts ao = {0};
    rc = admin_client_init(&x.ac, c.cmd, &ao);
    if (rc == CLI_EXIT_OK)
        rc = run(&x, &o);
    admin_client_free(&x.ac);
out:
    cli_common_free(&c);
    return rc;
}
