/* The `wss` command.  `wss run` launches a program under libwss.so: it
 * validates its flags with the library's own rules, turns them into the
 * WSS_<SECTION>_<KEY> environment variables the library reads, preloads the
 * libwss.so that belongs to this wss, and passes the program's exit status
 * through (128+N when it dies of signal N).  Usage errors exit 2 before the
 * program runs.  `wss report` reads a profile (cli/model/load.c) and prints it
 * (cli/out/report.c), or writes it as a web page (cli/out/html.c), symbolised offline
 * (cli/model/symbols.c); `wss export` writes it for other tools (cli/out/export.c).  The
 * command never links the preload. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/analyses/analyses.h"
#include "cli/attach/attach.h"
#include "cli/out/diff.h"
#include "cli/out/export.h"
#include "cli/out/html.h"
#include "cli/model/load.h"
#include "cli/out/metrics.h"
#include "cli/cmd/outfile.h"
#include "cli/out/report.h"
#include "cli/cmd/runcheck.h"
#include "cli/model/session.h"
#include "common/pattern.h"
#include "common/sys.h"
#include "config/config.h"

#define EXIT_USAGE 2
/* wss run passes the program's status on, so its own failures need
 * statuses no program is likely to use for its own: those of env(1),
 * timeout(1) and chroot(1).  EXIT_RUN is engine.h's WSS_EXIT_OWN too (the
 * library refusing to start in the program). */
#define EXIT_RUN 125
#define EXIT_NOEXEC 126
#define EXIT_NOTFOUND 127

