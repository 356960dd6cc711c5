/* Symbolisation with libdwfl (symbols.h).  One Dwfl session per module
 * record, opened on first use: a file that changed since the run (another
 * build-id), vanished or overlaps another module then costs only its own
 * frames.  The walk over inlined calls follows eu-addr2line -i: the scopes
 * at the address, innermost first; each DW_TAG_inlined_subroutine is a frame
 * whose caller sits at its DW_AT_call_file:DW_AT_call_line.  Names are
 * demangled (C++, Rust legacy and v0) with libiberty's demangler, as c++filt
 * prints them: a function's DWARF name is its linkage name where it has
 * one (DW_AT_name alone is "method", not "ns::Klass::method(int)"). */
#include "config.h"
#include "cli/model/symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sym_module {
	const wss_module_t *rec;
	bool opened;
	Dwfl *dwfl;
	Dwfl_Module *mod; /* NULL: unusable, see note */
	const char *note;
	char note_buf[160];
	uint64_t lo, hi; /* the range it covers */
} sym_module_t;

/* A demangled name, by the address of the mangled one (libdw's strings
 * live as long as their Dwfl, so each has one address). */
typedef struct dm_entry {
	const char *mangled;
	char *readable; /* NULL: not a mangled name, printed as it is */
} dm_entry_t;

/* A function of code made at run time, from the perf map file the
 * runtime wrote (/tmp/perf-PID.map: "START SIZE NAME", hex). */
typedef struct perf_sym {
	uint64_t start, size;
	size_t seq; /* its line: a later one names code made at the same place since */
	char *name;
} perf_sym_t;

struct wss_symbols {
	sym_module_t *mods;
	size_t n;
	dm_entry_t *dm;
	size_t dm_n, dm_cap; /* cap: a power of two, or 0 */
	int64_t pid;         /* the profile's process, whose perf map names its JIT code */
	bool perf_tried;
	perf_sym_t *perf; /* by start, then line */
	size_t nperf;
};

/* Local files only: no debuginfod (a report never goes to the network). */
static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

wss_symbols_t *wss_sym_open(const wss_profile_t *p)
{
	unsetenv("DEBUGINFOD_URLS");
	wss_symbols_t *s = calloc(1, sizeof *s);
	if (!s || (p->nmodules && !(s->mods = calloc(p->nmodules, sizeof *s->mods)))) {
		free(s);
		return NULL;
	}
	for (size_t k = 0; k < p->nmodules; k++) {
		s->mods[k].rec = &p->modules[k];
		s->mods[k].lo = p->modules[k].start;
		s->mods[k].hi = p->modules[k].end;
	}
	s->n = p->nmodules;
	s->pid = p->pid;
	return s;
}

void wss_sym_close(wss_symbols_t *s)
{
	if (!s)
		return;
	for (size_t k = 0; k < s->n; k++)
		if (s->mods[k].dwfl)
			dwfl_end(s->mods[k].dwfl);
	free(s->mods);
	for (size_t k = 0; k < s->dm_cap; k++)
		free(s->dm[k].readable);
	free(s->dm);
	for (size_t k = 0; k < s->nperf; k++)
		free(s->perf[k].name);
	free(s->perf);
	free(s);
}

/* ---- perf map files: code a JIT made ---- */

/* The most lines and bytes read from one: a map is a few MB for a large
 * node or Java program; past these it is not a runtime's. */
#define PERF_MAX_LINES (4U << 20)
#define PERF_MAX_BYTES (512ULL << 20)

static int by_start(const void *a, const void *b)
{
	const perf_sym_t *x = a, *y = b;
	if (x->start != y->start)
		return (x->start > y->start) - (x->start < y->start);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* One line "START SIZE NAME" (hex, with or without 0x) into e; false
 * when it is not one. */
static bool perf_line(char *line, size_t seq, perf_sym_t *e)
{
	char *end;
	errno = 0;
	unsigned long long st = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || errno)
		return false;
	char *sz = end + 1;
	unsigned long long size = strtoull(sz, &end, 16);
	if (end == sz || *end != ' ' || errno || !size)
		return false;
	char *name = end + 1;
	name[strcspn(name, "\n")] = 0;
	if (!*name)
		return false;
	*e = (perf_sym_t){st, size, seq, strdup(name)};
	return e->name != NULL;
}

/* Reads /tmp/perf-PID.map once: a regular file of this user's or root's
 * (as perf itself asks: another user's file in /tmp could name the code
 * falsely).  No file (the runtime was not asked to write one: node
 * --perf-basic-prof, Java -XX:+DumpPerfMapAtExit, python3.12 -X perf) or
 * one not readable: no names from it. */
