/* `wss report`'s sections with stacks (report_internal.h): allocation
 * sites, the run's first-touch sites, hot pages and hot code pages. */
#include "config.h"
#include "cli/out/report.h"
#include "cli/out/report_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model/fold.h"
#include "cli/out/text.h"
#include "common/fmt.h"

/* The series of one interval in a fixed order, the data first (a burst's
 * entry leads with it: wss report's peaks): data, write, read, code, then
 * threads by their series' name.  qsort is not stable, and the file's
 * order is the engine's. */
static int series_rank(const char *s)
{
	return !strcmp(s, "data") ? 0 : !strcmp(s, "write") ? 1 : !strcmp(s, "read") ? 2 : !strcmp(s, "code") ? 3 : 4;
}

static int by_seq(const void *a, const void *b)
{
	const wss_peak_t *x = a, *y = b;
	if (x->seq != y->seq)
		return (x->seq > y->seq) - (x->seq < y->seq);
	int rx = series_rank(x->series), ry = series_rank(y->series);
	return rx != ry ? rx - ry : strcmp(x->series, y->series);
}

/* Peaks are numbered in time order, whatever order the file has. */
void wss_report_sort_peaks(wss_profile_t *p)
{
	if (p->npeaks > 1)
		qsort(p->peaks, p->npeaks, sizeof *p->peaks, by_seq);
}

/* An allocation site's frames: all return addresses (the stack was taken
 * inside the allocator wrapper, wss's own frames left out).  Returns 0,
 * ENOMEM, or ENOENT when its stack is not in the profile (or none was
 * captured: stack 0). */
int wss_report_alloc_frames(const wss_profile_t *p, wss_symbols_t *syms, int64_t stack, wss_report_frames_t *out)
{
	const wss_stack_t *st = stack > 0 ? wss_load_stack(p, stack) : NULL;
	if (!st)
		return ENOENT;
	out->n = 0;
	for (size_t k = 0; k < st->n; k++)
		if (wss_sym_frames(syms, st->frames[k], true, &out->f, &out->n, &out->cap))
			return ENOMEM;
	return 0;
}

/* "N" for an exact figure, "≈ N [lo, hi]" for an estimate. */
static void print_alloc_figure(FILE *out, int64_t v, const wss_ci_t *ci)
{
	char a[32], b[32], c[32];
	if (!ci->present || (ci->hi - ci->lo <= 1 && ci->lo <= (double)v && (double)v <= ci->hi)) {
		fputs(wss_text_grouped(a, sizeof a, (uint64_t)v), out);
		return;
	}
	fprintf(out, "≈ %s [%s, %s]", wss_text_grouped(a, sizeof a, (uint64_t)v), wss_text_grouped(b, sizeof b, (uint64_t)ci->lo),
		wss_text_grouped(c, sizeof c, (uint64_t)ci->hi));
}

size_t wss_report_print_stack(FILE *out, const wss_report_frames_t *fr, bool addrs, size_t max, bool raw)
{
	size_t f = 0;
	for (size_t lines = 0; f < fr->n && (!max || lines < max); lines++) {
		const char *label = NULL;
		size_t run = raw ? 0 : wss_fold_run(&fr->f[f], fr->n - f, &label);
		/* A folded run has no one address; the frames of one address
		 * are in one module, so a run never splits them. */
		if (!addrs)
			fputs("      ", out);
		else if (run || (f > 0 && fr->f[f].addr == fr->f[f - 1].addr))
			fprintf(out, "      %18s  ", "");
		else
			fprintf(out, "      0x%016" PRIx64 "  ", fr->f[f].addr);
		if (run) {
			char text[96];
			fputs(wss_fold_text(text, sizeof text, label, run), out);
			f += run;
		} else
			wss_report_print_frame(out, &fr->f[f++]);
		fputc('\n', out);
	}
	return fr->n - f;
}

/* At most this many allocation sites in the text, and lines of each's
 * stack. */
#define REPORT_ALLOC_SITES 10
#define REPORT_ALLOC_FRAMES 6

