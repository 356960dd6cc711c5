/* `wss window`'s series page by page (analyses_internal.h): the reference
 * the tests' build (WSS_PER_PAGE) holds analyses_window.c's ranges to.
 * Each page has its newest touch, in a list per interval; the pages are
 * numbered by a map of the trace's pages and those their history moves
 * to. */
#include "config.h"
#include "cli/analyses/analyses.h"
#include "cli/analyses/analyses_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/analyses/pagemap.h"
#include "common/sample.h"

/* The pages in the window, by their newest touch (or newest write): a
 * list per interval of the pages whose newest is that interval, in a ring
 * of ring slots, and how many pages of each top level (the coarsest
 * level they are a member of) are in the window. */
typedef struct winset {
	uint64_t *last; /* per page: newest interval, 0: never */
	uint32_t *prev, *next;
	uint32_t *head;
	size_t ring;
	uint64_t hist[WSS_SAMPLE_LEVEL_MAX + 1];
} winset_t;

#define NIL UINT32_MAX

static int winset_init(winset_t *w, size_t pages, size_t ring)
{
	memset(w, 0, sizeof *w);
	w->ring = ring;
	size_t n = pages ? pages : 1;
	w->last = calloc(n, sizeof *w->last);
	w->prev = malloc(n * sizeof *w->prev);
	w->next = malloc(n * sizeof *w->next);
	w->head = malloc(ring * sizeof *w->head);
	if (!w->last || !w->prev || !w->next || !w->head)
		return ENOMEM;
	for (size_t i = 0; i < ring; i++)
		w->head[i] = NIL;
	return 0;
}

static void winset_release(winset_t *w)
{
	free(w->last);
	free(w->prev);
	free(w->next);
	free(w->head);
}

static void winset_unlink(winset_t *w, uint32_t pg)
{
	size_t slot = w->last[pg] % w->ring;
	if (w->prev[pg] != NIL)
		w->next[w->prev[pg]] = w->next[pg];
	else
		w->head[slot] = w->next[pg];
	if (w->next[pg] != NIL)
		w->prev[w->next[pg]] = w->prev[pg];
}

/* Page pg touched (or written) in interval k, with window n: in the
 * window of k - 1 already, or entering it. */
static void winset_touch(winset_t *w, uint32_t pg, uint64_t k, uint64_t n, unsigned top)
{
	uint64_t l = w->last[pg];
	if (l == k)
		return;
	if (l && l + n >= k)
		winset_unlink(w, pg);
	else
		w->hist[top]++;
	w->last[pg] = k;
	size_t slot = k % w->ring;
	w->prev[pg] = NIL;
	w->next[pg] = w->head[slot];
	if (w->head[slot] != NIL)
		w->prev[w->head[slot]] = pg;
	w->head[slot] = pg;
}

/* The pages whose newest is k - n leave the window of k. */
static void winset_expire(winset_t *w, uint64_t k, uint64_t n, const uint8_t *top)
{
	if (k <= n)
		return;
	size_t slot = (k - n) % w->ring;
	for (uint32_t pg = w->head[slot]; pg != NIL; pg = w->next[pg])
		w->hist[top[pg]]--;
	w->head[slot] = NIL;
}

/* Page pg left tracking before interval k's tick: its history is gone, as
 * the engine forgets it (engine/registry.c). */
static void winset_forget(winset_t *w, uint32_t pg, uint64_t k, uint64_t n, const uint8_t *top)
{
	uint64_t l = w->last[pg];
	if (l && l + n >= k) {
		winset_unlink(w, pg);
		w->hist[top[pg]]--;
	}
	w->last[pg] = 0;
}

/* Page src moved to dst (mremap) before interval k's tick, its history
 * with it; dst had none (the engine untracks the target first). */
