/* Helpers over raw system calls shared by every layer: whole writes and the
 * tool's own page allocations.  Nothing here uses the C library, so all of it
 * may be called from the fault handler or before the C library is ready. */
#include "config.h"
#include "common/sys.h"

#include <errno.h>
#include <sys/mman.h>

int wss_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		long r = wss_sys_write(fd, p, len);
		if (r == -EINTR)
			continue;
		if (wss_sys_failed(r))
			return (int)-r;
		if (r == 0)
			return EIO;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

void *wss_sys_alloc(size_t len)
{
	void *p = wss_sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return wss_sys_failed((long)p) ? NULL : p;
}

void wss_sys_free(void *p, size_t len)
{
	if (p)
		wss_sys_munmap(p, len);
}
