/* libwss-attach.so: the library `wss attach` loads into a running process
 * (cli/attach/attach.c, by ptrace: cli/attach/inject.c).  It exports no function of the
 * C library (a library loaded into a running process interposes nothing:
 * calls already bound keep going where they went), only its two entry
 * points, which the injected thread calls:
 *
 *   wss_attach_start(settings)  sets up the engine with the uffd-wp backend
 *                               over the process's existing memory and
 *                               starts the engine thread; returns "ok TID
 *                               PATH" (the engine thread, the profile) or
 *                               "error MESSAGE";
 *   wss_attach_stop(why)        ends it: final sample and summary, every
 *                               range unregistered, the engine thread
 *                               joined, our descriptors closed and our
 *                               memory given back; then wss attach
 *                               dlcloses us.
 *
 * settings is "NAME=VALUE" lines, the session's environment variables as
 * wss attach built them (WSS_CONFIG, WSS_SESSION_*, WSS_TRACK_*, ...),
 * read by the same config code as the preloaded library, plus
 * WSS_ATTACH_FIFO (a FIFO only wss attach holds open for writing) and
 * WSS_ATTACH_CONTROLLER (its pid): if wss attach goes away without
 * detaching, the engine ends the profile and stops by itself.
 *
 * uffd-wp sees writes only, and the kernel resolves them by itself: no
 * signal handler is installed, no system call of the program can fail on
 * a protected page, and nothing of the program's own state (signal
 * handlers, allocator) changes.  Reads are not seen. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "common/fmt.h"
#include "common/sys.h"
#include "config/config.h"
#include "engine/engine.h"
#include "preload/settings.h"

#define WSS_ATTACH_EXPORT __attribute__((visibility("default")))
#define ARGV_MAX 256
#define ENV_MAX 128

static char result[8192];
static char cmdline[16384], *argv_buf[ARGV_MAX + 1];
static char settings_buf[16384], *envp_buf[ENV_MAX + 1];
static wss_config_t cfg;
static wss_engine_settings_t set;
static bool started;

WSS_ATTACH_EXPORT const char *wss_attach_start(const char *settings);
WSS_ATTACH_EXPORT int wss_attach_stop(const char *why);

static const char *fail(const char *a, const char *b)
{
	wss_fmt_t f;
	wss_fmt_init(&f, result, sizeof result);
	wss_fmt_str(&f, "error ");
	wss_fmt_str(&f, a);
	wss_fmt_str(&f, b ? b : "");
	wss_fmt_cstr(&f);
	return result;
}

/* The process's arguments, for the header and the profile name's %n. */
static int read_argv(void)
{
	int fd = wss_sys_openat(AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC, 0);
	long n = fd >= 0 ? wss_sys_read(fd, cmdline, sizeof cmdline - 1) : 0;
	if (fd >= 0)
		wss_sys_close(fd);
	if (n < 0)
		n = 0;
	cmdline[n] = '\0';
	int argc = 0;
	for (long i = 0; i < n && argc < ARGV_MAX; i += (long)strlen(cmdline + i) + 1)
		argv_buf[argc++] = cmdline + i;
	/* A process that rewrote its title (redis, nginx, postgres) pads
	 * the old arguments' space with NULs: no arguments, those. */
	while (argc > 1 && !*argv_buf[argc - 1])
		argc--;
	argv_buf[argc] = NULL;
	return argc;
}

static int split_settings(const char *s)
{
	size_t len = strlen(s);
	if (len >= sizeof settings_buf)
		return E2BIG;
	memcpy(settings_buf, s, len + 1);
	int n = 0;
	for (char *p = settings_buf; *p && n < ENV_MAX;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (*p)
			envp_buf[n++] = p;
		if (!nl)
			break;
		p = nl + 1;
	}
	envp_buf[n] = NULL;
	return 0;
}

