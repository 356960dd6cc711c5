#!/bin/sh
# The decoder against Python's tomllib on documents of our own (and the
# example session file): the same value from both, or both reject.
python3 -c 'import tomllib' 2>/dev/null || { echo "1..0 # SKIP python3 has no tomllib"; exit 0; }
exec python3 "$top_srcdir/tests/toml/toml-test.py" "$top_builddir/tests/toml/toml-decoder" --tomllib \
	"$top_srcdir"/tests/toml/docs/*.toml "$top_srcdir/docs/session.example.toml"