static void usage(FILE *to)
{
	fputs("usage: wss run [-c FILE] [-o PATH] [--interval DUR] [--window DUR]\n"
	      "               [--time-base wall|cpu|manual]\n"
	      "               [--backend auto|mprotect|uffd-wp|hybrid]\n"
	      "               [--mode auto|exact|sampled] [--sample-rate 1/N] [--overhead PCT]\n"
	      "               [--precision PCT] [--trace] [--trace-max SIZE] [--code]\n"
	      "               [--metrics ADDR] [--metrics-textfile DIR] -- PROG [ARGS...]\n"
	      "       wss report [--json] [--raw-stacks] PROFILE\n"
	      "       wss report --html OUT.html [--raw-stacks] PROFILE...\n"
	      "       wss export --format csv|pprof|perfetto [-o OUT] PROFILE\n"
	      "       wss export --format table|jsonl [-o OUT] PROFILE...\n"
	      "       wss diff [--json] [--fail-above PCT] A B\n"
	      "       wss heatmap [--time-bins N] [--page-bins N] [--by index|address] PROFILE\n"
	      "       wss heatmap --compare [--time-bins N] [--page-bins N] [--by ...] A B\n"
	      "       wss window --window N|DURATION PROFILE\n"
	      "       wss mrc [--sizes N,...] [--no-opt] PROFILE\n"
	      "       wss simulate [--policy fifo,lru,clock,nfu,aging,opt] [--frames N,...]\n"
	      "                    [--period N] [--all] PROFILE\n"
	      "       wss replay --trial-factor TF [--seed S] PROFILE\n"
	      "       wss attach [-c FILE] [-o PATH] [--interval DUR] [--window DUR]\n"
	      "                  [--mode MODE] [--sample-rate 1/N] [--overhead PCT]\n"
	      "                  [--precision PCT] [--duration DUR] [--method auto|inject|refbits]\n"
	      "                  [--metrics ADDR] [--metrics-textfile DIR] PID | --cgroup PATH\n"
	      "       wss config check [FILE]\n"
	      "       wss config example\n"
	      "       wss --version | --help\n"
	      "\n"
	      "wss run measures the working set of PROG (no recompilation, no root) and\n"
	      "writes a JSON Lines profile, by default wss.<pid>.jsonl in the current directory.\n"
	      "  -c, --config FILE     TOML session file (default: $WSS_CONFIG, if set)\n"
	      "  -o, --output PATH     profile path; %p pid, %t start time, %n program name;\n"
	      "                        a character device (/dev/null): no profile\n"
	      "  --interval DUR        sampling interval (default 100ms); DUR: 500us, 10ms, 2s\n"
	      "  --window DUR          working-set window, a whole multiple of the interval\n"
	      "                        (default: one interval)\n"
	      "  --time-base BASE      wall (default), cpu (process CPU time), or manual\n"
	      "                        (the program calls wss_tick())\n"
	      "  --backend NAME        auto (default), mprotect, uffd-wp or hybrid; see\n"
	      "                        docs/backends.md\n"
	      "  --mode MODE           exact (every page, whatever it costs), sampled (one page\n"
	      "                        in N, estimates with 95% intervals), or auto (default:\n"
	      "                        exact while that fits the overhead budget, else sampled)\n"
	      "  --sample-rate 1/N     a fixed rate for --mode sampled, N a power of two from 2\n"
	      "                        to 2^30 (default: the overhead budget sets it)\n"
	      "  --overhead PCT        how much slower the program may run (default 2%, from\n"
	      "                        0.1% to 50%): fault handling on its threads against\n"
	      "                        their wall time, plus the tick's arming and harvesting\n"
	      "  --precision PCT       auto's target for each interval's data estimate: the\n"
	      "                        half-width of its 95% interval (default 5%); the\n"
	      "                        budget holds first, and the summary says what missed\n"
	      "  --trace               also write a page trace beside the profile (NAME.trace):\n"
	      "                        the pages touched per interval; see docs/trace-format.md\n"
	      "  --trace-max SIZE      the most the trace may take (default 256MiB); SIZE: 64MiB\n"
	      "  --code                also measure the code working set (the \"insn\" series):\n"
	      "                        the pages of executable segments run per interval\n"
	      "Settings: defaults < session file < WSS_<SECTION>_<KEY> variables < flags.\n"
	      "\n"
	      "wss report prints what a profile says: the run, the working set's\n"
	      "avg/peak/total, the session's table (for a session's first profile),\n"
	      "threads, a timeline, the peaks with the call stacks that first touched\n"
	      "their pages, and the hot pages; --json prints the same as one\n"
	      "JSON document.  --html OUT.html writes one self-contained page instead: the\n"
	      "same and a zoomable timeline, threads over time, flame graphs of the\n"
	      "first-touch stacks, the trace's heat map and miss-ratio curves, and the\n"
	      "session's processes (the profiles given, and those the first one notes).\n"
	      "A Python, Java or node program's interpreter frames (python3.X, libjvm.so,\n"
	      "node) are folded, a run of them one frame \"[python interpreter: 14 frames]\";\n"
	      "--raw-stacks shows every frame (--json lists them all, the runs marked).\n"
	      "See docs/report.md.\n"
	      "\n"
	      "wss export writes a profile for other tools: csv (a row per sample for the\n"
	      "process and one per thread), pprof (the run's first-touch sites with their\n"
	      "stacks, for go tool pprof) or perfetto (trace-event JSON: counters and peaks,\n"
	      "for ui.perfetto.dev and chrome://tracing), or table or jsonl (several profiles\n"
	      "as one table of fixed columns, a row per process and interval, for DuckDB,\n"
	      "ClickHouse or pandas); to stdout, or with -o to OUT, written whole or not at\n"
	      "all.  See docs/report.md, \"Exports\".\n"
	      "\n"
	      "wss diff prints two profiles side by side: data, read and write avg/peak/total,\n"
	      "by kind, and the allocation sites matched by their functions, largest change\n"
	      "first; an estimate with its 95% interval, and \"~\" where the two overlap.\n"
	      "--fail-above PCT: exit status 4 when B's data avg, peak or total is more than\n"
	      "PCT per cent above A's (for a CI job).  See docs/report.md, \"wss diff\".\n"
	      "\n"
	      "The trace analyses read the page trace beside a profile (recorded with\n"
	      "wss run --trace; docs/trace-format.md) and print text, or CSV with --csv, or\n"
	      "JSON with --json (replay: neither).  See docs/analyses.md.\n"
	      "  heatmap     pages x time: each cell counts the pages' first touches in its\n"
	      "              intervals (x the rate when sampled); pages by index (gaps removed,\n"
	      "              the default) or by address; default 72 time bins (fewer when the\n"
	      "              text would pass 80 columns), 24 page bins.\n"
	      "              --compare A B: the RMSD between the two maps on one grid, each\n"
	      "              divided by its total\n"
	      "  window      the working set recomputed for a window of N intervals, per\n"
	      "              sample, with avg/peak/total\n"
	      "  mrc         miss ratio by memory size for LRU (stack distances) and OPT,\n"
	      "              and the LRU sizes at which 90/95/99 % of re-references hit;\n"
	      "              --sizes (pages; default powers of two), --no-opt\n"
	      "  simulate    each policy's miss ratio at a few sizes about the working set\n"
	      "              of an interval; --all: faults, hits and hit ratio over time\n"
	      "              (every --period references) at each number of frames\n"
	      "  replay      the proxy application: replays the heat map, interval by\n"
	      "              interval, with (touches / TF) random accesses per interval and a\n"
	      "              wss_tick() after each: run it under wss run --time-base manual\n"
	      "\n"
	      "wss attach measures a process that is already running (of the same user)\n"
	      "until --duration ends, the process exits, or it is interrupted, and leaves\n"
	      "it as it was.  --method inject (the default where ptrace may and glibc's\n"
	      "loader can) loads libwss-attach.so into it and tracks the pages it writes\n"
	      "by userfaultfd write protection (writes only); --method refbits (the\n"
	      "fallback) reads and clears the kernel's accessed bits per mapping from\n"
	      "/proc, with no code in the process.  --cgroup PATH measures every process\n"
	      "of a cgroup v2 as it joins and sums them.  See docs/attach.md.\n"
	      "\n"
	      "wss config check validates a session file and prints the effective settings\n"
	      "with where each came from; wss config example prints a commented file with\n"
	      "every key and its default.  See docs/config.md.\n",
	      to);
}

