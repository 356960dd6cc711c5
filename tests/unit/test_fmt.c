/* Formatting without stdio: numbers, JSON strings, profile records. */
#include "config.h"
#include "common/fmt.h"

#include <string.h>

#include "engine/profile.h"
#include "tests/tap/tap.h"

int main(void)
{
	char buf[256];
	wss_fmt_t f;
	plan(11);
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

	wss_profile_summary_t s = {.samples = 4, .sum_pages = 1394, .peak_pages = 534, .total_pages = 1098, .page_size = 4096};
	wss_fmt_init(&f, buf, sizeof buf);
	wss_profile_summary_text(&f, &s);
	is_str(wss_fmt_cstr(&f), "data avg/peak/total: 348.5/534/1098 pages (1.4/2.1/4.3 MiB)", "summary line");
	wss_fmt_reset(&f);
	wss_profile_summary(&f, &s);
	ok(strstr(wss_fmt_cstr(&f), "\"data\":{\"avg\":348.5,\"peak\":534,\"total\":1098}") != NULL, "summary record");
	ok(f.len && buf[f.len - 1] == '\n', "records end with a newline");
	wss_fmt_reset(&f);
	wss_profile_sample_t smp = {.seq = 3, .t_ns = 300, .data_pages = 12, .faults = 5};
	wss_profile_sample_begin(&f, &smp);
	wss_profile_sample_thread(&f, true, 101, 12, 5, -1);
	wss_profile_sample_end(&f);
	is_str(wss_fmt_cstr(&f),
	       "{\"type\":\"sample\",\"seq\":3,\"t_ns\":300,\"cpu_ns\":0,\"data_pages\":12,\"faults\":5,\"coarse\":0,"
	       "\"threads\":[{\"tid\":101,\"data_pages\":12,\"faults\":5}]}\n",
	       "sample record");
	wss_profile_summary_t z = {.page_size = 4096};
	wss_fmt_reset(&f);
	wss_profile_summary_text(&f, &z);
	is_str(wss_fmt_cstr(&f), "data avg/peak/total: 0.0/0/0 pages (0.0/0.0/0.0 MiB)", "no samples");
	return done_testing();
}
