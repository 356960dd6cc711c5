/* wss attach --cgroup PATH: every process of a cgroup v2 (a container, a
 * systemd unit), each measured by its own `wss attach` (a forked copy of
 * this one, quiet but for errors: wss_attach_one), started as the process
 * is first seen in cgroup.procs, which is read every SCAN_NS.  A process
 * that leaves the cgroup has its measurement ended; one that ends ends
 * its own.  A process that already holds an injected engine (a child its
 * measured parent forked after the injection: docs/attach.md says such a
 * child runs no engine) is measured by reference bits, never injected a
 * second time.  At the end (the duration, a stop signal, the cgroup
 * removed) each process's figures and the cgroup's total go to stderr as
 * `wss run`'s session table does, with the working set the cgroup's
 * windows fit in 95 % and 99 % of the time: its processes' windows summed
 * on one clock (cli/out/metrics.c). */
#include "config.h"
#include "cli/attach/attach.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/out/metrics.h"
#include "cli/model/session.h"

#define EXIT_USAGE 2
/* How often cgroup.procs is read: a process that joins is measured from
 * within this of its start. */
#define SCAN_NS 200000000ULL

typedef struct member {
	pid_t pid;
	pid_t child;  /* the wss attach measuring it; 0 once reaped */
	int64_t t0_ns; /* when it was started (unix ns): its profile is newer */
	int status;   /* the child's exit status */
	bool left;    /* it left the cgroup: its measurement was ended */
} member_t;

static int64_t unix_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The cgroup2 file system's mount point into mnt; false when none. */
static bool cgroup2_mount(char *mnt, size_t n)
{
	FILE *f = fopen("/proc/self/mounts", "r");
	char dev[256], dir[PATH_MAX], type[64];
	bool found = false;
	while (f && !found && fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3)
		if (!strcmp(type, "cgroup2") && strlen(dir) < n) {
			strcpy(mnt, dir);
			found = true;
		}
	if (f)
		fclose(f);
	return found;
}

/* PATH's directory and its name as /proc/PID/cgroup shows it ("/x/y"):
 * PATH itself when it is a cgroup v2 directory (it has
 * cgroup.controllers, which cgroup v1 has not), else PATH under the
 * cgroup2 mount. */
static bool resolve(const char *path, char *dir, size_t dn, char *name, size_t nn)
{
	char mnt[PATH_MAX], probe[PATH_MAX + 32];
	bool have_mnt = cgroup2_mount(mnt, sizeof mnt);
	snprintf(probe, sizeof probe, "%s/cgroup.controllers", path);
	if (access(probe, R_OK) == 0) {
		if (!realpath(path, dir) || strlen(dir) >= dn)
			return false;
	} else if (have_mnt) {
		snprintf(probe, sizeof probe, "%s/%s", mnt, path[0] == '/' ? path + 1 : path);
		size_t l = strlen(probe);
		while (l > 1 && probe[l - 1] == '/')
			probe[--l] = '\0';
		if (l >= dn)
			return false;
		strcpy(dir, probe);
		snprintf(probe, sizeof probe, "%s/cgroup.controllers", dir);
		if (access(probe, R_OK))
			return false;
	} else {
		return false;
	}
	size_t ml = have_mnt ? strlen(mnt) : 0;
	if (have_mnt && !strncmp(dir, mnt, ml) && (dir[ml] == '/' || !dir[ml]))
		snprintf(name, nn, "%s", dir[ml] ? dir + ml : "/");
	else
		snprintf(name, nn, "%s", dir);
	return true;
}

bool wss_attach_cgroup_ok(const char *path, const wss_attach_opts_t *o)
{
	char dir[PATH_MAX], name[PATH_MAX];
	(void)o;
	if (resolve(path, dir, sizeof dir, name, sizeof name))
		return true;
	char mnt[PATH_MAX];
	if (!cgroup2_mount(mnt, sizeof mnt))
		fprintf(stderr, "wss: attach: --cgroup %s: no cgroup v2 here (no cgroup2 file system is mounted)\n", path);
	else
		fprintf(stderr, "wss: attach: --cgroup %s: not a cgroup v2 directory (neither it nor %s/%s has "
				"cgroup.controllers)\n", path, mnt, path[0] == '/' ? path + 1 : path);
	return false;
}

/* The pids in dir/cgroup.procs into *v (n of them); false when it cannot
 * be read (the cgroup was removed). */
