#!/bin/sh
# The analyses work on the trace's runs as ranges: their output is byte for
# byte that of the reference build whose analyses walk every run page by
# page (tests/wss-perpage, built with WSS_PER_PAGE), on the synthetic traces
# of analyses.sh and on random ones (long runs and many short ones,
# overlapping from one interval to the next, pages gone and moved, mixed
# levels).  Then pairs whose profile and trace agree on runs of 2^28, 2^34
# and 2^40 pages: every analysis answers (or refuses at its documented
# limit, in one line) within 10 s and 400 MB of address space, where page
# by page it ran out of memory at 2^28 already.  (simulate's LRU alone
# is over ranges too; its other policies walk the string.)
. "$top_srcdir/tests/tap/tap.sh"
command -v python3 >/dev/null || bail "python3 is not installed"
REF=$top_builddir/tests/wss-perpage
[ -x "$REF" ] || bail "no reference build $REF (make check builds it)"
TR="python3 $top_srcdir/tests/tap/trace.py"
cd "$TMP" || bail "no scratch directory"

# pair NAME KIND ARGS...: NAME.json (the spec), NAME.trace, NAME.jsonl.
pair() { $TR pair "$@" || bail "trace.py could not write $1"; }
pairs="cyc ramp sp smp"
pair cyc cycle 8 120
pair ramp ramp 10
pair sp sparse 16
pair smp sampled 4096 20 3 0x1234
for seed in 1 2 3 4 5 6 7 8 9; do
	pair rnd$seed random $seed 40 $((seed % 4))
	pairs="$pairs rnd$seed"
done

commands='heatmap
heatmap --by address --csv
heatmap --json --page-bins 7 --time-bins 5
heatmap --csv --page-bins 1000 --time-bins 3
window --window 1 --csv
window --window 3
window --window 7 --json
window --window 100 --csv
mrc
mrc --json --sizes 1,2,3,5,8,13,100,400,1000,5000
mrc --no-opt --csv
simulate
simulate --policy lru
simulate --all
simulate --json --frames 0,3,50,700
simulate --policy lru --csv --period 7 --frames 0,1,2,5,40,300,100000
replay --trial-factor 3 --seed 7'
hostile="28 34 40"
plan $(($(echo $pairs | wc -w) + 8 * $(echo $hostile | wc -w) + 1))

# same NAME: every command on NAME.jsonl, through both builds.
same() {
	bad=
	while read -r c; do
		# shellcheck disable=SC2086 # c is a command line
		"$REF" $c "$1.jsonl" >ref.out 2>&1
		echo "exit $?" >>ref.out
		# shellcheck disable=SC2086
		"$WSS" $c "$1.jsonl" >got.out 2>&1
		echo "exit $?" >>got.out
		cmp -s ref.out got.out || {
			bad="$bad; $c"
			diff ref.out got.out | head -6 | sed 's/^/# /'
		}
	done <<-EOF2
		$commands
	EOF2
	is "${bad#; }" "" "$1: every analysis's output over ranges is the page-by-page output"
}
for p in $pairs; do
	same "$p"
done

# bounded NAME STATUS CMD...: CMD on NAME.jsonl within 10 s and 400 MB of
# address space, exiting STATUS; its stdout in out, stderr in err.
bounded() {
	name=$1 want=$2
	shift 2
	(
		ulimit -v 400000
		exec timeout 10 "$WSS" "$@" "$name.jsonl" >out 2>err
	)
	is $? "$want" "$name: wss $* (exit $want, within 10 s and 400 MB)" || sed 's/^/# /' err
}
for k in $hostile; do
	$TR hostile "$k" "h$k.trace" "h$k.jsonl" "h$k.trace" || bail "trace.py could not write h$k"
	n=$((1 << k))
	bounded "h$k" 0 heatmap --csv --page-bins 24
	# three intervals of 2^k pages each: 3 x 2^k touches in the cells
	is "$(awk -F, 'NR > 1 { t += $7 } END { printf "%.0f", t }' out)" "$((3 * n))" "h$k: the cells count every page"
	bounded "h$k" 0 window --window 2 --csv
	# 2^k; 2^k carried by the move plus 3/4 2^k new; 1/2 2^k and 2^k
	is "$(awk -F, 'NR > 1 { printf "%s ", $3 }' out)" "$n $((7 * n / 4)) $((3 * n / 2)) " \
		"h$k: the window follows the move and the unmap over ranges"
	bounded "h$k" 0 mrc --no-opt --json
	bounded "h$k" 0 simulate --policy lru --csv
	# interval 2 references the first half again, at distance 2^k: hits
	# from 2^k frames on
	is "$(awk -F, -v n=$n '$2 == n / 2 && $3 == "all" { printf "%s ", $5 } $2 == n && $3 == "all" { print $5 }' out)" \
		"0 $((n / 2))" "h$k: simulate's LRU over ranges"
	# the per-reference analyses refuse the string in one line
	for c in mrc simulate; do
		(
			ulimit -v 400000
			exec timeout 10 "$WSS" $c "h$k.jsonl" >out 2>>err.all
		)
		echo "exit $?" >>err.all
	done
	(
		ulimit -v 400000
		exec timeout 10 "$WSS" replay --trial-factor 1 "h$k.jsonl" >out 2>>err.all
	)
	echo "exit $?" >>err.all
	is "$(grep -c '^wss: \(mrc\|simulate\): .*: more than 134217728 references\|^wss: replay: .* pages to map, more than this machine.s memory\|^exit 2$' err.all)" 6 \
		"h$k: mrc with OPT, simulate and replay refuse it in one line each (exit 2)" || sed 's/^/# /' err.all
	rm -f err.all
done
# the HTML report falls back on the LRU curves over ranges
(
	ulimit -v 400000
	exec timeout 10 "$WSS" report --html h40.html h40.jsonl >out 2>err
)
is "$?:$(python3 -c '
import json
s = open("h40.html").read()
a = json.JSONDecoder().raw_decode(s[s.index("\"analyses\":") + 11:])[0]
print(len(a["mrc"]["curve"]), "opt_misses" in a["mrc"]["curve"][0], [r["policy"] for r in a["simulate"]["results"]][0])
')" "0:43 False lru" "h40: report --html draws the LRU curves over ranges (no OPT, LRU alone)"
done_testing
