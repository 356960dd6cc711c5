/* The page-trace reader (trace.h).  Records are read with stdio one at a
 * time: the type byte, the length's varint byte by byte (so a trace cut
 * inside it is told from a corrupt one), then the payload and its check.
 * A length that runs past the end of the file is a record cut short, never
 * an allocation of what it claims: the file's size bounds every buffer. */
#include "config.h"
#include "cli/model/trace.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/model/load.h"
#include "common/sample.h"

/* ---- pure decoding ---- */

/* A cursor over a payload for the decoder. */
typedef struct cursor {
	const uint8_t *p;
	size_t n, at;
	const char *why;
} cursor_t;

static bool get_varint(cursor_t *c, uint64_t *v, const char *what)
{
	size_t used;
	int r = wss_tracefmt_varint_decode(c->p + c->at, c->n - c->at, v, &used);
	if (r) {
		c->why = r == ENODATA ? what : "varint overflow (more than 64 bits)";
		return false;
	}
	c->at += used;
	return true;
}

static bool get_u8(cursor_t *c, unsigned *v, const char *what)
{
	if (c->at >= c->n) {
		c->why = what;
		return false;
	}
	*v = c->p[c->at++];
	return true;
}

/* The events after the runs: a count, then each a type byte and its
 * varints.  Returns false with c->why set. */
static bool get_events(cursor_t *c, wss_trace_store_t *st, wss_trace_interval_t *iv, uint64_t limit, bool *nomem)
{
	uint64_t nev;
	size_t nev_at = c->at;
	if (!get_varint(c, &nev, "the payload ends inside the events' count"))
		return false;
	if (nev > (c->n - c->at) / 3) {
		c->at = nev_at;
		c->why = "more events than the payload can hold";
		return false;
	}
	if (nev > st->events_cap) {
		wss_trace_event_t *m = realloc(st->events, nev * sizeof *m);
		if (!m) {
			*nomem = true;
			return false;
		}
		st->events = m;
		st->events_cap = nev;
	}
	for (uint64_t k = 0; k < nev; k++) {
		wss_trace_event_t *e = &st->events[k];
		size_t ev_at = c->at;
		unsigned type;
		if (!get_u8(c, &type, "the payload ends inside an event"))
			return false;
		e->to = 0;
		if ((type != WSS_TRACE_EV_GONE && type != WSS_TRACE_EV_MOVED) ||
		    !get_varint(c, &e->from, "the payload ends inside an event") ||
		    (type == WSS_TRACE_EV_MOVED && !get_varint(c, &e->to, "the payload ends inside an event")) ||
		    !get_varint(c, &e->n, "the payload ends inside an event")) {
			if (!c->why) {
				c->at = ev_at;
				c->why = "an unknown event type";
			}
			return false;
		}
		e->type = type;
		if (e->from > limit || e->n > limit - e->from || e->to > limit || e->n > limit - e->to) {
			c->at = ev_at;
			c->why = "an event past the address space";
			return false;
		}
	}
	iv->events = st->events;
	iv->nevents = (size_t)nev;
	return true;
}

