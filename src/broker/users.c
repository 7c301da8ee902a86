/* DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), KIP-554: the SCRAM users
 * of the metadata image (USER_SCRAM records), which every node holds, so any broker answers.
 *
 * Describe answers from the image: each asked user (every user for a null list) with the
 * mechanism and iteration count of each credential it has, RESOURCE_NOT_FOUND for one with
 * none, DUPLICATE_RESOURCE for a name asked twice. Alter turns each deletion and upsertion into
 * one USER_SCRAM controller command (ctl_cmd_user; an upsertion's salted password becomes
 * StoredKey and ServerKey here, security/scram.h, and goes no further) and answers, one result
 * per user in the order they first appear, once every command is answered; a user's result is
 * its first error. A user named twice for one mechanism in one request is DUPLICATE_RESOURCE.
 *
 * State: one struct users_op per AlterUserScramCredentials in flight, freed when answered. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/errors.h"
#include "base/mem.h"
#include "broker/cluster.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "controller/image.h"
#include "controller/request.h"
#include "kafka/errors.h"
#include "security/scram.h"

static bool kstr_same(struct kstr a, struct kstr b)
{
    return a.len == b.len && (a.len <= 0 || memcmp(a.p, b.p, (size_t)a.len) == 0);
}

/* ---- DescribeUserScramCredentials ---- */

static void describe_one(struct arena *a, const struct ctl_image *img, struct kstr name,
                         struct describe_scram_result *out)
{
    out->user = name;
    out->error_message = KSTR_NULL;
    out->credentials = arena_calloc(a, 2, sizeof(*out->credentials));
    for (size_t i = 0; i < img->n_users; i++) {
        const struct ctl_rec_user *u = &img->users[i];
        if (kstr_eq(name, u->name) && out->n_credentials < 2)
            out->credentials[out->n_credentials++] =
                (struct describe_scram_credential){u->mechanism, u->iterations};
    }
    if (out->n_credentials == 0) {
        out->error_code = KERR_RESOURCE_NOT_FOUND;
        out->error_message = kstr_c("Attempt to describe a user credential that does not exist");
    }
}

