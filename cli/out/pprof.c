/* `wss export --format pprof` (export.h): the whole run's first-touch sites
 * as a profile.proto message (github.com/google/pprof, proto/profile.proto),
 * gzipped, which `go tool pprof` and other pprof readers take.  The
 * protocol-buffer wire format is written by hand: varints and
 * length-delimited fields are all a Profile needs, and a nested message is
 * built in a scratch buffer and then copied in with its length, which
 * costs a copy per message and no size precomputation.  Addresses are
 * symbolised here (cli/model/symbols.h), so pprof never looks for the binaries.
 *
 * A runtime's interpreter frames (python3.X, libjvm.so, node) are not
 * folded here as wss report folds them (cli/model/fold.h): pprof merges stacks
 * by their functions, and a "[python interpreter: 14 frames]" would make
 * one node per run length and lose the frames for good, while pprof folds
 * at view time and undoes it: -hide matches a Location's mapping file, so
 * -hide='bin/python3|libpython3|libjvm|/node$' drops them (docs/report.md). */
#include "config.h"
#include "cli/out/export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli/model/symbols.h"

/* ---- the wire format ---- */

enum { PB_VARINT = 0, PB_LEN = 2 };

typedef struct pb {
	uint8_t *b;
	size_t len, cap;
	bool oom;
} pb_t;

static void pb_raw(pb_t *p, const void *d, size_t n)
{
	if (p->len + n > p->cap) {
		size_t cap = p->cap ? p->cap : 256;
		while (p->len + n > cap)
			cap *= 2;
		uint8_t *b = realloc(p->b, cap);
		if (!b) {
			p->oom = true;
			return;
		}
		p->b = b;
		p->cap = cap;
	}
	if (n)
		memcpy(p->b + p->len, d, n);
	p->len += n;
}

static void pb_varint(pb_t *p, uint64_t v)
{
	uint8_t t[10];
	size_t n = 0;
	do {
		t[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_raw(p, t, n);
}

static void pb_key(pb_t *p, unsigned field, unsigned wire) { pb_varint(p, (uint64_t)field << 3 | wire); }

/* A varint field (uint64, int64 as two's complement, bool).  Zero is
 * proto3's default and is left out, as protobuf encoders do. */
static void pb_int(pb_t *p, unsigned field, uint64_t v)
{
	if (!v)
		return;
	pb_key(p, field, PB_VARINT);
	pb_varint(p, v);
}

static void pb_bytes(pb_t *p, unsigned field, const void *d, size_t n)
{
	pb_key(p, field, PB_LEN);
	pb_varint(p, n);
	pb_raw(p, d, n);
}

/* A nested message (or packed repeated field): sub's bytes, and sub emptied
 * for the next one. */
static void pb_msg(pb_t *p, unsigned field, pb_t *sub)
{
	p->oom |= sub->oom;
	pb_bytes(p, field, sub->b, sub->len);
	sub->len = 0;
}

/* A ValueType {type, unit} (string indices). */
static void pb_value_type(pb_t *p, unsigned field, int64_t type, int64_t unit, pb_t *tmp)
{
	pb_int(tmp, 1, (uint64_t)type);
	pb_int(tmp, 2, (uint64_t)unit);
	pb_msg(p, field, tmp);
}

/* ---- the tables a Profile refers into ---- */

typedef struct line {
	uint64_t function;
	int64_t line;
} line_t;

typedef struct loc {
	uint64_t addr, mapping;
	size_t line0, nlines;
} loc_t;

typedef struct fn {
	int64_t name, file;
} fn_t;

typedef struct builder {
	const wss_profile_t *p;
	wss_symbols_t *syms;
	bool oom;
	size_t nvals; /* values a sample carries (the sample types) */
	/* string_table: strs[0] is "" (the format requires it) */
	char **strs;
	size_t nstrs, strs_cap;
	wss_u64map_t str_ids; /* hash -> index + 1 */
	/* Location, Line and Function tables; ids are index + 1 */
	loc_t *locs;
	size_t nlocs, locs_cap;
	line_t *lines;
	size_t nlines, lines_cap;
	fn_t *fns;
	size_t nfns, fns_cap;
	wss_u64map_t loc_ids, fn_ids;
	wss_frame_t *fr;
	size_t nfr, frcap;
} builder_t;

/* Room for one more element of an array *a of *n with capacity *cap. */
static void *grow(builder_t *b, void **a, size_t *n, size_t *cap, size_t size)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *x = realloc(*a, c * size);
		if (!x) {
			b->oom = true;
			return NULL;
		}
		*a = x;
		*cap = c;
	}
	return (char *)*a + (*n)++ * size;
}
#define GROW(b, arr, n, cap) ((__typeof__(arr))grow((b), (void **)&(arr), &(n), &(cap), sizeof *(arr)))

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* Records id as key's in m (b->oom when it cannot) and returns it. */
static uint64_t remember(builder_t *b, wss_u64map_t *m, uint64_t key, uint64_t id)
{
	if (wss_u64map_put(m, key, id))
		b->oom = true;
	return id;
}

