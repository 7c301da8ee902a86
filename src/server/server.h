/* `streampulse serve`: configuration, signals, the reactor and the broker, wired together. */
#ifndef SP_SERVER_SERVER_H
#define SP_SERVER_SERVER_H

/* argv[0] is "serve". Returns the process exit code: 0 after a clean shutdown on SIGTERM or
 * SIGINT, 1 when the broker cannot start, 2 for a usage or configuration error. */
int server_main(int argc, char **argv);

#endif
