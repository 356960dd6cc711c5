/* The session schema: one table of keys (below) drives the TOML file layer,
 * the environment layer, `wss run` flags, validation, the example file,
 * `wss config check` and the profile header.  Setting one key is here too
 * (wss_config_set_key), so that every layer checks a value alike and says
 * the same of a bad one.  Keys that later versions will implement are
 * recognised, so that using one is a clear "not implemented in this
 * version" instead of an unknown key or, worse, silence. */
#include "config.h"
#include "config/config.h"
#include "config/config_internal.h"

#include <errno.h>
#include <string.h>

/* The range of each T_COUNT key, and of T_DECIMAL ones in thousandths. */
static const struct {
	int id;
	uint32_t min, max;
} ranges[] = {
	{WSS_KEY_PEAKS_SENSITIVITY, 1, 1000000},
	{WSS_KEY_PEAKS_MAX, 1, 1000000},
	{WSS_KEY_PEAKS_STACK_DEPTH, 1, WSS_STACK_DEPTH_MAX},
	{WSS_KEY_REPORT_HOT_PAGES, 0, 100000},
};

static void range_of(const keydef_t *k, uint32_t *min, uint32_t *max)
{
	*min = 0;
	*max = UINT32_MAX;
	for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++)
		if (ranges[i].id == k->id) {
			*min = ranges[i].min;
			*max = ranges[i].max;
		}
}

static const char *const time_bases[] = {"wall", "cpu", "manual", NULL};
static const char *const backends[] = {"auto", "mprotect", "uffd-wp", "hybrid", NULL};
static const char *const modes[] = {"auto", "exact", "sampled", NULL};
/* Backends DESIGN.md names that this version does not have yet. */
static const char *const backends_later[] = {"refbits", NULL};

const char *const wss_config_sections[] = {"session", "track", "peaks", "report", NULL};