/* The index of s in the string table, added when new (0 when out of
 * memory: b->oom says so).  The map's keys are the strings' hashes; two
 * strings with one hash take the next free key, so a lookup walks the
 * keys from its hash until it finds its string or a free key. */
static int64_t str_id(builder_t *b, const char *s)
{
	if (!*s)
		return 0;
	uint64_t h = fnv1a(s), id;
	for (; (id = wss_u64map_get(&b->str_ids, h)); h++)
		if (!strcmp(b->strs[id - 1], s))
			return (int64_t)id - 1;
	char *copy = strdup(s);
	char **slot = copy ? GROW(b, b->strs, b->nstrs, b->strs_cap) : NULL;
	if (!slot) {
		free(copy);
		b->oom = true;
		return 0;
	}
	*slot = copy;
	return (int64_t)remember(b, &b->str_ids, h, b->nstrs) - 1;
}

static uint64_t function_id(builder_t *b, const char *name, const char *file)
{
	int64_t n = str_id(b, name), f = str_id(b, file);
	uint64_t key = (uint64_t)n << 32 | (uint64_t)f;
	uint64_t id = wss_u64map_get(&b->fn_ids, key);
	if (id)
		return id;
	fn_t *fn = GROW(b, b->fns, b->nfns, b->fns_cap);
	if (!fn)
		return 0;
	*fn = (fn_t){n, f};
	return remember(b, &b->fn_ids, key, b->nfns);
}

/* A Location of one Line, for what has no address ("(other sites)"). */
static uint64_t pseudo_location(builder_t *b, const char *name)
{
	line_t *ln = GROW(b, b->lines, b->nlines, b->lines_cap);
	loc_t *l = ln ? GROW(b, b->locs, b->nlocs, b->locs_cap) : NULL;
	if (!l)
		return 0;
	*ln = (line_t){function_id(b, name, ""), 0};
	*l = (loc_t){0, 0, b->nlines - 1, 1};
	return b->nlocs;
}

/* The Location of addr: the faulting instruction (ret false) or a return
 * address, whose call is looked up at addr - 1.  Inlined calls are Lines
 * of it, innermost first, as pprof wants them. */
static uint64_t location_id(builder_t *b, uint64_t addr, bool ret)
{
	uint64_t key = addr << 1 | ret; /* user-space addresses are below 2^63 */
	uint64_t id = wss_u64map_get(&b->loc_ids, key);
	if (id)
		return id;
	b->nfr = 0;
	if (wss_sym_frames(b->syms, addr, ret, &b->fr, &b->nfr, &b->frcap)) {
		b->oom = true;
		return 0;
	}
	loc_t l = {addr, 0, b->nlines, 0};
	for (size_t k = 0; k < b->nfr; k++) {
		const wss_frame_t *f = &b->fr[k];
		char name[64];
		const char *fname = f->function;
		if (f->module && !l.mapping)
			l.mapping = (uint64_t)(f->module - b->p->modules) + 1;
		if (!fname) { /* what the report prints for it */
			const char *base = f->module ? strrchr(f->module->path, '/') : NULL;
			if (f->module)
				snprintf(name, sizeof name, "%s+0x%" PRIx64, base ? base + 1 : f->module->path, f->offset);
			else
				snprintf(name, sizeof name, "0x%" PRIx64, f->addr);
			fname = name;
		}
		line_t *ln = GROW(b, b->lines, b->nlines, b->lines_cap);
		if (!ln)
			return 0;
		*ln = (line_t){function_id(b, fname, f->file ? f->file : ""), f->file ? f->line : 0};
		l.nlines++;
	}
	loc_t *slot = GROW(b, b->locs, b->nlocs, b->locs_cap);
	if (!slot)
		return 0;
	*slot = l;
	return remember(b, &b->loc_ids, key, b->nlocs);
}

