/* The engine's life in one process: the backend table and the choice among
 * them, start-up (wss_engine_init), and the end, once, however it comes:
 * exit, exec, _exit (also from a signal handler), or a cut profile.  Fork
 * is fork.c's; the clock is clock.c's. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/resource.h>

#include "engine/sites.h"

wss_engine_t wss_engine_state = {.fd = -1, .err_fd = -1, .trace_fd = -1, .attach_ctl = -1};

const wss_backend_t *const wss_backends[] = {&wss_backend_hybrid, &wss_backend_mprotect, &wss_backend_uffd_wp, NULL};
const wss_backend_t *wss_lifecycle_test_backend;

static int probe(const wss_backend_t *b, char *why, size_t n)
{
	if (b != &wss_backend_mprotect && E.set.test.uffd_unsupported) {
		wss_fmt_t f;
		wss_fmt_init(&f, why, n);
		wss_fmt_str(&f, "userfaultfd write-protect: unsupported (WSS_TEST_UFFD_UNSUPPORTED)");
		wss_fmt_cstr(&f);
		return ENOTSUP;
	}
	return b->probe(why, n);
}

static const wss_backend_t *backend_named(const char *name)
{
	for (int i = 0; wss_backends[i]; i++)
		if (!strcmp(wss_backends[i]->name, name))
			return wss_backends[i];
	return NULL;
}

/* The backend the session asked for.  auto: uffd-wp for a runtime whose
 * memory faults must not touch, else hybrid where the kernel allows (reads
 * and writes apart), else mprotect.  Returns 0, or an errno with the
 * one-line reason (naming the missing kernel feature) in err: an explicit
 * backend that cannot run is an error, never a silent fallback. */
static int choose_backend(char *err, size_t errlen)
{
	char why[256] = "";
	wss_fmt_t e;
	if (wss_lifecycle_test_backend) {
		E.backend = wss_lifecycle_test_backend;
		strcpy(E.backend_reason, "requested");
		return E.backend->probe(why, sizeof why);
	}
	if (!strcmp(E.set.backend, "auto")) {
		wss_fmt_init(&e, E.backend_reason, sizeof E.backend_reason);
		if (E.runtime && !probe(&wss_backend_uffd_wp, why, sizeof why)) {
			E.backend = &wss_backend_uffd_wp;
			wss_fmt_str(&e, "auto: uffd-wp (a ");
			wss_fmt_str(&e, E.runtime);
			wss_fmt_str(&e, " program: its runtime makes raw system calls on its own memory, which fail on "
					"pages armed for faults; uffd-wp tracks it without them)");
		} else if (!probe(&wss_backend_hybrid, why, sizeof why)) {
			E.backend = &wss_backend_hybrid;
			wss_fmt_str(&e, "auto: hybrid (userfaultfd async write-protect and PAGEMAP_SCAN work on this kernel)");
		} else {
			E.backend = &wss_backend_mprotect;
			wss_fmt_str(&e, "auto: mprotect; hybrid needs ");
			wss_fmt_str(&e, why);
		}
		wss_fmt_cstr(&e);
		return wss_backend_mprotect.probe(why, sizeof why);
	}
	const wss_backend_t *b = backend_named(E.set.backend);
	int r = b ? probe(b, why, sizeof why) : EINVAL;
	if (r) {
		wss_fmt_init(&e, err, errlen);
		wss_fmt_str(&e, "track.backend: ");
		wss_fmt_str(&e, E.set.backend);
		wss_fmt_str(&e, b ? " cannot run on this kernel: " : ": no such backend");
		wss_fmt_str(&e, why);
		wss_fmt_cstr(&e);
		return r;
	}
	E.backend = b;
	strcpy(E.backend_reason, "requested");
	return 0;
}

const char *wss_engine_runtime_untracked(void) { return E.runtime_untracked; }

