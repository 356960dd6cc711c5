/* `wss report --html` (html.h): loads the profiles with every sample's
 * threads (the arguments', then the other processes their records note),
 * has their data written as one JSON document (cli/out/html_data.c), and
 * writes one HTML page: the template of cli/out/html/ with the style, the
 * script and the data put in, replacing the output whole or not at all. */
#include "config.h"
#include "cli/out/html.h"
#include "cli/out/html_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/model/load.h"
#include "cli/cmd/outfile.h"
#include "cli/out/text.h"
#include "common/fmt.h"

/* ---- the processes ---- */

static proc_t *procs_add(procs_t *ps)
{
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 8;
		proc_t *v = realloc(ps->v, cap * sizeof *v);
		if (!v)
			return NULL;
		ps->v = v;
		ps->cap = cap;
	}
	proc_t *pr = &ps->v[ps->n++];
	memset(pr, 0, sizeof *pr);
	pr->pid = pr->ppid = -1;
	pr->noted_by = -1;
	return pr;
}

static void procs_release(procs_t *ps)
{
	for (size_t k = 0; k < ps->n; k++) {
		if (ps->v[k].loaded)
			wss_load_release(&ps->v[k].p);
		free(ps->v[k].path);
	}
	free(ps->v);
}

/* Is the profile at path one of the loaded ones (the same file)? */
static bool procs_has(const procs_t *ps, const char *path)
{
	struct stat a, b;
	if (stat(path, &a))
		return false;
	for (size_t k = 0; k < ps->n; k++)
		if (ps->v[k].loaded && !stat(ps->v[k].path, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			return true;
	return false;
}

static int procs_load(proc_t *pr, const char *path)
{
	if (!(pr->path = strdup(path)))
		return 1;
	int r = wss_load_profile_flags(pr->path, &pr->p, WSS_LOAD_THREAD_SAMPLES);
	if (r)
		return r;
	pr->loaded = true;
	pr->pid = pr->p.pid;
	pr->ppid = pr->p.ppid;
	return 0;
}

/* The arguments' profiles, then the processes they note: a noted profile
 * that is not among the arguments is loaded too (one that cannot be read
 * is shown as such: the loader said why on stderr), and a note without a
 * profile becomes an entry with its reason.  Returns 0, or the loader's
 * status for an argument. */
static int procs_build(procs_t *ps, char *const *paths, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		proc_t *pr = procs_add(ps);
		if (!pr)
			return 1;
		int r = procs_load(pr, paths[k]);
		if (r)
			return r;
	}
	for (size_t k = 0; k < ps->n; k++) {
		if (!ps->v[k].loaded)
			continue;
		for (size_t j = 0; j < ps->v[k].p.nprocs; j++) {
			const wss_process_note_t note = ps->v[k].p.procs[j];
			if (note.profile && procs_has(ps, note.profile))
				continue;
			proc_t *pr = procs_add(ps);
			if (!pr)
				return 1;
			pr->noted_by = (long)k;
			if (note.profile && procs_load(pr, note.profile) == 1)
				return 1;
			/* The note's pids win: a profile that failed to load has none. */
			pr->pid = note.pid;
			pr->ppid = note.ppid;
			pr->reason = ps->v[k].p.procs[j].reason;
			if (ps->v[k].p.procs[j].exe)
				pr->note = &ps->v[k].p.procs[j];
			if (note.profile && !pr->loaded && !pr->path && !(pr->path = strdup(note.profile)))
				return 1;
		}
	}
	return 0;
}

/* ---- the page ---- */

/* The data into the page's <script type="application/json">: a '<' could
 * end the element ("</script>" in a program's argv), and as \u003c it is
 * the same JSON. */
static void write_data(FILE *f, const char *s, size_t n)
{
	for (const char *lt; n && (lt = memchr(s, '<', n));) {
		fwrite(s, 1, (size_t)(lt - s), f);
		fputs("\\u003c", f);
		n -= (size_t)(lt - s) + 1;
		s = lt + 1;
	}
	fwrite(s, 1, n, f);
}

/* The template with its markers replaced. */
static void write_page(FILE *f, const out_t *data)
{
	const char *t = wss_html_report_html;
	for (const char *m; (m = strstr(t, "@@"));) {
		fwrite(t, 1, (size_t)(m - t), f);
		if (!strncmp(m, "@@CSS@@", 7))
			fputs(wss_html_report_css, f);
		else if (!strncmp(m, "@@JS@@", 6))
			fputs(wss_html_report_js, f);
		else if (!strncmp(m, "@@DATA@@", 8))
			write_data(f, data->f.buf, data->f.len);
		else {
			fputs("@@", f);
			t = m + 2;
			continue;
		}
		t = strchr(m + 2, '@') + 2;
	}
	fputs(t, f);
}

/* out_path written by the rule of every file wss writes (cli/cmd/outfile.h):
 * replaced whole or not at all.  Returns 0 or an errno (EPERM with o->why
 * when the rule refused it). */
static int write_atomically(const char *out_path, const out_t *data, wss_outfile_t *o)
{
	int e = wss_outfile_open(o, out_path, WSS_OUTFILE_REPLACE);
	int fd = e ? -1 : dup(o->fd);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!e && !f)
		e = errno;
	if (f) {
		write_page(f, data);
		if (fflush(f) || ferror(f))
			e = errno ? errno : EIO;
		if (fclose(f) && !e)
			e = errno;
	} else if (fd >= 0)
		close(fd);
	int c = wss_outfile_close(o, !e);
	return e ? e : c;
}

int wss_html_report(const char *out_path, char *const *paths, size_t n, bool raw_stacks)
{
	procs_t ps = {NULL, 0, 0};
	out_t o = {.raw = raw_stacks};
	int r = procs_build(&ps, paths, n);
	if (r) {
		if (r == 1)
			fputs("wss: report: out of memory\n", stderr);
		procs_release(&ps);
		return r;
	}
	if (wss_fmt_init_growable(&o.f, 1 << 20)) {
		procs_release(&ps);
		fputs("wss: report: out of memory\n", stderr);
		return 1;
	}
	r = wss_html_data(&o, &ps);
	procs_release(&ps);
	if (r || o.f.overflow) {
		wss_fmt_release(&o.f);
		fputs("wss: report: out of memory\n", stderr);
		return 1;
	}
	wss_outfile_t of;
	int e = write_atomically(out_path, &o, &of);
	wss_fmt_release(&o.f);
	if (e && wss_outfile_refused(&of, out_path))
		return WSS_EXIT_REFUSED;
	if (e) {
		wss_text_output_error(out_path, e);
		return e == ENOMEM ? 1 : WSS_EXIT_BADINPUT;
	}
	return 0;
}
