/* The profile and the stderr lines: creating the file from the output
 * pattern, writing whole records with one write(2) each (a killed program
 * leaves every completed record), cutting it cleanly when the disk refuses
 * (the program runs on), the header, and the summary at the end. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/pattern.h"

/* The profile cannot be written (ENOSPC, EIO, EFBIG, a quota): measuring
 * stops here, so the program runs on as it would without us, and the file
 * is cut back to its last whole record (a record cut short would be the
 * only invalid line in it).  The summary at exit says where and why.
 * Engine lock held (or start-up). */
static void profile_cut(int err)
{
	E.cut_err = err;
	E.cut_at = E.samples_out + 1;
	wss_sys2(SYS_ftruncate, E.fd, E.written); /* fails on what is no regular file: nothing to undo there */
	wss_trace_cut(err);
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		wss_lifecycle_deactivate_locked(false);
}

void wss_out_discard(void) { E.out_discard = true; }

void wss_out_write(void)
{
	if (E.out_discard) {
		wss_fmt_reset(&E.out);
		return;
	}
	if (wss_sys_getpid() != E.pid) {
		wss_fmt_reset(&E.out); /* a child that ran no fork handlers: not ours to write */
		return;
	}
	if (E.open_pending && E.out.len) {
		char err[PATH_MAX + 128];
		E.open_pending = false;
		if (wss_out_open(err, sizeof err))
			wss_log(err, NULL);
	}
	if (E.fd >= 0 && E.out.len && !E.out.overflow) {
		if (!wss_fd_same(E.fd, E.fd_dev, E.fd_ino)) {
			/* Closed under us: open the same file again, if it is. */
			int fd = wss_sys_openat(AT_FDCWD, E.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0);
			uint64_t d, i;
			if (fd >= 0 && wss_fd_identity(fd, &d, &i) && d == E.fd_dev && i == E.fd_ino) {
				E.fd = fd;
			} else {
				if (fd >= 0)
					wss_sys_close(fd);
				E.fd = -1;
			}
		}
		/* A regular file: wss_profile_create makes it new (O_EXCL). */
		int r = E.fd >= 0 && !E.cut_err ? wss_write_own(E.fd, E.out.buf, E.out.len, true) : 0;
		if (r)
			profile_cut(r);
		else if (E.fd >= 0 && !E.cut_err)
			E.written += E.out.len;
	}
	wss_fmt_reset(&E.out);
}

/* The stderr summary goes to our copy of stderr when the program closed
 * its own. */
void wss_out_say(const char *a, const char *b)
{
	char line[PATH_MAX + 64];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_str(&f, "wss: ");
	wss_fmt_str(&f, a);
	wss_fmt_str(&f, b);
	wss_fmt_ch(&f, '\n');
	int fd = wss_fd_same(E.err_fd, E.err_dev, E.err_ino) ? E.err_fd : wss_fd_same(2, E.err_dev, E.err_ino) ? 2 : -1;
	if (fd >= 0)
		wss_write_own(fd, f.buf, f.len, false);
}

/* Create this process's profile from the output pattern: the leader's
 * first image where the pattern says, every other process of the session
 * in the session directory, under the pattern's file name.  Returns 0 or
 * an errno with the reason in err.  A session directory refused costs this
 * process its profile, not its run: a note in the leader's profile says
 * why (the leader's last stderr line says it once for the session), and 0. */
int wss_out_open(char *err, size_t errlen)
{
	const char *prog = E.argc > 0 && E.argv ? E.argv[0] : NULL;
	const char *pat = E.set.output;
	char dir[PATH_MAX];
	int dirfd = AT_FDCWD;
	bool in_dir = wss_session_dir(dir, sizeof dir);
	if (in_dir) {
		const char *why;
		if (wss_session_dir_open(dir, &dirfd, &why)) {
			/* The leader's summary says it, once for the session;
			 * an exec'd image of the leader says it itself. */
			static char said[PATH_MAX + 160];
			wss_fmt_t f;
			wss_fmt_init(&f, said, sizeof said);
			wss_fmt_ch(&f, '(');
			wss_fmt_str(&f, dir);
			wss_fmt_str(&f, ", the session directory, ");
			wss_fmt_str(&f, why);
			wss_fmt_ch(&f, ')');
			E.no_profile_why = wss_fmt_cstr(&f);
			wss_session_note_refused(why);
			E.fd = -1;
			E.no_profile = true;
			if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
				wss_lifecycle_deactivate_locked(false);
			return 0;
		}
		const char *slash = strrchr(pat, '/');
		if (slash)
			pat = slash + 1;
	}
	int r = wss_profile_create(dirfd, in_dir ? dir : NULL, pat, E.pid, E.start_unix_ns / 1000000000ULL, prog,
				   E.path, sizeof E.path, &E.fd, err, errlen);
	if (in_dir)
		wss_sys_close(dirfd);
	if (r)
		return r;
	E.no_profile = E.fd < 0;
	if (E.no_profile)
		return 0;
	if (!E.leader || wss_session_exec_image())
		wss_session_note(E.path, NULL, NULL);
	E.fd = wss_fd_high(E.fd); /* keep the low numbers the program would get natively */
	wss_fd_identity(E.fd, &E.fd_dev, &E.fd_ino);
	E.written = 0;
	return 0;
}

