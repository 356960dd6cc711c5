/* TOML 1.0 (https://toml.io/en/v1.0.0), parsed by recursive descent straight
 * into a tree.  The input is checked to be UTF-8 first, so everything after
 * can treat non-ASCII bytes as opaque content of strings and comments.  The
 * table rules (what may be defined twice, what dotted keys may extend) are
 * kept as flags on the tables themselves; see the F_ comments.  Nesting is
 * bounded (MAX_DEPTH) so hostile input cannot exhaust the stack. */
#include "config.h"
#include "config/toml.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"
#include "common/utf8.h"

/* Table and array flags.  A table defined by a [header] cannot be defined
 * again nor extended by dotted keys from its parent; one created or extended
 * by dotted keys cannot later get a [header]; inline tables and array
 * literals are closed once written.  Tables created on the way to a header
 * ([a.b.c] creates a and a.b) carry no flag until one of those happens. */
enum { F_HEADER = 1, F_DOTTED = 2, F_INLINE = 4, F_AOT = 8 };

#define MAX_DEPTH 128
#define CHUNK_MIN (64 * 1024)
#define INDEX_FROM 16 /* tables with more keys get a hash index */

typedef struct chunk {
	struct chunk *next;
	size_t size, used;
} chunk_t;

struct wss_toml_doc {
	wss_toml_alloc_t a;
	chunk_t *chunks;
	const char *src;
	size_t len;
	wss_toml_value_t root;
};

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

/* ---- memory ---- */

static void *arena(parser_t *ps, size_t n)
{
	wss_toml_doc_t *d = ps->doc;
	n = (n + 15) & ~(size_t)15;
	chunk_t *c = d->chunks;
	size_t hdr = (sizeof(chunk_t) + 15) & ~(size_t)15;
	if (!c || c->size - c->used < n) {
		size_t sz = n + hdr > CHUNK_MIN ? n + hdr : CHUNK_MIN;
		c = d->a.alloc(d->a.ctx, sz);
		if (!c)
			return NULL;
		c->size = sz;
		c->used = hdr;
		c->next = d->chunks;
		d->chunks = c;
	}
	void *r = (char *)c + c->used;
	c->used += n;
	return r;
}

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

static void locate(const char *buf, size_t off, unsigned *line, unsigned *col)
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
static int fail_q(parser_t *ps, const char *at, const char *a, const char *q, size_t qlen, const char *b)
{
	wss_toml_error_t *e = ps->err;
	size_t n = 0;
	if (at > ps->end)
		at = ps->end;
	locate(ps->buf, (size_t)(at - ps->buf), &e->line, &e->col);
	e->msg[0] = '\0';
	msg_add(e, &n, a, strlen(a));
	if (q)
		msg_quote(e, &n, q, qlen);
	if (b)
		msg_add(e, &n, b, strlen(b));
	return EINVAL;
}

static int fail(parser_t *ps, const char *at, const char *m) { return fail_q(ps, at, m, NULL, 0, NULL); }

static int oom(parser_t *ps)
{
	ps->err->line = ps->err->col = 0;
	strcpy(ps->err->msg, "out of memory");
	return ENOMEM;
}

#define TRY(x)                  \
	do {                    \
		int r_ = (x);   \
		if (r_)         \
			return r_; \
	} while (0)

/* ---- UTF-8 ---- */

/* Offset of the first byte that is not part of well-formed UTF-8 (no
 * overlongs, surrogates or code points past U+10FFFF), or n. */
static size_t utf8_check(const unsigned char *s, size_t n)
{
	size_t i = 0, k;
	while (i < n && (k = wss_utf8_len(s + i, n - i)))
		i += k;
	return i;
}

/* ---- lexical helpers ---- */

static bool at_end(const parser_t *ps) { return ps->p >= ps->end; }

static int peek(const parser_t *ps, size_t k) { return ps->p + k < ps->end ? (unsigned char)ps->p[k] : -1; }

static void skip_ws(parser_t *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t'))
		ps->p++;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

static bool is_bare(int c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || is_digit(c) || c == '_' || c == '-';
}

/* Bytes in the UTF-8 character that starts at p (input is validated). */
static size_t charlen(const char *p, const char *end)
{
	size_t n = 1;
	while (p + n < end && ((unsigned char)p[n] & 0xC0) == 0x80)
		n++;
	return n;
}

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
	return fail(ps, ps->p, m);
}

