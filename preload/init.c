/* Start-up and shut-down of the preloaded library, and the public API.
 * The constructor reads the session settings from the environment block it
 * is handed (getenv is not safe this early), sets up the engine, the
 * handler, the heap and the data segment, and starts the clock.  A bad
 * setting stops the process with status 2 before main: measurement was asked
 * for, and running without it would waste the run. */
#include "config.h"
#include "preload/preload.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/fmt.h"
#include "common/sys.h"
#include "config/config.h"
#include "engine/engine.h"
#include "include/wss.h"

static void fail(const char *what, const char *why)
{
	wss_log(what, why, NULL);
	_exit(WSS_EXIT_USAGE);
}

static void *parse_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return wss_sys_alloc(n);
}

static void parse_release(void *ctx, void *p, size_t n)
{
	(void)ctx;
	wss_sys_free(p, n);
}

/* Defaults, then the session file named by WSS_CONFIG, then WSS_<SECTION>_<KEY>
 * variables (and `wss run` flags, which arrive as variables).  The parser's
 * memory comes straight from mmap and is returned before main. */
static void load_config(wss_config_t *cfg, char **envp)
{
	char err[512];
	wss_toml_alloc_t a = {parse_alloc, parse_release, NULL};
	if (wss_config_build(cfg, wss_config_getenv(envp, "WSS_CONFIG"), envp, &a, err, sizeof err) ||
	    wss_config_validate(cfg, err, sizeof err))
		fail(err, "");
}

/* The engine's settings from the session's config; the header's
 * configuration members are formatted here, so the engine never sees the
 * config or TOML.  init. */
static int engine_settings(const wss_config_t *c, wss_engine_settings_t *set)
{
	static wss_fmt_t timing, conf;
	if (wss_fmt_init_growable(&timing, 256) || wss_fmt_init_growable(&conf, 4096))
		return ENOMEM;
	wss_fmt_str(&timing, ",\"time_base\":");
	wss_fmt_json_str(&timing, wss_time_base_name(c->time_base));
	wss_fmt_str(&timing, ",\"interval_ns\":");
	wss_fmt_u64(&timing, c->interval_ns);
	wss_fmt_str(&timing, ",\"window_intervals\":");
	wss_fmt_u64(&timing, c->window_intervals);
	wss_fmt_str(&timing, ",\"window_ns\":");
	wss_fmt_u64(&timing, c->window_ns);
	wss_fmt_str(&conf, ",\"track\":{\"heap\":");
	wss_fmt_str(&conf, c->track_heap ? "true" : "false");
	wss_fmt_str(&conf, ",\"anon_mmap\":");
	wss_fmt_str(&conf, c->track_anon_mmap ? "true" : "false");
	wss_fmt_str(&conf, ",\"data_segments\":");
	wss_fmt_str(&conf, c->track_data_segments ? "true" : "false");
	wss_fmt_str(&conf, ",\"library_data\":");
	wss_fmt_str(&conf, c->track_library_data ? "true" : "false");
	wss_fmt_str(&conf, ",\"code\":");
	wss_fmt_str(&conf, c->track_code ? "true" : "false");
	wss_fmt_ch(&conf, '}');
	if (*c->file) {
		wss_fmt_str(&conf, ",\"config_file\":");
		wss_fmt_json_str(&conf, c->file);
	}
	wss_fmt_str(&conf, ",\"config\":");
	wss_config_json(c, &conf);
	wss_fmt_str(&conf, ",\"config_source\":");
	wss_config_sources_json(c, &conf);
	if (timing.overflow || conf.overflow)
		return ENOMEM;
	static const wss_engine_time_t times[] = {[WSS_TIME_WALL] = WSS_ENGINE_WALL, [WSS_TIME_CPU] = WSS_ENGINE_CPU,
						  [WSS_TIME_MANUAL] = WSS_ENGINE_MANUAL};
	static const wss_track_mode_t modes[] = {[WSS_MODE_AUTO] = WSS_TRACK_AUTO, [WSS_MODE_EXACT] = WSS_TRACK_EXACT,
						 [WSS_MODE_SAMPLED] = WSS_TRACK_SAMPLED};
	*set = (wss_engine_settings_t){
		.backend = wss_backend_name(c->backend),
		.time_base = times[c->time_base],
		.interval_ns = c->interval_ns,
		.window_intervals = c->window_intervals,
		.output = c->output,
		.follow_fork = c->follow_fork,
		.follow_exec = c->follow_exec,
		.peaks = c->peaks_enabled,
		.peaks_sensitivity_milli = c->peaks_sensitivity_milli,
		.peaks_max = c->peaks_max,
		.peaks_stack_depth = c->peaks_stack_depth,
		.hot_pages = c->report_hot_pages,
		.summary = c->report_summary,
		.mode = modes[c->mode],
		.sample_level = c->sample_level, /* validated: 0 unless mode is sampled */
		.overhead_ppm = c->overhead_ppm,
		.trace = c->trace,
		.trace_max = c->trace_max,
		.code = c->track_code,
		.header_timing = wss_fmt_cstr(&timing),
		.header_config = wss_fmt_cstr(&conf),
		.test = {.harvest_delay_ns = c->test_harvest_delay_ns,
			 .uffd_unsupported = c->test_uffd_unsupported,
			 .vma_budget = c->test_vma_budget,
			 .sampling_seed = c->test_sampling_seed},
	};
	return 0;
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
	load_config(&cfg, envp);
	if (!cfg.follow_exec)
		wss_exec_unfollow();
	if (wss_signals_init())
		fail("cannot install the SIGSEGV handler", "");
	wss_altstack_init();
	wss_engine_on_tick(on_tick);
	static wss_config_t cfg_at_start; /* the output pattern lives on in the engine's settings */
	static wss_engine_settings_t set;
	cfg_at_start = cfg;
	if (engine_settings(&cfg_at_start, &set))
		fail("out of memory setting up the engine", "");
	wss_engine_start_t s = {.argc = argc, .argv = argv, .set = &set, .runtime = wss_runtime_detect(),
				.leader = wss_exec_take_leader()};
	if (wss_engine_init(&s, err, sizeof err))
		fail(err, "");
	const char *left_out = wss_engine_runtime_untracked();
	if (left_out) { /* a Go program under a backend with faults */
		cfg.track_anon_mmap = false;
		cfg.track_data_segments = false;
		if (cfg.report_summary)
			wss_log(s.runtime, " program: not tracked: ", left_out, NULL);
	}
	wss_mman_init(cfg.track_anon_mmap);
	if (cfg.track_heap && wss_heap_init())
		wss_log("jemalloc arenas with extent hooks unavailable: the heap is not tracked", NULL);
	if (cfg.track_data_segments)
		wss_engine_data_segments();
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
	if (wss_engine_start())
		fail("cannot start the engine thread", "");
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
