/* The profile: one JSON object per line, streamed with one write(2) per
 * record so that a killed program leaves every completed record on disk.
 * Formatting is separate from I/O so that it is unit-tested directly, and
 * pure (into a wss_fmt_t, no allocation), so that the engine (`wss run`)
 * and `wss attach --method refbits` (cli/attach/attach_refbits.c) write the same records.
 * docs/profile-format.md is the schema. */
#ifndef WSS_COMMON_PROFILE_H
#define WSS_COMMON_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/fmt.h"
#include "common/kinds.h"

#include "common/profile_version.h"

typedef struct wss_profile_header {
	int pid, ppid;              /* ppid -1: unknown */
	const char *exe;
	int argc;
	char **argv;
	const char *kernel;
	const char *host;           /* the machine's name (uname's nodename), or NULL */
	const char *backend;
	const char *backend_reason;
	const char *backend_sees;   /* what a touch is: "reads and writes", "writes" */
	const char *runtime;        /* a runtime handled apart ("go"), or NULL */
	const char *untracked;      /* what of it is left out and why, or NULL */
	/* JSON members, each starting with ',', describing the configuration
	 * (wss_engine_settings_t): before the VMA figures, and after. */
	const char *timing, *config;
	uint64_t start_unix_ns;
	long page_size;
	long max_map_count;
	long vma_budget;
	bool no_vma;                /* no mapping is split (refbits): neither figure written */
	const char *mode;           /* track.mode: "auto", "exact", "sampled" */
	uint64_t seed;              /* the sampling membership seed */
	/* track.code: on, with the excluded start-up objects (JSON objects
	 * {"object","why"}, comma-separated); or asked for and impossible
	 * (code_off: why); neither: not asked. */
	bool code;
	const char *code_excluded, *code_off;
	/* The session's leader: where the session's other profiles go,
	 * relative to this profile's directory; NULL in any other process. */
	const char *session_dir;
} wss_profile_header_t;

/* Which sets the backend reports besides data_pages: writes (uffd-wp,
 * hybrid) and reads, touched but not written (hybrid). */
typedef struct wss_profile_sets {
	bool writes, reads;
} wss_profile_sets_t;

/* A 95 % interval [lo, hi] of an estimated page count. */
typedef struct wss_profile_ci {
	uint64_t lo, hi;
} wss_profile_ci_t;

/* ci as the profile writes an interval: [lo,hi].  AS-safe. */
void wss_profile_ci(wss_fmt_t *f, wss_profile_ci_t ci);

/* One kind's part of a sample (indexed by wss_kind_t): the pages of that
 * kind tracked at the tick (0: none, and the kind is left out), the
 * window's data and write pages among them, and, sampled, the data
 * estimate's interval. */
typedef struct wss_profile_kind {
	uint64_t tracked, data, write;
	wss_profile_ci_t ci;
} wss_profile_kind_t;

typedef struct wss_profile_sample {
	uint32_t seq;
	uint64_t t_ns, cpu_ns;
	bool no_cpu;              /* cpu_ns unknown (refbits: /proc/PID/stat unreadable): left out */
	/* JSON members, each starting with ',', written just before
	 * "threads" (refbits: its "mappings"), or NULL. */
	const char *extra;
	uint64_t data_pages, write_pages, read_pages, faults, coarse, unarmed;
	wss_profile_sets_t sets;
	bool final;
	/* Pages are counted 1 in rate (1: every page, exact).  Above 1 the
	 * page counts are estimates: ci holds their intervals (data, write,
	 * read), x the sampled counts, members of tracked pages. */
	uint64_t rate;
	wss_profile_ci_t ci[3];
	uint64_t tracked, members, x[3];
	/* Every page's writes counted (engine/sampling.c, "all writes"): the
	 * write count is exact, the data the writes plus an estimate of the
	 * pages read and not written. */
	bool all_writes;
	bool lower_bound;         /* exact, but coarse blocks left pages uncounted */
	uint64_t cost_faults_ns, cost_tick_ns, cost_change_ns, cost_program_ns;
	uint64_t cost_wall_ns; /* the interval's wall time: the tick's base (0: not said) */
	/* track.code: the code pages of the window (exact), and whether a
	 * code range was opened whole for want of VMAs (a lower bound). */
	bool code, code_lower_bound;
	uint64_t code_pages;
	uint64_t cost_code_ns; /* its first runs at the probe's cost of a touch */
	wss_profile_kind_t kinds[WSS_KIND_N];
} wss_profile_sample_t;

