#!/bin/sh
# Peaks and the call stacks that caused them: a program that sweeps a large
# buffer at two known intervals (tests/progs/bursty) gets exactly those two
# data peaks, and the top first-touch site's stack names sweep, burst and
# main with their file:line (symbolised offline through the module
# records).  Each backend; peaks.* settings; pageramp's sites.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
B=$PROGS/bursty

bursts() { # BACKEND FILE [VARS...]: run bursty under BACKEND with manual ticks
	b=$1 f=$2; shift 2
	env WSS_TRACK_BACKEND=$b WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/$f.jsonl" "$@" \
		LD_PRELOAD="$WSS_LIB" "$B" >"$TMP/$f.out" 2>"$TMP/$f.err"
}
data_peaks() { $PROFILE peaks "$1" | awk '$2 == "data" {print $1}' | tr '\n' ' '; }

for b in hybrid mprotect; do
	if [ $b = hybrid ] && ! WSS_TRACK_BACKEND=hybrid WSS_SESSION_OUTPUT="$TMP/probe.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true 2>/dev/null; then
		skip "hybrid: not on this kernel"
		continue
	fi
	bursts $b $b
	is $? 0 "$b: bursty runs"
	$PROFILE check "$TMP/$b.jsonl"; ok $? "$b: the profile (modules, stacks, peaks) is valid"
	is "$(data_peaks "$TMP/$b.jsonl")" "$(awk '/^burst/ {printf "%s ", $2}' "$TMP/$b.out")" "$b: a data peak at each burst and nowhere else"
	id=$($PROFILE peaks "$TMP/$b.jsonl" | awk '$2 == "data" {print $4; exit}')
	$PROFILE stack "$TMP/$b.jsonl" "$id" >"$TMP/$b.stack"
	is "$(head -3 "$TMP/$b.stack" | awk '{print $1}' | tr '\n' ' ')" "sweep burst main " "$b: the top site's stack is sweep <- burst <- main"
	is "$(head -1 "$TMP/$b.stack" | awk '{print $2}')" "bursty.c:$(grep -n 'p\[(size_t)i \* PG\] = (char)i;' "$top_srcdir/tests/progs/bursty.c" | cut -d: -f1)" \
		"$b: with the file and line of the touching statement"
	between "$($PROFILE get "$TMP/$b.jsonl" header.pid)" 1 99999999 "$b: header"
	grep -q '"type":"module".*"path":"[^"]*tests/progs/bursty"' "$TMP/$b.jsonl"; ok $? "$b: a module record for the program, with its path"
done

# uffd-wp has no faults, so no sites, but the peaks are still found.
if WSS_TRACK_BACKEND=uffd-wp WSS_SESSION_OUTPUT="$TMP/probe2.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true 2>/dev/null; then
	# (Allocation sites off: their stacks are taken at the allocation.)
	bursts uffd-wp uf WSS_TRACK_ALLOC_SITES=false
	is "$(data_peaks "$TMP/uf.jsonl")" "45 65 " "uffd-wp: the same two data peaks"
	is "$(grep -c '"type":"stack"' "$TMP/uf.jsonl")" 0 "uffd-wp: no stacks (no faults to take them from)"
else
	skip "uffd-wp: not on this kernel"
fi

bursts mprotect off WSS_PEAKS_ENABLED=false WSS_TRACK_ALLOC_SITES=false
is "$(grep -c '"type":"\(peak\|stack\)"' "$TMP/off.jsonl")" 0 "peaks.enabled = false (and track.alloc_sites): no peak or stack records"
bursts mprotect off2 WSS_PEAKS_ENABLED=false WSS_REPORT_HOT_PAGES=0 WSS_TRACK_ALLOC_SITES=false
is "$(grep -c '"type":"module"' "$TMP/off2.jsonl")" 0 "and with report.hot_pages = 0 no module records either"
bursts mprotect max WSS_PEAKS_MAX=1
is "$($PROFILE peaks "$TMP/max.jsonl" | wc -l)" 1 "peaks.max = 1: one peak record"
bursts mprotect depth WSS_PEAKS_STACK_DEPTH=2
is "$(grep '"type":"stack"' "$TMP/depth.jsonl" | python3 -c 'import json,sys; print(max(len(json.loads(l)["frames"]) for l in sys.stdin))')" 2 \
	"peaks.stack_depth = 2: stacks of at most 2 frames"
bursts mprotect sens WSS_PEAKS_SENSITIVITY=2.5
is "$($PROFILE get "$TMP/sens.jsonl" header.config.peaks.sensitivity)" 2.5 "peaks.sensitivity = 2.5 reaches the header"
is "$(data_peaks "$TMP/sens.jsonl")" "45 65 " "peaks.sensitivity = 2.5: the same two bursts"

