/* The programs the preload cannot enter (runcheck.h). */
#include "config.h"
#include "cli/cmd/runcheck.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* prog's path as execvp finds it, into buf; false when none is found. */
static bool resolve(const char *prog, char *buf, size_t n)
{
	if (strchr(prog, '/'))
		return snprintf(buf, n, "%s", prog) < (int)n;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		int w = snprintf(buf, n, "%.*s%s%s", (int)len, path, len ? "/" : "", prog);
		if (w > 0 && (size_t)w < n && access(buf, X_OK) == 0)
			return true;
		path += len + (path[len] == ':');
	}
	return false;
}

/* Whether the ELF file on fd is linked statically: an executable
 * without a PT_INTERP program header (ELF64, as the only machine wss
 * builds for).  Not an ELF file (a script: its interpreter is what runs):
 * false. */
static bool is_static(int fd)
{
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 4096)
		return false;
	for (unsigned k = 0; k < eh.e_phnum; k++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)k * sizeof ph)) != (ssize_t)sizeof ph)
			return false;
		if (ph.p_type == PT_INTERP)
			return false;
	}
	/* A shared library is ET_DYN without PT_INTERP too, but is no
	 * program; a static-PIE executable has both and an entry point. */
	return eh.e_type == ET_EXEC || eh.e_entry != 0;
}

void wss_run_warn_unmeasurable(const char *prog)
{
	char path[PATH_MAX];
	if (!resolve(prog, path, sizeof path))
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat st;
	bool stat_ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	bool stat_linked = stat_ok && is_static(fd);
	close(fd);
	if (!stat_ok)
		return;
	if (stat_linked)
		fprintf(stderr,
			"wss: %s is statically linked: the preload cannot enter it, so it runs untracked and writes no "
			"profile (wss attach --method refbits PID measures it while it runs)\n",
			prog);
	else if (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) || ((st.st_mode & S_ISGID) && st.st_gid != getegid()))
		fprintf(stderr,
			"wss: %s is set-user-ID or set-group-ID: the loader ignores the preload for it, so it runs "
			"untracked and writes no profile\n",
			prog);
}
