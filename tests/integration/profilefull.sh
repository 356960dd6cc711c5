#!/bin/sh
# A profile that cannot be written never harms the program: on a full file
# system (a 64 KiB tmpfs, root only) and past RLIMIT_FSIZE (EFBIG, whose
# SIGXFSZ kills by default), the program runs on with its native output and
# exit status, the profile is cut back to its last whole record (a valid
# prefix, no summary), and stderr says at which sample and why.  The
# stderr summary into a pipe with no reader must not kill the program with
# SIGPIPE either.
. "$top_srcdir/tests/tap/tap.sh"
T=120
# pageramp at 1 ms: ~2,700 samples, about 2 MB of profile natively; on a
# loaded machine whose ticks come 5x late still ten times the 64 KiB the
# tests below allow, so the limit is always met before the program ends.
R="$PROGS/pageramp 3 300"
plan 24

watch $T $R >"$TMP/native" 2>&1
[ $? = 0 ] || bail "pageramp fails natively"

# cut_checks NAME REASON: the checks of a run whose profile is $TMP/NAME.prof,
# stdout $TMP/NAME.out, stderr $TMP/NAME.err, status $st.
cut_checks() {
	is "$st" 0 "$1: the program's exit status as natively"
	cmp -s "$TMP/$1.out" "$TMP/native"; ok $? "$1: the program's output as natively"
	line=$(grep '^wss: profile cut at sample' "$TMP/$1.err")
	echo "$line" | grep -Eq "^wss: profile cut at sample [0-9]+: $2 \\(.*$1.prof\\); measuring stopped there\$"
	ok $? "$1: stderr says where and why the profile was cut" || sed 's/^/# /' "$TMP/$1.err"
	$PROFILE check "$TMP/$1.prof" --prefix; ok $? "$1: the profile is a valid prefix"
	[ "$(tail -c 1 "$TMP/$1.prof" | od -An -c | tr -d ' ')" = '\n' ]
	ok $? "$1: it ends with a whole record"
	at=$(echo "$line" | sed 's/^wss: profile cut at sample \([0-9]*\):.*/\1/')
	last=$($PROFILE samples "$TMP/$1.prof" | tail -1 | cut -d' ' -f1)
	is "$at" "$((last + 1))" "$1: the sample named is the first one the file lacks (after $last)"
}

# ---- a full file system ---------------------------------------------------
if [ "$(id -u)" != 0 ]; then
	for i in 1 2 3 4 5 6 7 8; do skip "not root: cannot mount a tmpfs"; done
elif ! mkdir "$TMP/mnt" || ! mount -t tmpfs -o size=64k tmpfs "$TMP/mnt" 2>"$TMP/mount.err"; then
	for i in 1 2 3 4 5 6 7 8; do skip "mount -t tmpfs failed: $(cat "$TMP/mount.err")"; done
else
	trap 'umount "$TMP/mnt" 2>/dev/null; rm -rf "$TMP"' EXIT
	watch $T env WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/mnt/enospc.prof" LD_PRELOAD="$WSS_LIB" \
		$R >"$TMP/enospc.out" 2>"$TMP/enospc.err"
	st=$?
	cp "$TMP/mnt/enospc.prof" "$TMP/enospc.prof"
	cut_checks enospc "No space left on device"
	# Not even the header fits: the program runs unmeasured.
	rm -f "$TMP/mnt/enospc.prof"
	head -c 100000 /dev/zero >"$TMP/mnt/fill" 2>/dev/null
	WSS_SESSION_OUTPUT="$TMP/mnt/header.prof" LD_PRELOAD="$WSS_LIB" "$PROGS/lifecycle" exit3 >"$TMP/header.out" 2>"$TMP/header.err"
	is $? 3 "full before the header: the program's exit status as natively"
	grep -q "^wss: profile cut at sample 1: No space left on device" "$TMP/header.err"
	ok $? "full before the header: stderr says so" || sed 's/^/# /' "$TMP/header.err"
fi

# ---- RLIMIT_FSIZE: EFBIG, and the SIGXFSZ of our write taken back ---------
watch $T prlimit --fsize=65536 env WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/efbig.prof" \
	LD_PRELOAD="$WSS_LIB" $R >"$TMP/efbig.out" 2>"$TMP/efbig.err"
st=$?
cut_checks efbig "File too large \\(RLIMIT_FSIZE or the file system's maximum\\)"
between "$(wc -c <"$TMP/efbig.prof")" 1 65536 "efbig: the profile stays within the limit"

# A limit below the header's size: the header's write fails on the main
# thread, in the constructor, where SIGXFSZ is not blocked.
prlimit --fsize=100 env WSS_SESSION_OUTPUT="$TMP/tiny.prof" LD_PRELOAD="$WSS_LIB" "$PROGS/lifecycle" exit3 \
	>"$TMP/tiny.out" 2>"$TMP/tiny.err"
is $? 3 "a limit below the header: the program's exit status as natively" || sed 's/^/# /' "$TMP/tiny.err"
grep -q "^wss: profile cut at sample 1: File too large" "$TMP/tiny.err"; ok $? "a limit below the header: stderr says so"
is "$(wc -c <"$TMP/tiny.prof")" 0 "a limit below the header: nothing of the header is left"

# The program's own write past the limit still gets its SIGXFSZ (head dies
# of it): only the signals of our writes are taken back.
watch $T prlimit --fsize=65536 env WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/own.prof" \
	LD_PRELOAD="$WSS_LIB" sh -c 'head -c 100000 /dev/zero >"$1"; echo "head $?"' sh "$TMP/big" >"$TMP/own.out" 2>"$TMP/own.err"
native=$(prlimit --fsize=65536 sh -c 'head -c 100000 /dev/zero >"$1"; echo "head $?"' sh "$TMP/big2" 2>/dev/null)
is "$(cat "$TMP/own.out")" "$native" "the program's own write past the limit ends as natively ($native)"

# ---- the output directory removed while the program runs -----------------
# The profile and the trace are written on into files nobody can open:
# stderr says they were removed, never that they are where they were, and
# the program's status stays its own (spinner exits 3).
mkdir "$TMP/gone"
watch $T "$WSS" run --trace -o "$TMP/gone/x.jsonl" -- "$PROGS/spinner" 1 64 >"$TMP/gone.out" 2>"$TMP/gone.err" &
pid=$!
n=0
until [ -s "$TMP/gone/x.trace" ] || [ $n -ge 500 ]; do sleep 0.01; n=$((n + 1)); done
rm -rf "$TMP/gone"
wait $pid
is $? 3 "an output directory removed mid-run: the program's exit status as natively"
grep -qx "wss: profile: none: $TMP/gone/x.jsonl was removed while the program ran" "$TMP/gone.err"
ok $? "stderr says the profile was removed, naming it" || sed 's/^/# /' "$TMP/gone.err"
grep -qx "wss: trace: none: $TMP/gone/x.trace was removed while the program ran" "$TMP/gone.err"
ok $? "and the trace"
! grep -Eq "^wss: (profile|trace): $TMP/gone" "$TMP/gone.err"; ok $? "and names neither as written"

# ---- stderr into a pipe that nobody reads ---------------------------------
# The reader is gone before the program ends: our summary lines meet EPIPE.
st=$( { LD_PRELOAD="$WSS_LIB" WSS_SESSION_OUTPUT="$TMP/pipe.prof" "$PROGS/lifecycle" exit3 2>&1 >/dev/null
	echo $? >"$TMP/pipe.st"; } | true; cat "$TMP/pipe.st")
is "$st" 3 "stderr into a closed pipe: status 3 as natively, no SIGPIPE of ours"
done_testing
