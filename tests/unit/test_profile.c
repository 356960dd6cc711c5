/* The profile's records as common/profile.c formats them: the summary line
 * and record (with and without the read/write split, whole or incomplete),
 * the sample record with its threads, and the header and sample of a
 * refbits attach (cli/attach/attach_refbits.c), which uses the same writer. */
#include "config.h"
#include "common/profile.h"

#include <string.h>

#include "tests/tap/tap.h"

int main(void)
{
	char buf[1024];
	wss_fmt_t f;
	plan(19);
	wss_profile_summary_t s = {.samples = 4, .data = {1394, 534, 1098}, .page_size = 4096};
	wss_fmt_init(&f, buf, sizeof buf);
	wss_profile_summary_text(&f, &s, "data");
	is_str(wss_fmt_cstr(&f), "data avg/peak/total: 348.5/534/1098 pages (1.4/2.1/4.3 MiB)", "summary line");
	wss_fmt_reset(&f);
	wss_profile_summary(&f, &s);
	ok(strstr(wss_fmt_cstr(&f), "\"data\":{\"avg\":348.5,\"peak\":534,\"total\":1098}") != NULL, "summary record");
	ok(f.len && buf[f.len - 1] == '\n', "records end with a newline");
	ok(!strstr(wss_fmt_cstr(&f), "\"write\"") && !strstr(wss_fmt_cstr(&f), "\"read\""),
	   "no read or write series from a backend that does not see them");
	ok(!strstr(wss_fmt_cstr(&f), "incomplete"), "a whole summary says nothing of being incomplete");
	wss_fmt_reset(&f);
	s.incomplete = "no final \"sample\"";
	wss_profile_summary(&f, &s);
	ok(strstr(wss_fmt_cstr(&f), ",\"incomplete\":\"no final \\\"sample\\\"\"") != NULL,
	   "a summary without its final sample says why, as a JSON string");
	s.incomplete = NULL;
	wss_fmt_reset(&f);
	wss_profile_sample_t smp = {.seq = 3, .t_ns = 300, .data_pages = 12, .faults = 5};
	wss_profile_thread_t th = {.tid = 101, .data_pages = 12, .faults = 5, .cpu_ns = -1};
	wss_profile_sample_begin(&f, &smp);
	wss_profile_sample_thread(&f, true, &smp, &th);
	wss_profile_sample_end(&f);
	is_str(wss_fmt_cstr(&f),
	       "{\"type\":\"sample\",\"seq\":3,\"t_ns\":300,\"cpu_ns\":0,\"data_pages\":12,\"faults\":5,\"coarse\":0,\"rate\":1,"
	       "\"threads\":[{\"tid\":101,\"data_pages\":12,\"faults\":5}]}\n",
	       "sample record");
	/* hybrid: reads are data minus writes, per process and per thread */
	wss_fmt_reset(&f);
	smp.write_pages = 5;
	smp.read_pages = 7;
	smp.sets = (wss_profile_sets_t){.writes = true, .reads = true};
	th.write_pages = 4;
	wss_profile_sample_begin(&f, &smp);
	wss_profile_sample_thread(&f, true, &smp, &th);
	wss_profile_sample_end(&f);
	is_str(wss_fmt_cstr(&f),
	       "{\"type\":\"sample\",\"seq\":3,\"t_ns\":300,\"cpu_ns\":0,\"data_pages\":12,\"read_pages\":7,"
	       "\"write_pages\":5,\"faults\":5,\"coarse\":0,\"rate\":1,"
	       "\"threads\":[{\"tid\":101,\"data_pages\":12,\"read_pages\":8,\"write_pages\":4,\"faults\":5}]}\n",
	       "sample record with the read/write split");
	/* sampled: estimates with their intervals and the sampled counts */
	wss_fmt_reset(&f);
	smp.rate = 64;
	smp.ci[0] = (wss_profile_ci_t){10, 14};
	smp.ci[1] = (wss_profile_ci_t){3, 7};
	smp.ci[2] = (wss_profile_ci_t){5, 9};
	smp.tracked = 6400;
	smp.members = 100;
	smp.x[0] = 1;
	smp.x[1] = 0;
	smp.x[2] = 1;
	th.ci[0] = (wss_profile_ci_t){11, 13};
	th.ci[1] = (wss_profile_ci_t){2, 6};
	wss_profile_sample_begin(&f, &smp);
	wss_profile_sample_thread(&f, true, &smp, &th);
	wss_profile_sample_end(&f);
	is_str(wss_fmt_cstr(&f),
	       "{\"type\":\"sample\",\"seq\":3,\"t_ns\":300,\"cpu_ns\":0,\"data_pages\":12,\"read_pages\":7,"
	       "\"write_pages\":5,\"faults\":5,\"coarse\":0,\"rate\":64,"
	       "\"ci\":{\"data\":[10,14],\"read\":[5,9],\"write\":[3,7]},"
	       "\"sampled\":{\"tracked\":6400,\"members\":100,\"data\":1,\"read\":1,\"write\":0},"
	       "\"threads\":[{\"tid\":101,\"data_pages\":12,\"read_pages\":8,\"write_pages\":4,"
	       "\"ci\":{\"data\":[11,13],\"write\":[2,6]},\"faults\":5}]}\n",
	       "sampled record: estimates, intervals, the sample");
	wss_fmt_reset(&f);
	s.sets = smp.sets;
	s.write = (wss_profile_stat_t){.sum = 400, .peak = 200, .total = 300};
	s.read = (wss_profile_stat_t){.sum = 994, .peak = 334, .total = 798};
	wss_profile_summary(&f, &s);
	ok(strstr(wss_fmt_cstr(&f), "\"data\":{\"avg\":348.5,\"peak\":534,\"total\":1098},"
				     "\"read\":{\"avg\":248.5,\"peak\":334,\"total\":798},"
				     "\"write\":{\"avg\":100.0,\"peak\":200,\"total\":300}") != NULL,
	   "summary record with read and write");
	wss_fmt_reset(&f);
	wss_profile_summary_text(&f, &s, "write");
	is_str(wss_fmt_cstr(&f), "write avg/peak/total: 100.0/200/300 pages (0.4/0.8/1.2 MiB)", "write summary line");
	wss_profile_summary_t z = {.page_size = 4096};
	wss_fmt_reset(&f);
	wss_profile_summary_text(&f, &z, "data");
	is_str(wss_fmt_cstr(&f), "data avg/peak/total: 0.0/0/0 pages (0.0/0.0/0.0 MiB)", "no samples");
	/* The precision note says what held the sample (policy.c's hold). */
	wss_profile_summary_t p = {.samples = 10, .data = {1000, 100, 100}, .page_size = 4096, .rate_max = 64,
				   .prec_target_ppm = 50000, .prec_n = 10, .prec_missed = 10, .prec_median_ppm = 200000,
				   .budget_ppm = 20000, .used_ppm = 15000};
	p.data.sum_lo = 800, p.data.sum_hi = 1200, p.data.peak_ci = (wss_profile_ci_t){80, 120};
	p.data.total_ci = (wss_profile_ci_t){80, 120};
	static const struct {
		int hold;
		uint64_t used;
		const char *says;
	} holds[] = {
		{WSS_HOLD_BUDGET, 15000, "The 2.0 % budget (session.overhead; this run: 1.5 % on average) held the sample there"},
		{WSS_HOLD_BUDGET, 1000, "The run ended before auto took a larger sample"},
		{WSS_HOLD_WAIT, 15000, "The run ended before auto took a larger sample: it takes one after intervals in a row "
				       "under a quarter of the 2.0 % budget (session.overhead; this run: 1.5 % on average). "
				       "For tighter figures: --overhead 10%, --interval 1s or --mode exact"},
		{WSS_HOLD_VMA, 15000, "The kernel's limit on mappings (vm.max_map_count) held the sample there"},
		{WSS_HOLD_SPARSE, 15000, "A mapping over a gibibyte is always sampled, as coarsely as its members' state "
					 "and the kernel's limit on mappings (vm.max_map_count) need. For tighter figures: "
					 "--overhead 10% or --interval 1s"},
	};
	for (size_t i = 0; i < sizeof holds / sizeof *holds; i++) {
		p.hold = holds[i].hold;
		p.used_ppm = holds[i].used;
		wss_fmt_reset(&f);
		ok(wss_profile_precision_text(&f, &p) && strstr(wss_fmt_cstr(&f), holds[i].says),
		   "precision note, hold %d at %.1f %%: says \"%.40s...\"", holds[i].hold, holds[i].used / 10000.0,
		   holds[i].says);
		if (!strstr(wss_fmt_cstr(&f), holds[i].says))
			diag("got: %s", wss_fmt_cstr(&f));
	}

	/* wss attach --method refbits: no VMA figures, an unknown ppid, its
	 * own members in the header's fragments and the sample's extra. */
	char *argv[] = {"prog", "a\"b"};
	wss_profile_header_t h = {.pid = 7, .ppid = -1, .exe = "/bin/prog", .argc = 2, .argv = argv,
				  .start_unix_ns = 5, .kernel = "6.8", .page_size = 4096, .backend = "refbits",
				  .backend_reason = "why", .backend_sees = "reads and writes",
				  .timing = ",\"time_base\":\"wall\"", .config = ",\"attach\":{}", .no_vma = true};
	wss_fmt_reset(&f);
	wss_profile_header(&f, &h);
	is_str(wss_fmt_cstr(&f),
	       "{\"type\":\"header\",\"version\":1,\"tool\":\"wss " PACKAGE_VERSION "\",\"pid\":7,\"ppid\":-1,"
	       "\"exe\":\"/bin/prog\",\"argv\":[\"prog\",\"a\\\"b\"],\"start_unix_ns\":5,\"kernel\":\"6.8\","
	       "\"page_size\":4096,\"backend\":\"refbits\",\"backend_reason\":\"why\",\"backend_sees\":\"reads and "
	       "writes\",\"time_base\":\"wall\",\"attach\":{}}\n",
	       "a refbits header: ppid -1, no max_map_count or vma_budget");
	wss_profile_sample_t rs = {.seq = 2, .t_ns = 9, .no_cpu = true, .data_pages = 3, .final = true, .rate = 1,
				   .extra = ",\"mappings\":[]"};
	wss_profile_thread_t rt = {.tid = 0, .data_pages = 3, .cpu_ns = -1};
	wss_fmt_reset(&f);
	wss_profile_sample_begin(&f, &rs);
	wss_profile_sample_thread(&f, true, &rs, &rt);
	wss_profile_sample_end(&f);
	is_str(wss_fmt_cstr(&f),
	       "{\"type\":\"sample\",\"seq\":2,\"t_ns\":9,\"data_pages\":3,\"faults\":0,\"coarse\":0,\"final\":true,"
	       "\"rate\":1,\"mappings\":[],\"threads\":[{\"tid\":0,\"data_pages\":3,\"faults\":0}]}\n",
	       "a refbits sample: no cpu_ns, its mappings before the threads");
	return done_testing();
}
