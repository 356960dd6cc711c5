/* What the TOML parser (toml.c) and its lexer (toml_lex.c) share: the
 * parser's state, a key as read, the character tests both make at every
 * byte (inline, so that splitting the files costs no call), and the
 * functions one calls in the other, grouped under the file that defines
 * them.  Only config/toml.c and config/toml_lex.c include it. */
#ifndef WSS_CONFIG_TOML_INTERNAL_H
#define WSS_CONFIG_TOML_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/toml.h"

/* The deepest nesting of values and key parts (both files bound it). */
#define MAX_DEPTH 128

typedef struct key {
	const char *s;
	size_t len;
	uint32_t off;
} tkey_t;

typedef struct parser {
	wss_toml_doc_t *doc;
	const char *buf, *p, *end;
	wss_toml_error_t *err;
	char *sbuf; /* scratch for decoding strings */
	size_t scap;
} parser_t;

#define TRY(x)                  \
	do {                    \
		int r_ = (x);   \
		if (r_)         \
			return r_; \
	} while (0)

/* ---- lexical helpers ---- */

static inline bool at_end(const parser_t *ps) { return ps->p >= ps->end; }

static inline int peek(const parser_t *ps, size_t k) { return ps->p + k < ps->end ? (unsigned char)ps->p[k] : -1; }

static inline void skip_ws(parser_t *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
		ps->p++;
}

static inline bool is_digit(int c) { return c >= '0' && c <= '9'; }

static inline bool is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '_' || c == '-';
}

/* Bytes in the UTF-8 character that starts at p (input is validated). */
static inline size_t charlen(const char *p, const char *end)
{
	size_t n = 1;
	while (p + n < end && ((unsigned char)p[n] & 0xC0) == 0x80)
		n++;
	return n;
}

/* toml.c */

/* n bytes from the document's arena, 16-aligned.  NULL when out of memory. */
void *wss_toml_arena(parser_t *ps, size_t n);
/* A zeroed value of the type at input offset off, from the arena.  NULL
 * when out of memory. */
wss_toml_value_t *wss_toml_new_value(parser_t *ps, wss_toml_type_t type, uint32_t off);

/* toml_lex.c: errors.  Each records the message in ps->err and returns the
 * error for the caller to pass up. */

/* The line and column (both from 1, columns in characters) of offset off. */
void wss_toml_line_col(const char *buf, size_t off, unsigned *line, unsigned *col);
/* An error at `at`: a, then the token q quoted (if any), then b.  Returns EINVAL. */
int wss_toml_fail_q(parser_t *ps, const char *at, const char *a, const char *q, size_t qlen, const char *b);
/* An error at `at` with message m.  Returns EINVAL. */
int wss_toml_fail(parser_t *ps, const char *at, const char *m);
/* Out of memory, at no position.  Returns ENOMEM. */
int wss_toml_oom(parser_t *ps);

/* toml_lex.c: tokens, read at ps->p and moved past.  Each returns 0, or an
 * error as above. */

/* A comment, from '#' up to (not including) the end of the line. */
int wss_toml_lex_comment(parser_t *ps);
/* One newline (LF or CRLF) if there is one: 1 if consumed, 0 if none, -1
 * (the error recorded) for a lone CR. */
int wss_toml_lex_newline(parser_t *ps);
/* Whitespace, newlines and comments, as allowed inside arrays. */
int wss_toml_lex_skip_ws_nl(parser_t *ps);
/* A string of any of the four kinds, decoded into ps->sbuf (its length in
 * *n); ml_ok is false for keys. */
int wss_toml_lex_string(parser_t *ps, bool ml_ok, size_t *n);
/* The string just decoded (n bytes of ps->sbuf, from start) as a value. */
int wss_toml_lex_make_string(parser_t *ps, const char *start, size_t n, wss_toml_value_t **out);
/* A possibly dotted key: its parts in *keys (from the arena), the count in *nk. */
int wss_toml_lex_dotted_key(parser_t *ps, tkey_t **keys, size_t *nk);
/* A date, a time or both, as a value. */
int wss_toml_lex_datetime(parser_t *ps, wss_toml_value_t **out);
/* An integer or a float, as a value. */
int wss_toml_lex_number(parser_t *ps, wss_toml_value_t **out);

#endif
