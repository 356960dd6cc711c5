#!/bin/sh
# A program that installs a seccomp filter half-way through (tests/progs/
# sandbox.c).  A filter that refuses a call wss makes (mprotect: EPERM, or
# the kill of the process) ends measuring before it is installed: the
# program runs on as natively, untracked, the profile ends with its summary,
# stderr says which call and why, and what it execs under the filter is not
# measured.  A filter that refuses nothing of wss's changes nothing.  One
# installed by an inline system call, which no wrapper sees, cannot be
# survived: stderr says why before the program dies of its access.
. "$top_srcdir/tests/tap/tap.sh"
plan 34

S="$PROGS/sandbox"
run() { # NAME MODE: native and under wss, stdout/stderr/status in $TMP/NAME.*
	"$S" "$2" >"$TMP/$1.native" 2>"$TMP/$1.native_err"
	echo $? >"$TMP/$1.native_st"
	mkdir -p "$TMP/$1.d"
	env WSS_SESSION_OUTPUT="$TMP/$1.d/p.jsonl" LD_PRELOAD="$WSS_LIB" "$S" "$2" >"$TMP/$1.out" 2>"$TMP/$1.err"
	echo $? >"$TMP/$1.st"
}
samples() { python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("type") == "sample"))' "$1"; }

for mode in prctl syscall kill; do
	run "$mode" "$mode"
	is "$(cat "$TMP/$mode.st")" "$(cat "$TMP/$mode.native_st")" "$mode: the exit status as natively"
	cmp -s "$TMP/$mode.out" "$TMP/$mode.native"
	ok $? "$mode: the output as natively (the filter's result, the heap, the exec'd child)" ||
		diff "$TMP/$mode.native" "$TMP/$mode.out" | sed 's/^/# /'
	# (natively the exec'd shell cannot start: its loader needs mprotect)
	grep -v '^wss: ' "$TMP/$mode.err" | cmp -s - "$TMP/$mode.native_err"
	ok $? "$mode: the program's stderr as natively, wss's lines aside"
	how="fails with Operation not permitted"
	[ "$mode" = kill ] && how="kills the process"
	grep -qx "wss: measuring stopped after sample [0-9]*: the program's seccomp filter: mprotect $how; the program runs on untracked" \
		"$TMP/$mode.err"
	ok $? "$mode: stderr says measuring stopped, at which sample, and why" || sed 's/^/# /' "$TMP/$mode.err"
	is "$(grep -c '^wss: measuring stopped' "$TMP/$mode.err")" 1 "$mode: once"
	$PROFILE check "$TMP/$mode.d/p.jsonl"
	ok $? "$mode: the profile is complete, with its summary"
	is "$(ls "$TMP/$mode.d" | wc -l)" 1 "$mode: one profile: the program exec'd under the filter is not measured"
done

for mode in mprotect-exec unrelated; do
	run "$mode" "$mode"
	is "$(cat "$TMP/$mode.st")" 0 "$mode: exit status 0 as natively"
	cmp -s "$TMP/$mode.out" "$TMP/$mode.native"
	ok $? "$mode: the output as natively"
	! grep -q '^wss: measuring stopped' "$TMP/$mode.err"
	ok $? "$mode: a filter that refuses nothing wss calls changes nothing" || sed 's/^/# /' "$TMP/$mode.err"
	$PROFILE check "$TMP/$mode.d/p.jsonl"
	ok $? "$mode: the profile is complete"
	# ten 50 ms steps after the filter: the run is measured to its end
	between "$(samples "$TMP/$mode.d/p.jsonl")" 5 1000 "$mode: measuring went on after the filter"
done

run raw raw
is "$(cat "$TMP/raw.native_st")" 0 "raw: natively the program ends normally"
grep -qx "wss: cannot give a page its protection back: mprotect: Operation not permitted (a seccomp filter wss did not see installed, or a security module): the access faults" \
	"$TMP/raw.err"
ok $? "raw: a filter installed behind the C library's back: stderr says why the access faults" || sed 's/^/# /' "$TMP/raw.err"
is "$(grep -c '^wss: cannot give a page' "$TMP/raw.err")" 1 "raw: once"
done_testing
