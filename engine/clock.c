/* The interval clock: the engine thread, which ends each interval on wall
 * or CPU time (time_base manual: the program does, through wss_tick), and
 * which also ends the process as its last thread would have when the
 * program's threads are all gone. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sleep until the absolute CLOCK_MONOTONIC time t or until asked to stop. */
static void wait_until(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ULL), .tv_nsec = (long)(t % 1000000000ULL)};
	wss_sys_futex(&E.stop, FUTEX_WAIT_BITSET_PRIVATE, 0, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
}

/* /proc/self/stat, kept open above the program's descriptor numbers and
 * read with pread.  Opening it afresh every 100 ms took the lowest free
 * number for a moment, and a program closing descriptors it did not open
 * (as daemons do) could close ours and open its own file under that
 * number, which our close then took from it (fds.sh: the program's write
 * failed with EBADF, 1 run in 20).  Opened at engine start, when only one
 * thread runs; reopened only if the program closed it. */
static int stat_fd = -1, stat_pid;
static uint64_t stat_dev, stat_ino;

int wss_clock_stat_fd_peek(void) { return __atomic_load_n(&stat_fd, __ATOMIC_RELAXED); }

void wss_clock_close(void)
{
	if (stat_fd >= 0 && wss_fd_same(stat_fd, stat_dev, stat_ino))
		wss_sys_close(stat_fd);
	stat_fd = -1;
}

