/* The TOML lexer: whitespace, newlines and comments, the four kinds of
 * string with their escapes, bare and quoted keys, numbers and date-times,
 * each read at the parser's position and checked as TOML 1.0 says; a
 * string, number or date-time comes back as a value.  The errors are here
 * too, for most are the lexer's: each points at a line and column of the
 * input.  The input is well-formed UTF-8 by now (toml.c checks it first). */
#include "config.h"
#include "config/toml_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"
#include "common/utf8.h"

/* ---- errors ---- */

static void msg_add(wss_toml_error_t *e, size_t *n, const char *s, size_t len)
{
	for (size_t i = 0; i < len && *n + 1 < sizeof e->msg; i++)
		e->msg[(*n)++] = s[i];
	e->msg[*n] = '\0';
}

/* Append a key or token for a message: printable ASCII and UTF-8 as is,
 * control characters as \uXXXX, cut at 40 bytes. */
static void msg_quote(wss_toml_error_t *e, size_t *n, const char *s, size_t len)
{
	size_t lim = len > 40 ? 40 : len;
	while (lim < len && ((unsigned char)s[lim] & 0xC0) == 0x80)
		lim--; /* do not cut a character in half */
	/* The message so far is the buffer's first *n bytes: a full buffer
	 * keeps what fits, as msg_add does. */
	wss_fmt_t f;
	wss_fmt_init(&f, e->msg, sizeof e->msg);
	f.len = *n;
	wss_fmt_ch(&f, '"');
	wss_fmt_escaped(&f, s, lim, WSS_FMT_TOML);
	if (lim < len)
		wss_fmt_str(&f, "...");
	wss_fmt_ch(&f, '"');
	wss_fmt_cstr(&f);
	*n = f.len;
}

