#!/bin/sh
# Secure-execution mode (AT_SECURE: setuid or setgid programs): the library
# must do nothing at all, no engine thread, no profile, no stderr lines,
# while its interposed functions keep working.  The loader then preloads
# only set-user-ID libraries from its trusted directories, named without a
# slash: so this needs root, to install a setuid copy of libwss.so there
# for the duration of the test.
. "$top_srcdir/tests/tap/tap.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root (a setuid library in the system directory)"
libdir=/usr/lib/x86_64-linux-gnu
[ -d "$libdir" ] || skip_all "no $libdir"
group=nogroup
getent group "$group" >/dev/null || group=nobody
getent group "$group" >/dev/null || skip_all "no unprivileged group to setgid to"
name=libwss-secure-test-$$.so
trap 'rm -f "$libdir/$name"; rm -rf "$TMP"' EXIT
cp "$WSS_LIB" "$libdir/$name" && chmod 4755 "$libdir/$name" || bail "cannot install $libdir/$name"
cd "$TMP" || bail "cd $TMP"
cp "$PROGS/secure" plain && cp "$PROGS/secure" sgid && chgrp "$group" sgid && chmod 2755 sgid ||
	bail "cannot make a setgid copy"
# The probe: setgid must give AT_SECURE here (not on a nosuid mount, nor
# under no_new_privs).
./sgid >native.out 2>native.err
native=$?
grep -qx 'secure 1' native.out || skip_all "a setgid program does not run in secure mode here ($(head -1 native.out))"
plan 9
mkdir sec ctl
# Only the program is preloaded, not timeout (which would write its own).
preloaded() { timeout 120 sh -c 'LD_PRELOAD=$0 exec "$@"' "$name" "$@"; }
WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/sec/p.%p.jsonl" preloaded ./sgid >sec.out 2>sec.err
is $? $native "setgid under the preload: exit status as native ($native)"
grep -qx 'mapped 1' sec.out
ok $? "the library is loaded (found in /proc/self/maps)" || sed 's/^/# /' sec.out sec.err
grep -qx 'secure 1' sec.out
ok $? "AT_SECURE is 1"
grep -qx 'threads 1' sec.out
ok $? "no engine thread" || grep threads sec.out | sed 's/^/# /'
is "$(ls sec | wc -l)" 0 "no profile is written"
is "$(grep -c '^wss:' sec.err)" 0 "no wss: lines on stderr"
# The control: the same program, not setgid, with the same library.
WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/ctl/p.%p.jsonl" preloaded ./plain >ctl.out 2>ctl.err
s=$?
grep -qx 'secure 0' ctl.out && grep -qx 'mapped 1' ctl.out && grep -qx 'threads 2' ctl.out
ok $? "control, not setgid: loaded, not secure, with its engine thread (exit $s)" || sed 's/^/# /' ctl.out
is "$(ls ctl | wc -l)" 1 "the control writes a profile"
$PROFILE check ctl/p.*.jsonl
ok $? "complete and valid"
done_testing
