/* spawn_ceiling: how many `true` processes this machine starts and reaps per second, the
 * ceiling for `streampulse worker` with a no-op handler (one process per job).
 *
 *   build/bench/spawn_ceiling [--runs N] [--concurrency C]
 *
 * Starts /bin/true N times (default 1000) with posix_spawn(), as the worker does, keeping at
 * most C (default 1) alive, and reaps them with waitpid(). Prints
 *   spawn_ceiling concurrency=C runs=N secs=F runs_per_s=F
 * Exit 1 if a spawn fails.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long runs = 1000, conc = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--runs"))
            runs = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--concurrency"))
            conc = atol(argv[i + 1]);
    }
    if (runs < 1 || conc < 1) {
        fprintf(stderr, "usage: spawn_ceiling [--runs N] [--concurrency C]\n");
        return 2;
    }
    char *args[] = {"true", NULL};
    double t0 = now_s();
    long alive = 0;
    for (long i = 0; i < runs; i++) {
        if (alive == conc && waitpid(-1, NULL, 0) > 0)
            alive--;
        pid_t pid;
        int err = posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ);
        if (err) {
            fprintf(stderr, "spawn_ceiling: posix_spawn: %s\n", strerror(err));
            return 1;
        }
        alive++;
    }
    while (waitpid(-1, NULL, 0) > 0)
        ;
    double secs = now_s() - t0;
    printf("spawn_ceiling concurrency=%ld runs=%ld secs=%.3f runs_per_s=%.1f\n", conc, runs, secs,
           runs / secs);
    return 0;
}
