/* Modules: every object the dynamic loader has loaded (path, load bias,
 * mapped range, build-id), for the profile's "module" records, from which
 * `wss report` symbolises stack addresses offline, and for the hot pages'
 * "data:<path>" labels.  Entries are added by whoever reads the loader's
 * list (start-up, or a tick inside dl_iterate_phdr: loader.c, serialised by
 * the tick lock) and written to the profile by the tick that follows
 * (engine lock); never removed, so a record id stays valid for the run. */
#include "config.h"
#include "engine/internal.h"

#include <elf.h>
#include <link.h>
#include <string.h>

#define MOD_MAX 1024

typedef struct module {
	uintptr_t bias, start, end;
	uint32_t name; /* offset in names */
	char build_id[41];
	bool written;  /* engine lock */
} module_t;

static module_t mods[MOD_MAX];
static int nmods; /* atomic: entries [0, nmods) are complete (release) */
static char names[256 * 1024];
static uint32_t names_len;

/* The GNU build-id note of the object, as hex, or "" when it has none. */
static void build_id(const struct dl_phdr_info *info, char *out)
{
	out[0] = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *nh;
			const unsigned char *desc = (const unsigned char *)name + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
			    nh->n_descsz <= 20) {
				static const char hexd[] = "0123456789abcdef";
				for (unsigned j = 0; j < nh->n_descsz; j++) {
					out[2 * j] = hexd[desc[j] >> 4];
					out[2 * j + 1] = hexd[desc[j] & 15];
				}
				out[2 * nh->n_descsz] = 0;
				return;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

void wss_modules_add(const struct dl_phdr_info *info, bool main_program)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
		lo = s < lo ? s : lo;
		hi = e > hi ? e : hi;
	}
	if (lo >= hi || nmods >= MOD_MAX)
		return;
	for (int i = 0; i < nmods; i++)
		if (mods[i].bias == info->dlpi_addr && mods[i].start == lo && mods[i].end == hi)
			return;
	char exe[4096];
	const char *name = info->dlpi_name;
	if (main_program) {
		wss_readlink_exe(exe, sizeof exe);
		name = exe;
	}
	size_t len = name ? strlen(name) : 0;
	if (names_len + len + 1 > sizeof names)
		return;
	module_t *m = &mods[nmods];
	m->bias = info->dlpi_addr;
	m->start = lo;
	m->end = hi;
	m->name = names_len;
	memcpy(names + names_len, name ? name : "", len + 1);
	names_len += (uint32_t)len + 1;
	build_id(info, m->build_id);
	m->written = false;
	__atomic_store_n(&nmods, nmods + 1, __ATOMIC_RELEASE);
}

void wss_modules_out_locked(void)
{
	int n = __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (!mods[i].written) {
			wss_engine_module_locked(i + 1, names + mods[i].name, mods[i].bias, mods[i].start, mods[i].end,
						 mods[i].build_id);
			mods[i].written = true;
		}
}

const char *wss_modules_of(uintptr_t addr, bool *main_program)
{
	int n = __atomic_load_n(&nmods, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i++)
		if (addr >= mods[i].start && addr < mods[i].end) {
			*main_program = i == 0;
			return names + mods[i].name;
		}
	return NULL;
}

void wss_modules_fork_child(void)
{
	/* The child's profile needs them all again. */
	for (int i = 0; i < nmods; i++)
		mods[i].written = false;
}
