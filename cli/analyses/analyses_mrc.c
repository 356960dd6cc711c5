/* `wss mrc` (analyses.h): the miss-ratio curve of a profile's trace, LRU
 * from the stack distances over ranges (analyses_refs.c), OPT by walking
 * the reference string, and the LRU memory that hits 90, 95 and 99 % of
 * the re-references. */
#include "config.h"
#include "cli/analyses/analyses.h"
#include "cli/analyses/analyses_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "cli/analyses/mrc.h"
#include "cli/analyses/policy.h"
#include "cli/out/text.h"

#define MIB (1024.0 * 1024.0)

/* OPT's hits for a memory of size pages, over the sampled string. */
static int opt_hits(const wss_refs_t *rs, const uint64_t *next, uint64_t size, uint64_t *hits)
{
	wss_policy_t *pol;
	if (wss_policy_new(WSS_POLICY_OPT, wss_refs_scaled_frames(rs, size), rs->npages, &pol))
		return ENOMEM;
	uint64_t h = 0;
	for (size_t i = 0; i < rs->n; i++)
		h += wss_policy_ref(pol, rs->r[i], next[i]);
	wss_policy_free(pol);
	*hits = h * rs->rate;
	return 0;
}

/* The re-references an LRU memory of f pages hits: those at distance <= f. */
static uint64_t dist_hits(const wss_refs_dists_t *h, uint64_t f)
{
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->v[mid].dist <= f)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? h->v[lo - 1].count : 0;
}

typedef struct mrc_point {
	uint64_t size, lru_hits, opt_hits;
} mrc_point_t;

static const unsigned quantiles[3] = {90, 95, 99};

static void mrc_text(FILE *out, const wss_pair_t *p, const wss_refs_t *rs, uint64_t refs, uint64_t cold,
		     const mrc_point_t *pt, size_t npt, const uint64_t *q, bool opt)
{
	wss_analyses_text_source(out, "mrc", p);
	char g[32];
	double ps = (double)p->prof.page_size;
	fprintf(out, "references %s: each page's first touch in each interval, in address order within it\n",
		wss_text_grouped(g, sizeof g, refs));
	fprintf(out, "pages      %s distinct (%.3f MiB): each one's first reference misses at every size\n",
		wss_text_grouped(g, sizeof g, cold), (double)cold * ps / MIB);
	if (rs->level)
		fprintf(out, "sampled    the members of 1 page in %" PRIu64 " (the trace's coarsest level), "
			     "distances and counts scaled by %" PRIu64 "\n",
			rs->rate, rs->rate);
	fprintf(out, "%12s %12s %12s%s\n", "pages", "MiB", "LRU misses", opt ? "   OPT misses" : "");
	for (size_t i = 0; i < npt; i++) {
		fprintf(out, "%12" PRIu64 " %12.3f %10.2f %%", pt[i].size, (double)pt[i].size * ps / MIB,
			refs ? 100.0 * (double)(refs - pt[i].lru_hits) / (double)refs : 0.0);
		if (opt)
			fprintf(out, " %10.2f %%", refs ? 100.0 * (double)(refs - pt[i].opt_hits) / (double)refs : 0.0);
		fputc('\n', out);
	}
	fputs("LRU memory for", out);
	for (int k = 0; k < 3; k++)
		fprintf(out, "%s %u %%", k ? " /" : "", quantiles[k]);
	fputs(" of the re-references to hit:", out);
	for (int k = 0; k < 3; k++)
		if (q[k])
			fprintf(out, "%s %" PRIu64, k ? " /" : "", q[k]);
		else
			fprintf(out, "%s -", k ? " /" : "");
	fputs(" pages (", out);
	for (int k = 0; k < 3; k++)
		fprintf(out, "%s%.3f", k ? " / " : "", (double)q[k] * ps / MIB);
	fputs(" MiB)\n", out);
}

static void mrc_csv(FILE *out, int64_t ps, uint64_t refs, const mrc_point_t *pt, size_t npt, bool opt)
{
	fputs("pages,mib,references,lru_misses,lru_miss_ratio,opt_misses,opt_miss_ratio\n", out);
	for (size_t i = 0; i < npt; i++) {
		fprintf(out, "%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%.9g,", pt[i].size, (double)pt[i].size * (double)ps / MIB,
			refs, refs - pt[i].lru_hits, refs ? (double)(refs - pt[i].lru_hits) / (double)refs : 0.0);
		if (opt)
			fprintf(out, "%" PRIu64 ",%.9g\n", refs - pt[i].opt_hits,
				refs ? (double)(refs - pt[i].opt_hits) / (double)refs : 0.0);
		else
			fputs(",\n", out);
	}
}

