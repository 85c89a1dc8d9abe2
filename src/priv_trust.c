/* priv_trust: what root reads and makes on the collector's behalf, only where root alone can
 * change it.
 *
 * The configuration sets the credit ceiling the privileged process enforces: a file, or a
 * directory above it, that someone else can write would let them raise it. The recording
 * directory is made by root for the collector's user: made and given by path, a user who owns
 * a directory on that path could swap it for a link between the mkdir and the chown and have
 * root give them any file. So it is reached through descriptors, and refused where anyone but
 * root could replace it, by the same rule as the configuration. */
#include "autoconf.h"

#include "priv_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_include.h"
#include "util.h"

/* dir, a directory above what (by st): root's, and not writable by others unless sticky (/tmp:
 * no one else can then rename or remove root's entry)? */
static bool dir_trusted(const struct stat *st, const char *what, const char *dir, char *why,
			size_t size)
{
	if (st->st_uid != 0) {
		snprintf(why, size, "%s: its directory %s is owned by uid %u, not root: chown root %s",
			 what, dir, (unsigned)st->st_uid, dir);
		return false;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX)) {
		snprintf(why, size, "%s: its directory %s is writable by others (mode %04o): chmod "
			 "go-w %s", what, dir, (unsigned)(st->st_mode & 07777), dir);
		return false;
	}
	return true;
}

/* Can root alone replace path through the directories above it? */
static bool parents_trusted(const char *path, char *why, size_t size)
{
	char *copy = xstrdup(path), *slash;
	struct stat st;
	bool ok = true;

	while (ok && (slash = strrchr(copy, '/'))) {
		if (slash == copy)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(copy, &st) < 0)
			break;
		ok = dir_trusted(&st, path, copy, why, size);
		if (slash == copy)
			break;
	}
	free(copy);
	return ok;
}

/* path, a regular file only root can change; or, where missing_ok, one that is not there and
 * that only root could make. */
static bool file_trusted(const char *path, bool missing_ok, char *why, size_t size)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (missing_ok && errno == ENOENT)
			return parents_trusted(path, why, size);
		snprintf(why, size, "%s: %s", path, strerror(errno));
		return false;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, size, "%s: not a regular file (a symbolic link?): give the file itself",
			 path);
		return false;
	}
	if (st.st_uid != 0) {
		snprintf(why, size, "%s: owned by uid %u, not root: chown root %s", path,
			 (unsigned)st.st_uid, path);
		return false;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, size, "%s: writable by %s (mode %04o): chmod go-w %s", path,
			 (st.st_mode & S_IWOTH) ? "anyone" : "its group",
			 (unsigned)(st.st_mode & 07777), path);
		return false;
	}
	return parents_trusted(path, why, size);
}

struct why {
	char *text;
	size_t size;
};

static bool include_trusted(const char *file, void *arg)
{
	struct why *w = arg;

	return file_trusted(file, true, w->text, w->size);
}

bool priv_trust_config(const char *path, char *why, size_t size)
{
	struct why w = {why, size};

	why[0] = '\0';
	return file_trusted(path, false, why, size) &&
	       config_include_each(path, include_trusted, &w);
}

/* ---- the recording directory ---- */

/* The descriptor of the directory real (an absolute path without links), opened from "/" one
 * name at a time without following a link, each directory on the way trusted; -1 with why. */
static int open_trusted_dir(const char *what, const char *real, char *why, size_t size)
{
	char *prefix = xstrdup(real);
	const char *p = real;
	struct stat st;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	strcpy(prefix, "/");
	while (fd >= 0) {
		size_t n;
		char *name;
		int next;

		if (fstat(fd, &st) < 0 || !dir_trusted(&st, what, prefix, why, size)) {
			if (!why[0])
				snprintf(why, size, "%s: %s: %s", what, prefix, strerror(errno));
			close(fd);
			fd = -1;
			break;
		}
		p += strspn(p, "/");
		if (!*p)
			break;
		n = strcspn(p, "/");
		name = xasprintf("%.*s", (int)n, p);
		next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			snprintf(why, size, "%s: %s/%s: %s (it changed while it was checked?)", what,
				 strcmp(prefix, "/") ? prefix : "", name, strerror(errno));
		free(name);
		close(fd);
		fd = next;
		p += n;
		memcpy(prefix, real, (size_t)(p - real));
		prefix[p - real] = '\0';
	}
	free(prefix);
	return fd;
}

