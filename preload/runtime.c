/* Language runtimes that need more of us than a C program does.  Go is one:
 * its runtime maps its heap and goroutine stacks through our mmap (cgo's
 * x_cgo_mmap) but reads and writes them with raw system calls, which fail
 * with EFAULT (a short read, silently) on a page mprotect has armed, and it
 * unmaps them with raw munmap, behind our registry.  Only the signal-free
 * backend (uffd-wp: the kernel's own writes to a write-protected page
 * succeed) may track its memory; under the others it is left out.
 * Detected from the executable's sections: every Go binary since Go 1.13
 * has .go.buildinfo.  Read with raw system calls, before main. */
#include "config.h"
#include "preload/preload.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>

#include "common/sys.h"

static bool pread_all(int fd, void *buf, size_t n, off_t off)
{
	long r = wss_sys4(SYS_pread64, fd, buf, n, off);
	return !wss_sys_failed(r) && (size_t)r == n;
}

/* Does the ELF file open on fd have a section named name? */
static bool has_section(int fd, const char *name)
{
	Elf64_Ehdr eh;
	if (!pread_all(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum ||
	    eh.e_shnum > 4096 || eh.e_shstrndx >= eh.e_shnum)
		return false;
	size_t shlen = (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
	Elf64_Shdr *sh = wss_sys_alloc(shlen);
	if (!sh)
		return false;
	bool found = false;
	char *names = NULL;
	size_t nlen = 0;
	if (pread_all(fd, sh, shlen, (off_t)eh.e_shoff)) {
		nlen = sh[eh.e_shstrndx].sh_size;
		if (nlen && nlen <= (1 << 20) && (names = wss_sys_alloc(nlen + 1)) &&
		    pread_all(fd, names, nlen, (off_t)sh[eh.e_shstrndx].sh_offset)) {
			names[nlen] = 0;
			for (int i = 0; i < eh.e_shnum && !found; i++)
				found = sh[i].sh_name < nlen && !strcmp(names + sh[i].sh_name, name);
		}
	}
	if (names)
		wss_sys_free(names, nlen + 1);
	wss_sys_free(sh, shlen);
	return found;
}

const char *wss_runtime_detect(void)
{
	int fd = (int)wss_sys4(SYS_openat, AT_FDCWD, "/proc/self/exe", O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	bool go = has_section(fd, ".go.buildinfo");
	wss_sys1(SYS_close, fd);
	return go ? "Go" : NULL;
}
