#!/bin/sh
# Session files: `wss config example|check`, bad configuration stopping the
# program before main (bare LD_PRELOAD and `wss run -c`), precedence of file,
# environment and flags as recorded in the profile header, and the track /
# report keys changing exactly what is measured.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
get() { $PROFILE get "$@"; }

"$WSS" config example >example.toml; is $? 0 "wss config example exits 0"
cmp -s example.toml "$top_srcdir/docs/session.example.toml"
ok $? "and prints docs/session.example.toml exactly"
"$WSS" config check example.toml >checked.toml; is $? 0 "the example passes wss config check"
grep -q '^interval = "100ms"  # example.toml:18:12$' checked.toml; ok $? "check prints each value with its source"
"$WSS" config check checked.toml >checked2.toml; is $? 0 "check's own output is a valid session file"
sed '/^#/d; s/  #.*//' checked.toml >a && sed '/^#/d; s/  #.*//' checked2.toml >b && cmp -s a b
ok $? "with the same values"

# A bad file, under a bare LD_PRELOAD: one line with file:line:col, and the
# program runs untracked (a typo must not stop every program it reaches).
printf '[session]\ninterval "10ms"\n' >bad.toml
WSS_CONFIG=bad.toml LD_PRELOAD="$WSS_LIB" touch ran1 2>err; is $? 0 "bad config under LD_PRELOAD: the program's own status"
test -e ran1 && [ -z "$(ls | grep '^wss\.[0-9]*\.jsonl$')" ]; ok $? "the program ran, untracked: no profile"
is "$(cat err)" "wss: bad.toml:2:10: expected '=' after key \"interval\"; the program runs untracked" "one line naming file:line:col"
"$WSS" run -c bad.toml -- touch ran2 2>err; is $? 125 "wss run -c with a bad file exits 125"
test ! -e ran2; ok $? "and does not start the program"
is "$(cat err)" "wss: bad.toml:2:10: expected '=' after key \"interval\"" "with the same message"
"$WSS" config check bad.toml 2>err >/dev/null; is $? 2 "wss config check rejects it with status 2"

printf '[session]\nintervall = "10ms"\n' >typo.toml
WSS_CONFIG=typo.toml LD_PRELOAD="$WSS_LIB" /bin/true 2>err; is $? 0 "an unknown key: the program runs"
is "$(cat err)" 'wss: typo.toml:2:1: unknown key "intervall" in [session]; did you mean "interval"?; the program runs untracked' "and the line suggests the key"
printf '[track]\nfile_mmap = false\nshared = false\n' >kinds.toml
WSS_CONFIG=kinds.toml LD_PRELOAD="$WSS_LIB" /bin/true 2>err; is $? 0 "track.file_mmap and track.shared are keys of this version"
is "$(grep -c "kinds.toml" err)" 0 "and set without a word about the file"
WSS_SESSION_INTREVAL=1ms LD_PRELOAD="$WSS_LIB" /bin/true 2>err; is $? 0 "a misspelt variable: the program runs"
is "$(cat err)" "wss: WSS_SESSION_INTREVAL: unknown setting; did you mean WSS_SESSION_INTERVAL?; the program runs untracked" "and the line suggests the name"

# Files that cannot be used.
WSS_CONFIG=missing.toml LD_PRELOAD="$WSS_LIB" /bin/true 2>err; is $? 0 "a missing file: the program runs untracked"
grep -q '^wss: missing.toml: cannot read the session file: No such file' err; ok $? "naming it"
mkdir adir
"$WSS" run -c adir -- true 2>err; is $? 125 "a directory is refused"
grep -q '^wss: adir: is a directory' err; ok $? "as a directory"
head -c 1100000 /dev/zero | tr '\0' '#' >huge.toml
WSS_CONFIG=huge.toml LD_PRELOAD="$WSS_LIB" /bin/true 2>err; is $? 0 "a file over 1 MiB: the program runs untracked"
grep -q '^wss: huge.toml: session file larger than 1 MiB' err; ok $? "and says so"
printf '[session]\noutput = "caf\351.jsonl"\n' >latin1.toml
"$WSS" config check latin1.toml 2>err >/dev/null; is $? 2 "a file that is not UTF-8 exits 2"
is "$(cat err)" "wss: latin1.toml:2:14: invalid UTF-8" "at the offending byte"
"$WSS" run -c /dev/null -- true 2>err; is $? 125 "wss run -c needs a regular file (the program reads it again)"

