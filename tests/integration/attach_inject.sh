#!/bin/sh
# wss attach, injected (the default): libwss-attach.so is loaded into a
# running multi-threaded program started without the preload, tracks its
# writes by userfaultfd, and is unloaded at the end.  The program's output
# and exit status equal a run nobody attached to; the per-phase counts are
# exactly the pages it writes; 20 attach/detach cycles leave no mapping or
# descriptor of ours behind; SIGINT, an exec, a killed wss attach; a
# redis-server under load; and the errors (static program, a process
# another tracer holds, no such process, another user's).
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the attachee's buffer: a page of a library's data that it
# writes every interval (track.library_data, on by default) would add one
# to each; dlopen.sh counts library data.
WSS_TRACK_LIBRARY_DATA=0
export WSS_TRACK_LIBRARY_DATA
# Nor its threads' stacks (track.stacks), where each keeps its count of
# sweeps; attach_kinds.sh counts stacks, shared memory and file mappings.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
cd "$TMP" || bail "cd $TMP"
A=$PROGS/attachee

# ours PID: mappings of libwss-attach.so in the process (0 once detached).
ours() { grep -c 'libwss-attach' "/proc/$1/maps"; }
nfds() { ls "/proc/$1/fd" | wc -l; }

# 1. Unharmed: the same output and status as a run nobody attached to.
"$A" 0.5 4 4 500,2000 >"$TMP/alone.out" 2>/dev/null
alone=$?
start_ready att "$A" 0.5 4 4 500,2000
fds0=$(nfds $pid)
"$WSS" attach --interval 100ms --duration 2s -o "$TMP/a1.jsonl" $pid 2>"$TMP/a1.err"
is $? 0 "wss attach --duration 2s exits 0" || sed 's/^/# /' "$TMP/a1.err"
is "$(ours $pid)" 0 "detached: no mapping of libwss-attach.so is left in the process"
is "$(nfds $pid)" "$fds0" "nor a descriptor ($fds0 open, as before)"
wait $pid
is $? "$alone" "the program's exit status is unchanged ($alone)"
cmp -s "$TMP/alone.out" "$TMP/att.out"; ok $? "and its output"
$PROFILE check "$TMP/a1.jsonl"; ok $? "the profile is valid"
is "$($PROFILE get "$TMP/a1.jsonl" header.backend)" uffd-wp "header: backend uffd-wp"
grep -q '"backend_reason":"wss attach (injected)' "$TMP/a1.jsonl"; ok $? "header: the reason says injected"
between "$(grep -c '"type":"sample"' "$TMP/a1.jsonl")" 18 21 "about one sample per 100 ms for 2 s"
grep -q '"attach_end":"duration"' "$TMP/a1.jsonl"; ok $? "the summary says why it ended: duration"
grep -q "^wss: attached to $pid (injected" "$TMP/a1.err"; ok $? "stderr: attached, injected"
grep -q "^wss: write avg/peak: .* (reads are not seen)$" "$TMP/a1.err"; ok $? "stderr: the write line says reads are not seen"
"$WSS" report "$TMP/a1.jsonl" >"$TMP/a1.txt" 2>&1
is $? 0 "wss report reads it"

# 1b. The defaults (auto): the mappings a scan finds are attached exact,
# however large (a mapping the program makes is taken sampled past the
# burst cap; one found was not just made, and a service's memory is
# mostly touched little: an idle python3's 50 MiB went to 1 in 128).
# 6,000 pages written, 24 MiB, past the cap of 1,600 pages at 5 us.
start_ready big "$A" 0.3 2 2 6000
WSS_TRACK_MODE=auto "$WSS" attach --interval 100ms --duration 300ms -o "$TMP/big.jsonl" $pid 2>"$TMP/big.err"
is $? 0 "defaults: attached for 300 ms" || sed 's/^/# /' "$TMP/big.err"
wait $pid
python3 -c '
import json, sys
s = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "sample"]
sys.exit(0 if s and s[0]["rate"] == 1 else 1)' "$TMP/big.jsonl"
ok $? "defaults: the first sample is exact (rate 1): the 24 MiB found are not sampled at once"

# 1c. An idle service under the defaults stays exact: a python3 that
# sleeps 10 ms between writes to a 200 MiB bytearray it filled first
# (some 30 pages an interval).  Its exact ticks scan 51,200 pages, well
# over 2 % of a tenth of the interval but a few tenths of a percent of the
# interval's wall time, against which the engine thread's work is weighed
# (it takes a CPU the program leaves idle): before, auto raised it to
# 1 in 2, then 1 in 256 (with 50 MiB: an average of 26 pages +-3,122 %).
/usr/bin/env python3 -c '
import sys, time
x = bytearray(200 << 20)
for i in range(0, len(x), 4096):
    x[i] = 1