const keydef_t wss_config_keys[] = {
	{"session", "output", WSS_KEY_SESSION_OUTPUT, T_STRING, NULL,
	 "Profile path.  %p pid, %t start time (UTC, YYYYMMDD-HHMMSS), %n program name, %% a '%'.\n"
	 "An existing file is never overwritten and a symbolic link never followed."},
	{"session", "time_base", WSS_KEY_SESSION_TIME_BASE, T_ENUM, time_bases,
	 "What drives the clock: \"wall\" time, process \"cpu\" time, or \"manual\"\n"
	 "(the program calls wss_tick() from <wss.h>)."},
	{"session", "interval", WSS_KEY_SESSION_INTERVAL, T_DURATION, NULL,
	 "Sampling interval T: a duration (\"100ms\", \"500us\", \"2s\") or integer nanoseconds;\n"
	 "at least 100us."},
	{"session", "window", WSS_KEY_SESSION_WINDOW, T_DURATION, NULL,
	 "Working-set window tau: a whole multiple of interval; a page counts in a\n"
	 "sample if it was touched in the last window.  Default: one interval."},
	{"session", "follow_fork", WSS_KEY_SESSION_FOLLOW_FORK, T_BOOL, NULL,
	 "Measure the children the program forks, each into its own profile (%p\n"
	 "tells them apart); false: a child stops measuring and writes nothing."},
	{"session", "follow_exec", WSS_KEY_SESSION_FOLLOW_EXEC, T_BOOL, NULL,
	 "Measure the programs it execs (they inherit LD_PRELOAD and these settings);\n"
	 "false: both are removed from the program's environment at start-up."},
	{"session", "overhead", WSS_KEY_SESSION_OVERHEAD, T_PERCENT, NULL,
	 "How much slower the program may run: the time wss's faults take on each of the\n"
	 "program's threads against that thread's wall time, plus the tick's arming and\n"
	 "harvesting against the interval's, measured every interval.  It sets the\n"
	 "sampling rate of track.mode \"auto\" and \"sampled\".  From \"0.1%\" to \"50%\"."},
	{"session", "precision", WSS_KEY_SESSION_PRECISION, T_PERCENT, NULL,
	 "The half-width of the 95% interval that track.mode \"auto\" aims for on each\n"
	 "interval's data estimate, within session.overhead: where both cannot hold, the\n"
	 "budget holds and the summary says which figure missed.  From \"0.1%\" to \"100%\"."},
	{"session", "trace", WSS_KEY_SESSION_TRACE, T_BOOL, NULL,
	 "Write a page trace beside the profile (NAME.trace for NAME.jsonl): per interval,\n"
	 "the pages touched (the sampled ones when sampled), written or read, and by which\n"
	 "thread, for `wss heatmap`, `wss window`, `wss mrc`, `wss simulate`, `wss replay`."},
	{"session", "trace_max", WSS_KEY_SESSION_TRACE_MAX, T_SIZE, NULL,
	 "The most a trace may take (\"256MiB\"; B, KiB, MiB, GiB or TiB, from 4KiB to 1TiB):\n"
	 "past it the trace stops, and the profile says so; the program runs on."},
	{"track", "backend", WSS_KEY_TRACK_BACKEND, T_ENUM, backends,
	 "How touches are seen: \"mprotect\" (PROT_NONE + SIGSEGV: reads and writes, per thread),\n"
	 "\"uffd-wp\" (userfaultfd write-protect + PAGEMAP_SCAN: writes only, no signals),\n"
	 "\"hybrid\" (both: reads and writes apart), or \"auto\": uffd-wp for a Go program,\n"
	 "else hybrid where the kernel allows (Linux 6.7+), else mprotect."},
	{"track", "mode", WSS_KEY_TRACK_MODE, T_ENUM, modes,
	 "\"exact\": every tracked page, whatever it costs; \"sampled\": one page in N, N set\n"
	 "every interval by session.overhead (or fixed by sample_rate), counts scaled up,\n"
	 "with 95% intervals; \"auto\": exact while exactness fits session.overhead, else sampled."},
	{"track", "sample_rate", WSS_KEY_TRACK_SAMPLE_RATE, T_RATE, NULL,
	 "A fixed sampling rate instead of one session.overhead sets: \"1/N\", one page in N,\n"
	 "N a power of two from 2 to 2^30 (\"1/64\").  Only with mode = \"sampled\"."},
	{"track", "heap", WSS_KEY_TRACK_HEAP, T_BOOL, NULL, "Track the heap (malloc and friends)."},
	{"track", "anon_mmap", WSS_KEY_TRACK_ANON_MMAP, T_BOOL, NULL, "Track private anonymous mmap() mappings."},
	{"track", "shared", WSS_KEY_TRACK_SHARED, T_BOOL, NULL,
	 "Track shared memory: MAP_SHARED anonymous mappings, System V segments (shmat),\n"
	 "and mappings of memfd and tmpfs files (POSIX shm_open).  Each process counts\n"
	 "its own first touches of a shared page."},
	{"track", "file_mmap", WSS_KEY_TRACK_FILE_MMAP, T_BOOL, NULL,
	 "Track mappings of regular files the program makes (a memory-mapped index, a\n"
	 "database file), private or shared, read or written; not executable ones (code:\n"
	 "track.code)."},
	{"track", "stacks", WSS_KEY_TRACK_STACKS, T_BOOL, NULL,
	 "Track stacks: the main thread's and each thread's the C library made.  Seen by\n"
	 "write-protection, so a stack page counts when written (its reads alone are not\n"
	 "seen), and only under the uffd-wp and hybrid backends."},
	{"track", "data_segments", WSS_KEY_TRACK_DATA_SEGMENTS, T_BOOL, NULL,
	 "Track the program's writable data segment (.data and .bss)."},
	{"track", "library_data", WSS_KEY_TRACK_LIBRARY_DATA, T_BOOL, NULL,
	 "Track the writable data segments of shared libraries, those loaded at start-up\n"
	 "and those dlopen()ed later (from the second tick after they load, until dlclose),\n"
	 "except the C library, the dynamic loader and their companions."},
	{"track", "code", WSS_KEY_TRACK_CODE, T_BOOL, NULL,
	 "Track the code working set too: the pages of the program's and its shared\n"
	 "libraries' executable segments run in each interval (the \"insn\" series).\n"
	 "Exact; costs a fault per code page run per interval (docs/backends.md)."},
	{"track", "alloc_sites", WSS_KEY_TRACK_ALLOC_SITES, T_BOOL, NULL,
	 "Record where the heap's and the program's mappings' memory was allocated: a\n"
	 "sample of allocations by bytes (one per 16 KiB allocated on average, fewer as\n"
	 "session.overhead requires), each with its call stack, and per site its live,\n"
	 "working-set and idle pages."},
	{"peaks", "enabled", WSS_KEY_PEAKS_ENABLED, T_BOOL, NULL,
	 "Detect peaks of the working set and record the call stacks that made them."},
	{"peaks", "sensitivity", WSS_KEY_PEAKS_SENSITIVITY, T_DECIMAL, NULL,
	 "g of the peak detector (docs/peaks.md): lower flags more.  A number > 0."},
	{"peaks", "max", WSS_KEY_PEAKS_MAX, T_COUNT, NULL, "At most this many peak records per process."},
	{"peaks", "stack_depth", WSS_KEY_PEAKS_STACK_DEPTH, T_COUNT, NULL,
	 "Frames kept of each first-touch site's call stack (at most 128)."},
	{"report", "hot_pages", WSS_KEY_REPORT_HOT_PAGES, T_COUNT, NULL,
	 "How many of the most often touched pages the summary lists (0: none)."},
	{"report", "idle_after", WSS_KEY_REPORT_IDLE_AFTER, T_DURATION, NULL,
	 "A live page not touched for this long is idle (allocation sites): a duration,\n"
	 "rounded up to whole intervals.  Default: ten intervals."},
	{"report", "summary", WSS_KEY_REPORT_SUMMARY, T_BOOL, NULL,
	 "Print the working-set summary and the profile's path on stderr at exit."},
};
#define NKEYS (sizeof wss_config_keys / sizeof *wss_config_keys)
const size_t wss_config_nkeys = NKEYS;

