#!/bin/sh
# The backends side by side on one program of known phases (tests/progs/rw):
# mprotect counts reads and writes, uffd-wp writes only, kernel writes
# included, hybrid both apart (data as mprotect, writes as uffd-wp, reads
# the difference); exact counts per phase with manual ticks.  The
# userfaultfd probe, auto's choice, the explicit-backend error, fork.
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
cd "$TMP" || bail "cd $TMP"
sample() { $PROFILE samples "$1" | awk -v s="$2" '$1 == s {print $2}'; }

# Does this kernel have it?  (WSS_TEST_UFFD_UNSUPPORTED fakes "no" below.)
WSS_TRACK_BACKEND=uffd-wp WSS_SESSION_OUTPUT="$TMP/probe.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true 2>"$TMP/probe.err"
uffd=$?

run() { # BACKEND FILE: run rw under BACKEND with manual ticks
	WSS_TRACK_BACKEND=$1 WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/$2.%p.jsonl" \
		LD_PRELOAD="$WSS_LIB" "$PROGS/rw" >"$TMP/$2.out" 2>"$TMP/$2.err"
}
writes() { $PROFILE samples "$1" | awk -v s="$2" '$1 == s {print $6}'; }
check() { # BACKEND FILE COLUMN: compare each expectation
	prof=$(ls "$TMP"/$2.*.jsonl) # the child's is in the session directory, ${prof%.jsonl}.d
	$PROFILE check "$prof"; ok $? "$1: the profile is complete and valid"
	is "$($PROFILE get "$prof" header.backend)" "$1" "$1: the header names the backend"
	while read -r kind seq mp uf; do
		[ "$kind" = expect ] || continue
		want=$mp; [ "$3" = uffd ] && want=$uf
		between "$(sample "$prof" "$seq")" "$want" $((want + 4)) "$1: sample $seq has $want pages"
		[ "$1" = hybrid ] && between "$(writes "$prof" "$seq")" "$uf" $((uf + 4)) "$1: sample $seq has $uf written pages"
	done <"$TMP/$2.out"
	read -r _ cpid cseq cmp cuf <<EOT
$(grep '^child' "$TMP/$2.out")
EOT
	want=$cmp; [ "$3" = uffd ] && want=$cuf
	between "$(sample "${prof%.jsonl}.d/$2.$cpid.jsonl" "$cseq")" "$want" $((want + 4)) "$1: the forked child's own sample has its $want pages"
}

run mprotect mp
is $? 0 "mprotect: rw runs" || sed 's/^/# /' "$TMP/mp.err"
check mprotect mp mprotect

if [ $uffd = 0 ]; then
	is "$($PROFILE get "$TMP/probe.jsonl" header.backend_sees)" writes "uffd-wp: the header says it sees writes"
	run uffd-wp uf
	is $? 0 "uffd-wp: rw runs" || sed 's/^/# /' "$TMP/uf.err"
	check uffd-wp uf uffd
	run hybrid hy
	is $? 0 "hybrid: rw runs" || sed 's/^/# /' "$TMP/hy.err"
	check hybrid hy mprotect
	is "$($PROFILE get "$(ls "$TMP"/hy.*.jsonl | head -1)" header.backend_sees)" "reads and writes, writes apart" \
		"hybrid: the header says what it sees"
	# auto is hybrid here, and the summary has a read and a write line.
	WSS_SESSION_OUTPUT="$TMP/au.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/pageramp" 1 >/dev/null 2>au.err
	is "$($PROFILE get "$TMP/au.jsonl" header.backend)" hybrid "auto picks hybrid on this kernel"
	is "$(grep -c '^wss: \(data\|read\|write\) avg/peak/total: ' au.err)" 3 "hybrid: data, read and write summary lines"
	between "$($PROFILE get "$TMP/au.jsonl" summary.write.total)" 500 "$($PROFILE get "$TMP/au.jsonl" summary.data.total)" \
		"hybrid: pages ever written are at most the pages ever touched"
	printf '[track]\nbackend = "uffd-wp"\n[session]\ntime_base = "manual"\nfollow_fork = false\n' >nf.toml
	WSS_CONFIG=nf.toml WSS_SESSION_OUTPUT="$TMP/nf.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/rw" >nf.out 2>/dev/null
	is $? 0 "uffd-wp, follow_fork = false: runs"
	is "$(ls nf.*.jsonl | wc -l)" 1 "uffd-wp, follow_fork = false: only the parent writes a profile"
	seq=$(awk '$1 == "expect" && $3 == 12 {print $2}' nf.out)
	between "$(sample "$(ls nf.*.jsonl)" "$seq")" 12 16 "uffd-wp, follow_fork = false: the parent's writes after fork still count"
	# A wall-clock run with 1 ms ticks: the demo is unchanged.
	WSS_TRACK_BACKEND=uffd-wp WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/pr.jsonl" LD_PRELOAD="$WSS_LIB" \
		"$PROGS/pageramp" 2 >pr.out 2>/dev/null
	is $? 0 "uffd-wp: pageramp at 1 ms runs"
	is "$(cat pr.out)" "$("$PROGS/pageramp" 2)" "uffd-wp: pageramp's output is unchanged"
	between "$($PROFILE get "$TMP/pr.jsonl" summary.data.total)" 512 2048 "uffd-wp: pageramp's written pages are seen"
else
	skip "uffd-wp: this kernel cannot run it: $(cat "$TMP/probe.err")"
fi

# An explicitly requested backend that cannot run is an error, exit 125, one
# line naming what is missing; auto never picks it.
WSS_TEST_UFFD_UNSUPPORTED=1 WSS_TRACK_BACKEND=uffd-wp WSS_SESSION_OUTPUT="$TMP/no.jsonl" LD_PRELOAD="$WSS_LIB" \
	"$PROGS/pageramp" 1 >no.out 2>no.err
is $? 125 "uffd-wp unsupported: exit status 125"
is "$(cat no.err)" "wss: track.backend: uffd-wp cannot run on this kernel: userfaultfd write-protect: unsupported (WSS_TEST_UFFD_UNSUPPORTED)" \
	"uffd-wp unsupported: one line naming the missing feature"
test ! -s no.out && test ! -e no.jsonl; ok $? "uffd-wp unsupported: the program did not run, no profile"
"$WSS" run --backend uffd-wp -o "$TMP/wr.jsonl" -- /bin/true 2>wr.err </dev/null
[ $uffd = 0 ] && want=0 || want=125
is $? $want "wss run --backend uffd-wp: exit status $want on this kernel"
WSS_TEST_UFFD_UNSUPPORTED=1 WSS_SESSION_OUTPUT="$TMP/auto.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true
is $? 0 "auto with uffd unsupported: runs"
is "$($PROFILE get "$TMP/auto.jsonl" header.backend)" mprotect "auto with uffd unsupported picks mprotect"
is "$($PROFILE get "$TMP/auto.jsonl" header.backend_reason)" \
	"auto: mprotect; hybrid needs userfaultfd write-protect: unsupported (WSS_TEST_UFFD_UNSUPPORTED)" "and the header says why"
WSS_TEST_UFFD_UNSUPPORTED=1 WSS_TRACK_BACKEND=hybrid LD_PRELOAD="$WSS_LIB" /bin/true 2>hy.err
is $? 125 "hybrid requested and unsupported: exit status 125"
is "$(cat hy.err)" "wss: track.backend: hybrid cannot run on this kernel: userfaultfd write-protect: unsupported (WSS_TEST_UFFD_UNSUPPORTED)" \
	"hybrid requested and unsupported: one line"
done_testing