print("ready", flush=True)
for i in range(500):
    time.sleep(0.01)
    x[i * 4096 % len(x)] = 1
' >"$TMP/idle.out" 2>&1 &
pid=$!
wait_ready "$TMP/idle.out" || bail "python3 did not start"
WSS_TRACK_MODE=auto "$WSS" attach --interval 100ms --duration 2s -o "$TMP/idle.jsonl" $pid 2>"$TMP/idle.err"
is $? 0 "an idle python3 under the defaults: attached for 2 s" || sed 's/^/# /' "$TMP/idle.err"
kill $pid 2>/dev/null
wait $pid 2>/dev/null
python3 -c '
import json, sys
s = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "sample"]
print(" ".join(str(r["rate"]) for r in s))
sys.exit(0 if len(s) >= 15 and all(r["rate"] == 1 for r in s) else 1)' "$TMP/idle.jsonl" >"$TMP/idle.rates"
ok $? "and its every sample is exact (rates: $(cat "$TMP/idle.rates"))"

# 2. Per-phase counts: 4 threads write 1000, then 4000, then 2000 pages,
# 1.5 s each, twice (an attach slowed by a loaded machine may miss the
# first phase: each system call of the injected dlopen is a ptrace stop),
# attached from start to exit (exact mode: tap.sh).  Writes are exact: a sample inside a phase counts its pages exactly; a sample
# across a phase change counts the main thread's 3 pages of its own (the
# phase variable, stdio).
start_ready ph "$A" 1.5 2 4 1000,4000,2000
"$WSS" attach --interval 100ms -o "$TMP/ph.jsonl" $pid 2>"$TMP/ph.aerr"
is $? 0 "attached until the process exited: exit 0"
wait $pid
is $? 3 "the program exits with its own status (3)"
grep -q '"attach_end":"the process exited"' "$TMP/ph.jsonl"; ok $? "the summary (written at its exit) says the process exited"
grep -q "^wss: attached to $pid for [0-9]* samples (the process exited)$" "$TMP/ph.aerr"; ok $? "and so does stderr"
exactly() { # PAGES: samples with data_pages == write_pages == PAGES
	python3 -c 'import json,sys
n = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "sample" and r["data_pages"] == r["write_pages"] == int(sys.argv[2]): n += 1
print(n)' "$TMP/ph.jsonl" "$1"; }
for p in 1000 4000 2000; do
	between "$(exactly $p)" 10 30 "phases of $p pages: 10+ of their ~28 samples count exactly $p written pages" ||
		echo "# $(grep -o '"data_pages":[0-9]*' "$TMP/ph.jsonl" | cut -d: -f2 | tr '\n' ' ')"
done
between "$($PROFILE get "$TMP/ph.jsonl" summary.write.total)" 4000 4016 "write total: the 4000 pages of the buffer and the main thread's few"
is "$(python3 -c 'import json,sys
bad = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "sample" and r["data_pages"] > 4000 + 2000 + 8: bad += 1
print(bad)' "$TMP/ph.jsonl")" 0 "no sample counts more than the pages the program wrote"
"$WSS" report "$TMP/ph.jsonl" >"$TMP/ph.txt" 2>&1
grep -q "^Hot pages" "$TMP/ph.txt"; ok $? "wss report lists hot pages (the program's buffer)"

# 2b. A program that computes without system calls: no thread waits in
# one, so wss attach stops its thread in its own code (its stack unwound:
# no frame of the C library) and loads the library there.
"$PROGS/spinner" 3 500 >"$TMP/sp.out" &
pid=$!
wait_ready "$TMP/sp.out" || bail "spinner did not start"
"$WSS" attach --interval 100ms --duration 1s -o "$TMP/sp.jsonl" $pid 2>"$TMP/sp.err"
is $? 0 "a computing program (no system call): attached and detached" || sed 's/^/# /' "$TMP/sp.err"
is "$($PROFILE get "$TMP/sp.jsonl" header.backend)" uffd-wp "by injection"
# Each interval writes the 500 pages, and the kernel a page or two of the
# thread's own (its restartable-sequence area, updated at each preemption).
is "$(python3 -c 'import json,sys
n = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "sample" and not r.get("final") and 500 <= r["data_pages"] <= 503: n += 1
print(n >= 7)' "$TMP/sp.jsonl")" True "7+ of its ~10 samples count its 500 pages (and at most 3 of the thread's own)"
wait $pid
is $? 3 "it exits as it would"
is "$(cat "$TMP/sp.out" | tail -1)" "done: 500 pages, 0 wrong" "with its memory as it left it"