static bool read_procs(const char *dir, pid_t **v, size_t *n, size_t *cap)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/cgroup.procs", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	*n = 0;
	long p;
	while (fscanf(f, "%ld", &p) == 1)
		if (!wss_reserve(v, cap, *n + 1, sizeof **v))
			(*v)[(*n)++] = (pid_t)p;
	fclose(f);
	return true;
}

static bool has(const pid_t *v, size_t n, pid_t pid)
{
	for (size_t k = 0; k < n; k++)
		if (v[k] == pid)
			return true;
	return false;
}

/* Does the process hold an injected engine already (libwss-attach.so
 * mapped)? */
static bool injected(pid_t pid)
{
	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool found = false;
	while (f && !found && fgets(line, sizeof line, f))
		found = strstr(line, "/libwss-attach.so") != NULL;
	if (f)
		fclose(f);
	return found;
}

/* A wss attach of pid, forked: returns its pid, or -1 (said why). */
static pid_t start(pid_t pid, const wss_attach_opts_t *o)
{
	fflush(NULL);
	pid_t c = fork();
	if (c < 0) {
		fprintf(stderr, "wss: attach: fork: %s; process %d is not measured\n", strerror(errno), (int)pid);
		return -1;
	}
	if (c > 0)
		return c;
	wss_attach_opts_t co = *o;
	if (o->metrics) /* the parent's: the endpoint stays with it alone */
		close(wss_metrics_fd(o->metrics));
	co.metrics = NULL;
	co.quiet = true;
	co.duration_ns = 0; /* ended by the parent */
	if (!strcmp(co.method, "auto") && injected(pid))
		co.method = "refbits";
	fflush(NULL);
	_exit(wss_attach_one(pid, &co));
}

/* Children that ended, reaped; returns how many still run. */
static size_t reap(member_t *v, size_t n, bool block)
{
	size_t running = 0;
	for (size_t k = 0; k < n; k++) {
		if (v[k].child <= 0)
			continue;
		int st;
		pid_t w = waitpid(v[k].child, &st, block ? 0 : WNOHANG);
		if (w == v[k].child) {
			v[k].status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			v[k].child = 0;
		} else {
			running++;
		}
	}
	return running;
}

/* Was the profile at path written by reference bits (its header's
 * backend)? */
static bool by_refbits(const char *path)
{
	wss_json_doc_t doc;
	if (wss_session_header(path, &doc))
		return false;
	const char *b = wss_json_get_str(doc.root, "backend");
	bool is = b && !strcmp(b, "refbits");
	wss_json_free(&doc);
	return is;
}

/* The table of the processes measured and the cgroup's total. */
static void say_table(const char *name, member_t *v, size_t n, const wss_attach_opts_t *o, wss_metrics_t *m,
		      const char *why)
{
	/* Each process's profiles since it was first attached to: a process
	 * that exec'd was attached to again, and wrote one an image. */
	char **paths = NULL;
	size_t np = 0, cap = 0, failed = 0, procs = 0;
	for (size_t k = 0; k < n; k++) {
		bool again = false;
		for (size_t j = 0; j < k && !again; j++)
			again = v[j].pid == v[k].pid;
		if (again)
			continue;
		procs++;
		char **found;
		size_t nf = wss_session_find_all(o->cfg.output, v[k].pid, v[k].t0_ns, &found);
		for (size_t j = 0; j < nf; j++)
			if (!wss_reserve(&paths, &cap, np + 1, sizeof *paths))
				paths[np++] = found[j];
			else
				free(found[j]);
		free(found);
		if (!nf && v[k].status && !v[k].left)
			failed++;
	}
	char label[PATH_MAX + 8];
	snprintf(label, sizeof label, "cgroup %s", name);
	fprintf(stderr, "wss: attached to cgroup %s: %zu process%s seen (%s)\n", name, procs, procs == 1 ? "" : "es",
		why);
	if (failed)
		fprintf(stderr, "wss: attach: %zu of them not measured (said above; a process that ends as it is "
				"attached to is one)\n", failed);
	wss_session_t s;
	if (np && !wss_session_build_many(paths, np, label, &s)) {
		wss_session_text(&s, stderr, "wss: ");
		wss_session_release(&s);
	}
	/* Injected, a process's data is what it wrote; by reference bits,
	 * what it read or wrote, per mapping: a table of both mixes them. */
	size_t rb = 0;
	for (size_t k = 0; k < np; k++)
		rb += by_refbits(paths[k]);
	if (rb && rb < np)
		fprintf(stderr, "wss: attach: %zu of the %zu profiles are by reference bits (reads and writes, counted per "
				"mapping: children a measured process forked after the injection, or processes injection "
				"cannot run in), the others injected (writes only)\n", rb, np);
	double q[2];
	wss_metrics_refresh(m, true);
	if (wss_metrics_cgroup_quantiles(m, q))
		fprintf(stderr, "wss: cgroup %s: its data working set fit in %.1f MiB in 95 %% of the windows, %.1f MiB "
				"in 99 %% (its processes' windows summed on one clock: its memory request)\n", name,
			q[0] / 1048576, q[1] / 1048576);
	for (size_t k = 0; k < np; k++)
		fprintf(stderr, "%s%s%s", k ? " " : "wss: profiles: ", paths[k], k + 1 == np ? "\n" : "");
	for (size_t k = 0; k < np; k++)
		free(paths[k]);
	free(paths);
}

