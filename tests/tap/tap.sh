# TAP for shell tests (the twin of tap.h).  Source it, call plan N, then
# ok/is/... ; finish with done_testing.
_tap_n=0
_tap_failed=0
_tap_plan=-1

plan() { _tap_plan=$1; echo "1..$1"; }
diag() { printf '# %s\n' "$*"; }
ok() { # ok COND-EXIT-STATUS NAME...
	_c=$1; shift
	_tap_n=$((_tap_n + 1))
	if [ "$_c" -eq 0 ]; then echo "ok $_tap_n - $*"; else echo "not ok $_tap_n - $*"; _tap_failed=$((_tap_failed + 1)); fi
	return "$_c"
}
is() { # is GOT WANT NAME...
	_g=$1 _w=$2; shift 2
	if [ "$_g" = "$_w" ]; then ok 0 "$@"; else ok 1 "$@"; diag "got '$_g', want '$_w'"; return 1; fi
}
between() { # between GOT LO HI NAME... (integers, inclusive)
	_g=$1 _lo=$2 _hi=$3; shift 3
	if [ -n "$_g" ] && [ "$_g" -ge "$_lo" ] 2>/dev/null && [ "$_g" -le "$_hi" ]; then ok 0 "$@"; else ok 1 "$@"; diag "got '$_g', want $_lo..$_hi"; return 1; fi
}
todo() { # todo COND-EXIT-STATUS REASON NAME...: a known failure, reported, not counted
	_c=$1 _r=$2
	shift 2
	_tap_n=$((_tap_n + 1))
	if [ "$_c" -eq 0 ]; then echo "ok $_tap_n - $*"; else echo "not ok $_tap_n - $* # TODO $_r"; fi
}
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # SKIP $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
bail() { echo "Bail out! $*"; exit 1; }
# wait_ready FILE: until a program has printed "ready" into FILE (10 s at most).
wait_ready() {
	_tap_w=0
	while ! grep -q '^ready' "$1" 2>/dev/null; do
		_tap_w=$((_tap_w + 1))
		[ $_tap_w -gt 1000 ] && return 1
		sleep 0.01
	done
}
# start_ready NAME CMD...: CMD in the background, its stdout in
# $TMP/NAME.out and its stderr in $TMP/NAME.err, its pid in $pid; returns
# once it printed "ready", bails if it never does.
start_ready() {
	_tap_name=$1
	shift
	"$@" >"$TMP/$_tap_name.out" 2>"$TMP/$_tap_name.err" &
	pid=$!
	wait_ready "$TMP/$_tap_name.out" || bail "$1 did not start"
}
done_testing() {
	[ "$_tap_plan" -lt 0 ] && echo "1..$_tap_n" && _tap_plan=$_tap_n
	[ "$_tap_failed" -eq 0 ] && [ "$_tap_n" -eq "$_tap_plan" ] && exit 0
	exit 1
}

# watch SECS CMD...: timeout(1) -k 10 SECS CMD..., and should CMD still run
# 5 s before it is killed, the state and call stacks of every thread of
# its processes as TAP comments on the test's output (a hang that CI met
# once in a thousand runs is then read off its log, not guessed at): the
# kernel's stacks from /proc, the program's from gdb when it is installed.
exec 7>&1
watch() {
	_tap_secs=$1
	shift
	(
		trap 'kill $_tap_s 2>/dev/null; exit 0' TERM
		sleep $((_tap_secs > 10 ? _tap_secs - 5 : _tap_secs / 2)) &
		_tap_s=$!
		wait $_tap_s
		# The shell that runs watch: this subshell's parent.
		_tap_me=$(exec sh -c 'echo $PPID')
		for _tap_t in $(pgrep -P "$(cut -d' ' -f4 /proc/$_tap_me/stat)" -x timeout); do
			hang_stacks $_tap_t >&7
		done
	) &
	_tap_watcher=$!
	timeout -k 10 "$_tap_secs" "$@" 7>&-
	_tap_st=$?
	kill $_tap_watcher 2>/dev/null
	wait $_tap_watcher 2>/dev/null
	return $_tap_st
}
# hang_stacks PID: PID's descendants' threads, as TAP comments.
hang_stacks() {
	for _tap_p in $(pgrep -P "$1") $(pgrep -P "$1" | xargs -r -n1 pgrep -P); do
		diag "still running after its time: pid $_tap_p: $(tr '\0' ' ' </proc/$_tap_p/cmdline 2>/dev/null)"
		for _tap_task in /proc/$_tap_p/task/*; do
			diag "  thread ${_tap_task##*/} $(cut -d' ' -f2,3 $_tap_task/stat 2>/dev/null) wchan $(cat $_tap_task/wchan 2>/dev/null)"
			sed 's/^/#     /' $_tap_task/stack 2>/dev/null
		done
		command -v gdb >/dev/null &&
			gdb -p "$_tap_p" -batch -ex 'thread apply all bt' 2>/dev/null | grep -E '^(Thread|#)' | sed 's/^/#   /'
	done
}

