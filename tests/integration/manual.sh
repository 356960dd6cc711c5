#!/bin/sh
# Manual time base: exact data_pages per sample, the window, munmap, mremap,
# and the per-thread partition, against what tests/progs/phases expects.
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS

# check SCENARIO WINDOW: run it, then compare each expectation line.
check() {
	out="$TMP/$1.out" prof="$TMP/$1.jsonl"
	WSS_SESSION_TIME_BASE=manual WSS_SESSION_INTERVAL=100ms WSS_SESSION_WINDOW=$2 \
		WSS_SESSION_OUTPUT="$prof" LD_PRELOAD="$WSS_LIB" "$PROGS/phases" "$1" >"$out" 2>"$TMP/$1.err" ||
		bail "phases $1 failed: $(cat "$TMP/$1.err")"
	$PROFILE check "$prof" || bail "invalid profile"
	$PROFILE samples "$prof" >"$TMP/$1.samples"
	while read -r kind seq a b c; do
		case $kind in
		expect)
			got=$(awk -v s="$seq" '$1 == s {print $2}' "$TMP/$1.samples")
			between "$got" "$a" "$b" "$1: sample $seq has $a..$b pages" ;;
		expect_tid)
			got=$($PROFILE threads "$prof" "$seq" | awk -v t="$a" '$1 == t {print $2}')
			between "${got:-0}" "$b" "$c" "$1: sample $seq, thread $a has $b..$c pages" ;;
		esac
	done <"$out"
}

check basic 100ms
check window 300ms
check threads 300ms

# VMA pressure: with a budget of 300 VMAs the backend opens coarse blocks.
WSS_TEST_VMA_BUDGET=300 WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/coarse.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/phases" coarse >"$TMP/coarse.out" 2>/dev/null
ok $? "coarse: the program runs under VMA pressure"
between "$($PROFILE get "$TMP/coarse.jsonl" summary.coarse)" 1 100000 "coarse: blocks were opened instead of pages"
between "$(awk '/^maps/ {print $2}' "$TMP/coarse.out")" 1 900 "coarse: the VMA count stays bounded (4096 without the budget)"
# Without the budget every lone page is a VMA of its own.
WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/fine.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/phases" coarse >"$TMP/fine.out" 2>/dev/null
between "$(awk '/^maps/ {print $2}' "$TMP/fine.out")" 4096 100000 "fine: one VMA per opened page, as the budget assumes"
is "$($PROFILE get "$TMP/fine.jsonl" summary.coarse)" 0 "fine: no coarse blocks"
done_testing
