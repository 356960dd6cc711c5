/* The configuration written out: as TOML for `wss config check` (each
 * value with where it came from) and for the example file (each key with
 * its help and its default), and as JSON for the profile header (the
 * values, and where each came from). */
#include "config.h"
#include "config/config.h"
#include "config/config_internal.h"

#include <string.h>

/* ---- formatting helpers ---- */

void wss_config_fmt_dur(wss_fmt_t *f, uint64_t ns)
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

/* A decimal kept in thousandths, as TOML writes a float: 5.0, 2.5, 0.125. */
void wss_config_fmt_milli(wss_fmt_t *f, uint32_t m)
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
			wss_config_fmt_dur(f, ns);
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
	case WSS_KEY_PEAKS_SENSITIVITY: wss_config_fmt_milli(f, c->peaks_sensitivity_milli); return;
	case WSS_KEY_PEAKS_MAX: wss_fmt_u64(f, c->peaks_max); return;
	case WSS_KEY_PEAKS_STACK_DEPTH: wss_fmt_u64(f, c->peaks_stack_depth); return;
	case WSS_KEY_REPORT_HOT_PAGES: wss_fmt_u64(f, c->report_hot_pages); return;
	case WSS_KEY_COUNT: return;
	}
}

/* ---- output ---- */

void wss_config_source_text(const wss_config_t *c, const keydef_t *k, wss_fmt_t *f)
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
		wss_config_fmt_env_name(k, f);
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
	for (int s = 0; wss_config_sections[s]; s++) {
		bool any = false;
		for (size_t i = 0; i < wss_config_nkeys; i++) {
			const keydef_t *k = &wss_config_keys[i];
			if (strcmp(k->section, wss_config_sections[s]) || k->id < 0)
				continue;
			if (!any) {
				wss_fmt_str(f, "\n[");
				wss_fmt_str(f, wss_config_sections[s]);
				wss_fmt_str(f, "]\n");
				any = true;
			}
			if (k->id == WSS_KEY_TRACK_SAMPLE_RATE && !c->sample_level) {
				/* TOML has no null: a comment says it is not set. */
				wss_fmt_str(f, "# sample_rate: not set, session.overhead sets the rate  # ");
				wss_config_source_text(c, k, f);
				wss_fmt_ch(f, '\n');
				continue;
			}
			wss_fmt_str(f, k->name);
			wss_fmt_str(f, " = ");
			value_of(c, k, f, true);
			wss_fmt_str(f, "  # ");
			wss_config_source_text(c, k, f);
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
	for (int s = 0; wss_config_sections[s]; s++) {
		wss_fmt_str(f, "\n[");
		wss_fmt_str(f, wss_config_sections[s]);
		wss_fmt_str(f, "]\n");
		for (size_t i = 0; i < wss_config_nkeys; i++) {
			const keydef_t *k = &wss_config_keys[i];
			if (strcmp(k->section, wss_config_sections[s]))
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
	for (size_t i = 0; i < wss_config_nkeys; i++) {
		const keydef_t *k = &wss_config_keys[i];
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
	for (size_t i = 0; i < wss_config_nkeys; i++) {
		const keydef_t *k = &wss_config_keys[i];
		if (k->id < 0)
			continue;
		if (!first)
			wss_fmt_ch(f, ',');
		first = false;
		wss_fmt_ch(f, '"');
		wss_config_key_name(k, f);
		wss_fmt_str(f, "\":");
		wss_fmt_json_str(f, names[c->src[k->id].kind]);
	}
	wss_fmt_ch(f, '}');
}
