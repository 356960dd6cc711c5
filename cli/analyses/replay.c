/* `wss replay`: the proxy application.  It turns a profile's page trace
 * back into memory accesses: the heat map with one time bin per interval
 * and the distinct pages normalised to consecutive indices (address
 * order), mapped anew in one anonymous mapping; in each bin it makes
 * (touches in the bin) / trial-factor accesses, each to a page drawn from
 * the bin's distribution, a write where the original page was written in
 * that interval and a read otherwise; then it calls wss_tick(), so that
 * under `wss run --time-base manual` its own profile has an interval per
 * bin.  Everything is read and laid out before the first bin, so the
 * loop allocates nothing; that set-up lands in the first interval.
 * docs/analyses.md says what the replay preserves and what it cannot. */
#include "config.h"
#include "cli/analyses/analyses.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "include/wss.h"

/* One interval's pages: runs [first, end) of the plan, listed at level
 * (each page stands for 2^level pages, see below), pages in all. */
typedef struct bin {
	size_t first, end;
	uint64_t pages;
	unsigned level;
} bin_t;

/* splitmix64: a small, seedable generator; the draws need no more. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n >= 1 (multiply-shift; the bias is below 2^-32
 * for the bin sizes here). */
static uint64_t below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)next_random(state) * n) >> 64);
}

/* A run of a bin: its pages' indices [index, index + n) among the
 * distinct pages, and the bin's pages before it (at). */
typedef struct prun {
	uint64_t at, index, n;
	bool written;
} prun_t;

typedef struct plan {
	bin_t *bins;
	size_t nbins;
	prun_t *runs;
	size_t nruns, cap;
	uint64_t npages;
	unsigned level_max;
} plan_t;

static void plan_release(plan_t *pl)
{
	free(pl->bins);
	free(pl->runs);
}

static int plan_nomem(void)
{
	fprintf(stderr, "wss: replay: out of memory\n");
	return 1;
}

/* Pages [index, index + n) of bin b, one run each. */
static int plan_pages(plan_t *pl, bin_t *b, uint64_t index, uint64_t n, bool written)
{
	for (uint64_t i = 0; i < n; i++) {
		if (wss_reserve(&pl->runs, &pl->cap, pl->nruns + 1, sizeof *pl->runs))
			return plan_nomem();
		pl->runs[pl->nruns++] = (prun_t){b->pages + i, index + i, 1, written};
	}
	return 0;
}

/* The runs of every interval, by page index (second pass): as many as
 * the trace has, whatever pages they claim. */
static int plan_build(wss_pair_t *p, const wss_scan_t *s, plan_t *pl)
{
	memset(pl, 0, sizeof *pl);
	pl->npages = s->pages.pages;
	pl->level_max = s->level_max;
	if (!(pl->bins = calloc(s->intervals ? s->intervals : 1, sizeof *pl->bins)))
		return plan_nomem();
	wss_trace_interval_t iv;
	bool got;
	int r;
	while (!(r = wss_trace_next(&p->trace, &iv, &got)) && got) {
		bin_t *b = &pl->bins[pl->nbins++];
		b->first = pl->nruns;
		b->level = iv.level;
		if (wss_reserve(&pl->runs, &pl->cap, pl->nruns + iv.nruns, sizeof *pl->runs))
			return plan_nomem();
		for (size_t k = 0; k < iv.nruns; k++) {
			uint64_t index = 0;
			wss_ranges_index(&s->pages, iv.runs[k].first, &index);
			bool written = (iv.sets & WSS_TRACE_SETS_WRITES) && iv.runs[k].written;
			/* The tests' reference build plans page by page. */
			if (WSS_PER_PAGE && (r = plan_pages(pl, b, index, iv.runs[k].n, written)))
				return r;
			if (!WSS_PER_PAGE)
				pl->runs[pl->nruns++] = (prun_t){b->pages, index, iv.runs[k].n, written};
			b->pages += iv.runs[k].n;
		}
		b->end = pl->nruns;
	}
	return r;
}

/* The run of bin b holding its e-th page (e < b->pages). */
static const prun_t *plan_run(const plan_t *pl, const bin_t *b, uint64_t e)
{
	size_t lo = b->first, hi = b->end;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (pl->runs[mid].at <= e)
			lo = mid;
		else
			hi = mid;
	}
	return &pl->runs[lo];
}

