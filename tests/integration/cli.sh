#!/bin/sh
# `wss run` and bare LD_PRELOAD: usage errors, exit statuses, signals,
# the profile and the stderr summary, unchanged program output.
. "$top_srcdir/tests/tap/tap.sh"
plan 58

"$WSS" --help >/dev/null; is $? 0 "wss --help exits 0"
"$WSS" frobnicate 2>"$TMP/err"; is $? 2 "unknown command exits 2"
grep -q '^wss: unknown command: frobnicate' "$TMP/err"; ok $? "and says so"
"$WSS" run 2>/dev/null; is $? 125 "run without a program exits 125"
"$WSS" run --bogus -- true 2>"$TMP/err"; is $? 125 "unknown option exits 125"
"$WSS" run --intervall 10ms -- true 2>"$TMP/err2"
is "$?:$(cat "$TMP/err2")" "125:wss: run: unknown option --intervall; did you mean --interval?" "a mistyped flag: one line naming the flag meant"
"$WSS" run --interval 0 -- touch "$TMP/ran" 2>"$TMP/err"; is $? 125 "zero interval exits 125"
test ! -e "$TMP/ran"; ok $? "and the program did not run"
"$WSS" run --interval 10 ms -- true 2>/dev/null; is $? 125 "a malformed duration exits 125"
"$WSS" run --interval 100ms --window 250ms -- true 2>"$TMP/err"; is $? 125 "window not a multiple of interval exits 125"
"$WSS" run --window 3 -o /dev/null -- true 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "125:wss: --window: session.window: not a duration: \"3\" (a number needs its unit: ns, us, ms or s; 300ms for 3 intervals?)" \
	"--window 3 (meant as wss window's count): exit 125, with the hint"
"$WSS" run --interval 100000000 -o /dev/null -- touch "$TMP/ran4" 2>"$TMP/err"
is "$?:$(cat "$TMP/err"):$(test -e "$TMP/ran4" && echo ran)" \
	"125:wss: --interval: session.interval: not a duration: \"100000000\" (a number needs its unit: ns, us, ms or s; 100ms, read as nanoseconds?):" \
	"a bare number is no duration: refused with its nanoseconds' reading, before the program"
"$WSS" run --time-base sundial -- true 2>/dev/null; is $? 125 "unknown time base exits 125"
# Sampled tracking's flags: a bad value is one line, status 125, before the program runs.
badflag() { # badflag EXPECTED-LINE FLAG VALUE...
	want=$1; shift
	rm -f "$TMP/ran3"
	"$WSS" run -o "$TMP/bad.jsonl" "$@" -- touch "$TMP/ran3" 2>"$TMP/err"; is $? 125 "$* exits 125"
	got=$(cat "$TMP/err")
	{ test -e "$TMP/ran3" || test -e "$TMP/bad.jsonl"; } && got="(the program ran) $got"
	is "$got" "$want" "one line, before the program: $want"
}
badflag 'wss: --mode: track.mode: unknown value "sample" (expected "auto", "exact" or "sampled"); did you mean "sampled"?' \
	--mode sample
badflag 'wss: --overhead: session.overhead: not a percentage: "2" (a number and %, e.g. "2%" or "0.5%")' --overhead 2
badflag 'wss: --overhead: session.overhead: out of range: "60%" (from 0.1% to 50%)' --overhead=60%
badflag 'wss: --sample-rate: track.sample_rate: N must be a power of two: "1/100" (1/64 or 1/128?)' \
	--mode sampled --sample-rate 1/100
badflag 'wss: --sample-rate: track.sample_rate: "1/1" samples every page; use track.mode = "exact" instead' \
	--mode sampled --sample-rate 1/1
# The default mode, not the one tap.sh exports for the other tests.
unset WSS_TRACK_MODE
badflag 'wss: --sample-rate: track.sample_rate needs track.mode = "sampled" (track.mode is "auto", the default)' \
	--sample-rate 1/64