static void winset_move(winset_t *w, uint32_t src, uint32_t dst, uint64_t k, uint64_t n, const uint8_t *top)
{
	uint64_t l = w->last[src];
	winset_forget(w, dst, k, n, top);
	winset_forget(w, src, k, n, top);
	if (!l)
		return;
	w->last[dst] = l;
	if (l + n < k)
		return; /* out of the window already */
	size_t slot = l % w->ring;
	w->prev[dst] = NIL;
	w->next[dst] = w->head[slot];
	if (w->head[slot] != NIL)
		w->prev[w->head[slot]] = dst;
	w->head[slot] = dst;
	w->hist[top[dst]]++;
}

/* The window's pages that are members of level: those of top level >=
 * level (membership is nested). */
static uint64_t winset_members(const winset_t *w, unsigned level)
{
	uint64_t x = 0;
	for (unsigned t = level; t <= WSS_SAMPLE_LEVEL_MAX; t++)
		x += w->hist[t];
	return x;
}

/* The first index of a page at or after pn in a sorted map. */
static size_t map_lower(const wss_pagemap_t *m, uint64_t pn)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->pages[mid] < pn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The pages with history in the window, in address order, for win_map's
 * replay of the events: each with its newest touch. */
typedef struct live_page {
	uint64_t pn, last;
} live_page_t;

typedef struct live_set {
	live_page_t *v, *tmp;
	size_t n, cap, tmp_cap;
	live_page_t *pend; /* touches since the last merge, unsorted */
	size_t npend, pend_cap;
} live_set_t;

static int live_reserve(live_page_t **v, size_t *cap, size_t n) { return wss_reserve(v, cap, n, sizeof **v); }

static int live_cmp(const void *a, const void *b)
{
	const live_page_t *x = a, *y = b;
	return x->pn < y->pn ? -1 : x->pn > y->pn ? 1 : x->last < y->last ? -1 : x->last > y->last;
}

/* The first page at or after pn. */
static size_t live_lower(const live_set_t *l, uint64_t pn)
{
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->v[mid].pn < pn)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The pending touches merged in (the newest touch of a page wins), and
 * the pages out of the window of interval k (newest + n < k) dropped: a
 * move cannot bring them back into it. */
static int live_merge(live_set_t *l, uint64_t k, uint64_t n)
{
	qsort(l->pend, l->npend, sizeof *l->pend, live_cmp);
	if (live_reserve(&l->tmp, &l->tmp_cap, l->n + l->npend))
		return ENOMEM;
	size_t i = 0, j = 0, o = 0;
	while (i < l->n || j < l->npend) {
		live_page_t x;
		if (j == l->npend || (i < l->n && l->v[i].pn < l->pend[j].pn))
			x = l->v[i++];
		else if (i == l->n || l->pend[j].pn < l->v[i].pn)
			x = l->pend[j++];
		else
			x = l->v[i++]; /* the same page: its pending touches follow, newer */
		if (o && l->tmp[o - 1].pn == x.pn) {
			if (x.last > l->tmp[o - 1].last)
				l->tmp[o - 1].last = x.last;
			continue;
		}
		if (x.last + n >= k)
			l->tmp[o++] = x;
	}
	live_page_t *v = l->v;
	size_t cap = l->cap;
	l->v = l->tmp;
	l->cap = l->tmp_cap;
	l->n = o;
	l->tmp = v;
	l->tmp_cap = cap;
	l->npend = 0;
	return 0;
}

/* Removes the pages in [lo, hi) of the array. */
static void live_cut(live_set_t *l, size_t lo, size_t hi)
{
	memmove(l->v + lo, l->v + hi, (l->n - hi) * sizeof *l->v);
	l->n -= hi - lo;
}

