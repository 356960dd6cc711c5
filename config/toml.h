/* A TOML 1.0 parser: the whole language, parsed into a tree the session
 * schema (config/config.c) and tests/toml/toml-decoder walk.  Pure: no globals, no
 * I/O, no locale-dependent calls; memory comes from the allocator the caller
 * passes (the preload hands it mmap, the command line malloc), and running out
 * of it is an ordinary parse error.  Every error carries the line and column
 * (1-based, columns in characters) where the input stops making sense. */
#ifndef WSS_CONFIG_TOML_H
#define WSS_CONFIG_TOML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	WSS_TOML_STRING,
	WSS_TOML_INTEGER,
	WSS_TOML_FLOAT,
	WSS_TOML_BOOL,
	WSS_TOML_DATETIME,       /* offset date-time */
	WSS_TOML_DATETIME_LOCAL, /* date and time, no offset */
	WSS_TOML_DATE_LOCAL,
	WSS_TOML_TIME_LOCAL,
	WSS_TOML_ARRAY,
	WSS_TOML_TABLE,
} wss_toml_type_t;

typedef struct wss_toml_datetime {
	int year, month, day;          /* unset (0) for a local time */
	int hour, minute, second;      /* unset (0) for a local date */
	uint32_t nanosecond;           /* fraction, truncated to 9 digits */
	int frac_digits;               /* digits of the fraction kept (0..9) */
	int offset_minutes;            /* offset date-times only; Z is 0 */
} wss_toml_datetime_t;

typedef struct wss_toml_value wss_toml_value_t;

typedef struct wss_toml_kv {
	const char *key; /* decoded, NUL-terminated; may contain NUL (see keylen) */
	size_t keylen;
	uint32_t off;    /* byte offset of the key in the source */
	wss_toml_value_t *val;
} wss_toml_kv_t;

struct wss_toml_value {
	wss_toml_type_t type;
	uint32_t off;  /* byte offset where the value (or table header) starts */
	uint32_t flags; /* parser bookkeeping */
	union {
		struct {
			char *ptr; /* NUL-terminated; may contain NUL (see len) */
			size_t len;
		} s;
		int64_t i;
		double f;
		bool b;
		wss_toml_datetime_t dt;
		struct {
			wss_toml_value_t **items;
			size_t n, cap;
		} arr;
		struct {
			wss_toml_kv_t *kv;
			size_t n, cap;
			uint32_t *index; /* hash of kv positions + 1, once n is large */
			size_t index_cap;
		} tab;
	} u;
};

/* Where the parser's memory comes from.  alloc returns NULL when out of
 * memory; release gets back exactly what alloc returned. */
typedef struct wss_toml_alloc {
	void *(*alloc)(void *ctx, size_t n);
	void (*release)(void *ctx, void *p, size_t n);
	void *ctx;
} wss_toml_alloc_t;

typedef struct wss_toml_error {
	unsigned line, col; /* 0 when the error has no position (out of memory) */
	char msg[200];
} wss_toml_error_t;

typedef struct wss_toml_doc wss_toml_doc_t;

/* Parse len bytes of TOML (a UTF-8 byte order mark at the start is allowed).
 * Returns 0 and the document in *out, or EINVAL (bad TOML), ENOMEM, or
 * EFBIG (input of 4 GiB or more) with the reason and position in *err.  The
 * document refers to buf for positions: keep buf alive while using it. */
int wss_toml_parse(const char *buf, size_t len, const wss_toml_alloc_t *a, wss_toml_doc_t **out,
		   wss_toml_error_t *err);

/* Give back all the memory of a document.  NULL is allowed. */
void wss_toml_free(wss_toml_doc_t *doc);

/* The root table. */
const wss_toml_value_t *wss_toml_root(const wss_toml_doc_t *doc);

/* The value of key in table t (len bytes), or NULL. */
const wss_toml_value_t *wss_toml_get(const wss_toml_value_t *t, const char *key, size_t len);

/* Line and column (1-based, characters) of a byte offset in the document's
 * source. */
void wss_toml_locate(const wss_toml_doc_t *doc, uint32_t off, unsigned *line, unsigned *col);

/* The type's name as the toml-test decoder interface spells it
 * ("string", "integer", "datetime-local", ..., "array", "table"). */
const char *wss_toml_type_name(wss_toml_type_t t);

/* Format a date/time value as RFC 3339 (T separator, Z for a zero offset),
 * into buf of at least 40 bytes.  Returns buf. */
char *wss_toml_datetime_format(const wss_toml_value_t *v, char *buf, size_t len);

#endif