const keydef_t *wss_config_def_of(wss_key_t id)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (wss_config_keys[i].id == (int)id)
			return &wss_config_keys[i];
	return NULL;
}

int wss_config_choice(const char *const *list, const char *s)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return i;
	return -1;
}

int wss_time_base_parse(const char *s, wss_time_base_t *tb)
{
	int i = wss_config_choice(time_bases, s);
	if (i < 0)
		return EINVAL;
	*tb = (wss_time_base_t)i;
	return 0;
}

const char *wss_time_base_name(wss_time_base_t tb) { return time_bases[tb <= WSS_TIME_MANUAL ? tb : 0]; }

const char *wss_backend_name(wss_backend_id_t b) { return backends[b <= WSS_BACKEND_HYBRID ? b : 0]; }

const char *wss_mode_name(wss_mode_id_t m) { return modes[m <= WSS_MODE_SAMPLED ? m : 0]; }

void wss_config_key_name(const keydef_t *k, wss_fmt_t *f)
{
	wss_fmt_str(f, k->section);
	wss_fmt_ch(f, '.');
	wss_fmt_str(f, k->name);
}

/* ---- setting one key ---- */

static const char *a_type(wss_toml_type_t t)
{
	switch (t) {
	case WSS_TOML_STRING: return "a string";
	case WSS_TOML_INTEGER: return "an integer";
	case WSS_TOML_FLOAT: return "a float";
	case WSS_TOML_BOOL: return "a boolean";
	case WSS_TOML_ARRAY: return "an array";
	case WSS_TOML_TABLE: return "a table";
	default: return "a date/time";
	}
}

static int wrong_type(wss_fmt_t *e, const keydef_t *k, const char *want, const wss_toml_value_t *tv)
{
	wss_config_key_name(k, e);
	wss_fmt_str(e, ": expected ");
	wss_fmt_str(e, want);
	wss_fmt_str(e, ", got ");
	wss_fmt_str(e, a_type(tv->type));
	return EINVAL;
}