/* One event on the live pages; a move adds its targets to m. */
static int live_event(live_set_t *l, const wss_trace_event_t *ev, wss_pagemap_t *m)
{
	size_t lo = live_lower(l, ev->from), hi = live_lower(l, ev->from + ev->n);
	if (ev->type != WSS_TRACE_EV_MOVED) {
		live_cut(l, lo, hi);
		return 0;
	}
	size_t k = hi - lo;
	if (live_reserve(&l->tmp, &l->tmp_cap, k))
		return ENOMEM;
	for (size_t i = 0; i < k; i++) {
		uint32_t idx;
		bool added;
		l->tmp[i] = (live_page_t){ev->to + (l->v[lo + i].pn - ev->from), l->v[lo + i].last};
		int r = wss_pagemap_add(m, l->tmp[i].pn, &idx, &added);
		if (r)
			return r;
	}
	live_cut(l, lo, hi);
	/* What was at the target is forgotten (win_events), and the moved
	 * pages take its place, in order: the target range holds nothing
	 * else now. */
	live_cut(l, live_lower(l, ev->to), live_lower(l, ev->to + ev->n));
	if (live_reserve(&l->v, &l->cap, l->n + k))
		return ENOMEM;
	size_t at = live_lower(l, ev->to);
	memmove(l->v + at + k, l->v + at, (l->n - at) * sizeof *l->v);
	memcpy(l->v + at, l->tmp, k * sizeof *l->v);
	l->n += k;
	return 0;
}

/* The trace's pages and the pages their history moves to (mremap events)
 * within a window of n, so that the window can carry a history to its new
 * address: a pass of its own replaying the events on the pages that have
 * history in the window at the time, then sorted.  A move carries those
 * pages only, never every page ever seen in its range, so the targets
 * grow with the pages a move really carries: a few bytes of events
 * cannot double the map again and again.  Returns 0, ENOMEM, EOVERFLOW
 * or the reader's status. */
static int win_map(wss_pair_t *p, const wss_scan_t *s, uint64_t n, wss_pagemap_t *m)
{
	uint32_t idx;
	bool added;
	int r = 0;
	for (size_t i = 0; i < s->pages.n; i++)
		for (uint64_t pn = s->pages.v[i].first; pn < s->pages.v[i].first + s->pages.v[i].n && !r; pn++)
			r = wss_pagemap_add(m, pn, &idx, &added);
	live_set_t l = {0};
	wss_trace_interval_t iv;
	bool got;
	int t = 0;
	while (!r && !(t = wss_trace_next(&p->trace, &iv, &got)) && got) {
		/* Touches wait in pend until an event needs them, merged
		 * sooner when they outgrow the live pages. */
		if (iv.nevents || l.npend > 2 * l.n + 4096)
			r = live_merge(&l, iv.seq, n);
		for (size_t e = 0; e < iv.nevents && !r; e++)
			r = live_event(&l, &iv.events[e], m);
		for (size_t j = 0; j < iv.nruns && !r; j++) {
			if ((r = live_reserve(&l.pend, &l.pend_cap, l.npend + iv.runs[j].n)))
				break;
			for (uint64_t pn = iv.runs[j].first; pn < iv.runs[j].first + iv.runs[j].n; pn++)
				l.pend[l.npend++] = (live_page_t){pn, iv.seq};
		}
	}
	free(l.v);
	free(l.tmp);
	free(l.pend);
	if (r)
		return r;
	if (t)
		return t;
	if (wss_pagemap_sort(m))
		return ENOMEM;
	return wss_trace_rewind(&p->trace);
}

/* Interval k's events on the window sets: pages gone, pages moved.  A
 * move first forgets what was at its target, every page of it, as the
 * engine untracks the target before the move. */
