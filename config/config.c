/* The session configuration's defaults, the value syntaxes that its keys
 * and the command share (durations, rates, sizes, percentages), the TOML
 * file layer with its suggestions for a misspelt name, and the checks
 * across keys that no one key's setter can make (window against interval,
 * sample_rate against mode).  The key table is keys.c's, the environment
 * and flags env.c's, the printed forms print.c's. */
#include "config.h"
#include "config/config.h"
#include "config/config_internal.h"

#include <errno.h>
#include <string.h>

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

/* ---- suggestions ---- */

static char lower(char c) { return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c; }

/* Levenshtein distance, ignoring ASCII case; names longer than 63 bytes
 * are never close to anything. */
unsigned wss_config_distance(const char *a, const char *b)
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

bool wss_config_close_enough(const char *typed, const char *known)
{
	size_t n = strlen(known);
	return wss_config_distance(typed, known) <= (n >= 8 ? 3u : n >= 4 ? 2u : 1u);
}

const char *wss_config_closest_word(const char *typed, const char *const *words)
{
	const char *best = NULL;
	unsigned bd = 1000;
	for (int i = 0; words[i]; i++) {
		unsigned d = wss_config_distance(typed, words[i]);
		if (wss_config_close_enough(typed, words[i]) && d < bd)
			bd = d, best = words[i];
	}
	return best;
}

static const char *closest_section(const char *typed) { return wss_config_closest_word(typed, wss_config_sections); }

/* The key closest to typed: in section sec (NULL: any section). */
static const keydef_t *closest_key(const char *sec, const char *typed)
{
	const keydef_t *best = NULL;
	unsigned bd = 1000;
	for (size_t i = 0; i < wss_config_nkeys; i++) {
		if (sec && strcmp(wss_config_keys[i].section, sec))
			continue;
		unsigned d = wss_config_distance(typed, wss_config_keys[i].name);
		if (wss_config_close_enough(typed, wss_config_keys[i].name) && d < bd)
			bd = d, best = &wss_config_keys[i];
	}
	return best;
}

static const keydef_t *find_key(const char *sec, const char *name)
{
	for (size_t i = 0; i < wss_config_nkeys; i++)
		if (!strcmp(wss_config_keys[i].section, sec) && !strcmp(wss_config_keys[i].name, name))
			return &wss_config_keys[i];
	return NULL;
}

static const keydef_t *find_key_any_section(const char *name)
{
	for (size_t i = 0; i < wss_config_nkeys; i++)
		if (!strcmp(wss_config_keys[i].name, name))
			return &wss_config_keys[i];
	return NULL;
}

/* ---- message prefixes ---- */

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
		wss_config_fmt_env_name(wss_config_def_of(id), e);
		wss_fmt_str(e, ": ");
	} else if (o->kind == WSS_SRC_FLAG) {
		wss_fmt_str(e, o->flag);
		wss_fmt_str(e, ": ");
	}
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
				return wss_config_not_implemented(e, k);
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
		if (wss_config_set_key(c, k, &in, o, &sub)) {
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
		int si = strlen(kv->key) == kv->keylen ? wss_config_choice(wss_config_sections, kv->key) : -1;
		if (si >= 0 && v->type == WSS_TOML_TABLE) {
			if (apply_section(c, doc, wss_config_sections[si], v, name, e))
				return EINVAL;
			continue;
		}
		unsigned line, col;
		wss_toml_locate(doc, kv->off, &line, &col);
		at_file(e, name, line, col);
		if (si >= 0) {
			wss_fmt_ch(e, '[');
			wss_fmt_str(e, wss_config_sections[si]);
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

/* ---- the checks across keys ---- */

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
		wss_config_fmt_dur(&e, w);
		wss_fmt_str(&e, ", interval ");
		wss_config_fmt_dur(&e, c->interval_ns);
		wss_fmt_ch(&e, ')');
		/* "--window 3" meant three intervals, as wss window's count. */
		if (w < 1000 && c->window_ns) {
			wss_fmt_str(&e, "; ");
			wss_config_fmt_dur(&e, w * c->interval_ns);
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
			wss_config_source_text(c, wss_config_def_of(WSS_KEY_TRACK_MODE), &e);
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
