/* The session schema: durations, sample rates and percentages, the file layer (types, ranges, unknown and
 * not-yet-implemented keys with suggestions, each error with file:line:col),
 * the environment layer, flags, precedence and validation. */
#include "config.h"
#include "config/config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/tap/tap.h"

static int dur(const char *s, uint64_t *v) { return wss_dur_parse(s, v); }

static char err[1024];

/* Load TOML text into c (after defaults); returns the error code. */
static int load(wss_config_t *c, const char *text)
{
	wss_config_defaults(c);
	err[0] = '\0';
	return wss_config_load(c, "s.toml", text, strlen(text), NULL, err, sizeof err);
}

/* A file that must be rejected with exactly this message. */
static const struct {
	const char *toml, *msg;
} bad_files[] = {
	{"[session]\ninterval \"10ms\"\n", "s.toml:2:10: expected '=' after key \"interval\""},
	{"[session]\nintervall = \"10ms\"\n", "s.toml:2:1: unknown key \"intervall\" in [session]; did you mean \"interval\"?"},
	{"[sesion]\n", "s.toml:1:2: unknown section [sesion]; did you mean [session]?"},
	{"[frob]\n", "s.toml:1:2: unknown section [frob] (sections: [session], [track], [peaks], [report])"},
	{"interval = \"10ms\"\n", "s.toml:1:1: key \"interval\" must be in the [session] section"},
	{"[track]\ninterval = \"1s\"\n", "s.toml:2:1: unknown key \"interval\" in [track]; it belongs in [session]"},
	{"[session]\ninterval = 0\n", "s.toml:2:12: session.interval: must be positive"},
	{"[session]\ninterval = -5\n", "s.toml:2:12: session.interval: must be positive"},
	{"[session]\ninterval = \"0ms\"\n", "s.toml:2:12: session.interval: must be positive"},
	{"[session]\ninterval = 1.5\n",
	 "s.toml:2:12: session.interval: expected a duration such as \"100ms\" or integer nanoseconds, got a float"},
	{"[session]\ninterval = \"10 ms\"\n",
	 "s.toml:2:12: session.interval: not a duration: \"10 ms\" (a number and ns, us, ms or s, e.g. \"100ms\")"},
	{"[session]\ntime_base = \"wal\"\n",
	 "s.toml:2:13: session.time_base: unknown value \"wal\" (expected \"wall\", \"cpu\" or \"manual\"); did you mean "
	 "\"wall\"?"},
	{"[track]\nbackend = \"refbits\"\n",
	 "s.toml:2:11: track.backend: backend \"refbits\" is not available in this version of wss (available: auto, "
	 "mprotect, uffd-wp, hybrid)"},
	{"[track]\nbackend = \"mprotec\"\n",
	 "s.toml:2:11: track.backend: unknown value \"mprotec\" (expected \"auto\", \"mprotect\", \"uffd-wp\" or "
	 "\"hybrid\"); did you "
	 "mean "
	 "\"mprotect\"?"},
	{"[track]\nheap = \"yes\"\n", "s.toml:2:8: track.heap: expected true or false, got a string"},
	{"[track]\nfile_mmap = \"no\"\n", "s.toml:2:13: track.file_mmap: expected true or false, got a string"},
	{"[track]\nshared = 2\n", "s.toml:2:10: track.shared: expected true or false, got an integer"},
	{"[peaks]\nsensitivity = 0\n", "s.toml:2:15: peaks.sensitivity: out of range (from 0.001 to 1000.0)"},
	{"[peaks]\nsensitivity = \"high\"\n", "s.toml:2:15: peaks.sensitivity: expected a number, got a string"},
	{"[peaks]\nstack_depth = 129\n", "s.toml:2:15: peaks.stack_depth: out of range (from 1 to 128)"},
	{"[peaks]\nmax = 1.5\n", "s.toml:2:7: peaks.max: expected an integer, got a float"},
	{"[report]\nhot_pages = -1\n", "s.toml:2:13: report.hot_pages: out of range"},
	{"[track]\ncode = 1\n", "s.toml:2:8: track.code: expected true or false, got an integer"},
	{"[session]\nfollow_fork = 1\n", "s.toml:2:15: session.follow_fork: expected true or false, got an integer"},
	{"[[session]]\n", "s.toml:1:3: [session] must be a table, not an array"},
	{"session = 3\n", "s.toml:1:1: [session] must be a table"},
	{"[session]\noutput = \"\"\n", "s.toml:2:10: session.output: empty path"},
	{"[session]\noutput = \"x.%q\"\n",
	 "s.toml:2:10: session.output: unknown %-sequence in \"x.%q\" (use %p, %t, %n or %%)"},
	{"[session]\noutput = \"a\\u0000b\"\n", "s.toml:2:10: session.output: contains a NUL character"},
	{"[session]\ninterval = \"10ms\"\ninterval = \"20ms\"\n", "s.toml:3:1: duplicate key \"interval\""},
	{"[session]\nwindow = 2021-01-01\n",
	 "s.toml:2:10: session.window: expected a duration such as \"100ms\" or integer nanoseconds, got a date/time"},
	{"\xef\xbb\xbf[session]\noutput = \"caf\xc3\xa9\xff\"\n", "s.toml:2:15: invalid UTF-8"},
	/* track.mode */
	{"[track]\nmode = \"sample\"\n",
	 "s.toml:2:8: track.mode: unknown value \"sample\" (expected \"auto\", \"exact\" or \"sampled\"); did you mean "
	 "\"sampled\"?"},
	{"[track]\nmode = \"fast\"\n",
	 "s.toml:2:8: track.mode: unknown value \"fast\" (expected \"auto\", \"exact\" or \"sampled\")"},
	{"[track]\nmode = 1\n", "s.toml:2:8: track.mode: expected a string, got an integer"},
	{"[session]\nmode = \"exact\"\n", "s.toml:2:1: unknown key \"mode\" in [session]; it belongs in [track]"},
	/* track.sample_rate */
	{"[track]\nsample_rate = \"1/100\"\n",
	 "s.toml:2:15: track.sample_rate: N must be a power of two: \"1/100\" (1/64 or 1/128?)"},
	{"[track]\nsample_rate = \"1/3\"\n",
	 "s.toml:2:15: track.sample_rate: N must be a power of two: \"1/3\" (1/2 or 1/4?)"},
	{"[track]\nsample_rate = \"1/1\"\n",
	 "s.toml:2:15: track.sample_rate: \"1/1\" samples every page; use track.mode = \"exact\" instead"},
	{"[track]\nsample_rate = \"1/0\"\n",
	 "s.toml:2:15: track.sample_rate: out of range: \"1/0\" (1/N with N from 2 to 1073741824, 2^30)"},
	{"[track]\nsample_rate = \"1/2147483648\"\n",
	 "s.toml:2:15: track.sample_rate: out of range: \"1/2147483648\" (1/N with N from 2 to 1073741824, 2^30)"},
	{"[track]\nsample_rate = \"1/99999999999999999999999\"\n",
	 "s.toml:2:15: track.sample_rate: out of range: \"1/99999999999999999999999\" (1/N with N from 2 to "
	 "1073741824, 2^30)"},
	{"[track]\nsample_rate = \"64\"\n",
	 "s.toml:2:15: track.sample_rate: not a rate: \"64\" (1/N with N a power of two, e.g. \"1/64\")"},
	{"[track]\nsample_rate = \"2/64\"\n",
	 "s.toml:2:15: track.sample_rate: not a rate: \"2/64\" (1/N with N a power of two, e.g. \"1/64\")"},
	{"[track]\nsample_rate = \"1/ 64\"\n",
	 "s.toml:2:15: track.sample_rate: not a rate: \"1/ 64\" (1/N with N a power of two, e.g. \"1/64\")"},
	{"[track]\nsample_rate = \"1/\"\n",
	 "s.toml:2:15: track.sample_rate: not a rate: \"1/\" (1/N with N a power of two, e.g. \"1/64\")"},
	{"[track]\nsample_rate = \"1/64x\"\n",
	 "s.toml:2:15: track.sample_rate: not a rate: \"1/64x\" (1/N with N a power of two, e.g. \"1/64\")"},
	{"[track]\nsample_rate = \"0.015625\"\n",
	 "s.toml:2:15: track.sample_rate: not a rate: \"0.015625\" (1/N with N a power of two, e.g. \"1/64\")"},
	{"[track]\nsample_rate = 64\n", "s.toml:2:15: track.sample_rate: expected a rate such as \"1/64\", got an integer"},
	{"[track]\nsample_rate = 0.015625\n",
	 "s.toml:2:15: track.sample_rate: expected a rate such as \"1/64\", got a float"},
	{"[track]\nsampling_rate = \"1/64\"\n",
	 "s.toml:2:1: unknown key \"sampling_rate\" in [track]; did you mean \"sample_rate\"?"},
	/* session.overhead */
	{"[session]\noverhead = \"60%\"\n", "s.toml:2:12: session.overhead: out of range: \"60%\" (from 0.1% to 50%)"},
	{"[session]\noverhead = \"50.0001%\"\n",
	 "s.toml:2:12: session.overhead: out of range: \"50.0001%\" (from 0.1% to 50%)"},
	{"[session]\noverhead = \"0.05%\"\n",
	 "s.toml:2:12: session.overhead: out of range: \"0.05%\" (from 0.1% to 50%)"},
	{"[session]\noverhead = \"0%\"\n", "s.toml:2:12: session.overhead: out of range: \"0%\" (from 0.1% to 50%)"},
	{"[session]\noverhead = \"99999999999999999999%\"\n",
	 "s.toml:2:12: session.overhead: out of range: \"99999999999999999999%\" (from 0.1% to 50%)"},
	/* session.trace, session.trace_max */
	{"[session]\ntrace = \"yes\"\n", "s.toml:2:9: session.trace: expected true or false, got a string"},
	{"[session]\ntrace_max = \"1XB\"\n",
	 "s.toml:2:13: session.trace_max: not a size: \"1XB\" (a number and B, KiB, MiB, GiB or TiB, e.g. \"256MiB\")"},
	{"[session]\ntrace_max = \"64 MiB\"\n",
	 "s.toml:2:13: session.trace_max: not a size: \"64 MiB\" (a number and B, KiB, MiB, GiB or TiB, e.g. \"256MiB\")"},
	{"[session]\ntrace_max = \"2TiB\"\n", "s.toml:2:13: session.trace_max: out of range: \"2TiB\" (from 4KiB to 1TiB)"},
	{"[session]\ntrace_max = \"4095B\"\n", "s.toml:2:13: session.trace_max: out of range: \"4095B\" (from 4KiB to 1TiB)"},
	{"[session]\ntrace_max = 100\n", "s.toml:2:13: session.trace_max: out of range (from 4KiB to 1TiB)"},
	{"[session]\ntrace_max = \"99999999999999999999TiB\"\n",
	 "s.toml:2:13: session.trace_max: out of range: \"99999999999999999999TiB\" (from 4KiB to 1TiB)"},
	/* session.precision */
	{"[session]\nprecision = \"150%\"\n", "s.toml:2:13: session.precision: out of range: \"150%\" (from 0.1% to 100%)"},
	{"[session]\nprecision = \"0.01%\"\n", "s.toml:2:13: session.precision: out of range: \"0.01%\" (from 0.1% to 100%)"},
	{"[session]\nprecision = \"5\"\n",
	 "s.toml:2:13: session.precision: not a percentage: \"5\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\nprecision = 0.05\n", "s.toml:2:13: session.precision: expected a percentage such as \"2%\", got a float"},
	{"[session]\noverhead = \"2\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \"2\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = \"2 %\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \"2 %\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = \"-2%\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \"-2%\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = \".5%\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \".5%\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = \"2.%\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \"2.%\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = \"2%%\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \"2%%\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = \"%\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \"%\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = \"1.00001%\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \"1.00001%\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = \"2 percent\"\n",
	 "s.toml:2:12: session.overhead: not a percentage: \"2 percent\" (a number and %, e.g. \"2%\" or \"0.5%\")"},
	{"[session]\noverhead = 2\n", "s.toml:2:12: session.overhead: expected a percentage such as \"2%\", got an integer"},
	{"[session]\noverhead = 0.02\n", "s.toml:2:12: session.overhead: expected a percentage such as \"2%\", got a float"},
};

