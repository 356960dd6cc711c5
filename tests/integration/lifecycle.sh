#!/bin/sh
# Signals, exit paths and threads behave under the preload exactly as they
# do natively: each mode of tests/progs/lifecycle runs both ways (the
# preload with a 1 ms interval, so that ticks race the program), and its
# output and exit status must be the same; the profile must be complete
# after a normal exit and a valid prefix after a death.  Every run is under
# `watch` (tap.sh: timeout -k, and the threads' stacks of a run that
# hangs), so that a deadlock fails instead of hanging (with -k: a process
# whose only live thread blocks SIGTERM would ignore it).
. "$top_srcdir/tests/tap/tap.sh"
L=$PROGS/lifecycle
T=120

# native MODE: run natively; status in $ns, output in $TMP/MODE.native
native() {
	watch $T "$L" "$1" >"$TMP/$1.native" 2>"$TMP/$1.native.err"
	ns=$?
}

# preload MODE: run under the preload; status in $ps, output in
# $TMP/MODE.out, stderr in $TMP/MODE.err, profile $TMP/MODE.jsonl
preload() {
	watch $T env WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/$1.jsonl" LD_PRELOAD="$WSS_LIB" \
		"$L" "$1" >"$TMP/$1.out" 2>"$TMP/$1.err"
	ps=$?
}

# same MODE WANT-STATUS [--prefix]: three tests, the status and the output
# against the native run (and the status against WANT), and the profile.
same() {
	m=$1 want=$2 prefix=$3
	native "$m"
	preload "$m"
	[ "$ns" = "$want" ] || bail "$m: native run exits $ns, want $want"
	is "$ps" "$ns" "$m: exit status $ps as natively" || sed 's/^/# /' "$TMP/$m.err" | head -5
	cmp -s "$TMP/$m.out" "$TMP/$m.native"
	ok $? "$m: output as natively" || diff "$TMP/$m.native" "$TMP/$m.out" | head -10 | sed 's/^/# /'
	$PROFILE check "$TMP/$m.jsonl" $prefix
	ok $? "$m: profile $([ -n "$prefix" ] && echo "a valid prefix" || echo complete)"
}

plan 111

# ---- signals -------------------------------------------------------------
same altstack 0
grep -qx 'altstack hits 200 on-alt-stack 200 addr-ok 200 .*' "$TMP/altstack.out"
ok $? "altstack: every own fault reaches the handler on the alternate stack, with its address"
grep -qx 'altstack readback ok' "$TMP/altstack.out"; ok $? "altstack: sigaltstack reads back"

same resethand 139 --prefix
grep -qx 'resethand hits 1, now SIG_DFL' "$TMP/resethand.out"; ok $? "resethand: handled once, then the default"
watch $T "$WSS" run -o "$TMP/resethand2.jsonl" --interval 1ms -- "$L" resethand >/dev/null 2>&1
is $? 139 "resethand: the second fault kills with SIGSEGV through wss run (128+11)"

same nodefer 0
grep -qx 'nodefer rounds 20 max-depth 2 addr-ok 40' "$TMP/nodefer.out"; ok $? "nodefer: the handler faults again inside itself"

same jmploop 0
same blockmask 0
grep -c 'SIGSEGV blocked' "$TMP/blockmask.out" | grep -qx 2; ok $? "blockmask: the threads read their masks back"

same eintr 0
grep -qx 'no SA_RESTART: read -1, EINTR, alarms >= 1' "$TMP/eintr.out"; ok $? "eintr: EINTR without SA_RESTART"
grep -qx 'SA_RESTART: read 6 "hello", no error, alarms during the read >= 1' "$TMP/eintr.out"
ok $? "eintr: restarted with SA_RESTART"

