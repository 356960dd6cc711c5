#!/bin/sh
# The tick's count by the touched list (engine/tick.c, count_by_list): at a
# steady sampled level with a window of one interval, the tick counts the
# members its list holds and adds the others as untouched in bulk, instead
# of visiting every member.  WSS_TEST_COUNT=check counts both ways at every
# such tick and says whether the list's count (pages, writes, and every
# stratum's sum, variance, members and pairs) is the walk's, bit for bit;
# WSS_TEST_COUNT=walk is the walk alone, for the estimates to match.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
plan 12

# check NAME ENV... -- PROG ARGS: the run's compared ticks and mismatches.
check() {
	name=$1
	shift
	env WSS_TEST_COUNT=check WSS_TRACK_MODE=sampled WSS_SESSION_OUTPUT="$name.jsonl" LD_PRELOAD="$WSS_LIB" "$@" \
		>"$name.out" 2>"$name.err" || bail "$name failed: $(tail -3 "$name.err")"
	same=$(grep -c "^wss: count check: interval [0-9]*: the list's count is the walk's\$" "$name.err")
	bad=$(grep -c "MISMATCH" "$name.err")
	n=$(grep -c '"type":"sample"' "$name.jsonl")
}

# Scattered pages, manual ticks, 1 in 16, all writes off (they count every
# page's writes another way, by the walk): every steady tick by the list.
check scatter WSS_TRACK_SAMPLE_RATE=1/16 WSS_TEST_ALL_WRITES=off WSS_SESSION_TIME_BASE=manual \
	"$PROGS/sampleset" 64 40 100 4000 7
is "$bad" 0 "scattered pages (sampleset): no tick's count differs ($same compared)"
between "$same" 30 "$n" "and most of its $n ticks were counted by the list"
# Two threads writing, wall-clock ticks of 20 ms.
check threads WSS_TRACK_SAMPLE_RATE=1/8 WSS_TEST_ALL_WRITES=off WSS_SESSION_INTERVAL=20ms \
	"$top_builddir/tests/stress/stress_touch" wall 2 256 1
is "$bad" 0 "two threads (stress_touch): no tick's count differs ($same compared)"
between "$same" $((n / 2)) "$n" "half its $n ticks or more by the list"
# The demo's sawtooth, at the rates auto chooses, all writes as the policy
# has them: the list where it may, the walk elsewhere.
check ramp WSS_TRACK_MODE=auto WSS_SESSION_INTERVAL=20ms "$PROGS/pageramp" 1 200
is "$bad" 0 "pageramp under auto: no tick's count differs ($same compared)"
# A sparse range's clusters (docs/profile-format.md, "Clusters"): each
# touched cluster counted by its listed pages, the others as untouched
# units, level changes included (k's list is k's whatever k + 1's level).
check sparse WSS_TRACK_MODE=auto WSS_SESSION_TIME_BASE=manual "$PROGS/sparseset" 256 6 8192 65536 7
is "$bad:$((same > 0))" "0:1" "a sparse range's clusters: no tick's count differs ($same compared)"
# Its entry split by the program's mprotect at unaligned places: a piece's
# end cuts a cluster, which is a unit on each side, whether counted by the
# walk or by the list (an untouched one too), and the clusters' size is
# the design's, touched or not.  A fixed VMA budget and seed: clusters of
# 8 pages in blocks of 128 at 1 in 16, some of them cut.
check split WSS_TRACK_SAMPLE_RATE=1/16 WSS_TEST_VMA_BUDGET=16384 WSS_TEST_SAMPLING_SEED=7 WSS_SESSION_TIME_BASE=manual \
	"$PROGS/sparsesplit" 2 64 6 1
is "$bad:$((same > 0))" "0:1" "a sparse range split inside clusters: no tick's count differs ($same compared)"
# A window of three intervals: never by the list (members touched in the
# window's earlier intervals are in no list of this one).
check window WSS_TRACK_SAMPLE_RATE=1/16 WSS_TEST_ALL_WRITES=off WSS_SESSION_TIME_BASE=manual WSS_SESSION_WINDOW=300ms \
	WSS_SESSION_INTERVAL=100ms "$PROGS/sampleset" 64 12 100 4000 7
is "$same:$bad" "0:0" "a window of three intervals: counted by the walk alone"

# The same seed and, without address randomisation, the same members: the
# walk alone gives the same estimates, sample for sample.
for how in walk list; do
	setarch "$(uname -m)" -R env WSS_TEST_COUNT=$how WSS_TRACK_MODE=sampled WSS_TRACK_SAMPLE_RATE=1/16 WSS_TEST_ALL_WRITES=off \
		WSS_SESSION_TIME_BASE=manual WSS_TEST_SAMPLING_SEED=99 WSS_SESSION_OUTPUT=$how.jsonl LD_PRELOAD="$WSS_LIB" \
		"$PROGS/sampleset" 64 40 100 4000 7 >$how.out 2>$how.err || bail "the $how's run failed"
done
python3 - walk.jsonl list.jsonl >cmp <<'PY'
import json, sys
def samples(p):
    out = []
    for l in open(p):
        r = json.loads(l)
        if r["type"] == "sample":
            out.append((r["seq"], r["data_pages"], r.get("write_pages"), json.dumps(r.get("ci")), r.get("rate")))
    return out
a, b = samples(sys.argv[1]), samples(sys.argv[2])
print(len(a), len(b), sum(x != y for x, y in zip(a, b)))
PY
set -- $(cat cmp)
is "$1" "$2" "the same number of samples ($1)"
is "$3" 0 "and the same estimates and intervals in each, counted by the walk or by the list"
cmp -s walk.out list.out && [ "$(grep -v "^wss: profile:" walk.err)" = "$(grep -v "^wss: profile:" list.err)" ]
ok $? "the program's output alike, and wss's summary"
is "$(WSS_TEST_COUNT=both LD_PRELOAD="$WSS_LIB" /bin/true 2>&1)" \
	'wss: WSS_TEST_COUNT: expected list, walk or check, got "both"; the program runs untracked' "a bad WSS_TEST_COUNT: one line"
done_testing