typedef struct wss_profile_thread {
	int tid;
	uint64_t data_pages, write_pages, faults;
	wss_profile_ci_t ci[2];   /* data, write: when the sample's rate is above 1 */
	int64_t cpu_ns; /* -1: unknown */
	uint64_t code_pages; /* with the sample's code */
} wss_profile_thread_t;

/* avg/peak/total of one series; avg is sum / samples.  Sampled runs: the
 * intervals of each (avg: the mean of the samples' bounds). */
/* What held auto's sample where it was at the last decision (policy.c),
 * for the precision note. */
typedef enum wss_hold {
	WSS_HOLD_BUDGET, /* a finer sample would not fit session.overhead */
	WSS_HOLD_WAIT,   /* a finer one was due after more calm intervals */
	WSS_HOLD_VMA,    /* the kernel's limit on mappings (vm.max_map_count) */
	WSS_HOLD_SPARSE, /* a mapping over a gibibyte, always sampled */
} wss_hold_t;

typedef struct wss_profile_stat {
	uint64_t sum, peak, total;
	uint64_t sum_lo, sum_hi;
	wss_profile_ci_t peak_ci, total_ci;
} wss_profile_stat_t;

typedef struct wss_profile_hot {
	uint64_t addr;
	uint32_t intervals; /* intervals it was touched in */
	int kind;           /* wss_kind_t */
	uint32_t stack;     /* the first-touch site's stack, 0: unknown */
	uint32_t gone;      /* the interval it was unmapped in, 0: mapped at the end */
	const char *mapping;
} wss_profile_hot_t;

typedef struct wss_profile_summary {
	uint64_t samples;
	wss_profile_stat_t data, write, read;
	wss_profile_sets_t sets;
	uint64_t faults, coarse;
	uint64_t duration_ns;
	long page_size;
	const wss_profile_hot_t *hot; /* report.hot_pages, most touched first */
	int nhot;
	const char *incomplete;       /* why the summary lacks the final sample, or NULL */
	const char *attach_end;       /* wss attach: why measuring ended, or NULL */
	uint64_t rate_max;            /* above 1: sampled, the coarsest rate used */
	uint64_t huge_n, huge_bytes;  /* mappings left untracked for their size */
	bool lower_bound;             /* exact samples that used coarse blocks */
	const struct wss_profile_trace *trace; /* the page trace, or NULL */
	bool code, code_lower_bound;  /* track.code: the "insn" series, exact */
	bool code_full;               /* more code ranges than it tracks: the rest untracked */
	wss_profile_stat_t code_stat;
	const wss_profile_hot_t *hot_code; /* the code pages run in the most intervals */
	int nhot_code;
	/* Sampled runs: each interval's data estimate against session.precision
	 * (prec_n intervals judged, prec_missed over the target, the median
	 * half-width), and what set the sample: the budget, or a fixed rate. */
	uint64_t prec_target_ppm, prec_median_ppm;
	uint32_t prec_n, prec_missed;
	uint32_t budget_ppm;          /* session.overhead */
	uint64_t used_ppm;            /* what the run took of it, as the budget weighs it (0: not measured) */
	bool exact_mode;              /* track.mode = "exact": counted whatever it cost (text only) */
	/* The census (engine/census.c): pages of the data and write totals
	 * counted exactly by their presence, or why none were (NULL: on). */
	uint64_t census_data, census_write;
	const char *census_why;
	uint64_t fixed_rate;          /* track.sample_rate's N; 0: the budget set the rate */
	int hold;                     /* wss_hold_t: what held auto's last sample where it was */
	/* The data series by kind (indexed by wss_kind_t), for the kinds
	 * that had pages tracked in some sample (bit k of kinds_seen). */
	uint32_t kinds_seen;
	wss_profile_stat_t kinds[WSS_KIND_N];
} wss_profile_summary_t;

/* The summary's "trace": {"file", "records", "pages", "bytes", "last",
 * "stopped"}: the page trace written beside the profile. */
typedef struct wss_profile_trace {
	const char *file;    /* its name, without the directory */
	uint64_t records, pages, bytes;
	uint32_t last;       /* the seq of its last interval record */
	const char *stopped; /* NULL; "trace_max"; or an errno's name */
} wss_profile_trace_t;