# Process-directed signals go to the program's threads, never ours; none is
# lost.  Several rounds of each, 40 signals of each kind per round.
for i in 1 2 3; do
	same async 0
	grep -qx 'async sent 120 handled 40 40 40 wrong-thread 0 lost 0' "$TMP/async.out"
	ok $? "async ($i): SIGTERM, SIGINT, SIGUSR1 all handled by main"
done
same sigwait 0
grep -qx 'sigwait sent 120 handled 40 40 40 wrong-thread 0 lost 0' "$TMP/sigwait.out"
ok $? "sigwait: all taken by the thread in sigwait"
for i in 1 2; do
	same syncwait 0
	grep -qx 'syncwait sent 160 handled 40 40 40 40 wrong-thread 0 lost 0' "$TMP/syncwait.out"
	ok $? "syncwait ($i): SIGBUS, SIGFPE, SIGILL, SIGTRAP by kill, all taken by the thread in sigwait"
done
same sigchld 0
grep -qx 'sigchld children 20 signals 20 wrong-thread 0 lost 0 status-ok 20' "$TMP/sigchld.out"
ok $? "sigchld: every child's SIGCHLD reaches main's handler"
# A program started with SIGSEGV blocked (exec keeps the mask) survives
# its faults on armed pages and reads its mask back as it was given.
same blocked-exec 0
grep -qx 'blocked-child: SIGSEGV blocked' "$TMP/blocked-exec.out"; ok $? "blocked-exec: the mask reads back blocked"
$PROFILE check "$TMP/blocked-exec.d/blocked-exec.jsonl"; ok $? "blocked-exec: the exec'd program's profile is complete (in the session directory)"

# ---- exit paths ------------------------------------------------------------
same exit3 3
same return5 5
same _exit4 4
same abort 134 --prefix
same term 143 --prefix
same thread-exit 6
same main-pthread-exit 0
# With a 10 s interval too: the engine looks for the last thread every
# 100 ms, not once per interval (the run takes 0.3 s natively).
WSS_SESSION_INTERVAL=10s WSS_SESSION_OUTPUT="$TMP/long.jsonl" LD_PRELOAD="$WSS_LIB" \
	timeout -k 1 5 "$PROGS/lifecycle" main-pthread-exit >/dev/null 2>&1
is $? 0 "main-pthread-exit with a 10 s interval ends long before the first tick"
same main-returns 0
same atexit 0
n=$(grep -c '"type":"summary"' "$TMP/atexit.jsonl")
is "$n" 1 "atexit: exactly one summary record"
n=$(grep -c '^wss: data avg/peak/total' "$TMP/atexit.err")
is "$n" 1 "atexit: exactly one summary line on stderr"

# ---- threads ----------------------------------------------------------------
same churn 0
grep -qx 'churn joined 2400 detached 500 live 0 sum [0-9]*' "$TMP/churn.out"; ok $? "churn: every thread ran"
pid=$($PROFILE get "$TMP/churn.jsonl" header.pid)
$PROFILE tids "$TMP/churn.jsonl" >"$TMP/churn.tids"
awk '{ delete seen; for (i = 3; i <= NF; i++) if ($i <= 0 || seen[$i]++) bad++ } END { exit bad > 0 }' "$TMP/churn.tids"
ok $? "churn: no sample lists a thread twice or without a tid"
# The last second is main's alone (the churn threads have been reaped): the
# samples of its last half (whole intervals, the final sample aside) list
# main and nobody else.
n=$(awk -v pid="$pid" '{ t[NR] = $2; l[NR] = $0 } END {
	for (i = 2; i < NR; i++) if (t[i - 1] >= t[NR] - 500000000) {
		n++; split(l[i], f, " "); for (j in f) if (j > 2 && f[j] != pid) { print "bad"; exit }
	}
	print n + 0 }' "$TMP/churn.tids")
between "$n" 1 1000000 "churn: idle samples list only the main thread, none of the exited ones ($n samples)"
same tls 0
grep -qx 'tls threads 8 mismatches 0' "$TMP/tls.out"; ok $? "tls: each thread sees its own TLS"

