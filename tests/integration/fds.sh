#!/bin/sh
# A program that closes descriptors it did not open and reuses their
# numbers: the profile continues in its own file, and neither samples nor
# the summary end up in the program's files.
. "$top_srcdir/tests/tap/tap.sh"
plan 4
WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/fdclose" "$TMP" 2>/dev/null
is $? 0 "exit status"
bad=$(cat "$TMP"/victim.* | grep -vc '^mine$')
is "$bad" 0 "the program's files hold only what it wrote"
$PROFILE check "$TMP/p.jsonl"; ok $? "the profile is complete (reopened after the program closed it)"
n=$($PROFILE samples "$TMP/p.jsonl" | wc -l)
between "$n" 20 100000 "with samples from after the close ($n)"
done_testing
