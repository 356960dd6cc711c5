/* Live metrics (metrics.h).  Each profile is read from where the last
 * read stopped, whole lines only (the engine appends one record a line,
 * a sample per tick), and only the records the metrics need are parsed:
 * header, sample, peak, summary, and the first profile's process notes,
 * which name the other profiles.  Figures are in bytes (Prometheus' base
 * unit), from pages times the profile's page size. */
#include "config.h"
#include "cli/out/metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/analyses/analyses.h"
#include "cli/out/httpd.h"
#include "cli/model/json.h"
#include "cli/model/load.h"
#include "cli/cmd/outfile.h"
#include "cli/analyses/rightsize.h"
#include "cli/model/session.h"
#include "common/kinds.h"

/* The figures are refreshed at most this often (a scrape refreshes them
 * too): the profiles grow by a sample an interval. */
#define REFRESH_MS 500
/* A record longer than this is none the metrics read (modules, stacks). */
#define LINE_MAX_READ (1 << 20)

typedef struct mproc {
	char *path;
	int fd;
	char *buf; /* a partial line */
	size_t len, cap;
	bool skipping; /* inside a line too long to be a record we read */
	bool header, ended;
	int64_t pid, page_size, window_ns;
	char comm[64];
	char cgroup[256];
	int64_t v[3];	  /* the last sample's data, read, write pages; -1: absent */
	int64_t peak[3];
	bool ci;
	double lo, hi;	  /* the data estimate's 95 % interval */
	int64_t rate;	  /* 1 in rate pages counted */
	int64_t kinds[WSS_KIND_N]; /* data pages by kind; -1: absent */
	double cost;	  /* the slowdown measured in the last interval, -1: absent */
	uint64_t samples, peaks;
	int64_t start_ns;   /* the header's start_unix_ns */
	int64_t *at, *data; /* every sample's end (unix ns) and data pages, for the quantiles */
	size_t nat, capat, capdata;
} mproc_t;

struct wss_metrics {
	char *dir, *file; /* the textfile's directory and path, or NULL */
	int listen_fd;
	char *pattern;
	pid_t leader;
	int64_t t0_ns;
	mproc_t *v;
	size_t n, cap;
	int64_t last_ms;
	bool changed, wrote;
	char *cgroup; /* wss attach --cgroup's, or NULL */
	struct pending {
		pid_t pid;
		int64_t t0_ns;
	} *pend; /* profiles looked for (wss_metrics_find), by find_pattern */
	char *find_pattern;
	size_t npend, cappend;
	int sigfd;    /* wss_metrics_sigwait's signalfd, -1 before */
};

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the profiles ---- */

static mproc_t *proc_add(wss_metrics_t *m, char *path)
{
	for (size_t k = 0; k < m->n; k++)
		if (!strcmp(m->v[k].path, path)) {
			free(path);
			return NULL;
		}
	if (wss_reserve(&m->v, &m->cap, m->n + 1, sizeof *m->v)) {
		free(path);
		return NULL;
	}
	mproc_t *p = &m->v[m->n++];
	memset(p, 0, sizeof *p);
	p->path = path;
	p->fd = -1;
	p->pid = -1;
	p->cost = -1;
	for (int s = 0; s < 3; s++)
		p->v[s] = p->peak[s] = -1;
	for (int k = 0; k < WSS_KIND_N; k++)
		p->kinds[k] = -1;
	return p;
}

static void read_cgroup(mproc_t *p)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%" PRId64 "/cgroup", p->pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, "0::", 3)) { /* cgroup v2 */
			line[strcspn(line, "\n")] = '\0';
			snprintf(p->cgroup, sizeof p->cgroup, "%.*s", (int)sizeof p->cgroup - 1, line + 3);
		}
	fclose(f);
}

