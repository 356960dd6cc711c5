/* libFuzzer target (`make fuzz`): any bytes as a page trace through the
 * reader (cli/model/trace.c), twice (a rewind between), with a profile made from
 * the input's first bytes so the bounds against each interval's sample run
 * too, and (a flag in those bytes) each record's check made right so that
 * mutations get past it.  Beyond what the sanitizers catch, it aborts when a record the
 * reader accepted breaks the format's contract (runs out of order, pages
 * miscounted, more pages than its sample allows: the analyses walk what
 * the reader returns, so the reader is where a claimed length must stop),
 * and libFuzzer's -timeout catches a record that costs the reader more
 * than its bytes. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/model/load.h"
#include "cli/model/trace.h"
#include "common/sample.h"

/* The first PROFILE_BYTES bytes choose the profile: a sample count, then
 * per sample its rate's level, data_pages and tracked pages. */
#define NSAMPLES_MAX 8
#define PROFILE_BYTES (2 + 3 * NSAMPLES_MAX)

static void make_profile(const uint8_t *b, wss_profile_t *p, wss_sample_t *s)
{
	memset(p, 0, sizeof *p);
	p->nsamples = b[1] % (NSAMPLES_MAX + 1);
	p->samples = s;
	for (size_t k = 0; k < p->nsamples; k++) {
		const uint8_t *x = b + 2 + 3 * k;
		memset(&s[k], 0, sizeof s[k]);
		s[k].seq = (int64_t)k + 1;
		s[k].rate = (int64_t)1 << (x[0] % 4);
		s[k].data = x[1];
		s[k].tracked = x[0] & 0x80 ? -1 : (int64_t)x[2] * 16;
		s[k].sampled[WSS_SERIES_DATA] = s[k].rate > 1 ? x[1] / 2 : -1;
	}
}

/* What sample_bound in cli/model/trace.c allows, computed apart. */
static uint64_t most_pages(const wss_profile_t *p, const wss_trace_interval_t *iv)
{
	if (iv->seq > p->nsamples)
		return 0;
	const wss_sample_t *s = &p->samples[iv->seq - 1];
	if (s->rate == 1)
		return (uint64_t)s->data;
	if (s->rate == (int64_t)1 << iv->level && s->sampled[WSS_SERIES_DATA] >= 0)
		return (uint64_t)s->sampled[WSS_SERIES_DATA];
	return s->tracked >= 0 ? (uint64_t)s->tracked : (uint64_t)s->data;
}

static void check(const wss_trace_t *t, const wss_trace_interval_t *iv)
{
	uint64_t pages = 0, end = 0;
	for (size_t k = 0; k < iv->nruns; k++) {
		const wss_trace_run_t *r = &iv->runs[k];
		if (r->n == 0 || (k && r->first < end))
			abort();
		pages += r->n;
		end = r->first + r->n;
	}
	if (pages != iv->pages || iv->seq == 0 || iv->level > WSS_SAMPLE_LEVEL_MAX)
		abort();
	if (t->prof && iv->pages > most_pages(t->prof, iv))
		abort();
}

/* Rewrites each whole record's check to match: mutations of a valid trace
 * then reach the decoder and the bounds instead of stopping at the CRC. */
static void seal(uint8_t *b, size_t n)
{
	size_t at = WSS_TRACE_HEADER_SIZE;
	while (at + 1 < n) {
		uint64_t len;
		size_t used;
		if (wss_tracefmt_varint_decode(b + at + 1, n - at - 1, &len, &used) || len > n)
			return;
		size_t body = 1 + used + (size_t)len;
		if (body + 4 > n - at)
			return;
		uint32_t crc = wss_tracefmt_crc32(0, b + at, body);
		for (int k = 0; k < 4; k++)
			b[at + body + k] = (uint8_t)(crc >> (8 * k));
		at += body + 4;
	}
}

static void read_all(wss_trace_t *t)
{
	wss_trace_interval_t iv;
	bool got;
	while (!wss_trace_next(t, &iv, &got) && got)
		check(t, &iv);
	char end[160];
	wss_trace_describe_end(t, end, sizeof end);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < PROFILE_BYTES)
		return 0;
	wss_profile_t prof;
	wss_sample_t samples[NSAMPLES_MAX];
	make_profile(data, &prof, samples);
	bool with_profile = data[0] & 1, members = data[0] & 2, sealed = data[0] & 4;
	data += PROFILE_BYTES;
	size -= PROFILE_BYTES;

	/* The decoder alone, on the bytes as one payload. */
	wss_trace_store_t st = {0};
	wss_trace_interval_t iv;
	size_t at;
	const char *why;
	if (!wss_trace_decode_interval(data, size, 12, &iv, &st, &at, &why))
		check(&(wss_trace_t){0}, &iv);
	else if (at > size)
		abort();
	free(st.runs);
	free(st.events);

	/* The reader, on the bytes as a file. */
	int fd = memfd_create("fuzz_trace", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	uint8_t *file = malloc(size ? size : 1);
	if (!file) {
		close(fd);
		return 0;
	}
	memcpy(file, data, size);
	if (sealed)
		seal(file, size);
	ssize_t wrote = write(fd, file, size);
	free(file);
	if (wrote != (ssize_t)size) {
		close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	wss_trace_t t;
	if (!wss_trace_open(&t, path)) {
		t.prof = with_profile ? &prof : NULL;
		t.member_check = members;
		t.seed = 0x5eed;
		read_all(&t);
		if (!wss_trace_rewind(&t))
			read_all(&t);
		wss_trace_close(&t);
	}
	close(fd);
	return 0;
}
