#!/bin/sh
# Touches racing the tick (tests/progs/split): a second thread touches the
# pages of the interval that just ended while the tick is held between
# arming them and harvesting their write bits (WSS_TEST_HARVEST_DELAY).
# Every page counts in the interval it was touched in, read or written as
# it was there, and each thread's first-touch faults count in the same
# interval as its pages: exact counts, per thread, under every backend
# with faults.
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
cd "$TMP" || bail "cd $TMP"

WSS_TRACK_BACKEND=uffd-wp WSS_SESSION_OUTPUT="$TMP/probe.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true 2>/dev/null
uffd=$?

for backend in mprotect hybrid; do
	if [ $backend = hybrid ] && [ $uffd != 0 ]; then
		skip "hybrid: this kernel has no userfaultfd write-protect"
		continue
	fi
	WSS_TRACK_BACKEND=$backend WSS_SESSION_TIME_BASE=manual WSS_TEST_HARVEST_DELAY=${SPLIT_DELAY:-300ms} \
		WSS_SESSION_OUTPUT="$TMP/$backend.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/split" >"$TMP/$backend.out" 2>"$TMP/$backend.err"
	is $? 0 "$backend: split runs" || sed 's/^/# /' "$TMP/$backend.err"
	read -r _ main helper <<EOT
$(grep '^tids' "$TMP/$backend.out")
EOT
	diag "$backend: the helper saw the pages armed before touching them in $(awk '/^armed/ {print $2}' "$TMP/$backend.out") of 5 phases"
	while read -r kind seq who data written; do
		[ "$kind" = expect ] || continue
		tid=$main; [ "$who" = helper ] && tid=$helper
		got=$($PROFILE thread "$TMP/$backend.jsonl" "$seq" "$tid")
		set -- $got
		if [ $backend = hybrid ]; then
			is "$1 $2" "$data $written" "$backend: sample $seq, $who: $data pages, $written written"
		else
			is "$1" "$data" "$backend: sample $seq, $who: $data pages"
		fi
		is "$3" "$1" "$backend: sample $seq, $who: as many first-touch faults as pages"
	done <"$TMP/$backend.out"
done
done_testing
