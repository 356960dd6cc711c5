#!/bin/sh
# Size limits for the sources outside tests/ (issue 32): no file over 800
# lines, no function over 150.  A function is found by the tree's style
# (.clang-format): its body opens with "{" alone at column 0 and closes
# with "}" at column 0; its length runs from the first line of its
# signature to that "}".  Today's offenders are named in
# tests/lint/size-allow, each with the issue that will split it: they
# pass, and a file or function that newly crosses a limit fails.  An
# allow-list entry that no longer offends is noted, to be taken off.
#
# usage: check-size.sh [SRCDIR]   (default: the checkout this script is in)
# Prints one line per offence; exits 1 on any.
srcdir=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$srcdir" || exit 2
allow=tests/lint/size-allow
FILE_MAX=${FILE_MAX:-800}
FUNC_MAX=${FUNC_MAX:-150}
[ -f "$allow" ] || { echo "check-size: $allow: not found" >&2; exit 2; }

# The C sources: git's list when this is a checkout, else (a tarball) find.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files '*.c' '*.h' | grep -v '^tests/')
else
	files=$(find . -path ./tests -prune -o \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
fi

# One line per file and function over its limit: "FILE LINES" and
# "FILE:FUNCTION LINES".
offences=$(for f in $files; do
	[ -f "$f" ] || continue
	awk -v f="$f" -v fmax="$FILE_MAX" -v gmax="$FUNC_MAX" '
		# the signature: from the last line starting at column 0 with a
		# letter (its return type or its name), to the "{"
		/^[A-Za-z_]/ { sig = NR; name = "" }
		sig && name == "" && match($0, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/) {
			name = substr($0, RSTART, RLENGTH); sub(/[ \t]*\($/, "", name)
		}
		/^\{[ \t]*$/ && sig { start = sig; fname = name }
		/^\}/ && start {
			if (NR - start + 1 > gmax) print f ":" fname " " NR - start + 1
			start = 0; sig = 0
		}
		/^[^A-Za-z_]/ && !start && !/^[ \t]/ && !/^\{/ { sig = 0 }
		END { if (NR > fmax) print f " " NR }
	' "$f"
done)

status=0
# Offences not in the allow-list (its lines: "NAME # issue N: why").
allowed=$(sed 's/#.*//; s/[ \t]*$//' "$allow" | grep -v '^$')
echo "$offences" | while read -r what n; do
	[ -n "$what" ] || continue
	echo "$allowed" | grep -qxF "$what" && continue
	case $what in
	*:*) echo "check-size: $what: $n lines (over $FUNC_MAX): split it, or name it in $allow with the issue that will" ;;
	*) echo "check-size: $what: $n lines (over $FILE_MAX): split it, or name it in $allow with the issue that will" ;;
	esac
	echo x
done | grep -v '^x$' && status=1
# Allow-list entries that no longer offend: a note, not a failure (a branch
# that splits one need not race the list's edit).
for what in $allowed; do
	echo "$offences" | grep -q "^$what " && continue
	echo "check-size: note: $what is within the limits now: take it off $allow"
done
exit $status
