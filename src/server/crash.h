/* Last words on a crash: a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE) prints the signal and
 * a backtrace (glibc's backtrace_symbols_fd: addresses, and names where the binary exports
 * them) on stderr, then the signal's default action runs (core dump, exit status 128 + N).
 * Installed once by main() for every sub-command; on an alternate stack, so a stack overflow
 * is reported too. */
#ifndef SP_SERVER_CRASH_H
#define SP_SERVER_CRASH_H

void crash_handler_install(void);

#endif
