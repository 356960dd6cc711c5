/* The session settings the engine runs with, and where each came from.
 * Layers, lowest to highest: defaults, the TOML session file (WSS_CONFIG or
 * `wss run -c`), environment variables WSS_<SECTION>_<KEY>, `wss run`
 * flags.  One table of keys drives parsing, the environment names, the
 * example file, `wss config check` and the profile header.  Pure: no OS
 * calls, only the strings and buffers it is given, so `wss run` validates
 * with exactly the rules the library applies. */
#ifndef WSS_CONFIG_CONFIG_H
#define WSS_CONFIG_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/fmt.h"
#include "common/pattern.h"
#include "common/sample.h" /* WSS_SAMPLE_LEVEL_MAX (track.sample_rate), the budget's and the precision's defaults */
#include "config/toml.h"

typedef enum { WSS_TIME_WALL = 0, WSS_TIME_CPU, WSS_TIME_MANUAL } wss_time_base_t;
typedef enum { WSS_BACKEND_AUTO = 0, WSS_BACKEND_MPROTECT, WSS_BACKEND_UFFD_WP, WSS_BACKEND_HYBRID } wss_backend_id_t;
/* track.mode (the engine's wss_track_mode_t, in the same order). */
typedef enum { WSS_MODE_AUTO = 0, WSS_MODE_EXACT, WSS_MODE_SAMPLED } wss_mode_id_t;

#define WSS_CONFIG_PATH_MAX 1024
#define WSS_CONFIG_FILE_MAX (1024 * 1024) /* a session file larger than this is an error */
#define WSS_INTERVAL_MIN_NS 100000ULL     /* 100 us */
#define WSS_WINDOW_MAX_INTERVALS 1000000U
/* The longest interval and window: an hour and a week, far past any use,
 * and far from where twice a window overflows 64 bits of nanoseconds. */
#define WSS_INTERVAL_MAX_NS 3600000000000ULL
#define WSS_WINDOW_MAX_NS 604800000000000ULL
#define WSS_STACK_DEPTH_MAX 128
#define WSS_OVERHEAD_MIN_PPM 1000     /* session.overhead: 0.1% ... */
#define WSS_OVERHEAD_MAX_PPM 500000   /* ... to 50% */
#define WSS_PRECISION_MIN_PPM 1000    /* session.precision: 0.1% ... */
#define WSS_PRECISION_MAX_PPM 1000000 /* ... to 100% */

/* Every key that works in this version. */
typedef enum {
	WSS_KEY_SESSION_OUTPUT,
	WSS_KEY_SESSION_TIME_BASE,
	WSS_KEY_SESSION_INTERVAL,
	WSS_KEY_SESSION_WINDOW,
	WSS_KEY_SESSION_FOLLOW_FORK,
	WSS_KEY_SESSION_FOLLOW_EXEC,
	WSS_KEY_SESSION_OVERHEAD,
	WSS_KEY_SESSION_PRECISION,
	WSS_KEY_SESSION_TRACE,
	WSS_KEY_SESSION_TRACE_MAX,
	WSS_KEY_TRACK_BACKEND,
	WSS_KEY_TRACK_MODE,
	WSS_KEY_TRACK_SAMPLE_RATE,
	WSS_KEY_TRACK_HEAP,
	WSS_KEY_TRACK_ANON_MMAP,
	WSS_KEY_TRACK_SHARED,
	WSS_KEY_TRACK_FILE_MMAP,
	WSS_KEY_TRACK_STACKS,
	WSS_KEY_TRACK_DATA_SEGMENTS,
	WSS_KEY_TRACK_LIBRARY_DATA,
	WSS_KEY_TRACK_CODE,
	WSS_KEY_TRACK_ALLOC_SITES,
	WSS_KEY_REPORT_SUMMARY,
	WSS_KEY_PEAKS_ENABLED,
	WSS_KEY_PEAKS_SENSITIVITY,
	WSS_KEY_PEAKS_MAX,
	WSS_KEY_PEAKS_STACK_DEPTH,
	WSS_KEY_REPORT_HOT_PAGES,
	WSS_KEY_REPORT_IDLE_AFTER,
	WSS_KEY_COUNT
} wss_key_t;

typedef enum { WSS_SRC_DEFAULT = 0, WSS_SRC_FILE, WSS_SRC_ENV, WSS_SRC_FLAG } wss_source_t;

typedef struct wss_origin {
	wss_source_t kind;
	unsigned line, col; /* WSS_SRC_FILE */
	const char *flag;   /* WSS_SRC_FLAG: the option's name, a static string */
} wss_origin_t;

