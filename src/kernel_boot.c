/* kernel_boot: the boot record between entropyd in the initramfs and the service's instance
 * (see kernel_boot.h). Counts and one time to readiness only: never a time of an event. */
#include "autoconf.h"

#include "kernel_boot.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Bounds no real record comes near: a boot of a year, credit of a billion bits. */
#define MAX_SECONDS (366.0 * 86400)
#define MAX_BITS 1e9

bool kernel_boot_id(char *buf, size_t size)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok && buf[0];
}

static json_t *real_or_null(double v)
{
	return v >= 0 ? json_real(round(v * 1000) / 1000) : json_null();
}

char *kernel_boot_format(const struct kboot *b)
{
	json_t *srcs = json_array(), *o;
	char *s;

	for (size_t i = 0; i < b->n_sources && i < KBOOT_MAX_SOURCES; i++)
		json_array_append_new(srcs, json_pack("{s:s, s:s, s:I, s:f}", "class", b->src[i].cls,
						      "name", b->src[i].name, "events",
						      (json_int_t)b->src[i].events, "credited_bits",
						      round(b->src[i].credited_bits * 10) / 10));
	o = json_pack("{s:i, s:s, s:o, s:o, s:b, s:b, s:o, s:o, s:f, s:f, s:o}", "version",
		      KBOOT_VERSION, "boot_id", b->boot_id, "started_s", real_or_null(b->started_s),
		      "ran_s", real_or_null(b->ran_s), "ended", b->ended, "ready_at_start",
		      b->ready_at_start, "needed_bits_at_start",
		      b->needed_at_start >= 0 ? json_integer(b->needed_at_start) : json_null(),
		      "ready_after_s", real_or_null(b->ready_after_s), "credited_bits",
		      b->credited_bits, "credited_before_ready_bits", b->credited_before_ready,
		      "sources", srcs);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s ? s : xstrdup(""); /* json_dumps fails only where memory does */
}

/* ---- parsing: every field checked, the first problem named ---- */

struct check {
	char *why;
	size_t size;
	bool bad;
};

static void PRINTF_LIKE(2, 3) refuse(struct check *c, const char *fmt, ...)
{
	va_list ap;

	if (c->bad)
		return;
	c->bad = true;
	va_start(ap, fmt);
	vsnprintf(c->why, c->size, fmt, ap);
	va_end(ap);
}

/* A number in [min, max] (null allowed where null_is >= 0 is given back for it). */
static double number(struct check *c, const json_t *o, const char *key, double min, double max,
		     double null_is)
{
	const json_t *v = json_object_get(o, key);
	double d;

	if (json_is_null(v) && null_is > -2)
		return null_is;
	if (!json_is_number(v)) {
		refuse(c, "\"%s\" is %s, not a number", key, v ? "of another type" : "missing");
		return min;
	}
	d = json_number_value(v);
	if (!isfinite(d) || d < min || d > max) {
		refuse(c, "\"%s\" is %g, outside %g..%g", key, d, min, max);
		return min;
	}
	return d;
}

static bool boolean(struct check *c, const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_boolean(v))
		refuse(c, "\"%s\" is %s, not true or false", key, v ? "of another type" : "missing");
	return json_is_true(v);
}

static void source(struct check *c, const json_t *s, size_t i, struct kboot_source *out)
{
	const char *cls = json_string_value(json_object_get(s, "class"));
	const char *name = json_string_value(json_object_get(s, "name"));

	if (!json_is_object(s)) {
		refuse(c, "sources[%zu] is not an object", i);
		return;
	}
	if (!cls || !cls[0] || strlen(cls) >= sizeof(out->cls) ||
	    strspn(cls, "abcdefghijklmnopqrstuvwxyz") != strlen(cls)) {
		refuse(c, "sources[%zu].class is not a class name", i);
		return;
	}
	if (!name || !name[0] || strlen(name) >= sizeof(out->name)) {
		refuse(c, "sources[%zu].name is missing or longer than %zu bytes", i,
		       sizeof(out->name) - 1);
		return;
	}
	strlcopy(out->cls, cls, sizeof(out->cls));
	util_printable(out->name, sizeof(out->name), name);
	out->events = (uint64_t)number(c, s, "events", 0, 1e15, -2);
	out->credited_bits = number(c, s, "credited_bits", 0, MAX_BITS, -2);
}

