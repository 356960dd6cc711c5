#!/bin/sh
# The trace analyses (wss heatmap, window, mrc, simulate, replay) over
# synthetic profile + trace pairs written by tests/tap/trace.py, byte for
# byte from docs/trace-format.md: exact numbers against what trace.py
# computes the plain way, the three output forms, a truncated trace (the
# prefix is analysed), corrupt ones (an error naming the byte, exit 2), a
# profile without a trace, and the replay under wss run with manual ticks.
. "$top_srcdir/tests/tap/tap.sh"
command -v python3 >/dev/null || bail "python3 is not installed"
TR="python3 $top_srcdir/tests/tap/trace.py"
plan 93
cd "$TMP" || bail "no scratch directory"

# pair NAME KIND ARGS...: NAME.json (the spec), NAME.trace, NAME.jsonl.
pair() { $TR pair "$@" || bail "trace.py could not write $1"; }
pair cyc cycle 8 120
pair ramp ramp 10
pair sp sparse 16
pair smp sampled 4096 20 3 0x1234
jsonok() { python3 -c 'import json, sys; json.load(sys.stdin)'; }

# ---- heatmap ----
"$WSS" heatmap cyc.jsonl >h.txt 2>h.err
is $? 0 "heatmap exits 0"
test ! -s h.err; ok $? "and says nothing on stderr"
grep -q "^pages  8 distinct, by index (gaps removed): 8 rows of 1 page$" h.txt; ok $? "8 distinct pages, a row each"
grep -q "^time   120 intervals (seq 1..120): 72 columns of 1-2 intervals$" h.txt; ok $? "120 intervals in 72 columns"
grep -q "max 2, total 960$" h.txt; ok $? "960 touches (8 pages x 120 intervals), at most 2 in a cell"
is "$(grep -c '^ *[0-9]* |[+@]*$' h.txt)" 8 "8 shaded rows"
is "$(grep '^scale ' h.txt)" "scale  ' ' 0  '+' 1  '@' 2" "the key: a column of 1 interval is '+', of 2 '@'"
# The x axis: a mark about every 18 columns; under each the seq of its
# column's first interval (column c starts at interval ceil(c * 120 / 72),
# seq one more), the last column's last; no time under the manual time base.
is "$(sed -n '/^     +/,$p' h.txt)" "     +-----------------+-----------------+-----------------+-----------------+
 seq  1                30                60                90              120" "the x axis: marks at columns 17, 35, 53 and 71 and their seqs"
# The clock's time base: seconds of each mark's interval (t_ns, 1 ms each);
# the cpu time base: the samples' CPU time (2 ms an interval here).
sed 's/"time_base":"manual"/"time_base":"wall"/' cyc.jsonl >cycw.jsonl
"$WSS" heatmap cycw.jsonl | tail -1 >hw.txt
is "$(cat hw.txt)" "   s  0.001            0.030             0.060             0.090         0.120" "wall time: the marks' seconds"
python3 -c '
import json, sys
for l in open("cyc.jsonl"):
    r = json.loads(l)
    if r["type"] == "header": r["time_base"] = "cpu"
    if r["type"] == "sample": r["cpu_ns"] = r["seq"] * 2000000
    print(json.dumps(r, separators=(",", ":")))' >cycc.jsonl
