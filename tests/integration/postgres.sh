#!/bin/sh
# PostgreSQL under wss (issue 30): `wss run` of the server, its postmaster
# and every backend it forks, under pgbench's load.  The server's shared
# buffers are MAP_SHARED memory each process maps by inheritance: every
# client backend's profile must show them as shared working set, pgbench
# must see no error, and the server must shut down cleanly.  PostgreSQL
# refuses to run as root: the server runs as the postgres user, from a copy
# of wss it can read.  (Its throughput against a native run is measured in
# bench/, not here: tests do not time.)
. "$top_srcdir/tests/tap/tap.sh"

PG=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$PG" ] && [ -x "$PG/postgres" ] && command -v pgbench >/dev/null || skip_all "PostgreSQL is not installed"
id postgres >/dev/null 2>&1 || skip_all "no postgres user"
[ "$(id -u)" = 0 ] || skip_all "needs root to run the server as the postgres user"

# A directory the postgres user owns, with wss and its library laid out as
# in the build tree (wss preloads the .libs/libwss.so beside it).
D=$(mktemp -d /tmp/wss-pg.XXXXXX) || bail "mktemp"
# (tap.sh's own EXIT trap, which this one replaces, removes $TMP.)
trap 'runuser -u postgres -- "$PG/pg_ctl" -D "$D/data" stop -m immediate >/dev/null 2>&1; rm -rf "$D"; [ -n "${WSS_TEST_KEEP:-}" ] || rm -rf "$TMP"' EXIT
mkdir -p "$D/.libs" "$D/prof"
cp "$WSS" "$D/wss" && cp "$WSS_LIB" "$D/.libs/libwss.so" || bail "copy wss"
chown -R postgres "$D"
chmod 755 "$D"
as_pg() { runuser -u postgres -- "$@"; }

as_pg "$PG/initdb" -D "$D/data" >"$TMP/initdb.log" 2>&1 || bail "initdb failed: $(tail -3 "$TMP/initdb.log")"
# The server, under wss run, in the background; a socket in $D only.
as_pg "$D/wss" run -o "$D/prof/pg.%p.jsonl" -- "$PG/postgres" -D "$D/data" -k "$D" -c listen_addresses= -p 5499 \
	>"$TMP/server.log" 2>&1 &
server=$!
n=0
until as_pg "$PG/pg_isready" -h "$D" -p 5499 -q; do
	n=$((n + 1))
	[ $n -gt 300 ] && bail "the server did not start: $(tail -5 "$TMP/server.log")"
	sleep 0.1
done
ok 0 "the server starts under wss run"
as_pg "$PG/createdb" -h "$D" -p 5499 bench >/dev/null 2>&1
as_pg pgbench -h "$D" -p 5499 -i -s 2 -q bench >"$TMP/init.log" 2>&1
ok $? "pgbench -i loads its tables" || sed 's/^/# /' "$TMP/init.log"
as_pg pgbench -h "$D" -p 5499 -c 4 -T 5 bench >"$TMP/bench.log" 2>&1
ok $? "pgbench -c 4 runs 5 s" || sed 's/^/# /' "$TMP/bench.log"
grep -q '^number of failed transactions: 0 ' "$TMP/bench.log"
ok $? "with no failed transaction"
between "$(awk '/^number of transactions actually processed/ {print $NF}' "$TMP/bench.log")" 1 1000000000 "and some done"
as_pg "$PG/pg_ctl" -D "$D/data" stop -m fast >/dev/null 2>&1
ok $? "pg_ctl stop -m fast"
wait $server
is $? 0 "wss run ends with the server's status, 0"
grep -q 'database system is shut down' "$TMP/server.log"
ok $? "the server shut down cleanly" || tail -5 "$TMP/server.log" | sed 's/^/# /'
# pg_isready's own connection before the server is ready is refused with
# a FATAL "the database system is starting up" (a slow start: a loaded
# machine): the poll's, not the server's failure.
grep -E 'FATAL|PANIC|terminated by signal|Segmentation' "$TMP/server.log" | grep -v 'FATAL:  the database system is starting up' |
	head -3 >"$TMP/bad"
is "$(cat "$TMP/bad")" "" "no FATAL, PANIC or crash in its log"

# Every profile complete, and each client backend (argv "postgres:
# postgres bench ...") with its shared buffers in its working set.
bad=0 backends=0 shared=0
for f in $(find "$D"/prof -name 'pg.*.jsonl'); do # the backends' in the session directory
	$PROFILE check "$f" || bad=$((bad + 1))
	case "$($PROFILE get "$f" header.argv)" in
	*"postgres bench"*)
		backends=$((backends + 1))
		t=$($PROFILE get "$f" summary.kinds.shared.total 2>/dev/null)
		[ "${t:-0}" -ge 100 ] 2>/dev/null && shared=$((shared + 1)) ;;
	esac
done
is $bad 0 "every process's profile is complete and valid"
between $backends 4 100 "pgbench's 4 client backends each wrote a profile ($backends)"
is $shared $backends "each client backend's shared working set holds its shared buffers (>= 100 pages)"
# The session's table (cli/model/session.c), which takes the postmaster's own
# lines' place when its backends wrote profiles too.
grep -qE '^wss: [0-9,]+ pages \([0-9.]+ %\) of it shared memory' "$TMP/server.log"
ok $? "the session's summary says how much of its total is shared memory"
done_testing
