/* The stack-distance pass (mrc.h).  Positions 1..size; a page's live
 * position carries 1 in the tree.  The distance of a reference to a page
 * last at position q is 1 + the live positions after q, which is the
 * pages seen so far minus the prefix sum up to q.  When position size is
 * used up, the live positions (one per page seen, at most npages) are
 * renumbered 1..live in their order and the tree rebuilt in O(size);
 * size is twice npages, so that happens at most once per npages
 * references: amortised O(1). */
#include "config.h"
#include "cli/analyses/mrc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

static void tree_add(wss_stackdist_t *sd, uint64_t i, int32_t v)
{
	for (; i <= sd->size; i += i & -i)
		sd->tree[i] = (uint32_t)((int64_t)sd->tree[i] + v);
}

static uint64_t tree_prefix(const wss_stackdist_t *sd, uint64_t i)
{
	uint64_t s = 0;
	for (; i > 0; i -= i & -i)
		s += sd->tree[i];
	return s;
}

int wss_stackdist_init(wss_stackdist_t *sd, size_t npages)
{
	memset(sd, 0, sizeof *sd);
	sd->npages = npages;
	sd->size = 2 * npages + 64;
	sd->last = calloc(npages ? npages : 1, sizeof *sd->last);
	sd->at = malloc((sd->size + 1) * sizeof *sd->at);
	sd->tree = calloc(sd->size + 1, sizeof *sd->tree);
	if (!sd->last || !sd->at || !sd->tree) {
		wss_stackdist_release(sd);
		return ENOMEM;
	}
	return 0;
}

void wss_stackdist_release(wss_stackdist_t *sd)
{
	free(sd->last);
	free(sd->at);
	free(sd->tree);
	memset(sd, 0, sizeof *sd);
}

/* Live positions to 1..live, in order; the tree rebuilt linearly (each
 * node adds itself to its parent). */
static void renumber(wss_stackdist_t *sd)
{
	uint64_t n = 0;
	for (uint64_t q = 1; q <= sd->now; q++) {
		uint32_t page = sd->at[q];
		if (page != NONE && sd->last[page] == q) {
			sd->at[++n] = page;
			sd->last[page] = n;
		}
	}
	sd->now = n;
	memset(sd->tree, 0, (sd->size + 1) * sizeof *sd->tree);
	for (uint64_t i = 1; i <= sd->size; i++) {
		sd->tree[i] += i <= n;
		uint64_t parent = i + (i & -i);
		if (parent <= sd->size)
			sd->tree[parent] += sd->tree[i];
	}
}

int wss_stackdist_ref(wss_stackdist_t *sd, uint32_t page, uint64_t *dist)
{
	uint64_t q = sd->last[page];
	if (q) {
		*dist = sd->live - tree_prefix(sd, q) + 1;
		tree_add(sd, q, -1);
		sd->at[q] = NONE;
	} else {
		*dist = 0;
		sd->live++;
	}
	if (sd->now == sd->size)
		renumber(sd);
	uint64_t p = ++sd->now;
	sd->at[p] = page;
	sd->last[page] = p;
	tree_add(sd, p, 1);
	return 0;
}
