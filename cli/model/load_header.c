/* The profile's header, its first line (cli/model/load.c hands it here): the
 * format's version, which must be this wss's, the run's facts, checked
 * against the ranges the engine keeps to (so the reports' arithmetic stays
 * in 64 bits), what track.code left out, and the session's settings,
 * flattened to "section.key" with where each came from. */
#include "config.h"
#include "cli/model/load_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model/json.h"
#include "common/profile_version.h"
#include "config/config.h"

/* A JSON value as compact text (the header's settings are scalars: null,
 * booleans, numbers, strings).  Returns NULL when out of memory. */
static char *json_text(const wss_json_t *v)
{
	char *out = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&out, &n);
	if (!f)
		return NULL;
	switch (v->type) {
	case WSS_JSON_NULL:
		fputs("null", f);
		break;
	case WSS_JSON_BOOL:
		fputs(v->b ? "true" : "false", f);
		break;
	case WSS_JSON_NUMBER:
		if (v->is_int) {
			fprintf(f, "%lld", (long long)v->i);
		} else {
			/* The shortest digits that read back as the same double
			 * (5.0 as 5.0, 0.1 as 0.1). */
			char b[32];
			for (int prec = 1; prec <= 17; prec++) {
				snprintf(b, sizeof b, "%.*g", prec, v->d);
				if (strtod(b, NULL) == v->d)
					break;
			}
			fputs(b, f);
			if (!strpbrk(b, ".eEn"))
				fputs(".0", f);
		}
		break;
	case WSS_JSON_STRING:
		fputc('"', f);
		for (size_t k = 0; k < v->len; k++) {
			unsigned char c = (unsigned char)v->s[k];
			if (c == '"' || c == '\\')
				fprintf(f, "\\%c", c);
			else if (c < 0x20)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
		fputc('"', f);
		break;
	default:
		fputs(v->type == WSS_JSON_ARRAY ? "[...]" : "{...}", f);
	}
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

/* The header's "config" (by section) with "config_source", flattened to
 * "section.key" settings in the header's order. */
static int load_settings(loader_t *ld, const wss_json_t *h)
{
	wss_profile_t *p = ld->p;
	const wss_json_t *cfg, *src;
	if (!wss_load_opt_obj(ld, h, "header", "config", &cfg) ||
	    !wss_load_opt_obj(ld, h, "header", "config_source", &src))
		return ld->status;
	if (!cfg)
		return 0;
	size_t n = 0;
	for (size_t i = 0; i < cfg->n; i++)
		if (cfg->members[i].value->type == WSS_JSON_OBJECT)
			n += cfg->members[i].value->n;
	if (n && !(p->settings = calloc(n, sizeof *p->settings)))
		return wss_load_nomem(ld);
	for (size_t i = 0; i < cfg->n; i++) {
		const wss_json_t *sec = cfg->members[i].value;
		if (sec->type != WSS_JSON_OBJECT)
			return wss_load_bad(ld, 1, "header: config: \"%s\" is not an object", cfg->members[i].key);
		for (size_t j = 0; j < sec->n; j++) {
			wss_setting_t *st = &p->settings[p->nsettings++];
			if (asprintf(&st->key, "%s.%s", cfg->members[i].key, sec->members[j].key) < 0) {
				st->key = NULL;
				return wss_load_nomem(ld);
			}
			const char *from = src ? wss_json_get_str(src, st->key) : NULL;
			if (!(st->value = json_text(sec->members[j].value)) || !(st->source = wss_load_dup(ld, from ? from : "")))
				return wss_load_nomem(ld);
		}
	}
	return 0;
}

static int load_code_header(loader_t *ld, const wss_json_t *c);

int wss_load_read_header(loader_t *ld, const wss_json_t *h)
{
	wss_profile_t *p = ld->p;
	if (!wss_json_get_int(h, "version", &p->version))
		return wss_load_bad(ld, 1, "not a wss profile (the header has no version)");
	if (p->version != WSS_PROFILE_VERSION)
		return wss_load_bad(ld, 1, "profile format version %lld is not supported (this wss reads version %d; a newer wss wrote it?)",
			   (long long)p->version, WSS_PROFILE_VERSION);
	const char *rec = "header";
	if (!wss_load_need_int(ld, h, rec, "pid", &p->pid) || !wss_load_need_str(ld, h, rec, "exe", &p->exe) ||
	    !wss_load_need_int(ld, h, rec, "page_size", &p->page_size) ||
	    !wss_load_need_str(ld, h, rec, "backend", &p->backend) ||
	    !wss_load_need_str(ld, h, rec, "time_base", &p->time_base) ||
	    !wss_load_need_int(ld, h, rec, "interval_ns", &p->interval_ns) ||
	    !wss_load_need_int(ld, h, rec, "window_intervals", &p->window_intervals) ||
	    !wss_load_opt_int(ld, h, rec, "ppid", &p->ppid) ||
	    !wss_load_opt_int(ld, h, rec, "window_ns", &p->window_ns) ||
	    !wss_load_opt_str(ld, h, rec, "tool", &p->tool) || !wss_load_opt_str(ld, h, rec, "kernel", &p->kernel) ||
	    !wss_load_opt_str(ld, h, rec, "host", &p->host) ||
	    !wss_load_opt_str(ld, h, rec, "backend_reason", &p->backend_reason) ||
	    !wss_load_opt_str(ld, h, rec, "backend_sees", &p->backend_sees))
		return ld->status;
	if (p->page_size < LOAD_PAGE_SIZE_MIN || p->page_size > LOAD_PAGE_SIZE_MAX || (p->page_size & (p->page_size - 1)))
		return wss_load_bad(ld, 1, "header: \"page_size\" %lld is not a power of two from 4096 to 1 GiB",
			   (long long)p->page_size);
	ld->pages_limit = INT64_MAX / p->page_size + 1;
	/* session.interval's and session.window's range (config/config.h):
	 * the engine refuses to run outside it. */
	if (p->interval_ns < (int64_t)WSS_INTERVAL_MIN_NS || p->interval_ns > (int64_t)WSS_INTERVAL_MAX_NS)
		return wss_load_bad(ld, 1, "header: \"interval_ns\" %lld is not from 100 us to 3600 s", (long long)p->interval_ns);
	if (p->window_intervals < 1 || p->window_intervals > (int64_t)WSS_WINDOW_MAX_INTERVALS ||
	    p->window_intervals > (int64_t)WSS_WINDOW_MAX_NS / p->interval_ns)
		return wss_load_bad(ld, 1, "header: \"window_intervals\" %lld is not from 1 to 1000000 intervals of at most a week",
			   (long long)p->window_intervals);
	if (p->window_ns >= 0 && p->window_ns != p->window_intervals * p->interval_ns)
		return wss_load_bad(
			ld, 1, "header: \"window_ns\" %lld is not \"window_intervals\" times \"interval_ns\" (%lld)",
			(long long)p->window_ns, (long long)(p->window_intervals * p->interval_ns));
	if (!wss_load_opt_int(ld, h, rec, "start_unix_ns", &p->start_unix_ns))
		return ld->status;
	if (wss_json_get(h, "sampling_seed")) {
		if (!wss_load_parse_addr(wss_json_get(h, "sampling_seed"), &p->sampling_seed))
			return wss_load_bad(ld, 1, "header: \"sampling_seed\" is not a hex string (\"0x...\")");
		p->has_seed = true;
	}
	const wss_json_t *argv = wss_json_get(h, "argv");
	if (!argv || argv->type != WSS_JSON_ARRAY)
		return wss_load_bad(ld, 1, "header: \"argv\" missing or not an array");
	if (!(p->argv = calloc(argv->n + 1, sizeof *p->argv)))
		return wss_load_nomem(ld);
	for (size_t k = 0; k < argv->n; k++) {
		if (argv->items[k]->type != WSS_JSON_STRING)
			return wss_load_bad(ld, 1, "header: \"argv\" holds a non-string");
		if (!(p->argv[p->argc++] = wss_load_dup(ld, argv->items[k]->s)))
			return ld->status;
	}
	if (p->window_ns < 0)
		p->window_ns = p->window_intervals * p->interval_ns;
	if (!wss_load_opt_str(ld, h, rec, "track_mode", &p->track_mode) || !wss_load_opt_str(ld, h, rec, "config_file", &p->config_file) ||
	    !wss_load_opt_beside(ld, h, rec, "session_dir", &p->session_dir))
		return ld->status;
	const wss_json_t *code;
	if (!wss_load_opt_obj(ld, h, rec, "code", &code))
		return ld->status;
	if (code && load_code_header(ld, code))
		return ld->status;
	return load_settings(ld, h);
}

/* The header's "code": {"tracked":true,"excluded":[{"object","why"}...]}
 * or {"tracked":false,"why":...}. */
static int load_code_header(loader_t *ld, const wss_json_t *c)
{
	wss_profile_t *p = ld->p;
	const char *rec = "header: code";
	if (!wss_load_opt_bool(ld, c, rec, "tracked", &p->code_tracked) ||
	    !wss_load_opt_str(ld, c, rec, "why", &p->code_off))
		return ld->status;
	const wss_json_t *ex = wss_json_get(c, "excluded");
	if (!ex)
		return 0;
	if (ex->type != WSS_JSON_ARRAY)
		return wss_load_bad(ld, 1, "header: code: \"excluded\" is not an array");
	if (ex->n && !(p->code_excluded = calloc(ex->n, sizeof *p->code_excluded)))
		return wss_load_nomem(ld);
	for (size_t k = 0; k < ex->n; k++) {
		const wss_json_t *o = ex->items[k];
		const wss_json_t *name = o->type == WSS_JSON_OBJECT ? wss_json_get(o, "object") : NULL;
		const wss_json_t *why = o->type == WSS_JSON_OBJECT ? wss_json_get(o, "why") : NULL;
		if (!name || name->type != WSS_JSON_STRING || !why || why->type != WSS_JSON_STRING)
			return wss_load_bad(ld, 1,
					    "header: code: excluded[%zu]: \"object\" and \"why\" must be strings", k);
		size_t n = strlen(name->s) + strlen(why->s) + 3;
		if (!(p->code_excluded[k] = malloc(n)))
			return wss_load_nomem(ld);
		snprintf(p->code_excluded[k], n, "%s: %s", name->s, why->s);
		p->code_nexcluded++;
	}
	return 0;
}
