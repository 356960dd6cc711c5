/* The one rule for the files the commands write (docs/report.md, "Files
 * wss writes").  Everything is done through a descriptor of the directory
 * that holds the name, opened once: what was checked there is what is
 * opened, created or renamed over, whatever happens to the path's other
 * components meanwhile.  The profile the preload writes follows the same
 * rule with the same creation call (wss_file_create). */
#include "config.h"
#include "cli/cmd/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/sys.h"

/* The links of a chain followed at most: the kernel's MAXSYMLINKS. */
#define HOPS_MAX 40

/* Trusted as the kernel trusts a link it follows or a FIFO it opens with
 * fs.protected_symlinks = 1 and fs.protected_fifos = 2: in a sticky
 * directory others can write (/tmp), where anyone may plant a name for us
 * to open, only what belongs to the user or to the directory's owner.  We
 * cannot rely on the sysctls: they may be off, and a rename(2) over a
 * name or a readlink(2) of it is not covered by them. */
static bool trusted(const struct stat *dir, const struct stat *st)
{
	bool shared = (dir->st_mode & S_ISVTX) && (dir->st_mode & (S_IWGRP | S_IWOTH));
	return !shared || st->st_uid == geteuid() || st->st_uid == dir->st_uid;
}

static const char *kind(mode_t m)
{
	return S_ISLNK(m)		  ? "a symbolic link"
	       : S_ISFIFO(m)		  ? "a FIFO"
	       : S_ISCHR(m) || S_ISBLK(m) ? "a device"
					  : "a file";
}

/* Says in o->why that the rule refused what st describes, reached at cur
 * after hop links, and returns EPERM. */
static int refuse(wss_outfile_t *o, const char *cur, int hop, const struct stat *st)
{
	snprintf(o->why, sizeof o->why,
		 "not written: %s%s%s of uid %u in a sticky directory others can write (wss uses only the user's own or "
		 "the directory owner's there)",
		 hop ? cur : "", hop ? " is " : "", kind(st->st_mode), (unsigned)st->st_uid);
	return EPERM;
}

/* Opens path's directory (O_PATH) into o->dirfd and keeps its last
 * component in o->name.  Returns 0 or an errno. */
static int open_dir(wss_outfile_t *o, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base)
		return EISDIR;
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir || !(o->name = strdup(base))) {
		free(dir);
		return ENOMEM;
	}
	o->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int e = o->dirfd < 0 ? errno : 0;
	free(dir);
	return e;
}

/* The path the link o->name (in the directory of *cur) leads to, into
 * *cur.  Returns 0 or an errno. */
static int follow(wss_outfile_t *o, char **cur)
{
	char buf[PATH_MAX];
	ssize_t n = readlinkat(o->dirfd, o->name, buf, sizeof buf - 1);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	const char *slash = strrchr(*cur, '/');
	char *next = NULL;
	if (buf[0] == '/' || !slash)
		next = strdup(buf);
	else if (asprintf(&next, "%.*s/%s", (int)(slash - *cur), *cur, buf) < 0)
		next = NULL;
	if (!next)
		return ENOMEM;
	free(*cur);
	*cur = next;
	return 0;
}

/* A temporary file beside o->name, ".NAME.XXXXXX", created as a new file
 * (mode 0666 less the umask), or with mode keep when it replaces a file
 * (as open(2) of an existing file keeps its mode).  Returns 0 or an
 * errno. */
static int create_temp(wss_outfile_t *o, mode_t keep)
{
	for (unsigned k = 0; k < 100; k++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		unsigned long x = (unsigned long)ts.tv_nsec ^ ((unsigned long)getpid() << 12) ^ k * 2654435761UL;
		free(o->tmp);
		if (asprintf(&o->tmp, ".%s.%06lx", o->name, x & 0xffffffUL) < 0) {
			o->tmp = NULL;
			return ENOMEM;
		}
		int fd = wss_file_create(o->dirfd, o->tmp, 0);
		if (fd == -EEXIST)
			continue;
		if (fd < 0 || (keep && fchmod(fd, keep))) {
			int e = fd < 0 ? -fd : errno;
			if (fd >= 0) {
				close(fd);
				unlinkat(o->dirfd, o->tmp, 0);
			}
			free(o->tmp);
			o->tmp = NULL;
			return e;
		}
		o->fd = fd;
		return 0;
	}
	free(o->tmp);
	o->tmp = NULL;
	return EEXIST;
}