/* The header record, into E.out. */
void wss_out_header(void)
{
	char exe[PATH_MAX];
	wss_readlink_exe(exe, sizeof exe);
	struct utsname u;
	if (uname(&u)) {
		strcpy(u.release, "unknown");
		u.nodename[0] = '\0';
	}
	wss_profile_header_t h = {
		.pid = E.pid,
		.ppid = getppid(),
		.exe = exe,
		.argc = E.argc,
		.argv = E.argv,
		.kernel = u.release,
		.host = u.nodename[0] ? u.nodename : NULL,
		.backend = E.backend->name,
		.backend_reason = E.backend_reason,
		.backend_sees = E.backend->sees,
		.runtime = E.runtime,
		.untracked = E.runtime_untracked,
		.timing = E.set.header_timing,
		.config = E.set.header_config,
		.start_unix_ns = E.start_unix_ns,
		.page_size = (long)WSS_PAGE_SIZE,
		.max_map_count = E.max_map,
		.vma_budget = E.vma_budget,
		.mode = E.set.mode == WSS_TRACK_EXACT ? "exact" : E.set.mode == WSS_TRACK_SAMPLED ? "sampled" : "auto",
		.seed = E.seed,
		.code = wss_code_on(),
		.code_excluded = wss_code_excluded_json(),
		.code_off = wss_code_off_why(),
		/* Where the others go, when any process can follow. */
		.session_dir = E.set.follow_fork || E.set.follow_exec ? wss_session_dir_name() : NULL,
	};
	wss_profile_header(&E.out, &h);
}

void wss_engine_module_locked(int id, const char *path, uintptr_t bias, uintptr_t start, uintptr_t end,
			      const char *build_id)
{
	wss_profile_module(&E.out, id, path, bias, start, end, build_id);
	if (!E.open_pending)
		wss_out_write();
}


/* The census's bound (census.c): the run touched at most cap pages (those
 * counted exactly and the rest it could not count), so no estimate or
 * upper bound of a total is above it.  The total is then nearly a count,
 * and the one interval's peak estimate, far less sure, is brought within
 * it (without the census the total is raised to the peak instead). */
static void census_cap(wss_profile_stat_t *st, uint64_t exact, uint64_t cap, uint64_t n)
{
	if (st->total > cap)
		st->total = cap;
	if (st->total_ci.hi > cap)
		st->total_ci.hi = cap;
	/* The estimate of the rest above the bound (a member or two at a
	 * coarse rate): the pages counted are all it can stand behind. */
	if (st->total_ci.lo > cap)
		st->total_ci.lo = exact;
	if (st->total_ci.lo > st->total)
		st->total_ci.lo = st->total;
	if (st->peak > st->total)
		st->peak = st->total;
	if (st->peak_ci.hi > st->total_ci.hi)
		st->peak_ci.hi = st->total_ci.hi;
	if (st->peak_ci.lo > st->peak)
		st->peak_ci.lo = st->peak;
	/* No interval touched more pages than the run: nor, on average,
	 * did the n samples (sums here).  Each interval's estimate can be a
	 * little above the truth (its members' rounding) where nearly every
	 * page is touched, and their mean above the run's counted total. */
	if (n && st->sum > st->total * n)
		st->sum = st->total * n;
	if (n && st->sum_hi > st->total_ci.hi * n)
		st->sum_hi = st->total_ci.hi * n > st->sum ? st->total_ci.hi * n : st->sum;
	if (st->sum_lo > st->sum)
		st->sum_lo = st->sum;
}

