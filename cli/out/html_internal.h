/* What the two parts of `wss report --html` share: the page's processes,
 * which html.c loads, and the buffer of their data, which html_data.c
 * writes as one JSON document and html.c puts into the page. */
#ifndef WSS_CLI_HTML_INTERNAL_H
#define WSS_CLI_HTML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/model/load.h"
#include "common/fmt.h"

/* One process of the page: a profile loaded (args first, then those the
 * leader's process records name), or a note of a process without one. */
typedef struct proc {
	char *path;	  /* the profile's path, or NULL */
	bool loaded;	  /* p holds the profile */
	wss_profile_t p;
	int64_t pid, ppid; /* from the note, or the header when not noted */
	const char *reason; /* the note's reason for having no profile */
	const wss_process_note_t *note; /* a program measured in its note (exe set), or NULL */
	long noted_by;	  /* the proc whose profile noted it, -1 for an argument */
} proc_t;

typedef struct procs {
	proc_t *v;
	size_t n, cap;
} procs_t;

/* The document grows in one buffer; out of memory shows as its overflow
 * flag, checked once at the end. */
typedef struct out {
	wss_fmt_t f;
	bool raw; /* no runtime's frames folded (wss report --raw-stacks) */
} out_t;

/* The data of the processes ps as one JSON document into o (html_data.c):
 * {"format":1,"tool":...,"procs":[...]}.  Returns 0 or ENOMEM; running
 * out of memory in o's buffer shows as its overflow flag instead. */
int wss_html_data(out_t *o, procs_t *ps);

#endif
