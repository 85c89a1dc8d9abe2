/* block_tp_format: the tracepoint as tracefs describes it. The parsers take the files' text
 * and touch nothing else (tests/unit/check_block_tp_format.c feeds them the format files of
 * the kernels entropyd runs on); block_tp_format_read finds tracefs and reads the files. The
 * kernel writes these files, but a field's offset is later used to read raw entries, so a
 * number out of range is refused here, not trusted. */
#include "autoconf.h"

#include "block_tp_format.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define TRACEFS "/sys/kernel/tracing"
#define TRACEFS_OLD "/sys/kernel/debug/tracing"
#define EVENT_DIR BLOCK_TP_FORMAT_EVENT_DIR

/* "KEY:N;" at p, before end: N, decimal digits only, up to BLOCK_TP_FORMAT_FIELD_MAX. */
static bool field_number(const char *p, const char *end, const char *key, unsigned *out)
{
	size_t klen = strlen(key);
	unsigned long v = 0;
	const char *d;

	if (!p || p >= end || (size_t)(end - p) < klen || strncmp(p, key, klen) != 0)
		return false;
	d = p + klen;
	if (d >= end || !isdigit((unsigned char)*d))
		return false;
	for (; d < end && isdigit((unsigned char)*d); d++) {
		v = v * 10 + (unsigned long)(*d - '0');
		if (v > BLOCK_TP_FORMAT_FIELD_MAX)
			return false;
	}
	if (d >= end || *d != ';')
		return false;
	*out = (unsigned)v;
	return true;
}

/* The first occurrence of needle in [p, end), or NULL. */
static const char *find_in(const char *p, const char *end, const char *needle)
{
	size_t n = strlen(needle);

	for (; p && (size_t)(end - p) >= n; p++)
		if (!strncmp(p, needle, n))
			return p;
	return NULL;
}

bool block_tp_format_field(const char *text, const char *name, unsigned *offset,
			   unsigned *size)
{
	size_t nlen = strlen(name);

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		const char *f, *semi, *id;
		unsigned o, s;

		if (!end)
			end = line + strlen(line);
		f = find_in(line, end, "field:");
		if (f && (semi = memchr(f, ';', (size_t)(end - f)))) {
			/* The declaration's last identifier, an array suffix stripped. */
			const char *p = semi;

			while (p > f && p[-1] == ']')
				while (p > f && *--p != '[')
					;
			id = p;
			while (id > f && (isalnum((unsigned char)id[-1]) || id[-1] == '_'))
				id--;
			if ((size_t)(p - id) == nlen && strncmp(id, name, nlen) == 0) {
				if (field_number(find_in(semi, end, "offset:"), end, "offset:", &o) &&
				    field_number(find_in(semi, end, "size:"), end, "size:", &s)) {
					*offset = o;
					*size = s;
					return true;
				}
				return false;
			}
		}
		line = *end ? end + 1 : end;
	}
	return false;
}

bool block_tp_format_dev(const char *text, struct block_tp_format *out, char *err,
			 size_t errlen)
{
	unsigned off, size;

	if (!block_tp_format_field(text, "dev", &off, &size)) {
		snprintf(err, errlen, "no \"dev\" field with an offset and a size");
		return false;
	}
	if (size != 4 && size != 8) {
		snprintf(err, errlen, "the \"dev\" field is %u bytes, not 4 or 8", size);
		return false;
	}
	out->dev_off = off;
	out->dev_size = size;
	return true;
}

bool block_tp_format_id(const char *text, unsigned *id)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*text))
		return false;
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || v == 0 || v > UINT32_MAX)
		return false;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return false;
	*id = (unsigned)v;
	return true;
}

/* A small file whole, NUL-terminated; NULL with errno set. */
static char *read_small(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	size_t len = 0;

	if (fd < 0)
		return NULL;
	buf = xmalloc(max + 1);
	while (len < max) {
		ssize_t n = read(fd, buf + len, max - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

static bool have_event(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/id", dir);
	return access(path, R_OK) == 0;
}

/* The tracefs directory with the tracepoint in it, mounting tracefs if need be and asked
 * to (only with privilege: the collector never tries, its system call filter would kill
 * it). */
static const char *tracefs_dir(bool may_mount, char *err, size_t errlen)
{
	struct statfs sfs;

	if (have_event(TRACEFS))
		return TRACEFS;
	if (have_event(TRACEFS_OLD))
		return TRACEFS_OLD;
	if (statfs(TRACEFS, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC) {
		snprintf(err, errlen, "tracefs has no " EVENT_DIR " (kernel without the block "
				      "tracepoints?)");
		return NULL;
	}
	if (!may_mount) {
		snprintf(err, errlen, "ENOENT: tracefs is not mounted at " TRACEFS " (nor under "
				      "debugfs) and could not be mounted at start: mount it (mount -t "
				      "tracefs nodev " TRACEFS "; in a container on the host) or set "
				      "policy.block.mode = \"disabled\"");
		return NULL;
	}
	if (mount("nodev", TRACEFS, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		int e = errno;

		snprintf(err, errlen, "tracefs is not mounted and mounting it at " TRACEFS
				      " failed: %s (%s)%s",
			 util_errno_name(e) ? util_errno_name(e) : "?", strerror(e),
			 e == EPERM ? ": needs CAP_SYS_ADMIN outside a container; mount it on the "
				      "host or set policy.block.mode = \"disabled\""
				    : "");
		return NULL;
	}
	log_notice("block: tracefs was not mounted; mounted it at " TRACEFS);
	if (have_event(TRACEFS))
		return TRACEFS;
	snprintf(err, errlen, "tracefs has no " EVENT_DIR " (kernel without the block "
			      "tracepoints?)");
	return NULL;
}

bool block_tp_format_read(bool may_mount, struct block_tp_format *out, char *err,
			  size_t errlen)
{
	const char *dir = tracefs_dir(may_mount, err, errlen);
	char path[256], why[160], *text;
	bool ok;

	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/id", dir);
	text = read_small(path, 64);
	if (!text) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return false;
	}
	ok = block_tp_format_id(text, &out->id);
	free(text);
	if (!ok) {
		snprintf(err, errlen, "%s: not a tracepoint id", path);
		return false;
	}
	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/format", dir);
	text = read_small(path, 16384);
	if (!text) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return false;
	}
	ok = block_tp_format_dev(text, out, why, sizeof(why));
	free(text);
	if (!ok)
		snprintf(err, errlen, "%s: %s", path, why);
	return ok;
}
