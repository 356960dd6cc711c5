/* Profile records (see profile.h and docs/profile-format.md). */
#include "config.h"
#include "common/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "common/pattern.h"
#include "common/sys.h"

static void key(wss_fmt_t *f, const char *k)
{
	wss_fmt_ch(f, ',');
	wss_fmt_json_str(f, k);
	wss_fmt_ch(f, ':');
}

static void key_u64(wss_fmt_t *f, const char *k, uint64_t v)
{
	key(f, k);
	wss_fmt_u64(f, v);
}

static void key_str(wss_fmt_t *f, const char *k, const char *v)
{
	key(f, k);
	wss_fmt_json_str(f, v ? v : "");
}

static void hex(wss_fmt_t *f, uint64_t v);

/* "name": in an object, the first entry without the comma. */
static void kind_key(wss_fmt_t *f, bool *first, int k)
{
	if (!*first)
		wss_fmt_ch(f, ',');
	*first = false;
	wss_fmt_json_str(f, wss_kind_name(k));
	wss_fmt_ch(f, ':');
}

void wss_profile_ci(wss_fmt_t *f, wss_profile_ci_t ci)
{
	wss_fmt_ch(f, '[');
	wss_fmt_u64(f, ci.lo);
	wss_fmt_ch(f, ',');
	wss_fmt_u64(f, ci.hi);
	wss_fmt_ch(f, ']');
}

/* "k":[lo,hi] */
static void key_ci(wss_fmt_t *f, const char *k, wss_profile_ci_t ci)
{
	key(f, k);
	wss_profile_ci(f, ci);
}

void wss_profile_header(wss_fmt_t *f, const wss_profile_header_t *h)
{
	wss_fmt_str(f, "{\"type\":\"header\"");
	key_u64(f, "version", WSS_PROFILE_VERSION);
	key_str(f, "tool", "wss " PACKAGE_VERSION);
	key_u64(f, "pid", (uint64_t)h->pid);
	key(f, "ppid");
	wss_fmt_i64(f, h->ppid);
	key_str(f, "exe", h->exe);
	key(f, "argv");
	wss_fmt_ch(f, '[');
	for (int i = 0; i < h->argc && h->argv && h->argv[i]; i++) {
		if (i)
			wss_fmt_ch(f, ',');
		wss_fmt_json_str(f, h->argv[i]);
	}
	wss_fmt_ch(f, ']');
	key_u64(f, "start_unix_ns", h->start_unix_ns);
	key_str(f, "kernel", h->kernel);
	if (h->host)
		key_str(f, "host", h->host);
	key_u64(f, "page_size", (uint64_t)h->page_size);
	key_str(f, "backend", h->backend);
	key_str(f, "backend_reason", h->backend_reason);
	key_str(f, "backend_sees", h->backend_sees);
	if (h->runtime) {
		key_str(f, "runtime", h->runtime);
		if (h->untracked)
			key_str(f, "runtime_untracked", h->untracked);
	}
	wss_fmt_str(f, h->timing ? h->timing : "");
	if (!h->no_vma) {
		key_u64(f, "max_map_count", (uint64_t)h->max_map_count);
		key_u64(f, "vma_budget", (uint64_t)h->vma_budget);
	}
	if (h->mode) {
		key_str(f, "track_mode", h->mode);
		key(f, "sampling_seed");
		hex(f, h->seed);
	}
	if (h->code) {
		wss_fmt_str(f, ",\"code\":{\"tracked\":true,\"excluded\":[");
		wss_fmt_str(f, h->code_excluded ? h->code_excluded : "");
		wss_fmt_str(f, "]}");
	} else if (h->code_off) {
		wss_fmt_str(f, ",\"code\":{\"tracked\":false");
		key_str(f, "why", h->code_off);
		wss_fmt_ch(f, '}');
	}
	if (h->session_dir)
		key_str(f, "session_dir", h->session_dir);
	wss_fmt_str(f, h->config ? h->config : "");
	wss_fmt_str(f, "}\n");
}

/* data_pages and, where the backend has them, read_pages and write_pages:
 * the same three for a sample and for each of its threads. */
static void page_sets(wss_fmt_t *f, wss_profile_sets_t sets, uint64_t data, uint64_t write, uint64_t read)
{
	key_u64(f, "data_pages", data);
	if (sets.reads)
		key_u64(f, "read_pages", read);
	if (sets.writes)
		key_u64(f, "write_pages", write);
}