/* A bad setting: one line, no usage hint (the line says what to fix). */
static int die_setting(const char *err)
{
	fprintf(stderr, "wss: %s\n", err);
	return EXIT_USAGE;
}

static int die_usage(const char *a, const char *b)
{
	fprintf(stderr, "wss: %s%s\n", a, b ? b : "");
	fputs("wss: try 'wss --help'\n", stderr);
	return EXIT_USAGE;
}

int wss_find_library(const char *name, char *out, size_t n)
{
	char self[PATH_MAX - 64];
	ssize_t r = readlink("/proc/self/exe", self, sizeof self - 1);
	if (r > 0) {
		self[r] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, n, "%s/.libs/%s", self, name);
			if (strcmp(self, WSS_BINDIR) != 0 && access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, n, "%s/%s", WSS_LIBDIR, name);
	return access(out, R_OK) == 0 ? 0 : ENOENT;
}

static const char *flag_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];
	if (a[n] == '=')
		return a + n + 1;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

/* `wss run` flags: each sets one key, and reaches the library as that key's
 * environment variable (listed in WSS_RUN_FLAGS so the profile records the
 * flag as the source). */
static const struct run_flag {
	const char *shortname, *longname, *key;
	wss_key_t id;
	const char *implied; /* a flag without a value: the value it sets */
} run_flags[] = {
	{"-o", "--output", "session.output", WSS_KEY_SESSION_OUTPUT, NULL},
	{NULL, "--interval", "session.interval", WSS_KEY_SESSION_INTERVAL, NULL},
	{NULL, "--window", "session.window", WSS_KEY_SESSION_WINDOW, NULL},
	{NULL, "--time-base", "session.time_base", WSS_KEY_SESSION_TIME_BASE, NULL},
	{NULL, "--backend", "track.backend", WSS_KEY_TRACK_BACKEND, NULL},
	{NULL, "--mode", "track.mode", WSS_KEY_TRACK_MODE, NULL},
	{NULL, "--sample-rate", "track.sample_rate", WSS_KEY_TRACK_SAMPLE_RATE, NULL},
	{NULL, "--overhead", "session.overhead", WSS_KEY_SESSION_OVERHEAD, NULL},
	{NULL, "--precision", "session.precision", WSS_KEY_SESSION_PRECISION, NULL},
	{NULL, "--trace", "session.trace", WSS_KEY_SESSION_TRACE, "true"},
	{NULL, "--trace-max", "session.trace_max", WSS_KEY_SESSION_TRACE_MAX, NULL},
	{NULL, "--code", "track.code", WSS_KEY_TRACK_CODE, "true"},
};
#define NFLAGS (sizeof run_flags / sizeof *run_flags)

/* Does a match option name (exactly, or as "name=value")? */
static bool opt_is(const char *a, const char *name)
{
	size_t n = name ? strlen(name) : 0;
	return name && !strncmp(a, name, n) && (a[n] == '\0' || (a[n] == '=' && name[1] == '-'));
}

