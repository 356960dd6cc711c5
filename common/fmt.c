/* Buffer formatting without stdio or malloc (see fmt.h).  String escaping
 * (JSON, and TOML for `wss config check` and the parser's messages) is done
 * here once so that the profile writer, the CLI and the config layer agree
 * on it. */
#include "config.h"
#include "common/fmt.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "common/sys.h"
#include "common/utf8.h"

void wss_fmt_init(wss_fmt_t *f, char *storage, size_t cap)
{
	f->buf = storage;
	f->cap = cap;
	f->len = 0;
	f->growable = false;
	f->overflow = false;
}

int wss_fmt_init_growable(wss_fmt_t *f, size_t cap)
{
	char *p = wss_sys_alloc(cap);
	if (!p)
		return ENOMEM;
	wss_fmt_init(f, p, cap);
	f->growable = true;
	return 0;
}

void wss_fmt_release(wss_fmt_t *f)
{
	if (f->growable)
		wss_sys_free(f->buf, f->cap);
	f->buf = NULL;
	f->cap = f->len = 0;
}

void wss_fmt_reset(wss_fmt_t *f)
{
	f->len = 0;
	f->overflow = false;
}

static bool fmt_reserve(wss_fmt_t *f, size_t n)
{
	if (f->len + n + 1 <= f->cap)
		return true;
	if (!f->growable) {
		f->overflow = true;
		return false;
	}
	size_t cap = f->cap ? f->cap : 4096;
	while (f->len + n + 1 > cap)
		cap *= 2;
	char *p = wss_sys_alloc(cap);
	if (!p) {
		f->overflow = true;
		return false;
	}
	memcpy(p, f->buf, f->len);
	wss_sys_free(f->buf, f->cap);
	f->buf = p;
	f->cap = cap;
	return true;
}

void wss_fmt_mem(wss_fmt_t *f, const char *s, size_t n)
{
	if (!fmt_reserve(f, n)) {
		/* Keep what fits so that messages stay readable. */
		size_t room = f->cap > f->len + 1 ? f->cap - f->len - 1 : 0;
		n = n < room ? n : room;
	}
	memcpy(f->buf + f->len, s, n);
	f->len += n;
}

void wss_fmt_str(wss_fmt_t *f, const char *s) { wss_fmt_mem(f, s, strlen(s)); }
void wss_fmt_ch(wss_fmt_t *f, char c) { wss_fmt_mem(f, &c, 1); }

void wss_fmt_u64(wss_fmt_t *f, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof tmp;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	wss_fmt_mem(f, tmp + i, sizeof tmp - i);
}

void wss_fmt_i64(wss_fmt_t *f, int64_t v)
{
	if (v < 0) {
		wss_fmt_ch(f, '-');
		wss_fmt_u64(f, (uint64_t)0 - (uint64_t)v);
	} else {
		wss_fmt_u64(f, (uint64_t)v);
	}
}

void wss_fmt_fixed(wss_fmt_t *f, uint64_t v, unsigned decimals)
{
	uint64_t p = 1;
	for (unsigned i = 0; i < decimals; i++)
		p *= 10;
	wss_fmt_u64(f, v / p);
	if (!decimals)
		return;
	wss_fmt_ch(f, '.');
	uint64_t frac = v % p;
	for (uint64_t d = p / 10; d > 0; d /= 10) {
		wss_fmt_ch(f, (char)('0' + frac / d));
		frac %= d;
	}
}

void wss_fmt_escaped(wss_fmt_t *f, const char *s, size_t n, wss_fmt_syntax_t syntax)
{
	const char *hex = syntax == WSS_FMT_TOML ? "0123456789ABCDEF" : "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	while (p < end) {
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			wss_fmt_mem(f, e, 2);
			p++;
		} else if (c < 0x20 || (c == 0x7f && syntax == WSS_FMT_TOML)) {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			wss_fmt_mem(f, e, 6);
			p++;
		} else if (syntax == WSS_FMT_TOML) {
			wss_fmt_ch(f, (char)c);
			p++;
		} else {
			size_t len = wss_utf8_len(p, (size_t)(end - p));
			if (len == 0) {
				wss_fmt_str(f, "\xef\xbf\xbd");
				p++;
			} else {
				wss_fmt_mem(f, (const char *)p, len);
				p += len;
			}
		}
	}
}

void wss_fmt_json_str(wss_fmt_t *f, const char *s)
{
	wss_fmt_ch(f, '"');
	wss_fmt_escaped(f, s, strlen(s), WSS_FMT_JSON);
	wss_fmt_ch(f, '"');
}

const char *wss_fmt_cstr(wss_fmt_t *f)
{
	if (f->cap == 0)
		return "";
	f->buf[f->len < f->cap ? f->len : f->cap - 1] = '\0';
	return f->buf;
}

void wss_log(const char *first, ...)
{
	char storage[1024];
	wss_fmt_t f;
	wss_fmt_init(&f, storage, sizeof storage);
	wss_fmt_str(&f, "wss: ");
	va_list ap;
	va_start(ap, first);
	for (const char *s = first; s; s = va_arg(ap, const char *))
		wss_fmt_str(&f, s);
	va_end(ap);
	wss_fmt_ch(&f, '\n');
	wss_write_own(2, f.buf, f.len, false);
}
