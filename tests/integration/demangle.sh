#!/bin/sh
# Readable stacks (issue 34): C++ and Rust names demangled (cli/model/symbols.c,
# libiberty's demangler) wherever wss prints a stack: wss report's text
# and JSON, the HTML page and the pprof export.  A C++ class template's
# member in a namespace and an overloaded function (tests/runtimes/names.cc),
# with DWARF (its linkage names) and without (the symbol table); a Rust
# module's functions (tests/runtimes/names.rs) under legacy mangling (its
# hash dropped) and v0; and a JIT's code, named from the perf map files node
# (tests/runtimes/jit.js) and HotSpot write.  A missing compiler is a SKIP.
. "$top_srcdir/tests/tap/tap.sh"

plan 17

RT=$top_srcdir/tests/runtimes
have() { command -v "$1" >/dev/null 2>&1; }

# profile NAME PROGRAM: run it under manual ticks, report it as text and JSON.
profile() {
	"$WSS" run --time-base manual -o "$TMP/$1.jsonl" -- "$2" >"$TMP/$1.out" 2>"$TMP/$1.err" ||
		bail "$1 failed under wss: $(cat "$TMP/$1.err")"
	"$WSS" report "$TMP/$1.jsonl" >"$TMP/$1.txt" 2>&1 || bail "wss report $1 failed"
	"$WSS" report --json "$TMP/$1.jsonl" >"$TMP/$1.json" || bail "wss report --json $1 failed"
}

# functions NAME: every frame's function in the JSON report, one a line.
functions() {
	python3 - "$TMP/$1.json" <<'PY'
import json, sys
def walk(x):
    if isinstance(x, dict):
        if isinstance(x.get("function"), str):
            print(x["function"])
        for v in x.values():
            walk(v)
    elif isinstance(x, list):
        for v in x:
            walk(v)
walk(json.load(open(sys.argv[1])))
PY
}

if have g++; then
	g++ -g -O1 -o "$TMP/names-g" "$RT/names.cc" && g++ -O1 -o "$TMP/names" "$RT/names.cc" ||
		bail "g++ failed"
	profile cxx "$TMP/names-g"
	is "$(cat "$TMP/cxx.out")" "names: 2" "c++: the program runs as natively"
	grep -q 'names::Pool<char>::grow(unsigned long) (.*names\.cc:[0-9]*)' "$TMP/cxx.txt"
	ok $? "c++: the allocation site reads names::Pool<char>::grow(unsigned long), with its line"
	grep -q 'names::fill(char\*, unsigned long) (.*names\.cc:[0-9]*)' "$TMP/cxx.txt"
	ok $? "c++: the first touches read names::fill(char*, unsigned long): the overload"
	! grep -q '_Z' "$TMP/cxx.txt"
	ok $? "c++: no mangled name left in the report"
	functions cxx | grep -qx 'names::Pool<char>::grow(unsigned long)'
	ok $? "c++: --json's frames carry the demangled name"
	# Without DWARF: the symbol table's names, demangled too.
	profile cxxsym "$TMP/names"
	grep -q 'names::fill(char\*, unsigned long)+0x' "$TMP/cxxsym.txt"
	ok $? "c++ without debug information: the symbol table's name demangled, with its offset"
	"$WSS" report --html "$TMP/cxx.html" "$TMP/cxx.jsonl" 2>/dev/null || bail "wss report --html failed"
	# The page's data is JSON in a script element, "<" escaped.
	grep -Fq 'names::Pool\u003cchar>::grow(unsigned long)' "$TMP/cxx.html"
	ok $? "c++: the HTML page carries the demangled name"
	if "$WSS" export --format pprof -o "$TMP/cxx.pb.gz" "$TMP/cxx.jsonl" 2>/dev/null && have go; then
		# -raw: the function table as written (-top shortens C++ names).
		go tool pprof -raw "$TMP/cxx.pb.gz" 2>/dev/null | grep -Fq '(names::fill(char*, unsigned long))'
		ok $? "c++: the pprof export's functions are named names::fill(char*, unsigned long)"
	else
		skip "go tool pprof is not installed"
	fi
