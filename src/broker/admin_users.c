/* The admin listener's /v1/users (broker/admin_users.h): the image's SCRAM users as JSON, and
 * credential changes submitted to the controller.
 *
 * State: one struct user_change per change in flight (allocated at submission, freed by the
 * controller's answer, which always comes exactly once, NOT_CONTROLLER at close included:
 * controller/runtime.h), holding what the answer's log line names. Nothing else: every request
 * reads the committed image afresh. */
#include "broker/admin_users.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/json.h"
#include "base/json_parse.h"
#include "base/log.h"
#include "base/mem.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "controller/image.h"
#include "controller/request.h"
#include "kafka/errors.h"
#include "base/base64.h"
#include "security/scram.h"

struct user_change {
    char name[CTL_USER_MAX + 1];
    int8_t mechanism;
    bool deleted;
};

static const char *quoted(char *buf, size_t cap, const char *s, size_t len)
{
    return log_quote(buf, cap, s, len > SCRAM_USER_MAX ? SCRAM_USER_MAX : len);
}

static void change_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct user_change *ch = data;
    (void)rt;
    char q[2 * SCRAM_USER_MAX + 8];
    quoted(q, sizeof(q), ch->name, strlen(ch->name));
    const char *op = ch->deleted ? "delete" : "set";
    if (a->error == KERR_NONE)
        log_info("user_changed", "op=%s name=%s mechanism=%s", op, q,
                 scram_mech_name(ch->mechanism));
    else
        log_warn("user_change_failed", "op=%s name=%s mechanism=%s error=%s", op, q,
                 scram_mech_name(ch->mechanism), kafka_error_name(a->error));
    mem_free(ch);
}

static void submit(struct broker *b, const char *peer, const struct ctl_request *cmd,
                   const char *form)
{
    struct user_change *ch = mem_calloc(1, sizeof(*ch));
    memcpy(ch->name, cmd->user.name, sizeof(ch->name));
    ch->mechanism = cmd->user.mechanism;
    ch->deleted = cmd->user.deleted;
    char q[2 * SCRAM_USER_MAX + 8];
    quoted(q, sizeof(q), ch->name, strlen(ch->name));
    if (ch->deleted)
        log_info("user_change_submitted", "op=delete name=%s mechanism=%s peer=%s via=admin", q,
                 scram_mech_name(ch->mechanism), peer);
    else
        log_info("user_change_submitted",
                 "op=set name=%s mechanism=%s iterations=%" PRId32 " form=%s peer=%s via=admin", q,
                 scram_mech_name(ch->mechanism), cmd->user.iterations, form, peer);
    cluster_submit(b->cluster, cmd, change_done, ch);
}

static void salt_json(struct json *j, const uint8_t *salt, size_t len)
{
    char s[B64_ENCODED_LEN(CTL_SALT_MAX) + 1];
    b64_encode(salt, len, s, sizeof(s));
    json_key(j, "salt");
    json_cstr(j, s);
}

int broker_users_json(struct broker *b, struct strbuf *out)
{
    if (!b->cluster)
        return -ERR_CLOSED;
    const struct ctl_image *img = cluster_image(b->cluster);
    struct json j;
    json_init(&j, out);
    json_obj_begin(&j);
    json_key(&j, "users");
    json_arr_begin(&j);
    for (size_t i = 0; i < img->n_users; i++) { /* sorted by (name, mechanism) */
        const struct ctl_rec_user *u = &img->users[i];
        bool first = i == 0 || strcmp(u->name, img->users[i - 1].name) != 0;
        if (first) {
            if (i > 0) {
                json_arr_end(&j);
                json_obj_end(&j);
            }
            json_obj_begin(&j);
            json_key(&j, "name");
            json_cstr(&j, u->name);
            json_key(&j, "credentials");
            json_arr_begin(&j);
        }
        json_obj_begin(&j);
        json_key(&j, "mechanism");
        json_cstr(&j, scram_mech_name(u->mechanism) ? scram_mech_name(u->mechanism) : "?");
        json_key(&j, "iterations");
        json_i64(&j, u->iterations);
        salt_json(&j, u->salt, u->salt_len);
        json_obj_end(&j);
    }
    if (img->n_users > 0) {
        json_arr_end(&j);
        json_obj_end(&j);
    }
    json_arr_end(&j);
    json_obj_end(&j);
    return 0;
}

