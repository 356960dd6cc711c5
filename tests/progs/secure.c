/* What secure-execution mode (setuid, setgid) leaves of the preload.
 * Prints "secure N" (getauxval(AT_SECURE)), "mapped N" (1 when a library
 * whose name contains "libwss" is in /proc/self/maps), "threads N" (the
 * engine would add one), after calling functions the preload interposes
 * (malloc, read, stat, ioctl, a contended mutex) on heap memory: they must
 * work when the library is loaded but inert.  usage: secure */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t *mu;

static void *locker(void *a)
{
	for (int i = 0; i < 10000; i++) {
		pthread_mutex_lock(mu);
		++*(long *)a;
		pthread_mutex_unlock(mu);
	}
	return NULL;
}

/* The value of "Key:" in /proc/self/status, or -1. */
static long status_field(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	size_t n = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = atol(line + n + 1);
	if (f)
		fclose(f);
	return v;
}

int main(void)
{
	int bad = 0;
	char *buf = malloc(1 << 20);
	memset(buf, 1, 1 << 20);
	int p[2];
	if (pipe(p) || write(p[1], "abc", 3) != 3)
		bad |= 1;
	int *avail = malloc(sizeof *avail);
	if (ioctl(p[0], FIONREAD, avail) || *avail != 3 || read(p[0], buf + 5000, 3) != 3)
		bad |= 2;
	struct stat *st = malloc(sizeof *st);
	if (stat("/", st))
		bad |= 4;
	long threads = status_field("Threads");
	mu = malloc(sizeof *mu);
	pthread_mutex_init(mu, NULL);
	long *count = calloc(1, sizeof *count);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, locker, count);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (*count != 20000)
		bad |= 8;
	int mapped = 0;
	FILE *m = fopen("/proc/self/maps", "r");
	char line[512];
	while (m && fgets(line, sizeof line, m))
		mapped |= strstr(line, "libwss") != NULL;
	if (m)
		fclose(m);
	printf("secure %lu\nmapped %d\nthreads %ld\n", getauxval(AT_SECURE), mapped, threads);
	if (bad)
		printf("bad %d\n", bad);
	return bad;
}
