/* The replacement policies (policy.h).  State is per frame (what is in it,
 * its bits and counters) plus one word per page (its frame), so a policy
 * costs O(frames + pages) memory and O(1) (FIFO, LRU), amortised O(1)
 * (Clock) or O(log frames) (NFU, Aging, OPT: an indexed heap) per
 * reference.  Aging's interval end is O(frames): every counter shifts. */
#include "config.h"
#include "cli/analyses/policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX
#define AGING_TOP 0x80u

struct wss_policy {
	wss_policy_kind_t kind;
	size_t frames, used, npages;
	uint32_t *frame_of; /* per page: its frame, NONE when not resident */
	uint32_t *page_at;  /* per frame */
	size_t hand;	    /* FIFO: the frame loaded earliest; Clock: the hand */
	uint8_t *ref;	    /* Clock, NFU, Aging: referenced (in the interval) */
	uint64_t *count;    /* NFU, Aging */
	uint32_t *prev, *next, head, tail; /* LRU: frames, most recent first */
	uint64_t *key, *tie;		   /* heap policies: evict the least (key, tie) */
	uint32_t *heap, *pos;
	size_t nheap;
	uint32_t *touched; /* NFU: frames referenced in the interval */
	size_t ntouched;
	uint64_t loads;
};

static const char *const names[WSS_POLICY_N] = {"fifo", "lru", "clock", "nfu", "aging", "opt"};

const char *wss_policy_name(wss_policy_kind_t kind) { return kind < WSS_POLICY_N ? names[kind] : "?"; }

bool wss_policy_parse(const char *name, wss_policy_kind_t *kind)
{
	for (int k = 0; k < WSS_POLICY_N; k++)
		if (!strcmp(name, names[k])) {
			*kind = (wss_policy_kind_t)k;
			return true;
		}
	return false;
}

void wss_policy_free(wss_policy_t *p)
{
	if (!p)
		return;
	free(p->frame_of);
	free(p->page_at);
	free(p->ref);
	free(p->count);
	free(p->prev);
	free(p->next);
	free(p->key);
	free(p->tie);
	free(p->heap);
	free(p->pos);
	free(p->touched);
	free(p);
}

static bool uses_heap(wss_policy_kind_t k)
{
	return k == WSS_POLICY_NFU || k == WSS_POLICY_AGING || k == WSS_POLICY_OPT;
}

int wss_policy_new(wss_policy_kind_t kind, size_t frames, size_t npages, wss_policy_t **out)
{
	wss_policy_t *p = calloc(1, sizeof *p);
	if (!p)
		return ENOMEM;
	p->kind = kind;
	/* No more pages can be resident than there are. */
	p->frames = frames < npages ? frames : npages;
	p->npages = npages;
	size_t f = p->frames ? p->frames : 1;
	bool ok = (p->frame_of = malloc((npages ? npages : 1) * sizeof *p->frame_of)) &&
		  (p->page_at = malloc(f * sizeof *p->page_at));
	if (ok && (kind == WSS_POLICY_CLOCK || kind == WSS_POLICY_NFU || kind == WSS_POLICY_AGING))
		ok = (p->ref = calloc(f, 1)) && (p->count = calloc(f, sizeof *p->count));
	if (ok && kind == WSS_POLICY_LRU)
		ok = (p->prev = malloc(f * sizeof *p->prev)) && (p->next = malloc(f * sizeof *p->next));
	if (ok && uses_heap(kind))
		ok = (p->key = malloc(f * sizeof *p->key)) && (p->tie = malloc(f * sizeof *p->tie)) &&
		     (p->heap = malloc(f * sizeof *p->heap)) && (p->pos = malloc(f * sizeof *p->pos));
	if (ok && kind == WSS_POLICY_NFU)
		ok = (p->touched = malloc(f * sizeof *p->touched)) != NULL;
	if (!ok) {
		wss_policy_free(p);
		return ENOMEM;
	}
	for (size_t i = 0; i < npages; i++)
		p->frame_of[i] = NONE;
	p->head = p->tail = NONE;
	*out = p;
	return 0;
}

/* ---- the indexed heap (NFU, Aging, OPT) ---- */

static bool less(const wss_policy_t *p, uint32_t a, uint32_t b)
{
	return p->key[a] < p->key[b] || (p->key[a] == p->key[b] && p->tie[a] < p->tie[b]);
}

static void heap_put(wss_policy_t *p, size_t i, uint32_t s)
{
	p->heap[i] = s;
	p->pos[s] = (uint32_t)i;
}

static void sift_up(wss_policy_t *p, size_t i)
{
	uint32_t s = p->heap[i];
	while (i > 0 && less(p, s, p->heap[(i - 1) / 2])) {
		heap_put(p, i, p->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_put(p, i, s);
}

static void sift_down(wss_policy_t *p, size_t i)
{
	uint32_t s = p->heap[i];
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= p->nheap)
			break;
		if (c + 1 < p->nheap && less(p, p->heap[c + 1], p->heap[c]))
			c++;
		if (!less(p, p->heap[c], s))
			break;
		heap_put(p, i, p->heap[c]);
		i = c;
	}
	heap_put(p, i, s);
}

/* Frame s's key changed (or it was just added at the end). */
static void heap_fix(wss_policy_t *p, uint32_t s)
{
	sift_up(p, p->pos[s]);
	sift_down(p, p->pos[s]);
}

