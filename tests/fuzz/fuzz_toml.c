/* libFuzzer target (`make fuzz`): any bytes through the TOML parser and, when
 * they parse, through every reader of the tree and the session schema, with
 * an allocator that fails now and then so the out-of-memory paths run too.
 * AddressSanitizer and UBSan catch what the parser gets wrong. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "config/toml.h"

typedef struct {
	uint32_t seed;
	long live;
} fuzz_alloc_t;

static void *f_alloc(void *ctx, size_t n)
{
	fuzz_alloc_t *a = ctx;
	a->seed = a->seed * 1103515245u + 12345u;
	if ((a->seed >> 16) % 97 == 0)
		return NULL;
	a->live++;
	return malloc(n);
}

static void f_release(void *ctx, void *p, size_t n)
{
	(void)n;
	((fuzz_alloc_t *)ctx)->live--;
	free(p);
}

static size_t walk(const wss_toml_value_t *v, const wss_toml_doc_t *doc)
{
	unsigned line, col;
	size_t n = 1;
	char buf[64];
	wss_toml_locate(doc, v->off, &line, &col);
	switch (v->type) {
	case WSS_TOML_TABLE:
		for (size_t i = 0; i < v->u.tab.n; i++) {
			const wss_toml_kv_t *kv = &v->u.tab.kv[i];
			if (wss_toml_get(v, kv->key, kv->keylen) != kv->val)
				abort(); /* every key must be found again */
			n += walk(kv->val, doc);
		}
		break;
	case WSS_TOML_ARRAY:
		for (size_t i = 0; i < v->u.arr.n; i++)
			n += walk(v->u.arr.items[i], doc);
		break;
	case WSS_TOML_DATETIME:
	case WSS_TOML_DATETIME_LOCAL:
	case WSS_TOML_DATE_LOCAL:
	case WSS_TOML_TIME_LOCAL:
		wss_toml_datetime_format(v, buf, sizeof buf);
		n += strlen(buf);
		break;
	case WSS_TOML_STRING:
		if (v->u.s.ptr[v->u.s.len] != '\0')
			abort();
		break;
	default:
		break;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_alloc_t fa = {.seed = (uint32_t)size};
	wss_toml_alloc_t a = {f_alloc, f_release, &fa};
	wss_toml_doc_t *doc;
	wss_toml_error_t e;
	if (wss_toml_parse((const char *)data, size, &a, &doc, &e) == 0) {
		walk(wss_toml_root(doc), doc);
		wss_toml_free(doc);
	} else if (strlen(e.msg) == 0 || strlen(e.msg) >= sizeof e.msg) {
		abort(); /* every error has a message */
	}
	if (fa.live != 0)
		abort(); /* everything is given back */
	wss_config_t c;
	char err[512];
	wss_config_defaults(&c);
	if (wss_config_load(&c, "fuzz.toml", (const char *)data, size, NULL, err, sizeof err) == 0)
		wss_config_validate(&c, err, sizeof err);
	return 0;
}