/* ---- the sites ---- */

static int by_pages(const void *a, const void *b)
{
	const wss_site_t *x = a, *y = b;
	return (x->pages < y->pages) - (x->pages > y->pages);
}

/* The sites to export: the "sites" record's, or else the peaks' sites
 * added up by (pc, stack), most pages first (*owned: free it).  The sites
 * of a peak are its interval's, whatever its series: of several peaks in
 * one interval (data, and a thread's) only the first counts.  A site
 * without a pc gets its stack's first frame, which is that pc. */
static int gather_sites(const wss_profile_t *p, wss_site_t **out, size_t *n, int64_t *other, bool *owned)
{
	*owned = false;
	*other = 0;
	if (p->has_sites) {
		*out = p->sites;
		*n = p->nsites;
		*other = p->sites_other;
		return 0;
	}
	size_t cap = 0;
	for (size_t i = 0; i < p->npeaks; i++)
		cap += p->peaks[i].nsites;
	wss_site_t *s = calloc(cap ? cap : 1, sizeof *s);
	if (!s)
		return ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < p->npeaks; i++) {
		bool again = false; /* another peak of this interval came first */
		for (size_t h = 0; h < i && !again; h++)
			again = p->peaks[h].seq == p->peaks[i].seq;
		for (size_t j = 0; j < p->peaks[i].nsites && !again; j++) {
			wss_site_t x = p->peaks[i].sites[j];
			if (!x.pc) {
				const wss_stack_t *st = x.stack >= 0 ? wss_load_stack(p, x.stack) : NULL;
				x.pc = st && st->n ? st->frames[0] : 0;
			}
			size_t k = 0;
			while (k < m && !(s[k].pc == x.pc && s[k].stack == x.stack))
				k++;
			if (k == m)
				s[m++] = x;
			else
				s[k].pages += x.pages;
		}
	}
	qsort(s, m, sizeof *s, by_pages);
	*out = s;
	*n = m;
	*owned = true;
	return 0;
}

/* ---- the Profile ---- */

/* The sample types: first touches in pages and bytes, and with allocation
 * sites, their live, working-set and idle pages. */
#define VALUES_MAX 5

static void encode_values(pb_t *out, const uint64_t *ids, size_t nids, const int64_t *vals, size_t nvals, pb_t *tmp)
{
	pb_t sample = {0};
	for (size_t k = 0; k < nids; k++)
		pb_varint(tmp, ids[k]);
	pb_msg(&sample, 1, tmp); /* location_id, packed, leaf first */
	for (size_t k = 0; k < nvals; k++)
		pb_varint(tmp, (uint64_t)vals[k]);
	pb_msg(&sample, 2, tmp); /* value */
	pb_msg(out, 2, &sample);
	free(sample.b);
}

static void encode_sample(pb_t *out, const uint64_t *ids, size_t nids, int64_t pages, int64_t page_size, size_t nvals,
			  pb_t *tmp)
{
	/* The loader holds pages times page_size below 2^63; saturate all the
	 * same, as pprof's values are signed 64-bit. */
	int64_t vals[VALUES_MAX] = {pages, 0, 0, 0, 0};
	if (__builtin_mul_overflow(pages, page_size, &vals[1]))
		vals[1] = INT64_MAX;
	encode_values(out, ids, nids, vals, nvals, tmp);
}

/* Room for n location ids in *ids.  False when out of memory. */
static bool ids_room(builder_t *b, uint64_t **ids, size_t *cap, size_t n)
{
	if (n <= *cap)
		return true;
	uint64_t *x = realloc(*ids, n * sizeof *x);
	if (!x) {
		b->oom = true;
		return false;
	}
	*ids = x;
	*cap = n;
	return true;
}

/* The allocation sites: each stack's live, working-set and idle pages
 * (its frames all return addresses: the stack was taken in the
 * allocator's wrapper). */
static void encode_alloc_samples(builder_t *b, pb_t *out, pb_t *tmp)
{
	const wss_profile_t *p = b->p;
	uint64_t *ids = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < p->nalloc_sites && !b->oom; i++) {
		const wss_alloc_site_t *x = &p->alloc_sites[i];
		const wss_stack_t *st = x->stack > 0 ? wss_load_stack(p, x->stack) : NULL;
		size_t nids = st && st->n ? st->n : 1;
		if (!ids_room(b, &ids, &cap, nids))
			break;
		if (st && st->n)
			for (size_t k = 0; k < st->n; k++)
				ids[k] = location_id(b, st->frames[k], true);
		else
			ids[0] = pseudo_location(b, "(no stack)");
		int64_t vals[VALUES_MAX] = {0, 0, x->live_pages, x->ws_pages, x->idle_pages};
		encode_values(out, ids, nids, vals, VALUES_MAX, tmp);
	}
	free(ids);
}

