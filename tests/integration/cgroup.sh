#!/bin/sh
# wss attach --cgroup PATH (cli/attach/attach_cgroup.c): every process of a
# cgroup v2 measured, a parent and the two children it forked writing
# known numbers of pages (exact: the attachee's buffer alone), a fourth
# process that joins while it runs and one that leaves; the table lists
# each with its own figures and a total that is their sum; the cgroup's
# metrics (its sum, p95 and p99) served and checked by promtool; a bad
# cgroup refused.  Needs a cgroup2 file system this user can make a cgroup
# in (root, as CI is): else a SKIP.
. "$top_srcdir/tests/tap/tap.sh"
WSS_TRACK_LIBRARY_DATA=0
WSS_TRACK_STACKS=0
export WSS_TRACK_LIBRARY_DATA WSS_TRACK_STACKS
cd "$TMP" || bail "cd $TMP"
A=$PROGS/attachee

mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
name=/wss-test-$$
cg=$mnt$name
[ -n "$mnt" ] && mkdir "$cg" 2>/dev/null || skip_all "no cgroup2 file system to make a cgroup in (root is needed)"
plan 16
parent_cg=$(dirname "$cg")
cleanup() {
	for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	sleep 0.2
	rmdir "$cg" 2>/dev/null
}
trap 'cleanup; [ -n "${WSS_TEST_KEEP:-}" ] || rm -rf "$TMP"' EXIT

# readies N FILE: until FILE has N "ready" lines (60 s at most).
readies() {
	for i in $(seq 600); do
		[ "$(grep -c '^ready' "$2" 2>/dev/null)" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# The parent joins the cgroup, forks two attachees (100 and 200 pages a
# phase) and becomes the third (300): all three are in it from the start.
sh -c "echo \$\$ >'$cg/cgroup.procs' && { '$A' 0.3 usr1 1 100 & '$A' 0.3 usr1 1 200 & exec '$A' 0.3 usr1 1 300; }" \
	>procs.out 2>/dev/null &
readies 3 procs.out || bail "the attachees did not start"
first=$(cat "$cg/cgroup.procs" | tr '\n' ' ')
# pages PID: the pages a phase of attachee PID writes (its last argument),
# noted while it runs.
for p in $first; do tr '\0' ' ' <"/proc/$p/cmdline" | awk -v p="$p" '{ print p, $NF }'; done >pages.txt
pages() { awk -v p="$1" '$1 == p { print $2 }' pages.txt; }
pid100=$(pgrep -f "attachee 0.3 usr1 1 100$")

"$WSS" attach --cgroup "$name" --duration 5s --interval 100ms --metrics 0 -o 'cg.%p.jsonl' >att.out 2>att.err &
att=$!
# A fourth process joins after a second; the 100-page one leaves after
# two (moved to the parent cgroup, still running).
sleep 1
sh -c "echo \$\$ >'$cg/cgroup.procs' && exec '$A' 0.3 usr1 1 50" >late.out 2>/dev/null &
readies 1 late.out || bail "the late attachee did not start"
late=$(pgrep -f "attachee 0.3 usr1 1 50$")
echo "$late 50" >>pages.txt
sleep 1
echo "$pid100" >"$parent_cg/cgroup.procs"
url=$(sed -n 's|^wss: metrics: \(http://.*/metrics\)$|\1|p' att.err)
sleep 1
python3 - "$url" >scrape.prom <<'PY'
import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
PY
wait $att
is $? 0 "wss attach --cgroup exits 0" || sed 's/^/# /' att.err
for p in $first $late $pid100; do kill -USR1 "$p" 2>/dev/null; done

n=$(ls cg.*.jsonl 2>/dev/null | wc -l)
is "$n" 4 "one profile for each of the four processes"
for p in $first $late; do $PROFILE check "cg.$p.jsonl" || echo "bad cg.$p.jsonl"; done >check.out 2>&1
is "$(cat check.out)" "" "each is valid"
grep -q "^wss: cgroup $name: 4 processes, 4 with a profile; by data peak:" att.err
ok $? "the table: 4 processes, each with a profile" || sed 's/^/# /' att.err
# row PID: the table's data peak and total (pages) of PID.  Exact: the
# pages its phases write, and the few of its own data and heap it writes
# (its phase counters, the thread's): 8 at most.
row() { awk -v p="$1" '$2 == p { print $4, $7 }' att.err | tr -d ','; }
for p in $first $late; do
	w=$(pages "$p")
	set -- $(row "$p") x x
	[ "$1" -ge "$w" ] 2>/dev/null && [ "$1" -le $((w + 8)) ] && [ "$2" -ge "$1" ] && [ "$2" -le $((w + 8)) ]
	ok $? "process $p: data peak $1 and total $2 pages, the $w it writes a phase and its own few"
done
sum=$(python3 - cg.*.jsonl <<'PY'
import json, sys
t = 0
for f in sys.argv[1:]:
    for r in map(json.loads, open(f)):
        if r["type"] == "summary":
            t += r["data"]["total"]
print(t)
PY
)
is "$(sed -n "s|^wss: cgroup $name total: \([0-9,]*\) pages.*|\1|p" att.err | tr -d ,)" "$sum" \
	"the cgroup's total is the sum of its processes' ($sum pages)"
python3 - cg.$pid100.jsonl cg.$(echo $first | awk '{ print $1 }').jsonl >left.out <<'PY'
import json, sys
last = lambda f: max(r["t_ns"] + json.loads(open(f).readline())["start_unix_ns"]
                     for r in map(json.loads, open(f)) if r["type"] == "sample")
print("yes" if last(sys.argv[1]) < last(sys.argv[2]) - 1000000000 else "no %d %d" % (last(sys.argv[1]), last(sys.argv[2])))
PY
is "$(cat left.out)" yes "the process that left was measured no more from then on"
grep -q "^wss: cgroup $name: its data working set fit in [0-9.]* MiB in 95 % of the windows" att.err
ok $? "the cgroup's p95 and p99 are said"
if command -v promtool >/dev/null; then
	promtool check metrics <scrape.prom >lint 2>&1; ok $? "promtool check metrics: the cgroup's scrape" || sed 's/^/# /' lint
else
	skip "promtool not installed (Debian: prometheus)"
fi
v=$(sed -n "s/^wss_cgroup_processes{cgroup=\"$(echo "$name" | sed 's|/|\\/|g')\"} //p" scrape.prom)
is "$v" 3 "the metrics: 3 processes measured at the scrape (the fourth joined, the 100-page one left)"
p95=$(sed -n 's/^wss_cgroup_working_set_p95_bytes{.*} //p' scrape.prom)
# The cgroup's windows summed 300+200+100 pages (and each process's few),
# then 300+200+100+50 from the fourth's attach to the 100's leaving: its
# p95 is the larger sum, or (should a loaded machine attach the fourth
# that late) the smaller; either way above any one process's.
between "$((p95 / 4096))" 600 682 "the metrics: the cgroup's p95 is its processes' windows summed ($((p95 / 4096)) pages)"

"$WSS" attach --cgroup /no/such/cgroup --duration 1s 2>bad.err
is $? 2 "a cgroup that does not exist: exit 2"
is "$(wc -l <bad.err)" 1 "in one line: $(cat bad.err)"
