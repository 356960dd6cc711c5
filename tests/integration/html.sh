#!/bin/sh
# wss report --html: the page of a real bursty profile (with a page trace),
# of a real multi-threaded one, of a session of two processes, and of a
# synthetic 64-thread profile, each opened in headless Chromium
# (tests/tap/browser.py, DevTools over a pipe): no console error or
# exception, one marker per peak record, a real click on a peak shows its
# first-touch stack with the program's function and source line, the
# thread charts, a non-blank screenshot.  Then what must fail: a cut or
# corrupt profile (the loader's error, exit 2, nothing written), an
# output that cannot be written (one line, exit 2), usage errors.
# Without Chromium the browser checks are SKIPs, never passes.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
command -v python3 >/dev/null || bail "python3 is not installed"
BROWSER="python3 $top_srcdir/tests/tap/browser.py"
have_chromium=no
for c in chromium chromium-browser google-chrome; do
	command -v $c >/dev/null && have_chromium=yes
done
plan 79

# browser NAME PAGE [ARGS...]: the page's facts into NAME.b ("key value"
# lines); its status (1: the page did not render).
browser() {
	name=$1 page=$2
	shift 2
	$BROWSER "$page" "$@" >"$name.b" 2>"$name.berr"
}
fact() { awk -v k="$2" '$1 == k { sub(/^[^ ]* /, ""); print; exit }' "$1.b"; }
# The browser checks: each a SKIP without Chromium.
bis() { # bis GOT WANT NAME
	if [ $have_chromium = no ]; then skip "no chromium: $3"; else is "$1" "$2" "$3"; fi
}
bok() { # bok STATUS NAME
	if [ $have_chromium = no ]; then skip "no chromium: $2"; else ok "$1" "$2"; fi
}
has() { grep -q "$1" "$2"; echo $?; } # has PATTERN FILE: 0 when a line matches
errors_of() { grep '^error \|^failure \|^chromium ' "$1.b" | sed 's/^/# /'; }

# ---- a bursty profile with a page trace ----
B=$PROGS/bursty
WSS_SESSION_TIME_BASE=manual WSS_SESSION_TRACE=true WSS_SESSION_OUTPUT="$TMP/b.jsonl" LD_PRELOAD="$WSS_LIB" \
	"$B" >"$TMP/b.out" 2>/dev/null || bail "bursty under the preload failed"
$PROFILE check "$TMP/b.jsonl" || bail "bursty's profile is not valid"
"$WSS" report --html b.html b.jsonl >out 2>err
is $? 0 "report --html of a real profile exits 0"
test ! -s out && test ! -s err; ok $? "and prints nothing"
head -c 15 b.html | grep -qx '<!DOCTYPE html>'; ok $? "the page is an HTML document"
# Self-contained: no element loads anything (the one URL is the SVG
# namespace, an identifier that is never fetched).
n=$(grep -Eoi '(src|href)=|<link|@import|url\(|https?://[a-z0-9./-]*' b.html | grep -v '^http://www.w3.org/2000/svg$' | wc -l)
is "$n" 0 "and refers to no other file or URL"
is "$(ls b.html.* 2>/dev/null | wc -l)" 0 "no temporary file is left beside it"
speaks=$(grep -c '"type":"peak"' b.jsonl)
between "$speaks" 2 100 "the profile has peak records ($speaks)"
line=$(grep -n 'p\[(size_t)i \* PG\] = (char)i;' "$top_srcdir/tests/progs/bursty.c" | cut -d: -f1)
first=$($PROFILE peaks b.jsonl | awk '{print $1; exit}')
browser b b.html --click-peak 1 --screenshot "$TMP/b.png" --height 1300
bok $? "the page renders in headless Chromium" || errors_of b
bis "$(fact b errors)" 0 "no console error or exception" || errors_of b
bis "$(fact b peaks)" "$speaks" "one peak marker per peak record"
bok "$(has '^detail .*sweep (bursty.c:'"$line"')' b.b)" \
	"a click on peak 1 shows its first-touch stack: sweep at bursty.c:$line" || sed -n 's/^detail /# /p' b.b
