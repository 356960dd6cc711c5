/* Session settings from the environment, with the validation rules shared by
 * the library and the `wss` command (see config.h). */
#include "config.h"
#include "config/config.h"

#include <errno.h>
#include <string.h>

#include "common/fmt.h"

void wss_config_defaults(wss_config_t *c)
{
	memset(c, 0, sizeof *c);
	strcpy(c->output, "wss.%p.jsonl");
	c->time_base = WSS_TIME_WALL;
	c->interval_ns = 100000000ULL;
	c->window_ns = 0; /* 0: one interval */
	c->window_intervals = 1;
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
	if (whole > UINT64_MAX / mult)
		return ERANGE;
	*ns = whole * mult + frac * mult / frac_div;
	return 0;
}

int wss_time_base_parse(const char *s, wss_time_base_t *tb)
{
	if (!strcmp(s, "wall"))
		*tb = WSS_TIME_WALL;
	else if (!strcmp(s, "cpu"))
		*tb = WSS_TIME_CPU;
	else if (!strcmp(s, "manual"))
		*tb = WSS_TIME_MANUAL;
	else
		return EINVAL;
	return 0;
}

const char *wss_time_base_name(wss_time_base_t tb)
{
	switch (tb) {
	case WSS_TIME_CPU: return "cpu";
	case WSS_TIME_MANUAL: return "manual";
	default: return "wall";
	}
}

static void set_err(char *err, size_t errlen, const char *a, const char *b, const char *c)
{
	wss_fmt_t f;
	if (!err || !errlen)
		return;
	wss_fmt_init(&f, err, errlen);
	wss_fmt_str(&f, a);
	if (b)
		wss_fmt_str(&f, b);
	if (c)
		wss_fmt_str(&f, c);
	wss_fmt_cstr(&f);
}

static const char *env_find(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

int wss_config_validate(wss_config_t *c, char *err, size_t errlen)
{
	if (c->interval_ns < WSS_INTERVAL_MIN_NS) {
		set_err(err, errlen, "interval must be at least 100us",
			c->interval_ns > 0 && c->interval_ns < 1000 ? " (a number without a unit is nanoseconds: 10ms?)" : "",
			NULL);
		return EINVAL;
	}
	if (c->window_ns == 0)
		c->window_ns = c->interval_ns;
	if (c->window_ns % c->interval_ns != 0) {
		char a[32], b[32];
		wss_fmt_t fa, fb;
		wss_fmt_init(&fa, a, sizeof a);
		wss_fmt_u64(&fa, c->window_ns);
		wss_fmt_init(&fb, b, sizeof b);
		wss_fmt_u64(&fb, c->interval_ns);
		wss_fmt_t e;
		wss_fmt_init(&e, err, errlen);
		wss_fmt_str(&e, "window must be a whole multiple of interval (window ");
		wss_fmt_str(&e, wss_fmt_cstr(&fa));
		wss_fmt_str(&e, "ns, interval ");
		wss_fmt_str(&e, wss_fmt_cstr(&fb));
		wss_fmt_str(&e, "ns)");
		wss_fmt_cstr(&e);
		return EINVAL;
	}
	uint64_t w = c->window_ns / c->interval_ns;
	if (w > WSS_WINDOW_MAX_INTERVALS) {
		set_err(err, errlen, "window is more than 1000000 intervals", NULL, NULL);
		return EINVAL;
	}
	c->window_intervals = (uint32_t)w;
	return 0;
}

int wss_config_from_env(wss_config_t *c, char *const *envp, char *err, size_t errlen)
{
	const char *v;
	if ((v = env_find(envp, "WSS_SESSION_OUTPUT"))) {
		if (!*v || strlen(v) >= sizeof c->output) {
			set_err(err, errlen, "WSS_SESSION_OUTPUT: ", *v ? "path too long" : "empty path", NULL);
			return EINVAL;
		}
		strcpy(c->output, v);
		c->src_output = WSS_SRC_ENV;
	}
	if ((v = env_find(envp, "WSS_SESSION_INTERVAL"))) {
		if (wss_dur_parse(v, &c->interval_ns)) {
			set_err(err, errlen, "WSS_SESSION_INTERVAL: not a duration (e.g. 100ms): \"", v, "\"");
			return EINVAL;
		}
		c->src_interval = WSS_SRC_ENV;
	}
	if ((v = env_find(envp, "WSS_SESSION_WINDOW"))) {
		if (wss_dur_parse(v, &c->window_ns)) {
			set_err(err, errlen, "WSS_SESSION_WINDOW: not a duration (e.g. 300ms): \"", v, "\"");
			return EINVAL;
		}
		c->src_window = WSS_SRC_ENV;
	}
	if ((v = env_find(envp, "WSS_SESSION_TIME_BASE"))) {
		if (wss_time_base_parse(v, &c->time_base)) {
			set_err(err, errlen, "WSS_SESSION_TIME_BASE: expected wall, cpu or manual, got \"", v, "\"");
			return EINVAL;
		}
		c->src_time_base = WSS_SRC_ENV;
	}
	if ((v = env_find(envp, "WSS_TEST_VMA_BUDGET"))) {
		uint64_t n;
		if (wss_dur_parse(v, &n) || n < 8 || n > 1000000) {
			set_err(err, errlen, "WSS_TEST_VMA_BUDGET: expected a count from 8 to 1000000, got \"", v, "\"");
			return EINVAL;
		}
		c->test_vma_budget = (uint32_t)n;
	}
	return wss_config_validate(c, err, errlen);
}

int wss_output_expand(const char *pattern, int pid, const char *prog, char *out, size_t outlen)
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
