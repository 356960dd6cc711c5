#!/bin/sh
# fork: with session.follow_fork (the default) each child is measured into
# its own profile, from scratch (exact pages with manual ticks); without it
# the child stops measuring and writes nothing.  Either way the program's
# memory and exit status are unchanged.  exec: with session.follow_exec (the
# default) exec'd programs are measured; without it nothing the program
# starts sees LD_PRELOAD or wss's variables, whatever the route.
. "$top_srcdir/tests/tap/tap.sh"
# Exact counts of the program's memory: the few pages of its stacks each
# interval (track.stacks, timing-dependent) would blur them; kinds.sh counts
# stacks.
WSS_TRACK_STACKS=0
export WSS_TRACK_STACKS
cd "$TMP" || bail "cd $TMP"
sample() { $PROFILE samples "$1" | awk -v s="$2" '$1 == s {print $2}'; }

WSS_SESSION_TIME_BASE=manual WSS_SESSION_OUTPUT="$TMP/m.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/forker" manual >out 2>/dev/null
is $? 0 "manual: parent and child run unchanged"
child=$(awk '/^child/ {print $2}' out)
parent=$(ls m.*.jsonl)
# The session's other profiles go into the directory named after the
# leader's (docs/config.md, session.output).
cf=${parent%.jsonl}.d/m.$child.jsonl
test -f "$cf"; ok $? "the child has its own profile, in the session directory"
$PROFILE check "$cf"; ok $? "complete and valid"
$PROFILE check "$parent"; ok $? "the parent's too"
is "$($PROFILE get "$cf" header.pid)" "$child" "the child's header has its pid"
while read -r kind who seq n; do
	[ "$kind" = expect ] || continue
	f=$parent; [ "$who" = child ] && f=$cf
	between "$(sample "$f" "$seq")" "$n" $((n + 4)) "$who sample $seq: $n pages"
done <out
between "$($PROFILE get "$cf" summary.data.total)" 40 44 "the child's total counts only its own 40 pages"

printf '[session]\ntime_base = "manual"\nfollow_fork = false\n' >nofollow.toml
WSS_CONFIG=nofollow.toml WSS_SESSION_OUTPUT="$TMP/n.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/forker" manual >out 2>/dev/null
is $? 0 "follow_fork = false: parent and child run unchanged"
child=$(awk '/^child/ {print $2}' out)
is "$(ls -d n.* | wc -l)" 1 "the child writes no profile: only the parent's, and no session directory"
between "$(sample "$(ls n.*.jsonl)" 2)" 70 74 "the parent's second sample is still its own 70 pages"

WSS_SESSION_INTERVAL=10ms WSS_SESSION_OUTPUT="$TMP/w.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/forker" wall >out 2>/dev/null
is $? 0 "wall: a child running 300 ms"
child=$(awk '/^child/ {print $2}' out)
# At least one tick of its own besides the final sample: under a CPU hog
# (load 10 on two cores) its engine thread started measuring 260 ms late
# and ticked 3 times (tests/SOAK.md, stop 26), so no more is asked.
between "$($PROFILE samples w.*.d/"w.$child.jsonl" | wc -l)" 2 1000 "is sampled by its own engine thread"

WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/t.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/forker" threads >/dev/null 2>&1
is $? 0 "20 forks while two threads touch memory: every child exits 0"
# A child that exits before its first sample is due writes no profile
# (issue 12: they used to write one each); the leader's profile says why.
n=0 good=0
for f in $(find . -path './t.*' -type f); do n=$((n + 1)); $PROFILE check "$f" && good=$((good + 1)); done
is "$good" "$n" "every profile written is complete ($n)"
none=$(cat t.*.jsonl | grep -c '"type":"process".*"profile":null,"reason":"exit before its first sample"')
is "$((n - 1 + none))" 20 "each of the 20 children has a profile or a note why not ($((n - 1)) + $none)"
# A followed child is multithreaded (its engine thread): setgid, which
# signals every thread and waits, must still return.
WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/s.%p.jsonl" LD_PRELOAD="$WSS_LIB" timeout 60 "$PROGS/forker" setid >/dev/null 2>&1
is $? 0 "setgid in a followed child returns"
# fork from a signal handler during a read into heap memory: the read
# resumes in the child, its buffer still open.
WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/g.%p.jsonl" LD_PRELOAD="$WSS_LIB" timeout 60 "$PROGS/forker" sigfork >/dev/null 2>&1
is $? 0 "fork in a signal handler: the interrupted read succeeds in parent and child"

