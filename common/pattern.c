/* The profile's path pattern: %p, %t, %n and %%.  A pure function, used by
 * the config (to validate a pattern) and by the engine (to create the
 * profile), so it lives below both. */
#include "config.h"
#include "common/pattern.h"

#include <errno.h>
#include <string.h>

#include "common/fmt.h"

/* Days since 1970-01-01 to a civil date (proleptic Gregorian), by the
 * era/day-of-era arithmetic: 400-year eras of 146097 days, years starting
 * in March so that the leap day is the last of the year. */
static void civil(uint64_t days, unsigned *y, unsigned *m, unsigned *d)
{
	uint64_t z = days + 719468;
	uint64_t era = z / 146097, doe = z % 146097;
	uint64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	uint64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	uint64_t mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = (unsigned)(yoe + era * 400 + (*m <= 2));
}

static void fmt_2(wss_fmt_t *f, unsigned v)
{
	wss_fmt_ch(f, (char)('0' + v / 10 % 10));
	wss_fmt_ch(f, (char)('0' + v % 10));
}

int wss_output_expand(const char *pattern, int pid, uint64_t start_unix_s, const char *prog, char *out,
		      size_t outlen)
{
	wss_fmt_t f;
	wss_fmt_init(&f, out, outlen);
	for (const char *p = pattern; *p; p++) {
		if (*p != '%') {
			wss_fmt_ch(&f, *p);
			continue;
		}
		switch (*++p) {
		case 'p': wss_fmt_u64(&f, (uint64_t)pid); break;
		case 't': {
			unsigned y, m, d, s = (unsigned)(start_unix_s % 86400);
			civil(start_unix_s / 86400, &y, &m, &d);
			wss_fmt_u64(&f, y);
			fmt_2(&f, m);
			fmt_2(&f, d);
			wss_fmt_ch(&f, '-');
			fmt_2(&f, s / 3600);
			fmt_2(&f, s / 60 % 60);
			fmt_2(&f, s % 60);
			break;
		}
		case 'n': {
			const char *b = prog ? strrchr(prog, '/') : NULL;
			wss_fmt_str(&f, b ? b + 1 : (prog && *prog ? prog : "unknown"));
			break;
		}
		case '%': wss_fmt_ch(&f, '%'); break;
		default: return EINVAL;
		}
	}
	wss_fmt_cstr(&f);
	return f.overflow ? ENAMETOOLONG : 0;
}

/* Beside its profile, so it sorts with it and moves with it. */
int wss_output_session_dir(const char *path, char *out, size_t outlen)
{
	size_t n = strlen(path);
	const char *name = strrchr(path, '/');
	size_t nl = n - (size_t)(name ? name + 1 - path : 0);
	if (nl > 6 && !strcmp(path + n - 6, ".jsonl"))
		n -= 6;
	wss_fmt_t f;
	wss_fmt_init(&f, out, outlen);
	wss_fmt_mem(&f, path, n);
	wss_fmt_str(&f, ".d");
	wss_fmt_cstr(&f);
	return f.overflow ? ENAMETOOLONG : 0;
}