WSS_ATTACH_EXPORT const char *wss_attach_start(const char *settings)
{
	if (started) {
		wss_fmt_t f;
		wss_fmt_init(&f, result, sizeof result);
		wss_fmt_str(&f, "busy a wss attach that was killed left its library in this process (idle): it can be "
				"attached again by reference bits only");
		wss_fmt_cstr(&f);
		return result;
	}
	char err[1024];
	if (wss_sys_alloc_attached())
		return fail("out of memory", NULL);
	if (split_settings(settings))
		return fail("settings too long", NULL);
	if (wss_config_build(&cfg, wss_config_getenv(envp_buf, "WSS_CONFIG"), envp_buf, &wss_settings_parse_alloc, err,
			     sizeof err) ||
	    wss_config_validate(&cfg, err, sizeof err)) {
		wss_sys_release_all();
		return fail(err, NULL);
	}
	if (wss_engine_settings(&cfg, &set)) {
		wss_sys_release_all();
		return fail("out of memory", NULL);
	}
	/* The stderr lines are wss attach's, not the program's. */
	set.summary = false;
	set.follow_fork = set.follow_exec = false;
	set.code = false;
	int argc = read_argv();
	const char *ctl = wss_config_getenv(envp_buf, "WSS_ATTACH_CONTROLLER");
	int controller = 0;
	while (ctl && *ctl >= '0' && *ctl <= '9')
		controller = controller * 10 + (*ctl++ - '0');
	wss_engine_start_t s = {
		.argc = argc,
		.argv = argv_buf,
		.set = &set,
		.attach_reason = "wss attach (injected): userfaultfd asynchronous write protection over the process's "
				 "existing memory, which /proc/self/maps lists at every tick; writes only",
	};
	if (wss_engine_init(&s, err, sizeof err)) {
		wss_sys_release_all();
		return fail(err, NULL);
	}
	started = true;
	wss_attach_track_t w = {
		.heap = cfg.track_heap,
		.anon_mmap = cfg.track_anon_mmap,
		.data_segments = cfg.track_data_segments,
		.library_data = cfg.track_library_data,
		.shared = cfg.track_shared,
		.file_mmap = cfg.track_file_mmap,
		.stacks = cfg.track_stacks,
	};
	wss_engine_attach_begin(&w, wss_config_getenv(envp_buf, "WSS_ATTACH_FIFO"), controller);
	wss_engine_on_tick(wss_engine_attach_tick);
	const char *d = wss_config_getenv(envp_buf, "WSS_ATTACH_DURATION_NS");
	uint64_t duration = 0;
	while (d && *d >= '0' && *d <= '9')
		duration = duration * 10 + (uint64_t)(*d++ - '0');
	wss_engine_attach_duration(duration);
	int r = wss_engine_attach_scan();
	if (r) {
		wss_engine_detach("error");
		return fail("/proc/self/maps: ", strerror(r));
	}
	r = wss_engine_start();
	if (r) {
		wss_engine_detach("error");
		return fail("cannot start the engine thread: ", strerror(r));
	}
	wss_fmt_t f;
	wss_fmt_init(&f, result, sizeof result);
	wss_fmt_str(&f, "ok ");
	wss_fmt_u64(&f, (uint64_t)wss_engine_thread_tid());
	wss_fmt_ch(&f, ' ');
	wss_fmt_str(&f, wss_engine_profile_path());
	wss_fmt_cstr(&f);
	return result;
}

WSS_ATTACH_EXPORT int wss_attach_stop(const char *why)
{
	static char end[128]; /* why lives in the caller's scratch memory */
	if (!started)
		return ENOENT;
	wss_fmt_t f;
	wss_fmt_init(&f, end, sizeof end);
	wss_fmt_str(&f, why && *why ? why : "detached");
	wss_fmt_cstr(&f);
	wss_engine_detach(end);
	return 0;
}

/* The process exits (exit, or the end of main) while attached: the
 * profile ends with its summary, as under wss run. */
__attribute__((destructor)) static void wss_attach_fini(void)
{
	if (started)
		wss_engine_finish();
}
