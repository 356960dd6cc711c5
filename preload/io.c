/* System calls that hand a user buffer to the kernel fail with EFAULT when
 * the buffer sits on an armed page: the kernel does not raise SIGSEGV for
 * its own accesses.  These wrappers open the buffer's tracked pages first
 * (a one-byte read per page, which goes through our fault handler and so
 * counts the page as touched: the kernel does touch it) and retry once if a
 * tick re-armed a page in between.  This covers the calls programs make
 * through the PLT most often; the full set and a race-free mechanism are
 * listed in docs/limits.md. */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/shadow.h"

void wss_touch_range(const void *p, unsigned long n)
{
	if (!n || !wss_engine_active())
		return;
	uintptr_t a = (uintptr_t)p & ~(WSS_PAGE_SIZE - 1), end = (uintptr_t)p + n;
	if (end < a)
		return;
	for (; a < end; a += WSS_PAGE_SIZE) {
		uint8_t *fl = wss_shadow_flags(a);
		if (!fl)
			continue;
		uint8_t f = __atomic_load_n(fl, __ATOMIC_RELAXED);
		/* Only tracked pages the application can read: anything else
		 * must fail in the kernel exactly as it would without us. */
		if ((f & WSS_PF_TRACKED) && (f & (PROT_READ | PROT_WRITE)))
			(void)*(volatile const char *)a;
	}
}

static void touch_iov(const struct iovec *iov, int n)
{
	for (int i = 0; i < n && iov; i++)
		wss_touch_range(iov[i].iov_base, iov[i].iov_len);
}

#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

#define GUARDED(call, touch) \
	do { \
		touch; \
		ssize_t r_ = call; \
		if (r_ < 0 && errno == EFAULT && wss_engine_active()) { \
			touch; \
			r_ = call; \
		} \
		return r_; \
	} while (0)

WSS_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	REAL(read);
	GUARDED(real_read(fd, buf, n), wss_touch_range(buf, n));
}

WSS_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	REAL(write);
	GUARDED(real_write(fd, buf, n), wss_touch_range(buf, n));
}

WSS_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	REAL(pread);
	GUARDED(real_pread(fd, buf, n, off), wss_touch_range(buf, n));
}

WSS_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	REAL(pwrite);
	GUARDED(real_pwrite(fd, buf, n, off), wss_touch_range(buf, n));
}

WSS_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));
WSS_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) __attribute__((alias("pwrite")));

WSS_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	REAL(readv);
	GUARDED(real_readv(fd, iov, n), touch_iov(iov, n));
}

WSS_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	REAL(writev);
	GUARDED(real_writev(fd, iov, n), touch_iov(iov, n));
}
