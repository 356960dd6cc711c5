/* Each way issue 11 found for stack capture and signal delivery to touch
 * an armed page where a fault cannot be taken, as a scenario under manual
 * ticks (wss_tick: every tracked page is armed after it):
 *   personality  a new site whose unwind reads a CIE's personality slot,
 *                DW.ref.__gcc_personality_v0, on an armed .data page
 *   jitframe     a new site in code without unwind information whose frame
 *                pointer holds the address of an armed heap page
 *   altstack     a thread whose alternate signal stack, installed with
 *                syscall(SYS_sigaltstack), is mmap'd (tracked) memory
 *   threads      threads created after ticks (run linked by lld, whose
 *                layout puts RELRO, .dynamic included, in a segment of its
 *                own, and with lazy binding)
 *   stdio        stdio handing the kernel armed pages past the wrappers: a
 *                heap buffer given with setvbuf/setbuffer/setbuf, flushed
 *                after a tick; fwrite and fread of a buffer-sized or longer
 *                request (straight between the caller's pages and the
 *                kernel) and of a short one (through the stream's buffer)
 * Each prints a checksum; the test compares it with a run without wss. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "include/wss.h"

#define PAGE 4096

/* Initialised data in front of the personality slot, so the slot has a
 * .data page of its own that only the unwinder reads. */
char pad[3 * PAGE] = {1};
static volatile long sink;

__attribute__((noipa)) static void cleanup(int *p) { sink += *p; }
__attribute__((noipa)) static void store(volatile char *p) { p[0] = 1; }

/* Its FDE names a personality routine (the cleanup must run when an
 * exception unwinds through store), read through DW.ref. */
__attribute__((noipa)) static void with_cleanup(volatile char *p)
{
	int x __attribute__((cleanup(cleanup))) = 1;
	store(p);
	p[1] = (char)x;
}

/* No CFI: the unwinder finds no FDE here and, left to itself, follows the
 * frame pointer, which this code sets to the second argument.  Two copies,
 * two faulting instructions: two sites, two captures. */
#define JIT_LIKE(name) \
	".globl " #name "\n" \
	".type " #name ", @function\n" #name ":\n" \
	"	push %rbp\n" \
	"	mov %rsi, %rbp\n" \
	"	movb $1, (%rdi)\n" \
	"	pop %rbp\n" \
	"	ret\n" \
	".size " #name ", .-" #name "\n"
__asm__(".text\n" JIT_LIKE(jit_like) JIT_LIKE(jit_like2));
void jit_like(volatile char *touch, void *frame);
void jit_like2(volatile char *touch, void *frame);

static char *heap(size_t pages)
{
	char *p = malloc(pages * PAGE);
	if (!p)
		abort();
	memset(p, 0, pages * PAGE);
	return p;
}

static void *alt_thread(void *arg)
{
	char *buf = arg;
	/* Memory from mmap: tracked anonymous memory. */
	size_t sz = 64 * 1024;
	char *st = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		abort();
	memset(st, 0, sz);
	stack_t ss = {.ss_sp = st, .ss_size = sz, .ss_flags = 0};
	if (syscall(SYS_sigaltstack, &ss, NULL))
		abort();
	wss_tick();
	/* Faults on armed heap pages: each runs our handler on that stack. */
	long s = 0;
	for (int i = 0; i < 8; i++)
		s += buf[i * PAGE] += 1;
	stack_t off = {.ss_flags = SS_DISABLE};
	syscall(SYS_sigaltstack, &off, NULL);
	munmap(st, sz);
	return (void *)s;
}

static void *worker(void *arg)
{
	char *p = arg;
	long s = 0;
	for (int i = 0; i < 16; i++) {
		p[i * PAGE] = (char)i;
		s += p[i * PAGE];
	}
	return (void *)s;
}

/* One stream with the program's own buffer (setvbuf, setbuffer or setbuf
 * by how), 1,000 lines written, a tick, the flush; then a 64 KiB fwrite
 * and fread and a 100-byte one, each of armed heap pages.  Returns the
 * bytes read back, or -1 on any stdio error. */
static long stdio_round(int how)
{
	FILE *f = tmpfile();
	if (!f)
		abort();
	char *vb = heap(how == 2 ? BUFSIZ / PAGE + 1 : 16);
	if (how == 0)
		setvbuf(f, vb, _IOFBF, 16 * PAGE);
	else if (how == 1)
		setbuffer(f, vb, 16 * PAGE);
	else
		setbuf(f, vb);
	for (int i = 0; i < 1000; i++)
		fprintf(f, "line %d\n", i);
	wss_tick();
	if (fflush(f) || ferror(f))
		return -1;
	char *big = heap(16), *in = heap(16);
	memset(big, 'x', 16 * PAGE);
	wss_tick();
	if (fwrite(big, 1, 16 * PAGE, f) != 16 * PAGE || fwrite(big + 8 * PAGE, 1, 100, f) != 100 || fflush(f))
		return -1;
	rewind(f);
	wss_tick();
	long got = 0;
	size_t n;
	while ((n = fread(in, 1, 16 * PAGE, f)) > 0)
		got += (long)n;
	rewind(f);
	wss_tick();
	got += (long)fread(in + 4 * PAGE, 1, 100, f);
	if (ferror(f))
		return -1;
	fclose(f);
	free(big);
	free(in);
	return got; /* the stream's buffer stays excluded: never freed */
}

static long stdio_rounds(void)
{
	long sum = 0;
	for (int how = 0; how < 3; how++) {
		long r = stdio_round(how);
		if (r < 0)
			return -1;
		sum += r;
	}
	return sum;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long sum = 0;
	if (!strcmp(mode, "personality")) {
		char *p = heap(4);
		wss_tick();
		with_cleanup(p + PAGE);
		sum = p[PAGE] + p[PAGE + 1] + pad[5];
	} else if (!strcmp(mode, "jitframe")) {
		/* The first capture reads the frame page while it is open (the
		 * unwinder may remember it as readable); the second while it is
		 * armed. */
		char *p = heap(4);
		wss_tick();
		p[2 * PAGE] = 1;
		jit_like(p + PAGE, p + 2 * PAGE);
		wss_tick();
		jit_like2(p + 3 * PAGE, p + 2 * PAGE);
		sum = p[PAGE] + p[3 * PAGE];
	} else if (!strcmp(mode, "altstack")) {
		char *p = heap(8);
		pthread_t t;
		void *r;
		if (pthread_create(&t, NULL, alt_thread, p) || pthread_join(t, &r))
			abort();
		sum = (long)r;
	} else if (!strcmp(mode, "threads")) {
		char *p = heap(64);
		for (int round = 0; round < 3; round++) {
			wss_tick();
			pthread_t t[4];
			for (int i = 0; i < 4; i++)
				if (pthread_create(&t[i], NULL, worker, p + i * 16 * PAGE))
					abort();
			for (int i = 0; i < 4; i++) {
				void *r;
				pthread_join(t[i], &r);
				sum += (long)r;
			}
		}
		sum += pad[0];
	} else if (!strcmp(mode, "stdio")) {
		sum = stdio_rounds();
	} else {
		fprintf(stderr, "usage: unharmed personality|jitframe|altstack|threads|stdio\n");
		return 2;
	}
	printf("%s %ld\n", mode, sum);
	return 0;
}