bok "$(has '^detail .*burst (bursty.c:[0-9]*)' b.b)" "and its caller burst with a line"
bok "$(has "^detail Peak 1: seq $first " b.b)" "the details are peak 1's (seq $first)"
bis "$(fact b flame_selected)" "peak:1" "and the flame graph shows that peak's stacks"
bok "$([ "$(fact b flame_nodes)" -ge 4 ] 2>/dev/null; echo $?)" "the flame graph has frames ($(fact b flame_nodes))"
bis "$(fact b threads)" 1 "one thread: one thread chart"
bis "$(fact b heatmap)" 1 "the trace's heat map"
# Its axes and key against wss heatmap --json, the page's data: the first
# page of 6 rows spread from the bottom to the top, the seq of 5 columns'
# first intervals (the last column's last; no time: the manual time base),
# and the key's touches: 0, 1, then 1/16, 1/4, 9/16 and all of the max.
"$WSS" heatmap --json b.jsonl >bh.json
python3 - bh.json >bh.want <<'PY'
import json, math, sys
h = json.load(open(sys.argv[1]))
pb, tb, mx = len(h["cells"]), len(h["cells"][0]), h["max"]
def spread(n, k):
    k = min(n, k)
    out = []
    for i in range(k):
        j = 0 if k == 1 else math.floor(i * (n - 1) / (k - 1) + 0.5)
        if not out or out[-1] != j:
            out.append(j)
    return out
print("heatmap_y", "|".join("#%d" % h["page_bins"][b]["first"] for b in spread(pb, 6)))
xs = spread(tb, 5)
print("heatmap_x", "|".join("seq %d" % h["time_bins"][t]["seq_last" if i and i == len(xs) - 1 else "seq_first"]
                            for i, t in enumerate(xs)))
key = [0]
for v in (1, mx / 16, mx / 4, 9 * mx / 16, mx):
    v = max(1, math.floor(v + 0.5))
    if v <= mx and v not in key:
        key.append(v)
print("heatmap_key", ",".join(map(str, key)))
PY
for k in heatmap_y heatmap_x heatmap_key; do
	bis "$(fact b $k)" "$(awk -v k=$k '$1 == k { sub(/^[^ ]* /, ""); print }' bh.want)" "the heat map's $k: its labels from the data"
done
bis "$(fact b curves)" 2 "the miss-ratio and policy curves"
bis "$(fact b hint)" 0 "no hint to record a trace"
bis "$(fact b hot)" "$($PROFILE get b.jsonl summary.hot_pages | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" \
	"a row per hot page"
want=$(grep '"type":"summary"' b.jsonl | python3 -c 'import json,sys
s = json.load(sys.stdin)
print("Data %.1f %s %s" % (s["data"]["avg"], format(s["data"]["peak"], ","), format(s["data"]["total"], ",")))')
bok "$(fact b summary_text | grep -qF "$want"; echo $?)" "the summary's numbers ($want)" || diag "$(fact b summary_text)"
bis "$(fact b settings)" "$(( $(grep '"type":"header"' b.jsonl | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["config_source"]))') + 1 ))" \
	"a row per setting of the header's config"
bok "$(has '^screenshot 1280x1300 ' b.b)" "a screenshot is taken"
colors=$(fact b screenshot | sed 's/.*colors //')
bok "$([ "${colors:-0}" -ge 100 ] 2>/dev/null; echo $?)" "and it is not blank ($colors colours)"
# WSS_HTML_SCREENSHOT=PATH keeps it (docs/report-html.png is one).
[ -n "${WSS_HTML_SCREENSHOT:-}" ] && [ -s b.png ] && cp b.png "$WSS_HTML_SCREENSHOT"
if [ $have_chromium = yes ]; then
	got=$(python3 "$top_srcdir/tests/tap/browser.py" png b.png | tr '\n' ' ')
	case $got in "width 1280 height 1300 colors "*) ok 0 "the PNG decodes on its own" ;; *) ok 1 "the PNG decodes on its own"; diag "$got" ;; esac
else
	skip "no chromium: the PNG decodes on its own"
fi

