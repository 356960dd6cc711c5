/* Formatting into caller-provided or tool-owned buffers, without stdio or
 * malloc, so that the fault path, the tick and the exit path can build JSON
 * and messages.  A buffer that fills up either grows (growable buffers, never
 * from a signal handler) or sets its overflow flag and drops the rest. */
#ifndef WSS_COMMON_FMT_H
#define WSS_COMMON_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct wss_fmt {
	char *buf;
	size_t len;
	size_t cap;
	bool growable; /* grow with wss_sys_alloc; not AS-safe when set */
	bool overflow; /* set when something did not fit */
} wss_fmt_t;

/* A fixed buffer over storage of size cap.  AS-safe. */
void wss_fmt_init(wss_fmt_t *f, char *storage, size_t cap);
/* A growable buffer owned by f.  Returns ENOMEM on failure.  init. */
int wss_fmt_init_growable(wss_fmt_t *f, size_t cap);
void wss_fmt_release(wss_fmt_t *f);
void wss_fmt_reset(wss_fmt_t *f);

void wss_fmt_mem(wss_fmt_t *f, const char *s, size_t n);
void wss_fmt_str(wss_fmt_t *f, const char *s);
void wss_fmt_ch(wss_fmt_t *f, char c);
void wss_fmt_u64(wss_fmt_t *f, uint64_t v);
void wss_fmt_i64(wss_fmt_t *f, int64_t v);
/* v / 10^decimals with exactly that many decimals, e.g. (12345, 2) -> "123.45". */
void wss_fmt_fixed(wss_fmt_t *f, uint64_t v, unsigned decimals);
/* The two string syntaxes wss writes; one escaping routine serves both. */
typedef enum {
	WSS_FMT_JSON, /* invalid UTF-8 bytes become U+FFFD; \u00xx in lower case */
	WSS_FMT_TOML, /* DEL escaped too (a TOML basic string may not hold it);
		       * other bytes as they are; \u00XX in upper case */
} wss_fmt_syntax_t;
/* The n bytes at s (NULs included) as the inside of a string literal,
 * without the quotes: '"' and '\\' backslashed, bytes < 0x20 as \u00xx.
 * AS-safe on a fixed buffer. */
void wss_fmt_escaped(wss_fmt_t *f, const char *s, size_t n, wss_fmt_syntax_t syntax);
/* A JSON string literal, quotes included (wss_fmt_escaped, WSS_FMT_JSON). */
void wss_fmt_json_str(wss_fmt_t *f, const char *s);
/* NUL-terminates (within cap) and returns the buffer. */
const char *wss_fmt_cstr(wss_fmt_t *f);

/* One line "wss: " + the NULL-terminated parts + "\n" to stderr, in one
 * write(2).  AS-safe. */
void wss_log(const char *first, ...) __attribute__((sentinel));

#endif
