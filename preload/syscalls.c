/* More calls that hand user memory to the kernel (see io.c for the
 * mechanism): each pins the structures and buffers the kernel reads or
 * writes for the duration of the call.  These are the ones real programs
 * were seen to fail without: getcwd (CPython at start-up), waitpid (gcc's
 * driver, shells), pipe and socketpair, the stat family, poll/select/epoll,
 * nanosleep, socket I/O, ioctl, getrandom. */
#include "config.h"
#include "preload/preload.h"

#include <asm/termbits.h>
#include <dirent.h>
#include <dlfcn.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"

#define SYS_FUNCS(X) \
	X(getcwd) X(readlink) X(readlinkat) X(waitpid) X(wait) X(wait3) X(wait4) X(waitid) \
	X(pipe) X(pipe2) X(socketpair) X(stat) X(fstat) X(lstat) X(fstatat) X(statx) \
	X(poll) X(ppoll) X(select) X(pselect) X(epoll_wait) X(epoll_pwait) X(epoll_ctl) X(sigsuspend) \
	X(nanosleep) X(clock_nanosleep) X(recv) X(recvfrom) X(send) X(sendto) X(recvmsg) X(sendmsg) \
	X(accept) X(accept4) X(getsockname) X(getpeername) X(getsockopt) X(setsockopt) \
	X(getdents64) X(uname) X(getrlimit) X(prlimit) X(getrusage) X(ioctl) \
	X(stat64) X(fstat64) X(lstat64) X(fstatat64) X(statfs) X(fstatfs) X(statfs64) X(fstatfs64) \
	X(statvfs) X(fstatvfs) X(statvfs64) X(fstatvfs64) X(getrandom) X(getentropy) \
	X(sched_setscheduler) X(pthread_setschedparam)
SYS_FUNCS(WSS_REAL_DECLARE)

void wss_syscalls_init(void) { SYS_FUNCS(WSS_REAL_RESOLVE) }

/* Up to four (pointer, length) pairs pinned around one call. */
typedef struct pinset {
	int pin[4];
	int n;
} pinset_t;

static void pin(pinset_t *ps, const void *p, size_t len)
{
	int h = wss_pin_or_open(p, len);
	if (ps->n < 4)
		ps->pin[ps->n++] = h;
}

static void pin_str(pinset_t *ps, const char *s)
{
	int h = wss_pin_str(s); /* out of line: s may be NULL (paths.c) */
	if (ps->n < 4)
		ps->pin[ps->n++] = h;
}

static void unpin(pinset_t *ps)
{
	for (int i = 0; i < ps->n; i++)
		wss_engine_unpin(ps->pin[i]);
}

#define CALL(type, name, args, pins) \
	do { \
		WSS_REAL(name); \
		pinset_t ps_ = {.n = 0}; \
		pins; \
		type r_ = real_##name args; \
		unpin(&ps_); \
		return r_; \
	} while (0)
#define P(p, len) pin(&ps_, (p), (len))
#define PS(str) pin_str(&ps_, (str))
#define SOCKLEN(lp) ((lp) ? *(lp) : 0)

/* A realtime policy: the engine thread, held to a single-threaded
 * program's CPU (engine/clock.c), would never run behind it. */
static bool realtime(int policy)
{
	policy &= ~SCHED_RESET_ON_FORK;
	return policy == SCHED_FIFO || policy == SCHED_RR || policy == 6; /* SCHED_DEADLINE */
}

WSS_EXPORT int sched_setscheduler(pid_t pid, int policy, const struct sched_param *p)
{
	if (realtime(policy))
		wss_engine_cpu_release(true);
	CALL(int, sched_setscheduler, (pid, policy, p), P(p, sizeof *p));
}

WSS_EXPORT int pthread_setschedparam(pthread_t t, int policy, const struct sched_param *p)
{
	if (realtime(policy))
		wss_engine_cpu_release(true);
	CALL(int, pthread_setschedparam, (t, policy, p), P(p, sizeof *p));
}

