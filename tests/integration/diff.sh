#!/bin/sh
# wss diff (cli/out/diff.c): two exact runs of tests/progs/allocsites under
# manual ticks, the second with two more sites of 8,192 and 4,096 pages
# (its "unmap" mode): the figures side by side, the sites matched by their
# functions, --json, --fail-above's exit status, a run cut short, and bad
# input.
. "$top_srcdir/tests/tap/tap.sh"

plan 21

run() {
	"$WSS" run --mode exact --time-base manual -o "$TMP/$1.jsonl" -- "$PROGS/allocsites" 20 $2 \
		>/dev/null 2>"$TMP/$1.err" || bail "allocsites $2 failed: $(cat "$TMP/$1.err")"
}
run a
run b unmap

"$WSS" diff "$TMP/a.jsonl" "$TMP/b.jsonl" >"$TMP/ab.txt" 2>"$TMP/ab.err"
is $? 0 "wss diff A B: exit 0 without --fail-above"
is "$(cat "$TMP/ab.err")" "" "... and nothing on stderr"
peak() { python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1])][-1]["data"]["peak"])' "$1"; }
pa=$(peak "$TMP/a.jsonl") pb=$(peak "$TMP/b.jsonl")
awk -v a="$pa" -v b="$pb" '$1 == "data.peak" { gsub(",", "", $2); gsub(",", "", $3); f = ($2 == a && $3 == b) } END { exit !f }' "$TMP/ab.txt"
ok $? "data.peak: A's $pa and B's $pb, as their summaries say"
grep -q '^data\.peak .*+[0-9,]* (+[0-9.]* %)$' "$TMP/ab.txt"
ok $? "data.peak: its change, in pages and per cent"
grep -q '^kind\.heap\.peak ' "$TMP/ab.txt" && grep -q '^kind\.anon\.peak .* 0 .* 8,192 *+8,192 (new)$' "$TMP/ab.txt"
ok $? "by kind: heap, and anon (B's mappings: new, 0 in A)"
# The sites: map_alloc and remap_alloc are B's alone; hot_alloc is in both.
grep -A1 'only in b' "$TMP/ab.txt" | grep -q 'map_alloc < main'
ok $? "the sites: map_alloc only in B, named by its functions"
grep -B1 -A1 'hot_alloc < main' "$TMP/ab.txt" | grep -q 'live at the peak 16,384 → 16,384'
ok $? "the sites: hot_alloc matched across the runs, 16,384 pages live in both"
! sed '/^Allocation sites/q' "$TMP/ab.txt" | grep -q '≈'
ok $? "exact runs: no figure marked as an estimate"
grep -q '^ *[0-9]*\. ≈ .*live at the peak' "$TMP/ab.txt" && grep -A1 '^ *[0-9]*\. ≈' "$TMP/ab.txt" | grep -q 'small_alloc < main'
ok $? "the small objects' site, its allocations sampled by their bytes, is marked ≈"

"$WSS" diff --json "$TMP/a.jsonl" "$TMP/b.jsonl" >"$TMP/ab.json"
is $? 0 "--json: exit 0"
is "$(python3 - "$TMP/ab.json" "$pa" "$pb" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["figure"]: x for x in d["figures"]}
s = [x for x in d["alloc_sites"] if x["functions"].startswith("map_alloc ")]
print(f["data.peak"]["a"] == int(sys.argv[2]) and f["data.peak"]["b"] == int(sys.argv[3]),
      f["data.peak"]["within_noise"], len(s) == 1 and s[0]["a"] is None and s[0]["b"]["peak_live_pages"] == 8192)
PY
)" "True False True" "--json: data.peak's a and b; map_alloc with a null and B's 8,192 pages at its peak"

"$WSS" diff --fail-above 5 "$TMP/a.jsonl" "$TMP/b.jsonl" >/dev/null 2>"$TMP/fail.err"
is $? 4 "--fail-above 5: B's data grew more: exit 4"
grep -q '^wss: diff: data\.peak grew [0-9.]* % (more than 5 %)$' "$TMP/fail.err"
ok $? "--fail-above: one line names data.peak" || sed 's/^/# /' "$TMP/fail.err"
"$WSS" diff --fail-above 1000% "$TMP/a.jsonl" "$TMP/b.jsonl" >/dev/null 2>&1
is $? 0 "--fail-above 1000%: within it, exit 0"
"$WSS" diff --fail-above 0 "$TMP/b.jsonl" "$TMP/b.jsonl" >"$TMP/bb.txt" 2>&1
is $? 0 "a profile against itself: nothing grew, even at --fail-above 0"

"$WSS" diff "$TMP/a.jsonl" 2>"$TMP/one.err"
is "$?:$(head -1 "$TMP/one.err")" "2:wss: diff: two profiles are needed (wss diff [--json] [--fail-above PCT] A B)" \
	"one profile: a usage error, exit 2"
"$WSS" diff --fail-above lots "$TMP/a.jsonl" "$TMP/b.jsonl" 2>"$TMP/pct.err"
is "$?:$(head -1 "$TMP/pct.err")" "2:wss: diff: --fail-above: not a percentage from 0 to 10000: lots" \
	"--fail-above lots: exit 2, one line"
"$WSS" diff "$TMP/a.jsonl" "$TMP/missing.jsonl" 2>"$TMP/miss.err"
is "$?:$(cat "$TMP/miss.err")" "2:wss: $TMP/missing.jsonl: No such file or directory" "a missing profile: exit 2, one line"
# A run cut short (killed: no summary) is said, and a guard refuses to
# judge it: a crash must not pass as a smaller working set.
head -c 3000 "$TMP/b.jsonl" >"$TMP/cut.jsonl"
"$WSS" diff "$TMP/a.jsonl" "$TMP/cut.jsonl" >"$TMP/cut.txt" 2>&1
is $? 0 "a run cut short: compared (exit 0 without --fail-above)"
grep -q '^  b: .*no summary (killed, or still running)' "$TMP/cut.txt"
ok $? "... and said to have no summary"
"$WSS" diff --fail-above 10 "$TMP/a.jsonl" "$TMP/cut.jsonl" >/dev/null 2>"$TMP/cutfail.err"
is "$?:$(cat "$TMP/cutfail.err")" \
	"2:wss: diff: $TMP/cut.jsonl: no summary (the run was killed, or is still running): --fail-above cannot judge it" \
	"--fail-above and a run cut short: exit 2, one line"
done_testing
