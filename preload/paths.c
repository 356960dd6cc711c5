/* Calls whose string arguments (paths, templates) the kernel reads: a path
 * built in the heap may sit on an armed page, and the call fails with
 * EFAULT.  The wrappers pin the strings for the call (see io.c: a tick does
 * not arm a pinned page), and, when the pin table is full, open the pages
 * just before the call and retry once on EFAULT (a failed open/unlink/...
 * has done nothing).  The C library's own openers (fopen, opendir, dlopen,
 * the mkstemp family, remove) call the kernel
 * internally, so they are wrapped too. */
#include "config.h"
#include "preload/preload.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/sys.h"
#include "engine/engine.h"

int open64(const char *path, int fl, ...);
int openat64(int d, const char *path, int fl, ...);
FILE *fopen64(const char *restrict path, const char *restrict mode);

int __open_2(const char *path, int fl);
int __open64_2(const char *path, int fl);
int __openat_2(int d, const char *path, int fl);
int __openat64_2(int d, const char *path, int fl);
int mkstemp64(char *tmpl);
int mkostemp64(char *tmpl, int fl);
int mkstemps64(char *tmpl, int suffixlen);
int mkostemps64(char *tmpl, int suffixlen, int fl);

#define PATH_FUNCS(X) \
	X(open) X(open64) X(openat) X(openat64) X(creat) X(access) X(faccessat) X(unlink) X(unlinkat) \
	X(mkdir) X(mkdirat) X(rmdir) X(rename) X(renameat) X(chdir) X(chmod) X(fchmodat) X(truncate) \
	X(link) X(symlink) X(fopen) X(fopen64) X(freopen) X(opendir) X(mkstemp) X(mkostemp) X(mkstemps) \
	X(mkostemps) X(mkstemp64) X(mkostemp64) X(mkstemps64) X(mkostemps64) X(mkdtemp) X(remove) \
	X(chown) X(lchown) X(fchownat) X(utimensat) X(utimes) X(__open_2) X(__open64_2) X(__openat_2) \
	X(__openat64_2) X(linkat) X(symlinkat) X(renameat2)
PATH_FUNCS(WSS_REAL_DECLARE)

void wss_paths_init(void) { PATH_FUNCS(WSS_REAL_RESOLVE) }

/* Never inlined, nor analysed across calls: the wrappers' string arguments
 * are declared nonnull by the C library's headers, and inlined, the test
 * for NULL below would be dropped; a program may still pass NULL and expect
 * EFAULT (Rust probes statx with a null path). */
__attribute__((noipa)) void wss_open_str(const char *s)
{
	if (s)
		wss_touch_range(s, strlen(s) + 1);
}

int wss_pin_or_open(const void *p, unsigned long n)
{
	int h = p && n ? wss_engine_pin(p, n) : 0;
	if (h < 0)
		wss_touch_range(p, n);
	return h;
}

__attribute__((noipa)) int wss_pin_str(const char *s) { return s ? wss_pin_or_open(s, strlen(s) + 1) : 0; }

/* Pin the strings, call, and, if a pin could not be had, retry once on
 * EFAULT.  bad is the failure test on the result r_. */
#define STR_CALL(type, call, bad, a, b) \
	do { \
		int pa_ = wss_pin_str(a), pb_ = wss_pin_str(b); \
		type r_ = call; \
		if ((pa_ < 0 || pb_ < 0) && (bad) && errno == EFAULT) { \
			wss_open_str(a); \
			wss_open_str(b); \
			r_ = call; \
		} \
		int e_ = errno; \
		wss_engine_unpin(pa_); \
		wss_engine_unpin(pb_); \
		errno = e_; \
		return r_; \
	} while (0)
#define INT_CALL(call, a, b) STR_CALL(int, call, r_ < 0, a, b)
#define PTR_CALL(type, call, a, b) STR_CALL(type, call, r_ == NULL, a, b)