static void on_header(mproc_t *p, const wss_json_t *r)
{
	wss_json_get_int(r, "pid", &p->pid);
	wss_json_get_int(r, "page_size", &p->page_size);
	wss_json_get_int(r, "window_ns", &p->window_ns);
	wss_json_get_int(r, "start_unix_ns", &p->start_ns);
	/* The kernel's name for it (what ps and top show: redis-server, not
	 * the redis-check-rdb its link points to), else the exe's file name. */
	char path[64];
	snprintf(path, sizeof path, "/proc/%" PRId64 "/comm", p->pid);
	FILE *f = fopen(path, "r");
	p->comm[0] = '\0';
	if (f && fgets(p->comm, sizeof p->comm, f))
		p->comm[strcspn(p->comm, "\n")] = '\0';
	if (f)
		fclose(f);
	if (!p->comm[0]) {
		const char *exe = wss_json_get_str(r, "exe");
		const char *base = exe ? strrchr(exe, '/') : NULL;
		snprintf(p->comm, sizeof p->comm, "%s", base ? base + 1 : exe ? exe : "?");
	}
	p->header = true;
	read_cgroup(p);
}

static void on_sample(mproc_t *p, const wss_json_t *r)
{
	static const char *const keys[3] = {"data_pages", "read_pages", "write_pages"};
	for (int s = 0; s < 3; s++) {
		int64_t x;
		p->v[s] = wss_json_get_int(r, keys[s], &x) && x >= 0 ? x : -1;
		if (p->v[s] > p->peak[s])
			p->peak[s] = p->v[s];
	}
	if (!wss_json_get_int(r, "rate", &p->rate) || p->rate < 1)
		p->rate = 1;
	const wss_json_t *ci = wss_json_get(wss_json_get(r, "ci"), "data");
	p->ci = ci && ci->type == WSS_JSON_ARRAY && ci->n == 2 && ci->items[0]->type == WSS_JSON_NUMBER &&
		ci->items[1]->type == WSS_JSON_NUMBER;
	if (p->ci) {
		p->lo = ci->items[0]->d;
		p->hi = ci->items[1]->d;
	}
	const wss_json_t *kinds = wss_json_get(r, "kinds");
	for (int k = 1; k < WSS_KIND_N; k++) {
		int64_t x;
		p->kinds[k] = wss_json_get_int(wss_json_get(kinds, wss_kind_name(k)), "data", &x) ? x : -1;
	}
	/* As the budget weighs it (cli/model/load.c, wss_load_overhead_pct). */
	const wss_json_t *c = wss_json_get(r, "cost");
	int64_t f = 0, t = 0, ch = 0, code = 0, prog = 0, wall = 0;
	p->cost = -1;
	if (c && wss_json_get_int(c, "faults_ns", &f) && wss_json_get_int(c, "program_ns", &prog) && prog > 0) {
		wss_json_get_int(c, "tick_ns", &t);
		wss_json_get_int(c, "change_ns", &ch);
		wss_json_get_int(c, "code_ns", &code);
		wss_json_get_int(c, "wall_ns", &wall);
		double base = (double)(wall > prog ? wall : prog);
		p->cost = (double)(f + code) / (double)prog + (double)(t + ch) / base;
	}
	int64_t end = 0;
	wss_json_get_int(r, "t_ns", &end);
	if (p->v[0] >= 0 && !wss_reserve(&p->at, &p->capat, p->nat + 1, sizeof *p->at) &&
	    !wss_reserve(&p->data, &p->capdata, p->nat + 1, sizeof *p->data)) {
		p->at[p->nat] = p->start_ns + end;
		p->data[p->nat++] = p->v[0];
	}
	p->samples++;
	if (!p->cgroup[0])
		read_cgroup(p);
}

/* The first profile's note of another process's profile. */
static void on_process(wss_metrics_t *m, const mproc_t *p, const wss_json_t *r)
{
	const char *prof = wss_json_get_str(r, "profile");
	if (!prof || p != &m->v[0])
		return;
	char *path = wss_load_beside(p->path, prof);
	if (path)
		proc_add(m, path);
}

