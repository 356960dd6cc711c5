/* Live metrics of a `wss run` session for Prometheus (docs/metrics.md):
 * while the program runs, wss run reads the session's profiles as they
 * grow (the first one's and those its process notes name) and keeps each
 * process's latest figures, which it writes as a node_exporter textfile
 * (--metrics-textfile DIR: replaced whole by a rename, removed when the
 * session ends) and serves over HTTP (--metrics ADDR: GET /metrics).  All
 * of it happens in wss run's own process: nothing is added to the
 * measured program, which knows nothing of sockets or metrics. */
#ifndef WSS_CLI_METRICS_H
#define WSS_CLI_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct wss_metrics wss_metrics_t;

/* Checks and opens what was asked before the program starts: dir (or
 * NULL) must be a directory this user can write; addr (or NULL) is
 * "PORT", ":PORT", "HOST:PORT" or "[V6]:PORT", HOST defaulting to
 * 127.0.0.1 (binding elsewhere must be asked for), PORT 0 a free one.
 * Returns the metrics, or NULL with one line "wss: ..." on stderr. */
wss_metrics_t *wss_metrics_open(const char *dir, const char *addr);

/* The session to read: the output pattern, the program's pid and the time
 * it was started (wss_session_find_first). */
void wss_metrics_start(wss_metrics_t *m, const char *pattern, pid_t pid, int64_t t0_ns);

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

/* The exposition text of m's figures (Prometheus text format 0.0.4), in a
 * malloc'd string of *len bytes; NULL when out of memory.  For the
 * tests' unit checks too. */
char *wss_metrics_text(const wss_metrics_t *m, size_t *len);

#endif
