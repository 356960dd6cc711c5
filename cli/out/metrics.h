/* Live metrics of a `wss run` or `wss attach` session for Prometheus
 * (docs/metrics.md): while the program runs, wss reads the session's
 * profiles as they grow (the first one's and those its process notes
 * name; under wss attach --cgroup, each attached process's) and keeps each
 * process's latest figures, which it writes as a node_exporter textfile
 * (--metrics-textfile DIR: replaced whole by a rename, removed when the
 * session ends) and serves over HTTP (--metrics ADDR: GET /metrics).  All
 * of it happens in wss's own process: nothing is added to the
 * measured program, which knows nothing of sockets or metrics. */
#ifndef WSS_CLI_METRICS_H
#define WSS_CLI_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

typedef struct wss_metrics wss_metrics_t;

/* Checks and opens what was asked before the program starts: dir (or
 * NULL) must be a directory this user can write; addr (or NULL) is
 * "PORT", ":PORT", "HOST:PORT" or "[V6]:PORT", HOST defaulting to
 * 127.0.0.1 (binding elsewhere must be asked for), PORT 0 a free one.
 * Returns the metrics, or NULL with one line "wss: ..." on stderr. */
wss_metrics_t *wss_metrics_open(const char *dir, const char *addr);

/* The session to read: the output pattern, the program's pid and the time
 * it was started (wss_session_find_first); pattern NULL: the profiles are
 * added by path or looked for one by one (wss attach), and pid is the
 * session label's. */
void wss_metrics_start(wss_metrics_t *m, const char *pattern, pid_t pid, int64_t t0_ns);

/* A profile to read that is known by its path (wss attach writes it, or
 * learns it from the process it injected), with the processes its notes
 * name; pid is the session label's (wss_metrics_start with a NULL
 * pattern first). */
void wss_metrics_add_profile(wss_metrics_t *m, const char *path);

/* A profile to look for, as wss_metrics_start's first (pattern, pid,
 * t0_ns), at each refresh until it is found: one of wss attach
 * --cgroup's processes. */
void wss_metrics_find(wss_metrics_t *m, const char *pattern, pid_t pid, int64_t t0_ns);

/* wss attach --cgroup: the cgroup measured (its path as /proc/PID/cgroup
 * shows it), summed over its processes in wss_cgroup_* families. */
void wss_metrics_cgroup(wss_metrics_t *m, const char *cgroup);

/* Waits up to ns for one of the signals of set (blocked by the caller),
 * serving the endpoint and refreshing the figures meanwhile.  Returns the
 * signal, or 0 when ns passed.  With m NULL, a sigtimedwait.  For wss
 * attach's waits. */
/* The cgroup's data working set that 95 % and 99 % of the windows so far
 * fit in, in bytes (q[0], q[1]): its processes' windows summed on one
 * clock.  False before any sample. */
bool wss_metrics_cgroup_quantiles(const wss_metrics_t *m, double q[2]);

int wss_metrics_sigwait(wss_metrics_t *m, const sigset_t *set, uint64_t ns);

/* The listening socket to poll for a connection, or -1. */
int wss_metrics_fd(const wss_metrics_t *m);
/* Milliseconds until the next refresh is due (0: now). */
int wss_metrics_due_ms(const wss_metrics_t *m);
/* Reads what the profiles gained, and rewrites the textfile when the
 * figures changed; a no-op before it is due unless force. */
void wss_metrics_refresh(wss_metrics_t *m, bool force);
/* Answers one connection waiting on the socket (GET /metrics), with the
 * figures refreshed first. */
void wss_metrics_serve(wss_metrics_t *m);
/* The session ended: the textfile is removed (a finished session exports
 * nothing), the socket closed, everything freed. */
void wss_metrics_close(wss_metrics_t *m);

/* The exposition text of m's figures, in the Prometheus text format 0.0.4
 * or (om) OpenMetrics 1.0, in a malloc'd string of *len bytes; NULL when
 * out of memory. */
char *wss_metrics_text(const wss_metrics_t *m, bool om, size_t *len);

#endif
