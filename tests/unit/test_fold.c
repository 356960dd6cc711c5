/* Folding a runtime's frames (cli/model/fold.c): which object files are an
 * interpreter's or a VM's, by name alone, table-driven; then the runs over
 * stacks made up of such modules, libraries and JIT code (no module):
 * their lengths and labels, the shortest run folded, and the label's text. */
#include "config.h"
#include "cli/model/fold.h"

#include <stdio.h>
#include <string.h>

#include "tests/tap/tap.h"

static const struct {
	const char *path, *label; /* NULL: not folded */
} names[] = {
	{"/usr/bin/python3.11", "python interpreter"},
	{"/root/.pyenv/versions/3.11.7/bin/python3.11", "python interpreter"},
	{"/usr/bin/python3", "python interpreter"},
	{"/usr/local/bin/python3.13t", "python interpreter"},
	{"/usr/bin/python2.7", "python interpreter"},
	{"/root/.pyenv/versions/3.11.7/lib/libpython3.11.so.1.0", "python interpreter"},
	{"/usr/lib64/libpython3.12d.so", "python interpreter"},
	{"libpython3.so", "python interpreter"},
	{"/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so", "JVM"},
	{"/usr/bin/node", "node/V8"},
	{"/usr/bin/nodejs", "node/V8"},
	{"/usr/lib/x86_64-linux-gnu/libnode.so.108", "node/V8"},
	/* A library's or the program's own code stays. */
	{"/lib/x86_64-linux-gnu/libc.so.6", NULL},
	{"/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so", NULL},
	{"/usr/lib/python3/dist-packages/numpy/core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", NULL},
	{"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", NULL},
	{"/usr/lib/jvm/java-17-openjdk-amd64/lib/libjava.so", NULL},
	{"/usr/lib/jvm/java-17-openjdk-amd64/lib/libjli.so", NULL},
	{"/usr/lib/jvm/java-17-openjdk-amd64/bin/java", NULL},
	{"/home/u/app/node_modules/sharp/build/Release/sharp-linux-x64.node", NULL},
	{"/home/u/bin/nodeapp", NULL},
	{"/home/u/bin/python-config", NULL},
	{"/home/u/bin/pythonista", NULL},
	{"/home/u/lib/libpython3.11.so.txt.gz", NULL},
	{"/usr/lib/libpythonize.so", NULL},
	{"/tmp/python3.11/libuser.so", NULL}, /* the directory does not count */
	{"", NULL},
	{NULL, NULL},
};

enum { PY, LIBPY, JVM, NODE, LIBC, EXT, NMODS };
static const wss_module_t mods[NMODS] = {
	[PY] = {1, "/usr/bin/python3.11", 0, 0, 0, NULL},
	[LIBPY] = {2, "/usr/lib/libpython3.11.so.1.0", 0, 0, 0, NULL},
	[JVM] = {3, "/opt/jdk/lib/server/libjvm.so", 0, 0, 0, NULL},
	[NODE] = {4, "/usr/bin/node", 0, 0, 0, NULL},
	[LIBC] = {5, "/lib/libc.so.6", 0, 0, 0, NULL},
	[EXT] = {6, "/usr/lib/_json.cpython-311-x86_64-linux-gnu.so", 0, 0, 0, NULL},
};
#define JIT (-1) /* a frame no module holds */

/* "R3 . R2 . ." for stack s: from each frame, the run wss_fold_run
 * gives and its label's first letter, "." for none, skipping a run. */
static const char *runs(const int *s, size_t n, char *buf, size_t size)
{
	wss_frame_t f[16];
	memset(f, 0, sizeof f);
	for (size_t k = 0; k < n; k++)
		f[k].module = s[k] == JIT ? NULL : &mods[s[k]];
	buf[0] = 0;
	for (size_t k = 0; k < n;) {
		const char *label = "unset";
		size_t r = wss_fold_run(&f[k], n - k, &label);
		size_t len = strlen(buf);
		if (r)
			snprintf(buf + len, size - len, "%s%c%zu", len ? " " : "", label ? label[0] : '?', r);
		else
			snprintf(buf + len, size - len, "%s%s", len ? " " : "", label ? "!" : ".");
		k += r ? r : 1;
	}
	return buf;
}

int main(void)
{
	size_t nnames = sizeof names / sizeof *names;
	plan((int)nnames + 11);
	for (size_t k = 0; k < nnames; k++) {
		const char *got = wss_fold_runtime(names[k].path);
		ok(got == names[k].label || (got && names[k].label && !strcmp(got, names[k].label)), "%s: %s",
		   names[k].path ? names[k].path : "(NULL)", names[k].label ? names[k].label : "not folded");
	}

	char buf[128];
	/* A Python peak: libc's memset, the interpreter (executable and
	 * library alike), libc's start, the executable's _start alone. */
	static const int py[] = {LIBC, LIBPY, LIBPY, PY, LIBPY, LIBC, LIBC, PY};
	is_str(runs(py, 8, buf, sizeof buf), ". p4 . . .",
	       "python: one run of 4 across the executable and libpython, _start alone");
	/* An extension module between interpreter frames splits the run. */
	static const int ext[] = {EXT, LIBPY, LIBPY, EXT, LIBPY, LIBPY, LIBPY};
	is_str(runs(ext, 7, buf, sizeof buf), ". p2 . p3",
	       "python: an extension module's frame stays and splits the runs");
	/* JIT code (no module) between V8's frames stays. */
	static const int js[] = {JIT, NODE, NODE, NODE, JIT, NODE, NODE, LIBC};
	is_str(runs(js, 8, buf, sizeof buf), ". n3 . n2 .", "node: JIT frames stay, V8's around them fold");
	static const int jvm[] = {JVM, JVM, JVM, JVM, JVM, JVM, JVM, JVM, JVM, LIBC, LIBC};
	is_str(runs(jvm, 11, buf, sizeof buf), "J9 . .", "JVM: a compiler thread's 9 libjvm.so frames, then libc's");
	/* Two runtimes in one stack (node calling into libjvm): two runs. */
	static const int two[] = {JVM, JVM, NODE, NODE, NODE};
	is_str(runs(two, 5, buf, sizeof buf), "J2 n3", "two runtimes back to back: two runs");
	static const int lone[] = {NODE, LIBC, PY, JIT};
	is_str(runs(lone, 4, buf, sizeof buf), ". . . .", "a lone interpreter frame is not folded (WSS_FOLD_MIN)");
	static const int all[] = {LIBPY, LIBPY, LIBPY};
	is_str(runs(all, 3, buf, sizeof buf), "p3", "a stack that is all interpreter: one run");
	is_str(runs(all, 0, buf, sizeof buf), "", "no frames: no run");

	is_str(wss_fold_text(buf, sizeof buf, "python interpreter", 14), "[python interpreter: 14 frames]",
	       "the label, plural");
	is_str(wss_fold_text(buf, sizeof buf, "JVM", 1), "[JVM: 1 frame]", "the label, singular");
	is_str(wss_fold_text(buf, 8, "node/V8", 6), "[node/V", "the label cut to its buffer");
	return done_testing();
}
