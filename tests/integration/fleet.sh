#!/bin/sh
# wss export --format table|jsonl (cli/out/export_table.c): several profiles
# as one table with a fixed schema, a row per process and interval, the
# same rows as CSV and as JSON Lines, exported together or one by one and
# concatenated; read by a SQL engine directly (sqlite3 here; docs/report.md
# gives the DuckDB query).
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
command -v sqlite3 >/dev/null || bail "sqlite3 is not installed"
plan 13

"$WSS" run -o a.jsonl --interval 20ms -- "$PROGS/pageramp" 1 100 >/dev/null 2>&1 || bail "pageramp failed"
# A program whose name needs quoting in CSV.
cp "$PROGS/bursty" "bur,sty" || bail "cp"
"$WSS" run -o b.jsonl --time-base manual -- "./bur,sty" >/dev/null 2>&1 || bail "bursty failed"

"$WSS" export --format table -o t.csv a.jsonl b.jsonl
is $? 0 "two profiles into one table: exit 0"
"$WSS" export --format jsonl -o t.jsonl a.jsonl b.jsonl
is $? 0 "and into JSON Lines"
cols="host,profile,pid,ppid,program,start_unix_ns,interval_ns,window_ns,page_size,seq,t_ns,t_unix_ns,final,rate,data_pages,data_lo,data_hi,read_pages,write_pages,data_bytes,kind_heap_pages,kind_anon_pages,kind_data_pages,kind_shared_pages,kind_file_pages,kind_stack_pages"
is "$(head -1 t.csv)" "$cols" "the header: the documented columns, whatever the profiles hold"

# Every row against its profile's sample.
python3 - t.csv t.jsonl a.jsonl b.jsonl "$(uname -n)" >check <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
jrows = [json.loads(l) for l in open(sys.argv[2])]
want = []
for path in sys.argv[3:5]:
    recs = [json.loads(l) for l in open(path)]
    h = [r for r in recs if r["type"] == "header"][0]
    for s in (r for r in recs if r["type"] == "sample"):
        want.append((path, h, s))
print("count", len(rows) == len(want) == len(jrows), len(rows), len(want), len(jrows))
bad = 0
for r, j, (path, h, s) in zip(rows, jrows, want):
    ok = (r["profile"] == path and int(r["pid"]) == h["pid"] and r["host"] == sys.argv[5] and
          r["program"] == h["exe"].rsplit("/", 1)[1] and int(r["seq"]) == s["seq"] and
          int(r["data_pages"]) == s["data_pages"] and int(r["data_bytes"]) == s["data_pages"] * h["page_size"] and
          int(r["t_unix_ns"]) == h["start_unix_ns"] + s["t_ns"] and int(r["final"]) == int(s.get("final", False)) and
          (r["kind_stack_pages"] or None) == (str(s["kinds"]["stack"]["data"]) if "stack" in s.get("kinds", {}) else None))
    # The JSON row: the same keys in the same order, the same values.
    ok = ok and list(j) == list(r) and all((v is None and r[k] == "") or str(v) == r[k] for k, v in j.items())
    bad += not ok
print("rows", bad == 0, bad)
print("quoted", any(r["program"] == "bur,sty" for r in rows))
PY
is "$(awk '$1 == "count" { print $2 }' check)" True "a row per sample of each profile ($(grep count check))"
is "$(awk '$1 == "rows" { print $2 }' check)" True "each row: its profile, host, pid, program, seq, time, pages, bytes, kinds"
is "$(awk '$1 == "quoted" { print $2 }' check)" True "a program named 'bur,sty' is quoted, and reads back whole"
grep -q '^[^,]*,b.jsonl,[0-9]*,[0-9]*,"bur,sty",' t.csv; ok $? "as RFC 4180 has it"

# Exported one by one and concatenated (the second header dropped): the
# same table, so a fleet's files can be joined after the fact.
"$WSS" export --format table a.jsonl >one.csv && "$WSS" export --format table b.jsonl | tail -n +2 >>one.csv
cmp -s one.csv t.csv; ok $? "one by one, concatenated: the same table"

# A SQL engine reads it as it is.
sqlite3 db <<'SQL' >sql.out 2>sql.err
.mode csv
.import t.csv t
.mode list
SELECT program, COUNT(*), MAX(CAST(data_bytes AS INTEGER)) FROM t WHERE final = '0' GROUP BY program ORDER BY program;
SQL
python3 - t.csv >py.out <<'PY'
import csv, sys
g = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["final"] == "0":
        n, m = g.get(r["program"], (0, 0))
        g[r["program"]] = (n + 1, max(m, int(r["data_bytes"])))
for k in sorted(g):
    print("%s|%d|%d" % (k, g[k][0], g[k][1]))
PY
is "$(cat sql.out)" "$(cat py.out)" "sqlite3 imports it and groups it by program as Python does"

# Errors: a format of one profile given two; a missing profile.
"$WSS" export --format csv a.jsonl b.jsonl >/dev/null 2>err
is "$?:$(head -1 err)" "2:wss: export: one profile at a time (several with --format table or jsonl): b.jsonl" \
	"--format csv with two profiles: a usage error"
"$WSS" export --format table -o x.csv a.jsonl missing.jsonl 2>err
is "$?:$(cat err):$(test -e x.csv && echo written)" "2:wss: missing.jsonl: No such file or directory:" \
	"a missing profile among several: the loader's line, exit 2, no table written"
# A profile from before the host field: an empty host.
sed 's/,"host":"[^"]*"//' a.jsonl >old.jsonl
"$WSS" export --format table old.jsonl | sed -n 2p | cut -d, -f1-2 >old.out
is "$(cat old.out)" ",old.jsonl" "a profile without a host: the field is empty"
"$WSS" export --format jsonl old.jsonl | head -1 | grep -q '^{"host":null,"profile":"old.jsonl",'
ok $? "null in JSON"
done_testing
