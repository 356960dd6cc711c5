#!/bin/sh
# wss attach --method refbits (reference bits): a running multi-threaded program, started
# without the preload, is attached and detached; its output and exit status
# equal a run that was not attached to; the per-phase counts match what it
# touches (within the accuracy docs/attach.md states); 20 attach/detach in a
# row leave it healthy; a redis-server under load; and the errors.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
A=$PROGS/attachee


# 1. Unharmed: the same output and status as a run nobody attached to.
"$A" 0.5 2 4 500,2000 >"$TMP/alone.out" 2>/dev/null
alone=$?
start_ready att "$A" 0.5 2 4 500,2000
"$WSS" attach --method refbits --interval 100ms --duration 1s -o "$TMP/a1.jsonl" $pid 2>"$TMP/a1.err"
is $? 0 "wss attach --duration 1s exits 0" || sed 's/^/# /' "$TMP/a1.err"
wait $pid
is $? "$alone" "the program's exit status is unchanged ($alone)"
cmp -s "$TMP/alone.out" "$TMP/att.out"; ok $? "and its output" || diff "$TMP/alone.out" "$TMP/att.out" | sed 's/^/# /'
$PROFILE check "$TMP/a1.jsonl"; ok $? "the profile is valid"
is "$($PROFILE get "$TMP/a1.jsonl" header.backend)" refbits "header: backend refbits"
is "$($PROFILE get "$TMP/a1.jsonl" header.attach.method)" refbits "header: attach.method"
between "$(grep -c '"type":"sample"' "$TMP/a1.jsonl")" 8 11 "about one sample per 100 ms for 1 s"
grep -q '"attach_end":"duration"' "$TMP/a1.jsonl"; ok $? "the summary says why it ended: duration"
# Each interval runs from a clear to the next read (no back-to-back samples
# on a loaded machine); the gap between them, where touches go unseen, is
# measured and said.
python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
t = [r for r in rs if r["type"] == "summary"][0]
b = t["blind"]
ts = [r["t_ns"] for r in rs if r["type"] == "sample" and not r.get("final")]
gaps = [b2 - a2 for a2, b2 in zip(ts, ts[1:])]
sys.exit(0 if 0 < b["avg_ns"] <= b["max_ns"] < 100000000 and 0 < b["share"] < 1 and "intervals" in t["late"]
         and min(gaps) >= 95000000 else 1)' "$TMP/a1.jsonl"
ok $? "the summary measures the blind gap between intervals, and no interval is short"
grep -q "^wss: attach: between intervals the bits are read and cleared ([0-9.]* ms on average, [0-9.]* % of an interval): a page first touched there after its mapping was read is not counted, so the counts are low by up to that share$" "$TMP/a1.err"
ok $? "stderr says what the gap loses" || sed 's/^/# /' "$TMP/a1.err"
"$WSS" report "$TMP/a1.jsonl" >"$TMP/a1.txt" 2>&1
is $? 0 "wss report reads it"
grep -q "^backend *refbits (wss attach --method refbits" "$TMP/a1.txt"; ok $? "and names the method" || head -20 "$TMP/a1.txt" | sed 's/^/# /'