/* Defaults, the session file (path, or $WSS_CONFIG), the environment:
 * exactly the layers the library applies.  Returns 0 or prints the error
 * and returns EXIT_USAGE. */
static int build_config(wss_config_t *cfg, const char *path)
{
	extern char **environ;
	char err[1024];
	if (wss_config_build(cfg, path ? path : getenv("WSS_CONFIG"), environ, NULL, err, sizeof err)) {
		fprintf(stderr, "wss: %s\n", err);
		return EXIT_USAGE;
	}
	return 0;
}

/* Refuse up front what the library would refuse at start: an existing
 * profile (never overwritten), a missing or unwritable directory; and
 * another user's name planted in a shared directory, by the rule of
 * every file wss writes (WSS_EXIT_REFUSED). */
int wss_check_output(const char *output)
{
	if (!strchr(output, '%')) {
		struct stat st;
		if (wss_outfile_planted(output))
			return WSS_EXIT_REFUSED;
		if (lstat(output, &st) == 0) {
			if (S_ISCHR(st.st_mode))
				return 0; /* /dev/null: no profile at all */
			fprintf(stderr, "wss: %s: %s\n", output,
				S_ISDIR(st.st_mode)   ? "is a directory (the output names the profile file)"
				: S_ISLNK(st.st_mode) ? "is a symbolic link (wss never writes through one)"
						      : "File exists (wss never overwrites a profile)");
			return EXIT_USAGE;
		}
	}
	char dir[WSS_OUTPUT_MAX];
	snprintf(dir, sizeof dir, "%s", output);
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir ? 1 : 0] = '\0';
	else
		strcpy(dir, ".");
	if (!strchr(dir, '%') && access(dir, W_OK | X_OK)) {
		fprintf(stderr, "wss: %s: %s\n", dir, errno == ENOENT ? "No such directory" : "directory not writable");
		return EXIT_USAGE;
	}
	return 0;
}

/* A named profile's session directory (docs/config.md, session.output)
 * left by an earlier run: the session's other profiles would go in among
 * that run's.  Refused like the profile's own name. */
static int check_session_dir(const char *output)
{
	char dir[WSS_OUTPUT_MAX + 8];
	struct stat st;
	if (strchr(output, '%') || wss_output_session_dir(output, dir, sizeof dir) || lstat(dir, &st))
		return 0;
	if (wss_outfile_planted(dir))
		return WSS_EXIT_REFUSED;
	fprintf(stderr,
		"wss: %s: exists, and the other processes of %s's session would write their profiles there "
		"(remove it, or choose another --output)\n",
		dir, output);
	return EXIT_USAGE;
}

/* After the program: when its session wrote profiles of other processes,
 * their table on stderr (the first process's engine then printed only its
 * profile's line: engine/output.c).  A profile with no summary says why in
 * one line: the engine writes the summary from the C library's exit, which
 * a program killed by a signal, or one that makes the exit_group system
 * call with its own instructions (Go's runtime), never reaches, and the
 * engine is gone with it before it can say anything.  Silent when there is
 * nothing to sum or nothing can be read: the program's exit status is what
 * matters. */
static void run_ending(const char *pattern, pid_t pid, int64_t t0_ns, const char *prog, int st)
{
	char *path = wss_session_find_first(pattern, pid, t0_ns);
	wss_profile_t p;
	if (!path || wss_load_profile(path, &p)) {
		free(path);
		return;
	}
	if (!p.has_summary) {
		char how[128], upto[48];
		if (WIFSIGNALED(st))
			snprintf(how, sizeof how, "died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
		else
			snprintf(how, sizeof how,
				 "exited (status %d) by its own exit_group system call, past the C library's exit (as Go does)",
				 WEXITSTATUS(st));
		if (p.nsamples)
			snprintf(upto, sizeof upto, "ends at sample %zu, with", p.nsamples);
		else
			snprintf(upto, sizeof upto, "has no sample and");
		fprintf(stderr, "wss: %s %s: its profile %s %s no summary (a valid prefix: wss report reads it)%s\n", prog,
			how, path, upto,
			WIFSIGNALED(st) ? "" : "; wss attach --method refbits PID measures such a program to its end");
	}
	wss_session_t s;
	if (wss_session_wanted(&p) && !wss_session_build(&p, &s)) {
		wss_session_text(&s, stderr, "wss: ");
		wss_session_release(&s);
	}
	wss_load_release(&p);
	free(path);
}

/* End as the program ended: killed by the same signal, so that a shell
 * says what it says natively ("Segmentation fault", or nothing for
 * SIGINT, where it then stops a script as it would) and a parent's
 * WIFSIGNALED holds.  Our core would be wss's, not the program's (which
 * it dumped itself where its limit allowed): none.  A signal whose
 * default does not kill (the program can die of none of those): 128+N,
 * the shell's own figure. */
static void die_of(int sig)
{
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none);
	fflush(stdout);
	fflush(stderr);
	signal(sig, SIG_DFL);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, sig);
	sigprocmask(SIG_UNBLOCK, &m, NULL);
	raise(sig);
	exit(128 + sig);
}