static int bad(wss_fmt_t *e, const keydef_t *k, const char *a, const char *quoted, const char *b)
{
	wss_config_key_name(k, e);
	wss_fmt_str(e, ": ");
	wss_fmt_str(e, a);
	if (quoted)
		wss_fmt_json_str(e, quoted);
	if (b)
		wss_fmt_str(e, b);
	return EINVAL;
}

/* The string form of the input, or NULL after reporting a type error. */
static const char *string_input(wss_fmt_t *e, const keydef_t *k, const input_t *in, const char *want, int *r)
{
	*r = 0;
	if (!in->tv)
		return in->s;
	if (in->tv->type != WSS_TOML_STRING) {
		*r = wrong_type(e, k, want, in->tv);
		return NULL;
	}
	if (strlen(in->tv->u.s.ptr) != in->tv->u.s.len) {
		*r = bad(e, k, "contains a NUL character", NULL, NULL);
		return NULL;
	}
	return in->tv->u.s.ptr;
}

/* A duration string that is a bare number: an error, for what it was
 * meant as is anyone's guess ("--window 3" as wss window's count of
 * intervals, "--interval 100" as milliseconds), with the likeliest
 * reading.  (A TOML integer is nanoseconds: its type says it is no
 * string someone forgot the unit of.) */
static int unitless(const wss_config_t *c, const keydef_t *k, const char *s, uint64_t n, wss_fmt_t *e)
{
	char hint[96];
	wss_fmt_t h;
	wss_fmt_init(&h, hint, sizeof hint);
	wss_fmt_str(&h, " (a number needs its unit: ns, us, ms or s; ");
	if (k->id == WSS_KEY_SESSION_WINDOW && n < 1000) {
		wss_config_fmt_dur(&h, n * c->interval_ns);
		wss_fmt_str(&h, " for ");
		wss_fmt_str(&h, s);
		wss_fmt_str(&h, n == 1 ? " interval?)" : " intervals?)");
	} else if (n < 1000) {
		wss_fmt_str(&h, s);
		wss_fmt_str(&h, "ms?)");
	} else {
		wss_config_fmt_dur(&h, n);
		wss_fmt_str(&h, ", read as nanoseconds?)");
	}
	wss_fmt_cstr(&h);
	return bad(e, k, "not a duration: ", s, hint);
}

static int set_duration(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	uint64_t ns;
	const char *want = "a duration such as \"100ms\" or integer nanoseconds";
	if (in->tv && in->tv->type == WSS_TOML_INTEGER) {
		if (in->tv->u.i <= 0)
			return bad(e, k, "must be positive", NULL, NULL);
		ns = (uint64_t)in->tv->u.i;
	} else {
		int r;
		const char *s = string_input(e, k, in, want, &r);
		if (!s)
			return r;
		r = wss_dur_parse(s, &ns);
		if (r == ERANGE)
			return bad(e, k, "duration too large: ", s, NULL);
		if (r)
			return bad(e, k, "not a duration: ", s, " (a number and ns, us, ms or s, e.g. \"100ms\")");
		if (ns == 0)
			return bad(e, k, "must be positive", NULL, NULL);
		if (s[strspn(s, "0123456789")] == '\0')
			return unitless(c, k, s, ns, e);
	}
	if (k->id == WSS_KEY_SESSION_INTERVAL)
		c->interval_ns = ns;
	else if (k->id == WSS_KEY_REPORT_IDLE_AFTER)
		c->idle_after_ns = ns;
	else
		c->window_ns = ns;
	return 0;
}

