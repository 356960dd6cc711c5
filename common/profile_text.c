/* The stderr summary's lines of a profile's summary (profile.h): the text
 * twin of the summary record, formatted for a person.  Pure. */
#include "config.h"
#include "common/profile.h"

#include <string.h>

/* pages -> MiB with one decimal, rounded. */
static void mib(wss_fmt_t *f, uint64_t tenths_of_pages, long page_size)
{
	uint64_t bytes10 = tenths_of_pages * (uint64_t)page_size;
	wss_fmt_fixed(f, (bytes10 + (1 << 20) / 2) >> 20, 1);
}

/* The larger half of an interval around est. */
static uint64_t half_width(uint64_t est, wss_profile_ci_t ci)
{
	uint64_t h = est > ci.lo ? est - ci.lo : 0;
	return ci.hi > est && ci.hi - est > h ? ci.hi - est : h;
}

/* ... in percent of est, with one decimal. */
static void half_width_pct(wss_fmt_t *f, uint64_t est, wss_profile_ci_t ci)
{
	wss_fmt_fixed(f, est ? (half_width(est, ci) * 1000 + est / 2) / est : 0, 1);
}

/* The same for an average in tenths of a page (a, as the record writes
 * it: wss report computes its ± from that, and a rounded average of 0.2
 * pages made the two disagree). */
static void half_width_pct_tenths(wss_fmt_t *f, uint64_t a, wss_profile_ci_t ci)
{
	wss_profile_ci_t c10 = {ci.lo * 10, ci.hi * 10};
	wss_fmt_fixed(f, a ? (half_width(a, c10) * 1000 + a / 2) / a : 0, 1);
}

static void interval(wss_fmt_t *f, wss_profile_ci_t ci)
{
	wss_fmt_ch(f, '[');
	wss_fmt_u64(f, ci.lo);
	wss_fmt_str(f, ", ");
	wss_fmt_u64(f, ci.hi);
	wss_fmt_ch(f, ']');
}

bool wss_profile_kinds_text(wss_fmt_t *f, const wss_profile_summary_t *s)
{
	int order[WSS_KIND_N], n = 0;
	for (int k = 1; k < WSS_KIND_N; k++) {
		if (!(s->kinds_seen & (1U << k)) || !s->kinds[k].peak)
			continue;
		int j = n++;
		for (; j > 0 && s->kinds[order[j - 1]].peak < s->kinds[k].peak; j--)
			order[j] = order[j - 1];
		order[j] = k;
	}
	if (!n)
		return false;
	wss_fmt_str(f, s->rate_max > 1 ? "data peak by kind (pages): \u2248 " : "data peak by kind (pages): ");
	for (int i = 0; i < n; i++) {
		const wss_profile_stat_t *st = &s->kinds[order[i]];
		if (i)
			wss_fmt_str(f, ", ");
		wss_fmt_str(f, wss_kind_name(order[i]));
		wss_fmt_ch(f, ' ');
		wss_fmt_u64(f, st->peak);
		wss_fmt_str(f, " (");
		mib(f, st->peak * 10, s->page_size);
		wss_fmt_str(f, " MiB)");
	}
	return true;
}

void wss_profile_summary_text(wss_fmt_t *f, const wss_profile_summary_t *s, const char *name)
{
	/* insn: the code series, exact whatever the data's rate. */
	bool insn = !strcmp(name, "insn");
	const wss_profile_stat_t *st = insn			? &s->code_stat
				       : !strcmp(name, "write") ? &s->write
				       : !strcmp(name, "read")	? &s->read
								: &s->data;
	uint64_t a = wss_profile_avg_tenths(s, st);
	bool sampled = s->rate_max > 1 && !insn;
	wss_fmt_str(f, name);
	wss_fmt_str(f, sampled ? " avg/peak/total: \u2248 " : " avg/peak/total: ");
	wss_fmt_fixed(f, a, 1);
	wss_fmt_ch(f, '/');
	wss_fmt_u64(f, st->peak);
	wss_fmt_ch(f, '/');
	wss_fmt_u64(f, st->total);
	wss_fmt_str(f, " pages");
	if (sampled && s->samples) {
		wss_profile_ci_t avg = {st->sum_lo / s->samples, (st->sum_hi + s->samples - 1) / s->samples};
		/* An estimate of 0 with room above it has no relative error:
		 * then the three intervals themselves, in pages. */
		if ((!a && avg.hi) || (!st->peak && st->peak_ci.hi) || (!st->total && st->total_ci.hi)) {
			wss_fmt_str(f, ", 95 % intervals ");
			interval(f, avg);
			wss_fmt_ch(f, '/');
			interval(f, st->peak_ci);
			wss_fmt_ch(f, '/');
			interval(f, st->total_ci);
		} else {
			wss_fmt_str(f, " \u00b1 ");
			half_width_pct_tenths(f, a, avg);
			wss_fmt_ch(f, '/');
			half_width_pct(f, st->peak, st->peak_ci);
			wss_fmt_ch(f, '/');
			half_width_pct(f, st->total, st->total_ci);
			wss_fmt_str(f, " %");
		}
	}
	wss_fmt_str(f, " (");
	mib(f, a, s->page_size);
	wss_fmt_ch(f, '/');
	mib(f, st->peak * 10, s->page_size);
	wss_fmt_ch(f, '/');
	mib(f, st->total * 10, s->page_size);
	wss_fmt_str(f, " MiB)");
	if (insn && s->code_lower_bound)
		wss_fmt_str(f, ", a lower bound (code opened whole for want of VMAs)");
}

