#!/bin/sh
# The page trace (session.trace, docs/trace-format.md), read back by an
# independent reader (tests/tap/tracedump.py): per interval exactly the pages the
# profile's sample counted, with their write bits and first touchers; any
# window recomputed from it equals the live one; a sampled trace lists the
# sample's members; trace_max and a full disk stop it cleanly; a killed
# program leaves whole records; a forked child writes its own; the program
# runs as natively; bad settings are refused.
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
TRACE="python3 $top_srcdir/tests/tap/tracedump.py"
plan 39

# phases SCENARIO WINDOW NAME [ENV...]: manual ticks, a trace beside $TMP/NAME.jsonl.
phases() {
	sc=$1 win=$2 name=$3
	shift 3
	env "$@" WSS_SESSION_TIME_BASE=manual WSS_SESSION_INTERVAL=100ms WSS_SESSION_WINDOW="$win" \
		WSS_SESSION_TRACE=1 WSS_SESSION_OUTPUT="$TMP/$name.jsonl" LD_PRELOAD="$WSS_LIB" \
		"$PROGS/phases" "$sc" >"$TMP/$name.out" 2>"$TMP/$name.err" || bail "phases $sc failed: $(cat "$TMP/$name.err")"
	$TRACE dump "$TMP/$name.trace" >"$TMP/$name.dump" || bail "the trace of $name does not read: $(cat "$TMP/$name.dump")"
}

# compare PROFILE DUMP WINDOW: each sample's data_pages, write_pages and
# per-thread pages against the union of the trace's last WINDOW records.
compare() {
	python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
prof = [json.loads(l) for l in open(sys.argv[1])]
recs = [json.loads(l) for l in open(sys.argv[2])]
w = int(sys.argv[3])
iv = {r["seq"]: r for r in recs if r["type"] == "I"}
samples = [r for r in prof if r["type"] == "sample"]
assert samples and len(iv) == len(samples), (len(iv), len(samples))
# Replay the records: each page's newest touch (interval, written, tid) and
# its latest write, applying each interval's events (pages gone, pages
# moved with their history) before its pages.
state = {}   # page -> [newest interval, tid, latest written interval]
by_seq = {}
for k in sorted(iv):
    for ev in iv[k]["events"]:
        if ev[0] == "gone":
            for pg in range(ev[1], ev[1] + ev[2]):
                state.pop(pg, None)
        else:
            moved = {pg - ev[1]: state.pop(pg) for pg in range(ev[1], ev[1] + ev[3]) if pg in state}
            for d, v in moved.items():
                state[ev[2] + d] = v
    for pg, wr, tid in iv[k]["pages"]:
        old = state.get(pg, [0, 0, 0])
        state[pg] = [k, tid, k if wr else old[2]]
    by_seq[k] = {pg: list(v) for pg, v in state.items()}
for s in samples:
    k = s["seq"]
    newest = {pg: (v[0], 0, v[1]) for pg, v in by_seq[k].items() if v[0] > k - w}
    written = {pg for pg, v in by_seq[k].items() if v[2] > k - w}
    assert len(newest) == s["data_pages"], ("data", k, len(newest), s["data_pages"])
    if "write_pages" in s:
        assert len(written) == s["write_pages"], ("write", k, len(written), s["write_pages"])
    per = {}
    for pg, (j, wr, tid) in newest.items():
        per[tid] = per.get(tid, 0) + 1
    for t in s["threads"]:
        assert per.get(t["tid"], 0) == t["data_pages"], ("thread", k, t["tid"], per, t)
    assert iv[k]["t_ns"] == s["t_ns"] and iv[k]["level"] == 0, iv[k]
print("ok")
EOF
}

# ---- exact, per interval and per thread ----
phases threads 100ms thr
compare "$TMP/thr.jsonl" "$TMP/thr.dump" 1 >"$TMP/cmp" 2>&1
ok $? "threads: each record holds the sample's pages, write bits and each thread's pages" || sed 's/^/# /' "$TMP/cmp"
grep -q '"type": "E", "reason": 1' "$TMP/thr.dump"; ok $? "and ends with an end record (the run ended)"
grep -qx '{"type":"trace","file":"thr.trace"}' "$TMP/thr.jsonl"; ok $? "the profile names its trace"
python3 - "$TMP/thr.jsonl" "$TMP/thr.trace" <<'EOF'
import json, os, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '"type":"summary"' in l][0]["trace"]
n = sum(1 for l in open(sys.argv[1]) if '"type":"sample"' in l)
assert s["file"] == "thr.trace" and s["records"] == n and s["last"] == n and s["stopped"] is None, s
assert s["bytes"] == os.path.getsize(sys.argv[2]), s
EOF
ok $? "the summary says its file, records, size and that it did not stop"
python3 - "$TMP/thr.dump" <<'EOF'
import json, sys
tids = {p[2] for l in open(sys.argv[1]) for p in json.loads(l).get("pages", [])}
assert len(tids - {0}) >= 3, tids
EOF
ok $? "first touchers: the three threads"