int wss_report_print_alloc_sites(const wss_profile_t *p, wss_symbols_t *syms, bool raw, FILE *out)
{
	char a[32];
	size_t n = p->nalloc_sites < REPORT_ALLOC_SITES ? p->nalloc_sites : REPORT_ALLOC_SITES;
	fprintf(out, "Memory by allocation site (%zu of %zu, largest live first): pages live now (and at the peak), the\n",
		n, p->nalloc_sites);
	fprintf(out, "working set on average, idle now (untouched for %" PRId64 " interval%s); an allocation is\n",
		p->alloc_idle_after, p->alloc_idle_after == 1 ? "" : "s");
	fprintf(out, "sampled by its bytes (one sample per %s bytes allocated on average, at the end;\n",
		wss_text_grouped(a, sizeof a, (uint64_t)p->alloc_mean));
	fputs("each stands for those it represents), and a page counts as touched when anything on it\n", out);
	fputs("was (objects sharing a page share its touches)\n", out);
	if (p->alloc_cut)
		fprintf(out, "(%" PRId64 " interval%s attributed only in part: too many pages to visit in one tick)\n",
			p->alloc_cut, p->alloc_cut == 1 ? "" : "s");
	if (p->alloc_dropped)
		fprintf(out, "(%" PRId64 " sampled allocation%s dropped: the table of live ones was full)\n", p->alloc_dropped,
			p->alloc_dropped == 1 ? "" : "s");
	wss_report_frames_t fr = {NULL, 0, 0};
	for (size_t i = 0; i < n; i++) {
		const wss_alloc_site_t *x = &p->alloc_sites[i];
		fprintf(out, "%2zu. live ", i + 1);
		print_alloc_figure(out, x->live_pages, &x->live_ci);
		/* The peak is an estimate too when the site's allocations were
		 * sampled (its interval is not in the record). */
		fprintf(out, " (%s%s at the peak); working set ", x->sampled < x->allocs ? "≈ " : "",
			wss_text_grouped(a, sizeof a, (uint64_t)x->peak_live_pages));
		print_alloc_figure(out, x->ws_pages, &x->ws_ci);
		fputs("; idle ", out);
		print_alloc_figure(out, x->idle_pages, &x->idle_ci);
		fprintf(out, "; %s allocation%s%s\n", wss_text_grouped(a, sizeof a, (uint64_t)x->allocs), x->allocs == 1 ? "" : "s",
			x->sampled < x->allocs ? " (estimated)" : "");
		int r = wss_report_alloc_frames(p, syms, x->stack, &fr);
		if (r == ENOENT) {
			fputs("      (no stack)\n", out);
			continue;
		}
		if (r) {
			free(fr.f);
			return ENOMEM;
		}
		size_t more = wss_report_print_stack(out, &fr, false, REPORT_ALLOC_FRAMES, raw);
		if (more)
			fprintf(out, "      (%zu more frame%s: wss report --json)\n", more, more == 1 ? "" : "s");
	}
	free(fr.f);
	return 0;
}

/* The whole run's first-touch sites, at most this many in the text. */
#define REPORT_SITES 10

/* A source location of the text's site list: the sites (instructions)
 * whose line reads the same, summed. */
typedef struct {
	char *text;
	int64_t pages;
} site_line_t;

static int by_pages_desc(const void *a, const void *b)
{
	const site_line_t *x = a, *y = b;
	return x->pages < y->pages ? 1 : x->pages > y->pages ? -1 : strcmp(x->text, y->text);
}