/* One figure's relative half-width in millionths, as the stderr line
 * prints it (avg: in tenths of a page); 0 for an estimate of 0 (printed
 * as an interval, not a +-). */
static uint64_t figure_ppm(uint64_t est, wss_profile_ci_t ci)
{
	return est ? (uint64_t)(((unsigned __int128)half_width(est, ci) * 1000000 + est / 2) / est) : 0;
}

/* Exact tracking that cost the program this much of its time (a tenth)
 * is said: its intervals held that much less work than they would
 * natively, so the working set reads small. */
#define EXACT_COST_SAID_PPM 100000

bool wss_profile_precision_text(wss_fmt_t *f, const wss_profile_summary_t *s)
{
	if (s->exact_mode && s->used_ppm >= EXACT_COST_SAID_PPM) {
		wss_fmt_str(f, "exact tracking cost about ");
		wss_profile_pct_ppm(f, s->used_ppm);
		wss_fmt_str(f, " % of the program's time (its first touches' faults), so each interval held that "
			       "much less work than natively and the working set reads small; the default mode (auto) "
			       "samples within session.overhead");
		return true;
	}
	if (s->rate_max <= 1 || !s->samples)
		return false;
	bool missed = s->prec_n && s->prec_median_ppm > s->prec_target_ppm;
	/* The figures past +-100 %, widest first (an estimate of 0 with room
	 * above it, printed as its interval, widest of all). */
	static const char *const names[] = {"data", "read", "write"};
	static const char *const figs[] = {"avg", "peak", "total"};
	const wss_profile_stat_t *sts[] = {&s->data, &s->read, &s->write};
	bool shown[] = {true, s->sets.reads, s->sets.writes};
	struct {
		int i, j;
		uint64_t ppm, up;
	} wide[9];
	int nwide = 0;
	for (int i = 0; i < 3; i++) {
		if (!shown[i])
			continue;
		const wss_profile_stat_t *st = sts[i];
		uint64_t a = wss_profile_avg_tenths(s, st);
		wss_profile_ci_t avg = {st->sum_lo / s->samples * 10, (st->sum_hi + s->samples - 1) / s->samples * 10};
		uint64_t ppm[3] = {figure_ppm(a, avg), figure_ppm(st->peak, st->peak_ci), figure_ppm(st->total, st->total_ci)};
		uint64_t est[3] = {a, st->peak, st->total}, up[3] = {(avg.hi + 9) / 10, st->peak_ci.hi, st->total_ci.hi};
		for (int j = 0; j < 3; j++) {
			bool zero = !est[j] && up[j];
			if (ppm[j] <= 1000000 && !zero)
				continue;
			int k = nwide++;
			uint64_t key = zero ? UINT64_MAX : ppm[j];
			for (; k > 0 && wide[k - 1].ppm < key; k--)
				wide[k] = wide[k - 1];
			wide[k].i = i;
			wide[k].j = j;
			wide[k].ppm = key;
			wide[k].up = zero ? up[j] : 0;
		}
	}
	if (!missed && !nwide)
		return false;
	wss_fmt_str(f, "precision: ");
	if (missed) {
		wss_fmt_str(f, "each interval's data estimate \u00b1");
		if (s->prec_median_ppm == UINT64_MAX)
			wss_fmt_str(f, "1000+");
		else
			wss_profile_pct_ppm(f, s->prec_median_ppm);
		wss_fmt_str(f, " % (median of ");
		wss_fmt_u64(f, s->prec_n);
		wss_fmt_str(f, " sampled intervals; ");
		wss_fmt_u64(f, s->prec_missed);
		wss_fmt_str(f, " missed the \u00b1");
		wss_profile_pct_ppm(f, s->prec_target_ppm);
		wss_fmt_str(f, " % target)");
	}
	if (nwide) {
		wss_fmt_str(f, missed ? "; " : "");
		wss_fmt_str(f, "above \u00b1100 %: ");
		for (int k = 0; k < nwide && k < 3; k++) {
			wss_fmt_str(f, k ? ", " : "");
			wss_fmt_str(f, names[wide[k].i]);
			wss_fmt_ch(f, ' ');
			wss_fmt_str(f, figs[wide[k].j]);
			if (wide[k].up) {
				wss_fmt_str(f, " 0 of up to ");
				wss_fmt_u64(f, wide[k].up);
			} else {
				wss_fmt_str(f, " \u00b1");
				wss_fmt_u64(f, (wide[k].ppm + 5000) / 10000);
				wss_fmt_str(f, " %");
			}
		}
		if (nwide > 3) {
			wss_fmt_str(f, " and ");
			wss_fmt_u64(f, (uint64_t)(nwide - 3));
			wss_fmt_str(f, nwide == 4 ? " more" : " more");
		}
	}
	if (s->fixed_rate) {
		wss_fmt_str(f, ". track.sample_rate fixes the sample at 1 page in ");
		wss_fmt_u64(f, s->fixed_rate);
		wss_fmt_str(f, ". For tighter figures: a finer --sample-rate, or --mode exact");
	} else if (missed || !s->prec_n) {
		/* The budget holds the sample: auto takes a larger one only
		 * while an interval's measured cost stays under a quarter of
		 * it (policy.c: room for what it cannot measure).  (No interval
		 * judged: no member was touched, the sample too small for the
		 * program's touches.) */
		bool budget = s->hold != WSS_HOLD_SPARSE && s->hold != WSS_HOLD_VMA;
		/* Calm on average but not for intervals enough in a row (a
		 * burst, a short run): not the budget's doing. */
		int hold = s->hold == WSS_HOLD_BUDGET && s->used_ppm && s->used_ppm < s->budget_ppm / 4 ? WSS_HOLD_WAIT
													  : s->hold;
		if (s->hold == WSS_HOLD_SPARSE)
			wss_fmt_str(f, ". A mapping over a gibibyte is always sampled, as coarsely as its members' "
				       "state and the kernel's limit on mappings (vm.max_map_count) need");
		else if (s->hold == WSS_HOLD_VMA)
			wss_fmt_str(f, ". The kernel's limit on mappings (vm.max_map_count) held the sample there: each "
				       "page armed apart takes one");
		else if (hold == WSS_HOLD_WAIT)
			wss_fmt_str(f, ". The run ended before auto took a larger sample: it takes one after intervals "
				       "in a row under a quarter of the ");
		else
			wss_fmt_str(f, ". The ");
		if (budget) {
			wss_profile_pct_ppm(f, s->budget_ppm);
			wss_fmt_str(f, " % budget (session.overhead");
			if (s->used_ppm) {
				wss_fmt_str(f, "; this run: ");
				wss_profile_pct_ppm(f, s->used_ppm);
				wss_fmt_str(f, " % on average");
			}
			wss_fmt_str(f, hold == WSS_HOLD_WAIT ? ")"
								: ") held the sample there: auto takes a larger one only "
								  "while an interval costs under a quarter of it");
		}
		wss_fmt_str(f, s->hold == WSS_HOLD_SPARSE || s->hold == WSS_HOLD_VMA
				       ? ". For tighter figures: --overhead 10% or --interval 1s"
				       : ". For tighter figures: --overhead 10%, --interval 1s or --mode exact");
	} else {
		wss_fmt_str(f, ". The sample is sized for the data estimate (session.precision \u00b1");
		wss_profile_pct_ppm(f, s->prec_target_ppm);
		wss_fmt_str(f, " %). For tighter figures: --precision 1%, --overhead 10% or --mode exact");
	}
	return !f->overflow;
}
