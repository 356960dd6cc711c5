/* TAP producer (see tap.h). */
#include "tests/tap/tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int planned = -1, run, failed;

void plan(int n)
{
	planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static bool report(bool cond, const char *fmt, va_list ap)
{
	run++;
	if (!cond)
		failed++;
	printf("%sok %d - ", cond ? "" : "not ", run);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

bool ok(bool cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	report(cond, fmt, ap);
	va_end(ap);
	return cond;
}

bool is_int(long long got, long long want, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bool r = report(got == want, fmt, ap);
	va_end(ap);
	if (!r)
		diag("got %lld, want %lld", got, want);
	return r;
}

bool is_str(const char *got, const char *want, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	bool r = report(got && want && !strcmp(got, want), fmt, ap);
	va_end(ap);
	if (!r)
		diag("got \"%s\", want \"%s\"", got ? got : "(null)", want ? want : "(null)");
	return r;
}

void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

void skip_all(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("1..0 # SKIP ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(0);
}

void bail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("Bail out! ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	exit(1);
}

int done_testing(void)
{
	if (planned < 0) {
		printf("1..%d\n", run);
		planned = run;
	}
	fflush(stdout);
	return failed || run != planned;
}