/* ---- POST ---- */

static int invalid(char *err, size_t errcap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int invalid(char *err, size_t errcap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errcap, fmt, ap);
    va_end(ap);
    return -ERR_INVALID;
}

/* The string member key of body, or NULL; a member of another type is an error (*bad). */
static const struct json_value *str_member(const struct json_value *body, const char *key,
                                           bool *bad, char *err, size_t errcap)
{
    const struct json_value *v = json_member(body, key);
    if (v && v->type != JSON_STRING) {
        *bad = true;
        invalid(err, errcap, "\"%s\" must be a string", key);
        return NULL;
    }
    return v;
}

static const char *const known_members[] = {"name",     "mechanism", "iterations",
                                            "password", "salt",      "salted_password"};

/* A member that is none of the known ones, or NULL. */
static const struct json_value *unknown_member(const struct json_value *body)
{
    for (const struct json_value *m = body->child; m; m = m->next) {
        bool known = false;
        for (size_t i = 0; i < sizeof(known_members) / sizeof(known_members[0]) && !known; i++)
            known = strlen(known_members[i]) == m->key_len &&
                    memcmp(known_members[i], m->key, m->key_len) == 0;
        if (!known)
            return m;
    }
    return NULL;
}

/* A base64 member into out (cap bytes): its length, or -1 with the reason in err. */
static int decode_b64(const struct json_value *v, const char *key, uint8_t *out, size_t cap,
                      char *err, size_t errcap)
{
    size_t n;
    if (b64_decode(v->str, v->str_len, out, cap, &n) != 0 || n == 0) {
        snprintf(err, errcap, "\"%s\" must be the base64 (RFC 4648, padded) of 1 to %zu bytes", key,
                 cap);
        return -1;
    }
    return (int)n;
}

/* The credential's salt and salted password from body (either form) into salt / salted. */
static int credential_of(const struct json_value *pw, const struct json_value *salt64,
                         const struct json_value *salted64, int mech, int32_t iterations,
                         uint8_t *salt, size_t *salt_len, uint8_t *salted, char *err, size_t errcap)
{
    size_t klen = scram_key_len(mech);
    if (pw && (salt64 || salted64))
        return invalid(err, errcap, "%s",
                       "give \"password\", or \"salt\" with "
                       "\"salted_password\", not both");
    if (pw) {
        if (pw->str_len < 1 || pw->str_len > SCRAM_PASSWORD_MAX || memchr(pw->str, 0, pw->str_len))
            return invalid(err, errcap, "%s", "\"password\" must be 1 to 1024 bytes, without NUL");
        if (scram_salt_random(salt, SCRAM_SALT_DEFAULT_LEN) != 0)
            return -EIO;
        *salt_len = SCRAM_SALT_DEFAULT_LEN;
        int rc =
            scram_salted_password(mech, pw->str, pw->str_len, salt, *salt_len, iterations, salted);
        if (rc == -ERR_INVALID)
            return invalid(err, errcap, "%s", "the password cannot be salted");
        return rc;
    }
    if (!salt64 || !salted64)
        return invalid(err, errcap, "%s",
                       "give \"password\", or \"salt\" with \"salted_password\"");
    int n = decode_b64(salt64, "salt", salt, CTL_SALT_MAX, err, errcap);
    if (n < 0)
        return -ERR_INVALID;
    *salt_len = (size_t)n;
    uint8_t tmp[SCRAM_KEY_MAX + 3];
    n = decode_b64(salted64, "salted_password", tmp, sizeof(tmp), err, errcap);
    if (n >= 0 && (size_t)n != klen) {
        snprintf(err, errcap, "\"salted_password\" must be %zu bytes for %s (got %d)", klen,
                 scram_mech_name(mech), n);
        n = -1;
    }
    if (n >= 0)
        memcpy(salted, tmp, klen);
    OPENSSL_cleanse(tmp, sizeof(tmp));
    return n < 0 ? -ERR_INVALID : 0;
}