/* One whole line of profile k: the records the metrics read. */
static void on_line(wss_metrics_t *m, size_t k, const char *line, size_t len)
{
	static const char *const wanted[] = {"header", "sample", "peak", "summary", "process"};
	static const char pre[] = "{\"type\":\"";
	if (len < sizeof pre || memcmp(line, pre, sizeof pre - 1))
		return;
	const char *t = line + sizeof pre - 1;
	size_t w = 0;
	while (w < sizeof wanted / sizeof *wanted &&
	       (strncmp(t, wanted[w], strlen(wanted[w])) || t[strlen(wanted[w])] != '"'))
		w++;
	if (w == sizeof wanted / sizeof *wanted)
		return;
	wss_json_doc_t doc;
	wss_json_error_t err;
	if (wss_json_parse(line, len, &doc, &err))
		return; /* not the engine's: nothing to export from it */
	mproc_t *p = &m->v[k];
	if (w == 0)
		on_header(p, doc.root);
	else if (w == 1)
		on_sample(p, doc.root);
	else if (w == 2)
		p->peaks++;
	else if (w == 3)
		p->ended = true;
	else
		on_process(m, p, doc.root);
	m->changed = true;
	wss_json_free(&doc);
}

/* What profile k gained since the last read. */
static void read_more(wss_metrics_t *m, size_t k)
{
	mproc_t *p = &m->v[k];
	if (p->fd < 0 && (p->fd = open(p->path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	char chunk[1 << 16];
	ssize_t n;
	while ((n = read(p->fd, chunk, sizeof chunk)) > 0) {
		for (ssize_t i = 0; i < n;) {
			const char *nl = memchr(chunk + i, '\n', (size_t)(n - i));
			size_t take = nl ? (size_t)(nl - (chunk + i)) : (size_t)(n - i);
			if (!p->skipping && p->len + take > LINE_MAX_READ)
				p->skipping = true;
			if (!p->skipping) {
				if (wss_reserve(&p->buf, &p->cap, p->len + take + 1, 1))
					p->skipping = true;
				else {
					memcpy(p->buf + p->len, chunk + i, take);
					p->len += take;
				}
			}
			i += (ssize_t)take;
			if (!nl)
				break;
			i++;
			if (!p->skipping) {
				p->buf[p->len] = '\0';
				on_line(m, k, p->buf, p->len);
				p = &m->v[k]; /* a note may have grown the array */
			}
			p->len = 0;
			p->skipping = false;
		}
	}
}

/* ---- the exposition ---- */

/* A label value: backslash, quote and newline escaped. */
static void label(FILE *o, const char *name, const char *v)
{
	fprintf(o, "%s=\"", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', o);
		if (*v == '\n')
			fputs("\\n", o);
		else
			fputc(*v, o);
	}
	fputc('"', o);
}

static void labels(FILE *o, const wss_metrics_t *m, const mproc_t *p, const char *k, const char *v)
{
	fprintf(o, "{session=\"%d\",pid=\"%" PRId64 "\",", (int)m->leader, p->pid);
	label(o, "comm", p->comm);
	if (p->cgroup[0]) {
		fputc(',', o);
		label(o, "cgroup", p->cgroup);
	}
	if (k) {
		fputc(',', o);
		label(o, k, v);
	}
	fputc('}', o);
}

/* A family's HELP and TYPE lines.  OpenMetrics names a counter's family
 * without the "_total" its samples carry. */
static void family(FILE *o, const char *name, const char *type, const char *help, bool om)
{
	size_t n = strlen(name);
	if (om && !strcmp(type, "counter") && n > 6 && !strcmp(name + n - 6, "_total"))
		n -= 6;
	fprintf(o, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)n, name, help, (int)n, name, type);
}

/* Each family once, its samples for every process with a header. */
enum {
	F_WS, F_LO, F_HI, F_PEAK, F_P95, F_P99, F_KIND, F_WINDOW, F_FRACTION, F_OVERHEAD, F_RSS, F_SAMPLES, F_PEAKS,
	F_RUNNING, F_N
};

static const struct {
	const char *name, *type, *help;
} families[F_N] = {
	{"wss_working_set_bytes", "gauge",
	 "Memory touched in the last window: series data (any touch), read (touched, not written), write (written); "
	 "an estimate where sampled."},
	{"wss_working_set_lower_bytes", "gauge",
	 "Lower bound of the 95 % interval of the data estimate (the count itself where every page was counted)."},
	{"wss_working_set_upper_bytes", "gauge", "Upper bound of the 95 % interval of the data estimate."},
	{"wss_working_set_peak_bytes", "gauge", "The largest working set of any window so far, by series."},
	{"wss_working_set_p95_bytes", "gauge",
	 "The data working set that 95 % of the windows so far fit in (nearest rank): the memory to size for."},
	{"wss_working_set_p99_bytes", "gauge", "The data working set that 99 % of the windows so far fit in."},
	{"wss_working_set_kind_bytes", "gauge", "The data working set of the last window by kind of memory."},
	{"wss_window_seconds", "gauge", "The working-set window."},
	{"wss_sampled_fraction", "gauge", "The fraction of pages watched in the last interval (1: every page counted)."},
	{"wss_overhead_ratio", "gauge",
	 "The program's slowdown measured in the last interval: fault time against its time, the tick's against the "
	 "interval."},
	{"wss_rss_bytes", "gauge", "Resident set size, for comparison (/proc/PID/statm)."},
	{"wss_samples_total", "counter", "Intervals recorded."},
	{"wss_peaks_total", "counter", "Peaks recorded: windows well above the working set's recent mean."},
	{"wss_process_running", "gauge", "1 while the process runs, 0 once its profile has its summary."},
};

static int64_t rss_bytes(const mproc_t *p)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%" PRId64 "/statm", p->pid);
	FILE *f = fopen(path, "r");
	unsigned long long size, res;
	int got = f ? fscanf(f, "%llu %llu", &size, &res) : 0;
	if (f)
		fclose(f);
	return got == 2 ? (int64_t)res * (int64_t)sysconf(_SC_PAGESIZE) : -1;
}

static const double right_q[2] = {0.95, 0.99};

static void family_samples(FILE *o, const wss_metrics_t *m, int fam, const mproc_t *p)
{
	static const char *const series[3] = {"data", "read", "write"};
	double ps = (double)(p->page_size > 0 ? p->page_size : 4096);
	switch (fam) {
	case F_WS:
	case F_PEAK:
		for (int s = 0; s < 3; s++) {
			int64_t x = fam == F_WS ? p->v[s] : p->peak[s];
			if (x < 0)
				continue;
			fputs(families[fam].name, o);
			labels(o, m, p, "series", series[s]);
			fprintf(o, " %.0f\n", (double)x * ps);
		}
		return;
	case F_LO:
	case F_HI:
		if (p->v[0] < 0)
			return;
		fputs(families[fam].name, o);
		labels(o, m, p, NULL, NULL);
		fprintf(o, " %.0f\n", (p->ci ? (fam == F_LO ? p->lo : p->hi) : (double)p->v[0]) * ps);
		return;
	case F_P95:
	case F_P99: {
		int64_t *v = p->nat ? malloc(p->nat * sizeof *v) : NULL, q[2];
		if (v) {
			memcpy(v, p->data, p->nat * sizeof *v);
			if (wss_quantiles(v, p->nat, right_q, q)) {
				fputs(families[fam].name, o);
				labels(o, m, p, NULL, NULL);
				fprintf(o, " %.0f\n", (double)q[fam == F_P99] * ps);
			}
		}
		free(v);
		return;
	}
	case F_KIND:
		for (int k = 1; k < WSS_KIND_N; k++)
			if (p->kinds[k] >= 0) {
				fputs(families[fam].name, o);
				labels(o, m, p, "kind", wss_kind_name(k));
				fprintf(o, " %.0f\n", (double)p->kinds[k] * ps);
			}
		return;
	default:
		break;
	}
	double v;
	if (fam == F_WINDOW && p->window_ns > 0)
		v = (double)p->window_ns / 1e9;
	else if (fam == F_FRACTION && p->samples)
		v = 1.0 / (double)p->rate;
	else if (fam == F_OVERHEAD && p->cost >= 0)
		v = p->cost;
	else if (fam == F_RSS && !p->ended && (v = (double)rss_bytes(p)) >= 0)
		;
	else if (fam == F_SAMPLES || fam == F_PEAKS || fam == F_RUNNING)
		v = fam == F_SAMPLES ? (double)p->samples : fam == F_PEAKS ? (double)p->peaks : !p->ended;
	else
		return;
	fputs(families[fam].name, o);
	labels(o, m, p, NULL, NULL);
	fprintf(o, " %.9g\n", v);
}

/* ---- a cgroup's sums (wss attach --cgroup) ---- */

/* The cgroup's working set over time, on a grid of its processes'
 * shortest window: at each point the sum of every process's window then.
 * The grid ends where a process still running has no sample yet (its
 * part would read 0).  Its 95 % and 99 % quantiles into q; false when
 * there is no point. */
static bool cgroup_quantiles(const wss_metrics_t *m, int64_t *q)
{
	int64_t first = INT64_MAX, last = INT64_MIN, live_last = INT64_MAX, step = INT64_MAX;
	for (size_t k = 0; k < m->n; k++) {
		const mproc_t *p = &m->v[k];
		if (!p->nat)
			continue;
		first = p->at[0] < first ? p->at[0] : first;
		last = p->at[p->nat - 1] > last ? p->at[p->nat - 1] : last;
		if (!p->ended && p->at[p->nat - 1] < live_last)
			live_last = p->at[p->nat - 1];
		if (p->window_ns > 0 && p->window_ns < step)
			step = p->window_ns;
	}
	if (first > last)
		return false;
	if (live_last < last)
		last = live_last;
	if (step == INT64_MAX)
		step = 100000000;
	while ((last - first) / step > 100000) /* a day of 1 s windows at most */
		step *= 2;
	size_t n = (size_t)((last - first) / step) + 1;
	int64_t *v = malloc(n * sizeof *v);
	if (!v)
		return false;
	for (size_t i = 0; i < n; i++) {
		v[i] = 0;
		for (size_t k = 0; k < m->n; k++)
			v[i] += wss_series_at(m->v[k].at, m->v[k].data, m->v[k].nat, m->v[k].window_ns, first + (int64_t)i * step);
	}
	bool ok = wss_quantiles(v, n, right_q, q);
	free(v);
	return ok;
}

static void cgroup_text(FILE *o, const wss_metrics_t *m, bool om)
{
	static const char *const series[3] = {"data", "read", "write"};
	int64_t sum[3] = {0, 0, 0}, running = 0, q[2];
	bool has[3] = {false, false, false};
	double ps = 4096;
	for (size_t k = 0; k < m->n; k++) {
		const mproc_t *p = &m->v[k];
		if (!p->header || p->ended)
			continue;
		running++;
		ps = p->page_size > 0 ? (double)p->page_size : ps;
		for (int s = 0; s < 3; s++)
			if (p->v[s] >= 0) {
				sum[s] += p->v[s];
				has[s] = true;
			}
	}
	family(o, "wss_cgroup_working_set_bytes", "gauge",
	       "The cgroup's working set: the sum of its processes' last windows, by series (a page two processes "
	       "touched counts in each).", om);
	for (int s = 0; s < 3; s++)
		if (has[s]) {
			fputs("wss_cgroup_working_set_bytes{", o);
			label(o, "cgroup", m->cgroup);
			fprintf(o, ",series=\"%s\"} %.0f\n", series[s], (double)sum[s] * ps);
		}
	bool qs = cgroup_quantiles(m, q);
	for (int k = 0; k < 2; k++) {
		const char *name = k ? "wss_cgroup_working_set_p99_bytes" : "wss_cgroup_working_set_p95_bytes";
		family(o, name, "gauge",
		       k ? "The cgroup's data working set that 99 % of the windows so far fit in."
			 : "The cgroup's data working set that 95 % of the windows so far fit in (its processes' windows "
			   "summed on one clock): its memory request.", om);
		if (qs) {
			fprintf(o, "%s{", name);
			label(o, "cgroup", m->cgroup);
			fprintf(o, "} %.0f\n", (double)q[k] * ps);
		}
	}
	family(o, "wss_cgroup_processes", "gauge", "The cgroup's processes measured now.", om);
	fputs("wss_cgroup_processes{", o);
	label(o, "cgroup", m->cgroup);
	fprintf(o, "} %" PRId64 "\n", running);
}

char *wss_metrics_text(const wss_metrics_t *m, bool om, size_t *len)
{
	char *s = NULL;
	FILE *o = open_memstream(&s, len);
	if (!o)
		return NULL;
	for (int fam = 0; fam < F_N; fam++) {
		family(o, families[fam].name, families[fam].type, families[fam].help, om);
		for (size_t k = 0; k < m->n; k++)
			if (m->v[k].header)
				family_samples(o, m, fam, &m->v[k]);
	}
	if (m->cgroup)
		cgroup_text(o, m, om);
	if (om)
		fputs("# EOF\n", o);
	if (fclose(o)) {
		free(s);
		return NULL;
	}
	return s;
}

/* ---- the textfile ---- */

static void write_textfile(wss_metrics_t *m)
{
	size_t len;
	char *text = wss_metrics_text(m, false, &len);
	if (!text)
		return;
	wss_outfile_t f;
	int r = wss_outfile_open(&f, m->file, WSS_OUTFILE_REPLACE);
	bool ok = !r && write(f.fd, text, len) == (ssize_t)len;
	r = wss_outfile_close(&f, ok);
	free(text);
	m->wrote |= ok && !r;
	static bool said;
	if ((!ok || r) && !said) {
		said = true; /* once: the program runs on, and so do the metrics over HTTP */
		fprintf(stderr, "wss: %s: cannot write the metrics: %s\n", m->file, strerror(r ? r : errno));
	}
}

void wss_metrics_refresh(wss_metrics_t *m, bool force)
{
	if (!m || (!force && wss_metrics_due_ms(m) > 0))
		return;
	m->last_ms = now_ms();
	if (!m->n && m->pattern) {
		char *first = wss_session_find_first(m->pattern, m->leader, m->t0_ns);
		if (first)
			proc_add(m, first);
	}
	/* A pending profile is the first of pid's newer than t0 not read yet
	 * (a process attached to again after it exec'd has two). */
	for (size_t k = 0; k < m->npend;) {
		char **paths;
		size_t np = wss_session_find_all(m->find_pattern, m->pend[k].pid, m->pend[k].t0_ns, &paths);
		bool added = false;
		for (size_t j = 0; j < np; j++)
			if (!added && proc_add(m, paths[j]))
				added = true;
			else if (added)
				free(paths[j]);
		free(paths);
		if (added)
			m->pend[k] = m->pend[--m->npend];
		else
			k++;
	}
	for (size_t k = 0; k < m->n; k++)
		read_more(m, k);
	if (m->file && m->changed)
		write_textfile(m);
	m->changed = false;
}

int wss_metrics_due_ms(const wss_metrics_t *m)
{
	int64_t left = m->last_ms + REFRESH_MS - now_ms();
	return left > 0 ? (int)left : 0;
}

/* OpenMetrics to a client that accepts it (Prometheus asks for it first),
 * the text format 0.0.4 to any other. */
static char *text_cb(void *arg, const char *accept, const char **type, size_t *len)
{
	wss_metrics_t *m = arg;
	bool om = accept && strstr(accept, "application/openmetrics-text");
	wss_metrics_refresh(m, true);
	*type = om ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
		   : "text/plain; version=0.0.4; charset=utf-8";
	return wss_metrics_text(m, om, len);
}

void wss_metrics_serve(wss_metrics_t *m) { wss_httpd_answer(m->listen_fd, "/metrics", text_cb, m); }

/* ---- open and close ---- */

wss_metrics_t *wss_metrics_open(const char *dir, const char *addr)
{
	wss_metrics_t *m = calloc(1, sizeof *m);
	if (!m) {
		perror("wss");
		return NULL;
	}
	m->listen_fd = -1;
	m->sigfd = -1;
	if (dir) {
		struct stat st;
		if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
			fprintf(stderr, "wss: --metrics-textfile: %s: %s\n", dir,
				errno == ENOENT		? "No such directory"
				: !S_ISDIR(st.st_mode) ? "not a directory"
						       : "directory not writable");
			free(m);
			return NULL;
		}
		if (!(m->dir = strdup(dir))) {
			perror("wss");
			wss_metrics_close(m);
			return NULL;
		}
	}
	char url[96];
	if (addr && (m->listen_fd = wss_httpd_listen(addr, "--metrics", url, sizeof url)) < 0) {
		wss_metrics_close(m);
		return NULL;
	}
	if (addr)
		fprintf(stderr, "wss: metrics: %s/metrics\n", url);
	return m;
}