typedef struct wss_config {
	char output[WSS_OUTPUT_MAX]; /* pattern: %p pid, %t start time, %n program name, %% */
	wss_time_base_t time_base;
	uint64_t interval_ns;
	uint64_t window_ns;          /* 0 until validated: one interval */
	uint32_t window_intervals;
	bool follow_fork;            /* measure forked children, each into its own profile */
	bool follow_exec;            /* leave LD_PRELOAD and the settings to exec'd programs */
	wss_backend_id_t backend;
	wss_mode_id_t mode;
	uint32_t sample_level;       /* track.sample_rate as 1/2^level, 1..30; 0: not set (the budget sets it) */
	uint32_t overhead_ppm;       /* session.overhead: the most the program may run slower, in millionths */
	uint32_t precision_ppm;      /* session.precision: auto's target half-width of each interval's data estimate */
	bool trace;                  /* session.trace: write a page trace beside the profile */
	uint64_t trace_max;          /* session.trace_max, bytes */
	bool track_heap, track_anon_mmap, track_data_segments;
	bool track_shared;          /* MAP_SHARED anonymous, System V, memfd and tmpfs mappings */
	bool track_file_mmap;       /* mappings of other regular files (not code) */
	bool track_stacks;          /* the main thread's and the threads' stacks (write-protect backends) */
	bool track_library_data;    /* shared libraries' .data/.bss, dlopen'd ones too */
	bool track_code;            /* the code working set: executable segments' pages run */
	bool track_alloc_sites;     /* allocation sites: live, working-set and idle memory by call stack */
	bool report_summary;
	bool peaks_enabled;
	uint32_t peaks_sensitivity_milli; /* g in thousandths */
	uint32_t peaks_max;               /* peak records per process */
	uint32_t peaks_stack_depth;       /* frames per stack */
	uint32_t report_hot_pages;        /* pages the summary lists */
	uint64_t idle_after_ns;           /* report.idle_after; 0 until validated: ten intervals */
	uint32_t idle_after_intervals;    /* the same in whole intervals, rounded up (validated) */
	char file[WSS_CONFIG_PATH_MAX]; /* the session file, "" for none */
	wss_origin_t src[WSS_KEY_COUNT];
	/* Test-only (WSS_TEST_VMA_BUDGET): cap the mprotect backend's VMA
	 * budget so the coarse path can be tested; 0 = derive it. */
	uint32_t test_vma_budget;
	/* Test-only (WSS_TEST_HARVEST_DELAY): the tick's pause between
	 * arming and harvest, in ns. */
	uint64_t test_harvest_delay_ns;
	/* Test-only (WSS_TEST_SAMPLING_SEED): the page sample's seed, so that
	 * a sampled test is deterministic; 0 = a random one. */
	uint64_t test_sampling_seed;
	/* Test-only (WSS_TEST_FIRST_RATE=R:N): the first N intervals sampled
	 * at 1 in R (a power of two), then track.sample_rate, so that a test
	 * runs through two sampled levels as auto does; 0 = off. */
	uint32_t test_first_level, test_first_intervals;
	/* Test-only (WSS_TEST_ALL_WRITES=on|off|alternate): sampled intervals
	 * count every page's writes always (1), never (-1) or every other one
	 * (2); 0 = auto decides. */
	int test_all_writes;
	/* Test-only (WSS_TEST_CENSUS=off): the totals count no page by its
	 * presence (engine/census.c), as before the census. */
	bool test_census_off;
	int test_count; /* WSS_TEST_COUNT: 0 by the touched list where it may, 1 always the walk, 2 both, compared */
	/* Test-only (WSS_TEST_UFFD_UNSUPPORTED=1): the userfaultfd probe fails. */
	bool test_uffd_unsupported;
} wss_config_t;

/* Defaults: output "wss.%p.jsonl", wall time, interval 100 ms, window one
 * interval, overhead 2%, precision 5%, backend auto, mode auto, no fixed sample rate,
 * heap/anon_mmap/data_segments tracked, library_data not, summary on. */
void wss_config_defaults(wss_config_t *c);

/* Parse a duration: an integer with an optional fraction and a unit of
 * ns, us, ms or s ("100ms", "2.5s"); a bare integer is nanoseconds.
 * Returns 0, EINVAL (syntax) or ERANGE (overflow). */
int wss_dur_parse(const char *s, uint64_t *ns);

/* Parse "wall", "cpu" or "manual".  Returns 0 or EINVAL. */
int wss_time_base_parse(const char *s, wss_time_base_t *tb);
const char *wss_time_base_name(wss_time_base_t tb);
const char *wss_backend_name(wss_backend_id_t b);
const char *wss_mode_name(wss_mode_id_t m);

