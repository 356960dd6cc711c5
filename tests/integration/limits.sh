#!/bin/sh
# Resource limits the program runs within natively but wss's own needs do
# not fit: the program runs as natively, untracked, and stderr says once
# what was lost and why, errno named (not "cannot open", exit 2).
. "$top_srcdir/tests/tap/tap.sh"
plan 8

# Sixteen descriptors: the program's own; wss's (the profile, userfaultfd,
# pagemap, its /proc file, the unwinder's pipe) would take some of them.
(ulimit -n 16; LD_PRELOAD="$WSS_LIB" WSS_SESSION_OUTPUT="$TMP/n.jsonl" cat /etc/hostname >"$TMP/n.out" 2>"$TMP/n.err")
st=$?
(ulimit -n 16; cat /etc/hostname >"$TMP/n.native" 2>/dev/null)
is "$st" "$?" "ulimit -n 16: the exit status as natively"
cmp -s "$TMP/n.out" "$TMP/n.native"; ok $? "ulimit -n 16: the output as natively"
is "$(cat "$TMP/n.err")" "wss: RLIMIT_NOFILE is 16 (ulimit -n): too few descriptors to share with wss, which needs up to 8 (at least 32 allowed): the program runs untracked" \
	"ulimit -n 16: one line saying why"
[ ! -e "$TMP/n.jsonl" ]; ok $? "ulimit -n 16: no profile"
# Untracked, no descriptor is wss's: GNU touch reopens its file onto
# descriptor 0 and closes it (the close wrapper keeps wss's own
# descriptors from the program, and an unset one must never read as 0).
(ulimit -n 16; LD_PRELOAD="$WSS_LIB" WSS_SESSION_OUTPUT="$TMP/t.jsonl" touch "$TMP/touched" 2>"$TMP/t.err")
is "$?:$(grep -c 'Bad file descriptor' "$TMP/t.err")" "0:0" "ulimit -n 16: touch closes its descriptor 0 as natively"

# 60 MB of address space: python3 runs natively; under wss the engine
# thread's default stack (8 MiB) did not fit, and it stopped with exit 2.
# Under wss it peaks at 58.7 MB of it: each GiB of address space holding a
# tracked page takes a 13.5 MiB leaf of the shadow table (reserved, not
# resident), and where address-space randomisation puts the program's
# mappings across a GiB boundary one more leaf is needed and python3 runs
# out (1 run in 20 or so).  Without randomisation (setarch -R, where
# available) the layout, and the test, are the same every run.
if [ -x /usr/bin/python3 ]; then
	norand=""
	setarch -R true 2>/dev/null && norand="setarch -R"
	(ulimit -v 60000; $norand env LD_PRELOAD="$WSS_LIB" WSS_SESSION_OUTPUT="$TMP/v.jsonl" /usr/bin/python3 -c 'print(6 * 7)' >"$TMP/v.out" 2>"$TMP/v.err")
	is "$?:$(cat "$TMP/v.out")" "0:42" "ulimit -v 60000: python3 runs as natively" || sed 's/^/# /' "$TMP/v.err"
	! grep -q "cannot start the engine thread" "$TMP/v.err"
	ok $? "ulimit -v 60000: the engine thread starts (a smaller stack)"
	$PROFILE check "$TMP/v.jsonl"; ok $? "ulimit -v 60000: the profile is complete"
else
	for i in 1 2 3; do skip "no /usr/bin/python3"; done
fi
done_testing
