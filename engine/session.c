/* The session.  A session is the first process started under the preload
 * (its leader) and every process it forks or execs, recursively.  Only the leader prints a
 * stderr summary; each other process notes in the leader's profile, with one
 * O_APPEND write of one line (atomic against the leader's own records and
 * other notes), the profile it created or why it has none.  So the notes are
 * complete whatever the order in which processes end: a descendant that
 * outlives the leader appends its note after the leader's summary.  A forked
 * child knows the leader from memory; an exec'd program from WSS_LEADER, which
 * the exec wrappers add to the environment they hand the kernel and the
 * constructor removes from the program's before main (preload/exec.c). */
#include "config.h"
#include "engine/internal.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

static char session_env[PATH_MAX + 16]; /* "WSS_LEADER=<leader's profile>" */
static char leader_path[PATH_MAX];      /* the leader's profile, where notes go ("" none) */
static int leader_pid;
static bool leader_own; /* leader_path is this image's own profile */

/* Set once this process has forked or exec'd within the session: only then
 * can it have descendants to count at the end (the count reads its whole
 * profile back). */
static bool session_used;

const char *wss_session_leader_path(void) { return leader_path; }

void wss_session_used(bool used) { session_used = used; }

const char *wss_engine_session_env(void)
{
	if (!session_env[0] || !E.set.follow_exec)
		return NULL;
	session_used = true; /* in a vfork child too: the parent's memory */
	return session_env;
}

/* The session's leader is pid, with its profile at leader (absolute, for
 * descendants that change directory; "" for none). */
void wss_session_set(int pid, const char *leader, bool own)
{
	leader_pid = pid;
	leader_own = own;
	wss_fmt_t f;
	wss_fmt_init(&f, leader_path, sizeof leader_path);
	if (leader[0] && leader[0] != '/') {
		char cwd[PATH_MAX];
		long n = wss_sys2(SYS_getcwd, cwd, sizeof cwd);
		if (n > 0) {
			wss_fmt_str(&f, cwd);
			wss_fmt_ch(&f, '/');
		}
	}
	wss_fmt_str(&f, leader);
	if (f.overflow)
		f.len = 0;
	wss_fmt_cstr(&f);
	wss_fmt_init(&f, session_env, sizeof session_env);
	wss_fmt_str(&f, "WSS_LEADER=");
	wss_fmt_u64(&f, (uint64_t)leader_pid);
	wss_fmt_ch(&f, ':');
	wss_fmt_str(&f, leader_path);
	wss_fmt_cstr(&f);
}

/* Note this process in the leader's profile: {"type":"process","pid":P,
 * "ppid":Q,"profile":PATH|null[,"reason":R]}.  hook. */
void wss_session_note(const char *profile, const char *reason)
{
	if (!leader_path[0]) /* none, or this is the leader creating it */
		return;
	char line[PATH_MAX + 256];
	wss_fmt_t f;
	wss_fmt_init(&f, line, sizeof line);
	wss_fmt_str(&f, "{\"type\":\"process\",\"pid\":");
	wss_fmt_u64(&f, (uint64_t)E.pid);
	wss_fmt_str(&f, ",\"ppid\":");
	wss_fmt_u64(&f, (uint64_t)wss_sys0(SYS_getppid));
	wss_fmt_str(&f, ",\"profile\":");
	if (profile) {
		char abs[PATH_MAX + 1];
		wss_fmt_t a;
		wss_fmt_init(&a, abs, sizeof abs);
		if (profile[0] != '/') {
			long n = wss_sys2(SYS_getcwd, abs, sizeof abs - 1);
			a.len = n > 1 ? (size_t)n - 1 : 0; /* getcwd's length counts the NUL */
			wss_fmt_ch(&a, '/');
		}
		wss_fmt_str(&a, profile);
		wss_fmt_json_str(&f, wss_fmt_cstr(&a));
	} else {
		wss_fmt_str(&f, "null");
	}
	if (reason) {
		wss_fmt_str(&f, ",\"reason\":");
		wss_fmt_json_str(&f, reason);
	}
	wss_fmt_str(&f, "}\n");
	if (f.overflow)
		return;
	int fd = wss_sys_openat(AT_FDCWD, leader_path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0);
	if (fd < 0)
		return;
	struct stat st;
	if (!wss_sys_failed(wss_sys2(SYS_fstat, fd, &st)) && S_ISREG(st.st_mode))
		wss_write_all(fd, f.buf, f.len);
	wss_sys_close(fd);
}

/* The leader, at its end: how many other processes noted a profile in its
 * own, and how many had none; the directory of the first such profile in
 * dir.  Reads the profile back (descendants write into it, not into our
 * memory).  Returns false if it cannot be read. */