/* "ci":{"data":[lo,hi],"read":[..],"write":[..]}, intervals in the order
 * data, write, read; n = 2 when there is no read interval (threads). */
static void page_cis(wss_fmt_t *f, wss_profile_sets_t sets, const wss_profile_ci_t *ci, int n)
{
	wss_fmt_str(f, ",\"ci\":{");
	wss_fmt_str(f, "\"data\":[");
	wss_fmt_u64(f, ci[0].lo);
	wss_fmt_ch(f, ',');
	wss_fmt_u64(f, ci[0].hi);
	wss_fmt_ch(f, ']');
	if (sets.reads && n > 2)
		key_ci(f, "read", ci[2]);
	if (sets.writes)
		key_ci(f, "write", ci[1]);
	wss_fmt_ch(f, '}');
}

void wss_profile_sample_begin(wss_fmt_t *f, const wss_profile_sample_t *s)
{
	wss_fmt_str(f, "{\"type\":\"sample\"");
	key_u64(f, "seq", s->seq);
	key_u64(f, "t_ns", s->t_ns);
	if (!s->no_cpu)
		key_u64(f, "cpu_ns", s->cpu_ns);
	page_sets(f, s->sets, s->data_pages, s->write_pages, s->read_pages);
	key_u64(f, "faults", s->faults);
	key_u64(f, "coarse", s->coarse);
	if (s->unarmed)
		key_u64(f, "unarmed", s->unarmed);
	if (s->final)
		wss_fmt_str(f, ",\"final\":true");
	key_u64(f, "rate", s->rate ? s->rate : 1);
	if (s->rate > 1) {
		page_cis(f, s->sets, s->ci, 3);
		wss_fmt_str(f, ",\"sampled\":{\"tracked\":");
		wss_fmt_u64(f, s->tracked);
		key_u64(f, "members", s->members);
		key_u64(f, "data", s->x[0]);
		if (s->sets.reads)
			key_u64(f, "read", s->x[2]);
		if (s->sets.writes)
			key_u64(f, "write", s->x[1]);
		if (s->all_writes)
			wss_fmt_str(f, ",\"all_writes\":true");
		wss_fmt_ch(f, '}');
	}
	if (s->lower_bound)
		wss_fmt_str(f, ",\"lower_bound\":true");
	if (s->code) {
		key_u64(f, "code_pages", s->code_pages);
		if (s->code_lower_bound)
			wss_fmt_str(f, ",\"code_lower_bound\":true");
	}
	if (s->cost_program_ns) {
		wss_fmt_str(f, ",\"cost\":{\"faults_ns\":");
		wss_fmt_u64(f, s->cost_faults_ns);
		key_u64(f, "tick_ns", s->cost_tick_ns);
		key_u64(f, "change_ns", s->cost_change_ns);
		if (s->code)
			key_u64(f, "code_ns", s->cost_code_ns);
		key_u64(f, "program_ns", s->cost_program_ns);
		if (s->cost_wall_ns)
			key_u64(f, "wall_ns", s->cost_wall_ns);
		wss_fmt_ch(f, '}');
	}
	bool first = true;
	for (int k = 1; k < WSS_KIND_N; k++) {
		const wss_profile_kind_t *kd = &s->kinds[k];
		if (!kd->tracked)
			continue;
		if (first)
			wss_fmt_str(f, ",\"kinds\":{");
		kind_key(f, &first, k);
		wss_fmt_str(f, "{\"tracked\":");
		wss_fmt_u64(f, kd->tracked);
		key_u64(f, "data", kd->data);
		if (s->sets.writes)
			key_u64(f, "write", kd->write);
		if (s->rate > 1)
			key_ci(f, "ci", kd->ci);
		wss_fmt_ch(f, '}');
	}
	if (!first)
		wss_fmt_ch(f, '}');
	wss_fmt_str(f, s->extra ? s->extra : "");
	wss_fmt_str(f, ",\"threads\":[");
}

void wss_profile_sample_thread(wss_fmt_t *f, bool first, const wss_profile_sample_t *s, const wss_profile_thread_t *t)
{
	if (!first)
		wss_fmt_ch(f, ',');
	wss_fmt_str(f, "{\"tid\":");
	wss_fmt_i64(f, t->tid);
	page_sets(f, s->sets, t->data_pages, t->write_pages, t->data_pages - t->write_pages);
	if (s->rate > 1)
		page_cis(f, s->sets, t->ci, 2);
	key_u64(f, "faults", t->faults);
	if (s->code)
		key_u64(f, "code_pages", t->code_pages);
	if (t->cpu_ns >= 0)
		key_u64(f, "cpu_ns", (uint64_t)t->cpu_ns);
	wss_fmt_ch(f, '}');
}