/* The data series by kind: the average and its bounds as the mean of the
 * samples' (which holds whatever their errors share), the peak and its
 * interval as the largest of the samples', the total as the run's (the
 * pages first counted in exact windows, plus the members of the run's
 * coarsest level first counted in sampled ones, scaled: its Poisson
 * interval; over several sampled levels, lc: wss_tick_last_touch), never
 * below the peak. */
static void kinds_summary(wss_profile_summary_t *sum, const wss_last_counts_t *lc)
{
	uint32_t L = E.level_max;
	for (int k = 1; k < WSS_KIND_N; k++) {
		if (!(E.kinds_seen & (1U << k)))
			continue;
		uint64_t x = 0;
		for (uint32_t l = L; l <= WSS_SAMPLE_LEVEL_MAX; l++)
			x += E.kind[k].total_hist[l];
		wss_estimate_t t = lc ? wss_estimate_total_levels(E.kind[k].total_exact, lc->kind[k], WSS_SAMPLE_LEVEL_MAX + 1, L)
				      : wss_estimate_total(E.kind[k].total_exact, x, L);
		uint64_t rest;
		const uint64_t *by_kind;
		bool census = E.level_max && wss_census_rest(&rest, &by_kind);
		if (t.est < E.kind[k].peak && !census)
			t.est = E.kind[k].peak;
		if (t.lo < E.kind[k].peak_lo)
			t.lo = E.kind[k].peak_lo;
		if (t.hi < t.est)
			t.hi = t.est;
		sum->kinds[k] = (wss_profile_stat_t){
			.sum = E.kind[k].sum,
			.peak = E.kind[k].peak,
			.total = t.est,
			.sum_lo = E.kind[k].sum_lo,
			.sum_hi = E.kind[k].sum_hi,
			.peak_ci = {E.kind[k].peak_lo, E.kind[k].peak_hi},
			.total_ci = {t.lo, t.hi},
		};
		if (census)
			census_cap(&sum->kinds[k], E.kind[k].total_exact, E.kind[k].total_exact + by_kind[k], sum->samples);
	}
}

