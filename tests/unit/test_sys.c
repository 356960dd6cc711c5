/* common/sys.c: the tool's allocations while attached, as a reader sees
 * them (wss_sys_own_list: what an attached engine leaves out of the
 * process's memory), and wss_fs_pseudo. */
#include "config.h"
#include "common/sys.h"

#include <linux/magic.h>
#include <stdlib.h>

#include "tests/tap/tap.h"

static wss_own_t list[WSS_SYS_OWN_SLOTS + 1];

/* Whether [p, p + len) is an entry of the list, n entries long. */
static bool listed(size_t n, const void *p, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (list[i].start == (uintptr_t)p && list[i].end == (uintptr_t)p + len)
			return true;
	return false;
}

int main(void)
{
	is_int((long long)wss_sys_own_list(list, WSS_SYS_OWN_SLOTS + 1), 0, "not attached: no list");
	if (wss_sys_alloc_attached())
		bail("wss_sys_alloc_attached");
	is_int((long long)wss_sys_own_list(list, WSS_SYS_OWN_SLOTS + 1), 1, "attached: the list's own table alone");
	void *a = wss_sys_alloc(4096), *b = wss_sys_alloc(3 * 4096), *c = wss_sys_alloc(100);
	if (!a || !b || !c)
		bail("wss_sys_alloc");
	size_t n = wss_sys_own_list(list, WSS_SYS_OWN_SLOTS + 1);
	is_int((long long)n, 4, "three allocations: four entries");
	ok(listed(n, a, 4096) && listed(n, b, 3 * 4096) && listed(n, c, 100), "each with its start and length");
	wss_sys_free(b, 3 * 4096);
	n = wss_sys_own_list(list, WSS_SYS_OWN_SLOTS + 1);
	ok(n == 3 && !listed(n, b, 3 * 4096) && listed(n, a, 4096) && listed(n, c, 100), "one freed: gone from the list");
	void *d = wss_sys_alloc(2 * 4096);
	n = wss_sys_own_list(list, WSS_SYS_OWN_SLOTS + 1);
	ok(n == 4 && listed(n, d, 2 * 4096), "a new one takes the freed slot");
	is_int((long long)wss_sys_own_list(list, 2), 2, "a short buffer: as many as fit");
	is_int((long long)wss_sys_release_all(), 0, "released, none leaked");
	is_int((long long)wss_sys_own_list(list, WSS_SYS_OWN_SLOTS + 1), 0, "no list after the release");

	ok(wss_fs_pseudo(SYSFS_MAGIC) && wss_fs_pseudo(HUGETLBFS_MAGIC) && wss_fs_pseudo(PROC_SUPER_MAGIC),
	   "sysfs, hugetlbfs, proc: no data of the program's");
	ok(!wss_fs_pseudo(TMPFS_MAGIC) && !wss_fs_pseudo(EXT4_SUPER_MAGIC), "tmpfs, ext4: data");
	return done_testing();
}
