/* `wss attach PID`: measure a running process from the kernel's reference
 * and soft-dirty bits, with no code in it (cli/attach/attach.c, the command, and
 * cli/attach/attach_refbits.c; docs/attach.md). */
#ifndef WSS_CLI_ATTACH_H
#define WSS_CLI_ATTACH_H

#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/analyses/analyses.h" /* WSS_CMD_HELP */
#include "config/config.h"

/* What wss attach was asked, its settings built and checked. */
#define WSS_ATTACH_NFLAGS 7
typedef struct wss_attach_opts {
	const char *config; /* -c FILE, or NULL: $WSS_CONFIG */
	const char *method; /* auto, inject or refbits */
	const char *values[WSS_ATTACH_NFLAGS]; /* the session flags given (cli/attach/attach.c's table), or NULL */
	uint64_t duration_ns; /* 0: until the process exits or a stop signal */
	wss_config_t cfg;
	struct wss_metrics *metrics; /* --metrics, --metrics-textfile: served while it waits, or NULL */
	bool quiet; /* errors only on stderr (one of --cgroup's processes) */
} wss_attach_opts_t;

/* The signals that end a measurement: SIGINT, SIGTERM and SIGHUP. */
void wss_attach_stops(sigset_t *set);

/* Measures process pid as o says, with SIGINT, SIGTERM and SIGHUP
 * blocked by the caller (they end it).  Returns wss attach's exit
 * status. */
int wss_attach_one(pid_t pid, const wss_attach_opts_t *o);

/* The reference-bit method (cli/attach/attach_refbits.c), from the first clear
 * to the summary: pid measured with o's settings, which it checks for
 * what reference bits can give.  Returns wss attach's exit status. */
int wss_attach_refbits(pid_t pid, const wss_attach_opts_t *o);

/* What both methods check and name (cli/attach/attach.c).  _check_target: is
 * there such a process, of this user (root: any)?  Prints the reason and
 * returns 2 when not, else 0.  _expand_output: the profile's path, the
 * output pattern as `wss run` expands it; returns 0 or an errno.
 * _open_output: the profile's file, created new (cli/cmd/outfile.h); returns
 * the descriptor, or -1 with the exit status in *status, having said why. */
int wss_attach_check_target(pid_t pid);
int wss_attach_expand_output(const char *pattern, pid_t pid, char *out, size_t n);
int wss_attach_open_output(const char *path, int *status);

/* wss attach --cgroup PATH (cli/attach/attach_cgroup.c): every process of a
 * cgroup v2, as it joins, until the duration ends, a stop signal comes or
 * the cgroup is removed; then each process's figures and the cgroup's
 * total on stderr.  PATH is the cgroup's directory, or its path as
 * /proc/PID/cgroup shows it (under the cgroup2 mount).  _ok says whether
 * PATH is one (false: said why on stderr). */
bool wss_attach_cgroup_ok(const char *path, const wss_attach_opts_t *o);
int wss_attach_cgroup(const char *path, wss_attach_opts_t *o);

/* Runs `wss attach` with its arguments (argv[0] is "attach").  Returns the
 * exit status: 0, 2 for bad usage or a process it cannot attach to (said
 * in one line), 1 when the profile could not be written; or WSS_CMD_HELP. */
int wss_cmd_attach(int argc, char **argv);

/* Refuse up front what the engine would not do: write over an existing
 * profile, or into a missing or unwritable directory.  Prints the reason
 * and returns 2 (3, WSS_EXIT_REFUSED, for another user's name planted in
 * a shared directory), or returns 0 (cli/cmd/wss.c, shared with wss run). */
int wss_check_output(const char *output);
/* The library name (libwss.so, libwss-attach.so) that belongs to this
 * wss: next to an in-tree build, else the one installed in the configured
 * libdir.  Returns 0 with its path in out, or ENOENT (cli/cmd/wss.c). */
int wss_find_library(const char *name, char *out, size_t n);

/* The injected method (cli/attach/attach_inject.c): what wss_cmd_attach has
 * checked and built. */
typedef struct wss_attach_inject {
	pid_t pid;
	const char *config;  /* the session file, absolute, or NULL */
	const char *output;  /* the profile's path pattern, absolute */
	const char *flag_env[8], *flag_val[8]; /* the flags, as environment variables */
	int nflags;
	char flags_list[256]; /* WSS_RUN_FLAGS: which of them were flags */
	uint64_t duration_ns; /* 0: until the process exits or a stop signal */
	struct wss_metrics *metrics; /* served and written while it waits, or NULL */
	bool quiet;	      /* errors only on stderr (one of wss attach --cgroup's processes) */
} wss_attach_inject_t;
/* Injection cannot run on this process (why_not says why): the caller
 * measures with reference bits instead, or fails when asked for inject. */
#define WSS_ATTACH_CANNOT (-1)
/* Measure q->pid by injection; SIGINT, SIGTERM and SIGHUP are blocked by
 * the caller and end it.  Returns an exit status (said on stderr), or
 * WSS_ATTACH_CANNOT with the reason in why_not (nothing done to the
 * process). */
int wss_attach_inject(const wss_attach_inject_t *q, char *why_not, size_t why_len);

#endif