void wss_metrics_start(wss_metrics_t *m, const char *pattern, pid_t pid, int64_t t0_ns)
{
	free(m->pattern);
	m->pattern = pattern ? strdup(pattern) : NULL;
	m->leader = pid;
	m->t0_ns = t0_ns;
	m->last_ms = 0;
	/* Named after the session's first process: one file a session. */
	if (m->dir && asprintf(&m->file, "%s/wss_%d.prom", m->dir, (int)pid) < 0)
		m->file = NULL;
}

void wss_metrics_add_profile(wss_metrics_t *m, const char *path)
{
	char *dup = strdup(path);
	if (dup)
		proc_add(m, dup);
}

void wss_metrics_find(wss_metrics_t *m, const char *pattern, pid_t pid, int64_t t0_ns)
{
	if (!m->find_pattern && !(m->find_pattern = strdup(pattern)))
		return;
	if (!wss_reserve(&m->pend, &m->cappend, m->npend + 1, sizeof *m->pend))
		m->pend[m->npend++] = (struct pending){pid, t0_ns};
}

bool wss_metrics_cgroup_quantiles(const wss_metrics_t *m, double q[2])
{
	int64_t v[2], ps = 4096;
	for (size_t k = 0; k < m->n; k++)
		if (m->v[k].page_size > 0)
			ps = m->v[k].page_size;
	if (!cgroup_quantiles(m, v))
		return false;
	q[0] = (double)v[0] * (double)ps;
	q[1] = (double)v[1] * (double)ps;
	return true;
}

