#!/bin/sh
# track.code: the code working set.  Exact counts under manual ticks
# (tests/progs/codepages: page-aligned functions run K at a time, two
# threads, a dlopen'd library before and after dlclose), the header and
# the stderr line, the flag and the config key, and real programs run with
# it (output and exit status as without wss, a plausible code series).
. "$top_srcdir/tests/tap/tap.sh"
LIBS=$PROGS/.libs
[ -f "$LIBS/libcodelib.so" ] || bail "test libraries not built"

WSS_TRACK_CODE=true WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/c.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/codepages" "$LIBS/libcodelib.so" >"$TMP/c.out" 2>"$TMP/c.err"
is $? 0 "codepages runs under track.code" || sed 's/^/# /' "$TMP/c.err"
$PROFILE check "$TMP/c.jsonl"; ok $? "the profile is complete and valid"
python3 - "$TMP/c.jsonl" >"$TMP/c.samples" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("type") == "sample":
        print("s", r["seq"], r.get("code_pages", "-"))
        for t in r["threads"]:
            print("t", r["seq"], t["tid"], t.get("code_pages", "-"))
PY
code() { awk -v s="$1" '$1 == "s" && $2 == s {print $3}' "$TMP/c.samples"; }
tcode() { awk -v s="$1" -v t="$2" '$1 == "t" && $2 == s && $3 == t {print $4}' "$TMP/c.samples"; }

# The baseline: what a phase of no function runs (main's page, the PLT's,
# the runner's).  Every phase runs it and its K functions' pages.
base=$(code "$(awk '$1 == "code" && $3 == 0 {print $2; exit}' "$TMP/c.out")")
between "${base:-0}" 1 5 "the baseline is a few pages of main's ($base)"
while read -r kind seq n extra; do
	case $kind in
	code) is "$(code "$seq")" $((base + n)) "interval $seq: $n functions' pages run, and the baseline" ;;
	thread) is "$(tcode "$seq" "$n")" "$extra" "interval $seq: thread $n ran its body's page and its functions'" ;;
	idle) idle=$(code "$seq") ;;
	lib)
		is "$(code "$seq")" $((idle + n)) "interval $seq ($extra load): the dlopen'd library's $n pages counted"
		after=$((seq + 1))
		is "$(code "$after")" "$base" "interval $after, after dlclose: none of the library's pages" ;;
	esac
done <"$TMP/c.out"
grep -q "^lib .* again" "$TMP/c.out"; ok $? "the library loaded again after dlclose ran"

# Races: four threads run the functions while the library is loaded,
# run and closed 6,000 times, under 1 ms ticks (arming, faults, ranges
# leaving and coming back, a library loading where it was).  Then the
# data tests' own churn (dlprog: two libraries loading where the other
# was, a dlopen that fails after mapping) with code tracked.
want=$("$PROGS/codepages" stress "$LIBS/libcodelib.so" 600000)
WSS_TRACK_CODE=true WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/st.jsonl" \
	LD_PRELOAD="$WSS_LIB" timeout 300 "$PROGS/codepages" stress "$LIBS/libcodelib.so" 600000 >"$TMP/st.out" 2>"$TMP/st.err"
is "$? $(cat "$TMP/st.out")" "0 $want" "stress under 1 ms ticks: exit 0 and the native checksum" || sed 's/^/# /' "$TMP/st.err" | head -5
$PROFILE check "$TMP/st.jsonl"; ok $? "stress: the profile is complete and valid"
n=$($PROFILE get "$TMP/st.jsonl" summary.samples)
between "${n:-0}" 3 100000000 "stress: ticks ran during it ($n samples)"
if [ -f "$LIBS/libdldata1.so" ]; then
	want=$("$PROGS/dlprog" churn "$LIBS" 300 2>&1)
	WSS_TRACK_CODE=true WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/ch.jsonl" \
		LD_PRELOAD="$WSS_LIB" timeout 300 "$PROGS/dlprog" churn "$LIBS" 300 >"$TMP/ch.out" 2>"$TMP/ch.err"
	is "$? $(cat "$TMP/ch.out")" "0 $want" "dlopen churn with code tracked: exit 0, the native output"
else
	skip "dlprog's libraries not built"
fi