/* A comment, from '#' up to (not including) the end of the line. */
static int comment(parser_t *ps)
{
	ps->p++;
	while (ps->p < ps->end && *ps->p != '\n') {
		if (*ps->p == '\r' && peek(ps, 1) == '\n')
			break;
		if (*ps->p == '\r')
			return fail(ps, ps->p, "carriage return not followed by a newline");
		if (is_control((unsigned char)*ps->p))
			return bad_control(ps, " is not allowed in a comment");
		ps->p++;
	}
	return 0;
}

/* Consume one newline (LF or CRLF) if there is one; 1 if consumed. */
static int newline(parser_t *ps)
{
	if (peek(ps, 0) == '\n') {
		ps->p++;
		return 1;
	}
	if (peek(ps, 0) == '\r') {
		if (peek(ps, 1) != '\n') {
			fail(ps, ps->p, "carriage return not followed by a newline");
			return -1;
		}
		ps->p += 2;
		return 1;
	}
	return 0;
}

/* Whitespace, newlines and comments, as allowed inside arrays. */
static int skip_ws_nl(parser_t *ps)
{
	for (;;) {
		skip_ws(ps);
		if (peek(ps, 0) == '#') {
			TRY(comment(ps));
			continue;
		}
		int r = newline(ps);
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
		char *nb = arena(ps, cap);
		if (!nb)
			return oom(ps);
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
				return fail(ps, at, e == 'u' ? "\\u needs 4 hex digits" : "\\U needs 8 hex digits");
			cp = cp * 16 + (uint32_t)h;
		}
		if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return fail(ps, at, "escape is not a Unicode scalar value");
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
			int r = newline(ps);
			if (r < 0)
				return EINVAL;
			if (!r)
				return fail(ps, at, "a backslash followed by whitespace must end the line");
			for (;;) {
				skip_ws(ps);
				r = newline(ps);
				if (r < 0)
					return EINVAL;
				if (!r)
					return 0;
			}
		}
		if (e < 0)
			return fail(ps, at, "unterminated string");
		char m[32] = "invalid escape sequence \\";
		memcpy(m + strlen(m), at + 1, charlen(at + 1, ps->end)); /* at most 4 bytes */
		return fail(ps, at, m);
	}
	ps->p += 2;
	return sbuf_put(ps, n, &c, 1);
}