static void mrc_json(wss_fmt_t *f, const wss_pair_t *p, const wss_refs_t *rs, uint64_t refs, uint64_t cold,
		     const mrc_point_t *pt, size_t npt, const uint64_t *q, bool opt)
{
	wss_fmt_ch(f, '{');
	wss_analyses_json_source(f, p);
	wss_analyses_jf(f, ",\"page_size\":%" PRId64 ",\"rate\":%" PRIu64 ",\"references\":%" PRIu64 ",\"distinct\":%" PRIu64
			   ",\"curve\":[",
			p->prof.page_size, rs->rate, refs, cold);
	for (size_t i = 0; i < npt; i++) {
		wss_analyses_jf(f, "%s{\"pages\":%" PRIu64 ",\"mib\":", i ? "," : "", pt[i].size);
		wss_analyses_json_num(f, (double)pt[i].size * (double)p->prof.page_size / MIB);
		wss_analyses_jf(f, ",\"lru_misses\":%" PRIu64 ",\"lru_miss_ratio\":", refs - pt[i].lru_hits);
		wss_analyses_json_num(f, refs ? (double)(refs - pt[i].lru_hits) / (double)refs : 0.0);
		if (opt) {
			wss_analyses_jf(f, ",\"opt_misses\":%" PRIu64 ",\"opt_miss_ratio\":", refs - pt[i].opt_hits);
			wss_analyses_json_num(f, refs ? (double)(refs - pt[i].opt_hits) / (double)refs : 0.0);
		}
		wss_fmt_ch(f, '}');
	}
	wss_fmt_str(f, "],\"lru_hit_sizes\":{");
	for (int k = 0; k < 3; k++) {
		wss_analyses_jf(f, "%s\"%u\":", k ? "," : "", quantiles[k]);
		if (q[k])
			wss_fmt_u64(f, q[k]);
		else
			wss_fmt_str(f, "null");
	}
	wss_fmt_str(f, "}}");
}

/* The same histogram from the string, reference by reference (the tests'
 * reference build). */
static int mrc_pages(wss_pair_t *p, const wss_scan_t *s, wss_refs_t *rs, wss_refs_dists_t *h)
{
	int r = wss_refs_build(p, s, rs, "mrc", "the stack-distance pass");
	if (r || (r = wss_trace_rewind(&p->trace)))
		return r;
	wss_stackdist_t sd;
	if (wss_stackdist_init(&sd, rs->npages))
		return wss_analyses_nomem("mrc");
	for (size_t i = 0; i < rs->n && !r; i++) {
		uint64_t d;
		wss_stackdist_ref(&sd, rs->r[i], &d);
		r = wss_refs_dist_add(h, d, 1, i);
	}
	wss_stackdist_release(&sd);
	return r ? wss_analyses_nomem("mrc") : 0;
}

/* The smallest LRU memory, in pages, that hits pct % of the
 * re-references (0: there are none). */
static uint64_t reuse_size(const wss_refs_dists_t *h, unsigned pct, uint64_t rate)
{
	if (!h->reuse)
		return 0;
	size_t i = 0;
	while (h->v[i].count * 100 < (uint64_t)pct * h->reuse)
		i++;
	return h->v[i].dist * rate;
}

int wss_mrc_hit_size(const char *path, unsigned pct, uint64_t *pages)
{
	wss_pair_t p;
	wss_scan_t s;
	wss_refs_t rs = {0};
	wss_refs_dists_t h = {0};
	int r = wss_analyses_open_scanned(path, &p, &s);
	if (r)
		return r;
	if (!(r = WSS_PER_PAGE ? mrc_pages(&p, &s, &rs, &h) : wss_refs_mrc_ranges(&p, &s, &rs, &h))) {
		wss_refs_dist_finish(&h);
		*pages = reuse_size(&h, pct, rs.rate);
	}
	free(h.v);
	wss_refs_release(&rs);
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}

/* The curves of the profile at path with options o, in form: text and
 * CSV to out, JSON into json. */
