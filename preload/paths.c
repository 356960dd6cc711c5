/* Calls whose string arguments (paths, templates) the kernel reads: a path
 * built in the heap may sit on an armed page, and the call fails with
 * EFAULT.  The wrappers open the string's pages just before the call and
 * retry once on EFAULT (a failed open/unlink/... has done nothing).  The
 * C library's own openers (fopen, opendir, dlopen) call the kernel
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
#include <unistd.h>

#include "engine/engine.h"

int open64(const char *path, int fl, ...);
int openat64(int d, const char *path, int fl, ...);
FILE *fopen64(const char *restrict path, const char *restrict mode);

#define PATH_FUNCS(X) \
	X(open) X(open64) X(openat) X(openat64) X(creat) X(access) X(faccessat) X(unlink) X(unlinkat) \
	X(mkdir) X(mkdirat) X(rmdir) X(rename) X(renameat) X(chdir) X(chmod) X(fchmodat) X(truncate) \
	X(link) X(symlink) X(fopen) X(fopen64) X(freopen) X(opendir) X(mkstemp) X(mkostemp)
PATH_FUNCS(WSS_REAL_DECLARE)

void wss_paths_init(void) { PATH_FUNCS(WSS_REAL_RESOLVE) }

void wss_open_str(const char *s)
{
	if (s)
		wss_touch_range(s, strlen(s) + 1);
}

/* Open the strings, call, and retry once on EFAULT.  bad is the failure
 * test on the result r_. */
#define STR_CALL(type, call, bad, a, b) \
	do { \
		wss_open_str(a); \
		wss_open_str(b); \
		type r_ = call; \
		if ((bad) && errno == EFAULT) { \
			wss_open_str(a); \
			wss_open_str(b); \
			r_ = call; \
		} \
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
	WSS_REAL(truncate);
	INT_CALL(real_truncate(path, n), path, NULL);
}
WSS_EXPORT int link(const char *a, const char *b)
{
	WSS_REAL(link);
	INT_CALL(real_link(a, b), a, b);
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
