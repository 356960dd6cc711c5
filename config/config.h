/* The session settings the engine runs with, and where they come from.
 * This issue reads them from the environment (WSS_<SECTION>_<KEY>); the TOML
 * file layer sits under it.  Pure: no OS calls, only the strings it is given,
 * so `wss run` validates flags with exactly the rules the library applies. */
#ifndef WSS_CONFIG_CONFIG_H
#define WSS_CONFIG_CONFIG_H

#include <stddef.h>
#include <stdint.h>

typedef enum { WSS_TIME_WALL = 0, WSS_TIME_CPU, WSS_TIME_MANUAL } wss_time_base_t;

#define WSS_OUTPUT_MAX 1024
#define WSS_INTERVAL_MIN_NS 100000ULL        /* 100 us */
#define WSS_WINDOW_MAX_INTERVALS 1000000U

typedef enum { WSS_SRC_DEFAULT = 0, WSS_SRC_ENV } wss_source_t;

typedef struct wss_config {
	char output[WSS_OUTPUT_MAX]; /* pattern: %p pid, %n program name, %% */
	wss_time_base_t time_base;
	uint64_t interval_ns;
	uint64_t window_ns;
	uint32_t window_intervals;
	wss_source_t src_output, src_time_base, src_interval, src_window;
	/* Test-only (WSS_TEST_VMA_BUDGET): cap the mprotect backend's VMA
	 * budget so the coarse path can be tested; 0 = derive it. */
	uint32_t test_vma_budget;
} wss_config_t;

/* Defaults: output "wss.%p.jsonl", wall time, interval 100 ms, window = 1 interval. */
void wss_config_defaults(wss_config_t *c);

/* Parse a duration: an integer with an optional fraction and a unit of
 * ns, us, ms or s ("100ms", "2.5s"); a bare integer is nanoseconds.
 * Returns 0, EINVAL (syntax) or ERANGE (overflow). */
int wss_dur_parse(const char *s, uint64_t *ns);

/* Parse "wall", "cpu" or "manual".  Returns 0 or EINVAL. */
int wss_time_base_parse(const char *s, wss_time_base_t *tb);
const char *wss_time_base_name(wss_time_base_t tb);

/* Apply WSS_SESSION_{OUTPUT,INTERVAL,WINDOW,TIME_BASE} from envp, then
 * validate.  Returns 0, or EINVAL with a one-line reason (naming the
 * variable) in err.  Reads nothing but envp: safe before the C library's
 * getenv is usable. */
int wss_config_from_env(wss_config_t *c, char *const *envp, char *err, size_t errlen);

/* Check the cross-key rules (window a whole multiple of interval, bounds)
 * and fill window_intervals.  Returns 0 or EINVAL with a reason in err. */
int wss_config_validate(wss_config_t *c, char *err, size_t errlen);

/* Expand the output pattern: %p pid, %n program name (basename), %% a
 * percent sign.  Returns 0, ENAMETOOLONG, or EINVAL for an unknown %x. */
int wss_output_expand(const char *pattern, int pid, const char *prog, char *out, size_t outlen);

#endif
