/* The toml-test decoder interface over config/toml.c: TOML on stdin, the
 * suite's tagged JSON on stdout ({"type":"integer","value":"42"} for every
 * scalar, objects for tables, arrays for arrays).  Exit 1 with the error on
 * stderr for invalid TOML, 2 for a read error. */
#include "config.h"
#include "config/toml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_str(const char *s, size_t n)
{
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void emit(const wss_toml_value_t *v)
{
	char buf[64];
	switch (v->type) {
	case WSS_TOML_TABLE:
		putchar('{');
		for (size_t i = 0; i < v->u.tab.n; i++) {
			if (i)
				putchar(',');
			json_str(v->u.tab.kv[i].key, v->u.tab.kv[i].keylen);
			putchar(':');
			emit(v->u.tab.kv[i].val);
		}
		putchar('}');
		return;
	case WSS_TOML_ARRAY:
		putchar('[');
		for (size_t i = 0; i < v->u.arr.n; i++) {
			if (i)
				putchar(',');
			emit(v->u.arr.items[i]);
		}
		putchar(']');
		return;
	case WSS_TOML_STRING:
		printf("{\"type\":\"string\",\"value\":");
		json_str(v->u.s.ptr, v->u.s.len);
		putchar('}');
		return;
	case WSS_TOML_INTEGER:
		snprintf(buf, sizeof buf, "%lld", (long long)v->u.i);
		break;
	case WSS_TOML_FLOAT:
		if (isnan(v->u.f))
			strcpy(buf, "nan");
		else if (isinf(v->u.f))
			strcpy(buf, v->u.f < 0 ? "-inf" : "inf");
		else
			snprintf(buf, sizeof buf, "%.17g", v->u.f);
		break;
	case WSS_TOML_BOOL:
		strcpy(buf, v->u.b ? "true" : "false");
		break;
	default:
		wss_toml_datetime_format(v, buf, sizeof buf);
		break;
	}
	printf("{\"type\":\"%s\",\"value\":\"%s\"}", wss_toml_type_name(v->type), buf);
}

int main(void)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, stdin)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf || ferror(stdin)) {
		fprintf(stderr, "toml-decoder: cannot read stdin\n");
		return 2;
	}
	wss_toml_doc_t *doc;
	wss_toml_error_t err;
	if (wss_toml_parse(buf, len, NULL, &doc, &err)) {
		fprintf(stderr, "toml-decoder: <stdin>:%u:%u: %s\n", err.line, err.col, err.msg);
		return 1;
	}
	emit(wss_toml_root(doc));
	putchar('\n');
	wss_toml_free(doc);
	free(buf);
	return fflush(stdout) ? 2 : 0;
}
