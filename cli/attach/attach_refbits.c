/* `wss attach --method refbits`, and where injection cannot run: measure a
 * process that is already running, with no code in it, from the kernel's
 * per-page bits (the reference-bit method):
 * every interval, /proc/PID/smaps gives each mapping's pages referenced
 * since the last clear (the accessed bits, read or written), the soft-dirty
 * bits in /proc/PID/pagemap give which pages were written, and writing
 * "1" and "4" to /proc/PID/clear_refs starts the next interval.  The
 * profile is the usual one (docs/profile-format.md): one sample per
 * interval, no threads, no stacks, a window of one interval (reference
 * bits are counts per mapping: which pages were read is not known, so a
 * window cannot be formed for them).  No code series: the accessed flag
 * smaps counts for a shared page (the C library's code) is set by every
 * process that uses it.  docs/attach.md says what it sees and how well. */
#include "config.h"
#include "cli/attach/attach.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli/out/metrics.h"
#include "common/fmt.h"
#include "common/profile.h"
#include "config/config.h"

#define EXIT_USAGE 2
#define PM_SOFT_DIRTY (1ULL << 55)
#define PM_SWAPPED (1ULL << 62)
#define PM_PRESENT (1ULL << 63)
#define TOP_MAPPINGS 8

/* The pages ever written, for the run's write total: an open-addressing
 * set of page numbers (0 is never a user page). */
typedef struct pageset {
	uint64_t *v;
	size_t n, cap;
} pageset_t;

/* The slot of page in a table of cap (a power of two) entries: the high
 * bits of a Fibonacci hash, so that pages a power of two apart (a stride
 * of 512 pages) spread out. */
static size_t slot(uint64_t page, size_t cap)
{
	return (size_t)((page * 0x9e3779b97f4a7c15ULL) >> (64 - __builtin_ctzll(cap)));
}

static int pageset_add(pageset_t *s, uint64_t page)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		uint64_t *v = calloc(cap, sizeof *v);
		if (!v)
			return ENOMEM;
		for (size_t k = 0; k < s->cap; k++) {
			if (!s->v[k])
				continue;
			size_t h = slot(s->v[k], cap);
			while (v[h])
				h = (h + 1) & (cap - 1);
			v[h] = s->v[k];
		}
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	size_t h = slot(page, s->cap);
	for (; s->v[h]; h = (h + 1) & (s->cap - 1))
		if (s->v[h] == page)
			return 0;
	s->v[h] = page;
	s->n++;
	return 0;
}

/* One mapping's share of an interval. */
typedef struct mapping {
	char name[96];
	uint64_t pages, writes;
} mapping_t;

typedef struct interval {
	uint64_t data, writes;
	mapping_t top[TOP_MAPPINGS]; /* the data mappings with the most pages */
	int ntop;
} interval_t;

typedef struct attach {
	pid_t pid;
	int smaps_fd, pagemap_fd, clear_fd;
	long page_size;
	bool writes;	       /* soft-dirty tracking */
	const char *no_writes; /* why not, or NULL */
	pageset_t written;
	uint64_t *pm;
	size_t pm_cap;
	int out_err; /* ENOMEM: a profile record did not fit in memory */
} attach_t;

/* Is a mapping data: private and writable (heap, anonymous memory, a
 * module's .data/.bss, thread stacks), not executable, not the main stack
 * or the kernel's [vvar]? */
static bool is_data(const char *perms, const char *name)
{
	return perms[1] == 'w' && perms[2] != 'x' && perms[3] == 'p' && strncmp(name, "[stack", 6) &&
	       strncmp(name, "[vvar", 5);
}

/* Pages of [s, e) written since the last clear: soft-dirty and present (or
 * swapped; a mapping created since the clear reports every page soft-dirty,
 * so an absent page is not counted). */
