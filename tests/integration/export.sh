#!/bin/sh
# wss export: real profiles (bursty's two sweeps under mprotect, phases'
# threads under the default backend, a sampled run) written as pprof, CSV
# and trace-event JSON, and read back by other tools: `go tool pprof`
# lists sweep with its exact 4,000 first touches and its stack, Python's
# csv module gets every sample's and thread's numbers, and a checker of
# the Trace Event Format's fields finds the counters and the peaks
# (tests/tap/export_check.py).  Then bad input and bad outputs: usage,
# cut and corrupt profiles, unwritable, directory, full and size-limited
# outputs (nothing half-written left behind), pprof to a terminal.
. "$top_srcdir/tests/tap/tap.sh"
command -v python3 >/dev/null || bail "python3 is not installed"
CHECK="python3 $top_srcdir/tests/tap/export_check.py"
cd "$TMP" || bail "cd $TMP"
plan 54

# ---- the profiles ----
WSS_TRACK_BACKEND=mprotect WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/b.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/bursty" >"$TMP/b.out" 2>&1 || bail "bursty under the preload failed"
WSS_SESSION_TIME_BASE=manual WSS_SESSION_INTERVAL=100ms WSS_SESSION_WINDOW=300ms WSS_SESSION_OUTPUT="$TMP/t.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/phases" threads >"$TMP/t.out" 2>"$TMP/t.err" || bail "phases threads failed"
WSS_TRACK_MODE=sampled WSS_TRACK_SAMPLE_RATE=1/16 WSS_TEST_SAMPLING_SEED=12345 WSS_SESSION_TIME_BASE=manual \
	WSS_SESSION_OUTPUT="$TMP/s.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/sampleset" 8 4 500 1500 7 >/dev/null 2>&1 ||
	bail "sampleset failed"
for f in b t s; do $PROFILE check "$TMP/$f.jsonl" || bail "$f.jsonl is not a valid profile"; done
grep -q '"type":"sites"' "$TMP/b.jsonl" || bail "bursty's profile has no sites record"
sweep_line=$(grep -n 'p\[(size_t)i \* PG\] = (char)i;' "$top_srcdir/tests/progs/bursty.c" | cut -d: -f1)
# The file as the compiler was given it: tests/progs/X.c in the source
# tree, ../../tests/progs/X.c in make distcheck's build directory.
src_re='\([^ ()]*/\)\{0,1\}tests/progs'

# ---- pprof ----
"$WSS" export --format pprof -o "$TMP/b.pb.gz" "$TMP/b.jsonl" 2>"$TMP/err"
is $? 0 "pprof: exit 0"
test ! -s "$TMP/err"; ok $? "pprof: nothing on stderr (the profile has a sites record)" || sed 's/^/# /' "$TMP/err"
$CHECK pprof "$TMP/b.jsonl" "$TMP/b.pb.gz" >"$TMP/b.leaves"
ok $? "pprof: decodes (gzip, string_table[0] \"\", ids, mappings = modules, values pages and bytes, the sites' total)"
grep -qx "sweep 4000" "$TMP/b.leaves" && grep -qx "main 320" "$TMP/b.leaves"
ok $? "pprof: a sample of 4000 pages with leaf sweep (2 x 2000), 320 with leaf main (80 x 4)" || sed 's/^/# /' "$TMP/b.leaves"
"$WSS" export --format=pprof "$TMP/b.jsonl" >"$TMP/stdout.pb.gz" && "$WSS" export --format pprof -o - "$TMP/b.jsonl" >"$TMP/dash.pb.gz"
cmp -s "$TMP/b.pb.gz" "$TMP/stdout.pb.gz" && cmp -s "$TMP/b.pb.gz" "$TMP/dash.pb.gz" && test ! -e "$TMP/-"
ok $? "pprof: stdout (not a terminal, and -o -) gets the same bytes as -o FILE"

