/* The page trace's codec (docs/trace-format.md): its constants, CRC-32,
 * varints and the encoding of each field, shared by the writer (the tick,
 * engine/trace.c) and the reader (cli/model/trace.c) so that they cannot drift.
 * Every function here is pure: no allocation, no libc call, no state, so
 * the writer may call them under the engine lock and from the tick.  The
 * reader's checks of what a field may hold stay in cli/model/trace.c. */
#ifndef WSS_COMMON_TRACEFMT_H
#define WSS_COMMON_TRACEFMT_H

#include <stddef.h>
#include <stdint.h>

/* The 16-byte header: the magic, u32 version, u32 page shift. */
#define WSS_TRACE_MAGIC "WSSTRACE"
#define WSS_TRACE_MAGIC_LEN 8
#define WSS_TRACE_HEADER_SIZE 16
#define WSS_TRACE_VERSION 1

/* Record types: the first byte of each record. */
#define WSS_TRACE_REC_INTERVAL 0x49 /* 'I' */
#define WSS_TRACE_REC_END 0x45      /* 'E' */

/* An unsigned LEB128 number takes at most this many bytes. */
#define WSS_TRACE_VARINT_MAX 10
/* A record's type byte and its length's varint, at most: the room a writer
 * leaves before a payload for wss_tracefmt_seal. */
#define WSS_TRACE_HEAD_MAX (1 + WSS_TRACE_VARINT_MAX)
/* A record's check: CRC-32, little-endian. */
#define WSS_TRACE_CHECK_SIZE 4

/* The end record's reasons. */
enum {
	WSS_TRACE_END_RUN = 1,   /* the run ended (the profile's summary follows) */
	WSS_TRACE_END_MAX = 2,   /* session.trace_max was reached */
	WSS_TRACE_END_ERROR = 3, /* the trace could not be written (an errno follows) */
};

/* The interval record's "sets" bits. */
#define WSS_TRACE_SETS_WRITES 1u
#define WSS_TRACE_SETS_READS 2u

/* An interval's event types: pages gone (unmapped or mapped over), or
 * moved with their history (mremap). */
enum { WSS_TRACE_EV_GONE = 1, WSS_TRACE_EV_MOVED = 2 };
/* An event encoded: its type byte and three varints, at most. */
#define WSS_TRACE_EVENT_MAX (1 + 3 * WSS_TRACE_VARINT_MAX)
/* A run encoded: three varints, at most. */
#define WSS_TRACE_RUN_MAX (3 * WSS_TRACE_VARINT_MAX)
/* An interval's fields before its runs, at most: seq, t_ns, level, sets,
 * nruns. */
#define WSS_TRACE_FIXED_MAX (3 * WSS_TRACE_VARINT_MAX + 2)

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32), table-driven: start
 * with 0, feed pieces in order.  AS-safe. */
uint32_t wss_tracefmt_crc32(uint32_t crc, const void *buf, size_t n);

/* v as an unsigned LEB128 number at p (room for WSS_TRACE_VARINT_MAX).
 * Returns the bytes written.  AS-safe. */
size_t wss_tracefmt_varint_encode(uint8_t *p, uint64_t v);

/* An unsigned LEB128 number from the n bytes at p.  Returns 0 with *v and
 * *used set, ENODATA when the bytes end inside it, or EOVERFLOW when it
 * passes 10 bytes or 64 bits.  AS-safe. */
int wss_tracefmt_varint_decode(const uint8_t *p, size_t n, uint64_t *v, size_t *used);

/* A little-endian u32 at p, and back.  AS-safe. */
uint32_t wss_tracefmt_le32(const uint8_t *p);
void wss_tracefmt_put_le32(uint8_t *p, uint32_t v);

/* The file's header for pages of 2^page_shift bytes into h.  AS-safe. */
void wss_tracefmt_header_encode(uint8_t h[WSS_TRACE_HEADER_SIZE], unsigned page_shift);

/* Whether h starts with the magic (1) or not (0); its version and page
 * shift into *version and *shift.  AS-safe. */
int wss_tracefmt_header_decode(const uint8_t h[WSS_TRACE_HEADER_SIZE], uint32_t *version, uint32_t *shift);

/* Makes a record of the payload buf[start, end): its type and length go
 * just before it (start must be at least WSS_TRACE_HEAD_MAX), its check at
 * buf[end, end + 4).  Returns where the record starts; it ends at end + 4.
 * AS-safe. */
size_t wss_tracefmt_seal(uint8_t *buf, uint8_t type, size_t start, size_t end);

/* An interval's fields before its runs at p (room for
 * WSS_TRACE_FIXED_MAX).  Returns the bytes written.  AS-safe. */
size_t wss_tracefmt_fixed_encode(uint8_t *p, uint64_t seq, uint64_t t_ns, unsigned level, unsigned sets,
			      uint64_t nruns);

/* One run at p (room for WSS_TRACE_RUN_MAX): gap, len1, kind as the
 * format defines them.  Returns the bytes written.  AS-safe. */
size_t wss_tracefmt_run_encode(uint8_t *p, uint64_t gap, uint64_t len1, uint64_t kind);

/* One event at p (room for WSS_TRACE_EVENT_MAX); to only for
 * WSS_TRACE_EV_MOVED.  Returns the bytes written.  AS-safe. */
size_t wss_tracefmt_event_encode(uint8_t *p, unsigned type, uint64_t from, uint64_t to, uint64_t n);

/* The end record's payload at p (room for 3 * WSS_TRACE_VARINT_MAX); err
 * only for WSS_TRACE_END_ERROR.  Returns the bytes written.  AS-safe. */
size_t wss_tracefmt_end_encode(uint8_t *p, unsigned reason, uint64_t last, uint64_t err);

/* The end record's payload (n bytes at p) into *reason, *last and *err (0
 * unless the reason is WSS_TRACE_END_ERROR).  Returns 0; ERANGE for a
 * reason the format does not know, in *reason; or EINVAL with *at the
 * offset of the field at fault and *why what is wrong.  AS-safe. */
int wss_tracefmt_end_decode(const uint8_t *p, size_t n, uint64_t *reason, uint64_t *last, uint64_t *err, size_t *at,
			 const char **why);

#endif
