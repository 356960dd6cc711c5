/* Folding a language runtime's frames: in a Python, Java or node program
 * most of a stack is the interpreter's or the VM's own functions
 * (_PyEval_EvalFrameDefault, libjvm.so's, V8's), which say how the runtime
 * runs code, not which code ran.  wss report shows each run of them as one
 * frame, "[python interpreter: 14 frames]"; the frames that are the
 * program's (a JIT's, named from its perf map), a library's (libc's
 * memset, an extension module) or the allocator's stay as they are.  What
 * is folded is decided by the module a frame is in, and nothing else, so
 * every front end folds alike (docs/report.md, "Interpreter frames"). */
#ifndef WSS_CLI_FOLD_H
#define WSS_CLI_FOLD_H

#include <stddef.h>

#include "cli/model/symbols.h"

/* The label of the runtime whose interpreter or VM the object file at path
 * is: "python interpreter" (python3.X, libpython3.X.so), "JVM"
 * (libjvm.so), "node/V8" (node, nodejs, libnode.so); NULL for any other
 * file, and for NULL.  Only the file's name counts, not its directory. */
const char *wss_fold_runtime(const char *path);

/* The fewest frames folded: a lone interpreter frame is shown as itself,
 * which takes no more room than a label and says more (the bytecode
 * handler that touched a page, the executable's _start). */
#define WSS_FOLD_MIN 2

/* The run of frames from f[0] that one runtime's interpreter or VM holds:
 * how many of f[0 .. n) in a row are in a module of the same label (*label
 * gets it), or 0 (*label NULL) when f[0] is in none (a frame without a
 * module, a JIT's code, is never in one) or the run is shorter than
 * WSS_FOLD_MIN. */
size_t wss_fold_run(const wss_frame_t *f, size_t n, const char **label);

/* "[LABEL: N frames]" ("1 frame") into buf; returns buf. */
const char *wss_fold_text(char *buf, size_t size, const char *label, size_t frames);

#endif
