/* The JSON writer (jw.h). */
#include "config.h"
#include "cli/out/jw.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/out/text.h"

int wss_jw_init(wss_jw_t *w, size_t initial)
{
	memset(w, 0, sizeof *w);
	return wss_fmt_init_growable(&w->f, initial);
}

void wss_jw_key(wss_jw_t *w, const char *key)
{
	if (w->comma[w->depth])
		wss_fmt_ch(&w->f, ',');
	w->comma[w->depth] = true;
	if (key) {
		wss_fmt_json_str(&w->f, key);
		wss_fmt_ch(&w->f, ':');
	}
}

void wss_jw_open(wss_jw_t *w, const char *key, char c)
{
	wss_jw_key(w, key);
	wss_fmt_ch(&w->f, c);
	w->comma[++w->depth] = false;
}

void wss_jw_close(wss_jw_t *w, char c)
{
	w->depth--;
	wss_fmt_ch(&w->f, c);
}

void wss_jw_int(wss_jw_t *w, const char *key, int64_t v)
{
	wss_jw_key(w, key);
	wss_fmt_i64(&w->f, v);
}

void wss_jw_int_or_null(wss_jw_t *w, const char *key, int64_t v)
{
	wss_jw_key(w, key);
	if (v < 0)
		wss_fmt_str(&w->f, "null");
	else
		wss_fmt_i64(&w->f, v);
}

void wss_jw_str(wss_jw_t *w, const char *key, const char *s)
{
	wss_jw_key(w, key);
	if (s)
		wss_fmt_json_str(&w->f, s);
	else
		wss_fmt_str(&w->f, "null");
}

void wss_jw_bool(wss_jw_t *w, const char *key, bool b)
{
	wss_jw_key(w, key);
	wss_fmt_str(&w->f, b ? "true" : "false");
}

void wss_jw_hex(wss_jw_t *w, const char *key, uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "0x%" PRIx64, v);
	wss_jw_str(w, key, buf);
}

void wss_jw_num(wss_jw_t *w, const char *key, double v)
{
	char buf[40];
	wss_jw_key(w, key);
	wss_fmt_str(&w->f, wss_text_shortest(buf, sizeof buf, v));
}

void wss_jw_tenths(wss_jw_t *w, const char *key, int64_t tenths)
{
	wss_jw_key(w, key);
	wss_fmt_fixed(&w->f, (uint64_t)tenths, 1);
}

void wss_jw_ci(wss_jw_t *w, const char *key, const wss_ci_t *ci)
{
	if (!ci->present)
		return;
	wss_jw_open(w, key, '[');
	wss_jw_num(w, NULL, ci->lo);
	wss_jw_num(w, NULL, ci->hi);
	wss_jw_close(w, ']');
}

void wss_jw_pm(wss_jw_t *w, const char *key, double est, const wss_ci_t *ci)
{
	if (!ci->present || !(est > 0))
		return;
	wss_jw_num(w, key, round(1000.0 * fmax(est - ci->lo, ci->hi - est) / est) / 10);
}