int wss_clock_stat_fd(void)
{
	if (stat_fd >= 0 && stat_pid == E.pid && wss_fd_same(stat_fd, stat_dev, stat_ino))
		return stat_fd;
	if (stat_fd >= 0 && wss_fd_same(stat_fd, stat_dev, stat_ino))
		wss_sys_close(stat_fd); /* a forked child's copy of the parent's */
	stat_fd = -1;
	int fd = wss_sys_openat(AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int h = wss_fd_high(fd);
	if (h < WSS_FD_HIGH || !wss_fd_identity(h, &stat_dev, &stat_ino)) {
		wss_sys_close(h); /* a low number is what a closing program takes from us */
		return -1;
	}
	stat_fd = h;
	stat_pid = E.pid;
	return h;
}

/* From /proc/self/stat: the process's thread count (the main thread
 * counts while it is a zombie), whether the main thread is one, and the
 * CPU it last ran on and its scheduling policy (-1 when not read, or with
 * main_cpu NULL); -1 when unknown. */
static long proc_threads(bool *main_zombie, int *main_cpu, int *main_policy)
{
	char buf[1024];
	int fd = wss_clock_stat_fd();
	long n = fd < 0 ? -1 : wss_sys4(SYS_pread64, fd, buf, sizeof buf - 1, 0);
	if (main_cpu)
		*main_cpu = *main_policy = -1;
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the command name may contain anything */
	if (!p || p[1] != ' ')
		return -1;
	p += 2; /* field 3, the state; num_threads is field 20, processor 39, policy 41 */
	*main_zombie = p[0] == 'Z';
	int field = 3;
	for (; field < 20 && p; field++)
		if ((p = strchr(p, ' ')))
			p++;
	if (!p)
		return -1;
	long threads = strtol(p, NULL, 10);
	if (!main_cpu)
		return threads;
	for (; field < 39 && p; field++)
		if ((p = strchr(p, ' ')))
			p++;
	if (!p)
		return threads;
	int cpu = (int)strtol(p, NULL, 10);
	for (; field < 41 && p; field++)
		if ((p = strchr(p, ' ')))
			p++;
	if (p) {
		*main_cpu = cpu;
		*main_policy = (int)strtol(p, NULL, 10);
	}
	return threads;
}

/* Where the engine thread runs.  Left to the scheduler, it wakes on an
 * idle CPU, and that CPU keeps the process's address space loaded once
 * the thread sleeps: every TLB flush of the program's (a copy-on-write
 * fault, an munmap, jemalloc's purges, our own mprotect) must then reach
 * it too, an interprocessor interrupt, a VM exit on a virtual machine.  A
 * single-threaded program paid for a thread that only sleeps: bench/
 * randwalk (4 M steps, 0.25 s, populating 256 MiB) ran 280 ms against 247
 * natively, 251 with the sleeping thread pinned to the program's CPU, and
 * 265 pinned to the other one (bench/RESULTS.md, stop 30).  So while the
 * program has one thread, the engine thread runs where that thread last
 * ran (the main thread's `processor` in /proc/self/stat, read at each of
 * its wakes: engine_follow); with more, the address space is on several CPUs already and
 * the engine goes back to the CPUs it was given.  Its tick then shares
 * the program's CPU instead of running beside it: the tick's time is the
 * program's (it was counted as overhead already).  Only ever this
 * thread's own affinity, within the mask it started with (a program's
 * taskset stays in force); a refused call leaves things as they are. */
static cpu_set_t engine_allowed, engine_last; /* the CPUs given; the mask last set */
static bool engine_allowed_ok;
static int engine_cpu = -1; /* the CPU the engine is held to, or -1 */
/* For wss_engine_cpu_release, from the program's threads: the mask the
 * engine started with (written before the engine thread exists), the CPU
 * it is held to, and a count of releases asked.
 *
 * A release and a placement exclude each other (place_lock, a futex: a
 * releaser that meets the engine placing sleeps, and the engine runs).
 * Without it they raced: the engine read its mask, a release set the
 * engine's mask to the creating thread's, then the engine set its own
 * from what it had read, and a `taskset -a -p` given before the
 * pthread_create was lost (lifecycle.sh, 1 run in 60 under load).  Now
 * the engine, placing, takes the mask a release set as the one given
 * (release_gen counts them), and a release is never undone. */
static cpu_set_t engine_start_mask;
static int engine_held = -1;
static uint32_t release_gen, place_gen;
static int place_lock;
/* No holding for a while after a release: the release comes before what
 * it announces (a thread's start, a realtime policy), and the engine's
 * reading of /proc/self/stat may predate that; none ever again once the
 * program asked for a realtime policy. */
static uint64_t hold_after_ns;
static bool no_hold;

static void place_enter(void)
{
	while (__atomic_exchange_n(&place_lock, 1, __ATOMIC_ACQUIRE))
		wss_sys_futex(&place_lock, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
}

static void place_leave(void)
{
	__atomic_store_n(&place_lock, 0, __ATOMIC_RELEASE);
	wss_sys_futex(&place_lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Time-shared policies only: a realtime thread holding the CPU would
 * never let the engine run there (a SCHED_FIFO program's read(2) into a
 * tracked buffer waited 0.9 s for a pin the engine, held behind it, could
 * not release), and a realtime engine would preempt the program. */
static bool shared_policy(int policy) { return policy == SCHED_OTHER || policy == SCHED_BATCH; }

/* May the engine thread be held to cpu alone? */
static bool can_hold(int cpu)
{
	return engine_allowed_ok && cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &engine_allowed) &&
	       CPU_COUNT(&engine_allowed) > 1 && shared_policy(sched_getscheduler(0)) &&
	       !__atomic_load_n(&no_hold, __ATOMIC_RELAXED);
}

/* Engine thread, place_lock held. */
static void engine_place_locked(long threads, bool main_zombie, int main_cpu, int main_policy)
{
	/* A mask left by a release, or set from outside since (taskset -a
	 * -p): the one given now. */
	cpu_set_t cur;
	uint32_t gen = __atomic_load_n(&release_gen, __ATOMIC_RELAXED);
	if (sched_getaffinity(0, sizeof cur, &cur) == 0 && (gen != place_gen || !CPU_EQUAL(&cur, &engine_last))) {
		if (gen != place_gen)
			hold_after_ns = wss_clock_ns(CLOCK_MONOTONIC) + 20000000ULL;
		place_gen = gen;
		engine_allowed = engine_last = cur;
		engine_cpu = -1;
		__atomic_store_n(&engine_held, -1, __ATOMIC_RELAXED);
	}
	int want = threads == 2 && !main_zombie && shared_policy(main_policy) && can_hold(main_cpu) &&
			   wss_clock_ns(CLOCK_MONOTONIC) >= hold_after_ns
		       ? main_cpu
		       : -1;
	if (want == engine_cpu)
		return;
	cpu_set_t one;
	CPU_ZERO(&one);
	if (want >= 0)
		CPU_SET(want, &one);
	const cpu_set_t *set = want >= 0 ? &one : &engine_allowed;
	if (sched_setaffinity(0, sizeof(cpu_set_t), set) != 0)
		return;
	engine_cpu = want;
	engine_last = *set;
	__atomic_store_n(&engine_held, want, __ATOMIC_RELAXED);
}

static void engine_place(long threads, bool main_zombie, int main_cpu, int main_policy)
{
	if (!engine_allowed_ok)
		return;
	place_enter();
	engine_place_locked(threads, main_zombie, main_cpu, main_policy);
	place_leave();
}

/* From a program thread, before it starts another or turns realtime.
 * Always under the lock, held or not: a release that saw the engine not
 * held, and left, could be followed by a placement that holds it next to
 * a thread about to turn realtime.  The asynchronous signals are blocked
 * while place_lock is held: a handler's own release (a raw
 * sched_setscheduler from a signal handler) would wait for the thread it
 * interrupted. */
void wss_engine_cpu_release(bool realtime)
{
	if (realtime)
		__atomic_store_n(&no_hold, true, __ATOMIC_RELAXED);
	if (!__atomic_load_n(&E.started, __ATOMIC_ACQUIRE))
		return;
	uint64_t block = ~WSS_SYNC_SIGNALS, old;
	wss_sys_sigmask(SIG_BLOCK, &block, &old);
	place_enter();
	/* To the CPUs of the thread about to start another (what it and its
	 * new thread may use: a `taskset -a -p` since the engine started
	 * stays in force); before a realtime policy, to the CPUs the engine
	 * started with, whatever the caller's (a realtime thread alone on
	 * its CPU would keep the engine from ever running, and the program's
	 * threads wait for the engine at times).  By its handle: the thread
	 * may not have run yet (a program that turns realtime first thing),
	 * and glibc knows its tid from the clone. */
	if (__atomic_load_n(&engine_held, __ATOMIC_RELAXED) >= 0) {
		cpu_set_t mine;
		const cpu_set_t *set = &engine_start_mask;
		if (!realtime && pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) == 0)
			set = &mine;
		if (pthread_setaffinity_np(E.thread, sizeof(cpu_set_t), set) == 0) {
			__atomic_store_n(&engine_held, -1, __ATOMIC_RELAXED);
			__atomic_add_fetch(&release_gen, 1, __ATOMIC_RELAXED);
		}
	}
	place_leave();
	wss_sys_sigmask(SIG_SETMASK, &old, NULL);
}

/* At each wake of the engine thread, before its work: where the program's
 * thread is now (at most every 10 ms: a pread of /proc/self/stat).  The
 * scheduler moves the program's thread to the idle CPU when our work
 * shares its CPU (the burst's raise, 10 ms), and the engine then held to
 * the old CPU sent every flush of its raise to the program's as an
 * interrupt (x2apic_send_IPI was most of its time in `perf`). */
static uint64_t follow_ns;

static void engine_follow(void)
{
	uint64_t now = wss_clock_ns(CLOCK_MONOTONIC);
	if (!engine_allowed_ok || now < follow_ns)
		return;
	follow_ns = now + 10000000ULL;
	bool zombie;
	int cpu, policy;
	long n = proc_threads(&zombie, &cpu, &policy);
	engine_place(n, zombie, cpu, policy);
}

/* Is the engine thread the only one left?  glibc's last thread to exit
 * calls exit(0), but ours counts as a thread too: a program whose main
 * thread calls pthread_exit would never end once its other threads have.
 * The main thread stays a zombie until the whole process ends, so "alone"
 * is: the main thread (the state /proc/self/stat shows) is a zombie, and
 * the process has two threads, it and us.  A raw clone'd thread counts as
 * one of the program's, as it should. */
static bool engine_alone(void)
{
	bool zombie;
	return proc_threads(&zombie, NULL, NULL) == 2 && zombie;
}

bool wss_engine_last_thread(void)
{
	if (!__atomic_load_n(&E.tracking, __ATOMIC_ACQUIRE))
		return false; /* not set up (secure-execution mode): touch nothing */
	bool zombie;
	long n = proc_threads(&zombie, NULL, NULL), ours = E.started ? 1 : 0;
	if (wss_sys_gettid() == wss_sys_getpid())
		return n == 1 + ours;
	return zombie && n == 2 + ours;
}

/* Engine thread, woken by a burst of first touches (policy.c): under
 * the loader's lock as a tick is (wss_loader_around), so that the ranges
 * it opens are still the loader's (engine/libdata.c). */
static void burst_locked(void)
{
	wss_lockstate_t ls;
	wss_engine_lock(&ls);
	if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED) && !__atomic_load_n(&E.stop, __ATOMIC_RELAXED))
		wss_policy_burst();
	wss_engine_unlock(&ls);
}