static int set_bool(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	bool v;
	if (in->tv) {
		if (in->tv->type != WSS_TOML_BOOL)
			return wrong_type(e, k, "true or false", in->tv);
		v = in->tv->u.b;
	} else if (!strcmp(in->s, "true") || !strcmp(in->s, "1")) {
		v = true;
	} else if (!strcmp(in->s, "false") || !strcmp(in->s, "0")) {
		v = false;
	} else {
		return bad(e, k, "expected true or false (or 1 or 0), got ", in->s, NULL);
	}
	switch (k->id) {
	case WSS_KEY_TRACK_HEAP: c->track_heap = v; break;
	case WSS_KEY_TRACK_ANON_MMAP: c->track_anon_mmap = v; break;
	case WSS_KEY_TRACK_SHARED: c->track_shared = v; break;
	case WSS_KEY_TRACK_FILE_MMAP: c->track_file_mmap = v; break;
	case WSS_KEY_TRACK_STACKS: c->track_stacks = v; break;
	case WSS_KEY_TRACK_DATA_SEGMENTS: c->track_data_segments = v; break;
	case WSS_KEY_TRACK_LIBRARY_DATA: c->track_library_data = v; break;
	case WSS_KEY_TRACK_CODE: c->track_code = v; break;
	case WSS_KEY_TRACK_ALLOC_SITES: c->track_alloc_sites = v; break;
	case WSS_KEY_SESSION_FOLLOW_FORK: c->follow_fork = v; break;
	case WSS_KEY_SESSION_FOLLOW_EXEC: c->follow_exec = v; break;
	case WSS_KEY_SESSION_TRACE: c->trace = v; break;
	case WSS_KEY_PEAKS_ENABLED: c->peaks_enabled = v; break;
	default: c->report_summary = v; break;
	}
	return 0;
}

static int set_enum(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	int r;
	const char *s = string_input(e, k, in, "a string", &r);
	if (!s)
		return r;
	int i = wss_config_choice(k->choices, s);
	if (i >= 0) {
		if (k->id == WSS_KEY_TRACK_BACKEND)
			c->backend = (wss_backend_id_t)i;
		else if (k->id == WSS_KEY_TRACK_MODE)
			c->mode = (wss_mode_id_t)i;
		else
			c->time_base = (wss_time_base_t)i;
		return 0;
	}
	if (k->id == WSS_KEY_TRACK_BACKEND && wss_config_choice(backends_later, s) >= 0)
		return bad(e, k, "backend ", s, " is not available in this version of wss (available: auto, mprotect, uffd-wp, hybrid)");
	wss_config_key_name(k, e);
	wss_fmt_str(e, ": unknown value ");
	wss_fmt_json_str(e, s);
	wss_fmt_str(e, " (expected ");
	const char *best = NULL;
	for (int j = 0; k->choices[j]; j++) {
		if (j)
			wss_fmt_str(e, k->choices[j + 1] ? ", " : " or ");
		wss_fmt_json_str(e, k->choices[j]);
		if (wss_config_close_enough(s, k->choices[j]) && !best)
			best = k->choices[j];
	}
	wss_fmt_ch(e, ')');
	if (best) {
		wss_fmt_str(e, "; did you mean ");
		wss_fmt_json_str(e, best);
		wss_fmt_ch(e, '?');
	}
	return EINVAL;
}

static int set_output(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	int r;
	const char *s = string_input(e, k, in, "a string", &r);
	if (!s)
		return r;
	if (!*s)
		return bad(e, k, "empty path", NULL, NULL);
	if (strlen(s) >= sizeof c->output)
		return bad(e, k, "path longer than 1023 bytes", NULL, NULL);
	char probe[WSS_OUTPUT_MAX + 64];
	if (wss_output_expand(s, 1, 0, "prog", probe, sizeof probe) == EINVAL)
		return bad(e, k, "unknown %-sequence in ", s, " (use %p, %t, %n or %%)");
	strcpy(c->output, s);
	return 0;
}

