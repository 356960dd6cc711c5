/* The session schema: one table of keys (below) drives the TOML file layer,
 * the environment layer, `wss run` flags, validation, the example file,
 * `wss config check` and the profile header.  Keys that later versions will
 * implement are recognised, so that using one is a clear "not implemented
 * in this version" instead of an unknown key or, worse, silence. */
#include "config.h"
#include "config/config.h"

#include <errno.h>
#include <string.h>

typedef enum { T_STRING, T_DURATION, T_BOOL, T_ENUM, T_COUNT, T_DECIMAL, T_RATE, T_PERCENT, T_SIZE } ktype_t;

typedef struct keydef {
	const char *section, *name;
	int id; /* wss_key_t, or -1: recognised, not implemented in this version */
	ktype_t type;
	const char *const *choices; /* T_ENUM */
	const char *help;
} keydef_t;

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

static const char *const sections[] = {"session", "track", "peaks", "report", NULL};

static const keydef_t keys[] = {
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
#define NKEYS (sizeof keys / sizeof *keys)

static const keydef_t *def_of(wss_key_t id)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].id == (int)id)
			return &keys[i];
	return NULL;
}

void wss_config_defaults(wss_config_t *c)
{
	memset(c, 0, sizeof *c);
	strcpy(c->output, "wss.%p.jsonl");
	c->time_base = WSS_TIME_WALL;
	c->interval_ns = 100000000ULL;
	c->window_ns = 0; /* 0: one interval */
	c->window_intervals = 1;
	c->backend = WSS_BACKEND_AUTO;
	c->mode = WSS_MODE_AUTO;
	c->sample_level = 0; /* not set: the budget sets the rate */
	c->overhead_ppm = WSS_OVERHEAD_DEFAULT_PPM;
	c->precision_ppm = WSS_PRECISION_DEFAULT_PPM;
	c->trace_max = 256ULL << 20;
	c->track_heap = c->track_anon_mmap = c->track_data_segments = true;
	c->track_shared = c->track_file_mmap = c->track_stacks = c->track_library_data = true;
	c->report_summary = true;
	c->peaks_enabled = true;
	c->peaks_sensitivity_milli = 5000;
	c->peaks_max = 100;
	c->peaks_stack_depth = 32;
	c->report_hot_pages = 20;
	c->track_alloc_sites = true;
	c->follow_fork = true;
	c->follow_exec = true;
}

int wss_dur_parse(const char *s, uint64_t *ns)
{
	const char *p = s;
	uint64_t whole = 0, frac = 0, frac_div = 1;
	int digits = 0;
	while (*p >= '0' && *p <= '9') {
		if (whole > (UINT64_MAX - 9) / 10)
			return ERANGE;
		whole = whole * 10 + (uint64_t)(*p++ - '0');
		digits++;
	}
	if (!digits)
		return EINVAL;
	int has_frac = 0;
	if (*p == '.') {
		p++;
		has_frac = 1;
		int fd = 0;
		while (*p >= '0' && *p <= '9') {
			if (frac_div < 1000000000ULL) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_div *= 10;
			}
			p++;
			fd++;
		}
		if (!fd)
			return EINVAL;
	}
	uint64_t mult;
	if (*p == '\0') {
		if (has_frac)
			return EINVAL;
		mult = 1;
	} else if (!strcmp(p, "ns")) {
		mult = 1;
	} else if (!strcmp(p, "us")) {
		mult = 1000;
	} else if (!strcmp(p, "ms")) {
		mult = 1000000;
	} else if (!strcmp(p, "s")) {
		mult = 1000000000;
	} else {
		return EINVAL;
	}
	if (whole > UINT64_MAX / mult || whole * mult > UINT64_MAX - frac * mult / frac_div)
		return ERANGE;
	*ns = whole * mult + frac * mult / frac_div;
	return 0;
}

static int choice(const char *const *list, const char *s)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(list[i], s))
			return i;
	return -1;
}

int wss_time_base_parse(const char *s, wss_time_base_t *tb)
{
	int i = choice(time_bases, s);
	if (i < 0)
		return EINVAL;
	*tb = (wss_time_base_t)i;
	return 0;
}

const char *wss_time_base_name(wss_time_base_t tb) { return time_bases[tb <= WSS_TIME_MANUAL ? tb : 0]; }

const char *wss_backend_name(wss_backend_id_t b) { return backends[b <= WSS_BACKEND_HYBRID ? b : 0]; }

const char *wss_mode_name(wss_mode_id_t m) { return modes[m <= WSS_MODE_SAMPLED ? m : 0]; }

int wss_sample_rate_parse(const char *s, uint32_t *level)
{
	if (s[0] != '1' || s[1] != '/' || !s[2])
		return EINVAL;
	uint64_t n = 0;
	for (const char *p = s + 2; *p; p++) {
		if (*p < '0' || *p > '9')
			return EINVAL;
		if (n <= (1ULL << WSS_SAMPLE_LEVEL_MAX))
			n = n * 10 + (uint64_t)(*p - '0');
	}
	if (n == 0 || n > (1ULL << WSS_SAMPLE_LEVEL_MAX))
		return ERANGE;
	if (n & (n - 1))
		return EDOM;
	if (n == 1)
		return EEXIST;
	uint32_t l = 0;
	while ((1ULL << l) < n)
		l++;
	*level = l;
	return 0;
}