else
	for t in 1 2 3 4 5 6 7 8; do skip "g++ not installed (Debian: g++)"; done
fi

if have rustc; then
	rustc -g -O -o "$TMP/names-rs" "$RT/names.rs" 2>"$TMP/rustc.err" || bail "rustc failed: $(cat "$TMP/rustc.err")"
	profile rs "$TMP/names-rs"
	is "$(cat "$TMP/rs.out")" "names: 3" "rust: the program runs as natively"
	functions rs | grep -qx 'names::names::grow_buffer'
	ok $? "rust (legacy mangling): the allocation site reads names::names::grow_buffer"
	functions rs | grep -qx 'names::names::fill_pages'
	ok $? "rust (legacy mangling): the first touches read names::names::fill_pages"
	! grep -Eq '_ZN|::h[0-9a-f]{16}' "$TMP/rs.txt"
	ok $? "rust (legacy mangling): no mangled name, no hash suffix in the report"
	if rustc -g -O -C symbol-mangling-version=v0 -o "$TMP/names-v0" "$RT/names.rs" 2>/dev/null; then
		profile v0 "$TMP/names-v0"
		functions v0 | grep -qx 'names::names::fill_pages'
		ok $? "rust (v0 mangling): names::names::fill_pages"
		! grep -Eq '(^|[^A-Za-z0-9])_R[A-Za-z]' "$TMP/v0.txt"
		ok $? "rust (v0 mangling): no mangled name left in the report"
	else
		skip "this rustc has no -C symbol-mangling-version=v0"
		skip "this rustc has no -C symbol-mangling-version=v0"
	fi
else
	for t in 1 2 3 4 5 6; do skip "rustc not installed (Debian: rustc)"; done
fi

# JIT code, named from the perf map the runtime writes (/tmp/perf-PID.map).
# jit NAME REGEX WHAT CMD...: run CMD exactly under wss; the report's
# first-touch sites have a frame matching REGEX; the map is removed.
jit() {
	name=$1 re=$2 what=$3
	shift 3
	# In the test's directory: node's --perf-basic-prof also writes a V8
	# log (isolate-*-v8.log) into its working directory (make distcheck
	# found one left in the build tree).
	(cd "$TMP" && "$WSS" run --mode exact -o "$TMP/$name.jsonl" -- "$@" >"$TMP/$name.out" 2>"$TMP/$name.err") ||
		bail "$name failed under wss: $(cat "$TMP/$name.err")"
	pid=$($PROFILE get "$TMP/$name.jsonl" header.pid)
	"$WSS" report "$TMP/$name.jsonl" >"$TMP/$name.txt" 2>&1 || bail "wss report of $name failed"
	sed -n '/^First touches by site/,/^$/p' "$TMP/$name.txt" | grep -Eq "$re"
	ok $? "$name: $what, named from /tmp/perf-$pid.map" ||
		sed -n '/^First touches by site/,/^$/p' "$TMP/$name.txt" | head -8 | sed 's/^/# /'
	rm -f "/tmp/perf-$pid.map"
}
if have node; then
	jit node 'JS:[*^~]fill .*jit\.js:[0-9]+:[0-9]+\+0x' "the typed array's pages first touched in JS:fill" \
		node --perf-basic-prof "$RT/jit.js"
	is "$(cat "$TMP/node.out")" "jit 4" "node: the program runs as natively"
else
	skip "node not installed (Debian: nodejs)"
	skip "node not installed (Debian: nodejs)"
fi
# HotSpot writes its map at exit when asked to.
if have javac && have java && javac -d "$TMP/java" "$RT/Churn.java" 2>/dev/null; then
	jit java '  (void|int|boolean|long|java\.[a-zA-Z.]*) java\.util\.[A-Za-z.]*\(.*\)\+0x' \
		"compiled methods (java.util's, by their signature)" \
		java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$TMP/java" Churn
else
	skip "java/javac not installed (Debian: openjdk-17-jdk-headless)"
fi
done_testing