/* Is v in the key's range?  If not, say so.  Returns 0 or EINVAL. */
static int in_range(wss_fmt_t *e, const keydef_t *k, uint64_t v)
{
	uint32_t min, max;
	range_of(k, &min, &max);
	if (v >= min && v <= max)
		return 0;
	bad(e, k, "out of range (from ", NULL, NULL);
	if (k->type == T_DECIMAL)
		wss_config_fmt_milli(e, min);
	else
		wss_fmt_u64(e, min);
	wss_fmt_str(e, " to ");
	if (k->type == T_DECIMAL)
		wss_config_fmt_milli(e, max);
	else
		wss_fmt_u64(e, max);
	wss_fmt_ch(e, ')');
	return EINVAL;
}

static uint32_t *count_field(wss_config_t *c, int id)
{
	return id == WSS_KEY_PEAKS_MAX	       ? &c->peaks_max
	       : id == WSS_KEY_PEAKS_STACK_DEPTH ? &c->peaks_stack_depth
	       : id == WSS_KEY_REPORT_HOT_PAGES  ? &c->report_hot_pages
						 : &c->peaks_sensitivity_milli;
}

/* A whole number in [min, max]: a TOML integer, or digits in the
 * environment and on the command line. */
static int set_count(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	int64_t v = -1;
	if (in->tv) {
		if (in->tv->type != WSS_TOML_INTEGER)
			return wrong_type(e, k, "an integer", in->tv);
		v = in->tv->u.i;
	} else {
		const char *p = in->s;
		v = *p ? 0 : -1;
		for (; *p && v >= 0; p++)
			v = *p >= '0' && *p <= '9' && v < 100000000 ? v * 10 + (*p - '0') : -1;
		if (v < 0)
			return bad(e, k, "not a whole number: ", in->s, NULL);
	}
	if (v < 0 || in_range(e, k, (uint64_t)v))
		return v < 0 ? bad(e, k, "out of range", NULL, NULL) : EINVAL;
	*count_field(c, k->id) = (uint32_t)v;
	return 0;
}

/* A number > 0 with up to three decimals: a TOML float or integer, or the
 * same digits in the environment and on the command line. */
static int set_decimal(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	uint64_t m = 0;
	if (in->tv) {
		double d;
		if (in->tv->type == WSS_TOML_INTEGER)
			d = (double)in->tv->u.i;
		else if (in->tv->type == WSS_TOML_FLOAT)
			d = in->tv->u.f;
		else
			return wrong_type(e, k, "a number", in->tv);
		if (!(d >= 0 && d <= 4e6))
			m = UINT64_MAX;
		else
			m = (uint64_t)(d * 1000 + 0.5);
	} else {
		const char *p = in->s;
		int digits = 0, frac = -1;
		for (; *p; p++) {
			if (*p == '.' && frac < 0) {
				frac = 0;
				continue;
			}
			if (*p < '0' || *p > '9' || m > 4000000000ULL || frac >= 3)
				return bad(e, k, "not a number: ", in->s, " (e.g. 5 or 2.5)");
			m = m * 10 + (uint64_t)(*p - '0');
			digits++;
			if (frac >= 0)
				frac++;
		}
		if (!digits)
			return bad(e, k, "not a number: ", in->s, " (e.g. 5 or 2.5)");
		for (int i = frac < 0 ? 0 : frac; i < 3; i++)
			m *= 10;
	}
	if (in_range(e, k, m))
		return EINVAL;
	c->peaks_sensitivity_milli = (uint32_t)m;
	return 0;
}

/* "1/N", N a power of two from 2 to 2^30: a string everywhere. */
static int set_rate(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	int r;
	const char *s = string_input(e, k, in, "a rate such as \"1/64\"", &r);
	if (!s)
		return r;
	uint32_t level = 0;
	switch (wss_sample_rate_parse(s, &level)) {
	case 0: break;
	case EDOM: {
		/* The powers of two on either side, as the likely intent. */
		uint64_t n = 0, lo = 1;
		for (const char *p = s + 2; *p; p++)
			n = n * 10 + (uint64_t)(*p - '0'); /* at most 2^30: parsed above */
		while (lo * 2 < n)
			lo *= 2;
		bad(e, k, "N must be a power of two: ", s, " (");
		wss_fmt_str(e, "1/");
		wss_fmt_u64(e, lo);
		wss_fmt_str(e, " or 1/");
		wss_fmt_u64(e, lo * 2);
		wss_fmt_str(e, "?)");
		return EINVAL;
	}
	case ERANGE: return bad(e, k, "out of range: ", s, " (1/N with N from 2 to 1073741824, 2^30)");
	case EEXIST: return bad(e, k, "", s, " samples every page; use track.mode = \"exact\" instead");
	default: return bad(e, k, "not a rate: ", s, " (1/N with N a power of two, e.g. \"1/64\")");
	}
	c->sample_level = level;
	return 0;
}