"$WSS" heatmap cycc.jsonl >hc.txt
is "$(tail -1 hc.txt)" "   s  0.002            0.060             0.120             0.180         0.240" "cpu time: the samples' CPU seconds"
grep -q "^time   120 intervals (seq 1..120): 72 columns of 1-2 intervals; s: CPU time$" hc.txt; ok $? "and said so"
# The y axis: each row's first page; 20 pages in 4 rows of 5.
"$WSS" heatmap --page-bins 4 ramp.jsonl >hr.txt
is "$(sed -n 's/^ *\([0-9]*\) |.*/\1/p' hr.txt | tr '\n' ' ')" "15 10 5 0 " "the y axis: each row's first page, the highest on top"
# The key against the cells: every shade drawn lies in the range the key
# gives it (the sampled map: 9 shades, the key wrapped under its title).
"$WSS" heatmap smp.jsonl >hs.txt
"$WSS" heatmap --csv smp.jsonl >hs.csv
python3 - hs.txt hs.csv <<'PY' >hs.check
import csv, re, sys
text = open(sys.argv[1]).read().split("\n")
i = next(k for k, l in enumerate(text) if l.startswith("scale "))
key = text[i][6:] + "".join(l for l in text[i + 1:] if l.startswith("       '"))
rng = {c: (int(lo), int(hi or lo)) for c, lo, hi in re.findall(r"'(.)' (\d+)(?:-(\d+))?", key)}
rows = [l.split(" |", 1)[1] for l in text if re.match(r"^ *\d+ \|", l)]
cells = {(int(r["page_bin"]), int(r["time_bin"])): int(r["touches"]) for r in csv.DictReader(open(sys.argv[2]))}
pb = len(rows)
bad = [(b, t, c, cells[(b, t)]) for k, row in enumerate(rows) for t, c in enumerate(row.ljust(20))
       for b in [pb - 1 - k] if not rng[c][0] <= cells[(b, t)] <= rng[c][1]]
print(len(rng), max(len(l) for l in text) <= 80, bad)
PY
is "$(cat hs.check)" "10 True []" "the key: 10 shades (blank too), each cell's count in its shade's range, 80 columns at most"
# By address the labels are wide: the default columns shrink to fit 80
# (the JSON keeps the grid of 72).
pair hi cycle 4 100 0x7f0000000
"$WSS" heatmap --by address hi.jsonl >ha.txt
grep -q "^time   100 intervals (seq 1..100): 64 columns of 1-2 intervals$" ha.txt; ok $? "--by address: 64 columns beside the 14-character labels"
is "$(awk 'length > 80' ha.txt | wc -l)" 0 "every line within 80 columns"
is "$("$WSS" heatmap --by address --json hi.jsonl | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["time_bins"]))')" 72 \
	"--json: the default 72 columns"
"$WSS" heatmap --time-bins 1000 cyc.jsonl | grep -q "^time   120 intervals (seq 1..120): 120 columns of 1 interval$"
ok $? "--time-bins past the intervals: one column an interval, no empty ones"
"$WSS" heatmap --csv --time-bins 5 --page-bins 2 ramp.jsonl >r.csv
is $? 0 "heatmap --csv exits 0"
is "$(sed -n 1p r.csv)" "page_bin,time_bin,page_first,page_last,seq_first,seq_last,touches" "the CSV's columns"
is "$(($(wc -l <r.csv) - 1))" 10 "one CSV row per cell (5 x 2)"
# ramp: interval i touches pages 0x400..0x400+i-1 and 0x1000+i-1: 20
# distinct pages; index 0-9 are 0x400.., 10-19 the 0x1000 ones.
is "$(awk -F, 'NR > 1 && $1 == 0 { printf "%s ", $7 }' r.csv)" "3 7 11 15 19 " \
	"the lower half of the pages, per two intervals: 1+2, 3+4, ..., 9+10"
is "$(awk -F, 'NR > 1 && $1 == 1 { printf "%s ", $7 }' r.csv)" "2 2 2 2 2 " "the upper half: one new page an interval"
"$WSS" heatmap --json --time-bins 5 --page-bins 2 ramp.jsonl >r.json
jsonok <r.json; ok $? "heatmap --json is JSON"
is "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(sum(map(sum, d["cells"])), d["total"], d["pages"], d["intervals"], d["page_bins"][1])' <r.json)" \
	"65 65 20 10 {'first': 10, 'last': 19}" "JSON: cells sum to the total, 20 pages, 10 intervals, bin ranges"
