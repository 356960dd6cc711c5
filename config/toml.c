/* TOML 1.0 (https://toml.io/en/v1.0.0), parsed by recursive descent straight
 * into a tree, over the tokens of toml_lex.c.  The input is checked to be
 * UTF-8 first, so everything after can treat non-ASCII bytes as opaque
 * content of strings and comments.  The table rules (what may be defined
 * twice, what dotted keys may extend) are kept as flags on the tables
 * themselves; see the F_ comments.  Nesting is bounded (MAX_DEPTH) so
 * hostile input cannot exhaust the stack. */
#include "config.h"
#include "config/toml.h"
#include "config/toml_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"

/* Table and array flags.  A table defined by a [header] cannot be defined
 * again nor extended by dotted keys from its parent; one created or extended
 * by dotted keys cannot later get a [header]; inline tables and array
 * literals are closed once written.  Tables created on the way to a header
 * ([a.b.c] creates a and a.b) carry no flag until one of those happens. */
enum { F_HEADER = 1, F_DOTTED = 2, F_INLINE = 4, F_AOT = 8 };

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

/* ---- memory ---- */

void *wss_toml_arena(parser_t *ps, size_t n)
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
	void *p = wss_toml_arena(ps, c * sz);
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
		return wss_toml_oom(ps);
	t->u.tab.kv = kv;
	size_t pos = t->u.tab.n++;
	t->u.tab.kv[pos] = (wss_toml_kv_t){.key = k->s, .keylen = k->len, .off = k->off, .val = v};
	if (t->u.tab.n < INDEX_FROM)
		return 0;
	if (t->u.tab.n * 2 > t->u.tab.index_cap) {
		size_t cap = t->u.tab.index_cap ? t->u.tab.index_cap * 2 : 64;
		uint32_t *idx = wss_toml_arena(ps, cap * sizeof *idx);
		if (!idx)
			return wss_toml_oom(ps);
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

wss_toml_value_t *wss_toml_new_value(parser_t *ps, wss_toml_type_t type, uint32_t off)
{
	wss_toml_value_t *v = wss_toml_arena(ps, sizeof *v);
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
		return wss_toml_oom(ps);
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
	return wss_toml_fail_q(ps, ps->buf + k->off, "key ", k->s, k->len, already_msg(v->type));
}

/* Descend from t into key k on the way to a [header]: create what is
 * missing; go into the last element of an array of tables. */
static int header_step(parser_t *ps, wss_toml_value_t **t, const tkey_t *k)
{
	wss_toml_value_t *v = lookup(*t, k);
	if (!v) {
		v = wss_toml_new_value(ps, WSS_TOML_TABLE, k->off);
		if (!v)
			return wss_toml_oom(ps);
		TRY(put(ps, *t, k, v));
	} else if (v->type == WSS_TOML_ARRAY && (v->flags & F_AOT)) {
		v = v->u.arr.items[v->u.arr.n - 1];
	} else if (v->type == WSS_TOML_ARRAY) {
		return wss_toml_fail_q(ps, ps->buf + k->off, "key ", k->s, k->len,
				       " is an array literal; it cannot be extended");
	} else if (v->type != WSS_TOML_TABLE) {
		return not_a_table(ps, k, v);
	} else if (v->flags & F_INLINE) {
		return wss_toml_fail_q(ps, ps->buf + k->off, "inline table ", k->s, k->len, " cannot be extended");
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
	TRY(wss_toml_lex_dotted_key(ps, &keys, &nk));
	if (peek(ps, 0) != ']' || (aot && peek(ps, 1) != ']'))
		return wss_toml_fail(ps, ps->p,
				     aot ? "expected ']]' to close the array-of-tables header"
					 : "expected ']' to close the table header");
	ps->p += aot ? 2 : 1;
	wss_toml_value_t *t = &ps->doc->root;
	for (size_t i = 0; i + 1 < nk; i++)
		TRY(header_step(ps, &t, &keys[i]));
	const tkey_t *k = &keys[nk - 1];
	wss_toml_value_t *v = lookup(t, k);
	*depth = (int)nk + (aot ? 1 : 0);
	if (!aot) {
		if (!v) {
			v = wss_toml_new_value(ps, WSS_TOML_TABLE, k->off);
			if (!v)
				return wss_toml_oom(ps);
			TRY(put(ps, t, k, v));
		} else if (v->type != WSS_TOML_TABLE) {
			if (v->type == WSS_TOML_ARRAY && (v->flags & F_AOT))
				return wss_toml_fail_q(ps, start, "", k->s, k->len,
						       " is an array of tables; use [[...]] to add to it");
			return not_a_table(ps, k, v);
		} else if (v->flags & F_INLINE) {
			return wss_toml_fail_q(ps, start, "inline table ", k->s, k->len, " cannot be extended");
		} else if (v->flags & F_HEADER) {
			return wss_toml_fail_q(ps, start, "table ", k->s, k->len, " is defined twice");
		} else if (v->flags & F_DOTTED) {
			return wss_toml_fail_q(ps, start, "table ", k->s, k->len,
					       " was already defined with dotted keys");
		}
		v->flags |= F_HEADER;
		v->off = k->off;
		*cur = v;
		return 0;
	}
	if (!v) {
		v = wss_toml_new_value(ps, WSS_TOML_ARRAY, k->off);
		if (!v)
			return wss_toml_oom(ps);
		v->flags = F_AOT;
		TRY(put(ps, t, k, v));
	} else if (v->type != WSS_TOML_ARRAY) {
		return wss_toml_fail_q(ps, start, "cannot make ", k->s, k->len,
			      v->type == WSS_TOML_TABLE ? " an array of tables: it is already a table"
							: " an array of tables: it is already a value");
	} else if (!(v->flags & F_AOT)) {
		return wss_toml_fail_q(ps, start, "cannot append to array literal ", k->s, k->len, " with [[...]]");
	}
	wss_toml_value_t *el = wss_toml_new_value(ps, WSS_TOML_TABLE, k->off);
	if (!el)
		return wss_toml_oom(ps);
	el->flags = F_HEADER;
	TRY(push(ps, v, el));
	*cur = el;
	return 0;
}

/* ---- values ---- */

static int value(parser_t *ps, int depth, wss_toml_value_t **out);
static int keyval(parser_t *ps, wss_toml_value_t *t, int depth);

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
	wss_toml_value_t *a = wss_toml_new_value(ps, WSS_TOML_ARRAY, (uint32_t)(ps->p - ps->buf));
	if (!a)
		return wss_toml_oom(ps);
	a->flags = F_INLINE;
	*out = a;
	const char *start = ps->p++;
	for (;;) {
		TRY(wss_toml_lex_skip_ws_nl(ps));
		if (peek(ps, 0) == ']') {
			ps->p++;
			return 0;
		}
		if (at_end(ps))
			return wss_toml_fail(ps, start, "unterminated array");
		wss_toml_value_t *v;
		TRY(value(ps, depth + 1, &v));
		TRY(push(ps, a, v));
		TRY(wss_toml_lex_skip_ws_nl(ps));
		int c = peek(ps, 0);
		if (c == ',') {
			ps->p++;
		} else if (c == ']') {
			ps->p++;
			return 0;
		} else if (c < 0) {
			return wss_toml_fail(ps, start, "unterminated array");
		} else {
			return wss_toml_fail(ps, ps->p, "expected ',' or ']' after an array element");
		}
	}
}

static int inline_table(parser_t *ps, int depth, wss_toml_value_t **out)
{
	wss_toml_value_t *t = wss_toml_new_value(ps, WSS_TOML_TABLE, (uint32_t)(ps->p - ps->buf));
	if (!t)
		return wss_toml_oom(ps);
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
			return wss_toml_fail(ps, ps->p, "an inline table must be on one line");
		if (c < 0)
			return wss_toml_fail(ps, start, "unterminated inline table");
		if (c == '}')
			return wss_toml_fail(ps, ps->p, "trailing comma in an inline table");
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
			return wss_toml_fail(ps, ps->p, "an inline table must be on one line");
		} else if (c < 0) {
			return wss_toml_fail(ps, start, "unterminated inline table");
		} else {
			return wss_toml_fail(ps, ps->p,
					     "expected ',' or '}' after a key/value pair in an inline table");
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
		return wss_toml_fail(ps, ps->p, "nesting is deeper than 128 levels");
	int c = peek(ps, 0);
	const char *start = ps->p;
	if (c == '"' || c == '\'') {
		size_t n;
		TRY(wss_toml_lex_string(ps, true, &n));
		return wss_toml_lex_make_string(ps, start, n, out);
	}
	if (c == '[')
		return array(ps, depth, out);
	if (c == '{')
		return inline_table(ps, depth, out);
	if (word(ps, "true") || word(ps, "false")) {
		wss_toml_value_t *v = wss_toml_new_value(ps, WSS_TOML_BOOL, (uint32_t)(start - ps->buf));
		if (!v)
			return wss_toml_oom(ps);
		v->u.b = c == 't';
		ps->p += v->u.b ? 4 : 5;
		*out = v;
		return 0;
	}
	if (is_digit(c) && is_digit(peek(ps, 1)) &&
	    (peek(ps, 2) == ':' || (is_digit(peek(ps, 2)) && is_digit(peek(ps, 3)) && peek(ps, 4) == '-')))
		return wss_toml_lex_datetime(ps, out);
	if (is_digit(c) || c == '+' || c == '-' || word(ps, "inf") || word(ps, "nan"))
		return wss_toml_lex_number(ps, out);
	if (c < 0 || c == '\n' || c == '\r' || c == '#')
		return wss_toml_fail(ps, ps->p, "missing value");
	if (is_bare(c)) {
		const char *e = ps->p;
		while (e < ps->end && is_bare((unsigned char)*e))
			e++;
		return wss_toml_fail_q(ps, start, "invalid value ", start, (size_t)(e - start),
				       " (strings need quotes)");
	}
	return wss_toml_fail_q(ps, start, "invalid value starting with ", start, charlen(start, ps->end), NULL);
}

/* key = value, into table t. */
static int keyval(parser_t *ps, wss_toml_value_t *t, int depth)
{
	tkey_t *keys = NULL;
	size_t nk;
	TRY(wss_toml_lex_dotted_key(ps, &keys, &nk));
	if (peek(ps, 0) != '=')
		return wss_toml_fail_q(ps, ps->p, "expected '=' after key ", keys[nk - 1].s, keys[nk - 1].len, NULL);
	ps->p++;
	skip_ws(ps);
	if (depth + (int)nk > MAX_DEPTH)
		return wss_toml_fail(ps, ps->buf + keys[0].off, "nesting is deeper than 128 levels");
	wss_toml_value_t *v;
	TRY(value(ps, depth + (int)nk, &v));
	for (size_t i = 0; i + 1 < nk; i++) {
		const tkey_t *k = &keys[i];
		wss_toml_value_t *sub = lookup(t, k);
		if (!sub) {
			sub = wss_toml_new_value(ps, WSS_TOML_TABLE, k->off);
			if (!sub)
				return wss_toml_oom(ps);
			TRY(put(ps, t, k, sub));
		} else if (sub->type != WSS_TOML_TABLE) {
			return not_a_table(ps, k, sub);
		} else if (sub->flags & F_INLINE) {
			return wss_toml_fail_q(ps, ps->buf + k->off, "inline table ", k->s, k->len,
					       " cannot be extended");
		} else if (sub->flags & F_HEADER) {
			return wss_toml_fail_q(ps, ps->buf + k->off, "table ", k->s, k->len,
				      " was defined by a [header]; dotted keys cannot add to it");
		}
		sub->flags |= F_DOTTED;
		t = sub;
	}
	const tkey_t *k = &keys[nk - 1];
	if (lookup(t, k))
		return wss_toml_fail_q(ps, ps->buf + k->off, "duplicate key ", k->s, k->len, NULL);
	return put(ps, t, k, v);
}

/* After a key/value pair or a header: whitespace, maybe a comment, then the
 * end of the line or of the input. */
static int line_end(parser_t *ps)
{
	skip_ws(ps);
	if (peek(ps, 0) == '#')
		TRY(wss_toml_lex_comment(ps));
	if (at_end(ps))
		return 0;
	int r = wss_toml_lex_newline(ps);
	if (r < 0)
		return EINVAL;
	if (!r)
		return wss_toml_fail(ps, ps->p, "expected the end of the line");
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
			if (wss_toml_lex_newline(ps) < 0)
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
		wss_toml_line_col(buf, bad, &err->line, &err->col);
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
	wss_toml_line_col(doc->src, off > doc->len ? doc->len : off, line, col);
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