/* Is this note line one of the leader's own exec'd images ("pid" the
 * leader's)? */
static bool own_note(const char *line)
{
	const char *p = strstr(line, "\"pid\":");
	if (!p)
		return false;
	long v = 0;
	for (p += 6; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return v == leader_pid;
}

static bool session_count(uint64_t *with, uint64_t *without, char *dir, size_t dirlen)
{
	static const char tag[] = "{\"type\":\"process\",";
	static const char prof[] = "\"profile\":\"";
	static const char exec_first[] = "\"reason\":\"exec before its first sample\"";
	*with = *without = 0;
	dir[0] = '\0';
	int fd = wss_sys_openat(AT_FDCWD, leader_path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return false;
	static char buf[1 << 16];
	char line[PATH_MAX + 256];
	size_t ll = 0;
	bool skip = false; /* inside a line too long to be a note */
	long n;
	while ((n = wss_sys_read(fd, buf, sizeof buf)) > 0) {
		for (long i = 0; i < n; i++) {
			char c = buf[i];
			if (c != '\n') {
				if (ll < sizeof line - 1)
					line[ll++] = c;
				else
					skip = true;
				continue;
			}
			line[ll] = '\0';
			/* The leader's own exec'd images note themselves too
			 * (the profile to read next): not "more" profiles. */
			if (!skip && !strncmp(line, tag, sizeof tag - 1) && !own_note(line)) {
				const char *p = strstr(line, prof);
				if (!p) {
					/* A forked child that exec'd: the program
					 * it exec'd notes itself, with its profile
					 * or why it has none. */
					if (!strstr(line, exec_first))
						(*without)++;
				} else {
					p += sizeof prof - 1;
					const char *q = strchr(p, '"'), *slash = NULL;
					for (const char *x = p; q && x < q; x++)
						if (*x == '/')
							slash = x;
					size_t dl = slash ? (size_t)(slash - p) : 0;
					/* The directory, when every profile is in it. */
					if ((*with)++ == 0) {
						if (dl && dl < dirlen && !memchr(p, '\\', dl)) {
							memcpy(dir, p, dl);
							dir[dl] = '\0';
						}
					} else if (dir[0] && (dl != strlen(dir) || memcmp(dir, p, dl))) {
						dir[0] = '\0';
					}
				}
			}
			ll = 0;
			skip = false;
		}
	}
	wss_sys_close(fd);
	return n == 0;
}


bool wss_session_output_base(const char *pattern, char *dir, size_t n)
{
	if (!leader_path[0] || leader_own || pattern[0] == '/')
		return false;
	/* leader_path is the leader's directory, "/", and its own expansion
	 * of the pattern: the pattern's directory part, which has no %
	 * (else the expansion's could differ), then the file name. */
	const char *ls = strrchr(leader_path, '/'), *ps = strrchr(pattern, '/');
	size_t dl = ls ? (size_t)(ls - leader_path) : 0, pl = ps ? (size_t)(ps - pattern) : 0;
	if (!ls || memchr(pattern, '%', pl))
		return false;
	if (pl) {
		if (dl < pl + 1 || leader_path[dl - pl - 1] != '/' || memcmp(leader_path + dl - pl, pattern, pl))
			return false;
		dl -= pl + 1;
	}
	if (dl + 1 > n)
		return false;
	memcpy(dir, leader_path, dl);
	dir[dl] = '\0';
	return true;
}

bool wss_session_exec_image(void) { return leader_path[0] && !leader_own && leader_pid == E.pid; }

void wss_session_describe(wss_fmt_t *f)
{
	uint64_t with, without;
	char dir[PATH_MAX];
	if (!session_used || !session_count(&with, &without, dir, sizeof dir) || (!with && !without))
		return;
	if (!leader_own) { /* an exec'd image of the leader: the list is the first image's */
		wss_fmt_str(f, "; ");
		wss_fmt_str(f, leader_path);
		wss_fmt_str(f, " lists ");
	} else {
		wss_fmt_str(f, ", which lists ");
	}
	if (with) {
		wss_fmt_u64(f, with);
		wss_fmt_str(f, with == 1 ? " more profile" : " more profiles");
		wss_fmt_str(f, " from this session");
		if (dir[0]) {
			wss_fmt_str(f, " (in ");
			wss_fmt_str(f, dir);
			wss_fmt_str(f, ")");
		}
		if (without)
			wss_fmt_str(f, " and ");
	}
	if (without) {
		wss_fmt_u64(f, without);
		wss_fmt_str(f, without == 1 ? " process that wrote none" : " processes that wrote none");
	}
}
