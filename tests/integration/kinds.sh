#!/bin/sh
# The whole working set by kind (issue 30): shared memory (MAP_SHARED
# anonymous, memfd, System V) and file mappings are tracked beside private
# memory, each sample and the summary say how much of each kind, exact
# counts under manual ticks; a shared file mapping's writes are writes and
# the file ends as it would natively; stacks (the main thread's, growing,
# and a thread's) are seen by write-protection, signal frames and all;
# track.shared, track.file_mmap and track.stacks turn the kinds off.
. "$top_srcdir/tests/tap/tap.sh"

# The counts of tests/progs/kinds.c.
SHARED=$((4096 + 256 + 128)) ANON=4096 FREAD=512 FWRITE=64
# 256 pages of the main stack and 32 of a thread's, plus the frames the
# loops run in (a few pages).
STACK=$((256 + 32)) STACK_HI=$((256 + 32 + 8))
head -c $((2048 * 4096)) /dev/urandom >"$TMP/data"
native=$("$PROGS/kinds" "$TMP/data") || bail "kinds does not run natively"

run() { # NAME MODE [ARGS...]: the profile $TMP/NAME.jsonl
	name=$1 mode=$2
	shift 2
	WSS_SESSION_TIME_BASE=manual WSS_TRACK_MODE=$mode WSS_SESSION_OUTPUT="$TMP/$name.jsonl" \
		LD_PRELOAD="$WSS_LIB" "$PROGS/kinds" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
}

# kind_of FILE SEQ KIND FIELD: a sample's kinds.KIND.FIELD (- when absent).
kind_of() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "sample" and r["seq"] == int(sys.argv[2]):
        print(r.get("kinds", {}).get(sys.argv[3], {}).get(sys.argv[4], "-"))' "$1" "$2" "$3" "$4"
}

run exact exact "$TMP/data"
ok $? "kinds runs under wss (exact)"
is "$(cat "$TMP/exact.out")" "$native" "its output is the native one"
$PROFILE check "$TMP/exact.jsonl" || bail "invalid profile"
for seq in 2 3 4; do
	is "$(kind_of "$TMP/exact.jsonl" $seq shared data)" $SHARED "sample $seq: shared memory (MAP_SHARED anonymous, memfd, System V) exact"
	is "$(kind_of "$TMP/exact.jsonl" $seq anon data)" $ANON "sample $seq: private anonymous apart"
	is "$(kind_of "$TMP/exact.jsonl" $seq file data)" $FREAD "sample $seq: the file pages read"
	is "$(kind_of "$TMP/exact.jsonl" $seq file write)" 0 "sample $seq: none of them written"
	between "$(kind_of "$TMP/exact.jsonl" $seq stack data)" $STACK $STACK_HI "sample $seq: the stacks' pages written"
done
is "$(kind_of "$TMP/exact.jsonl" 3 shared tracked)" $SHARED "shared memory tracked: every page of it"
is "$(kind_of "$TMP/exact.jsonl" 3 file tracked)" 2048 "the file mapping tracked whole"
is "$($PROFILE get "$TMP/exact.jsonl" summary.kinds.shared.total)" $SHARED "summary: the shared total"
is "$($PROFILE get "$TMP/exact.jsonl" summary.kinds.anon.peak)" $ANON "summary: the anonymous peak"
is "$($PROFILE get "$TMP/exact.jsonl" summary.kinds.file.total)" $FREAD "summary: the file total"
between "$($PROFILE get "$TMP/exact.jsonl" summary.data.total)" $((SHARED + ANON + FREAD + STACK)) \
	$((SHARED + ANON + FREAD + STACK_HI + 64)) "the data total holds every kind"
grep -q "data peak by kind (pages): shared $SHARED (17.5 MiB), anon $ANON (16.0 MiB), file $FREAD (2.0 MiB)" "$TMP/exact.err"
ok $? "stderr: the peak by kind, largest first"
"$WSS" report "$TMP/exact.jsonl" >"$TMP/report.txt"
grep -q "^  shared  *2,688.0  *4,480  *4,480  *17,920$" "$TMP/report.txt"
ok $? "wss report: Data by kind lists shared memory"
"$WSS" report --json "$TMP/exact.jsonl" | python3 -c 'import json,sys; k = json.load(sys.stdin)["summary"]["kinds"]; print(" ".join(k))' >"$TMP/kinds.json"
is "$(cat "$TMP/kinds.json")" "shared anon file stack data" "wss report --json: summary.kinds, largest peak first"
"$WSS" export --format csv -o "$TMP/k.csv" "$TMP/exact.jsonl" 2>/dev/null
python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["scope"] == "process" and r["seq"] == "3": print(r["kind_shared_pages"], r["kind_file_pages"])' "$TMP/k.csv" >"$TMP/csvk"
is "$(cat "$TMP/csvk")" "$SHARED $FREAD" "wss export csv: a column per kind"