if command -v go >/dev/null; then
	# go tool pprof keeps a cache and settings under HOME and GOCACHE.
	mkdir -p "$TMP/home" "$TMP/gocache"
	gp() { HOME=$TMP/home GOCACHE=$TMP/gocache GOFLAGS= go tool pprof "$@" 2>"$TMP/gp.err"; }
	gp -top "$TMP/b.pb.gz" >"$TMP/top"
	is $? 0 "go tool pprof -top reads the export" || sed 's/^/# /' "$TMP/gp.err"
	grep -qE '^ +4000pages +[0-9.]+% +[0-9.]+% +4000pages +[0-9.]+% +sweep$' "$TMP/top"
	ok $? "go tool pprof -top: sweep, 4000 pages flat and cumulative" || sed 's/^/# /' "$TMP/top"
	grep -qE '^ +320pages .* main$' "$TMP/top"; ok $? "go tool pprof -top: main, 320 pages flat"
	gp -top -lines "$TMP/b.pb.gz" | grep -qE "^ +4000pages .* sweep $(echo "$src_re" | sed 's/\\//g')/bursty\.c:$sweep_line\$"
	ok $? "go tool pprof -top -lines: sweep at bursty.c:$sweep_line (the touching statement)"
	gp -traces "$TMP/b.pb.gz" >"$TMP/traces"
	is "$(awk '/^-+\+/ { n++; next } n == 1 { print $NF }' "$TMP/traces" | head -3 | tr '\n' ' ')" "sweep burst main " \
		"go tool pprof -traces: the 4000-page stack is sweep <- burst <- main" || sed 's/^/# /' "$TMP/traces"
	gp -raw "$TMP/b.pb.gz" >"$TMP/raw"
	grep -qE "^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x0 [^ ]*tests/progs/bursty [0-9a-f]{40} \[FN\]\[FL\]\[LN\]\[IN\]$" "$TMP/raw"
	ok $? "go tool pprof -raw: mapping 1 is the program, with its build-id, fully symbolised" ||
		grep -A3 '^Mappings' "$TMP/raw" | sed 's/^/# /'
else
	for k in 1 2 3 4 5 6; do skip "go is not installed (golang-go): go tool pprof not run"; done
fi

# A profile without a sites record (an older wss): the peaks' sites,
# said once on stderr.
grep -v '"type":"sites"' "$TMP/b.jsonl" >"$TMP/nosites.jsonl"
"$WSS" export --format pprof -o "$TMP/nosites.pb.gz" "$TMP/nosites.jsonl" 2>"$TMP/err"
is $? 0 "pprof without a sites record: exit 0"
is "$(grep -c 'no "sites" record' "$TMP/err"):$(wc -l <"$TMP/err")" "1:1" "and one line on stderr says the peaks' sites stand in"
$CHECK pprof "$TMP/nosites.jsonl" "$TMP/nosites.pb.gz" >"$TMP/nosites.leaves"
ok $? "it decodes, the samples summing to the peaks' sites"
grep -qx "sweep 4000" "$TMP/nosites.leaves"; ok $? "the two peaks' sweep sites add up: 4000 pages"
# pprof refuses a terminal: run under a pseudo-terminal.
python3 - "$WSS" "$TMP/b.jsonl" >"$TMP/tty" <<'EOF'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], ["wss", "export", "--format", "pprof", sys.argv[2]])
out = b""
while True:
    try:
        d = os.read(fd, 4096)
    except OSError:
        break
    if not d:
        break
    out += d
print(os.waitpid(pid, 0)[1] >> 8, out.decode(errors="replace").strip())
EOF
is "$(cat "$TMP/tty")" "2 wss: export: a pprof profile is gzipped binary, not for a terminal: use -o FILE or a redirection" \
	"pprof to a terminal: refused in one line, exit 2"

# ---- CSV and trace-event JSON, checked against the profiles ----
for f in b t s; do
	"$WSS" export --format csv "$TMP/$f.jsonl" -o "$TMP/$f.csv" &&
		"$WSS" export --format perfetto "$TMP/$f.jsonl" -o "$TMP/$f.json"
	is $? 0 "csv and perfetto of $f.jsonl: exit 0"
	$CHECK csv "$TMP/$f.jsonl" "$TMP/$f.csv" >"$TMP/$f.rows"
	ok $? "csv of $f.jsonl: every process and thread row equals the profile's records ($(cat "$TMP/$f.rows"))"
	$CHECK trace "$TMP/$f.jsonl" "$TMP/$f.json" >"$TMP/$f.trace"
	ok $? "perfetto of $f.jsonl: valid trace events; counters = samples, per thread too; instants = peaks ($(head -1 "$TMP/$f.trace"))"