static int count_writes(attach_t *a, uint64_t s, uint64_t e, uint64_t *out)
{
	size_t n = (size_t)((e - s) / (uint64_t)a->page_size);
	uint64_t first = s / (uint64_t)a->page_size;
	*out = 0;
	for (size_t done = 0; done < n;) {
		size_t chunk = n - done < 65536 ? n - done : 65536;
		if (chunk > a->pm_cap) {
			uint64_t *pm = realloc(a->pm, chunk * sizeof *pm);
			if (!pm)
				return ENOMEM;
			a->pm = pm;
			a->pm_cap = chunk;
		}
		ssize_t r = pread(a->pagemap_fd, a->pm, chunk * sizeof *a->pm, (off_t)((first + done) * sizeof *a->pm));
		if (r <= 0)
			return r < 0 ? errno : 0; /* unmapped meanwhile: nothing more */
		size_t got = (size_t)r / sizeof *a->pm;
		for (size_t k = 0; k < got; k++) {
			uint64_t v = a->pm[k];
			if ((v & PM_SOFT_DIRTY) && (v & (PM_PRESENT | PM_SWAPPED))) {
				(*out)++;
				if (pageset_add(&a->written, first + done + k))
					return ENOMEM;
			}
		}
		done += got;
	}
	return 0;
}

static void note_top(interval_t *iv, const char *name, uint64_t pages, uint64_t writes)
{
	if (!pages)
		return;
	int j = iv->ntop < TOP_MAPPINGS ? iv->ntop++ : TOP_MAPPINGS - 1;
	if (j == TOP_MAPPINGS - 1 && iv->ntop == TOP_MAPPINGS && iv->top[j].pages >= pages)
		return;
	for (; j > 0 && iv->top[j - 1].pages < pages; j--)
		iv->top[j] = iv->top[j - 1];
	snprintf(iv->top[j].name, sizeof iv->top[j].name, "%s", *name ? name : "[anon]");
	iv->top[j].pages = pages;
	iv->top[j].writes = writes;
}

/* Read one interval from smaps (and pagemap).  Returns 0, ESRCH when the
 * process is gone, or an errno. */
static int read_interval(attach_t *a, interval_t *iv)
{
	memset(iv, 0, sizeof *iv);
	if (lseek(a->smaps_fd, 0, SEEK_SET) < 0)
		return errno == ESRCH ? ESRCH : errno;
	FILE *f = fdopen(dup(a->smaps_fd), "r");
	if (!f)
		return errno;
	char line[PATH_MAX + 128];
	bool data = false;
	uint64_t s = 0, e = 0, rss = 0;
	char name[PATH_MAX] = "";
	bool any = false;
	int r = 0;
	while (fgets(line, sizeof line, f)) {
		uint64_t ms, me;
		char perms[8];
		int off = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s%n", &ms, &me, perms, &off) == 3 && off > 0) {
			any = true;
			const char *nm = line + off;
			while (*nm == ' ')
				nm++;
			snprintf(name, sizeof name, "%s", nm);
			name[strcspn(name, "\n")] = '\0';
			data = is_data(perms, name);
			s = ms;
			e = me;
			rss = 0;
			continue;
		}
		uint64_t kb;
		if (data && sscanf(line, "Rss: %" SCNu64 " kB", &kb) == 1)
			rss = kb;
		if (data && sscanf(line, "Referenced: %" SCNu64 " kB", &kb) == 1) {
			uint64_t pages = kb * 1024 / (uint64_t)a->page_size;
			uint64_t w = 0;
			/* pagemap only where pages are resident (a reserved
			 * heap of gigabytes with nothing in it costs nothing). */
			if (a->writes && rss && (r = count_writes(a, s, e, &w)))
				break;
			/* A page written is referenced too; the two bits are read
			 * at slightly different instants. */
			if (w > pages)
				pages = w;
			iv->data += pages;
			iv->writes += w;
			note_top(iv, name, pages, w);
		}
	}
	if (!r && ferror(f))
		r = errno ? errno : EIO;
	fclose(f);
	if (!r && !any)
		r = ESRCH; /* an exited process (a zombie) has no mappings */
	return r == ENOENT ? ESRCH : r;
}

/* Does this kernel keep soft-dirty bits (CONFIG_MEM_SOFT_DIRTY)?  A page
 * just written is soft-dirty where it does; elsewhere the bit is always 0
 * and writing "4" to clear_refs is accepted and does nothing. */
static bool soft_dirty_works(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return false;
	p[0] = 1;
	uint64_t v = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	bool ok = fd >= 0 && pread(fd, &v, sizeof v, (off_t)((uintptr_t)p / (uintptr_t)pg * sizeof v)) == sizeof v &&
		  (v & PM_PRESENT) && (v & PM_SOFT_DIRTY);
	if (fd >= 0)
		close(fd);
	munmap((void *)p, (size_t)pg);
	return ok;
}

