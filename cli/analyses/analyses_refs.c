/* The reference string of `wss mrc` and `wss simulate`
 * (analyses_internal.h), and its LRU stack distances over ranges.
 * simulate and mrc's OPT walk the string one reference at a time (4
 * bytes a reference, 12 with OPT, which needs each reference's next use),
 * up to REFS_MAX references; the LRU stack keeps segments of keys
 * referenced in one go, so that its time and memory follow the runs, not
 * the pages they claim. */
#include "config.h"
#include "cli/analyses/analyses.h"
#include "cli/analyses/analyses_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/analyses/pagemap.h"
#include "cli/analyses/segs.h"
#include "common/sample.h"

/* The policies and OPT walk the string one reference at a time, for each
 * policy and size, with 4 bytes a reference (12 for OPT): a string longer
 * than this is refused before it is built (docs/analyses.md, "Limits"),
 * where the LRU curve of wss mrc, computed over ranges, has no limit. */
#define REFS_MAX (1ull << 27)

/* The keys of run [first, first + n) at level: consecutive, [*k0, *k1):
 * its pages at level 0; else the blocks whose member lies in the run,
 * every block between its first and last page, and those two when their
 * member does. */
static void run_keys(uint64_t first, uint64_t n, unsigned level, uint64_t seed, uint64_t *k0, uint64_t *k1)
{
	if (!level) {
		*k0 = first;
		*k1 = first + n;
		return;
	}
	uint64_t end = first + n, fb = first >> level, lb = (end - 1) >> level;
	*k0 = fb + (wss_sample_in_block(fb, level, seed) < first);
	*k1 = lb + (wss_sample_in_block(lb, level, seed) < end);
}

void wss_refs_release(wss_refs_t *rs)
{
	free(rs->r);
	free(rs->ends);
	memset(rs, 0, sizeof *rs);
}

static void refs_start(const wss_scan_t *s, wss_refs_t *rs)
{
	memset(rs, 0, sizeof *rs);
	rs->level = s->level_max;
	rs->rate = 1ull << s->level_max;
}

/* Reference to key: its index in km (numbered in order of first sight:
 * no policy looks at the numbers) appended to the string. */
static int refs_add(wss_refs_t *rs, wss_pagemap_t *km, uint64_t key)
{
	if (wss_reserve(&rs->r, &rs->cap, rs->n + 1, sizeof *rs->r))
		return ENOMEM;
	uint32_t idx;
	bool added;
	int r = wss_pagemap_add(km, key, &idx, &added);
	if (r)
		return r;
	rs->r[rs->n++] = idx;
	rs->distinct += added;
	return 0;
}

/* The string, one reference at a time, for walker (the policies, OPT)
 * (second pass).  Returns 0, or says why not and returns 1 or 2 (more
 * than REFS_MAX references). */
int wss_refs_build(wss_pair_t *p, const wss_scan_t *s, wss_refs_t *rs, const char *cmd, const char *walker)
{
	refs_start(s, rs);
	uint64_t seed = p->prof.sampling_seed;
	wss_pagemap_t km = {0};
	rs->ends = malloc((s->intervals ? s->intervals : 1) * sizeof *rs->ends);
	wss_trace_interval_t iv;
	bool got;
	int r = rs->ends ? 0 : ENOMEM, t = 0;
	while (!r && !(t = wss_trace_next(&p->trace, &iv, &got)) && got) {
		for (size_t k = 0; k < iv.nruns && !r; k++) {
			uint64_t first = iv.runs[k].first, n = iv.runs[k].n, k0, k1;
			run_keys(first, n, rs->level, seed, &k0, &k1);
			if (k1 - k0 > REFS_MAX - rs->n) {
				fprintf(stderr,
					"wss: %s: %s: more than %llu references, the most %s walks one by one "
					"(wss mrc --no-opt draws the LRU curve over ranges)\n",
					cmd, p->trace_path, REFS_MAX, walker);
				wss_refs_release(rs);
				wss_pagemap_release(&km);
				return WSS_EXIT_BADINPUT;
			}
			/* The tests' reference build finds the members page by
			 * page, as a check on run_keys. */
			if (WSS_PER_PAGE)
				for (uint64_t pn = first; pn < first + n && !r; pn++) {
					if (!rs->level || wss_sample_member(pn, rs->level, seed))
						r = refs_add(rs, &km, pn >> rs->level);
				}
			else
				for (uint64_t key = k0; key < k1 && !r; key++)
					r = refs_add(rs, &km, key);
		}
		size_t from = rs->nends ? rs->ends[rs->nends - 1] : 0;
		if (rs->n - from > rs->peak)
			rs->peak = rs->n - from;
		rs->ends[rs->nends++] = rs->n;
	}
	rs->npages = km.n;
	wss_pagemap_release(&km);
	if (r || t)
		wss_refs_release(rs);
	return r ? wss_analyses_nomem(cmd) : t;
}

