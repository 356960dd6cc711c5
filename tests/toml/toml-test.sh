#!/bin/sh
# TOML 1.0 conformance: every case of the toml-test suite through
# tests/toml/toml-decoder.  The suite is ../shared/toml-test from the project
# root ($TOML_TEST_DIR overrides); in a clone of a local checkout it is
# looked for relative to the checkout the clone came from, too, and beside
# the checkout that holds a distcheck's unpacked tarball.
suite=${TOML_TEST_DIR:-$top_srcdir/../shared/toml-test}
if [ -z "${TOML_TEST_DIR:-}" ] && [ ! -f "$suite/files-toml-1.0.0" ]; then
	origin=$(git -C "$top_srcdir" remote get-url origin 2>/dev/null)
	case $origin in
	/*) [ -f "$origin/../shared/toml-test/files-toml-1.0.0" ] && suite=$origin/../shared/toml-test ;;
	esac
fi
# make distcheck unpacks the tarball inside the checkout (wss-VERSION/): the
# suite beside that checkout.
if [ -z "${TOML_TEST_DIR:-}" ] && [ ! -f "$suite/files-toml-1.0.0" ]; then
	top=$(git -C "$top_srcdir" rev-parse --show-toplevel 2>/dev/null)
	[ -n "$top" ] && [ -f "$top/../shared/toml-test/files-toml-1.0.0" ] && suite=$top/../shared/toml-test
fi
if [ ! -f "$suite/files-toml-1.0.0" ]; then
	echo "1..0 # SKIP toml-test suite not found at $suite (set TOML_TEST_DIR)"
	exit 0
fi
exec python3 "$top_srcdir/tests/toml/toml-test.py" "$top_builddir/tests/toml/toml-decoder" "$suite"
