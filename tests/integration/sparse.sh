#!/bin/sh
# A reservation too large for per-page state (docs/backends.md, "Sparse
# ranges"): tests/progs/sparseset reserves 256 GiB at a fixed address and
# touches known numbers of pages spread over all of it, under the manual
# time base with a fixed membership seed, giving them back with
# MADV_DONTNEED over the whole reservation after each phase, and forks a
# child in the middle phase.  Under the defaults (track.mode = auto) and
# under each backend: the reservation is tracked (the samples count its
# pages), each phase's 95 % interval holds the truth (all but one phase at
# most), the child runs, and wss's own memory stays small: the process's
# peak RSS and its page tables, against a native run of the same program.
. "$top_srcdir/tests/tap/tap.sh"

GIB=256
ARGS="$GIB 4 8192 65536 7 fork"
"$PROGS/sparseset" $ARGS >"$TMP/native.out" 2>"$TMP/native.err" ||
	skip_all "sparseset cannot run natively: $(cat "$TMP/native.err")"
set -- $(grep '^status' "$TMP/native.out")
HWM0=$2 PTE0=$3
diag "native: peak RSS $HWM0 KiB, page tables $PTE0 KiB"

# run NAME BACKEND: sparseset under the preload; "SEQ TRUTH EST LO HI TRACKED
# WTRUTH WLO WHI" per phase into NAME.cmp.
run() {
	rm -rf "$TMP/$1" && mkdir "$TMP/$1"
	WSS_TRACK_MODE=auto WSS_TRACK_BACKEND=$2 WSS_TEST_SAMPLING_SEED=12345 WSS_SESSION_TIME_BASE=manual \
		WSS_SESSION_OUTPUT="$TMP/$1/p.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/sparseset" $ARGS \
		>"$TMP/$1.out" 2>"$TMP/$1.err"
	ok $? "$1: sparseset and its forked child run under wss" || diag "$(cat "$TMP/$1.err")"
	# The parent's profile: the only one beside the session directory,
	# which holds the child's.
	prof=$(ls "$TMP/$1"/p.*.jsonl)
	$PROFILE check "$prof"
	ok $? "$1: a valid profile"
	is "$(ls "${prof%.jsonl}.d" | wc -l)" 1 "$1: the child wrote its own profile, in the session directory"
	python3 - "$TMP/$1.out" "$prof" >"$TMP/$1.cmp" <<'EOF'
import json, sys
truth = {}
for line in open(sys.argv[1]):
    if line.startswith("truth"):
        _, seq, d, w = line.split()
        truth[int(seq)] = (int(d), int(w))
for line in open(sys.argv[2]):
    r = json.loads(line)
    if r.get("type") != "sample" or r["seq"] not in truth:
        continue
    d, w = truth[r["seq"]]
    ci = r.get("ci", {})
    dl, dh = ci.get("data", [r["data_pages"]] * 2)
    wl, wh = ci.get("write", [0, 1 << 40])
    print(r["seq"], d, r["data_pages"], dl, dh, r.get("sampled", {}).get("tracked", 0), w, wl, wh)
EOF
}

# judge NAME WHAT: WHAT is "data" (the backend sees reads and writes) or
# "write" (uffd-wp: writes only, so the truth is the pages written).
judge() {
	is "$(wc -l <"$TMP/$1.cmp")" 4 "$1: a sample for each of the 4 phases"
	is "$(awk -v p=$((GIB << 18)) '$6 < p' "$TMP/$1.cmp" | wc -l)" 0 "$1: every sample counts the $GIB GiB among its tracked pages"
	# The program's own pages outside the reservation (its stack, its
	# data) add a few pages to what it counts: 8 pages of slack above.
	if [ "$2" = data ]; then
		cov=$(awk '$4 <= $2 + 8 && $2 <= $5 {n++} END {print n + 0}' "$TMP/$1.cmp")
	else
		cov=$(awk '$4 <= $7 + 8 && $7 <= $5 {n++} END {print n + 0}' "$TMP/$1.cmp")
	fi
	wcov=$(awk '$8 <= $7 + 8 && $7 <= $9 {n++} END {print n + 0}' "$TMP/$1.cmp")
	diag "$1: $(awk '{printf "%s truth %s est %s [%s, %s]; ", $1, $2, $3, $4, $5}' "$TMP/$1.cmp")"
	between "$cov" 3 4 "$1: the interval holds the truth in at least 3 of 4 phases"
	between "$wcov" 3 4 "$1: the write interval holds the written pages in at least 3 of 4 phases"
	name=$1
	set -- $(grep '^status' "$TMP/$name.out")
	diag "$name: peak RSS $2 KiB, page tables $3 KiB"
	between $(($2 - HWM0)) -65536 65536 "$name: peak RSS within 64 MiB of the native run's"
	between $(($3 - PTE0)) -65536 65536 "$name: page tables within 64 MiB of the native run's"
}

run defaults auto
judge defaults data
run mprotect mprotect
judge mprotect data
if "$WSS" run --backend uffd-wp -o "$TMP/probe.jsonl" -- /bin/true 2>/dev/null; then
	run uffd-wp uffd-wp
	judge uffd-wp write
	run hybrid hybrid
	judge hybrid data
else
	skip "uffd-wp and hybrid: not on this kernel (Linux 6.7+)"
fi

# Between 1 and 64 GiB, sampled tracking registers a mapping sparsely too
# (engine/sparse.h): 48 GiB under the defaults, with the same checks.
# Per-page state for it would cost 96 MiB of page tables and seconds in
# the program's mmap.
GIB=48
ARGS="$GIB 4 2048 16384 7 fork"
"$PROGS/sparseset" $ARGS >"$TMP/native48.out" 2>&1
set -- $(grep '^status' "$TMP/native48.out")
HWM0=$2 PTE0=$3
run mid auto
judge mid data
GIB=256

# Exact mode has no sample to go by: the reservation is left out, as
# before, and the summary and stderr say so.
rm -f "$TMP/exact.jsonl"
WSS_TRACK_MODE=exact WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/exact.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/sparseset" $GIB 1 1 1 7 >/dev/null 2>"$TMP/exact.err"
ok $? "exact: sparseset runs"
is "$($PROFILE get "$TMP/exact.jsonl" summary.untracked_large.mappings)" 1 "exact: the summary counts the mapping left out"
grep -q "^wss: 1 mapping larger than 64 GiB (256 GiB in all) not tracked" "$TMP/exact.err"
ok $? "exact: and stderr says so"

# A traced session samples its sparse ranges page by page (the trace's
# readers know the page design alone): its analyses read the trace (a
# cluster's pages failed their membership check: "not a member").
"$WSS" run --trace -o "$TMP/tr.jsonl" --mode sampled --sample-rate 1/16 -- "$PROGS/sparseset" 2 3 100 1000 7 >/dev/null 2>"$TMP/tr.run"
ok $? "traced: sparseset under wss run --trace" || sed 's/^/# /' "$TMP/tr.run"
"$WSS" window --window 1 "$TMP/tr.jsonl" >/dev/null 2>"$TMP/tr.err" &&
	"$WSS" mrc "$TMP/tr.jsonl" >/dev/null 2>>"$TMP/tr.err"
is "$?:$(cat "$TMP/tr.err")" "0:" "traced: wss window and wss mrc read its trace"
done_testing