# ---- any window after the fact ----
phases window 300ms win
compare "$TMP/win.jsonl" "$TMP/win.dump" 3 >"$TMP/cmp" 2>&1
ok $? "window 3: the union of the last 3 records is each sample's working set" || sed 's/^/# /' "$TMP/cmp"
# wss window after the fact equals a live run with that window, sample for
# sample (the scenario unmaps and remaps: the trace's events carry it).
phases window 100ms win1
"$WSS" window "$TMP/win1.jsonl" --window 3 --csv >"$TMP/win1.csv" 2>"$TMP/win1.err"
is $? 0 "wss window --window 3 of a one-interval run: exit 0"
tail -n +2 "$TMP/win1.csv" | awk -F, '{print $1, $3, $6}' >"$TMP/after"
$PROFILE samples "$TMP/win.jsonl" | awk '{print $1, $2, $6}' >"$TMP/live"
cmp -s "$TMP/after" "$TMP/live" && [ -s "$TMP/live" ]
ok $? "equals the live --window 3 run's data and write pages, sample for sample" || diff "$TMP/after" "$TMP/live" | sed 's/^/# /'
phases basic 100ms bas
compare "$TMP/bas.jsonl" "$TMP/bas.dump" 1 >"$TMP/cmp" 2>&1
ok $? "basic: record for record" || sed 's/^/# /' "$TMP/cmp"
phases basic 100ms basmp WSS_TRACK_BACKEND=mprotect
compare "$TMP/basmp.jsonl" "$TMP/basmp.dump" 1 >"$TMP/cmp" 2>&1
ok $? "mprotect: record for record, no write bits" || sed 's/^/# /' "$TMP/cmp"
grep -q '"sets": 0' "$TMP/basmp.dump" && ! grep -q '"sets": [123]' "$TMP/basmp.dump"
ok $? "and its records say writes are not told apart"

# ---- sampled ----
"$WSS" run --mode sampled --sample-rate 1/8 --trace -o "$TMP/smp.jsonl" -- "$PROGS/pageramp" 2 >/dev/null 2>"$TMP/smp.err"
is $? 0 "sampled at 1/8 with --trace: exit 0"
$TRACE dump "$TMP/smp.trace" >"$TMP/smp.dump"; ok $? "the trace reads"
python3 - "$TMP/smp.jsonl" "$TMP/smp.dump" <<'EOF'
import json, sys
prof = [json.loads(l) for l in open(sys.argv[1])]
iv = {r["seq"]: r for r in map(json.loads, open(sys.argv[2])) if r["type"] == "I"}
n = 0
for s in (r for r in prof if r["type"] == "sample"):
    r = iv[s["seq"]]
    assert 1 << r["level"] == s["rate"] == 8, (r["level"], s["rate"])
    assert len(r["pages"]) == s["sampled"]["data"], (s["seq"], len(r["pages"]), s["sampled"])
    assert sum(p[1] for p in r["pages"]) == s["sampled"]["write"], s["seq"]
    n += len(r["pages"])
assert n > 50, n
EOF
ok $? "each record: level 3, the members the sample counted, their writes"

# ---- auto, the rate changing from interval to interval: each record at
# the level its sample was counted at ----
"$WSS" run --mode auto --overhead 0.5% --interval 20ms --trace -o "$TMP/auto.jsonl" -- "$PROGS/pageramp" 3 200 >/dev/null 2>&1
$TRACE dump "$TMP/auto.trace" >"$TMP/auto.dump"; ok $? "auto at 20 ms with a 0.5 % budget: the trace reads"
python3 - "$TMP/auto.jsonl" "$TMP/auto.dump" <<'EOF'
import json, sys
prof = [json.loads(l) for l in open(sys.argv[1])]
iv = {r["seq"]: r for r in map(json.loads, open(sys.argv[2])) if r["type"] == "I"}
rates, bad = set(), []
for s in (r for r in prof if r["type"] == "sample"):
    r = iv[s["seq"]]
    rates.add(s["rate"])
    want = s["sampled"]["data"] if "sampled" in s else s["data_pages"]
    if 1 << r["level"] != s["rate"] or len(r["pages"]) != want:
        bad.append((s["seq"], s["rate"], want, 1 << r["level"], len(r["pages"])))
