#!/bin/sh
# Issue 11: wss never harms the program, whatever its runtime.
# 1. The four ways the capture of call stacks and signal delivery could
#    touch an armed page where no fault can be taken (tests/progs/unharmed,
#    under manual ticks, under every backend), and a program linked by lld
#    (RELRO, .dynamic included, in a writable segment of its own).
# 2. The runtime matrix: a Rust program, a cgo Go program, a multi-threaded
#    Java program with GC pressure, a node script and Debian's ripgrep, each
#    under the defaults and under each backend the kernel can run: the same
#    output and exit status as without wss, and a valid profile (a prefix
#    where the runtime ends the process with a raw exit_group, as Go does)
#    with a plausible working set.  A missing toolchain is a SKIP.
# RUNTIME_RUNS=N repeats each run N times (make runtimes-soak: 20).
. "$top_srcdir/tests/tap/tap.sh"

RT=$top_srcdir/tests/runtimes
RUNS=${RUNTIME_RUNS:-1}
CC=${CC:-cc}
have() { command -v "$1" >/dev/null 2>&1; }

# The backends this kernel can run, besides auto (the defaults).
backends=mprotect
for b in hybrid uffd-wp; do
	WSS_TRACK_BACKEND=$b WSS_SESSION_OUTPUT="$TMP/probe.jsonl" LD_PRELOAD="$WSS_LIB" true 2>/dev/null && backends="$backends $b"
	rm -f "$TMP/probe.jsonl"
done
diag "backends: auto $backends"

# under NAME BACKEND EXPECTED-OUT EXPECTED-STATUS MIN-PEAK CMD...: run CMD
# under the preload RUNS times; each run must print EXPECTED-OUT with
# EXPECTED-STATUS, and leave valid profiles, the largest of which peaks at
# MIN-PEAK pages or more.
under() {
	name=$1 b=$2 want=$3 wstatus=$4 minpeak=$5
	shift 5
	bad=0 why=
	i=0
	while [ $i -lt "$RUNS" ]; do
		i=$((i + 1))
		d="$TMP/$name.$b.$i"
		mkdir -p "$d"
		# timeout outside the preload: the program's are the only profiles.
		if [ "$b" = auto ]; then
			timeout 600 env WSS_SESSION_OUTPUT="$d/p.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$@" >"$d/out" 2>"$d/err"
		else
			timeout 600 env WSS_TRACK_BACKEND=$b WSS_SESSION_OUTPUT="$d/p.%p.jsonl" LD_PRELOAD="$WSS_LIB" \
				"$@" >"$d/out" 2>"$d/err"
		fi
		st=$?
		if [ "$st" != "$wstatus" ]; then
			bad=$((bad + 1)) why="run $i: status $st, want $wstatus: $(tail -c 300 "$d/err")"
			continue
		fi
		if [ "$(cat "$d/out")" != "$want" ]; then
			bad=$((bad + 1)) why="run $i: output differs: $(head -c 200 "$d/out")"
			continue
		fi
		peak=0
		for p in $(find "$d" -name 'p.*.jsonl'); do # the session directory's too
			if ! err=$($PROFILE check "$p" --prefix 2>&1); then
				bad=$((bad + 1)) why="run $i: invalid profile: $err"
				continue 2
			fi
			m=$($PROFILE samples "$p" | awk 'BEGIN {m = 0} $2 > m {m = $2} END {print m}')
			[ "$m" -gt "$peak" ] && peak=$m
		done
		if [ "$peak" -lt "$minpeak" ]; then
			bad=$((bad + 1)) why="run $i: working set peaks at $peak pages, want $minpeak or more"
		fi
	done
	[ "$bad" = 0 ] || diag "$name under $b: $bad of $RUNS runs failed; last: $why"
	is "$bad" 0 "$name under $b: $RUNS run(s), same output and status, valid profile, peak >= $minpeak pages"
}

# matrix NAME MIN-PEAK CMD...: the native run, then every backend.
matrix() {
	name=$1 minpeak=$2
	shift 2
	want=$("$@" 2>/dev/null)
	wstatus=$?
	for b in auto $backends; do
		under "$name" "$b" "$want" "$wstatus" "$minpeak" "$@"
	done
}

