#!/bin/sh
# Memory the kernel and the C library use under tracking: signal and
# coroutine stacks, system-call buffers, futex words (every kind of
# pthread and C11 wait), ioctl arguments, path strings, cancelled waits.  Each runs with a
# 1 ms interval so that ticks race the program.  ROBUST_CASES runs some
# cases only (make soak: ROBUST_CASES=sync SOAK_TESTS=robust).
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
: "${ROBUST_CASES:=altstack-heap altstack-bss coro efault rearm condvar sync ioctl paths cancel}"
n=0
for t in $ROBUST_CASES; do
	case $t in cancel) n=$((n + 3)) ;; *) n=$((n + 1)) ;; esac
done
plan $n
R=$PROGS/robust
for t in $ROBUST_CASES; do
	[ $t = cancel ] && continue
	WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/$t.jsonl" LD_PRELOAD="$WSS_LIB" timeout 120 "$R" $t 2 >"$TMP/$t.out" 2>"$TMP/$t.err"
	s=$?
	grep -qx "ok $t" "$TMP/$t.out" && [ $s = 0 ]
	ok $? "$t (exit $s)" || sed 's/^/# /' "$TMP/$t.err" | head -5
done
case " $ROBUST_CASES " in *" cancel "*)
	WSS_SESSION_INTERVAL=5ms WSS_SESSION_OUTPUT="$TMP/cancel.jsonl" LD_PRELOAD="$WSS_LIB" "$R" cancel >"$TMP/cancel.out" 2>/dev/null
	ok $? "threads cancelled in pthread_cond_wait"
	$PROFILE check "$TMP/cancel.jsonl"; ok $? "profile valid"
	# Once the waiters are gone, their pins must not keep counting pages:
	# the idle tail of the run (the last samples) is nearly empty.
	tail_max=$($PROFILE samples "$TMP/cancel.jsonl" | tail -20 | head -15 | awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }')
	between "$tail_max" 0 2 "no page stays counted for a cancelled thread (idle samples <= 2 pages)"
esac
done_testing
