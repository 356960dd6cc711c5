/* The page trace's codec (common/tracefmt.c), shared by the writer and the
 * reader: CRC-32 against its check value, varints round-tripped at every
 * length's edges and refused past 64 bits, the header, a sealed record
 * against bytes written out by hand, events and the end record. */
#include "config.h"
#include "common/tracefmt.h"

#include <errno.h>
#include <string.h>

#include "tests/tap/tap.h"

static void test_crc(void)
{
	is_int(wss_tracefmt_crc32(0, "123456789", 9), 0xcbf43926, "CRC-32 of \"123456789\" is the IEEE check value");
	uint32_t c = wss_tracefmt_crc32(0, "1234", 4);
	is_int(wss_tracefmt_crc32(c, "56789", 5), 0xcbf43926, "CRC-32 fed in two pieces");
	is_int(wss_tracefmt_crc32(0, "", 0), 0, "CRC-32 of nothing is 0");
	static const uint8_t zeros[32];
	is_int(wss_tracefmt_crc32(0, zeros, sizeof zeros), 0x190a55ad, "CRC-32 of 32 zero bytes");
}

static void test_varint(void)
{
	uint64_t v;
	size_t used;
	static const uint8_t a[] = {0xac, 0x02};
	ok(!wss_tracefmt_varint_decode(a, 2, &v, &used) && v == 300 && used == 2, "0xac 0x02 is 300 in 2 bytes");
	static const uint8_t z[] = {0x00};
	ok(!wss_tracefmt_varint_decode(z, 1, &v, &used) && v == 0 && used == 1, "0x00 is 0");
	is_int(wss_tracefmt_varint_decode(a, 1, &v, &used), ENODATA, "a varint cut short: ENODATA");
	is_int(wss_tracefmt_varint_decode(a, 0, &v, &used), ENODATA, "no bytes at all: ENODATA");
	uint8_t max[10];
	memset(max, 0xff, 9);
	max[9] = 0x01;
	ok(!wss_tracefmt_varint_decode(max, 10, &v, &used) && v == UINT64_MAX && used == 10, "ten bytes: 2^64 - 1");
	max[9] = 0x02;
	is_int(wss_tracefmt_varint_decode(max, 10, &v, &used), EOVERFLOW, "a tenth byte above 1 overflows 64 bits");
	uint8_t eleven[11];
	memset(eleven, 0x80, 10);
	eleven[10] = 0;
	is_int(wss_tracefmt_varint_decode(eleven, 11, &v, &used), EOVERFLOW, "more than ten bytes overflows");

	/* Each length's edges: 2^(7k) - 1 takes k bytes, 2^(7k) one more. */
	int bad = 0;
	for (int k = 0; k <= 9; k++) {
		uint64_t edge = k == 0 ? 0 : (uint64_t)1 << (7 * k);
		uint64_t vals[3] = {edge ? edge - 1 : 0, edge, edge + 1};
		for (int j = 0; j < 3; j++) {
			uint8_t p[WSS_TRACE_VARINT_MAX + 1];
			memset(p, 0xee, sizeof p);
			size_t n = wss_tracefmt_varint_encode(p, vals[j]);
			size_t want = 1;
			for (uint64_t x = vals[j]; x >= 0x80; x >>= 7)
				want++;
			if (n != want || p[n] != 0xee || wss_tracefmt_varint_decode(p, n, &v, &used) || v != vals[j] ||
			    used != n || (n > 1 && wss_tracefmt_varint_decode(p, n - 1, &v, &used) != ENODATA)) {
				diag("value %llu: %zu bytes, want %zu", (unsigned long long)vals[j], n, want);
				bad++;
			}
		}
	}
	is_int(bad, 0, "round trip at 2^(7k) - 1, 2^(7k), 2^(7k) + 1 for k = 0..9, each cut one byte short");
	uint8_t p[WSS_TRACE_VARINT_MAX];
	size_t n = wss_tracefmt_varint_encode(p, UINT64_MAX);
	ok(n == 10 && !memcmp(p, max, 9) && p[9] == 0x01, "2^64 - 1 encodes as nine 0xff and 0x01");
	n = wss_tracefmt_varint_encode(p, 300);
	ok(n == 2 && p[0] == 0xac && p[1] == 0x02, "300 encodes as 0xac 0x02");
}