/* wss run up to the program's start: the flags, the settings validated
 * exactly as the library will, the output checked, the environment set.
 * Returns 0 with *prog the program's index in argv, -1 after --help, or
 * a failure's status (its line printed). */
static int run_setup(int argc, char **argv, int *prog, wss_config_t *cfg, wss_metrics_t **metrics)
{
	const char *values[NFLAGS] = {NULL};
	const char *config = NULL, *metrics_addr = NULL, *metrics_dir = NULL;
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return -1;
		}
		const char *name = NULL;
		const char **slot = NULL;
		if (opt_is(a, "-c") || opt_is(a, "--config")) {
			name = a[1] == 'c' ? "-c" : "--config";
			slot = &config;
		} else if (opt_is(a, "--metrics") || opt_is(a, "--metrics-textfile")) {
			/* wss run's own, not settings: the metrics are served
			 * and written here, never in the program. */
			name = opt_is(a, "--metrics") ? "--metrics" : "--metrics-textfile";
			slot = name[9] ? &metrics_dir : &metrics_addr;
		}
		for (size_t k = 0; k < NFLAGS && !slot; k++) {
			if (run_flags[k].implied && !strcmp(a, run_flags[k].longname)) {
				values[k] = run_flags[k].implied;
				slot = &values[k];
				break;
			}
			if (!run_flags[k].implied &&
			    (opt_is(a, run_flags[k].shortname) || opt_is(a, run_flags[k].longname))) {
				name = opt_is(a, run_flags[k].shortname) ? run_flags[k].shortname : run_flags[k].longname;
				slot = &values[k];
			}
		}
		if (!slot) {
			/* A mistyped flag: the one meant, when it is close. */
			const char *words[2 * NFLAGS + 7] = {"-c", "--config", "--help", "-h", "--metrics", "--metrics-textfile"};
			size_t nw = 6;
			for (size_t k = 0; k < NFLAGS; k++) {
				if (run_flags[k].shortname)
					words[nw++] = run_flags[k].shortname;
				words[nw++] = run_flags[k].longname;
			}
			words[nw] = NULL;
			char typed[64];
			snprintf(typed, sizeof typed, "%.*s", (int)strcspn(a, "="), a);
			const char *near = wss_config_closest_word(typed, words);
			if (near) {
				fprintf(stderr, "wss: run: unknown option %s; did you mean %s?\n", a, near);
				return EXIT_USAGE;
			}
			return die_usage("run: unknown option ", a);
		}
		if (!name)
			continue; /* a flag without a value */
		const char *v = flag_value(argc, argv, &i, name);
		if (!v)
			return die_usage("run: missing value for ", name);
		*slot = v;
	}
	if (i >= argc)
		return die_usage("run: no program given (wss run [options] -- PROG [ARGS...])", NULL);

	/* The program (and what it execs, possibly elsewhere) reads the session
	 * file again: it must be a file that can be read twice, passed by
	 * absolute path. */
	char config_abs[PATH_MAX];
	if (config) {
		struct stat st;
		if (stat(config, &st)) {
			char err[1024];
			wss_config_file_error(config, errno, err, sizeof err);
			fprintf(stderr, "wss: %s\n", err);
			return EXIT_USAGE;
		}
		if (!S_ISREG(st.st_mode) || !realpath(config, config_abs)) {
			fprintf(stderr, "wss: %s: %s\n", config,
				S_ISDIR(st.st_mode) ? "is a directory, not a session file"
						    : "not a regular file (the measured program reads it again)");
			return EXIT_USAGE;
		}
	}

	/* Validate exactly as the library will, flags on top. */
	char err[1024];
	int r = build_config(cfg, config);
	if (r)
		return r;
	for (size_t k = 0; k < NFLAGS; k++) {
		if (!values[k])
			continue;
		const char *flag = run_flags[k].longname;
		if (wss_config_set_flag(cfg, run_flags[k].key, values[k], flag, err, sizeof err))
			return die_setting(err);
	}
	if (wss_config_validate(cfg, err, sizeof err))
		return die_setting(err);
	if ((r = wss_check_output(cfg->output)) || (r = check_session_dir(cfg->output)))
		return r;

	char lib[PATH_MAX];
	if (wss_find_library("libwss.so", lib, sizeof lib)) {
		fprintf(stderr, "wss: cannot find libwss.so (looked in the build tree and %s)\n", WSS_LIBDIR);
		return EXIT_USAGE;
	}
	const char *old = getenv("LD_PRELOAD");
	char *preload = malloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
	if (!preload) {
		perror("wss");
		return EXIT_RUN;
	}
	sprintf(preload, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
	setenv("LD_PRELOAD", preload, 1);
	if (config)
		setenv("WSS_CONFIG", config_abs, 1);
	char flags[512] = "";
	for (size_t k = 0; k < NFLAGS; k++) {
		if (!values[k])
			continue;
		char env[96];
		wss_config_env_name(run_flags[k].id, env, sizeof env);
		setenv(env, values[k], 1);
		if (*flags)
			strcat(flags, ",");
		strcat(flags, env);
	}
	if (*flags)
		setenv("WSS_RUN_FLAGS", flags, 1);
	else
		unsetenv("WSS_RUN_FLAGS");
	if ((metrics_addr || metrics_dir) && !(*metrics = wss_metrics_open(metrics_dir, metrics_addr)))
		return EXIT_RUN;
	*prog = i;
	return 0;
}

