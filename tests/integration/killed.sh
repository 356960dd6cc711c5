#!/bin/sh
# SIGKILL in the middle of a run leaves every completed sample on disk.
. "$top_srcdir/tests/tap/tap.sh"
plan 3
WSS_SESSION_INTERVAL=5ms WSS_SESSION_OUTPUT="$TMP/k.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/pageramp" 10 1000 >/dev/null 2>&1 &
pid=$!
sleep 1
kill -KILL $pid
wait $pid
is $? 137 "killed by SIGKILL"
$PROFILE check "$TMP/k.jsonl" --prefix; ok $? "the profile is a valid prefix"
n=$($PROFILE samples "$TMP/k.jsonl" | wc -l)
between "$n" 5 100000 "with the samples taken before the kill ($n)"
done_testing
