#!/bin/sh
# The manual pages (man/wss.1, man/wss-session.5) against the command: every
# flag of `wss --help` is in wss(1), in the section of its subcommand where
# the usage names one; every key of `wss config example` is in
# wss-session(5), with its WSS_<SECTION>_<KEY> variable in both pages; both
# pages carry the command's version and render without one warning.
. "$top_srcdir/tests/tap/tap.sh"
command -v groff >/dev/null || skip_all "groff not installed (apt-get install groff-base)"
man1=${WSS_MAN1:-$top_builddir/man/wss.1}
man5=${WSS_MAN5:-$top_builddir/man/wss-session.5}
[ -f "$man1" ] && [ -f "$man5" ] || bail "$man1 or $man5 not built (make)"

# The pages as text, one paragraph per line (a line length no paragraph
# reaches, no hyphenation), hyphens as ASCII.
render() {
	LC_ALL=C.UTF-8 groff -man -Tutf8 -P-cbou -rLL=4000n "$1" 2>/dev/null |
		sed 's/\xe2\x80\x90/-/g; s/\xe2\x88\x92/-/g'
}
render "$man1" >"$TMP/wss.1.txt" || bail "groff failed on $man1"
render "$man5" >"$TMP/wss-session.5.txt" || bail "groff failed on $man5"
"$WSS" --help >"$TMP/help" || bail "wss --help failed"
"$WSS" config example >"$TMP/example" || bail "wss config example failed"

has() { # has FILE WORD: WORD as a whole token (an option, a key, a variable)
	grep -qE -- "(^|[^-A-Za-z0-9_.])$2([^-A-Za-z0-9_]|\$)" "$1"
}

# Every flag the usage names.
flags=$(grep -oE '(^|[][ (|,])--?[a-z][-a-z]*' "$TMP/help" | sed 's/^[^-]*//' | sort -u)
[ "$(echo "$flags" | wc -l)" -ge 25 ] || bail "only $(echo "$flags" | wc -l) flags found in wss --help"
for f in $flags; do
	has "$TMP/wss.1.txt" "$f"
	ok $? "wss(1) has $f"
done

# The flags each usage line gives a subcommand, in that subcommand's
# section of wss(1) (from its heading to the next "wss ..." heading).
awk '/^(usage:)? +wss [a-z]/ { sub(/^usage:/, ""); cmd = $2 }
     /^ +(wss [a-z]|[[])/ && cmd != "" {
	for (i = 1; i <= NF; i++) if (match($i, /^[[(]?--?[a-z][-a-z]*/)) {
		f = substr($i, RSTART, RLENGTH); sub(/^[[(]/, "", f); print cmd, f }
     }
     /^$/ { cmd = "" }' "$TMP/help" | sort -u >"$TMP/bycmd"
[ "$(wc -l <"$TMP/bycmd")" -ge 20 ] || bail "the usage lines of wss --help did not parse"
while read -r cmd f; do
	awk -v c="$cmd" '/^   wss / { in_ = ($2 == c) } /^[A-Z]/ { in_ = 0 } in_' "$TMP/wss.1.txt" >"$TMP/section"
	[ -s "$TMP/section" ] || { ok 1 "wss(1) has a section for wss $cmd"; continue; }
	has "$TMP/section" "$f"
	ok $? "wss(1): wss $cmd $f"
done <"$TMP/bycmd"

# Every key of the example, commented-out ones (sample_rate) included.
keys=$(awk '/^\[[a-z]+\]$/ { s = substr($0, 2, length($0) - 2) }
	    /^(# )?[a-z_]+ = / { sub(/^# /, ""); print s "." $1 }' "$TMP/example")
[ "$(echo "$keys" | wc -l)" -ge 20 ] || bail "only $(echo "$keys" | wc -l) keys found in wss config example"
for k in $keys; do
	var=WSS_$(echo "$k" | tr 'a-z.' 'A-Z_')
	has "$TMP/wss-session.5.txt" "$k"
	ok $? "wss-session(5) has $k"
	has "$TMP/wss-session.5.txt" "$var" && has "$TMP/wss.1.txt" "$var"
	ok $? "both pages name $var"
done

# Each subcommand of the usage, in the NAME-to-EXAMPLES text of wss(1).
for cmd in $(awk '/^(usage:)? +wss [a-z]/ { sub(/^usage:/, ""); print $2 }' "$TMP/help" | sort -u); do
	grep -q "^   wss $cmd" "$TMP/wss.1.txt"
	ok $? "wss(1) has a section for wss $cmd"
done

# The version.
version=$("$WSS" --version | sed 's/^wss //')
for p in "$man1" "$man5"; do
	grep -q "^\.TH .*\"wss $version\"" "$p"
	ok $? "$(basename "$p") is of wss $version"
done

# Rendering: groff's every warning (-ww), and man-db's own check.
for p in "$man1" "$man5"; do
	LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$p" 2>"$TMP/warn"
	[ $? -eq 0 ] && [ ! -s "$TMP/warn" ]
	ok $? "groff -man -ww renders $(basename "$p") without warnings" || sed 's/^/# /' "$TMP/warn"
	if command -v man >/dev/null; then
		LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -P cat -l "$p" >/dev/null 2>"$TMP/warn"
		[ $? -eq 0 ] && [ ! -s "$TMP/warn" ]
		ok $? "man --warnings -l $(basename "$p") is clean" || sed 's/^/# /' "$TMP/warn"
	else
		skip "man (man-db) not installed"
	fi
done
done_testing
