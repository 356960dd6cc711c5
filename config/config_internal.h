/* What the session schema's files share, config/config.h being what the
 * rest of wss sees: the key table's types, the table itself, and the
 * functions one file calls in another, grouped under the file that defines
 * them.  Only config/ includes it. */
#ifndef WSS_CONFIG_CONFIG_INTERNAL_H
#define WSS_CONFIG_CONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/fmt.h"
#include "config/config.h"
#include "config/toml.h"

typedef enum { T_STRING, T_DURATION, T_BOOL, T_ENUM, T_COUNT, T_DECIMAL, T_RATE, T_PERCENT, T_SIZE } ktype_t;

typedef struct keydef {
	const char *section, *name;
	int id; /* wss_key_t, or -1: recognised, not implemented in this version */
	ktype_t type;
	const char *const *choices; /* T_ENUM */
	const char *help;
} keydef_t;

/* A value for a key: from one layer or the other. */
typedef struct input {
	const wss_toml_value_t *tv; /* from the file */
	const char *s;              /* from the environment or a flag */
} input_t;

/* keys.c */

/* Every key, section by section, in the order they are printed. */
extern const keydef_t wss_config_keys[];
extern const size_t wss_config_nkeys;
/* The sections' names, in the same order; NULL-terminated. */
extern const char *const wss_config_sections[];
/* Key id's entry in the table, or NULL. */
const keydef_t *wss_config_def_of(wss_key_t id);
/* The index of s in the NULL-terminated list, or -1. */
int wss_config_choice(const char *const *list, const char *s);
/* "section.name" into f. */
void wss_config_key_name(const keydef_t *k, wss_fmt_t *f);
/* Sets k from in and records origin as where it came from.  Returns 0, or
 * EINVAL with the reason appended to e. */
int wss_config_set_key(wss_config_t *c, const keydef_t *k, const input_t *in, wss_origin_t origin, wss_fmt_t *e);
/* Says that k is not implemented in this version.  Returns EINVAL. */
int wss_config_not_implemented(wss_fmt_t *e, const keydef_t *k);

/* env.c */

/* k's environment variable, WSS_<SECTION>_<KEY>, into f. */
void wss_config_fmt_env_name(const keydef_t *k, wss_fmt_t *f);

/* config.c */

/* The edit distance between a and b, ignoring ASCII case; 1000 when either
 * is longer than 63 bytes. */
unsigned wss_config_distance(const char *a, const char *b);
/* Is typed near enough to known to suggest known instead? */
bool wss_config_close_enough(const char *typed, const char *known);

/* print.c */

/* ns in the largest unit that divides it: 2s, 100ms, 3ns. */
void wss_config_fmt_dur(wss_fmt_t *f, uint64_t ns);
/* Thousandths as TOML writes a float: 5.0, 2.5, 0.125. */
void wss_config_fmt_milli(wss_fmt_t *f, uint32_t m);
/* Where k's value in c came from: "FILE:LINE:COL", "environment NAME",
 * "flag NAME" or "default". */
void wss_config_source_text(const wss_config_t *c, const keydef_t *k, wss_fmt_t *f);

#endif
