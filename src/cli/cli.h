#ifndef SP_CLI_CLI_H
#define SP_CLI_CLI_H
/* Client sub-commands. argv[0] is the sub-command; returns the exit code. */
int cli_run(int argc, char **argv);
#endif