/* The summary of the samples so far, without hot pages (finish adds them). */
void wss_out_summary(wss_profile_summary_t *sum)
{
	uint64_t total = 0;
	uint32_t nt = wss_threads_count();
	for (uint32_t s = 0; s <= nt; s++)
		total += __atomic_load_n(&wss_threads_get(s)->new_pages, __ATOMIC_RELAXED);
	*sum = (wss_profile_summary_t){
		.samples = E.nsamples,
		.data = {E.sum_pages, E.peak_pages, total},
		.write = {E.sum_write, E.peak_write, __atomic_load_n(&E.total_write, __ATOMIC_RELAXED)},
		.read = {E.sum_read, E.peak_read, E.total_read},
		.sets = {.writes = E.backend->harvest != NULL, .reads = E.backend->harvest && E.backend->fault},
		.faults = E.faults_total,
		.coarse = E.coarse_total,
		.duration_ns = wss_clock_ns(CLOCK_MONOTONIC) - E.t0_ns,
		.page_size = (long)WSS_PAGE_SIZE,
		.lower_bound = E.lower_bound,
		.huge_n = E.huge_n,
		.huge_bytes = E.huge_bytes,
		.code = wss_code_on(),
		.code_lower_bound = E.code_lower_bound,
		.code_full = wss_code_full(),
		.code_stat = {E.sum_code, E.peak_code, wss_code_total()},
		.attach_end = E.attach_end,
		.kinds_seen = E.kinds_seen,
	};
	/* Over several sampled levels, the totals count each page by its
	 * last touch (wss_tick_last_touch): one walk of the pages with state. */
	static wss_last_counts_t lc;
	/* (Not with clusters: the several levels' variance takes one member
	 * a block, as the Poisson one does; the coarsest level's strata hold.) */
	bool several = E.level_min_sampled && E.level_min_sampled < E.level_max && !E.clustered;
	if (several)
		wss_tick_last_touches(&lc);
	kinds_summary(sum, several ? &lc : NULL);
	sum->used_ppm = E.used_wall_ns ? (uint64_t)((unsigned __int128)E.used_ns * 1000000 / E.used_wall_ns) : 0;
	sum->exact_mode = E.set.mode == WSS_TRACK_EXACT;
	if (!E.level_max)
		return;
	sum->prec_target_ppm = E.set.precision_ppm ? E.set.precision_ppm : WSS_PRECISION_DEFAULT_PPM;
	sum->prec_n = E.prec_n;
	sum->prec_missed = E.prec_missed;
	sum->prec_median_ppm = wss_precision_median(E.prec_hist, E.prec_n);
	sum->budget_ppm = E.set.overhead_ppm ? E.set.overhead_ppm : WSS_OVERHEAD_DEFAULT_PPM;
	sum->fixed_rate = E.set.sample_level ? 1ULL << E.set.sample_level : 0;
	sum->hold = E.hold;
	sum->census_data = E.census_data;
	sum->census_write = E.census_write;
	sum->census_why = E.census ? NULL : E.census_why ? E.census_why : "off";
	/* Sampled: the totals are the pages first counted in exact windows
	 * (every one seen), plus an estimate of the others: of the pages not
	 * among those, the ones that were members at every level of the run
	 * (the coarsest, L) form a sample at 1/2^L, one page a block, and
	 * those of them first counted in a sampled window are its touched
	 * pages, 2^L each (wss_estimate_total: no count of the pages they
	 * were drawn from, which memory unmapped and mapped elsewhere makes
	 * larger than the most tracked at once; bounded by that, the interval
	 * missed the truth of such runs). */
	uint32_t L = E.level_max;
	sum->rate_max = 1ULL << L;
	wss_profile_stat_t *st[3] = {&sum->data, &sum->write, &sum->read};
	for (int s = 0; s < 3; s++) {
		uint64_t x = 0, xe = 0;
		for (uint32_t l = 0; l <= WSS_SAMPLE_LEVEL_MAX; l++) {
			xe += E.total_exact[s][l];
			if (l >= L)
				x += E.total_hist[s][l];
		}
		wss_estimate_t t;
		/* Every interval of the run observed every write (exact, or all
		 * writes: sampling.c): the pages written are all counted. */
		bool all = s == 1 && E.all_writes_from == 1;
		if (all) {
			t = (wss_estimate_t){xe, xe, xe};
		} else if (several && s < 2) {
			t = wss_estimate_total_levels(xe, lc.n[s], WSS_SAMPLE_LEVEL_MAX + 1, L);
			/* No page ever left tracking: the run's pages are at
			 * most those tracked now (a bound, not an estimate). */
			uint64_t n = wss_regions_pages(&E.regions);
			if (!__atomic_load_n(&E.released, __ATOMIC_RELAXED) && t.hi > n)
				t.hi = n > t.est ? n : t.est;
		} else
			wss_tick_total(s, xe, x, &t);
		/* The run's distinct pages are at least one window's: the total
		 * is not estimated below the peak's estimate, nor bounded below
		 * the peak's lower bound (the two estimators differ in their
		 * members and rounding: a run of one sample said peak 5,259,
		 * total 5,256), unless the census bounds it (census_cap). */
		uint64_t rest;
		const uint64_t *by_kind;
		bool census = s < 2 && wss_census_rest(&rest, &by_kind);
		if (t.est < E.peak_est[s].est && !census)
			t.est = E.peak_est[s].est;
		if (t.lo < E.peak_lo[s])
			t.lo = E.peak_lo[s];
		if (t.hi < t.est)
			t.hi = t.est;
		st[s]->total = t.est;
		st[s]->total_ci = (wss_profile_ci_t){t.lo, t.hi};
		/* The average's interval (wss_tick_avg), holding the average
		 * printed: the mean of the samples' estimates, which differs
		 * from the members' by rounding and the ratio estimator's
		 * denominators. */
		uint64_t lo, hi;
		wss_tick_avg(s, &lo, &hi);
		if (lo > st[s]->sum)
			lo = st[s]->sum;
		if (hi < st[s]->sum)
			hi = st[s]->sum;
		/* The mean of the samples' bounds holds the printed average
		 * whatever their errors share; where the run went through
		 * several levels, the members' weights differ (2^l each) and
		 * the per-page estimate's variance can be the larger: the
		 * narrower of the two. */
		if (E.sum_hi[s] - E.sum_lo[s] < hi - lo) {
			lo = E.sum_lo[s];
			hi = E.sum_hi[s];
		}
		st[s]->sum_lo = lo;
		st[s]->sum_hi = hi;
		st[s]->peak_ci = (wss_profile_ci_t){E.peak_lo[s], E.peak_hi[s]};
		if (census)
			census_cap(st[s], xe, xe + rest, sum->samples);
	}
}

