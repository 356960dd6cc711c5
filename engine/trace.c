/* The page trace (docs/trace-format.md): for each sample, the pages touched
 * in its interval alone (the members of the interval's level when sampled),
 * each written or not and with its first toucher, in runs of consecutive
 * pages.  Written by the tick under the engine lock, one record per write(2)
 * (a killed program leaves whole records and perhaps one cut short, which
 * the reader tells by its length and check), into a file created beside
 * the profile at the first sample.  Bounded by session.trace_max; a write
 * that fails (a full disk) stops the trace there, cut back to its last
 * whole record.  Neither ever stops measuring or harms the program. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#define HEAD_MAX WSS_TRACE_HEAD_MAX
#define FIXED_MAX WSS_TRACE_FIXED_MAX
/* Kept for the end record under session.trace_max: it takes at most 27
 * bytes (a type, a one-byte length, three varints of which two fit 10
 * bytes and the reason 1, a check). */
#define END_BYTES 40

/* Room for more bytes in the record being built; false when memory is
 * short (the trace stops: ENOMEM). */
static bool reserve(size_t more)
{
	if (E.trace_len + more <= E.trace_cap)
		return true;
	size_t cap = E.trace_cap ? E.trace_cap : 65536;
	while (cap < E.trace_len + more)
		cap *= 2;
	uint8_t *b = wss_sys_alloc(cap);
	if (!b)
		return false;
	if (E.trace_buf) {
		memcpy(b, E.trace_buf, E.trace_len);
		wss_sys_free(E.trace_buf, E.trace_cap);
	}
	E.trace_buf = b;
	E.trace_cap = cap;
	return true;
}

/* The record whose payload is trace_buf[start, trace_len), with room
 * for its check after: its type and length go just before it.  Returns
 * where it starts. */
static size_t seal(uint8_t type, size_t start)
{
	size_t at = wss_tracefmt_seal(E.trace_buf, type, start, E.trace_len);
	E.trace_len += WSS_TRACE_CHECK_SIZE;
	return at;
}

static bool trace_fd_ok(void) { return E.trace_fd >= 0 && wss_fd_same(E.trace_fd, E.trace_dev, E.trace_ino); }

/* Write bytes as one record; on failure the file is cut back to its last
 * whole record.  Returns 0 or an errno. */
static int put_record(const uint8_t *p, size_t n)
{
	if (!trace_fd_ok())
		return EBADF;
	int r = wss_write_own(E.trace_fd, p, n, true);
	if (r) {
		wss_sys2(SYS_ftruncate, E.trace_fd, E.trace_written);
		return r;
	}
	E.trace_written += n;
	return 0;
}

static void close_trace(void)
{
	if (E.trace_fd >= 0)
		E.trace_removed = wss_file_removed(E.trace_fd, E.trace_dev, E.trace_ino, E.trace_path);
	if (trace_fd_ok())
		wss_sys_close(E.trace_fd);
	E.trace_fd = -1;
}

/* The end record (reason, the last interval traced, the errno), then
 * close.  Best effort: on a full disk it may not fit. */
static void end(int reason, int err)
{
	if (E.trace_fd < 0)
		return;
	E.trace_stop = reason;
	E.trace_err = err;
	E.trace_len = HEAD_MAX;
	if (reserve(END_BYTES)) {
		E.trace_len += wss_tracefmt_end_encode(E.trace_buf + E.trace_len, (unsigned)reason, E.trace_last,
						    (uint64_t)err);
		size_t at = seal(WSS_TRACE_REC_END, HEAD_MAX);
		if (E.trace_written + (E.trace_len - at) <= E.set.trace_max || reason != WSS_TRACE_END_MAX)
			put_record(E.trace_buf + at, E.trace_len - at);
	}
	close_trace();
}

/* An event of the interval, encoded at once into trace_ev: a type byte
 * and up to three varints.  Memory short: the trace stops at the next
 * record (its windows would be wrong without the event). */
static void event(unsigned type, uint64_t a, uint64_t b, uint64_t n)
{
	if (E.trace_stop || E.trace_ev_oom || E.no_profile || E.cut_err)
		return;
	if (E.trace_ev_len + WSS_TRACE_EVENT_MAX > E.trace_ev_cap) {
		size_t cap = E.trace_ev_cap ? 2 * E.trace_ev_cap : 4096;
		uint8_t *v = wss_sys_alloc(cap);
		if (!v) {
			E.trace_ev_oom = true;
			return;
		}
		if (E.trace_ev) {
			memcpy(v, E.trace_ev, E.trace_ev_len);
			wss_sys_free(E.trace_ev, E.trace_ev_cap);
		}
		E.trace_ev = v;
		E.trace_ev_cap = cap;
	}
	E.trace_ev_len += wss_tracefmt_event_encode(E.trace_ev + E.trace_ev_len, type, a, b, n);
	E.trace_nev++;
}