assert not bad, bad
assert len(rates) >= 2, rates
EOF
ok $? "each record's level is its sample's rate, and it lists the members its sample counted"

# ---- the program runs as natively ----
"$PROGS/pageramp" 2 >"$TMP/native.out" 2>&1; nst=$?
"$WSS" run --trace -o "$TMP/pr.jsonl" -- "$PROGS/pageramp" 2 >"$TMP/pr.out" 2>"$TMP/pr.err"; st=$?
is "$st" "$nst" "with --trace: the program's exit status as natively"
cmp -s "$TMP/pr.out" "$TMP/native.out"; ok $? "and its output"
grep -Eq "^wss: trace: $TMP/pr.trace \([0-9]+ intervals, [0-9]+ pages, [0-9]+ bytes\)\$" "$TMP/pr.err"
ok $? "stderr says where the trace is and how big" || sed 's/^/# /' "$TMP/pr.err"

# ---- a name planted where the trace goes ----
# Another user's symbolic link at NAME.trace in a shared directory is never
# followed: the trace takes the next name, NAME.2.trace.
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null; then
	chmod 711 "$TMP" && mkdir "$TMP/shared" && chmod 1777 "$TMP/shared" || bail "cannot make a shared directory"
	echo secret >"$TMP/victim" && chmod 600 "$TMP/victim"
	runuser -u nobody -- ln -s "$TMP/victim" "$TMP/shared/pl.trace" || bail "nobody cannot plant a link"
	"$WSS" run --trace -o "$TMP/shared/pl.jsonl" -- "$PROGS/pageramp" 1 >/dev/null 2>"$TMP/pl.err"
	is "$?:$(cat "$TMP/victim"):$(stat -c %a "$TMP/victim")" "0:secret:600" \
		"a link planted at the trace's name: its target untouched"
	grep -qx '{"type":"trace","file":"pl.2.trace"}' "$TMP/shared/pl.jsonl" && $TRACE dump "$TMP/shared/pl.2.trace" >/dev/null
	ok $? "the trace is written under the next name, pl.2.trace"
else
	skip "not root: no other user to plant names"
	skip "not root: no other user to plant names"
fi

# ---- trace_max ----
"$WSS" run --trace --trace-max 4KiB --mode exact -o "$TMP/max.jsonl" -- "$PROGS/pageramp" 2 >/dev/null 2>"$TMP/max.err"
is $? 0 "--trace-max 4KiB: exit 0"
$TRACE dump "$TMP/max.trace" >"$TMP/max.dump"; ok $? "the trace reads"
sz=$(wc -c <"$TMP/max.trace")
[ "$sz" -le 4096 ]; ok $? "within 4 KiB ($sz bytes)"
python3 - "$TMP/max.jsonl" "$TMP/max.dump" <<'EOF'
import json, sys
d = [json.loads(l) for l in open(sys.argv[2])]
e = [r for r in d if r["type"] == "E"]
last = max(r["seq"] for r in d if r["type"] == "I")
assert len(e) == 1 and e[0]["reason"] == 2 and e[0]["last"] == last, e
t = [json.loads(l) for l in open(sys.argv[1]) if '"type":"summary"' in l][0]["trace"]
n = sum(1 for l in open(sys.argv[1]) if '"type":"sample"' in l)
assert t["stopped"] == "trace_max" and t["last"] == last < n, (t, n)
EOF
ok $? "it ends with a trace_max end record; the summary says where it stopped, the profile goes on"
grep -Eq "^wss: trace: .*; stopped after sample [0-9]+: session.trace_max reached\$" "$TMP/max.err"
ok $? "and stderr says so"
"$WSS" report "$TMP/max.jsonl" | grep -Eqx "trace      max.trace \([0-9]+ intervals, [0-9]+ pages, [0-9]+ bytes\); stopped after sample [0-9]+: session.trace_max reached; wss heatmap, window, mrc, simulate and replay read it"
ok $? "wss report says where the trace is and that it stopped"
"$WSS" report --json "$TMP/max.jsonl" | python3 -c '
import json, sys
t = json.load(sys.stdin)["trace"]
assert t["file"] == "max.trace" and t["stopped"] == "trace_max" and t["records"] > 0, t'
ok $? "and --json has it too"

