#!/bin/sh
# Real programs under wss with a 1 ms interval (ticks race everything they
# do): the same stdout and exit status as natively.  The full matrix of
# issue 4 is larger; these are the ones that first broke.
. "$top_srcdir/tests/tap/tap.sh"
plan 6
same() { # NAME CMD...: compare stdout and status, native vs wss
	name=$1; shift
	(cd "$TMP" && "$@") >"$TMP/native.out" 2>/dev/null; s1=$?
	(cd "$TMP" && WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/p.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$@") \
		>"$TMP/wss.out" 2>"$TMP/wss.err"; s2=$?
	cmp -s "$TMP/native.out" "$TMP/wss.out" && [ "$s1" = "$s2" ]
	ok $? "$name: same stdout and status ($s1/$s2)" || { diff "$TMP/native.out" "$TMP/wss.out" | head -5 | sed 's/^/# /'; grep -v '^wss:' "$TMP/wss.err" | head -5 | sed 's/^/# /'; }
}
seq 1 200000 | sed 's/$/ line/' | sort -R --random-source=/dev/zero >"$TMP/in.txt"
printf '#include <stdio.h>\nint main(void){puts("built");return 0;}\n' >"$TMP/h.c"
same "sort" sort "$TMP/in.txt"
same "python3 with imports" python3 -c 'import json, os, subprocess; print(len(json.dumps(list(range(50000)))), os.getcwd()); print(subprocess.run(["echo", "child"], capture_output=True).stdout)'
same "gcc compiles and links" sh -c 'gcc -o h h.c && ./h'
same "shell pipeline" sh -c 'seq 1 100000 | awk "{s += \$1} END {print s}" | tr 0-9 a-j'
same "gzip round trip" sh -c 'gzip -c in.txt | gzip -dc | md5sum'
same "perl" perl -e 'my %h; $h{$_} = $_ * 2 for 1 .. 100000; print scalar(keys %h), "\n"'
done_testing
