/* Durations, time bases, environment settings and output patterns. */
#include "config.h"
#include "config/config.h"

#include <errno.h>
#include <string.h>

#include "tests/tap/tap.h"

static int dur(const char *s, uint64_t *v) { return wss_dur_parse(s, v); }

int main(void)
{
	uint64_t v = 0;
	plan(27);
	ok(dur("100ms", &v) == 0 && v == 100000000ULL, "100ms");
	ok(dur("500us", &v) == 0 && v == 500000ULL, "500us");
	ok(dur("2s", &v) == 0 && v == 2000000000ULL, "2s");
	ok(dur("1.5s", &v) == 0 && v == 1500000000ULL, "1.5s");
	ok(dur("250", &v) == 0 && v == 250, "a bare integer is nanoseconds");
	ok(dur("7ns", &v) == 0 && v == 7, "7ns");
	is_int(dur("", &v), EINVAL, "empty is invalid");
	is_int(dur("ms", &v), EINVAL, "a unit alone is invalid");
	is_int(dur("10 ms", &v), EINVAL, "no space before the unit");
	is_int(dur("10min", &v), EINVAL, "unknown unit");
	is_int(dur("1.5", &v), EINVAL, "a fraction needs a unit");
	is_int(dur("-1s", &v), EINVAL, "negative");
	is_int(dur("99999999999999999999s", &v), ERANGE, "overflow");

	wss_config_t c;
	char err[256];
	char *env1[] = {"WSS_SESSION_INTERVAL=10ms", "WSS_SESSION_WINDOW=30ms", "WSS_SESSION_TIME_BASE=manual",
			"WSS_SESSION_OUTPUT=out.%p", "OTHER=1", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env1, err, sizeof err) == 0, "environment settings accepted");
	ok(c.interval_ns == 10000000ULL && c.window_intervals == 3 && c.time_base == WSS_TIME_MANUAL,
	   "interval 10ms, window 3 intervals, manual");
	is_str(c.output, "out.%p", "output pattern");
	ok(c.src_interval == WSS_SRC_ENV && c.src_output == WSS_SRC_ENV, "sources recorded");

	char *env2[] = {"WSS_SESSION_INTERVAL=10ms", "WSS_SESSION_WINDOW=25ms", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env2, err, sizeof err) == EINVAL && strstr(err, "whole multiple"),
	   "window not a multiple of interval: %s", err);
	char *env3[] = {"WSS_SESSION_TIME_BASE=sundial", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env3, err, sizeof err) == EINVAL && strstr(err, "WSS_SESSION_TIME_BASE"),
	   "bad time base names the variable: %s", err);
	char *env4[] = {"WSS_SESSION_INTERVAL=0", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env4, err, sizeof err) == EINVAL, "zero interval rejected: %s", err);
	char *env5[] = {NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env5, err, sizeof err) == 0 && c.interval_ns == 100000000ULL &&
	       c.window_intervals == 1 && c.time_base == WSS_TIME_WALL,
	   "defaults: 100ms, window 1, wall");

	char out[64];
	ok(wss_output_expand("wss.%p.jsonl", 42, "/usr/bin/prog", out, sizeof out) == 0 && !strcmp(out, "wss.42.jsonl"),
	   "%%p");
	ok(wss_output_expand("%n-%p-100%%", 7, "/usr/bin/prog", out, sizeof out) == 0 && !strcmp(out, "prog-7-100%"),
	   "%%n and %%%%: %s", out);
	is_int(wss_output_expand("x%q", 1, "p", out, sizeof out), EINVAL, "unknown sequence");
	is_int(wss_output_expand("%p%p%p%p%p%p%p%p%p%p%p%p", 123456, "p", out, 16), ENAMETOOLONG, "too long");
	is_str(wss_time_base_name(WSS_TIME_CPU), "cpu", "time base names");
	wss_time_base_t tb;
	ok(wss_time_base_parse("wall", &tb) == 0 && tb == WSS_TIME_WALL, "parse wall");
	return done_testing();
}