# ---- 1. the capture and delivery paths, under manual ticks -------------
for mode in personality jitframe altstack threads stdio; do
	want=$("$PROGS/unharmed" $mode)
	for b in $backends; do
		p="$TMP/unharmed.$mode.$b.jsonl"
		out=$(WSS_TRACK_BACKEND=$b WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$p" \
			LD_PRELOAD="$WSS_LIB" "$PROGS/unharmed" $mode 2>"$TMP/err")
		is "$? $out" "0 $want" "unharmed $mode under $b: runs as without wss"
	done
done
# The personality scenario's stack goes past with_cleanup (the unwinder read
# the armed slot and went on); the JIT-like frame ends its stack.
p="$TMP/unharmed.personality.mprotect.jsonl"
n=$(python3 -c '
import json, sys
print(max([len(r["frames"]) for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "stack"] or [0]))' "$p")
between "$n" 3 200 "personality: the stack of the new site goes on past the frame with a personality ($n frames)"
p="$TMP/unharmed.jitframe.mprotect.jsonl"
n=$(python3 -c '
import json, sys
print(min([len(r["frames"]) for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "stack"] or [0]))' "$p")
is "$n" 1 "jitframe: a frame without unwind information ends the stack"

# lld: RELRO in a segment of its own, lazy binding.
if have ld.lld; then
	if $CC -O1 -fexceptions -I"$top_srcdir" -fuse-ld=lld -Wl,-z,lazy -o "$TMP/unharmed-lld" \
		"$top_srcdir/tests/progs/unharmed.c" -lpthread 2>"$TMP/lld.err"; then
		relro=$(readelf -lW "$TMP/unharmed-lld" | awk '$1 == "GNU_RELRO" {print $3, $6}')
		diag "lld layout: RELRO at/size $relro"
		want=$("$TMP/unharmed-lld" threads)
		for b in auto $backends; do
			out=$(WSS_TRACK_BACKEND=$b WSS_SESSION_OUTPUT="$TMP/lld.$b.jsonl" LD_PRELOAD="$WSS_LIB" \
				"$TMP/unharmed-lld" threads 2>"$TMP/err")
			is "$? $out" "0 $want" "lld-linked threads under $b: runs as without wss"
		done
	else
		bail "cannot link with lld: $(cat "$TMP/lld.err")"
	fi
else
	skip "ld.lld not installed (Debian: lld)"
fi

# A non-PIE executable that takes free's address: the engine thread's own
# exit calls free through the program's armed .got.plt (tests/progs/nopie.c).
if $CC -O1 -no-pie -fno-pie -o "$TMP/nopie" "$top_srcdir/tests/progs/nopie.c" 2>"$TMP/nopie.err"; then
	for b in $backends; do
		for i in 1 2 3; do
			out=$(WSS_TRACK_BACKEND=$b WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/nopie.jsonl" \
				LD_PRELOAD="$WSS_LIB" "$TMP/nopie" 2>"$TMP/err")
			st=$?
			[ "$st $out" = "0 nopie ok" ] || break
		done
		is "$st $out" "0 nopie ok" "non-PIE, free's canonical PLT, the engine thread's exit on an armed .got.plt under $b"
	done
else
	bail "cannot build without PIE: $(cat "$TMP/nopie.err")"
fi

# ---- 2. the runtime matrix ----------------------------------------------
# Rust
if have rustc; then
	if rustc -O -o "$TMP/hello-rs" "$RT/hello.rs" 2>"$TMP/rustc.err"; then
		matrix rust 500 "$TMP/hello-rs"
	else
		bail "rustc failed: $(cat "$TMP/rustc.err")"
	fi
else
	skip "rustc not installed (Debian: rustc)"
fi

# Go, with cgo
if have go && have gcc; then
	cp -r "$RT/gocgo" "$TMP/gocgo"
	if (cd "$TMP/gocgo" && CGO_ENABLED=1 GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOFLAGS=-mod=mod \
		GOPROXY=off go build -o gocgo .) 2>"$TMP/go.err"; then
		# A program wss cannot track with faults says so in its header.
		matrix go 1 "$TMP/gocgo/gocgo" /etc/services
		p=$(ls "$TMP"/go.auto.1/p.*.jsonl | head -1)
		is "$($PROFILE get "$p" header.backend)" uffd-wp "go: auto chooses uffd-wp for a Go program"
		p=$(ls "$TMP"/go.mprotect.1/p.*.jsonl | head -1)
		is "$($PROFILE get "$p" header.runtime)" Go "go: under mprotect the header names the runtime"
		grep -q 'Go program: not tracked' "$TMP"/go.mprotect.1/err
		ok $? "go: under mprotect stderr says what is not tracked"
	else
		bail "go build failed: $(cat "$TMP/go.err")"
	fi
else
	skip "go not installed (Debian: golang-go)"
fi

# Java
if have javac && have java; then
	if javac -d "$TMP/java" "$RT/Churn.java" 2>"$TMP/javac.err"; then
		matrix java 100 java -Xmx256m -cp "$TMP/java" Churn
	else
		bail "javac failed: $(cat "$TMP/javac.err")"
	fi
else
	skip "java/javac not installed (Debian: openjdk-17-jdk-headless)"
fi

# node
if have node; then
	matrix node 100 node "$RT/alloc.js"
else
	skip "node not installed (Debian: nodejs)"
fi

# ripgrep on our own sources
if have rg; then
	matrix ripgrep 20 rg -c --sort path fn "$top_srcdir/engine"
else
	skip "rg not installed (Debian: ripgrep)"
fi
done_testing
