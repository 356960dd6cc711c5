/* The session's table (docs/report.md, "The session"): every profile a
 * session wrote, read through the first one's process notes, summed into
 * the session's total and its shared memory, with the processes of the
 * largest data peaks.  `wss run` prints it on stderr when the program
 * ends, `wss report` in its header section and as --json's "session". */
#ifndef WSS_CLI_SESSION_H
#define WSS_CLI_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cli/model/json.h"
#include "cli/model/load.h"

/* The processes the table lists, largest data peak first. */
#define WSS_SESSION_TOP 5

/* One profile of the session (one program image: a process that exec'd
 * has one per image that lived an interval). */
typedef struct wss_session_row {
	int64_t pid;
	char *program;	     /* the header's exe, its file name only */
	char *path;	     /* the profile, as a path from here; NULL: measured in its note */
	wss_stat_t data;     /* peak and total (total < 0: no summary) */
	int64_t shared;	     /* the summary's kinds.shared total, -1: none */
	wss_ci_t shared_ci;  /* its interval, in a sampled run */
	bool sampled;
	bool no_total;	     /* a summary without a total (reference bits without soft-dirty bits) */
} wss_session_row_t;

typedef struct wss_session {
	size_t processes;   /* distinct pids: the first and every noted one */
	size_t with;	    /* of them, with at least one profile read */
	size_t counted;	    /* with none, but measured in their note (ended within an interval) */
	size_t without;	    /* neither: none written, or none that could be read */
	size_t profiles;    /* profiles read (rows from profiles) */
	size_t unreadable;  /* profiles noted that could not be read (the loader said why) */
	size_t no_summary;  /* profiles without a summary: no total, left out of the sums */
	size_t no_total;    /* profiles with a summary but no total (reference bits), left out too */
	int64_t page_size;
	/* Sums over the rows with a summary; lo/hi: the sums of the
	 * intervals' bounds, or of the counts where exact (estimated: some
	 * term was an estimate). */
	uint64_t total, total_lo, total_hi;
	uint64_t shared, shared_lo, shared_hi;
	bool estimated;
	wss_session_row_t *rows; /* largest data peak first */
	size_t nrows;
	const char *name; /* what the table is of: NULL, "session"; "cgroup /x" (not owned) */
} wss_session_t;

/* Does first note other processes' profiles: is there a session to sum,
 * beyond its own program's images? */
bool wss_session_wanted(const wss_profile_t *first);

/* Reads every profile the session's first profile notes (first itself
 * being loaded already, and summed as the first row).  A noted profile
 * that cannot be read gets the loader's line on stderr and is counted in
 * unreadable.  Returns 0 or ENOMEM. */
int wss_session_build(wss_profile_t *first, wss_session_t *s);
void wss_session_release(wss_session_t *s);

/* One table of several sessions (wss attach --cgroup: each process
 * attached to is a session's first profile), named name: each path's
 * profile and the profiles it notes.  A path that cannot be read gets
 * the loader's line and is counted in unreadable.  Returns 0 or ENOMEM. */
int wss_session_build_many(char *const *paths, size_t n, const char *name, wss_session_t *s);

/* The table as text, each line starting with prefix ("wss: " on stderr,
 * "" in the report). */
void wss_session_text(const wss_session_t *s, FILE *out, const char *prefix);

/* The header record of the profile at path (its first line), parsed into
 * *doc (wss_json_free it).  Returns 0, or -1 when the file cannot be read
 * or does not start with a header. */
int wss_session_header(const char *path, wss_json_doc_t *doc);

/* The session's first profile, from the output pattern: %p is the
 * program's pid (exec keeps it); %t (its start) and %n (its argv[0],
 * which a script's interpreter replaces) are only known to it, so they
 * match anything, and the header says which file is its (its pid, started
 * after t0_ns: not an earlier run's under a recycled pid).  A name taken
 * before gets ".2", ".3", ... (engine/profile.c).  Returns a malloc'd
 * path, or NULL (not there yet, or no memory). */
char *wss_session_find_first(const char *pattern, pid_t pid, int64_t t0_ns);
/* Every such profile of pid's (the images of a process that exec'd, each
 * attached to in turn), in name order: a malloc'd array of malloc'd
 * paths in *paths; returns their number. */
size_t wss_session_find_all(const char *pattern, pid_t pid, int64_t t0_ns, char ***paths);

#endif
