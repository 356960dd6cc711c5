/* Offline symbolisation of a profile's addresses with elfutils' libdwfl:
 * each module record (path, load bias, build-id) is opened from disk on
 * first use, and an address becomes one frame per function at that place,
 * innermost first, with inlined calls as frames of their own (as
 * `addr2line -i` shows them).  Without DWARF the ELF symbol table gives
 * function+offset; without either, module+offset. */
#ifndef WSS_CLI_SYMBOLS_H
#define WSS_CLI_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/model/load.h"

typedef struct wss_frame {
	uint64_t addr;		/* the address as recorded */
	const char *function;	/* NULL: unknown */
	uint64_t function_offset; /* addr - the symbol's start (symbol-table names only) */
	bool has_function_offset;
	const char *file;	/* NULL: no line information */
	int line;
	bool inlined;		/* a call inlined into the next frame */
	const wss_module_t *module; /* NULL: no module record covers addr */
	uint64_t offset;	/* addr - module bias (the ELF's own address) */
	const char *note;	/* why the module could not be used, or NULL */
} wss_frame_t;

typedef struct wss_symbols wss_symbols_t;

/* A symboliser over p's module records (p must outlive it).  Returns NULL
 * when out of memory.  Nothing is opened until an address needs it. */
wss_symbols_t *wss_sym_open(const wss_profile_t *p);
void wss_sym_close(wss_symbols_t *s);

/* Appends the frames of address addr to *out (a growing array of *n, with
 * room *cap).  return_address: addr is a return address, so the call
 * before it is looked up (addr - 1), as addr2line users do.  The strings
 * in the frames live as long as s.  Returns 0 or ENOMEM. */
int wss_sym_frames(wss_symbols_t *s, uint64_t addr, bool return_address, wss_frame_t **out, size_t *n, size_t *cap);

#endif