"$WSS" heatmap --csv --by address --page-bins 4 --time-bins 1 sp.jsonl >a.csv
# pages 0x100-0x103 and 0x100000-0x100070: bin b starts at page
# 0x100 + ceil(b * span / 4), span = 0x100070 - 0x100 + 1.
want=$(python3 -c 'lo, span = 0x100, 0x100070 - 0x100 + 1
print(" ".join("0x%x:%d" % ((lo + -(-b * span // 4)) << 12, 16 if b in (0, 3) else 0) for b in range(4)) + " ")')
is "$(awk -F, 'NR > 1 { printf "%s:%s ", $3, $7 }' a.csv)" "$want" \
	"--by address: the two clusters at the ends of the span, the gap between empty"
"$WSS" heatmap --csv --by index --page-bins 2 --time-bins 1 sp.jsonl >i.csv
# 12 pages by index, 6 a bin: the 4 low ones (one touched an interval: 16)
# and the first 2 high ones (each every 8th interval: 4) in the first.
is "$(awk -F, 'NR > 1 { printf "%s:%s ", $3, $7 }' i.csv)" "0:20 6:12 " "--by index: gaps removed (4 + 8 pages)"
"$WSS" heatmap smp.jsonl --csv --time-bins 1 --page-bins 1 >s.csv
want=$(python3 -c 'import json; s=json.load(open("smp.json")); print(sum(len(i["pages"]) << i["level"] for i in s["intervals"]))')
is "$(awk -F, 'NR == 2 { print $7 }' s.csv)" "$want" "sampled: each touch counts its interval's rate ($want)"

# --compare: RMSD against one computed here from the two maps' CSV.
"$WSS" heatmap --compare cyc.jsonl cyc.jsonl >c.txt
grep -q "^rmsd   0$" c.txt; ok $? "a map against itself: RMSD 0"
"$WSS" heatmap --csv --time-bins 6 --page-bins 4 cyc.jsonl >m1.csv
"$WSS" heatmap --csv --time-bins 6 --page-bins 4 ramp.jsonl >m2.csv
want=$(python3 - <<'PY'
import csv, math
def cells(f):
    rows = list(csv.DictReader(open(f)))
    v = [int(r["touches"]) for r in rows]
    t = sum(v)
    return [x / t for x in v]
a, b = cells("m1.csv"), cells("m2.csv")
print("%.9g" % math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)) / len(a)))
PY
)
"$WSS" heatmap --compare --csv --time-bins 6 --page-bins 4 cyc.jsonl ramp.jsonl >cmp.csv
is "$(awk -F, 'NR == 2 { print $6 }' cmp.csv)" "$want" "--compare: the RMSD of the normalised maps ($want)"
"$WSS" heatmap --compare --json cyc.jsonl ramp.jsonl | jsonok; ok $? "--compare --json is JSON"

# ---- window ----
for n in 1 3 7; do
	"$WSS" window --window $n --csv ramp.jsonl | awk -F, 'NR > 1 { print $1, $3, $9, $8 }' >w.got
	$TR window ramp.json $n >w.want
	cmp -s w.got w.want; ok $? "window $n: every sample's working set as recomputed here" || diff w.got w.want | sed 's/^/# /'
done
"$WSS" window --window 3 ramp.jsonl >w.txt
# A duration, as wss run's --window takes: a whole number of intervals.
iv=$($PROFILE get ramp.jsonl header.interval_ns)
"$WSS" window --window "$((3 * iv / 1000000))ms" ramp.jsonl >w-dur.txt
cmp -s w.txt w-dur.txt; ok $? "wss window --window $((3 * iv / 1000000))ms: the same as --window 3"
"$WSS" window --window "$((iv * 3 / 2 / 1000))us" ramp.jsonl 2>w-half.err >/dev/null
is "$?:$(grep -c 'is not a whole number of this profile' w-half.err)" "2:1" "wss window --window of 1.5 intervals: exit 2, one line"
grep -q "^Data avg/peak/total: 8.2/13/20 pages (33/52/80 kB)$" w.txt; ok $? "window 3: avg/peak/total 8.2/13/20"
for n in 1 4; do
	"$WSS" window --window $n --csv smp.jsonl | awk -F, 'NR > 1 { print $1, $3, $9, $8 }' >w.got
	$TR window smp.json $n >w.want
	cmp -s w.got w.want; ok $? "sampled, window $n: members touched, rate and estimate per sample" || diff w.got w.want | sed 's/^/# /'
done
"$WSS" window --window 4 --json smp.jsonl >w.json
jsonok <w.json; ok $? "window --json is JSON"
is "$(python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["samples"][-1]; print(s["rate"], s["data_ci"][0] <= s["data"] <= s["data_ci"][1], d["data"]["estimated"])' <w.json)" \
	"8 True True" "sampled: the estimate lies in its 95 % interval, and is marked estimated"
"$WSS" window --window 2 --csv cyc.jsonl | awk -F, 'NR == 3 { print $3, $6, $7 }' >w.got
is "$(cat w.got)" "8 4 4" "writes apart: 8 pages, 4 written, 4 read"

# ---- mrc ----
"$WSS" mrc cyc.jsonl >m.txt
is $? 0 "mrc exits 0"
grep -q "of the re-references to hit: 8 / 8 / 8 pages" m.txt; ok $? "cycling over 8 pages an interval: 90/95/99 % sizes are 8"
"$WSS" mrc --json --sizes 1,2,3,4,5,6,7,8,9,12,20 ramp.jsonl >m.json
jsonok <m.json; ok $? "mrc --json is JSON"
python3 -c '
import json, sys
d = json.load(open("m.json"))
m = [p["lru_miss_ratio"] for p in d["curve"]]
o = [p["opt_misses"] for p in d["curve"]]
l = [p["lru_misses"] for p in d["curve"]]
sys.exit(not (all(a >= b for a, b in zip(m, m[1:])) and all(a >= b for a, b in zip(o, o[1:])) and all(a <= b for a, b in zip(o, l))))'
ok $? "the curves never rise with size, and OPT misses no more than LRU"
bad=0
for f in 1 2 3 5 8 12 20; do
	want=$($TR lru ramp.json $f | cut -d' ' -f1)
	got=$(python3 -c "import json; print([p['lru_misses'] for p in json.load(open('m.json'))['curve'] if p['pages'] == $f][0])")
	[ "$got" = "$want" ] || { bad=1; diag "size $f: $got LRU misses, want $want"; }
	sim=$("$WSS" simulate --csv --policy lru --frames $f ramp.jsonl | awk -F, '$3 == "all" { print $6 }')
	[ "$sim" = "$want" ] || { bad=1; diag "simulate --policy lru --frames $f: $sim faults, want $want"; }
done
is $bad 0 "LRU's curve equals an LRU stack simulated here and wss simulate --policy lru, at 7 sizes"
is "$(python3 -c 'import json; d=json.load(open("m.json")); print(d["references"], d["distinct"], d["lru_hit_sizes"])')" \
	"65 20 {'90': 10, '95': 10, '99': 10}" \
	"65 references, 20 pages; interval i's i-1 reuses are at distance i: 36 of 45 hit at 9, all at 10"
"$WSS" mrc --csv smp.jsonl >ms.csv
is $? 0 "mrc of a sampled trace exits 0"
refs=$(python3 -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import trace as t
s = json.load(open("smp.json")); seed = int(s["seed"], 16); lv = max(i["level"] for i in s["intervals"])
print(8 * sum(1 for i in s["intervals"] for p in i["pages"] if t.member(p[0], lv, seed)))' "$top_srcdir/tests/tap")
is "$(awk -F, 'NR == 2 { print $3 }' ms.csv)" "$refs" "sampled: the members of the coarsest level, each counting 8 ($refs)"

# ---- simulate ----
# By default, short: each policy's miss ratio at sizes about the working
# set of an interval: ramp's 65 references in 10 intervals, avg 7 (6.5),
# peak 11; half the average (4), and all 20 pages (twice the peak, 22, is
# more); LRU's against an LRU stack simulated here.
"$WSS" simulate ramp.jsonl >sb.txt
is $? 0 "simulate exits 0"
grep -qx "working set of an interval: avg 7, peak 11 pages (0.027 / 0.043 MiB)" sb.txt; ok $? "the working set: avg 7, peak 11 pages"
want=$(for f in 4 7 11 20; do $TR lru ramp.json $f | awk -v f=$f '{ printf "%s:%.2f ", f, 100 * $1 / 65 }'; done)
is "$(awk '$1 ~ /^[0-9]+$/ && NF >= 8 { printf "%s:%s ", $1, $4 }' sb.txt)" "$want" "LRU's miss ratio at 4, 7, 11 and 20 frames"
is "$(awk '$1 ~ /^[0-9]+$/ && NF >= 8 { $1 = $2 = $3 = $4 = $5 = $6 = $7 = $8 = ""; sub(/^ */, ""); printf "%s|", $0 }' sb.txt)" \
	"avg / 2|avg|peak|all pages|" "each size named"
grep -qx "   frames        MiB   fifo    lru  clock    nfu  aging    opt" sb.txt; ok $? "a column per policy"
between "$(wc -l <sb.txt)" 5 12 "a screenful: $(wc -l <sb.txt) lines"
grep -qx "faults, hits and the hit ratio over time, at 6 sizes: wss simulate --all" sb.txt; ok $? "the last line names --all"
"$WSS" simulate --all ramp.jsonl >sa.txt
is "$(awk '$1 == "lru" && NF == 5 { printf "%s ", $2 }' sa.txt)" "1 2 4 8 16 20 " "--all: every power of two and the distinct pages"
is "$(grep -c '^\(fifo\|lru\|clock\|nfu\|aging\|opt\) ' sa.txt)" 72 "--all: 6 policies x 6 sizes, totals and over time"
"$WSS" simulate --frames 2,4 --period 10 --all cyc.jsonl >s.txt
is "$(grep -c '^\(fifo\|lru\|clock\|nfu\|aging\|opt\) ' s.txt)" 24 "--all --frames 2,4: 6 policies x 2 sizes, totals and over time"
"$WSS" simulate --frames 2,8 --policy lru,opt cyc.jsonl >sf.txt
# Its figures: the CSV's faults / references, in %.
want=$("$WSS" simulate --csv --frames 2,8 --policy lru,opt cyc.jsonl |
	awk -F, '$3 == "all" { m[$2] = m[$2] sprintf(" %6.2f", 100 * $6 / $4) }
		 END { printf "%9s %10s %6s %6s\n", "frames", "MiB", "lru", "opt"
		       printf "%9d %10.3f%s\n%9d %10.3f%s\n", 2, 2 * 4096 / 1048576, m[2], 8, 8 * 4096 / 1048576, m[8] }')
is "$(sed -n '/^ *frames/,$p' sf.txt)" "$want
faults, hits and the hit ratio over time: wss simulate --all" "--frames and --policy: the short table at those sizes, of those policies"
is "$("$WSS" simulate --json ramp.jsonl | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["results"]))')" 36 \
	"--json: every policy at every default size, as before (6 x 6)"
"$WSS" simulate --json --frames 1,2,3,4,6,10 ramp.jsonl >s.json
jsonok <s.json; ok $? "simulate --json is JSON"
python3 -c '
import json, sys
r = json.load(open("s.json"))["results"]
opt = {x["frames"]: x["faults"] for x in r if x["policy"] == "opt"}
sys.exit(not all(x["faults"] >= opt[x["frames"]] for x in r) or len(r) != 36 or
         not all(x["faults"] + x["hits"] == 65 for x in r))'
ok $? "OPT faults least at every size; faults + hits = 65 references"
is "$("$WSS" simulate --csv --policy fifo --frames 8 --period 100 cyc.jsonl | awk -F, 'NR > 1 { printf "%s/%s ", $3, $5 }')" \
	"all/952 1/92 2/100 3/100 4/100 5/100 6/100 7/100 8/100 9/100 10/60 " \
	"cycle of 8 in 8 frames: the 8 cold misses, then every reference hits, per 100"

# ---- truncated and corrupt traces ----
set -- $($TR offsets cyc.trace | sed -n '4p')
cut=$(($1 + 5))
head -c $cut cyc.trace >cut.trace
sed 's/"cyc.trace"/"cut.trace"/' cyc.jsonl >cut.jsonl
"$WSS" window --window 1 --csv cut.jsonl >cut.csv 2>cut.err
is $? 0 "a trace cut inside a record: analysed, exit 0"
grep -qx "wss: cut.trace: truncated at byte $1 (a record cut short): 3 whole intervals read" cut.err
ok $? "truncated at the cut record's offset ($1), said on stderr"
is "$(($(wc -l <cut.csv) - 1))" 3 "the 3 whole intervals before it are analysed"
"$WSS" mrc cut.jsonl 2>/dev/null | grep -qx "trace truncated at byte $1 (a record cut short): 3 whole intervals read"
ok $? "the text output says so too"
set -- $($TR offsets cyc.trace | tail -1)
head -c "$1" cyc.trace >noend.trace
sed 's/"cyc.trace"/"noend.trace"/' cyc.jsonl >noend.jsonl
"$WSS" heatmap --json noend.jsonl >noend.json 2>noend.err
is "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["truncated"], d["truncated_at"], d["intervals"])' <noend.json)" \
	"True $1 120" "no end record: truncated at the end of the last interval ($1), all 120 intervals read"
grep -q "no end record" noend.err; ok $? "and that is said"

set -- $($TR offsets cyc.trace | sed -n '6p')
cp cyc.trace crc.trace
printf '\377' | dd of=crc.trace bs=1 seek=$(($1 + 9)) conv=notrunc 2>/dev/null
sed 's/"cyc.trace"/"crc.trace"/' cyc.jsonl >crc.jsonl
"$WSS" heatmap crc.jsonl >crc.out 2>crc.err
is $? 2 "a bad check: exit 2"
grep -q "^wss: crc.trace: byte $1: bad check" crc.err; ok $? "the error names the file and the record's byte ($1)"
test ! -s crc.out; ok $? "and nothing is printed on stdout"
cp cyc.trace type.trace
printf 'Z' | dd of=type.trace bs=1 seek="$1" conv=notrunc 2>/dev/null
sed 's/"cyc.trace"/"type.trace"/' cyc.jsonl >type.jsonl
"$WSS" mrc type.jsonl 2>type.err >/dev/null
is $? 2 "an unknown record type: exit 2"
grep -qx "wss: type.trace: byte $1: unknown record type 0x5a" type.err; ok $? "named with its byte offset"
# A record whose check is right but whose runs overflow the address space.
python3 - <<'PY'
import struct, zlib, sys
sys.path.insert(0, __import__("os").environ["top_srcdir"] + "/tests/tap")
import trace as t
p = t.varint(1) + t.varint(5) + bytes([0, 1]) + t.varint(2) + t.varint(1 << 51) + t.varint(0) + t.varint(3) \
    + t.varint(1 << 52) + t.varint(0) + t.varint(3)
open("ovf.trace", "wb").write(b"WSSTRACE" + struct.pack("<II", 1, 12) + t.record(0x49, p))
PY
sed 's/"cyc.trace"/"ovf.trace"/' cyc.jsonl >ovf.jsonl
"$WSS" window --window 1 ovf.jsonl 2>ovf.err >/dev/null
is $? 2 "runs past the address space: exit 2"
# 16 (header) + 2 (type, length) + 5 (seq .. nruns) + 10 (the first run)
grep -q "^wss: ovf.trace: byte 33: interval record: a run past the address space" ovf.err; ok $? "at the second run's byte (33)"
# A sampled trace whose page is not a member of its level.
python3 - <<'PY'
import json
s = json.load(open("smp.json"))
iv = s["intervals"][-1]
have = {p[0] for p in iv["pages"]}
import sys, os
sys.path.insert(0, os.environ["top_srcdir"] + "/tests/tap")
import trace as t
seed = int(s["seed"], 16)
pn = next(p for p in range(0x20000, 0x21000) if not t.member(p, iv["level"], seed))
iv["pages"].append([pn, 0, 9])
json.dump(s, open("nm.json", "w"))
PY
$TR write nm.json nm.trace && $TR profile nm.json nm.jsonl nm.trace
"$WSS" heatmap nm.jsonl 2>nm.err >/dev/null
is $? 2 "a listed page that is not a member of its level: exit 2"
grep -q "is not a member of level 3" nm.err; ok $? "said so"
printf 'WSSTRACE\002\000\000\000\014\000\000\000' >v2.trace
sed 's/"cyc.trace"/"v2.trace"/' cyc.jsonl >v2.jsonl
"$WSS" mrc v2.jsonl 2>v2.err >/dev/null
is $? 2 "trace version 2: exit 2"
grep -q "trace format version 2 is not supported" v2.err; ok $? "said so"

# ---- no trace, usage ----
$TR profile cyc.json none.jsonl -
"$WSS" window --window 2 none.jsonl 2>none.err
is $? 2 "a profile without a trace: exit 2"
is "$(cat none.err)" "wss: none.jsonl: no page trace in this profile (record one with: wss run --trace -- PROG)" \
	"one line saying how to record one"
"$WSS" window cyc.jsonl 2>/dev/null
is $? 2 "window without --window: exit 2"
"$WSS" heatmap --csv --json cyc.jsonl 2>/dev/null
is $? 2 "--csv with --json: exit 2"
"$WSS" simulate --policy lfu cyc.jsonl 2>u.err
is $? 2 "an unknown policy: exit 2"
grep -q "^wss: simulate: --policy: fifo, lru, clock, nfu, aging or opt, not lfu$" u.err; ok $? "named"

# ---- replay ----
"$WSS" replay --trial-factor 2 --seed 7 cyc.jsonl >rp.out
set -- $(sed -n 's/^wss replay: \([0-9]*\) bins, \([0-9]*\) accesses (\([0-9]*\) writes) over \([0-9]*\) pages.*/\1 \2 \3 \4/p' rp.out)
is "$1 $2 $4" "120 480 8" "replay without the preload: 120 bins of 8 touches / 2 = 4 accesses, over 8 pages"
# Half the cycle's pages were written: the draw picks them about half the time.
between "$3" 160 320 "a write where the original page was written ($3 of 480)"
"$WSS" replay --trial-factor 1 sp.jsonl | grep -q "^wss replay: 16 bins, 32 accesses"; ok $? "trial factor 1: as many accesses as touches"
"$WSS" replay --trial-factor 2 --seed 7 cyc.jsonl >rp2.out
cmp -s rp.out rp2.out; ok $? "the same seed, the same replay"
WSS_REPORT_SUMMARY=false "$WSS" run --time-base manual -o rp.jsonl -- "$WSS" replay --trial-factor 1 ramp.jsonl >/dev/null 2>rp.err
is $? 0 "wss run --time-base manual -- wss replay: exit 0"
is "$(grep -c '"type":"sample"' rp.jsonl)" 11 "its profile: one sample per bin (10), and the final one"
done_testing
