/* The segment treap (segs.h).  Node 0 is the empty tree; freed nodes are
 * chained through their left link for reuse.  Split and merge recurse to
 * the tree's depth, O(log n) expected: the priorities are random. */
#include "config.h"
#include "cli/segs.h"

#include <errno.h>
#include <stdlib.h>

typedef struct wss_segs_node {
	uint64_t key, len, val, sum; /* sum: the lengths in the subtree */
	uint64_t prio;
	uint32_t l, r;
} node_t;

void wss_segs_release(wss_segs_t *t)
{
	free(t->v);
	*t = (wss_segs_t){0};
}

static uint64_t next_prio(wss_segs_t *t)
{
	uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void pull(node_t *v, uint32_t i)
{
	v[i].sum = v[i].len + v[v[i].l].sum + v[v[i].r].sum;
}

/* Tree i into keys < key (*a) and keys >= key (*b). */
static void split(node_t *v, uint32_t i, uint64_t key, uint32_t *a, uint32_t *b)
{
	if (!i) {
		*a = *b = 0;
		return;
	}
	if (v[i].key < key) {
		split(v, v[i].r, key, &v[i].r, b);
		*a = i;
	} else {
		split(v, v[i].l, key, a, &v[i].l);
		*b = i;
	}
	pull(v, i);
}

/* Every key of a below every key of b. */
static uint32_t merge(node_t *v, uint32_t a, uint32_t b)
{
	if (!a || !b)
		return a ? a : b;
	if (v[a].prio > v[b].prio) {
		v[a].r = merge(v, v[a].r, b);
		pull(v, a);
		return a;
	}
	v[b].l = merge(v, a, v[b].l);
	pull(v, b);
	return b;
}

int wss_segs_put(wss_segs_t *t, uint64_t key, uint64_t len, uint64_t val)
{
	uint32_t i = t->free;
	if (i)
		t->free = t->v[i].l;
	else {
		if (t->used + 1 >= t->cap) {
			if (t->cap >= UINT32_MAX / 2)
				return ENOMEM;
			uint32_t c = t->cap ? 2 * t->cap : 256;
			node_t *m = realloc(t->v, (size_t)c * sizeof *m);
			if (!m)
				return ENOMEM;
			if (!t->cap)
				m[0] = (node_t){0};
			t->v = m;
			t->cap = c;
			if (!t->used)
				t->used = 1;
		}
		i = t->used++;
	}
	t->v[i] = (node_t){key, len, val, len, next_prio(t), 0, 0};
	uint32_t a, b;
	split(t->v, t->root, key, &a, &b);
	t->root = merge(t->v, merge(t->v, a, i), b);
	t->n++;
	return 0;
}

bool wss_segs_del(wss_segs_t *t, uint64_t key)
{
	if (!t->root)
		return false;
	uint32_t a, b, m, c;
	split(t->v, t->root, key, &a, &b);
	if (key == UINT64_MAX) {
		m = b;
		c = 0;
	} else
		split(t->v, b, key + 1, &m, &c);
	t->root = merge(t->v, a, c);
	if (!m)
		return false;
	t->v[m].l = t->free;
	t->free = m;
	t->n--;
	return true;
}

/* The node with the greatest key <= x (up false) or the least key >= x
 * (up true), 0 when none. */
static uint32_t nearest(const wss_segs_t *t, uint64_t x, bool up)
{
	uint32_t best = 0;
	for (uint32_t i = t->root; i;) {
		bool keep = up ? t->v[i].key >= x : t->v[i].key <= x;
		if (keep)
			best = i;
		i = keep == up ? t->v[i].l : t->v[i].r;
	}
	return best;
}

static bool found(const wss_segs_t *t, uint32_t i, wss_seg_t *out)
{
	if (i)
		*out = (wss_seg_t){t->v[i].key, t->v[i].len, t->v[i].val};
	return i != 0;
}

bool wss_segs_floor(const wss_segs_t *t, uint64_t x, wss_seg_t *out) { return found(t, nearest(t, x, false), out); }

bool wss_segs_ceil(const wss_segs_t *t, uint64_t x, wss_seg_t *out) { return found(t, nearest(t, x, true), out); }

uint64_t wss_segs_sum_above(const wss_segs_t *t, uint64_t x)
{
	uint64_t s = 0;
	for (uint32_t i = t->root; i;)
		if (t->v[i].key > x) {
			s += t->v[i].len + t->v[t->v[i].r].sum;
			i = t->v[i].l;
		} else
			i = t->v[i].r;
	return s;
}
