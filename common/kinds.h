/* The kinds of tracked memory, shared by the writer of the profile (the
 * engine) and its reader (cli/), so that the names cannot disagree: each
 * sample's and the summary's "kinds" object is keyed by these names
 * (docs/profile-format.md).  A range's kind is decided where it is mapped
 * (preload/mman.c, the allocator's hooks, the loader's data segments). */
#ifndef WSS_COMMON_KINDS_H
#define WSS_COMMON_KINDS_H

/* The allocator's heap; private anonymous mmap()s; the executable's and
 * libraries' data segments; shared memory (MAP_SHARED anonymous, System
 * V, and mappings of memfd and tmpfs files: POSIX shm_open); mappings of
 * other regular files (not code: that is track.code); stacks (the main
 * thread's and every thread's the C library made).  NONE: untracked. */
typedef enum {
	WSS_KIND_NONE = 0,
	WSS_KIND_HEAP = 1,
	WSS_KIND_ANON = 2,
	WSS_KIND_DATA = 3,
	WSS_KIND_SHARED = 4,
	WSS_KIND_FILE = 5,
	WSS_KIND_STACK = 6,
} wss_kind_t;
#define WSS_KIND_N 7

/* The name of kind k in profiles and reports ("heap", ...); "" for NONE
 * and out of range. */
static inline const char *wss_kind_name(int k)
{
	static const char *const names[WSS_KIND_N] = {"", "heap", "anon", "data", "shared", "file", "stack"};
	return k > 0 && k < WSS_KIND_N ? names[k] : "";
}

#endif