void wss_profile_sample_end(wss_fmt_t *f) { wss_fmt_str(f, "]}\n"); }

static void hex(wss_fmt_t *f, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char b[19];
	int i = 18;
	b[i] = 0;
	do
		b[--i] = digits[v & 15];
	while (v >>= 4);
	b[--i] = 'x';
	b[--i] = '0';
	wss_fmt_ch(f, '"');
	wss_fmt_str(f, b + i);
	wss_fmt_ch(f, '"');
}

uint64_t wss_profile_avg_tenths(const wss_profile_summary_t *s, const wss_profile_stat_t *st)
{
	return s->samples ? (st->sum * 10 + s->samples / 2) / s->samples : 0;
}

static void stat_body(wss_fmt_t *f, const wss_profile_summary_t *s, const wss_profile_stat_t *st)
{
	wss_fmt_str(f, "{\"avg\":");
	wss_fmt_fixed(f, wss_profile_avg_tenths(s, st), 1);
	wss_fmt_str(f, ",\"peak\":");
	wss_fmt_u64(f, st->peak);
	wss_fmt_str(f, ",\"total\":");
	wss_fmt_u64(f, st->total);
	if (s->rate_max > 1) {
		wss_profile_ci_t avg = {s->samples ? st->sum_lo / s->samples : 0,
					s->samples ? (st->sum_hi + s->samples - 1) / s->samples : 0};
		key_ci(f, "avg_ci", avg);
		key_ci(f, "peak_ci", st->peak_ci);
		key_ci(f, "total_ci", st->total_ci);
	}
	wss_fmt_ch(f, '}');
}

static void stat_json(wss_fmt_t *f, const wss_profile_summary_t *s, const char *name, const wss_profile_stat_t *st)
{
	key(f, name);
	stat_body(f, s, st);
}

void wss_profile_pct_ppm(wss_fmt_t *f, uint64_t ppm)
{
	/* millionths as a percentage with one decimal (tenths of a per cent) */
	wss_fmt_fixed(f, (ppm + 500) / 1000, 1);
}

static void key_pct(wss_fmt_t *f, const char *name, uint64_t ppm)
{
	key(f, name);
	wss_profile_pct_ppm(f, ppm);
}

static void precision_json(wss_fmt_t *f, const wss_profile_summary_t *s)
{
	wss_fmt_str(f, ",\"precision\":{");
	wss_fmt_str(f, "\"target_pct\":");
	wss_profile_pct_ppm(f, s->prec_target_ppm);
	key_u64(f, "intervals", s->prec_n);
	key_u64(f, "missed", s->prec_missed);
	if (s->prec_n && s->prec_median_ppm != UINT64_MAX)
		key_pct(f, "median_pct", s->prec_median_ppm);
	else if (s->prec_n)
		wss_fmt_str(f, ",\"median_pct\":null");
	char buf[600];
	wss_fmt_t n;
	wss_fmt_init(&n, buf, sizeof buf);
	if (wss_profile_precision_text(&n, s))
		key_str(f, "note", wss_fmt_cstr(&n));
	wss_fmt_ch(f, '}');
}

