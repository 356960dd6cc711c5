#!/bin/sh
# The session directory (docs/config.md, session.output): the session's
# first process writes its profile where the output says, every other one
# into NAME.d beside it, made only when one of them writes a profile, never
# through a link and never another user's; the notes name the profiles
# relative to the leader's, so the two move together; wss report and
# report --html find them there.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"

# A script that runs three programs living several intervals each: one in
# the foreground, one after a cd, one in the background.
cat >script.sh <<'EOF'
sleep 0.3
cd sub
sleep 0.3 &
wait
sleep 0.3
EOF
mkdir -p w/sub
(cd w && "$WSS" run --interval 20ms -- sh ../script.sh >../out 2>../err)
is $? 0 "wss run -- sh script.sh: three sleeps, one after a cd"
leader=$(cd w && ls wss.*.jsonl)
pid=$(echo "$leader" | cut -d. -f2)
is "$(ls w | tr '\n' ' ')" "sub wss.$pid.d wss.$pid.jsonl " "the working directory gets one profile and one directory"
is "$(ls w/sub | wc -l)" 0 "the cd scatters nothing"
# A forked shell that lived an interval before it exec'd (a loaded
# machine) writes a profile too: the sleeps are counted by their program.
sleeps=$(grep -l '"type":"header".*"argv":\["sleep"' w/wss.$pid.d/* | wc -l)
is "$sleeps" 3 "the session directory holds the three sleeps' profiles"
n=0 good=0
for f in w/wss.$pid.d/*; do n=$((n + 1)); $PROFILE check "$f" && good=$((good + 1)); done
is "$good" "$n" "each complete ($n)"
is "$(stat -c %a w/wss.$pid.d)" "$(printf '%o' $((0777 & ~$(umask))))" "the directory's mode is 0777 less the umask"
is "$($PROFILE get "w/$leader" header.session_dir)" "wss.$pid.d" "the leader's header names it, relative to itself"
notes=$(grep -c '"type":"process".*"profile":"wss\.'"$pid"'\.d/' "w/$leader")
is "$notes" "$n" "each noted in the leader's profile by its path relative to the leader's"
grep -q "^wss: profile: wss\.$pid\.jsonl, which lists $n more profiles from this session (in wss\.$pid\.d/)\( and [0-9]* processes that wrote none\)\{0,1\}\$" err
ok $? "stderr's last line names the directory" || tail -1 err | sed 's/^/# /'
(cd w && "$WSS" report "$leader") >rep 2>rep.err
grep -q "^session    $n more profiles in wss\.$pid\.d/ " rep
ok $? "wss report says how many and where" || grep '^session' rep | sed 's/^/# /'

# Moved together, elsewhere, and read from another directory.
mkdir moved
mv "w/$leader" "w/wss.$pid.d" moved/
(cd / && "$WSS" report "$TMP/moved/$leader") >rep 2>rep.err
grep -q "^session    $n more profiles in $TMP/moved/wss\.$pid\.d/ " rep
ok $? "moved with its directory: wss report finds them there" || grep '^session' rep | sed 's/^/# /'
(cd / && "$WSS" report --html "$TMP/moved.html" "$TMP/moved/$leader") 2>html.err
is "$?:$(cat html.err)" "0:" "report --html of the moved leader: exit 0, nothing on stderr"
is "$(grep -o '"path":"[^"]*"' moved.html | grep -c "\"$TMP/moved/wss\.$pid\.d/")" "$n" \
	"and the page holds every profile of the directory"

# Only the leader writes: no directory.  (The shell's last command is a
# builtin: a program exec'd in its place would be its next image, whose
# profile goes into the directory.)
mkdir one
(cd one && "$WSS" run --interval 20ms -- sh -c '/bin/true; /bin/true; exit 0' >/dev/null 2>../err)
is "$(ls one | wc -l)" 1 "children that end before their first sample: no directory is made"
grep -q "^wss: profile: wss\.[0-9]*\.jsonl, which lists [0-9]* processes that wrote none\$" err
ok $? "and the last line counts them" || tail -1 err | sed 's/^/# /'

# A named output: its directory is NAME.d, and wss run refuses one left
# by an earlier run (the sessions' profiles would mix).
mkdir named
(cd named && "$WSS" run --interval 20ms -o run.jsonl -- sh -c 'sleep 0.2' >/dev/null 2>../err)
is "$(ls named | tr '\n' ' ')" "run.d run.jsonl " "-o run.jsonl: the others' profiles in run.d"
rm named/run.jsonl
(cd named && "$WSS" run -o run.jsonl -- /bin/true >/dev/null 2>../err)
is "$?:$(cat err)" "125:wss: run.d: exists, and the other processes of run.jsonl's session would write their profiles there (remove it, or choose another --output)" \
	"wss run refuses a session directory left by an earlier run, in one line"

# A symbolic link planted at the directory's name is not followed: the
# processes that would write there write nothing, the program runs on,
# and the leader's last line says why, once.
mkdir ln ln/target
ln -s target ln/run.d
(cd ln && WSS_SESSION_INTERVAL=20ms WSS_SESSION_OUTPUT=run.jsonl LD_PRELOAD="$WSS_LIB" \
	sh -c 'sleep 0.2; sleep 0.2; echo ran' >../out 2>../err)
is "$?:$(cat out)" "0:ran" "a link at the directory's name: the program runs as natively"
is "$(ls ln/target | wc -l)" 0 "nothing is written through it"
is "$(grep -c 'run\.d' err)" 1 "one line says so" || sed 's/^/# /' err
grep -q "^wss: profile: run\.jsonl, which lists [0-9]* processes that wrote none; [0-9]* of them because run\.d, the session directory, is a symbolic link, which wss never follows\$" err
ok $? "the leader's, naming the directory and why" || tail -1 err | sed 's/^/# /'
grep -q '"profile":null,"reason":"the session directory is a symbolic link, which wss never follows"' ln/run.jsonl
ok $? "the notes say why too"
"$WSS" report ln/run.jsonl | grep -q "^           [0-9]* of them wrote none because the session directory ln/run\.d is a symbolic link, which wss never follows\$"
ok $? "and wss report"

# Another user's directory or link in a shared (sticky) directory.
if [ "$(id -u)" != 0 ] || ! command -v runuser >/dev/null; then
	for i in 1 2 3; do skip "not root: no other user to plant names"; done
else
	chmod 711 "$TMP"
	mkdir shared && chmod 1777 shared
	runuser -u nobody -- mkdir -m 777 shared/o.d || bail "nobody cannot make a directory"
	WSS_SESSION_INTERVAL=20ms WSS_SESSION_OUTPUT="$TMP/shared/o.jsonl" LD_PRELOAD="$WSS_LIB" \
		sh -c 'sleep 0.2; echo ran' >out 2>err
	is "$?:$(cat out):$(ls shared/o.d | wc -l)" "0:ran:0" "another user's directory at the name: not written into, the program runs"
	grep -q "; [0-9]* of them because $TMP/shared/o\.d, the session directory, is another user's directory, and wss writes only into its own\$" err
	ok $? "the last line says why" || tail -1 err | sed 's/^/# /'
	runuser -u nobody -- ln -s "$TMP/w" shared/p.d || bail "nobody cannot plant a link"
	"$WSS" run -o "$TMP/shared/p.jsonl" -- /bin/true >/dev/null 2>err
	is "$?:$(cat err)" "125:wss: $TMP/shared/p.d: not written: a symbolic link of uid $(id -u nobody) in a sticky directory others can write (wss uses only the user's own or the directory owner's there)" \
		"wss run refuses another user's link at the directory's name up front: one line, exit 125"
fi
done_testing
