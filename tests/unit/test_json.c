/* The CLI's JSON reader: what it accepts (values, escapes, surrogate pairs,
 * integer exactness) and what it refuses, each refusal with its column. */
#include "config.h"
#include "cli/model/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/tap/tap.h"

static const struct bad {
	const char *text;
	size_t column;
	const char *msg; /* a substring of the message */
} bad[] = {
	{"", 1, "end of input"},
	{"   ", 4, "end of input"},
	{"[1,]", 4, "trailing comma"},
	{"{\"a\":1,}", 8, "trailing comma"},
	{"[1 2]", 4, "expected ',' or ']'"},
	{"{\"a\" 1}", 6, "expected ':'"},
	{"{a:1}", 2, "expected a key"},
	{"{\"a\":1 \"b\":2}", 8, "expected ',' or '}'"},
	{"01", 1, "leading zero"},
	{"-01", 2, "leading zero"},
	{"1.", 3, "decimal point"},
	{"1.e5", 3, "decimal point"},
	{"1e", 3, "exponent"},
	{"1e+", 4, "exponent"},
	{"-", 2, "digit"},
	{"+1", 1, "unexpected '+'"},
	{".5", 1, "unexpected '.'"},
	{"NaN", 1, "unexpected 'N'"},
	{"Infinity", 1, "unexpected 'I'"},
	{"-Infinity", 2, "digit"},
	{"1e400", 1, "out of range"},
	{"tru", 1, "unexpected 't'"},
	{"nul", 1, "unexpected 'n'"},
	{"True", 1, "unexpected 'T'"},
	{"1 2", 3, "after the value"},
	{"[1]x", 4, "after the value"},
	{"{}{}", 3, "after the value"},
	{"// c\n1", 1, "unexpected '/'"},
	{"\"abc", 1, "unterminated string"},
	{"\"abc\\\"", 1, "unterminated string"},
	{"[\"a\\x\"]", 4, "invalid escape"},
	{"\"\\u12\"", 2, "four hex digits"},
	{"\"\\u12G4\"", 2, "four hex digits"},
	{"\"\\ud800\"", 2, "high surrogate"},
	{"\"ab\\ud800\\u0041\"", 4, "high surrogate"},
	{"\"\\ud800x\"", 2, "high surrogate"},
	{"\"\\udc00\"", 2, "lone low surrogate"},
	{"\"a\tb\"", 3, "control character 0x09"},
	{"\"a\nb\"", 3, "control character 0x0a"},
	{"\"\xc3\x28\"", 2, "invalid UTF-8"},
	{"\"\xc0\xaf\"", 2, "invalid UTF-8"},	      /* overlong '/' */
	{"\"\xe0\x80\xaf\"", 2, "invalid UTF-8"},     /* overlong, 3 bytes */
	{"\"\xed\xa0\x80\"", 2, "invalid UTF-8"},     /* a surrogate in UTF-8 */
	{"\"\xf4\x90\x80\x80\"", 2, "invalid UTF-8"}, /* above U+10FFFF */
	{"\"\xff\"", 2, "invalid UTF-8"},
	{"\"\xe2\x82\"", 2, "invalid UTF-8"}, /* cut sequence */
	{"{\"a\":1,\"a\":2}", 8, "duplicate key \"a\""},
	{"\x01", 1, "byte 0x01"},
	{"[", 2, "end of input"},
	{"{\"a\":", 6, "end of input"},
	{"{\"a\":1", 7, "expected ',' or '}'"},
};

/* The text as a one-line test name: control and non-ASCII bytes as \xNN. */
static const char *shown(const char *t, char *buf, size_t n)
{
	size_t k = 0;
	for (; *t && k + 5 < n; t++)
		k += (size_t)(*t >= 0x20 && *t < 0x7f ? snprintf(buf + k, n - k, "%c", *t)
						       : snprintf(buf + k, n - k, "\\x%02x", (unsigned char)*t));
	buf[k] = '\0';
	return buf;
}

static void check_bad(const struct bad *b)
{
	wss_json_doc_t doc;
	wss_json_error_t err;
	char name[64];
	int r = wss_json_parse(b->text, strlen(b->text), &doc, &err);
	bool good = r == EINVAL && err.column == b->column && strstr(err.msg, b->msg);
	ok(good, "refused: %s", shown(b->text, name, sizeof name));
	if (!good) {
		diag("status %d, column %zu (want %zu), message \"%s\" (want \"%s\")", r, err.column, b->column,
		     err.msg, b->msg);
		if (r == 0)
			wss_json_free(&doc);
	}
}

static int parse(const char *text, size_t len, wss_json_doc_t *doc)
{
	wss_json_error_t err;
	int r = wss_json_parse(text, len, doc, &err);
	if (r)
		diag("parse failed at column %zu: %s", err.column, err.msg);
	return r;
}

/* Nesting: depth levels of '[' then as many ']'. */
static int nested(int depth)
{
	char *t = malloc((size_t)depth * 2);
	memset(t, '[', (size_t)depth);
	memset(t + depth, ']', (size_t)depth);
	wss_json_doc_t doc;
	wss_json_error_t err;
	int r = wss_json_parse(t, (size_t)depth * 2, &doc, &err);
	if (!r)
		wss_json_free(&doc);
	free(t);
	return r;
}

