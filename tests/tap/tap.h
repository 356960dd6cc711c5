/* A small TAP producer for C tests: plan, ok, is_int, is_str, diag,
 * skip_all, bail.  Output goes to stdout with write(2)-free stdio; tests
 * link it directly (tests/tap/tap.c). */
#ifndef WSS_TESTS_TAP_H
#define WSS_TESTS_TAP_H

#include <stdbool.h>
#include <stdint.h>

void plan(int n);
/* Returns cond, so tests can react to a failure. */
bool ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool is_int(long long got, long long want, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
bool is_str(const char *got, const char *want, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "1..0 # SKIP reason" and exit 0: a missing feature, never a pass. */
void skip_all(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* "Bail out! reason" and exit 1: the test could not set itself up. */
void bail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Exit status: 0 when all planned tests ran and passed. */
int done_testing(void);

#endif
