/* Opening a file a command writes (an export, a page, a refbits profile)
 * by the one rule every file wss writes follows (docs/report.md, "Files
 * wss writes"): what is at the name is looked at through its directory
 * without following it; a symbolic link, FIFO or device there is used
 * only where the kernel's fs.protected_symlinks and fs.protected_fifos
 * would trust it; a replaced file is replaced whole (a temporary file
 * beside it, renamed over it). */
#ifndef WSS_CLI_OUTFILE_H
#define WSS_CLI_OUTFILE_H

#include <stdbool.h>

/* The exit status of a command whose output the rule refused. */
#define WSS_EXIT_REFUSED 3

typedef enum {
	WSS_OUTFILE_NEW,     /* a profile: never over an existing file */
	WSS_OUTFILE_REPLACE, /* a report or export: an existing file is replaced */
} wss_outfile_how_t;

typedef struct wss_outfile {
	int fd;	     /* write here */
	int dirfd;   /* the directory of the file written (after links) */
	char *name;  /* its name there */
	char *tmp;   /* the temporary file renamed over name; NULL: in place */
	char why[512]; /* set when the rule refused the path */
} wss_outfile_t;

/* Opens path for writing as how says.  Returns 0, or an errno; when the
 * rule refused the path, why holds the reason (wss_outfile_error).
 * Release with wss_outfile_close in every case. */
int wss_outfile_open(wss_outfile_t *o, const char *path, wss_outfile_how_t how);

/* Closes the file: when ok, made durable and renamed into place; else a
 * temporary file is removed and the old file left as it was.  Returns 0
 * or an errno (the temporary file is then gone). */
int wss_outfile_close(wss_outfile_t *o, bool ok);

/* When the rule refused path (wss_outfile_open failed with why set),
 * prints "wss: PATH: WHY" and returns true; the command then exits with
 * WSS_EXIT_REFUSED. */
bool wss_outfile_refused(const wss_outfile_t *o, const char *path);

/* Would the rule refuse what is at path now (another user's name in a
 * shared sticky directory)?  Then prints the line as wss_outfile_refused
 * and returns true.  For a command that only checks a path another
 * process creates (wss run's profile). */
bool wss_outfile_planted(const char *path);

#endif