void wss_toml_line_col(const char *buf, size_t off, unsigned *line, unsigned *col)
{
	unsigned l = 1, c = 1;
	for (size_t i = 0; i < off; i++) {
		unsigned char b = (unsigned char)buf[i];
		if (b == '\n') {
			l++;
			c = 1;
		} else if ((b & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

/* Record an error at `at`: a message made of a, the quoted token q (if
 * any), and b.  Returns EINVAL for the caller to pass up. */
int wss_toml_fail_q(parser_t *ps, const char *at, const char *a, const char *q, size_t qlen, const char *b)
{
	wss_toml_error_t *e = ps->err;
	size_t n = 0;
	if (at > ps->end)
		at = ps->end;
	wss_toml_line_col(ps->buf, (size_t)(at - ps->buf), &e->line, &e->col);
	e->msg[0] = '\0';
	msg_add(e, &n, a, strlen(a));
	if (q)
		msg_quote(e, &n, q, qlen);
	if (b)
		msg_add(e, &n, b, strlen(b));
	return EINVAL;
}

int wss_toml_fail(parser_t *ps, const char *at, const char *m) { return wss_toml_fail_q(ps, at, m, NULL, 0, NULL); }

int wss_toml_oom(parser_t *ps)
{
	ps->err->line = ps->err->col = 0;
	strcpy(ps->err->msg, "out of memory");
	return ENOMEM;
}

/* ---- lexical helpers ---- */

static bool is_control(int c) { return (c >= 0 && c < 0x20 && c != '\t') || c == 0x7f; }

static int bad_control(parser_t *ps, const char *where)
{
	static const char hex[] = "0123456789ABCDEF";
	unsigned char c = (unsigned char)*ps->p;
	char m[96] = "control character U+00";
	size_t n = strlen(m);
	m[n++] = hex[c >> 4];
	m[n++] = hex[c & 15];
	m[n] = '\0';
	strcat(m, where);
	return wss_toml_fail(ps, ps->p, m);
}

/* A comment, from '#' up to (not including) the end of the line. */
int wss_toml_lex_comment(parser_t *ps)
{
	ps->p++;
	while (ps->p < ps->end && *ps->p != '\n') {
		if (*ps->p == '\r' && peek(ps, 1) == '\n')
			break;
		if (*ps->p == '\r')
			return wss_toml_fail(ps, ps->p, "carriage return not followed by a newline");
		if (is_control((unsigned char)*ps->p))
			return bad_control(ps, " is not allowed in a comment");
		ps->p++;
	}
	return 0;
}

/* Consume one newline (LF or CRLF) if there is one; 1 if consumed. */
int wss_toml_lex_newline(parser_t *ps)
{
	if (peek(ps, 0) == '\n') {
		ps->p++;
		return 1;
	}
	if (peek(ps, 0) == '\r') {
		if (peek(ps, 1) != '\n') {
			wss_toml_fail(ps, ps->p, "carriage return not followed by a newline");
			return -1;
		}
		ps->p += 2;
		return 1;
	}
	return 0;
}

/* Whitespace, newlines and comments, as allowed inside arrays. */
int wss_toml_lex_skip_ws_nl(parser_t *ps)
{
	for (;;) {
		skip_ws(ps);
		if (peek(ps, 0) == '#') {
			TRY(wss_toml_lex_comment(ps));
			continue;
		}
		int r = wss_toml_lex_newline(ps);
		if (r < 0)
			return EINVAL;
		if (!r)
			return 0;
	}
}

/* ---- strings ---- */

static int sbuf_put(parser_t *ps, size_t *n, const char *s, size_t len)
{
	if (*n + len + 1 > ps->scap) {
		size_t cap = ps->scap ? ps->scap : 256;
		while (cap < *n + len + 1)
			cap *= 2;
		char *nb = wss_toml_arena(ps, cap);
		if (!nb)
			return wss_toml_oom(ps);
		if (*n)
			memcpy(nb, ps->sbuf, *n);
		ps->sbuf = nb;
		ps->scap = cap;
	}
	memcpy(ps->sbuf + *n, s, len);
	*n += len;
	return 0;
}

static int put_utf8(parser_t *ps, size_t *n, uint32_t cp)
{
	char b[4];
	return sbuf_put(ps, n, b, wss_utf8_put(b, cp));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int escape(parser_t *ps, size_t *n, bool ml)
{
	const char *at = ps->p; /* the backslash */
	int e = peek(ps, 1);
	char c;
	switch (e) {
	case 'b': c = '\b'; break;
	case 't': c = '\t'; break;
	case 'n': c = '\n'; break;
	case 'f': c = '\f'; break;
	case 'r': c = '\r'; break;
	case '"': c = '"'; break;
	case '\\': c = '\\'; break;
	case 'u':
	case 'U': {
		int digits = e == 'u' ? 4 : 8;
		uint32_t cp = 0;
		for (int i = 0; i < digits; i++) {
			int h = hexval(peek(ps, 2 + (size_t)i));
			if (h < 0)
				return wss_toml_fail(ps, at,
						     e == 'u' ? "\\u needs 4 hex digits" : "\\U needs 8 hex digits");
			cp = cp * 16 + (uint32_t)h;
		}
		if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return wss_toml_fail(ps, at, "escape is not a Unicode scalar value");
		ps->p += 2 + digits;
		return put_utf8(ps, n, cp);
	}
	default:
		if (ml && (e == ' ' || e == '\t' || e == '\n' || e == '\r')) {
			/* Line-ending backslash: it must be followed, after optional
			 * whitespace, by a newline; then all whitespace and newlines
			 * up to the next content are dropped. */
			ps->p++;
			skip_ws(ps);
			int r = wss_toml_lex_newline(ps);
			if (r < 0)
				return EINVAL;
			if (!r)
				return wss_toml_fail(ps, at, "a backslash followed by whitespace must end the line");
			for (;;) {
				skip_ws(ps);
				r = wss_toml_lex_newline(ps);
				if (r < 0)
					return EINVAL;
				if (!r)
					return 0;
			}
		}
		if (e < 0)
			return wss_toml_fail(ps, at, "unterminated string");
		char m[32] = "invalid escape sequence \\";
		memcpy(m + strlen(m), at + 1, charlen(at + 1, ps->end)); /* at most 4 bytes */
		return wss_toml_fail(ps, at, m);
	}
	ps->p += 2;
	return sbuf_put(ps, n, &c, 1);
}

int wss_toml_lex_make_string(parser_t *ps, const char *start, size_t n, wss_toml_value_t **out)
{
	wss_toml_value_t *v = wss_toml_arena(ps, sizeof *v);
	char *s = wss_toml_arena(ps, n + 1);
	if (!v || !s)
		return wss_toml_oom(ps);
	memset(v, 0, sizeof *v);
	if (n)
		memcpy(s, ps->sbuf, n);
	s[n] = '\0';
	v->type = WSS_TOML_STRING;
	v->off = (uint32_t)(start - ps->buf);
	v->u.s.ptr = s;
	v->u.s.len = n;
	*out = v;
	return 0;
}

/* A string of any of the four kinds, decoded into ps->sbuf (length in *n).
 * ml_ok is false for keys. */
int wss_toml_lex_string(parser_t *ps, bool ml_ok, size_t *n)
{
	const char *start = ps->p;
	char q = *ps->p;
	bool literal = q == '\'';
	bool ml = peek(ps, 1) == q && peek(ps, 2) == q;
	*n = 0;
	if (ml && !ml_ok)
		return wss_toml_fail(ps, start, "a multi-line string cannot be a key");
	if (ml) {
		ps->p += 3;
		int r = wss_toml_lex_newline(ps); /* a newline right after the opening is trimmed */
		if (r < 0)
			return EINVAL;
	} else {
		ps->p++;
	}
	for (;;) {
		if (at_end(ps))
			return wss_toml_fail(ps, start, "unterminated string");
		int c = (unsigned char)*ps->p;
		if (c == q) {
			if (!ml) {
				ps->p++;
				return 0;
			}
			size_t k = 0;
			while (peek(ps, k) == q)
				k++;
			if (k >= 3) {
				if (k > 5)
					return wss_toml_fail(ps, ps->p,
							     "too many quotes at the end of a multi-line string");
				TRY(sbuf_put(ps, n, ps->p, k - 3));
				ps->p += k;
				return 0;
			}
			TRY(sbuf_put(ps, n, ps->p, k));
			ps->p += k;
			continue;
		}
		if (c == '\\' && !literal) {
			TRY(escape(ps, n, ml));
			continue;
		}
		if (c == '\n' || c == '\r') {
			if (!ml)
				return wss_toml_fail(ps, ps->p, "newline in a single-line string");
			int r = wss_toml_lex_newline(ps);
			if (r < 0)
				return EINVAL;
			TRY(sbuf_put(ps, n, "\n", 1));
			continue;
		}
		if (is_control(c))
			return bad_control(ps, " must be escaped in a string");
		const char *s = ps->p++;
		while (ps->p < ps->end && (unsigned char)*ps->p >= 0x80)
			ps->p++; /* the rest of a UTF-8 sequence, and any that follow */
		TRY(sbuf_put(ps, n, s, (size_t)(ps->p - s)));
	}
}

/* ---- keys ---- */

static int simple_key(parser_t *ps, tkey_t *k)
{
	k->off = (uint32_t)(ps->p - ps->buf);
	int c = peek(ps, 0);
	if (c == '"' || c == '\'') {
		size_t n;
		TRY(wss_toml_lex_string(ps, false, &n));
		char *s = wss_toml_arena(ps, n + 1);
		if (!s)
			return wss_toml_oom(ps);
		if (n)
			memcpy(s, ps->sbuf, n);
		s[n] = '\0';
		k->s = s;
		k->len = n;
		return 0;
	}
	const char *s = ps->p;
	while (ps->p < ps->end && is_bare((unsigned char)*ps->p))
		ps->p++;
	if (ps->p == s) {
		if (c == '=')
			return wss_toml_fail(ps, s, "missing key before '='");
		if (c < 0 || c == '\n' || c == '\r')
			return wss_toml_fail(ps, s, "expected a key");
		return wss_toml_fail_q(ps, s, "expected a key, found ", s, charlen(s, ps->end), NULL);
	}
	char *d = wss_toml_arena(ps, (size_t)(ps->p - s) + 1);
	if (!d)
		return wss_toml_oom(ps);
	memcpy(d, s, (size_t)(ps->p - s));
	d[ps->p - s] = '\0';
	k->s = d;
	k->len = (size_t)(ps->p - s);
	return 0;
}

/* A possibly dotted key: its parts in *keys (from the arena, so deep
 * nesting costs no stack), the count in *nk. */
int wss_toml_lex_dotted_key(parser_t *ps, tkey_t **keys, size_t *nk)
{
	size_t cap = 0;
	*nk = 0;
	for (;;) {
		if (*nk == MAX_DEPTH)
			return wss_toml_fail(ps, ps->p, "a key has more than 128 dotted parts");
		if (*nk == cap) {
			tkey_t *k = wss_toml_arena(ps, (cap ? cap * 2 : 4) * sizeof *k);
			if (!k)
				return wss_toml_oom(ps);
			if (cap)
				memcpy(k, *keys, cap * sizeof *k);
			*keys = k;
			cap = cap ? cap * 2 : 4;
		}
		TRY(simple_key(ps, &(*keys)[(*nk)++]));
		skip_ws(ps);
		if (peek(ps, 0) != '.')
			return 0;
		ps->p++;
		skip_ws(ps);
	}
}

/* ---- dates, times and numbers ---- */

static int digits2(parser_t *ps, size_t k, int *v)
{
	int a = peek(ps, k), b = peek(ps, k + 1);
	if (!is_digit(a) || !is_digit(b))
		return -1;
	*v = (a - '0') * 10 + (b - '0');
	return 0;
}

static int days_in(int y, int m)
{
	static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 29;
	return d[m - 1];
}

/* HH:MM:SS[.frac] at ps->p. */
static int time_part(parser_t *ps, wss_toml_datetime_t *dt)
{
	const char *at = ps->p;
	if (digits2(ps, 0, &dt->hour) || peek(ps, 2) != ':' || digits2(ps, 3, &dt->minute) || peek(ps, 5) != ':' ||
	    digits2(ps, 6, &dt->second))
		return wss_toml_fail(ps, at, "invalid time: expected HH:MM:SS");
	if (dt->hour > 23 || dt->minute > 59 || dt->second > 59)
		return wss_toml_fail(ps, at, "time out of range");
	ps->p += 8;
	if (peek(ps, 0) == '.') {
		ps->p++;
		if (!is_digit(peek(ps, 0)))
			return wss_toml_fail(ps, ps->p, "expected digits after '.' in a time");
		while (is_digit(peek(ps, 0))) {
			if (dt->frac_digits < 9) {
				dt->nanosecond = dt->nanosecond * 10 + (uint32_t)(*ps->p - '0');
				dt->frac_digits++;
			}
			ps->p++;
		}
		for (int i = dt->frac_digits; i < 9; i++)
			dt->nanosecond *= 10;
	}
	return 0;
}

int wss_toml_lex_datetime(parser_t *ps, wss_toml_value_t **out)
{
	const char *start = ps->p;
	wss_toml_value_t *v = wss_toml_new_value(ps, WSS_TOML_TIME_LOCAL, (uint32_t)(start - ps->buf));
	if (!v)
		return wss_toml_oom(ps);
	wss_toml_datetime_t *dt = &v->u.dt;
	*out = v;
	if (peek(ps, 2) == ':')
		return time_part(ps, dt);
	int yh, yl;
	if (digits2(ps, 0, &yh) || digits2(ps, 2, &yl) || peek(ps, 4) != '-' || digits2(ps, 5, &dt->month) ||
	    peek(ps, 7) != '-' || digits2(ps, 8, &dt->day))
		return wss_toml_fail(ps, start, "invalid date: expected YYYY-MM-DD");
	dt->year = yh * 100 + yl;
	if (dt->month < 1 || dt->month > 12 || dt->day < 1 || dt->day > days_in(dt->year, dt->month))
		return wss_toml_fail(ps, start, "date out of range");
	ps->p += 10;
	v->type = WSS_TOML_DATE_LOCAL;
	int c = peek(ps, 0);
	if (!(c == 'T' || c == 't' || (c == ' ' && is_digit(peek(ps, 1)) && is_digit(peek(ps, 2)) && peek(ps, 3) == ':')))
		return 0;
	ps->p++;
	TRY(time_part(ps, dt));
	v->type = WSS_TOML_DATETIME_LOCAL;
	c = peek(ps, 0);
	if (c == 'Z' || c == 'z') {
		ps->p++;
		v->type = WSS_TOML_DATETIME;
	} else if (c == '+' || c == '-') {
		int oh, om;
		if (digits2(ps, 1, &oh) || peek(ps, 3) != ':' || digits2(ps, 4, &om))
			return wss_toml_fail(ps, ps->p, "invalid offset: expected +HH:MM or -HH:MM");
		if (oh > 23 || om > 59)
			return wss_toml_fail(ps, ps->p, "offset out of range");
		dt->offset_minutes = (oh * 60 + om) * (c == '-' ? -1 : 1);
		ps->p += 6;
		v->type = WSS_TOML_DATETIME;
	}
	return 0;
}

/* Digits in base `base` with single underscores between digits, at *q. */
static bool digit_run(const char **q, const char *e, int base, uint64_t *acc, bool *ovf)
{
	const char *s = *q;
	bool prev_digit = false;
	while (*q < e) {
		int d = hexval((unsigned char)**q);
		if (**q == '_') {
			if (!prev_digit)
				return false;
			prev_digit = false;
		} else if (d >= 0 && d < base) {
			if (acc) {
				if (*acc > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
					*ovf = true;
				else
					*acc = *acc * (uint64_t)base + (uint64_t)d;
			}
			prev_digit = true;
		} else {
			break;
		}
		(*q)++;
	}
	return *q > s && prev_digit;
}

int wss_toml_lex_number(parser_t *ps, wss_toml_value_t **out)
{
	const char *s = ps->p, *e = s;
	while (e < ps->end && (is_bare((unsigned char)*e) || *e == '.' || *e == '+'))
		e++;
	size_t len = (size_t)(e - s);
	wss_toml_value_t *v = wss_toml_new_value(ps, WSS_TOML_INTEGER, (uint32_t)(s - ps->buf));
	if (!v)
		return wss_toml_oom(ps);
	*out = v;
	const char *q = s;
	bool neg = false, sign = false;
	if (*q == '+' || *q == '-') {
		neg = *q == '-';
		sign = true;
		q++;
	}
	if ((size_t)(e - q) == 3 && (!memcmp(q, "inf", 3) || !memcmp(q, "nan", 3))) {
		v->type = WSS_TOML_FLOAT;
		if (q[0] == 'i')
			v->u.f = neg ? -__builtin_inf() : __builtin_inf();
		else
			v->u.f = neg ? -__builtin_nan("") : __builtin_nan("");
		ps->p = e;
		return 0;
	}
	if (e - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'o' || q[1] == 'b')) {
		int base = q[1] == 'x' ? 16 : q[1] == 'o' ? 8 : 2;
		if (sign)
			return wss_toml_fail(ps, s, "a hexadecimal, octal or binary integer cannot have a sign");
		uint64_t acc = 0;
		bool ovf = false;
		q += 2;
		if (!digit_run(&q, e, base, &acc, &ovf) || q != e)
			return wss_toml_fail_q(ps, s, "invalid integer ", s, len, NULL);
		if (ovf || acc > (uint64_t)INT64_MAX)
			return wss_toml_fail_q(ps, s, "integer ", s, len, " does not fit in 64 bits");
		v->u.i = (int64_t)acc;
		ps->p = e;
		return 0;
	}
	uint64_t acc = 0;
	bool ovf = false;
	const char *ip = q;
	if (!digit_run(&q, e, 10, &acc, &ovf))
		return wss_toml_fail_q(ps, s, "invalid number ", s, len, NULL);
	if (*ip == '0' && q - ip > 1)
		return wss_toml_fail_q(ps, s, "leading zeros are not allowed: ", s, len, NULL);
	bool is_float = false;
	if (q < e && *q == '.') {
		q++;
		if (!digit_run(&q, e, 10, NULL, NULL))
			return wss_toml_fail_q(ps, s, "invalid float ", s, len, " (a digit must follow the '.')");
		is_float = true;
	}
	if (q < e && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < e && (*q == '+' || *q == '-'))
			q++;
		if (!digit_run(&q, e, 10, NULL, NULL))
			return wss_toml_fail_q(ps, s, "invalid float ", s, len, " (bad exponent)");
		is_float = true;
	}
	if (q != e)
		return wss_toml_fail_q(ps, s, "invalid number ", s, len, NULL);
	ps->p = e;
	if (!is_float) {
		if (ovf || acc > (uint64_t)INT64_MAX + (neg ? 1 : 0))
			return wss_toml_fail_q(ps, s, "integer ", s, len, " does not fit in 64 bits");
		v->u.i = neg ? (int64_t)(0 - acc) : (int64_t)acc;
		return 0;
	}
	/* strtod on a copy without underscores.  The text is plain ASCII with
	 * a '.' and the command line and the preload (before main) run in the
	 * C locale, so the decimal point means what TOML means. */
	char *tmp = wss_toml_arena(ps, len + 1);
	if (!tmp)
		return wss_toml_oom(ps);
	size_t n = 0;
	for (const char *c = s; c < e; c++)
		if (*c != '_')
			tmp[n++] = *c;
	tmp[n] = '\0';
	char *endp;
	v->type = WSS_TOML_FLOAT;
	v->u.f = strtod(tmp, &endp);
	if (endp != tmp + n)
		return wss_toml_fail_q(ps, s, "invalid float ", s, len, NULL);
	return 0;
}