/* Checks body's members and builds the command. */
static int set_command(const struct json_value *body, struct ctl_request *cmd, const char **form,
                       char *err, size_t errcap)
{
    if (body->type != JSON_OBJECT)
        return invalid(err, errcap, "%s", "the body must be a JSON object");
    const struct json_value *unknown = unknown_member(body);
    if (unknown)
        return invalid(err, errcap,
                       "unknown member \"%s\" (name, mechanism, iterations, "
                       "password, salt, salted_password)",
                       unknown->key_len <= 64 && !memchr(unknown->key, 0, unknown->key_len)
                           ? unknown->key
                           : "...");
    bool bad = false;
    const struct json_value *name = str_member(body, "name", &bad, err, errcap);
    const struct json_value *mech_v = str_member(body, "mechanism", &bad, err, errcap);
    const struct json_value *pw = str_member(body, "password", &bad, err, errcap);
    const struct json_value *salt64 = str_member(body, "salt", &bad, err, errcap);
    const struct json_value *salted64 = str_member(body, "salted_password", &bad, err, errcap);
    if (bad)
        return -ERR_INVALID;
    if (!name)
        return invalid(err, errcap, "%s", "\"name\" is missing");
    if (!scram_user_valid(name->str, name->str_len))
        return invalid(err, errcap, "%s",
                       "\"name\" must be 1 to 255 bytes, without control "
                       "characters");
    int mech = SCRAM_SHA_256;
    if (mech_v && (mech = scram_mech_parse(mech_v->str, mech_v->str_len)) < 0)
        return invalid(err, errcap, "%s", "\"mechanism\" must be SCRAM-SHA-256 or SCRAM-SHA-512");
    int64_t iterations = SCRAM_ITER_MIN;
    const struct json_value *it = json_member(body, "iterations");
    if (it && (it->type != JSON_NUMBER || !it->is_int || it->int_value < SCRAM_ITER_MIN ||
               it->int_value > SCRAM_ITER_MAX))
        return invalid(err, errcap, "%s", "\"iterations\" must be an integer from 4096 to 16384");
    if (it)
        iterations = it->int_value;
    uint8_t salt[CTL_SALT_MAX], salted[SCRAM_KEY_MAX];
    size_t salt_len = 0;
    int rc = credential_of(pw, salt64, salted64, mech, (int32_t)iterations, salt, &salt_len, salted,
                           err, errcap);
    if (rc == 0) {
        struct kbytes sp = {salted, (int32_t)scram_key_len(mech)};
        int16_t ec =
            users_command(cmd, (struct kstr){name->str, (int32_t)name->str_len}, (int8_t)mech,
                          (int32_t)iterations, (struct kbytes){salt, (int32_t)salt_len}, &sp);
        if (ec == KERR_UNKNOWN_SERVER_ERROR)
            rc = -EIO;
        else if (ec != KERR_NONE)
            rc = invalid(err, errcap, "the credential is not acceptable: %s", kafka_error_name(ec));
    }
    OPENSSL_cleanse(salted, sizeof(salted));
    if (pw) /* the document's copies of secrets */
        OPENSSL_cleanse((char *)pw->str, pw->str_len);
    if (salted64)
        OPENSSL_cleanse((char *)salted64->str, salted64->str_len);
    *form = pw ? "password" : "salted";
    return rc;
}