# Precedence: defaults < file < environment < flags, recorded in the header.
cat >s.toml <<'TOML'
[session]
time_base = "manual"
interval = "20ms"
window = "40ms"
[track]
backend = "mprotect"
TOML
WSS_SESSION_WINDOW=60ms "$WSS" run -c s.toml --interval 30ms -o "$TMP/prec.jsonl" -- "$PROGS/phases" basic >/dev/null 2>&1
is $? 0 "a run with file, environment and flags"
is "$(get prec.jsonl header.config.session.interval)/$(get prec.jsonl header.config_source.session.interval)" \
	30000000/flag "interval from the flag"
is "$(get prec.jsonl header.config.session.window)/$(get prec.jsonl header.config_source.session.window)" \
	60000000/env "window from the environment"
is "$(get prec.jsonl header.time_base)/$(get prec.jsonl header.config_source.session.time_base)" \
	manual/file "time base from the file"
is "$(get prec.jsonl header.config_source.track.heap)" default "heap from the defaults"
is "$(get prec.jsonl header.config_file)" "$TMP/s.toml" "the header names the file by absolute path"
is "$(get prec.jsonl header.backend_reason)" requested "an explicitly requested backend is recorded as such"

# track.* change exactly what is measured (tests/progs/phases basic:
# sample 1 is 100 mmap'd pages, 6 is 64 heap pages, 7 is 16 .bss pages;
# the stack's few pages each interval left out: kinds.sh has them).
sample() { $PROFILE samples "$1" | awk -v s="$2" '$1 == s {print $2}'; }
toggle() { # toggle NAME TOML-LINE
	printf '[session]\ntime_base = "manual"\n[track]\nstacks = false\n%s\n' "$2" >"$1.toml"
	WSS_CONFIG="$1.toml" WSS_SESSION_OUTPUT="$TMP/$1.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/phases" basic >/dev/null 2>&1 ||
		bail "phases under $1.toml failed"
}
toggle noanon "anon_mmap = false"
toggle noheap "heap = false"
toggle nodata "data_segments = false"
between "$(sample noanon.jsonl 1)" 0 4 "anon_mmap = false: the 100 mmap'd pages are not counted"
between "$(sample noanon.jsonl 6)" 64 68 "anon_mmap = false: the 64 heap pages still are"
between "$(sample noheap.jsonl 6)" 0 4 "heap = false: the 64 heap pages are not counted"
between "$(sample noheap.jsonl 1)" 100 104 "heap = false: the 100 mmap'd pages still are"
is "$(get noheap.jsonl header.track.heap)" false "heap = false: the header says so"
between "$(sample nodata.jsonl 7)" 0 4 "data_segments = false: the 16 .bss pages are not counted"
between "$(sample nodata.jsonl 6)" 64 68 "data_segments = false: the heap pages still are"

# report.summary = false: no stderr lines, the same profile.
printf '[report]\nsummary = false\n' >quiet.toml
WSS_CONFIG=quiet.toml WSS_SESSION_OUTPUT="$TMP/quiet.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/pageramp" 1 20 >/dev/null 2>err
is $? 0 "summary = false runs"
test ! -s err; ok $? "and prints nothing on stderr"
$PROFILE check quiet.jsonl; ok $? "while the profile is complete"

# %t: the start time in the output name.
"$WSS" run -o "$TMP/t-%t.jsonl" -- true 2>/dev/null
is "$(ls | grep -cE '^t-[0-9]{8}-[0-9]{6}\.jsonl$')" 1 "%t expands to YYYYMMDD-HHMMSS"
done_testing
