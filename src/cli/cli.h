/* The client sub-commands of streampulse (everything but `serve`), built on librdkafka.
 *
 * src/server/main.c hands every sub-command other than `serve` to cli_run(). The CLI writes
 * user output to stdout and errors, in plain words, to stderr.
 *
 * Exit codes: 0 success, 1 the operation failed (broker unreachable, unknown topic, a record not
 * delivered, ...), 2 bad usage (unknown sub-command or option, bad value). On SIGINT or SIGTERM a
 * command stops, cleans up (produce delivers what it already queued; consume with --group
 * commits and leaves the group) and then the process re-raises the signal, so the shell sees
 * status 130 or 143 and a script running it stops as well. cli_run() returns 130 only if the
 * re-raised signal is somehow survived.
 */
#ifndef SP_CLI_CLI_H
#define SP_CLI_CLI_H

/* Runs one sub-command. argv[0] is the sub-command name ("topic", "produce", "consume", "bench",
 * "help", "--help", ...), argv[1..argc-1] its arguments; argv is not modified in place beyond what
 * getopt_long's permutation does. Prints usage for an unknown sub-command (to stderr, returns 2)
 * or for --help/help (to stdout, returns 0). Returns the process exit code. */
int cli_run(int argc, char **argv);

#endif