# 2. Per-phase counts: 4 threads write 1000, then 4000, then 2000 pages,
# 1.5 s each; attached from start to exit.  A sample inside a phase counts
# the phase's pages plus the few the program's stacks and the C library's
# data touch (docs/attach.md: +0 to +64 pages).
start_ready ph "$A" 1.5 1 4 1000,4000,2000
"$WSS" attach --method refbits --interval 100ms -o "$TMP/ph.jsonl" $pid 2>"$TMP/ph.aerr"
is $? 0 "attached until the process exited: exit 0"
wait $pid
grep -q '"attach_end":"the process exited"' "$TMP/ph.jsonl"; ok $? "the summary says the process exited"
phase_hits() { # SERIES LO HI: samples with LO <= SERIES <= HI
	python3 -c 'import json,sys
n = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "sample" and int(sys.argv[3]) <= r[sys.argv[2]] <= int(sys.argv[4]): n += 1
print(n)' "$TMP/ph.jsonl" "$@"; }
# Writes apart only where the kernel keeps soft-dirty bits; elsewhere the
# header says why not, and so does stderr.
writes=$($PROFILE get "$TMP/ph.jsonl" header.attach.writes)
for p in 1000 4000 2000; do
	# (up to 16 intervals overlap a phase of 1.5 s, and more when a late
	# read shortens the next; those across the 4000's edges count 4000)
	between "$(phase_hits data_pages $p $((p + 64)))" 10 18 "phase of $p pages: 10+ of its ~14 samples count $p..$((p + 64)) pages" ||
		diag "samples (t ms, pages): $(python3 -c 'import json,sys
print(" ".join("%d:%d" % (r["t_ns"] // 1000000, r["data_pages"]) for r in map(json.loads, open(sys.argv[1])) if r["type"] == "sample"))' "$TMP/ph.jsonl")"
	if [ "$writes" = true ]; then
		between "$(phase_hits write_pages $p $((p + 64)))" 10 18 "and as many count them written"
	else
		skip "no soft-dirty bits on this kernel: no write split"
	fi
done
if [ "$writes" = true ]; then
	between "$($PROFILE get "$TMP/ph.jsonl" summary.write.total)" 4000 4100 "write total: the 4000 pages ever written, and a few more"
else
	grep -q '"writes_reason":"this kernel keeps no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY is not set)"' "$TMP/ph.jsonl"
	ok $? "no soft-dirty bits: the header says why there is no write split"
	grep -q "^wss: attach: no read/write split: this kernel keeps no soft-dirty bits" "$TMP/ph.aerr"; ok $? "and so does stderr"
fi
"$WSS" report "$TMP/ph.jsonl" >"$TMP/ph.txt" 2>&1
grep -qE "^Data avg/peak/total: [0-9.]+/40[0-6][0-9]/\? pages" "$TMP/ph.txt"; ok $? "wss report: the data peak, total unknown (?)"
out_of_phase=$(python3 -c 'import json,sys
bad = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] != "sample" or r.get("final"): continue
    v = r["data_pages"]
    # between phases a sample spans two of them: at most the sum of the two
    if v > 4000 + 2000 + 64: bad += 1
print(bad)' "$TMP/ph.jsonl")
is "$out_of_phase" 0 "no sample counts more than the pages the program could touch"
python3 -c 'import json,sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"type\":\"sample\"" in l]
assert all("code_pages" not in x for x in s), "a code series (reference bits cannot give one)"
assert all(x["threads"][0]["tid"] == 0 and x["threads"][0]["data_pages"] == x["data_pages"] for x in s)
m = s[len(s) // 2]["mappings"][0]
assert m["name"] == "[anon]" and m["pages"] >= 1000, m' "$TMP/ph.jsonl"
ok $? "no code series, one thread slot (tid 0), and the largest mapping is the program's buffer"

# 3. Attach and detach 20 times in a row; the program runs on unharmed.
# It runs until told (SIGUSR1): under load the attaches outlasted its 16 s
# of a fixed 40 rounds, and the last ones found it gone.
start_ready many "$A" 0.2 usr1 2 300,600
fails=0
for i in $(seq 1 20); do
	"$WSS" attach --method refbits --interval 20ms --duration 100ms -o "$TMP/m$i.jsonl" $pid 2>/dev/null || fails=$((fails + 1))
	$PROFILE check "$TMP/m$i.jsonl" || fails=$((fails + 1))
done
is $fails 0 "20 attaches in a row: each exits 0 with a valid profile"
kill -USR1 $pid
wait $pid
is $? 3 "the program then exits as it would"
grep -q "^done: [1-9][0-9]* rounds of 2 phases, 2 threads, 0 pages never written$" "$TMP/many.out"; ok $? "with its own output"

# 4. Interrupted: SIGINT ends it with a final sample and the summary.
start_ready int "$A" 0.5 4 2 100
"$WSS" attach --method refbits --interval 50ms -o "$TMP/int.jsonl" $pid 2>/dev/null &
apid=$!
sleep 0.5
kill -INT $apid
wait $apid
is $? 0 "SIGINT: wss attach exits 0"
grep -q '"attach_end":"interrupted"' "$TMP/int.jsonl"; ok $? "and its summary says interrupted"
wait $pid

# 4b. The duration ending inside an interval: that last sample is final.
start_ready fin "$A" 0.5 4 1 100
"$WSS" attach --method refbits --interval 200ms --duration 500ms -o "$TMP/fin.jsonl" $pid 2>/dev/null
is "$(python3 -c 'import json,sys
s = [json.loads(l) for l in open(sys.argv[1]) if "\"type\":\"sample\"" in l]
print(len(s), [x.get("final", False) for x in s])' "$TMP/fin.jsonl")" "3 [False, False, True]" \
	"--interval 200ms --duration 500ms: two whole intervals and a final partial one"
wait $pid

# 4c. The process execs: the new program is not measured, and the profile
# says why it ended.
sh -c 'echo ready; sleep 0.4; exec sleep 2' >"$TMP/ex.out" &
pid=$!
wait_ready "$TMP/ex.out" || bail "sh did not start"
"$WSS" attach --method refbits --interval 100ms --duration 2s -o "$TMP/ex.jsonl" $pid 2>/dev/null
is $? 0 "a process that execs: exit 0"
grep -q "\"attach_end\":\"the process exec'd\"" "$TMP/ex.jsonl"; ok $? "and the summary says it exec'd"
kill $pid 2>/dev/null
wait $pid 2>/dev/null

# 4d. Arguments that are not UTF-8 become U+FFFD: the profile is JSON.
bash -c 'echo ready; sleep 1' "$(printf 'x\377y')" >"$TMP/u.out" &
pid=$!
wait_ready "$TMP/u.out" || bail "bash did not start"
"$WSS" attach --method refbits --duration 300ms -o "$TMP/u.jsonl" $pid 2>/dev/null
"$WSS" report "$TMP/u.jsonl" >/dev/null 2>"$TMP/u.err"
is $? 0 "argv that is not UTF-8: wss report reads the profile" || sed 's/^/# /' "$TMP/u.err"
wait $pid

# 5. A server under load.
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	port=$((20000 + $$ % 20000))
	redis-server --port $port --save '' --appendonly no --daemonize no >"$TMP/redis.log" 2>&1 &
	rpid=$!
	n=0
	until redis-cli -p $port ping >/dev/null 2>&1 || [ $n -gt 500 ]; do n=$((n + 1)); sleep 0.02; done
	redis-benchmark -p $port -q -n 200000 -c 8 -t set,get -d 256 -r 100000 >"$TMP/bench.out" 2>&1 &
	bpid=$!
	sleep 0.3
	"$WSS" attach --method refbits --interval 100ms --duration 1s -o "$TMP/redis.jsonl" $rpid 2>"$TMP/redis.aerr"
	is $? 0 "redis-server under redis-benchmark: attach for 1 s exits 0"
	wait $bpid
	is $? 0 "the benchmark finishes without errors"
	grep -qi "error" "$TMP/bench.out"; is $? 1 "and reports none"
	is "$(redis-cli -p $port ping)" PONG "redis-server still answers"
	$PROFILE check "$TMP/redis.jsonl"; ok $? "its profile is complete (a summary at the end)"
	between "$($PROFILE get "$TMP/redis.jsonl" summary.data.peak)" 50 10000000 "and counts the server's pages under load"
	redis-cli -p $port shutdown nosave >/dev/null 2>&1
	wait $rpid
else
	skip "redis-server or redis-benchmark not installed" 6
fi

# 6. Errors: one line, exit 2.
"$WSS" attach --method refbits 999999999 2>"$TMP/e1"
is $? 2 "a process id that cannot exist: exit 2"
is "$(cat "$TMP/e1")" "wss: attach: no process 999999999" "and says so, in one line"
sleep 30 &
spid=$!
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$WSS" attach --method refbits -o /tmp/wss-nobody-$$.jsonl $spid 2>"$TMP/e2"
	is $? 2 "another user's process: exit 2"
	grep -q "^wss: attach: process $spid belongs to another user (uid 0)" "$TMP/e2"; ok $? "and says whose" || cat "$TMP/e2" | sed 's/^/# /'
else
	skip "not root: cannot run as another user" 2
fi
"$WSS" attach --method refbits --bogus $spid 2>"$TMP/e3"
is $? 2 "an unknown option: exit 2"
WSS_SESSION_WINDOW=200ms "$WSS" attach --method refbits $spid 2>"$TMP/e4"
is $? 2 "a window of more than one interval: exit 2"
grep -q "reference bits give one interval at a time" "$TMP/e4"; ok $? "and says why"
"$WSS" attach --method nonsense $spid 2>"$TMP/e5"
is $? 2 "an unknown --method: exit 2"
grep -q "^wss: attach: --method nonsense: one of auto, inject, refbits$" "$TMP/e5"; ok $? "and says which there are"
"$WSS" attach --method refbits -o "$TMP/nodir/x.jsonl" --duration 100ms $spid 2>"$TMP/e6"
is $? 2 "an unwritable output: exit 2"
grep -q "^wss: $TMP/nodir/x.jsonl: No such file or directory$" "$TMP/e6"; ok $? "one line naming it"
touch "$TMP/exists.jsonl"
"$WSS" attach --method refbits -o "$TMP/exists.jsonl" --duration 100ms $spid 2>/dev/null
is $? 2 "an existing profile is never overwritten"
planted refbits "$WSS" attach --method refbits --duration 100ms -o @OUT $spid
planted inject "$WSS" attach --method inject --duration 100ms -o @OUT $spid
(umask 077 && "$WSS" attach --method refbits -o "$TMP/mode.jsonl" --duration 100ms $spid 2>/dev/null)
is "$(stat -c %a "$TMP/mode.jsonl")" 600 "a new profile gets the umask's mode (077: 600)"
# A FIFO of the user's own is written as it is (its reader gets the profile).
mkfifo "$TMP/own.fifo"
timeout 20 cat "$TMP/own.fifo" >"$TMP/own.read" &
"$WSS" attach --method refbits -o "$TMP/own.fifo" --duration 100ms $spid 2>/dev/null
is $? 0 "-o a FIFO of the user's own: exit 0"
wait
grep -q '"type":"header"' "$TMP/own.read"; ok $? "and its reader gets the profile"
"$WSS" attach --method refbits 2>/dev/null
is $? 2 "no pid: exit 2"
kill $spid
wait $spid 2>/dev/null
done_testing