enum priv_trust_dir priv_trust_record_dir(const char *path, uid_t uid, gid_t gid, char *why,
					  size_t size)
{
	char *parent = xstrdup(path), *slash, *real, *what;
	const char *base;
	enum priv_trust_dir res = TRUST_DIR_READY;
	struct stat st;
	int fd, dfd = -1;
	bool made;

	why[0] = '\0';
	for (slash = parent + strlen(parent); slash > parent + 1 && slash[-1] == '/'; slash--)
		slash[-1] = '\0';
	slash = strrchr(parent, '/');
	if (!slash || !slash[1]) {
		snprintf(why, size, "record.dir %s: not an absolute path to a directory below /",
			 path);
		free(parent);
		return TRUST_DIR_REFUSED;
	}
	*slash = '\0';
	base = path + (slash + 1 - parent);
	real = realpath(parent[0] ? parent : "/", NULL);
	if (!real) {
		snprintf(why, size, "record.dir %s: cannot create it: %s: %s", path,
			 parent[0] ? parent : "/", strerror(errno));
		free(parent);
		return TRUST_DIR_MISSING;
	}
	what = xasprintf("record.dir %s", path);
	fd = open_trusted_dir(what, real, why, size);
	free(what);
	if (fd < 0) {
		res = TRUST_DIR_REFUSED;
		goto out;
	}
	made = mkdirat(fd, base, 0700) == 0;
	if (!made && errno != EEXIST) {
		snprintf(why, size, "record.dir %s: cannot create it: %s", path, strerror(errno));
		res = TRUST_DIR_MISSING;
		goto out;
	}
	dfd = openat(fd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0) {
		int err = errno;

		bool seen = fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0;

		if (seen && S_ISLNK(st.st_mode))
			snprintf(why, size, "record.dir %s: a symbolic link: give the directory itself",
				 path);
		else if ((err == ENOTDIR || err == ELOOP || err == ENOENT) &&
			 (!seen || S_ISDIR(st.st_mode)))
			/* Not a directory when opened, a directory or nothing a moment later; or there
			 * when mkdirat() looked and gone when opened: someone who can write in its
			 * parent swaps it (a link, most likely). */
			snprintf(why, size, "record.dir %s: replaced while it was opened (a symbolic "
				 "link?): give the directory itself", path);
		else
			snprintf(why, size, "record.dir %s: %s: give a directory", path, strerror(err));
		res = TRUST_DIR_REFUSED;
	} else if (made) {
		/* Ours: the parent is root's alone, so no one else could have replaced it. */
		if (fchmod(dfd, 0700) < 0 || fchown(dfd, uid, gid) < 0) {
			snprintf(why, size, "record.dir %s: cannot give it to uid %u: %s", path,
				 (unsigned)uid, strerror(errno));
			res = TRUST_DIR_MISSING;
		}
	} else if (st.st_mode & S_IWOTH) {
		snprintf(why, size, "record.dir %s: writable by anyone (mode %04o): chmod o-w %s",
			 path, (unsigned)(st.st_mode & 07777), path);
		res = TRUST_DIR_REFUSED;
	} else if (st.st_uid != uid) {
		snprintf(why, size, "record.dir %s: owned by uid %u", path, (unsigned)st.st_uid);
		res = TRUST_DIR_NOT_USERS;
	}
out:
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0)
		close(fd);
	free(real);
	free(parent);
	return res;
}