/* A FIFO or a device, written as it is: opened without following, and
 * only if it is still what was checked.  A FIFO opened here is trusted
 * (the user's or the directory owner's), so waiting for its reader is
 * what the user asked for.  Returns 0 or an errno. */
static int open_in_place(wss_outfile_t *o, const struct stat *st)
{
	struct stat now;
	int fd = openat(o->dirfd, o->name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fstat(fd, &now) || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		return EAGAIN;
	}
	o->fd = fd;
	return 0;
}

int wss_outfile_open(wss_outfile_t *o, const char *path, wss_outfile_how_t how)
{
	memset(o, 0, sizeof *o);
	o->fd = o->dirfd = -1;
	char *cur = strdup(path);
	int r = cur ? 0 : ENOMEM;
	for (int hop = 0; !r; hop++) {
		struct stat ds, st;
		if (hop > HOPS_MAX) {
			r = ELOOP;
			break;
		}
		if (o->dirfd >= 0)
			close(o->dirfd);
		free(o->name);
		o->dirfd = -1;
		o->name = NULL;
		if ((r = open_dir(o, cur)))
			break;
		if (fstat(o->dirfd, &ds)) {
			r = errno;
			break;
		}
		if (fstatat(o->dirfd, o->name, &st, AT_SYMLINK_NOFOLLOW)) {
			r = errno;
			if (r == ENOENT && how == WSS_OUTFILE_REPLACE)
				r = create_temp(o, 0);
			else if (r == ENOENT && hop)
				r = EEXIST; /* a new profile is never created through a link */
			else if (r == ENOENT) {
				int fd = wss_file_create(o->dirfd, o->name, 0);
				r = fd < 0 ? -fd : 0;
				o->fd = fd < 0 ? -1 : fd;
			}
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			r = EISDIR;
			break;
		}
		if (!trusted(&ds, &st)) {
			r = refuse(o, cur, hop, &st);
			break;
		}
		if (S_ISLNK(st.st_mode))
			r = follow(o, &cur);
		else if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
			r = open_in_place(o, &st);
		else
			r = how == WSS_OUTFILE_NEW ? EEXIST : create_temp(o, st.st_mode & 0777);
		if (!S_ISLNK(st.st_mode))
			break;
	}
	free(cur);
	return r;
}

int wss_outfile_close(wss_outfile_t *o, bool ok)
{
	int r = 0;
	if (o->fd >= 0) {
		/* On disk before the rename, or a crash could leave it empty. */
		if (ok && o->tmp && fsync(o->fd))
			r = errno;
		if (close(o->fd) && !r)
			r = errno;
	}
	if (o->tmp && ok && !r && renameat(o->dirfd, o->tmp, o->dirfd, o->name))
		r = errno;
	if (o->tmp && (!ok || r))
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->tmp);
	free(o->name);
	o->fd = o->dirfd = -1;
	o->tmp = o->name = NULL;
	return r;
}

bool wss_outfile_planted(const char *path)
{
	wss_outfile_t o;
	struct stat ds, st;
	memset(&o, 0, sizeof o);
	o.fd = o.dirfd = -1;
	bool planted = !open_dir(&o, path) && !fstat(o.dirfd, &ds) &&
		       !fstatat(o.dirfd, o.name, &st, AT_SYMLINK_NOFOLLOW) && !trusted(&ds, &st);
	if (planted)
		refuse(&o, path, 0, &st);
	planted = wss_outfile_refused(&o, path);
	wss_outfile_close(&o, false);
	return planted;
}

bool wss_outfile_refused(const wss_outfile_t *o, const char *path)
{
	if (!o->why[0])
		return false;
	fprintf(stderr, "wss: %s: %s\n", path, o->why);
	return true;
}
