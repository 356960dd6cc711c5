#!/bin/sh
# The readers refuse input that contradicts itself, quickly and in one line
# (exit 2): a profile whose samples are not numbered 1, 2, 3, ... (through
# wss report, --json, --html, export and the analyses alike), while a valid
# prefix of a killed run still reads; and a page trace whose interval
# claims more pages than its sample counted: a run of 2^28 or 2^30 pages in
# a 39-byte file is refused by every analysis in milliseconds and a few MB,
# never expanded page by page.  Numbers outside what wss writes (a page
# size, an interval, a count of pages past 2^63 bytes) are refused alike:
# the reports' arithmetic would overflow on them.  Profiles and traces are
# written by tests/tap/trace.py, byte for byte from the formats' documents.
. "$top_srcdir/tests/tap/tap.sh"
command -v python3 >/dev/null || bail "python3 is not installed"
TR="python3 $top_srcdir/tests/tap/trace.py"
plan 118
cd "$TMP" || bail "no scratch directory"

# A profile of 6 samples (lines 3-8) and its summary (line 9), with a trace.
$TR gen cycle 8 6 >c.json && $TR write c.json c.trace && $TR profile c.json c.jsonl c.trace ||
	bail "trace.py could not write the profile"
is "$(grep -c '"type":"sample"' c.jsonl) $(grep -n '"type":"summary"' c.jsonl | cut -d: -f1)" "6 9" \
	"the fixture: 6 samples on lines 3-8, the summary on line 9"

# refused NAME LINE WANT: every reader of the profile refuses NAME.jsonl
# with exit 2 and the one line "wss: NAME.jsonl:LINE: WANT".
refused() {
	n=$1 line=$2 want="wss: $1.jsonl:$2: $3"
	"$WSS" report "$n.jsonl" >"$n.out" 2>"$n.err"
	is $? 2 "$n: wss report: exit 2"
	is "$(cat "$n.err")" "$want" "$n: one line naming the file, the line and what was expected"
	test ! -s "$n.out"; ok $? "$n: nothing on stdout"
	st=
	"$WSS" report --json "$n.jsonl" >/dev/null 2>"$n.e1"; st="$st$? "
	"$WSS" report --html "$n.html" "$n.jsonl" >/dev/null 2>"$n.e2"; st="$st$? "
	"$WSS" export --format csv -o "$n.csv" "$n.jsonl" 2>"$n.e3"; st="$st$? "
	"$WSS" window --window 2 "$n.jsonl" >/dev/null 2>"$n.e4"; st="$st$?"
	is "$st" "2 2 2 2" "$n: report --json, report --html, export and window: exit 2"
	cat "$n.e1" "$n.e2" "$n.e3" "$n.e4" | sort -u >"$n.eu"
	is "$(cat "$n.eu")" "$want" "$n: each says the same line"
}

# ---- the profile's samples ----
awk 'NR == 5 { print; print } NR != 5' c.jsonl >dup.jsonl
refused dup 6 'sample: "seq" 3, expected 4 (samples are numbered 1, 2, 3, ... in order)'
awk 'NR != 5' c.jsonl >gap.jsonl
refused gap 5 'sample: "seq" 4, expected 3 (samples are numbered 1, 2, 3, ... in order)'
awk 'NR == 5 { held = $0; next } NR == 6 { print; print held; next } 1' c.jsonl >swap.jsonl
refused swap 5 'sample: "seq" 4, expected 3 (samples are numbered 1, 2, 3, ... in order)'
awk 'NR != 8' c.jsonl >lost.jsonl
refused lost 8 'summary: "samples" 6, but the profile holds 5 (samples missing)'
awk 'NR == 9 { print; print prev; next } { print; prev = $0 }' c.jsonl >after.jsonl
"$WSS" report after.jsonl >/dev/null 2>after.err
is $? 2 "a sample after the summary: exit 2"
is "$(cat after.err)" "wss: after.jsonl:10: a sample after the summary (line 9)" "said with both lines"

# A killed run's profile is a valid prefix: samples 1..4 and no summary.
head -n 6 c.jsonl >prefix.jsonl
"$WSS" report prefix.jsonl >prefix.out 2>prefix.err
is $? 0 "a prefix without a summary (a killed run): exit 0"
grep -q "^samples    4$" prefix.out; ok $? "its 4 samples reported"
"$WSS" export --format csv -o prefix.csv prefix.jsonl 2>/dev/null
is $? 0 "and exported"

