/* `wss report`: the first report a person reads about a profile, as text
 * for a terminal or as one JSON document with the same content
 * (docs/report.md). */
#ifndef WSS_CLI_REPORT_H
#define WSS_CLI_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/model/load.h"

/* Chart size of the text timeline. */
#define WSS_REPORT_COLUMNS 72
#define WSS_REPORT_ROWS 12

/* Writes the report of p to out.  raw_stacks: every frame of a stack on
 * its line, a runtime's interpreter frames too (else each run of them is
 * one line: cli/model/fold.h); the JSON always lists every frame, with the runs
 * marked.  Returns 0, ENOMEM, or EIO when out could not be written. */
int wss_report_text(wss_profile_t *p, FILE *out, bool raw_stacks);
int wss_report_json(wss_profile_t *p, FILE *out);

#endif
