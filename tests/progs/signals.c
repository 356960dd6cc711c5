/* The application's own SIGSEGV handling under the preload: a handler that
 * recovers with siglongjmp from a fault on a page it made PROT_NONE inside
 * tracked memory, reading back its own handler and mask, and (with "die")
 * the default action on a real fault.
 * usage: signals [recover|die] */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static sigjmp_buf env;
static volatile sig_atomic_t hits;
static void *fault_addr;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	hits++;
	fault_addr = si->si_addr;
	siglongjmp(env, 1);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "recover";
	/* volatile: live across the sigsetjmps below (-Wclobbered) */
	char *volatile p = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memset(p, 1, 8 * 4096);
	if (!strcmp(mode, "die")) {
		mprotect(p + 4096, 4096, PROT_NONE);
		p[4096] = 2; /* the default action: killed by SIGSEGV */
		return 0;
	}
	struct sigaction sa, back;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGSEGV, NULL, &back);
	printf("readback %s\n", back.sa_sigaction == on_segv && (back.sa_flags & SA_SIGINFO) ? "ok" : "wrong");
	/* a page the program itself made PROT_NONE is not ours to open */
	mprotect(p + 2 * 4096, 4096, PROT_NONE);
	for (int i = 0; i < 3; i++) {
		if (sigsetjmp(env, 1) == 0) {
			p[2 * 4096 + 8] = 3;
			printf("no fault\n");
		}
	}
	printf("hits %d addr %s\n", (int)hits, fault_addr == p + 2 * 4096 + 8 ? "ok" : "wrong");
	/* writes to a read-only page are the program's faults too */
	mprotect(p + 3 * 4096, 4096, PROT_READ);
	if (sigsetjmp(env, 1) == 0)
		p[3 * 4096] = 4;
	printf("hits %d\n", (int)hits);
	/* its mask reads back as set, even though we never block SIGSEGV */
	sigset_t s, o;
	sigemptyset(&s);
	sigaddset(&s, SIGSEGV);
	sigprocmask(SIG_BLOCK, &s, NULL);
	sigprocmask(SIG_BLOCK, NULL, &o);
	printf("mask %s\n", sigismember(&o, SIGSEGV) ? "ok" : "wrong");
	p[0] = 5; /* an armed page still works with SIGSEGV "blocked" */
	sigprocmask(SIG_UNBLOCK, &s, NULL);
	/* signal() returns the previous handler */
	void (*prev)(int) = signal(SIGSEGV, SIG_DFL);
	printf("signal %s\n", (void *)prev == (void *)on_segv ? "ok" : "wrong");
	return 7;
}
