#!/bin/sh
# libwss.so exports exactly the interposed functions and the wss_* API
# listed in preload/exports.map, and nothing of jemalloc or the engine.
. "$top_srcdir/tests/tap/tap.sh"
plan 4
# The allow-list is preload/exports.map's global section.
want=$(sed -n '/^global:/,/^local:/p' "$top_srcdir/preload/exports.map" | grep -v ':$' | tr ';' '\n' |
	tr -d ' \t' | grep -v '^$' | LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//')
got=$(nm -D --defined-only "$WSS_LIB" | awk '{print $3}' | sed 's/@.*//' | LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//')
is "$got" "$want" "exported symbols match the allow-list"
nm -D "$WSS_LIB" | grep -q ' U _Znwm' && r=1 || r=0
ok $r "no dependency on C++ operator new (jemalloc's C++ object is left out)"
# libwss-attach.so (wss attach's, loaded into a running process) exports
# its two entry points and nothing else: no C library function.
want_a=$(sed -n '/^global:/,/^local:/p' "$top_srcdir/preload/attach.map" | grep -v ':$' | tr ';' '\n' |
	tr -d ' \t' | grep -v '^$' | LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//')
got_a=$(nm -D --defined-only "$(dirname "$WSS_LIB")/libwss-attach.so" | awk '{print $3}' | sed 's/@.*//' |
	LC_ALL=C sort -u | tr '\n' ' ' | sed 's/ $//')
is "$got_a" "$want_a" "libwss-attach.so exports its allow-list only ($want_a)"
n=$(echo "$want" | wc -w)
between "$n" 40 300 "the allow-list was read ($n symbols)"
done_testing
