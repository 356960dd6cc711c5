#!/bin/sh
# The valgrind-ws demo: claims up to 1024 pages and writes every second one,
# so the working set peaks near 512 pages and the run touches >= 1024.
. "$top_srcdir/tests/tap/tap.sh"
plan 4
"$WSS" run -o "$TMP/p.jsonl" --interval 10ms -- "$PROGS/pageramp" 2 1000 >/dev/null 2>&1
is $? 0 "pageramp exits 0"
$PROFILE check "$TMP/p.jsonl"; ok $? "valid profile"
# Each 10 ms interval sees the ~512 even pages plus the ~10 claimed in it.
between "$($PROFILE get "$TMP/p.jsonl" summary.data.peak)" 512 600 "peak is about 512 pages"
# jemalloc may hand back other slab pages in the second repetition.
between "$($PROFILE get "$TMP/p.jsonl" summary.data.total)" 1024 4096 "total is at least 1024 pages"
done_testing