# Exact tracking unless a test asks otherwise: most tests check exact
# counts, which the default mode (auto) gives only while exactness fits the
# overhead budget.  tests/integration/sampled.sh and realprogs.sh run the
# other modes and the defaults.
WSS_TRACK_MODE=${WSS_TRACK_MODE:-exact}
export WSS_TRACK_MODE

# The in-tree build: the wss command and the preload library.
: "${WSS:=$top_builddir/wss}"
: "${WSS_LIB:=$top_builddir/.libs/libwss.so}"
PROGS=$top_builddir/tests/progs
PROFILE="python3 $top_srcdir/tests/tap/profile.py"
# A scratch directory per test, removed at exit (kept with WSS_TEST_KEEP=1:
# tests/soak.sh keeps the profiles of a failing run).
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wss-test.XXXXXX") || bail "mktemp failed"
[ -n "${WSS_TEST_KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT

# with_out OUT CMD...: runs CMD with each word @OUT replaced by OUT.
with_out() {
	_wo_out=$1
	shift
	_wo_n=$#
	for _wo_a; do
		[ "$_wo_a" = @OUT ] && _wo_a=$_wo_out
		set -- "$@" "$_wo_a"
	done
	shift "$_wo_n"
	"$@"
}

# planted NAME CMD...: the rule of every file wss writes (docs/report.md,
# "Files wss writes") for a command whose output is the word @OUT in CMD.
# In a sticky directory anyone can write, another user plants a symbolic
# link to a file of ours and a FIFO with a reader of theirs: both refused
# at once (one line, exit 3), the file untouched, the reader given
# nothing.  4 tests; root only (another user plants the names).  The
# status is 3 (WSS_EXIT_REFUSED), or --status N's (wss run: 125).
planted() {
	_pl_st=3
	if [ "$1" = --status ]; then
		_pl_st=$2
		shift 2
	fi
	_pl_name=$1
	shift
	if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null; then
		for _pl_i in 1 2 3 4; do skip "not root: no other user to plant names"; done
		return
	fi
	chmod 711 "$TMP"
	mkdir -p "$TMP/shared" && chmod 1777 "$TMP/shared" || bail "cannot make a shared directory"
	_pl_uid=$(id -u nobody)
	_pl_why="in a sticky directory others can write (wss uses only the user's own or the directory owner's there)"
	echo secret >"$TMP/victim.$_pl_name" && chmod 600 "$TMP/victim.$_pl_name"
	_pl_out=$TMP/shared/link.$_pl_name
	runuser -u nobody -- ln -s "$TMP/victim.$_pl_name" "$_pl_out" || bail "nobody cannot plant a link"
	with_out "$_pl_out" timeout 20 "$@" >/dev/null 2>"$TMP/planted.err"
	is "$?:$(cat "$TMP/planted.err")" "$_pl_st:wss: $_pl_out: not written: a symbolic link of uid $_pl_uid $_pl_why" \
		"$_pl_name: another user's symbolic link in a shared directory: refused, one line, exit $_pl_st"
	is "$(cat "$TMP/victim.$_pl_name"):$(stat -c %a:%F "$TMP/victim.$_pl_name" "$_pl_out" | tr '\n' :)" \
		"secret:600:regular file:777:symbolic link:" "$_pl_name: its target untouched, the link left as it was"
	_pl_out=$TMP/shared/fifo.$_pl_name
	runuser -u nobody -- mkfifo -m 666 "$_pl_out" || bail "nobody cannot plant a FIFO"
	timeout 20 runuser -u nobody -- cat "$_pl_out" >"$TMP/planted.read" &
	_pl_reader=$!
	with_out "$_pl_out" timeout 20 "$@" >/dev/null 2>"$TMP/planted.err"
	is "$?:$(cat "$TMP/planted.err")" "$_pl_st:wss: $_pl_out: not written: a FIFO of uid $_pl_uid $_pl_why" \
		"$_pl_name: another user's FIFO there: refused at once, one line, exit $_pl_st"
	timeout 5 sh -c ': >"$1"' sh "$_pl_out" # the reader's end of file
	wait "$_pl_reader"
	is "$(wc -c <"$TMP/planted.read")" 0 "$_pl_name: and the FIFO's reader got nothing"
}
