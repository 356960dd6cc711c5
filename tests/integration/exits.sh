#!/bin/sh
# Exits that run no exit handler (_exit, _Exit, syscall(SYS_exit_group),
# dash's own _exit) end the profile as exit() does: a final sample and one
# summary, in the file and on stderr, and the exit status and output of the
# native run.  Also from a signal handler, with threads still touching
# memory, after our destructor (a late atexit handler), and in vfork and
# fork children.  Under each backend this kernel has (a missing one is
# skipped), with a 1 ms interval so that ticks race the exit.
. "$top_srcdir/tests/tap/tap.sh"
L=$PROGS/lifecycle
T=120

# Which backends run here: an explicit backend that cannot is an error.
backends=""
for b in mprotect hybrid uffd-wp; do
	WSS_TRACK_BACKEND=$b WSS_SESSION_OUTPUT="$TMP/probe.jsonl" LD_PRELOAD="$WSS_LIB" /bin/true 2>"$TMP/probe.err" &&
		backends="$backends $b"
	rm -f "$TMP/probe.jsonl"
done
nb=$(echo $backends | wc -w)

# MODE WANT: status, output, profiles (each complete, one summary each),
# stderr summary lines (one per profile).
modes="_exit4:4 _Exit5:5 exit-group6:6 sys-exit11:11 _exit-threads:7 _exit-alarm:8 _exit-sigbus:9 atexit-_exit:10 fork-_exit:0"
nmodes=$(echo $modes | wc -w)
plan $((nb * nmodes * 5 + 10 + 8 + 3 * (3 - nb)))

for b in mprotect hybrid uffd-wp; do
	case " $backends " in *" $b "*) ;; *)
		skip "$b cannot run on this kernel: $(head -1 "$TMP/probe.err")"
		skip "$b"; skip "$b"
		continue ;;
	esac
	for mw in $modes; do
		m=${mw%:*} want=${mw#*:}
		d="$TMP/$b.$m"
		mkdir -p "$d"
		watch $T "$L" "$m" >"$d/native" 2>/dev/null
		ns=$?
		[ "$ns" = "$want" ] || bail "$m: native run exits $ns, want $want"
		watch $T env WSS_TRACK_BACKEND=$b WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$d/%p.jsonl" \
			LD_PRELOAD="$WSS_LIB" "$L" "$m" >"$d/out" 2>"$d/err"
		is $? "$want" "$b $m: exit status $want as natively" || sed 's/^/# /' "$d/err" | head -5
		cmp -s "$d/out" "$d/native"
		ok $? "$b $m: output as natively" || diff "$d/native" "$d/out" | head -10 | sed 's/^/# /'
		bad=0 n=0
		for p in $(find "$d" -name "*.jsonl"); do # the session directory's too
			n=$((n + 1))
			$PROFILE check "$p" >"$d/check" 2>&1 || { bad=1; sed 's/^/# /' "$d/check"; }
			[ "$(grep -c '"type":"summary"' "$p")" = 1 ] || { bad=1; diag "$p: $(grep -c '"type":"summary"' "$p") summaries"; }
		done
		ok $bad "$b $m: every profile complete, with exactly one summary ($n profiles)"
		is "$(grep -c '^wss: data avg/peak/total' "$d/err")" 1 "$b $m: one stderr summary, the session's ($n profiles)"
		# A handler that interrupted wss's lock writes a summary without
		# the final sample, and says so.
		inc=$(find "$d" -name "*.jsonl" -exec cat {} + | grep -c '"incomplete"')
		is "$(grep -c 'interrupted wss: the summary has no final sample' "$d/err")" "$inc" \
			"$b $m: stderr names each summary without its final sample ($inc)"
	done
done

# The SIGBUS handler's _exit lands inside wss's lock now and then: each
# run still ends with status 9 and one valid summary.
b=${backends%% *}
b=${b:-mprotect}
good=0 inc=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	d="$TMP/bus$i"
	mkdir -p "$d"
	watch $T env WSS_TRACK_BACKEND=$b WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$d/p.jsonl" \
		LD_PRELOAD="$WSS_LIB" "$L" _exit-sigbus >/dev/null 2>"$d/err"
	st=$?
	$PROFILE check "$d/p.jsonl" && [ "$(grep -c '"type":"summary"' "$d/p.jsonl")" = 1 ]
	ok $? "_exit-sigbus run $i: status $st, one valid summary" && [ $st = 9 ] && good=$((good + 1))
	grep -q '"incomplete"' "$d/p.jsonl" && inc=$((inc + 1))
done
diag "_exit-sigbus: $good of 10 runs with status 9; $inc summaries without the final sample (the handler interrupted wss's lock)"

# Real programs that end with _exit: dash's exit builtin, and its
# command substitution, a forked child that _exits.
dash=$(command -v dash)
if [ -z "$dash" ]; then
	for i in 1 2 3 4 5 6 7 8; do skip "no dash"; done
else
	d="$TMP/dash1"
	mkdir -p "$d"
	WSS_SESSION_OUTPUT="$d/%p.jsonl" LD_PRELOAD="$WSS_LIB" "$dash" -c 'exit 3' 2>"$d/err"
	is $? 3 "dash -c 'exit 3': status 3"
	p=$(ls "$d"/*.jsonl)
	$PROFILE check "$p"; ok $? "dash -c 'exit 3': the profile is complete"
	is "$(grep -c '"type":"summary"' "$p")" 1 "dash -c 'exit 3': one summary record"
	is "$(grep -c '^wss: data avg/peak/total' "$d/err")" 1 "dash -c 'exit 3': one stderr summary"
	d="$TMP/dash2"
	mkdir -p "$d"
	out=$(WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$d/%p.jsonl" LD_PRELOAD="$WSS_LIB" \
		"$dash" -c 'x=$(echo sub; exit 7); echo "$x $?"; exit 4' 2>"$d/err")
	is $? 4 "dash with a command substitution: status 4"
	is "$out" "sub 7" "dash with a command substitution: output and the child's status as natively"
	bad=0
	for p in $(find "$d" -name "*.jsonl"); do # the session directory's too
		$PROFILE check "$p" && [ "$(grep -c '"type":"summary"' "$p")" = 1 ] || bad=1
	done
	ok $bad "dash with a command substitution: every profile complete with one summary"
	is "$(grep -c '^wss: data avg/peak/total' "$d/err")" 1 \
		"dash with a command substitution: one stderr summary, the session's"
fi
done_testing