done

# ---- CSV ----
# phases prints the exact pages of each thread in each sample (a thread
# with 0 pages may be in the sample or not).
awk '$1 == "expect_tid" && $4 == $5 { print $2, $3, $4 }' "$TMP/t.out" | sort >"$TMP/t.want"
python3 -c 'import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["scope"] == "thread": print(r["seq"], r["tid"], r["data_pages"])' "$TMP/t.csv" | sort >"$TMP/t.got"
comm -23 "$TMP/t.want" "$TMP/t.got" | awk '$3 != 0' >"$TMP/t.missing"
[ "$(awk '$3 != 0' "$TMP/t.want" | wc -l)" -ge 4 ] && [ ! -s "$TMP/t.missing" ]
ok $? "csv: each thread's exact pages, as phases printed them" || sed 's/^/# missing: /' "$TMP/t.missing"
n=$(grep -c '"type":"sample"' "$TMP/s.jsonl")
is "$(grep -c '^process,' "$TMP/s.csv"),$(grep -c '^process,[0-9]*,[0-9]*,[0-9]*,,[0-9]*,[0-9]*,[0-9]*,[0-9]*,16,[0-9]' "$TMP/s.csv")" \
	"$n,$n" "csv of a sampled run: rate 16 and the intervals' bounds on every process row"
