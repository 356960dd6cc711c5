/* exec and spawn: the kernel reads the path, the argv and envp arrays and
 * every string in them, which may sit on armed pages (a program building
 * argv in its heap), and fails with EFAULT.  The wrappers open them just
 * before the call and retry once if a tick re-armed one in between (an
 * exec that fails with EFAULT has done nothing, so the retry is safe).  The
 * l-variants build their argv and go through these. */
#include "config.h"
#include "preload/preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sys.h"
#include "config/config.h"
#include "engine/engine.h"

#define EXEC_FUNCS(X) X(execve) X(execv) X(execvp) X(execvpe) X(fexecve) X(posix_spawn) X(posix_spawnp) X(system)
EXEC_FUNCS(WSS_REAL_DECLARE)

void wss_exec_init(void) { EXEC_FUNCS(WSS_REAL_RESOLVE) }

/* LD_PRELOAD's value without libwss.so entries (separated by ':' or ' ', as
 * the loader reads them), in a page of our own: the original string may be
 * read-only (a putenv'd literal).  NULL when nothing else is left, or out
 * of memory (then the entry is dropped: better no other preloads than a
 * measured child the user asked not to measure). */
static char *preload_without_us(const char *list)
{
	size_t len = strlen(list);
	char *out = wss_sys_alloc(len + sizeof "LD_PRELOAD=");
	if (!out)
		return NULL;
	char *o = out + strlen(strcpy(out, "LD_PRELOAD="));
	const char *p = list;
	while (*p) {
		while (*p == ':' || *p == ' ')
			p++;
		const char *s = p;
		while (*p && *p != ':' && *p != ' ')
			p++;
		size_t n = (size_t)(p - s);
		const char *base = n ? memrchr(s, '/', n) : NULL;
		base = base ? base + 1 : s;
		if (!n || ((size_t)(p - base) == 9 && !memcmp(base, "libwss.so", 9)))
			continue;
		if (o[-1] != '=')
			*o++ = ':';
		memcpy(o, s, n);
		o += n;
	}
	*o = '\0';
	if (o[-1] == '=') {
		wss_sys_free(out, len + sizeof "LD_PRELOAD=");
		return NULL;
	}
	return out;
}

void wss_exec_unfollow(void)
{
	char **w = environ;
	for (char **r = environ; r && *r; r++) {
		if (wss_config_is_ours(*r))
			continue;
		if (!strncmp(*r, "LD_PRELOAD=", 11)) {
			char *v = preload_without_us(*r + 11);
			if (v)
				*w++ = v;
			continue;
		}
		*w++ = *r;
	}
	if (w)
		*w = NULL;
}

/* ---- the session: WSS_LEADER -----------------------------------------------
 * A program exec'd within a session learns the session's leader from
 * WSS_LEADER (engine/session.c).  The variable is added only to the
 * environment handed to the kernel here, never to the program's own, and
 * the exec'd program's constructor takes it out of its environ before main
 * (wss_exec_take_leader), so the program sees the environment it would see
 * without us.  (/proc/PID/environ, the kernel's copy, still shows it.)
 * system() builds its environment inside the C library: its shell starts a
 * session of its own. */

static char leader_value[PATH_MAX];

const char *wss_exec_take_leader(void)
{
	const char *v = NULL;
	char **w = environ;
	for (char **r = environ; r && *r; r++) {
		if (!strncmp(*r, "WSS_LEADER=", 11)) {
			if (!v && strlen(*r + 11) < sizeof leader_value)
				v = strcpy(leader_value, *r + 11);
			continue;
		}
		*w++ = *r;
	}
	if (w)
		*w = NULL;
	return v;
}

#define ENV_STACK 512

/* envp with the session's WSS_LEADER instead of any the caller passed: in
 * buf (ENV_STACK pointers) or, for a larger environment, in memory of our
 * own (*mapped bytes, for session_envp_free).  envp itself when no variable
 * is to be passed (session.follow_exec = false) or out of memory. */