static int make_string(parser_t *ps, const char *start, size_t n, wss_toml_value_t **out)
{
	wss_toml_value_t *v = arena(ps, sizeof *v);
	char *s = arena(ps, n + 1);
	if (!v || !s)
		return oom(ps);
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
static int string(parser_t *ps, bool ml_ok, size_t *n)
{
	const char *start = ps->p;
	char q = *ps->p;
	bool literal = q == '\'';
	bool ml = peek(ps, 1) == q && peek(ps, 2) == q;
	*n = 0;
	if (ml && !ml_ok)
		return fail(ps, start, "a multi-line string cannot be a key");
	if (ml) {
		ps->p += 3;
		int r = newline(ps); /* a newline right after the opening is trimmed */
		if (r < 0)
			return EINVAL;
	} else {
		ps->p++;
	}
	for (;;) {
		if (at_end(ps))
			return fail(ps, start, "unterminated string");
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
					return fail(ps, ps->p, "too many quotes at the end of a multi-line string");
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
				return fail(ps, ps->p, "newline in a single-line string");
			int r = newline(ps);
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
		TRY(string(ps, false, &n));
		char *s = arena(ps, n + 1);
		if (!s)
			return oom(ps);
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
			return fail(ps, s, "missing key before '='");
		if (c < 0 || c == '\n' || c == '\r')
			return fail(ps, s, "expected a key");
		return fail_q(ps, s, "expected a key, found ", s, charlen(s, ps->end), NULL);
	}
	char *d = arena(ps, (size_t)(ps->p - s) + 1);
	if (!d)
		return oom(ps);
	memcpy(d, s, (size_t)(ps->p - s));
	d[ps->p - s] = '\0';
	k->s = d;
	k->len = (size_t)(ps->p - s);
	return 0;
}

/* A possibly dotted key: its parts in *keys (from the arena, so deep
 * nesting costs no stack), the count in *nk. */
static int dotted_key(parser_t *ps, tkey_t **keys, size_t *nk)
{
	size_t cap = 0;
	*nk = 0;
	for (;;) {
		if (*nk == MAX_DEPTH)
			return fail(ps, ps->p, "a key has more than 128 dotted parts");
		if (*nk == cap) {
			tkey_t *k = arena(ps, (cap ? cap * 2 : 4) * sizeof *k);
			if (!k)
				return oom(ps);
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

/* ---- tables ---- */

static uint32_t hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

const wss_toml_value_t *wss_toml_get(const wss_toml_value_t *t, const char *key, size_t len)
{
	if (!t || t->type != WSS_TOML_TABLE)
		return NULL;
	if (t->u.tab.index) {
		size_t mask = t->u.tab.index_cap - 1;
		for (size_t i = hash(key, len) & mask;; i = (i + 1) & mask) {
			uint32_t slot = t->u.tab.index[i];
			if (!slot)
				return NULL;
			const wss_toml_kv_t *kv = &t->u.tab.kv[slot - 1];
			if (kv->keylen == len && !memcmp(kv->key, key, len))
				return kv->val;
		}
	}
	for (size_t i = 0; i < t->u.tab.n; i++)
		if (t->u.tab.kv[i].keylen == len && !memcmp(t->u.tab.kv[i].key, key, len))
			return t->u.tab.kv[i].val;
	return NULL;
}

static wss_toml_value_t *lookup(wss_toml_value_t *t, const tkey_t *k)
{
	return (wss_toml_value_t *)wss_toml_get(t, k->s, k->len);
}

static void index_add(wss_toml_value_t *t, size_t pos)
{
	size_t mask = t->u.tab.index_cap - 1;
	const wss_toml_kv_t *kv = &t->u.tab.kv[pos];
	size_t i = hash(kv->key, kv->keylen) & mask;
	while (t->u.tab.index[i])
		i = (i + 1) & mask;
	t->u.tab.index[i] = (uint32_t)pos + 1;
}

/* Room for one more after the n items of size sz at items (capacity *cap):
 * items itself, or a copy in a block twice as large (the old one stays in
 * the arena, freed with the document).  NULL when the arena is out of
 * memory. */
static void *grow(parser_t *ps, void *items, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return items;
	size_t c = *cap ? *cap * 2 : 4;
	void *p = arena(ps, c * sz);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, items, n * sz);
	*cap = c;
	return p;
}

/* Add key k (known to be absent) with value v to table t. */
static int put(parser_t *ps, wss_toml_value_t *t, const tkey_t *k, wss_toml_value_t *v)
{
	wss_toml_kv_t *kv = grow(ps, t->u.tab.kv, t->u.tab.n, &t->u.tab.cap, sizeof *kv);
	if (!kv)
		return oom(ps);
	t->u.tab.kv = kv;
	size_t pos = t->u.tab.n++;
	t->u.tab.kv[pos] = (wss_toml_kv_t){.key = k->s, .keylen = k->len, .off = k->off, .val = v};
	if (t->u.tab.n < INDEX_FROM)
		return 0;
	if (t->u.tab.n * 2 > t->u.tab.index_cap) {
		size_t cap = t->u.tab.index_cap ? t->u.tab.index_cap * 2 : 64;
		uint32_t *idx = arena(ps, cap * sizeof *idx);
		if (!idx)
			return oom(ps);
		memset(idx, 0, cap * sizeof *idx);
		t->u.tab.index = idx;
		t->u.tab.index_cap = cap;
		for (size_t i = 0; i < t->u.tab.n; i++)
			index_add(t, i);
	} else {
		index_add(t, pos);
	}
	return 0;
}

static wss_toml_value_t *new_value(parser_t *ps, wss_toml_type_t type, uint32_t off)
{
	wss_toml_value_t *v = arena(ps, sizeof *v);
	if (v) {
		memset(v, 0, sizeof *v);
		v->type = type;
		v->off = off;
	}
	return v;
}

static int push(parser_t *ps, wss_toml_value_t *a, wss_toml_value_t *v)
{
	wss_toml_value_t **items = grow(ps, a->u.arr.items, a->u.arr.n, &a->u.arr.cap, sizeof *items);
	if (!items)
		return oom(ps);
	a->u.arr.items = items;
	a->u.arr.items[a->u.arr.n++] = v;
	return 0;
}

static const char *already_msg(wss_toml_type_t t)
{
	switch (t) {
	case WSS_TOML_STRING: return " is already a string";
	case WSS_TOML_INTEGER: return " is already an integer";
	case WSS_TOML_FLOAT: return " is already a float";
	case WSS_TOML_BOOL: return " is already a boolean";
	case WSS_TOML_ARRAY: return " is already an array";
	case WSS_TOML_TABLE: return " is already a table";
	default: return " is already a date/time";
	}
}

static int not_a_table(parser_t *ps, const tkey_t *k, const wss_toml_value_t *v)
{
	return fail_q(ps, ps->buf + k->off, "key ", k->s, k->len, already_msg(v->type));
}

/* Descend from t into key k on the way to a [header]: create what is
 * missing; go into the last element of an array of tables. */
static int header_step(parser_t *ps, wss_toml_value_t **t, const tkey_t *k)
{
	wss_toml_value_t *v = lookup(*t, k);
	if (!v) {
		v = new_value(ps, WSS_TOML_TABLE, k->off);
		if (!v)
			return oom(ps);
		TRY(put(ps, *t, k, v));
	} else if (v->type == WSS_TOML_ARRAY && (v->flags & F_AOT)) {
		v = v->u.arr.items[v->u.arr.n - 1];
	} else if (v->type == WSS_TOML_ARRAY) {
		return fail_q(ps, ps->buf + k->off, "key ", k->s, k->len, " is an array literal; it cannot be extended");
	} else if (v->type != WSS_TOML_TABLE) {
		return not_a_table(ps, k, v);
	} else if (v->flags & F_INLINE) {
		return fail_q(ps, ps->buf + k->off, "inline table ", k->s, k->len, " cannot be extended");
	}
	*t = v;
	return 0;
}

/* [header] or [[header]]; the table it opens in *cur. */
static int header(parser_t *ps, wss_toml_value_t **cur, int *depth)
{
	const char *start = ps->p;
	bool aot = peek(ps, 1) == '[';
	ps->p += aot ? 2 : 1;
	skip_ws(ps);
	tkey_t *keys = NULL;
	size_t nk;
	TRY(dotted_key(ps, &keys, &nk));
	if (peek(ps, 0) != ']' || (aot && peek(ps, 1) != ']'))
		return fail(ps, ps->p, aot ? "expected ']]' to close the array-of-tables header" : "expected ']' to close the table header");
	ps->p += aot ? 2 : 1;
	wss_toml_value_t *t = &ps->doc->root;
	for (size_t i = 0; i + 1 < nk; i++)
		TRY(header_step(ps, &t, &keys[i]));
	const tkey_t *k = &keys[nk - 1];
	wss_toml_value_t *v = lookup(t, k);
	*depth = (int)nk + (aot ? 1 : 0);
	if (!aot) {
		if (!v) {
			v = new_value(ps, WSS_TOML_TABLE, k->off);
			if (!v)
				return oom(ps);
			TRY(put(ps, t, k, v));
		} else if (v->type != WSS_TOML_TABLE) {
			if (v->type == WSS_TOML_ARRAY && (v->flags & F_AOT))
				return fail_q(ps, start, "", k->s, k->len, " is an array of tables; use [[...]] to add to it");
			return not_a_table(ps, k, v);
		} else if (v->flags & F_INLINE) {
			return fail_q(ps, start, "inline table ", k->s, k->len, " cannot be extended");
		} else if (v->flags & F_HEADER) {
			return fail_q(ps, start, "table ", k->s, k->len, " is defined twice");
		} else if (v->flags & F_DOTTED) {
			return fail_q(ps, start, "table ", k->s, k->len, " was already defined with dotted keys");
		}
		v->flags |= F_HEADER;
		v->off = k->off;
		*cur = v;
		return 0;
	}
	if (!v) {
		v = new_value(ps, WSS_TOML_ARRAY, k->off);
		if (!v)
			return oom(ps);
		v->flags = F_AOT;
		TRY(put(ps, t, k, v));
	} else if (v->type != WSS_TOML_ARRAY) {
		return fail_q(ps, start, "cannot make ", k->s, k->len,
			      v->type == WSS_TOML_TABLE ? " an array of tables: it is already a table"
							: " an array of tables: it is already a value");
	} else if (!(v->flags & F_AOT)) {
		return fail_q(ps, start, "cannot append to array literal ", k->s, k->len, " with [[...]]");
	}
	wss_toml_value_t *el = new_value(ps, WSS_TOML_TABLE, k->off);
	if (!el)
		return oom(ps);
	el->flags = F_HEADER;
	TRY(push(ps, v, el));
	*cur = el;
	return 0;
}

/* ---- values ---- */

static int value(parser_t *ps, int depth, wss_toml_value_t **out);
static int keyval(parser_t *ps, wss_toml_value_t *t, int depth);

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
		return fail(ps, at, "invalid time: expected HH:MM:SS");
	if (dt->hour > 23 || dt->minute > 59 || dt->second > 59)
		return fail(ps, at, "time out of range");
	ps->p += 8;
	if (peek(ps, 0) == '.') {
		ps->p++;
		if (!is_digit(peek(ps, 0)))
			return fail(ps, ps->p, "expected digits after '.' in a time");
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

static int datetime(parser_t *ps, wss_toml_value_t **out)
{
	const char *start = ps->p;
	wss_toml_value_t *v = new_value(ps, WSS_TOML_TIME_LOCAL, (uint32_t)(start - ps->buf));
	if (!v)
		return oom(ps);
	wss_toml_datetime_t *dt = &v->u.dt;
	*out = v;
	if (peek(ps, 2) == ':')
		return time_part(ps, dt);
	int yh, yl;
	if (digits2(ps, 0, &yh) || digits2(ps, 2, &yl) || peek(ps, 4) != '-' || digits2(ps, 5, &dt->month) ||
	    peek(ps, 7) != '-' || digits2(ps, 8, &dt->day))
		return fail(ps, start, "invalid date: expected YYYY-MM-DD");
	dt->year = yh * 100 + yl;
	if (dt->month < 1 || dt->month > 12 || dt->day < 1 || dt->day > days_in(dt->year, dt->month))
		return fail(ps, start, "date out of range");
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
			return fail(ps, ps->p, "invalid offset: expected +HH:MM or -HH:MM");
		if (oh > 23 || om > 59)
			return fail(ps, ps->p, "offset out of range");
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

static int number(parser_t *ps, wss_toml_value_t **out)
{
	const char *s = ps->p, *e = s;
	while (e < ps->end && (is_bare((unsigned char)*e) || *e == '.' || *e == '+'))
		e++;
	size_t len = (size_t)(e - s);
	wss_toml_value_t *v = new_value(ps, WSS_TOML_INTEGER, (uint32_t)(s - ps->buf));
	if (!v)
		return oom(ps);
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
			return fail(ps, s, "a hexadecimal, octal or binary integer cannot have a sign");
		uint64_t acc = 0;
		bool ovf = false;
		q += 2;
		if (!digit_run(&q, e, base, &acc, &ovf) || q != e)
			return fail_q(ps, s, "invalid integer ", s, len, NULL);
		if (ovf || acc > (uint64_t)INT64_MAX)
			return fail_q(ps, s, "integer ", s, len, " does not fit in 64 bits");
		v->u.i = (int64_t)acc;
		ps->p = e;
		return 0;
	}
	uint64_t acc = 0;
	bool ovf = false;
	const char *ip = q;
	if (!digit_run(&q, e, 10, &acc, &ovf))
		return fail_q(ps, s, "invalid number ", s, len, NULL);
	if (*ip == '0' && q - ip > 1)
		return fail_q(ps, s, "leading zeros are not allowed: ", s, len, NULL);
	bool is_float = false;
	if (q < e && *q == '.') {
		q++;
		if (!digit_run(&q, e, 10, NULL, NULL))
			return fail_q(ps, s, "invalid float ", s, len, " (a digit must follow the '.')");
		is_float = true;
	}
	if (q < e && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < e && (*q == '+' || *q == '-'))
			q++;
		if (!digit_run(&q, e, 10, NULL, NULL))
			return fail_q(ps, s, "invalid float ", s, len, " (bad exponent)");
		is_float = true;
	}
	if (q != e)
		return fail_q(ps, s, "invalid number ", s, len, NULL);
	ps->p = e;
	if (!is_float) {
		if (ovf || acc > (uint64_t)INT64_MAX + (neg ? 1 : 0))
			return fail_q(ps, s, "integer ", s, len, " does not fit in 64 bits");
		v->u.i = neg ? (int64_t)(0 - acc) : (int64_t)acc;
		return 0;
	}
	/* strtod on a copy without underscores.  The text is plain ASCII with
	 * a '.' and the command line and the preload (before main) run in the
	 * C locale, so the decimal point means what TOML means. */
	char *tmp = arena(ps, len + 1);
	if (!tmp)
		return oom(ps);
	size_t n = 0;
	for (const char *c = s; c < e; c++)
		if (*c != '_')
			tmp[n++] = *c;
	tmp[n] = '\0';
	char *endp;
	v->type = WSS_TOML_FLOAT;
	v->u.f = strtod(tmp, &endp);
	if (endp != tmp + n)
		return fail_q(ps, s, "invalid float ", s, len, NULL);
	return 0;
}

static void close_inline(wss_toml_value_t *t)
{
	t->flags |= F_INLINE;
	if (t->type != WSS_TOML_TABLE)
		return;
	for (size_t i = 0; i < t->u.tab.n; i++) {
		wss_toml_value_t *v = t->u.tab.kv[i].val;
		if (v->type == WSS_TOML_TABLE && !(v->flags & F_INLINE))
			close_inline(v);
	}
}

static int array(parser_t *ps, int depth, wss_toml_value_t **out)
{
	wss_toml_value_t *a = new_value(ps, WSS_TOML_ARRAY, (uint32_t)(ps->p - ps->buf));
	if (!a)
		return oom(ps);
	a->flags = F_INLINE;
	*out = a;
	const char *start = ps->p++;
	for (;;) {
		TRY(skip_ws_nl(ps));
		if (peek(ps, 0) == ']') {
			ps->p++;
			return 0;
		}
		if (at_end(ps))
			return fail(ps, start, "unterminated array");
		wss_toml_value_t *v;
		TRY(value(ps, depth + 1, &v));
		TRY(push(ps, a, v));
		TRY(skip_ws_nl(ps));
		int c = peek(ps, 0);
		if (c == ',') {
			ps->p++;
		} else if (c == ']') {
			ps->p++;
			return 0;
		} else if (c < 0) {
			return fail(ps, start, "unterminated array");
		} else {
			return fail(ps, ps->p, "expected ',' or ']' after an array element");
		}
	}
}

static int inline_table(parser_t *ps, int depth, wss_toml_value_t **out)
{
	wss_toml_value_t *t = new_value(ps, WSS_TOML_TABLE, (uint32_t)(ps->p - ps->buf));
	if (!t)
		return oom(ps);
	*out = t;
	const char *start = ps->p++;
	skip_ws(ps);
	if (peek(ps, 0) == '}') {
		ps->p++;
		close_inline(t);
		return 0;
	}
	for (;;) {
		skip_ws(ps);
		int c = peek(ps, 0);
		if (c == '\n' || c == '\r' || c == '#')
			return fail(ps, ps->p, "an inline table must be on one line");
		if (c < 0)
			return fail(ps, start, "unterminated inline table");
		if (c == '}')
			return fail(ps, ps->p, "trailing comma in an inline table");
		TRY(keyval(ps, t, depth)); /* keyval adds a level per key part */
		skip_ws(ps);
		c = peek(ps, 0);
		if (c == ',') {
			ps->p++;
		} else if (c == '}') {
			ps->p++;
			close_inline(t);
			return 0;
		} else if (c == '\n' || c == '\r' || c == '#') {
			return fail(ps, ps->p, "an inline table must be on one line");
		} else if (c < 0) {
			return fail(ps, start, "unterminated inline table");
		} else {
			return fail(ps, ps->p, "expected ',' or '}' after a key/value pair in an inline table");
		}
	}
}

static bool word(const parser_t *ps, const char *w)
{
	size_t n = strlen(w);
	return (size_t)(ps->end - ps->p) >= n && !memcmp(ps->p, w, n) &&
	       (ps->p + n == ps->end || !is_bare((unsigned char)ps->p[n]));
}

static int value(parser_t *ps, int depth, wss_toml_value_t **out)
{
	if (depth > MAX_DEPTH)
		return fail(ps, ps->p, "nesting is deeper than 128 levels");
	int c = peek(ps, 0);
	const char *start = ps->p;
	if (c == '"' || c == '\'') {
		size_t n;
		TRY(string(ps, true, &n));
		return make_string(ps, start, n, out);
	}
	if (c == '[')
		return array(ps, depth, out);
	if (c == '{')
		return inline_table(ps, depth, out);
	if (word(ps, "true") || word(ps, "false")) {
		wss_toml_value_t *v = new_value(ps, WSS_TOML_BOOL, (uint32_t)(start - ps->buf));
		if (!v)
			return oom(ps);
		v->u.b = c == 't';
		ps->p += v->u.b ? 4 : 5;
		*out = v;
		return 0;
	}
	if (is_digit(c) && is_digit(peek(ps, 1)) &&
	    (peek(ps, 2) == ':' || (is_digit(peek(ps, 2)) && is_digit(peek(ps, 3)) && peek(ps, 4) == '-')))
		return datetime(ps, out);
	if (is_digit(c) || c == '+' || c == '-' || word(ps, "inf") || word(ps, "nan"))
		return number(ps, out);
	if (c < 0 || c == '\n' || c == '\r' || c == '#')
		return fail(ps, ps->p, "missing value");
	if (is_bare(c)) {
		const char *e = ps->p;
		while (e < ps->end && is_bare((unsigned char)*e))
			e++;
		return fail_q(ps, start, "invalid value ", start, (size_t)(e - start), " (strings need quotes)");
	}
	return fail_q(ps, start, "invalid value starting with ", start, charlen(start, ps->end), NULL);
}

/* key = value, into table t. */
static int keyval(parser_t *ps, wss_toml_value_t *t, int depth)
{
	tkey_t *keys = NULL;
	size_t nk;
	TRY(dotted_key(ps, &keys, &nk));
	if (peek(ps, 0) != '=')
		return fail_q(ps, ps->p, "expected '=' after key ", keys[nk - 1].s, keys[nk - 1].len, NULL);
	ps->p++;
	skip_ws(ps);
	if (depth + (int)nk > MAX_DEPTH)
		return fail(ps, ps->buf + keys[0].off, "nesting is deeper than 128 levels");
	wss_toml_value_t *v;
	TRY(value(ps, depth + (int)nk, &v));
	for (size_t i = 0; i + 1 < nk; i++) {
		const tkey_t *k = &keys[i];
		wss_toml_value_t *sub = lookup(t, k);
		if (!sub) {
			sub = new_value(ps, WSS_TOML_TABLE, k->off);
			if (!sub)
				return oom(ps);
			TRY(put(ps, t, k, sub));
		} else if (sub->type != WSS_TOML_TABLE) {
			return not_a_table(ps, k, sub);
		} else if (sub->flags & F_INLINE) {
			return fail_q(ps, ps->buf + k->off, "inline table ", k->s, k->len, " cannot be extended");
		} else if (sub->flags & F_HEADER) {
			return fail_q(ps, ps->buf + k->off, "table ", k->s, k->len,
				      " was defined by a [header]; dotted keys cannot add to it");
		}
		sub->flags |= F_DOTTED;
		t = sub;
	}
	const tkey_t *k = &keys[nk - 1];
	if (lookup(t, k))
		return fail_q(ps, ps->buf + k->off, "duplicate key ", k->s, k->len, NULL);
	return put(ps, t, k, v);
}

/* After a key/value pair or a header: whitespace, maybe a comment, then the
 * end of the line or of the input. */
static int line_end(parser_t *ps)
{
	skip_ws(ps);
	if (peek(ps, 0) == '#')
		TRY(comment(ps));
	if (at_end(ps))
		return 0;
	int r = newline(ps);
	if (r < 0)
		return EINVAL;
	if (!r)
		return fail(ps, ps->p, "expected the end of the line");
	return 0;
}

static int document(parser_t *ps)
{
	wss_toml_value_t *cur = &ps->doc->root;
	int depth = 0;
	if (ps->end - ps->p >= 3 && !memcmp(ps->p, "\xEF\xBB\xBF", 3))
		ps->p += 3;
	while (!at_end(ps)) {
		skip_ws(ps);
		int c = peek(ps, 0);
		if (c < 0)
			break;
		if (c == '\n' || c == '\r') {
			if (newline(ps) < 0)
				return EINVAL;
			continue;
		}
		if (c == '[')
			TRY(header(ps, &cur, &depth));
		else if (c != '#')
			TRY(keyval(ps, cur, depth));
		TRY(line_end(ps));
	}
	return 0;
}

/* ---- API ---- */

static void free_chunks(wss_toml_alloc_t *a, chunk_t *c)
{
	while (c) {
		chunk_t *next = c->next;
		a->release(a->ctx, c, c->size);
		c = next;
	}
}

static void *std_alloc(void *ctx, size_t n)
{
	(void)ctx;
	return malloc(n);
}

static void std_release(void *ctx, void *p, size_t n)
{
	(void)ctx;
	(void)n;
	free(p);
}

int wss_toml_parse(const char *buf, size_t len, const wss_toml_alloc_t *a, wss_toml_doc_t **out,
		   wss_toml_error_t *err)
{
	static const wss_toml_alloc_t std = {std_alloc, std_release, NULL};
	*out = NULL;
	if (!a)
		a = &std;
	if (len >= UINT32_MAX) {
		err->line = err->col = 0;
		strcpy(err->msg, "input of 4 GiB or more");
		return EFBIG;
	}
	size_t bad = utf8_check((const unsigned char *)buf, len);
	if (bad < len) {
		locate(buf, bad, &err->line, &err->col);
		strcpy(err->msg, "invalid UTF-8");
		return EINVAL;
	}
	/* The document lives in its own first chunk. */
	size_t hdr = (sizeof(chunk_t) + 15) & ~(size_t)15;
	chunk_t *c = a->alloc(a->ctx, CHUNK_MIN);
	if (!c) {
		err->line = err->col = 0;
		strcpy(err->msg, "out of memory");
		return ENOMEM;
	}
	c->next = NULL;
	c->size = CHUNK_MIN;
	c->used = hdr + ((sizeof(wss_toml_doc_t) + 15) & ~(size_t)15);
	wss_toml_doc_t *d = (wss_toml_doc_t *)((char *)c + hdr);
	memset(d, 0, sizeof *d);
	d->a = *a;
	d->chunks = c;
	d->src = buf;
	d->len = len;
	d->root.type = WSS_TOML_TABLE;
	d->root.flags = F_HEADER;
	parser_t ps = {.doc = d, .buf = buf, .p = buf, .end = buf + len, .err = err};
	int r = document(&ps);
	if (r) {
		wss_toml_free(d);
		return r;
	}
	*out = d;
	return 0;
}

void wss_toml_free(wss_toml_doc_t *doc)
{
	if (!doc)
		return;
	wss_toml_alloc_t a = doc->a;
	free_chunks(&a, doc->chunks); /* the doc is in the last chunk: copy a first */
}

const wss_toml_value_t *wss_toml_root(const wss_toml_doc_t *doc) { return &doc->root; }

void wss_toml_locate(const wss_toml_doc_t *doc, uint32_t off, unsigned *line, unsigned *col)
{
	locate(doc->src, off > doc->len ? doc->len : off, line, col);
}

const char *wss_toml_type_name(wss_toml_type_t t)
{
	switch (t) {
	case WSS_TOML_STRING: return "string";
	case WSS_TOML_INTEGER: return "integer";
	case WSS_TOML_FLOAT: return "float";
	case WSS_TOML_BOOL: return "bool";
	case WSS_TOML_DATETIME: return "datetime";
	case WSS_TOML_DATETIME_LOCAL: return "datetime-local";
	case WSS_TOML_DATE_LOCAL: return "date-local";
	case WSS_TOML_TIME_LOCAL: return "time-local";
	case WSS_TOML_ARRAY: return "array";
	case WSS_TOML_TABLE: return "table";
	}
	return "?";
}

static char *put_num(char *p, unsigned v, int width)
{
	for (int i = width - 1; i >= 0; i--) {
		p[i] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + width;
}

char *wss_toml_datetime_format(const wss_toml_value_t *v, char *buf, size_t len)
{
	char tmp[48], *p = tmp;
	const wss_toml_datetime_t *dt = &v->u.dt;
	bool date = v->type != WSS_TOML_TIME_LOCAL;
	bool time = v->type != WSS_TOML_DATE_LOCAL;
	if (date) {
		p = put_num(p, (unsigned)dt->year, 4);
		*p++ = '-';
		p = put_num(p, (unsigned)dt->month, 2);
		*p++ = '-';
		p = put_num(p, (unsigned)dt->day, 2);
	}
	if (date && time)
		*p++ = 'T';
	if (time) {
		p = put_num(p, (unsigned)dt->hour, 2);
		*p++ = ':';
		p = put_num(p, (unsigned)dt->minute, 2);
		*p++ = ':';
		p = put_num(p, (unsigned)dt->second, 2);
		if (dt->frac_digits) {
			unsigned f = dt->nanosecond;
			for (int i = dt->frac_digits; i < 9; i++)
				f /= 10;
			*p++ = '.';
			p = put_num(p, f, dt->frac_digits);
		}
	}
	if (v->type == WSS_TOML_DATETIME) {
		if (!dt->offset_minutes) {
			*p++ = 'Z';
		} else {
			int m = dt->offset_minutes;
			*p++ = m < 0 ? '-' : '+';
			if (m < 0)
				m = -m;
			p = put_num(p, (unsigned)(m / 60), 2);
			*p++ = ':';
			p = put_num(p, (unsigned)(m % 60), 2);
		}
	}
	*p = '\0';
	if (len) {
		size_t n = (size_t)(p - tmp) < len - 1 ? (size_t)(p - tmp) : len - 1;
		memcpy(buf, tmp, n);
		buf[n] = '\0';
	}
	return buf;
}
