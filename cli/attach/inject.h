/* Calling functions inside a running process, by ptrace (`wss attach`'s
 * injected method, cli/attach/inject.c): stop one of its threads where it holds
 * none of the C library's locks, run a function of the process on that
 * thread, and give the thread back exactly as it was. */
#ifndef WSS_CLI_INJECT_H
#define WSS_CLI_INJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The C library's functions the injection calls, in the target. */
typedef struct wss_inject_libc {
	uint64_t dlopen, dlsym, dlclose, dlerror;
	uint64_t trap; /* a `syscall` instruction of the C library's text: where a call returns */
	uint64_t int3; /* an int3 byte of it: where a call returns when SIGTRAP may be used (0: none) */
	/* Where the C library, the loader and the vdso are mapped: a thread
	 * with none of their frames on its stack holds none of their locks. */
	uint64_t lib[3][2];
} wss_inject_libc_t;

typedef struct wss_inject {
	pid_t pid, tid;        /* the process, and the thread stopped in it */
	bool stopped;          /* tid is stopped, its state saved */
	unsigned char regs[27 * 8]; /* struct user_regs_struct, as the thread was */
	unsigned char *xstate; /* its extended state (NT_X86_XSTATE) */
	size_t xstate_len;
	uint64_t scratch;      /* below its stack pointer and red zone: room for arguments */
	uint64_t sigmask;      /* its signal mask, blocked whole while it is ours */
	bool by_trap;          /* calls return to lc->int3 (SIGTRAP), not to lc->trap */
	bool trap_seen;        /* a SIGTRAP of the program's came meanwhile: sent again */
	bool stop_seen;        /* a SIGSTOP came meanwhile (it cannot be blocked): sent again */
} wss_inject_t;

/* Find the C library's entry points in pid (cli/attach/inject_elf.c).  Returns 0,
 * or an errno with the reason (a static program, not glibc, glibc before
 * 2.34) in err. */
int wss_inject_libc(pid_t pid, wss_inject_libc_t *lc, char *err, size_t errlen);

/* Stop a thread of pid at a safe point: blocked in a system call that
 * waits (poll, epoll_wait, nanosleep, accept, ...), which no code of the C
 * library's allocator or loader makes while it holds a lock; or, when no
 * thread waits so, running the program's own code with no frame of the C
 * library or the loader on its stack (a computing thread), as its unwind
 * tables show.  Tries the threads in turn for up to timeout_ns.  Returns
 * 0, EPERM (ptrace refused: err says which setting), ESRCH (gone),
 * ETIMEDOUT (no thread came to a safe point), or another errno; the
 * reason in err.  The thread skip (the engine's, once started) is never
 * taken. */
int wss_inject_stop(wss_inject_t *ij, const wss_inject_libc_t *lc, pid_t pid, pid_t skip, uint64_t timeout_ns,
		    char *err, size_t errlen);

/* Copy len bytes into the stopped thread's scratch area; *at gets their
 * address in the target.  Returns 0 or an errno. */
int wss_inject_put(wss_inject_t *ij, const void *data, size_t len, uint64_t *at);

/* Call fn(args[0..nargs-1]) on the stopped thread and wait for it to return
 * to lc->trap; *ret gets its return value.  The thread's signals stay
 * blocked (pending, not lost) until it is given back.  Returns 0, ESRCH
 * (the process died), EFAULT (the call faulted: err says where), or another
 * errno. */
int wss_inject_call(wss_inject_t *ij, const wss_inject_libc_t *lc, uint64_t fn, const uint64_t *args, int nargs,
		    uint64_t *ret, char *err, size_t errlen);

/* Read a NUL-terminated string of the target at addr into out. */
int wss_inject_string(pid_t pid, uint64_t addr, char *out, size_t n);

/* Give the thread back: its registers and extended state as they were (a
 * system call it was blocked in starts again, as after a signal with no
 * handler), the held signals, and detach. */
void wss_inject_resume(wss_inject_t *ij);

#endif