int handle_describe_user_scram_credentials(struct request *req)
{
    struct describe_scram_req dr;
    if (kmsg_decode_describe_scram(&req->body, req->hdr.api_version, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct arena *a = req->arena;
    const struct ctl_image *img = cluster_image(req->b->cluster);
    struct describe_scram_resp resp = {.error_message = KSTR_NULL};
    if (!authz_allows_cluster(req, ACL_OP_DESCRIBE)) {
        resp.error_code = KERR_CLUSTER_AUTHORIZATION_FAILED;
        resp.error_message = kstr_c("DescribeUserScramCredentials needs Describe on the cluster");
    } else if (dr.n_users < 0) { /* every user: the image is sorted by (name, mechanism) */
        resp.results = arena_calloc(a, img->n_users ? img->n_users : 1, sizeof(*resp.results));
        for (size_t i = 0; i < img->n_users; i++) {
            if (i > 0 && !strcmp(img->users[i].name, img->users[i - 1].name))
                continue;
            describe_one(a, img, kstr_c(img->users[i].name), &resp.results[resp.n_results++]);
        }
    } else {
        resp.results = arena_calloc(a, dr.n_users ? (size_t)dr.n_users : 1, sizeof(*resp.results));
        for (int32_t i = 0; i < dr.n_users; i++) {
            struct describe_scram_result *r = &resp.results[resp.n_results++];
            bool dup = false;
            for (int32_t j = 0; j < dr.n_users; j++)
                dup |= j != i && kstr_same(dr.users[j], dr.users[i]);
            if (dup) {
                *r = (struct describe_scram_result){
                    .user = dr.users[i], .error_code = KERR_DUPLICATE_RESOURCE,
                    .error_message = kstr_c("Cannot describe the same user twice")};
                continue;
            }
            describe_one(a, img, dr.users[i], r);
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_describe_scram(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

/* ---- AlterUserScramCredentials ---- */

struct users_op {
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena;
    int pending;
    struct alter_scram_resp resp;
};

struct users_item {
    struct users_op *op;
    struct alter_scram_result *out;
};

static const char *alter_error_text(int16_t ec)
{
    switch (ec) {
    case KERR_UNSUPPORTED_SASL_MECHANISM:
        return "Unknown SCRAM mechanism (1 is SCRAM-SHA-256, 2 SCRAM-SHA-512)";
    case KERR_UNACCEPTABLE_CREDENTIAL:
        return "Bad user name (1-255 bytes, no control character), iterations (4096-16384), "
               "salt (1-64 bytes) or salted password (the mechanism's digest length)";
    case KERR_RESOURCE_NOT_FOUND:
        return "Attempt to delete a user credential that does not exist";
    case KERR_DUPLICATE_RESOURCE:
        return "A user credential cannot be altered twice in the same request";
    case KERR_NOT_CONTROLLER:
    case KERR_REQUEST_TIMED_OUT:
        return "No controller answered; retry";
    default:
        return kafka_error_name(ec);
    }
}

static void set_result(struct alter_scram_result *r, int16_t ec)
{
    if (r->error_code != KERR_NONE || ec == KERR_NONE)
        return; /* a user's result is its first error */
    r->error_code = ec;
    r->error_message = kstr_c(alter_error_text(ec));
}

static void op_release(struct users_op *op)
{
    if (--op->pending > 0)
        return;
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_alter_scram(&r.w, op->hdr.api_version, &op->resp);
    response_send(&r, op->slot);
    arena_destroy(&op->arena);
    mem_free(op);
}

static void item_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct users_item *it = data;
    (void)rt;
    set_result(it->out, a->error);
    struct users_op *op = it->op;
    mem_free(it);
    op_release(op);
}

/* The result entry of name (added in first-appearance order). */
static struct alter_scram_result *result_for(struct users_op *op, struct kstr name)
{
    for (int32_t i = 0; i < op->resp.n_results; i++)
        if (kstr_same(op->resp.results[i].user, name))
            return &op->resp.results[i];
    struct alter_scram_result *r = &op->resp.results[op->resp.n_results++];
    char *copy = arena_strndup(&op->arena, name.len > 0 ? name.p : "", name.len > 0 ? (size_t)name.len : 0);
    *r = (struct alter_scram_result){.user = {copy, name.len > 0 ? name.len : 0},
                                     .error_message = KSTR_NULL};
    return r;
}

int16_t users_command(struct ctl_request *cmd, struct kstr name, int8_t mech, int32_t iterations,
                      struct kbytes salt, const struct kbytes *salted)
{
    *cmd = (struct ctl_request){.type = CTL_REQ_USER_SCRAM};
    struct ctl_rec_user *u = &cmd->user;
    if (name.len <= 0 || name.len > CTL_USER_MAX || memchr(name.p, 0, (size_t)name.len))
        return KERR_UNACCEPTABLE_CREDENTIAL;
    memcpy(u->name, name.p, (size_t)name.len);
    u->mechanism = mech;
    if (ctl_scram_key_len(mech) == 0)
        return KERR_UNSUPPORTED_SASL_MECHANISM;
    if (!salted) {
        u->deleted = true;
        return KERR_NONE;
    }
    struct scram_credential cred;
    int rc = salt.len > 0 && salt.len <= CTL_SALT_MAX && salted->len > 0
                 ? scram_credential_from_salted(&cred, mech, salted->p, (size_t)salted->len, salt.p,
                                                (size_t)salt.len, iterations)
                 : -ERR_INVALID;
    if (rc != 0)
        return rc == -EIO ? KERR_UNKNOWN_SERVER_ERROR : KERR_UNACCEPTABLE_CREDENTIAL;
    u->iterations = cred.iterations;
    u->salt_len = (uint8_t)cred.salt_len;
    memcpy(u->salt, cred.salt, cred.salt_len);
    u->key_len = (uint8_t)scram_key_len(mech);
    memcpy(u->stored_key, cred.stored_key, u->key_len);
    memcpy(u->server_key, cred.server_key, u->key_len);
    return KERR_NONE;
}

/* One deletion (salted NULL) or upsertion: validated here, then a controller command. */
static void submit(struct broker *b, struct users_op *op, struct alter_scram_result *res,
                   struct kstr name, int8_t mech, int32_t iterations, struct kbytes salt,
                   const struct kbytes *salted)
{
    struct ctl_request cmd;
    int16_t ec = users_command(&cmd, name, mech, iterations, salt, salted);
    if (ec != KERR_NONE) {
        set_result(res, ec);
        return;
    }
    struct users_item *it = mem_calloc(1, sizeof(*it));
    it->op = op;
    it->out = res;
    op->pending++;
    cluster_submit(b->cluster, &cmd, item_done, it);
}

int handle_alter_user_scram_credentials(struct request *req)
{
    struct alter_scram_req ar;
    if (kmsg_decode_alter_scram(&req->body, req->hdr.api_version, req->arena, &ar) != 0)
        return -ERR_CORRUPT;
    struct users_op *op = mem_calloc(1, sizeof(*op));
    op->slot = conn_slot_reserve(req->conn);
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL; /* points into the frame */
    arena_init(&op->arena, 1024);
    op->pending = 1;
    size_t n = (size_t)ar.n_deletions + (size_t)ar.n_upsertions;
    op->resp.results = arena_calloc(&op->arena, n ? n : 1, sizeof(*op->resp.results));
    int32_t total = ar.n_deletions + ar.n_upsertions;
    bool allowed = authz_allows_cluster(req, ACL_OP_ALTER);
    for (int32_t i = 0; i < total; i++) {
        bool del = i < ar.n_deletions;
        const struct alter_scram_deletion *d = del ? &ar.deletions[i] : NULL;
        const struct alter_scram_upsertion *u = del ? NULL : &ar.upsertions[i - ar.n_deletions];
        struct kstr name = del ? d->name : u->name;
        int8_t mech = del ? d->mechanism : u->mechanism;
        struct alter_scram_result *res = result_for(op, name);
        bool dup = false; /* the same user and mechanism elsewhere in the request */
        for (int32_t j = 0; j < total && !dup; j++) {
            if (j == i)
                continue;
            bool jd = j < ar.n_deletions;
            struct kstr jn = jd ? ar.deletions[j].name : ar.upsertions[j - ar.n_deletions].name;
            int8_t jm = jd ? ar.deletions[j].mechanism : ar.upsertions[j - ar.n_deletions].mechanism;
            dup = jm == mech && kstr_same(jn, name);
        }
        if (dup) {
            set_result(res, KERR_DUPLICATE_RESOURCE);
            continue;
        }
        if (!allowed) {
            set_result(res, KERR_CLUSTER_AUTHORIZATION_FAILED);
            continue;
        }
        if (del)
            submit(req->b, op, res, name, mech, 0, (struct kbytes){NULL, 0}, NULL);
        else
            submit(req->b, op, res, name, mech, u->iterations, u->salt, &u->salted_password);
    }
    op_release(op);
    return 0;
}
