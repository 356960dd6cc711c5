/* `wss attach --method inject` (the default where it can run): load
 * libwss-attach.so into the running process by ptrace (cli/attach/inject.c), start
 * the engine there over the process's existing memory with the uffd-wp
 * backend (preload/attach.c, engine/attached.c), let it write the usual
 * profile, and at the end stop it and unload the library the same way.
 * docs/attach.md says what it sees and what it cannot. */
#include "config.h"
#include "cli/attach/attach.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli/attach/inject.h"
#include "cli/model/load.h"
#include "cli/out/metrics.h"

#define EXIT_USAGE 2
#define RTLD_NOW_LOCAL 2 /* RTLD_NOW | RTLD_LOCAL */
#define SAFE_POINT_NS (5ULL * 1000000000ULL)
#define DETACH_WAIT_NS (20ULL * 1000000000ULL)

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

typedef struct buf {
	char *p;
	size_t n, cap;
} buf_t;

static void add_line(buf_t *b, const char *name, const char *value)
{
	size_t need = strlen(name) + strlen(value) + 3;
	if (b->n + need >= b->cap) {
		size_t cap = (b->cap + need) * 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return;
		b->p = p;
		b->cap = cap;
	}
	b->n += (size_t)snprintf(b->p + b->n, b->cap - b->n, "%s=%s\n", name, value);
}

/* The settings the library builds its configuration from: this process's
 * WSS_* variables (as a preloaded library would see them), the session
 * file by absolute path, the flags, and what attaching fixes. */
static char *settings(const wss_attach_inject_t *q, const char *fifo)
{
	extern char **environ;
	buf_t b = {0};
	for (char **e = environ; *e; e++) {
		if (strncmp(*e, "WSS_", 4) || !strncmp(*e, "WSS_CONFIG=", 11) || !strncmp(*e, "WSS_RUN_FLAGS=", 14) ||
		    !strncmp(*e, "WSS_LEADER=", 11) || !strncmp(*e, "WSS_ATTACH_", 11))
			continue;
		char name[128];
		const char *eq = strchr(*e, '=');
		if (!eq || (size_t)(eq - *e) >= sizeof name)
			continue;
		snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
		add_line(&b, name, eq + 1);
	}
	if (q->config)
		add_line(&b, "WSS_CONFIG", q->config);
	for (int k = 0; k < q->nflags; k++)
		add_line(&b, q->flag_env[k], q->flag_val[k]);
	if (q->flags_list[0])
		add_line(&b, "WSS_RUN_FLAGS", q->flags_list);
	add_line(&b, "WSS_SESSION_OUTPUT", q->output);
	add_line(&b, "WSS_TRACK_BACKEND", "uffd-wp");
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	add_line(&b, "WSS_ATTACH_CONTROLLER", pid);
	if (fifo)
		add_line(&b, "WSS_ATTACH_FIFO", fifo);
	if (q->duration_ns) {
		char d[32];
		snprintf(d, sizeof d, "%llu", (unsigned long long)q->duration_ns);
		add_line(&b, "WSS_ATTACH_DURATION_NS", d);
	}
	return b.p;
}

/* dlopen + dlsym on the stopped thread: the library's handle and the
 * address of its entry points, or an errno with the loader's message. */
static int load_library(wss_inject_t *ij, const wss_inject_libc_t *lc, const char *lib, uint64_t *handle,
			uint64_t fns[2], char *err, size_t errlen)
{
	uint64_t at, ret;
	int r = wss_inject_put(ij, lib, strlen(lib) + 1, &at);
	if (!r)
		r = wss_inject_call(ij, lc, lc->dlopen, (uint64_t[]){at, RTLD_NOW_LOCAL}, 2, handle, err, errlen);
	if (r)
		return r;
	if (!*handle) {
		char msg[400] = "";
		if (!wss_inject_call(ij, lc, lc->dlerror, NULL, 0, &ret, err, errlen) && ret)
			wss_inject_string(ij->pid, ret, msg, sizeof msg);
		snprintf(err, errlen, "dlopen %s in the process: %s", lib, *msg ? msg : "failed");
		return ENOENT;
	}
	static const char *const names[2] = {"wss_attach_start", "wss_attach_stop"};
	for (int k = 0; k < 2; k++) {
		r = wss_inject_put(ij, names[k], strlen(names[k]) + 1, &at);
		if (!r)
			r = wss_inject_call(ij, lc, lc->dlsym, (uint64_t[]){*handle, at}, 2, &fns[k], err, errlen);
		if (!r && !fns[k]) {
			snprintf(err, errlen, "%s has no %s", lib, names[k]);
			r = ENOENT;
		}
		if (r) {
			wss_inject_call(ij, lc, lc->dlclose, (uint64_t[]){*handle}, 1, &ret, err, errlen);
			return r;
		}
	}
	return 0;
}

