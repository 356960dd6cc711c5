/* The segment treap (segs.h).  Node 0 is the empty tree; freed nodes are
 * chained through their left link for reuse.  Split and merge recurse to
 * the tree's depth, O(log n) expected: the priorities are random. */
#include "config.h"
#include "cli/analyses/segs.h"

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

/* Room for n more nodes (node 0 included). */
static int reserve(wss_segs_t *t, size_t n)
{
	if (!t->used)
		n++;
	if ((size_t)t->used + n <= t->cap)
		return 0;
	size_t c = t->cap ? t->cap : 256;
	while (c < (size_t)t->used + n)
		c *= 2;
	if (c >= UINT32_MAX / 2)
		return ENOMEM;
	node_t *m = realloc(t->v, c * sizeof *m);
	if (!m)
		return ENOMEM;
	if (!t->used) {
		m[0] = (node_t){0};
		t->used = 1;
	}
	t->v = m;
	t->cap = (uint32_t)c;
	return 0;
}

int wss_segs_put(wss_segs_t *t, uint64_t key, uint64_t len, uint64_t val)
{
	uint32_t i = t->free;
	if (i)
		t->free = t->v[i].l;
	else {
		if (reserve(t, 1))
			return ENOMEM;
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

static void list(const node_t *v, uint32_t i, wss_seg_t *out, size_t *n)
{
	for (; i; i = v[i].r) {
		list(v, v[i].l, out, n);
		out[(*n)++] = (wss_seg_t){v[i].key, v[i].len, v[i].val};
	}
}

void wss_segs_list(const wss_segs_t *t, wss_seg_t *out)
{
	size_t n = 0;
	list(t->v, t->root, out, &n);
}

static uint64_t sums(node_t *v, uint32_t i)
{
	if (!i)
		return 0;
	v[i].sum = v[i].len + sums(v, v[i].l) + sums(v, v[i].r);
	return v[i].sum;
}

int wss_segs_assign(wss_segs_t *t, const wss_seg_t *v, size_t n)
{
	t->root = t->free = 0;
	t->n = 0;
	if (t->used)
		t->used = 1;
	if (reserve(t, n))
		return ENOMEM;
	/* The treap of keys in order and fresh random priorities, built with
	 * a stack of its right spine (a Cartesian tree): O(n). */
	uint32_t *spine = n ? malloc(n * sizeof *spine) : NULL;
	if (n && !spine)
		return ENOMEM;
	size_t depth = 0;
	for (size_t k = 0; k < n; k++) {
		uint32_t i = t->used++;
		t->v[i] = (node_t){v[k].key, v[k].len, v[k].val, 0, next_prio(t), 0, 0};
		uint32_t last = 0;
		while (depth && t->v[spine[depth - 1]].prio < t->v[i].prio)
			last = spine[--depth];
		t->v[i].l = last;
		if (depth)
			t->v[spine[depth - 1]].r = i;
		spine[depth++] = i;
	}
	t->root = depth ? spine[0] : 0;
	t->n = n;
	free(spine);
	sums(t->v, t->root);
	return 0;
}