static char **session_envp(char *const *envp, char **buf, size_t *mapped)
{
	const char *var = wss_engine_session_env();
	*mapped = 0;
	if (!var)
		return (char **)envp;
	size_t n = 0;
	while (envp && envp[n])
		n++;
	char **v = buf;
	if (n + 2 > ENV_STACK) {
		*mapped = (n + 2) * sizeof *v;
		v = wss_sys_alloc(*mapped);
		if (!v) {
			*mapped = 0;
			return (char **)envp;
		}
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(envp[i], "WSS_LEADER=", 11))
			v[k++] = envp[i];
	v[k++] = (char *)var;
	v[k] = NULL;
	return v;
}

static void session_envp_free(char **v, size_t mapped)
{
	if (mapped)
		wss_sys_free(v, mapped);
}

static void open_strv(char *const *v)
{
	for (size_t i = 0; v; i++) {
		wss_touch_range(&v[i], sizeof v[i]);
		if (!v[i])
			break;
		wss_open_str(v[i]);
	}
}

#define OPEN_ALL(path, argv, envp) \
	do { \
		wss_open_str(path); \
		open_strv(argv); \
		open_strv(envp); \
	} while (0)

/* exec*: -1 with errno on failure.  The profile of the image being
 * replaced is completed first (a vfork child's call does nothing: the
 * engine belongs to its parent). */
#define EXEC(call, path, argv, envp) \
	do { \
		wss_engine_exec(); \
		char *envbuf_[ENV_STACK]; \
		size_t envmap_; \
		char **env_ = session_envp(envp, envbuf_, &envmap_); \
		OPEN_ALL(path, argv, envp); \
		bool blocked_ = wss_signals_exec_prepare(); \
		int r_ = call; \
		/* A tick re-armed a page between the opening and the call \
		 * (a vfork child: the parent's engine ticks on); each try \
		 * has a whole interval, so few are needed. */ \
		for (int try_ = 0; r_ < 0 && errno == EFAULT && try_ < 100; try_++) { \
			OPEN_ALL(path, argv, envp); \
			r_ = call; \
		} \
		int e_ = errno; \
		session_envp_free(env_, envmap_); \
		wss_signals_exec_failed(blocked_); \
		errno = e_; \
		return r_; \
	} while (0)

WSS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	WSS_REAL(execve);
	EXEC(real_execve(path, argv, env_), path, argv, envp);
}

WSS_EXPORT int execv(const char *path, char *const argv[])
{
	WSS_REAL(execve);
	EXEC(real_execve(path, argv, env_), path, argv, environ);
}

WSS_EXPORT int execvp(const char *file, char *const argv[])
{
	WSS_REAL(execvpe);
	EXEC(real_execvpe(file, argv, env_), file, argv, environ);
}

WSS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	WSS_REAL(execvpe);
	EXEC(real_execvpe(file, argv, env_), file, argv, envp);
}

WSS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	WSS_REAL(fexecve);
	EXEC(real_fexecve(fd, argv, env_), NULL, argv, envp);
}

/* The l-variants: collect the arguments, then exec through the v-variants
 * above.  Returns -1 with E2BIG past 4096 arguments. */
#define MAX_LARGS 4096
#define COLLECT(arg0, ap, argv, envp_out) \
	do { \
		argv[0] = (char *)(arg0); \
		size_t n_ = 1; \
		while (argv[n_ - 1]) { \
			if (n_ == MAX_LARGS) { \
				va_end(ap); \
				errno = E2BIG; \
				return -1; \
			} \
			argv[n_++] = va_arg(ap, char *); \
		} \
		envp_out; \
		va_end(ap); \
	} while (0)

WSS_EXPORT int execl(const char *path, const char *arg0, ...)
{
	char *argv[MAX_LARGS];
	va_list ap;
	va_start(ap, arg0);
	COLLECT(arg0, ap, argv, (void)0);
	return execv(path, argv);
}