export WSS_TRACK_MODE=exact
"$WSS" run --mode 2>"$TMP/err"; is $? 125 "--mode without a value exits 125"
# Good values reach the library as flags, recorded in the header.
"$WSS" run -o "$TMP/sampled.jsonl" --mode sampled --sample-rate 1/64 --overhead 0.5% -- true 2>/dev/null
is $? 0 "--mode sampled --sample-rate 1/64 --overhead 0.5% runs"
is "$($PROFILE get "$TMP/sampled.jsonl" header.config.track.mode)/$($PROFILE get "$TMP/sampled.jsonl" header.config.track.sample_rate)/$($PROFILE get "$TMP/sampled.jsonl" header.config.session.overhead)" \
	"sampled/1/64/0.5%" "the header's config has them"
is "$($PROFILE get "$TMP/sampled.jsonl" header.config_source.track.mode)/$($PROFILE get "$TMP/sampled.jsonl" header.config_source.track.sample_rate)/$($PROFILE get "$TMP/sampled.jsonl" header.config_source.session.overhead)" \
	"flag/flag/flag" "each from its flag"
"$WSS" run -o "$TMP/no/such/dir/p.jsonl" -- true 2>"$TMP/err"; is $? 125 "missing output directory exits 125"
: > "$TMP/exists.jsonl"
"$WSS" run -o "$TMP/exists.jsonl" -- true 2>"$TMP/err"; is $? 125 "an existing profile is never overwritten"
planted --status 125 run "$WSS" run -o @OUT -- true

"$WSS" run -o "$TMP/three.jsonl" -- sh -c 'exit 3' 2>/dev/null; is $? 3 "exit status passes through"
"$WSS" run -o "$TMP/term.jsonl" -- sh -c 'kill -TERM $$' 2>/dev/null; is $? 143 "death by SIGTERM is 128+15"
$PROFILE check "$TMP/term.jsonl" --prefix; ok $? "a killed program leaves a valid profile prefix"
# A profile without a summary says why in one line: the program died of a
# signal, or left by its own exit_group (Go's runtime), past every wrapper.
"$WSS" run -o "$TMP/term2.jsonl" -- sh -c 'kill -TERM $$' 2>"$TMP/term2.err"
grep -qx "wss: sh died of signal 15 (Terminated): its profile $TMP/term2.jsonl \(ends at sample [0-9]*, with\|has no sample and\) no summary (a valid prefix: wss report reads it)" "$TMP/term2.err"
ok $? "a killed program: one line says its profile has no summary, and why" || sed 's/^/# /' "$TMP/term2.err"
"$WSS" run -o "$TMP/raw.jsonl" -- "$PROGS/lifecycle" raw-exit-group3 >"$TMP/raw.out" 2>"$TMP/raw.err"
is "$?:$(cat "$TMP/raw.out")" "3:exit_group(3), the program's own instruction" "a raw exit_group: the status and output of the program"
grep -q "^wss: $PROGS/lifecycle exited (status 3) by its own exit_group system call, past the C library's exit (as Go does): its profile $TMP/raw.jsonl .* no summary (a valid prefix: wss report reads it); wss attach --method refbits PID measures such a program to its end\$" "$TMP/raw.err"
ok $? "a raw exit_group: one line says why there is no summary, and what measures such a program" || sed 's/^/# /' "$TMP/raw.err"
$PROFILE check "$TMP/raw.jsonl" --prefix; ok $? "its profile is a valid prefix"
# A program the preload cannot enter says so in one line, and runs as
# natively (a static one: no loader to read LD_PRELOAD).
printf 'int main(void) { return 3; }\n' >"$TMP/static.c"
if ${CC:-cc} -static -o "$TMP/static" "$TMP/static.c" 2>/dev/null; then
	(cd "$TMP" && "$WSS" run -- ./static 2>"$TMP/static.err")
	is "$?:$(cat "$TMP/static.err")" \
		"3:wss: ./static is statically linked: the preload cannot enter it, so it runs untracked and writes no profile (wss attach --method refbits PID measures it while it runs)" \
		"a static program: one line says it runs untracked, and its status passes through"
else
	skip "no static C library to link with"