# 2c. Where the thread taken is careful: a program waiting in epoll_wait
# never sees EINTR from the attach (the call starts again, as after a
# signal with no handler); its fork children after the detach live (glibc
# keeps thread descriptors in the stacks it lists: never ours); a thread
# blocked in read(2), called by the program itself, is taken for the
# detach, and its read goes on until the program's own alarm.
"$PROGS/blockers" epollfork 2.5 >"$TMP/bl.out" &
pid=$!
wait_ready "$TMP/bl.out" || bail "blockers did not start"
"$WSS" attach --interval 100ms --duration 1s -o "$TMP/bl.jsonl" $pid 2>"$TMP/bl.err"
is $? 0 "epoll_wait and fork: attached and detached" || sed 's/^/# /' "$TMP/bl.err"
wait $pid
is $? 3 "the program exits as it would"
is "$(tail -1 "$TMP/bl.out")" "done: epoll_wait interrupted 0 times, 0 children failed" \
	"epoll_wait never interrupted, every fork child (also after the detach) exits 0"
"$PROGS/blockers" read 4 >"$TMP/rd.out" &
pid=$!
wait_ready "$TMP/rd.out" || bail "blockers did not start"
sleep 0.3
"$WSS" attach --interval 100ms --duration 500ms -o "$TMP/rd.jsonl" $pid 2>"$TMP/rd.err"
is $? 0 "a thread blocked in read(2): attached and detached" || sed 's/^/# /' "$TMP/rd.err"
is "$(ours $pid)" 0 "and nothing of ours is left"
wait $pid
is $? 3 "the program exits as it would"
is "$(tail -1 "$TMP/rd.out")" "done: read returned -1 (Interrupted system call), alarm came" \
	"its read went on until its own alarm"

# 2c'. A thread stopped in nanosleep sleeps all its time: the kernel
# restarts it for the time left, from a record the injected calls must
# not overwrite (any nanosleep of theirs would: EINTR at once).
"$PROGS/blockers" sleep 2 >"$TMP/ns.out" &
pid=$!
wait_ready "$TMP/ns.out" || bail "blockers did not start"
"$WSS" attach --interval 100ms --duration 300ms -o "$TMP/ns.jsonl" $pid 2>"$TMP/ns.err"
is $? 0 "a thread in nanosleep: attached and detached" || sed 's/^/# /' "$TMP/ns.err"
wait $pid
is "$(tail -1 "$TMP/ns.out")" "done: nanosleep returned 0, slept it all" "its nanosleep went on for the time left"

# 2d. The calls return by an int3 where the program leaves SIGTRAP to a
# handler or the default: its handler is kept and sees its own SIGTRAP
# only; where it ignores SIGTRAP (the kernel would reset that), by a
# system-call stop instead: still ignored after.
for m in trap trapign; do
	"$PROGS/blockers" $m 1.5 >"$TMP/$m.out" &
	pid=$!
	wait_ready "$TMP/$m.out" || bail "blockers did not start"
	"$WSS" attach --interval 100ms --duration 500ms -o "$TMP/$m.jsonl" $pid 2>"$TMP/$m.err"
	is $? 0 "blockers $m: attached and detached" || sed 's/^/# /' "$TMP/$m.err"
	wait $pid
done
is "$(tail -1 "$TMP/trap.out")" "done: 1 SIGTRAP, handler kept" "a SIGTRAP handler: kept, and it saw its own SIGTRAP only"
is "$(tail -1 "$TMP/trapign.out")" "done: SIGTRAP still ignored" "SIGTRAP ignored: still ignored"

# 3. Attach and detach 20 times in a row; the program runs on unharmed.
# It runs until told (SIGUSR1): a fixed 60 rounds (24 s) could end under
# the attaches of a loaded machine, and the last ones found it gone.
start_ready many "$A" 0.2 usr1 2 300,600
fds0=$(nfds $pid)
fails=0
for i in $(seq 1 20); do
	"$WSS" attach --interval 20ms --duration 100ms -o "$TMP/m$i.jsonl" $pid 2>"$TMP/m$i.err" || fails=$((fails + 1))
	$PROFILE check "$TMP/m$i.jsonl" || fails=$((fails + 1))
	grep -q '"backend":"uffd-wp"' "$TMP/m$i.jsonl" || fails=$((fails + 1))
