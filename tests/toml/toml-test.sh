#!/bin/sh
# TOML 1.0 conformance: every case of the toml-test suite (../shared/toml-test
# from the project root, or $TOML_TEST_DIR) through tests/toml-decoder.
suite=${TOML_TEST_DIR:-$top_srcdir/../shared/toml-test}
if [ ! -f "$suite/files-toml-1.0.0" ]; then
	echo "1..0 # SKIP toml-test suite not found at $suite (set TOML_TEST_DIR)"
	exit 0
fi
exec python3 "$top_srcdir/tests/toml/toml-test.py" "$top_builddir/tests/toml-decoder" "$suite"