# ---- the engine thread's CPU (engine/clock.c, engine_place) ---------------
# A single-threaded program's engine thread is held to one CPU (the
# program's: a CPU that ran it otherwise keeps the address space loaded
# and takes every TLB flush), back to the CPUs it was given once the
# program has more threads, and never outside a mask the program was given.
# engine_cpus PID: the Cpus_allowed_list of every thread but main
engine_cpus() {
	for t in /proc/$1/task/*; do
		[ "${t##*/}" = "$1" ] && continue
		sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$t/status"
	done
}
if [ "$(nproc)" -ge 2 ]; then
	all=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
	# spinner: one thread computing 2 s; attachee: four threads.
	WSS_SESSION_OUTPUT="$TMP/place1.jsonl" WSS_REPORT_SUMMARY=false LD_PRELOAD="$WSS_LIB" \
		"$PROGS/spinner" 2 64 >"$TMP/place1.out" &
	p1=$!
	wait_ready "$TMP/place1.out"
	sleep 0.3
	c=$(engine_cpus $p1)
	mc=$(awk '{ print $39 }' /proc/$p1/stat)
	wait $p1
	case "$c" in *[-,]* | "") ok 1 "single-threaded: the engine thread is held to one CPU (got '$c')" ;;
	*) ok 0 "single-threaded: the engine thread is held to one CPU ($c; the program's last: $mc)" ;; esac
	grep -q '^done: 64 pages, 0 wrong' "$TMP/place1.out"; ok $? "single-threaded: the program's output unchanged"
	WSS_SESSION_OUTPUT="$TMP/place4.jsonl" WSS_REPORT_SUMMARY=false LD_PRELOAD="$WSS_LIB" \
		"$PROGS/attachee" 0.5 2 4 64 >"$TMP/place4.out" 2>/dev/null &
	p4=$!
	wait_ready "$TMP/place4.out"
	sleep 0.4
	c=$(engine_cpus $p4 | sort -u | tr '\n' ' ')
	wait $p4
	# (the worker threads have the program's mask: every line is $all)
	is "$c" "$all " "four threads: the engine thread has the CPUs it was given"
	one=$(echo "$all" | sed 's/[-,].*//')
	WSS_SESSION_OUTPUT="$TMP/place0.jsonl" WSS_REPORT_SUMMARY=false LD_PRELOAD="$WSS_LIB" \
		taskset -c "$one" "$PROGS/spinner" 1 64 >"$TMP/place0.out" &
	p0=$!
	wait_ready "$TMP/place0.out"
	sleep 0.3
	c=$(engine_cpus $p0)
	wait $p0
	is "$c" "$one" "taskset -c $one: the engine thread stays in the program's mask"
	# A mask given from outside later (taskset -a -p), then a thread: the
	# engine goes to the CPUs of the thread that starts it, not back to
	# the ones it started with.  The main thread is moved to that CPU
	# first, and the engine held there with it: the mask then given to
	# every thread is the one the engine had, and was once taken for its
	# own (back to all CPUs at its first wake after the thread started).
	WSS_SESSION_OUTPUT="$TMP/placet.jsonl" WSS_REPORT_SUMMARY=false LD_PRELOAD="$WSS_LIB" \
		"$PROGS/placement" thread "$TMP/placet.go" >"$TMP/placet.out" &
	pt=$!
	wait_ready "$TMP/placet.out"
	taskset -p -c "$one" $pt >/dev/null
	sleep 0.3
	taskset -a -p -c "$one" $pt >/dev/null
	sleep 0.1
	: >"$TMP/placet.go"
	i=0
	while ! grep -q '^thread' "$TMP/placet.out" && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	sleep 0.25 # (a wake of the engine: every 100 ms at most)
	c=$(engine_cpus $pt | sort -u | tr '\n' ' ')
	wait $pt
	is "$c" "$one " "taskset -a -p -c $one, then a thread: every thread but main (the engine too) on $one"