static int mrc_run(const char *path, const wss_mrc_opts_t *o, wss_out_t form, FILE *out, wss_fmt_t *json)
{
	wss_pair_t p;
	wss_scan_t s;
	wss_refs_t rs = {0}, os = {0};
	wss_refs_dists_t h = {0};
	uint64_t *next = NULL, *own = NULL;
	const uint64_t *sizes = o->sizes;
	size_t nsizes = o->nsizes;
	bool no_opt = o->no_opt;
	mrc_point_t *pt = NULL;
	int r = wss_analyses_open_scanned(path, &p, &s);
	if (r)
		return r;
	/* LRU: the histogram of stack distances, cumulated. */
	if ((r = WSS_PER_PAGE ? mrc_pages(&p, &s, &rs, &h) : wss_refs_mrc_ranges(&p, &s, &rs, &h)))
		goto out;
	wss_refs_dist_finish(&h);
	uint64_t cold = h.cold, refs = (uint64_t)rs.n * rs.rate;
	rs.distinct = cold;
	uint64_t q[3];
	for (int k = 0; k < 3; k++)
		q[k] = reuse_size(&h, quantiles[k], rs.rate);
	if (!sizes && wss_refs_default_sizes(rs.distinct * rs.rate, &own, &nsizes)) {
		r = wss_analyses_nomem("mrc");
		goto out;
	}
	if (!sizes)
		sizes = own;
	/* OPT: reference by reference, on the string built again. */
	if (!no_opt && ((r = wss_trace_rewind(&p.trace)) ||
			(r = wss_refs_build(&p, &s, &os, "mrc", "OPT"))))
		goto out;
	pt = calloc(nsizes, sizeof *pt);
	if (!pt || (!no_opt && !(next = malloc((os.n ? os.n : 1) * sizeof *next))) ||
	    (next && wss_policy_next_uses(os.r, os.n, os.npages, next))) {
		r = wss_analyses_nomem("mrc");
		goto out;
	}
	for (size_t i = 0; i < nsizes; i++) {
		pt[i].size = sizes[i];
		pt[i].lru_hits = dist_hits(&h, wss_refs_scaled_frames(&rs, sizes[i])) * rs.rate;
		if (next && opt_hits(&os, next, sizes[i], &pt[i].opt_hits)) {
			r = wss_analyses_nomem("mrc");
			goto out;
		}
	}
	wss_pair_note_end(&p);
	if (form == WSS_OUT_JSON)
		mrc_json(json, &p, &rs, refs, cold * rs.rate, pt, nsizes, q, !no_opt);
	else if (form == WSS_OUT_CSV)
		mrc_csv(out, p.prof.page_size, refs, pt, nsizes, !no_opt);
	else
		mrc_text(out, &p, &rs, refs, cold * rs.rate, pt, nsizes, q, !no_opt);
	if (form != WSS_OUT_JSON)
		r = wss_analyses_finish(out, "mrc");
out:
	free(h.v);
	free(next);
	free(pt);
	wss_refs_release(&rs);
	wss_refs_release(&os);
	free(own);
	wss_scan_release(&s);
	wss_pair_close(&p);
	return r;
}

int wss_mrc_json(const char *path, const wss_mrc_opts_t *o, wss_fmt_t *f)
{
	return mrc_run(path, o, WSS_OUT_JSON, NULL, f);
}

int wss_cmd_mrc(int argc, char **argv)
{
	const char *sz = NULL, *paths[1];
	bool csv = false, json = false;
	wss_mrc_opts_t o = {NULL, 0, false};
	const wss_opt_t opts[] = {{"--sizes", &sz, NULL}, {"--no-opt", NULL, &o.no_opt}, {"--csv", NULL, &csv},
				  {"--json", NULL, &json}};
	size_t np;
	int r = wss_opts_parse("mrc", argc, argv, opts, sizeof opts / sizeof *opts, paths, 1, &np,
			       "wss mrc [--sizes N,...] PROFILE");
	wss_out_t form;
	uint64_t *sizes = NULL;
	if (r || (r = wss_analyses_output_form("mrc", csv, json, &form)))
		return r;
	if (sz && (r = wss_analyses_number_list("mrc", "--sizes", sz, 1, UINT64_MAX >> 1, &sizes, &o.nsizes)))
		return r;
	o.sizes = sizes;
	wss_fmt_t f;
	if (form != WSS_OUT_JSON)
		r = mrc_run(paths[0], &o, form, stdout, NULL);
	else if (!(r = wss_analyses_json_init(&f, "mrc")))
		r = wss_analyses_json_write(&f, mrc_run(paths[0], &o, form, NULL, &f), stdout, "mrc");
	free(sizes);
	return r;
}
