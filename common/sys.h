/* Raw system calls for the preload and the engine.
 * Everything here is async-signal-safe and never touches errno: results are
 * returned as the kernel gives them (negative errno on failure).  Using raw
 * syscalls keeps our own calls out of our own interposers (mmap, mprotect,
 * sigprocmask are all wrapped) and out of the C library's errno, which the
 * fault handler must not disturb. */
#ifndef WSS_COMMON_SYS_H
#define WSS_COMMON_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>

/* errno e's description ("Operation not permitted"), or "unknown error".
 * AS-safe (a static table). */
const char *wss_errno_text(int e);

static inline long wss_sys6(long n, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#define wss_sys0(n) wss_sys6((n), 0, 0, 0, 0, 0, 0)
#define wss_sys1(n, a) wss_sys6((n), (long)(a), 0, 0, 0, 0, 0)
#define wss_sys2(n, a, b) wss_sys6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define wss_sys3(n, a, b, c) wss_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define wss_sys4(n, a, b, c, d) wss_sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/* The page: x86-64's base page, the unit of everything we track. */
#define WSS_PAGE_SHIFT 12
#define WSS_PAGE_SIZE (1UL << WSS_PAGE_SHIFT)
static inline uintptr_t wss_page_down(uintptr_t a) { return a & ~(WSS_PAGE_SIZE - 1); }
static inline uintptr_t wss_page_up(uintptr_t a) { return (a + WSS_PAGE_SIZE - 1) & ~(WSS_PAGE_SIZE - 1); }

/* True when a raw syscall result is an error (-4095..-1). */
static inline int wss_sys_failed(long r) { return (unsigned long)r > -4096UL; }

/* mmap: returns the address or a negative errno cast to void *.  AS-safe. */
static inline void *wss_sys_mmap(void *a, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)wss_sys6(SYS_mmap, (long)a, (long)len, prot, flags, fd, (long)off);
}
static inline int wss_sys_munmap(void *a, size_t len) { return (int)wss_sys2(SYS_munmap, a, len); }
/* Returns 0 or -errno.  AS-safe. */
static inline int wss_sys_mprotect(void *a, size_t len, int prot)
{
	return (int)wss_sys3(SYS_mprotect, a, len, prot);
}
static inline int wss_sys_madvise(void *a, size_t len, int adv) { return (int)wss_sys3(SYS_madvise, a, len, adv); }
static inline void *wss_sys_mremap(void *o, size_t ol, size_t nl, int fl, void *na)
{
	return (void *)wss_sys6(SYS_mremap, (long)o, (long)ol, (long)nl, fl, (long)na, 0);
}
static inline long wss_sys_write(int fd, const void *b, size_t n) { return wss_sys3(SYS_write, fd, b, n); }
static inline long wss_sys_read(int fd, void *b, size_t n) { return wss_sys3(SYS_read, fd, b, n); }
static inline int wss_sys_openat(int dfd, const char *p, int fl, int mode) { return (int)wss_sys4(SYS_openat, dfd, p, fl, mode); }
static inline int wss_sys_close(int fd) { return (int)wss_sys1(SYS_close, fd); }
static inline int wss_sys_gettid(void) { return (int)wss_sys0(SYS_gettid); }
static inline int wss_sys_getpid(void) { return (int)wss_sys0(SYS_getpid); }
static inline int wss_sys_tgkill(int pid, int tid, int sig) { return (int)wss_sys3(SYS_tgkill, pid, tid, sig); }
static inline int wss_sys_sched_yield(void) { return (int)wss_sys0(SYS_sched_yield); }
/* rt_sigprocmask with the kernel's 8-byte sigset.  AS-safe. */
static inline int wss_sys_sigmask(int how, const void *set, void *old)
{
	return (int)wss_sys4(SYS_rt_sigprocmask, how, set, old, 8);
}
static inline long wss_sys_futex(void *uaddr, int op, int val, const void *ts, void *uaddr2, int val3)
{
	return wss_sys6(SYS_futex, (long)uaddr, op, val, (long)ts, (long)uaddr2, val3);
}

/* Write all of buf to fd, retrying short writes and EINTR.  Returns 0 or a
 * positive errno.  AS-safe. */
