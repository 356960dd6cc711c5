#!/bin/sh
# The fleet query of docs/report.md ("wss export --format table": each
# program's p95 and peak data working set across many profiles), run as
# written by DuckDB (npm's @duckdb/node-api, installed in the directory
# $WSS_TEST_DUCKDB names: .ci/run installs it) over the tables of 20
# profiles of two programs, and its rows checked against the profiles'
# own samples, computed apart in Python.  Without DuckDB: a SKIP.
. "$top_srcdir/tests/tap/tap.sh"
D=${WSS_TEST_DUCKDB:-}
{ [ -n "$D" ] && [ -d "$D/node_modules/@duckdb/node-api" ] && command -v node >/dev/null; } ||
	skip_all "DuckDB is not installed (npm install --prefix DIR @duckdb/node-api; WSS_TEST_DUCKDB=DIR)"
cd "$TMP" || bail "cd $TMP"
plan 4

mkdir fleet
for i in $(seq 10); do
	"$WSS" run -o "fleet/p$i.jsonl" --mode exact --interval 20ms -- "$PROGS/pageramp" 1 100 >/dev/null 2>&1 ||
		bail "pageramp failed"
	"$WSS" run -o "fleet/b$i.jsonl" --time-base manual -- "$PROGS/bursty" >/dev/null 2>&1 || bail "bursty failed"
done
for f in fleet/*.jsonl; do
	"$WSS" export --format table -o "${f%.jsonl}.csv" "$f" || bail "wss export $f failed"
done
is "$(ls fleet/*.csv | wc -l)" 20 "20 profiles exported, one table each"

# The query as the documentation has it, run where its 'fleet/*.csv' is.
sed -n '/^```sql$/,/^```$/p' "$top_srcdir/docs/report.md" | sed '1d;$d' >q.sql
grep -q "read_csv_auto('fleet/\*.csv')" q.sql || bail "docs/report.md has no fleet query"
cat >q.cjs <<'EOF'
const fs = require('fs');
const { DuckDBInstance } = require(process.env.D + '/node_modules/@duckdb/node-api');
(async () => {
	const db = await DuckDBInstance.create(':memory:');
	const c = await db.connect();
	const r = await c.runAndReadAll(fs.readFileSync('q.sql', 'utf8'));
	console.log(JSON.stringify(r.getRowObjectsJson()));
})().catch((e) => { console.error(String(e)); process.exit(1); });
EOF
D=$D node q.cjs >duck.json 2>duck.err
is $? 0 "DuckDB runs the documented query" || sed 's/^/# /' duck.err

python3 - duck.json fleet/*.jsonl >check <<'PY'
import json, math, sys
rows = json.load(open(sys.argv[1]))
g = {}
for path in sys.argv[2:]:
    recs = [json.loads(l) for l in open(path)]
    h = recs[0]
    prog = h["exe"].rsplit("/", 1)[1]
    e = g.setdefault(prog, {"pids": set(), "v": []})
    e["pids"].add(h["pid"])
    e["v"] += [r["data_pages"] * h["page_size"] for r in recs if r["type"] == "sample" and not r.get("final")]
def quantile_cont(v, q):  # DuckDB's: linear between the two nearest ranks
    v = sorted(v)
    pos = (len(v) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])
want = {p: (len(e["pids"]), quantile_cont(e["v"], 0.95) / 2**20, max(e["v"]) / 2**20) for p, e in g.items()}
got = {r["program"]: (int(r["processes"]), float(r["p95_mib"]), float(r["peak_mib"])) for r in rows}
print("programs", sorted(got) == sorted(want), sorted(got), sorted(want))
bad = [p for p in want if p not in got or got[p][0] != want[p][0] or
       abs(got[p][1] - want[p][1]) > 0.051 or abs(got[p][2] - want[p][2]) > 0.051]
print("rows", not bad, bad, got, want)
order = [r["program"] for r in rows]
print("order", order == sorted(order, key=lambda p: -got[p][1]), order)
PY
is "$(awk '$1 == "programs" { print $2 }' check)" True "a row per program: pageramp and bursty" || sed 's/^/# /' check
{ awk '$1 == "rows" { print $2 }' check | grep -q True && awk '$1 == "order" { print $2 }' check | grep -q True; }
ok $? "each row's processes (10), p95 and peak (MiB, to 0.05) are the profiles' samples', largest p95 first" ||
	sed 's/^/# /' check