/* An errno's text without the C library's strerror, which may translate
 * (gettext: locks, malloc) and so is not for a signal handler's _exit. */
static const char *cut_reason(int err)
{
	switch (err) {
	case ENOSPC: return "No space left on device";
	case EDQUOT: return "Disk quota exceeded";
	case EFBIG: return "File too large (RLIMIT_FSIZE or the file system's maximum)";
	case EIO: return "Input/output error";
	case EROFS: return "Read-only file system";
	case EBADF: return "Bad file descriptor";
	case EPIPE: return "Broken pipe";
	case EINVAL: return "Invalid argument";
	}
	return "write error";
}

/* The trace's line: where, how much, and where and why it stopped. */
static void say_trace(const wss_profile_trace_t *t)
{
	char line[PATH_MAX + 200];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_str(&f, E.trace_path);
	wss_fmt_str(&f, " (");
	wss_fmt_u64(&f, t->records);
	wss_fmt_str(&f, t->records == 1 ? " interval, " : " intervals, ");
	wss_fmt_u64(&f, t->pages);
	wss_fmt_str(&f, " pages, ");
	wss_fmt_u64(&f, t->bytes);
	wss_fmt_str(&f, " bytes)");
	if (t->stopped) {
		wss_fmt_str(&f, "; stopped after sample ");
		wss_fmt_u64(&f, t->last);
		wss_fmt_str(&f, ": ");
		wss_fmt_str(&f, !strcmp(t->stopped, "trace_max") ? "session.trace_max reached" : t->stopped);
	}
	wss_out_say("trace: ", wss_fmt_cstr(&f));
}

/* A profile or trace whose name went while the program ran (its directory
 * removed, say) was written to a file nobody can open: the path is not
 * said to hold it. */
static void say_removed(const char *what, const char *path)
{
	char line[PATH_MAX + 80];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_str(&f, path);
	wss_fmt_str(&f, " was removed while the program ran");
	wss_out_say(what, wss_fmt_cstr(&f));
}

/* One stderr line of the summary's, when text has one to say. */
static void say_line(bool (*text)(wss_fmt_t *f, const wss_profile_summary_t *s), const wss_profile_summary_t *sum)
{
	char line[700];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	if (text(&f, sum))
		wss_out_say(wss_fmt_cstr(&f), "");
}

/* The stderr lines at the end: the summary, then where the profile is, or
 * where and why it was cut. */
/* One stderr line: before, n, then the three parts after it. */
static void say_number(const char *before, uint64_t n, const char *a, const char *b, const char *c)
{
	char line[400];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_str(&f, before);
	wss_fmt_u64(&f, n);
	wss_fmt_str(&f, a);
	wss_fmt_str(&f, b);
	wss_fmt_str(&f, c);
	wss_out_say(wss_fmt_cstr(&f), "");
}