static int clear_refs(attach_t *a)
{
	/* 1: the accessed bits (and the pages' referenced flags).  4: the
	 * soft-dirty bits, which write-protects the pages again where the
	 * kernel keeps them; and, everywhere, it is what flushes the process's
	 * TLB: "1" alone does not (a page whose translation stays cached is
	 * never marked accessed again: 28 of 500 busy pages were seen that
	 * way), so "4" is written even where there are no soft-dirty bits. */
	if (pwrite(a->clear_fd, "1", 1, 0) != 1 || pwrite(a->clear_fd, "4", 1, 0) != 1)
		return errno;
	return 0;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The target's CPU time (utime + stime of /proc/PID/stat), -1 if gone. */
static int64_t target_cpu_ns(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (int64_t)((ut + st) * (1000000000ULL / (unsigned long long)sysconf(_SC_CLK_TCK)));
}

/* A JSON string literal: the engine's escaping, so that a name that is not
 * UTF-8 (a file name, an argument) gets U+FFFD and the profile stays JSON. */
static void json_string(FILE *f, const char *s)
{
	wss_fmt_t b;
	char buf[2 * PATH_MAX];
	wss_fmt_init(&b, buf, sizeof buf);
	wss_fmt_json_str(&b, s);
	fwrite(b.buf, 1, b.len, f);
}

/* A record built by the profile's writer (common/profile.h) onto f, as
 * one piece; a record that did not fit in memory is left out and the run
 * ends with ENOMEM as for a failed write. */
static void put_record(FILE *f, attach_t *a, wss_fmt_t *b)
{
	if (b->overflow)
		a->out_err = ENOMEM;
	else
		fwrite(b->buf, 1, b->len, f);
	wss_fmt_reset(b);
}

/* The target's arguments from /proc/PID/cmdline, each cut at
 * ARG_MAX_BYTES: *argv and its strings in one allocation (free(*argv)),
 * NULL when it cannot be read.  Returns how many. */
#define ARG_MAX_BYTES 4095
static int read_args(pid_t pid, char ***argv)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	*argv = NULL;
	FILE *cl = fopen(path, "r");
	if (!cl)
		return 0;
	char *buf = NULL;
	size_t got = 0, cap = 0;
	for (size_t r = 1; r;) {
		if (got + 1 >= cap) {
			char *m = realloc(buf, cap = cap ? 2 * cap : 4096);
			if (!m)
				break;
			buf = m;
		}
		got += r = fread(buf + got, 1, cap - got - 1, cl);
	}
	fclose(cl);
	if (!buf)
		return 0;
	buf[got] = '\0'; /* a process that rewrote its arguments without a last NUL */
	size_t argc = 0;
	for (size_t at = 0; at < got; at += strlen(buf + at) + 1)
		argc++;
	/* The pointers first, then the strings: one block to free. */
	char **v = malloc(argc * sizeof *v + got + 1);
	if (v) {
		char *strs = (char *)(v + argc);
		memcpy(strs, buf, got + 1);
		argc = 0;
		for (size_t at = 0; at < got; at += strlen(buf + at) + 1) {
			v[argc] = strs + at;
			if (strlen(v[argc]) > ARG_MAX_BYTES)
				v[argc][ARG_MAX_BYTES] = '\0';
			argc++;
		}
	}
	free(buf);
	*argv = v;
	return v ? (int)argc : 0;
}

