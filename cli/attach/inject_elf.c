/* The C library's entry points in a running process (wss_inject_libc,
 * cli/attach/inject.h), found without running anything in it: the libraries'
 * addresses from /proc/PID/maps, and dlopen, dlsym, dlclose, dlerror and a
 * `syscall` instruction from the ELF file of its libc.so.6, read here (the
 * target's own loader is not used: calling into it is what needs them).
 * Apart from cli/attach/inject.c, which stops a thread and makes the calls. */
#include "config.h"
#include "cli/attach/inject.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct elf_file {
	unsigned char *p;
	size_t n;
} elf_file_t;

static int elf_read(const char *path, elf_file_t *f)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return errno;
	f->p = NULL;
	f->n = 0;
	size_t cap = 0;
	for (;;) {
		if (f->n == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			unsigned char *q = realloc(f->p, cap);
			if (!q) {
				fclose(fp);
				free(f->p);
				return ENOMEM;
			}
			f->p = q;
		}
		size_t got = fread(f->p + f->n, 1, cap - f->n, fp);
		f->n += got;
		if (got == 0)
			break;
	}
	fclose(fp);
	if (f->n < sizeof(Elf64_Ehdr) || memcmp(f->p, ELFMAG, SELFMAG) || f->p[EI_CLASS] != ELFCLASS64) {
		free(f->p);
		return ENOEXEC;
	}
	return 0;
}

static const Elf64_Shdr *elf_shdr(const elf_file_t *f, unsigned i)
{
	const Elf64_Ehdr *eh = (const void *)f->p;
	uint64_t off = eh->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr);
	if (i >= eh->e_shnum || off + sizeof(Elf64_Shdr) > f->n)
		return NULL;
	return (const void *)(f->p + off);
}

static bool elf_in(const elf_file_t *f, uint64_t off, uint64_t len) { return off <= f->n && len <= f->n - off; }

/* Does the file have a section of that name? */
static bool elf_has_section(const elf_file_t *f, const char *name)
{
	const Elf64_Ehdr *eh = (const void *)f->p;
	const Elf64_Shdr *strs = elf_shdr(f, eh->e_shstrndx);
	if (!strs || !elf_in(f, strs->sh_offset, strs->sh_size))
		return false;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = elf_shdr(f, i);
		if (s && s->sh_name < strs->sh_size &&
		    !strncmp((const char *)f->p + strs->sh_offset + s->sh_name, name, strs->sh_size - s->sh_name))
			return true;
	}
	return false;
}

/* The value of a defined function symbol in .dynsym, its default version
 * first (glibc keeps compatibility versions of dlopen beside it). */
static uint64_t elf_dynsym(const elf_file_t *f, const char *name)
{
	const Elf64_Ehdr *eh = (const void *)f->p;
	const Elf64_Shdr *dynsym = NULL, *versym = NULL;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *s = elf_shdr(f, i);
		if (s && s->sh_type == SHT_DYNSYM)
			dynsym = s;
		if (s && s->sh_type == SHT_GNU_versym)
			versym = s;
	}
	const Elf64_Shdr *str = dynsym ? elf_shdr(f, dynsym->sh_link) : NULL;
	if (!dynsym || !str || !elf_in(f, dynsym->sh_offset, dynsym->sh_size) || !elf_in(f, str->sh_offset, str->sh_size))
		return 0;
	size_t nsym = dynsym->sh_size / sizeof(Elf64_Sym);
	const Elf64_Sym *sym = (const void *)(f->p + dynsym->sh_offset);
	const uint16_t *ver =
		versym && elf_in(f, versym->sh_offset, nsym * 2) ? (const void *)(f->p + versym->sh_offset) : NULL;
	uint64_t any = 0;
	for (size_t i = 0; i < nsym; i++) {
		if (sym[i].st_shndx == SHN_UNDEF || ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC ||
		    sym[i].st_name >= str->sh_size ||
		    strncmp((const char *)f->p + str->sh_offset + sym[i].st_name, name, str->sh_size - sym[i].st_name))
			continue;
		if (!ver || !(ver[i] & 0x8000))
			return sym[i].st_value;
		any = sym[i].st_value;
	}
	return any;
}

/* The file's first PT_LOAD segment with all of flags (0: any), or NULL. */
static const Elf64_Phdr *elf_load(const elf_file_t *f, uint32_t flags)
{
	const Elf64_Ehdr *eh = (const void *)f->p;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uint64_t off = eh->e_phoff + (uint64_t)i * sizeof(Elf64_Phdr);
		if (!elf_in(f, off, sizeof(Elf64_Phdr)))
			break;
		const Elf64_Phdr *ph = (const void *)(f->p + off);
		if (ph->p_type == PT_LOAD && (ph->p_flags & flags) == flags)
			return ph;
	}
	return NULL;
}

