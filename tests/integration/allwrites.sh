#!/bin/sh
# All writes (engine/sampling.c): at a sampled level every page of the
# dense ranges is write-protected and harvested, so each interval's writes
# are counted exactly and only the pages read and not written are
# estimated, from the members.  Known working sets (tests/progs/sampleset,
# scattered pages) under the manual time base at fixed rates, with all
# writes always on and on every other interval (WSS_TEST_ALL_WRITES), which
# takes the sample through every switch on and off: each interval that
# counts all writes must count the phase's writes exactly, every interval's
# data interval must hold the truth, and the summary's must too.
. "$top_srcdir/tests/tap/tap.sh"
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS

WSS_TRACK_BACKEND=uffd-wp WSS_SESSION_OUTPUT="$TMP/probe.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true 2>/dev/null ||
	skip_all "this kernel has no userfaultfd write-protect (all writes need hybrid)"

# run NAME MODE RATE MiB PHASES MIN MAX SEED [drop]: one line per phase,
# "SEQ TRUTH EST LO HI RATE WTRUTH WEST WLO WHI ALL", then the summary's
# "total TRUTH EST LO HI WTRUTH WEST WLO WHI".
run() {
	name=$1 mode=$2 rate=$3
	shift 3
	env WSS_TRACK_MODE=sampled WSS_TRACK_SAMPLE_RATE=$rate WSS_TEST_SAMPLING_SEED=12345 WSS_TEST_ALL_WRITES=$mode \
		WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/$name.jsonl" \
		LD_PRELOAD="$WSS_LIB" "$PROGS/sampleset" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		bail "sampleset $name failed: $(cat "$TMP/$name.err")"
	$PROFILE check "$TMP/$name.jsonl" || bail "$name: invalid profile"
	python3 - "$TMP/$name.out" "$TMP/$name.jsonl" >"$TMP/$name.cmp" <<'EOF'
import json, sys
truth = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == "total":
        total = (int(f[1]), int(f[2]))
    else:
        truth[int(f[1])] = (int(f[2]), int(f[3]))
rs = [json.loads(l) for l in open(sys.argv[2])]
for r in rs:
    if r["type"] != "sample" or r["seq"] not in truth:
        continue
    d, w = truth[r["seq"]]
    ci = r.get("ci", {})
    dl, dh = ci.get("data", [r["data_pages"]] * 2)
    wl, wh = ci.get("write", [r["write_pages"]] * 2)
    aw = 1 if r.get("sampled", {}).get("all_writes") else 0
    print(r["seq"], d, r["data_pages"], dl, dh, r["rate"], w, r["write_pages"], wl, wh, aw)
t = [r for r in rs if r["type"] == "summary"][-1]
print("total", total[0], t["data"]["total"], *t["data"]["total_ci"], total[1], t["write"]["total"], *t["write"]["total_ci"])
EOF
}

# judge NAME PHASES ALLS: ALLS of the PHASES intervals count all writes.
# The program's own pages outside the reservation (its data) add a few
# written pages to what it counts: 8 pages of slack above.
judge() {
	awk '$1 != "total"' "$TMP/$1.cmp" >"$TMP/$1.ph"
	is "$(wc -l <"$TMP/$1.ph")" "$2" "$1: a sample for each of the $2 phases"
	is "$(awk '$11 == 1' "$TMP/$1.ph" | wc -l)" "$3" "$1: $3 of them count all writes"
	is "$(awk '$11 == 1 && !($7 <= $8 && $8 <= $7 + 8 && $9 == $8 && $10 == $8)' "$TMP/$1.ph" | wc -l)" 0 \
		"$1: those count the phase's writes exactly, with no interval"
	awk '$11 == 1 && !($7 <= $8 && $8 <= $7 + 8 && $9 == $8 && $10 == $8) {print "# seq " $1 ": writes " $7 ", counted " $8 " [" $9 ", " $10 "]"}' "$TMP/$1.ph"
	cov=$(awk '$4 <= $2 + 8 && $2 <= $5 {n++} END {print n + 0}' "$TMP/$1.ph")
	between "$cov" $(($2 * 9 / 10)) "$2" "$1: the data interval holds the truth in >= 90 % of phases"
	wcov=$(awk '$9 <= $7 + 8 && $7 <= $10 {n++} END {print n + 0}' "$TMP/$1.ph")
	between "$wcov" $(($2 * 9 / 10)) "$2" "$1: the write interval holds the truth in >= 90 % of phases"
	set -- $(grep '^total' "$TMP/$1.cmp") "$1"
	diag "${10}: data total $2: $3 [$4, $5]; write total $6: $7 [$8, $9]"
	[ "$4" -le $(($2 + 64)) ] && [ "$2" -le "$5" ] && [ "$8" -le $(($6 + 64)) ] && [ "$6" -le "$9" ]
	ok $? "${10}: the totals' intervals hold the truth"
}