int wss_engine_init(const wss_engine_start_t *s, char *err, size_t errlen)
{
	E.set = *s->set;
	E.runtime = s->runtime;
	int r = choose_backend(err, errlen);
	if (r)
		return r;
	if (s->attach_reason) {
		wss_fmt_t f;
		wss_fmt_init(&f, E.backend_reason, sizeof E.backend_reason);
		wss_fmt_str(&f, s->attach_reason);
		wss_fmt_cstr(&f);
	}
	if (E.runtime && E.backend->fault)
		E.runtime_untracked = "the runtime's own memory (its mmaps and the executable's data): its raw "
				    "system calls would fail with EFAULT on protected pages; track.backend = "
				    "\"uffd-wp\" tracks it";
	if (wss_shadow_init() || wss_threads_init() || wss_fmt_init_growable(&E.out, 1 << 16) ||
	    wss_regions_reserve(&E.regions, 64)) {
		wss_fmt_t e;
		wss_fmt_init(&e, err, errlen);
		wss_fmt_str(&e, "out of memory setting up the engine");
		wss_fmt_cstr(&e);
		return ENOMEM;
	}
	/* Sites need faults: mprotect and hybrid have them, uffd-wp not. */
	E.peaks = E.set.peaks;
	E.sites = E.peaks && E.backend->fault && !wss_sites_init(E.set.peaks_stack_depth);
	if (E.peaks)
		wss_findings_init();
	wss_findings_hot_init();
	/* Allocation sites take about 4 MiB of address space for their
	 * tables: under a limit on it (ulimit -v), that is the program's, and
	 * they are not recorded. */
	struct rlimit as;
	bool as_limited = !wss_sys_failed(wss_sys4(SYS_prlimit64, 0, RLIMIT_AS, NULL, &as)) && as.rlim_cur != RLIM_INFINITY;
	if (E.set.alloc_sites && !s->attach_reason) {
		if (as_limited) {
			if (E.set.summary)
				wss_log("allocation sites: not recorded: the address space is limited (ulimit -v), and their "
					"tables would take 4 MiB of it",
					NULL);
		} else if (wss_allocs_init(E.set.peaks_stack_depth ? E.set.peaks_stack_depth : 64)) {
			wss_log("allocation sites: not recorded: no memory for their tables", NULL);
		}
	}
	long max_map = wss_read_long("/proc/sys/vm/max_map_count", 65530);
	/* Our splits may use half of what is left; the application keeps the
	 * rest, and the relieve path covers it if it needs more. */
	E.vma_budget = max_map / 2 - 1024;
	if (E.vma_budget < 64)
		E.vma_budget = 64;
	if (E.set.test.vma_budget)
		E.vma_budget = E.set.test.vma_budget;
	wss_sampling_init();
	wss_census_init();
	wss_trace_init();
	wss_code_init(E.set.code, E.runtime);

	E.max_map = max_map;
	E.argc = s->argc;
	E.argv = s->argv;
	E.pid = wss_sys_getpid();
	E.start_unix_ns = wss_clock_ns(CLOCK_REALTIME);
	/* WSS_LEADER is "<pid>:<profile>".  The leader's own pid: the leader
	 * exec'd (sh -c 'exec prog', env, nice), and its new image leads on. */
	int lpid = 0;
	const char *lp = s->leader;
	while (lp && *lp >= '0' && *lp <= '9')
		lpid = lpid * 10 + (*lp++ - '0');
	if (lp && *lp == ':')
		wss_session_set(lpid, lp + 1, false);
	E.leader = !lp || *lp != ':' || lpid == E.pid;
	/* Not a session started inside this one (system()'s shell): its
	 * parent is no wss run. */
	E.run_table = E.leader && s->run_pid > 0 && s->run_pid == wss_sys0(SYS_getppid);
	wss_session_used(lp && *lp == ':' && lpid == E.pid); /* notes of its first image's descendants */
	/* A program exec'd within a session creates its profile at its first
	 * sample (wss_out_write): one that ends first writes none. */
	if (E.leader) {
		r = wss_out_open(err, errlen);
		if (r)
			return r;
	} else {
		E.open_pending = true;
		E.lazy_open = true;
	}
	if (!wss_session_leader_path()[0] && !lpid)
		wss_session_set(E.pid, E.no_profile ? "" : E.path, true);
	E.err_fd = -1;
	if (wss_fd_identity(2, &E.err_dev, &E.err_ino)) {
		E.err_fd = (int)wss_sys3(SYS_fcntl, 2, F_DUPFD_CLOEXEC, WSS_FD_HIGH);
		if (E.err_fd < 0)
			E.err_fd = -1;
	}
	wss_out_header();
	if (!E.open_pending)
		wss_out_write();
	E.epoch = 1;
	E.t0_ns = wss_clock_ns(CLOCK_MONOTONIC);
	E.cpu0_ns = wss_clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	__atomic_store_n(&E.tracking, true, __ATOMIC_RELEASE);
	/* Not even the header could be written: the program runs unmeasured,
	 * and says so at exit. */
	__atomic_store_n(&E.measuring, !E.cut_err, __ATOMIC_RELEASE);
	return 0;
}