# A shared file mapping: its writes are in the write set, and the file
# holds them as natively.
cp "$TMP/data" "$TMP/wdata"
cp "$TMP/data" "$TMP/ndata"
"$PROGS/kinds" "$TMP/ndata" shared-file >/dev/null || bail "kinds shared-file natively"
run wfile exact "$TMP/wdata" shared-file
ok $? "a shared file mapping written under wss"
cmp -s "$TMP/wdata" "$TMP/ndata"
ok $? "the file's contents are as without wss"
is "$(kind_of "$TMP/wfile.jsonl" 3 file write)" $FWRITE "the written file pages are writes"
is "$(kind_of "$TMP/wfile.jsonl" 3 file data)" $((FREAD + FWRITE)) "and touches, with the pages read"

# The kernel's accesses to armed pages of the new kinds succeed for the
# program (write(2) from a file mapping, read(2) into shared memory, pread
# into a shared file mapping) and count as touches; a page past the end of a
# truncated file is the program's SIGBUS, as natively.
cp "$TMP/data" "$TMP/sdata"
cp "$TMP/data" "$TMP/nsdata"
"$PROGS/kinds" "$TMP/nsdata" syscalls >"$TMP/sys.native" || bail "kinds syscalls natively"
run sys exact "$TMP/sdata" syscalls
ok $? "syscalls: runs under wss"
is "$(cat "$TMP/sys.out")" "$(cat "$TMP/sys.native")" "syscalls: the kernel's reads and writes of armed pages and the SIGBUS, as natively"
is "$(kind_of "$TMP/sys.jsonl" 2 shared write)" 1 "syscalls: read(2) into shared memory is a write of it"
is "$(kind_of "$TMP/sys.jsonl" 2 file data)" 3 "syscalls: the file pages the kernel and memcmp touched"
is "$(kind_of "$TMP/sys.jsonl" 2 file write)" 1 "syscalls: pread(2) into a shared file mapping is a write of it"

# A forked child touches the shared memory its parent mapped: each process
# counts its own first touches.
(cd "$TMP" && WSS_SESSION_TIME_BASE=manual WSS_TRACK_MODE=exact WSS_SESSION_OUTPUT="$TMP/fork.%p.jsonl" 	LD_PRELOAD="$WSS_LIB" "$PROGS/kinds" fork >"$TMP/fork.out" 2>/dev/null)
ok $? "fork: runs under wss"
child=$(awk '/^child/ {print $2}' "$TMP/fork.out")
parent=$(ls "$TMP"/fork.*.jsonl) # the child's is in the session directory
is "$(awk '/^child/ {print $4, $6}' "$TMP/fork.out")" "0 600" "fork: the child's writes reach the parent"
is "$(kind_of "${parent%.jsonl}.d/fork.$child.jsonl" 2 shared write)" 300 "fork: the child's interval has its 300 shared pages written"
is "$(kind_of "$parent" 2 shared write)" 300 "fork: the parent's has its own"
is "$(kind_of "$parent" 3 shared data)" 300 "fork: and the parent reading them after is its touch"

# The defaults (auto): the same, exact or within the estimate's interval.
run auto auto "$TMP/data"
ok $? "kinds runs under the defaults"
lo=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "sample" and r["seq"] == 3:
        k = r["kinds"]["shared"]; print(k["ci"][0] if "ci" in k else k["data"], k["ci"][1] if "ci" in k else k["data"])' "$TMP/auto.jsonl")
set -- $lo
between $SHARED "$1" "$2" "defaults: sample 3's shared interval holds $SHARED ($1..$2)"

# Turned off, the kinds are not tracked at all.
WSS_TRACK_SHARED=false WSS_TRACK_FILE_MMAP=false WSS_TRACK_STACKS=0 run off exact "$TMP/data"
ok $? "runs with track.shared, track.file_mmap and track.stacks off"
is "$(kind_of "$TMP/off.jsonl" 3 stack data)" - "track.stacks = false: no stack kind"
is "$(kind_of "$TMP/off.jsonl" 3 shared data)" - "track.shared = false: no shared kind"
is "$(kind_of "$TMP/off.jsonl" 3 file data)" - "track.file_mmap = false: no file kind"
is "$(kind_of "$TMP/off.jsonl" 3 anon data)" $ANON "private memory still tracked"
is "$($PROFILE get "$TMP/off.jsonl" header.track.shared)" false "the header says what was tracked"
# The mprotect backend has no write-protection: no stack (a signal frame
# must never meet a PROT_NONE page), the rest as with hybrid.
WSS_TRACK_BACKEND=mprotect run mp exact "$TMP/data"
ok $? "mprotect: runs"
is "$(kind_of "$TMP/mp.jsonl" 3 stack data)" - "mprotect: stacks are not tracked"
is "$(kind_of "$TMP/mp.jsonl" 3 shared data)" $SHARED "mprotect: shared memory is"
done_testing