# ---- killed ----
WSS_SESSION_TRACE=1 WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/kill.jsonl" LD_PRELOAD="$WSS_LIB" \
	"$PROGS/pageramp" 1000 >/dev/null 2>&1 &
pid=$!
sleep 1
kill -KILL $pid
wait $pid 2>/dev/null
$TRACE dump "$TMP/kill.trace" >"$TMP/kill.dump"; ok $? "a killed program's trace reads"
python3 - "$TMP/kill.dump" <<'EOF'
import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
assert d[-1]["type"] == "status" and not d[-1]["end"] and d[-1]["records"] >= 5, d[-1]
seqs = [r["seq"] for r in d if r["type"] == "I"]
assert seqs == list(range(1, len(seqs) + 1)), seqs[:10]
EOF
ok $? "whole records, one per interval from the first, no end record"

# ---- a forked child writes its own ----
WSS_SESSION_TIME_BASE=manual WSS_SESSION_TRACE=1 WSS_SESSION_OUTPUT="$TMP/fork.%p.jsonl" LD_PRELOAD="$WSS_LIB" \
	"$PROGS/forker" manual >"$TMP/fork.out" 2>&1
is $? 0 "forker manual with a trace: exit 0"
child=$(awk '$1 == "child" {print $2}' "$TMP/fork.out")
[ -s "$TMP"/fork.*.d/"fork.$child.trace" ] && [ "$(ls "$TMP"/fork.*.trace "$TMP"/fork.*.d/*.trace | wc -l)" = 2 ]
ok $? "parent and child each wrote a trace beside their profile (the child's in the session directory)"
fr=0
for f in "$TMP"/fork.*.jsonl "$TMP"/fork.*.d/*.jsonl; do
	$TRACE dump "${f%.jsonl}.trace" >"$TMP/fork.dump" && compare "$f" "$TMP/fork.dump" 1 >"$TMP/cmp" 2>&1 || fr=1
done
ok $fr "each record for record with its own profile" || sed 's/^/# /' "$TMP/cmp"

# ---- bad settings ----
"$WSS" run --trace-max 3XB -- /bin/true 2>"$TMP/bad.err"
is $? 125 "--trace-max 3XB: exit 125"
grep -qx 'wss: --trace-max: session.trace_max: not a size: "3XB" (a number and B, KiB, MiB, GiB or TiB, e.g. "256MiB")' "$TMP/bad.err"
ok $? "one line saying what and where" || sed 's/^/# /' "$TMP/bad.err"
WSS_SESSION_TRACE_MAX=1KiB "$WSS" run -- /bin/true 2>"$TMP/bad2.err"
is $? 125 "WSS_SESSION_TRACE_MAX=1KiB: exit 125 (under 4 KiB)"

# ---- a full disk ----
if [ "$(id -u)" != 0 ]; then
	skip "not root: cannot mount a tmpfs"; skip "not root"; skip "not root"
elif ! mkdir "$TMP/mnt" || ! mount -t tmpfs -o size=96k tmpfs "$TMP/mnt" 2>"$TMP/mount.err"; then
	for i in 1 2 3; do skip "mount -t tmpfs failed: $(cat "$TMP/mount.err")"; done
else
	trap 'umount "$TMP/mnt" 2>/dev/null; rm -rf "$TMP"' EXIT
	"$WSS" run --trace --mode exact --interval 1ms -o "$TMP/mnt/full.jsonl" -- "$PROGS/pageramp" 3 >"$TMP/full.out" 2>"$TMP/full.err"
	is $? 0 "a trace on a full file system: the program's exit status as natively"
	"$PROGS/pageramp" 3 >"$TMP/n3.out" 2>&1
	cmp -s "$TMP/full.out" "$TMP/n3.out"; ok $? "and its output"
	$TRACE check "$TMP/mnt/full.trace"; ok $? "the trace is whole records up to where the disk refused"
	umount "$TMP/mnt"
fi
