/* Helpers over raw system calls shared by every layer: whole writes, the
 * tool's own page allocations, its descriptors and small /proc reads.  Nothing here uses the C library, so all of it
 * may be called from the fault handler or before the C library is ready. */
#include "config.h"
#include "common/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <time.h>

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

/* Two signals a write sends to the writing thread (thread-directed:
 * send_sig): SIGXFSZ with EFBIG when it starts at RLIMIT_FSIZE
 * (generic_write_check_limits; one that starts below is cut short at the
 * limit, and the next fails), and SIGPIPE with EPIPE on a pipe with no
 * reader (stderr into `| head`).  Both kill by default, and the program
 * made no such write.  Blocked around the write, the signal stays pending
 * on this thread, and rt_sigtimedwait takes it back before the mask is
 * restored; one that was already pending (the program's own, blocked) is
 * left as it was. */
int wss_write_own(int fd, const void *buf, size_t len, bool regular)
{
	/* A regular file under no size limit (nearly always): neither signal
	 * can come, and one prlimit64 costs less than three mask calls (the
	 * profile is written every tick). */
	struct rlimit lim;
	if (regular && !wss_sys_failed(wss_sys4(SYS_prlimit64, 0, RLIMIT_FSIZE, NULL, &lim)) &&
	    lim.rlim_cur == RLIM_INFINITY)
		return wss_write_all(fd, buf, len);
	uint64_t xfsz = 1ULL << (SIGXFSZ - 1), pipe = 1ULL << (SIGPIPE - 1), both = xfsz | pipe, old, pending = 0;
	wss_sys_sigmask(SIG_BLOCK, &both, &old);
	wss_sys2(SYS_rt_sigpending, &pending, 8);
	int r = wss_write_all(fd, buf, len);
	uint64_t take = r == EFBIG ? xfsz : r == EPIPE ? pipe : 0;
	if (take && !(pending & take)) {
		struct timespec zero = {0, 0};
		wss_sys4(SYS_rt_sigtimedwait, &take, NULL, &zero, 8);
	}
	wss_sys_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

bool wss_fs_pseudo(long type)
{
	switch (type) {
	case SYSFS_MAGIC:
	case PROC_SUPER_MAGIC:
	case HUGETLBFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case BPF_FS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
		return true;
	}
	return false;
}

/* In a process wss attached to (preload/attach.c), the tool's memory is
 * shared anonymous memory, and every allocation is listed: detaching gives
 * all of it back, and the scan of the process's mappings leaves out what
 * the list holds (engine/attached.c: the program's own shared memory is
 * tracked).  The list is a table of slots claimed with a compare-and-swap
 * (AS-safe as the allocator must be), itself shared memory; own_top bounds
 * the slots ever claimed, so that reading the list costs the allocations
 * the tool has held at once, not the table. */
typedef struct own_alloc {
	uintptr_t p;
	size_t len;
} own_alloc_t;
#define OWN_MAX WSS_SYS_OWN_SLOTS
static bool own_shared;
static own_alloc_t *own;
static uint32_t own_lost; /* allocations the full table could not list */
static size_t own_top;

int wss_sys_alloc_attached(void)
{
	void *t = wss_sys_mmap(NULL, OWN_MAX * sizeof *own, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (wss_sys_failed((long)t))
		return ENOMEM;
	own = t;
	own_lost = 0;
	own_top = 0;
	__atomic_store_n(&own_shared, true, __ATOMIC_RELEASE);
	return 0;
}

static void own_note(uintptr_t p, size_t len)
{
	for (size_t i = 0; i < OWN_MAX; i++) {
		uintptr_t zero = 0;
		if (!__atomic_load_n(&own[i].p, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&own[i].p, &zero, p, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			__atomic_store_n(&own[i].len, len, __ATOMIC_RELEASE);
			size_t top = __atomic_load_n(&own_top, __ATOMIC_RELAXED);
			while (top <= i && !__atomic_compare_exchange_n(&own_top, &top, i + 1, true, __ATOMIC_RELEASE,
									__ATOMIC_RELAXED))
				;
			return;
		}
	}
	__atomic_fetch_add(&own_lost, 1, __ATOMIC_RELAXED);
}

static void own_forget(uintptr_t p)
{
	size_t top = __atomic_load_n(&own_top, __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < top; i++)
		if (__atomic_load_n(&own[i].p, __ATOMIC_RELAXED) == p) {
			__atomic_store_n(&own[i].p, 0, __ATOMIC_RELEASE);
			return;
		}
}

uint32_t wss_sys_release_all(void)
{
	if (!__atomic_load_n(&own_shared, __ATOMIC_ACQUIRE))
		return 0;
	__atomic_store_n(&own_shared, false, __ATOMIC_RELEASE);
	for (size_t i = 0; i < own_top; i++)
		if (own[i].p)
			wss_sys_munmap((void *)own[i].p, own[i].len);
	uint32_t lost = own_lost;
	wss_sys_munmap(own, OWN_MAX * sizeof *own);
	own = NULL;
	return lost;
}

size_t wss_sys_own_list(wss_own_t *out, size_t max)
{
	if (!__atomic_load_n(&own_shared, __ATOMIC_ACQUIRE) || !max)
		return 0;
	size_t n = 0, top = __atomic_load_n(&own_top, __ATOMIC_ACQUIRE);
	out[n++] = (wss_own_t){(uintptr_t)own, (uintptr_t)own + OWN_MAX * sizeof *own};
	for (size_t i = 0; i < top && n < max; i++) {
		uintptr_t p = __atomic_load_n(&own[i].p, __ATOMIC_ACQUIRE);
		size_t len = __atomic_load_n(&own[i].len, __ATOMIC_ACQUIRE);
		/* (a slot claimed whose length is not stored yet: its start
		 * alone places the mapping) */
		if (p)
			out[n++] = (wss_own_t){p, p + (len ? len : 1)};
	}
	return n;
}

void *wss_sys_alloc(size_t len)
{
	bool shared = __atomic_load_n(&own_shared, __ATOMIC_ACQUIRE);
	void *p = wss_sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
			       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (wss_sys_failed((long)p))
		return NULL;
	if (shared)
		own_note((uintptr_t)p, len);
	return p;
}

void wss_sys_free(void *p, size_t len)
{
	if (!p)
		return;
	if (__atomic_load_n(&own_shared, __ATOMIC_ACQUIRE))
		own_forget((uintptr_t)p);
	wss_sys_munmap(p, len);
}

int wss_file_read(const char *path, size_t max, char **buf, size_t *len)
{
	int fd = wss_sys_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -fd;
	/* max + 1 bytes of address space, committed only as far as read. */
	char *b = wss_sys_alloc(max + 1);
	int rc = b ? 0 : ENOMEM;
	size_t n = 0;
	while (!rc) {
		long r = wss_sys_read(fd, b + n, max + 1 - n);
		if (r == -EINTR)
			continue;
		if (wss_sys_failed(r))
			rc = (int)-r;
		else if (r == 0)
			break;
		else if ((n += (size_t)r) > max)
			rc = EFBIG;
	}
	wss_sys_close(fd);
	if (rc) {
		wss_sys_free(b, max + 1);
		return rc;
	}
	*buf = b;
	*len = n;
	return 0;
}

void wss_file_free(char *buf, size_t max) { wss_sys_free(buf, max + 1); }

int wss_fd_high(int fd)
{
	int h = (int)wss_sys3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, WSS_FD_HIGH);
	if (h < 0)
		return fd;
	wss_sys_close(fd);
	return h;
}

bool wss_fd_identity(int fd, uint64_t *dev, uint64_t *ino)
{
	struct stat st;
	if (fd < 0 || wss_sys_failed(wss_sys2(SYS_fstat, fd, &st)))
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

bool wss_fd_same(int fd, uint64_t dev, uint64_t ino)
{
	uint64_t d, i;
	return wss_fd_identity(fd, &d, &i) && d == dev && i == ino;
}

bool wss_file_removed(int fd, uint64_t dev, uint64_t ino, const char *path)
{
	struct stat st;
	if (wss_fd_same(fd, dev, ino))
		return !wss_sys_failed(wss_sys2(SYS_fstat, fd, &st)) && st.st_nlink == 0;
	return wss_sys_failed(wss_sys2(SYS_stat, path, &st)) || st.st_dev != dev || st.st_ino != ino;
}

long wss_read_small(const char *path, char *buf, size_t len)
{
	int fd = wss_sys_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	long n = wss_sys_read(fd, buf, len - 1);
	wss_sys_close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

long wss_read_long(const char *path, long dflt)
{
	char buf[64];
	long n = wss_read_small(path, buf, sizeof buf);
	if (n <= 0)
		return dflt;
	long v = 0;
	for (long i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		v = v * 10 + (buf[i] - '0');
	return v > 0 ? v : dflt;
}

void wss_readlink_exe(char *out, size_t n)
{
	long r = wss_sys6(SYS_readlink, (long)"/proc/self/exe", (long)out, (long)n - 1, 0, 0, 0);
	out[r > 0 ? r : 0] = '\0';
}

const char *wss_errno_text(int e)
{
	const char *s = strerrordesc_np(e);
	return s ? s : "unknown error";
}

int wss_file_create(int dirfd, const char *name, int flags)
{
	return wss_sys_openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags, 0666);
}
