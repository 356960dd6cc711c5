/* Formatting without stdio (common/fmt.c): numbers, JSON and TOML strings,
 * fixed and growable buffers. */
#include "config.h"
#include "common/fmt.h"

#include <string.h>

#include "tests/tap/tap.h"

int main(void)
{
	char buf[256];
	wss_fmt_t f;
	plan(8);
	wss_fmt_init(&f, buf, sizeof buf);
	wss_fmt_u64(&f, 0);
	wss_fmt_ch(&f, ' ');
	wss_fmt_i64(&f, -9223372036854775807LL - 1);
	wss_fmt_ch(&f, ' ');
	wss_fmt_u64(&f, 18446744073709551615ULL);
	is_str(wss_fmt_cstr(&f), "0 -9223372036854775808 18446744073709551615", "integers");
	wss_fmt_reset(&f);
	wss_fmt_fixed(&f, 12345, 2);
	wss_fmt_ch(&f, ' ');
	wss_fmt_fixed(&f, 5, 3);
	is_str(wss_fmt_cstr(&f), "123.45 0.005", "fixed point");
	wss_fmt_reset(&f);
	wss_fmt_json_str(&f, "a\"b\\c\n\x01\xc3\xa9\xff");
	is_str(wss_fmt_cstr(&f), "\"a\\\"b\\\\c\\u000a\\u0001\xc3\xa9\xef\xbf\xbd\"", "JSON escapes, UTF-8 kept, bad bytes replaced");
	wss_fmt_reset(&f);
	wss_fmt_escaped(&f, "a\0\x7f\"\xc3\xa9", 5, WSS_FMT_JSON);
	is_str(wss_fmt_cstr(&f), "a\\u0000\x7f\\\"\xef\xbf\xbd", "JSON: NULs within the length, DEL kept, a character cut by the length replaced");
	wss_fmt_reset(&f);
	wss_fmt_escaped(&f, "a\x01\x7f\xff\\", 5, WSS_FMT_TOML);
	is_str(wss_fmt_cstr(&f), "a\\u0001\\u007F\xff\\\\", "TOML: DEL escaped, upper-case hex, bytes kept");
	char small[8];
	wss_fmt_init(&f, small, sizeof small);
	wss_fmt_str(&f, "0123456789");
	ok(f.overflow && !strcmp(wss_fmt_cstr(&f), "0123456"), "fixed buffer truncates and flags overflow");
	wss_fmt_t g;
	ok(wss_fmt_init_growable(&g, 16) == 0, "growable buffer");
	for (int i = 0; i < 1000; i++)
		wss_fmt_str(&g, "abcdefghij");
	ok(!g.overflow && g.len == 10000, "grows to 10000 bytes");
	wss_fmt_release(&g);
	return done_testing();
}
