/* est_record: per-instance files of the exact symbols an estimator sees, for offline assessment. */
#include "autoconf.h"

#include "est_record.h"

#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define RECORD_BUF 4096
/* Symbols reach the file at most this long after they were seen (a timer, armed only while
 * some are buffered: an idle daemon does not wake for it). */
#define RECORD_FLUSH_S 2
/* Bytes of the sanitised instance name kept, so that CLASS-NAME.bin stays below NAME_MAX. */
#define NAME_KEEP 200

/* A file this run has opened: the first open truncates it and later ones append, so that a
 * device plugged in again continues its recording; a file that stopped stays stopped. */
struct record_file {
	struct record_file *next;
	char *path;
	struct recorder *open; /* the recorder writing it now, if any */
	bool stopped;
};

struct recorder {
	struct record_file *file;
	int fd;       /* -1 once stopped */
	char *what;   /* "CLASS/NAME", for log lines */
	uint64_t bytes; /* in the file, buffered ones included */
	uint64_t max;
	size_t used;
	uint8_t buf[RECORD_BUF];
};

static struct record_file *files;
static struct log_ratelimit record_rl = LOG_RATELIMIT_INIT;
static struct event *flush_ev; /* est_record_flush_on(): flushes every open recorder */

static void sanitise(char *dst, const char *src, size_t keep)
{
	size_t i;

	for (i = 0; src[i] && i < keep; i++) {
		char c = src[i];

		dst[i] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
				 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'
			 ? c
			 : '_';
	}
	dst[i] = '\0';
}

char *est_record_file_name(const char *cls, const char *name)
{
	char c[32], n[NAME_KEEP + 1];

	sanitise(c, cls ? cls : "", sizeof(c) - 1);
	sanitise(n, name ? name : "", NAME_KEEP);
	return xasprintf("%s-%s.bin", c, n);
}

static struct record_file *file_find(const char *path)
{
	struct record_file *f;

	for (f = files; f; f = f->next)
		if (strcmp(f->path, path) == 0)
			return f;
	return NULL;
}

static struct record_file *file_add(const char *path)
{
	struct record_file *f = xcalloc(1, sizeof(*f));

	f->path = xstrdup(path);
	f->next = files;
	files = f;
	return f;
}

/* DIR, its last component created if missing. -1 with errno set on failure. */
static int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && (mkdir(dir, 0700) == 0 || errno == EEXIST))
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd;
}

/* Why an existing file at the target may not be written, or NULL if it may. */
static const char *refuse(const struct stat *st)
{
	if (S_ISLNK(st->st_mode))
		return "is a symbolic link";
	if (!S_ISREG(st->st_mode))
		return "is not a regular file";
	if (st->st_nlink != 1)
		return "has other hard links";
	if (st->st_uid != geteuid())
		return "belongs to another user";
	return NULL;
}

/* The file in dfd, checked before anything is written to it: a name someone else placed in
 * the directory (a link to another file, a device, a FIFO) is refused, never followed. */
static int open_file(int dfd, const char *base, const char **why)
{
	struct stat st;
	int fd;

	*why = NULL;
	/* Checked before the open as well, so that a device node is never opened at all. */
	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && (*why = refuse(&st)))
		return -1;
	fd = openat(dfd, base,
		    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		if (errno == ELOOP)
			*why = "is a symbolic link";
		return -1;
	}
	if (fstat(fd, &st) < 0 || (*why = refuse(&st))) {
		close(fd);
		return -1;
	}
	/* an existing file keeps its mode otherwise, and the umask may have narrowed ours */
	if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