# ---- numbers outside what wss writes (docs/profile-format.md, "Bounds") ----
# craft NAME LINE CODE: NAME.jsonl, c.jsonl with CODE (Python) run on the
# record r of line LINE; rs is every record.
craft() {
	python3 - "$@" <<'EOF' || bail "could not write $1.jsonl"
import json, sys
name, line, code = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rs = [json.loads(l) for l in open("c.jsonl")]
r = rs[line - 1]
exec(code)
open(name + ".jsonl", "w").write("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in rs))
EOF
}
# Each reached an overflow (UBSan) or a wrapped figure before: twice the
# interval (report's late ticks), the window from its intervals (the
# reader), the timeline's scale and the kB of a count of pages (report),
# pages times the page size (pprof), an interval's bound rounded to an
# integer (report), a rate scaling an estimate.
craft ps 1 'r["page_size"] = 12288'
refused ps 1 'header: "page_size" 12288 is not a power of two from 4096 to 1 GiB'
craft iv 1 'r["interval_ns"] = 7200 * 10**9'
refused iv 1 'header: "interval_ns" 7200000000000 is not from 100 us to 3600 s'
craft iv2 1 'r["interval_ns"] = (1 << 62) + 1'
refused iv2 1 'header: "interval_ns" 4611686018427387905 is out of range (2^62 or more)'
craft wi 1 'r["window_intervals"] = 1 << 40; del r["window_ns"]'
refused wi 1 'header: "window_intervals" 1099511627776 is not from 1 to 1000000 intervals of at most a week'
craft wn 1 'r["window_ns"] = 3 * r["interval_ns"]'
refused wn 1 'header: "window_ns" 300000000 is not "window_intervals" times "interval_ns" (100000000)'
craft dp 4 'r["data_pages"] = r["threads"][0]["data_pages"] = 1 << 61'
refused dp 4 'sample: "data_pages" 2305843009213693952 is out of range (2^63 bytes of pages or more)'
craft tp 4 'r["threads"][0]["faults"] = -1'
refused tp 4 'sample: threads[]: "faults" missing or not a non-negative integer'
craft rt 4 'r["rate"] = 1 << 40'
refused rt 4 'sample: "rate" 1099511627776 is not a power of two up to 2^30'
craft ci 4 'r["rate"] = 2; r["ci"] = {"data": [0, 1e300]}'
refused ci 4 'sample: ci: "data" upper bound 1e+300 is out of range (2^63 bytes of pages or more)'
craft tn 4 'r["t_ns"] = 1 << 62'
refused tn 4 'sample: "t_ns" 4611686018427387904 is out of range (2^62 or more)'
craft av 9 'r["data"]["avg"] = 1e300'
refused av 9 'summary: data: "avg" 1e+300 is out of range (2^63 bytes of pages or more)'
craft sp 9 'r["data"]["peak"] = (1 << 63) - 1'
refused sp 9 'summary: data: "peak" 9223372036854775807 is out of range (2^63 bytes of pages or more)'
craft rm 9 'r["rate_max"] = 3'
refused rm 9 'summary: "rate_max" 3 is not a power of two up to 2^30'
# pprof multiplies a site's pages by the page size.
craft si 9 'rs.insert(8, {"type": "sites", "sites": [{"pc": "0x1000", "pages": 1 << 51}], "other_pages": 0})'
"$WSS" export --format pprof -o si.pb si.jsonl 2>si.err
is "$?:$(cat si.err)" '2:wss: si.jsonl:9: sites: sites[]: "pages" 2251799813685248 is out of range (2^63 bytes of pages or more)' \
	"a site of 2^51 pages of 4 KiB: export --format pprof refuses it"
# At the bounds the reports read and print: sums over the samples
# saturate (costs of 2^62 - 1 ns each), figures of 2^51 - 1 pages are
# printed whole, in kB too, and a site of as many is its bytes in pprof.
craft big 3 'big = (1 << 51) - 1
for x in rs[2:8]:
    x["data_pages"] = x["threads"][0]["data_pages"] = x["faults"] = x["threads"][0]["faults"] = big
    x["cost"] = {"faults_ns": (1 << 62) - 1, "tick_ns": (1 << 62) - 1, "program_ns": (1 << 62) - 1, "wall_ns": 1}
rs[8] = {"type": "sites", "sites": [{"pc": "0x1000", "pages": big}], "other_pages": big}'
"$WSS" report big.jsonl >big.out 2>big.err
is "$?:$(cat big.err)" "0:" "figures at the bounds: wss report reads them (exit 0, nothing on stderr)"
grep -q '^Data avg/peak/total: 2251799813685247.0/2251799813685247/? pages (9007199254740988/9007199254740988/? kB)$' big.out
ok $? "and prints 2^51 - 1 pages as themselves, and in kB" || grep '^Data' big.out | sed 's/^/# /'
st=
for cmd in "report --json" "export --format csv -o big.csv" "export --format pprof -o big.pb" \
	"export --format perfetto -o big.pf" "report --html big.html"; do
	"$WSS" $cmd big.jsonl >/dev/null 2>>big.err2; st="$st$? "
done
is "$st$(cat big.err2)" "0 0 0 0 0 " "and report --json, export csv, pprof, perfetto and report --html too"

# ---- the trace's intervals against their samples ----
# hostile NAME PAGES: NAME.trace, one interval of a single run of PAGES
# pages from page 0x10000, beside a copy of c.jsonl naming it (sample 1
# counted 8 pages).
hostile() {
	python3 - "$1.trace" "$2" <<'EOF' || bail "could not write $1.trace"
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "tap"))
import trace as t
n = int(sys.argv[2])
p = t.varint(1) + t.varint(100000000) + bytes([0, 1]) + t.varint(1) + t.varint(0x10000) + t.varint(n - 1) \
    + t.varint(1) + t.varint(0)
