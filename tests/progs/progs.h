/* Helpers shared by the test and bench programs that check known working
 * sets: a 64-bit mixer (splitmix64's finaliser) for reproducible
 * pseudo-random pages, and one line of /proc/self/status, to compare a
 * run's memory under wss with a native run's.  Header only: each program
 * stays one file plus this. */
#ifndef WSS_TESTS_PROGS_H
#define WSS_TESTS_PROGS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t progs_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The value of a "Name:   N kB" line of /proc/self/status, in KiB (0:
 * none). */
static inline unsigned long progs_status_kb(const char *name)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long v = 0;
	size_t n = strlen(name);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, name, n) && line[n] == ':')
			v = strtoul(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

#endif