void wss_trace_gone(uintptr_t s, uintptr_t e)
{
	event(WSS_TRACE_EV_GONE, s >> WSS_PAGE_SHIFT, 0, (e - s) >> WSS_PAGE_SHIFT);
}

void wss_trace_moved(uintptr_t old, uintptr_t nw, size_t n)
{
	event(WSS_TRACE_EV_MOVED, old >> WSS_PAGE_SHIFT, nw >> WSS_PAGE_SHIFT, n);
}

void wss_trace_init(void)
{
	E.trace_fd = -1;
	E.trace_written = E.trace_pages = 0;
	E.trace_records = E.trace_last = 0;
	E.trace_stop = E.trace_err = 0;
	E.trace_path[0] = '\0';
	E.trace_ev_len = 0;
	E.trace_nev = 0;
	E.trace_ev_oom = false;
}

void wss_trace_fork_child(void)
{
	/* The parent's descriptor, duplicated by fork: closing ours leaves
	 * the parent's open.  The child names its own at its first sample. */
	close_trace();
	wss_trace_init();
}

/* Beside the profile: NAME.jsonl gives NAME.trace, any other name gets
 * .trace appended; never over an existing file (then NAME.2.trace, ...).
 * Returns 0 or an errno. */
static int create(void)
{
	size_t n = strlen(E.path);
	size_t stem = n >= 6 && !strcmp(E.path + n - 6, ".jsonl") ? n - 6 : n;
	int r = EEXIST;
	for (unsigned i = 1; i <= 100 && r == EEXIST; i++) {
		wss_fmt_t f;
		wss_fmt_init(&f, E.trace_path, sizeof E.trace_path);
		wss_fmt_mem(&f, E.path, stem);
		if (i > 1) {
			wss_fmt_ch(&f, '.');
			wss_fmt_u64(&f, i);
		}
		wss_fmt_str(&f, ".trace");
		wss_fmt_cstr(&f);
		if (f.overflow)
			return ENAMETOOLONG;
		int fd = wss_file_create(AT_FDCWD, E.trace_path, O_APPEND);
		r = fd < 0 ? -fd : 0;
		if (fd >= 0) {
			E.trace_fd = wss_fd_high(fd); /* the low numbers stay the program's */
			wss_fd_identity(E.trace_fd, &E.trace_dev, &E.trace_ino);
		}
	}
	if (r)
		return r;
	uint8_t h[WSS_TRACE_HEADER_SIZE];
	wss_tracefmt_header_encode(h, WSS_PAGE_SHIFT);
	E.trace_written = 0;
	r = put_record(h, sizeof h);
	if (r) /* not even its header: no trace, and no empty file left */
		wss_sys2(SYS_unlink, (long)E.trace_path, 0);
	return r;
}

/* The basename of the trace, as the profile names it. */
static const char *trace_name(void)
{
	const char *s = strrchr(E.trace_path, '/');
	return s ? s + 1 : E.trace_path;
}

typedef struct walk {
	uint32_t k, nt;
	bool writes;
	bool open;            /* a run is being built */
	uint64_t start, stop; /* its pages [start, stop) */
	uint64_t kind;        /* tid << 1 | written */
	uint64_t prev_stop;   /* the end of the run before (0: none yet) */
	bool first;
	uint64_t prev_kind;
	uint64_t nruns, pages;
	bool oom;
} walk_t;

static void flush_run(walk_t *w)
{
	if (!w->open || w->oom)
		return;
	if (!reserve(WSS_TRACE_RUN_MAX)) {
		w->oom = true;
		return;
	}
	E.trace_len += wss_tracefmt_run_encode(E.trace_buf + E.trace_len, w->first ? w->start : w->start - w->prev_stop,
					    w->stop - w->start - 1,
					    !w->first && w->kind == w->prev_kind ? 0 : w->kind + 1);
	w->first = false;
	w->prev_stop = w->stop;
	w->prev_kind = w->kind;
	w->nruns++;
	w->open = false;
}

static void trace_page(uintptr_t a, void *arg)
{
	walk_t *w = arg;
	uint32_t owner;
	wss_page_t *pg = wss_shadow_page(a);
	if (!pg || !wss_page_in_window(pg, w->k, 1, &owner))
		return;
	bool wrote = w->writes && wss_written_in(*wss_shadow_written(a), w->k, 1);
	int tid = owner && owner <= w->nt ? __atomic_load_n(&wss_threads_get(owner)->tid, __ATOMIC_ACQUIRE) : 0;
	uint64_t kind = (uint64_t)(tid > 0 ? tid : 0) << 1 | wrote;
	uint64_t pn = a >> WSS_PAGE_SHIFT;
	w->pages++;
	if (w->open && pn == w->stop && kind == w->kind) {
		w->stop++;
		return;
	}
	flush_run(w);
	w->open = true;
	w->start = pn;
	w->stop = pn + 1;
	w->kind = kind;
}