void wss_profile_summary(wss_fmt_t *f, const wss_profile_summary_t *s)
{
	wss_fmt_str(f, "{\"type\":\"summary\"");
	key_u64(f, "samples", s->samples);
	key_u64(f, "duration_ns", s->duration_ns);
	stat_json(f, s, "data", &s->data);
	if (s->sets.reads)
		stat_json(f, s, "read", &s->read);
	if (s->sets.writes)
		stat_json(f, s, "write", &s->write);
	if (s->code) {
		/* Exact whatever the data's rate. */
		wss_fmt_str(f, ",\"code\":{\"avg\":");
		wss_fmt_fixed(f, wss_profile_avg_tenths(s, &s->code_stat), 1);
		key_u64(f, "peak", s->code_stat.peak);
		key_u64(f, "total", s->code_stat.total);
		if (s->code_lower_bound)
			wss_fmt_str(f, ",\"lower_bound\":true");
		if (s->code_full)
			wss_fmt_str(f, ",\"ranges_left_out\":true");
		wss_fmt_ch(f, '}');
	}
	if (s->kinds_seen) {
		bool first = true;
		wss_fmt_str(f, ",\"kinds\":{");
		for (int k = 1; k < WSS_KIND_N; k++)
			if (s->kinds_seen & (1U << k)) {
				kind_key(f, &first, k);
				stat_body(f, s, &s->kinds[k]);
			}
		wss_fmt_ch(f, '}');
	}
	key_u64(f, "faults", s->faults);
	key_u64(f, "coarse", s->coarse);
	key_u64(f, "page_size", (uint64_t)s->page_size);
	if (s->rate_max > 1) {
		wss_fmt_str(f, ",\"sampled\":true");
		key_u64(f, "rate_max", s->rate_max);
		precision_json(f, s);
		wss_fmt_str(f, ",\"census\":{");
		if (s->census_why) {
			wss_fmt_str(f, "\"off\":");
			wss_fmt_json_str(f, s->census_why);
		} else {
			wss_fmt_str(f, "\"data\":");
			wss_fmt_u64(f, s->census_data);
			key_u64(f, "write", s->census_write);
		}
		wss_fmt_ch(f, '}');
	}
	if (s->lower_bound)
		wss_fmt_str(f, ",\"lower_bound\":true");
	if (s->huge_n) {
		wss_fmt_str(f, ",\"untracked_large\":{\"mappings\":");
		wss_fmt_u64(f, s->huge_n);
		key_u64(f, "bytes", s->huge_bytes);
		wss_fmt_ch(f, '}');
	}
	if (s->incomplete)
		key_str(f, "incomplete", s->incomplete);
	if (s->attach_end)
		key_str(f, "attach_end", s->attach_end);
	if (s->trace) {
		wss_fmt_str(f, ",\"trace\":{\"file\":");
		wss_fmt_json_str(f, s->trace->file);
		key_u64(f, "records", s->trace->records);
		key_u64(f, "pages", s->trace->pages);
		key_u64(f, "bytes", s->trace->bytes);
		key_u64(f, "last", s->trace->last);
		if (s->trace->stopped)
			key_str(f, "stopped", s->trace->stopped);
		else
			wss_fmt_str(f, ",\"stopped\":null");
		wss_fmt_ch(f, '}');
	}
	if (s->hot_code) {
		wss_fmt_str(f, ",\"hot_code\":[");
		for (int i = 0; i < s->nhot_code; i++) {
			if (i)
				wss_fmt_ch(f, ',');
			wss_fmt_str(f, "{\"addr\":");
			hex(f, s->hot_code[i].addr);
			key_u64(f, "intervals", s->hot_code[i].intervals);
			key_str(f, "mapping", s->hot_code[i].mapping);
			wss_fmt_ch(f, '}');
		}
		wss_fmt_ch(f, ']');
	}
	if (s->hot) {
		wss_fmt_str(f, ",\"hot_pages\":[");
		for (int i = 0; i < s->nhot; i++) {
			if (i)
				wss_fmt_ch(f, ',');
			wss_fmt_str(f, "{\"addr\":");
			hex(f, s->hot[i].addr);
			key_u64(f, "intervals", s->hot[i].intervals);
			key_str(f, "mapping", s->hot[i].mapping);
			if (s->hot[i].stack)
				key_u64(f, "stack", s->hot[i].stack);
			if (s->hot[i].gone)
				key_u64(f, "gone", s->hot[i].gone);
			wss_fmt_ch(f, '}');
		}
		wss_fmt_ch(f, ']');
	}
	wss_fmt_str(f, "}\n");
}


void wss_profile_module(wss_fmt_t *f, int id, const char *path, uint64_t bias, uint64_t start, uint64_t end,
			const char *build_id)
{
	wss_fmt_str(f, "{\"type\":\"module\"");
	key_u64(f, "id", (uint64_t)id);
	key_str(f, "path", path);
	key(f, "bias");
	hex(f, bias);
	key(f, "start");
	hex(f, start);
	key(f, "end");
	hex(f, end);
	key(f, "build_id");
	if (build_id && *build_id)
		wss_fmt_json_str(f, build_id);
	else
		wss_fmt_str(f, "null");
	wss_fmt_str(f, "}\n");
}

void wss_profile_stack(wss_fmt_t *f, uint32_t id, const uint64_t *frames, uint32_t n)
{
	wss_fmt_str(f, "{\"type\":\"stack\"");
	key_u64(f, "id", id);
	wss_fmt_str(f, ",\"frames\":[");
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			wss_fmt_ch(f, ',');
		hex(f, frames[i]);
	}
	wss_fmt_str(f, "]}\n");
}

