/* The TOML parser's own contract, beyond the toml-test conformance suite:
 * error positions (line, column in characters), running out of memory at
 * every allocation without leaking, the nesting bound, lookups in large
 * tables, and date/time formatting. */
#include "config.h"
#include "config/toml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap/tap.h"

/* An allocator that fails after `budget` successful allocations and counts
 * what is outstanding. */
typedef struct {
	int budget;
	long live_blocks;
	size_t live_bytes;
} counting_t;

static void *c_alloc(void *ctx, size_t n)
{
	counting_t *c = ctx;
	if (c->budget == 0)
		return NULL;
	if (c->budget > 0)
		c->budget--;
	c->live_blocks++;
	c->live_bytes += n;
	return malloc(n);
}

static void c_release(void *ctx, void *p, size_t n)
{
	counting_t *c = ctx;
	c->live_blocks--;
	c->live_bytes -= n;
	free(p);
}

static int parse(const char *s, wss_toml_doc_t **doc, wss_toml_error_t *e)
{
	return wss_toml_parse(s, strlen(s), NULL, doc, e);
}

static const struct {
	const char *toml;
	unsigned line, col;
	const char *msg;
} errors[] = {
	{"a = 1\nb = 2\nc = \n", 3, 5, "missing value"},
	{"a = 1\n[t]\nx = 1 2\n", 3, 7, "expected the end of the line"},
	{"\"\xc3\xa9\xc3\xa9\" = tru\n", 1, 8, "invalid value \"tru\" (strings need quotes)"},
	{"s = \"abc\n", 1, 9, "newline in a single-line string"},
	{"s = \"abc", 1, 5, "unterminated string"},
	{"s = \"a\\qb\"\n", 1, 7, "invalid escape sequence \\q"},
	{"s = \"\\uD800\"\n", 1, 6, "escape is not a Unicode scalar value"},
	{"n = 0123\n", 1, 5, "leading zeros are not allowed: \"0123\""},
	{"n = 9223372036854775808\n", 1, 5, "integer \"9223372036854775808\" does not fit in 64 bits"},
	{"n = 1__0\n", 1, 5, "invalid number \"1__0\""},
	{"d = 2023-02-29\n", 1, 5, "date out of range"},
	{"t = 24:00:00\n", 1, 5, "time out of range"},
	{"a = {x = 1,\n", 1, 12, "an inline table must be on one line"},
	{"a = {x = 1,}\n", 1, 12, "trailing comma in an inline table"},
	{"a = [1 2]\n", 1, 8, "expected ',' or ']' after an array element"},
	{"[a]\n[a]\n", 2, 1, "table \"a\" is defined twice"},
	{"a.b = 1\n[a]\n", 2, 1, "table \"a\" was already defined with dotted keys"},
	{"[a.b]\n[a]\nb.c = 1\n", 3, 1, "table \"b\" was defined by a [header]; dotted keys cannot add to it"},
	{"a = {}\n[a.b]\n", 2, 2, "inline table \"a\" cannot be extended"},
	{"a = [1]\n[[a]]\n", 2, 1, "cannot append to array literal \"a\" with [[...]]"},
	{"a = 1\na.b = 2\n", 2, 1, "key \"a\" is already an integer"},
	{"x = 1\r\ny = 2\r", 2, 6, "carriage return not followed by a newline"},
	{"# ok\n# bad \x01 byte\n", 2, 7, "control character U+0001 is not allowed in a comment"},
	{"k = \"caf\xc3\xa9\" \xff\n", 1, 12, "invalid UTF-8"},
	{"= 1\n", 1, 1, "missing key before '='"},
	{"[a\n", 1, 3, "expected ']' to close the table header"},
};

