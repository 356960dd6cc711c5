/* The engine's settings from a session's configuration: shared by the
 * preloaded library (preload/init.c) and the one `wss attach` loads into a
 * running process (preload/attach.c). */
#include "config.h"
#include "preload/settings.h"

#include <errno.h>

#include "common/fmt.h"
#include "common/sys.h"

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

const wss_toml_alloc_t wss_settings_parse_alloc = {parse_alloc, parse_release, NULL};

/* The engine's settings from the session's config; the header's
 * configuration members are formatted here, so the engine never sees the
 * config or TOML.  init. */
int wss_engine_settings(const wss_config_t *c, wss_engine_settings_t *set)
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
	wss_fmt_str(&conf, ",\"shared\":");
	wss_fmt_str(&conf, c->track_shared ? "true" : "false");
	wss_fmt_str(&conf, ",\"file_mmap\":");
	wss_fmt_str(&conf, c->track_file_mmap ? "true" : "false");
	wss_fmt_str(&conf, ",\"stacks\":");
	wss_fmt_str(&conf, c->track_stacks ? "true" : "false");
	wss_fmt_str(&conf, ",\"data_segments\":");
	wss_fmt_str(&conf, c->track_data_segments ? "true" : "false");
	wss_fmt_str(&conf, ",\"library_data\":");
	wss_fmt_str(&conf, c->track_library_data ? "true" : "false");
	wss_fmt_str(&conf, ",\"code\":");
	wss_fmt_str(&conf, c->track_code ? "true" : "false");
	wss_fmt_str(&conf, ",\"alloc_sites\":");
	wss_fmt_str(&conf, c->track_alloc_sites ? "true" : "false");
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
		.alloc_sites = c->track_alloc_sites,
		.idle_after = c->idle_after_intervals,
		.summary = c->report_summary,
		.mode = modes[c->mode],
		.sample_level = c->sample_level, /* validated: 0 unless mode is sampled */
		.overhead_ppm = c->overhead_ppm,
		.precision_ppm = c->precision_ppm,
		.trace = c->trace,
		.trace_max = c->trace_max,
		.code = c->track_code,
		.header_timing = wss_fmt_cstr(&timing),
		.header_config = wss_fmt_cstr(&conf),
		.test = {.harvest_delay_ns = c->test_harvest_delay_ns,
			 .uffd_unsupported = c->test_uffd_unsupported,
			 .vma_budget = c->test_vma_budget,
			 .sampling_seed = c->test_sampling_seed,
			 .first_level = c->test_first_level,
			 .first_intervals = c->test_first_intervals,
			 .all_writes = c->test_all_writes,
			 .census_off = c->test_census_off,
			 .count = c->test_count},
	};
	return 0;
}