WSS_EXPORT char *getcwd(char *buf, size_t n) { CALL(char *, getcwd, (buf, n), P(buf, n)); }
WSS_EXPORT ssize_t readlink(const char *restrict path, char *restrict buf, size_t n)
{
	CALL(ssize_t, readlink, (path, buf, n), (PS(path), P(buf, n)));
}
WSS_EXPORT ssize_t readlinkat(int d, const char *restrict path, char *restrict buf, size_t n)
{
	CALL(ssize_t, readlinkat, (d, path, buf, n), (PS(path), P(buf, n)));
}

WSS_EXPORT pid_t waitpid(pid_t pid, int *st, int opt) { CALL(pid_t, waitpid, (pid, st, opt), P(st, sizeof *st)); }
WSS_EXPORT pid_t wait(int *st) { CALL(pid_t, wait, (st), P(st, sizeof *st)); }
WSS_EXPORT pid_t wait3(int *st, int opt, struct rusage *ru)
{
	CALL(pid_t, wait3, (st, opt, ru), (P(st, sizeof *st), P(ru, sizeof *ru)));
}
WSS_EXPORT pid_t wait4(pid_t pid, int *st, int opt, struct rusage *ru)
{
	CALL(pid_t, wait4, (pid, st, opt, ru), (P(st, sizeof *st), P(ru, sizeof *ru)));
}
WSS_EXPORT int waitid(idtype_t t, id_t id, siginfo_t *si, int opt)
{
	CALL(int, waitid, (t, id, si, opt), P(si, sizeof *si));
}

WSS_EXPORT int pipe(int fd[2]) { CALL(int, pipe, (fd), P(fd, 2 * sizeof *fd)); }
WSS_EXPORT int pipe2(int fd[2], int fl)
{
	if (wss_engine_unwinding()) /* libunwind's pipe for checking addresses: fds.c */
		return wss_fds_unwinder_pipe(fd, fl);
	CALL(int, pipe2, (fd, fl), P(fd, 2 * sizeof *fd));
}
WSS_EXPORT int socketpair(int d, int t, int p, int sv[2]) { CALL(int, socketpair, (d, t, p, sv), P(sv, 2 * sizeof *sv)); }

WSS_EXPORT int stat(const char *restrict path, struct stat *restrict st) { CALL(int, stat, (path, st), (PS(path), P(st, sizeof *st))); }
WSS_EXPORT int fstat(int fd, struct stat *st) { CALL(int, fstat, (fd, st), P(st, sizeof *st)); }
WSS_EXPORT int lstat(const char *restrict path, struct stat *restrict st) { CALL(int, lstat, (path, st), (PS(path), P(st, sizeof *st))); }
WSS_EXPORT int fstatat(int d, const char *restrict path, struct stat *restrict st, int fl)
{
	CALL(int, fstatat, (d, path, st, fl), (PS(path), P(st, sizeof *st)));
}
WSS_EXPORT int statx(int d, const char *restrict path, int fl, unsigned mask, struct statx *restrict st)
{
	CALL(int, statx, (d, path, fl, mask, st), (PS(path), P(st, sizeof *st)));
}

/* The large-file names: what programs built with _FILE_OFFSET_BITS=64
 * call (ld's stat before its chmod of the output: without it, gcc's
 * output was left without its execute bits now and then). */
WSS_EXPORT int stat64(const char *restrict path, struct stat64 *restrict st)
{
	CALL(int, stat64, (path, st), (PS(path), P(st, sizeof *st)));
}
WSS_EXPORT int fstat64(int fd, struct stat64 *st) { CALL(int, fstat64, (fd, st), P(st, sizeof *st)); }
WSS_EXPORT int lstat64(const char *restrict path, struct stat64 *restrict st)
{
	CALL(int, lstat64, (path, st), (PS(path), P(st, sizeof *st)));
}
WSS_EXPORT int fstatat64(int d, const char *restrict path, struct stat64 *restrict st, int fl)
{
	CALL(int, fstatat64, (d, path, st, fl), (PS(path), P(st, sizeof *st)));
}
WSS_EXPORT int statfs(const char *path, struct statfs *st) { CALL(int, statfs, (path, st), (PS(path), P(st, sizeof *st))); }
WSS_EXPORT int fstatfs(int fd, struct statfs *st) { CALL(int, fstatfs, (fd, st), P(st, sizeof *st)); }
WSS_EXPORT int statfs64(const char *path, struct statfs64 *st)
{
	CALL(int, statfs64, (path, st), (PS(path), P(st, sizeof *st)));
}
WSS_EXPORT int fstatfs64(int fd, struct statfs64 *st) { CALL(int, fstatfs64, (fd, st), P(st, sizeof *st)); }
WSS_EXPORT int statvfs(const char *restrict path, struct statvfs *restrict st)
{
	CALL(int, statvfs, (path, st), (PS(path), P(st, sizeof *st)));
}
WSS_EXPORT int fstatvfs(int fd, struct statvfs *st) { CALL(int, fstatvfs, (fd, st), P(st, sizeof *st)); }
WSS_EXPORT int statvfs64(const char *restrict path, struct statvfs64 *restrict st)
{
	CALL(int, statvfs64, (path, st), (PS(path), P(st, sizeof *st)));
}
WSS_EXPORT int fstatvfs64(int fd, struct statvfs64 *st) { CALL(int, fstatvfs64, (fd, st), P(st, sizeof *st)); }

