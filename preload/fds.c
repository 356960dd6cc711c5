/* The engine's own descriptors (the profile, its copy of stderr,
 * /proc/self/stat, userfaultfd and pagemap) live above 500, out of the way
 * of the numbers the program gets.  Programs that close every descriptor
 * they did not open (daemons, closefrom, close_range) would close them too,
 * and the engine would have to open them again, taking the lowest free
 * number for a moment: a race in which the program could open its own file
 * under that number and lose it to our close (fds.sh, 1 run in 20).  So a
 * close of one of ours fails with EBADF, as it would natively, where that
 * number is not open, and close_range/closefrom close everything else.
 *
 * libunwind has descriptors too: a pipe it writes addresses into to learn
 * whether they are readable, opened inside our fault handler.  It closes
 * the old pair before it opens a new one, by number, and if the program had
 * closed them and opened its own files under those numbers, libunwind
 * closed the program's files (fdclose: the program's write failed with
 * EBADF, 1 run in 10).  Its pipe now lives above 500 and counts as ours, so
 * the program cannot close it and libunwind never has to reopen it. */
#include "config.h"
#include "preload/preload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "common/sys.h"
#include "engine/engine.h"

static int unw_pipe[2] = {-1, -1};

/* Ours: the engine's, then libunwind's pipe; ascending.  Returns how
 * many. */
static int own_fds(int out[8])
{
	int n = wss_engine_own_fds(out);
	for (int k = 0; k < 2; k++) {
		int fd = __atomic_load_n(&unw_pipe[k], __ATOMIC_RELAXED);
		if (fd < 0)
			continue;
		int j = n++;
		for (; j > 0 && out[j - 1] > fd; j--)
			out[j] = out[j - 1];
		out[j] = fd;
	}
	return n;
}

static bool owned(int fd)
{
	int own[8], n = own_fds(own);
	for (int i = 0; i < n; i++)
		if (own[i] == fd)
			return fd >= 0;
	return false;
}

int wss_fds_unwinder_pipe(int fd[2], int flags)
{
	int low[2];
	long r = wss_sys2(SYS_pipe2, low, flags);
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	for (int k = 0; k < 2; k++) {
		int h = (int)wss_sys3(SYS_fcntl, low[k], (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, WSS_FD_HIGH);
		if (h >= 0) {
			wss_sys1(SYS_close, low[k]);
			low[k] = h;
		}
		fd[k] = low[k];
		__atomic_store_n(&unw_pipe[k], low[k], __ATOMIC_RELAXED);
	}
	return 0;
}

WSS_EXPORT int close(int fd)
{
	if (wss_engine_unwinding()) {
		/* libunwind closing its pipe (or a file it opened): its pipe
		 * is ours and the program cannot close it, so the number is
		 * still libunwind's. */
		for (int k = 0; k < 2; k++)
			if (fd >= 0 && fd == __atomic_load_n(&unw_pipe[k], __ATOMIC_RELAXED))
				__atomic_store_n(&unw_pipe[k], -1, __ATOMIC_RELAXED);
	} else if (owned(fd)) {
		errno = EBADF;
		return -1;
	}
	long r = wss_sys1(SYS_close, fd);
	/* EINTR: the descriptor is closed anyway (Linux); report it as the
	 * C library would. */
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

static int sys_close_range(unsigned lo, unsigned hi, int flags)
{
	long r = wss_sys3(SYS_close_range, lo, hi, flags);
	if (wss_sys_failed(r)) {
		errno = (int)-r;
		return -1;
	}
	return 0;
}

/* close_range over [first, last] less our descriptors: the runs between
 * them, in order. */
WSS_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (first > last) {
		errno = EINVAL;
		return -1;
	}
	int own[8], n = own_fds(own);
	unsigned lo = first;
	for (int i = 0; i < n; i++) {
		unsigned o = (unsigned)own[i];
		if (o < lo || o > last)
			continue;
		if (o > lo && sys_close_range(lo, o - 1, flags))
			return -1;
		if (o == last)
			return 0;
		lo = o + 1;
	}
	return sys_close_range(lo, last, flags);
}

WSS_EXPORT void closefrom(int low)
{
	if (low < 0)
		low = 0;
	if (close_range((unsigned)low, ~0U, 0) == 0)
		return;
	/* As the C library does when close_range is missing. */
	for (int fd = low; fd < 65536; fd++)
		close(fd);
}