int wss_trace_decode_interval(const uint8_t *p, size_t n, unsigned page_shift, wss_trace_interval_t *iv,
			      wss_trace_store_t *st, size_t *at, const char **why)
{
	wss_trace_run_t **runs = &st->runs;
	size_t *cap = &st->runs_cap;
	cursor_t c = {p, n, 0, NULL};
	uint64_t nruns;
	memset(iv, 0, sizeof *iv);
	if (!get_varint(&c, &iv->seq, "the payload ends inside seq") ||
	    !get_varint(&c, &iv->t_ns, "the payload ends inside t_ns") ||
	    !get_u8(&c, &iv->level, "the payload ends before level") ||
	    !get_u8(&c, &iv->sets, "the payload ends before sets"))
		goto bad;
	if (iv->seq == 0) {
		c.at = 0;
		c.why = "seq 0 (intervals are numbered from 1)";
		goto bad;
	}
	if (iv->level > WSS_SAMPLE_LEVEL_MAX) {
		c.at--;
		c.at--;
		c.why = "level above 30";
		goto bad;
	}
	if (iv->sets & ~(WSS_TRACE_SETS_WRITES | WSS_TRACE_SETS_READS)) {
		c.at--;
		c.why = "unknown bits in sets";
		goto bad;
	}
	size_t nruns_at = c.at;
	if (!get_varint(&c, &nruns, "the payload ends inside nruns"))
		goto bad;
	/* Each run takes at least three bytes: a count past that is corrupt,
	 * whatever memory there is. */
	if (nruns > (n - c.at) / 3) {
		c.at = nruns_at;
		c.why = "more runs than the payload can hold";
		goto bad;
	}
	if (nruns > *cap) {
		wss_trace_run_t *m = realloc(*runs, nruns * sizeof **runs);
		if (!m)
			return ENOMEM;
		*runs = m;
		*cap = nruns;
	}
	/* Page numbers fit 64 bits of address. */
	uint64_t limit = page_shift ? UINT64_MAX >> page_shift : UINT64_MAX, end = 0;
	uint64_t tid = 0;
	bool written = false;
	for (uint64_t k = 0; k < nruns; k++) {
		wss_trace_run_t *r = &(*runs)[k];
		uint64_t gap, len1, kind;
		size_t run_at = c.at;
		if (!get_varint(&c, &gap, "the payload ends inside a run's gap") ||
		    !get_varint(&c, &len1, "the payload ends inside a run's length") ||
		    !get_varint(&c, &kind, "the payload ends inside a run's kind"))
			goto bad;
		uint64_t first = k ? end + gap : gap;
		if ((k && first < end) || first > limit || len1 > limit - first) {
			c.at = run_at;
			c.why = "a run past the address space (runs not increasing)";
			goto bad;
		}
		if (kind == 0 && k == 0) {
			c.at = run_at;
			c.why = "the first run has kind 0 (the same as a run before it)";
			goto bad;
		}
		if (kind) {
			tid = (kind - 1) >> 1;
			written = (kind - 1) & 1;
		}
		*r = (wss_trace_run_t){first, len1 + 1, tid, written};
		iv->pages += len1 + 1;
		end = first + len1 + 1;
	}
	bool nomem = false;
	if (!get_events(&c, st, iv, limit, &nomem)) {
		if (nomem)
			return ENOMEM;
		goto bad;
	}
	if (c.at != n) {
		c.why = "bytes after the events";
		goto bad;
	}
	iv->runs = *runs;
	iv->nruns = (size_t)nruns;
	return 0;
bad:
	*at = c.at;
	*why = c.why;
	return EINVAL;
}

/* ---- the reader ---- */

