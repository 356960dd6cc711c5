/* `wss attach PID`: measure a running process from the kernel's reference
 * and soft-dirty bits, with no code in it (cli/attach.c, docs/attach.md). */
#ifndef WSS_CLI_ATTACH_H
#define WSS_CLI_ATTACH_H

#include "cli/analyses.h" /* WSS_CMD_HELP */

/* Runs `wss attach` with its arguments (argv[0] is "attach").  Returns the
 * exit status: 0, 2 for bad usage or a process it cannot attach to (said
 * in one line), 1 when the profile could not be written; or WSS_CMD_HELP. */
int wss_cmd_attach(int argc, char **argv);

#endif