done
is $fails 0 "20 injected attaches in a row: each exits 0 with a valid profile" || cat "$TMP"/m*.err | sed 's/^/# /' | head
is "$(ours $pid)" 0 "no mapping of ours is left"
is "$(nfds $pid)" "$fds0" "nor a descriptor"
kill -USR1 $pid
wait $pid
is $? 3 "the program then exits as it would"
grep -q "^done: [1-9][0-9]* rounds of 2 phases, 2 threads, 0 pages never written$" "$TMP/many.out"; ok $? "with its own output"

# 4. Interrupted: SIGINT ends it with a final sample and the summary.
start_ready int "$A" 0.5 4 2 100
"$WSS" attach --interval 50ms -o "$TMP/int.jsonl" $pid 2>/dev/null &
apid=$!
sleep 0.5
kill -INT $apid
wait $apid
is $? 0 "SIGINT: wss attach exits 0"
grep -q '"attach_end":"interrupted"' "$TMP/int.jsonl"; ok $? "and its summary says interrupted"
wait $pid
is $? 3 "the program exits as it would"

# 4b. A second SIGINT while wss attach detaches: the detach finishes
# (the stop signals stay blocked until the thread is given back).
start_ready int2 "$A" 2 1 2 500
"$WSS" attach --interval 50ms -o "$TMP/int2.jsonl" $pid 2>/dev/null &
apid=$!
sleep 0.6
kill -INT $apid
sleep 0.005
kill -INT $apid 2>/dev/null
wait $apid
is $? 0 "two SIGINTs 5 ms apart: wss attach exits 0"
wait $pid
is $? 3 "the program exits as it would"

# 5. wss attach killed: the engine in the process ends the profile and
# stops tracking by itself; the program runs on.
start_ready k "$A" 0.3 6 2 200
"$WSS" attach --interval 50ms -o "$TMP/k.jsonl" $pid 2>/dev/null &
apid=$!
sleep 0.5
kill -KILL $apid
wait $apid 2>/dev/null
n=0
until grep -q '"type":"summary"' "$TMP/k.jsonl" 2>/dev/null || [ $n -gt 300 ]; do n=$((n + 1)); sleep 0.01; done
grep -q '"attach_end":"wss attach ended without detaching"' "$TMP/k.jsonl"; ok $? "wss attach killed: the profile ends with a summary saying so"
$PROFILE check "$TMP/k.jsonl"; ok $? "and is valid"
wait $pid
is $? 3 "the program exits as it would"
grep -q "^done: 6 rounds of 1 phases, 2 threads, 0 pages never written$" "$TMP/k.out"; ok $? "with its own output"

# 6. The process execs: the new program is not measured.
sh -c 'echo ready; sleep 0.4; exec sleep 2' >"$TMP/ex.out" &
pid=$!
wait_ready "$TMP/ex.out" || bail "sh did not start"
"$WSS" attach --interval 100ms --duration 2s -o "$TMP/ex.jsonl" $pid 2>"$TMP/ex.err"
is $? 0 "a process that execs: exit 0"
grep -q "^wss: attached to $pid for [0-9]* samples (the process exec'd)$" "$TMP/ex.err"; ok $? "and stderr says it exec'd" || sed 's/^/# /' "$TMP/ex.err"
$PROFILE check "$TMP/ex.jsonl" 2>/dev/null || "$WSS" report "$TMP/ex.jsonl" >/dev/null 2>&1
ok $? "the profile up to the exec is readable"
kill $pid 2>/dev/null
wait $pid 2>/dev/null

# 7. A server under load: attach, detach, and again.
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	port=$((20000 + ($$ + 7) % 20000))
	redis-server --port $port --save '' --appendonly no --daemonize no >"$TMP/redis.log" 2>&1 &
	rpid=$!
	n=0
	until redis-cli -p $port ping >/dev/null 2>&1 || [ $n -gt 500 ]; do n=$((n + 1)); sleep 0.02; done
	redis-benchmark -p $port -q -n 300000 -c 8 -t set,get -d 256 -r 100000 >"$TMP/bench.out" 2>&1 &
	bpid=$!
	sleep 0.3
	"$WSS" attach --interval 100ms --duration 1s -o "$TMP/redis.jsonl" $rpid 2>"$TMP/redis.aerr"
	is $? 0 "redis-server under redis-benchmark: an injected attach for 1 s exits 0" || sed 's/^/# /' "$TMP/redis.aerr"
	"$WSS" attach --interval 100ms --duration 500ms -o "$TMP/redis2.jsonl" $rpid 2>/dev/null
	is $? 0 "and a second one"
	wait $bpid
	is $? 0 "the benchmark finishes without errors"
	grep -qi "error" "$TMP/bench.out"; is $? 1 "and reports none"
	is "$(redis-cli -p $port ping)" PONG "redis-server still answers"
	is "$(ours $rpid)" 0 "with nothing of ours mapped"
	$PROFILE check "$TMP/redis.jsonl"; ok $? "its profile is complete (a summary at the end)"
	between "$($PROFILE get "$TMP/redis.jsonl" summary.data.peak)" 50 10000000 "and counts the pages the server writes under load"
	redis-cli -p $port shutdown nosave >/dev/null 2>&1
	wait $rpid
	is $? 0 "redis-server shuts down cleanly"
