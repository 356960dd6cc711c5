/* Live metrics (metrics.h).  Each profile is read from where the last
 * read stopped, whole lines only (the engine appends one record a line,
 * a sample per tick), and only the records the metrics need are parsed:
 * header, sample, peak, summary, and the first profile's process notes,
 * which name the other profiles.  Figures are in bytes (Prometheus' base
 * unit), from pages times the profile's page size. */
#include "config.h"
#include "cli/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/analyses.h"
#include "cli/json.h"
#include "cli/load.h"
#include "cli/outfile.h"
#include "cli/session.h"
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
	/* As the budget weighs it (cli/load.c, wss_load_overhead_pct). */
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

static void family(FILE *o, const char *name, const char *type, const char *help)
{
	fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Each family once, its samples for every process with a header. */
enum { F_WS, F_LO, F_HI, F_PEAK, F_KIND, F_WINDOW, F_FRACTION, F_OVERHEAD, F_RSS, F_SAMPLES, F_PEAKS, F_RUNNING, F_N };

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

char *wss_metrics_text(const wss_metrics_t *m, size_t *len)
{
	char *s = NULL;
	FILE *o = open_memstream(&s, len);
	if (!o)
		return NULL;
	for (int fam = 0; fam < F_N; fam++) {
		family(o, families[fam].name, families[fam].type, families[fam].help);
		for (size_t k = 0; k < m->n; k++)
			if (m->v[k].header)
				family_samples(o, m, fam, &m->v[k]);
	}
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
	char *text = wss_metrics_text(m, &len);
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
	if (!m->n) {
		char *first = wss_session_find_first(m->pattern, m->leader, m->t0_ns);
		if (first)
			proc_add(m, first);
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

/* ---- HTTP ---- */

/* "PORT", ":PORT", "HOST:PORT", "[V6]:PORT" into host (127.0.0.1 when
 * none is given) and port.  Returns false when malformed. */
static bool split_addr(const char *addr, char *host, size_t hn, char *port, size_t pn)
{
	const char *colon = strrchr(addr, ':');
	const char *p = colon ? colon + 1 : addr;
	if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 5 || atoi(p) > 65535)
		return false;
	snprintf(port, pn, "%s", p);
	size_t hl = colon ? (size_t)(colon - addr) : 0;
	if (hl >= 2 && addr[0] == '[' && addr[hl - 1] == ']') {
		addr++;
		hl -= 2;
	}
	if (hl >= hn)
		return false;
	if (!hl)
		snprintf(host, hn, "127.0.0.1");
	else {
		memcpy(host, addr, hl);
		host[hl] = '\0';
	}
	return true;
}

static int listen_on(const char *addr)
{
	char host[256], port[8];
	if (!split_addr(addr, host, sizeof host, port, sizeof port)) {
		fprintf(stderr, "wss: --metrics: %s: not an address (PORT, HOST:PORT or [V6]:PORT, e.g. 9464 or 127.0.0.1:9464)\n",
			addr);
		return -1;
	}
	struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM}, *ai;
	int r = getaddrinfo(host, port, &hints, &ai);
	if (r) {
		fprintf(stderr, "wss: --metrics: %s: %s\n", addr, gai_strerror(r));
		return -1;
	}
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 16)) {
		fprintf(stderr, "wss: --metrics: %s: %s\n", addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return -1;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char h[INET6_ADDRSTRLEN] = "?", p[8] = "?";
	if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
		getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p, NI_NUMERICHOST | NI_NUMERICSERV);
	fprintf(stderr, "wss: metrics: http://%s%s%s:%s/metrics\n", strchr(h, ':') ? "[" : "", h, strchr(h, ':') ? "]" : "",
		p);
	return fd;
}

static void reply(int c, const char *status, const char *type, const char *body, size_t len, bool head)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof hdr,
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", status,
			 type, len);
	if (write(c, hdr, (size_t)n) == n && !head)
		for (size_t o = 0; o < len;) {
			ssize_t w = write(c, body + o, len - o);
			if (w <= 0)
				break;
			o += (size_t)w;
		}
}

void wss_metrics_serve(wss_metrics_t *m)
{
	int c = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return;
	/* A client that sends nothing holds wss run for a second at most:
	 * the program's exit is waited for in the same loop. */
	struct timeval tv = {1, 0};
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	char req[4096];
	size_t got = 0;
	while (got < sizeof req - 1 && !memmem(req, got, "\r\n\r\n", 4)) {
		ssize_t r = read(c, req + got, sizeof req - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	req[got] = '\0';
	bool get = !strncmp(req, "GET ", 4), head = !strncmp(req, "HEAD ", 5);
	const char *path = req + (get ? 4 : 5);
	size_t pl = strcspn(path, " ?\r\n");
	if (!get && !head)
		reply(c, "405 Method Not Allowed", "text/plain", "GET /metrics\n", 13, false);
	else if (!(pl == 8 && !strncmp(path, "/metrics", 8)) && !(pl == 1 && path[0] == '/'))
		reply(c, "404 Not Found", "text/plain", "GET /metrics\n", 13, head);
	else {
		wss_metrics_refresh(m, true);
		size_t len;
		char *text = wss_metrics_text(m, &len);
		if (text)
			reply(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", text, len, head);
		else
			reply(c, "500 Internal Server Error", "text/plain", "out of memory\n", 14, head);
		free(text);
	}
	close(c);
}

/* ---- open and close ---- */

wss_metrics_t *wss_metrics_open(const char *dir, const char *addr)
{
	wss_metrics_t *m = calloc(1, sizeof *m);
	if (!m) {
		perror("wss");
		return NULL;
	}
	m->listen_fd = -1;
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
	if (addr && (m->listen_fd = listen_on(addr)) < 0) {
		wss_metrics_close(m);
		return NULL;
	}
	return m;
}

void wss_metrics_start(wss_metrics_t *m, const char *pattern, pid_t pid, int64_t t0_ns)
{
	free(m->pattern);
	m->pattern = strdup(pattern);
	m->leader = pid;
	m->t0_ns = t0_ns;
	m->last_ms = 0;
	/* Named after the session's first process: one file a session. */
	if (m->dir && asprintf(&m->file, "%s/wss_%d.prom", m->dir, (int)pid) < 0)
		m->file = NULL;
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
	for (size_t k = 0; k < m->n; k++) {
		if (m->v[k].fd >= 0)
			close(m->v[k].fd);
		free(m->v[k].path);
		free(m->v[k].buf);
	}
	free(m->v);
	free(m->pattern);
	free(m->dir);
	free(m->file);
	free(m);
}