static void write_header(FILE *f, attach_t *a, const wss_config_t *cfg, const char *config_file)
{
	char path[64], exe[PATH_MAX] = "";
	snprintf(path, sizeof path, "/proc/%d/exe", (int)a->pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	struct utsname u;
	uname(&u);
	long ppid = -1;
	snprintf(path, sizeof path, "/proc/%d/stat", (int)a->pid);
	FILE *st = fopen(path, "r");
	if (st) {
		char buf[1024];
		size_t m = fread(buf, 1, sizeof buf - 1, st);
		buf[m] = '\0';
		char *p = strrchr(buf, ')');
		if (p)
			sscanf(p + 2, "%*c %ld", &ppid);
		fclose(st);
	}
	char **argv;
	int argc = read_args(a->pid, &argv);
	/* The run's members that a refbits profile has too, in their place:
	 * the timing before the VMA figures (which it has not), the rest at
	 * the end. */
	wss_fmt_t timing, config, b;
	wss_fmt_init_growable(&timing, 256);
	wss_fmt_str(&timing, ",\"time_base\":\"wall\",\"interval_ns\":");
	wss_fmt_u64(&timing, cfg->interval_ns);
	wss_fmt_str(&timing, ",\"window_intervals\":1,\"window_ns\":");
	wss_fmt_u64(&timing, cfg->interval_ns);
	wss_fmt_str(&timing, ",\"track_mode\":\"exact\"");
	wss_fmt_cstr(&timing);
	wss_fmt_init_growable(&config, 512);
	wss_fmt_str(&config, ",\"attach\":{\"method\":\"refbits\",\"writes\":");
	wss_fmt_str(&config, a->writes ? "true" : "false");
	if (a->no_writes) {
		wss_fmt_str(&config, ",\"writes_reason\":");
		wss_fmt_json_str(&config, a->no_writes);
	}
	wss_fmt_str(&config, ",\"cannot_see\":\"threads, call stacks, hot pages, windows longer than one interval, "
			     "which pages were read (counts per mapping)\"}");
	if (config_file) {
		wss_fmt_str(&config, ",\"config_file\":");
		wss_fmt_json_str(&config, config_file);
	}
	wss_fmt_str(&config, ",\"track\":{\"heap\":true,\"anon_mmap\":true,\"data_segments\":true,\"library_data\":true}");
	wss_fmt_cstr(&config);
	wss_profile_header_t h = {
		.pid = (int)a->pid,
		.ppid = (int)ppid,
		.exe = exe,
		.argv = argv,
		.argc = argc,
		.start_unix_ns = now_ns(CLOCK_REALTIME),
		.kernel = u.release,
		.page_size = a->page_size,
		.backend = "refbits",
		.backend_reason = "wss attach --method refbits: the kernel's accessed and soft-dirty bits of a running "
				  "process, cleared every interval (/proc/PID/clear_refs)",
		.backend_sees = a->writes ? "reads and writes, writes apart" : "reads and writes",
		.timing = timing.overflow ? NULL : timing.buf,
		.config = config.overflow ? NULL : config.buf,
		.no_vma = true,
	};
	if (timing.overflow || config.overflow)
		a->out_err = ENOMEM;
	wss_fmt_init_growable(&b, 4096);
	wss_profile_header(&b, &h);
	put_record(f, a, &b);
	wss_fmt_release(&b);
	wss_fmt_release(&config);
	wss_fmt_release(&timing);
	free(argv);
}

static void write_sample(FILE *f, attach_t *a, uint64_t seq, uint64_t t_ns, const interval_t *iv, bool final)
{
	int64_t cpu = target_cpu_ns(a->pid);
	/* The mappings with the most pages: a refbits sample's own member. */
	wss_fmt_t mappings, b;
	wss_fmt_init_growable(&mappings, 1024);
	wss_fmt_str(&mappings, ",\"mappings\":[");
	for (int k = 0; k < iv->ntop; k++) {
		wss_fmt_str(&mappings, k ? ",{\"name\":" : "{\"name\":");
		wss_fmt_json_str(&mappings, iv->top[k].name);
		wss_fmt_str(&mappings, ",\"pages\":");
		wss_fmt_u64(&mappings, iv->top[k].pages);
		if (a->writes) {
			wss_fmt_str(&mappings, ",\"write_pages\":");
			wss_fmt_u64(&mappings, iv->top[k].writes);
		}
		wss_fmt_ch(&mappings, '}');
	}
	wss_fmt_ch(&mappings, ']');
	wss_fmt_cstr(&mappings);
	if (mappings.overflow)
		a->out_err = ENOMEM;
	/* Reference bits take no fault, count every page (rate 1), and know
	 * no thread: tid 0 holds the pages no thread is known for. */
	wss_profile_sample_t s = {
		.seq = (uint32_t)seq,
		.t_ns = t_ns,
		.cpu_ns = cpu >= 0 ? (uint64_t)cpu : 0,
		.no_cpu = cpu < 0,
		.data_pages = iv->data,
		.write_pages = iv->writes,
		.read_pages = iv->data - iv->writes,
		.sets = {.writes = a->writes, .reads = a->writes},
		.final = final,
		.rate = 1,
		.extra = mappings.overflow ? NULL : mappings.buf,
	};
	wss_profile_thread_t t = {.tid = 0, .data_pages = iv->data, .write_pages = iv->writes, .cpu_ns = -1};
	wss_fmt_init_growable(&b, 1024);
	wss_profile_sample_begin(&b, &s);
	wss_profile_sample_thread(&b, true, &s, &t);
	wss_profile_sample_end(&b);
	put_record(f, a, &b);
	wss_fmt_release(&b);
	wss_fmt_release(&mappings);
}

typedef struct stat_acc {
	uint64_t sum, peak;
} stat_acc_t;

static void acc(stat_acc_t *s, uint64_t v)
{
	s->sum += v;
	if (v > s->peak)
		s->peak = v;
}

static void write_stat(FILE *f, const char *key, const stat_acc_t *s, uint64_t n, int64_t total)
{
	double avg = n ? (double)s->sum / (double)n : 0;
	fprintf(f, ",\"%s\":{\"avg\":%.1f,\"peak\":%" PRIu64 ",\"total\":", key, avg, s->peak);
	if (total < 0)
		fputs("null}", f);
	else
		fprintf(f, "%" PRId64 "}", total);
}

/* Can this process use the target's /proc files?  Prints the reason and
 * returns EXIT_USAGE when it cannot. */
static int open_target(attach_t *a)
{
	char path[64];
	int r = wss_attach_check_target(a->pid);
	if (r)
		return r;
	static const char *const files[] = {"smaps", "pagemap", "clear_refs"};
	int *fds[] = {&a->smaps_fd, &a->pagemap_fd, &a->clear_fd};
	for (int k = 0; k < 3; k++) {
		snprintf(path, sizeof path, "/proc/%d/%s", (int)a->pid, files[k]);
		*fds[k] = open(path, (k == 2 ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
		if (*fds[k] < 0) {
			int e = errno;
			fprintf(stderr, "wss: attach: %s: %s%s\n", path, strerror(e),
				e == EACCES || e == EPERM ? " (the kernel refuses access: a process that is not dumpable)" : "");
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* Why the target's memory went away: it exited, or it exec'd (the /proc
 * files opened at the start belong to the image that was running; the
 * new program is not measured: it may not be one this user may watch).
 * An exiting process gives up its memory before it becomes a zombie: in
 * between, its state reads R, S or D and only the flags say it is exiting
 * (PF_EXITING); it was once taken for an exec.  A thread exec'ing from a
 * multi-threaded process takes the pid over from an exiting leader: so an
 * exiting task is watched until it is a zombie, gone, or a new program
 * under the same pid. */
#define WSS_PF_EXITING 0x4u /* include/linux/sched.h */

static const char *process_gone(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	for (int tries = 0; tries < 400; tries++) {
		FILE *f = fopen(path, "r");
		if (!f)
			return "the process exited";
		size_t n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[n] = '\0';
		const char *p = strrchr(buf, ')');
		char state;
		unsigned flags;
		/* state ppid pgrp session tty_nr tpgid flags */
		if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2 || state == 'Z' ||
		    state == 'X' || state == 'x')
			return "the process exited";
		if (!(flags & WSS_PF_EXITING))
			return "the process exec'd";
		nanosleep(&(struct timespec){0, 5000000}, NULL);
	}
	return "the process exited";
}

/* One reference-bit measurement's course: its samples, their sums, the
 * blind gaps between intervals, the intervals that ran long. */
typedef struct run {
	uint64_t t0, seq, blind_sum, blind_max, blind_avg, long_n, len_max;
	stat_acc_t data, rd, wr;
	const char *why;
	int status;
} run_t;

/* Sample after sample until the duration, a stop signal, the process's
 * end or an error (u->why, u->status). */
static void refbits_loop(attach_t *a, FILE *f, const wss_attach_opts_t *o, run_t *u)
{
	int r;
	sigset_t stops;
	wss_attach_stops(&stops);
	/* Each interval runs from a clear of the bits to the read of the
	 * next sample, whatever the time the read and the clear took: the
	 * next read is due an interval after the clear, not on a fixed grid
	 * (a grid let a late sample be followed by one a few milliseconds
	 * long on a loaded machine, and the short ones pulled the average
	 * down).  Between the read and the clear the bits are blind: a page
	 * touched there after its mapping was read is cleared unseen.  That
	 * gap is measured and said (the summary's "blind"). */
	uint64_t next;
	u->t0 = now_ns(CLOCK_MONOTONIC);
	uint64_t stop_at = o->duration_ns ? u->t0 + o->duration_ns : UINT64_MAX;
	uint64_t prev_clear = u->t0;
	u->why = "duration";
	bool stopped = false;
	for (;;) {
		next = prev_clear + o->cfg.interval_ns;
		uint64_t wake = next < stop_at ? next : stop_at;
		for (uint64_t now; !stopped && (now = now_ns(CLOCK_MONOTONIC)) < wake;) {
			if (wss_metrics_sigwait(o->metrics, &stops, wake - now)) {
				stopped = true;
				signal(SIGINT, SIG_DFL);
				sigprocmask(SIG_UNBLOCK, &stops, NULL);
			}
		}
		interval_t iv;
		uint64_t read_at = now_ns(CLOCK_MONOTONIC);
		/* An interval that ran long: the wait woke late (a loaded
		 * machine); said in the summary. */
		if (read_at - prev_clear > o->cfg.interval_ns + o->cfg.interval_ns / 2)
			u->long_n++;
		if (read_at - prev_clear > u->len_max)
			u->len_max = read_at - prev_clear;
		r = read_interval(a, &iv);
		if (r == ESRCH) {
			u->why = process_gone(a->pid);
			break;
		}
		if (r) {
			fprintf(stderr, "wss: attach: /proc/%d: %s; measuring stopped at sample %" PRIu64 "\n", (int)a->pid,
				strerror(r), u->seq);
			u->why = "error";
			u->status = 1;
			break;
		}
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		/* A sample of a partial interval: interrupted before its end,
		 * or the duration ending inside it. */
		bool final = stopped || wake == stop_at;
		write_sample(f, a, ++u->seq, t - u->t0, &iv, final && (stopped ? t < next : stop_at < next));
		acc(&u->data, iv.data);
		acc(&u->wr, iv.writes);
		acc(&u->rd, iv.data - iv.writes);
		if (ferror(f)) {
			u->why = "error";
			u->status = 1;
			break;
		}
		if (final) {
			u->why = stopped ? "interrupted" : "duration";
			break;
		}
		if (clear_refs(a)) {
			u->why = process_gone(a->pid);
			break;
		}
		prev_clear = now_ns(CLOCK_MONOTONIC);
		u->blind_sum += prev_clear - read_at;
		if (prev_clear - read_at > u->blind_max)
			u->blind_max = prev_clear - read_at;
	}
}

/* The summary record. */
static void write_end(FILE *f, attach_t *a, run_t *u, uint64_t interval_ns)
{
	fprintf(f, "{\"type\":\"summary\",\"samples\":%" PRIu64 ",\"duration_ns\":%" PRIu64, u->seq, now_ns(CLOCK_MONOTONIC) - u->t0);
	write_stat(f, "data", &u->data, u->seq, -1);
	if (a->writes) {
		write_stat(f, "read", &u->rd, u->seq, -1);
		write_stat(f, "write", &u->wr, u->seq, (int64_t)a->written.n);
	}
	/* The gaps between intervals (read to clear), and the intervals
	 * that ran long. */
	u->blind_avg = u->seq > 1 ? u->blind_sum / (u->seq - 1) : 0;
	fprintf(f, ",\"blind\":{\"avg_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"share\":%.4f}", u->blind_avg, u->blind_max,
		(double)u->blind_avg / (double)interval_ns);
	fprintf(f, ",\"late\":{\"intervals\":%" PRIu64 ",\"longest_ns\":%" PRIu64 "}", u->long_n, u->len_max);
	fprintf(f, ",\"faults\":0,\"coarse\":0,\"page_size\":%ld,\"attach_end\":", a->page_size);
	json_string(f, u->why);
	fputs("}\n", f);
}

/* The figures on stderr, with what reference bits cannot see. */
static void say_refbits(const attach_t *a, const run_t *u, const char *path, uint64_t interval_ns)
{
	double n = u->seq ? (double)u->seq : 1;
	fprintf(stderr, "wss: attached to %d for %" PRIu64 " samples (%s)\n", (int)a->pid, u->seq, u->why);
	fprintf(stderr, "wss: data avg/peak: %.1f/%" PRIu64 " pages per interval (reference bits)\n", (double)u->data.sum / n,
		u->data.peak);
	if (a->writes)
		fprintf(stderr, "wss: write avg/peak/total: %.1f/%" PRIu64 "/%zu pages\n", (double)u->wr.sum / n, u->wr.peak,
			a->written.n);
	/* What reference bits cannot see, said with the figures. */
	if (u->seq > 1)
		fprintf(stderr,
			"wss: attach: between intervals the bits are read and cleared (%.1f ms on average, %.1f %% of an "
			"interval): a page first touched there after its mapping was read is not counted, so the counts are "
			"low by up to that share\n",
			(double)u->blind_avg / 1e6, 100.0 * (double)u->blind_avg / (double)interval_ns);
	if (u->long_n)
		fprintf(stderr,
			"wss: attach: %" PRIu64 " of %" PRIu64 " intervals ran over 1.5 times the %.0f ms asked (the longest "
			"%.0f ms: the machine was loaded); their counts cover the longer time\n",
			u->long_n, u->seq, (double)interval_ns / 1e6, (double)u->len_max / 1e6);
	fprintf(stderr, "wss: profile: %s\n", path);
}

int wss_attach_refbits(pid_t pid, const wss_attach_opts_t *o)
{
	const wss_config_t cfg = o->cfg;
	int r;
	if (cfg.window_intervals != 1) {
		fprintf(stderr, "wss: attach: session.window is %u intervals: reference bits give one interval at a time "
				"(set the window to the interval)\n", cfg.window_intervals);
		return EXIT_USAGE;
	}
	if (cfg.time_base != WSS_TIME_WALL) {
		fprintf(stderr, "wss: attach: session.time_base must be wall (a running process is measured by the clock)\n");
		return EXIT_USAGE;
	}

	attach_t a = {.pid = pid, .smaps_fd = -1, .pagemap_fd = -1, .clear_fd = -1,
		      .page_size = sysconf(_SC_PAGESIZE)};
	r = open_target(&a);
	if (r)
		return r;
	char path[PATH_MAX];
	if (wss_attach_expand_output(cfg.output, a.pid, path, sizeof path)) {
		fprintf(stderr, "wss: %s: cannot expand into a profile name\n", cfg.output);
		return EXIT_USAGE;
	}
	/* The first clear before the profile exists: a process that cannot
	 * be cleared leaves no profile behind. */
	if ((r = clear_refs(&a))) {
		fprintf(stderr, "wss: attach: /proc/%d/clear_refs: %s\n", (int)a.pid, strerror(r));
		return EXIT_USAGE;
	}
	int fd = wss_attach_open_output(path, &r);
	if (fd < 0)
		return r;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		fprintf(stderr, "wss: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* Line-buffered: each record reaches the file whole, so a killed
	 * wss attach leaves a valid profile prefix. */
	setvbuf(f, NULL, _IOLBF, 1 << 16);
	/* Writes apart where the kernel keeps soft-dirty bits; where it does
	 * not, the profile and stderr say so (no write series). */
	a.writes = soft_dirty_works();
	if (!a.writes) {
		a.no_writes = "this kernel keeps no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY is not set)";
		if (!o->quiet)
			fprintf(stderr, "wss: attach: no read/write split: %s\n", a.no_writes);
	}
	write_header(f, &a, &cfg, o->config ? o->config : getenv("WSS_CONFIG"));
	if (o->metrics) {
		wss_metrics_start(o->metrics, NULL, a.pid, 0);
		wss_metrics_add_profile(o->metrics, path);
	}

	run_t run = {0}, *u = &run;
	refbits_loop(&a, f, o, u);
	write_end(f, &a, u, cfg.interval_ns);
	int werr = ferror(f) ? errno : a.out_err;
	if (fclose(f) && !werr)
		werr = errno;
	free(a.written.v);
	free(a.pm);
	close(a.smaps_fd);
	close(a.pagemap_fd);
	close(a.clear_fd);
	if (werr) {
		fprintf(stderr, "wss: %s: %s; the profile ends at sample %" PRIu64 " or before\n", path, strerror(werr), u->seq);
		return 1;
	}
	if (u->status || o->quiet)
		return u->status;
	say_refbits(&a, u, path, cfg.interval_ns);
	return 0;
}
