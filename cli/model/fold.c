/* Folding a runtime's frames (fold.h): the module's file name against the
 * names the runtimes' builds give their interpreter or VM. */
#include "config.h"
#include "cli/model/fold.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* s is DIGITS ('.' DIGITS)* then at most two ABI letters ("3.11", "3.13t",
 * "3.8d", "2.7"), or empty; returns where it stops. */
static const char *version_end(const char *s)
{
	while ((*s >= '0' && *s <= '9') || (*s == '.' && s[1] >= '0' && s[1] <= '9'))
		s++;
	for (int k = 0; k < 2 && *s >= 'a' && *s <= 'z'; k++)
		s++;
	return s;
}

/* "python", "python3", "python3.11", "python3.13t": CPython's executable
 * (a static build has the whole interpreter in it). */
static bool is_python_exe(const char *b) { return !strncmp(b, "python", 6) && !*version_end(b + 6); }

/* "libpython3.11.so", "libpython3.11.so.1.0", "libpython3.so": CPython
 * built with --enable-shared (pyenv's, Fedora's) has it there. */
static bool is_python_lib(const char *b)
{
	if (strncmp(b, "libpython", 9))
		return false;
	const char *s = version_end(b + 9);
	if (strncmp(s, ".so", 3))
		return false;
	s += 3;
	while (*s == '.' && s[1] >= '0' && s[1] <= '9') /* ".1.0" */
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	return !*s;
}

/* "node", "nodejs", and "libnode.so.108" (Debian's and Ubuntu's node keep
 * V8 in a shared library). */
static bool is_node(const char *b)
{
	return !strcmp(b, "node") || !strcmp(b, "nodejs") || !strncmp(b, "libnode.so", 10);
}

const char *wss_fold_runtime(const char *path)
{
	if (!path)
		return NULL;
	const char *slash = strrchr(path, '/');
	const char *b = slash ? slash + 1 : path;
	if (is_python_exe(b) || is_python_lib(b))
		return "python interpreter";
	if (!strcmp(b, "libjvm.so"))
		return "JVM";
	if (is_node(b))
		return "node/V8";
	return NULL;
}

/* The label of f's module, cached by the module record: a stack's frames
 * share a few modules, and each is classified once per call. */
static const char *frame_runtime(const wss_frame_t *f, const wss_module_t **last, const char **last_label)
{
	if (!f->module)
		return NULL;
	if (f->module != *last) {
		*last = f->module;
		*last_label = wss_fold_runtime(f->module->path);
	}
	return *last_label;
}

size_t wss_fold_run(const wss_frame_t *f, size_t n, const char **label)
{
	const wss_module_t *last = NULL;
	const char *last_label = NULL;
	const char *first = n ? frame_runtime(&f[0], &last, &last_label) : NULL;
	*label = first;
	if (!first)
		return 0;
	size_t k = 1;
	/* Labels are string literals: one runtime, one address. */
	while (k < n && frame_runtime(&f[k], &last, &last_label) == first)
		k++;
	if (k < WSS_FOLD_MIN) {
		*label = NULL;
		return 0;
	}
	return k;
}

const char *wss_fold_text(char *buf, size_t size, const char *label, size_t frames)
{
	snprintf(buf, size, "[%s: %zu frame%s]", label, frames, frames == 1 ? "" : "s");
	return buf;
}
