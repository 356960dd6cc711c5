/* System calls that hand a user buffer to the kernel fail with EFAULT when
 * the buffer sits on an armed page: the kernel does not raise SIGSEGV for
 * its own accesses.  These wrappers pin the buffer for the duration of the
 * call (engine/pins.c: its tracked pages are opened and counted as touched, since
 * the kernel does touch them, and no tick arms them until the call returns).
 * Only when the pin table is full do they fall back to opening the pages by
 * touching them and retrying once on EFAULT.  Covered: the calls programs
 * make through the PLT most often, their _FORTIFY_SOURCE variants, and the
 * stdio calls that move data straight to or from the caller's buffer; the
 * rest are listed in docs/limits.md. */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/sys.h"
#include "engine/engine.h"

extern ssize_t __read_chk(int, void *, size_t, size_t);
extern ssize_t __pread_chk(int, void *, size_t, off_t, size_t);
extern size_t __fread_chk(void *, size_t, size_t, size_t, FILE *);
extern size_t __fread_unlocked_chk(void *, size_t, size_t, size_t, FILE *);
#undef fread_unlocked
#undef fwrite_unlocked

void wss_touch_range(const void *p, unsigned long n)
{
	if (!n || !wss_engine_active())
		return;
	uintptr_t a = wss_page_down((uintptr_t)p), end = (uintptr_t)p + n;
	if (end < a)
		return;
	for (; a < end; a += WSS_PAGE_SIZE) {
		int prot;
		/* Only tracked pages the application can read: anything else
		 * must fail in the kernel exactly as it would without us. */
		if (wss_engine_tracked_page(a, &prot) && (prot & (PROT_READ | PROT_WRITE)))
			(void)*(volatile const char *)a;
	}
}

static void touch_iov(const struct iovec *iov, int n)
{
	for (int i = 0; i < n && iov; i++)
		wss_touch_range(iov[i].iov_base, iov[i].iov_len);
}

/* The C library's functions, resolved at start-up (dlsym is not
 * async-signal-safe, and write() may be called from a signal handler);
 * lazily only for calls made before our constructor. */
#define IO_FUNCS(X) \
	X(read) X(write) X(pread) X(pwrite) X(readv) X(writev) X(__read_chk) X(__pread_chk) \
	X(fread) X(fread_unlocked) X(__fread_chk) X(__fread_unlocked_chk) X(fwrite) X(fwrite_unlocked) \
	X(setvbuf) X(setbuf) X(setbuffer)
IO_FUNCS(WSS_REAL_DECLARE)

void wss_io_init(void) { IO_FUNCS(WSS_REAL_RESOLVE) }

/* Run call with [buf, buf+len) pinned; see the top of this file. */
#define GUARDED(call, buf, len) \
	do { \
		int pin_ = wss_engine_pin((buf), (len)); \
		if (pin_ < 0) \
			wss_touch_range((buf), (len)); \
		ssize_t r_ = call; \
		if (pin_ < 0 && r_ < 0 && errno == EFAULT && wss_engine_active()) { \
			wss_touch_range((buf), (len)); \
			r_ = call; \
		} \
		wss_engine_unpin(pin_); \
		return r_; \
	} while (0)

#define IOV_PINS 16

/* Pin every buffer of an iovec; returns false (nothing left pinned) when
 * they do not all fit. */
static bool pin_iov(const struct iovec *iov, int n, int *pins)
{
	for (int i = 0; i < n; i++) {
		pins[i] = i < IOV_PINS ? wss_engine_pin(iov[i].iov_base, iov[i].iov_len) : -1;
		if (pins[i] < 0) {
			for (int j = 0; j < i; j++)
				wss_engine_unpin(pins[j]);
			return false;
		}
	}
	return true;
}

#define GUARDED_IOV(call, iov, n) \
	do { \
		int pins_[IOV_PINS]; \
		bool pinned_ = (n) >= 0 && (n) <= IOV_PINS && pin_iov((iov), (n), pins_); \
		if (!pinned_) \
			touch_iov((iov), (n)); \
		ssize_t r_ = call; \
		if (!pinned_ && r_ < 0 && errno == EFAULT && wss_engine_active()) { \
			touch_iov((iov), (n)); \
			r_ = call; \
		} \
		for (int i_ = 0; pinned_ && i_ < (n); i_++) \
			wss_engine_unpin(pins_[i_]); \
		return r_; \
	} while (0)

/* stdio moves a request straight between the caller's buffer and the
 * kernel only when it is at least a buffer long (glibc's _IO_file_xsgetn
 * and _IO_new_file_xsputn: the part past what the buffer takes, rounded
 * down to whole buffers when the buffer is 128 bytes or more; every
 * request of an unbuffered stream, whose buffer is 1 byte).  A shorter
 * request to a stream whose buffer exists only goes through that buffer,
 * copied by the C library in user space, where a touch of an armed page
 * is an ordinary fault: no pin.  (sort writes 3 million lines through
 * fwrite_unlocked: pinning each was 4 % of its CPU time.)  The buffer
 * itself is the C library's (arena 0, untracked: malloc.c) or the
 * program's, given with setvbuf and excluded from tracking then. */
static inline bool through_buffer(FILE *f, size_t len)
{
	if (!f || !f->_IO_buf_base || f->_IO_buf_end <= f->_IO_buf_base)
		return false;
	size_t block = (size_t)(f->_IO_buf_end - f->_IO_buf_base);
	return block >= 128 && len < block;
}