int wss_cmd_replay(int argc, char **argv)
{
	const char *tf = NULL, *sd = NULL, *paths[1];
	const wss_opt_t opts[] = {{"--trial-factor", &tf, NULL}, {"--seed", &sd, NULL}};
	size_t np;
	int r = wss_opts_parse("replay", argc, argv, opts, sizeof opts / sizeof *opts, paths, 1, &np,
			       "wss replay --trial-factor TF [--seed S] PROFILE");
	uint64_t factor, seed = 1;
	if (r)
		return r;
	if (!tf) {
		fputs("wss: replay: --trial-factor TF is required (accesses per bin = touches / TF)\n"
		      "wss: try 'wss --help'\n",
		      stderr);
		return 2;
	}
	if ((r = wss_opts_number("replay", "--trial-factor", tf, 1, UINT32_MAX, &factor)) ||
	    (sd && (r = wss_opts_number("replay", "--seed", sd, 0, UINT64_MAX, &seed))))
		return r;
	wss_pair_t p;
	wss_scan_t s;
	plan_t pl;
	if ((r = wss_pair_open(paths[0], &p)))
		return r;
	if ((r = wss_scan_run(&p, &s))) {
		wss_pair_close(&p);
		return r;
	}
	if ((r = plan_build(&p, &s, &pl)))
		goto out;
	wss_pair_note_end(&p);
	/* A sampled trace lists the members of its level; each stands for
	 * 2^level pages, so page i owns the 2^level_max pages from
	 * i << level_max on, and an access to it picks one of the first
	 * 2^level of them: the replay touches as many pages as the original
	 * did, not as many as were sampled. */
	long ps = sysconf(_SC_PAGESIZE), phys = sysconf(_SC_PHYS_PAGES);
	uint64_t pages = pl.npages ? pl.npages : 1;
	/* A mapping larger than the machine's memory would be paged, not
	 * replayed: refused, and before a claimed length costs anything. */
	if (phys > 0 && (pages > (UINT64_MAX >> pl.level_max) || pages << pl.level_max > (uint64_t)phys)) {
		fprintf(stderr, "wss: replay: %s: %" PRIu64 " pages to map, more than this machine's memory (%ld pages)\n",
			paths[0], pages << pl.level_max, phys);
		r = 2;
		goto out;
	}
	size_t span = (size_t)(pages << pl.level_max);
	char *mem = mmap(NULL, span * (size_t)ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
			 0);
	if (mem == MAP_FAILED) {
		fprintf(stderr, "wss: replay: mmap of %zu pages: %s\n", span, strerror(errno));
		r = 1;
		goto out;
	}
	uint64_t state = seed, trials_total = 0, writes = 0;
	volatile char sink = 0;
	for (size_t i = 0; i < pl.nbins; i++) {
		const bin_t *b = &pl.bins[i];
		uint64_t n = b->pages;
		/* Trials: the bin's touches, each counting its rate, over TF,
		 * rounded to nearest. */
		uint64_t trials = ((n << b->level) + factor / 2) / factor;
		for (uint64_t t = 0; n && t < trials; t++) {
			uint64_t e = below(&state, n);
			const prun_t *u = plan_run(&pl, b, e);
			size_t pg = ((size_t)(u->index + (e - u->at)) << pl.level_max) +
				    (size_t)below(&state, 1ull << b->level);
			volatile char *at = (volatile char *)mem + pg * (size_t)ps;
			if (u->written) {
				*at = (char)t;
				writes++;
			} else
				sink = (char)(sink + *at);
		}
		trials_total += trials;
		wss_tick();
	}
	(void)sink;
	printf("wss replay: %zu bins, %" PRIu64 " accesses (%" PRIu64 " writes) over %zu pages, trial factor %" PRIu64
	       ", seed %" PRIu64 "\n",
	       pl.nbins, trials_total, writes, span, factor, seed);
	munmap(mem, span * (size_t)ps);
	r = fflush(stdout) ? 1 : 0;
out:
	plan_release(&pl);
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}