# Where code runs that a fault must not stop, under 1 ms ticks: a signal
# handler run from sigsuspend with SIGSEGV among the blocked signals, the
# program's own patch of its text, children that dlclose while the
# parent's threads run code, runs of a library racing dlclose's of
# another (each takes the library's code out of tracking).
for m in suspend patch "forkclose $LIBS/libcodelib.so" "retry $LIBS/libcodelib.so $LIBS/libdldata1.so 5000"; do
	set -- $m
	want=$("$PROGS/codepages" "$@" 2>&1)
	got=$(WSS_TRACK_CODE=true WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/m.%p.jsonl" WSS_REPORT_SUMMARY=false \
		LD_PRELOAD="$WSS_LIB" timeout 300 "$PROGS/codepages" "$@" 2>&1)
	is "$? $got" "0 $want" "$1 under track.code and 1 ms ticks: as natively"
done

# The header: what is tracked, what is not and why.
is "$($PROFILE get "$TMP/c.jsonl" header.code.tracked)" true "header: code.tracked"
for o in libc.so.6 libwss.so; do
	python3 -c '
import json, sys
h = json.loads(open(sys.argv[1]).readline())
sys.exit(0 if any(x["object"] == sys.argv[2] and x["why"] for x in h["code"]["excluded"]) else 1)' "$TMP/c.jsonl" $o
	ok $? "header: $o is excluded, with the reason"
done
total=$($PROFILE get "$TMP/c.jsonl" summary.code.total)
peak=$($PROFILE get "$TMP/c.jsonl" summary.code.peak)
is "$peak" $((base + 64)) "summary: the peak is the 64-function phase"
[ "${total:-0}" -ge $((64 + 17 + 2)) ]; ok $? "summary: the total holds every function's page and the library's ($total)"
grep -q "^wss: insn avg/peak/total: [0-9.]*/$peak/$total pages" "$TMP/c.err"; ok $? "the stderr summary has the insn line"
# Hot code pages: f00..f03 ran in the phases of 8, 32, 16, 64 and 4
# functions and in the first thread's body: 6 intervals each.
"$WSS" report "$TMP/c.jsonl" >"$TMP/c.report" 2>&1
is $? 0 "wss report reads it"
grep -q "^Insn avg/peak/total: " "$TMP/c.report"; ok $? "report: the Insn line"
grep -q "^Timeline: code pages per sample" "$TMP/c.report"; ok $? "report: the code timeline"
n=$(sed -n '/^Hot code pages/,/^$/p' "$TMP/c.report" | grep -c ' 6  codepages  *f0[0-3] (.*codepages.c:')
is "$n" 4 "report: hot code pages f00..f03, 6 intervals each, by name"
"$WSS" report --json "$TMP/c.jsonl" | python3 -c '
import json, sys
r = json.load(sys.stdin)
hc = r["hot_code"]
assert any(h["function"]["function"] == "f00" and h["intervals"] == 6 for h in hc), hc[:6]
assert r["summary"]["code"]["peak"] > 64
print("ok")' >"$TMP/c.json.out" 2>&1
is "$(cat "$TMP/c.json.out")" ok "report --json: hot_code and summary.code"

# The exports carry the code series: a code_pages column last in the CSV
# (the process rows equal the samples', the thread rows sum to them), a
# "code" counter in the Perfetto JSON.
"$WSS" export --format csv "$TMP/c.jsonl" -o "$TMP/c.csv"
is $? 0 "wss export --format csv of a code profile"
python3 - "$TMP/c.csv" "$TMP/c.samples" >"$TMP/csv.out" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = {l.split()[1]: l.split()[2] for l in open(sys.argv[2]) if l.startswith("s ")}
proc = {r["seq"]: r["code_pages"] for r in rows if r["scope"] == "process"}
threads = {}
for r in rows:
    if r["scope"] == "thread":
        threads[r["seq"]] = threads.get(r["seq"], 0) + int(r["code_pages"])
bad = [s for s in want if proc.get(s) != want[s] or threads.get(s, 0) != int(want[s])]
print("ok" if not bad and want else "bad %s" % bad[:5])
PY
is "$(cat "$TMP/csv.out")" ok "CSV: code_pages of every sample, the threads' summing to it"
n=$("$WSS" export --format perfetto "$TMP/c.jsonl" | grep -c '"name":"code"')
[ "$n" -gt 0 ]; ok $? "Perfetto JSON: a code counter ($n events)"

# The web page: the code series in the summary and on the timeline.
"$WSS" report --html "$TMP/c.html" "$TMP/c.jsonl"
is $? 0 "wss report --html of a code profile"
python3 "$top_srcdir/tests/tap/browser.py" "$TMP/c.html" >"$TMP/b.out" 2>&1
case $? in
77) skip "no Chromium"; skip "no Chromium" ;;
*)
	grep -q "^errors 0$" "$TMP/b.out"; ok $? "the page renders without an error in Chromium"
	grep -q "^summary_text .*| Insn (code) [0-9.]* $peak $total " "$TMP/b.out"; ok $? "its summary has the Insn (code) row: peak $peak, total $total" ;;