static int bad(const wss_trace_t *t, uint64_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(const wss_trace_t *t, uint64_t at, const char *fmt, ...)
{
	fprintf(stderr, "wss: %s: byte %" PRIu64 ": ", t->path, at);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return WSS_EXIT_BADINPUT;
}

static int nomem(const wss_trace_t *t)
{
	fprintf(stderr, "wss: %s: out of memory\n", t->path);
	return 1;
}

void wss_trace_close(wss_trace_t *t)
{
	if (t->f)
		fclose(t->f);
	free(t->path);
	free(t->buf);
	free(t->store.runs);
	free(t->store.events);
	memset(t, 0, sizeof *t);
}

static int start(wss_trace_t *t)
{
	t->off = WSS_TRACE_HEADER_SIZE;
	t->intervals = t->first_seq = t->last_seq = 0;
	t->ended = t->truncated = t->cut = false;
	t->end_reason = t->end_last = t->end_errno = 0;
	if (fseeko(t->f, WSS_TRACE_HEADER_SIZE, SEEK_SET)) {
		fprintf(stderr, "wss: %s: %s\n", t->path, strerror(errno));
		return WSS_EXIT_BADINPUT;
	}
	return 0;
}

int wss_trace_open(wss_trace_t *t, const char *path)
{
	memset(t, 0, sizeof *t);
	if (!(t->path = strdup(path))) {
		fprintf(stderr, "wss: %s: out of memory\n", path);
		return 1;
	}
	int r = WSS_EXIT_BADINPUT;
	struct stat st;
	if (!(t->f = fopen(path, "rb")) || fstat(fileno(t->f), &st)) {
		fprintf(stderr, "wss: %s: %s\n", path, strerror(errno));
		goto fail;
	}
	t->size = (uint64_t)st.st_size;
	uint8_t h[WSS_TRACE_HEADER_SIZE];
	size_t got = fread(h, 1, sizeof h, t->f);
	uint32_t version, shift;
	bool magic = got >= WSS_TRACE_MAGIC_LEN && !memcmp(h, WSS_TRACE_MAGIC, WSS_TRACE_MAGIC_LEN);
	if (got < sizeof h || !wss_tracefmt_header_decode(h, &version, &shift)) {
		if (magic)
			fprintf(stderr, "wss: %s: header cut short (%zu of %d bytes)\n", path, got, WSS_TRACE_HEADER_SIZE);
		else
			fprintf(stderr, "wss: %s: not a wss page trace (no " WSS_TRACE_MAGIC " header)\n", path);
		goto fail;
	}
	if (version != WSS_TRACE_VERSION) {
		fprintf(stderr, "wss: %s: trace format version %" PRIu32 " is not supported (this wss reads version %d)\n",
			path, version, WSS_TRACE_VERSION);
		goto fail;
	}
	if (shift < 10 || shift > 30) {
		fprintf(stderr, "wss: %s: byte 12: page shift %" PRIu32 " (pages of 1 KiB to 1 GiB are 10 to 30)\n", path,
			shift);
		goto fail;
	}
	t->page_shift = shift;
	if (!(r = start(t)))
		return 0;
fail:
	wss_trace_close(t);
	return r;
}

int wss_trace_rewind(wss_trace_t *t) { return start(t); }

/* The record whose first byte is at: not all of it is in the file. */
static int cut_short(wss_trace_t *t, uint64_t at)
{
	t->off = at;
	t->truncated = true;
	t->cut = at < t->size;
	return 0;
}

static int read_end(wss_trace_t *t, uint64_t at, size_t hl, size_t len)
{
	uint64_t reason, last, err;
	size_t where;
	const char *why;
	int r = wss_tracefmt_end_decode(t->buf, len, &reason, &last, &err, &where, &why);
	if (r == ERANGE)
		return bad(t, at + hl, "end record: unknown reason %" PRIu64, reason);
	if (r)
		return bad(t, at + hl + where, "end record: %s", why);
	t->ended = true;
	t->end_reason = reason;
	t->end_last = last;
	t->end_errno = err;
	int c = fgetc(t->f);
	if (c != EOF)
		return bad(t, t->off, "data after the end record");
	return 0;
}

/* The most pages interval iv can list, from its sample in t->prof (the
 * engine writes the sample before the interval's record), with what the
 * bound is, or false when the profile has no such sample.  The pages
 * touched in the interval are among those the sample counted in its
 * window: at most its data_pages when it is exact, its members touched
 * (sampled.data) when it is sampled at the interval's level, and its
 * tracked pages at a finer level than the window's. */
static bool sample_bound(const wss_trace_t *t, const wss_trace_interval_t *iv, uint64_t *most, const char **what)
{
	/* The loader holds the samples' seq to 1, 2, 3, ... (as
	 * wss_load_sample, which this reader does not link). */
	if (iv->seq > t->prof->nsamples)
		return false;
	const wss_sample_t *s = &t->prof->samples[iv->seq - 1];
	if (s->rate > 1 && s->rate == (int64_t)1 << iv->level && s->sampled[WSS_SERIES_DATA] >= 0) {
		*what = "its sample's members touched (sampled.data)";
		*most = (uint64_t)s->sampled[WSS_SERIES_DATA];
	} else if (s->rate > 1 && s->tracked >= 0) {
		*what = "its sample's tracked pages (sampled.tracked)";
		*most = (uint64_t)s->tracked;
	} else {
		*what = "its sample's data_pages";
		*most = (uint64_t)s->data;
	}
	return true;
}

static int check_sample(wss_trace_t *t, const wss_trace_interval_t *iv)
{
	if (!t->prof || !iv->pages)
		return 0;
	const char *what;
	uint64_t most;
	if (!sample_bound(t, iv, &most, &what))
		return bad(t, iv->offset,
			   "interval %" PRIu64 ": %" PRIu64 " pages listed, but the profile has no sample %" PRIu64
			   ": not this profile's trace?",
			   iv->seq, iv->pages, iv->seq);
	if (iv->pages > most)
		return bad(t, iv->offset,
			   "interval %" PRIu64 ": %" PRIu64 " pages listed, more than %s allows (%" PRIu64
			   "): not this profile's trace?",
			   iv->seq, iv->pages, what, most);
	return 0;
}

/* Stops within three pages of a run at a sampled level (one member per
 * aligned block of 2^level pages), so a run's claimed length costs
 * nothing here. */
static int check_members(wss_trace_t *t, const wss_trace_interval_t *iv)
{
	if (!t->member_check || iv->level == 0)
		return 0;
	for (size_t k = 0; k < iv->nruns; k++)
		for (uint64_t pn = iv->runs[k].first; pn < iv->runs[k].first + iv->runs[k].n; pn++)
			if (!wss_sample_member(pn, iv->level, t->seed))
				return bad(t, iv->offset,
					   "interval %" PRIu64 ": page 0x%" PRIx64 " is not a member of level %u "
					   "(the profile's sampling_seed 0x%" PRIx64 "): not this profile's trace?",
					   iv->seq, pn << t->page_shift, iv->level, t->seed);
	return 0;
}

int wss_trace_next(wss_trace_t *t, wss_trace_interval_t *iv, bool *got)
{
	*got = false;
	if (t->ended || t->truncated)
		return 0;
	uint64_t at = t->off;
	uint8_t head[1 + WSS_TRACE_VARINT_MAX];
	int c = fgetc(t->f);
	if (c == EOF)
		return cut_short(t, at);
	head[0] = (uint8_t)c;
	if (c != WSS_TRACE_REC_INTERVAL && c != WSS_TRACE_REC_END)
		return bad(t, at, "unknown record type 0x%02x", (unsigned)c);
	size_t hl = 1;
	do {
		if (hl == sizeof head)
			return bad(t, at + 1, "record length: varint overflow (more than 10 bytes)");
		if ((c = fgetc(t->f)) == EOF)
			return cut_short(t, at);
		head[hl++] = (uint8_t)c;
	} while (c & 0x80);
	uint64_t len;
	size_t used;
	if (wss_tracefmt_varint_decode(head + 1, hl - 1, &len, &used))
		return bad(t, at + 1, "record length: varint overflow (more than 64 bits)");
	if (len > t->size || at + hl + len + WSS_TRACE_CHECK_SIZE > t->size)
		return cut_short(t, at);
	if (len + WSS_TRACE_CHECK_SIZE > t->buf_cap) {
		uint8_t *m = realloc(t->buf, len + WSS_TRACE_CHECK_SIZE);
		if (!m)
			return nomem(t);
		t->buf = m;
		t->buf_cap = len + WSS_TRACE_CHECK_SIZE;
	}
	if (fread(t->buf, 1, len + WSS_TRACE_CHECK_SIZE, t->f) < len + WSS_TRACE_CHECK_SIZE) {
		if (ferror(t->f)) {
			fprintf(stderr, "wss: %s: %s\n", t->path, strerror(errno));
			return WSS_EXIT_BADINPUT;
		}
		return cut_short(t, at);
	}
	uint32_t stored = wss_tracefmt_le32(t->buf + len);
	uint32_t crc = wss_tracefmt_crc32(wss_tracefmt_crc32(0, head, hl), t->buf, len);
	if (crc != stored)
		return bad(t, at, "bad check: the record's CRC-32 is 0x%08" PRIx32 ", its check says 0x%08" PRIx32, crc,
			   stored);
	t->off = at + hl + len + WSS_TRACE_CHECK_SIZE;
	if (head[0] == WSS_TRACE_REC_END)
		return read_end(t, at, hl, len);
	size_t where;
	const char *why;
	int r = wss_trace_decode_interval(t->buf, len, t->page_shift, iv, &t->store, &where, &why);
	if (r == ENOMEM)
		return nomem(t);
	if (r)
		return bad(t, at + hl + where, "interval record: %s", why);
	iv->offset = at;
	if (t->intervals && iv->seq != t->last_seq + 1)
		return bad(t, at + hl, "interval %" PRIu64 " after %" PRIu64 " (one record per interval, no gap)", iv->seq,
			   t->last_seq);
	if ((r = check_members(t, iv)) || (r = check_sample(t, iv)))
		return r;
	if (!t->intervals++)
		t->first_seq = iv->seq;
	t->last_seq = iv->seq;
	*got = true;
	return 0;
}

void wss_trace_describe_end(const wss_trace_t *t, char *buf, size_t n)
{
	if (t->truncated)
		snprintf(buf, n, "truncated at byte %" PRIu64 " (%s): %" PRIu64 " whole interval%s read", t->off,
			 t->cut ? "a record cut short" : "no end record", t->intervals, t->intervals == 1 ? "" : "s");
	else if (t->ended && t->end_reason == WSS_TRACE_END_MAX)
		snprintf(buf, n, "stopped at session.trace_max after interval %" PRIu64, t->end_last);
	else if (t->ended && t->end_reason == WSS_TRACE_END_ERROR)
		snprintf(buf, n, "stopped after interval %" PRIu64 ": it could not be written (%s)", t->end_last,
			 strerror((int)t->end_errno));
	else
		buf[0] = '\0';
}
