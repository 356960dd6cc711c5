/* Start-up and shut-down of the preloaded library, and the public API.
 * The constructor reads the session settings from the environment block it
 * is handed (getenv is not safe this early), sets up the engine, the
 * handler, the heap and the data segment, and starts the clock.  A bad
 * setting or a resource limit leaves the program running untracked, with
 * one line on stderr; what was asked and cannot be done (an explicit
 * backend this kernel lacks, an unwritable profile) stops it before main
 * with status 125 (WSS_EXIT_OWN). */
#include "config.h"
#include "preload/preload.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/fmt.h"
#include "common/sys.h"
#include "config/config.h"
#include "engine/engine.h"
#include "include/wss.h"
#include "preload/settings.h"

/* The fewest descriptors the program may have for wss to run beside it. */
#define WSS_NOFILE_MIN 32

static void fail(const char *what, const char *why)
{
	wss_log(what, why, NULL);
	_exit(WSS_EXIT_OWN);
}

/* Defaults, then the session file named by WSS_CONFIG, then WSS_<SECTION>_<KEY>
 * variables (and `wss run` flags, which arrive as variables).  The parser's
 * memory comes straight from mmap and is returned before main.  A bad
 * setting is said in one line, and the program runs untracked: under a
 * bare LD_PRELOAD (set for a service, a whole shell) a typo must not stop
 * every program it reaches; `wss run` checks the same settings before it
 * starts anything, and exits 125 there.  Returns false then. */
static bool load_config(wss_config_t *cfg, char **envp)
{
	char err[512];
	if (wss_config_build(cfg, wss_config_getenv(envp, "WSS_CONFIG"), envp, &wss_settings_parse_alloc, err,
			     sizeof err) ||
	    wss_config_validate(cfg, err, sizeof err)) {
		wss_log(err, "; the program runs untracked", NULL);
		return false;
	}
	return true;
}

/* First thing in every tick, under the engine lock. */
static void on_tick(void) { wss_signals_check(); }

__attribute__((constructor)) static void wss_preload_init(int argc, char **argv, char **envp)
{
	/* Secure-execution mode (setuid and the like): do nothing at all. */
	if (getauxval(AT_SECURE))
		return;
	wss_heap_atfork_once();
	wss_sync_init();
	wss_io_init();
	wss_syscalls_init();
	wss_exec_init();
	wss_paths_init();
	wss_config_t cfg;
	char err[512];
	if (!load_config(&cfg, envp))
		return;
	if (!cfg.follow_exec)
		wss_exec_unfollow();
	if (wss_signals_init())
		fail("cannot install the SIGSEGV handler", "");
	wss_altstack_init();
	wss_engine_on_tick(on_tick);
	static wss_config_t cfg_at_start; /* the output pattern lives on in the engine's settings */
	static wss_engine_settings_t set;
	cfg_at_start = cfg;
	if (wss_engine_settings(&cfg_at_start, &set))
		fail("out of memory setting up the engine", "");
	wss_engine_start_t s = {.argc = argc, .argv = argv, .set = &set, .runtime = wss_runtime_detect(),
				.leader = wss_exec_take_leader()};
	for (const char *v = wss_config_getenv(envp, "WSS_RUN_PID"); v && *v >= '0' && *v <= '9' && s.run_pid < 1 << 22; v++)
		s.run_pid = s.run_pid * 10 + (*v - '0');
	/* A descriptor limit this low (ulimit -n) leaves the program no room
	 * to share: the profile, the userfaultfd and pagemap descriptors, the
	 * engine's /proc file and stderr copy, the unwinder's pipe would take
	 * descriptors it opens natively. */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < WSS_NOFILE_MIN) {
		char n[24];
		wss_fmt_t f;
		wss_fmt_init(&f, n, sizeof n);
		wss_fmt_u64(&f, nofile.rlim_cur);
		wss_log("RLIMIT_NOFILE is ", wss_fmt_cstr(&f), " (ulimit -n): too few descriptors to share with wss, which needs "
			"up to 8 (at least 32 allowed): the program runs untracked", NULL);
		return;
	}
	int r = wss_engine_init(&s, err, sizeof err);
	if (r == EMFILE || r == ENFILE || r == ENOMEM || r == EAGAIN) {
		/* A resource limit (ulimit -n, -v), not a mistake in what was
		 * asked: the program runs as it would without us. */
		wss_log(err, " (a resource limit): the program runs untracked", NULL);
		return;
	}
	if (r)
		fail(err, "");
	const char *left_out = wss_engine_runtime_untracked();
	if (left_out) { /* a Go program under a backend with faults */
		cfg.track_anon_mmap = false;
		cfg.track_shared = false;
		cfg.track_file_mmap = false;
		cfg.track_stacks = false;
		cfg.track_data_segments = false;
		if (cfg.report_summary)
			wss_log(s.runtime, " program: not tracked: ", left_out, NULL);
	}
	wss_mman_init(cfg.track_anon_mmap, cfg.track_shared, cfg.track_file_mmap);
	if (cfg.track_heap && wss_heap_init())
		wss_log("jemalloc arenas with extent hooks unavailable: the heap is not tracked", NULL);
	if (cfg.track_data_segments)
		wss_engine_data_segments();
	wss_stacks_main(cfg.track_stacks);
	wss_engine_loader_init(cfg.track_library_data);
	/* jemalloc registers its fork handlers when it initialises: make sure
	 * it has, then register the ticks' lock, whose prepare handler then
	 * runs before jemalloc's (the lock order, wss_lock_rank_t: a program
	 * thread inside dl_iterate_phdr may allocate, so the loader's lock comes
	 * before jemalloc's, and a tick holds ours around the loader's), and
	 * the engine thread's start in a child, after jemalloc's child handler
	 * has made malloc work again.  The engine lock's handlers were
	 * registered before jemalloc's (preload/malloc.c). */
	free(malloc(1));
	pthread_atfork(wss_engine_fork_outer_prepare, wss_engine_fork_outer_parent, wss_engine_fork_outer_child);
	r = wss_engine_start();
	if (r) {
		/* Nothing ticks: measuring ends now, every page given back. */
		static char why[200];
		wss_fmt_t f;
		wss_fmt_init(&f, why, sizeof why);
		wss_fmt_str(&f, "cannot start the engine thread: ");
		wss_fmt_str(&f, wss_errno_text(r));
		if (r == EAGAIN || r == ENOMEM)
			wss_fmt_str(&f, " (a resource limit: ulimit -v or -u)");
		wss_engine_end(wss_fmt_cstr(&f));
	}
}

__attribute__((destructor)) static void wss_preload_fini(void) { wss_engine_finish(); }

/* _exit and _Exit run no destructor: the profile ends here, with the final
 * sample and the summary (dash ends with _exit).  The C library's own exit
 * reaches its _exit by an internal call, after our destructor, and never
 * comes here.  The process then ends as the C library's _exit would end it:
 * exit_group, and exit for a kernel without it. */
void wss_preload_exit(int status)
{
	wss_engine_exit();
	for (;;) {
		wss_sys1(SYS_exit_group, status);
		wss_sys1(SYS_exit, status);
	}
}

WSS_EXPORT void _exit(int status) { wss_preload_exit(status); }
WSS_EXPORT void _Exit(int status) { wss_preload_exit(status); }

WSS_EXPORT void(wss_tick)(void) { wss_engine_tick_manual(); }