/* stdio: an EFAULT inside sets the stream's error flag, so no retry. */
#define GUARDED_STDIO(call, f, buf, len) \
	do { \
		if (through_buffer((f), (len))) \
			return call; \
		int pin_ = wss_engine_pin((buf), (len)); \
		if (pin_ < 0) \
			wss_touch_range((buf), (len)); \
		size_t r_ = call; \
		wss_engine_unpin(pin_); \
		return r_; \
	} while (0)

/* libunwind checks an address by a write of it to its pipe and a read back,
 * in our fault handler (engine/sites.c).  Through the C library both are
 * cancellation points: with a pthread_cancel pending, the read unwound the
 * thread from the capture's stack and _Unwind_ForcedUnwind died there
 * (robust cancel, SIGSEGV, 1 run in 5 of robust.sh under make soak).  The
 * unwinder's reads and writes are raw system calls. */
static ssize_t unwinder_rw(long nr, int fd, const void *buf, size_t n)
{
	long r = wss_sys3(nr, fd, buf, n);
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

WSS_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	WSS_REAL(read);
	if (wss_engine_unwinding())
		GUARDED(unwinder_rw(SYS_read, fd, buf, n), buf, n);
	GUARDED(real_read(fd, buf, n), buf, n);
}

WSS_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	WSS_REAL(write);
	if (wss_engine_unwinding())
		GUARDED(unwinder_rw(SYS_write, fd, buf, n), buf, n);
	GUARDED(real_write(fd, buf, n), buf, n);
}

WSS_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	WSS_REAL(pread);
	GUARDED(real_pread(fd, buf, n, off), buf, n);
}

WSS_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	WSS_REAL(pwrite);
	GUARDED(real_pwrite(fd, buf, n, off), buf, n);
}

WSS_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off) __attribute__((alias("pread")));
WSS_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) __attribute__((alias("pwrite")));

WSS_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	WSS_REAL(readv);
	GUARDED_IOV(real_readv(fd, iov, n), iov, n);
}

WSS_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	WSS_REAL(writev);
	GUARDED_IOV(real_writev(fd, iov, n), iov, n);
}

/* _FORTIFY_SOURCE builds (Debian's default) call these instead. */
WSS_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	WSS_REAL(__read_chk);
	GUARDED(real___read_chk(fd, buf, n, buflen), buf, n < buflen ? n : buflen);
}

WSS_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	WSS_REAL(__pread_chk);
	GUARDED(real___pread_chk(fd, buf, n, off, buflen), buf, n < buflen ? n : buflen);
}

WSS_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
	__attribute__((alias("__pread_chk")));

/* stdio moves large requests straight between the caller's buffer and the
 * kernel. */
WSS_EXPORT size_t fread(void *buf, size_t size, size_t n, FILE *f)
{
	WSS_REAL(fread);
	GUARDED_STDIO(real_fread(buf, size, n, f), f, buf, size * n);
}

WSS_EXPORT size_t fread_unlocked(void *buf, size_t size, size_t n, FILE *f)
{
	WSS_REAL(fread_unlocked);
	GUARDED_STDIO(real_fread_unlocked(buf, size, n, f), f, buf, size * n);
}

WSS_EXPORT size_t __fread_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f)
{
	WSS_REAL(__fread_chk);
	GUARDED_STDIO(real___fread_chk(buf, buflen, size, n, f), f, buf, size * n < buflen ? size * n : buflen);
}

WSS_EXPORT size_t __fread_unlocked_chk(void *buf, size_t buflen, size_t size, size_t n, FILE *f)
{
	WSS_REAL(__fread_unlocked_chk);
	GUARDED_STDIO(real___fread_unlocked_chk(buf, buflen, size, n, f), f, buf, size * n < buflen ? size * n : buflen);
}

WSS_EXPORT size_t fwrite(const void *buf, size_t size, size_t n, FILE *f)
{
	WSS_REAL(fwrite);
	GUARDED_STDIO(real_fwrite(buf, size, n, f), f, buf, size * n);
}

WSS_EXPORT size_t fwrite_unlocked(const void *buf, size_t size, size_t n, FILE *f)
{
	WSS_REAL(fwrite_unlocked);
	GUARDED_STDIO(real_fwrite_unlocked(buf, size, n, f), f, buf, size * n);
}

/* A buffer the program gives a stream is handed to the kernel by the C
 * library whenever the stream flushes (in printf, at exit, from any
 * thread), past every wrapper: an armed page there failed the write with
 * EFAULT and the output was lost (a setvbuf'd heap buffer flushed after a
 * tick: 0 of 8,890 bytes).  Its pages leave tracking for good
 * (wss_engine_exclude, as a signal stack's do); the stream's own buffer,
 * the C library's, is never tracked. */
WSS_EXPORT int setvbuf(FILE *f, char *buf, int mode, size_t size)
{
	WSS_REAL(setvbuf);
	if (buf && mode != _IONBF && size)
		wss_engine_exclude(buf, size);
	return real_setvbuf(f, buf, mode, size);
}

WSS_EXPORT void setbuf(FILE *f, char *buf)
{
	WSS_REAL(setbuf);
	if (buf)
		wss_engine_exclude(buf, BUFSIZ);
	real_setbuf(f, buf);
}

WSS_EXPORT void setbuffer(FILE *f, char *buf, size_t size)
{
	WSS_REAL(setbuffer);
	if (buf && size)
		wss_engine_exclude(buf, size);
	real_setbuffer(f, buf, size);
}
