/* What `wss run` can tell before it runs a program: that the preload
 * cannot enter it.  A statically linked program has no dynamic loader to
 * read LD_PRELOAD; a set-user-ID or set-group-ID one run by another user
 * makes the loader ignore it.  Either runs untracked and writes no
 * profile, which wss run would otherwise end in silence. */
#ifndef WSS_CLI_RUNCHECK_H
#define WSS_CLI_RUNCHECK_H

/* One line on stderr when prog (a path, or a name looked up in PATH as
 * execvp does) is such a program; nothing otherwise, or when it cannot
 * be read (execvp will say). */
void wss_run_warn_unmeasurable(const char *prog);

#endif