static mode_t open_mode(int fl, va_list ap)
{
	return (fl & O_CREAT) || (fl & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

WSS_EXPORT int open(const char *path, int fl, ...)
{
	va_list ap;
	va_start(ap, fl);
	mode_t m = open_mode(fl, ap);
	va_end(ap);
	WSS_REAL(open);
	INT_CALL(real_open(path, fl, m), path, NULL);
}

WSS_EXPORT int open64(const char *path, int fl, ...)
{
	va_list ap;
	va_start(ap, fl);
	mode_t m = open_mode(fl, ap);
	va_end(ap);
	WSS_REAL(open64);
	INT_CALL(real_open64(path, fl, m), path, NULL);
}

WSS_EXPORT int openat(int d, const char *path, int fl, ...)
{
	va_list ap;
	va_start(ap, fl);
	mode_t m = open_mode(fl, ap);
	va_end(ap);
	WSS_REAL(openat);
	INT_CALL(real_openat(d, path, fl, m), path, NULL);
}

WSS_EXPORT int openat64(int d, const char *path, int fl, ...)
{
	va_list ap;
	va_start(ap, fl);
	mode_t m = open_mode(fl, ap);
	va_end(ap);
	WSS_REAL(openat64);
	INT_CALL(real_openat64(d, path, fl, m), path, NULL);
}

/* What open and openat become under _FORTIFY_SOURCE when the flags are not
 * known at compile time (Debian's tar, xz, perl and python3 call them). */
WSS_EXPORT int __open_2(const char *path, int fl)
{
	WSS_REAL(__open_2);
	INT_CALL(real___open_2(path, fl), path, NULL);
}
WSS_EXPORT int __open64_2(const char *path, int fl)
{
	WSS_REAL(__open64_2);
	INT_CALL(real___open64_2(path, fl), path, NULL);
}
WSS_EXPORT int __openat_2(int d, const char *path, int fl)
{
	WSS_REAL(__openat_2);
	INT_CALL(real___openat_2(d, path, fl), path, NULL);
}
WSS_EXPORT int __openat64_2(int d, const char *path, int fl)
{
	WSS_REAL(__openat64_2);
	INT_CALL(real___openat64_2(d, path, fl), path, NULL);
}

WSS_EXPORT int creat(const char *path, mode_t m)
{
	WSS_REAL(creat);
	INT_CALL(real_creat(path, m), path, NULL);
}
WSS_EXPORT int access(const char *path, int m)
{
	WSS_REAL(access);
	INT_CALL(real_access(path, m), path, NULL);
}
WSS_EXPORT int faccessat(int d, const char *path, int m, int fl)
{
	WSS_REAL(faccessat);
	INT_CALL(real_faccessat(d, path, m, fl), path, NULL);
}
WSS_EXPORT int unlink(const char *path)
{
	WSS_REAL(unlink);
	INT_CALL(real_unlink(path), path, NULL);
}
WSS_EXPORT int unlinkat(int d, const char *path, int fl)
{
	WSS_REAL(unlinkat);
	INT_CALL(real_unlinkat(d, path, fl), path, NULL);
}
WSS_EXPORT int mkdir(const char *path, mode_t m)
{
	WSS_REAL(mkdir);
	INT_CALL(real_mkdir(path, m), path, NULL);
}
WSS_EXPORT int mkdirat(int d, const char *path, mode_t m)
{
	WSS_REAL(mkdirat);
	INT_CALL(real_mkdirat(d, path, m), path, NULL);
}
WSS_EXPORT int rmdir(const char *path)
{
	WSS_REAL(rmdir);
	INT_CALL(real_rmdir(path), path, NULL);
}
WSS_EXPORT int rename(const char *a, const char *b)
{
	WSS_REAL(rename);
	INT_CALL(real_rename(a, b), a, b);
}
WSS_EXPORT int renameat(int da, const char *a, int db, const char *b)
{
	WSS_REAL(renameat);
	INT_CALL(real_renameat(da, a, db, b), a, b);
}
WSS_EXPORT int chdir(const char *path)
{
	WSS_REAL(chdir);
	INT_CALL(real_chdir(path), path, NULL);
}
WSS_EXPORT int chmod(const char *path, mode_t m)
{
	WSS_REAL(chmod);
	INT_CALL(real_chmod(path, m), path, NULL);
}
WSS_EXPORT int fchmodat(int d, const char *path, mode_t m, int fl)
{
	WSS_REAL(fchmodat);
	INT_CALL(real_fchmodat(d, path, m, fl), path, NULL);
}
WSS_EXPORT int truncate(const char *path, off_t n)
{
	struct stat st;
	if (wss_engine_tracking() && (wss_sys_failed(wss_sys4(SYS_newfstatat, AT_FDCWD, path, &st, 0)) || st.st_size > n))
		wss_engine_file_changed(); /* shortened: its mapped pages go (engine/census.c) */
	WSS_REAL(truncate);
	INT_CALL(real_truncate(path, n), path, NULL);
}
WSS_EXPORT int link(const char *a, const char *b)
{
	WSS_REAL(link);
	INT_CALL(real_link(a, b), a, b);
}
WSS_EXPORT int linkat(int da, const char *a, int db, const char *b, int fl)
{
	WSS_REAL(linkat);
	INT_CALL(real_linkat(da, a, db, b, fl), a, b);
}
WSS_EXPORT int symlinkat(const char *a, int d, const char *b)
{
	WSS_REAL(symlinkat);
	INT_CALL(real_symlinkat(a, d, b), a, b);
}
WSS_EXPORT int renameat2(int da, const char *a, int db, const char *b, unsigned fl)
{
	WSS_REAL(renameat2);
	INT_CALL(real_renameat2(da, a, db, b, fl), a, b);
}
WSS_EXPORT int symlink(const char *a, const char *b)
{
	WSS_REAL(symlink);
	INT_CALL(real_symlink(a, b), a, b);
}
WSS_EXPORT FILE *fopen(const char *restrict path, const char *restrict mode)
{
	WSS_REAL(fopen);
	PTR_CALL(FILE *, real_fopen(path, mode), path, NULL);
}
WSS_EXPORT FILE *fopen64(const char *restrict path, const char *restrict mode)
{
	WSS_REAL(fopen64);
	PTR_CALL(FILE *, real_fopen64(path, mode), path, NULL);
}
WSS_EXPORT FILE *freopen(const char *restrict path, const char *restrict mode, FILE *restrict f)
{
	WSS_REAL(freopen);
	PTR_CALL(FILE *, real_freopen(path, mode, f), path, NULL);
}
WSS_EXPORT DIR *opendir(const char *path)
{
	WSS_REAL(opendir);
	PTR_CALL(DIR *, real_opendir(path), path, NULL);
}
WSS_EXPORT int mkstemp(char *tmpl)
{
	WSS_REAL(mkstemp);
	INT_CALL(real_mkstemp(tmpl), tmpl, NULL);
}
WSS_EXPORT int mkostemp(char *tmpl, int fl)
{
	WSS_REAL(mkostemp);
	INT_CALL(real_mkostemp(tmpl, fl), tmpl, NULL);
}
WSS_EXPORT int mkstemps(char *tmpl, int sl)
{
	WSS_REAL(mkstemps);
	INT_CALL(real_mkstemps(tmpl, sl), tmpl, NULL);
}
WSS_EXPORT int mkostemps(char *tmpl, int sl, int fl)
{
	WSS_REAL(mkostemps);
	INT_CALL(real_mkostemps(tmpl, sl, fl), tmpl, NULL);
}
WSS_EXPORT int mkstemp64(char *tmpl)
{
	WSS_REAL(mkstemp64);
	INT_CALL(real_mkstemp64(tmpl), tmpl, NULL);
}
WSS_EXPORT int mkostemp64(char *tmpl, int fl)
{
	WSS_REAL(mkostemp64);
	INT_CALL(real_mkostemp64(tmpl, fl), tmpl, NULL);
}
WSS_EXPORT int mkstemps64(char *tmpl, int sl)
{
	WSS_REAL(mkstemps64);
	INT_CALL(real_mkstemps64(tmpl, sl), tmpl, NULL);
}
WSS_EXPORT int mkostemps64(char *tmpl, int sl, int fl)
{
	WSS_REAL(mkostemps64);
	INT_CALL(real_mkostemps64(tmpl, sl, fl), tmpl, NULL);
}
WSS_EXPORT char *mkdtemp(char *tmpl)
{
	WSS_REAL(mkdtemp);
	PTR_CALL(char *, real_mkdtemp(tmpl), tmpl, NULL);
}
WSS_EXPORT int remove(const char *path)
{
	WSS_REAL(remove);
	INT_CALL(real_remove(path), path, NULL);
}
WSS_EXPORT int chown(const char *path, uid_t u, gid_t g)
{
	WSS_REAL(chown);
	INT_CALL(real_chown(path, u, g), path, NULL);
}
WSS_EXPORT int lchown(const char *path, uid_t u, gid_t g)
{
	WSS_REAL(lchown);
	INT_CALL(real_lchown(path, u, g), path, NULL);
}
WSS_EXPORT int fchownat(int d, const char *path, uid_t u, gid_t g, int fl)
{
	WSS_REAL(fchownat);
	INT_CALL(real_fchownat(d, path, u, g, fl), path, NULL);
}
/* The times are read by the kernel too: pinned around the call. */
#define TIMES_CALL(call, t, path) \
	do { \
		int pt_ = (t) ? wss_engine_pin((t), 2 * sizeof *(t)) : 0; \
		if (pt_ < 0) \
			wss_touch_range((t), 2 * sizeof *(t)); \
		int pp_ = wss_pin_str(path); \
		int r_ = call; \
		int e_ = errno; \
		wss_engine_unpin(pp_); \
		wss_engine_unpin(pt_); \
		errno = e_; \
		return r_; \
	} while (0)
WSS_EXPORT int utimensat(int d, const char *path, const struct timespec t[2], int fl)
{
	WSS_REAL(utimensat);
	TIMES_CALL(real_utimensat(d, path, t, fl), t, path);
}
WSS_EXPORT int utimes(const char *path, const struct timeval t[2])
{
	WSS_REAL(utimes);
	TIMES_CALL(real_utimes(path, t), t, path);
}