int kernel_boot_parse(const char *buf, size_t len, const char *boot_id, struct kboot *out, char *why,
		size_t why_size)
{
	struct check c = {.why = why, .size = why_size};
	struct kboot b = {0};
	json_error_t err;
	json_t *o, *v;
	const char *id;

	if (len > KBOOT_MAX_BYTES) {
		snprintf(why, why_size, "larger than %d bytes", KBOOT_MAX_BYTES);
		return -1;
	}
	o = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
	if (!o) {
		snprintf(why, why_size, "not JSON: line %d: %s", err.line, err.text);
		return -1;
	}
	if (!json_is_object(o))
		refuse(&c, "not a JSON object");
	v = json_object_get(o, "version");
	if (!c.bad && (!json_is_integer(v) || json_integer_value(v) != KBOOT_VERSION))
		refuse(&c, "\"version\" is not %d", KBOOT_VERSION);
	id = json_string_value(json_object_get(o, "boot_id"));
	if (!c.bad && (!id || strlen(id) >= sizeof(b.boot_id)))
		refuse(&c, "\"boot_id\" is missing or too long");
	else if (!c.bad && (!boot_id || strcmp(id, boot_id) != 0))
		refuse(&c, "it is of another boot (boot_id %.39s, this boot's %s)", id,
		       boot_id ? boot_id : "not known");
	if (!c.bad) {
		strlcopy(b.boot_id, id, sizeof(b.boot_id));
		b.started_s = number(&c, o, "started_s", 0, MAX_SECONDS, -1);
		b.ran_s = number(&c, o, "ran_s", 0, MAX_SECONDS, -1);
		b.ended = boolean(&c, o, "ended");
		b.ready_at_start = boolean(&c, o, "ready_at_start");
		b.needed_at_start = (int)number(&c, o, "needed_bits_at_start", 0, 4096, -1);
		b.ready_after_s = number(&c, o, "ready_after_s", 0, MAX_SECONDS, -1);
		b.credited_bits = number(&c, o, "credited_bits", 0, MAX_BITS, -2);
		b.credited_before_ready =
			number(&c, o, "credited_before_ready_bits", 0, MAX_BITS, -2);
	}
	if (!c.bad && b.credited_before_ready > b.credited_bits)
		refuse(&c, "more credited before the CRNG was ready (%g) than in all (%g)",
		       b.credited_before_ready, b.credited_bits);
	if (!c.bad && b.ready_at_start && b.ready_after_s >= 0)
		refuse(&c, "ready at its start, yet ready %g s after it", b.ready_after_s);
	v = json_object_get(o, "sources");
	if (!c.bad && !json_is_array(v))
		refuse(&c, "\"sources\" is not a list");
	else if (!c.bad && json_array_size(v) > KBOOT_MAX_SOURCES)
		refuse(&c, "more than %d sources", KBOOT_MAX_SOURCES);
	for (size_t i = 0; !c.bad && i < json_array_size(v); i++)
		source(&c, json_array_get(v, i), i, &b.src[b.n_sources++]);
	json_decref(o);
	if (c.bad)
		return -1;
	*out = b;
	return 0;
}

/* ---- the file ---- */

char *kernel_boot_read(const char *path, size_t *len, char *why, size_t why_size)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	char *buf;
	size_t n = 0;
	ssize_t r;

	if (fd < 0) {
		int e = errno;

		snprintf(why, why_size, "cannot open it: %s", strerror(e));
		errno = e;
		return NULL;
	}
	errno = EINVAL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "not a regular file");
		close(fd);
		return NULL;
	}
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, why_size, "not root's alone (owner uid %u, mode %04o): anyone who "
			 "can write it could tell this daemon a story", (unsigned)st.st_uid,
			 (unsigned)(st.st_mode & 07777));
		close(fd);
		return NULL;
	}
	buf = xmalloc(KBOOT_MAX_BYTES + 1);
	while (n <= KBOOT_MAX_BYTES && (r = read(fd, buf + n, KBOOT_MAX_BYTES + 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, why_size, "cannot read it: %s", strerror(errno));
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (r < 0 || n > KBOOT_MAX_BYTES) {
		if (n > KBOOT_MAX_BYTES)
			snprintf(why, why_size, "larger than %d bytes", KBOOT_MAX_BYTES);
		free(buf);
		errno = EINVAL;
		return NULL;
	}
	*len = n;
	return buf;
}

int kernel_boot_create(const char *path, char *why, size_t why_size)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int fd;

	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			snprintf(why, why_size, "cannot create %s: %s", dir, strerror(errno));
			free(dir);
			return -1;
		}
	}
	free(dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(why, why_size, "cannot create it: %s", strerror(errno));
		return -1;
	}
	/* Whatever the umask: read by all, written by root alone. */
	if (fchmod(fd, 0644) < 0) {
		snprintf(why, why_size, "cannot make it 0644: %s", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int kernel_boot_write(int fd, const struct kboot *b)
{
	char *s = kernel_boot_format(b);
	size_t len = strlen(s);
	ssize_t n = pwrite(fd, s, len, 0);
	int e = errno;

	free(s);
	if (n < 0 || (size_t)n != len) {
		errno = n < 0 ? e : EIO;
		return -1;
	}
	return ftruncate(fd, (off_t)len);
}
