#!/bin/sh
# The application's own SIGSEGV handling is unchanged under the preload.
. "$top_srcdir/tests/tap/tap.sh"
plan 8
WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/r.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/signals" recover >"$TMP/out" 2>/dev/null
is $? 7 "exit status"
grep -qx 'readback ok' "$TMP/out"; ok $? "sigaction reads back the program's own handler"
grep -qx 'hits 3 addr ok' "$TMP/out"; ok $? "faults on the program's PROT_NONE page reach its handler, with the address"
grep -qx 'hits 4' "$TMP/out"; ok $? "a write to its read-only page reaches its handler"
grep -qx 'mask ok' "$TMP/out"; ok $? "its signal mask reads back with SIGSEGV blocked"
grep -qx 'signal ok' "$TMP/out"; ok $? "signal() returns the previous handler"
"$WSS" run -o "$TMP/d.jsonl" -- "$PROGS/signals" die 2>/dev/null
is $? 139 "a real fault with the default action kills with SIGSEGV (128+11)"
$PROFILE check "$TMP/d.jsonl" --prefix; ok $? "and leaves a valid profile prefix"
done_testing