/* CPython seeds its hash randomisation into libpython's .bss with
 * getrandom: with library data tracked, it failed to start ("failed to get
 * random numbers") now and then. */
WSS_EXPORT ssize_t getrandom(void *buf, size_t n, unsigned fl) { CALL(ssize_t, getrandom, (buf, n, fl), P(buf, n)); }
WSS_EXPORT int getentropy(void *buf, size_t n) { CALL(int, getentropy, (buf, n), P(buf, n)); }

/* A wait given a signal mask runs the handlers of the signals it waits for
 * under that mask, often "everything blocked but the one": a handler's
 * fault on an armed page (always, with track.code: its first instruction)
 * with SIGSEGV blocked is a kill.  SIGSEGV is taken out of it, as out of
 * every mask (signals.c: it is never really blocked). */
static const sigset_t *segv_open(const sigset_t *m, sigset_t *copy)
{
	if (!m || !sigismember(m, SIGSEGV))
		return m;
	*copy = *m;
	sigdelset(copy, SIGSEGV);
	return copy;
}

WSS_EXPORT int poll(struct pollfd *fds, nfds_t n, int t) { CALL(int, poll, (fds, n, t), P(fds, n * sizeof *fds)); }
WSS_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *m)
{
	sigset_t c;
	m = segv_open(m, &c);
	CALL(int, ppoll, (fds, n, t, m), (P(fds, n * sizeof *fds), P(t, sizeof *t)));
}
WSS_EXPORT int select(int n, fd_set *restrict r, fd_set *restrict w, fd_set *restrict e, struct timeval *restrict t)
{
	CALL(int, select, (n, r, w, e, t), (P(r, sizeof *r), P(w, sizeof *w), P(e, sizeof *e), P(t, sizeof *t)));
}
WSS_EXPORT int pselect(int n, fd_set *restrict r, fd_set *restrict w, fd_set *restrict e,
		       const struct timespec *restrict t, const sigset_t *restrict m)
{
	sigset_t c;
	m = segv_open(m, &c);
	CALL(int, pselect, (n, r, w, e, t, m), (P(r, sizeof *r), P(w, sizeof *w), P(e, sizeof *e), P(t, sizeof *t)));
}
WSS_EXPORT int epoll_wait(int fd, struct epoll_event *ev, int n, int t)
{
	CALL(int, epoll_wait, (fd, ev, n, t), P(ev, n > 0 ? (size_t)n * sizeof *ev : 0));
}
WSS_EXPORT int epoll_pwait(int fd, struct epoll_event *ev, int n, int t, const sigset_t *m)
{
	sigset_t c;
	m = segv_open(m, &c);
	CALL(int, epoll_pwait, (fd, ev, n, t, m), P(ev, n > 0 ? (size_t)n * sizeof *ev : 0));
}
WSS_EXPORT int sigsuspend(const sigset_t *m)
{
	sigset_t c;
	m = segv_open(m, &c);
	CALL(int, sigsuspend, (m), (void)0);
}
WSS_EXPORT int epoll_ctl(int fd, int op, int fd2, struct epoll_event *ev)
{
	CALL(int, epoll_ctl, (fd, op, fd2, ev), P(ev, sizeof *ev));
}

