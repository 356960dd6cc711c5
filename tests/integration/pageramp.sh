#!/bin/sh
# The valgrind-ws demo: claims up to 1024 pages and writes every second one,
# so the working set peaks near 512 pages and the run touches >= 1024.
. "$top_srcdir/tests/tap/tap.sh"
plan 4
"$WSS" run -o "$TMP/p.jsonl" --interval 100ms -- "$PROGS/pageramp" 2 1000 >/dev/null 2>&1
is $? 0 "pageramp exits 0"
$PROFILE check "$TMP/p.jsonl"; ok $? "valid profile"
# The interval at the top of the ramp sees the 512 even pages plus those
# claimed in it: at most one per step, and a step takes 1 ms or more.  (At
# 10 ms, a step slowed by faults and ticks on a loaded machine could take
# longer than an interval, and no interval saw all 512.)
between "$($PROFILE get "$TMP/p.jsonl" summary.data.peak)" 512 612 "peak is about 512 pages"
# jemalloc may hand back other slab pages in the second repetition.
between "$($PROFILE get "$TMP/p.jsonl" summary.data.total)" 1024 4096 "total is at least 1024 pages"
done_testing
