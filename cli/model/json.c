/* The CLI's JSON reader (json.h): a recursive-descent parser over a byte
 * buffer, building the tree in an arena.  Strings are decoded into the
 * arena in a second pass over their span, which cannot be longer than the
 * decoded text, so each string is one allocation. */
#include "config.h"
#include "cli/model/json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"

typedef struct block {
	struct block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
} block_t;

typedef struct parser {
	const unsigned char *p, *start, *end;
	block_t *arena;
	int depth;
	wss_json_error_t *err;
	int status; /* 0, EINVAL or ENOMEM once something failed */
} parser_t;

static void *arena_alloc(parser_t *ps, size_t n)
{
	n = (n + 15) & ~(size_t)15;
	block_t *b = ps->arena;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 4000 ? n : 4000;
		b = malloc(sizeof *b + cap);
		if (!b) {
			ps->status = ENOMEM;
			return NULL;
		}
		b->cap = cap;
		b->used = 0;
		b->next = ps->arena;
		ps->arena = b;
	}
	void *r = b->data + b->used;
	b->used += n;
	return r;
}

static void arena_release(block_t *b)
{
	while (b) {
		block_t *next = b->next;
		free(b);
		b = next;
	}
}

/* Records the first error, at position at. */
static void *fail(parser_t *ps, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void *fail(parser_t *ps, const unsigned char *at, const char *fmt, ...)
{
	if (ps->status)
		return NULL;
	ps->status = EINVAL;
	ps->err->column = (size_t)(at - ps->start) + 1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ps->err->msg, sizeof ps->err->msg, fmt, ap);
	va_end(ap);
	return NULL;
}

/* What the byte at p looks like, for messages. */
static const char *shown(const parser_t *ps, const unsigned char *p, char buf[16])
{
	if (p >= ps->end)
		return "end of input";
	if (*p >= 0x21 && *p < 0x7f)
		snprintf(buf, 16, "'%c'", *p);
	else
		snprintf(buf, 16, "byte 0x%02x", *p);
	return buf;
}