static void burst_now(void)
{
	if (__atomic_load_n(&E.burst_hit, __ATOMIC_ACQUIRE))
		wss_loader_around(burst_locked);
}

/* Engine thread, at most every 100 ms: end the process as the program's
 * last thread would have, when it has no thread left.  exit runs the
 * program's exit handlers here, with its signal mask (less the synchronous
 * signals: they may touch armed pages), and our destructor writes the
 * summary. */
static void engine_check_alone(void)
{
	uint64_t now = wss_clock_ns(CLOCK_MONOTONIC);
	if (now < E.next_alone_ns)
		return;
	E.next_alone_ns = now + 100000000ULL;
	if (E.attached && E.attach_until && E.next_alone_ns > E.attach_until)
		E.next_alone_ns = E.attach_until;
	if (E.attached && E.attach_until && now >= E.attach_until) {
		/* wss attach's --duration: the measurement ends here, on time,
		 * however long wss attach then waits to unload us. */
		wss_engine_detach("duration");
		return;
	}
	if (E.attached && wss_attached_orphaned()) {
		/* wss attach was killed: end the profile and stop tracking,
		 * here; the library stays loaded, idle (nobody is left to
		 * unload it). */
		wss_engine_detach("wss attach ended without detaching");
		return;
	}
	if (!engine_alone())
		return;
	uint64_t mask = E.app_mask & ~WSS_SYNC_SIGNALS;
	wss_sys_sigmask(SIG_SETMASK, &mask, NULL);
	exit(0);
}