int wss_write_all(int fd, const void *buf, size_t len);
/* The same for the tool's own output (the profile, the stderr summary): a
 * write past RLIMIT_FSIZE fails with EFBIG, one into a pipe with no reader
 * with EPIPE, and the SIGXFSZ or SIGPIPE the kernel sends the writing thread
 * for it, which would kill the program by default, is taken back.  regular:
 * fd is a regular file (no pipe, so no SIGPIPE).  Returns 0 or a positive
 * errno.  AS-safe. */
int wss_write_own(int fd, const void *buf, size_t len, bool regular);

/* Whether a file system of statfs type `type` holds no data of the
 * program's in its "regular files": kernel interfaces (a PCI resource in
 * sysfs maps device memory) and huge pages (never ours to split).  Such a
 * mapping is never tracked.  AS-safe. */
bool wss_fs_pseudo(long type);

/* Anonymous private memory for the tool's own use, never tracked: returns
 * NULL on failure.  AS-safe. */
void *wss_sys_alloc(size_t len);
void wss_sys_free(void *p, size_t len);
/* Attached to a running process (preload/attach.c): from now on the
 * tool's memory is shared anonymous memory (which the scan of the
 * process's mappings leaves out) and listed; wss_sys_release_all unmaps
 * all of it and returns how many allocations could not be listed (leaked).
 * Returns 0 or ENOMEM.  init. */
int wss_sys_alloc_attached(void);
uint32_t wss_sys_release_all(void);
/* Attached: the tool's memory as listed now, the list's own table first,
 * one [start, end) per allocation, in out[0..max); returns how many (0
 * when not attached).  At most WSS_SYS_OWN_SLOTS + 1.  AS-safe. */
#define WSS_SYS_OWN_SLOTS 65536
typedef struct wss_own {
	uintptr_t start, end;
} wss_own_t;
size_t wss_sys_own_list(wss_own_t *out, size_t max);

/* Read the whole file at path (any kind that read(2) works on: a pipe from
 * `<(...)` too) into a buffer from wss_sys_alloc.  Returns 0 with the
 * buffer and its length, EFBIG when it holds more than max bytes, or the
 * errno of open/read (EISDIR for a directory).  Release the buffer with
 * wss_file_free(buf, max).  init. */
int wss_file_read(const char *path, size_t max, char **buf, size_t *len);
void wss_file_free(char *buf, size_t max);

/* Create name (relative to dirfd, or AT_FDCWD) as a new file, open for
 * writing with the given extra flags (O_APPEND): never over an existing
 * one, never through a symbolic link or into a FIFO (O_EXCL, O_NOFOLLOW),
 * mode 0666 less the umask, as every file wss writes (docs/report.md,
 * "Files wss writes").  Returns the descriptor, or a negated errno.
 * AS-safe. */
int wss_file_create(int dirfd, const char *name, int flags);

/* Our own descriptors live at WSS_FD_HIGH and above, out of the way of
 * the numbers the program would get natively (and of those a program
 * closes by range without knowing them: preload/fds.c). */
#define WSS_FD_HIGH 500
/* Move fd to the lowest free number >= WSS_FD_HIGH (close-on-exec) and
 * close the original.  Returns the new descriptor, or fd itself when it
 * cannot be moved.  AS-safe. */
int wss_fd_high(int fd);
/* The identity (device, inode) of an open file; false if fd is not open.
 * AS-safe. */
bool wss_fd_identity(int fd, uint64_t *dev, uint64_t *ino);
/* Is fd still the file whose identity we took?  Programs close descriptors
 * they do not know (daemons' closefrom, gnulib's close_stdout closing
 * stderr) and the number may now name one of theirs: never write into
 * that.  AS-safe. */
bool wss_fd_same(int fd, uint64_t dev, uint64_t ino);
/* Has the file we created at path, open as fd (identity dev, ino), lost
 * its name: no link left (st_nlink 0: removed, or its directory), or,
 * when fd is no longer ours (the program closed it), path no longer
 * names it?  AS-safe. */
bool wss_file_removed(int fd, uint64_t dev, uint64_t ino, const char *path);
/* Read up to len - 1 bytes of a small file (/proc, /sys) into buf, NUL
 * terminated.  Returns the length, or <= 0.  AS-safe. */
long wss_read_small(const char *path, char *buf, size_t len);
/* The same for a file holding one decimal number: the number, or dflt
 * when it cannot be read or is not positive.  AS-safe. */
long wss_read_long(const char *path, long dflt);
/* This process's executable (/proc/self/exe) into out, "" when unknown.
 * AS-safe. */
void wss_readlink_exe(char *out, size_t n);

#endif
