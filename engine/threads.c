/* Thread slots (see threads.h).  The calling thread's slot lives in
 * initial-exec TLS, which is safe to read in a signal handler for a library
 * loaded at start-up (LD_PRELOAD): no lazy TLS allocation can happen. */
#include "config.h"
#include "engine/threads.h"

#include <errno.h>
#include <string.h>

#include "common/sys.h"

static wss_thread_t *threads_table;
static uint32_t threads_next = 1;
static __thread uint32_t threads_tls_slot __attribute__((tls_model("initial-exec")));

int wss_threads_init(void)
{
	if (threads_table)
		return 0;
	threads_table = wss_sys_alloc(WSS_MAX_SLOTS * sizeof *threads_table);
	return threads_table ? 0 : ENOMEM;
}

uint32_t wss_threads_self(void)
{
	uint32_t s = threads_tls_slot;
	if (s)
		return s;
	s = __atomic_fetch_add(&threads_next, 1, __ATOMIC_RELAXED);
	if (s >= WSS_MAX_SLOTS - 1) {
		s = WSS_MAX_SLOTS - 1; /* shared overflow slot, tid 0 */
	} else {
		__atomic_store_n(&threads_table[s].tid, wss_sys_gettid(), __ATOMIC_RELEASE);
	}
	threads_tls_slot = s;
	return s;
}

uint32_t wss_threads_count(void)
{
	uint32_t n = __atomic_load_n(&threads_next, __ATOMIC_ACQUIRE);
	return (n > WSS_MAX_SLOTS ? WSS_MAX_SLOTS : n) - 1;
}

wss_thread_t *wss_threads_get(uint32_t slot) { return &threads_table[slot]; }

void wss_threads_reset(void)
{
	uint32_t n = wss_threads_count();
	for (uint32_t s = 0; s <= n; s++) /* 0: touches no thread is known for */
		memset(&threads_table[s], 0, sizeof threads_table[s]);
	if (n >= WSS_MAX_SLOTS - 2)
		memset(&threads_table[WSS_MAX_SLOTS - 1], 0, sizeof threads_table[0]);
	__atomic_store_n(&threads_next, 1, __ATOMIC_RELAXED);
	threads_tls_slot = 0;
}
