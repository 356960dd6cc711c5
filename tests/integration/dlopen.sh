#!/bin/sh
# track.library_data: shared libraries' data segments are tracked from the
# second tick after dlopen and leave tracking at dlclose, with exact page
# counts under manual ticks; dlopen/dlclose churn (libraries loaded where
# others were, failed loads) under 1 ms ticks runs as it does natively.
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
LIBS=$PROGS/.libs
[ -f "$LIBS/libdldata1.so" ] || bail "test libraries not built"
sample() { $PROFILE samples "$1" | awk -v s="$2" '$1 == s {print $2}'; }

WSS_TRACK_LIBRARY_DATA=true WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/e.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/dlprog" exact "$LIBS" >"$TMP/e.out" 2>"$TMP/e.err"
is $? 0 "exact: runs" || sed 's/^/# /' "$TMP/e.err"
$PROFILE check "$TMP/e.jsonl"; ok $? "exact: the profile is complete and valid"
is "$($PROFILE get "$TMP/e.jsonl" header.track.library_data)" true "the header records track.library_data"
n=0
while read -r kind seq pages; do
	[ "$kind" = expect ] || continue
	n=$((n + 1))
	between "$(sample "$TMP/e.jsonl" "$seq")" "$pages" $((pages + 3)) "exact: sample $seq has the library's $pages pages"
done <"$TMP/e.out"
is "$n" 4 "exact: four expectations were checked"

# On by default; off, the same touches are not counted.
WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/def.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/dlprog" exact "$LIBS" >/dev/null 2>&1
is "$($PROFILE get "$TMP/def.jsonl" header.track.library_data)" true "track.library_data is on by default"
WSS_TRACK_LIBRARY_DATA=false WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/off.jsonl" \
	LD_PRELOAD="$WSS_LIB" "$PROGS/dlprog" exact "$LIBS" >"$TMP/off.out" 2>/dev/null
is $? 0 "library_data = false: runs"
seq=$(awk '$1 == "expect" && $3 == 40 {print $2}' "$TMP/off.out")
between "$(sample "$TMP/off.jsonl" "$seq")" 0 3 "library_data = false: the library's 40 pages are not counted"

"$PROGS/dlprog" churn "$LIBS" 300 >"$TMP/native.out" 2>&1
is $? 0 "churn natively"
WSS_TRACK_LIBRARY_DATA=true WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/c.jsonl" \
	LD_PRELOAD="$WSS_LIB" timeout 300 "$PROGS/dlprog" churn "$LIBS" 300 >"$TMP/c.out" 2>"$TMP/c.err"
is $? 0 "churn under wss, 1 ms ticks" || sed 's/^/# /' "$TMP/c.err" | head -5
is "$(cat "$TMP/c.out")" "$(cat "$TMP/native.out")" "churn: the same output as natively"
$PROFILE check "$TMP/c.jsonl"; ok $? "churn: the profile is complete and valid"
between "$($PROFILE samples "$TMP/c.jsonl" | wc -l)" 2 10000000 "churn: ticks ran during it"

# Real programs with every library's data tracked: python3 (libpython where
# it is shared, the extension modules it dlopens, a subprocess) and perl.
cat >"$TMP/p.py" <<'PY'
import threading, subprocess, json, math, hashlib, sqlite3, decimal, zlib
def work(n, out):
    out[n] = sum(i * n for i in range(100000))
res = {}
ts = [threading.Thread(target=work, args=(i, res)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sorted(res.items()))
print(hashlib.sha256(json.dumps([math.sqrt(i) for i in range(10000)]).encode()).hexdigest())
print(subprocess.run(["echo", "hi"], capture_output=True).stdout)
c = sqlite3.connect(":memory:"); c.execute("create table t(x)")
c.executemany("insert into t values(?)", [(i,) for i in range(10000)])
print(c.execute("select sum(x) from t").fetchone(), decimal.Decimal(1) / 7, len(zlib.compress(b"abc" * 10000)))
PY
mkdir "$TMP/py" "$TMP/pl"
python3 "$TMP/p.py" >"$TMP/py.native" 2>&1
WSS_TRACK_LIBRARY_DATA=true WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/py/p.%p.jsonl" \
	LD_PRELOAD="$WSS_LIB" timeout 300 python3 "$TMP/p.py" >"$TMP/py.wss" 2>/dev/null
st=$?
is "$st" 0 "python3 with library_data: exit status"
[ "$(cat "$TMP/py.wss")" = "$(cat "$TMP/py.native")" ]
ok $? "python3 with library_data: the same output"
good=0 n=0
# the profiles of the session directory too (python3 may exec itself)
for f in $(find "$TMP"/py -type f); do n=$((n + 1)); $PROFILE check "$f" && good=$((good + 1)); done
is "$good" "$n" "python3 with library_data: all $n profiles valid"
pl='my %h; $h{$_ % 977} += $_ for 1..300000; print join(",", map { "$_=$h{$_}" } sort { $a <=> $b } keys %h), "\n"'
perl -e "$pl" >"$TMP/pl.native"
WSS_TRACK_LIBRARY_DATA=true WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/pl/p.jsonl" \
	LD_PRELOAD="$WSS_LIB" timeout 300 perl -e "$pl" >"$TMP/pl.wss" 2>/dev/null
is $? 0 "perl with library_data: exit status"
is "$(md5sum <"$TMP/pl.wss")" "$(md5sum <"$TMP/pl.native")" "perl: the same output"
$PROFILE check "$TMP/pl/p.jsonl"; ok $? "perl: the profile is complete and valid"
done_testing