static uint64_t counter_key(const wss_policy_t *p, uint32_t s) { return p->count[s] << 1 | p->ref[s]; }

/* ---- LRU's list ---- */

static void lru_unlink(wss_policy_t *p, uint32_t s)
{
	if (p->prev[s] != NONE)
		p->next[p->prev[s]] = p->next[s];
	else
		p->head = p->next[s];
	if (p->next[s] != NONE)
		p->prev[p->next[s]] = p->prev[s];
	else
		p->tail = p->prev[s];
}

static void lru_push(wss_policy_t *p, uint32_t s)
{
	p->prev[s] = NONE;
	p->next[s] = p->head;
	if (p->head != NONE)
		p->prev[p->head] = s;
	p->head = s;
	if (p->tail == NONE)
		p->tail = s;
}

/* ---- the policies ---- */

static void mark(wss_policy_t *p, uint32_t s)
{
	if (p->kind == WSS_POLICY_NFU && !p->ref[s])
		p->touched[p->ntouched++] = s;
	p->ref[s] = 1;
}

static void hit(wss_policy_t *p, uint32_t s, uint64_t next)
{
	switch (p->kind) {
	case WSS_POLICY_LRU:
		lru_unlink(p, s);
		lru_push(p, s);
		break;
	case WSS_POLICY_CLOCK:
		p->ref[s] = 1;
		break;
	case WSS_POLICY_NFU:
	case WSS_POLICY_AGING:
		mark(p, s);
		p->key[s] = counter_key(p, s);
		heap_fix(p, s);
		break;
	case WSS_POLICY_OPT:
		p->key[s] = ~next;
		heap_fix(p, s);
		break;
	default:
		break;
	}
}

/* The frame to reuse when all are full. */
static uint32_t victim(wss_policy_t *p)
{
	uint32_t s;
	switch (p->kind) {
	case WSS_POLICY_FIFO:
		s = (uint32_t)p->hand;
		p->hand = (p->hand + 1) % p->frames;
		return s;
	case WSS_POLICY_CLOCK:
		while (p->ref[p->hand]) {
			p->ref[p->hand] = 0;
			p->hand = (p->hand + 1) % p->frames;
		}
		s = (uint32_t)p->hand;
		p->hand = (p->hand + 1) % p->frames;
		return s;
	case WSS_POLICY_LRU:
		s = p->tail;
		lru_unlink(p, s);
		return s;
	default:
		return p->heap[0];
	}
}

/* Page loaded into frame s; fresh: s was free, not in the heap yet. */
static void load(wss_policy_t *p, uint32_t s, uint64_t next, bool fresh)
{
	switch (p->kind) {
	case WSS_POLICY_LRU:
		lru_push(p, s);
		return;
	case WSS_POLICY_CLOCK:
		p->ref[s] = 1;
		return;
	case WSS_POLICY_NFU:
	case WSS_POLICY_AGING:
		p->count[s] = 0;
		mark(p, s);
		p->key[s] = counter_key(p, s);
		break;
	case WSS_POLICY_OPT:
		p->key[s] = ~next;
		break;
	default:
		return;
	}
	p->tie[s] = p->loads++;
	if (fresh) {
		p->pos[s] = (uint32_t)p->nheap;
		p->heap[p->nheap++] = s;
	}
	heap_fix(p, s);
}

bool wss_policy_ref(wss_policy_t *p, uint32_t page, uint64_t next)
{
	uint32_t s = p->frame_of[page];
	if (s != NONE) {
		hit(p, s, next);
		return true;
	}
	if (!p->frames)
		return false;
	bool fresh = p->used < p->frames;
	if (fresh)
		s = (uint32_t)p->used++;
	else {
		s = victim(p);
		p->frame_of[p->page_at[s]] = NONE;
	}
	p->page_at[s] = page;
	p->frame_of[page] = s;
	load(p, s, next, fresh);
	return false;
}

void wss_policy_interval_end(wss_policy_t *p)
{
	if (p->kind == WSS_POLICY_NFU) {
		for (size_t i = 0; i < p->ntouched; i++) {
			uint32_t s = p->touched[i];
			p->count[s]++;
			p->ref[s] = 0;
			p->key[s] = counter_key(p, s);
			sift_down(p, p->pos[s]);
		}
		p->ntouched = 0;
	} else if (p->kind == WSS_POLICY_AGING) {
		for (uint32_t s = 0; s < p->used; s++) {
			p->count[s] = p->count[s] >> 1 | (p->ref[s] ? AGING_TOP : 0);
			p->ref[s] = 0;
			p->key[s] = counter_key(p, s);
		}
		/* Every key moved: heapify bottom-up. */
		for (size_t i = p->nheap / 2; i-- > 0;)
			sift_down(p, i);
	}
}

int wss_policy_next_uses(const uint32_t *refs, size_t n, size_t npages, uint64_t *next)
{
	uint64_t *last = malloc((npages ? npages : 1) * sizeof *last);
	if (!last)
		return ENOMEM;
	for (size_t i = 0; i < npages; i++)
		last[i] = WSS_POLICY_NEVER;
	for (size_t i = n; i-- > 0;) {
		next[i] = last[refs[i]];
		last[refs[i]] = i;
	}
	free(last);
	return 0;
}