static void perf_load(wss_symbols_t *s)
{
	s->perf_tried = true;
	if (s->pid <= 0)
		return;
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%" PRId64 ".map", s->pid);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	struct stat st;
	FILE *f = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_uid != getuid() && st.st_uid != 0) ||
	    (uint64_t)st.st_size > PERF_MAX_BYTES || !(f = fdopen(fd, "r"))) {
		close(fd);
		return;
	}
	char *line = NULL;
	size_t lcap = 0, cap = 0;
	ssize_t len;
	while (s->nperf < PERF_MAX_LINES && (len = getline(&line, &lcap, f)) > 0) {
		if (s->nperf == cap) {
			size_t c = cap ? 2 * cap : 1024;
			perf_sym_t *v = realloc(s->perf, c * sizeof *v);
			if (!v)
				break;
			s->perf = v;
			cap = c;
		}
		if (perf_line(line, s->nperf, &s->perf[s->nperf]))
			s->nperf++;
	}
	free(line);
	fclose(f);
	qsort(s->perf, s->nperf, sizeof *s->perf, by_start);
}

/* The perf map's function at a, the latest written of those that cover it
 * (a JIT reuses its code space); NULL when none does. */
static const perf_sym_t *perf_at(wss_symbols_t *s, uint64_t a)
{
	if (!s->perf_tried)
		perf_load(s);
	size_t lo = 0, hi = s->nperf;
	while (lo < hi) { /* the first entry starting past a */
		size_t mid = lo + (hi - lo) / 2;
		if (s->perf[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	const perf_sym_t *best = NULL;
	/* Those starting at or before a, nearest first; the code objects
	 * around an address are few. */
	for (size_t k = lo, seen = 0; k-- > 0 && seen < 64; seen++) {
		const perf_sym_t *e = &s->perf[k];
		if (a - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

static size_t dm_slot(const dm_entry_t *v, size_t cap, const char *key)
{
	size_t h = (size_t)(((uintptr_t)key >> 3) * 0x9e3779b97f4a7c15ULL) & (cap - 1);
	while (v[h].mangled && v[h].mangled != key)
		h = (h + 1) & (cap - 1);
	return h;
}

/* name as people read it: demangled when it is a C++ or Rust symbol
 * (_Z..., _R...), else itself; NULL stays NULL.  Out of memory, the
 * mangled name. */
static const char *readable(wss_symbols_t *s, const char *name)
{
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return name;
	if (s->dm_cap) {
		size_t h = dm_slot(s->dm, s->dm_cap, name);
		if (s->dm[h].mangled)
			return s->dm[h].readable ? s->dm[h].readable : name;
	}
	if (2 * (s->dm_n + 1) > s->dm_cap) {
		size_t cap = s->dm_cap ? 2 * s->dm_cap : 256;
		dm_entry_t *v = calloc(cap, sizeof *v);
		if (!v)
			return name;
		for (size_t k = 0; k < s->dm_cap; k++)
			if (s->dm[k].mangled)
				v[dm_slot(v, cap, s->dm[k].mangled)] = s->dm[k];
		free(s->dm);
		s->dm = v;
		s->dm_cap = cap;
	}
	/* DMGL_AUTO: Rust's demangler first (its legacy names are C++
	 * mangled with a hash, which it drops), then C++'s. */
	char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	dm_entry_t *e = &s->dm[dm_slot(s->dm, s->dm_cap, name)];
	e->mangled = name;
	e->readable = d;
	s->dm_n++;
	return d ? d : name;
}

/* A function DIE's name: its linkage name demangled where it has one (C++
 * and Rust; through DW_AT_abstract_origin and DW_AT_specification), else
 * DW_AT_name (C). */
static const char *die_name(wss_symbols_t *s, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!ln)
		ln = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	const char *r = ln ? readable(s, ln) : NULL;
	return r && r != ln ? r : dwarf_diename(die);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Reports the module's file at its bias and checks its build-id. */
static void module_open(sym_module_t *m)
{
	m->opened = true;
	const wss_module_t *r = m->rec;
	if (!(m->dwfl = dwfl_begin(&callbacks))) {
		m->note = "libdw failed to start";
		return;
	}
	dwfl_report_begin(m->dwfl);
	/* ET_DYN at bias + p_vaddr, as the loader placed it; ET_EXEC where it
	 * says (its bias is 0). */
	Dwfl_Module *mod = dwfl_report_elf(m->dwfl, base_name(r->path), r->path, -1, r->bias, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!mod) {
		snprintf(m->note_buf, sizeof m->note_buf, "cannot open: %s", dwfl_errmsg(-1));
		m->note = m->note_buf;
		return;
	}
	Dwarf_Addr lo, hi;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	if (!m->hi) {
		m->lo = lo;
		m->hi = hi;
	}
	if (r->build_id) {
		const unsigned char *bits;
		GElf_Addr vaddr;
		int len = dwfl_module_build_id(mod, &bits, &vaddr);
		char hex[2 * 64 + 1] = "";
		for (int k = 0; k < len && k < 64; k++)
			snprintf(hex + 2 * k, 3, "%02x", bits[k]);
		if (len <= 0 || strcmp(hex, r->build_id)) {
			m->note = "build-id mismatch";
			return;
		}
	}
	m->mod = mod;
}

/* The module record covering addr, opened; NULL when there is none. */
static sym_module_t *module_at(wss_symbols_t *s, uint64_t addr)
{
	for (size_t k = 0; k < s->n; k++) {
		sym_module_t *m = &s->mods[k];
		if (!m->opened && !m->hi)
			module_open(m); /* the record gave no range: the file's */
		if (addr >= m->lo && addr < m->hi) {
			if (!m->opened)
				module_open(m);
			return m;
		}
	}
	return NULL;
}

static wss_frame_t *push(wss_frame_t **out, size_t *n, size_t *cap)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		wss_frame_t *f = realloc(*out, c * sizeof *f);
		if (!f)
			return NULL;
		*out = f;
		*cap = c;
	}
	wss_frame_t *f = &(*out)[(*n)++];
	memset(f, 0, sizeof *f);
	return f;
}

/* The function frames DWARF gives at a (the lookup address), innermost
 * first.  Returns the number pushed (0: no DWARF here), or -1 (ENOMEM). */
static int dwarf_frames(wss_symbols_t *s, sym_module_t *m, const wss_frame_t *proto, Dwarf_Addr a, wss_frame_t **out,
			size_t *n, size_t *cap)
{
	Dwarf_Addr bias;
	Dwarf_Die *cudie = dwfl_module_addrdie(m->mod, a, &bias);
	if (!cudie)
		return 0;
	Dwarf_Die *scopes = NULL;
	int nscopes = dwarf_getscopes(cudie, a - bias, &scopes);
	if (nscopes <= 0) {
		free(scopes);
		return 0;
	}
	/* dwarf_getscopes goes on into the abstract instance of an inlined
	 * function; the concrete chain is the innermost DIE's parents. */
	Dwarf_Die inner;
	Dwarf *dw = dwfl_module_getdwarf(m->mod, &bias);
	bool found = dw && dwarf_offdie(dw, dwarf_dieoffset(&scopes[0]), &inner);
	free(scopes);
	scopes = NULL;
	if (!found || (nscopes = dwarf_getscopes_die(&inner, &scopes)) <= 0) {
		free(scopes);
		return 0;
	}
	Dwarf_Files *files = NULL;
	if (dwarf_getsrcfiles(cudie, &files, NULL))
		files = NULL;
	const char *file = NULL;
	int line = 0;
	Dwfl_Line *dl = dwfl_module_getsrc(m->mod, a);
	if (dl)
		file = dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL);
	int pushed = 0;
	for (int i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram && tag != DW_TAG_entry_point)
			continue;
		wss_frame_t *f = push(out, n, cap);
		if (!f) {
			free(scopes);
			return -1;
		}
		*f = *proto;
		f->function = die_name(s, &scopes[i]);
		f->file = file;
		f->line = file ? line : 0;
		f->inlined = tag == DW_TAG_inlined_subroutine;
		pushed++;
		if (!f->inlined)
			break;
		/* The caller of an inlined call is where the call was written. */
		Dwarf_Attribute attr;
		Dwarf_Word val;
		file = NULL;
		line = 0;
		if (files && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &val) == 0)
			file = dwarf_filesrc(files, val, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &val) == 0)
			line = (int)val;
	}
	free(scopes);
	return pushed;
}