static void skip_ws(parser_t *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static wss_json_t *new_value(parser_t *ps, wss_json_type_t t)
{
	wss_json_t *v = arena_alloc(ps, sizeof *v);
	if (v) {
		memset(v, 0, sizeof *v);
		v->type = t;
	}
	return v;
}

static int hex4(const unsigned char *p, const unsigned char *end, unsigned *out)
{
	if (end - p < 4)
		return -1;
	unsigned v = 0;
	for (int k = 0; k < 4; k++) {
		unsigned c = p[k], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/* A string at ps->p (on the opening quote).  Returns its decoded bytes in
 * the arena, NUL-terminated, with the length in *len. */
static char *parse_string(parser_t *ps, size_t *len)
{
	const unsigned char *open = ps->p, *q = open + 1;
	while (q < ps->end && *q != '"')
		q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
	if (q >= ps->end)
		return fail(ps, open, "unterminated string");
	char *out = arena_alloc(ps, (size_t)(q - open));
	if (!out)
		return NULL;
	size_t n = 0;
	const unsigned char *p = open + 1;
	while (p < q) {
		unsigned c = *p;
		if (c < 0x20)
			return fail(ps, p, "control character 0x%02x in a string (must be escaped)", c);
		if (c >= 0x80) {
			size_t k = wss_utf8_len(p, (size_t)(q - p));
			if (!k)
				return fail(ps, p, "invalid UTF-8 in a string");
			memcpy(out + n, p, k);
			n += k;
			p += k;
			continue;
		}
		if (c != '\\') {
			out[n++] = (char)c;
			p++;
			continue;
		}
		const unsigned char *esc = p;
		switch (p[1]) {
		case '"': out[n++] = '"'; break;
		case '\\': out[n++] = '\\'; break;
		case '/': out[n++] = '/'; break;
		case 'b': out[n++] = '\b'; break;
		case 'f': out[n++] = '\f'; break;
		case 'n': out[n++] = '\n'; break;
		case 'r': out[n++] = '\r'; break;
		case 't': out[n++] = '\t'; break;
		case 'u': {
			unsigned cp, lo;
			if (hex4(p + 2, q, &cp))
				return fail(ps, esc, "\\u needs four hex digits");
			p += 4;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return fail(ps, esc, "lone low surrogate \\u%04x", cp);
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (q - p < 8 || p[2] != '\\' || p[3] != 'u' || hex4(p + 4, q, &lo) || lo < 0xdc00 ||
				    lo > 0xdfff)
					return fail(ps, esc, "high surrogate \\u%04x without its low surrogate", cp);
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			}
			n += wss_utf8_put(out + n, cp);
			break;
		}
		default: {
			char b[16];
			return fail(ps, esc, "invalid escape: backslash then %s", shown(ps, p + 1 < q ? p + 1 : ps->end, b));
		}
		}
		p += 2;
	}
	out[n] = '\0';
	*len = n;
	ps->p = q + 1;
	return out;
}

static wss_json_t *parse_number(parser_t *ps)
{
	const unsigned char *s = ps->p, *p = s;
	bool neg = false, integer = true;
	if (p < ps->end && *p == '-') {
		neg = true;
		p++;
	}
	if (p >= ps->end || *p < '0' || *p > '9')
		return fail(ps, p, "a number needs a digit here");
	if (*p == '0' && p + 1 < ps->end && p[1] >= '0' && p[1] <= '9')
		return fail(ps, p, "leading zero in a number");
	uint64_t mag = 0;
	bool overflow = false;
	for (; p < ps->end && *p >= '0' && *p <= '9'; p++) {
		unsigned d = *p - '0';
		if (mag > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			mag = mag * 10 + d;
	}
	if (p < ps->end && *p == '.') {
		integer = false;
		p++;
		if (p >= ps->end || *p < '0' || *p > '9')
			return fail(ps, p, "a digit must follow the decimal point");
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < ps->end && (*p == 'e' || *p == 'E')) {
		integer = false;
		p++;
		if (p < ps->end && (*p == '+' || *p == '-'))
			p++;
		if (p >= ps->end || *p < '0' || *p > '9')
			return fail(ps, p, "a digit must follow the exponent");
		while (p < ps->end && *p >= '0' && *p <= '9')
			p++;
	}
	wss_json_t *v = new_value(ps, WSS_JSON_NUMBER);
	if (!v)
		return NULL;
	/* strtod wants a terminated string: copy the lexeme. */
	size_t n = (size_t)(p - s);
	char small[64], *lex = n < sizeof small ? small : malloc(n + 1);
	if (!lex) {
		ps->status = ENOMEM;
		return NULL;
	}
	memcpy(lex, s, n);
	lex[n] = '\0';
	v->d = strtod(lex, NULL);
	if (lex != small)
		free(lex);
	if (isinf(v->d))
		return fail(ps, s, "number out of range");
	if (integer && !overflow && (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
		v->is_int = true;
		v->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	}
	ps->p = p;
	return v;
}

static wss_json_t *parse_value(parser_t *ps);

/* A growable array of pointers or members while a container is parsed
 * (the arena copy is made once its size is known). */
typedef struct vec {
	void *items;
	size_t n, cap, size;
} vec_t;

static void *vec_push(parser_t *ps, vec_t *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		void *items = realloc(v->items, cap * v->size);
		if (!items) {
			ps->status = ENOMEM;
			return NULL;
		}
		v->items = items;
		v->cap = cap;
	}
	return (char *)v->items + v->n++ * v->size;
}

static void *vec_finish(parser_t *ps, vec_t *v)
{
	void *out = NULL;
	if (v->n && (out = arena_alloc(ps, v->n * v->size)))
		memcpy(out, v->items, v->n * v->size);
	free(v->items);
	return out;
}


/* After an array item or object member: 0 after a ',' (not a trailing
 * one), 1 after close (consumed), -1 on a trailing comma (reported), 2 on
 * anything else (the caller reports it). */
static int after_item(struct parser *ps, char close)
{
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ',') {
		ps->p++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == close) {
			fail(ps, ps->p, close == ']' ? "trailing comma in an array" : "trailing comma in an object");
			return -1;
		}
		return 0;
	}
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 1;
	}
	return 2;
}

static wss_json_t *parse_array(parser_t *ps)
{
	wss_json_t *a = new_value(ps, WSS_JSON_ARRAY);
	vec_t v = {NULL, 0, 0, sizeof(wss_json_t *)};
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return a;
	}
	while (a) {
		wss_json_t *item = parse_value(ps);
		wss_json_t **slot = item ? vec_push(ps, &v) : NULL;
		if (!slot)
			break;
		*slot = item;
		int next = after_item(ps, ']');
		if (next < 0)
			break;
		if (next == 0)
			continue;
		if (next == 1) {
			a->n = v.n;
			a->items = vec_finish(ps, &v);
			return ps->status ? NULL : a;
		}
		char b[16];
		fail(ps, ps->p, "expected ',' or ']' in an array, found %s", shown(ps, ps->p, b));
		break;
	}
	free(v.items);
	return NULL;
}

