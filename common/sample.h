/* Which pages a sampled session tracks: a pure function of the page number,
 * the level and the session's seed, so memory mapped later is sampled with
 * no bookkeeping and a page keeps its membership from one interval to the
 * next.  At level j exactly one page of each aligned block of 2^j pages is
 * a member (stratified: a range of n pages holds n/2^j members, +-1 at each
 * end), and a member at level j+1 is a member at level j, so changing the
 * rate by a power of two keeps a subset or a superset of the pages already
 * watched.  docs/profile-format.md, "Sampling and estimates", has the
 * design.  Pure, no allocation: AS-safe. */
#ifndef WSS_COMMON_SAMPLE_H
#define WSS_COMMON_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

/* The rate at level j is 1/2^j; level 0 tracks every page. */
#define WSS_SAMPLE_LEVEL_MAX 30

/* The two targets of track.mode "auto", in millionths, written here once
 * for the config's defaults and the engine's: the budget (session.overhead:
 * the program runs at most 2 % slower) and the precision (session.precision:
 * the half-width of each interval's 95 % interval on its data estimate). */
#define WSS_OVERHEAD_DEFAULT_PPM 20000
#define WSS_PRECISION_DEFAULT_PPM 50000

/* The one member of the aligned block of 2^level pages whose first page
 * number is block << level; level <= WSS_SAMPLE_LEVEL_MAX.  Costs level
 * dependent hash steps.  AS-safe. */
uint64_t wss_sample_in_block(uint64_t block, unsigned level, uint64_t seed);

/* Whether page number pn is a member at level (level <= WSS_SAMPLE_LEVEL_MAX).
 * Two hash steps on average for a non-member, level for a member.  AS-safe. */
bool wss_sample_member(uint64_t pn, unsigned level, uint64_t seed);

/* The number of members among page numbers [first, end); 0 when
 * end <= first.  At most two hash descents, whatever the length.  AS-safe. */
uint64_t wss_sample_count(uint64_t first, uint64_t end, unsigned level, uint64_t seed);

/* Cluster designs.  A range with a span S samples, at a level L < S, one
 * aligned run of 2^(S-L) pages (a cluster) in each aligned block of 2^S
 * pages: the first L steps of the level-S descent, so the rate is still
 * 1/2^L, every page's weight still 2^L, and the clusters nest (the
 * cluster at L+1 is a half of the one at L, and the level-S member is in
 * all of them).  At L >= S the design is the page one above, which nests
 * under the cluster at S-1 (its member is the level-S member of its
 * S-block, or of no cluster at all).  So one range keeps a subset or a
 * superset of its members whatever the level, as before, while L < S
 * arms 2^S/2^L times fewer runs: one VMA (one protection change) covers a
 * cluster.  Span 0 is the page design at every level.  AS-safe. */

/* Whether page pn is a member at level under span. */
bool wss_sample_member_span(uint64_t pn, unsigned level, unsigned span, uint64_t seed);

/* The first page of block's cluster (block: a page number >> span) at
 * level < span; its length is 2^(span - level) pages. */
uint64_t wss_sample_cluster(uint64_t block, unsigned level, unsigned span, uint64_t seed);

/* Members among [first, end) at level under span (wss_sample_count's
 * design when level >= span). */
uint64_t wss_sample_count_span(uint64_t first, uint64_t end, unsigned level, unsigned span, uint64_t seed);

/* The coarsest level pn is a member of under span (<= WSS_SAMPLE_LEVEL_MAX). */
unsigned wss_sample_top_span(uint64_t pn, unsigned span, uint64_t seed);

/* A non-zero session seed mixed from entropy (any value, 0 included).
 * AS-safe. */
uint64_t wss_sample_seed(uint64_t entropy);

#endif