# vfork (then execve or _exit) and posix_spawn/posix_spawnp, with a 1 ms
# interval, the heap touched around each call and the pid, path, argv, file
# actions and attributes in it: every child exits as it does natively, and each process that runs
# under the preload (forker and what it execs) leaves a complete profile.
# glibc's spawn reads and writes some of that memory with every signal
# blocked, where an armed page is fatal.  MODE:N, N = forker and the
# children that exec under the preload (20 of the 40 vfork children; all
# 32 spawned).  timeout runs outside the preload: its own forked child,
# followed, may live a 1 ms interval before it execs forker and then
# rightly leaves a profile of its own (in 1 run of 4 under load).
for m in vfork:21 spawn:33; do
	n_want=${m#*:} m=${m%:*}
	"$PROGS/forker" $m >$m.native 2>&1
	echo "exit $?" >>$m.native
	mkdir $m
	timeout 120 env WSS_SESSION_INTERVAL=1ms WSS_SESSION_OUTPUT="$TMP/$m/p.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/forker" $m >$m.out 2>$m.err
	echo "exit $?" >>$m.out
	cmp -s $m.native $m.out
	ok $? "$m: children exit as natively ($(grep -c . $m.native) lines)" || { diff $m.native $m.out; grep -v '^wss: ' $m.err; } | head -8 | sed 's/^/# /'
	n=0 good=0
	for f in $(find $m -type f); do n=$((n + 1)); $PROFILE check "$f" && good=$((good + 1)); done
	# An exec'd program that ends before its first sample writes none
	# and says so in the leader's profile.
	none=$(cat $m/*.jsonl | grep -c '"type":"process".*"profile":null,"reason":"exit before its first sample"')
	is "$good/$((n + none))" "$n/$n_want" "$m: every process leaves a complete profile or a note why not ($n + $none)"
done

# Lazy children (issue 12): a child that exits or execs at once writes no
# profile; its note in the leader's profile says why.  A child that lives a
# few intervals is measured from one interval after the fork.
mkdir lazy
WSS_SESSION_OUTPUT="$TMP/lazy/p.%p.jsonl" LD_PRELOAD="$WSS_LIB" "$PROGS/forker" quick >out 2>err
is $? 0 "quick: a child that exits at once and one that execs at once"
exitc=$(awk '/^exit/ {print $2}' out) execc=$(awk '/^exec/ {print $2}' out)
leader=$(ls lazy)
is "$(ls lazy | wc -l)" 1 "the children that exit or exec at once write no profile: no session directory made"
$PROFILE check "lazy/$leader"; ok $? "the leader's profile is complete, notes included"
grep -q "\"pid\":$exitc,.*\"profile\":null,\"reason\":\"exit before its first sample\"" "lazy/$leader"
ok $? "and says why the exiting child has none"
grep -q "\"pid\":$execc,.*\"profile\":null,\"reason\":\"exec before its first sample\"" "lazy/$leader"
ok $? "and why the exec'ing child has none"
grep -q "\"pid\":$execc,.*\"profile\":null,\"reason\":\"exit before its first sample\"" "lazy/$leader"
ok $? "and why the program it exec'd, which ended before its first sample, has none"
is "$(grep -c . err)" 5 "one summary (5 lines: data, read, write, by kind, profile), the session on its last"
grep -q "^wss: profile: $TMP/lazy/$leader, which lists 2 processes that wrote none\$" err
ok $? "which counts the processes that wrote none (an exec'd image counts for its child)" || sed 's/^/# /' err

# One summary per session: 300 programs exec'd by a shell print 5 lines
# at most, under the defaults (track.mode auto: the sampled run's line),
# and those that end before their first sample write no profile.
mkdir loop
(cd loop && WSS_TRACK_MODE=auto LD_PRELOAD="$WSS_LIB" bash -c 'for i in $(seq 300); do /bin/true; done' >../out 2>../err)
is $? 0 "300 execs under bare LD_PRELOAD"
between "$(grep -c . err)" 1 5 "print at most 5 stderr lines ($(grep -c . err))"
is "$(ls loop | wc -l)" 1 "and write one profile: bash's (seq and 300 true end before their first sample), no session directory"
grep -q "^wss: profile: wss\.[0-9]*\.jsonl, which lists 301 processes that wrote none\$" err
ok $? "the last line counts them" || sed 's/^/# /' err
# wss run: the program it starts leads the session.
mkdir wr
"$WSS" run --interval 20ms -o "$TMP/wr/p.%p.jsonl" -- bash -c 'for i in 1 2 3; do sleep 0.1; done' >out 2>err
is $? 0 "wss run: a shell that runs three programs, each for five intervals"
is "$(grep -c . err)" 5 "one summary, the session on its last line"
grep -q "^wss: profile: $TMP/wr/p\.\([0-9]*\)\.jsonl, which lists 3 more profiles from this session (in $TMP/wr/p\.\1\.d/)\$" err
ok $? "naming the session directory and the list" || sed 's/^/# /' err
leader=$(sed -n 's/^wss: profile: \([^,]*\),.*/\1/p' err)
is "$(grep -c '"type":"process".*"profile":"' "$leader")" 3 "the leader's profile lists the three profiles"
# Named relative to the leader's profile's directory.
for f in $(sed -n 's/.*"profile":"\([^"]*\)".*/\1/p' "$leader"); do $PROFILE check "$TMP/wr/$f" || echo bad; done >out
is "$(grep -c bad out)" 0 "and each is complete"

# The session reaches exec'd programs through the environment the exec
# wrappers hand the kernel only: the programs never see it.
LD_PRELOAD="$WSS_LIB" WSS_SESSION_OUTPUT="$TMP/loop/e.%p.jsonl" sh -c 'env | grep -c ^WSS_LEADER; sh -c "env | grep -c ^WSS_LEADER"' >out 2>/dev/null
is "$(tr '\n' ' ' <out)" "0 0 " "neither the leader nor an exec'd program sees WSS_LEADER"
# The leader execs (sh -c 'exec prog', env, nice): its new image leads on.
LD_PRELOAD="$WSS_LIB" WSS_SESSION_OUTPUT="$TMP/loop/x.%p.jsonl" bash -c '/bin/true; exec /bin/true' >out 2>err
is "$(grep -c '^wss: profile: ' err)" 1 "a leader that execs: its new image prints the one summary"
grep -q "^wss: profile: $TMP/loop/x\.\([0-9]*\)\.d/x\.\1\.jsonl; $TMP/loop/x\.\1\.jsonl lists 1 process that wrote none\$" err
ok $? "its profile in the session directory, naming its first image's profile as the list" || sed 's/^/# /' err
first=$(ls "$TMP"/loop/x.*.jsonl | head -1)
pid=$(basename "$first" | cut -d. -f2)
grep -q "\"type\":\"process\",\"pid\":$pid,.*\"profile\":\"x.$pid.d/x.$pid.jsonl\"" "$first"
ok $? "the first image's profile notes the exec'd image's, the profile to read next"
"$WSS" report "$first" | grep -q "^exec'd     this program exec'd; the next image's profile is $TMP/loop/x.$pid.d/x.$pid.jsonl\$"
ok $? "and wss report says so"

# A relative output is the leader's, relative to where it started: a
# descendant that changes directory (a script's cd, pyenv's shims) writes
# beside the leader's profile, not into the directory it is in.
mkdir -p rel/sub rel/runs rel/sub/runs
(cd rel && LD_PRELOAD="$WSS_LIB" WSS_SESSION_INTERVAL=20ms WSS_SESSION_OUTPUT="p.%p.jsonl" sh -c 'cd sub && sleep 0.1' >/dev/null 2>&1)
is "$(ls rel | grep -c '^p\..*\.jsonl$') $(ls rel/p.*.d | wc -l) $(ls rel/sub | grep -c '^p\.')" "1 1 0" \
	"a child that cd's writes into the session directory beside the leader's profile (relative output)"
(cd rel && LD_PRELOAD="$WSS_LIB" WSS_SESSION_INTERVAL=20ms WSS_SESSION_OUTPUT="runs/p.%p.jsonl" sh -c 'cd sub && sleep 0.1' >/dev/null 2>&1)
is "$(ls rel/runs | grep -c '^p\..*\.jsonl$') $(ls rel/runs/p.*.d | wc -l) $(ls rel/sub/runs | grep -c '^p\.')" "1 1 0" \
	"and with a directory in the pattern"

# -o /dev/null (a character device): no profile, the summary still printed.
mkdir dn
(cd dn && "$WSS" run -o /dev/null -- "$PROGS/forker" exit 0 >../out 2>../err)
is $? 0 "wss run -o /dev/null is accepted"
is "$(ls dn | wc -l)" 0 "and writes no profile"
grep -q '^wss: data avg/peak/total: ' err; ok $? "the summary is still printed"
grep -q '^wss: profile: none' err; ok $? "and says there is no profile"

# exec, followed: every program in the shell's pipeline that lives an
# interval writes a profile (cat and wc wait for the sleep's echo).
mkdir fe nfe other
WSS_SESSION_INTERVAL=20ms WSS_SESSION_OUTPUT="$TMP/fe/p.%p.jsonl" LD_PRELOAD="$WSS_LIB" sh -c '(sleep 0.1; echo x) | cat | wc -l' >out 2>/dev/null
is "$(cat out)" 1 "follow_exec = true: the pipeline runs unchanged"
is "$(ls fe | wc -l)" 2 "sh's profile and the session directory beside it"
between "$(find fe -type f | wc -l)" 3 100 "and sh, cat and wc write profiles ($(find fe -type f | wc -l))"
# Not followed: the environment is cleaned at start-up, so exec*, system()
# and posix_spawn (python's subprocess) children are all unmeasured.
printf '[session]\nfollow_exec = false\n' >noexec.toml
WSS_CONFIG=noexec.toml WSS_SESSION_OUTPUT="$TMP/nfe/p.%p.jsonl" LD_PRELOAD="$WSS_LIB" \
	sh -c 'env | grep -c "^WSS_"; echo "[$LD_PRELOAD]"; python3 -c "import os, subprocess; os.system(\"true\"); subprocess.run([\"true\"])"' >out 2>/dev/null
is $? 0 "follow_exec = false: runs"
is "$(sed -n 1p out)" 0 "the program sees no WSS_ variables"
is "$(sed -n 2p out)" "[]" "and no LD_PRELOAD"
is "$(ls nfe | wc -l)" 1 "only the program itself writes a profile"
WSS_SESSION_FOLLOW_EXEC=false WSS_SESSION_OUTPUT="$TMP/other/p.%p.jsonl" LD_PRELOAD="$WSS_LIB /lib/x86_64-linux-gnu/libm.so.6" \
	sh -c 'echo "[$LD_PRELOAD]"' >out 2>/dev/null
is "$(cat out)" "[/lib/x86_64-linux-gnu/libm.so.6]" "other preloaded libraries are kept"
done_testing
