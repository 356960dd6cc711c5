/* `wss attach PID`: the command.  Its options, the session's settings
 * built from them and checked for what a running process allows, the
 * target and the profile's name checked, and the method chosen:
 * libwss-attach.so injected by ptrace (cli/attach/attach_inject.c) where it can
 * run, else the kernel's reference bits (cli/attach/attach_refbits.c); --cgroup
 * attaches to each process of a cgroup (cli/attach/attach_cgroup.c).
 * docs/attach.md says what each method sees. */
#include "config.h"
#include "cli/attach/attach.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/out/metrics.h"
#include "cli/cmd/outfile.h"
#include "common/pattern.h"
#include "config/config.h"

#define EXIT_USAGE 2

/* The profile's path: the output pattern as `wss run` expands it (%p the
 * target's pid, %t the start time, %n the basename of its argv[0]). */
int wss_attach_expand_output(const char *pattern, pid_t pid, char *out, size_t n)
{
	char arg0[PATH_MAX] = "", path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	FILE *c = fopen(path, "r");
	if (c) {
		size_t m = fread(arg0, 1, sizeof arg0 - 1, c);
		arg0[m] = '\0';
		fclose(c);
	}
	const char *slash = strrchr(arg0, '/');
	return wss_output_expand(pattern, (int)pid, (uint64_t)time(NULL), slash ? slash + 1 : arg0, out, n);
}

/* Is there such a process, of this user (root: any)?  Prints the reason
 * and returns EXIT_USAGE when not. */
int wss_attach_check_target(pid_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (stat(path, &st)) {
		fprintf(stderr, "wss: attach: no process %d\n", (int)pid);
		return EXIT_USAGE;
	}
	if (geteuid() != 0 && st.st_uid != geteuid()) {
		fprintf(stderr, "wss: attach: process %d belongs to another user (uid %u): wss attaches to its own user's "
				"processes\n", (int)pid, (unsigned)st.st_uid);
		return EXIT_USAGE;
	}
	return 0;
}

/* The profile, by the rule of every file wss writes (cli/cmd/outfile.h): a
 * new file, never over an existing one; an existing FIFO or character
 * device (/dev/null, /dev/stdout on a pipe) is written as it is, if it is
 * not another user's planted in a shared directory.  Returns the
 * descriptor, or -1 with the exit status in *status, having said why. */
int wss_attach_open_output(const char *path, int *status)
{
	wss_outfile_t o;
	int r = wss_outfile_open(&o, path, WSS_OUTFILE_NEW);
	int fd = o.fd;
	o.fd = -1; /* ours now: closed with the profile */
	*status = wss_outfile_refused(&o, path) ? WSS_EXIT_REFUSED : EXIT_USAGE;
	wss_outfile_close(&o, !r);
	if (r && *status != WSS_EXIT_REFUSED)
		fprintf(stderr, "wss: %s: %s\n", path,
			r == EEXIST ? "File exists (wss never overwrites a profile)" : strerror(r));
	return r ? -1 : fd;
}

static int parse_duration(const char *v, uint64_t *ns)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || !(x > 0))
		return EINVAL;
	double mul = !strcmp(end, "ns")  ? 1
		     : !strcmp(end, "us") ? 1e3
		     : !strcmp(end, "ms") ? 1e6
		     : !strcmp(end, "s")  ? 1e9
		     : !strcmp(end, "m")  ? 60e9
		     : !strcmp(end, "h")  ? 3600e9
					 : 0;
	if (!mul || x * mul > 1e18)
		return EINVAL;
	*ns = (uint64_t)(x * mul);
	return 0;
}

static int settings(wss_attach_opts_t *o);

/* The session flags wss attach takes, as wss run does: each sets one key. */
static const struct attach_flag {
	const char *shortname, *longname, *key;
	wss_key_t id;
} attach_flags[] = {
	{"-o", "--output", "session.output", WSS_KEY_SESSION_OUTPUT},
	{NULL, "--interval", "session.interval", WSS_KEY_SESSION_INTERVAL},
	{NULL, "--window", "session.window", WSS_KEY_SESSION_WINDOW},
	{NULL, "--mode", "track.mode", WSS_KEY_TRACK_MODE},
	{NULL, "--sample-rate", "track.sample_rate", WSS_KEY_TRACK_SAMPLE_RATE},
	{NULL, "--overhead", "session.overhead", WSS_KEY_SESSION_OVERHEAD},
	{NULL, "--precision", "session.precision", WSS_KEY_SESSION_PRECISION},
};
#define NATTACH_FLAGS (sizeof attach_flags / sizeof *attach_flags)
_Static_assert(NATTACH_FLAGS == WSS_ATTACH_NFLAGS, "wss_attach_opts_t holds a value a flag");