WSS_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	CALL(int, nanosleep, (req, rem), (P(req, sizeof *req), P(rem, sizeof *rem)));
}
WSS_EXPORT int clock_nanosleep(clockid_t c, int fl, const struct timespec *req, struct timespec *rem)
{
	CALL(int, clock_nanosleep, (c, fl, req, rem), (P(req, sizeof *req), P(rem, sizeof *rem)));
}

WSS_EXPORT ssize_t recv(int fd, void *buf, size_t n, int fl) { CALL(ssize_t, recv, (fd, buf, n, fl), P(buf, n)); }
WSS_EXPORT ssize_t send(int fd, const void *buf, size_t n, int fl) { CALL(ssize_t, send, (fd, buf, n, fl), P(buf, n)); }
WSS_EXPORT ssize_t recvfrom(int fd, void *restrict buf, size_t n, int fl, struct sockaddr *restrict a,
			    socklen_t *restrict al)
{
	CALL(ssize_t, recvfrom, (fd, buf, n, fl, a, al), (P(buf, n), P(al, sizeof *al), P(a, SOCKLEN(al))));
}
WSS_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int fl, const struct sockaddr *a, socklen_t al)
{
	CALL(ssize_t, sendto, (fd, buf, n, fl, a, al), (P(buf, n), P(a, al)));
}

/* msghdr: the header, the iovec array, the name and the control data are
 * pinned, and the first iovec buffer; further buffers are opened by
 * touching (the pin set holds four). */
static void pin_msg(pinset_t *ps, const struct msghdr *m)
{
	pin(ps, m, sizeof *m);
	if (!m)
		return;
	pin(ps, m->msg_iov, m->msg_iovlen * sizeof *m->msg_iov);
	pin(ps, m->msg_control, m->msg_controllen);
	pin(ps, m->msg_name, m->msg_namelen);
	for (size_t i = 0; m->msg_iov && i < m->msg_iovlen; i++)
		wss_touch_range(m->msg_iov[i].iov_base, m->msg_iov[i].iov_len);
}

WSS_EXPORT ssize_t recvmsg(int fd, struct msghdr *m, int fl) { CALL(ssize_t, recvmsg, (fd, m, fl), pin_msg(&ps_, m)); }
WSS_EXPORT ssize_t sendmsg(int fd, const struct msghdr *m, int fl) { CALL(ssize_t, sendmsg, (fd, m, fl), pin_msg(&ps_, m)); }

WSS_EXPORT int accept(int fd, struct sockaddr *restrict a, socklen_t *restrict al)
{
	CALL(int, accept, (fd, a, al), (P(al, sizeof *al), P(a, SOCKLEN(al))));
}
WSS_EXPORT int accept4(int fd, struct sockaddr *restrict a, socklen_t *restrict al, int fl)
{
	CALL(int, accept4, (fd, a, al, fl), (P(al, sizeof *al), P(a, SOCKLEN(al))));
}
WSS_EXPORT int getsockname(int fd, struct sockaddr *restrict a, socklen_t *restrict al)
{
	CALL(int, getsockname, (fd, a, al), (P(al, sizeof *al), P(a, SOCKLEN(al))));
}
WSS_EXPORT int getpeername(int fd, struct sockaddr *restrict a, socklen_t *restrict al)
{
	CALL(int, getpeername, (fd, a, al), (P(al, sizeof *al), P(a, SOCKLEN(al))));
}
WSS_EXPORT int getsockopt(int fd, int lv, int nm, void *restrict v, socklen_t *restrict vl)
{
	CALL(int, getsockopt, (fd, lv, nm, v, vl), (P(vl, sizeof *vl), P(v, SOCKLEN(vl))));
}
WSS_EXPORT int setsockopt(int fd, int lv, int nm, const void *v, socklen_t vl)
{
	CALL(int, setsockopt, (fd, lv, nm, v, vl), P(v, vl));
}

