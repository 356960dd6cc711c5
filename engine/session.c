/* The session.  A session is the first process started under the preload
 * (its leader) and every process it forks or execs, recursively.  Only the leader prints a
 * stderr summary; each other process notes in the leader's profile, with one
 * O_APPEND write of one line (atomic against the leader's own records and
 * other notes), the profile it created or why it has none.  So the notes are
 * complete whatever the order in which processes end: a descendant that
 * outlives the leader appends its note after the leader's summary.  A forked
 * child knows the leader from memory; an exec'd program from WSS_LEADER, which
 * the exec wrappers add to the environment they hand the kernel and the
 * constructor removes from the program's before main (preload/exec.c).
 * Every profile but the leader's first goes into the session directory
 * beside it, so a script or a build leaves one file and one directory in
 * the user's, wherever its processes cd. */
#include "config.h"
#include "engine/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "common/pattern.h"

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

/* A measured figure and, when sampled, its interval: ,"data_K":N
 * [,"data_K_ci":[LO,HI]]. */
static void note_figure(wss_fmt_t *f, const char *k, uint64_t v, wss_profile_ci_t ci, bool sampled)
{
	wss_fmt_str(f, ",\"data_");
	wss_fmt_str(f, k);
	wss_fmt_str(f, "\":");
	wss_fmt_u64(f, v);
	if (!sampled)
		return;
	wss_fmt_str(f, ",\"data_");
	wss_fmt_str(f, k);
	wss_fmt_str(f, "_ci\":");
	wss_profile_ci(f, ci);
}

/* Note this process in the leader's profile: {"type":"process","pid":P,
 * "ppid":Q,"profile":PATH|null[,"reason":R][,"exe":X,"data_peak":N,
 * "data_total":N,...]}.  hook. */
