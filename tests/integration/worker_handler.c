/* A handler for the worker tests (`streampulse worker -- build/itest/worker_handler ...`),
 * lighter to start than a shell script: the tests run it thousands of times.
 *
 *   worker_handler LOG [--fail-below N] [--poison MOD:REM] [--fail-if-exists PATH]
 *                      [--sleep-ms MS] [--env-dir DIR] [--stdin-dir DIR]
 *
 * Reads the record's value from stdin (a decimal job number for --poison). Appends one line
 * to LOG (O_APPEND, one write):
 *
 *   KEY ATTEMPT START_S END_S TOPIC PARTITION OFFSET PPID OUTCOME
 *
 * with times in seconds since the epoch (microseconds), PPID the worker that ran it and
 * OUTCOME ok or fail. It fails (exit 1, "job V attempt A failed" on stderr) when the attempt is
 * below --fail-below, when V % MOD == REM, or when PATH exists. --env-dir writes the
 * environment (NUL-separated) to DIR/KEY.ATTEMPT.env; --stdin-dir the exact stdin bytes to
 * DIR/KEY.ATTEMPT.in.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_s(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v ? v : dflt;
}

static void write_file(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    if (write(fd, data, len) != (ssize_t)len)
        perror("write");
    close(fd);
}

int main(int argc, char **argv)
{
    double start = now_s();
    if (argc < 2) {
        fprintf(stderr, "usage: worker_handler LOG [options]\n");
        return 2;
    }
    const char *log = argv[1];
    long fail_below = 0, mod = 0, rem = 0, sleep_ms = 0;
    const char *fail_path = NULL, *env_dir = NULL, *stdin_dir = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--fail-below"))
            fail_below = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--poison"))
            sscanf(argv[i + 1], "%ld:%ld", &mod, &rem);
        else if (!strcmp(argv[i], "--fail-if-exists"))
            fail_path = argv[i + 1];
        else if (!strcmp(argv[i], "--sleep-ms"))
            sleep_ms = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--env-dir"))
            env_dir = argv[i + 1];
        else if (!strcmp(argv[i], "--stdin-dir"))
            stdin_dir = argv[i + 1];
    }
    static char in[1 << 20];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof(in) && (r = read(0, in + n, sizeof(in) - n)) > 0)
        n += (size_t)r;
    long v = atol(in);
    const char *key = env_or("SP_KEY", "-");
    long attempt = atol(env_or("SP_ATTEMPT", "0"));

    char path[4096];
    if (env_dir) {
        static char buf[1 << 20];
        size_t o = 0;
        for (char **e = environ; *e && o < sizeof(buf); e++) {
            size_t l = strlen(*e) + 1;
            if (o + l > sizeof(buf))
                break;
            memcpy(buf + o, *e, l);
            o += l;
        }
        snprintf(path, sizeof(path), "%s/%s.%ld.env", env_dir, key, attempt);
        write_file(path, buf, o);
    }
    if (stdin_dir) {
        snprintf(path, sizeof(path), "%s/%s.%ld.in", stdin_dir, key, attempt);
        write_file(path, in, n);
    }
    if (sleep_ms > 0) {
        struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    int fail = attempt < fail_below || (mod > 0 && v % mod == rem) ||
               (fail_path && access(fail_path, F_OK) == 0);
    char line[1024];
    int len = snprintf(line, sizeof(line), "%s %ld %.6f %.6f %s %s %s %d %s\n", key, attempt, start,
                       now_s(), env_or("SP_TOPIC", "-"), env_or("SP_PARTITION", "-"),
                       env_or("SP_OFFSET", "-"), (int)getppid(), fail ? "fail" : "ok");
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0 || write(fd, line, (size_t)len) != len) {
        perror(log);
        return 3;
    }
    close(fd);
    if (fail) {
        fprintf(stderr, "job %ld attempt %ld failed\n", v, attempt);
        return 1;
    }
    return 0;
}