/* Waits for the program, serving and writing its session's metrics
 * meanwhile when asked: a pidfd says when it has ended, so that the wait
 * ends at once, as waitpid's would. */
static int wait_program(pid_t pid, int *st, wss_metrics_t *m)
{
	int pfd = m ? (int)syscall(SYS_pidfd_open, pid, 0) : -1;
	for (;;) {
		pid_t w = waitpid(pid, st, m ? WNOHANG : 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			perror("wss: waitpid");
			if (pfd >= 0)
				close(pfd);
			return -1;
		}
		if (!m || w < 0)
			continue;
		struct pollfd p[2] = {{pfd, POLLIN, 0}, {wss_metrics_fd(m), POLLIN, 0}};
		int due = wss_metrics_due_ms(m);
		if (poll(p, 2, pfd >= 0 ? due : (due < 100 ? due : 100)) > 0 && (p[1].revents & POLLIN))
			wss_metrics_serve(m);
		wss_metrics_refresh(m, false);
	}
	if (pfd >= 0)
		close(pfd);
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	wss_config_t cfg;
	wss_metrics_t *metrics = NULL;
	int i = 0;
	int r = run_setup(argc, argv, &i, &cfg, &metrics);
	if (r) {
		wss_metrics_close(metrics);
		return r < 0 ? 0 : EXIT_RUN;
	}

	/* Terminal signals reach the program through its process group; we
	 * ignore them while waiting (like system(3)) and forward the ones sent
	 * to us alone. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	wss_run_warn_unmeasurable(argv[i]);
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	/* The engine leaves the session's table to us (engine/output.c). */
	char self[24];
	snprintf(self, sizeof self, "%d", (int)getpid());
	setenv("WSS_RUN_PID", self, 1);
	child = fork();
	if (child < 0) {
		perror("wss: fork");
		return EXIT_RUN;
	}
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(argv[i], &argv[i]);
		int e = errno;
		fprintf(stderr, "wss: %s: %s\n", argv[i], strerror(e));
		_exit(e == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	struct sigaction fw;
	memset(&fw, 0, sizeof fw);
	fw.sa_handler = forward;
	int fsigs[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH};
	for (size_t k = 0; k < sizeof fsigs / sizeof *fsigs; k++)
		sigaction(fsigs[k], &fw, NULL);
	int st;
	if (metrics)
		wss_metrics_start(metrics, cfg.output, child, (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec);
	r = wait_program(child, &st, metrics);
	wss_metrics_close(metrics);
	if (r)
		return EXIT_RUN;
	if (cfg.report_summary)
		run_ending(cfg.output, child, (int64_t)t0.tv_sec * 1000000000 + t0.tv_nsec, argv[i], st);
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		die_of(WTERMSIG(st));
	return 1;
}

static int print_fmt(wss_fmt_t *f)
{
	fwrite(f->buf, 1, f->len, stdout);
	wss_fmt_release(f);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}

static int cmd_config(int argc, char **argv)
{
	wss_fmt_t f;
	if (argc >= 2 && !strcmp(argv[1], "example") && argc == 2) {
		if (wss_fmt_init_growable(&f, 1 << 14))
			return 1;
		wss_config_example(&f);
		return print_fmt(&f);
	}
	if (argc >= 2 && !strcmp(argv[1], "check") && argc <= 3) {
		wss_config_t cfg;
		char err[1024];
		int r = build_config(&cfg, argc == 3 ? argv[2] : NULL);
		if (r)
			return r;
		if (wss_config_validate(&cfg, err, sizeof err)) {
			fprintf(stderr, "wss: %s\n", err);
			return EXIT_USAGE;
		}
		if (wss_fmt_init_growable(&f, 1 << 14))
			return 1;
		wss_config_print(&cfg, &f);
		return print_fmt(&f);
	}
	return die_usage("usage: wss config check [FILE] | wss config example", NULL);
}

static int cmd_report(int argc, char **argv)
{
	bool json = false, raw_stacks = false;
	const char *html = NULL;
	char **paths = calloc((size_t)argc, sizeof *paths);
	size_t n = 0;
	bool options = true;
	if (!paths) {
		perror("wss");
		return 1;
	}
	int r = 0;
	for (int i = 1; i < argc && !r; i++) {
		const char *a = argv[i];
		if (options && !strcmp(a, "--")) {
			options = false;
		} else if (options && !strcmp(a, "--json")) {
			json = true;
		} else if (options && !strcmp(a, "--raw-stacks")) {
			raw_stacks = true;
		} else if (options && opt_is(a, "--html")) {
			html = flag_value(argc, argv, &i, "--html");
			if (!html || !*html)
				r = die_usage("report: --html needs the page's path (wss report --html OUT.html PROFILE...)", NULL);
		} else if (options && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			usage(stdout);
			free(paths);
			return 0;
		} else if (options && a[0] == '-' && a[1]) {
			r = die_usage("report: unknown option ", a);
		} else
			paths[n++] = argv[i];
	}
	if (!r && json && html)
		r = die_usage("report: --json or --html, not both", NULL);
	else if (!r && !n)
		r = die_usage("report: no profile given (wss report [--json] PROFILE, wss report --html OUT PROFILE...)",
			      NULL);
	else if (!r && n > 1 && !html)
		r = die_usage("report: one profile at a time (several with --html): ", paths[1]);
	if (r || html) {
		r = r ? r : wss_html_report(html, paths, n, raw_stacks);
		free(paths);
		return r;
	}
	wss_profile_t p;
	r = wss_load_profile(paths[0], &p);
	free(paths);
	if (r)
		return r;
	r = json ? wss_report_json(&p, stdout) : wss_report_text(&p, stdout, raw_stacks);
	wss_load_release(&p);
	if (r) {
		fprintf(stderr, "wss: report: %s\n", strerror(r));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		puts("wss " PACKAGE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "config"))
		return cmd_config(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	static const struct analysis {
		const char *name;
		int (*fn)(int, char **);
	} analyses[] = {{"heatmap", wss_cmd_heatmap}, {"window", wss_cmd_window}, {"mrc", wss_cmd_mrc},
			{"simulate", wss_cmd_simulate}, {"replay", wss_cmd_replay}, {"attach", wss_cmd_attach},
			{"export", wss_cmd_export}, {"diff", wss_cmd_diff}};
	for (size_t k = 0; k < sizeof analyses / sizeof *analyses; k++)
		if (!strcmp(argv[1], analyses[k].name)) {
			int r = analyses[k].fn(argc - 1, argv + 1);
			if (r == WSS_CMD_HELP) {
				usage(stdout);
				return 0;
			}
			return r;
		}
	return die_usage("unknown command: ", argv[1]);
}