head -1 "$TMP/t.csv" | grep -qx 'scope,seq,t_ns,cpu_ns,tid,data_pages,read_pages,write_pages,faults,rate,data_lo,data_hi,read_lo,read_hi,write_lo,write_hi,final,lower_bound\(,kind_[a-z]*_pages\)*'
ok $? "csv: the documented header, then a column per kind"
final_seqs=$(python3 -c 'import csv, sys
print(" ".join(sorted({r["seq"] for r in csv.DictReader(open(sys.argv[1])) if r["final"] == "1"})))' "$TMP/b.csv")
is "$final_seqs" "$(grep '"final":true' "$TMP/b.jsonl" | sed 's/.*"seq":\([0-9]*\).*/\1/')" "csv: final is 1 on the final sample's rows only"

# ---- trace-event JSON ----
is "$(sed -n 's/^[0-9]* counters, \([0-9]*\) threads.*/\1/p' "$TMP/t.trace")" 4 "perfetto: phases' main thread and 3 others, each with its counters"
is "$(grep -c '^peak ' "$TMP/b.trace")" "$(grep -c '"type":"peak"' "$TMP/b.jsonl")" "perfetto: an instant event per peak"
grep '^peak 45 ' "$TMP/b.trace" | head -1 | grep -q "^peak 45 sweep ($src_re/bursty.c:$sweep_line)\$"
ok $? "perfetto: the peak at 45's top site, symbolised: sweep (bursty.c:$sweep_line)" || sed 's/^/# /' "$TMP/b.trace"

# ---- bad input ----
"$WSS" export --format xml "$TMP/b.jsonl" >/dev/null 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "2:wss: export: unknown format 'xml' (csv, pprof, perfetto, table or jsonl)" "an unknown format: one line, exit 2"
"$WSS" export "$TMP/b.jsonl" >/dev/null 2>"$TMP/err"
is "$?:$(head -1 "$TMP/err")" "2:wss: export: no format given (--format csv, pprof, perfetto, table or jsonl)" "no --format: exit 2"
"$WSS" export --format csv >/dev/null 2>"$TMP/err"
is "$?:$(head -1 "$TMP/err")" "2:wss: export: no profile given (wss export --format csv|pprof|perfetto|table|jsonl [-o OUT] PROFILE...)" \
	"no profile: exit 2"
"$WSS" export --format csv --bogus "$TMP/b.jsonl" >/dev/null 2>"$TMP/err"
is "$?:$(head -1 "$TMP/err")" "2:wss: export: unknown option --bogus" "an unknown option: exit 2"
"$WSS" export --format csv "$TMP/b.jsonl" "$TMP/t.jsonl" >/dev/null 2>&1; is $? 2 "two profiles: exit 2"
"$WSS" export --format csv "$TMP/missing.jsonl" >/dev/null 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "2:wss: $TMP/missing.jsonl: No such file or directory" "a missing profile: the loader's line, exit 2"
awk 'NR == 7 { print "{\"type\":\"sample\",garbage"; next } 1' "$TMP/b.jsonl" >"$TMP/bad.jsonl"
"$WSS" export --format perfetto -o "$TMP/bad.json" "$TMP/bad.jsonl" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "2:wss: $TMP/bad.jsonl:7: invalid JSON: column 18: expected a key (a string), found 'g'" \
	"a corrupt line: the loader's line, exit 2"
test ! -e "$TMP/bad.json" && [ -z "$(ls -A "$TMP" | grep '^\.')" ]; ok $? "and no output file, no temporary file"
head -c 300 "$TMP/b.jsonl" >"$TMP/header-cut.jsonl"
"$WSS" export --format csv "$TMP/header-cut.jsonl" >/dev/null 2>"$TMP/err"
is "$?:$(grep -c "^wss: $TMP/header-cut.jsonl:1: " "$TMP/err")" "2:1" "a profile cut inside its header: the loader's error, exit 2"
# Cut in the middle of a sample: the whole records before it are exported.
k=$(grep -n '"type":"sample"' "$TMP/b.jsonl" | sed -n 10p | cut -d: -f1)
{ head -n $((k - 1)) "$TMP/b.jsonl"; sed -n "${k}p" "$TMP/b.jsonl" | head -c 40; } >"$TMP/cut.jsonl"
"$WSS" export --format csv "$TMP/cut.jsonl" >"$TMP/cut.csv" 2>"$TMP/err"
is "$?:$(grep -c '^process,' "$TMP/cut.csv")" "0:9" "a profile cut mid-record: exit 0, its 9 whole samples"

# ---- bad outputs ----
"$WSS" export --format csv -o /nonexistent/dir/x.csv "$TMP/b.jsonl" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "2:wss: /nonexistent/dir/x.csv: cannot write it: the directory /nonexistent/dir does not exist" "-o in a missing directory: one line, exit 2"
mkdir "$TMP/outdir"
"$WSS" export --format csv -o "$TMP/outdir" "$TMP/b.jsonl" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "2:wss: $TMP/outdir: cannot write it: Is a directory" "-o a directory: one line, exit 2"
"$WSS" export --format perfetto -o /dev/full "$TMP/b.jsonl" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "2:wss: /dev/full: No space left on device" "-o /dev/full (written in place): the write's error, exit 2"
# A file-size limit stops the write half-way: the old file stays as it
# was, and nothing else is left in the directory.
echo "the old export" >"$TMP/outdir/x.csv"
sh -c 'trap "" XFSZ; ulimit -f 2; exec "$@"' sh "$WSS" export --format csv -o "$TMP/outdir/x.csv" "$TMP/b.jsonl" 2>"$TMP/err"
is "$?:$(cat "$TMP/err")" "2:wss: $TMP/outdir/x.csv: File too large" "a write that fails half-way (RLIMIT_FSIZE): one line, exit 2"
is "$(ls -A "$TMP/outdir"):$(cat "$TMP/outdir/x.csv")" "x.csv:the old export" "and the old file is intact, no temporary file left"
# A symbolic link of the user's own, in a directory of theirs: its target
# is replaced (keeping its mode), the link stays.
ln -s "$TMP/outdir/x.csv" "$TMP/link.csv"
chmod 600 "$TMP/outdir/x.csv"
"$WSS" export --format csv -o "$TMP/link.csv" "$TMP/b.jsonl"
test -L "$TMP/link.csv" && cmp -s "$TMP/outdir/x.csv" "$TMP/b.csv"
ok $? "-o the user's own symbolic link writes its target and keeps the link"
is "$(stat -c %a "$TMP/outdir/x.csv")" 600 "the file replaced keeps its mode (600), as open(2) would"
umask 022
"$WSS" export --format csv -o "$TMP/mode.csv" "$TMP/b.jsonl"
is "$(stat -c %a "$TMP/mode.csv")" 644 "a new file gets the mode open(2) would give it (umask 022: 644)"
planted export "$WSS" export --format csv -o @OUT "$TMP/b.jsonl"
done_testing
