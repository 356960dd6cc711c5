#!/bin/sh
# The session's table (docs/report.md, "The session"): wss run prints one
# table on stderr after a program whose session wrote several profiles
# (the processes, the largest data peaks, the session's total as the sum
# of the processes' totals, and how much of it is shared memory, counted
# in each process that touched it), and the leader's own figures are one
# of its lines; wss report of the first profile has it too, in text and
# as --json's "session", also after the session is moved.  A session of
# one profile, and bare LD_PRELOAD, keep the leader's summary.
. "$top_srcdir/tests/tap/tap.sh"
cd "$TMP" || bail "cd $TMP"
[ -x "$PROGS/census" ] && [ -x "$PROGS/kinds" ] || bail "tests/progs/census and kinds are not built"

# The sum of summary.data.total (or KEY) over profiles.
sum_of() {
	key=$1
	shift
	s=0
	for f; do s=$((s + $($PROFILE get "$f" "$key"))); done
	echo $s
}
# A count of pages from a text line: its first number, without commas.
first_number() { sed 's/[^0-9,]*\([0-9,]*\).*/\1/; s/,//g'; }

# Three programs of a script, each living several intervals: the census
# program's 3072 pages, and two sleeps (one in the background).
cat >script.sh <<EOF
sleep 0.3
"$PROGS/census" basic
sleep 0.3 &
wait
EOF
mkdir w
(cd w && "$WSS" run --interval 20ms -- sh ../script.sh >../out 2>../err)
is $? 0 "wss run -- sh script.sh: exit 0"
leader=$(cd w && ls wss.*.jsonl)
pid=$(echo "$leader" | cut -d. -f2)
profiles="w/$leader $(ls w/wss.$pid.d/*.jsonl | tr '\n' ' ')"
n=$(echo $profiles | wc -w)
between "$n" 4 5 "the session wrote the shell's, census's and the sleeps' profiles ($n)"
grep -q "^wss: session: [0-9]* processes, [0-9]* with a profile" err
ok $? "wss run prints the session's table" || sed 's/^/# /' err
is "$(grep -c '^wss: data avg' err)" 0 "and not the leader's own figures"
is "$(grep -c '^wss: profile: ' err)" 1 "the leader's profile line stays, once"
rows=$(sed -n '/^wss: *pid  program/,/^wss: session total/p' err | sed '1d;$d')
is "$(echo "$rows" | grep -c .)" "$n" "a row per profile"
is "$(echo "$rows" | head -1 | awk '{print $3}')" census "the largest data peak first: census"
want=$(for f in $profiles; do $PROFILE get "$f" header.pid; done | sort -n | tr '\n' ' ')
is "$(echo "$rows" | awk '{print $2}' | sort -n | tr '\n' ' ')" "$want" "the rows are the profiles' processes"
total=$(sum_of summary.data.total $profiles)
is "$(grep '^wss: session total: ' err | first_number)" "$total" \
	"the session total is the sum of the profiles' data totals ($total)"
grep -q "^wss: session total: .*, the sum of the processes' data totals (each process counts the pages it touched)\$" err
ok $? "and says each process counts the pages it touched"
grep -q "^wss: 0 pages (0.0 %) of it shared memory, counted in each process that touched it\$" err
ok $? "none of it shared memory" || grep shared err | sed 's/^/# /'
(cd w && "$WSS" report --json "$leader") >rep.json 2>rep.err
is "$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["session"]
print(s["profiles"], s["total_pages"], s["shared_pages"], len(s["top"]))' rep.json)" "$n $total 0 $n" \
	"wss report --json: the session's profiles, total, shared pages and top list"

# Two processes write the same MAP_SHARED memory: the parent 300 pages,
# then its forked child the same 300 (kinds fork, follow_fork).
mkdir f
(cd f && "$WSS" run --time-base manual -- "$PROGS/kinds" fork >../out 2>../err)
is $? 0 "wss run -- kinds fork: exit 0"
is "$(awk '/^child/ {print $6}' out)" 600 "the child's writes reach the parent"
leader=$(cd f && ls wss.*.jsonl)
pid=$(echo "$leader" | cut -d. -f2)
profiles="f/$leader $(ls f/wss.$pid.d/*.jsonl | tr '\n' ' ')"
is "$(echo $profiles | wc -w)" 2 "two profiles"
shared=$(sum_of summary.kinds.shared.total $profiles)
is "$shared" 600 "each profile has the 300 shared pages"
total=$(sum_of summary.data.total $profiles)
pct=$(awk -v s="$shared" -v t="$total" 'BEGIN {printf "%.1f", 100 * s / t}')
grep -q "^wss: 600 pages ($pct %) of it shared memory, counted in each process that touched it\$" err
ok $? "the table: 600 shared pages, $pct % of the session's $total, counted in each" || sed 's/^/# /' err
is "$(grep '^wss: session total: ' err | first_number)" "$total" "the total counts them in each process"
is "$(grep -c '^wss: *[0-9]*  kinds  ' err)" 2 "both processes listed"

