#!/bin/sh
# wss report's first paragraph (cli/out/diagnosis.c): its figures against the
# profile's own (percentiles of the samples, the summary's peak and total,
# wss mrc's 99 % size, the allocation sites' idle pages, the peak's first
# touching function), in the text, the JSON and the HTML page alike.
. "$top_srcdir/tests/tap/tap.sh"
command -v python3 >/dev/null || bail "python3 is not installed"
plan 22
cd "$TMP" || bail "cd $TMP"

# allocsites, exact, manual ticks, 20 intervals: 64 MiB written every
# interval, 128 MiB written once at the start and then idle, with a trace.
"$WSS" run --time-base manual --mode exact --trace -o a.jsonl -- "$PROGS/allocsites" 20 >a.out 2>a.err ||
	bail "allocsites failed: $(cat a.err)"
"$WSS" report a.jsonl >a.txt 2>a.rerr || bail "wss report failed: $(cat a.rerr)"
"$WSS" report --json a.jsonl >a.json || bail "wss report --json failed"
test ! -s a.rerr; ok $? "the report says nothing on stderr"

# The paragraph: from the third line to the first blank one, at most 80
# columns a line.
awk 'NR >= 3 && /^$/ { exit } NR >= 3' a.txt >a.para
is "$(head -c 4 a.para)" "Half" "the report's first paragraph is the diagnosis"
is "$(python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' a.para | awk '{ print ($1 <= 80 && $1 > 60) }')" 1 \
	"wrapped at 80 columns (characters, not bytes)"