static wss_json_t *parse_object(parser_t *ps)
{
	wss_json_t *o = new_value(ps, WSS_JSON_OBJECT);
	vec_t v = {NULL, 0, 0, sizeof(wss_json_member_t)};
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return o;
	}
	char b[16];
	while (o) {
		if (ps->p >= ps->end || *ps->p != '"') {
			fail(ps, ps->p, "expected a key (a string), found %s", shown(ps, ps->p, b));
			break;
		}
		const unsigned char *at = ps->p;
		size_t keylen;
		const char *key = parse_string(ps, &keylen);
		if (!key)
			break;
		wss_json_member_t *m = v.items;
		size_t k = 0;
		while (k < v.n && !(m[k].keylen == keylen && !memcmp(m[k].key, key, keylen)))
			k++;
		if (k < v.n) {
			fail(ps, at, "duplicate key \"%.40s\"", key);
			break;
		}
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':') {
			fail(ps, ps->p, "expected ':' after a key, found %s", shown(ps, ps->p, b));
			break;
		}
		ps->p++;
		wss_json_t *val = parse_value(ps);
		wss_json_member_t *slot = val ? vec_push(ps, &v) : NULL;
		if (!slot)
			break;
		*slot = (wss_json_member_t){key, keylen, val};
		int next = after_item(ps, '}');
		if (next < 0)
			break;
		if (next == 0)
			continue;
		if (next == 1) {
			o->n = v.n;
			o->members = vec_finish(ps, &v);
			return ps->status ? NULL : o;
		}
		fail(ps, ps->p, "expected ',' or '}' in an object, found %s", shown(ps, ps->p, b));
		break;
	}
	free(v.items);
	return NULL;
}

static bool literal(parser_t *ps, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(ps->end - ps->p) >= n && !memcmp(ps->p, word, n)) {
		ps->p += n;
		return true;
	}
	return false;
}

static wss_json_t *parse_value(parser_t *ps)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, ps->p, "unexpected end of input (a value was expected)");
	wss_json_t *v = NULL;
	switch (*ps->p) {
	case '{':
	case '[':
		if (++ps->depth > WSS_JSON_MAX_DEPTH)
			return fail(ps, ps->p, "nested deeper than %d", WSS_JSON_MAX_DEPTH);
		v = *ps->p == '{' ? parse_object(ps) : parse_array(ps);
		ps->depth--;
		return v;
	case '"':
		if ((v = new_value(ps, WSS_JSON_STRING)) && !(v->s = parse_string(ps, &v->len)))
			return NULL;
		return v;
	case 't':
	case 'f': {
		bool t = literal(ps, "true");
		if (t || literal(ps, "false")) {
			if ((v = new_value(ps, WSS_JSON_BOOL)))
				v->b = t;
			return v;
		}
		break;
	}
	case 'n':
		if (literal(ps, "null"))
			return new_value(ps, WSS_JSON_NULL);
		break;
	default:
		if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9'))
			return parse_number(ps);
	}
	char b[16];
	return fail(ps, ps->p, "unexpected %s (a value was expected)", shown(ps, ps->p, b));
}

int wss_json_parse(const char *text, size_t len, wss_json_doc_t *doc, wss_json_error_t *err)
{
	parser_t ps = {(const unsigned char *)text, (const unsigned char *)text, (const unsigned char *)text + len,
		       NULL, 0, err, 0};
	err->column = 0;
	err->msg[0] = '\0';
	wss_json_t *root = parse_value(&ps);
	if (root) {
		skip_ws(&ps);
		if (ps.p < ps.end) {
			char b[16];
			fail(&ps, ps.p, "unexpected %s after the value", shown(&ps, ps.p, b));
		}
	}
	if (ps.status) {
		if (ps.status == ENOMEM)
			snprintf(err->msg, sizeof err->msg, "out of memory");
		arena_release(ps.arena);
		return ps.status;
	}
	doc->root = root;
	doc->arena = ps.arena;
	return 0;
}

void wss_json_free(wss_json_doc_t *doc)
{
	arena_release(doc->arena);
	doc->arena = NULL;
	doc->root = NULL;
}

const wss_json_t *wss_json_get(const wss_json_t *o, const char *key)
{
	if (!o || o->type != WSS_JSON_OBJECT)
		return NULL;
	size_t n = strlen(key);
	for (size_t k = 0; k < o->n; k++)
		if (o->members[k].keylen == n && !memcmp(o->members[k].key, key, n))
			return o->members[k].value;
	return NULL;
}

bool wss_json_get_int(const wss_json_t *o, const char *key, int64_t *out)
{
	const wss_json_t *v = wss_json_get(o, key);
	if (!v || v->type != WSS_JSON_NUMBER || !v->is_int)
		return false;
	*out = v->i;
	return true;
}

bool wss_json_get_num(const wss_json_t *o, const char *key, double *out)
{
	const wss_json_t *v = wss_json_get(o, key);
	if (!v || v->type != WSS_JSON_NUMBER)
		return false;
	*out = v->d;
	return true;
}

const char *wss_json_get_str(const wss_json_t *o, const char *key)
{
	const wss_json_t *v = wss_json_get(o, key);
	return v && v->type == WSS_JSON_STRING ? v->s : NULL;
}