# ---- a multi-threaded profile, without a trace ----
WSS_SESSION_TIME_BASE=manual WSS_SESSION_WINDOW=300ms WSS_SESSION_OUTPUT="$TMP/t.jsonl" LD_PRELOAD="$WSS_LIB" \
	"$PROGS/phases" threads '</script><b>argv</b>' >/dev/null 2>&1 || bail "phases threads under the preload failed"
ntid=$(python3 -c 'import json,sys
print(len({t["tid"] for l in open(sys.argv[1]) for t in json.loads(l).get("threads", [])}))' t.jsonl)
between "$ntid" 3 9 "phases threads: several threads in the profile ($ntid)"
"$WSS" report --html t.html t.jsonl
is $? 0 "report --html of it exits 0"
grep -q '\\u003c/script>\\u003cb>argv\\u003c/b>' t.html; ok $? "an argv with </script> is escaped in the page's data"
browser t t.html
bok $? "it renders" || errors_of t
bis "$(fact t errors)" 0 "no console error or exception" || errors_of t
bis "$(fact t threads)" "$ntid" "a chart per thread"
bis "$(fact t thread_strip_rows)" "$((ntid * 10))" "and a row per thread in the strip"
bis "$(fact t hint)" 1 "no trace: the hint to record one"

# ---- a session: the leader's profile names its child's ----
WSS_SESSION_INTERVAL=10ms WSS_SESSION_OUTPUT="$TMP/m.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/forker" wall >/dev/null 2>&1
lead=$(grep -l '"type":"process"' m.*.jsonl | head -1)
test -n "$lead"; ok $? "forker: the leader's profile has a process record"
"$WSS" report --html m.html "$lead"
is $? 0 "report --html of the leader exits 0"
browser m m.html --select-proc 1
bis "$(fact m procs)" 2 "the page lists the leader and its child"
bis "$(fact m procs_with_profile)" 2 "both selectable (the child's profile loaded from the note)"
bis "$(fact m errors)" 0 "selecting the child: no error" || errors_of m
# Each process in the tree with its data peak, from its profile.
peaks=$(for f in m.*.jsonl m.*.d/*.jsonl; do $PROFILE get "$f" summary.data.peak; done | sort -n | tr '\n' ' ')
got=$(fact m proc_labels | tr '|' '\n' | sed -n 's/.*, peak \([0-9.]*\) MiB$/\1/p' | sort -n | tr '\n' ' ')
want=$(for v in $peaks; do python3 -c 'import sys; print("%.1f" % (int(sys.argv[1]) * 4096 / 1048576))' "$v"; done | sort -n | tr '\n' ' ')
bis "$got" "$want" "the tree gives each process's data peak in MiB ($got)"
# The selected process's page opens with its report's diagnosis.
for f in m.*.jsonl m.*.d/*.jsonl; do "$WSS" report --json "$f" | python3 -c 'import json, sys; print(json.load(sys.stdin)["diagnosis"]["text"])'; done >m.diag
grep -qxF "$(fact m diagnosis)" m.diag; ok $? "the page opens with the report's diagnosis" || { fact m diagnosis; cat m.diag; } | sed 's/^/# /'
"$WSS" report --html m2.html m.*.jsonl m.*.d/*.jsonl
is $? 0 "both profiles given: exits 0"
browser m2 m2.html
bis "$(fact m2 procs)" 2 "still two processes (the child given and noted is one)"

# ---- a synthetic profile: 64 threads, the rest summed ----
python3 "$top_srcdir/bench/html-synth.py" --samples 2000 --threads 64 --peaks 7 -o s.jsonl || bail "html-synth.py failed"
"$WSS" report --html s.html s.jsonl
is $? 0 "a synthetic profile of 2,000 samples of 64 threads"
browser s s.html --click-peak 3
bis "$(fact s errors)" 0 "renders without error" || errors_of s
bis "$(fact s peaks)" 7 "its 7 peak markers"
bis "$(fact s threads)" 9 "8 thread charts and one of the other 56 summed"
bis "$(fact s thread_strip_rows)" 320 "the strip: 64 rows of 5 pixels"
bis "$(fact s hot_gone)" 2 "its 2 hot pages unmapped before the end are marked"

# ---- a sampled run (the text report's fixture): its estimates as the text report prints them ----
F=$top_srcdir/tests/fixtures/report-sampled.jsonl
"$WSS" report --html f.html "$F"
is $? 0 "a sampled profile"
browser f f.html
bis "$(fact f errors)" 0 "renders without error" || errors_of f
want=$(awk '/^Data avg\/peak\/total/ { d = 1; next } d && $1 == "avg" { sub(/^ *avg +/, ""); sub(/  [0-9,]+ kB$/, ""); sub(/ pages/, ""); sub(/  \[/, " ["); print; exit }' "$top_srcdir/tests/fixtures/report-sampled.txt")
bok "$(fact f summary_text | grep -qF "$want"; echo $?)" "Data avg as the text report has it: $want" || diag "$(fact f summary_text)"

# ---- a killed program's profile: no summary, a cut last line ----
head -n 60 b.jsonl >k.jsonl
printf '{"type":"sample","seq":99,"t_' >>k.jsonl
"$WSS" report --html k.html k.jsonl
is $? 0 "a profile without a summary, its last line cut: exits 0"
browser k k.html
bis "$(fact k errors)" 0 "renders without error" || errors_of k

head -n 1 b.jsonl >h.jsonl
"$WSS" report --html h.html h.jsonl
is $? 0 "a profile of its header alone: exits 0"
browser h h.html
bis "$(fact h errors)" 0 "renders without error" || errors_of h

# A trace named but missing: one line on stderr, a page without the analyses.
mkdir nt && cp b.jsonl nt/
"$WSS" report --html nt/b.html nt/b.jsonl 2>err
is $? 0 "the trace missing: the page is made anyway"
is "$(cat err)" "wss: nt/b.trace: No such file or directory" "and stderr says it once"

# ---- what must fail ----
# A corrupt record: the loader's own line, as wss report prints it.
sed '5s/.*/{"type":"sample","seq":/' b.jsonl >c.jsonl
echo old >c.html
"$WSS" report c.jsonl >/dev/null 2>want.err
"$WSS" report --html c.html c.jsonl >out 2>err
is $? 2 "a corrupt profile: exit 2"
cmp -s err want.err; ok $? "with the loader's error ($(cat err))"
is "$(cat c.html)" old "and the existing page is untouched"
"$WSS" report --html c2.html b.jsonl c.jsonl 2>/dev/null
is $? 2 "a corrupt second profile: exit 2"
test ! -e c2.html; ok $? "and no page"
"$WSS" report --html c3.html nonexistent.jsonl 2>err
is $? 2 "a missing profile: exit 2"
"$WSS" report --html /nonexistent/dir/x.html b.jsonl 2>err
is $? 2 "an output in a missing directory: exit 2"
is "$(cat err)" "wss: /nonexistent/dir/x.html: cannot write it: the directory /nonexistent/dir does not exist" "in one line"
mkdir d.html
"$WSS" report --html d.html b.jsonl 2>err
is $? 2 "an output that is a directory: exit 2"
is "$(cat err)" "wss: d.html: cannot write it: Is a directory" "in one line"
is "$(ls -A | grep -c '^\.d\.html\.')" 0 "and the temporary file is removed"
# A page replaced: a new file renamed over it (a reader of the old one
# keeps it whole), with the old page's mode; a new page has the umask's.
"$WSS" report --html mode.html b.jsonl 2>/dev/null && chmod 640 mode.html
ino=$(stat -c %i mode.html)
(umask 077 && "$WSS" report --html mode.html b.jsonl 2>/dev/null && "$WSS" report --html new.html b.jsonl 2>/dev/null)
is "$(stat -c %a mode.html):$(stat -c %a new.html)" "640:600" "a page replaced keeps its mode, a new one gets the umask's"
[ "$(stat -c %i mode.html)" != "$ino" ]; ok $? "the page is replaced by a rename, never rewritten in place"
planted html "$WSS" report --html @OUT b.jsonl
"$WSS" report --html 2>/dev/null
is $? 2 "--html without a path: usage error"
"$WSS" report --json --html x.html b.jsonl 2>/dev/null
is $? 2 "--json with --html: usage error"
"$WSS" report b.jsonl t.jsonl 2>/dev/null
is $? 2 "two profiles without --html: usage error"

done_testing