void wss_attach_stops(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGHUP);
}

int wss_cmd_attach(int argc, char **argv)
{
	wss_attach_opts_t o = {.method = "auto"};
	const char *pidarg = NULL, *metrics_addr = NULL, *metrics_dir = NULL, *cgroup = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			return WSS_CMD_HELP;
		for (size_t k = 0; k < NATTACH_FLAGS && !slot; k++)
			if ((attach_flags[k].shortname && !strcmp(a, attach_flags[k].shortname)) ||
			    !strcmp(a, attach_flags[k].longname))
				slot = &o.values[k];
		if (slot)
			;
		else if (!strcmp(a, "-c") || !strcmp(a, "--config"))
			slot = &o.config;
		else if (!strcmp(a, "--method"))
			slot = &o.method;
		else if (!strcmp(a, "--metrics"))
			slot = &metrics_addr;
		else if (!strcmp(a, "--metrics-textfile"))
			slot = &metrics_dir;
		else if (!strcmp(a, "--cgroup"))
			slot = &cgroup;
		else if (!strcmp(a, "--duration")) {
			if (i + 1 >= argc || parse_duration(argv[++i], &o.duration_ns)) {
				fprintf(stderr, "wss: attach: --duration needs a duration (500ms, 2s, 10m, 1h)%s%s\n",
					i < argc ? ": " : "", i < argc ? argv[i] : "");
				return EXIT_USAGE;
			}
			continue;
		} else if (a[0] == '-') {
			static const char *const run_only[] = {"--code", "--time-base", "--backend", "--trace", "--trace-max",
							       NULL};
			for (int k = 0; run_only[k]; k++)
				if (!strncmp(a, run_only[k], strlen(run_only[k])) &&
				    (a[strlen(run_only[k])] == '\0' || a[strlen(run_only[k])] == '=')) {
					fprintf(stderr,
						"wss: attach: %s is an option of wss run, not of wss attach (docs/attach.md "
						"says what attach measures)\n",
						run_only[k]);
					return EXIT_USAGE;
				}
			fprintf(stderr, "wss: attach: unknown option %s (wss attach [options] PID; wss --help)\n", a);
			return EXIT_USAGE;
		} else if (pidarg) {
			fprintf(stderr, "wss: attach: one process at a time: %s (a container's processes: --cgroup PATH)\n",
				a);
			return EXIT_USAGE;
		} else {
			pidarg = a;
			continue;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "wss: attach: missing value for %s\n", a);
			return EXIT_USAGE;
		}
		*slot = argv[++i];
	}
	char *end;
	long pid = pidarg ? strtol(pidarg, &end, 10) : 0;
	if (cgroup && pidarg) {
		fprintf(stderr, "wss: attach: a process id or --cgroup PATH, not both\n");
		return EXIT_USAGE;
	}
	if (!cgroup && (!pidarg || *end || pid <= 0 || pid > INT32_MAX)) {
		fprintf(stderr, "wss: attach: %s (wss attach [options] PID, or --cgroup PATH)\n",
			pidarg ? "not a process id" : "no process given");
		return EXIT_USAGE;
	}
	int r = settings(&o);
	if (r)
		return r;
	if (cgroup && !wss_attach_cgroup_ok(cgroup, &o))
		return EXIT_USAGE;
	if ((metrics_addr || metrics_dir) && !(o.metrics = wss_metrics_open(metrics_dir, metrics_addr)))
		return EXIT_USAGE;

	/* SIGINT, SIGTERM and SIGHUP end the measurement: blocked from here
	 * on and waited for (sigtimedwait, or a signalfd with the metrics),
	 * so one that comes at any instant is seen at once, never in the
	 * middle of an injected call. */
	sigset_t stops;
	wss_attach_stops(&stops);
	sigprocmask(SIG_BLOCK, &stops, NULL);
	r = cgroup ? wss_attach_cgroup(cgroup, &o) : wss_attach_one((pid_t)pid, &o);
	wss_metrics_close(o.metrics);
	return r;
}

/* The settings (defaults, session file, environment, flags), checked for
 * what attach can do.  Returns 0 or EXIT_USAGE, having said why. */