/* Frames of the sampled string for a memory of size pages: size / rate,
 * rounded down (a memory smaller than a sampled page holds none). */
size_t wss_refs_scaled_frames(const wss_refs_t *rs, uint64_t size) { return (size_t)(size >> rs->level); }

/* The default sizes: powers of two up to the distinct pages, and those. */
int wss_refs_default_sizes(uint64_t distinct, uint64_t **sizes, size_t *n)
{
	*n = 0;
	if (!(*sizes = malloc(66 * sizeof **sizes)))
		return ENOMEM;
	for (uint64_t c = 1; c < distinct; c *= 2)
		(*sizes)[(*n)++] = c;
	(*sizes)[(*n)++] = distinct ? distinct : 1;
	return 0;
}

static int by_dist(const void *a, const void *b)
{
	const wss_refs_dist_count_t *x = a, *y = b;
	return (x->dist > y->dist) - (x->dist < y->dist);
}

/* Sorted by distance, the counts of one distance summed. */
static void dist_compact(wss_refs_dists_t *h)
{
	qsort(h->v, h->n, sizeof *h->v, by_dist);
	size_t o = 0;
	for (size_t i = 0; i < h->n; i++)
		if (o && h->v[o - 1].dist == h->v[i].dist)
			h->v[o - 1].count += h->v[i].count;
		else
			h->v[o++] = h->v[i];
	h->n = o;
}

/* count references from position pos on, at distance dist, into the
 * sink's hits: those at each size whose frames hold them (an LRU memory
 * of f frames hits a reference exactly when its distance is at most f),
 * spread over the periods they fall in. */
static void sink_add(wss_refs_dist_sink_t *k, uint64_t dist, uint64_t count, uint64_t pos)
{
	for (size_t i = 0; dist && i < k->n; i++) {
		if (dist > k->frames[i])
			continue;
		k->hits[i] += count;
		for (uint64_t at = pos, end = pos + count; at < end;) {
			uint64_t next = (at / k->period + 1) * k->period, upto = next < end ? next : end;
			k->period_hits[i][at / k->period] += upto - at;
			at = upto;
		}
	}
}

/* A full histogram is compacted before it grows: it then holds a pair per
 * distance seen (at most the distinct keys), not one per reference. */
int wss_refs_dist_add(wss_refs_dists_t *h, uint64_t dist, uint64_t count, uint64_t pos)
{
	if (h->sink)
		sink_add(h->sink, dist, count, pos);
	if (h->n == h->cap && h->n >= 4096) {
		dist_compact(h);
		if (h->n > h->cap / 2 && wss_reserve(&h->v, &h->cap, 2 * h->cap, sizeof *h->v))
			return ENOMEM;
	}
	if (wss_reserve(&h->v, &h->cap, h->n + 1, sizeof *h->v))
		return ENOMEM;
	h->v[h->n++] = (wss_refs_dist_count_t){dist, count};
	return 0;
}

/* Sorted by distance, the first references set apart (cold), and each
 * re-reference's count made cumulative: v[i].count = re-references at
 * distance <= v[i].dist. */
void wss_refs_dist_finish(wss_refs_dists_t *h)
{
	dist_compact(h);
	size_t o = 0;
	uint64_t cum = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (!h->v[i].dist) {
			h->cold += h->v[i].count;
			continue;
		}
		cum += h->v[i].count;
		h->v[o++] = (wss_refs_dist_count_t){h->v[i].dist, cum};
	}
	h->n = o;
	h->reuse = cum;
}

/* The LRU stack over ranges of keys: the keys referenced so far, as
 * segments of consecutive keys whose latest references took consecutive
 * positions of the string, twice: by first key (addr: val the position
 * of its first key's reference) and by that position (pos: val the
 * first key), for the keys referenced after a position, summed.  A
 * reference is the keys' distinct count since their latest reference
 * plus one. */
typedef struct lru_ranges {
	wss_segs_t addr, pos;
	uint64_t now; /* positions used */
	/* lru_interval's work space */
	wss_seg_t *a, *p, *an, *pn;
	size_t a_cap, p_cap, an_cap, pn_cap;
	uint64_t *suffix, *fen;
	size_t suffix_cap, fen_cap;
	size_t *rank, *origin, *count;
	size_t rank_cap, origin_cap, count_cap;
	wss_range_t *keys;
	size_t keys_cap;
} lru_ranges_t;

static void lru_release(lru_ranges_t *l)
{
	wss_segs_release(&l->addr);
	wss_segs_release(&l->pos);
	free(l->a);
	free(l->p);
	free(l->an);
	free(l->pn);
	free(l->suffix);
	free(l->fen);
	free(l->rank);
	free(l->origin);
	free(l->count);
	free(l->keys);
}

