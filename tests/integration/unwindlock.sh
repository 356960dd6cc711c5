#!/bin/sh
# Stack captures take no lock a program thread may hold (issue 12): the
# classic deadlock, made deterministic (a thread inside a dl_iterate_phdr
# callback, the loader's list lock held, waits for a mutex held by a thread
# that faults on a new site), and thousands of new sites faulting under a
# mutex while another thread dlopens, dlcloses and takes that mutex inside
# a dl_iterate_phdr callback, under mprotect and hybrid at 1 ms.  The old
# capture (libunwind asking the loader) hung in every run of both; a
# preloaded spy (libiterspy.so) counts libunwind's calls to dl_iterate_phdr,
# which must be none.  The timeout is outside the preload.
. "$top_srcdir/tests/tap/tap.sh"
LIBS=$PROGS/.libs
[ -f "$LIBS/libdldata1.so" ] && [ -f "$LIBS/libiterspy.so" ] || bail "test libraries not built"
U=$PROGS/unwindlock

"$U" interlock 50 >"$TMP/il.native" 2>&1 || bail "unwindlock interlock fails natively"
"$U" churn "$LIBS" 3 >"$TMP/ch.native" 2>&1 || bail "unwindlock churn fails natively"

for b in mprotect hybrid; do
	if [ $b = hybrid ] && ! WSS_TRACK_BACKEND=hybrid WSS_SESSION_OUTPUT="$TMP/probe.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true 2>/dev/null; then
		skip "hybrid: not on this kernel"
		continue
	fi
	timeout 120 env WSS_TRACK_BACKEND=$b WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/il.$b.jsonl" \
		LD_PRELOAD="$LIBS/libiterspy.so $WSS_LIB" "$U" interlock 50 >"$TMP/il.$b.out" 2>"$TMP/il.$b.err"
	is $? 0 "$b: interlock, 50 rounds, no hang"
	is "$(cat "$TMP/il.$b.out")" "$(cat "$TMP/il.native")" "$b: interlock: the same output as natively"
	is "$(sed -n 's/^iterspy: .*, \([0-9]*\) from libunwind$/\1/p' "$TMP/il.$b.err")" 0 \
		"$b: interlock: libunwind never called dl_iterate_phdr"
	$PROFILE check "$TMP/il.$b.jsonl"; ok $? "$b: interlock: the profile is complete and valid"

	timeout 300 env WSS_TRACK_BACKEND=$b WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/ch.$b.jsonl" \
		LD_PRELOAD="$LIBS/libiterspy.so $WSS_LIB" "$U" churn "$LIBS" 3 >"$TMP/ch.$b.out" 2>"$TMP/ch.$b.err"
	is $? 0 "$b: 2048 new sites against dlopen/dlclose churn, no hang"
	is "$(cat "$TMP/ch.$b.out")" "$(cat "$TMP/ch.native")" "$b: churn: the same output as natively"
	is "$(sed -n 's/^iterspy: .*, \([0-9]*\) from libunwind$/\1/p' "$TMP/ch.$b.err")" 0 \
		"$b: churn: libunwind never called dl_iterate_phdr"
	$PROFILE check "$TMP/ch.$b.jsonl"; ok $? "$b: churn: the profile is complete and valid"
	# Captures ran (not all left for later): a good share of the 2,048
	# sites has its stack.  Captures are budgeted by the wall time (a
	# quarter of the budget's): a loaded machine's run had 932 of them.
	between "$(grep -c '"type":"stack"' "$TMP/ch.$b.jsonl")" 512 4096 "$b: churn: stacks were captured"
done
done_testing
