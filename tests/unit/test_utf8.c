/* UTF-8 well-formedness and encoding (common/utf8.c): the edges of each
 * lead byte's range, overlongs, surrogates, past U+10FFFF, sequences cut
 * by the length, and every encoded length read back. */
#include "config.h"
#include "common/utf8.h"

#include <string.h>

#include "tests/tap/tap.h"

static const struct {
	const char *s;
	size_t n, want;
	const char *what;
} cases[] = {
	{"a", 1, 1, "ASCII"},
	{"\0", 1, 1, "NUL is a character"},
	{"\xc2\x80", 2, 2, "U+0080"},
	{"\xc1\xbf", 2, 0, "overlong two-byte form"},
	{"\xe0\xa0\x80", 3, 3, "U+0800"},
	{"\xe0\x9f\xbf", 3, 0, "overlong three-byte form"},
	{"\xed\x9f\xbf", 3, 3, "U+D7FF"},
	{"\xed\xa0\x80", 3, 0, "a UTF-16 surrogate"},
	{"\xef\xbf\xbd", 3, 3, "U+FFFD"},
	{"\xf0\x90\x80\x80", 4, 4, "U+10000"},
	{"\xf0\x8f\xbf\xbf", 4, 0, "overlong four-byte form"},
	{"\xf4\x8f\xbf\xbf", 4, 4, "U+10FFFF"},
	{"\xf4\x90\x80\x80", 4, 0, "past U+10FFFF"},
	{"\xf5\x80\x80\x80", 4, 0, "lead byte F5"},
	{"\x80", 1, 0, "a lone continuation byte"},
	{"\xe2\x82", 2, 0, "cut by the length"},
	{"\xe2\x82\xac", 2, 0, "cut by the length, the rest beyond it"},
	{"\xe2\x28\xac", 3, 0, "a bad continuation byte"},
};

int main(void)
{
	size_t ncases = sizeof cases / sizeof *cases;
	static const uint32_t cps[] = {0x41, 0x7ff, 0x800, 0xfffd, 0x10000, 0x10ffff};
	size_t ncps = sizeof cps / sizeof *cps;
	plan((int)(ncases + ncps));
	for (size_t i = 0; i < ncases; i++)
		is_int((int)wss_utf8_len((const unsigned char *)cases[i].s, cases[i].n), (int)cases[i].want, "%s",
		       cases[i].what);
	for (size_t i = 0; i < ncps; i++) {
		char b[4];
		size_t n = wss_utf8_put(b, cps[i]);
		size_t want = cps[i] < 0x80 ? 1 : cps[i] < 0x800 ? 2 : cps[i] < 0x10000 ? 3 : 4;
		ok(n == want && wss_utf8_len((const unsigned char *)b, n) == n, "U+%04X: %zu bytes, read back whole",
		   (unsigned)cps[i], n);
	}
	return done_testing();
}
