/* Page sampling membership (sample.h).  The member of a block is found by
 * descending a binary tree: each step halves the block and a hash of the
 * half's prefix picks the left or right half.  Because the steps below
 * level j are the same whatever level the descent started from, the level
 * j+1 member of a block is the level j member of one of its halves: the
 * nesting that lets the rate change without forgetting pages. */
#include "config.h"
#include "common/sample.h"

#define GOLDEN 0x9e3779b97f4a7c15ull

/* splitmix64's finaliser: a bijection whose every output bit depends on
 * every input bit, so consecutive prefixes give independent choices. */
static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The choice at step i for prefix node.  node * GOLDEN is splitmix64's own
 * input stream for consecutive nodes; i goes into the top bits (i <= 30
 * needs 5), so the same prefix chooses independently at each step. */
static inline unsigned step_bit(uint64_t node, unsigned i, uint64_t seed)
{
	return (unsigned)(mix64((node * GOLDEN) ^ seed ^ ((uint64_t)i << 59)) & 1);
}

uint64_t wss_sample_in_block(uint64_t block, unsigned level, uint64_t seed)
{
	uint64_t node = block;
	for (unsigned i = level; i >= 1; i--)
		node = (node << 1) | step_bit(node, i, seed);
	return node;
}

/* The same descent as wss_sample_in_block, stopped at the first step that
 * leaves pn's half: half of the non-members are out after one step. */
bool wss_sample_member(uint64_t pn, unsigned level, uint64_t seed)
{
	uint64_t node = pn >> level;
	for (unsigned i = level; i >= 1; i--) {
		unsigned bit = step_bit(node, i, seed);
		if (bit != (unsigned)((pn >> (i - 1)) & 1))
			return false;
		node = (node << 1) | bit;
	}
	return true;
}

/* Ranges of at most this many pages are counted page by page: a
 * non-member leaves the descent after two steps on average, where a
 * block's member costs `level` steps (a 4-byte futex word pinned at level
 * 30 took 60 steps: 12 % of a multi-threaded sort's time). */
#define COUNT_BY_PAGE 8

uint64_t wss_sample_count(uint64_t first, uint64_t end, unsigned level, uint64_t seed)
{
	if (end <= first)
		return 0;
	if (level == 0)
		return end - first;
	if (end - first <= COUNT_BY_PAGE && level > 3) {
		uint64_t c = 0;
		for (uint64_t p = first; p < end; p++)
			c += wss_sample_member(p, level, seed);
		return c;
	}
	uint64_t mask = (1ull << level) - 1;
	uint64_t fb = first >> level, lb = (end - 1) >> level;
	if (fb == lb) {
		uint64_t m = wss_sample_in_block(fb, level, seed);
		return m >= first && m < end;
	}
	uint64_t c = 0;
	if (first & mask)
		c += wss_sample_in_block(fb++, level, seed) >= first;
	if (end & mask)
		c += wss_sample_in_block(lb--, level, seed) < end;
	/* Every whole block in between holds exactly one member. */
	return c + (lb + 1 - fb);
}

/* The first steps of the level-span descent of pn's block: how many of
 * the first `steps` match pn's bits (steps when all do). */
static unsigned span_steps(uint64_t pn, unsigned steps, unsigned span, uint64_t seed)
{
	uint64_t node = pn >> span;
	for (unsigned k = 0; k < steps; k++) {
		unsigned i = span - k, bit = step_bit(node, i, seed);
		if (bit != (unsigned)((pn >> (i - 1)) & 1))
			return k;
		node = (node << 1) | bit;
	}
	return steps;
}

bool wss_sample_member_span(uint64_t pn, unsigned level, unsigned span, uint64_t seed)
{
	if (level >= span)
		return wss_sample_member(pn, level, seed);
	return span_steps(pn, level, span, seed) == level;
}

uint64_t wss_sample_cluster(uint64_t block, unsigned level, unsigned span, uint64_t seed)
{
	uint64_t node = block;
	for (unsigned k = 0; k < level; k++)
		node = (node << 1) | step_bit(node, span - k, seed);
	return node << (span - level);
}

uint64_t wss_sample_count_span(uint64_t first, uint64_t end, unsigned level, unsigned span, uint64_t seed)
{
	if (level >= span)
		return wss_sample_count(first, end, level, seed);
	if (end <= first)
		return 0;
	uint64_t len = 1ull << (span - level), c = 0;
	uint64_t fb = first >> span, lb = (end - 1) >> span;
	/* The end blocks' clusters clipped to [first, end); every whole
	 * block in between holds a whole one. */
	for (uint64_t b = fb; b <= lb; b = b == fb && lb > fb + 1 ? lb : b + 1) {
		uint64_t m = wss_sample_cluster(b, level, span, seed), me = m + len;
		uint64_t s = m > first ? m : first, e = me < end ? me : end;
		c += e > s ? e - s : 0;
	}
	if (lb > fb + 1)
		c += (lb - fb - 1) * len;
	return c;
}

unsigned wss_sample_top_span(uint64_t pn, unsigned span, uint64_t seed)
{
	unsigned k = span_steps(pn, span, span, seed);
	if (k < span)
		return k;
	unsigned l = span;
	while (l < WSS_SAMPLE_LEVEL_MAX && wss_sample_member(pn, l + 1, seed))
		l++;
	return l;
}

uint64_t wss_sample_seed(uint64_t entropy)
{
	uint64_t s = mix64(entropy + GOLDEN);
	/* mix64 maps only 0 to 0. */
	return s ? s : GOLDEN;
}