bool wss_engine_sites(void) { return E.sites || E.set.hot_pages || wss_allocs_on(); }

bool wss_engine_active(void) { return __atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE); }

int wss_engine_own_fds(int out[8])
{
	int c[6] = {__atomic_load_n(&E.fd, __ATOMIC_RELAXED), __atomic_load_n(&E.err_fd, __ATOMIC_RELAXED),
		    wss_clock_stat_fd_peek(), -1, -1, __atomic_load_n(&E.trace_fd, __ATOMIC_RELAXED)};
	wss_uffd_fds(&c[3], &c[4]);
	int n = 0;
	for (int i = 0; i < 6; i++) {
		if (c[i] < 0)
			continue;
		int j = n++;
		for (; j > 0 && out[j - 1] > c[i]; j--) /* sorted */
			out[j] = out[j - 1];
		out[j] = c[i];
	}
	return n;
}

bool wss_engine_tracking(void) { return __atomic_load_n(&E.tracking, __ATOMIC_ACQUIRE); }

/* Stop measuring: every tracked page gets the application's protection back.
 * The registry and the flags stay exact (the hooks keep them up to date), so
 * a thread that faulted on an armed page just before this still finds the
 * page ours and simply reopens it, instead of being sent to the
 * application's handler.  A process ending (exit, _exit) keeps its
 * userfaultfd registrations: a write-protect marker left in place is
 * resolved by the kernel at the page's next write (async mode: no thread
 * waits, nothing is delivered), and the kernel drops them all with the
 * address space, where unregistering clears every page's marker first (a
 * walk of every page table entry: 2-3 % of a short random walk's run). */
void wss_lifecycle_deactivate_locked(bool ending)
{
	__atomic_store_n(&E.measuring, false, __ATOMIC_RELEASE);
	wss_code_disarm_locked();
	for (size_t i = 0; i < E.regions.n; i++) {
		E.backend->disarm(E.regions.v[i].start, E.regions.v[i].end);
		if (E.backend->detach && !ending)
			E.backend->detach(E.regions.v[i].start, E.regions.v[i].end);
	}
}

enum finish_how {
	FINISH_EXIT,  /* exit(): our destructor */
	FINISH_EXEC,  /* exec: quietly */
	FINISH_QUICK, /* _exit and friends: the process ends right after */
};

/* The end of this process's measurement: final sample, summary, every page
 * given back its protection.  Not in a process that is not ours: the child
 * of a fork that ran no fork handlers (_Fork, a raw clone) or of vfork,
 * which still see the parent's engine.  exec: the process image ends here;
 * quietly (no stderr lines), and a forked child that has written nothing
 * yet writes nothing (the exec'd program writes its own); _exit the same
 * way, but with the stderr lines.  A profile already cut (profile_cut) gets
 * no more records, and the stderr lines say where it ends. */