static int settings(wss_attach_opts_t *o)
{
	if (strcmp(o->method, "auto") && strcmp(o->method, "inject") && strcmp(o->method, "refbits")) {
		fprintf(stderr, "wss: attach: --method %s: one of auto, inject, refbits\n", o->method);
		return EXIT_USAGE;
	}
	extern char **environ;
	wss_config_t *cfg = &o->cfg;
	char err[1024];
	if (wss_config_build(cfg, o->config ? o->config : getenv("WSS_CONFIG"), environ, NULL, err, sizeof err)) {
		fprintf(stderr, "wss: %s\n", err);
		return EXIT_USAGE;
	}
	for (size_t k = 0; k < NATTACH_FLAGS; k++)
		if (o->values[k] && wss_config_set_flag(cfg, attach_flags[k].key, o->values[k], attach_flags[k].longname,
							err, sizeof err)) {
			fprintf(stderr, "wss: %s\n", err);
			return EXIT_USAGE;
		}
	if (wss_config_validate(cfg, err, sizeof err)) {
		fprintf(stderr, "wss: %s\n", err);
		return EXIT_USAGE;
	}
	if (cfg->track_code) {
		fprintf(stderr, "wss: attach: track.code: not with wss attach (the code working set needs wss's fault "
				"handler in the process from its start: wss run --code)\n");
		return EXIT_USAGE;
	}
	if (cfg->time_base == WSS_TIME_MANUAL) {
		fprintf(stderr, "wss: attach: session.time_base = \"manual\": a running process does not call wss_tick\n");
		return EXIT_USAGE;
	}
	if (strcmp(o->method, "refbits") && cfg->backend != WSS_BACKEND_AUTO && cfg->backend != WSS_BACKEND_UFFD_WP) {
		fprintf(stderr, "wss: attach: track.backend = \"%s\": wss attach tracks a running process with uffd-wp "
				"(or --method refbits)\n", wss_backend_name(cfg->backend));
		return EXIT_USAGE;
	}
	return 0;
}

int wss_attach_one(pid_t pid, const wss_attach_opts_t *o)
{
	const wss_config_t *cfgp = &o->cfg;
	int r = wss_attach_check_target(pid);
	if (r)
		return r;
	if (strcmp(o->method, "refbits")) {
		wss_attach_inject_t q = {.pid = pid, .duration_ns = o->duration_ns, .metrics = o->metrics,
					 .quiet = o->quiet};
		char config_abs[PATH_MAX], output_abs[PATH_MAX + WSS_OUTPUT_MAX], cwd[PATH_MAX];
		const char *cf = o->config ? o->config : getenv("WSS_CONFIG");
		if (cf && *cf && realpath(cf, config_abs))
			q.config = config_abs;
		if (cfgp->output[0] != '/' && getcwd(cwd, sizeof cwd)) {
			snprintf(output_abs, sizeof output_abs, "%s/%s", cwd, cfgp->output);
			q.output = output_abs;
		} else {
			q.output = cfgp->output;
		}
		char names[NATTACH_FLAGS][96];
		for (size_t k = 0; k < NATTACH_FLAGS; k++) {
			if (!o->values[k] || attach_flags[k].id == WSS_KEY_SESSION_OUTPUT)
				continue;
			wss_config_env_name(attach_flags[k].id, names[k], sizeof names[k]);
			q.flag_env[q.nflags] = names[k];
			q.flag_val[q.nflags++] = o->values[k];
		}
		for (size_t k = 0; k < NATTACH_FLAGS; k++) {
			if (!o->values[k])
				continue;
			char env[96];
			wss_config_env_name(attach_flags[k].id, env, sizeof env);
			size_t used = strlen(q.flags_list);
			snprintf(q.flags_list + used, sizeof q.flags_list - used, "%s%s", used ? "," : "", env);
		}
		if ((r = wss_check_output(q.output)))
			return r;
		char why[1024] = "";
		r = wss_attach_inject(&q, why, sizeof why);
		if (r != WSS_ATTACH_CANNOT)
			return r;
		if (!strcmp(o->method, "inject")) {
			fprintf(stderr, "wss: attach: %s\n", why);
			return EXIT_USAGE;
		}
		if (!o->quiet)
			fprintf(stderr, "wss: attach: cannot inject: %s; measuring with reference bits (--method refbits)\n",
				why);
	}
	return wss_attach_refbits(pid, o);
}
