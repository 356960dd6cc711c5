/* `wss diff A B`: two profiles side by side (docs/report.md, "wss diff"). */
#ifndef WSS_CLI_DIFF_H
#define WSS_CLI_DIFF_H

/* The exit status when --fail-above PCT was passed: B's data avg, peak or
 * total more than PCT per cent above A's.  Apart from 1 (a system
 * error), 2 (bad input or usage) and 3 (an output refused: outfile.h), so
 * that a CI job tells them apart. */
#define WSS_DIFF_ABOVE 4

/* argv[0] is "diff".  Returns the exit status (0; WSS_DIFF_ABOVE; 1 for
 * an error of the system; 2 for bad input or usage, said on stderr in one
 * line) or WSS_CMD_HELP (cli/analyses/analyses.h). */
int wss_cmd_diff(int argc, char **argv);

#endif