fi
# wss run ends as the program ended: killed by the same signal (a shell
# then says "Segmentation fault"), not exiting 128+N; and no core of its own.
is "$(cd "$TMP" && ulimit -c unlimited 2>/dev/null; python3 -c '
import subprocess, sys
r = subprocess.run([sys.argv[1], "run", "-o", "/dev/null", "--", "sh", "-c", "kill -SEGV $$"])
print(r.returncode)' "$WSS")" -11 "death by SIGSEGV: wss run dies of SIGSEGV too (a parent sees the signal, not 139)"
"$WSS" run -- "$TMP/does-not-exist" 2>/dev/null; is $? 127 "a missing program is 127"

"$WSS" run -o "$TMP/ramp.jsonl" --interval 10ms -- "$PROGS/pageramp" 1 100 >"$TMP/out" 2>"$TMP/err"
is $? 0 "pageramp under wss run exits 0"
$PROFILE check "$TMP/ramp.jsonl"; ok $? "its profile is valid, complete, and threads partition every sample"
grep -Eq '^wss: data avg/peak/total: [0-9]+\.[0-9]/[0-9]+/[0-9]+ pages \([0-9.]+/[0-9.]+/[0-9.]+ MiB\)$' "$TMP/err"
ok $? "stderr summary line"
grep -qx "wss: profile: $TMP/ramp.jsonl" "$TMP/err"; ok $? "stderr names the profile"
is "$($PROFILE get "$TMP/ramp.jsonl" header.interval_ns)" 10000000 "--interval reaches the library"

# Bare LD_PRELOAD, no configuration: wss.<pid>.jsonl in the current directory.
mkdir "$TMP/cwd" && (cd "$TMP/cwd" && LD_PRELOAD="$WSS_LIB" "$PROGS/pageramp" 1 20 >/dev/null 2>&1)
is "$(ls "$TMP/cwd" | grep -c '^wss\.[0-9]*\.jsonl$')" 1 "bare LD_PRELOAD writes wss.<pid>.jsonl"

WSS_SESSION_INTERVAL=soon LD_PRELOAD="$WSS_LIB" touch "$TMP/ran2" 2>"$TMP/err"; is $? 0 "bad setting under a bare LD_PRELOAD: the program runs, its status"
test -e "$TMP/ran2" && grep -q '^wss: WSS_SESSION_INTERVAL.*; the program runs untracked$' "$TMP/err"; ok $? "untracked, one line naming the variable"
WSS_SESSION_OUTPUT=/nonexistent-dir/p.jsonl LD_PRELOAD="$WSS_LIB" /bin/true 2>"$TMP/err"; is $? 125 "unwritable output: the library stops the program before main, status 125"

# CPU time base: two busy threads for 1 s of wall time make ~2 s of CPU
# time, so a 20 ms CPU interval gives many samples, each ~20 ms of CPU apart.
"$WSS" run -o "$TMP/cpu.jsonl" --time-base cpu --interval 20ms -- "$top_builddir/tests/stress/stress_touch" wall 2 256 1 >/dev/null 2>&1
is $? 0 "--time-base cpu runs"
is "$($PROFILE get "$TMP/cpu.jsonl" header.time_base)" cpu "the header says cpu"
n=$(python3 -c 'import json,sys
s=[json.loads(l) for l in open(sys.argv[1]) if "\"sample\"" in l and "\"final\"" not in l]
gaps=[b["cpu_ns"]-a["cpu_ns"] for a,b in zip(s,s[1:])]
print(sum(1 for g in gaps if g >= 19000000) if len(s) >= 10 else 0)' "$TMP/cpu.jsonl")
between "$n" 9 100000 "samples come every 20 ms of CPU time ($n intervals checked)"

# Same output and status with and without the preload.
"$PROGS/signals" recover >"$TMP/native" 2>&1; s1=$?
"$WSS" run -o "$TMP/sig.jsonl" --interval 1ms -- "$PROGS/signals" recover >"$TMP/wss" 2>/dev/null; s2=$?
cmp -s "$TMP/native" "$TMP/wss" && [ $s1 = $s2 ]; ok $? "identical stdout and exit status ($s1/$s2)"
done_testing