static void finish(enum finish_how how)
{
	if (wss_sys_getpid() != E.pid ||
	    (!__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE) && !E.cut_err))
		return;
	wss_lockstate_t ls;
	if (how == FINISH_QUICK) {
		/* _exit may be called from a signal handler, which may have
		 * interrupted a thread the engine thread is waiting for (the
		 * loader's lock around a tick): no join, the process ends
		 * anyway.  The engine lock is waited for a bounded time only:
		 * another thread holding it may itself be stopped behind this
		 * one.  Past that, no summary: the file stays a valid prefix. */
		__atomic_store_n(&E.stop, 1, __ATOMIC_RELEASE);
		wss_sys_futex(&E.stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		if (!wss_lock_within(&ls, 2000000000ULL)) {
			if (E.set.summary)
				wss_out_say("_exit while wss was busy elsewhere: no summary in ", E.path);
			return;
		}
	} else {
		/* Not when the engine thread itself ends the process (its last
		 * thread gone): it is not looping any more. */
		if (E.started && !pthread_equal(pthread_self(), E.thread)) {
			__atomic_store_n(&E.stop, 1, __ATOMIC_RELEASE);
			wss_sys_futex(&E.stop, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
			pthread_join(E.thread, NULL);
			E.started = false;
		}
		wss_engine_lock(&ls);
	}
	if (E.finished) {
		wss_engine_unlock(&ls);
		return;
	}
	E.finished = true;
	if (!__atomic_load_n(&E.measuring, __ATOMIC_RELAXED)) {
		/* Cut earlier: nothing more to write, only to say, of the
		 * samples taken up to the cut. */
		wss_profile_summary_t sum;
		wss_out_summary(&sum);
		wss_out_close();
		wss_engine_unlock(&ls);
		if (how != FINISH_EXEC)
			wss_out_say_summary(&sum, sum.samples > 0);
		wss_out_close_err();
		return;
	}
	if (E.pending || (E.open_pending && (how != FINISH_EXIT || (E.lazy_open && !E.nsamples)))) {
		/* A process of the session that has written nothing (a forked
		 * child, or an exec'd program, that ends or execs before its
		 * first sample): it writes nothing (an exec'd program writes
		 * its own profile), and says why in the leader's.  A shell
		 * script's hundreds of short commands cost no profile each.
		 * An exec'd program that exits was measured all along: its
		 * last tick counts its pages for the note alone, so that the
		 * session's table has the size of a build's compilers, which
		 * live tens of milliseconds each.  Not under a tenth of an
		 * interval: a shell script's commands would each pay a tick
		 * (about 0.3 ms) to note a few pages.  (A forked child that
		 * has not started measuring has nothing to count.) */
		wss_profile_summary_t sum;
		bool counted = !E.pending && how == FINISH_EXIT && E.lazy_open &&
			       wss_clock_ns(CLOCK_MONOTONIC) - E.t0_ns >= E.set.interval_ns / 10;
		if (counted) {
			wss_out_discard();
			wss_tick_locked(true);
			wss_out_summary(&sum);
		}
		__atomic_store_n(&E.pending, false, __ATOMIC_RELAXED);
		wss_lifecycle_deactivate_locked(how != FINISH_EXEC);
		wss_engine_unlock(&ls);
		wss_session_note(NULL, how == FINISH_EXEC ? "exec before its first sample" : "exit before its first sample",
				 counted ? &sum : NULL);
		if (E.end_why && E.set.summary)
			wss_log("measuring stopped before the first sample: ", E.end_why, "; the program runs on untracked", NULL);
		wss_out_close_err();
		return;
	}
	wss_tick_locked(true);
	wss_census_count_all();
	wss_findings_sites();
	wss_findings_alloc_sites();
	wss_trace_end();
	wss_profile_summary_t sum;
	wss_out_summary(&sum);
	wss_profile_trace_t tr;
	if (wss_trace_summary(&tr))
		sum.trace = &tr;
	wss_profile_hot_t *hot = wss_findings_hot(&sum.nhot);
	sum.hot = hot;
	/* The hot code pages (track.code), as many as report.hot_pages. */
	static wss_profile_hot_t hot_code[64];
	static char hot_code_names[64][4096 + 8];
	int want = E.set.hot_pages < 64 ? (int)E.set.hot_pages : 64;
	if (wss_code_on() && want) {
		sum.nhot_code = wss_code_hot(hot_code, want, hot_code_names);
		sum.hot_code = hot_code;
	}
	wss_profile_summary(&E.out, &sum);
	wss_out_write();
	if (hot)
		wss_sys_free(hot, E.set.hot_pages * sizeof *hot);
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		wss_lifecycle_deactivate_locked(how != FINISH_EXEC);
	wss_out_close();
	wss_engine_unlock(&ls);

	if (how != FINISH_EXEC)
		wss_out_say_summary(&sum, true);
	wss_out_close_err();
}

/* An attached measurement ends once, whoever ends it: wss attach's stop
 * (a program thread it stopped), the process's exit (our destructor, on
 * the exiting thread, with the other threads running on), or the engine
 * thread finding wss attach gone.  E.ending: 0, 1 while one of them ends
 * it, 2 once it has.  The others wait for the end (the engine thread does
 * not: the one ending it joins it) and then have nothing to do: two joins
 * of one thread, or a join after its memory was given back, hung the
 * process in exit (a review found). */
static bool end_claim(bool wait)
{
	for (;;) {
		int seen = 0;
		if (__atomic_compare_exchange_n(&E.ending, &seen, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			return true;
		if (seen == 2 || !wait)
			return false;
		struct timespec ts = {0, 100000000};
		wss_sys_futex(&E.ending, FUTEX_WAIT_PRIVATE, 1, &ts, NULL, 0);
	}
}

static void end_done(void)
{
	__atomic_store_n(&E.ending, 2, __ATOMIC_RELEASE);
	wss_sys_futex(&E.ending, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Unregister what is tracked (a child forked meanwhile may hold the
 * userfaultfd open: closing ours would leave the ranges registered) and
 * close every descriptor of ours. */
static void attached_close(void)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	wss_lifecycle_deactivate_locked(false);
	wss_engine_unlock(&ls);
	wss_uffd_close();
	wss_clock_close();
	wss_attached_release();
}

/* The engine thread ended the measurement itself (the duration, wss
 * attach gone) and left: join it, once, before anything unloads its code. */
static void join_ended(void)
{
	if (__atomic_exchange_n(&E.started, false, __ATOMIC_ACQ_REL) && !pthread_equal(pthread_self(), E.thread))
		pthread_join(E.thread, NULL);
}

void wss_engine_finish(void)
{
	if (!E.attached) {
		finish(FINISH_EXIT);
		return;
	}
	if (!end_claim(true)) {
		join_ended();
		return;
	}
	if (!E.attach_end)
		E.attach_end = "the process exited";
	finish(FINISH_EXIT);
	attached_close();
	end_done();
}

void wss_engine_attach_begin(const wss_attach_track_t *w, const char *fifo, int controller)
{
	wss_attached_init(w, fifo, controller);
}

int wss_engine_attach_scan(void)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	int r = wss_attached_scan_locked();
	wss_engine_unlock(&ls);
	return r;
}

void wss_engine_attach_tick(void) { wss_attached_scan_locked(); }

void wss_engine_detach(const char *why)
{
	bool engine_thread = E.started && pthread_equal(pthread_self(), E.thread);
	if (!E.attached)
		return;
	if (!end_claim(!engine_thread)) {
		if (!engine_thread)
			join_ended();
		return;
	}
	if (!E.attach_end)
		E.attach_end = why;
	finish(FINISH_EXIT); /* joins the engine thread, unless this is it */
	attached_close();
	/* The engine thread ending itself leaves its loop, and is joined by
	 * the stop that unloads us (or at the process's exit). */
	__atomic_store_n(&E.stop, 1, __ATOMIC_RELEASE);
	if (!engine_thread)
		E.started = false;
	wss_sys_release_all();
	end_done();
}

void wss_engine_exec(void) { finish(FINISH_EXEC); }

void wss_engine_end(const char *why)
{
	if (E.attached || !__atomic_load_n(&E.measuring, __ATOMIC_ACQUIRE))
		return;
	E.end_why = why;
	finish(FINISH_EXIT);
}

/* _exit on a thread that holds the engine lock: a handler for a
 * synchronous signal interrupted one of our locked sections.  Whatever that
 * section was doing is left half done, so nothing of it is used: no final
 * sample and no hot pages; the summary of the samples written so far goes
 * straight to the file, after its last whole record, and says it is
 * incomplete. */
static void finish_interrupted(void)
{
	if (E.finished || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		return;
	E.finished = true;
	__atomic_store_n(&E.measuring, false, __ATOMIC_RELEASE);
	wss_profile_summary_t sum;
	wss_out_summary(&sum);
	sum.incomplete = "_exit from a signal handler that interrupted wss: no final sample";
	char buf[1024];
	wss_fmt_t f;
	wss_fmt_init(&f, buf, sizeof buf);
	wss_profile_summary(&f, &sum);
	if (E.fd >= 0 && !E.open_pending && !f.overflow && wss_fd_same(E.fd, E.fd_dev, E.fd_ino)) {
		wss_sys2(SYS_ftruncate, E.fd, E.written);
		int r = wss_write_own(E.fd, f.buf, f.len, true);
		if (r) {
			E.cut_err = r;
			E.cut_at = E.samples_out + 1;
			wss_sys2(SYS_ftruncate, E.fd, E.written);
		}
	}
	wss_out_say("_exit from a signal handler that interrupted wss: the summary has no final sample", "");
	wss_out_say_summary(&sum, true);
}

void wss_engine_exit(void)
{
	if (wss_lock_mine()) {
		if (wss_sys_getpid() == E.pid)
			finish_interrupted();
		return;
	}
	finish(FINISH_QUICK);
}

void wss_engine_attach_duration(uint64_t duration_ns) { E.attach_until = duration_ns ? E.t0_ns + duration_ns : 0; }
