/* `wss export` (docs/report.md, "Exports"): a profile as CSV, as a pprof
 * profile, or as trace-event JSON for Perfetto and chrome://tracing.
 * export.c holds the command, the output (a whole file or none), the CSV
 * and the trace; pprof.c the protocol-buffer profile.  What they share is
 * declared here. */
#ifndef WSS_CLI_EXPORT_H
#define WSS_CLI_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/model/load.h"
#include "common/fmt.h"

/* The subcommand: argv[0] is "export".  Returns the exit status (0; 1 out
 * of memory or stdout unwritable; 2 usage, input or output file errors,
 * said on stderr in one line) or WSS_CMD_HELP (cli/analyses/analyses.h). */
int wss_cmd_export(int argc, char **argv);

/* Where an export goes: the writers format into f, and the sink hands f's
 * bytes to fd with write(2) whenever it holds enough, so that the errno of
 * a failed write is known exactly (stdio would blur it). */
typedef struct wss_sink {
	int fd;
	int err; /* the first write's errno, or ENOMEM when f overflowed */
	wss_fmt_t f;
} wss_sink_t;

/* Writes out what f holds once it passes 64 KiB, or everything with
 * force.  Returns s->err (0 while all went well). */
int wss_sink_flush(wss_sink_t *s, bool force);

/* A u64 -> u64 map, open addressing.  Values must be non-zero: 0 is what
 * a lookup of a missing key returns. */
typedef struct wss_u64map {
	uint64_t *keys, *vals;
	size_t cap, n;
} wss_u64map_t;

uint64_t wss_u64map_get(const wss_u64map_t *m, uint64_t key);
/* Sets key to val (non-zero).  Returns 0 or ENOMEM. */
int wss_u64map_put(wss_u64map_t *m, uint64_t key, uint64_t val);
void wss_u64map_free(wss_u64map_t *m);

/* pprof.c: the whole run's first-touch sites as a gzipped profile.proto
 * message.  Says on stderr when the profile has no "sites" record and the
 * peaks' sites stand in.  Returns 0, ENOMEM, or the sink's errno. */
int wss_export_pprof(const wss_profile_t *p, wss_sink_t *out);
/* export_table.c: p's samples as rows of the fixed table, CSV (with the
 * header row first when header) or JSON Lines.  Returns 0 or an errno. */
int wss_export_table(const wss_profile_t *p, wss_sink_t *out, bool json, bool header);

#endif
