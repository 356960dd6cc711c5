#!/bin/sh
# make soak: loop integration scripts under a CPU hog on every core, to
# shake out the failures that one `make check` sees once in a hundred runs
# (ticks racing the program are the point of the 1 ms intervals).  Each run
# is one whole script; a failing run keeps its TAP log, its scratch
# directory (profiles, program output) and any core dump under
# $SOAK_DIR/<script>/<run>/; a passing run leaves nothing.  Figures go to
# stdout and to $SOAK_DIR/summary.
#
#   SOAK_TESTS   scripts of tests/integration, by name (default: the six
#                below); robust.sh takes ROBUST_CASES to loop some cases
#   SOAK_RUNS    runs of each script (default 200)
#   SOAK_HOG     stress-ng, busy (a shell loop per core) or none
#                (default: stress-ng when installed, else busy)
#   SOAK_STOP    1: stop a script's loop at its first failure
#   SOAK_DIR     where failing runs are kept (default tests/soak)
#
# Exit status: 0 when every run passed, 1 when one failed, 2 on a setup
# error.  The hog is stopped however the loop ends (also on Ctrl-C).
: "${top_srcdir:?}" "${top_builddir:?}"
: "${SOAK_TESTS:=robust fds lifecycle processes signals peaks}"
: "${SOAK_RUNS:=200}"
: "${SOAK_STOP:=0}"
: "${SOAK_DIR:=$top_builddir/tests/soak}"
if [ -z "${SOAK_HOG:-}" ]; then
	if command -v stress-ng >/dev/null; then SOAK_HOG=stress-ng; else SOAK_HOG=busy; fi
fi
export top_srcdir top_builddir CC
ncpu=$(nproc)

for t in $SOAK_TESTS; do
	[ -f "$top_srcdir/tests/integration/$t.sh" ] || { echo "soak: no tests/integration/$t.sh" >&2; exit 2; }
done
mkdir -p "$SOAK_DIR" || exit 2
# python3 resolved once: a version manager's shim (pyenv's is a bash
# script) costs seconds per call under the hog, more than the tests.
py=$(python3 -c 'import sys; print(sys.executable)') || exit 2
mkdir -p "$SOAK_DIR/bin" && ln -sf "$py" "$SOAK_DIR/bin/python3" || exit 2
PATH=$SOAK_DIR/bin:$PATH

# The hog: one CPU-bound worker per core, each in the background; their
# pids are kept so that only they are stopped.
hog_pids=
stop_hog() {
	[ -n "$hog_pids" ] && kill $hog_pids 2>/dev/null && wait $hog_pids 2>/dev/null
	hog_pids=
}
trap 'stop_hog' EXIT
trap 'stop_hog; exit 130' INT
trap 'stop_hog; exit 143' TERM
case $SOAK_HOG in
stress-ng)
	# stress-ng stops its workers when its parent gets SIGTERM.
	stress-ng --cpu "$ncpu" --timeout 0 --quiet >/dev/null 2>&1 &
	hog_pids=$!
	hog_desc="stress-ng --cpu $ncpu" ;;
busy)
	i=0
	while [ $i -lt "$ncpu" ]; do
		sh -c 'while :; do :; done' &
		hog_pids="$hog_pids $!"
		i=$((i + 1))
	done
	hog_desc="$ncpu busy shell loops" ;;
none) hog_desc="none" ;;
*) echo "soak: SOAK_HOG must be stress-ng, busy or none" >&2; exit 2 ;;
esac

summary=$SOAK_DIR/summary
{
	echo "# soak $(date -u '+%Y-%m-%d %H:%M') UTC, $(git -C "$top_srcdir" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "# hog: $hog_desc; runs: $SOAK_RUNS; ${ROBUST_CASES:+ROBUST_CASES=$ROBUST_CASES}"
	echo "# script runs failures seconds"
} >"$summary"
echo "soak: hog $hog_desc, $SOAK_RUNS runs of: $SOAK_TESTS (failures kept in $SOAK_DIR)"

# Core dumps of failing runs land in the run's directory when
# /proc/sys/kernel/core_pattern is a relative name (Debian's default, "core").
ulimit -c unlimited 2>/dev/null

total_runs=0 total_failed=0
for t in $SOAK_TESTS; do
	runs=0 failed=0 start=$(date +%s)
	while [ $runs -lt "$SOAK_RUNS" ]; do
		runs=$((runs + 1))
		d=$SOAK_DIR/$t/$runs
		rm -rf "$d" && mkdir -p "$d" || exit 2
		# WSS_TEST_KEEP: tap.sh leaves its scratch directory in $d.
		(cd "$d" && TMPDIR=$d WSS_TEST_KEEP=1 sh "$top_srcdir/tests/integration/$t.sh" >log 2>&1)
		s=$?
		if [ $s = 0 ] && ! grep -q '^not ok\|^Bail out' "$d/log"; then
			rm -rf "$d"
			continue
		fi
		failed=$((failed + 1))
		echo "soak: $t run $runs FAILED (exit $s), kept in $d:"
		grep '^not ok\|^Bail out\|^# ' "$d/log" | head -10 | sed 's/^/    /'
		[ "$SOAK_STOP" = 1 ] && break
	done
	secs=$(($(date +%s) - start))
	echo "soak: $t: $failed failed in $runs runs ($secs s)"
	echo "$t $runs $failed $secs" >>"$summary"
	total_runs=$((total_runs + runs))
	total_failed=$((total_failed + failed))
done
stop_hog
echo "soak: $total_failed failed in $total_runs runs under $hog_desc" | tee -a "$summary"
[ $total_failed = 0 ]