/* x >= 0 with one decimal. */
static void tenths(wss_fmt_t *f, double x)
{
	wss_fmt_fixed(f, x > 0 ? (uint64_t)(x * 10 + 0.5) : 0, 1);
}

/* ,"sites":[...],"other_pages":R} and the record's newline. */
static void sites_array(wss_fmt_t *f, const wss_profile_site_t *sites, int n, uint64_t other_pages)
{
	wss_fmt_str(f, ",\"sites\":[");
	for (int i = 0; i < n; i++) {
		if (i)
			wss_fmt_ch(f, ',');
		wss_fmt_str(f, "{\"pc\":");
		hex(f, sites[i].pc);
		if (sites[i].stack)
			key_u64(f, "stack", sites[i].stack);
		key_u64(f, "pages", sites[i].pages);
		wss_fmt_ch(f, '}');
	}
	wss_fmt_ch(f, ']');
	key_u64(f, "other_pages", other_pages);
	wss_fmt_str(f, "}\n");
}

void wss_profile_peak(wss_fmt_t *f, const wss_profile_peak_t *p)
{
	wss_fmt_str(f, "{\"type\":\"peak\"");
	key_u64(f, "seq", p->seq);
	key(f, "series");
	if (!strcmp(p->series, "thread")) {
		wss_fmt_str(f, "\"thread:");
		wss_fmt_i64(f, p->tid);
		wss_fmt_ch(f, '"');
	} else {
		wss_fmt_json_str(f, p->series);
	}
	key_u64(f, "value", p->value);
	key(f, "mean");
	tenths(f, p->mean);
	key(f, "threshold");
	tenths(f, p->threshold);
	sites_array(f, p->sites, p->nsites, p->other_pages);
}

void wss_profile_sites(wss_fmt_t *f, const wss_profile_site_t *sites, int n, uint64_t other_pages)
{
	wss_fmt_str(f, "{\"type\":\"sites\"");
	sites_array(f, sites, n, other_pages);
}

int wss_profile_create(int dirfd, const char *dir, const char *pattern, int pid, uint64_t start_unix_s,
		       const char *prog, char *path, size_t pathlen, int *fd, char *err, size_t errlen)
{
	wss_fmt_t e;
	wss_fmt_init(&e, err, errlen);
	char base[WSS_OUTPUT_MAX];
	int r = wss_output_expand(pattern, pid, start_unix_s, prog, base, sizeof base);
	if (r) {
		wss_fmt_str(&e, "output ");
		wss_fmt_json_str(&e, pattern);
		wss_fmt_str(&e, r == EINVAL ? ": unknown %-sequence (use %p, %t, %n or %%)" : ": path too long");
		wss_fmt_cstr(&e);
		return r;
	}
	/* A character device (/dev/null) is no profile to protect, and no
	 * profile at all: nothing is written. */
	struct stat st;
	if (dirfd == AT_FDCWD && !wss_sys_failed(wss_sys2(SYS_stat, base, &st)) && S_ISCHR(st.st_mode)) {
		wss_fmt_t p;
		wss_fmt_init(&p, path, pathlen);
		wss_fmt_str(&p, base);
		wss_fmt_cstr(&p);
		*fd = -1;
		return 0;
	}
	for (unsigned n = 1; n <= 1000; n++) {
		wss_fmt_t p;
		wss_fmt_init(&p, path, pathlen);
		if (dir) {
			wss_fmt_str(&p, dir);
			wss_fmt_ch(&p, '/');
		}
		size_t name = p.len;
		wss_fmt_str(&p, base);
		if (n > 1) {
			wss_fmt_ch(&p, '.');
			wss_fmt_u64(&p, n);
		}
		wss_fmt_cstr(&p);
		if (p.overflow) {
			r = ENAMETOOLONG;
			break;
		}
		int f = wss_file_create(dirfd, dir ? path + name : path, O_APPEND);
		if (f >= 0) {
			*fd = f;
			return 0;
		}
		r = -f;
		if (r != EEXIST)
			break;
	}
	wss_fmt_str(&e, "cannot create profile ");
	wss_fmt_str(&e, path);
	wss_fmt_str(&e, ": ");
	wss_fmt_str(&e, r == ELOOP ? "Is a symbolic link" : wss_errno_text(r));
	wss_fmt_cstr(&e);
	return r;
}
