#!/bin/sh
# Concurrency stress (see stress_touch.c).  Short in `make check`; set
# STRESS_LONG=1 (make stress) for the long run.
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
if [ -n "$STRESS_LONG" ]; then rounds=3000 secs=30; else rounds=150 secs=3; fi
S=$top_builddir/tests/stress/stress_touch

WSS_SESSION_TIME_BASE=manual WSS_SESSION_INTERVAL=1ms WSS_SESSION_WINDOW=2ms WSS_SESSION_OUTPUT="$TMP/m.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$S" manual 4 4096 $rounds >"$TMP/m.out" 2>/dev/null
ok $? "manual stress: 4 threads, $rounds rounds with a tick racing the writes"
$PROFILE check "$TMP/m.jsonl"; ok $? "profile valid, threads partition every sample"
$PROFILE samples "$TMP/m.jsonl" >"$TMP/m.samples"
bad=$(awk 'NR == FNR { got[$1] = $2; next } $1 == "expect" { n++; g = got[$2]; if (g == "" || g < $3 || g > $4) { bad++; if (bad <= 5) printf "# seq %s: got %s, want %s..%s\n", $2, g, $3, $4 > "/dev/stderr" } } END { if (n == 0) print "none"; else print bad + 0 }' "$TMP/m.samples" "$TMP/m.out")
is "$bad" 0 "no touch lost in any round (every page written around a concurrent tick is in the 2-interval window)"
# A backend that sees writes apart (hybrid, auto's choice on Linux 6.7+):
# no write lost either, harvested around the same racing tick.
if [ "$($PROFILE get "$TMP/m.jsonl" header.backend)" = hybrid ]; then
	bad=$(awk 'NR == FNR { got[$1] = $6; next } $1 == "expect" { n++; g = got[$2]; if (g == "" || g < $3 || g > $4) { bad++; if (bad <= 5) printf "# seq %s: %s written, want %s..%s\n", $2, g, $3, $4 > "/dev/stderr" } } END { if (n == 0) print "none"; else print bad + 0 }' "$TMP/m.samples" "$TMP/m.out")
	is "$bad" 0 "hybrid: no write lost in any round either (write_pages)"
else
	skip "the backend does not see writes apart on this kernel"
fi

# Sampled at a steady rate (1/4, fixed seed): the tick re-arms and harvests
# only the members touched in the interval (engine/fault.c, tick.c).  A
# member it failed to re-arm, or whose touch it lost in the race with the
# workers' faults, stays open: the next rounds' writes to it go unseen and
# their raw member counts fall short.
WSS_TRACK_MODE=sampled WSS_TRACK_SAMPLE_RATE=1/4 WSS_TEST_SAMPLING_SEED=12345 \
	WSS_SESSION_TIME_BASE=manual WSS_SESSION_INTERVAL=1ms WSS_SESSION_WINDOW=2ms WSS_SESSION_OUTPUT="$TMP/x.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$S" sampled 4 8192 $rounds 2 12345 >"$TMP/x.out" 2>/dev/null
ok $? "sampled stress: 4 threads, $rounds rounds at 1/4 with a tick racing the writes"
$PROFILE check "$TMP/x.jsonl"; ok $? "profile valid"
python3 -c '
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "sample" and "sampled" in r:
        s = r["sampled"]
        print(r["seq"], s["data"], s.get("write", "-"), r["rate"])
' "$TMP/x.jsonl" >"$TMP/x.samples"
bad=$(awk 'NR == FNR { got[$1] = $2; rate[$1] = $4; next } $1 == "xexpect" { n++; g = got[$2]; if (g == "" || rate[$2] != 4 || g < $3 || g > $4) { bad++; if (bad <= 5) printf "# seq %s: %s members seen at rate %s, want %s..%s\n", $2, g, rate[$2], $3, $4 > "/dev/stderr" } } END { if (n == 0) print "none"; else print bad + 0 }' "$TMP/x.samples" "$TMP/x.out")
is "$bad" 0 "sampled: no member's touch lost in any round"
if [ "$($PROFILE get "$TMP/x.jsonl" header.backend)" = hybrid ]; then
	bad=$(awk 'NR == FNR { got[$1] = $3; next } $1 == "xexpect" { n++; g = got[$2]; if (g == "" || g < $3 || g > $4) { bad++; if (bad <= 5) printf "# seq %s: %s members written, want %s..%s\n", $2, g, $3, $4 > "/dev/stderr" } } END { if (n == 0) print "none"; else print bad + 0 }' "$TMP/x.samples" "$TMP/x.out")
	is "$bad" 0 "sampled, hybrid: no member's write lost either"
else
	skip "the backend does not see writes apart on this kernel"
fi

# hybrid's write window: readers racing the tick never take the writes of
# the interval that ended with them (exact written counts, every round).
WSS_TRACK_BACKEND=uffd-wp WSS_SESSION_OUTPUT="$TMP/probe.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true 2>/dev/null
if [ $? = 0 ]; then
	WSS_TRACK_BACKEND=hybrid WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/s.jsonl" \
		LD_PRELOAD="$WSS_LIB" "$S" split 2 2048 $rounds >"$TMP/s.out" 2>/dev/null
	ok $? "split stress: 2 threads, $rounds rounds of writes, then reads racing the tick"
	$PROFILE samples "$TMP/s.jsonl" >"$TMP/s.samples"
	bad=$(awk 'NR == FNR { got[$1] = $6; next } $1 == "wexpect" { n++; g = got[$2]; if (g != $3) { bad++; if (bad <= 5) printf "# seq %s: %s written, want %s\n", $2, g, $3 > "/dev/stderr" } } END { if (n == 0) print "none"; else print bad + 0 }' "$TMP/s.samples" "$TMP/s.out")
	is "$bad" 0 "hybrid: every round's writes in the interval they were made in, none in the next"
else
	skip "hybrid: this kernel has no userfaultfd write-protect"
fi

WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/w.jsonl" LD_PRELOAD="$WSS_LIB" "$S" wall 4 8192 $secs >"$TMP/w.out" 2>/dev/null
ok $? "wall stress: 4 threads, random pages + malloc churn, 1 ms interval, ${secs}s"
$PROFILE check "$TMP/w.jsonl"; ok $? "profile valid and consistent"
n=$($PROFILE samples "$TMP/w.jsonl" | awk '$2 > 8192 + 2048 { bad++ } END { print bad + 0 }')
is "$n" 0 "no sample exceeds the memory the program can touch"
# auto under the same load: 8,192 random pages a few milliseconds apart
# reach the burst cap (256 first touches) in most intervals, so the
# engine thread raises the level mid-interval while the workers fault and
# the clock ticks (engine/sampling.c, "bursts").
WSS_TRACK_MODE=auto WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/a.jsonl" LD_PRELOAD="$WSS_LIB" "$S" wall 4 8192 $secs >"$TMP/a.out" 2>/dev/null
ok $? "auto stress: 4 threads, random pages + malloc churn, 1 ms interval, ${secs}s, bursts raising the level"
$PROFILE check "$TMP/a.jsonl"; ok $? "profile valid and consistent"
n=$(python3 -c '
import json, sys
sampled = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "sample" and r.get("rate", 1) > 1:
        sampled += 1
print(sampled)
' "$TMP/a.jsonl")
[ "${n:-0}" -gt 0 ]; ok $? "auto sampled when exactness did not fit ($n samples sampled)"
done_testing
