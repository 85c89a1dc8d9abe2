/* priv_trust: what root reads and makes on the collector's behalf, only where root alone can
 * change it.
 *
 * The configuration sets the credit ceiling the privileged process enforces: a file, or a
 * directory above it, that someone else can write would let them raise it. */
#include "autoconf.h"

#include "priv_trust.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