int main(void)
{
	size_t nbad = sizeof bad / sizeof *bad;
	plan((int)nbad + 29);
	wss_json_doc_t doc;

	/* Scalars. */
	ok(!parse(" \t\r\n true \n", 11, &doc) && doc.root->type == WSS_JSON_BOOL && doc.root->b, "true, whitespace around");
	wss_json_free(&doc);
	ok(!parse("false", 5, &doc) && doc.root->type == WSS_JSON_BOOL && !doc.root->b, "false");
	wss_json_free(&doc);
	ok(!parse("null", 4, &doc) && doc.root->type == WSS_JSON_NULL, "null");
	wss_json_free(&doc);

	/* Numbers: integers are exact in i, everything is in d. */
	const char *nums = "[0,-0,12,-9223372036854775808,9223372036854775807,9223372036854775808,"
			   "1.0,1e2,-2.5E-3,273.9,18446744073709551616]";
	ok(!parse(nums, strlen(nums), &doc) && doc.root->n == 11, "an array of numbers");
	wss_json_t **it = doc.root->items;
	ok(it[0]->is_int && it[0]->i == 0 && it[1]->is_int && it[1]->i == 0 && it[2]->i == 12, "small integers");
	ok(it[3]->is_int && it[3]->i == INT64_MIN, "INT64_MIN is exact");
	ok(it[4]->is_int && it[4]->i == INT64_MAX, "INT64_MAX is exact");
	ok(!it[5]->is_int && it[5]->d == 9223372036854775808.0, "2^63 is a double, not an integer");
	ok(!it[6]->is_int && it[6]->d == 1.0 && !it[7]->is_int && it[7]->d == 100.0, "1.0 and 1e2 are not integers");
	ok(it[8]->d == -2.5e-3 && it[9]->d == 273.9, "fractions and exponents");
	ok(!it[10]->is_int && it[10]->d == 18446744073709551616.0, "2^64 is a double");
	wss_json_free(&doc);

	/* Strings. */
	const char *str = "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00\xc3\xa9\"";
	ok(!parse(str, strlen(str), &doc) && doc.root->type == WSS_JSON_STRING, "a string with every escape");
	is_str(doc.root->s, "a\"b\\c/d\b\f\n\r\t\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9", "decoded, surrogate pair to U+1F600");
	is_int((long long)doc.root->len, 23, "its length");
	wss_json_free(&doc);
	ok(!parse("\"a\\u0000b\"", 10, &doc) && doc.root->len == 3 && doc.root->s[1] == '\0' && doc.root->s[2] == 'b',
	   "\\u0000 is kept, with the length");
	wss_json_free(&doc);
	ok(!parse("\"\xf4\x8f\xbf\xbf\x7f\"", 7, &doc) && doc.root->len == 5, "U+10FFFF and DEL are allowed");
	wss_json_free(&doc);

	/* Objects and lookups. */
	const char *obj = "{\"type\":\"peak\",\"seq\":42,\"mean\":812.4,\"sites\":[{\"stack\":7,\"pages\":4096}],"
			  "\"e\":{},\"z\":[],\"n\":null}";
	ok(!parse(obj, strlen(obj), &doc) && doc.root->type == WSS_JSON_OBJECT && doc.root->n == 7, "an object");
	int64_t i = 0;
	double d = 0;
	ok(wss_json_get_int(doc.root, "seq", &i) && i == 42, "get_int");
	ok(!wss_json_get_int(doc.root, "mean", &i) && wss_json_get_num(doc.root, "mean", &d) && d == 812.4,
	   "get_num, and get_int refuses a fraction");
	is_str(wss_json_get_str(doc.root, "type"), "peak", "get_str");
	ok(!wss_json_get_str(doc.root, "seq") && !wss_json_get(doc.root, "nope") && !wss_json_get(doc.root, "se"),
	   "wrong type and missing keys");
	const wss_json_t *sites = wss_json_get(doc.root, "sites");
	ok(sites && sites->type == WSS_JSON_ARRAY && sites->n == 1 && wss_json_get_int(sites->items[0], "pages", &i) &&
	       i == 4096,
	   "nested lookups");
	ok(wss_json_get(doc.root, "e")->n == 0 && wss_json_get(doc.root, "z")->n == 0 &&
	       wss_json_get(doc.root, "n")->type == WSS_JSON_NULL,
	   "empty containers, null member");
	ok(!wss_json_get(wss_json_get(doc.root, "z"), "x"), "get on a non-object is NULL");
	wss_json_free(&doc);

	/* A NUL byte outside a string is not JSON; the length is what counts. */
	wss_json_error_t err;
	ok(wss_json_parse("1\0", 2, &doc, &err) == EINVAL && err.column == 2, "a NUL byte after the value");
	ok(!parse("12", 1, &doc) && doc.root->i == 1, "only len bytes are read");
	wss_json_free(&doc);

	/* Nesting bound. */
	ok(nested(WSS_JSON_MAX_DEPTH) == 0, "nesting %d deep is accepted", WSS_JSON_MAX_DEPTH);
	ok(nested(WSS_JSON_MAX_DEPTH + 1) == EINVAL, "one more is refused");

	/* A large array (the vector grows). */
	char big[40000];
	size_t n = 0;
	big[n++] = '[';
	for (int k = 0; k < 5000; k++)
		n += (size_t)sprintf(big + n, "%s%d", k ? "," : "", k);
	big[n++] = ']';
	ok(!parse(big, n, &doc) && doc.root->n == 5000 && doc.root->items[4999]->i == 4999, "5000 items");
	wss_json_free(&doc);

	for (size_t k = 0; k < nbad; k++)
		check_bad(&bad[k]);
	return done_testing();
}