static void *engine_main(void *arg)
{
	(void)arg;
	/* Every signal but SIGSEGV (and glibc's two) is blocked here (see
	 * wss_engine_start).  SIGSEGV stays open for good: this thread
	 * touches the program's memory too, without meaning to.  A non-PIE
	 * executable's PLT holds the canonical address of each libc function
	 * whose address it takes, so glibc's own calls to free (the thread's
	 * exit frees its TLS) jump through the executable's .got.plt, which
	 * is tracked; copy relocations put stderr and environ in its .bss.
	 * A fault there with SIGSEGV blocked is a kill (cc1 died of it, 1 run
	 * in 15 at a 1 ms interval under mprotect).  Open, such a touch
	 * faults into our handler, which opens the page and records it for
	 * no thread (wss_engine_touched). */
	wss_fault_engine_thread = true;
	__atomic_store_n(&E.engine_tid, wss_sys_gettid(), __ATOMIC_RELEASE);
	uint64_t interval = E.set.interval_ns;
	if (__atomic_load_n(&E.pending, __ATOMIC_ACQUIRE)) {
		/* A forked child: measuring starts one interval (of wall time,
		 * whatever the time base) after the fork, unless it exits or
		 * execs first (wss_engine_fork_child). */
		uint64_t due = E.t0_ns + interval;
		E.next_alone_ns = E.t0_ns + 100000000ULL;
		while (!__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE) && wss_clock_ns(CLOCK_MONOTONIC) < due) {
			wait_until(due < E.next_alone_ns ? due : E.next_alone_ns);
			engine_check_alone();
		}
		if (__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE))
			return NULL;
		wss_loader_around(wss_fork_child_start);
	}
	{
		/* The cost of a touch, before the first interval's touches. */
		wss_lockstate_t ls;
		wss_engine_lock(&ls);
		if (E.attached)
			wss_attached_engine_stack_locked((uintptr_t)__builtin_frame_address(0));
		if (__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
			wss_policy_probe_now();
		wss_engine_unlock(&ls);
	}
	if (E.set.time_base == WSS_ENGINE_CPU) {
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		uint64_t next = interval;
		while (!__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE)) {
			uint64_t used = wss_clock_ns(CLOCK_PROCESS_CPUTIME_ID) - E.cpu0_ns;
			if (used >= next) {
				wss_tick_clock();
				while (next <= used)
					next += interval;
				continue;
			}
			/* CPU time advances at most ncpu times faster than wall time. */
			uint64_t nap = (next - used) / (uint64_t)(ncpu > 0 ? ncpu : 1);
			if (nap < 100000)
				nap = 100000;
			if (nap > 50000000)
				nap = 50000000;
			wait_until(wss_clock_ns(CLOCK_MONOTONIC) + nap);
			engine_follow();
			burst_now();
			engine_check_alone();
		}
		return NULL;
	}
	uint64_t next = E.t0_ns + interval;
	while (!__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE)) {
		/* Wake for the tick, or sooner to look for the last thread
		 * (intervals may be long). */
		wait_until(next < E.next_alone_ns ? next : E.next_alone_ns);
		if (__atomic_load_n(&E.stop, __ATOMIC_ACQUIRE))
			break;
		engine_follow();
		burst_now();
		engine_check_alone();
		uint64_t now = wss_clock_ns(CLOCK_MONOTONIC);
		if (now < next)
			continue;
		wss_tick_clock();
		/* A late tick does not cause a burst: skip to the next boundary. */
		next += interval;
		now = wss_clock_ns(CLOCK_MONOTONIC);
		if (next <= now)
			next = now + interval - (now - E.t0_ns) % interval;
	}
	return NULL;
}

