#!/bin/sh
# mremap of tracked memory (engine/mapping.c): our protection splits leave
# pieces that do not always merge back (each faulted with an anon_vma of
# its own), and a native mremap needs one VMA: wss moves the pieces one by
# one when the call fails so.  tests/progs/remaps moves, grows and moves,
# and grows in place, 40 rounds each, under each mode: every call succeeds
# and the data moves with it.
. "$top_srcdir/tests/tap/tap.sh"

plan 4

out=$("$PROGS/remaps" 40 2>&1)
is "$out" "remaps 40 ok" "natively"
for mode in exact sampled auto; do
	out=$(WSS_TRACK_MODE=$mode WSS_SESSION_OUTPUT="$TMP/$mode.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/remaps" 40 2>/dev/null)
	is "$out" "remaps 40 ok" "under $mode tracking, as natively"
done