int wss_report_print_run_sites(const wss_profile_t *p, wss_symbols_t *syms, FILE *out)
{
	int64_t all = p->sites_other;
	for (size_t k = 0; k < p->nsites; k++)
		all += p->sites[k].pages;
	/* Each site as its line reads: the touching statement (innermost,
	 * inlined or not) and, inlined, where (else one function inlined in
	 * two places reads as two identical lines); instructions of one
	 * statement (an unrolled loop's) are one line, their pages summed. */
	site_line_t *v = calloc(p->nsites ? p->nsites : 1, sizeof *v);
	if (!v)
		return ENOMEM;
	size_t nv = 0;
	int r = 0;
	wss_report_frames_t fr = {NULL, 0, 0};
	for (size_t k = 0; k < p->nsites && !r; k++) {
		fr.n = 0;
		char *text = NULL;
		size_t len = 0;
		FILE *m = NULL;
		if (wss_sym_frames(syms, p->sites[k].pc, false, &fr.f, &fr.n, &fr.cap) ||
		    !(m = open_memstream(&text, &len))) {
			r = ENOMEM;
			break;
		}
		wss_report_print_frame(m, &fr.f[0]);
		if (fr.f[0].inlined && fr.n > 1) {
			fputs(" in ", m);
			wss_report_print_frame(m, &fr.f[1]);
		}
		if (fclose(m) || !text) {
			free(text);
			r = ENOMEM;
			break;
		}
		size_t j = 0;
		while (j < nv && strcmp(v[j].text, text))
			j++;
		if (j < nv) {
			free(text);
		} else {
			v[nv].text = text;
			nv++;
		}
		v[j].pages += p->sites[k].pages;
	}
	free(fr.f);
	if (!r) {
		qsort(v, nv, sizeof *v, by_pages_desc);
		fprintf(out, "First touches by site, whole run (%zu site%s, %" PRId64 " first touches)\n", p->nsites,
			p->nsites == 1 ? "" : "s", all);
		if (wss_load_sampled(p))
			fputs("(a sampled run: first touches of the sampled pages)\n", out);
		for (size_t j = 0; j < nv && j < REPORT_SITES; j++)
			fprintf(out, "  %10" PRId64 "  %5.1f %%  %s\n", v[j].pages,
				all ? 100.0 * (double)v[j].pages / (double)all : 0.0, v[j].text);
		if (nv > REPORT_SITES)
			fprintf(out, "  (%zu more source lines: wss report --json lists every site)\n", nv - REPORT_SITES);
	}
	for (size_t j = 0; j < nv; j++)
		free(v[j].text);
	free(v);
	return r;
}

int wss_report_print_hot(const wss_profile_t *p, wss_symbols_t *syms, FILE *out)
{
	if (!p->nhot)
		return 0;
	fprintf(out, "Hot pages (%zu): page, intervals touched, memory, first touched at\n", p->nhot);
	if (wss_load_sampled(p))
		fputs("(a sampled run: these are the hottest of the sampled pages)\n", out);
	wss_report_frames_t fr = {NULL, 0, 0};
	for (size_t k = 0; k < p->nhot; k++) {
		const wss_hot_t *h = &p->hot[k];
		fprintf(out, "  0x%016" PRIx64 " %8" PRId64 "  %-16s ", h->addr, h->intervals, h->mapping);
		const wss_stack_t *st = h->stack >= 0 ? wss_load_stack(p, h->stack) : NULL;
		if (h->stack < 0)
			fputs("-", out);
		else if (!st || !st->n)
			fprintf(out, "(stack %" PRId64 " is not in the profile)", h->stack);
		else {
			fr.n = 0;
			if (wss_sym_frames(syms, st->frames[0], false, &fr.f, &fr.n, &fr.cap)) {
				free(fr.f);
				return ENOMEM;
			}
			wss_report_print_frame(out, &fr.f[0]);
		}
		if (h->gone_seq >= 0)
			fprintf(out, "  (left tracking in interval %" PRId64 ")", h->gone_seq);
		fputc('\n', out);
	}
	free(fr.f);
	return 0;
}

/* track.code's hot pages: each page's object, and the function at its
 * start (from the modules' debug information). */
int wss_report_print_hot_code(const wss_profile_t *p, wss_symbols_t *syms, FILE *out)
{
	fprintf(out, "Hot code pages (%zu): page, intervals run, object, function at the page's start\n", p->nhot_code);
	wss_report_frames_t fr = {NULL, 0, 0};
	for (size_t k = 0; k < p->nhot_code; k++) {
		const wss_hot_t *h = &p->hot_code[k];
		const char *obj = strncmp(h->mapping, "code:", 5) ? h->mapping : h->mapping + 5;
		fprintf(out, "  0x%016" PRIx64 " %8" PRId64 "  %-16s ", h->addr, h->intervals, wss_report_base_name(obj));
		fr.n = 0;
		if (wss_sym_frames(syms, h->addr, false, &fr.f, &fr.n, &fr.cap)) {
			free(fr.f);
			return ENOMEM;
		}
		if (fr.n)
			wss_report_print_frame(out, &fr.f[0]); /* the module and offset when no name covers it */
		else
			fputc('-', out);
		fputc('\n', out);
	}
	free(fr.f);
	return 0;
}
