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

#include "common/fmt.h"

/* A string of n bytes (a TOML string may hold NULs), through the one
 * escaping routine the profile writer uses. */
static void json_str(wss_fmt_t *f, const char *s, size_t n)
{
	wss_fmt_ch(f, '"');
	wss_fmt_escaped(f, s, n, WSS_FMT_JSON);
	wss_fmt_ch(f, '"');
}

static void emit(const wss_toml_value_t *v, wss_fmt_t *f)
{
	char buf[64];
	switch (v->type) {
	case WSS_TOML_TABLE:
		wss_fmt_ch(f, '{');
		for (size_t i = 0; i < v->u.tab.n; i++) {
			if (i)
				wss_fmt_ch(f, ',');
			json_str(f, v->u.tab.kv[i].key, v->u.tab.kv[i].keylen);
			wss_fmt_ch(f, ':');
			emit(v->u.tab.kv[i].val, f);
		}
		wss_fmt_ch(f, '}');
		return;
	case WSS_TOML_ARRAY:
		wss_fmt_ch(f, '[');
		for (size_t i = 0; i < v->u.arr.n; i++) {
			if (i)
				wss_fmt_ch(f, ',');
			emit(v->u.arr.items[i], f);
		}
		wss_fmt_ch(f, ']');
		return;
	case WSS_TOML_STRING:
		wss_fmt_str(f, "{\"type\":\"string\",\"value\":");
		json_str(f, v->u.s.ptr, v->u.s.len);
		wss_fmt_ch(f, '}');
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
	/* Type names, numbers and dates need no escaping. */
	wss_fmt_str(f, "{\"type\":\"");
	wss_fmt_str(f, wss_toml_type_name(v->type));
	wss_fmt_str(f, "\",\"value\":\"");
	wss_fmt_str(f, buf);
	wss_fmt_str(f, "\"}");
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
	wss_fmt_t out;
	if (wss_fmt_init_growable(&out, 1 << 16)) {
		fprintf(stderr, "toml-decoder: out of memory\n");
		return 2;
	}
	emit(wss_toml_root(doc), &out);
	wss_fmt_ch(&out, '\n');
	wss_toml_free(doc);
	free(buf);
	if (out.overflow) {
		fprintf(stderr, "toml-decoder: out of memory\n");
		return 2;
	}
	fwrite(out.buf, 1, out.len, stdout);
	wss_fmt_release(&out);
	return fflush(stdout) ? 2 : 0;
}