struct recorder *est_record_open(const char *dir, const char *cls, const char *name,
			     uint64_t max_bytes)
{
	char *base, *path;
	const char *why = NULL;
	struct record_file *file;
	struct recorder *r = NULL;
	struct stat st;
	size_t len;
	int dfd, fd = -1;

	if (!dir || !*dir)
		return NULL;
	if (dir[0] != '/') {
		log_limited(&record_rl, LOG_WARNING,
			    "record: directory \"%s\" is not an absolute path; not recording", dir);
		return NULL;
	}
	base = est_record_file_name(cls, name);
	len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	path = xasprintf("%.*s/%s", (int)len, dir, base);
	file = file_find(path);
	if (file && file->open) {
		log_limited(&record_rl, LOG_WARNING,
			    "record: %s is already being written (two instances named alike?); "
			    "not recording %s/%s", path, cls, name);
		goto out;
	}
	if (file && file->stopped) {
		log_debug("record: %s stopped earlier in this run; not recording %s/%s", path, cls,
			  name);
		goto out;
	}

	dfd = open_dir(dir);
	if (dfd < 0) {
		log_limited(&record_rl, LOG_WARNING, "record: cannot open directory %s: %s; make it, "
			    "or set record.dir = \"\" (off)", dir, strerror(errno));
		goto out;
	}
	fd = open_file(dfd, base, &why);
	if (fd < 0) {
		if (why)
			log_limited(&record_rl, LOG_WARNING, "record: %s %s; not recording %s/%s",
				    path, why, cls, name);
		else
			log_limited(&record_rl, LOG_WARNING,
				    "record: cannot open %s: %s; not recording %s/%s", path,
				    strerror(errno), cls, name);
		close(dfd);
		goto out;
	}
	close(dfd);
	/* Truncated on the first open in this run only. */
	if (!file && ftruncate(fd, 0) < 0) {
		log_limited(&record_rl, LOG_WARNING, "record: cannot truncate %s: %s", path,
			    strerror(errno));
		close(fd);
		goto out;
	}
	if (!file)
		file = file_add(path);
	if (fstat(fd, &st) < 0)
		st.st_size = 0;
	if ((uint64_t)st.st_size >= max_bytes) {
		log_notice("record: %s already holds record.max_bytes (%llu bytes); not recording "
			   "%s/%s", path, (unsigned long long)max_bytes, cls, name);
		file->stopped = true;
		close(fd);
		goto out;
	}

	r = xcalloc(1, sizeof(*r));
	r->file = file;
	r->fd = fd;
	r->what = xasprintf("%s/%s", cls, name);
	r->bytes = (uint64_t)st.st_size;
	r->max = max_bytes;
	file->open = r;
	log_info("record: symbols of %s go to %s", r->what, path);
out:
	free(base);
	free(path);
	return r;
}

/* Stop for good: the file stays as it is, and this run does not reopen it. */
static void stop(struct recorder *r)
{
	close(r->fd);
	r->fd = -1;
	r->file->stopped = true;
	util_wipe(r->buf, sizeof(r->buf));
	r->used = 0;
}

static void flush(struct recorder *r)
{
	size_t off = 0;
	ssize_t n;

	while (off < r->used) {
		n = write(r->fd, r->buf + off, r->used - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			log_limited(&record_rl, LOG_WARNING,
				    "record: writing %s failed: %s; recording of %s stopped",
				    r->file->path, n < 0 ? strerror(errno) : "nothing written",
				    r->what);
			stop(r);
			return;
		}
		off += (size_t)n;
	}
	util_wipe(r->buf, r->used);
	r->used = 0;
}

static void flush_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	for (struct record_file *f = files; f; f = f->next)
		if (f->open && f->open->fd >= 0 && f->open->used)
			flush(f->open);
}

void est_record_flush_on(struct event_base *base)
{
	if (flush_ev)
		event_free(flush_ev);
	flush_ev = base ? evtimer_new(base, flush_cb, NULL) : NULL;
}

void est_record_symbol(struct recorder *r, uint8_t sym)
{
	static const struct timeval later = {.tv_sec = RECORD_FLUSH_S};

	if (!r || r->fd < 0)
		return;
	if (!r->used && flush_ev && !evtimer_pending(flush_ev, NULL))
		evtimer_add(flush_ev, &later);
	r->buf[r->used++] = sym;
	r->bytes++;
	if (r->used == sizeof(r->buf) || r->bytes >= r->max)
		flush(r);
	if (r->fd >= 0 && r->bytes >= r->max) {
		log_notice("record: %s reached record.max_bytes (%llu bytes); recording of %s "
			   "stopped", r->file->path, (unsigned long long)r->max, r->what);
		stop(r);
	}
}

void est_record_close(struct recorder *r)
{
	if (!r)
		return;
	if (r->fd >= 0) {
		flush(r);
		if (r->fd >= 0)
			close(r->fd);
	}
	r->file->open = NULL;
	free(r->what);
	util_wipe(r->buf, sizeof(r->buf));
	free(r);
}

bool est_record_active(const struct recorder *r)
{
	return r && r->fd >= 0;
}

uint64_t est_record_bytes(const struct recorder *r)
{
	return r ? r->bytes : 0;
}

void est_record_fini(void)
{
	struct record_file **p = &files, *f;

	est_record_flush_on(NULL);
	while ((f = *p)) {
		/* an open recorder still points at its entry: keep it */
		if (f->open) {
			p = &f->next;
			continue;
		}
		*p = f->next;
		free(f->path);
		free(f);
	}
}