static int lru_put(lru_ranges_t *l, uint64_t key, uint64_t len, uint64_t at)
{
	int r = wss_segs_put(&l->addr, key, len, at);
	return r ? r : wss_segs_put(&l->pos, at, len, key);
}

static void lru_del(lru_ranges_t *l, const wss_seg_t *g)
{
	wss_segs_del(&l->addr, g->key);
	wss_segs_del(&l->pos, g->val);
}

/* A segment straddling key x is cut in two there; the right part's
 * positions follow on from the left's. */
static int lru_cut(lru_ranges_t *l, uint64_t x)
{
	wss_seg_t g;
	if (!x || !wss_segs_floor(&l->addr, x - 1, &g) || g.key + g.len <= x)
		return 0;
	lru_del(l, &g);
	int r = lru_put(l, g.key, x - g.key, g.val);
	return r ? r : lru_put(l, x, g.key + g.len - x, g.val + (x - g.key));
}

/* Keys [a, b) referenced in order: each segment of them takes its keys'
 * distances into h.  For key k of segment [u, v) (cut to lie in the run),
 * the keys referenced since k's latest are those of the segments after
 * it in position (the rest of the run's earlier segments have left the
 * tree, each for the top of the stack), the run's keys before k, and
 * [k + 1, v): sum_above + (k - a) + (v - 1 - k), the same for every key
 * of the segment.  Keys in no segment are first references. */
static int lru_run(lru_ranges_t *l, uint64_t a, uint64_t b, wss_refs_dists_t *h)
{
	int r;
	if ((r = lru_cut(l, a)) || (r = lru_cut(l, b)))
		return r;
	uint64_t at = a;
	wss_seg_t g;
	while (wss_segs_ceil(&l->addr, a, &g) && g.key < b) {
		if (g.key > at && (r = wss_refs_dist_add(h, 0, g.key - at, l->now + (at - a))))
			return r;
		if ((r = wss_refs_dist_add(h, wss_segs_sum_above(&l->pos, g.val) + g.key + g.len - a, g.len,
					   l->now + (g.key - a))))
			return r;
		lru_del(l, &g);
		at = g.key + g.len;
	}
	if (at < b && (r = wss_refs_dist_add(h, 0, b - at, l->now + (at - a))))
		return r;
	r = lru_put(l, a, b - a, l->now);
	l->now += b - a;
	return r;
}

/* The re-references consumed from the old segments of pos rank j and
 * above (a Fenwick tree over ranks, 1-based inside). */
static void fen_add(uint64_t *f, size_t n, size_t j, uint64_t v)
{
	for (size_t i = j + 1; i <= n; i += i & -i)
		f[i] += v;
}

static uint64_t fen_prefix(const uint64_t *f, size_t j)
{
	uint64_t s = 0;
	for (size_t i = j; i > 0; i -= i & -i)
		s += f[i];
	return s;
}

/* Pushes segment g, from old segment of rank o, onto the next lists. */
static void lru_keep(lru_ranges_t *l, size_t *n, wss_seg_t g, size_t o)
{
	l->an[*n] = g;
	l->origin[(*n)++] = o;
}

/* An interval's key ranges k[0 .. nk) at once, for an interval with many
 * runs: lru_run's arithmetic on lists of the segments instead of the
 * trees, O(segments + runs log segments).  The old segments are ranked
 * by position; a segment's keys referenced again have distance: the old
 * keys after it in position not referenced yet in this interval
 * (suffix[j + 1] less the Fenwick tree of what was), its own keys after
 * them (end - v), the keys of the interval's runs before this one (moved
 * to the top of the stack), and those of this run before it (v - a): the
 * same sum as lru_run's.  The trees are then made anew from the lists:
 * the old segments' remains in their position order (a segment's pieces
 * keep it), then the interval's runs. */
