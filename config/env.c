/* The layers above the file: environment variables WSS_<SECTION>_<KEY>,
 * each checked as the file's key is, the WSS_TEST_ knobs the tests turn,
 * and `wss run` flags (set directly, or passed to the library as variables
 * that WSS_RUN_FLAGS names, so that a message names the flag).  A variable
 * with a settings prefix that names no key is an error: a misspelt
 * override must not go unnoticed. */
#include "config.h"
#include "config/config.h"
#include "config/config_internal.h"

#include <errno.h>
#include <string.h>

const char *wss_config_getenv(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

void wss_config_fmt_env_name(const keydef_t *k, wss_fmt_t *f)
{
	wss_fmt_str(f, "WSS_");
	for (const char *p = k->section; *p; p++)
		wss_fmt_ch(f, (char)(*p - 'a' + 'A'));
	wss_fmt_ch(f, '_');
	for (const char *p = k->name; *p; p++)
		wss_fmt_ch(f, *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p);
}

#define ENV_NAME_MAX 64

/* A key's variable name in buf[ENV_NAME_MAX]. */
static const char *env_of(const keydef_t *k, char *buf)
{
	wss_fmt_t f;
	wss_fmt_init(&f, buf, ENV_NAME_MAX);
	wss_config_fmt_env_name(k, &f);
	return wss_fmt_cstr(&f);
}

const char *wss_config_env_name(wss_key_t id, char *buf, size_t len)
{
	wss_fmt_t f;
	wss_fmt_init(&f, buf, len);
	const keydef_t *k = wss_config_def_of(id);
	if (k)
		wss_config_fmt_env_name(k, &f);
	return wss_fmt_cstr(&f);
}

/* ---- the environment and flags ---- */

static bool settings_prefix(const char *v);

/* Is NAME listed in WSS_RUN_FLAGS (comma-separated)? */
static bool from_flag(char *const *envp, const char *name, size_t n)
{
	const char *l = wss_config_getenv(envp, "WSS_RUN_FLAGS");
	while (l && *l) {
		const char *end = strchr(l, ',');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		if (len == n && !strncmp(l, name, n))
			return true;
		l = end ? end + 1 : NULL;
	}
	return false;
}

bool wss_config_is_ours(const char *entry)
{
	static const char *const p[] = {"WSS_CONFIG=", "WSS_RUN_FLAGS=", "WSS_RUN_PID=", "WSS_TEST_", NULL};
	for (int i = 0; p[i]; i++)
		if (!strncmp(entry, p[i], strlen(p[i])))
			return true;
	return settings_prefix(entry);
}

static bool settings_prefix(const char *v)
{
	static const char *const p[] = {"WSS_SESSION_", "WSS_TRACK_", "WSS_PEAKS_", "WSS_REPORT_", NULL};
	for (int i = 0; p[i]; i++)
		if (!strncmp(v, p[i], strlen(p[i])))
			return true;
	return false;
}

static int env_unknown(const char *var, size_t n, wss_fmt_t *e)
{
	char name[96];
	if (n >= sizeof name)
		n = sizeof name - 1;
	memcpy(name, var, n);
	name[n] = '\0';
	wss_fmt_str(e, name);
	wss_fmt_str(e, ": unknown setting");
	const keydef_t *best = NULL;
	unsigned bd = 1000;
	char cand[ENV_NAME_MAX];
	for (size_t i = 0; i < wss_config_nkeys; i++) {
		unsigned d = wss_config_distance(name, env_of(&wss_config_keys[i], cand));
		if (wss_config_close_enough(name, cand) && d < bd)
			bd = d, best = &wss_config_keys[i];
	}
	if (best) {
		wss_fmt_str(e, "; did you mean ");
		wss_config_fmt_env_name(best, e);
		wss_fmt_ch(e, '?');
	}
	return EINVAL;
}

int wss_config_from_env(wss_config_t *c, char *const *envp, char *err, size_t errlen)
{
	wss_fmt_t e;
	wss_fmt_init(&e, err, errlen);
	int r = 0;
	/* Unknown names first: a misspelt override must not go unnoticed. */
	for (char *const *v = envp; v && *v && !r; v++) {
		if (!settings_prefix(*v))
			continue;
		const char *eq = strchr(*v, '=');
		size_t n = eq ? (size_t)(eq - *v) : strlen(*v);
		bool known = false;
		for (size_t i = 0; i < wss_config_nkeys && !known; i++) {
			char cand[ENV_NAME_MAX];
			env_of(&wss_config_keys[i], cand);
			if (strlen(cand) == n && !strncmp(cand, *v, n)) {
				known = true;
				if (wss_config_keys[i].id < 0) {
					wss_fmt_str(&e, cand);
					wss_fmt_str(&e, ": ");
					r = wss_config_not_implemented(&e, &wss_config_keys[i]);
				}
			}
		}
		if (!known)
			r = env_unknown(*v, n, &e);
	}
	for (size_t i = 0; i < wss_config_nkeys && !r; i++) {
		if (wss_config_keys[i].id < 0)
			continue;
		char name[ENV_NAME_MAX];
		env_of(&wss_config_keys[i], name);
		const char *val = wss_config_getenv(envp, name);
		if (!val)
			continue;
		wss_fmt_t sub = e;
		wss_fmt_str(&sub, name);
		wss_fmt_str(&sub, ": ");
		input_t in = {.s = val};
		wss_origin_t o = {.kind = from_flag(envp, name, strlen(name)) ? WSS_SRC_FLAG : WSS_SRC_ENV};
		if (o.kind == WSS_SRC_FLAG)
			o.flag = "wss run";
		if (wss_config_set_key(c, &wss_config_keys[i], &in, o, &sub)) {
			e = sub;
			r = EINVAL;
		}
	}
	const char *v;
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_VMA_BUDGET"))) {
		uint64_t n;
		if (wss_dur_parse(v, &n) || n < 8 || n > 1000000) {
			wss_fmt_str(&e, "WSS_TEST_VMA_BUDGET: expected a count from 8 to 1000000, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		} else {
			c->test_vma_budget = (uint32_t)n;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_SAMPLING_SEED"))) {
		uint64_t n;
		if (wss_dur_parse(v, &n) || n == 0) {
			wss_fmt_str(&e, "WSS_TEST_SAMPLING_SEED: expected a positive number, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		} else {
			c->test_sampling_seed = n;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_FIRST_RATE"))) {
		uint64_t rate = 0, n = 0;
		const char *q = v;
		while (*q >= '0' && *q <= '9' && rate <= (1U << 20))
			rate = rate * 10 + (uint64_t)(*q++ - '0');
		bool good = q > v && *q == ':' && rate >= 2 && rate <= (1U << 20) && !(rate & (rate - 1));
		const char *d = good ? ++q : q;
		while (good && *q >= '0' && *q <= '9' && n <= 1000)
			n = n * 10 + (uint64_t)(*q++ - '0');
		good = good && q > d && *q == 0 && n >= 1 && n <= 1000;
		if (!good) {
			wss_fmt_str(&e, "WSS_TEST_FIRST_RATE: expected RATE:INTERVALS (a power of two from 2 to 2^20, a count from 1 to "
					"1000), got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		} else {
			c->test_first_level = (uint32_t)__builtin_ctzll(rate);
			c->test_first_intervals = (uint32_t)n;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_ALL_WRITES"))) {
		if (!strcmp(v, "on")) {
			c->test_all_writes = 1;
		} else if (!strcmp(v, "off")) {
			c->test_all_writes = -1;
		} else if (!strcmp(v, "alternate")) {
			c->test_all_writes = 2;
		} else {
			wss_fmt_str(&e, "WSS_TEST_ALL_WRITES: expected on, off or alternate, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_COUNT"))) {
		if (!strcmp(v, "list"))
			c->test_count = 0;
		else if (!strcmp(v, "walk"))
			c->test_count = 1;
		else if (!strcmp(v, "check"))
			c->test_count = 2;
		else {
			wss_fmt_str(&e, "WSS_TEST_COUNT: expected list, walk or check, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		}
	}
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_CENSUS"))) {
		if (!strcmp(v, "off")) {
			c->test_census_off = true;
		} else if (strcmp(v, "on")) {
			wss_fmt_str(&e, "WSS_TEST_CENSUS: expected on or off, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		}
	}
	/* Test-only: the tick waits this long between arming the pages and
	 * harvesting their write bits, so that tests can touch pages in that
	 * window (tests/progs/split.c). */
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_HARVEST_DELAY"))) {
		uint64_t n;
		if (wss_dur_parse(v, &n) || n > 60000000000ULL) {
			wss_fmt_str(&e, "WSS_TEST_HARVEST_DELAY: expected a duration up to 60s, got ");
			wss_fmt_json_str(&e, v);
			r = EINVAL;
		} else {
			c->test_harvest_delay_ns = n;
		}
	}
	/* Test-only: the userfaultfd probe reports "unsupported", so that the
	 * fallback and the error paths are tested on any kernel. */
	if (!r && (v = wss_config_getenv(envp, "WSS_TEST_UFFD_UNSUPPORTED")))
		c->test_uffd_unsupported = !strcmp(v, "1");
	wss_fmt_cstr(&e);
	return r;
}

int wss_config_set_flag(wss_config_t *c, const char *key, const char *value, const char *flag, char *err,
			size_t errlen)
{
	const char *dot = strchr(key, '.');
	const keydef_t *k = NULL;
	for (size_t i = 0; dot && i < wss_config_nkeys && !k; i++)
		if (strlen(wss_config_keys[i].section) == (size_t)(dot - key) &&
		    !strncmp(wss_config_keys[i].section, key, (size_t)(dot - key)) &&
		    !strcmp(wss_config_keys[i].name, dot + 1) && wss_config_keys[i].id >= 0)
			k = &wss_config_keys[i];
	if (!k)
		return ENOENT;
	wss_fmt_t e;
	wss_fmt_init(&e, err, errlen);
	wss_fmt_str(&e, flag);
	wss_fmt_str(&e, ": ");
	input_t in = {.s = value};
	wss_origin_t o = {.kind = WSS_SRC_FLAG, .flag = flag};
	int r = wss_config_set_key(c, k, &in, o, &e);
	wss_fmt_cstr(&e);
	return r;
}