static void encode_samples(builder_t *b, const wss_site_t *sites, size_t n, int64_t other, pb_t *out, pb_t *tmp)
{
	const wss_profile_t *p = b->p;
	uint64_t *ids = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < n && !b->oom; i++) {
		const wss_stack_t *st = sites[i].stack >= 0 ? wss_load_stack(p, sites[i].stack) : NULL;
		size_t nids = st && st->n ? st->n : 1;
		if (!ids_room(b, &ids, &cap, nids))
			break;
		if (st && st->n)
			for (size_t k = 0; k < st->n; k++)
				ids[k] = location_id(b, st->frames[k], k > 0);
		else
			ids[0] = location_id(b, sites[i].pc, false);
		encode_sample(out, ids, nids, sites[i].pages, p->page_size, b->nvals, tmp);
	}
	if (other > 0 && !b->oom) {
		uint64_t id = pseudo_location(b, "(other sites)");
		encode_sample(out, &id, 1, other, p->page_size, b->nvals, tmp);
	}
	free(ids);
}

static void encode_tables(builder_t *b, pb_t *out, pb_t *tmp)
{
	const wss_profile_t *p = b->p;
	pb_t sub = {0};
	for (size_t k = 0; k < p->nmodules; k++) {
		const wss_module_t *m = &p->modules[k];
		pb_int(tmp, 1, k + 1);
		pb_int(tmp, 2, m->start);
		pb_int(tmp, 3, m->end ? m->end : m->start);
		/* file_offset 0: start is the first PT_LOAD segment, at offset 0 */
		pb_int(tmp, 5, (uint64_t)str_id(b, m->path));
		pb_int(tmp, 6, (uint64_t)str_id(b, m->build_id ? m->build_id : ""));
		for (unsigned f = 7; f <= 10; f++) /* has_functions .. has_inline_frames */
			pb_int(tmp, f, 1);
		pb_msg(out, 3, tmp);
	}
	for (size_t k = 0; k < b->nlocs; k++) {
		const loc_t *l = &b->locs[k];
		pb_int(tmp, 1, k + 1);
		pb_int(tmp, 2, l->mapping);
		pb_int(tmp, 3, l->addr);
		for (size_t j = 0; j < l->nlines; j++) {
			pb_int(&sub, 1, b->lines[l->line0 + j].function);
			pb_int(&sub, 2, (uint64_t)b->lines[l->line0 + j].line);
			pb_msg(tmp, 4, &sub);
		}
		pb_msg(out, 4, tmp);
	}
	for (size_t k = 0; k < b->nfns; k++) {
		pb_int(tmp, 1, k + 1);
		pb_int(tmp, 2, (uint64_t)b->fns[k].name);
		pb_int(tmp, 3, (uint64_t)b->fns[k].name);
		pb_int(tmp, 4, (uint64_t)b->fns[k].file);
		pb_msg(out, 5, tmp);
	}
	out->oom |= sub.oom;
	free(sub.b);
}

/* Gzip (RFC 1952, as pprof files are) of n bytes at d into the sink. */
static int gzip_to(wss_sink_t *out, const uint8_t *d, size_t n)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return ENOMEM;
	unsigned char buf[1 << 16];
	int r = Z_OK;
	z.next_in = (Bytef *)d;
	while (r == Z_OK && !out->err) {
		size_t left = n - (size_t)(z.next_in - (Bytef *)d);
		z.avail_in = left > (1u << 30) ? 1u << 30 : (uInt)left;
		z.next_out = buf;
		z.avail_out = sizeof buf;
		r = deflate(&z, left > (1u << 30) ? Z_NO_FLUSH : Z_FINISH);
		wss_fmt_mem(&out->f, (const char *)buf, sizeof buf - z.avail_out);
		wss_sink_flush(out, false);
	}
	deflateEnd(&z);
	if (out->err)
		return out->err;
	return r == Z_STREAM_END ? wss_sink_flush(out, true) : ENOMEM;
}