WSS_EXPORT int execlp(const char *file, const char *arg0, ...)
{
	char *argv[MAX_LARGS];
	va_list ap;
	va_start(ap, arg0);
	COLLECT(arg0, ap, argv, (void)0);
	return execvp(file, argv);
}

WSS_EXPORT int execle(const char *path, const char *arg0, ...)
{
	char *argv[MAX_LARGS];
	char **envp;
	va_list ap;
	va_start(ap, arg0);
	COLLECT(arg0, ap, argv, envp = va_arg(ap, char **));
	return execve(path, argv, envp);
}

/* The size of a string, its NUL included (0 for NULL). */
static size_t str_size(const char *s) { return s ? strlen(s) + 1 : 0; }

/* The size of a NULL-terminated pointer array, the NULL included. */
static size_t strv_size(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return v ? (n + 1) * sizeof *v : 0;
}

/* posix_spawn*: an error number.  The C library's spawn blocks every
 * signal, and its child resets every handler, ours too, yet both read or
 * write some of our caller's memory themselves: a touch of an armed page
 * there kills the process.  So what they touch is pinned for the call:
 * *pid (stored by the parent once the child has exec'd), the path
 * (posix_spawnp's child searches it with strchr and memcpy), the argv array
 * (copied by the child to run a script through the shell), and the environ
 * variable and array (getenv("PATH") in posix_spawnp's child; a program that
 * uses environ has the variable copied into its .bss, which is tracked), and
 * the file-action and attribute objects, whole, by their public sizes (the
 * actions array and the paths they name are allocated by the C library
 * itself, in the untracked arena: malloc.c).  The strings the kernel reads
 * are opened and the call retried on EFAULT, as for exec; environment
 * strings in tracked memory are not pinned. */
#define SPAWN_PINS 7
#define SPAWN(call, pid, path, fa, at, argv, envp) \
	do { \
		int pins_[SPAWN_PINS] = {wss_pin_or_open(pid, sizeof *(pid)), wss_pin_or_open(path, str_size(path)), \
					 wss_pin_or_open(argv, strv_size(argv)), wss_pin_or_open(&environ, sizeof environ), \
					 wss_pin_or_open(environ, strv_size(environ)), wss_pin_or_open(fa, sizeof *(fa)), \
					 wss_pin_or_open(at, sizeof *(at))}; \
		char *envbuf_[ENV_STACK]; \
		size_t envmap_; \
		char **env_ = session_envp(envp, envbuf_, &envmap_); \
		OPEN_ALL(path, argv, envp); \
		int r_ = call; \
		if (r_ == EFAULT) { \
			OPEN_ALL(path, argv, envp); \
			r_ = call; \
		} \
		for (int i_ = 0; i_ < SPAWN_PINS; i_++) \
			wss_engine_unpin(pins_[i_]); \
		session_envp_free(env_, envmap_); \
		return r_; \
	} while (0)

WSS_EXPORT int posix_spawn(pid_t *restrict pid, const char *restrict path, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *restrict at, char *const argv[restrict], char *const envp[restrict])
{
	WSS_REAL(posix_spawn);
	SPAWN(real_posix_spawn(pid, path, fa, at, argv, env_), pid, path, fa, at, argv, envp);
}

WSS_EXPORT int posix_spawnp(pid_t *restrict pid, const char *restrict file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *restrict at, char *const argv[restrict], char *const envp[restrict])
{
	WSS_REAL(posix_spawnp);
	SPAWN(real_posix_spawnp(pid, file, fa, at, argv, env_), pid, file, fa, at, argv, envp);
}

WSS_EXPORT int system(const char *cmd)
{
	WSS_REAL(system);
	wss_open_str(cmd);
	open_strv(environ);
	return real_system(cmd);
}