/* The watch the engine in the process keeps on us: a FIFO that we alone
 * hold open for writing (it hangs up when we die, in whatever pid
 * namespace), in a directory of our own; the engine opens it during its
 * start, after which the names go.  Returns the FIFO's path in path, or
 * "" (the engine then watches our pid, or nothing). */
static int watch_fd = -1;
static char watch_dir[64];

static void watch_open(char *path, size_t n)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(watch_dir, sizeof watch_dir, "%s/wss-attach.XXXXXX", tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	*path = '\0';
	if (!mkdtemp(watch_dir)) {
		*watch_dir = '\0';
		return;
	}
	/* The process may run as another user (wss attach as root). */
	chmod(watch_dir, 0711);
	snprintf(path, n, "%s/watch", watch_dir);
	if (mkfifo(path, 0644) || (watch_fd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		unlink(path);
		rmdir(watch_dir);
		*path = *watch_dir = '\0';
	}
}

static void watch_unlink(const char *path)
{
	if (*path)
		unlink(path);
	if (*watch_dir)
		rmdir(watch_dir);
}

/* Where the process went: gone, or a new program (exec). */
static const char *gone(pid_t pid, const char *exe0)
{
	char path[64], exe[PATH_MAX];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof exe - 1);
	if (n < 0)
		return kill(pid, 0) && errno == ESRCH ? "the process exited" : NULL;
	exe[n] = '\0';
	return strcmp(exe, exe0) ? "the process exec'd" : NULL;
}

/* Is the library still mapped in the process (not after an exec)? */
static bool library_mapped(pid_t pid, const char *lib)
{
	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f))
		found = strstr(line, lib) != NULL;
	if (f)
		fclose(f);
	return found;
}

static void say_summary(const wss_attach_inject_t *q, const char *path, const char *why)
{
	pid_t pid = q->pid;
	wss_profile_t p;
	if (q->quiet || wss_load_profile(path, &p))
		return;
	wss_load_stats(&p);
	fprintf(stderr, "wss: attached to %d for %zu samples (%s)\n", (int)pid, p.nsamples, why);
	bool sampled = wss_load_sampled(&p);
	if (sampled)
		fprintf(stderr, "wss: sampled: at most 1 page in %" PRId64 " (the overhead budget); the numbers are "
				"estimates, their 95 %% intervals in the profile (wss report)\n", p.rate_max);
	if (p.data.present) {
		fprintf(stderr, "wss: write avg/peak: %s%" PRId64 ".%" PRId64 "/%" PRId64 " pages per interval",
			sampled ? "\u2248 " : "", p.data.avg_tenths / 10, p.data.avg_tenths % 10, p.data.peak);
		if (p.data.total >= 0)
			fprintf(stderr, ", %s%" PRId64 " pages written in all", sampled ? "\u2248 " : "", p.data.total);
		fputs(" (reads are not seen)\n", stderr);
	}
	if (!p.has_summary)
		fprintf(stderr, "wss: the profile has no summary: %s before the end of its interval\n", why);
	fprintf(stderr, "wss: profile: %s\n", path);
	wss_load_release(&p);
}