void wss_metrics_cgroup(wss_metrics_t *m, const char *cgroup)
{
	free(m->cgroup);
	m->cgroup = strdup(cgroup);
}

int wss_metrics_sigwait(wss_metrics_t *m, const sigset_t *set, uint64_t ns)
{
	if (!m) {
		struct timespec ts = {(time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL)};
		int s = sigtimedwait(set, NULL, &ts);
		return s > 0 ? s : 0;
	}
	if (m->sigfd < 0 && (m->sigfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		/* No signalfd: the signals still end the wait, the endpoint
		 * waits with them. */
		struct timespec ts = {0, ns < 100000000ULL ? (long)ns : 100000000L};
		int s = sigtimedwait(set, NULL, &ts);
		wss_metrics_refresh(m, false);
		return s > 0 ? s : 0;
	}
	int64_t end = now_ms() + (int64_t)((ns + 999999) / 1000000);
	for (;;) {
		struct signalfd_siginfo si;
		if (read(m->sigfd, &si, sizeof si) == (ssize_t)sizeof si)
			return (int)si.ssi_signo;
		int64_t left = end - now_ms();
		if (left <= 0)
			return 0;
		int due = wss_metrics_due_ms(m);
		struct pollfd p[2] = {{m->sigfd, POLLIN, 0}, {m->listen_fd, POLLIN, 0}};
		if (poll(p, 2, (int)(left < due ? left : due)) > 0 && (p[1].revents & POLLIN))
			wss_metrics_serve(m);
		wss_metrics_refresh(m, false);
	}
}

int wss_metrics_fd(const wss_metrics_t *m) { return m ? m->listen_fd : -1; }

void wss_metrics_close(wss_metrics_t *m)
{
	if (!m)
		return;
	if (m->wrote)
		unlink(m->file);
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	if (m->sigfd >= 0)
		close(m->sigfd);
	for (size_t k = 0; k < m->n; k++) {
		if (m->v[k].fd >= 0)
			close(m->v[k].fd);
		free(m->v[k].path);
		free(m->v[k].buf);
		free(m->v[k].at);
		free(m->v[k].data);
	}
	free(m->cgroup);
	free(m->v);
	free(m->pend);
	free(m->find_pattern);
	free(m->pattern);
	free(m->dir);
	free(m->file);
	free(m);
}