static int lru_interval(lru_ranges_t *l, const wss_range_t *k, size_t nk, wss_refs_dists_t *h)
{
	size_t na = l->addr.n, nn = 0, cap = na + 2 * nk;
	if (wss_reserve(&l->a, &l->a_cap, na, sizeof *l->a) || wss_reserve(&l->p, &l->p_cap, na, sizeof *l->p) ||
	    wss_reserve(&l->an, &l->an_cap, cap, sizeof *l->an) || wss_reserve(&l->pn, &l->pn_cap, cap, sizeof *l->pn) ||
	    wss_reserve(&l->suffix, &l->suffix_cap, na + 1, sizeof *l->suffix) ||
	    wss_reserve(&l->fen, &l->fen_cap, na + 1, sizeof *l->fen) ||
	    wss_reserve(&l->rank, &l->rank_cap, na, sizeof *l->rank) ||
	    wss_reserve(&l->origin, &l->origin_cap, cap, sizeof *l->origin) ||
	    wss_reserve(&l->count, &l->count_cap, na + nk + 1, sizeof *l->count))
		return ENOMEM;
	wss_segs_list(&l->addr, l->a);
	wss_segs_list(&l->pos, l->p);
	l->suffix[na] = 0;
	for (size_t j = na; j-- > 0;)
		l->suffix[j] = l->suffix[j + 1] + l->p[j].len;
	memset(l->fen, 0, (na + 1) * sizeof *l->fen);
	for (size_t i = 0; i < na; i++) {
		size_t lo = 0, hi = na;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (l->p[mid].key <= l->a[i].val)
				lo = mid;
			else
				hi = mid;
		}
		l->rank[i] = lo;
	}
	uint64_t before = 0, consumed = 0;
	size_t i = 0;
	int r = 0;
	for (size_t j = 0; j < nk && !r; j++) {
		uint64_t a = k[j].first, b = a + k[j].n, at = a;
		for (; i < na && l->a[i].key < b && !r; i++) {
			wss_seg_t g = l->a[i];
			uint64_t end = g.key + g.len;
			if (end <= a) {
				lru_keep(l, &nn, g, l->rank[i]);
				continue;
			}
			if (g.key < a) {
				lru_keep(l, &nn, (wss_seg_t){g.key, a - g.key, g.val}, l->rank[i]);
				g = (wss_seg_t){a, end - a, g.val + (a - g.key)};
			}
			if (g.key > at && (r = wss_refs_dist_add(h, 0, g.key - at, l->now + (at - a))))
				break;
			uint64_t v = end < b ? end : b, rk = l->rank[i];
			uint64_t later = l->suffix[rk + 1] - (consumed - fen_prefix(l->fen, rk + 1));
			r = wss_refs_dist_add(h, later + end + before - a, v - g.key, l->now + (g.key - a));
			fen_add(l->fen, na, rk, v - g.key);
			consumed += v - g.key;
			at = v;
			if (v < end) {
				l->a[i] = (wss_seg_t){v, end - v, g.val + (v - g.key)};
				break;
			}
		}
		if (!r && at < b)
			r = wss_refs_dist_add(h, 0, b - at, l->now + (at - a));
		lru_keep(l, &nn, (wss_seg_t){a, b - a, l->now}, na + j);
		l->now += b - a;
		before += b - a;
	}
	for (; i < na; i++)
		lru_keep(l, &nn, l->a[i], l->rank[i]);
	if (r)
		return r;
	/* The position order: by origin (old ranks, then the runs), and by
	 * address within one, a counting sort. */
	memset(l->count, 0, (na + nk + 1) * sizeof *l->count);
	for (size_t x = 0; x < nn; x++)
		l->count[l->origin[x] + 1]++;
	for (size_t x = 1; x <= na + nk; x++)
		l->count[x] += l->count[x - 1];
	for (size_t x = 0; x < nn; x++)
		l->pn[l->count[l->origin[x]]++] = (wss_seg_t){l->an[x].val, l->an[x].len, l->an[x].key};
	if ((r = wss_segs_assign(&l->addr, l->an, nn)))
		return r;
	return wss_segs_assign(&l->pos, l->pn, nn);
}

/* mrc's histogram over ranges (second pass), with the string's length and
 * distinct keys in rs: an interval's runs one by one, or all at once when
 * they are many next to the segments. */
int wss_refs_mrc_ranges(wss_pair_t *p, const wss_scan_t *s, wss_refs_t *rs, wss_refs_dists_t *h)
{
	lru_ranges_t l = {0};
	wss_trace_interval_t iv;
	bool got;
	int r = 0, t;
	refs_start(s, rs);
	while (!r && !(t = wss_trace_next(&p->trace, &iv, &got)) && got) {
		size_t nk = 0, from = rs->n;
		if ((r = wss_reserve(&l.keys, &l.keys_cap, iv.nruns, sizeof *l.keys)))
			break;
		for (size_t k = 0; k < iv.nruns; k++) {
			uint64_t k0, k1;
			run_keys(iv.runs[k].first, iv.runs[k].n, rs->level, p->prof.sampling_seed, &k0, &k1);
			if (k1 > k0)
				l.keys[nk++] = (wss_range_t){k0, k1 - k0};
			rs->n += k1 - k0;
		}
		if (rs->n - from > rs->peak)
			rs->peak = rs->n - from;
		if (nk * 16 >= l.addr.n)
			r = lru_interval(&l, l.keys, nk, h);
		else
			for (size_t k = 0; k < nk && !r; k++)
				r = lru_run(&l, l.keys[k].first, l.keys[k].first + l.keys[k].n, h);
	}
	lru_release(&l);
	return r ? wss_analyses_nomem("mrc") : t;
}