# The figures, computed here from the samples and the summary.
python3 - a.jsonl a.json >a.check <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
d = json.load(open(sys.argv[2]))["diagnosis"]
samples = [r for r in recs if r["type"] == "sample"]
whole = [s["data_pages"] for s in samples if not s.get("final")]
v = sorted(whole)
rank = lambda q: v[max(0, (len(v) * q + 99) // 100 - 1)]
summ = [r for r in recs if r["type"] == "summary"][0]
top = max(samples, key=lambda s: s["data_pages"])
print("p50", d["p50_pages"] == rank(50), d["p50_pages"], rank(50))
print("p95", d["p95_pages"] == rank(95), d["p95_pages"], rank(95))
print("p99", d["p99_pages"] == rank(99), d["p99_pages"], rank(99))
print("peak", d["peak_pages"] == summ["data"]["peak"] and d["peak_seq"] == top["seq"], d["peak_pages"], d["peak_seq"])
PY
is "$(awk '$1 == "p50" { print $2 }' a.check)" True "p50: the nearest-rank median of the whole intervals ($(grep p50 a.check))"
is "$(awk '$1 == "p95" { print $2 }' a.check)" True "p95 likewise ($(grep p95 a.check))"
is "$(awk '$1 == "p99" { print $2 }' a.check)" True "p99 likewise, the right-sizing figure with the p95 ($(grep p99 a.check))"
rs=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["diagnosis"]; print("{:,} {:,}".format(d["p95_pages"], d["p99_pages"]))' a.json)
is "$(sed -n 's/^Right-size: p95 \([0-9,]*\) pages .*, p99 \([0-9,]*\) pages .*/\1 \2/p' a.txt)" "$rs" "the figures' Right-size line: the p95 and p99 ($rs pages)"
is "$(awk '$1 == "peak" { print $2 }' a.check)" True "the peak: the summary's, in the largest sample ($(grep peak a.check))"
# Every interval writes the hot block's 16,384 pages and the small
# objects' ~1,563: the median holds them, and the first interval (the
# cold block's 32,768 more) is the peak.
p50=$(awk '$1 == "p50" { print $3 }' a.check)
ok "$([ "$p50" -ge 17900 ] && [ "$p50" -le 18600 ] && echo 0 || echo 1)" "p50 is the hot block and the small objects ($p50 pages)"
is "$(awk '$1 == "peak" { print $4 }' a.check)" 1 "the peak is the first interval"
# The same 99 % size as wss mrc's.
mrc=$("$WSS" mrc --json --no-opt a.jsonl | python3 -c 'import json, sys; print(json.load(sys.stdin)["lru_hit_sizes"]["99"])')
is "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["diagnosis"]["lru_99_pages"])' a.json)" "$mrc" \
	"the LRU size that holds 99 % of re-touches is wss mrc's ($mrc pages)"
# One line, the no-break spaces between numbers and units made plain.
tr '\n' ' ' <a.para | sed 's/\xc2\xa0/ /g' >a.line
grep -q "A memory of [0-9.]* MiB ($(python3 -c 'import sys; print(format(int(sys.argv[1]), ","))' "$mrc") pages) kept by LRU" a.line
ok $? "and the text says it"
grep -q "Every page was counted (exact mode)\." a.line
ok $? "exact mode (manual ticks: no cost to weigh against the program's time)"
grep -q "128.0 MiB (32,768 pages) allocated at cold_alloc (\(\.\./\)*tests/progs/allocsites.c:[0-9]*) was idle at the end" a.line
ok $? "the idle allocation site: the cold block, exactly" || sed 's/^/# /' a.para
grep -q "Next: wss heatmap a.jsonl" a.line; ok $? "what to try next, with a trace"
# The HTML page opens with the same words (its embedded JSON).
"$WSS" report --html a.html a.jsonl 2>/dev/null || bail "wss report --html failed"
python3 - a.html a.json <<'PY' >a.same
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
want = json.load(open(sys.argv[2]))["diagnosis"]["text"]
m = re.search(r'"diagnosis":("(?:[^"\\]|\\.)*")', page)
got = json.loads(m.group(1)).replace("\u00a0", " ") if m else None
print(got == want)
PY
is "$(cat a.same)" True "the HTML page has the same paragraph"

# The peak's code: bursty's sweep, with a stack (exact, manual ticks).
WSS_TRACK_MODE=exact WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT=b.jsonl LD_PRELOAD="$WSS_LIB" "$PROGS/bursty" \
	>/dev/null 2>&1 || bail "bursty failed"
"$WSS" report --json b.jsonl >b.json || bail "wss report --json failed"
# (The source's path as the build saw it: from a separate build directory,
# make distcheck's, it starts ../../.)
is "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["diagnosis"]["peak_code"])' b.json | sed 's/:[0-9]*)$/)/; s|(\(\.\./\)*|(|')" \
	"sweep (tests/progs/bursty.c)" "the peak's first touches: bursty's sweep, with its source line"
# No trace: the next step is to record one; a moved profile whose trace
# stayed behind is no error.
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["diagnosis"]["text"])' b.json | grep -q "Next: wss run --trace records a page trace"
ok $? "no trace: the paragraph says how to record one"
mkdir moved && cp a.jsonl moved/ && "$WSS" report --json moved/a.jsonl >m.json 2>m.err
is "$?:$(wc -c <m.err):$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["diagnosis"]["lru_99_pages"])' m.json)" \
	"0:0:None" "a profile moved without its trace: no size, no error"
# A run cut before its first sample (its own exit_group, as Go's): no
# percentiles to size by, so no Right-size line (it printed 2^64 - 1 pages).
"$WSS" run -o nosample.jsonl -- "$PROGS/lifecycle" raw-exit-group3 >/dev/null 2>&1
"$WSS" report nosample.jsonl >n.txt 2>n.err
is "$?:$(grep -c 'Right-size' n.txt)" "0:0" "a profile without samples: reported, with no Right-size line"
# Exact mode's cost is measured and, past a tenth of the program's time,
# said: 16,384 pages written as fast as they can be (one byte each: a few
# microseconds natively), each a protection fault under exact tracking,
# held 150 ms so that a tick measures them (41 % here).
"$WSS" run --mode exact -o hot.jsonl -- "$PROGS/bigmap" 64 1 150 >/dev/null 2>hot.err
cost=$(sed -n 's/^wss: exact tracking cost about \([0-9.]*\) % of the program.s time (its first touches. faults), so each interval held that much less work than natively.*/\1/p' hot.err)
ok "$(awk -v c="${cost:-0}" 'BEGIN { exit !(c > 10) }'; echo $?)" "exact mode's cost past a tenth of the program's time: one stderr line ($cost %)" || sed 's/^/# /' hot.err
"$WSS" report hot.jsonl | tr '\n' ' ' | grep -q "Every page was counted (exact mode), at a cost of [0-9.]*.% of the program's time. That much slows the program"
ok $? "and the report's paragraph says what it cost and means"
done_testing
