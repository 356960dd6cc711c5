/* A library with its own data segment, for dlopen/dlclose tests: 256 pages
 * of .bss and a page of .data.  Built twice (VARIANT 1 and 2) so that one
 * can be loaded where the other was; with WSS_TEST_BAD it also refers to a
 * symbol nothing defines, so dlopen with RTLD_NOW fails after mapping it. */
#define PAGES 256
#define EXPORT __attribute__((visibility("default"))) /* the build hides symbols by default */

EXPORT long dl_touch(int n);
#ifdef WSS_TEST_BAD
EXPORT int dl_bad(void);
#endif

static char bss[PAGES][4096];
EXPORT int dl_data_variant = VARIANT;

#ifdef WSS_TEST_BAD
extern int wss_test_no_such_symbol;
EXPORT int dl_bad(void) { return wss_test_no_such_symbol; }
#endif

/* Write one byte in each of the first n pages; returns a checksum. */
EXPORT long dl_touch(int n)
{
	long sum = 0;
	for (int i = 0; i < n && i < PAGES; i++) {
		bss[i][0]++;
		sum += bss[i][0] + dl_data_variant;
	}
	return sum;
}
