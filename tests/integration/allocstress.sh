#!/bin/sh
# Allocation sites under stress (engine/allocs.c): tests/progs/allocstress
# has 4 threads allocate, reallocate (by realloc, reallocarray, mremap and
# libc's getline), map over and free random sizes while a thread forks
# children that allocate and a thread sends SIGUSR1 to the workers at a
# high rate, at an interval of 1 ms: the sampled allocations are inserted
# and removed all the time the tick walks them, and the signals land in
# the stack captures.  The run must be as native (status, output), valid,
# unhung, with an alloc_sites record; and once the program has freed
# everything, no site of its st_ functions may have bytes live (an entry
# the sample failed to remove stays live for ever).
. "$top_srcdir/tests/tap/tap.sh"

plan 14
T=120
P=$PROGS/allocstress
SECS=${ALLOCSTRESS_SECS:-3}

watch $T "$P" "$SECS" >"$TMP/native.out" 2>"$TMP/native.err"
ns=$?
[ "$ns" = 0 ] || bail "allocstress fails natively ($ns): $(cat "$TMP/native.err")"

for mode in exact auto; do
	watch $T env WSS_TRACK_MODE=$mode WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/$mode.jsonl" \
		LD_PRELOAD="$WSS_LIB" "$P" "$SECS" >"$TMP/$mode.out" 2>"$TMP/$mode.err"
	st=$?
	is "$st" "$ns" "$mode: exit status $st as natively" || sed 's/^/# /' "$TMP/$mode.err" | head -5
	cmp -s "$TMP/$mode.out" "$TMP/native.out"
	ok $? "$mode: output as natively" || diff "$TMP/native.out" "$TMP/$mode.out" | head -5 | sed 's/^/# /'
	$PROFILE check "$TMP/$mode.jsonl"
	ok $? "$mode: the profile is valid"
	grep -q '"type":"alloc_sites"' "$TMP/$mode.jsonl"
	ok $? "$mode: an alloc_sites record"
	"$WSS" report --json "$TMP/$mode.jsonl" >"$TMP/$mode.json" 2>"$TMP/$mode.rerr"
	ok $? "$mode: wss report --json" || sed 's/^/# /' "$TMP/$mode.rerr" | head -5
	# The live bytes of the sites of worker and the st_ functions (nothing
	# of theirs is live at the end), and how many such sites there are.
	set -- $(python3 - "$TMP/$mode.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
live = n = 0
for s in r.get("alloc_sites", []):
    fr = s.get("frames") or []
    if any((f.get("function") or "").startswith("st_") or f.get("function") == "worker" for f in fr):
        n += 1
        live += s.get("live_bytes", 0)
print(n, live)
PY
)
	if [ "${1:-0}" -gt 0 ]; then
		is "$2" 0 "$mode: nothing of the workers' ${1} sites live at the end"
	else
		ok 1 "$mode: no site of the workers in the profile"
	fi
done

# A forked child's profile: the parent's block, left untouched by the
# child, is idle there (the child counts intervals from 1 again; the
# parent's allocations are older than its first).
watch $T env WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/fork.jsonl" LD_PRELOAD="$WSS_LIB" \
	"$P" forkidle >"$TMP/fork.out" 2>"$TMP/fork.err"
is "$?:$(cat "$TMP/fork.out")" "0:forkidle: ok" "forkidle: runs as natively"
child=$(ls "$TMP"/fork.d/*.jsonl 2>/dev/null | head -1)
idle=none
if [ -n "$child" ] && "$WSS" report --json "$child" >"$TMP/child.json" 2>/dev/null; then
	idle=$(python3 - "$TMP/child.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for s in r.get("alloc_sites", []):
    fr = s.get("frames") or []
    if fr and fr[0].get("function") == "st_inherited":
        print(s["idle_pages"])
        break
else:
    print("none")
PY
)
fi
is "$idle" 16384 "forkidle: the child has the parent's 16,384 pages idle"
done_testing
