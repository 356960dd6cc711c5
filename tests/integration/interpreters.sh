#!/bin/sh
# Interpreter frames folded and labelled: a Python program's peak
# (tests/runtimes/peak.py, a list built in a nested function after a quiet
# start), node's (tests/runtimes/peak.js) and Java's (Churn.java's
# compiler threads) run under wss, then `wss report`: each run of two or
# more frames in python3.X/libpython3.X.so, node or libjvm.so is one line
# "[python interpreter: N frames]", and the stacks are a few lines long;
# --raw-stacks shows every frame; --json lists every frame with the runs
# marked, and the text, the raw text and the JSON agree site by site
# (tests/tap/folds.py, with the rule written again); the HTML page marks
# the same runs and a click on a peak shows the label; the pprof export
# keeps every frame.  A missing runtime is a SKIP.
. "$top_srcdir/tests/tap/tap.sh"

plan 30

RT=$top_srcdir/tests/runtimes
FOLDS="python3 $top_srcdir/tests/tap/folds.py"
have() { command -v "$1" >/dev/null 2>&1; }
# peaks NAME: the Peaks section of NAME.txt (the folded report).
peaks() { sed -n '/^Peaks/,/^$/p' "$TMP/$1"; }
fact() { awk -v k="$2" '$1 == k { sub(/^[^ ]* /, ""); print; exit }' "$1"; }

# profile NAME CMD...: CMD under wss, exact, 10 ms intervals (the peak
# detector's 30-sample warm-up is over in 0.3 s); its report folded
# (NAME.txt), raw (NAME.raw), as JSON (NAME.json), and folds.py's view of
# the three (NAME.chk).
profile() {
	name=$1
	shift
	"$WSS" run --mode exact --interval 10ms -o "$TMP/$name.jsonl" -- "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" ||
		bail "$name failed under wss: $(tail -3 "$TMP/$name.err")"
	"$WSS" report "$TMP/$name.jsonl" >"$TMP/$name.txt" 2>&1 || bail "wss report $name failed"
	"$WSS" report --raw-stacks "$TMP/$name.jsonl" >"$TMP/$name.raw" 2>&1 || bail "wss report --raw-stacks $name failed"
	"$WSS" report --json "$TMP/$name.jsonl" >"$TMP/$name.json" || bail "wss report --json $name failed"
	$FOLDS text "$TMP/$name.txt" "$TMP/$name.raw" "$TMP/$name.json" >"$TMP/$name.chk" || bail "folds.py failed on $name"
}

# agree NAME WHAT: folds.py found the text, raw text and JSON agreeing.
agree() {
	is "$(head -1 "$TMP/$1.chk")" ok "$2: text, --raw-stacks and --json agree on every site's runs" ||
		sed -n '1,10s/^/# /p' "$TMP/$1.chk"
}

# ---- Python ----
# The interpreter itself, not pyenv's shim (a shell script that execs it).
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)
[ -x "$PY" ] || bail "python3 is not installed"
profile py "$PY" "$RT/peak.py"
is "$(cat "$TMP/py.out")" "peak 4" "python: the program runs as natively"
n=$(fact "$TMP/py.chk" folds)
[ "${n:-0}" -ge 1 ]
ok $? "python: peak stacks have folded runs ($n)"
peaks py.txt | grep -Eq '^ {26}\[python interpreter: [0-9]+ frames\]$'
ok $? "python: a peak's stack reads [python interpreter: N frames]" || peaks py.txt | head -12 | sed 's/^/# /'
agree py python
l=$(fact "$TMP/py.chk" longest) lr=$(fact "$TMP/py.chk" longest_raw)
between "$l" 1 8 "python: every peak stack is a few lines, 8 at most (the longest $l; raw $lr)"
[ "${lr:-0}" -gt 12 ]
ok $? "python: raw, the longest stack is $lr lines: the fold is not a no-op"
peaks py.raw | grep -q '_PyEval_EvalFrameDefault'
ok $? "python: --raw-stacks shows the interpreter's frames (_PyEval_EvalFrameDefault)"
! peaks py.txt | grep -q '_PyEval_EvalFrameDefault'
ok $? "python: folded, no _PyEval_EvalFrameDefault is left"
! grep -q '^ *\[python interpreter' "$TMP/py.raw"
ok $? "python: --raw-stacks folds nothing"
is "$(fact "$TMP/py.chk" labels)" "python interpreter" "python: the only label is the interpreter's"
# The JSON keeps every frame, marked.
grep -q '"folded":{"label":"python interpreter","frames":[0-9]*}' "$TMP/py.json"
ok $? "python: --json marks the runs' frames {\"label\", \"frames\"}"

# Debian's python3.11 is one static executable; pyenv's (above) keeps the
# interpreter in libpython3.11.so: both fold.
PY2=$(readlink -f /usr/bin/python3 2>/dev/null)
if [ -x "$PY2" ] && [ "$PY2" != "$PY" ]; then
	profile py2 "$PY2" "$RT/peak.py"
	peaks py2.txt | grep -Eq '^ {26}\[python interpreter: [0-9]+ frames\]$'
	ok $? "python ($PY2): a peak's stack reads [python interpreter: N frames]"
	agree py2 "python ($PY2)"
else
	skip "no second python3 (a static one beside a shared one)"
	skip "no second python3 (a static one beside a shared one)"
fi