static void builder_free(builder_t *b)
{
	for (size_t k = 0; k < b->nstrs; k++)
		free(b->strs[k]);
	free(b->strs);
	wss_u64map_free(&b->str_ids);
	free(b->locs);
	free(b->lines);
	free(b->fns);
	free(b->fr);
	wss_u64map_free(&b->loc_ids);
	wss_u64map_free(&b->fn_ids);
	wss_sym_close(b->syms);
}

int wss_export_pprof(const wss_profile_t *p, wss_sink_t *out)
{
	builder_t b;
	memset(&b, 0, sizeof b);
	b.p = p;
	wss_site_t *sites;
	size_t nsites;
	int64_t other;
	bool owned;
	if (!(b.syms = wss_sym_open(p)) || gather_sites(p, &sites, &nsites, &other, &owned)) {
		wss_sym_close(b.syms);
		return ENOMEM;
	}
	if (!p->has_sites)
		fprintf(stderr, "wss: %s: no \"sites\" record: the pprof export has only the peaks' sites\n", p->path);
	char **s0 = GROW(&b, b.strs, b.nstrs, b.strs_cap);
	if (s0 && !(*s0 = strdup("")))
		b.oom = true;
	pb_t msg = {0}, tmp = {0};
	/* Named for what they count: first touches, a page's in each
	 * interval it was touched first (a page touched in 5 intervals counts
	 * 5), not the run's distinct pages; pprof's "Total samples" is their
	 * sum. */
	int64_t pages = str_id(&b, "pages"), bytes = str_id(&b, "bytes");
	int64_t ft = str_id(&b, "first_touches"), ftb = str_id(&b, "first_touch_bytes");
	pb_value_type(&msg, 1, ft, pages, &tmp);  /* sample_type[0]: pages first touched */
	pb_value_type(&msg, 1, ftb, bytes, &tmp); /* sample_type[1]: the same in bytes */
	b.nvals = 2;
	if (p->has_alloc_sites) {
		/* sample_type[2..4]: allocation sites' live, working-set and idle pages (go tool pprof -sample_index=idle) */
		pb_value_type(&msg, 1, str_id(&b, "live"), pages, &tmp);
		pb_value_type(&msg, 1, str_id(&b, "working_set"), pages, &tmp);
		pb_value_type(&msg, 1, str_id(&b, "idle"), pages, &tmp);
		b.nvals = VALUES_MAX;
	}
	encode_samples(&b, sites, nsites, other, &msg, &tmp);
	if (p->has_alloc_sites)
		encode_alloc_samples(&b, &msg, &tmp);
	encode_tables(&b, &msg, &tmp);
	char comment[2][4096];
	snprintf(comment[0], sizeof comment[0], "wss first-touch sites of %s (pid %" PRId64 "), from %s", p->exe, p->pid,
		 p->path);
	snprintf(comment[1], sizeof comment[1], "%s; backend %s%s",
		 p->has_sites ? "sites: the whole run" : "sites: the peaks' only (the profile has no sites record)",
		 p->backend, wss_load_sampled(p) ? "; sampled run: pages of the sampled pages, not scaled" : "");
	int64_t comments[2] = {str_id(&b, comment[0]), str_id(&b, comment[1])};
	for (size_t k = 0; k < b.nstrs && !b.oom; k++)
		pb_bytes(&msg, 6, b.strs[k], strlen(b.strs[k]));
	const wss_sample_t *last = p->nsamples ? &p->samples[p->nsamples - 1] : NULL;
	pb_int(&msg, 9, p->start_unix_ns > 0 ? (uint64_t)p->start_unix_ns : 0);
	pb_int(&msg, 10, p->duration_ns >= 0 ? (uint64_t)p->duration_ns : last ? (uint64_t)last->t_ns : 0);
	pb_value_type(&msg, 11, pages, pages, &tmp);
	/* The rate of a sampled run: one page in period was watched. */
	pb_int(&msg, 12, p->rate_max > 1 ? (uint64_t)p->rate_max : 1);
	for (size_t k = 0; k < 2; k++)
		pb_varint(&tmp, (uint64_t)comments[k]);
	pb_msg(&msg, 13, &tmp); /* comment, packed */
	pb_int(&msg, 14, (uint64_t)ft);
	int r = b.oom || msg.oom || tmp.oom ? ENOMEM : gzip_to(out, msg.b, msg.len);
	free(msg.b);
	free(tmp.b);
	if (owned)
		free(sites);
	builder_free(&b);
	return r;
}