/* The first `syscall` instruction (0f 05) of the file's executable
 * segment, as a virtual address of the file. */
static uint64_t elf_text_find(const elf_file_t *f, const unsigned char *pat, size_t n)
{
	const Elf64_Phdr *ph = elf_load(f, PF_X);
	if (!ph || !elf_in(f, ph->p_offset, ph->p_filesz))
		return 0;
	const unsigned char *t = f->p + ph->p_offset;
	for (uint64_t k = 0; k + n <= ph->p_filesz; k++)
		if (!memcmp(t + k, pat, n))
			return ph->p_vaddr + k;
	return 0;
}

static uint64_t elf_syscall_insn(const elf_file_t *f) { return elf_text_find(f, (const unsigned char *)"\x0f\x05", 2); }

/* The lowest virtual address of the file's first loaded segment, page
 * down: what its first mapping's start is relative to. */
static uint64_t elf_first_vaddr(const elf_file_t *f)
{
	const Elf64_Phdr *ph = elf_load(f, 0);
	return ph ? ph->p_vaddr & ~(uint64_t)4095 : 0;
}

int wss_inject_libc(pid_t pid, wss_inject_libc_t *lc, char *err, size_t errlen)
{
	char path[PATH_MAX], line[PATH_MAX + 256], libc[PATH_MAX] = "";
	uint64_t base = 0, lib[3][2] = {{UINT64_MAX, 0}, {UINT64_MAX, 0}, {UINT64_MAX, 0}};
	bool musl = false;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *m = fopen(path, "r");
	if (!m) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? ESRCH : errno;
	}
	while (fgets(line, sizeof line, m)) {
		unsigned long s, e, off;
		int name = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %n", &s, &e, &off, &name) < 3 || !name)
			continue;
		char *p = line + name, *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		const char *b = strrchr(p, '/');
		b = b ? b + 1 : p;
		if (strstr(b, "ld-musl") || strstr(b, "libc.musl"))
			musl = true;
		bool is_libc = !strcmp(b, "libc.so.6") || (!strncmp(b, "libc-2.", 7) && strstr(b, ".so"));
		int k = is_libc ? 0 : !strncmp(b, "ld-linux", 8) ? 1 : !strcmp(p, "[vdso]") ? 2 : -1;
		if (k >= 0) {
			if (s < lib[k][0])
				lib[k][0] = s;
			if (e > lib[k][1])
				lib[k][1] = e;
		}
		if (!*libc && off == 0 && is_libc) {
			snprintf(libc, sizeof libc, "%s", p);
			base = s;
		}
	}
	fclose(m);
	/* A Go program's goroutines block in system calls on stacks of a
	 * few kilobytes, too small for the loader. */
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	elf_file_t exe;
	if (!elf_read(path, &exe)) {
		bool go = elf_has_section(&exe, ".go.buildinfo");
		free(exe.p);
		if (go) {
			snprintf(err, errlen,
				 "process %d is a Go program: its threads wait in system calls on goroutine stacks too "
				 "small to load a library on",
				 (int)pid);
			return ENOTSUP;
		}
	}
	if (!*libc) {
		snprintf(err, errlen, "process %d %s", (int)pid,
			 musl ? "uses the musl C library: injection needs glibc's loader"
			      : "has no libc.so.6 (a static program): injection needs the dynamic C library");
		return ENOTSUP;
	}
	elf_file_t f;
	snprintf(path, sizeof path, "/proc/%d/root%s", (int)pid, libc);
	int r = elf_read(path, &f);
	if (r == EACCES || r == ENOENT)
		r = elf_read(libc, &f);
	if (r) {
		snprintf(err, errlen, "%s: %s", libc, strerror(r));
		return r;
	}
	uint64_t bias = base - elf_first_vaddr(&f);
	uint64_t v[5] = {elf_dynsym(&f, "dlopen"), elf_dynsym(&f, "dlsym"), elf_dynsym(&f, "dlclose"),
			 elf_dynsym(&f, "dlerror"), elf_syscall_insn(&f)};
	uint64_t int3 = elf_text_find(&f, (const unsigned char *)"\xcc", 1);
	free(f.p);
	for (int k = 0; k < 5; k++)
		if (!v[k]) {
			snprintf(err, errlen, "%s has no %s: injection needs glibc 2.34 or later (dlopen in libc.so.6)",
				 libc,
				 k == 4 ? "system call instruction"
					: (const char *[]){"dlopen", "dlsym", "dlclose", "dlerror"}[k]);
			return ENOTSUP;
		}
	memset(lc, 0, sizeof *lc);
	lc->dlopen = bias + v[0];
	lc->dlsym = bias + v[1];
	lc->dlclose = bias + v[2];
	lc->dlerror = bias + v[3];
	lc->trap = bias + v[4];
	lc->int3 = int3 ? bias + int3 : 0;
	memcpy(lc->lib, lib, sizeof lib);
	return 0;
}
