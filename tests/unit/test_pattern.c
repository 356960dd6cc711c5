/* The profile path pattern (common/pattern.c): each %-sequence, the UTC
 * start time on a leap day, an unknown sequence and an expansion too long
 * for its buffer; and the session directory named after a profile. */
#include "config.h"
#include "common/pattern.h"

#include <errno.h>
#include <string.h>

#include "tests/tap/tap.h"

int main(void)
{
	plan(12);
	char out[64];
	ok(wss_output_expand("wss.%p.jsonl", 42, 0, "/usr/bin/prog", out, sizeof out) == 0 &&
	       !strcmp(out, "wss.42.jsonl"),
	   "%%p");
	ok(wss_output_expand("%n-%p-100%%", 7, 0, "/usr/bin/prog", out, sizeof out) == 0 && !strcmp(out, "prog-7-100%"),
	   "%%n and %%%%: %s", out);
	ok(wss_output_expand("%t", 1, 1795834862ULL, "p", out, sizeof out) == 0 && !strcmp(out, "20261128-030102"),
	   "%%t is the UTC start time: %s", out);
	ok(wss_output_expand("%t", 1, 951782400ULL, "p", out, sizeof out) == 0 && !strcmp(out, "20000229-000000"),
	   "%%t on a leap day: %s", out);
	is_int(wss_output_expand("x%q", 1, 0, "p", out, sizeof out), EINVAL, "unknown sequence");
	is_int(wss_output_expand("%p%p%p%p%p%p%p%p%p%p%p%p", 123456, 0, "p", out, 16), ENAMETOOLONG, "too long");
	static const char *const dirs[][2] = {
		{"wss.4242.jsonl", "wss.4242.d"},
		{"/tmp/x/run.jsonl", "/tmp/x/run.d"},
		{"run.jsonl.2", "run.jsonl.2.d"},   /* a name the bare preload took after an existing one */
		{"a.jsonl/.jsonl", "a.jsonl/.jsonl.d"}, /* no name left without the suffix */
		{"out", "out.d"},
	};
	for (size_t k = 0; k < sizeof dirs / sizeof *dirs; k++)
		ok(wss_output_session_dir(dirs[k][0], out, sizeof out) == 0 && !strcmp(out, dirs[k][1]),
		   "session directory of %s: %s", dirs[k][0], out);
	is_int(wss_output_session_dir("wss.123456789.jsonl", out, 8), ENAMETOOLONG, "session directory: too long");
	return done_testing();
}
