#!/bin/bash
# Install checks (root, run by .ci/run): `make install` with the default
# prefix makes LD_PRELOAD=libwss.so work by bare name, and a build configured
# with --prefix=DIR installs a DIR/bin/wss that uses DIR/lib/libwss.so.
. "$top_srcdir/tests/tap/tap.sh"
plan 6
make -C "$top_builddir" install >"$TMP/install.log" 2>&1; ok $? "make install (default prefix)"
(cd "$TMP" && LD_PRELOAD=libwss.so "$top_builddir/tests/progs/pageramp" 1 20 >/dev/null 2>"$TMP/bare.err")
ok $? "LD_PRELOAD=libwss.so by bare name runs the program"
ls "$TMP"/wss.*.jsonl >/dev/null 2>&1 && grep -q '^wss: data avg/peak/total' "$TMP/bare.err"
ok $? "and measures it"
git -C "$top_srcdir" archive --format=tar HEAD 2>/dev/null | (mkdir "$TMP/src" && tar -x -C "$TMP/src") ||
	cp -a "$top_srcdir/." "$TMP/src"
(cd "$TMP/src" && make distclean >/dev/null 2>&1; ./autogen.sh && ./configure --prefix="$TMP/prefix" &&
	make -j2 && make install) >"$TMP/prefix.log" 2>&1
ok $? "configure --prefix=DIR && make install" || tail -20 "$TMP/prefix.log" | sed 's/^/# /'
"$TMP/prefix/bin/wss" run -o "$TMP/p.jsonl" -- cat /proc/self/maps >"$TMP/maps" 2>/dev/null
ok $? "DIR/bin/wss run works"
grep -q "$TMP/prefix/lib/libwss.so" "$TMP/maps"; ok $? "and preloads DIR/lib/libwss.so"
done_testing
