#!/bin/sh
# The Debian package in a fresh Debian 12: build the .deb (`make deb`, or
# take $WSS_DEB), check it with lintian (no errors), debootstrap a minbase
# bookworm into $TMP, install the .deb there with its dependencies (apt-get
# install ./wss.deb), and run inside: `wss run -- /bin/true`,
# `LD_PRELOAD=libwss.so` by bare name, `man -w wss`, the bash completion as
# bash-completion loads it.  Opt-in (WSS_TEST_DEB=1; it takes minutes and
# the network); root only.  WSS_DEB_CACHE=DIR keeps the debootstrap tarball
# between runs; WSS_DEB_MIRROR overrides the mirror.
. "$top_srcdir/tests/tap/tap.sh"
[ "${WSS_TEST_DEB:-}" = 1 ] || skip_all "opt-in: WSS_TEST_DEB=1 (builds the package and a Debian 12 root: minutes, network)"
[ "$(id -u)" = 0 ] || skip_all "not root (debootstrap and chroot need it)"
command -v debootstrap >/dev/null || skip_all "debootstrap not installed (apt-get install debootstrap)"
mirror=${WSS_DEB_MIRROR:-http://deb.debian.org/debian}
python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/dists/bookworm/InRelease", timeout=30)' \
	"$mirror" 2>/dev/null || skip_all "network: $mirror/dists/bookworm/InRelease cannot be fetched"

# proc is mounted in the root: unmount it before the scratch directory
# goes, and leave the directory if that fails (never rm -rf through a mount).
root=$TMP/root
cleanup() {
	mountpoint -q "$root/proc" 2>/dev/null && umount "$root/proc"
	[ -n "${WSS_TEST_KEEP:-}" ] || { mountpoint -q "$root/proc" 2>/dev/null || rm -rf "$TMP"; }
}
trap cleanup EXIT
now() { date +%s; }
plan 13

# The package.
t0=$(now)
if [ -n "${WSS_DEB:-}" ]; then
	deb=$WSS_DEB
	[ -f "$deb" ]
	ok $? "the package: $deb (WSS_DEB)"
else
	rm -f "$top_builddir"/wss_*.deb
	make -C "$top_builddir" deb >"$TMP/deb.log" 2>&1
	ok $? "make deb builds the package ($(($(now) - t0)) s)" || tail -30 "$TMP/deb.log" | sed 's/^/# /'
	deb=$(ls "$top_builddir"/wss_*_amd64.deb 2>/dev/null | head -1)
fi
[ -f "$deb" ] || bail "no .deb"
cp "$deb" "$TMP/wss.deb" || bail "cp $deb"
if command -v lintian >/dev/null; then
	lintian --fail-on error "$TMP/wss.deb" >"$TMP/lintian" 2>&1
	ok $? "lintian: no errors" || sed 's/^/# /' "$TMP/lintian"
	sed 's/^/# lintian: /' "$TMP/lintian"
else
	skip "lintian not installed"
fi

# A fresh Debian 12, minbase.
t1=$(now)
if [ -n "${WSS_DEB_CACHE:-}" ]; then
	mkdir -p "$WSS_DEB_CACHE" && tarball=$WSS_DEB_CACHE/bookworm-minbase.tgz
	[ -s "$tarball" ] || debootstrap --variant=minbase --make-tarball="$tarball.part" bookworm "$TMP/mk" "$mirror" \
		>"$TMP/debootstrap.log" 2>&1 && mv "$tarball.part" "$tarball"
	debootstrap --variant=minbase --unpack-tarball="$tarball" bookworm "$root" "$mirror" >>"$TMP/debootstrap.log" 2>&1
else
	debootstrap --variant=minbase bookworm "$root" "$mirror" >"$TMP/debootstrap.log" 2>&1
fi
ok $? "debootstrap --variant=minbase bookworm ($(($(now) - t1)) s)" || { tail -20 "$TMP/debootstrap.log" | sed 's/^/# /'; bail "no root"; }
mount -t proc proc "$root/proc" || bail "mount proc"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
cp "$TMP/wss.deb" "$root/tmp/wss.deb"
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
	DEBIAN_FRONTEND=noninteractive "$@"; }

# The package with its dependencies, and what the checks below use.
t2=$(now)
in_root sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends /tmp/wss.deb man-db bash-completion' \
	>"$TMP/apt.log" 2>&1
ok $? "apt-get install ./wss.deb in the root, with its dependencies ($(($(now) - t2)) s)" ||
	{ tail -20 "$TMP/apt.log" | sed 's/^/# /'; bail "not installed"; }

# What it installed works.
in_root wss run -o /tmp/run.jsonl -- /bin/true 2>"$TMP/run.err"
ok $? "wss run -- /bin/true" || sed 's/^/# /' "$TMP/run.err"
in_root head -1 /tmp/run.jsonl | grep -q '"type":"header"' && grep -q '^wss: profile: /tmp/run.jsonl' "$TMP/run.err"
ok $? "and writes its profile"
in_root sh -c 'cd /tmp && LD_PRELOAD=libwss.so /bin/cat /proc/self/maps' >"$TMP/maps" 2>"$TMP/bare.err"
ok $? "LD_PRELOAD=libwss.so by bare name runs the program" || sed 's/^/# /' "$TMP/bare.err"
grep -q ' /usr/lib/x86_64-linux-gnu/libwss.so$' "$TMP/maps" && grep -q '^wss: data avg/peak/total' "$TMP/bare.err"
ok $? "and measures it with /usr/lib/x86_64-linux-gnu/libwss.so" || sed 's/^/# /' "$TMP/bare.err"
is "$(in_root man -w wss)" /usr/share/man/man1/wss.1.gz "man -w wss"
is "$(in_root man -w 5 wss-session)" /usr/share/man/man5/wss-session.5.gz "man -w 5 wss-session"
in_root man wss 2>&1 | grep -q 'wss - measure the working set'
ok $? "man wss shows the page"
# The completion, loaded on demand by name as an interactive bash does.
in_root bash -c '. /usr/share/bash-completion/bash_completion; __load_completion wss &&
	COMP_WORDS=(wss run --backend ""); COMP_CWORD=3; _wss wss "" --backend; echo "${COMPREPLY[*]}"' \
	>"$TMP/comp" 2>&1
is "$(cat "$TMP/comp")" "auto mprotect uffd-wp hybrid" "bash-completion loads the completion for wss"
in_root dpkg -L wss | grep -qx '/usr/lib/x86_64-linux-gnu/pkgconfig/wss.pc'
ok $? "wss.pc is where pkg-config looks"
diag "times: package $((t1 - t0)) s, debootstrap $((t2 - t1)) s, install and checks $(($(now) - t2)) s, total $(($(now) - t0)) s"
done_testing