# The page marks the same runs; --raw-stacks, none.
"$WSS" report --html "$TMP/py.html" "$TMP/py.jsonl" 2>"$TMP/html.err" || bail "wss report --html failed: $(cat "$TMP/html.err")"
$FOLDS html "$TMP/py.html" >"$TMP/pyhtml.chk" || bail "folds.py html failed"
is "$(head -1 "$TMP/pyhtml.chk")" ok "python: the HTML page's stacks mark the same runs" || sed -n '1,5s/^/# /p' "$TMP/pyhtml.chk"
"$WSS" report --raw-stacks --html "$TMP/pyraw.html" "$TMP/py.jsonl" 2>/dev/null || bail "wss report --raw-stacks --html failed"
! grep -q '\["python interpreter",[0-9]' "$TMP/pyraw.html"
ok $? "python: the --raw-stacks page marks no run"
if have chromium || have chromium-browser || have google-chrome; then
	python3 "$top_srcdir/tests/tap/browser.py" "$TMP/py.html" --click-peak 1 >"$TMP/py.b" 2>"$TMP/py.berr"
	grep -Eq '^detail .*\[python interpreter: [0-9]+ frames\]' "$TMP/py.b"
	ok $? "python: a click on peak 1 shows the label in the page" || sed -n 's/^detail /# /p' "$TMP/py.b" | head -12
	is "$(fact "$TMP/py.b" errors)" 0 "python: the page draws its folded stacks and flame graph without an error" ||
		grep '^error ' "$TMP/py.b" | sed 's/^/# /'
else
	skip "no chromium: the page's folded stack"
	skip "no chromium: the page's errors"
fi

# pprof keeps every frame (cli/out/pprof.c says why), and pprof's own -hide
# folds them away by their mapping, as docs/report.md says.
"$WSS" export --format pprof -o "$TMP/py.pb.gz" "$TMP/py.jsonl" 2>/dev/null || bail "wss export --format pprof failed"
if have go; then
	go tool pprof -traces "$TMP/py.pb.gz" 2>/dev/null >"$TMP/py.traces"
	grep -q '_PyEval_EvalFrameDefault' "$TMP/py.traces"
	ok $? "python: the pprof export keeps the interpreter's frames"
	go tool pprof -traces -hide='bin/python3|libpython3' "$TMP/py.pb.gz" 2>/dev/null >"$TMP/py.hidden"
	[ -s "$TMP/py.hidden" ] && ! grep -Eq '_PyEval_EvalFrameDefault|PyObject_' "$TMP/py.hidden" &&
		grep -q '__libc_start_main' "$TMP/py.hidden"
	ok $? "python: go tool pprof -hide='bin/python3|libpython3' drops them, and keeps libc's"
else
	skip "go tool pprof is not installed"
	skip "go tool pprof is not installed"
fi

# ---- node ----
if have node; then
	profile node node "$RT/peak.js"
	is "$(cat "$TMP/node.out")" "peak 4" "node: the program runs as natively"
	peaks node.txt | grep -Eq '^ {26}\[node/V8: [0-9]+ frames\]$'
	ok $? "node: a peak's stack reads [node/V8: N frames]" || peaks node.txt | head -12 | sed 's/^/# /'
	agree node node
	l=$(fact "$TMP/node.chk" longest_in_modules) lr=$(fact "$TMP/node.chk" longest_raw)
	between "$l" 1 8 "node: every peak stack in modules alone (no JIT frame) is a few lines, 8 at most (the longest $l; raw $lr)"
	peaks node.raw | grep -q '(node)$'
	ok $? "node: --raw-stacks shows V8's and node's frames"
	is "$(fact "$TMP/node.chk" labels)" "node/V8" "node: the only label is node/V8's"
else
	for t in 1 2 3 4 5 6; do skip "node not installed (Debian: nodejs)"; done
fi

# ---- Java ----
if have javac && have java && javac -d "$TMP/java" "$RT/Churn.java" 2>/dev/null; then
	# The checks are of the stacks of peaks that run through libjvm.so,
	# which the JVM's compiler threads make in most runs; on a loaded
	# machine their bursts can fall in the detector's warm-up, and a run
	# has no peak (CI met one): up to three runs, until one has such a
	# stack (--raw-stacks: the frames as they are, before any fold).
	for try in 1 2 3; do
		profile java java -cp "$TMP/java" Churn
		peaks java.raw | grep -q '(libjvm\.so)$' && break
		diag "java: run $try had no peak through libjvm.so; again"
	done
	peaks java.txt | grep -Eq '^ {26}\[JVM: [0-9]+ frames\]$'
	ok $? "java: a peak's stack reads [JVM: N frames]" || peaks java.txt | head -12 | sed 's/^/# /'
	agree java java
	# Interpreted and compiled Java methods are frames no module holds
	# (the code cache): the program's code, never folded, so only the
	# stacks of libjvm.so's and the libraries' frames are bounded.
	l=$(fact "$TMP/java.chk" longest_in_modules) lr=$(fact "$TMP/java.chk" longest_raw)
	between "$l" 1 8 "java: every peak stack in modules alone is a few lines, 8 at most (the longest $l; raw $lr)"
	peaks java.raw | grep -q '(libjvm\.so)$'
	ok $? "java: --raw-stacks shows libjvm.so's frames"
else
	for t in 1 2 3 4; do skip "java/javac not installed (Debian: openjdk-17-jdk-headless)"; done
fi

# ---- usage ----
"$WSS" report --raw-stacks >/dev/null 2>"$TMP/usage.err"
is "$?" 2 "--raw-stacks without a profile: a usage error (exit 2)"
done_testing