# Hot pages: the four pages bursty touches in every interval come first,
# each with the site (main's loop) that first touched it.
hot() { python3 -c 'import json,sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"type\":\"summary\"" in l][0]
for h in s.get("hot_pages", []): print(h["intervals"], h["mapping"], h.get("stack", 0))' "$1"; }
hot "$TMP/mprotect.jsonl" >"$TMP/hot"
is "$(wc -l <"$TMP/hot")" 20 "report.hot_pages (default 20): 20 hot pages in the summary"
is "$(head -4 "$TMP/hot" | awk '{print $1, $2}' | sort -u)" "80 anon" "the 4 busy pages first, touched in all 80 intervals, anonymous memory"
$PROFILE stack "$TMP/mprotect.jsonl" "$(head -1 "$TMP/hot" | awk '{print $3}')" | head -1 >"$TMP/hotsite"
is "$(cat "$TMP/hotsite")" "main bursty.c:$(grep -n 'busy\[i \* PG\]++;' "$top_srcdir/tests/progs/bursty.c" | cut -d: -f1)" \
	"and the site that first touched them: main's loop, with its line"
grep -q '"mapping":"data:[^"]*tests/progs/bursty"' "$TMP/mprotect.jsonl"; ok $? "a .data/.bss page is named by its program"
# The run's first-touch sites: sweep's statement touched 2,000 pages first
# in each of the two bursts, main's loop 4 pages in each of 80 intervals.
sites() { python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1]) if "\"type\":\"sites\"" in l][0]
for x in r["sites"][:2]: print(x["pages"], x.get("stack", 0))' "$1"; }
sites "$TMP/mprotect.jsonl" >"$TMP/sites"
is "$(awk '{print $1}' "$TMP/sites" | tr '\n' ' ')" "4000 320 " "the run's sites: sweep 2 x 2000 first touches, main's loop 80 x 4"
is "$($PROFILE stack "$TMP/mprotect.jsonl" "$(head -1 "$TMP/sites" | awk '{print $2}')" | head -1 | awk '{print $1}')" sweep \
	"the run's top site is sweep's"
"$WSS" report "$TMP/mprotect.jsonl" >"$TMP/rep.txt" 2>&1
grep -qE "^ +4000 +92\.[0-9] %  sweep \(.*bursty\.c:[0-9]+\)$" "$TMP/rep.txt"; ok $? "wss report: first touches by site, whole run"
# Hot pages over the whole run: the busy pages, unmapped two intervals
# before the end, are still the hottest, and say when they went.
env WSS_TRACK_BACKEND=mprotect WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/gone.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$B" 80 unmap >/dev/null 2>&1
is "$(python3 -c 'import json,sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"type\":\"summary\"" in l][0]
print(" ".join("%d/%s/%s" % (h["intervals"], h["mapping"], h.get("gone")) for h in s["hot_pages"][:5]))' "$TMP/gone.jsonl")" \
	"80/anon/81 80/anon/81 80/anon/81 80/anon/81 5/data:$B/None" "hot pages unmapped before the end stay in the list, with the interval they went in"
"$WSS" report "$TMP/gone.jsonl" | grep -c "(left tracking in interval 81)$" >"$TMP/gone.n"
is "$(cat "$TMP/gone.n")" 4 "wss report marks them"
env WSS_TRACK_BACKEND=mprotect WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/gone2.jsonl" WSS_PEAKS_ENABLED=false \
	LD_PRELOAD="$WSS_LIB" "$B" 80 unmap >/dev/null 2>&1
is "$(python3 -c 'import json,sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"type\":\"summary\"" in l][0]
print(" ".join("%d/%s" % (h["intervals"], h.get("gone")) for h in s["hot_pages"][:4]))' "$TMP/gone2.jsonl")" \
	"80/81 80/81 80/81 80/81" "and with peaks.enabled = false too"
# Moved by mremap, they are the same pages at their new address, once.
env WSS_TRACK_BACKEND=mprotect WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/moved.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$B" 80 move >/dev/null 2>&1
is "$(python3 -c 'import json,sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"type\":\"summary\"" in l][0]
print(" ".join("%d/%s" % (h["intervals"], h.get("gone")) for h in s["hot_pages"][:5]))' "$TMP/moved.jsonl")" \
	"80/None 80/None 80/None 80/None 5/None" "pages moved by mremap keep their hits at the new address, listed once"
bursts mprotect hot0 WSS_REPORT_HOT_PAGES=0
grep -q '"hot_pages":\[' "$TMP/hot0.jsonl"; is $? 1 "report.hot_pages = 0: no list"
bursts mprotect hot2 WSS_REPORT_HOT_PAGES=2
is "$(hot "$TMP/hot2.jsonl" | wc -l)" 2 "report.hot_pages = 2: two pages"

# Sampled: a thread's peak is on the sample's scale (its estimate), as
# the process's: bursty's one thread owns every page, so the two agree.
bursts mprotect smp WSS_TRACK_MODE=sampled WSS_TRACK_SAMPLE_RATE=1/2
is "$(python3 -c 'import json,sys
pk = [json.loads(l) for l in open(sys.argv[1]) if "\"type\":\"peak\"" in l]
d = {p["seq"]: p["value"] for p in pk if p["series"] == "data"}
t = [(p["seq"], p["value"]) for p in pk if p["series"].startswith("thread:")]
print(len(t) > 0 and all(d.get(s) == v for s, v in t))' "$TMP/smp.jsonl")" True \
	"sampled: the thread's peaks are estimates, equal to the process's (one thread)"

# pageramp: its first-touch sites name touch_pages in pageramp.c.
WSS_SESSION_INTERVAL=10ms WSS_SESSION_OUTPUT="$TMP/pr.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/pageramp" 2 >/dev/null 2>&1
$PROFILE check "$TMP/pr.jsonl"; ok $? "pageramp: valid profile"
found=no
for id in $(grep '"type":"stack"' "$TMP/pr.jsonl" | sed 's/.*"id":\([0-9]*\).*/\1/'); do
	$PROFILE stack "$TMP/pr.jsonl" "$id" | head -1 | grep -q '^touch_pages pageramp.c:' && found=yes
done
is "$found" yes "pageramp: a first-touch site's stack starts in touch_pages, pageramp.c"
done_testing