# Moved whole, read from elsewhere.
mkdir moved
mv "f/$leader" "f/wss.$pid.d" moved/
(cd / && "$WSS" report --json "$TMP/moved/$leader") >rep.json 2>rep.err
is "$?:$(cat rep.err)" "0:" "wss report --json of the moved session: exit 0, nothing on stderr"
got=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["session"]
print(s["profiles"], s["total_pages"], s["shared_pages"], " ".join(sorted(t["profile"] for t in s["top"])))' rep.json)
want="2 $total 600 $(ls "$TMP/moved/$leader" "$TMP"/moved/wss.$pid.d/*.jsonl | sort | tr '\n' ' ' | sed 's/ $//')"
is "$got" "$want" "the moved session's profiles, total and shared pages"
(cd / && "$WSS" report "$TMP/moved/$leader") >rep 2>rep.err
grep -q "^session total: [0-9,]* pages (.*), the sum of the processes' data totals" rep
ok $? "the text report has the table" || sed 's/^/# /' rep.err
is "$(grep '^session total: ' rep | first_number)" "$total" "with the same total"
grep -q "^600 pages ($pct %) of it shared memory" rep
ok $? "and the same shared pages"

# Bare LD_PRELOAD: no wss run to print a table, so the leader's summary
# stays whole.
mkdir bare
(cd bare && WSS_SESSION_TIME_BASE=manual LD_PRELOAD="$WSS_LIB" "$PROGS/kinds" fork >../out 2>../err)
is $? 0 "bare LD_PRELOAD kinds fork: exit 0"
is "$(grep -c '^wss: data avg/peak/total: ' err)" 1 "the leader's figures are printed"
is "$(grep -c '^wss: session' err)" 0 "and no table"

# A session of one profile: the leader's summary as it was, no table.
mkdir one
(cd one && "$WSS" run --time-base manual -- "$PROGS/census" basic >../out 2>../err)
is $? 0 "wss run -- census basic: exit 0"
is "$(grep -c '^wss: data avg/peak/total: ' err)" 1 "one profile: the leader's figures"
is "$(grep -c '^wss: session' err)" 0 "and no table"
(cd one && "$WSS" report --json wss.*.jsonl) >rep.json
is "$(python3 -c 'import json,sys; print("session" in json.load(open(sys.argv[1])))' rep.json)" False \
	"and no \"session\" in its report"

# A program that ends within its first interval writes no profile, but
# its note says what it measured: census's 3,072 pages of its mapping
# (2,048 read, 1,024 written; exact, as tap.sh runs), in the table.
mkdir short
(cd short && "$WSS" run --interval 2s -o s.jsonl -- sh -c "\"$PROGS/census\" basic; true" >../out 2>../err)
is "$?:$(ls short)" "0:s.jsonl" "a program within one interval: no profile of its own"
note=$(grep '"type":"process".*"exe":' short/s.jsonl)
is "$(echo "$note" | sed -n 's/.*"exe":"\([^"]*\)".*/\1/p')" "$PROGS/census" "its note names the program"
peak=$(echo "$note" | sed -n 's/.*"data_peak":\([0-9]*\).*/\1/p')
between "$peak" 3072 3200 "and its data peak: the mapping's 3,072 pages and a few of its own ($peak)"
grep -q "^wss: session: 2 processes, 1 with a profile, 1 measured in its note (it ended within an interval); by data peak:\$" err
ok $? "wss run's table counts it as measured" || sed 's/^/# /' err
grep -q "^wss: *[0-9]*  census *$(python3 -c 'import sys; print(format(int(sys.argv[1]), ","))' "$peak") (" err
ok $? "and lists it, the largest" || sed 's/^/# /' err
"$WSS" report --json short/s.jsonl >short.json || bail "wss report --json failed"
is "$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["session"]; print(s["processes_in_note"], s["top"][0]["program"], s["top"][0]["profile"])' short.json)" \
	"1 census None" "wss report --json: the session's top process, measured in its note, with no profile"
# A build: make -j2 of a small C project.  Its compilers end within an
# interval or two; the table names the largest of them, in 12 lines at
# most, whichever wrote a profile and whichever was measured in its note.
if command -v make >/dev/null && command -v cc >/dev/null; then
	mkdir build
	for i in 1 2 3 4; do printf 'int f%d(int x) { return x * %d; }\n' $i $i >build/f$i.c; done
	printf 'int f1(int);int f2(int);int f3(int);int f4(int);\nint main(void) { return f1(1) + f2(2) + f3(3) + f4(4) - 30; }\n' >build/main.c
	printf 'app: main.o f1.o f2.o f3.o f4.o\n\tcc -o $@ $^\n%%.o: %%.c\n\tcc -O2 -c $<\n' >build/Makefile
	(cd build && "$WSS" run -- make -s -j2 >../out 2>../err)
	is "$?:$(test -x build/app && echo built)" "0:built" "wss run -- make -j2: the project builds"
	between "$(grep -c . err)" 5 12 "at most 12 lines on stderr ($(grep -c . err))"
	first=$(sed -n 's/^wss: *[0-9]*  \([^ ]*\) .*/\1/p' err | sed -n 2p)
	case $first in
	make | "") ok 1 "the table names a compiler, the assembler or the linker first, not make ($first)" ;;
	*) ok 0 "the table names a compiler, the assembler or the linker first, not make ($first)" ;;
	esac
else
	skip "no make or cc"
	skip "no make or cc"
	skip "no make or cc"
fi
done_testing