int main(void)
{
	plan(2 * (int)(sizeof errors / sizeof *errors) + 18);
	wss_toml_doc_t *doc;
	wss_toml_error_t e;

	for (size_t i = 0; i < sizeof errors / sizeof *errors; i++) {
		int r = parse(errors[i].toml, &doc, &e);
		ok(r == EINVAL && doc == NULL && !strcmp(e.msg, errors[i].msg), "message: %s", errors[i].msg);
		if (strcmp(e.msg, errors[i].msg))
			diag("got: %s", e.msg);
		ok(e.line == errors[i].line && e.col == errors[i].col, "at %u:%u (got %u:%u)", errors[i].line,
		   errors[i].col, e.line, e.col);
	}

	/* Values and lookups. */
	const char *text = "title = \"wss\"\n"
			   "[owner]\n"
			   "dob = 1979-05-27T07:32:00.5-08:00\n"
			   "local = 1979-05-27 07:32:00\n"
			   "day = 1979-05-27\n"
			   "at = 00:32:00.999999999999\n"
			   "[[points]]\nx = 1\n[[points]]\nx = 2\n";
	ok(parse(text, &doc, &e) == 0, "a document parses: %s", e.msg);
	const wss_toml_value_t *root = wss_toml_root(doc);
	const wss_toml_value_t *owner = wss_toml_get(root, "owner", 5);
	const wss_toml_value_t *pts = wss_toml_get(root, "points", 6);
	ok(owner && owner->type == WSS_TOML_TABLE && pts && pts->type == WSS_TOML_ARRAY && pts->u.arr.n == 2 &&
	       wss_toml_get(pts->u.arr.items[1], "x", 1)->u.i == 2,
	   "tables and arrays of tables");
	char buf[64];
	is_str(wss_toml_datetime_format(wss_toml_get(owner, "dob", 3), buf, sizeof buf), "1979-05-27T07:32:00.5-08:00",
	       "offset date-time");
	is_str(wss_toml_datetime_format(wss_toml_get(owner, "local", 5), buf, sizeof buf), "1979-05-27T07:32:00",
	       "local date-time");
	is_str(wss_toml_datetime_format(wss_toml_get(owner, "at", 2), buf, sizeof buf), "00:32:00.999999999",
	       "local time, fraction truncated to nanoseconds");
	unsigned line, col;
	wss_toml_locate(doc, wss_toml_get(owner, "day", 3)->off, &line, &col);
	ok(line == 5 && col == 7, "value positions (%u:%u)", line, col);
	wss_toml_free(doc);

	/* A large table: lookups go through the hash index. */
	size_t cap = 200000, n = 0;
	char *big = malloc(cap);
	for (int i = 0; i < 5000; i++)
		n += (size_t)snprintf(big + n, cap - n, "k%d = %d\n", i, i);
	ok(wss_toml_parse(big, n, NULL, &doc, &e) == 0, "5000 keys parse");
	bool all = true;
	for (int i = 0; i < 5000; i++) {
		char k[16];
		int kl = snprintf(k, sizeof k, "k%d", i);
		const wss_toml_value_t *v = wss_toml_get(wss_toml_root(doc), k, (size_t)kl);
		all = all && v && v->u.i == i;
	}
	ok(all && !wss_toml_get(wss_toml_root(doc), "k5000", 5), "and each is found by lookup");
	wss_toml_free(doc);
	n += (size_t)snprintf(big + n, cap - n, "k4321 = 0\n");
	ok(wss_toml_parse(big, n, NULL, &doc, &e) == EINVAL && e.line == 5001, "a duplicate among them is found");
	free(big);

	/* Nesting is bounded, not a stack overflow. */
	char deep[1200];
	memset(deep, '[', 600);
	strcpy(deep, "a = ");
	memset(deep + 4, '[', 600);
	deep[604] = '\0';
	ok(parse(deep, &doc, &e) == EINVAL && strstr(e.msg, "deeper than 128"), "deep arrays: %s", e.msg);
	/* Each inline table is one level: 120 nested ones are fine, 130 not. */
	char nest[1200];
	for (int depth = 120; depth <= 130; depth += 10) {
		size_t k = 0;
		k += (size_t)sprintf(nest + k, "a = ");
		for (int i = 0; i < depth - 1; i++)
			k += (size_t)sprintf(nest + k, "{b = ");
		k += (size_t)sprintf(nest + k, "1");
		for (int i = 0; i < depth - 1; i++)
			nest[k++] = '}';
		nest[k] = '\0';
		int r = parse(nest, &doc, &e);
		if (depth == 120)
			ok(r == 0, "120 nested inline tables parse: %s", r ? e.msg : "");
		else
			ok(r == EINVAL && strstr(e.msg, "deeper than 128"), "130 do not: %s", e.msg);
		if (!r)
			wss_toml_free(doc);
	}
	char dotted[1024] = "";
	for (int i = 0; i < 200; i++)
		strcat(dotted, "a.");
	strcat(dotted, "b = 1\n");
	ok(parse(dotted, &doc, &e) == EINVAL && strstr(e.msg, "128"), "deep dotted keys: %s", e.msg);

	/* Out of memory at every allocation: ENOMEM, and nothing leaks. */
	bool oom_ok = true, leak_free = true;
	int needed = -1;
	for (int budget = 0; budget < 1000 && needed < 0; budget++) {
		counting_t c = {.budget = budget};
		wss_toml_alloc_t a = {c_alloc, c_release, &c};
		int r = wss_toml_parse(text, strlen(text), &a, &doc, &e);
		if (r == 0) {
			needed = budget;
			wss_toml_free(doc);
		} else if (r != ENOMEM || strcmp(e.msg, "out of memory")) {
			oom_ok = false;
		}
		leak_free = leak_free && c.live_blocks == 0 && c.live_bytes == 0;
	}
	ok(needed > 0 && oom_ok, "allocation failure is reported as out of memory (succeeds with %d allocations)", needed);
	ok(leak_free, "every allocation is released, on success and on failure");
	counting_t c = {.budget = -1};
	wss_toml_alloc_t a = {c_alloc, c_release, &c};
	ok(wss_toml_parse("a = [", 5, &a, &doc, &e) == EINVAL && c.live_blocks == 0, "a parse error releases too");

	ok(wss_toml_parse("\xef\xbb\xbf" "a = 1", 8, NULL, &doc, &e) == 0 &&
	       wss_toml_get(wss_toml_root(doc), "a", 1)->u.i == 1,
	   "a byte order mark is skipped");
	wss_toml_free(doc);
	ok(wss_toml_parse("a = \"x\\u0000y\"", 14, NULL, &doc, &e) == 0 &&
	       wss_toml_get(wss_toml_root(doc), "a", 1)->u.s.len == 3,
	   "strings keep embedded NULs with their length");
	wss_toml_free(doc);
	return done_testing();
}