void wss_profile_header(wss_fmt_t *f, const wss_profile_header_t *h);
/* A sample is begin, zero or more thread entries, end. */
void wss_profile_sample_begin(wss_fmt_t *f, const wss_profile_sample_t *s);
void wss_profile_sample_thread(wss_fmt_t *f, bool first, const wss_profile_sample_t *s, const wss_profile_thread_t *t);
void wss_profile_sample_end(wss_fmt_t *f);
void wss_profile_summary(wss_fmt_t *f, const wss_profile_summary_t *s);
/* Helpers of the record and its text (profile.c): an average with one
 * decimal, as tenths; millionths as a percentage with one decimal. */
uint64_t wss_profile_avg_tenths(const wss_profile_summary_t *s, const wss_profile_stat_t *st);
void wss_profile_pct_ppm(wss_fmt_t *f, uint64_t ppm);
/* "data peak by kind (pages): shared 18432 (72.0 MiB), anon ...", largest
 * first (an estimate: "≈"), for the stderr summary; false (nothing
 * written) when no kind had a page in the window.  AS-safe. */
bool wss_profile_kinds_text(wss_fmt_t *f, const wss_profile_summary_t *s);

/* {"type":"module","id":N,"path":...,"bias":"0x...","start":"0x...",
 *  "end":"0x...","build_id":"hex"|null} */
void wss_profile_module(wss_fmt_t *f, int id, const char *path, uint64_t bias, uint64_t start, uint64_t end,
			const char *build_id);

/* {"type":"stack","id":ID,"frames":["0x...",...]}: frames[0] is the
 * faulting instruction, the rest return addresses. */
void wss_profile_stack(wss_fmt_t *f, uint32_t id, const uint64_t *frames, uint32_t n);

typedef struct wss_profile_site {
	uint64_t pc;
	uint32_t stack; /* 0: none */
	uint64_t pages;
} wss_profile_site_t;

typedef struct wss_profile_peak {
	uint32_t seq;
	const char *series; /* "data", "read", "write", "thread" */
	int tid;            /* series "thread" */
	uint64_t value;
	double mean, threshold;
	const wss_profile_site_t *sites;
	int nsites;
	uint64_t other_pages; /* first touches by sites not listed */
} wss_profile_peak_t;

/* {"type":"peak","seq":K,"series":...,"value":V,"mean":M,"threshold":T,
 *  "sites":[{"pc":"0x...","stack":S,"pages":N},...],"other_pages":R} */
void wss_profile_peak(wss_fmt_t *f, const wss_profile_peak_t *p);
/* {"type":"sites","sites":[{"pc":"0x...","stack":S,"pages":N},...],"other_pages":R}:
 * the whole run's first-touch sites, most pages first. */
void wss_profile_sites(wss_fmt_t *f, const wss_profile_site_t *sites, int n, uint64_t other_pages);
/* The stderr line "data avg/peak/total: A/P/T pages (a/p/t MiB)" of one
 * series: name is "data", "write" or "read". */
void wss_profile_summary_text(wss_fmt_t *f, const wss_profile_summary_t *s, const char *name);
/* The sentence that goes with a sampled summary whose figures are too
 * wide to act on: which missed session.precision or read above +-100 %,
 * by how much, why, and what to do ("precision: ... ; for tighter
 * figures: --overhead 10%, ..."); false, with nothing written, when every
 * figure is within its target and +-100 %.  For an exact summary, the
 * sentence when exactness cost the program a tenth of its time or more. */
bool wss_profile_precision_text(wss_fmt_t *f, const wss_profile_summary_t *s);

/* Create the profile file from the output pattern, relative to dirfd
 * (AT_FDCWD, or the session directory, whose path is dir: path then starts
 * with dir and "/"): O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666 less the umask.
 * If the expanded name exists (a process that exec'd keeps its pid), ".2",
 * ".3", ... are tried after it.  An existing character device (/dev/null)
 * means no profile: 0 with *fd = -1 and its path.  Returns 0 with the fd
 * and the path, or an errno with a reason in err. */
int wss_profile_create(int dirfd, const char *dir, const char *pattern, int pid, uint64_t start_unix_s,
		       const char *prog, char *path, size_t pathlen, int *fd, char *err, size_t errlen);

#endif
