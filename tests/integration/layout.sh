#!/bin/sh
# Reproducible layouts: large heap allocations start on a page boundary
# (jemalloc's cache-oblivious random offsets are off), so a program that
# writes at i*4096 + (i%7)*64 in 1000 pages of a block touches exactly 1000
# pages in every run (tests/progs/layout).
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
cd "$TMP" || bail "cd $TMP"
counts=
for i in 1 2 3 4 5 6 7 8 9 10; do
	WSS_SESSION_TIME_BASE=manual WSS_REPORT_SUMMARY=false WSS_SESSION_OUTPUT="$TMP/l$i.jsonl" \
		LD_PRELOAD="$WSS_LIB" "$PROGS/layout" >"$TMP/l$i.out" 2>"$TMP/l$i.err" || bail "layout run $i failed"
	counts="$counts $($PROFILE samples "$TMP/l$i.jsonl" | awk '$1 == 2 {print $2}')"
done
is "$(cat "$TMP"/l*.out | awk '$1 == "offset" && $2 != 0' | wc -l)" 0 "large allocations start on a page boundary (10 runs, 4 each)"
is "$(echo $counts | tr ' ' '\n' | sort -u | wc -l)" 1 "the same pages in every run:$counts"
between "$(echo $counts | cut -d' ' -f1)" 1000 1002 "1000 pages written, as the program does"
done_testing
