#!/bin/bash
# Install checks (root, run by .ci/run): `make install` with the default
# prefix makes LD_PRELOAD=libwss.so work by bare name, and a build configured
# with --prefix=DIR installs a DIR/bin/wss that uses DIR/lib/libwss.so.
# pkg-config finds <wss.h> through the installed wss.pc, with nothing to
# link: a program calling wss_tick() builds with its flags and runs with
# and without the preload.
. "$top_srcdir/tests/tap/tap.sh"
plan 10
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

# pkg-config (wss.pc).
is "$(pkg-config --modversion wss 2>&1)" "$("$top_builddir/wss" --version | sed 's/^wss //')" \
	"pkg-config finds wss.pc of the default prefix"
export PKG_CONFIG_PATH=$TMP/prefix/lib/pkgconfig
is "$(echo $(pkg-config --cflags wss 2>&1))|$(echo $(pkg-config --libs wss 2>&1))" "-I$TMP/prefix/include|" \
	"DIR/lib/pkgconfig/wss.pc: -IDIR/include, nothing to link"
cat >"$TMP/app.c" <<'EOF_APP'
#include <wss.h>
int main(void)
{
	for (int i = 0; i < 3; i++)
		wss_tick();
	return 0;
}
EOF_APP
${CC:-cc} $(pkg-config --cflags wss) -o "$TMP/app" "$TMP/app.c" $(pkg-config --libs wss) 2>"$TMP/cc.err" && "$TMP/app"
ok $? "cc \$(pkg-config --cflags --libs wss) app.c builds a program that runs without the preload" ||
	sed 's/^/# /' "$TMP/cc.err"
"$TMP/prefix/bin/wss" run --time-base manual -o "$TMP/app.jsonl" -- "$TMP/app" 2>/dev/null
is "$?:$(grep -c '"type":"sample"' "$TMP/app.jsonl" 2>/dev/null)" "0:4" \
	"and under DIR/bin/wss run --time-base manual its 3 wss_tick() calls end intervals (4 samples with the last)"
done_testing
