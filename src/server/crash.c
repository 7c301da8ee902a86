/* See crash.h. The handler only calls async-signal-safe functions (write, backtrace after a
 * warm-up call at install time so that it does not load libgcc from inside the handler,
 * backtrace_symbols_fd, sigaction, raise). */
#include "server/crash.h"

#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static char alt_stack[64 * 1024];

static void say(const char *s)
{
    ssize_t n = write(STDERR_FILENO, s, strlen(s));
    (void)n;
}

static void on_fatal(int sig)
{
    char line[80] = "streampulse: fatal signal ";
    size_t len = strlen(line);
    char digits[8];
    int nd = 0;
    for (int v = sig; v > 0 && nd < (int)sizeof(digits); v /= 10)
        digits[nd++] = (char)('0' + v % 10);
    while (nd > 0 && len + 1 < sizeof(line))
        line[len++] = digits[--nd];
    line[len] = '\0';
    say(line);
    say(" (");
    say(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGILL ? "SIGILL" : "SIGFPE");
    say("); backtrace:\n");
    void *frames[64];
    int n = backtrace(frames, 64);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

void crash_handler_install(void)
{
    void *warm[1];
    (void)backtrace(warm, 1);
    stack_t ss;
    memset(&ss, 0, sizeof(ss));
    ss.ss_sp = alt_stack;
    ss.ss_size = sizeof(alt_stack);
    sigaltstack(&ss, NULL);
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_fatal;
        sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}