bool wss_engine_own_thread(void *(*start)(void *)) { return start == engine_main; }

int wss_engine_start(void)
{
	if (E.set.time_base == WSS_ENGINE_MANUAL || !__atomic_load_n(&E.measuring, __ATOMIC_RELAXED))
		return 0;
	/* The engine thread starts with every signal blocked, so the
	 * application's SIGTERM, SIGINT, SIGCHLD... go where they would go
	 * without us (heaptrack learned this from a swallowed SIGTERM).  The
	 * synchronous ones too, but for SIGSEGV: one sent with kill() to the
	 * process would otherwise land here whenever the program's threads
	 * block it (a sigwait thread for SIGBUS) and kill the process with
	 * the default action.  Not glibc's own SIGCANCEL and SIGSETXID:
	 * setuid() and friends signal every thread and wait for each to
	 * answer, and would hang for ever on ours (glibc unblocks them in the
	 * first thread it creates, but not in a forked child, where this runs
	 * again).  SIGSEGV is open, in the creating thread and in the engine:
	 * pthread_create runs the loader (lazy binding, TLS set-up) and reads
	 * the caller's memory, the engine thread reads some of the program's
	 * (engine_main), and a touch of an armed page with SIGSEGV blocked is
	 * a kill (issue 11).  SIGSEGV is never blocked in the program's
	 * threads either (signals.c), so one sent by kill() could land in any
	 * of them already. */
	uint64_t block = ~((1ULL << 31) | (1ULL << 32) | (1ULL << (SIGSEGV - 1))), old;
	wss_sys_sigmask(SIG_BLOCK, &block, &old);
	E.app_mask = old;
	E.next_alone_ns = 0;
	if (!__atomic_load_n(&E.pending, __ATOMIC_RELAXED))
		wss_clock_stat_fd(); /* now, while this is the only thread (a pending child: at its start) */
	__atomic_store_n(&E.stop, 0, __ATOMIC_RELAXED);
	/* Attached too, the C library allocates the thread's stack: glibc
	 * keeps its thread descriptor (and list links a forked child
	 * rewrites) there, which must be private memory, and reuses the
	 * stack after the join.  The scan leaves it out, found by an address
	 * in it when the thread starts (wss_attached_engine_stack_locked). */
	/* Placed before it first runs, where the program's only thread runs
	 * (engine_place): started anywhere else, the CPU it ran on would keep
	 * the address space loaded. */
	pthread_attr_t attr, *ap = NULL;
	/* (a forked child's copy of the lock may have been held by the
	 * parent's engine thread, which the child does not have) */
	__atomic_store_n(&place_lock, 0, __ATOMIC_RELAXED);
	engine_cpu = -1;
	engine_allowed_ok = sched_getaffinity(0, sizeof engine_allowed, &engine_allowed) == 0;
	engine_last = engine_start_mask = engine_allowed;
	__atomic_store_n(&engine_held, -1, __ATOMIC_SEQ_CST);
	place_gen = __atomic_load_n(&release_gen, __ATOMIC_RELAXED);
	bool zombie;
	int cpu = sched_getcpu();
	/* (a forked child has one thread; its stat file is opened later) */
	long threads = __atomic_load_n(&E.pending, __ATOMIC_RELAXED) ? 1 : proc_threads(&zombie, NULL, NULL);
	if (threads == 1 && can_hold(cpu) && pthread_attr_init(&attr) == 0) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (pthread_attr_setaffinity_np(&attr, sizeof one, &one) == 0) {
			ap = &attr;
			/* Before the thread exists: it reads these when it places. */
			engine_cpu = cpu;
			engine_last = one;
			__atomic_store_n(&engine_held, cpu, __ATOMIC_SEQ_CST);
		} else {
			pthread_attr_destroy(&attr);
		}
	}
	int r = pthread_create(&E.thread, ap, engine_main, NULL);
	if (ap) {
		pthread_attr_destroy(ap);
		if (r) {
			/* The CPU refused (a seccomp filter or an SELinux domain
			 * without setsched, a CPU gone offline): unplaced, as
			 * engine_place leaves it when refused. */
			engine_cpu = -1;
			engine_last = engine_allowed;
			__atomic_store_n(&engine_held, -1, __ATOMIC_SEQ_CST);
			r = pthread_create(&E.thread, NULL, engine_main, NULL);
		}
	}
	if (r == EAGAIN || r == ENOMEM) {
		/* The default stack (RLIMIT_STACK, 8 MiB) does not fit the
		 * address space left (ulimit -v): the engine's own needs are a
		 * fraction of this. */
		pthread_attr_t small;
		if (pthread_attr_init(&small) == 0) {
			if (pthread_attr_setstacksize(&small, 512 << 10) == 0)
				r = pthread_create(&E.thread, &small, engine_main, NULL);
			pthread_attr_destroy(&small);
		}
	}
	wss_sys_sigmask(SIG_SETMASK, &old, NULL);
	if (r == 0)
		E.started = true;
	return r;
}

/* Called on a thread wss attach stopped in its nanosleep: a nanosleep
 * here would reset that thread's restart block (the kernel's record of
 * the time left), and the program's nanosleep would end at once with
 * EINTR.  So no sleeping call: yields. */
int wss_engine_thread_tid(void)
{
	uint64_t end = wss_clock_ns(CLOCK_MONOTONIC) + 1000000000ULL;
	while (E.started && wss_clock_ns(CLOCK_MONOTONIC) < end) {
		int tid = __atomic_load_n(&E.engine_tid, __ATOMIC_ACQUIRE);
		if (tid)
			return tid;
		wss_sys_sched_yield();
	}
	return 0;
}