else
	skip "redis-server or redis-benchmark not installed" 10
fi

# 8. Errors.
"$WSS" attach --method inject 999999999 2>"$TMP/e1"
is $? 2 "no such process: exit 2"
is "$(cat "$TMP/e1")" "wss: attach: no process 999999999" "one line"
"$PROGS/staticwait" 5 >"$TMP/st.out" &
spid=$!
wait_ready "$TMP/st.out" || bail "staticwait did not start"
"$WSS" attach --method inject --duration 100ms $spid 2>"$TMP/e2"
is $? 2 "a static program, --method inject: exit 2"
grep -q "^wss: attach: process $spid has no libc.so.6 (a static program): injection needs the dynamic C library$" "$TMP/e2"
ok $? "and says why, in one line" || sed 's/^/# /' "$TMP/e2"
"$WSS" attach --duration 300ms -o "$TMP/st.jsonl" $spid 2>"$TMP/e3"
is $? 0 "a static program by default: measured with reference bits instead"
grep -q "^wss: attach: cannot inject: .*; measuring with reference bits (--method refbits)$" "$TMP/e3"; ok $? "and stderr says so"
is "$($PROFILE get "$TMP/st.jsonl" header.backend)" refbits "header: backend refbits"
kill $spid
wait $spid 2>/dev/null
# A process another tracer holds (PTRACE_SEIZE: it runs on, traced).
sleep 30 &
tpid=$!
python3 -c 'import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0: sys.exit(1)
print("traced", flush=True)
time.sleep(30)' $tpid >"$TMP/tracer.out" 2>&1 &
trpid=$!
n=0
until grep -q traced "$TMP/tracer.out" 2>/dev/null || [ $n -gt 500 ]; do n=$((n + 1)); sleep 0.01; done
"$WSS" attach --method inject --duration 100ms $tpid 2>"$TMP/e4"
is $? 2 "a process another tracer holds: exit 2"
grep -q "^wss: attach: ptrace refused: process $tpid is already traced by process $trpid (a debugger?)$" "$TMP/e4"
ok $? "and says who traces it" || sed 's/^/# /' "$TMP/e4"
kill $trpid $tpid 2>/dev/null
wait $trpid $tpid 2>/dev/null
sleep 30 &
spid=$!
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$WSS" attach -o /tmp/wss-nobody-$$.jsonl $spid 2>"$TMP/e5"
	is $? 2 "another user's process: exit 2"
	grep -q "^wss: attach: process $spid belongs to another user (uid 0)" "$TMP/e5"; ok $? "and says whose"
else
	skip "not root: cannot run as another user" 2
fi
"$WSS" attach --code $spid 2>"$TMP/e6"
is $? 2 "--code is not an attach flag: exit 2"
WSS_TRACK_CODE=true "$WSS" attach --duration 100ms $spid 2>"$TMP/e7"
is $? 2 "track.code with wss attach: exit 2"
grep -q "^wss: attach: track.code: not with wss attach" "$TMP/e7"; ok $? "and says why"
WSS_TRACK_BACKEND=mprotect "$WSS" attach --duration 100ms $spid 2>"$TMP/e8"
is $? 2 "track.backend = mprotect: exit 2 (injection tracks with uffd-wp)"
touch "$TMP/exists.jsonl"
"$WSS" attach -o "$TMP/exists.jsonl" --duration 100ms $spid 2>"$TMP/e9"
is $? 2 "an existing profile is never overwritten: exit 2"
grep -q "exists.jsonl" "$TMP/e9"; ok $? "and the message names it" || sed 's/^/# /' "$TMP/e9"
is "$(ours $spid)" 0 "after a refused start, nothing of ours is left in the process"
kill $spid
wait $spid 2>/dev/null
done_testing
