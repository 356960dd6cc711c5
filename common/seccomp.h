/* What a seccomp filter would do with a system call: the classic BPF
 * program a process hands to prctl(PR_SET_SECCOMP) or seccomp(2), run here
 * on a struct seccomp_data as the kernel runs it, so that wss can tell,
 * before the filter is installed, whether the calls it makes itself would
 * still be allowed (preload/syscalls.c).  Pure, no allocation: AS-safe. */
#ifndef WSS_COMMON_SECCOMP_H
#define WSS_COMMON_SECCOMP_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/filter.h>
#include <linux/seccomp.h>

/* The filter's return value for the call d (SECCOMP_RET_* | data), or, with
 * *valid false, 0: a program the kernel's checker refuses (a jump or a load
 * out of bounds, an instruction seccomp does not allow, no return at the
 * end), which then installs nothing.  A division by a zero X returns 0 (the
 * kernel's action for it: kill). */
uint32_t wss_seccomp_run(const struct sock_filter *f, unsigned n, const struct seccomp_data *d, bool *valid);

/* Does the action let the call run (ALLOW, LOG)? */
bool wss_seccomp_allows(uint32_t action);

#endif
