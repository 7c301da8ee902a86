/* The simulator's command line.
 *
 *   sim --profile crash --seed 12345 [--verbose]    one seed, in this process (replay)
 *   sim --profile all --seeds 100 [--first 1] [--jobs 2]
 *   --duration MS: simulated time per seed (default 60 s)
 *
 * Many seeds run in forked children (a crashed core takes down one child, which is reported
 * with its seed). Ends with a summary per profile and "N passed, N failed". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/check.h"
#include "base/mem.h"
#include "sim.h"

#define DEFAULT_DURATION_MS 60000

struct result {
    int done;
    int failed;
    struct sim_stats st;
    char why[480];
};

struct job {
    pid_t pid;
    int fd;
    enum sim_profile profile;
    uint64_t seed;
};

static const char *argv0 = "sim";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: %s [--profile net|crash|membership|grow|all] [--seed S | --seeds N [--first F]]\n"
            "          [--duration MS] [--jobs J] [--verbose]\n",
            argv0);
    exit(2);
}

static void replay_hint(enum sim_profile p, uint64_t seed, int64_t duration)
{
    char d[48] = "";
    if (duration != DEFAULT_DURATION_MS)
        snprintf(d, sizeof(d), " --duration %lld", (long long)duration);
    printf("  replay: %s --profile %s --seed %" PRIu64 "%s --verbose\n", argv0, profile_name(p),
           seed, d);
}

static int run_one(enum sim_profile p, uint64_t seed, int64_t duration, bool verbose)
{
    struct sim_config cfg = {
        .profile = p, .seed = seed, .duration_ms = duration, .verbose = verbose};
    printf("sim: profile=%s seed=%" PRIu64 " duration=%lldms\n", profile_name(p), seed,
           (long long)duration);
    fflush(stdout);
    struct sim_stats st;
    char why[480];
    int rc = sim_run(&cfg, &st, why, sizeof(why));
    printf("%s profile=%s seed=%" PRIu64 " leader_changes=%d proposals=%d acked=%d crashes=%d "
           "torn=%d installs=%d conf_changes=%d (learners %d) commit=%lld heals=%d "
           "slowest_heal=%lldms events=%lld%s%s\n",
           rc ? "FAIL" : "ok", profile_name(p), seed, st.leader_changes, st.proposals, st.acked,
           st.crashes, st.torn, st.installs, st.conf_changes, st.learner_changes,
           (long long)st.max_commit, st.heals,
           (long long)st.heal_leader_max_ms, (long long)st.events, rc ? ": " : "", rc ? why : "");
    if (rc)
        replay_hint(p, seed, duration);
    printf("%d passed, %d failed\n", rc ? 0 : 1, rc ? 1 : 0);
    return rc ? 1 : 0;
}

static void child(int fd, enum sim_profile p, uint64_t seed, int64_t duration)
{
    struct sim_config cfg = {.profile = p, .seed = seed, .duration_ms = duration};
    struct result r = {.done = 1};
    r.failed = sim_run(&cfg, &r.st, r.why, sizeof(r.why)) != 0;
    ssize_t w = write(fd, &r, sizeof(r));
    _exit(w == (ssize_t)sizeof(r) ? 0 : 3);
}

struct totals {
    int seeds;
    int failed;
    int lc_min;
    long lc_sum;
    long acked;
    long crashes;
    long torn;
    long installs;
    long conf_changes;
    long learner_changes;
    int64_t heal_leader_max_ms;
    long heals;
    long heals_slow;
    double secs;
};

static void reap(struct job *j, int status, struct result *out)
{
    struct result r;
    memset(&r, 0, sizeof(r));
    ssize_t got = read(j->fd, &r, sizeof(r));
    close(j->fd);
    if (got != (ssize_t)sizeof(r) || !r.done) {
        r.failed = 1;
        if (WIFSIGNALED(status))
            snprintf(r.why, sizeof(r.why), "crashed (signal %d)", WTERMSIG(status));
        else
            snprintf(r.why, sizeof(r.why), "exited with %d without a result",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    *out = r;
}

static void run_many(enum sim_profile p, uint64_t first, int count, int64_t duration, int jobs,
                     struct totals *t)
{
    double t0 = now_s();
    struct job *run = mem_calloc((size_t)jobs, sizeof(*run));
    struct result *res = mem_calloc((size_t)count, sizeof(*res));
    int next = 0, active = 0;
    while (next < count || active > 0) {
        while (active < jobs && next < count) {
            int fds[2];
            if (pipe(fds) != 0) {
                perror("pipe");
                exit(2);
            }
            uint64_t seed = first + (uint64_t)next;
            fflush(stdout);
            pid_t pid = fork();
            if (pid < 0) {
                perror("fork");
                exit(2);
            }
            if (pid == 0) {
                close(fds[0]);
                child(fds[1], p, seed, duration);
            }
            close(fds[1]);
            for (int k = 0; k < jobs; k++) {
                if (run[k].pid == 0) {
                    run[k] = (struct job){.pid = pid, .fd = fds[0], .profile = p, .seed = seed};
                    break;
                }
            }
            next++;
            active++;
        }
        int status;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR)
                continue;
            perror("wait");
            exit(2);
        }
        for (int k = 0; k < jobs; k++) {
            if (run[k].pid != pid)
                continue;
            reap(&run[k], status, &res[run[k].seed - first]);
            run[k].pid = 0;
            active--;
        }
    }
    t->seeds = count;
    t->lc_min = 1 << 30;
    for (int i = 0; i < count; i++) {
        struct result *r = &res[i];
        if (r->failed) {
            t->failed++;
            printf("FAIL profile=%s seed=%" PRIu64 ": %s\n", profile_name(p), first + (uint64_t)i,
                   r->why);
            replay_hint(p, first + (uint64_t)i, duration);
        }
        t->lc_min = r->st.leader_changes < t->lc_min ? r->st.leader_changes : t->lc_min;
        t->lc_sum += r->st.leader_changes;
        t->acked += r->st.acked;
        t->crashes += r->st.crashes;
        t->torn += r->st.torn;
        t->installs += r->st.installs;
        t->conf_changes += r->st.conf_changes;
        t->learner_changes += r->st.learner_changes;
        t->heal_leader_max_ms = MAX(t->heal_leader_max_ms, r->st.heal_leader_max_ms);
        t->heals += r->st.heals;
        t->heals_slow += r->st.heals_slow;
    }
    t->secs = now_s() - t0;
    printf("sim: profile=%s seeds=%d violations=%d leader_changes min=%d avg=%.1f acked=%ld "
           "crashes=%ld torn=%ld installs=%ld conf_changes=%ld (learners %ld) heals=%ld (over "
           "400ms: %ld, slowest %lldms) time=%.1fs\n",
           profile_name(p), count, t->failed, count ? t->lc_min : 0,
           count ? (double)t->lc_sum / count : 0.0, t->acked, t->crashes, t->torn, t->installs,
           t->conf_changes, t->learner_changes, t->heals, t->heals_slow, (long long)t->heal_leader_max_ms, t->secs);
    fflush(stdout);
    mem_free(run);
    mem_free(res);
}

int main(int argc, char **argv)
{
    argv0 = argv[0];
    int profile = -1; /* -1: all */
    uint64_t seed = 0, first = 1;
    bool one = false, verbose = false;
    int seeds = 10, jobs = 1;
    int64_t duration = DEFAULT_DURATION_MS;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--profile") && v) {
            profile = !strcmp(v, "net")          ? PROFILE_NET
                      : !strcmp(v, "crash")      ? PROFILE_CRASH
                      : !strcmp(v, "membership") ? PROFILE_MEMBERSHIP
                      : !strcmp(v, "grow")       ? PROFILE_GROW
                      : !strcmp(v, "all")        ? -1
                                                 : -2;
            if (profile == -2)
                usage();
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            seed = strtoull(v, NULL, 10);
            one = true;
            i++;
        } else if (!strcmp(a, "--seeds") && v) {
            seeds = atoi(v);
            i++;
        } else if (!strcmp(a, "--first") && v) {
            first = strtoull(v, NULL, 10);
            i++;
        } else if (!strcmp(a, "--duration") && v) {
            duration = atoll(v);
            i++;
        } else if (!strcmp(a, "--jobs") && v) {
            jobs = atoi(v);
            i++;
        } else if (!strcmp(a, "--verbose")) {
            verbose = true;
        } else {
            usage();
        }
    }
    if (seeds < 0 || jobs < 1 || duration < 1000)
        usage();
    if (one) {
        if (profile < 0) {
            int rc = 0;
            for (int p = 0; p < PROFILE_COUNT; p++)
                rc |= run_one((enum sim_profile)p, seed, duration, verbose);
            return rc;
        }
        return run_one((enum sim_profile)profile, seed, duration, verbose);
    }
    struct totals all = {0};
    int lc_min = 1 << 30;
    for (int p = 0; p < PROFILE_COUNT; p++) {
        if (profile >= 0 && p != profile)
            continue;
        struct totals t = {0};
        run_many((enum sim_profile)p, first, seeds, duration, jobs, &t);
        all.seeds += t.seeds;
        all.failed += t.failed;
        all.lc_sum += t.lc_sum;
        all.acked += t.acked;
        all.secs += t.secs;
        lc_min = t.lc_min < lc_min ? t.lc_min : lc_min;
    }
    printf("sim: total seeds=%d violations=%d leader_changes min=%d avg=%.1f acked=%ld "
           "time=%.1fs\n",
           all.seeds, all.failed, all.seeds ? lc_min : 0,
           all.seeds ? (double)all.lc_sum / all.seeds : 0.0, all.acked, all.secs);
    printf("%d passed, %d failed\n", all.seeds - all.failed, all.failed);
    return all.failed ? 1 : 0;
}