/* A percentage from 0.1% to 50%: a string everywhere ("2%"). */
static int set_percent(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	int r;
	const char *s = string_input(e, k, in, "a percentage such as \"2%\"", &r);
	if (!s)
		return r;
	uint32_t ppm;
	if (wss_percent_parse(s, &ppm))
		return bad(e, k, "not a percentage: ", s, " (a number and %, e.g. \"2%\" or \"0.5%\")");
	if (k->id == WSS_KEY_SESSION_PRECISION) {
		if (ppm < WSS_PRECISION_MIN_PPM || ppm > WSS_PRECISION_MAX_PPM)
			return bad(e, k, "out of range: ", s, " (from 0.1% to 100%)");
		c->precision_ppm = ppm;
		return 0;
	}
	if (ppm < WSS_OVERHEAD_MIN_PPM || ppm > WSS_OVERHEAD_MAX_PPM)
		return bad(e, k, "out of range: ", s, " (from 0.1% to 50%)");
	c->overhead_ppm = ppm;
	return 0;
}

/* A size from 4 KiB to 1 TiB: a string with a unit ("256MiB"), or a
 * TOML integer of bytes. */
static int set_size(wss_config_t *c, const keydef_t *k, const input_t *in, wss_fmt_t *e)
{
	uint64_t b = 0;
	if (in->tv && in->tv->type == WSS_TOML_INTEGER) {
		if (in->tv->u.i < 0)
			return bad(e, k, "out of range (from 4KiB to 1TiB)", NULL, NULL);
		b = (uint64_t)in->tv->u.i;
	} else {
		int r;
		const char *s = string_input(e, k, in, "a size such as \"256MiB\"", &r);
		if (!s)
			return r;
		if (wss_size_parse(s, &b) == EINVAL)
			return bad(e, k, "not a size: ", s, " (a number and B, KiB, MiB, GiB or TiB, e.g. \"256MiB\")");
		if (b < WSS_TRACE_MAX_MIN || b > WSS_TRACE_MAX_MAX)
			return bad(e, k, "out of range: ", s, " (from 4KiB to 1TiB)");
	}
	if (b < WSS_TRACE_MAX_MIN || b > WSS_TRACE_MAX_MAX)
		return bad(e, k, "out of range (from 4KiB to 1TiB)", NULL, NULL);
	c->trace_max = b;
	return 0;
}

int wss_config_set_key(wss_config_t *c, const keydef_t *k, const input_t *in, wss_origin_t origin, wss_fmt_t *e)
{
	int r;
	switch (k->type) {
	case T_STRING: r = set_output(c, k, in, e); break;
	case T_DURATION: r = set_duration(c, k, in, e); break;
	case T_BOOL: r = set_bool(c, k, in, e); break;
	case T_COUNT: r = set_count(c, k, in, e); break;
	case T_DECIMAL: r = set_decimal(c, k, in, e); break;
	case T_RATE: r = set_rate(c, k, in, e); break;
	case T_PERCENT: r = set_percent(c, k, in, e); break;
	case T_SIZE: r = set_size(c, k, in, e); break;
	default: r = set_enum(c, k, in, e); break;
	}
	if (!r)
		c->src[k->id] = origin;
	return r;
}

int wss_config_not_implemented(wss_fmt_t *e, const keydef_t *k)
{
	wss_config_key_name(k, e);
	wss_fmt_str(e, " is not implemented in this version of wss; remove it");
	return EINVAL;
}
