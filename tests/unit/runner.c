/* Unit test runner: forks one child per test, enforces a timeout, prints a summary line.
 *
 *   unit_tests [-v] [FILTER...]   runs the tests whose names contain one of the FILTERs
 *
 * A child's stdout and stderr go to a file; the runner prints them, after a FAIL line, only
 * for a test that failed (-v prints a PASS line and the output of every test), so a passing
 * run shows nothing but the summary "N passed, N failed". */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

struct test_entry {
    const char *name;
    test_fn fn;
    int timeout_s;
};

static struct test_entry tests[2048];
static size_t ntests;
static char tmpdir[256];

void test_register(const char *name, test_fn fn, int timeout_s)
{
    if (ntests == sizeof(tests) / sizeof(tests[0])) {
        fprintf(stderr, "too many tests\n");
        exit(2);
    }
    tests[ntests++] = (struct test_entry){name, fn, timeout_s};
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "  %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    fflush(stderr);
    _exit(1);
}

const char *test_tmpdir(void)
{
    return tmpdir;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct test_entry *)a)->name, ((const struct test_entry *)b)->name);
}

static bool selected(const char *name, int argc, char **argv)
{
    if (argc <= 1)
        return true;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i]))
            return true;
    return false;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Copies what the child wrote (the file at out_fd) to stdout. */
static void print_output(int out_fd)
{
    char buf[8192];
    ssize_t n;
    fflush(stdout);
    if (lseek(out_fd, 0, SEEK_SET) < 0)
        return;
    while ((n = read(out_fd, buf, sizeof(buf))) > 0)
        if (write(STDOUT_FILENO, buf, (size_t)n) != n)
            return;
}

/* Runs one test in a child whose stdout and stderr go to out_fd; 0 if it passed. */
static int run_one(const struct test_entry *t, int out_fd)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/sp-unit-%d-XXXXXX", (int)getpid());
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(out_fd, STDERR_FILENO) < 0)
            _exit(3);
        alarm((unsigned)t->timeout_s);
        t->fn();
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        dprintf(out_fd, "  could not remove %s\n", tmpdir);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFSIGNALED(status))
        dprintf(out_fd, "  killed by signal %d%s\n", WTERMSIG(status),
                WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
    return 1;
}

int main(int argc, char **argv)
{
    bool verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    if (verbose) {
        argv[1] = argv[0];
        argv++;
        argc--;
    }
    qsort(tests, ntests, sizeof(tests[0]), cmp_entry);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < ntests; i++) {
        if (!selected(tests[i].name, argc, argv))
            continue;
        char path[] = "/tmp/sp-unit-out-XXXXXX";
        int out_fd = mkstemp(path);
        if (out_fd < 0) {
            perror("mkstemp");
            return 2;
        }
        unlink(path);
        int64_t t0 = now_ms();
        int rc = run_one(&tests[i], out_fd);
        int64_t dt = now_ms() - t0;
        if (rc != 0 || verbose) {
            printf("%s %s (%lld ms)\n", rc == 0 ? "PASS" : "FAIL", tests[i].name, (long long)dt);
            print_output(out_fd);
        }
        close(out_fd);
        fflush(stdout);
        if (rc == 0)
            passed++;
        else
            failed++;
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