/* Valid sample rates and percentages, and what they hold. */
static const struct {
	const char *s;
	uint32_t level;
} good_rates[] = {{"1/2", 1}, {"1/4", 2}, {"1/64", 6}, {"1/4096", 12}, {"1/1073741824", 30}, {"1/0064", 6}};
static const struct {
	const char *s;
	uint32_t ppm;
} good_percents[] = {{"0.1%", 1000}, {"0.5%", 5000},	  {"2%", 20000},      {"10%", 100000},
		     {"50%", 500000}, {"1.2345%", 12345}, {"2.50%", 25000}, {"02%", 20000}};
#define NGOOD (sizeof good_rates / sizeof *good_rates + sizeof good_percents / sizeof *good_percents)

int main(void)
{
	uint64_t v = 0;
	wss_config_t c;
	plan(13 + (int)(sizeof bad_files / sizeof *bad_files) + 2 * (int)NGOOD + 36 + 26 + 7 + 4 + 3 + 3 + 4);

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

	for (size_t i = 0; i < sizeof bad_files / sizeof *bad_files; i++) {
		int r = load(&c, bad_files[i].toml);
		ok(r == EINVAL && !strcmp(err, bad_files[i].msg), "rejected: %s", bad_files[i].msg);
		if (strcmp(err, bad_files[i].msg))
			diag("got: %s (%d)", err, r);
	}

	/* Every valid rate and percentage, parsed and through a file. */
	for (size_t i = 0; i < sizeof good_rates / sizeof *good_rates; i++) {
		uint32_t l = 0;
		ok(wss_sample_rate_parse(good_rates[i].s, &l) == 0 && l == good_rates[i].level, "rate %s is 1/2^%u",
		   good_rates[i].s, good_rates[i].level);
		char text[128];
		snprintf(text, sizeof text, "[track]\nmode = \"sampled\"\nsample_rate = \"%s\"\n", good_rates[i].s);
		ok(load(&c, text) == 0 && wss_config_validate(&c, err, sizeof err) == 0 &&
		       c.sample_level == good_rates[i].level && c.mode == WSS_MODE_SAMPLED,
		   "sampled at %s in a file: %s", good_rates[i].s, err);
	}
	for (size_t i = 0; i < sizeof good_percents / sizeof *good_percents; i++) {
		uint32_t ppm = 0;
		ok(wss_percent_parse(good_percents[i].s, &ppm) == 0 && ppm == good_percents[i].ppm, "%s is %u ppm",
		   good_percents[i].s, good_percents[i].ppm);
		char text[128];
		snprintf(text, sizeof text, "[session]\noverhead = \"%s\"\n", good_percents[i].s);
		ok(load(&c, text) == 0 && wss_config_validate(&c, err, sizeof err) == 0 &&
		       c.overhead_ppm == good_percents[i].ppm,
		   "overhead %s in a file: %s", good_percents[i].s, err);
	}
	wss_config_defaults(&c);
	is_int(c.precision_ppm, 50000, "session.precision's default is 5%%");
	ok(load(&c, "[session]\nprecision = \"100%\"\n") == 0 && c.precision_ppm == 1000000, "precision 100%% in a file");
	ok(load(&c, "[session]\nprecision = \"0.5%\"\n") == 0 && c.precision_ppm == 5000 && c.overhead_ppm == 20000,
	   "precision 0.5%% in a file, the budget untouched");
	static const struct {
		const char *s;
		uint64_t b;
	} good_sizes[] = {{"4096", 4096},   {"4KiB", 4096},	     {"64MiB", 64ULL << 20}, {"256MiB", 256ULL << 20},
			  {"3GiB", 3ULL << 30}, {"1TiB", 1ULL << 40}, {"5000B", 5000}};
	for (size_t i = 0; i < sizeof good_sizes / sizeof *good_sizes; i++) {
		uint64_t b = 0;
		char text[128];
		snprintf(text, sizeof text, "[session]\ntrace = true\ntrace_max = \"%s\"\n", good_sizes[i].s);
		ok(wss_size_parse(good_sizes[i].s, &b) == 0 && b == good_sizes[i].b && load(&c, text) == 0 &&
		       wss_config_validate(&c, err, sizeof err) == 0 && c.trace && c.trace_max == good_sizes[i].b,
		   "trace_max %s is %llu bytes, in a file too", good_sizes[i].s, (unsigned long long)good_sizes[i].b);
	}
	uint64_t sz;
	is_int(wss_size_parse("", &sz), EINVAL, "size: empty");
	is_int(wss_size_parse("1 KiB", &sz), EINVAL, "size: a space before the unit");
	is_int(wss_size_parse("1kB", &sz), EINVAL, "size: kB is not a unit (KiB is)");
	is_int(wss_size_parse("99999999999TiB", &sz), ERANGE, "size: past 2^63 bytes");
	uint32_t l = 99;
	is_int(wss_sample_rate_parse("1/48", &l), EDOM, "1/48: not a power of two");
	is_int(wss_sample_rate_parse("1/1", &l), EEXIST, "1/1: every page");
	is_int(wss_sample_rate_parse("1/2147483648", &l), ERANGE, "1/2^31: out of range");
	is_int(wss_sample_rate_parse("1/0", &l), ERANGE, "1/0: out of range");
	is_int(wss_sample_rate_parse("", &l), EINVAL, "empty: syntax");
	ok(l == 99, "a rejected rate leaves level alone");

	/* The three keys' defaults and the cross-key rule: a fixed rate only
	 * in sampled mode, with both keys named. */
	wss_config_defaults(&c);
	ok(c.mode == WSS_MODE_AUTO && c.sample_level == 0 && c.overhead_ppm == 20000,
	   "defaults: mode auto, no fixed rate, overhead 2%%");
	ok(load(&c, "[track]\nsample_rate = \"1/64\"\n") == 0 && wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       !strcmp(err, "s.toml:2:15: track.sample_rate needs track.mode = \"sampled\" (track.mode is \"auto\", the "
			    "default)"),
	   "a rate with the default mode: %s", err);
	ok(load(&c, "[track]\nmode = \"exact\"\nsample_rate = \"1/64\"\n") == 0 &&
	       wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       !strcmp(err, "s.toml:3:15: track.sample_rate needs track.mode = \"sampled\" (track.mode is \"exact\", from "
			    "s.toml:2:8)"),
	   "a rate with mode exact: %s", err);
	ok(load(&c, "[track]\nmode = \"auto\"\nsample_rate = \"1/8\"\n") == 0 &&
	       wss_config_validate(&c, err, sizeof err) == EINVAL && strstr(err, "(track.mode is \"auto\", from s.toml:2:8)"),
	   "a rate with mode auto, set in the file: %s", err);
	ok(load(&c, "[track]\nmode = \"sampled\"\n[session]\noverhead = \"0.5%\"\n") == 0 &&
	       wss_config_validate(&c, err, sizeof err) == 0 && c.mode == WSS_MODE_SAMPLED && c.sample_level == 0 &&
	       c.overhead_ppm == 5000,
	   "sampled without a rate: the budget sets it: %s", err);
	char *env9[] = {"WSS_TRACK_MODE=sampled", "WSS_TRACK_SAMPLE_RATE=1/256", "WSS_SESSION_OVERHEAD=10%", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env9, err, sizeof err) == 0 && wss_config_validate(&c, err, sizeof err) == 0 &&
	       c.mode == WSS_MODE_SAMPLED && c.sample_level == 8 && c.overhead_ppm == 100000 &&
	       c.src[WSS_KEY_TRACK_MODE].kind == WSS_SRC_ENV && c.src[WSS_KEY_TRACK_SAMPLE_RATE].kind == WSS_SRC_ENV &&
	       c.src[WSS_KEY_SESSION_OVERHEAD].kind == WSS_SRC_ENV,
	   "WSS_TRACK_MODE, WSS_TRACK_SAMPLE_RATE, WSS_SESSION_OVERHEAD: %s", err);
	char *env10[] = {"WSS_TRACK_SAMPLE_RATE=1/256", "WSS_TRACK_MODE=exact", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env10, err, sizeof err) == 0 && wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       !strcmp(err, "WSS_TRACK_SAMPLE_RATE: track.sample_rate needs track.mode = \"sampled\" (track.mode is "
			    "\"exact\", from environment WSS_TRACK_MODE)"),
	   "the rule in the environment: %s", err);
	char *env11[] = {"WSS_SESSION_OVERHEAD=2", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env11, err, sizeof err) == EINVAL &&
	       !strcmp(err, "WSS_SESSION_OVERHEAD: session.overhead: not a percentage: \"2\" (a number and %, e.g. \"2%\" "
			    "or \"0.5%\")"),
	   "a bad percentage names the variable: %s", err);
	char *env12[] = {"WSS_TRACK_SAMPLING_RATE=1/64", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env12, err, sizeof err) == EINVAL &&
	       !strcmp(err, "WSS_TRACK_SAMPLING_RATE: unknown setting; did you mean WSS_TRACK_SAMPLE_RATE?"),
	   "the old name of the rate: %s", err);
	wss_config_defaults(&c);
	ok(wss_config_set_flag(&c, "track.mode", "sampled", "--mode", err, sizeof err) == 0 &&
	       wss_config_set_flag(&c, "track.sample_rate", "1/16", "--sample-rate", err, sizeof err) == 0 &&
	       wss_config_set_flag(&c, "session.overhead", "5%", "--overhead", err, sizeof err) == 0 &&
	       wss_config_validate(&c, err, sizeof err) == 0 && c.sample_level == 4 && c.overhead_ppm == 50000 &&
	       c.src[WSS_KEY_TRACK_SAMPLE_RATE].kind == WSS_SRC_FLAG,
	   "--mode, --sample-rate, --overhead: %s", err);
	ok(wss_config_set_flag(&c, "track.sample_rate", "1/3", "--sample-rate", err, sizeof err) == EINVAL &&
	       !strcmp(err, "--sample-rate: track.sample_rate: N must be a power of two: \"1/3\" (1/2 or 1/4?)"),
	   "a bad --sample-rate names the flag: %s", err);
	ok(wss_config_set_flag(&c, "session.overhead", "51%", "--overhead", err, sizeof err) == EINVAL &&
	       !strcmp(err, "--overhead: session.overhead: out of range: \"51%\" (from 0.1% to 50%)"),
	   "a bad --overhead names the flag: %s", err);
	ok(wss_config_set_flag(&c, "track.mode", "exactly", "--mode", err, sizeof err) == EINVAL &&
	       strstr(err, "--mode: track.mode: unknown value \"exactly\"") == err && strstr(err, "did you mean \"exact\"?"),
	   "a bad --mode names the flag: %s", err);
	{
		char out[8192];
		wss_fmt_t pf;
		wss_fmt_init(&pf, out, sizeof out);
		wss_config_print(&c, &pf);
		wss_fmt_cstr(&pf);
		ok(strstr(out, "mode = \"sampled\"  # flag --mode\n") && strstr(out, "sample_rate = \"1/16\"  # flag --sample-rate\n") &&
		       strstr(out, "overhead = \"5%\"  # flag --overhead\n"),
		   "config check prints the three keys");
		ok(load(&c, out) == 0 && wss_config_validate(&c, err, sizeof err) == 0 && c.sample_level == 4 &&
		       c.overhead_ppm == 50000 && c.mode == WSS_MODE_SAMPLED,
		   "and its output reads back: %s", err);
		wss_fmt_init(&pf, out, sizeof out);
		wss_config_json(&c, &pf);
		wss_fmt_cstr(&pf);
		ok(strstr(out, "\"overhead\":\"5%\",\"precision\":\"5%\",\"trace\":false,\"trace_max\":\"256MiB\"},") && strstr(out, "\"mode\":\"sampled\",\"sample_rate\":\"1/16\","),
		   "the header's config object has them: %s", out);
		wss_config_defaults(&c);
		wss_fmt_init(&pf, out, sizeof out);
		wss_config_print(&c, &pf);
		wss_fmt_cstr(&pf);
		ok(strstr(out, "\n# sample_rate: not set, session.overhead sets the rate  # default\n") != NULL,
		   "an unset rate is a comment in config check");
		ok(load(&c, out) == 0 && c.sample_level == 0, "which reads back as unset: %s", err);
		wss_config_defaults(&c);
		wss_fmt_init(&pf, out, sizeof out);
		wss_config_sources_json(&c, &pf);
		wss_fmt_cstr(&pf);
		ok(strstr(out, "\"track.mode\":\"default\",\"track.sample_rate\":\"default\"") &&
		       strstr(out, "\"session.overhead\":\"default\""),
		   "config_source has them");
	}

	/* A complete, valid file. */
	const char *good = "# a session\n"
			   "[session]\n"
			   "output = \"out.%n.%p\"\n"
			   "time_base = \"manual\"\n"
			   "interval = \"10ms\"\n"
			   "window = 30_000_000 # ns\n"
			   "[track]\n"
			   "backend = \"mprotect\"\n"
			   "heap = false\n"
			   "anon_mmap = false\n"
			   "data_segments = false\n"
			   "[peaks]\n"
			   "enabled = false\n"
			   "sensitivity = 2.5\n"
			   "max = 3\n"
			   "stack_depth = 7\n"
			   "[report]\n"
			   "hot_pages = 9\n"
			   "summary = false\n";
	ok(load(&c, good) == 0, "a complete file loads: %s", err);
	ok(wss_config_validate(&c, err, sizeof err) == 0, "and validates");
	is_str(c.output, "out.%n.%p", "output");
	ok(c.time_base == WSS_TIME_MANUAL && c.interval_ns == 10000000ULL && c.window_ns == 30000000ULL &&
	       c.window_intervals == 3,
	   "time base, interval, window (integer nanoseconds)");
	ok(c.backend == WSS_BACKEND_MPROTECT && !c.track_heap && !c.track_anon_mmap && !c.track_data_segments &&
	       !c.report_summary,
	   "track and report keys");
	ok(!c.peaks_enabled && c.peaks_sensitivity_milli == 2500 && c.peaks_max == 3 && c.peaks_stack_depth == 7 &&
	       c.report_hot_pages == 9,
	   "peaks keys and report.hot_pages");
	ok(c.src[WSS_KEY_SESSION_INTERVAL].kind == WSS_SRC_FILE && c.src[WSS_KEY_SESSION_INTERVAL].line == 5 &&
	       c.src[WSS_KEY_SESSION_INTERVAL].col == 12,
	   "the source of interval is s.toml:5:12");
	is_str(c.file, "s.toml", "the file is recorded");
	/* Dotted keys and inline tables reach the same keys. */
	ok(load(&c, "session.interval = \"5ms\"\ntrack = { heap = false }\n") == 0 && c.interval_ns == 5000000ULL &&
	       !c.track_heap,
	   "dotted keys and inline tables: %s", err);
	ok(load(&c, "") == 0 && c.interval_ns == 100000000ULL && c.src[WSS_KEY_SESSION_INTERVAL].kind == WSS_SRC_DEFAULT,
	   "an empty file is all defaults");
	ok(load(&c, "[peaks]\n[report]\n") == 0, "empty sections are fine");

	/* Cross-key validation names where the offending value came from. */
	ok(load(&c, "[session]\ninterval = \"100ms\"\nwindow = \"250ms\"\n") == 0, "loads");
	ok(wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       !strcmp(err, "s.toml:3:10: session.window must be a whole multiple of session.interval (window 250ms, "
			    "interval 100ms)"),
	   "window not a multiple: %s", err);
	ok(load(&c, "[session]\ninterval = 50000\n") == 0 && wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       !strcmp(err, "s.toml:2:12: session.interval must be at least 100us"),
	   "interval below 100us: %s", err);
	ok(load(&c, "[session]\ninterval = 10\n") == 0 && wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       strstr(err, "nanoseconds: 10ms?"),
	   "a tiny unitless interval hints at nanoseconds: %s", err);
	ok(load(&c, "[session]\ninterval = 9223372036854775807\n") == 0 && wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       !strcmp(err, "s.toml:2:12: session.interval must be at most 3600s"),
	   "an interval of 2^63 - 1 ns (past where twice it overflows): %s", err);
	ok(load(&c, "[session]\ninterval = \"3600s\"\nwindow = \"7200s\"\n") == 0 &&
	       wss_config_validate(&c, err, sizeof err) == 0 && c.window_intervals == 2,
	   "an hour's interval and a two hours' window: %s", err);
	ok(load(&c, "[session]\ninterval = \"1s\"\nwindow = \"604801s\"\n") == 0 &&
	       wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       !strcmp(err, "s.toml:3:10: session.window must be at most 604800s (a week)"),
	   "a window past a week: %s", err);

	/* report.idle_after: whole intervals, rounded up; ten by default. */
	ok(load(&c, "[session]\ninterval = \"100ms\"\n[report]\nidle_after = \"350ms\"\n") == 0 &&
	       wss_config_validate(&c, err, sizeof err) == 0 && c.idle_after_intervals == 4,
	   "idle_after 350ms at 100ms intervals: 4 intervals (%u) %s", c.idle_after_intervals, err);
	ok(load(&c, "[session]\ninterval = \"10ms\"\n") == 0 && wss_config_validate(&c, err, sizeof err) == 0 &&
	       c.idle_after_intervals == 10,
	   "idle_after not set: ten intervals (%u)", c.idle_after_intervals);
	ok(load(&c, "[report]\nidle_after = \"fast\"\n") == EINVAL &&
	       !strcmp(err, "s.toml:2:14: report.idle_after: not a duration: \"fast\" (a number and ns, us, ms or s, e.g. \"100ms\")"),
	   "idle_after not a duration: %s", err);
	ok(load(&c, "[session]\ninterval = \"100us\"\n[report]\nidle_after = \"1000s\"\n") == 0 &&
	       wss_config_validate(&c, err, sizeof err) == EINVAL &&
	       !strcmp(err, "s.toml:4:14: report.idle_after is more than 1000000 intervals"),
	   "idle_after past a million intervals: %s", err);

	/* The environment layer. */
	char *env1[] = {"WSS_SESSION_INTERVAL=10ms", "WSS_SESSION_WINDOW=30ms", "WSS_SESSION_TIME_BASE=manual",
			"WSS_SESSION_OUTPUT=out.%p", "WSS_TRACK_HEAP=0", "WSS_REPORT_SUMMARY=false", "OTHER=1", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env1, err, sizeof err) == 0 && wss_config_validate(&c, err, sizeof err) == 0,
	   "environment settings accepted");
	ok(c.interval_ns == 10000000ULL && c.window_intervals == 3 && c.time_base == WSS_TIME_MANUAL && !c.track_heap &&
	       !c.report_summary,
	   "interval 10ms, window 3 intervals, manual, heap off, summary off");
	is_str(c.output, "out.%p", "output pattern");
	ok(c.src[WSS_KEY_SESSION_INTERVAL].kind == WSS_SRC_ENV && c.src[WSS_KEY_TRACK_BACKEND].kind == WSS_SRC_DEFAULT,
	   "sources recorded");
	char *env2[] = {"WSS_SESSION_INTERVALL=10ms", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env2, err, sizeof err) == EINVAL &&
	       !strcmp(err, "WSS_SESSION_INTERVALL: unknown setting; did you mean WSS_SESSION_INTERVAL?"),
	   "misspelt variable: %s", err);
	char *env3[] = {"WSS_SESSION_TIME_BASE=sundial", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env3, err, sizeof err) == EINVAL && !strncmp(err, "WSS_SESSION_TIME_BASE: ", 23),
	   "bad value names the variable: %s", err);
	char *env4[] = {"WSS_TRACK_FILE_MMAP=0", "WSS_TRACK_SHARED=false", NULL};
	wss_config_defaults(&c);
	ok(c.track_file_mmap && c.track_shared && wss_config_from_env(&c, env4, err, sizeof err) == 0 &&
	       !c.track_file_mmap && !c.track_shared && c.track_anon_mmap,
	   "shared and file mappings are tracked by default; WSS_TRACK_FILE_MMAP=0 and WSS_TRACK_SHARED=false turn "
	   "them off: %s", err);
	char *env4b[] = {"WSS_TRACK_CODE=true", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env4b, err, sizeof err) == 0 && c.track_code, "WSS_TRACK_CODE=true sets track.code");
	char *env5[] = {"WSS_TRACK_HEAP=maybe", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env5, err, sizeof err) == EINVAL && strstr(err, "expected true or false"),
	   "bad boolean: %s", err);
	char *env6[] = {"WSS_CONFIG=x.toml", "WSS_TEST_VMA_BUDGET=300", "WSS_SESSIONX=1", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env6, err, sizeof err) == 0 && c.test_vma_budget == 300,
	   "other WSS_ variables are not settings");
	char *env7[] = {"WSS_SESSION_INTERVAL=10ms", "WSS_RUN_FLAGS=WSS_SESSION_OUTPUT,WSS_SESSION_INTERVAL", NULL};
	wss_config_defaults(&c);
	ok(wss_config_from_env(&c, env7, err, sizeof err) == 0 && c.src[WSS_KEY_SESSION_INTERVAL].kind == WSS_SRC_FLAG,
	   "variables set by wss run flags are recorded as flags");

	/* Precedence: defaults < file < environment < flags. */
	char *env8[] = {"WSS_SESSION_INTERVAL=20ms", "WSS_SESSION_WINDOW=40ms", NULL};
	ok(load(&c, "[session]\ninterval = \"10ms\"\nwindow = \"30ms\"\ntime_base = \"cpu\"\n") == 0 &&
	       wss_config_from_env(&c, env8, err, sizeof err) == 0 &&
	       wss_config_set_flag(&c, "session.window", "80ms", "--window", err, sizeof err) == 0 &&
	       wss_config_validate(&c, err, sizeof err) == 0,
	   "file, environment and a flag together: %s", err);
	ok(c.time_base == WSS_TIME_CPU && c.interval_ns == 20000000ULL && c.window_ns == 80000000ULL,
	   "the file sets time_base, the environment interval, the flag window");
	ok(c.src[WSS_KEY_SESSION_TIME_BASE].kind == WSS_SRC_FILE && c.src[WSS_KEY_SESSION_INTERVAL].kind == WSS_SRC_ENV &&
	       c.src[WSS_KEY_SESSION_WINDOW].kind == WSS_SRC_FLAG,
	   "and each is recorded with its source");
	ok(wss_config_set_flag(&c, "session.window", "soon", "--window", err, sizeof err) == EINVAL &&
	       strstr(err, "--window: session.window: not a duration") == err,
	   "a bad flag names the flag: %s", err);
	is_int(wss_config_set_flag(&c, "session.nope", "1", "--nope", err, sizeof err), ENOENT, "unknown flag key");

	/* Output and example. */
	char big[8192];
	wss_fmt_t f;
	wss_fmt_init(&f, big, sizeof big);
	wss_config_print(&c, &f);
	wss_fmt_cstr(&f);
	ok(strstr(big, "interval = \"20ms\"  # environment WSS_SESSION_INTERVAL\n") &&
	       strstr(big, "time_base = \"cpu\"  # s.toml:4:13\n") && strstr(big, "window = \"80ms\"  # flag --window\n"),
	   "config check prints each value with its source");
	wss_fmt_init(&f, big, sizeof big);
	wss_config_example(&f);
	wss_fmt_cstr(&f);
	ok(!f.overflow && load(&c, big) == 0, "the example file loads: %s", err);
	wss_config_t d;
	wss_config_defaults(&d);
	ok(wss_config_validate(&c, err, sizeof err) == 0 && wss_config_validate(&d, err, sizeof err) == 0 &&
	       c.interval_ns == d.interval_ns && c.window_ns == d.window_ns && !strcmp(c.output, d.output) &&
	       c.backend == d.backend && c.track_heap == d.track_heap && c.report_summary == d.report_summary &&
	       c.mode == d.mode && c.sample_level == d.sample_level && c.overhead_ppm == d.overhead_ppm,
	   "and holds the defaults");
	wss_fmt_init(&f, big, sizeof big);
	wss_config_json(&d, &f);
	wss_fmt_cstr(&f);
	is_str(big,
	       "{\"session\":{\"output\":\"wss.%p.jsonl\",\"time_base\":\"wall\",\"interval\":100000000,\"window\":"
	       "100000000,\"follow_fork\":true,\"follow_exec\":true,\"overhead\":\"2%\",\"precision\":\"5%\",\"trace\":false,\"trace_max\":\"256MiB\"},\"track\":{\"backend\":\"auto\","
	       "\"mode\":\"auto\",\"sample_rate\":null,\"heap\":true,\"anon_mmap\":true,\"shared\":true,\"file_mmap\":true,\"stacks\":true,\"data_segments\":true,\"library_data\":true,"
	       "\"code\":false,\"alloc_sites\":true},"
	       "\"peaks\":{\"enabled\":true,\"sensitivity\":5.0,\"max\":100,\"stack_depth\":32},"
	       "\"report\":{\"hot_pages\":20,\"idle_after\":1000000000,\"summary\":true}}",
	       "header config object");

	wss_time_base_t tb;
	ok(wss_time_base_parse("wall", &tb) == 0 && tb == WSS_TIME_WALL && !strcmp(wss_time_base_name(WSS_TIME_CPU), "cpu"),
	   "time base names");
	wss_config_file_error("s.toml", EFBIG, err, sizeof err);
	is_str(err, "s.toml: session file larger than 1 MiB", "file errors name the file");
	return done_testing();
}
