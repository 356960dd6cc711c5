#!/bin/sh
# The HTML report at scale (issue 16): a synthetic profile of SAMPLES
# samples of THREADS threads (bench/html-synth.py), the time `wss report
# --html` takes and the page's size, then the page opened REPS times in
# headless Chromium (tests/tap/browser.py): the page's own clock from
# navigation to drawn (rendered_ms), and the driver's from navigate to
# drawn (load_ms), and one wheel step on the timeline to the frame that
# shows it (zoom_ms, every chart redrawn), medians.
# usage: bench/html.sh [SAMPLES [THREADS [REPS]]]   (make bench-html)
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
SAMPLES=${1:-100000}
THREADS=${2:-64}
REPS=${3:-3}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/wss-bench-html.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

python3 "$top_srcdir/bench/html-synth.py" --samples "$SAMPLES" --threads "$THREADS" -o "$OUT/p.jsonl" || exit 1
t0=$(date +%s%N)
"$top_builddir/wss" report --html "$OUT/p.html" "$OUT/p.jsonl" || exit 1
t1=$(date +%s%N)
printf 'profile   %d samples x %d threads, %d bytes\n' "$SAMPLES" "$THREADS" "$(stat -c %s "$OUT/p.jsonl")"
printf 'wss       report --html: %.2f s\n' "$(echo "$t0 $t1" | awk '{ print ($2 - $1) / 1e9 }')"
printf 'page      %d bytes\n' "$(stat -c %s "$OUT/p.html")"
i=0
: >"$OUT/r"
: >"$OUT/l"
: >"$OUT/z"
while [ $i -lt "$REPS" ]; do
	python3 "$top_srcdir/tests/tap/browser.py" "$OUT/p.html" --timeout 120 >"$OUT/b" || { cat "$OUT/b"; exit 1; }
	grep -q '^errors 0$' "$OUT/b" || { echo "bench: the page had errors:"; grep '^error' "$OUT/b"; exit 1; }
	awk '$1 == "rendered_ms" { print $2 }' "$OUT/b" >>"$OUT/r"
	awk '$1 == "load_ms" { print $2 }' "$OUT/b" >>"$OUT/l"
	awk '$1 == "zoom_ms" { print $2 }' "$OUT/b" >>"$OUT/z"
	i=$((i + 1))
done
printf 'chromium  navigation to drawn: %s ms (page clock), navigate to drawn: %s ms (driver), median of %d\n' \
	"$(median <"$OUT/r")" "$(median <"$OUT/l")" "$REPS"
printf 'zoom      one wheel step to its frame drawn: %s ms, median\n' "$(median <"$OUT/z")"