static void win_events(const wss_trace_interval_t *iv, const wss_pagemap_t *m, winset_t *d, winset_t *w,
		       uint64_t n, const uint8_t *top)
{
	for (size_t e = 0; e < iv->nevents; e++) {
		const wss_trace_event_t *ev = &iv->events[e];
		bool moved = ev->type == WSS_TRACE_EV_MOVED;
		for (size_t i = map_lower(m, ev->to); moved && i < m->n && m->pages[i] - ev->to < ev->n; i++) {
			winset_forget(d, (uint32_t)i, iv->seq, n, top);
			winset_forget(w, (uint32_t)i, iv->seq, n, top);
		}
		for (size_t i = map_lower(m, ev->from); i < m->n && m->pages[i] - ev->from < ev->n; i++) {
			if (!moved) {
				winset_forget(d, (uint32_t)i, iv->seq, n, top);
				winset_forget(w, (uint32_t)i, iv->seq, n, top);
				continue;
			}
			uint32_t dst;
			if (!wss_pagemap_find(m, ev->to + (m->pages[i] - ev->from), &dst))
				continue; /* no history to carry (win_map) */
			winset_move(d, (uint32_t)i, dst, iv->seq, n, top);
			winset_move(w, (uint32_t)i, dst, iv->seq, n, top);
		}
	}
}

/* The series for window n, page by page (the tests' reference build). */
int wss_window_compute_pages(wss_pair_t *p, const wss_scan_t *s, uint64_t n, wss_window_result_t *res)
{
	memset(res, 0, sizeof *res);
	wss_pagemap_t lm = {0};
	int mr = win_map(p, s, n, &lm);
	if (mr) {
		wss_pagemap_release(&lm);
		return mr == ENOMEM || mr == EOVERFLOW ? wss_analyses_nomem("window") : mr;
	}
	size_t pages = lm.n;
	size_t ring = (size_t)((n < s->intervals ? n : s->intervals) + 1);
	winset_t d, w;
	uint8_t *top = calloc(pages ? pages : 1, 1);
	/* per page: seen in an exact interval (1), in a sampled one (2) */
	uint8_t *seen = calloc(pages ? pages : 1, 1);
	wss_window_levels_t q;
	int r = winset_init(&d, pages, ring) | winset_init(&w, pages, ring) | wss_window_start(s, res, &q);
	if (r || !top || !seen) {
		r = wss_analyses_nomem("window");
		goto out;
	}
	for (size_t i = 0; s->level_max && i < pages; i++) {
		unsigned t = 0;
		while (t < WSS_SAMPLE_LEVEL_MAX && wss_sample_member(lm.pages[i], t + 1, p->prof.sampling_seed))
			t++;
		top[i] = (uint8_t)t;
	}
	wss_trace_interval_t iv;
	bool got;
	for (size_t i = 0; !(r = wss_trace_next(&p->trace, &iv, &got)) && got; i++) {
		uint64_t k = iv.seq;
		bool writes = iv.sets & WSS_TRACE_SETS_WRITES;
		win_events(&iv, &lm, &d, &w, n, top);
		for (size_t j = 0; j < iv.nruns; j++)
			for (uint64_t pn = iv.runs[j].first; pn < iv.runs[j].first + iv.runs[j].n; pn++) {
				uint32_t idx = 0;
				wss_pagemap_find(&lm, pn, &idx);
				winset_touch(&d, idx, k, n, top[idx]);
				if (writes && iv.runs[j].written)
					winset_touch(&w, idx, k, n, top[idx]);
				seen[idx] |= iv.level ? 2 : 1;
			}
		winset_expire(&d, k, n, top);
		winset_expire(&w, k, n, top);
		unsigned level = wss_window_level(s, &q, i, k, n);
		wss_window_add(&p->prof, res, &iv, level, winset_members(&d, level), winset_members(&w, level));
	}
	if (r)
		goto out;
	/* The run's distinct pages: those seen in an exact interval for
	 * certain, the others through the members of the trace's coarsest
	 * level among them, scaled. */
	for (size_t i = 0; i < pages; i++) {
		if (seen[i] & 1)
			res->total++;
		else if (seen[i] && top[i] >= s->level_max)
			res->total += 1ull << s->level_max;
	}
	res->total_estimated = s->level_max > 0;
out:
	winset_release(&d);
	winset_release(&w);
	wss_pagemap_release(&lm);
	free(top);
	free(seen);
	return wss_window_end(res, &q, r);
}
