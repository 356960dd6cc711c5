#!/bin/sh
# A real Prometheus server (Debian's prometheus, on loopback) scrapes
# `wss attach --metrics` of a redis-server under redis-benchmark's load
# for 20 s; a PromQL range query over its HTTP API returns the working-set
# series, and each of its values is one of the profile's samples of the
# same moment (the sample the endpoint served at the scrape: at most two
# intervals before the query's step, with the scrape's own second).  Also
# `wss attach --metrics` of a process measured by reference bits, and the
# p95 and p99 families.  Without prometheus or redis-server: a SKIP.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
for c in prometheus redis-server redis-benchmark redis-cli; do
	command -v $c >/dev/null || skip_all "$c is not installed (Debian: prometheus, redis-server)"
done
plan 11

port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# get URL: the body, or nothing.
get() {
	python3 - "$1" <<'PY'
import sys, urllib.request
try:
    sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
except Exception as e:
    sys.stderr.write("%s: %s\n" % (sys.argv[1], e))
PY
}

rport=$(port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no >redis.out 2>&1 &
redis=$!
for i in $(seq 100); do redis-cli -p "$rport" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$rport" ping >/dev/null 2>&1 || bail "redis-server did not start: $(tail -3 redis.out)"
t0=$(date +%s)
"$WSS" attach --interval 1s --metrics 127.0.0.1:0 -o r.jsonl "$redis" >att.out 2>att.err &
att=$!
url=
for i in $(seq 100); do
	url=$(sed -n 's|^wss: metrics: \(http://.*/metrics\)$|\1|p' att.err)
	[ -n "$url" ] && grep -q "^wss: attached to $redis" att.err && break
	sleep 0.1
done
[ -n "$url" ] || bail "wss attach --metrics printed no address: $(cat att.err)"
mport=${url##*:}
mport=${mport%/metrics}
pport=$(port)
cat >prom.yml <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: wss
    static_configs:
      - targets: ['127.0.0.1:$mport']
EOF
prometheus --config.file=prom.yml --storage.tsdb.path=db --web.listen-address="127.0.0.1:$pport" >prom.out 2>&1 &
prom=$!
for i in $(seq 300); do
	get "http://127.0.0.1:$pport/-/ready" 2>/dev/null | grep -q Ready && break
	sleep 0.1
done
redis-benchmark -p "$rport" -c 4 -n 100000000 -d 256 -r 100000 -t set,get,lpush -q >bench.out 2>&1 &
bench=$!
sleep 22
kill $bench 2>/dev/null
wait $bench 2>/dev/null
t1=$(date +%s)
get "http://127.0.0.1:$pport/api/v1/query_range?query=wss_working_set_bytes%7Bseries%3D%22data%22%2Cjob%3D%22wss%22%7D&start=$t0&end=$t1&step=1" >range.json
get "$url" >last.prom
get "http://127.0.0.1:$pport/api/v1/targets" >targets.json
kill -INT $att
wait $att
is $? 0 "wss attach --metrics of redis-server under load exits 0" || sed 's/^/# /' att.err
kill $prom $redis 2>/dev/null
wait $prom $redis 2>/dev/null

python3 - range.json r.jsonl "$redis" >match.out <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
res = doc["data"]["result"]
pid = sys.argv[3]
series = [r for r in res if r["metric"].get("pid") == pid]
recs = [json.loads(l) for l in open(sys.argv[2])]
h = recs[0]
ps = h["page_size"]
samples = [(h["start_unix_ns"] + r["t_ns"], r["data_pages"] * ps) for r in recs if r["type"] == "sample"]
pts = [(float(t), int(float(v))) for t, v in series[0]["values"]] if series else []
hit = 0
for t, v in pts:
    tn = int(t * 1e9)
    if any(v == b and tn - 2500000000 <= a <= tn + 500000000 for a, b in samples):
        hit += 1
print("series", len(series))
print("points", len(pts))
print("hit", hit)
print("labels", ",".join(sorted(series[0]["metric"])) if series else "")
print("distinct", len(set(v for _, v in pts)))
PY
fact() { awk -v k="$1" '$1 == k { print $2 }' match.out; }
is "$(fact series)" 1 "PromQL: one data series for the redis-server's pid"
between "$(fact points)" 15 30 "it has a point a second over the 20 s ($(fact points))"
n=$(fact points) h=$(fact hit)
[ "${n:-0}" -gt 0 ] && [ $((h * 100)) -ge $((n * 90)) ]
ok $? "each point is one of the profile's samples of the same moment ($h of $n)" || sed 's/^/# /' match.out
is "$(fact labels)" "__name__,cgroup,comm,instance,job,pid,series,session" "its labels: pid, comm, session, cgroup, and Prometheus' own"
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["data"]["activeTargets"][0]
print(t["health"], repr(t["lastError"]))' targets.json >health
is "$(cat health)" "up ''" "Prometheus scraped it (OpenMetrics, which it asks for first) without an error"
grep -q "^wss_working_set_p95_bytes{session=\"$redis\",pid=\"$redis\",comm=\"redis-server\"" last.prom
ok $? "the endpoint serves the p95 the working set fit in"
grep -q "^wss_working_set_p99_bytes{session=\"$redis\"" last.prom
ok $? "and the p99"

# Reference bits: the endpoint serves that profile too.
start_ready ref "$PROGS/attachee" 0.3 usr1 1 100
"$WSS" attach --method refbits --interval 100ms --duration 2s --metrics 0 -o ref.jsonl "$pid" >ref.att 2>ref.err &
att=$!
url=
for i in $(seq 100); do
	url=$(sed -n 's|^wss: metrics: \(http://.*/metrics\)$|\1|p' ref.err)
	[ -n "$url" ] && break
	sleep 0.1
done
sleep 1.5
get "$url" >ref.prom
wait $att
is $? 0 "wss attach --method refbits --metrics exits 0" || sed 's/^/# /' ref.err
kill -USR1 $pid
v=$(sed -n "s/^wss_working_set_bytes{session=\"$pid\",pid=\"$pid\",comm=\"attachee\".*series=\"data\"} //p" ref.prom)
between "$((${v:-0} / 4096))" 100 140 "reference bits: the data series is the pages it touches ($((${v:-0} / 4096)))"
if command -v promtool >/dev/null; then
	{ promtool check metrics <last.prom && promtool check metrics <ref.prom; } >lint 2>&1
	ok $? "promtool check metrics: both endpoints' text" || sed 's/^/# /' lint
else
	skip "promtool not installed"
fi
