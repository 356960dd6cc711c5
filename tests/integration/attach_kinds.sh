#!/bin/sh
# wss attach, injected: the kinds of memory `wss run` tracks besides the
# private ones, found in /proc/self/maps.  tests/progs/attachkinds writes
# 64 MiB of shared anonymous memory (16,384 pages), 256 pages of a shared
# mapping of a file and 64 of a private one, and 64 pages of a thread's
# 64 MiB stack, in every interval: a sample counts exactly those per kind
# (shared, file, stack); the file then holds what it holds without wss;
# the stack leaves tracking when its thread ends.  Exact tracking
# (tap.sh); a loaded machine may starve the program's threads in some
# intervals, so a few exact samples of each phase are asked, and none over.
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts: a page of a library's data written every interval would
# add one to a kind of its own (data), but not to these.
WSS_TRACK_LIBRARY_DATA=0
export WSS_TRACK_LIBRARY_DATA
cd "$TMP" || bail "cd $TMP"
K=$PROGS/attachkinds

# A file system on a block device: a shared mapping of a tmpfs file is
# shared memory, not a file mapping.
if [ "$(stat -f -c %T "$TMP")" = tmpfs ]; then
	skip_all "$TMP is on tmpfs: no regular file mapping to count"
fi
head -c 1048576 /dev/urandom >"$TMP/f0" || bail "no /dev/urandom"
cp "$TMP/f0" "$TMP/alone"
cp "$TMP/f0" "$TMP/attached"

"$K" "$TMP/alone" 0.3 0.2 >"$TMP/alone.out" 2>/dev/null
is $? 3 "alone: attachkinds exits 3"
cmp -s "$TMP/f0" "$TMP/alone"
is $? 1 "alone: it changed its file (the file check below can fail)"

start_ready k "$K" "$TMP/attached" 4 2.5
"$WSS" attach --method inject --interval 200ms -o "$TMP/k.jsonl" $pid 2>"$TMP/k.err"
st=$?
if [ $st -ne 0 ] && grep -q "uffd\|userfaultfd\|PAGEMAP_SCAN" "$TMP/k.err"; then
	kill $pid
	skip_all "$(head -1 "$TMP/k.err")"
fi
is $st 0 "attached until the process exited" || sed 's/^/# /' "$TMP/k.err"
wait $pid
is $? 3 "the program exits with its own status (3)"
is "$(cat "$TMP/k.out")" "$(cat "$TMP/alone.out")" "and its output (its shared memory as it wrote it)"
cmp "$TMP/alone" "$TMP/attached" >/dev/null
ok $? "its file holds exactly what it holds without wss"
$PROFILE check "$TMP/k.jsonl"
ok $? "the profile is valid"
is "$(python3 -c 'import json,sys
h = json.loads(open(sys.argv[1]).readline())
t = h["track"]
print(t["shared"], t["file_mmap"], t["stacks"])' "$TMP/k.jsonl")" "True True True" "header: track.shared, file_mmap and stacks on, as tracked"

# Per sample: the stack thread's phase (its 64 MiB stack tracked) or the
# one after it; each kind's writes.  Not the first sample (the attach's
# start) nor the final one (the process's exit).
python3 -c '
import json, sys
s = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "sample"]
for r in s[1:]:
    if r.get("final"):
        continue
    k = r["kinds"]
    w = lambda n: k.get(n, {}).get("write", 0)
    t = lambda n: k.get(n, {}).get("tracked", 0)
    phase = "stack" if t("stack") >= 16384 else "after"
    print(phase, w("shared"), w("file"), w("stack"), t("shared"), t("file"), t("stack"))' "$TMP/k.jsonl" >"$TMP/k.samples"
sed 's/^/# /' "$TMP/k.samples"
count() { awk "$1" "$TMP/k.samples" | wc -l; }
between "$(count '$1 == "stack"')" 8 30 "8+ samples while the stack thread lives (its stack tracked)"
between "$(count '$1 == "after"')" 5 30 "5+ samples after it ended: its stack left tracking"
between "$(count '$1 == "stack" && $2 == 16384 && $3 == 320 && $4 >= 64 && $4 <= 70')" 3 30 \
	"3+ samples with the thread count exactly 16384 shared, 320 file and 64 (+ up to 6) stack pages"
between "$(count '$1 == "after" && $2 == 16384 && $3 == 320 && $4 <= 6')" 3 30 \
	"3+ samples after it count exactly 16384 shared, 320 file pages and few stack pages"
is "$(count '$2 > 16384 || $3 > 320 || $4 > 70')" 0 "no sample counts more than the program wrote"
# wss's own memory is shared anonymous memory while attached, and the
# engine thread's stack a thread's stack: neither is tracked.  Stacks
# after the thread: the writer's 8 MiB (2,048 pages) and the main one's.
is "$(count '$5 != 16384 || $6 != 320')" 0 "tracked: exactly the program's shared memory (16384) and file pages (320)"
is "$(count '$1 == "after" && ($7 < 2048 || $7 > 2048 + 512)')" 0 \
	"tracked stacks after the thread: the writer's 2048 pages and the main stack (not the engine thread's)"
# The stack left for good: no sample after one without it has it again.
is "$(awk '$1 == "after" { a = 1 } a && $1 == "stack"' "$TMP/k.samples" | wc -l)" 0 "once gone, the stack stays gone"
is "$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "summary":
        k = r["kinds"]
        print(k["shared"]["peak"], k["file"]["peak"])' "$TMP/k.jsonl")" "16384 320" "summary: the peaks of shared (16384) and file (320)"

# Detached while the program runs on: its file, read meanwhile and after
# its exit, holds what it holds without wss (a page written and protected
# again stays dirty: the kernel writes it back).
cp "$TMP/f0" "$TMP/detached"
start_ready dt "$K" "$TMP/detached" 2 1.5
"$WSS" attach --method inject --interval 100ms --duration 1s -o "$TMP/dt.jsonl" $pid 2>"$TMP/dt.err"
is $? 0 "attached for 1 s, detached" || sed 's/^/# /' "$TMP/dt.err"
is "$(grep -c libwss-attach "/proc/$pid/maps")" 0 "nothing of wss is left in the process"
cmp "$TMP/alone" "$TMP/detached" >/dev/null
ok $? "its file, while it runs on, holds what it holds without wss"
wait $pid
is $? 3 "it exits as it would"
cmp "$TMP/alone" "$TMP/detached" >/dev/null
ok $? "and its file after its exit"

# The kinds off: nothing of them is tracked.
start_ready off "$K" "$TMP/attached" 1 0.5
WSS_TRACK_SHARED=0 WSS_TRACK_FILE_MMAP=0 WSS_TRACK_STACKS=0 \
	"$WSS" attach --method inject --interval 200ms -o "$TMP/off.jsonl" $pid 2>"$TMP/off.err"
is $? 0 "track.shared, file_mmap and stacks off: attached" || sed 's/^/# /' "$TMP/off.err"
wait $pid
is "$(python3 -c 'import json,sys
seen = set()
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "sample":
        seen |= {k for k, v in r["kinds"].items() if v["tracked"]}
print(" ".join(sorted(seen & {"shared", "file", "stack"})) or "none")' "$TMP/off.jsonl")" none "and no shared, file or stack pages are tracked"

done_testing