int wss_attach_inject(const wss_attach_inject_t *q, char *why_not, size_t why_len)
{
	char lib[PATH_MAX], err[1024];
	if (wss_find_library("libwss-attach.so", lib, sizeof lib)) {
		snprintf(why_not, why_len, "cannot find libwss-attach.so (looked in the build tree and %s)", WSS_LIBDIR);
		return WSS_ATTACH_CANNOT;
	}
	wss_inject_libc_t lc;
	int r = wss_inject_libc(q->pid, &lc, why_not, why_len);
	if (r == ESRCH)
		fprintf(stderr, "wss: attach: no process %d\n", (int)q->pid);
	if (r)
		return r == ESRCH ? EXIT_USAGE : WSS_ATTACH_CANNOT;
	char exe0[PATH_MAX], path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)q->pid);
	ssize_t n = readlink(path, exe0, sizeof exe0 - 1);
	exe0[n > 0 ? n : 0] = '\0';
	char fifo[128];
	watch_open(fifo, sizeof fifo);
	char *set = settings(q, *fifo ? fifo : NULL);
	if (!set) {
		snprintf(why_not, why_len, "out of memory");
		return 1;
	}

	/* Load and start. */
	wss_inject_t ij;
	r = wss_inject_stop(&ij, &lc, q->pid, 0, SAFE_POINT_NS, why_not, why_len);
	if (r) {
		free(set);
		watch_unlink(fifo);
		if (r == ESRCH)
			fprintf(stderr, "wss: attach: no process %d\n", (int)q->pid);
		return r == ESRCH ? EXIT_USAGE : WSS_ATTACH_CANNOT;
	}
	uint64_t handle = 0, fns[2], ret = 0, at;
	r = load_library(&ij, &lc, lib, &handle, fns, why_not, why_len);
	if (r) {
		wss_inject_resume(&ij);
		free(set);
		watch_unlink(fifo);
		if (r == ESRCH)
			fprintf(stderr, "wss: attach: process %d ended while wss loaded its library\n", (int)q->pid);
		return r == ESRCH ? EXIT_USAGE : WSS_ATTACH_CANNOT;
	}
	r = wss_inject_put(&ij, set, strlen(set) + 1, &at);
	free(set);
	if (!r)
		r = wss_inject_call(&ij, &lc, fns[0], (uint64_t[]){at}, 1, &ret, err, sizeof err);
	watch_unlink(fifo);
	char res[4096] = "";
	if (!r && (!ret || wss_inject_string(q->pid, ret, res, sizeof res)))
		snprintf(res, sizeof res, "error no answer from the library");
	if (r || strncmp(res, "ok ", 3)) {
		uint64_t ignore;
		if (r != ESRCH)
			wss_inject_call(&ij, &lc, lc.dlclose, (uint64_t[]){handle}, 1, &ignore, err, sizeof err);
		wss_inject_resume(&ij);
		if (!r && !strncmp(res, "busy ", 5)) {
			snprintf(why_not, why_len, "%s", res + 5);
			return WSS_ATTACH_CANNOT;
		}
		fprintf(stderr, "wss: attach: %s\n", r ? err : res + 6);
		return EXIT_USAGE;
	}
	wss_inject_resume(&ij);
	char profile[PATH_MAX], *sp;
	pid_t engine_tid = (pid_t)strtol(res + 3, &sp, 10);
	snprintf(profile, sizeof profile, "%s", *sp == ' ' ? sp + 1 : sp);
	if (!q->quiet)
		fprintf(stderr, "wss: attached to %d (injected: writes only, by userfaultfd write protection)\n",
			(int)q->pid);
	if (q->metrics) {
		wss_metrics_start(q->metrics, NULL, q->pid, 0);
		wss_metrics_add_profile(q->metrics, profile);
	}

	/* Measure until the duration ends, the process exits or execs, or a
	 * stop signal comes (blocked by the caller, taken here). */
	sigset_t stops;
	wss_attach_stops(&stops);
	uint64_t t0 = mono_ns(), stop_at = q->duration_ns ? t0 + q->duration_ns : UINT64_MAX;
	const char *why = "duration";
	int pidfd = (int)syscall(SYS_pidfd_open, q->pid, 0);
	for (;;) {
		uint64_t now = mono_ns();
		if (now >= stop_at)
			break;
		uint64_t nap = stop_at - now < 100000000ULL ? stop_at - now : 100000000ULL;
		if (wss_metrics_sigwait(q->metrics, &stops, nap)) {
			/* The stop signals stay blocked until the thread is
			 * given back: wss attach dying in the middle of a call
			 * would leave the thread running our call's return into
			 * the C library. */
			why = "interrupted";
			break;
		}
		const char *g = gone(q->pid, exe0);
		if (g) {
			why = g;
			break;
		}
	}
	if (!strcmp(why, "the process exited") || !strcmp(why, "the process exec'd") ||
	    (pidfd >= 0 && poll(&(struct pollfd){pidfd, POLLIN, 0}, 1, 0) == 1)) {
		if (pidfd >= 0)
			close(pidfd);
		if (strcmp(why, "the process exec'd"))
			why = "the process exited";
		say_summary(q, profile, why);
		return 0;
	}
	if (pidfd >= 0)
		close(pidfd);

	/* Stop and unload: on a thread at a safe point again. */
	r = wss_inject_stop(&ij, &lc, q->pid, engine_tid, DETACH_WAIT_NS, err, sizeof err);
	if (r) {
		if (r == ESRCH || gone(q->pid, exe0)) {
			say_summary(q, profile, "the process exited");
			return 0;
		}
		fprintf(stderr,
			"wss: attach: cannot detach: %s; wss attach ends, and the engine in the process ends its profile and "
			"stops tracking by itself (the library stays loaded, idle)\n",
			err);
		return 1;
	}
	if (!library_mapped(q->pid, lib)) { /* exec'd into the same program */
		wss_inject_resume(&ij);
		say_summary(q, profile, "the process exec'd");
		return 0;
	}
	r = wss_inject_put(&ij, why, strlen(why) + 1, &at);
	if (!r)
		r = wss_inject_call(&ij, &lc, fns[1], (uint64_t[]){at}, 1, &ret, err, sizeof err);
	if (!r)
		r = wss_inject_call(&ij, &lc, lc.dlclose, (uint64_t[]){handle}, 1, &ret, err, sizeof err);
	wss_inject_resume(&ij);
	if (r) {
		fprintf(stderr, "wss: attach: detaching: %s\n", err);
		return 1;
	}
	say_summary(q, profile, why);
	return 0;
}