static void test_header(void)
{
	uint8_t h[WSS_TRACE_HEADER_SIZE];
	wss_tracefmt_header_encode(h, 12);
	static const uint8_t want[] = {'W', 'S', 'S', 'T', 'R', 'A', 'C', 'E', 1, 0, 0, 0, 12, 0, 0, 0};
	ok(!memcmp(h, want, sizeof want), "the header: WSSTRACE, version 1, page shift 12");
	uint32_t version = 0, shift = 0;
	ok(wss_tracefmt_header_decode(h, &version, &shift) && version == 1 && shift == 12, "and back");
	h[3] = 'X';
	ok(!wss_tracefmt_header_decode(h, &version, &shift), "a wrong magic is refused");
}

/* seq 5, t_ns 300, level 0, sets 3, three runs: pages 0x100-0x102
 * written by 42, 0x103 the same (kind 0), 0x109 read by 7; no events.
 * The same bytes as the reader's test (tests/unit/test_trace.c). */
static const uint8_t payload[] = {0x05, 0xac, 0x02, 0x00, 0x03, 0x03, 0x80, 0x02, 0x02,
				  0x56, 0x00, 0x00, 0x00, 0x05, 0x00, 0x0f, 0x00};

static void test_records(void)
{
	uint8_t b[WSS_TRACE_HEAD_MAX + 64];
	size_t start = WSS_TRACE_HEAD_MAX, n = start;
	n += wss_tracefmt_fixed_encode(b + n, 5, 300, 0, WSS_TRACE_SETS_WRITES | WSS_TRACE_SETS_READS, 3);
	n += wss_tracefmt_run_encode(b + n, 0x100, 2, 1 + (42 << 1 | 1));
	n += wss_tracefmt_run_encode(b + n, 0, 0, 0);
	n += wss_tracefmt_run_encode(b + n, 5, 0, 1 + (7 << 1 | 0));
	n += wss_tracefmt_varint_encode(b + n, 0);
	ok(n - start == sizeof payload && !memcmp(b + start, payload, sizeof payload),
	   "an interval's fields and runs encode as the format says");
	size_t at = wss_tracefmt_seal(b, WSS_TRACE_REC_INTERVAL, start, n);
	ok(at == start - 2 && b[at] == 'I' && b[at + 1] == sizeof payload, "sealed: the type and length before it");
	is_int(wss_tracefmt_le32(b + n), wss_tracefmt_crc32(0, b + at, n - at),
	       "and the CRC-32 of type, length and payload after it");

	uint8_t e[WSS_TRACE_EVENT_MAX];
	static const uint8_t gone[] = {0x01, 0x80, 0x04, 0x04};
	static const uint8_t moved[] = {0x02, 0x80, 0x06, 0x80, 0x0a, 0x02};
	n = wss_tracefmt_event_encode(e, WSS_TRACE_EV_GONE, 0x200, 0x999, 4);
	ok(n == sizeof gone && !memcmp(e, gone, n), "an event of pages gone: no destination");
	n = wss_tracefmt_event_encode(e, WSS_TRACE_EV_MOVED, 0x300, 0x500, 2);
	ok(n == sizeof moved && !memcmp(e, moved, n), "an event of pages moved");

	uint8_t p[3 * WSS_TRACE_VARINT_MAX];
	uint64_t reason, last, err;
	size_t where;
	const char *why;
	n = wss_tracefmt_end_encode(p, WSS_TRACE_END_ERROR, 300, ENOSPC);
	ok(n == 4 && !wss_tracefmt_end_decode(p, n, &reason, &last, &err, &where, &why) &&
	       reason == WSS_TRACE_END_ERROR && last == 300 && err == ENOSPC,
	   "an end record for an error round-trips with its errno");
	n = wss_tracefmt_end_encode(p, WSS_TRACE_END_RUN, 7, ENOSPC);
	ok(n == 2 && !wss_tracefmt_end_decode(p, n, &reason, &last, &err, &where, &why) &&
	       reason == WSS_TRACE_END_RUN && last == 7 && err == 0,
	   "an end record for the run's end has no errno");
	p[n] = 0;
	ok(wss_tracefmt_end_decode(p, n + 1, &reason, &last, &err, &where, &why) == EINVAL && where == 2,
	   "a byte after its fields: EINVAL at offset 2");
	ok(wss_tracefmt_end_decode(p, 1, &reason, &last, &err, &where, &why) == EINVAL && where == 1,
	   "cut inside its fields: EINVAL at offset 1");
	p[0] = 4;
	ok(wss_tracefmt_end_decode(p, 2, &reason, &last, &err, &where, &why) == ERANGE && reason == 4,
	   "an unknown reason: ERANGE, and which");
}

int main(void)
{
	plan(27);
	test_crc();
	test_varint();
	test_header();
	test_records();
	return done_testing();
}