int broker_user_set(struct broker *b, const char *peer, const char *body, size_t len,
                    struct strbuf *answer, char *err, size_t errcap)
{
    if (!b->cluster)
        return -ERR_CLOSED;
    struct json_doc doc;
    char why[96];
    struct json_limits lim = {.depth_max = 2, .values_max = ADMIN_USERS_BODY_VALUES_MAX};
    int rc = json_parse(&doc, body, len, &lim, why, sizeof(why));
    if (rc != 0) {
        snprintf(err, errcap, "the body is not a JSON object of a user's credential (%s)", why);
        json_doc_free(&doc);
        return -ERR_INVALID;
    }
    struct ctl_request cmd;
    const char *form = "";
    rc = set_command(doc.root, &cmd, &form, err, errcap);
    json_doc_free(&doc);
    if (rc != 0) {
        OPENSSL_cleanse(&cmd, sizeof(cmd));
        return rc == -EIO ? -EIO : -ERR_INVALID;
    }
    struct json j;
    json_init(&j, answer);
    json_obj_begin(&j);
    json_key(&j, "name");
    json_cstr(&j, cmd.user.name);
    json_key(&j, "mechanism");
    json_cstr(&j, scram_mech_name(cmd.user.mechanism));
    json_key(&j, "iterations");
    json_i64(&j, cmd.user.iterations);
    salt_json(&j, cmd.user.salt, cmd.user.salt_len);
    json_obj_end(&j);
    submit(b, peer, &cmd, form);
    OPENSSL_cleanse(&cmd, sizeof(cmd));
    return 0;
}

/* ---- DELETE ---- */

int broker_user_delete(struct broker *b, const char *peer, const char *name, size_t name_len,
                       const char *mechanism, size_t mechanism_len, struct strbuf *answer,
                       char *err, size_t errcap)
{
    if (!b->cluster)
        return -ERR_CLOSED;
    if (!scram_user_valid(name, name_len))
        return invalid(err, errcap, "%s",
                       "not a user name (1 to 255 bytes, without control "
                       "characters)");
    int mechs[2], n = 0;
    if (mechanism) {
        int m = scram_mech_parse(mechanism, mechanism_len);
        if (m < 0)
            return invalid(err, errcap, "%s", "mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512");
        mechs[n++] = m;
    } else {
        mechs[n++] = SCRAM_SHA_256;
        mechs[n++] = SCRAM_SHA_512;
    }
    char nm[CTL_USER_MAX + 1];
    memcpy(nm, name, name_len);
    nm[name_len] = '\0';
    const struct ctl_image *img = cluster_image(b->cluster);
    int found[2], n_found = 0;
    for (int i = 0; i < n; i++)
        if (ctl_image_user(img, nm, (int8_t)mechs[i]))
            found[n_found++] = mechs[i];
    if (n_found == 0) {
        snprintf(err, errcap, "user %.64s%s has no %s credential", nm, name_len > 64 ? "..." : "",
                 mechanism ? scram_mech_name(mechs[0]) : "SCRAM");
        return -ERR_NOT_FOUND;
    }
    struct json j;
    json_init(&j, answer);
    json_obj_begin(&j);
    json_key(&j, "name");
    json_str(&j, name, name_len);
    json_key(&j, "mechanisms");
    json_arr_begin(&j);
    for (int i = 0; i < n_found; i++)
        json_cstr(&j, scram_mech_name(found[i]));
    json_arr_end(&j);
    json_obj_end(&j);
    for (int i = 0; i < n_found; i++) {
        struct ctl_request cmd;
        int16_t ec = users_command(&cmd, (struct kstr){name, (int32_t)name_len}, (int8_t)found[i],
                                   0, (struct kbytes){NULL, 0}, NULL);
        CHECK(ec == KERR_NONE); /* name and mechanism were checked above */
        submit(b, peer, &cmd, "");
    }
    return 0;
}