int wss_sym_frames(wss_symbols_t *s, uint64_t addr, bool return_address, wss_frame_t **out, size_t *n, size_t *cap)
{
	wss_frame_t proto = {.addr = addr};
	Dwarf_Addr a = return_address && addr ? addr - 1 : addr;
	sym_module_t *m = module_at(s, a);
	if (m) {
		proto.module = m->rec;
		proto.offset = addr - m->rec->bias;
		proto.note = m->note;
	}
	if (!m) {
		/* Code no file holds: a JIT's, named by its perf map. */
		const perf_sym_t *e = perf_at(s, a);
		if (e) {
			proto.function = e->name;
			proto.function_offset = addr - e->start;
			proto.has_function_offset = true;
		}
	}
	if (m && m->mod) {
		size_t first = *n;
		int r = dwarf_frames(s, m, &proto, a, out, n, cap);
		if (r < 0)
			return ENOMEM;
		/* Names DWARF lacks, or no DWARF at all: the symbol table. */
		GElf_Off off;
		GElf_Sym sym;
		const char *name = readable(s, dwfl_module_addrinfo(m->mod, a, &off, &sym, NULL, NULL, NULL));
		for (size_t k = first; k < *n; k++)
			if (!(*out)[k].function && !(*out)[k].inlined && name) {
				(*out)[k].function = name;
				(*out)[k].function_offset = addr - (a - off);
				(*out)[k].has_function_offset = true;
			}
		if (r > 0)
			return 0;
		if (name) {
			proto.function = name;
			proto.function_offset = addr - (a - off);
			proto.has_function_offset = true;
		}
		/* Line information without a function around it (assembly). */
		Dwfl_Line *dl = dwfl_module_getsrc(m->mod, a);
		if (dl)
			proto.file = dwfl_lineinfo(dl, NULL, &proto.line, NULL, NULL, NULL);
	}
	wss_frame_t *f = push(out, n, cap);
	if (!f)
		return ENOMEM;
	*f = proto;
	return 0;
}