else
	skip 5 "one CPU: the engine thread has nowhere else to run"
fi
# A program that turns realtime (SCHED_FIFO) while the engine is held to its
# CPU: the engine is let go first, and goes on ticking (held behind the
# program, it took 1 sample in 0.4 s at 10 ms, and a read(2) into a tracked
# buffer waited 0.9 s for it).
watch 30 env WSS_SESSION_INTERVAL=10ms WSS_SESSION_OUTPUT="$TMP/rt.jsonl" WSS_REPORT_SUMMARY=false \
	LD_PRELOAD="$WSS_LIB" "$PROGS/placement" rt 0.4 >"$TMP/rt.out" 2>&1
st=$?
if grep -q '^no-rt' "$TMP/rt.out"; then
	skip 2 "SCHED_FIFO refused here"
else
	is "$st" 0 "a realtime program runs to its end"
	n=$(grep -c '"type":"sample"' "$TMP/rt.jsonl")
	between "$n" 10 100 "a realtime program: the engine still ticks ($n samples in 0.4 s at 10 ms; $(cat "$TMP/rt.out"))"
fi
# A realtime program alone on its only CPU.  Its system calls into
# tracked buffers that meet a tick arming sleep until the tick is done (a
# spin never let the engine run there: a read took 0.9 s).  One that only
# computes leaves the engine thread only what the kernel's realtime
# throttling gives others (5 % of a second): the stderr summary and the
# report say that the ticks came late.
if [ -n "$one" ]; then
	watch 30 taskset -c "$one" env WSS_SESSION_OUTPUT="$TMP/rt2.jsonl" WSS_REPORT_SUMMARY=false \
		LD_PRELOAD="$WSS_LIB" "$PROGS/placement" rt 1.2 >"$TMP/rt2.out" 2>&1
	if grep -q '^no-rt' "$TMP/rt2.out"; then
		skip 1 "SCHED_FIFO refused here"
	else
		w=$(sed -n 's/^worst read \([0-9]*\) ms$/\1/p' "$TMP/rt2.out")
		between "${w:-99999}" 0 300 "a realtime program alone on its CPU: its read(2) never waits long for a tick (worst ${w} ms)"
	fi
	watch 30 taskset -c "$one" env WSS_SESSION_OUTPUT="$TMP/rt1.jsonl" LD_PRELOAD="$WSS_LIB" \
		"$PROGS/placement" rtspin 1.2 >"$TMP/rt1.out" 2>"$TMP/rt1.err"
	if grep -q '^no-rt' "$TMP/rt1.out"; then
		skip 2 "SCHED_FIFO refused here"
	else
		grep -q '^wss: ticks came late: the longest interval lasted [0-9]* ms against 100 ms asked' "$TMP/rt1.err"
		ok $? "a realtime program alone on its CPU: the summary says the ticks came late" ||
			sed 's/^/# /' "$TMP/rt1.err" | head -3
		$WSS report "$TMP/rt1.jsonl" | grep -q '^interval   100 ms; ticks came late: the longest interval lasted [0-9]* ms'
		ok $? "... and so does wss report"
	fi
else
	skip 3 "one CPU"
fi
# sched_setaffinity refused (a seccomp filter, an SELinux domain without
# setsched): the engine starts anyway, unplaced.
WSS_SESSION_OUTPUT="$TMP/noaff.jsonl" LD_PRELOAD="$WSS_LIB" \
	"$PROGS/placement" noaffinity "$PROGS/spinner" 0.3 64 >"$TMP/noaff.out" 2>"$TMP/noaff.err"
is "$?" 3 "sched_setaffinity refused: the program runs as natively" || sed 's/^/# /' "$TMP/noaff.err" | head -3
$PROFILE check "$TMP/noaff.jsonl"
ok $? "sched_setaffinity refused: the profile is complete"
done_testing