void wss_session_note(const char *profile, const char *reason, const wss_profile_summary_t *sum)
{
	if (!leader_path[0]) /* none, or this is the leader creating it */
		return;
	char line[2 * PATH_MAX + 512];
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
		/* Relative to the leader's profile's directory when within it
		 * (the session directory): the two move together. */
		const char *ls = strrchr(leader_path, '/');
		size_t dl = ls ? (size_t)(ls - leader_path) + 1 : 0;
		const char *p = wss_fmt_cstr(&a);
		wss_fmt_json_str(&f, dl && !strncmp(p, leader_path, dl) ? p + dl : p);
	} else {
		wss_fmt_str(&f, "null");
	}
	if (reason) {
		wss_fmt_str(&f, ",\"reason\":");
		wss_fmt_json_str(&f, reason);
	}
	if (sum) {
		char exe[PATH_MAX];
		wss_readlink_exe(exe, sizeof exe);
		wss_fmt_str(&f, ",\"exe\":");
		wss_fmt_json_str(&f, exe);
		bool sampled = sum->rate_max > 1;
		note_figure(&f, "peak", sum->data.peak, sum->data.peak_ci, sampled);
		note_figure(&f, "total", sum->data.total, sum->data.total_ci, sampled);
		wss_fmt_str(&f, ",\"duration_ns\":");
		wss_fmt_u64(&f, sum->duration_ns);
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

typedef struct session_counts {
	uint64_t with, without;
	uint64_t measured;    /* of without: measured in their note (wss run's table lists them) */
	uint64_t refused;     /* of without: the session directory refused them */
	char dir[PATH_MAX];   /* where every profile is, "" if not one place */
	char why[128];        /* the first refusal's reason */
} session_counts_t;

static const char refused_reason[] = "the session directory ";

/* The leader, at its end: how many other processes noted a profile in its
 * own, and how many had none (and of those, how many for want of the
 * session directory, and why); the directory of the profiles when they
 * share one.  Reads the profile back (descendants write into it, not into
 * our memory).  Returns false if it cannot be read. */
static bool session_count(session_counts_t *sc)
{
	static const char tag[] = "{\"type\":\"process\",";
	static const char prof[] = "\"profile\":\"";
	static const char exec_first[] = "\"reason\":\"exec before its first sample\"";
	static const char refused[] = "\"reason\":\"";
	static const char measured[] = "\"data_peak\":";
	uint64_t *with = &sc->with, *without = &sc->without;
	char *dir = sc->dir;
	size_t dirlen = sizeof sc->dir;
	*with = *without = sc->refused = sc->measured = 0;
	dir[0] = sc->why[0] = 0;
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
					if (strstr(line, measured))
						sc->measured++;
					const char *r = strstr(line, refused);
					if (r && !strncmp(r + sizeof refused - 1, refused_reason, sizeof refused_reason - 1) &&
					    !sc->refused++) {
						r += sizeof refused - 1 + sizeof refused_reason - 1;
						size_t rl = strcspn(r, "\"\\");
						if (rl < sizeof sc->why) {
							memcpy(sc->why, r, rl);
							sc->why[rl] = '\0';
						}
					}
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


/* The session directory of profile (common/pattern.c), onto f. */
static bool dir_of(const char *profile, wss_fmt_t *f)
{
	char d[PATH_MAX];
	if (wss_output_session_dir(profile, d, sizeof d))
		return false;
	wss_fmt_str(f, d);
	wss_fmt_cstr(f);
	return !f->overflow;
}

/* The first image of the session's leader: the one process whose profile
 * goes where the output pattern says (a forked child has the leader's
 * memory, but not its pid). */
static bool first_image(void) { return leader_own && leader_pid == E.pid; }

bool wss_session_dir(char *dir, size_t n)
{
	if (!leader_path[0] || first_image())
		return false;
	wss_fmt_t f;
	wss_fmt_init(&f, dir, n);
	return dir_of(leader_path, &f);
}

const char *wss_session_dir_name(void)
{
	static char name[PATH_MAX];
	if (!leader_path[0] || !first_image())
		return NULL;
	wss_fmt_t f;
	wss_fmt_init(&f, name, sizeof name);
	if (!dir_of(leader_path, &f))
		return NULL;
	const char *slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

/* Created by whichever process of the session writes the second profile
 * (mkdir is atomic: the others find it made).  Opened without following a
 * link, and used only when it is this user's: a name planted by another
 * user (a link to their directory, a directory of theirs in /tmp) would
 * get the session's profiles, or have them replaced (docs/report.md,
 * "Files wss writes"). */
int wss_session_dir_open(const char *dir, int *dirfd, const char **reason)
{
	long r = wss_sys3(SYS_mkdirat, AT_FDCWD, (long)dir, 0777);
	int e = wss_sys_failed(r) ? (int)-r : 0;
	const char *why = NULL;
	struct stat st;
	int fd = -1;
	if (!e || e == EEXIST) {
		fd = wss_sys_openat(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
		e = fd < 0 ? -fd : 0;
	}
	if (e == ELOOP || e == ENOTDIR) /* O_DIRECTORY on a link: either */
		why = !wss_sys_failed(wss_sys4(SYS_newfstatat, AT_FDCWD, (long)dir, (long)&st, AT_SYMLINK_NOFOLLOW)) &&
				      S_ISLNK(st.st_mode)
			      ? "is a symbolic link, which wss never follows"
			      : "is not a directory";
	else if (!e && (wss_sys_failed(wss_sys2(SYS_fstat, fd, &st)) || st.st_uid != (uid_t)wss_sys0(SYS_geteuid))) {
		e = EPERM;
		why = "is another user's directory, and wss writes only into its own";
	}
	if (!e) {
		*dirfd = fd;
		return 0;
	}
	if (fd >= 0)
		wss_sys_close(fd);
	*reason = why;
	if (!why) {
		static char made[160];
		wss_fmt_t m;
		wss_fmt_init(&m, made, sizeof made);
		wss_fmt_str(&m, "cannot be made: ");
		wss_fmt_str(&m, wss_errno_text(e));
		*reason = wss_fmt_cstr(&m);
	}
	return e;
}

void wss_session_note_refused(const char *reason)
{
	char why[256];
	wss_fmt_t f;
	wss_fmt_init(&f, why, sizeof why);
	wss_fmt_str(&f, refused_reason);
	wss_fmt_str(&f, reason);
	wss_session_note(NULL, wss_fmt_cstr(&f), NULL);
}

bool wss_session_exec_image(void) { return leader_path[0] && !leader_own && leader_pid == E.pid; }

/* Counted once, at the end: the stderr lines ask twice. */
static const session_counts_t *session_counts(void)
{
	static session_counts_t c;
	static int counted; /* 0 not yet, 1 counted, -1 unreadable */
	if (!counted)
		counted = session_used && session_count(&c) ? 1 : -1;
	return counted > 0 ? &c : NULL;
}

bool wss_session_others(void)
{
	const session_counts_t *c = session_counts();
	return c && (c->with || c->measured);
}

void wss_session_describe(wss_fmt_t *f)
{
	const session_counts_t *c = session_counts();
	if (!c || (!c->with && !c->without))
		return;
	uint64_t with = c->with, without = c->without;
	const char *dir = c->dir;
	/* A note's relative path is the leader profile's directory's: said
	 * from where the user named it. */
	const char *lp = leader_own ? E.path : leader_path, *ls = strrchr(lp, '/');
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
			if (dir[0] != '/' && ls)
				wss_fmt_mem(f, lp, (size_t)(ls - lp) + 1);
			wss_fmt_str(f, dir);
			wss_fmt_str(f, "/)");
		}
		if (without)
			wss_fmt_str(f, " and ");
	}
	if (without) {
		wss_fmt_u64(f, without);
		wss_fmt_str(f, without == 1 ? " process that wrote none" : " processes that wrote none");
	}
	/* Said once here rather than by each process refused: a script's
	 * every command would repeat it. */
	if (c->refused) {
		char sdir[PATH_MAX];
		wss_fmt_t d;
		wss_fmt_init(&d, sdir, sizeof sdir);
		if (ls)
			wss_fmt_mem(&d, lp, (size_t)(ls - lp) + 1);
		const char *ld = strrchr(leader_path, '/');
		if (!dir_of(ld ? ld + 1 : leader_path, &d))
			return;
		wss_fmt_str(f, "; ");
		wss_fmt_u64(f, c->refused);
		wss_fmt_str(f, " of them because ");
		wss_fmt_str(f, sdir);
		wss_fmt_str(f, ", the session directory, ");
		wss_fmt_str(f, c->why);
	}
}