WSS_EXPORT ssize_t getdents64(int fd, void *buf, size_t n) { CALL(ssize_t, getdents64, (fd, buf, n), P(buf, n)); }
WSS_EXPORT int uname(struct utsname *u) { CALL(int, uname, (u), P(u, sizeof *u)); }
WSS_EXPORT int getrlimit(__rlimit_resource_t r, struct rlimit *l) { CALL(int, getrlimit, (r, l), P(l, sizeof *l)); }
WSS_EXPORT int prlimit(pid_t pid, __rlimit_resource_t r, const struct rlimit *n, struct rlimit *o)
{
	CALL(int, prlimit, (pid, r, n, o), (P(n, sizeof *n), P(o, sizeof *o)));
}
WSS_EXPORT int getrusage(__rusage_who_t w, struct rusage *u) { CALL(int, getrusage, (w, u), P(u, sizeof *u)); }

/* The size of the structure an ioctl request reads or writes through its
 * argument, or 0 when unknown (the call is then passed through untouched).
 * Requests encoded with _IOC carry it, when they have a direction; the older
 * terminal, file and socket requests below do not, and take a pointer to a
 * fixed structure.  The kernel takes the request as 32 bits.  TCGETS and
 * friends use the kernel's struct termios (<asm/termbits.h>, 36 bytes),
 * smaller than the C library's.  Structures that point to further buffers
 * (SIOCGIFCONF's ifc_buf) get the structure itself pinned only. */
static size_t ioctl_size(unsigned long req)
{
	unsigned cmd = (unsigned)req;
	if (_IOC_DIR(cmd) != _IOC_NONE)
		return _IOC_SIZE(cmd);
	switch (cmd) {
	case TCGETS: case TCSETS: case TCSETSW: case TCSETSF: case TIOCGLCKTRMIOS: case TIOCSLCKTRMIOS:
		return sizeof(struct termios);
	case TCGETA: case TCSETA: case TCSETAW: case TCSETAF:
		return sizeof(struct termio);
	case TIOCGWINSZ: case TIOCSWINSZ:
		return sizeof(struct winsize);
	case FIONREAD: case TIOCOUTQ: case FIONBIO: case FIOASYNC: case TIOCMGET: case TIOCMBIS: case TIOCMBIC:
	case TIOCMSET: case TIOCGSOFTCAR: case TIOCSSOFTCAR: case TIOCPKT: case TIOCSETD: case TIOCGETD:
	case TIOCSERGETLSR: case FIOSETOWN: case SIOCSPGRP: case FIOGETOWN: case SIOCGPGRP: case SIOCATMARK:
	case SIOCOUTQNSD:
		return sizeof(int);
	case TIOCGPGRP: case TIOCSPGRP: case TIOCGSID:
		return sizeof(pid_t);
	case TIOCSTI:
		return 1;
	case FIOQSIZE:
		return sizeof(loff_t);
	case SIOCGSTAMP_OLD:
		return sizeof(struct timeval);
	case SIOCGSTAMPNS_OLD:
		return sizeof(struct timespec);
	case SIOCGIFCONF:
		return sizeof(struct ifconf);
	case SIOCGIFNAME: case SIOCGIFFLAGS: case SIOCSIFFLAGS: case SIOCGIFADDR: case SIOCSIFADDR:
	case SIOCGIFDSTADDR: case SIOCSIFDSTADDR: case SIOCGIFBRDADDR: case SIOCSIFBRDADDR: case SIOCGIFNETMASK:
	case SIOCSIFNETMASK: case SIOCGIFMETRIC: case SIOCSIFMETRIC: case SIOCGIFMTU: case SIOCSIFMTU:
	case SIOCSIFNAME: case SIOCSIFHWADDR: case SIOCGIFHWADDR: case SIOCADDMULTI: case SIOCDELMULTI:
	case SIOCGIFINDEX: case SIOCSIFHWBROADCAST: case SIOCGIFTXQLEN: case SIOCSIFTXQLEN: case SIOCGIFMAP:
	case SIOCSIFMAP: case SIOCGIFPFLAGS: case SIOCSIFPFLAGS:
		return sizeof(struct ifreq);
	}
	return 0;
}

/* The third argument is read as a pointer-sized value whatever the request
 * (the C library's convention); a value that is not a pointer only pins
 * pages it happens to name, and the call is passed it unchanged.  ioctls the
 * C library makes internally do not come through here; tcgetattr and
 * tcsetattr need nothing (they hand the kernel a termios of their own). */
WSS_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	CALL(int, ioctl, (fd, req, arg), P(arg, ioctl_size(req)));
}