void wss_out_say_summary(const wss_profile_summary_t *sum, bool summary)
{
	/* One summary per session: the leader's (see session_note); any
	 * process says where its profile was cut. */
	if (!E.set.summary || (!E.leader && !E.cut_err && !E.end_why))
		return;
	/* A session of several profiles: `wss run` prints their table after
	 * the program (cli/model/session.c), where this process is one line;
	 * the warnings and the profile's line stay. */
	bool figures = summary && E.leader && !(E.run_table && wss_session_others());
	summary = summary && E.leader;
	if (figures && sum->rate_max > 1) {
		say_number("sampled: 1 page in ", sum->rate_max,
			   " at most; counts are estimates (\u00b1: 95 % interval of avg/peak/total)", "", "");
	} else if (figures && sum->lower_bound) {
		wss_out_say("exact tracking ran out of VMAs and opened coarse blocks: the counts are lower bounds", "");
	}
	/* Ticks much later than asked: the engine thread got no CPU (a
	 * realtime program holding the CPUs it may use, a loaded machine),
	 * and the intervals are longer than the header says.  Not for the
	 * lateness a loaded machine gives a 1 ms interval. */
	uint64_t iv = E.set.interval_ns;
	if (summary && E.late_max_ns > 2 * iv && E.late_max_ns > iv + 200000000ULL) {
		char line[240];
		wss_fmt_t f;
		wss_fmt_init(&f, line, sizeof line);
		wss_fmt_str(&f, "ticks came late: the longest interval lasted ");
		wss_fmt_u64(&f, E.late_max_ns / 1000000);
		wss_fmt_str(&f, " ms against ");
		if (iv % 1000000 == 0)
			wss_fmt_u64(&f, iv / 1000000);
		else
			wss_fmt_fixed(&f, iv / 1000, 3);
		wss_fmt_str(&f, " ms asked (the engine thread got no CPU in time: a realtime program on its CPUs, or a "
				"loaded machine)");
		wss_out_say(wss_fmt_cstr(&f), "");
	}
	if (summary && sum->huge_n) {
		char line[200];
		wss_fmt_t f;
		wss_fmt_init(&f, line, sizeof line);
		wss_fmt_u64(&f, sum->huge_n);
		wss_fmt_str(&f, sum->huge_n == 1 ? " mapping" : " mappings");
		wss_fmt_str(&f, " larger than 64 GiB (");
		wss_fmt_u64(&f, sum->huge_bytes >> 30);
		wss_fmt_str(&f, " GiB in all) not tracked: the counts leave them out");
		wss_out_say(wss_fmt_cstr(&f), "");
	}
	static const char *const series[] = {"data", "read", "write", "insn"};
	for (int i = 0; figures && i < 4; i++) {
		if ((i == 1 && !sum->sets.reads) || (i == 2 && !sum->sets.writes) || (i == 3 && !sum->code))
			continue;
		char line[512];
		wss_fmt_t f;
		wss_fmt_init(&f, line, sizeof line);
		wss_profile_summary_text(&f, sum, series[i]);
		wss_out_say(wss_fmt_cstr(&f), "");
	}
	if (figures) {
		say_line(wss_profile_kinds_text, sum);
		say_line(wss_profile_precision_text, sum);
	}
	if (E.end_why)
		say_number("measuring stopped after sample ", sum->samples, ": ", E.end_why, "; the program runs on untracked");
	if (E.no_profile) {
		wss_out_say("profile: none ", E.no_profile_why ? E.no_profile_why : "(the output is a character device)");
		return;
	}
	if (E.cut_err) {
		char line[PATH_MAX + 160];
		wss_fmt_t f;
		wss_fmt_init(&f, line, sizeof line);
		wss_fmt_str(&f, "profile cut at sample ");
		wss_fmt_u64(&f, E.cut_at);
		wss_fmt_str(&f, ": ");
		wss_fmt_str(&f, cut_reason(E.cut_err));
		wss_fmt_str(&f, " (");
		wss_fmt_str(&f, E.path);
		wss_fmt_str(&f, "); measuring stopped there");
		wss_out_say(wss_fmt_cstr(&f), "");
		return;
	}
	if (E.fd >= 0 ? wss_file_removed(E.fd, E.fd_dev, E.fd_ino, E.path) : E.removed) {
		say_removed("profile: none: ", E.path);
	} else {
		char line[2 * PATH_MAX + 160];
		wss_fmt_t f;
		wss_fmt_init(&f, line, sizeof line);
		wss_fmt_str(&f, E.path);
		wss_session_describe(&f);
		wss_out_say("profile: ", wss_fmt_cstr(&f));
	}
	if (!summary || !sum->trace)
		return;
	if (E.trace_fd >= 0 ? wss_file_removed(E.trace_fd, E.trace_dev, E.trace_ino, E.trace_path) : E.trace_removed)
		say_removed("trace: none: ", E.trace_path);
	else
		say_trace(sum->trace);
}

void wss_out_close(void)
{
	if (E.fd >= 0)
		E.removed = wss_file_removed(E.fd, E.fd_dev, E.fd_ino, E.path);
	if (E.fd >= 0 && wss_fd_same(E.fd, E.fd_dev, E.fd_ino)) /* never a descriptor the program reused */
		wss_sys_close(E.fd);
	E.fd = -1;
}

void wss_out_close_err(void)
{
	if (E.err_fd >= 0 && wss_fd_same(E.err_fd, E.err_dev, E.err_ino))
		wss_sys_close(E.err_fd);
	E.err_fd = -1;
}

const char *wss_engine_profile_path(void) { return E.path; }