int wss_attach_cgroup(const char *path, wss_attach_opts_t *o)
{
	char dir[PATH_MAX], name[PATH_MAX];
	if (!resolve(path, dir, sizeof dir, name, sizeof name))
		return EXIT_USAGE;
	/* The figures are read whether or not they are served: the table's
	 * quantiles are the metrics' own. */
	wss_metrics_t *m = o->metrics ? o->metrics : wss_metrics_open(NULL, NULL);
	if (!m)
		return 1;
	wss_metrics_start(m, NULL, getpid(), unix_ns());
	wss_metrics_cgroup(m, name);
	sigset_t stops;
	wss_attach_stops(&stops);
	member_t *v = NULL;
	pid_t *procs = NULL;
	size_t n = 0, cap = 0, np = 0, capp = 0;
	uint64_t t0 = mono_ns(), stop_at = o->duration_ns ? t0 + o->duration_ns : UINT64_MAX;
	const char *why = "duration";
	fprintf(stderr, "wss: attach: cgroup %s (%s)\n", name, dir);
	for (;;) {
		if (!read_procs(dir, &procs, &np, &capp)) {
			why = "the cgroup was removed";
			break;
		}
		for (size_t k = 0; k < np; k++) {
			/* Seen: being measured, or it could not be, or it left.
			 * One whose measurement ended well while it stays in
			 * the cgroup exec'd: its new program is attached to. */
			bool seen = false;
			for (size_t j = 0; j < n && !seen; j++)
				seen = v[j].pid == procs[k] && (v[j].child > 0 || v[j].status || v[j].left);
			if (seen || procs[k] == getpid() || wss_reserve(&v, &cap, n + 1, sizeof *v))
				continue;
			member_t *e = &v[n++];
			*e = (member_t){.pid = procs[k], .t0_ns = unix_ns()};
			e->child = start(e->pid, o);
			if (e->child < 0) {
				e->child = 0;
				e->status = 1;
			} else {
				wss_metrics_find(m, o->cfg.output, e->pid, e->t0_ns);
			}
		}
		/* A process that left (moved to another cgroup, still alive):
		 * measured no more. */
		for (size_t j = 0; j < n; j++)
			if (v[j].child > 0 && !v[j].left && !has(procs, np, v[j].pid) && kill(v[j].pid, 0) == 0) {
				kill(v[j].child, SIGTERM);
				v[j].left = true;
			}
		reap(v, n, false);
		uint64_t now = mono_ns();
		if (now >= stop_at)
			break;
		if (wss_metrics_sigwait(m, &stops, stop_at - now < SCAN_NS ? stop_at - now : SCAN_NS)) {
			why = "interrupted";
			break;
		}
	}
	/* Each measurement ends as a stop signal ends wss attach's: its
	 * profile gets its summary, an injected engine is unloaded. */
	for (size_t j = 0; j < n; j++)
		if (v[j].child > 0)
			kill(v[j].child, SIGTERM);
	reap(v, n, true);
	say_table(name, v, n, o, m, why);
	size_t ok = 0;
	int first_bad = 0;
	for (size_t j = 0; j < n; j++) {
		if (!v[j].status)
			ok++;
		else if (!first_bad)
			first_bad = v[j].status;
	}
	if (m != o->metrics)
		wss_metrics_close(m);
	free(v);
	free(procs);
	/* Processes come and go: one that could not be measured (it ended as
	 * it was attached to) fails the whole only when none was. */
	return ok || !n ? 0 : first_bad;
}