open(sys.argv[1], "wb").write(b"WSSTRACE" + struct.pack("<II", 1, 12) + t.record(0x49, p))
EOF
	sed "s/\"c.trace\"/\"$1.trace\"/" c.jsonl >"$1.jsonl"
}
hostile h28 268435456
hostile h30 1073741824
is "$(wc -c <h28.trace)" 39 "a trace of 39 bytes claims a run of 2^28 pages"
# Each analysis under 100 MB of address space and 10 s (it takes
# milliseconds); the error names the file, the record's byte and interval.
for h in h28:268435456 h30:1073741824; do
	n=${h%%:*} pages=${h#*:}
	for cmd in "heatmap" "window --window 2" "mrc" "simulate --frames 4" "replay --trial-factor 1"; do
		t0=$(date +%s%N)
		(ulimit -v 100000 && exec timeout 10 "$WSS" $cmd "$n.jsonl") >"$n.out" 2>"$n.err"
		st=$?
		ms=$((($(date +%s%N) - t0) / 1000000))
		is "$st" 2 "$n: wss $cmd: exit 2 within 10 s (${ms} ms) and 100 MB"
		is "$(cat "$n.err")" \
			"wss: $n.trace: byte 16: interval 1: $pages pages listed, more than its sample's data_pages allows (8): not this profile's trace?" \
			"$n: wss $cmd: one line naming the trace, the record's byte and interval"
	done
done
# Events are not bounded by the samples (pages can come and go within an
# interval), so a window carries only the history a move really moves: 30
# moves, each of [0, 2^(20+j)) to just above it, once doubled the pages
# known to the window at each move (2^30 of them, from 450 bytes).
python3 - <<'EOF' || bail "could not write mv.trace"
import os, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "tap"))
import trace as t
spec = {"page_shift": 12, "end": {"reason": 1, "last": 2}, "intervals": [
    {"seq": 1, "t_ns": 1000000, "pages": [[0x10000, 1, 5]]},
    {"seq": 2, "t_ns": 2000000, "pages": [],
     "events": [["moved", 0, 1 << (20 + j), 1 << (20 + j)] for j in range(30)]}]}
t.write(spec, "mv.trace")
t.profile(spec, "mv.jsonl", "mv.trace", 2)
EOF
t0=$(date +%s%N)
(ulimit -v 100000 && exec timeout 10 "$WSS" window --window 2 --csv mv.jsonl) >mv.csv 2>mv.err
st=$?
ms=$((($(date +%s%N) - t0) / 1000000))
is "$st:$(sed -n 3p mv.csv | cut -d, -f1,3)" "0:2,1" \
	"30 moves of one page: window 2 keeps it at its new address, within 10 s (${ms} ms) and 100 MB" ||
	sed 's/^/# /' mv.csv mv.err
# The same pages in runs a sample can hold read as before.
hostile h8 8
"$WSS" window --window 1 --csv h8.jsonl >h8.csv 2>h8.err
is "$?:$(sed -n 2p h8.csv | cut -d, -f1-3)" "0:1,100000000,8" "a run of 8 pages in an exact sample of 8: read" ||
	sed 's/^/# /' h8.csv h8.err
done_testing
