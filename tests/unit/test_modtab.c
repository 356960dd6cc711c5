/* The engine's table of unwind tables (engine/modtab.c), synced with this
 * process's own objects: what a capture is told for an instruction with
 * unwind information, for an address in no object, for code of an object
 * that left the loader's list; the gate a sync closes; and libunwind
 * stepping from a frame of ours with the table as its only source. */
#include "config.h"
#include "engine/modtab.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "tests/tap/tap.h"

static int add_all(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	uintptr_t skip = (uintptr_t)data;
	if (!skip || info->dlpi_addr != skip)
		wss_modtab_sync_add(info);
	return 0;
}

static void sync(uintptr_t skip_bias)
{
	wss_modtab_sync_begin();
	dl_iterate_phdr(add_all, (void *)skip_bias);
	wss_modtab_sync_end(false);
}

static __attribute__((noinline)) int depth_here(void)
{
	unw_context_t uc;
	unw_cursor_t cur;
	unw_getcontext(&uc);
	if (unw_init_local(&cur, &uc) < 0)
		return -1;
	int n = 0, memo = -1;
	do {
		unw_word_t ip;
		unw_get_reg(&cur, UNW_REG_IP, &ip);
		if (wss_modtab_check(n ? ip - 1 : ip, &memo) != WSS_MODTAB_OK)
			break;
		n++;
	} while (unw_step(&cur) > 0);
	return n;
}

int main(void)
{
	sync(0);
	int memo = -1;
	ok(wss_modtab_enter(), "the table is open to captures");
	is_int(wss_modtab_check((uintptr_t)main, &memo), WSS_MODTAB_OK, "main: unwind information");
	is_int(wss_modtab_check((uintptr_t)abort, &memo), WSS_MODTAB_OK, "the C library's abort: unwind information");
	char *heap = malloc(16);
	is_int(wss_modtab_check((uintptr_t)heap, &memo), WSS_MODTAB_LATER, "a heap address: no object");
	free(heap);
	ok(depth_here() >= 3, "libunwind steps from here through main with the table alone");
	wss_modtab_leave();

	/* A sync waits for the captures inside; one that finds a sync
	 * writing gives up. */
	wss_modtab_sync_begin();
	ok(!wss_modtab_enter(), "a capture finds the table closed while a sync writes it");
	wss_modtab_sync_end(false);
	ok(wss_modtab_enter(), "and open again after");
	wss_modtab_leave();

	/* An object that left the loader's list leaves the table. */
	Dl_info di;
	if (!dladdr((void *)(uintptr_t)abort, &di) || !di.dli_fbase)
		bail("dladdr(abort) failed");
	sync((uintptr_t)di.dli_fbase); /* a shared object's bias is its base */
	ok(wss_modtab_enter(), "enter");
	memo = -1;
	is_int(wss_modtab_check((uintptr_t)abort, &memo), WSS_MODTAB_LATER, "the C library gone: its code is unknown");
	is_int(wss_modtab_check((uintptr_t)main, &memo), WSS_MODTAB_OK, "main still has its information");
	wss_modtab_leave();
	sync(0);
	ok(wss_modtab_enter(), "enter");
	memo = -1;
	is_int(wss_modtab_check((uintptr_t)abort, &memo), WSS_MODTAB_OK, "back in the list: known again");
	wss_modtab_leave();
	return done_testing();
}
