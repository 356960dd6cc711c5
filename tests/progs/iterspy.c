/* Preloaded before libwss.so by tests/integration/unwindlock.sh: counts
 * the calls to dl_iterate_phdr made from libunwind (a stack capture asking
 * the loader for unwind tables, which must never happen: issue 12) and
 * says how many at exit.  The caller is named at exit, not in the call,
 * which may be in a signal handler. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX 65536

static int (*real)(int (*)(struct dl_phdr_info *, size_t, void *), void *);
static void *callers[MAX];
static int ncalls;

static void spy_init(void);

__attribute__((constructor)) static void spy_init(void)
{
	real = (__typeof__(real))dlsym(RTLD_NEXT, "dl_iterate_phdr");
}

EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	if (!real) /* libwss.so's constructor may run first */
		spy_init();
	int i = __atomic_fetch_add(&ncalls, 1, __ATOMIC_RELAXED);
	if (i < MAX)
		callers[i] = __builtin_return_address(0);
	return real(cb, data);
}

__attribute__((destructor)) static void spy_report(void)
{
	int n = ncalls < MAX ? ncalls : MAX, from = 0;
	for (int i = 0; i < n; i++) {
		Dl_info di;
		if (dladdr(callers[i], &di) && di.dli_fname && strstr(di.dli_fname, "libunwind"))
			from++;
	}
	fprintf(stderr, "iterspy: %d calls, %d from libunwind\n", ncalls, from);
}