esac

# Peaks of the code series: 30 intervals of 4 functions, one of 64.
WSS_TRACK_CODE=true WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/pk.jsonl" WSS_REPORT_SUMMARY=false \
	LD_PRELOAD="$WSS_LIB" "$PROGS/codepages" peak >"$TMP/pk.out" 2>&1
is $? 0 "codepages peak runs"
want=$(awk '$1 == "peak" {print $2}' "$TMP/pk.out")
got=$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "peak" and r["series"] == "code":
        print(r["seq"], r["value"])' "$TMP/pk.jsonl")
is "${got%% *}" "$want" "a peak of the code series at the interval that ran 64 functions ($got)"
"$WSS" report "$TMP/pk.jsonl" | grep -q "code"; ok $? "wss report shows it"

# Off by default: no code series, no insn line.
WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/off.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/codepages" "$LIBS/libcodelib.so" >/dev/null 2>"$TMP/off.err"
is $? 0 "codepages runs without track.code"
grep -q code_pages "$TMP/off.jsonl"; is $? 1 "off by default: no code_pages in the profile"
grep -q "insn" "$TMP/off.err"; is $? 1 "off by default: no insn line"

# The flag and the session file.
"$WSS" run --code -o "$TMP/flag.jsonl" -- /bin/true 2>/dev/null
is "$($PROFILE get "$TMP/flag.jsonl" header.track.code)" true "wss run --code sets track.code"
printf '[track]\ncode = true\n' >"$TMP/s.toml"
"$WSS" run -c "$TMP/s.toml" -o "$TMP/toml.jsonl" -- /bin/true 2>/dev/null
is "$($PROFILE get "$TMP/toml.jsonl" header.code.tracked)" true "track.code = true in a session file"
printf '[track]\ncode = "yes"\n' >"$TMP/bad.toml"
"$WSS" run -c "$TMP/bad.toml" -- /bin/true 2>"$TMP/bad.err"
is $? 125 "track.code = \"yes\": exit 125"
grep -q "bad.toml:2:8: " "$TMP/bad.err"; ok $? "and the error says where ($(cat "$TMP/bad.err"))"

# Real programs: output and exit status as without wss, and a code series
# that is plausible against the text they have.
text_pages() { size -A "$1" 2>/dev/null | awk '$1 == ".text" {print int($2 / 4096) + 1}'; }
realprog() { # NAME CMD...
	name=$1
	shift
	want=$("$@" 2>&1 </dev/null | cksum)
	got=$("$WSS" run --code -o "$TMP/$name.jsonl" -- "$@" 2>"$TMP/$name.err" </dev/null | cksum)
	is "$got" "$want" "$name under --code: output as without wss"
	$PROFILE check "$TMP/$name.jsonl"; ok $? "$name: the profile is valid"
	peak=$($PROFILE get "$TMP/$name.jsonl" summary.code.peak)
	total=$($PROFILE get "$TMP/$name.jsonl" summary.code.total)
	diag "$name: code peak $peak, total $total pages"
	[ "${peak:-0}" -gt 0 ] && [ "${total:-0}" -ge "${peak:-0}" ]; ok $? "$name: a code series ($peak pages at the peak, $total in all)"
}
seq 1 200000 | sort -R >"$TMP/words"
realprog sort sort "$TMP/words"
# The interpreter itself, not a wrapper script in PATH (pyenv's shims).
py=$(readlink -f /usr/bin/python3 2>/dev/null || readlink -f "$(command -v python3)")
realprog python3 "$py" -c 'import json; print(sum(len(json.dumps({"a": i})) for i in range(200000)))'
# python3's code: a part of its text, never more.
tp=$(text_pages "$py")
if [ -n "$tp" ] && [ "$tp" -gt 0 ]; then
	[ "$total" -le $((tp + 64)) ]; ok $? "python3: its code total ($total pages) is within its text ($tp pages) and its libraries'"
	[ "$total" -ge 50 ]; ok $? "python3: and runs more than a handful of pages ($total)"
else
	skip "python3's text size unknown (no size(1))"
	skip "python3's text size unknown"
fi
if command -v sqlite3 >/dev/null; then
	realprog sqlite3 sqlite3 :memory: 'create table t(a); with recursive c(x) as (select 1 union all select x+1 from c limit 100000) insert into t select x from c; select count(*), sum(a) from t;'
else
	skip "sqlite3 not installed"
	skip "sqlite3 not installed"
	skip "sqlite3 not installed"
fi
done_testing