int wss_size_parse(const char *s, uint64_t *bytes)
{
	static const struct {
		const char *unit;
		unsigned shift;
	} units[] = {{"", 0}, {"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"TiB", 40}};
	const char *p = s;
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX >> 1) / 10)
			return ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return EINVAL;
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (!strcmp(p, units[i].unit)) {
			if (v > (UINT64_MAX >> 1) >> units[i].shift)
				return ERANGE;
			*bytes = v << units[i].shift;
			return 0;
		}
	return EINVAL;
}

int wss_percent_parse(const char *s, uint32_t *ppm)
{
	const char *p = s;
	uint64_t v = 0;
	int digits = 0, frac = -1;
	for (; *p && *p != '%'; p++) {
		if (*p == '.' && frac < 0 && digits) {
			frac = 0;
			continue;
		}
		if (*p < '0' || *p > '9' || frac >= 4)
			return EINVAL;
		if (v < 100000000000ULL)
			v = v * 10 + (uint64_t)(*p - '0');
		digits++;
		if (frac >= 0)
			frac++;
	}
	if (!digits || frac == 0 || p[0] != '%' || p[1])
		return EINVAL;
	for (int i = frac < 0 ? 0 : frac; i < 4; i++)
		v *= 10; /* ten-thousandths of a percent: millionths */
	*ppm = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	return 0;
}

const char *wss_config_getenv(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

/* ---- suggestions ---- */

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* Levenshtein distance, ignoring ASCII case; names longer than 63 bytes
 * are never close to anything. */
static unsigned distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 63 || lb > 63)
		return 1000;
	unsigned row[64];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (lower(a[i - 1]) != lower(b[j - 1]));
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static bool close_enough(const char *typed, const char *known)
{
	size_t n = strlen(known);
	return distance(typed, known) <= (n >= 8 ? 3u : n >= 4 ? 2u : 1u);
}

const char *wss_config_closest_word(const char *typed, const char *const *words)
{
	const char *best = NULL;
	unsigned bd = 1000;
	for (int i = 0; words[i]; i++) {
		unsigned d = distance(typed, words[i]);
		if (close_enough(typed, words[i]) && d < bd)
			bd = d, best = words[i];
	}
	return best;
}

static const char *closest_section(const char *typed) { return wss_config_closest_word(typed, sections); }

/* The key closest to typed: in section sec (NULL: any section). */
static const keydef_t *closest_key(const char *sec, const char *typed)
{
	const keydef_t *best = NULL;
	unsigned bd = 1000;
	for (size_t i = 0; i < NKEYS; i++) {
		if (sec && strcmp(keys[i].section, sec))
			continue;
		unsigned d = distance(typed, keys[i].name);
		if (close_enough(typed, keys[i].name) && d < bd)
			bd = d, best = &keys[i];
	}
	return best;
}

static const keydef_t *find_key(const char *sec, const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].section, sec) && !strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