/* Parse a sample rate "1/N", N a power of two from 2 to 2^30, into level
 * (N = 2^level).  Returns 0, EINVAL (syntax), EDOM (N not a power of
 * two), ERANGE (N above 2^30 or 0) or EEXIST ("1/1": every page). */
int wss_sample_rate_parse(const char *s, uint32_t *level);

/* Parse a percentage ("2%", "0.5%", up to four decimals) into millionths.
 * Returns 0 or EINVAL; the range is the caller's. */
int wss_percent_parse(const char *s, uint32_t *ppm);

/* Parse a size: digits and a unit of B, KiB, MiB, GiB or TiB ("256MiB");
 * bare digits are bytes.  Returns 0, EINVAL (syntax) or ERANGE (past
 * 2^63 bytes). */
int wss_size_parse(const char *s, uint64_t *bytes);
#define WSS_TRACE_MAX_MIN 4096ULL          /* session.trace_max: 4 KiB ... */
#define WSS_TRACE_MAX_MAX (1ULL << 40)     /* ... 1 TiB */

/* The value of NAME in envp, or NULL.  Reads nothing but envp: safe before
 * the C library's getenv is usable. */
const char *wss_config_getenv(char *const *envp, const char *name);

/* Apply a TOML session file held in buf (name is how messages call it).
 * Memory for parsing comes from a (NULL: malloc) and is released before
 * returning.  Returns 0, or EINVAL/ENOMEM with "name:line:col: reason" in
 * err. */
int wss_config_load(wss_config_t *c, const char *name, const char *buf, size_t len, const wss_toml_alloc_t *a,
		    char *err, size_t errlen);

/* The message for a session file that could not be read (rc is an errno
 * from wss_file_read). */
void wss_config_file_error(const char *name, int rc, char *err, size_t errlen);

/* Apply WSS_<SECTION>_<KEY> variables from envp.  Variables named in
 * WSS_RUN_FLAGS (set by `wss run`) are recorded as flags.  An unknown
 * WSS_SESSION_/TRACK_/PEAKS_/REPORT_ name is an error with a suggestion.
 * Returns 0 or EINVAL with "VARIABLE: reason" in err.  Does not validate. */
int wss_config_from_env(wss_config_t *c, char *const *envp, char *err, size_t errlen);

/* Is this environment entry ("NAME=value") one of wss's variables
 * (settings, WSS_CONFIG, WSS_RUN_FLAGS, WSS_TEST_*)? */
bool wss_config_is_ours(const char *entry);

/* Set one key ("session.interval") from a string, as a flag named flag
 * (a static string).  Returns 0, ENOENT for an unknown key, or EINVAL with
 * "flag: reason" in err. */
int wss_config_set_flag(wss_config_t *c, const char *key, const char *value, const char *flag, char *err,
			size_t errlen);

/* The environment variable for a key ("WSS_SESSION_INTERVAL") into buf. */
const char *wss_config_env_name(wss_key_t k, char *buf, size_t len);

/* Defaults, then the session file at path (none if NULL or empty; read
 * with raw system calls, parsed with memory from a, NULL: malloc), then the
 * environment in envp.  Returns 0 or an errno with the one-line reason in
 * err.  Does not validate: flags may still come on top.  init. */
int wss_config_build(wss_config_t *c, const char *path, char *const *envp, const wss_toml_alloc_t *a, char *err,
		     size_t errlen);

/* Check the cross-key rules (window a whole multiple of interval, bounds,
 * track.sample_rate only with track.mode = "sampled")
 * and fill window_ns and window_intervals.  Returns 0 or EINVAL with the
 * reason, prefixed by where the offending value came from, in err. */
int wss_config_validate(wss_config_t *c, char *err, size_t errlen);
/* The word of words (NULL-terminated) that typed most likely misspells
 * (a few edits away, fewer for short words), or NULL: the "did you mean"
 * of a mistyped key or flag. */
const char *wss_config_closest_word(const char *typed, const char *const *words);

/* The effective configuration as a TOML document, each value commented
 * with its source (`wss config check`). */
void wss_config_print(const wss_config_t *c, wss_fmt_t *f);

/* A commented session file with every key and its default
 * (`wss config example`). */
void wss_config_example(wss_fmt_t *f);

/* The profile header's "config" object ({"session":{...},...}) and its
 * "config_source" object ({"session.interval":"file",...}). */
void wss_config_json(const wss_config_t *c, wss_fmt_t *f);
void wss_config_sources_json(const wss_config_t *c, wss_fmt_t *f);


#endif