# A phase's half-width of the data estimate, median over the phases, in
# tenths of a percent.
median_hw() {
	awk '$3 > 0 {print int(1000 * ($5 - $4) / 2 / $3)}' "$TMP/$1.ph" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

# Each phase writes a share of its pages drawn from 0 to 100 %; 1/16 of
# 256 MiB, the pages dropped after each phase.
run on on 1/16 256 20 1000 20000 7 drop
judge on 20 20
run alt alternate 1/16 256 20 1000 20000 7 drop
# Interval k + 1 counts all writes when k + 1 is even (phase i is sample i + 1).
judge alt 20 10
run off off 1/16 256 20 1000 20000 7 drop
judge off 20 0
hw_on=$(median_hw on)
hw_off=$(median_hw off)
diag "median half-width of the phases' data estimates: $hw_on/1000 with all writes, $hw_off/1000 without"
[ "$hw_on" -lt "$hw_off" ]
ok $? "all writes narrow the data estimates (median half-width $hw_on against $hw_off, in thousandths)"

# Without drop: the pages stay populated from phase to phase, and pages
# written once are read later (a write's bit must not leak into a later
# phase's count).
run keep on 1/64 256 16 2000 30000 11
judge keep 16 16

# Writes racing the ticks (tests/progs/awstress): two threads write 16,384
# pages once each, in scattered order, reading pages of both shares, while
# the clock ticks every millisecond; through a change of level at the 20th
# interval, finer (1/64 then 1/16: the pages joining the sample were alone,
# and a fault in the tick's write window splits their writes) and coarser
# (1/4 then 1/64: the pages leaving it are opened by the tick and written
# before its harvest).  No write may be lost: the anonymous memory's total
# is the pages written.  A write may be counted twice: the kernel clears a
# page's write protection before the store that faulted is retried, and a
# harvest in between reports it, protects it again, and the store faults
# again (docs/backends.md, "uffd-wp"): about 1 in 1,000 writes at 1 ms
# ticks, so the samples' writes add up to the pages written plus at most
# 0.5 %.  Five runs each.
for cfg in "64:20 1/16" "4:20 1/64"; do
	set -- $cfg
	bad=0
	for i in 1 2 3 4 5; do
		rm -f "$TMP/st.jsonl"
		env WSS_TRACK_MODE=sampled WSS_TRACK_SAMPLE_RATE=$2 WSS_TEST_FIRST_RATE=$1 WSS_TEST_ALL_WRITES=on \
			WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/st.jsonl" LD_PRELOAD="$WSS_LIB" \
			"$PROGS/awstress" 2 64 >"$TMP/st.out" 2>"$TMP/st.err" || bail "awstress failed: $(cat "$TMP/st.err")"
		res=$(python3 - "$TMP/st.out" "$TMP/st.jsonl" <<'EOF2'
import json, sys
want = int(open(sys.argv[1]).read().split()[1])
rs = [json.loads(l) for l in open(sys.argv[2])]
ss = [r for r in rs if r["type"] == "sample"]
got = sum(r.get("kinds", {}).get("anon", {}).get("write", 0) for r in ss)
aw = all(r.get("sampled", {}).get("all_writes") for r in ss)
rates = sorted(set(r["rate"] for r in ss))
total = [r for r in rs if r["type"] == "summary"][-1]["kinds"]["anon"]["total"]
print("%d samples at rates %s, all writes in every one: %s; anonymous writes %d of %d, total %d" % (len(ss), rates, aw, got, want, total))
sys.exit(0 if aw and want <= got <= want + want // 200 and total == want and len(rates) == 2 else 1)
EOF2
) || bad=$((bad + 1))
		diag "$1 then $2, run $i: $res"
	done
	is "$bad" 0 "writes racing 1 ms ticks through a change of level ($1 then $2): none lost, in 5 runs"
done

# Pages written and gone within their interval (tests/progs/awgone: 4,096
# pages kept, then three intervals each writing 8,192 new pages and giving
# them up, each mapping at an address of its own).  Under all writes their
# writes are harvested before they go (munmap, a mapping made over them,
# mremap), so the run's write total is a count of every page written, and
# the data total holds it; before, those outside the sample counted in
# neither total.  Without all writes the data total's interval holds them
# too: an mremap in a sampled interval counts the pages moved as gone from
# their old addresses (membership is by address: carried to the new ones,
# a member's state landed on non-members, and the data total read 5,520
# [4952, 6135] for 28,672 pages).
for run in "on munmap" "on fixed" "on mremap" "off munmap" "off mremap"; do
	set -- $run
	rm -f "$TMP/g.jsonl"
	env WSS_TRACK_MODE=sampled WSS_TRACK_SAMPLE_RATE=1/16 WSS_TEST_SAMPLING_SEED=12345 WSS_TEST_ALL_WRITES=$1 \
		WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/g.jsonl" LD_PRELOAD="$WSS_LIB" \
		"$PROGS/awgone" $2 4096 8192 3 >"$TMP/g.out" 2>"$TMP/g.err" || bail "awgone $2 failed: $(cat "$TMP/g.err")"
	res=$(python3 - "$1" "$TMP/g.out" "$TMP/g.jsonl" <<'EOF2'
import json, sys
want = int(open(sys.argv[2]).read().split()[1])
t = [r for r in map(json.loads, open(sys.argv[3])) if r["type"] == "summary"][-1]
w, (wl, wh) = t["write"]["total"], t["write"]["total_ci"]
d, (dl, dh) = t["data"]["total"], t["data"]["total_ci"]
print("written %d: write total %d [%d, %d], data total %d [%d, %d]" % (want, w, wl, wh, d, dl, dh))
# the program's own data page or two: 8 of slack
good = dl <= want + 8 and want <= dh
if sys.argv[1] == "on":
    good = good and want <= w <= want + 8 and wl == w == wh
sys.exit(0 if good else 1)
EOF2
)
	ok $? "all writes $1, pages written then gone ($2): $([ $1 = on ] && echo "the write total counts them all" || echo "the data total holds them") ($res)"
done

# wss report says which samples counted all writes, in text and JSON.
count_aw() { python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
ss = [r for r in rs if r["type"] == "sample" and r["rate"] > 1]
print(sum(1 for r in ss if r["sampled"].get("all_writes")), len(ss))' "$1"; }
set -- $(count_aw "$TMP/on.jsonl")
"$WSS" report "$TMP/on.jsonl" | grep -qx "all writes $1 of $2 sampled samples counted every page's writes: their writes are counts"
ok $? "wss report: the samples that counted all writes ($1 of $2)" || "$WSS" report "$TMP/on.jsonl" | sed -n '1,12p' | sed 's/^/# /'
set -- $(count_aw "$TMP/alt.jsonl")
is "$("$WSS" report --json "$TMP/alt.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sampling"]["all_writes_samples"])')" "$1" \
	"wss report --json: sampling.all_writes_samples ($1 of $2, every other one)"

# The switch is the engine's: a bad value is one line, and the program
# runs untracked (a bare LD_PRELOAD's bad setting).
WSS_TEST_ALL_WRITES=yes LD_PRELOAD="$WSS_LIB" "$PROGS/lifecycle" exit3 2>"$TMP/bad.err"
is "$?:$(cat "$TMP/bad.err")" '3:wss: WSS_TEST_ALL_WRITES: expected on, off or alternate, got "yes"; the program runs untracked' \
	"WSS_TEST_ALL_WRITES=yes: one line, the program runs (its status 3)"

# Under auto the policy turns all writes on for a program that writes what
# it touches, within the budget (pageramp: about 300 pages written every
# 100 ms, a first write 1-2 us to the kernel): its samples count all writes
# once it is sampled.  On a loaded machine the probe may read costs high
# enough to keep it off: reported, not failed.
WSS_TRACK_MODE=auto WSS_SESSION_OUTPUT="$TMP/ramp.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/pageramp" 1 >/dev/null 2>"$TMP/ramp.err"
is $? 0 "pageramp runs under the defaults"
n=$(python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
print(sum(1 for r in rs if r["type"] == "sample" and r.get("sampled", {}).get("all_writes")))' "$TMP/ramp.jsonl")
if [ "$n" -gt 0 ]; then
	ok 0 "auto counted all writes in $n of pageramp's sampled intervals"
else
	todo 1 "the probe read kernel write faults too costly on this machine" "auto counts all writes for pageramp"
fi
done_testing