void wss_trace_interval(uint32_t k, uint64_t t_ns, uint32_t level, wss_profile_sets_t sets)
{
	if (!E.set.trace || E.trace_stop || E.fd < 0 || E.open_pending || E.no_profile || E.cut_err ||
	    wss_sys_getpid() != E.pid)
		return;
	if (E.trace_fd < 0) {
		if (E.trace_path[0])
			return; /* created once, then closed: stopped */
		int r = create();
		if (r) {
			E.trace_stop = WSS_TRACE_END_ERROR;
			E.trace_err = r;
			close_trace();
			return;
		}
		wss_fmt_str(&E.out, "{\"type\":\"trace\",\"file\":");
		wss_fmt_json_str(&E.out, trace_name());
		wss_fmt_str(&E.out, "}\n");
		wss_out_write();
	}
	/* The runs first, after room for the fixed fields, which are then
	 * put just before them: the payload is one piece. */
	walk_t w = {.k = k, .nt = wss_threads_count(), .writes = sets.writes, .first = true};
	E.trace_len = HEAD_MAX + FIXED_MAX;
	if (!reserve(0))
		w.oom = true;
	for (size_t i = 0; i < E.regions.n && !w.oom; i++)
		wss_sampling_members(E.regions.v[i].start, E.regions.v[i].end, level, trace_page, &w);
	flush_run(&w);
	/* Then the interval's events, in the order they happened. */
	if (!w.oom && !E.trace_ev_oom && reserve(WSS_TRACE_VARINT_MAX + E.trace_ev_len)) {
		E.trace_len += wss_tracefmt_varint_encode(E.trace_buf + E.trace_len, E.trace_nev);
		if (E.trace_ev_len)
			memcpy(E.trace_buf + E.trace_len, E.trace_ev, E.trace_ev_len);
		E.trace_len += E.trace_ev_len;
	} else {
		w.oom = true;
	}
	E.trace_ev_len = 0;
	E.trace_nev = 0;
	if (w.oom) {
		end(WSS_TRACE_END_ERROR, ENOMEM);
		return;
	}
	uint8_t fixed[FIXED_MAX];
	size_t fn = wss_tracefmt_fixed_encode(fixed, k, t_ns, level,
					   (sets.writes ? WSS_TRACE_SETS_WRITES : 0) | (sets.reads ? WSS_TRACE_SETS_READS : 0),
					   w.nruns);
	size_t start = HEAD_MAX + FIXED_MAX - fn;
	memcpy(E.trace_buf + start, fixed, fn);
	if (!reserve(WSS_TRACE_CHECK_SIZE)) {
		end(WSS_TRACE_END_ERROR, ENOMEM);
		return;
	}
	size_t at = seal(WSS_TRACE_REC_INTERVAL, start);
	size_t n = E.trace_len - at;
	if (E.trace_written + n + END_BYTES > E.set.trace_max) {
		end(WSS_TRACE_END_MAX, 0);
		return;
	}
	int r = put_record(E.trace_buf + at, n);
	if (r) {
		end(WSS_TRACE_END_ERROR, r);
		return;
	}
	E.trace_records++;
	E.trace_last = k;
	E.trace_pages += w.pages;
}

void wss_trace_cut(int err)
{
	if (E.trace_fd >= 0 && !E.trace_stop)
		end(WSS_TRACE_END_ERROR, err);
}

void wss_trace_end(void)
{
	if (E.trace_fd >= 0 && !E.trace_stop)
		end(WSS_TRACE_END_RUN, 0);
	close_trace();
}

static const char *errno_name(int e)
{
	switch (e) {
	case ENOSPC: return "ENOSPC";
	case EDQUOT: return "EDQUOT";
	case EFBIG: return "EFBIG";
	case EIO: return "EIO";
	case EROFS: return "EROFS";
	case EACCES: return "EACCES";
	case EEXIST: return "EEXIST";
	case ENOENT: return "ENOENT";
	case ENOMEM: return "ENOMEM";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case EBADF: return "EBADF";
	}
	return "EIO";
}

bool wss_trace_summary(wss_profile_trace_t *t)
{
	if (!E.set.trace || !E.trace_path[0])
		return false;
	*t = (wss_profile_trace_t){.file = trace_name(),
				   .records = E.trace_records,
				   .pages = E.trace_pages,
				   .bytes = E.trace_written,
				   .last = E.trace_last,
				   .stopped = E.trace_stop == WSS_TRACE_END_MAX   ? "trace_max"
					      : E.trace_stop == WSS_TRACE_END_ERROR ? errno_name(E.trace_err)
										  : NULL};
	return true;
}