static const keydef_t *find_key_any_section(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* ---- formatting helpers ---- */

static void fmt_dur(wss_fmt_t *f, uint64_t ns)
{
	static const struct { uint64_t div; const char *unit; } u[] = {
		{1000000000ULL, "s"}, {1000000ULL, "ms"}, {1000ULL, "us"}, {1, "ns"}};
	for (size_t i = 0; i < 4; i++)
		if (ns % u[i].div == 0 || u[i].div == 1) {
			wss_fmt_u64(f, ns / u[i].div);
			wss_fmt_str(f, u[i].unit);
			return;
		}
}

/* A TOML basic string (`wss config check`). */
static void fmt_toml_str(wss_fmt_t *f, const char *s)
{
	wss_fmt_ch(f, '"');
	wss_fmt_escaped(f, s, strlen(s), WSS_FMT_TOML);
	wss_fmt_ch(f, '"');
}

static void env_name(const keydef_t *k, wss_fmt_t *f)
{
	wss_fmt_str(f, "WSS_");
	for (const char *p = k->section; *p; p++)
		wss_fmt_ch(f, (char)(*p - 'a' + 'A'));
	wss_fmt_ch(f, '_');
	for (const char *p = k->name; *p; p++)
		wss_fmt_ch(f, *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p);
}

#define ENV_NAME_MAX 64

/* A key's variable name in buf[ENV_NAME_MAX]. */
static const char *env_of(const keydef_t *k, char *buf)
{
	wss_fmt_t f;
	wss_fmt_init(&f, buf, ENV_NAME_MAX);
	env_name(k, &f);
	return wss_fmt_cstr(&f);
}

const char *wss_config_env_name(wss_key_t id, char *buf, size_t len)
{
	wss_fmt_t f;
	wss_fmt_init(&f, buf, len);
	const keydef_t *k = def_of(id);
	if (k)
		env_name(k, &f);
	return wss_fmt_cstr(&f);
}

static void key_name(const keydef_t *k, wss_fmt_t *f)
{
	wss_fmt_str(f, k->section);
	wss_fmt_ch(f, '.');
	wss_fmt_str(f, k->name);
}

/* "name:line:col: " */
static void at_file(wss_fmt_t *e, const char *name, unsigned line, unsigned col)
{
	wss_fmt_str(e, name);
	wss_fmt_ch(e, ':');
	wss_fmt_u64(e, line);
	wss_fmt_ch(e, ':');
	wss_fmt_u64(e, col);
	wss_fmt_str(e, ": ");
}

/* Where key id's value came from, as a message prefix. */
static void at_origin(const wss_config_t *c, wss_key_t id, wss_fmt_t *e)
{
	const wss_origin_t *o = &c->src[id];
	if (o->kind == WSS_SRC_FILE) {
		at_file(e, c->file, o->line, o->col);
	} else if (o->kind == WSS_SRC_ENV) {
		env_name(def_of(id), e);
		wss_fmt_str(e, ": ");
	} else if (o->kind == WSS_SRC_FLAG) {
		wss_fmt_str(e, o->flag);
		wss_fmt_str(e, ": ");
	}
}

/* A decimal kept in thousandths, as TOML writes a float: 5.0, 2.5, 0.125. */
static void fmt_milli(wss_fmt_t *f, uint32_t m)
{
	wss_fmt_u64(f, m / 1000);
	wss_fmt_ch(f, '.');
	uint32_t frac = m % 1000;
	char d[4] = {(char)('0' + frac / 100), (char)('0' + frac / 10 % 10), (char)('0' + frac % 10), 0};
	int n = 3;
	while (n > 1 && d[n - 1] == '0')
		d[--n] = 0;
	wss_fmt_str(f, d);
}

/* Bytes in the largest unit that divides them: 256MiB, 4KiB, 100B. */
static void fmt_size(wss_fmt_t *f, uint64_t b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;
	while (u < 4 && b && !(b & 1023)) {
		b >>= 10;
		u++;
	}
	wss_fmt_u64(f, b);
	wss_fmt_str(f, units[u]);
}

/* Millionths as a percentage: 2%, 0.5%, 0.125%. */
static void fmt_percent(wss_fmt_t *f, uint32_t ppm)
{
	wss_fmt_u64(f, ppm / 10000);
	uint32_t frac = ppm % 10000;
	if (frac) {
		char d[6] = {'.', (char)('0' + frac / 1000), (char)('0' + frac / 100 % 10), (char)('0' + frac / 10 % 10),
			     (char)('0' + frac % 10), 0};
		int n = 5;
		while (d[n - 1] == '0')
			d[--n] = 0;
		wss_fmt_str(f, d);
	}
	wss_fmt_ch(f, '%');
}

static void value_of(const wss_config_t *c, const keydef_t *k, wss_fmt_t *f, bool toml)
{
	switch ((wss_key_t)k->id) {
	case WSS_KEY_SESSION_OUTPUT:
		if (toml)
			fmt_toml_str(f, c->output);
		else
			wss_fmt_json_str(f, c->output);
		return;
	case WSS_KEY_SESSION_TIME_BASE:
	case WSS_KEY_TRACK_BACKEND:
		wss_fmt_ch(f, '"');
		wss_fmt_str(f, k->id == WSS_KEY_TRACK_BACKEND ? wss_backend_name(c->backend) : wss_time_base_name(c->time_base));
		wss_fmt_ch(f, '"');
		return;
	case WSS_KEY_SESSION_INTERVAL:
	case WSS_KEY_SESSION_WINDOW:
	case WSS_KEY_REPORT_IDLE_AFTER: {
		uint64_t ns = k->id == WSS_KEY_SESSION_INTERVAL ? c->interval_ns
			      : k->id == WSS_KEY_REPORT_IDLE_AFTER ? (c->idle_after_ns ? c->idle_after_ns : 10 * c->interval_ns)
			      : c->window_ns ? c->window_ns : c->interval_ns;
		if (toml) {
			wss_fmt_ch(f, '"');
			fmt_dur(f, ns);
			wss_fmt_ch(f, '"');
		} else {
			wss_fmt_u64(f, ns);
		}
		return;
	}
	case WSS_KEY_TRACK_MODE:
		wss_fmt_ch(f, '"');
		wss_fmt_str(f, wss_mode_name(c->mode));
		wss_fmt_ch(f, '"');
		return;
	case WSS_KEY_TRACK_SAMPLE_RATE: /* not set: JSON null (TOML has none: print and example say why) */
		if (!c->sample_level) {
			wss_fmt_str(f, "null");
			return;
		}
		wss_fmt_str(f, "\"1/");
		wss_fmt_u64(f, 1ULL << c->sample_level);
		wss_fmt_ch(f, '"');
		return;
	case WSS_KEY_SESSION_OVERHEAD:
		wss_fmt_ch(f, '"');
		fmt_percent(f, c->overhead_ppm);
		wss_fmt_ch(f, '"');
		return;
	case WSS_KEY_SESSION_PRECISION:
		wss_fmt_ch(f, '"');
		fmt_percent(f, c->precision_ppm);
		wss_fmt_ch(f, '"');
		return;
	case WSS_KEY_SESSION_FOLLOW_FORK: wss_fmt_str(f, c->follow_fork ? "true" : "false"); return;
	case WSS_KEY_SESSION_TRACE: wss_fmt_str(f, c->trace ? "true" : "false"); return;
	case WSS_KEY_SESSION_TRACE_MAX:
		wss_fmt_ch(f, '"');
		fmt_size(f, c->trace_max);
		wss_fmt_ch(f, '"');
		return;
	case WSS_KEY_SESSION_FOLLOW_EXEC: wss_fmt_str(f, c->follow_exec ? "true" : "false"); return;
	case WSS_KEY_TRACK_HEAP: wss_fmt_str(f, c->track_heap ? "true" : "false"); return;
	case WSS_KEY_TRACK_ANON_MMAP: wss_fmt_str(f, c->track_anon_mmap ? "true" : "false"); return;
	case WSS_KEY_TRACK_SHARED: wss_fmt_str(f, c->track_shared ? "true" : "false"); return;
	case WSS_KEY_TRACK_FILE_MMAP: wss_fmt_str(f, c->track_file_mmap ? "true" : "false"); return;
	case WSS_KEY_TRACK_STACKS: wss_fmt_str(f, c->track_stacks ? "true" : "false"); return;
	case WSS_KEY_TRACK_DATA_SEGMENTS: wss_fmt_str(f, c->track_data_segments ? "true" : "false"); return;
	case WSS_KEY_TRACK_LIBRARY_DATA: wss_fmt_str(f, c->track_library_data ? "true" : "false"); return;
	case WSS_KEY_TRACK_CODE: wss_fmt_str(f, c->track_code ? "true" : "false"); return;
	case WSS_KEY_TRACK_ALLOC_SITES: wss_fmt_str(f, c->track_alloc_sites ? "true" : "false"); return;
	case WSS_KEY_REPORT_SUMMARY: wss_fmt_str(f, c->report_summary ? "true" : "false"); return;
	case WSS_KEY_PEAKS_ENABLED: wss_fmt_str(f, c->peaks_enabled ? "true" : "false"); return;
	case WSS_KEY_PEAKS_SENSITIVITY: fmt_milli(f, c->peaks_sensitivity_milli); return;
	case WSS_KEY_PEAKS_MAX: wss_fmt_u64(f, c->peaks_max); return;
	case WSS_KEY_PEAKS_STACK_DEPTH: wss_fmt_u64(f, c->peaks_stack_depth); return;
	case WSS_KEY_REPORT_HOT_PAGES: wss_fmt_u64(f, c->report_hot_pages); return;
	case WSS_KEY_COUNT: return;
	}
}

/* ---- setting one key ---- */

typedef struct input {
	const wss_toml_value_t *tv; /* from the file */
	const char *s;              /* from the environment or a flag */
} input_t;

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
	key_name(k, e);
	wss_fmt_str(e, ": expected ");
	wss_fmt_str(e, want);
	wss_fmt_str(e, ", got ");
	wss_fmt_str(e, a_type(tv->type));
	return EINVAL;
}

