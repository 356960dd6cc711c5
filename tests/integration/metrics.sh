#!/bin/sh
# wss run --metrics ADDR and --metrics-textfile DIR (cli/out/metrics.c): the
# session's live figures as Prometheus text, served over HTTP on loopback
# and written for node_exporter's textfile collector, checked by promtool
# and against the profile's own samples; the file gone when the session
# ends; bad addresses and directories refused before the program runs.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
plan 20

# fetch URL [METHOD [ACCEPT]]: the response's status line, headers and
# body into hdr and body (python3's http.client: no curl needed); prints
# the status.
fetch() {
	python3 - "$1" "${2:-GET}" "${3:-}" <<'PY'
import http.client, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
c.request(sys.argv[2], u.path, headers={"Accept": sys.argv[3]} if sys.argv[3] else {})
r = c.getresponse()
body = r.read()
with open("hdr", "w") as f:
    f.write("HTTP/1.1 %d %s\n" % (r.status, r.reason))
    for k, v in r.getheaders():
        f.write("%s: %s\n" % (k, v))
with open("body", "wb") as f:
    f.write(body)
print(r.status)
PY
}

# value FILE METRIC LABEL-MATCH: the first sample's value.
value() { grep "^$2{.*$3" "$1" | head -1 | sed 's/.* //'; }

mkdir tf
"$WSS" run --interval 50ms --metrics 0 --metrics-textfile tf -o p.jsonl -- sh -c "\"$PROGS/pageramp\" 2; true" \
	>out 2>err &
run=$!
# Until the textfile has three samples of the program (pageramp, the
# shell's child: its profile is found through the shell's note).
got=
for i in $(seq 200); do
	f=$(ls tf/wss_*.prom 2>/dev/null | head -1)
	if [ -n "$f" ] && cp "$f" snap.prom 2>/dev/null &&
		[ "$(value snap.prom wss_samples_total 'comm="pageramp"' | cut -d. -f1)" -ge 3 ] 2>/dev/null; then
		got=1
		break
	fi
	sleep 0.05
done
is "$got" 1 "the textfile appears, with the program's samples"
url=$(sed -n 's|^wss: metrics: \(http://.*/metrics\)$|\1|p' err)
is "$(echo "$url" | sed 's|:[0-9]*/metrics$||')" "http://127.0.0.1" "the endpoint is on loopback by default ($url)"
fetch "$url" >/dev/null && cp body scrape.prom
is "$(head -1 hdr)" "HTTP/1.1 200 OK" "GET /metrics: 200"
grep -qi '^Content-Type: text/plain; version=0.0.4' hdr; ok $? "in the Prometheus text format"
is "$(fetch "${url%/metrics}/other")" 404 "another path: 404"
is "$(fetch "$url" POST)" 405 "another method: 405"
if command -v promtool >/dev/null; then
	promtool check metrics <snap.prom >lint 2>&1; ok $? "promtool check metrics: the textfile" || sed 's/^/# /' lint
	promtool check metrics <scrape.prom >lint 2>&1; ok $? "promtool check metrics: the scrape" || sed 's/^/# /' lint
else
	skip "promtool is not installed (Debian: prometheus)"
	skip "promtool is not installed (Debian: prometheus)"
fi
# What Prometheus asks for first: OpenMetrics, which a strict parser
# (Debian's python3-prometheus-client) reads.
fetch "$url" GET 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1' >/dev/null &&
	cp body om.txt
grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' hdr
ok $? "OpenMetrics to a client that accepts it, as Prometheus does"
py=
for p in python3 /usr/bin/python3; do
	$p -c 'import prometheus_client.openmetrics.parser' 2>/dev/null && py=$p && break
done
if [ -n "$py" ]; then
	$py - om.txt >om.check 2>&1 <<'PY'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
assert fams["wss_samples"].type == "counter", fams["wss_samples"].type
assert any(s.name == "wss_samples_total" for s in fams["wss_samples"].samples)
assert fams["wss_working_set_bytes"].type == "gauge"
print("ok", len(fams))
PY
	grep -q '^ok' om.check; ok $? "the OpenMetrics parser reads it: $(cat om.check | tail -1)"
else
	skip "no OpenMetrics parser (Debian: python3-prometheus-client)"
fi
wait $run
is $? 0 "the program's status"
is "$(ls tf | wc -l)" 0 "the textfile is removed when the session ends"

# The snapshot against the profile: its samples' count N, and sample N's
# figures (a refresh reads whole records, and the file is renamed whole).
leader=$($PROFILE get p.jsonl header.pid)
child=$(sed -n 's/.*"pid":\([0-9]*\),"ppid":[0-9]*,"profile":"\([^"]*\)".*/\2/p' p.jsonl | head -1)
test -n "$child" && test -f "$child"; ok $? "the shell's note names pageramp's profile ($child)"
n=$(value snap.prom wss_samples_total 'comm="pageramp"')
cpid=$($PROFILE get "$child" header.pid)
python3 - "$child" "$n" >want <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
s = [r for r in recs if r["type"] == "sample"][: int(sys.argv[2])]
ps = [r for r in recs if r["type"] == "header"][0]["page_size"]
print(s[-1]["data_pages"] * ps, max(x["data_pages"] for x in s) * ps)
PY
is "$(value snap.prom wss_working_set_bytes 'comm="pageramp".*series="data"') $(value snap.prom wss_working_set_peak_bytes 'comm="pageramp".*series="data"')" \
	"$(cat want)" "the data working set and its peak so far are sample $n's and the largest of the $n (bytes)"
grep -q "^wss_working_set_bytes{session=\"$leader\",pid=\"$cpid\",comm=\"pageramp\"" snap.prom
ok $? "labelled with the session (the shell's pid), the process and its program"
is "$(value snap.prom wss_process_running "pid=\"$cpid\"")" 1 "running, while it ran"
between "$(value snap.prom wss_rss_bytes "pid=\"$cpid\"" | cut -d. -f1)" 1 100000000000 "its RSS beside it"

# Refused before the program runs, one line, wss run's status.
"$WSS" run --metrics-textfile "$TMP/none" -- touch ran1 2>e1
is "$?:$(cat e1):$(test -e ran1 && echo ran)" "125:wss: --metrics-textfile: $TMP/none: No such directory:" \
	"a missing textfile directory"
"$WSS" run --metrics 99999 -- touch ran2 2>e2
is "$?:$(cat e2):$(test -e ran2 && echo ran)" \
	"125:wss: --metrics: 99999: not an address (PORT, HOST:PORT or [V6]:PORT, e.g. 9464 or 127.0.0.1:9464):" "a bad port"
python3 -c '
import socket, subprocess, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
port = s.getsockname()[1]
r = subprocess.run([sys.argv[1], "run", "--metrics", "127.0.0.1:%d" % port, "--", "touch", "ran3"], stderr=subprocess.PIPE)
print("%d:%s" % (r.returncode, r.stderr.decode().strip().replace(str(port), "PORT")))' "$WSS" >e3
is "$(cat e3):$(test -e ran3 && echo ran)" "125:wss: --metrics: 127.0.0.1:PORT: Address already in use:" "a port in use"
done_testing
