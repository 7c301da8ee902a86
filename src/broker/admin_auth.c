/* Authentication of the admin listener's HTTPS requests (broker/admin_auth.h).
 *
 * State: the process's counters and the rate limit of the failure log line (statics: the
 * admin listener serves one broker, on the reactor thread). super.users is parsed at each call
 * (a few microseconds, next to the milliseconds of PBKDF2), so there is nothing to start or
 * stop; the config was checked at startup (server/config.c), a parse failure here denies. */
#include "broker/admin_auth.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "broker/sasl.h"
#include "broker/sasl_mech.h"
#include "security/acl.h"
#include "security/scram.h"

#define LOG_EVERY_MS 1000

static struct broker_admin_auth_counts counts;
static int64_t last_log_ms = -LOG_EVERY_MS;
static uint64_t unlogged;

static bool is_super_user(const struct broker *b, const char *user, size_t user_len)
{
    char principal[5 + SCRAM_USER_MAX + 1];
    snprintf(principal, sizeof(principal), "User:%.*s", (int)user_len, user);
    struct acl_super_users *su;
    char why[160];
    if (acl_super_users_parse(b->cfg->super_users, &su, why, sizeof(why)) != 0)
        return false;
    bool yes = acl_super_users_contains(su, principal);
    acl_super_users_free(su);
    return yes;
}

static void log_failure(const char *peer, const char *user, size_t user_len, const char *why,
                        int64_t delay_ms)
{
    int64_t now = time_mono_ms();
    if (now - last_log_ms < LOG_EVERY_MS) {
        unlogged++;
        return;
    }
    char qu[2 * SCRAM_USER_MAX + 8];
    log_warn("admin_authentication_failed",
             "peer=%s user=%s reason=\"%s\" delay_ms=%" PRId64 " failures=%" PRIu64
             " unlogged=%" PRIu64,
             peer,
             log_quote(qu, sizeof(qu), user, user_len > SCRAM_USER_MAX ? SCRAM_USER_MAX : user_len),
             why, delay_ms, counts.failed + counts.forbidden, unlogged);
    last_log_ms = now;
    unlogged = 0;
}

static int authenticate(struct broker *b, const char *peer, const char *user, size_t user_len,
                        const char *password, size_t password_len, bool super_only,
                        int64_t *delay_ms)
{
    *delay_ms = 0;
    const char *why = "";
    const struct ctl_image *img = b->cluster ? cluster_image(b->cluster) : NULL;
    int rc = sasl_mech_check_password(img, user, user_len, password, password_len, &why);
    if (rc == 0 && (!super_only || is_super_user(b, user, user_len))) {
        counts.ok++;
        return 0;
    }
    if (rc == 0) {
        counts.forbidden++;
        log_failure(peer, user, user_len, "not in super.users", 0);
        return -EPERM;
    }
    counts.failed++;
    *delay_ms = sasl_failure_delay(b, peer);
    log_failure(peer, user, user_len, why, *delay_ms);
    return -EACCES;
}

int broker_admin_authenticate(struct broker *b, const char *peer, const char *user, size_t user_len,
                              const char *password, size_t password_len, int64_t *delay_ms)
{
    return authenticate(b, peer, user, user_len, password, password_len, true, delay_ms);
}

int broker_registry_authenticate(struct broker *b, const char *peer, const char *user,
                                 size_t user_len, const char *password, size_t password_len,
                                 int64_t *delay_ms)
{
    return authenticate(b, peer, user, user_len, password, password_len, false, delay_ms);
}

void broker_admin_auth_counts(struct broker_admin_auth_counts *out)
{
    *out = counts;
}