static int bad(wss_fmt_t *e, const keydef_t *k, const char *a, const char *quoted, const char *b)
{
	key_name(k, e);
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
		fmt_dur(&h, n * c->interval_ns);
		wss_fmt_str(&h, " for ");
		wss_fmt_str(&h, s);
		wss_fmt_str(&h, n == 1 ? " interval?)" : " intervals?)");
	} else if (n < 1000) {
		wss_fmt_str(&h, s);
		wss_fmt_str(&h, "ms?)");
	} else {
		fmt_dur(&h, n);
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
	int i = choice(k->choices, s);
	if (i >= 0) {
		if (k->id == WSS_KEY_TRACK_BACKEND)
			c->backend = (wss_backend_id_t)i;
		else if (k->id == WSS_KEY_TRACK_MODE)
			c->mode = (wss_mode_id_t)i;
		else
			c->time_base = (wss_time_base_t)i;
		return 0;
	}
	if (k->id == WSS_KEY_TRACK_BACKEND && choice(backends_later, s) >= 0)
		return bad(e, k, "backend ", s, " is not available in this version of wss (available: auto, mprotect, uffd-wp, hybrid)");
	key_name(k, e);
	wss_fmt_str(e, ": unknown value ");
	wss_fmt_json_str(e, s);
	wss_fmt_str(e, " (expected ");
	const char *best = NULL;
	for (int j = 0; k->choices[j]; j++) {
		if (j)
			wss_fmt_str(e, k->choices[j + 1] ? ", " : " or ");
		wss_fmt_json_str(e, k->choices[j]);
		if (close_enough(s, k->choices[j]) && !best)
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
		fmt_milli(e, min);
	else
		wss_fmt_u64(e, min);
	wss_fmt_str(e, " to ");
	if (k->type == T_DECIMAL)
		fmt_milli(e, max);
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

static int set_key(wss_config_t *c, const keydef_t *k, const input_t *in, wss_origin_t origin, wss_fmt_t *e)
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

static int not_implemented(wss_fmt_t *e, const keydef_t *k)
{
	key_name(k, e);
	wss_fmt_str(e, " is not implemented in this version of wss; remove it");
	return EINVAL;
}

/* ---- the file layer ---- */

static int apply_section(wss_config_t *c, const wss_toml_doc_t *doc, const char *sec, const wss_toml_value_t *t,
			 const char *name, wss_fmt_t *e)
{
	for (size_t i = 0; i < t->u.tab.n; i++) {
		const wss_toml_kv_t *kv = &t->u.tab.kv[i];
		unsigned line, col;
		const keydef_t *k = strlen(kv->key) == kv->keylen ? find_key(sec, kv->key) : NULL;
		if (!k || k->id < 0) {
			wss_toml_locate(doc, kv->off, &line, &col);
			at_file(e, name, line, col);
			if (k)
				return not_implemented(e, k);
			wss_fmt_str(e, "unknown key ");
			wss_fmt_json_str(e, kv->key);
			wss_fmt_str(e, " in [");
			wss_fmt_str(e, sec);
			wss_fmt_ch(e, ']');
			const keydef_t *s = closest_key(sec, kv->key);
			const keydef_t *other = s ? NULL : find_key_any_section(kv->key);
			if (s) {
				wss_fmt_str(e, "; did you mean ");
				wss_fmt_json_str(e, s->name);
				wss_fmt_ch(e, '?');
			} else if (other) {
				wss_fmt_str(e, "; it belongs in [");
				wss_fmt_str(e, other->section);
				wss_fmt_ch(e, ']');
			}
			return EINVAL;
		}
		wss_toml_locate(doc, kv->val->off, &line, &col);
		input_t in = {.tv = kv->val};
		wss_fmt_t sub = *e;
		at_file(&sub, name, line, col);
		wss_origin_t o = {.kind = WSS_SRC_FILE, .line = line, .col = col};
		if (set_key(c, k, &in, o, &sub)) {
			*e = sub;
			return EINVAL;
		}
	}
	return 0;
}

static int apply_doc(wss_config_t *c, const wss_toml_doc_t *doc, const char *name, wss_fmt_t *e)
{
	const wss_toml_value_t *root = wss_toml_root(doc);
	for (size_t i = 0; i < root->u.tab.n; i++) {
		const wss_toml_kv_t *kv = &root->u.tab.kv[i];
		const wss_toml_value_t *v = kv->val;
		int si = strlen(kv->key) == kv->keylen ? choice(sections, kv->key) : -1;
		if (si >= 0 && v->type == WSS_TOML_TABLE) {
			if (apply_section(c, doc, sections[si], v, name, e))
				return EINVAL;
			continue;
		}
		unsigned line, col;
		wss_toml_locate(doc, kv->off, &line, &col);
		at_file(e, name, line, col);
		if (si >= 0) {
			wss_fmt_ch(e, '[');
			wss_fmt_str(e, sections[si]);
			wss_fmt_str(e, v->type == WSS_TOML_ARRAY ? "] must be a table, not an array" : "] must be a table");
			return EINVAL;
		}
		const keydef_t *k = find_key_any_section(kv->key);
		if (v->type != WSS_TOML_TABLE && k) {
			wss_fmt_str(e, "key ");
			wss_fmt_json_str(e, kv->key);
			wss_fmt_str(e, " must be in the [");
			wss_fmt_str(e, k->section);
			wss_fmt_str(e, "] section");
			return EINVAL;
		}
		wss_fmt_str(e, v->type == WSS_TOML_TABLE ? "unknown section [" : "unknown key ");
		if (v->type == WSS_TOML_TABLE)
			wss_fmt_str(e, kv->key);
		else
			wss_fmt_json_str(e, kv->key);
		if (v->type == WSS_TOML_TABLE)
			wss_fmt_ch(e, ']');
		const char *s = closest_section(kv->key);
		if (s) {
			wss_fmt_str(e, "; did you mean [");
			wss_fmt_str(e, s);
			wss_fmt_str(e, "]?");
		} else {
			wss_fmt_str(e, " (sections: [session], [track], [peaks], [report])");
		}
		return EINVAL;
	}
	return 0;
}

int wss_config_load(wss_config_t *c, const char *name, const char *buf, size_t len, const wss_toml_alloc_t *a,
		    char *err, size_t errlen)
{
	wss_fmt_t e;
	wss_fmt_init(&e, err, errlen);
	size_t nl = strlen(name);
	if (nl >= sizeof c->file) {
		wss_fmt_str(&e, "session file name longer than 1023 bytes");
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	memcpy(c->file, name, nl + 1);
	wss_toml_doc_t *doc;
	wss_toml_error_t te;
	int r = wss_toml_parse(buf, len, a, &doc, &te);
	if (r) {
		if (te.line)
			at_file(&e, name, te.line, te.col);
		else {
			wss_fmt_str(&e, name);
			wss_fmt_str(&e, ": ");
		}
		wss_fmt_str(&e, te.msg);
		wss_fmt_cstr(&e);
		return r == ENOMEM ? ENOMEM : EINVAL;
	}
	r = apply_doc(c, doc, name, &e);
	wss_fmt_cstr(&e);
	wss_toml_free(doc);
	return r;
}

void wss_config_file_error(const char *name, int rc, char *err, size_t errlen)
{
	wss_fmt_t e;
	wss_fmt_init(&e, err, errlen);
	wss_fmt_str(&e, name);
	wss_fmt_str(&e, ": ");
	switch (rc) {
	case ENOENT: wss_fmt_str(&e, "cannot read the session file: No such file or directory"); break;
	case EACCES: wss_fmt_str(&e, "cannot read the session file: Permission denied"); break;
	case EISDIR: wss_fmt_str(&e, "is a directory, not a session file"); break;
	case ENOTDIR: wss_fmt_str(&e, "cannot read the session file: Not a directory"); break;
	case ELOOP: wss_fmt_str(&e, "cannot read the session file: Too many symbolic links"); break;
	case EFBIG: wss_fmt_str(&e, "session file larger than 1 MiB"); break;
	case ENOMEM: wss_fmt_str(&e, "out of memory reading the session file"); break;
	default:
		wss_fmt_str(&e, "cannot read the session file (errno ");
		wss_fmt_u64(&e, (uint64_t)rc);
		wss_fmt_ch(&e, ')');
	}
	wss_fmt_cstr(&e);
}

/* ---- the environment and flags ---- */

static bool settings_prefix(const char *v);

/* Is NAME listed in WSS_RUN_FLAGS (comma-separated)? */
static bool from_flag(char *const *envp, const char *name, size_t n)
{
	const char *l = wss_config_getenv(envp, "WSS_RUN_FLAGS");
	while (l && *l) {
		const char *end = strchr(l, ',');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		if (len == n && !strncmp(l, name, n))
			return true;
		l = end ? end + 1 : NULL;
	}
	return false;
}

bool wss_config_is_ours(const char *entry)
{
	static const char *const p[] = {"WSS_CONFIG=", "WSS_RUN_FLAGS=", "WSS_RUN_PID=", "WSS_TEST_", NULL};
	for (int i = 0; p[i]; i++)
		if (!strncmp(entry, p[i], strlen(p[i])))
			return true;
	return settings_prefix(entry);
}

static bool settings_prefix(const char *v)
{
	static const char *const p[] = {"WSS_SESSION_", "WSS_TRACK_", "WSS_PEAKS_", "WSS_REPORT_", NULL};
	for (int i = 0; p[i]; i++)
		if (!strncmp(v, p[i], strlen(p[i])))
			return true;
	return false;
}

static int env_unknown(const char *var, size_t n, wss_fmt_t *e)
{
	char name[96];
	if (n >= sizeof name)
		n = sizeof name - 1;
	memcpy(name, var, n);
	name[n] = '\0';
	wss_fmt_str(e, name);
	wss_fmt_str(e, ": unknown setting");
	const keydef_t *best = NULL;
	unsigned bd = 1000;
	char cand[ENV_NAME_MAX];
	for (size_t i = 0; i < NKEYS; i++) {
		unsigned d = distance(name, env_of(&keys[i], cand));
		if (close_enough(name, cand) && d < bd)
			bd = d, best = &keys[i];
	}
	if (best) {
		wss_fmt_str(e, "; did you mean ");
		env_name(best, e);
		wss_fmt_ch(e, '?');
	}
	return EINVAL;
}

int wss_config_from_env(wss_config_t *c, char *const *envp, char *err, size_t errlen)
{
	wss_fmt_t e;
	wss_fmt_init(&e, err, errlen);
	int r = 0;
	/* Unknown names first: a misspelt override must not go unnoticed. */
	for (char *const *v = envp; v && *v && !r; v++) {
		if (!settings_prefix(*v))
			continue;
		const char *eq = strchr(*v, '=');
		size_t n = eq ? (size_t)(eq - *v) : strlen(*v);
		bool known = false;
		for (size_t i = 0; i < NKEYS && !known; i++) {
			char cand[ENV_NAME_MAX];
			env_of(&keys[i], cand);
			if (strlen(cand) == n && !strncmp(cand, *v, n)) {
				known = true;
				if (keys[i].id < 0) {
					wss_fmt_str(&e, cand);
					wss_fmt_str(&e, ": ");
					r = not_implemented(&e, &keys[i]);
				}
			}
		}
		if (!known)
			r = env_unknown(*v, n, &e);
	}
	for (size_t i = 0; i < NKEYS && !r; i++) {
		if (keys[i].id < 0)
			continue;
		char name[ENV_NAME_MAX];
		env_of(&keys[i], name);
		const char *val = wss_config_getenv(envp, name);
		if (!val)
			continue;
		wss_fmt_t sub = e;
		wss_fmt_str(&sub, name);
		wss_fmt_str(&sub, ": ");
		input_t in = {.s = val};
		wss_origin_t o = {.kind = from_flag(envp, name, strlen(name)) ? WSS_SRC_FLAG : WSS_SRC_ENV};
		if (o.kind == WSS_SRC_FLAG)
			o.flag = "wss run";
		if (set_key(c, &keys[i], &in, o, &sub)) {
			e = sub;
			r = EINVAL;
		}
	}
	const char *v;
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_VMA_BUDGET"))) {
		uint64_t n;
		if (wss_dur_parse(v, &n) || n < 8 || n > 1000000) {
			wss_fmt_str(&e, "WSS_TEST_VMA_BUDGET: expected a count from 8 to 1000000, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		} else {
			c->test_vma_budget = (uint32_t)n;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_SAMPLING_SEED"))) {
		uint64_t n;
		if (wss_dur_parse(v, &n) || n == 0) {
			wss_fmt_str(&e, "WSS_TEST_SAMPLING_SEED: expected a positive number, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		} else {
			c->test_sampling_seed = n;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_FIRST_RATE"))) {
		uint64_t rate = 0, n = 0;
		const char *q = v;
		while (*q >= '0' && *q <= '9' && rate <= (1U << 20))
			rate = rate * 10 + (uint64_t)(*q++ - '0');
		bool good = q > v && *q == ':' && rate >= 2 && rate <= (1U << 20) && !(rate & (rate - 1));
		const char *d = good ? ++q : q;
		while (good && *q >= '0' && *q <= '9' && n <= 1000)
			n = n * 10 + (uint64_t)(*q++ - '0');
		good = good && q > d && *q == 0 && n >= 1 && n <= 1000;
		if (!good) {
			wss_fmt_str(&e, "WSS_TEST_FIRST_RATE: expected RATE:INTERVALS (a power of two from 2 to 2^20, a count from 1 to "
					"1000), got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		} else {
			c->test_first_level = (uint32_t)__builtin_ctzll(rate);
			c->test_first_intervals = (uint32_t)n;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_ALL_WRITES"))) {
		if (!strcmp(v, "on")) {
			c->test_all_writes = 1;
		} else if (!strcmp(v, "off")) {
			c->test_all_writes = -1;
		} else if (!strcmp(v, "alternate")) {
			c->test_all_writes = 2;
		} else {
			wss_fmt_str(&e, "WSS_TEST_ALL_WRITES: expected on, off or alternate, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_COUNT"))) {
		if (!strcmp(v, "list"))
			c->test_count = 0;
		else if (!strcmp(v, "walk"))
			c->test_count = 1;
		else if (!strcmp(v, "check"))
			c->test_count = 2;
		else {
			wss_fmt_str(&e, "WSS_TEST_COUNT: expected list, walk or check, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_CENSUS"))) {
		if (!strcmp(v, "off")) {
			c->test_census_off = true;
		} else if (strcmp(v, "on")) {
			wss_fmt_str(&e, "WSS_TEST_CENSUS: expected on or off, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		}
	}
	/* Test-only: the tick waits this long between arming the pages and
	 * harvesting their write bits, so that tests can touch pages in that
	 * window (tests/progs/split.c). */
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_HARVEST_DELAY"))) {
		uint64_t n;
		if (wss_dur_parse(v, &n) || n > 60000000000ULL) {
			wss_fmt_str(&e, "WSS_TEST_HARVEST_DELAY: expected a duration up to 60s, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		} else {
			c->test_harvest_delay_ns = n;
		}
	}
	/* Test-only: the userfaultfd probe reports "unsupported", so that the
	 * fallback and the error paths are tested on any kernel. */
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_UFFD_UNSUPPORTED")))
		c->test_uffd_unsupported = !strcmp(v, "1");
	wss_fmt_cstr(&e);
	return r;
}

int wss_config_set_flag(wss_config_t *c, const char *key, const char *value, const char *flag, char *err,
			size_t errlen)
{
	const char *dot = strchr(key, '.');
	const keydef_t *k = NULL;
	for (size_t i = 0; dot && i < NKEYS && !k; i++)
		if (strlen(keys[i].section) == (size_t)(dot - key) && !strncmp(keys[i].section, key, (size_t)(dot - key)) &&
		    !strcmp(keys[i].name, dot + 1) && keys[i].id >= 0)
			k = &keys[i];
	if (!k)
		return ENOENT;
	wss_fmt_t e;
	wss_fmt_init(&e, err, errlen);
	wss_fmt_str(&e, flag);
	wss_fmt_str(&e, ": ");
	input_t in = {.s = value};
	wss_origin_t o = {.kind = WSS_SRC_FLAG, .flag = flag};
	int r = set_key(c, k, &in, o, &e);
	wss_fmt_cstr(&e);
	return r;
}

static void source_text(const wss_config_t *c, const keydef_t *k, wss_fmt_t *f);

int wss_config_validate(wss_config_t *c, char *err, size_t errlen)
{
	wss_fmt_t e;
	wss_fmt_init(&e, err, errlen);
	if (c->interval_ns < WSS_INTERVAL_MIN_NS) {
		at_origin(c, WSS_KEY_SESSION_INTERVAL, &e);
		wss_fmt_str(&e, "session.interval must be at least 100us");
		if (c->interval_ns < 1000)
			wss_fmt_str(&e, " (an integer is nanoseconds: 10ms?)");
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	if (c->interval_ns > WSS_INTERVAL_MAX_NS) {
		at_origin(c, WSS_KEY_SESSION_INTERVAL, &e);
		wss_fmt_str(&e, "session.interval must be at most 3600s");
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	uint64_t w = c->window_ns ? c->window_ns : c->interval_ns;
	if (w > WSS_WINDOW_MAX_NS) {
		at_origin(c, WSS_KEY_SESSION_WINDOW, &e);
		wss_fmt_str(&e, "session.window must be at most 604800s (a week)");
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	if (w % c->interval_ns != 0) {
		at_origin(c, c->src[WSS_KEY_SESSION_WINDOW].kind ? WSS_KEY_SESSION_WINDOW : WSS_KEY_SESSION_INTERVAL, &e);
		wss_fmt_str(&e, "session.window must be a whole multiple of session.interval (window ");
		fmt_dur(&e, w);
		wss_fmt_str(&e, ", interval ");
		fmt_dur(&e, c->interval_ns);
		wss_fmt_ch(&e, ')');
		/* "--window 3" meant three intervals, as wss window's count. */
		if (w < 1000 && c->window_ns) {
			wss_fmt_str(&e, "; ");
			fmt_dur(&e, w * c->interval_ns);
			wss_fmt_str(&e, " for ");
			wss_fmt_u64(&e, w);
			wss_fmt_str(&e, w == 1 ? " interval?" : " intervals?");
		}
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	if (w / c->interval_ns > WSS_WINDOW_MAX_INTERVALS) {
		at_origin(c, WSS_KEY_SESSION_WINDOW, &e);
		wss_fmt_str(&e, "session.window is more than 1000000 intervals");
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	if (c->sample_level && c->mode != WSS_MODE_SAMPLED) {
		at_origin(c, WSS_KEY_TRACK_SAMPLE_RATE, &e);
		wss_fmt_str(&e, "track.sample_rate needs track.mode = \"sampled\" (track.mode is \"");
		wss_fmt_str(&e, wss_mode_name(c->mode));
		if (c->src[WSS_KEY_TRACK_MODE].kind) {
			wss_fmt_str(&e, "\", from ");
			source_text(c, def_of(WSS_KEY_TRACK_MODE), &e);
			wss_fmt_ch(&e, ')');
		} else {
			wss_fmt_str(&e, "\", the default)");
		}
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	c->window_ns = w;
	c->window_intervals = (uint32_t)(w / c->interval_ns);
	/* report.idle_after: whole intervals, at least one, rounded up. */
	uint64_t idle = c->idle_after_ns ? (c->idle_after_ns + c->interval_ns - 1) / c->interval_ns : 10;
	if (idle > WSS_WINDOW_MAX_INTERVALS) {
		at_origin(c, WSS_KEY_REPORT_IDLE_AFTER, &e);
		wss_fmt_str(&e, "report.idle_after is more than 1000000 intervals");
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	c->idle_after_intervals = (uint32_t)idle;
	return 0;
}

/* ---- output ---- */

static void source_text(const wss_config_t *c, const keydef_t *k, wss_fmt_t *f)
{
	const wss_origin_t *o = &c->src[k->id];
	switch (o->kind) {
	case WSS_SRC_FILE:
		wss_fmt_str(f, c->file);
		wss_fmt_ch(f, ':');
		wss_fmt_u64(f, o->line);
		wss_fmt_ch(f, ':');
		wss_fmt_u64(f, o->col);
		break;
	case WSS_SRC_ENV:
		wss_fmt_str(f, "environment ");
		env_name(k, f);
		break;
	case WSS_SRC_FLAG:
		wss_fmt_str(f, "flag ");
		wss_fmt_str(f, o->flag);
		break;
	default:
		wss_fmt_str(f, "default");
		if (k->id == WSS_KEY_SESSION_WINDOW)
			wss_fmt_str(f, " (one interval)");
	}
}

void wss_config_print(const wss_config_t *c, wss_fmt_t *f)
{
	wss_fmt_str(f, "# wss: the effective session configuration (defaults < ");
	wss_fmt_str(f, *c->file ? c->file : "no file");
	wss_fmt_str(f, " < environment < flags)\n");
	for (int s = 0; sections[s]; s++) {
		bool any = false;
		for (size_t i = 0; i < NKEYS; i++) {
			const keydef_t *k = &keys[i];
			if (strcmp(k->section, sections[s]) || k->id < 0)
				continue;
			if (!any) {
				wss_fmt_str(f, "\n[");
				wss_fmt_str(f, sections[s]);
				wss_fmt_str(f, "]\n");
				any = true;
			}
			if (k->id == WSS_KEY_TRACK_SAMPLE_RATE && !c->sample_level) {
				/* TOML has no null: a comment says it is not set. */
				wss_fmt_str(f, "# sample_rate: not set, session.overhead sets the rate  # ");
				source_text(c, k, f);
				wss_fmt_ch(f, '\n');
				continue;
			}
			wss_fmt_str(f, k->name);
			wss_fmt_str(f, " = ");
			value_of(c, k, f, true);
			wss_fmt_str(f, "  # ");
			source_text(c, k, f);
			wss_fmt_ch(f, '\n');
		}
	}
}

static void comment_lines(wss_fmt_t *f, const char *text)
{
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t n = nl ? (size_t)(nl - text) : strlen(text);
		wss_fmt_str(f, "# ");
		wss_fmt_mem(f, text, n);
		wss_fmt_ch(f, '\n');
		text += n + (nl ? 1 : 0);
	}
}

void wss_config_example(wss_fmt_t *f)
{
	wss_config_t d;
	wss_config_defaults(&d);
	comment_lines(f, "A wss session file (TOML 1.0).  Every key is optional and shown with its\n"
			 "default.  Use it with\n"
			 "    WSS_CONFIG=session.toml LD_PRELOAD=libwss.so ./app\n"
			 "    wss run -c session.toml -- ./app\n"
			 "Each key has an environment override WSS_<SECTION>_<KEY> (for example\n"
			 "WSS_SESSION_INTERVAL=10ms), and `wss run` flags override both.\n"
			 "Check a file with: wss config check session.toml");
	for (int s = 0; sections[s]; s++) {
		wss_fmt_str(f, "\n[");
		wss_fmt_str(f, sections[s]);
		wss_fmt_str(f, "]\n");
		for (size_t i = 0; i < NKEYS; i++) {
			const keydef_t *k = &keys[i];
			if (strcmp(k->section, sections[s]))
				continue;
			if (k->id < 0) {
				wss_fmt_str(f, "# ");
				wss_fmt_str(f, k->name);
				wss_fmt_str(f, ": not implemented in this version of wss\n");
				continue;
			}
			comment_lines(f, k->help);
			if (k->id == WSS_KEY_TRACK_SAMPLE_RATE && !d.sample_level) {
				wss_fmt_str(f, "# Default: not set.\n# sample_rate = \"1/64\"\n");
				continue;
			}
			wss_fmt_str(f, k->name);
			wss_fmt_str(f, " = ");
			value_of(&d, k, f, true);
			wss_fmt_ch(f, '\n');
		}
	}
}

void wss_config_json(const wss_config_t *c, wss_fmt_t *f)
{
	const char *open = NULL;
	wss_fmt_ch(f, '{');
	for (size_t i = 0; i < NKEYS; i++) {
		const keydef_t *k = &keys[i];
		if (k->id < 0)
			continue;
		if (!open || strcmp(open, k->section)) {
			wss_fmt_str(f, open ? "}," : "");
			wss_fmt_json_str(f, k->section);
			wss_fmt_str(f, ":{");
			open = k->section;
		} else {
			wss_fmt_ch(f, ',');
		}
		wss_fmt_json_str(f, k->name);
		wss_fmt_ch(f, ':');
		value_of(c, k, f, false);
	}
	wss_fmt_str(f, open ? "}}" : "}");
}

void wss_config_sources_json(const wss_config_t *c, wss_fmt_t *f)
{
	static const char *const names[] = {"default", "file", "env", "flag"};
	bool first = true;
	wss_fmt_ch(f, '{');
	for (size_t i = 0; i < NKEYS; i++) {
		const keydef_t *k = &keys[i];
		if (k->id < 0)
			continue;
		if (!first)
			wss_fmt_ch(f, ',');
		first = false;
		wss_fmt_ch(f, '"');
		key_name(k, f);
		wss_fmt_str(f, "\":");
		wss_fmt_json_str(f, names[c->src[k->id].kind]);
	}
	wss_fmt_ch(f, '}');
}
