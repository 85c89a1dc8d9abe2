/* entropyctl_client: entropyctl's side of the control socket: connecting, a Varlink call and
 * its reply, and the few ways of printing a reply's fields that every command shares. */
#include "autoconf.h"

#include "entropyctl_client.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "util.h"

static char *errx_buf;
static size_t errx_size;

void entropyctl_client_errx_into(char *buf, size_t size)
{
	errx_buf = size ? buf : NULL;
	errx_size = size;
	if (errx_buf)
		errx_buf[0] = '\0';
}

void entropyctl_client_errx_msg(const char *fmt, ...)
{
	va_list ap;

	if (errx_buf) {
		va_start(ap, fmt);
		vsnprintf(errx_buf, errx_size, fmt, ap);
		va_end(ap);
		return;
	}
	fputs("entropyctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the connection ---- */

/* Why the socket cannot be used, as an exit status, said once. */
static int connect_failed(const char *path, int err)
{
	struct stat st;
	struct group *gr;

	/* Something else at the path: say what, not "not running". */
	if ((err == ECONNREFUSED || err == ENOTSOCK) && stat(path, &st) == 0 &&
	    !S_ISSOCK(st.st_mode)) {
		entropyctl_client_errx_msg("%s is %s, not a socket: give the control socket's path (control.socket "
			 "of entropyd.conf)", path, S_ISDIR(st.st_mode) ? "a directory"
				: S_ISREG(st.st_mode) ? "a regular file" : "a special file");
		return XC_NOT_RUNNING;
	}
	switch (err) {
	case ENOENT:
		entropyctl_client_errx_msg("entropyd is not running: no control socket at %s", path);
		return XC_NOT_RUNNING;
	case ECONNREFUSED:
		entropyctl_client_errx_msg("entropyd is not running: nothing answers on %s", path);
		return XC_NOT_RUNNING;
	case EACCES:
	case EPERM:
		if (stat(path, &st) == 0 && st.st_gid != 0 && (gr = getgrgid(st.st_gid)) != NULL)
			entropyctl_client_errx_msg("permission denied on %s: run as root or join group %s (usermod "
				 "-aG %s USER, then log in again)", path, gr->gr_name, gr->gr_name);
		else
			entropyctl_client_errx_msg("permission denied on %s: run as root or join group entropyd "
				 "(control.group of entropyd.conf; the group must exist when "
				 "entropyd starts)", path);
		return XC_DENIED;
	default:
		entropyctl_client_errx_msg("cannot connect to %s: %s", path, strerror(err));
		return XC_NOT_RUNNING;
	}
}

int entropyctl_client_open(struct conn *c, const char *path, double timeout_s)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->path = path;
	c->timeout_ms = (int)(timeout_s * 1000);
	if (!strlcopy(sa.sun_path, path, sizeof(sa.sun_path))) {
		entropyctl_client_errx_msg("%s: too long for a socket path", path);
		return XC_USAGE;
	}
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		entropyctl_client_errx_msg("socket: %s", strerror(errno));
		return XC_PROTOCOL;
	}
	if (connect(c->fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0) {
		c->err = errno;
		close(c->fd);
		c->fd = -1;
		return connect_failed(path, c->err);
	}
	return XC_OK;
}

bool entropyctl_client_absent(const struct conn *c, int rc)
{
	struct stat st;

	/* A daemon that is stopping may take a connection and close it unanswered. */
	if (c->closed)
		return true;
	if (rc != XC_NOT_RUNNING)
		return false;
	if (c->err == ECONNREFUSED)
		return stat(c->path, &st) == 0 && S_ISSOCK(st.st_mode);
	/* No socket, or one that closed on us as the daemon went. */
	return c->err == ENOENT || c->err == 0;
}

void entropyctl_client_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	c->fd = -1;
	c->buf = NULL;
}

static int wait_fd(struct conn *c, short events, const struct timespec *deadline)
{
	struct pollfd p = {.fd = c->fd, .events = events};
	struct timespec now;
	long ms;
	int n;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = (deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
		if (ms <= 0)
			return 0;
		n = poll(&p, 1, (int)ms);
		if (n >= 0 || errno != EINTR)
			return n;
	}
}

/* Send one call and read its reply into *r. Returns XC_OK (r may hold an error reply) or an
 * exit status, said once. */
int entropyctl_client_call(struct conn *c, const char *method, json_t *params, struct ctl_reply *r)
{
	json_t *msg = ctl_proto_call_new(method, params);
	struct timespec deadline;
	size_t len, off = 0, msg_len;
	char *out = ctl_proto_encode(msg, &len);
	bool peer_closed = false;

	json_decref(msg);
	if (!out) {
		entropyctl_client_errx_msg("cannot encode a call to %s", method);
		return XC_PROTOCOL;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += c->timeout_ms / 1000;
	deadline.tv_nsec += (long)(c->timeout_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	while (off < len) {
		ssize_t n;

		if (wait_fd(c, POLLOUT, &deadline) <= 0)
			goto timeout;
		n = send(c->fd, out + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			/* It may have told us why before it closed: read that. */
			peer_closed = true;
			break;
		}
		off += (size_t)n;
	}
	free(out);
	out = NULL;
	for (;;) {
		ssize_t n;

		switch (ctl_proto_frame(c->buf, c->len, CTL_MAX_REPLY, &msg_len)) {
		case CTL_FRAME_COMPLETE:
			if (ctl_proto_parse_reply(c->buf, msg_len, r) < 0) {
				entropyctl_client_errx_msg("%s: the reply to %s is not a Varlink reply", c->path, method);
				return XC_PROTOCOL;
			}
			memmove(c->buf, c->buf + msg_len + 1, c->len - msg_len - 1);
			c->len -= msg_len + 1;
			return XC_OK;
		case CTL_FRAME_TOO_LARGE:
			entropyctl_client_errx_msg("%s: the reply to %s is over %d bytes", c->path, method,
				 CTL_MAX_REPLY);
			return XC_PROTOCOL;
		case CTL_FRAME_INCOMPLETE:
			break;
		}
		if (c->cap - c->len < 65536) {
			c->cap = c->cap ? c->cap * 2 : 65536;
			c->buf = xreallocarray(c->buf, 1, c->cap);
		}
		if (wait_fd(c, POLLIN, &deadline) <= 0)
			goto timeout;
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			c->closed = true;
			entropyctl_client_errx_msg("%s: entropyd closed the connection without replying to %s%s%s",
				 c->path, method, n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
			return peer_closed ? XC_NOT_RUNNING : XC_PROTOCOL;
		}
		c->len += (size_t)n;
	}
timeout:
	free(out);
	entropyctl_client_errx_msg("%s: no reply to %s within %.1f s", c->path, method, c->timeout_ms / 1000.0);
	return XC_PROTOCOL;
}

/* An error reply, said once, as an exit status. */
int entropyctl_client_reply_failed(const char *method, const struct ctl_reply *r)
{
	const char *p = json_string_value(json_object_get(r->params, "parameter"));
	const char *reason = json_string_value(json_object_get(r->params, "reason"));

	if (strcmp(r->error, CTL_E_PERMISSION_DENIED) == 0) {
		entropyctl_client_errx_msg("permission denied: %s needs root", method);
		return XC_DENIED;
	}
	if (strcmp(r->error, CTL_E_TOO_MANY_CLIENTS) == 0) {
		entropyctl_client_errx_msg("entropyd serves too many clients at once; try again");
		return XC_PROTOCOL;
	}
	if (strcmp(r->error, CTL_E_METHOD_NOT_FOUND) == 0) {
		entropyctl_client_errx_msg("this entropyd does not know %s (an older version?)", method);
		return XC_PROTOCOL;
	}
	entropyctl_client_errx_msg("%s failed: %s%s%s", method, r->error, p || reason ? ": " : "",
		 p ? p : reason ? reason : "");
	return XC_PROTOCOL;
}

/* Call a method that must succeed; its parameters go to *out (a new reference). */
int entropyctl_client_fetch(struct conn *c, const char *method, json_t **out)
{
	struct ctl_reply r;
	int rc = entropyctl_client_call(c, method, NULL, &r);

	if (rc != XC_OK)
		return rc;
	if (r.error) {
		rc = entropyctl_client_reply_failed(method, &r);
		ctl_proto_reply_free(&r);
		return rc;
	}
	*out = json_incref(r.params);
	ctl_proto_reply_free(&r);
	return XC_OK;
}

int entropyctl_client_fetch_snapshot(struct conn *c, const char *path, double timeout_s, json_t **st,
		   json_t **src, char *why, size_t size)
{
	int rc;

	*st = *src = NULL;
	entropyctl_client_errx_into(why, size);
	rc = entropyctl_client_open(c, path, timeout_s);
	if (rc == XC_OK)
		rc = entropyctl_client_fetch(c, CTL_INTERFACE ".GetStatus", st);
	if (rc == XC_OK)
		rc = entropyctl_client_fetch(c, CTL_INTERFACE ".GetSources", src);
	entropyctl_client_errx_into(NULL, 0);
	entropyctl_client_close(c);
	if (rc != XC_OK) {
		json_decref(*st);
		*st = NULL;
	}
	return rc;
}

/* ---- reading the replies, tolerant of what a newer daemon adds or an older one lacks ---- */

/* ---- fields shared by the commands ---- */

void entropyctl_client_print_duration(FILE *f, long long s)
{
	if (s >= 86400)
		fprintf(f, "%lldd %02lldh %02lldm", s / 86400, s / 3600 % 24, s / 60 % 60);
	else if (s >= 3600)
		fprintf(f, "%lldh %02lldm %02llds", s / 3600, s / 60 % 60, s % 60);
	else if (s >= 60)
		fprintf(f, "%lldm %02llds", s / 60, s % 60);
	else
		fprintf(f, "%llds", s);
}

void entropyctl_client_health_text(const json_t *src, char *buf, size_t size)
{
	const json_t *h = json_object_get(src, "health");
	const char *state = s_(h, "state"), *last = s_(h, "last_failure");

	if (strcmp(state, "ok") && strcmp(state, "startup") && strcmp(last, "none"))
		snprintf(buf, size, "%s (%s)", state, last);
	else
		snprintf(buf, size, "%s", state);
}

/* Why credit does not grow, short; "-" while it does (or from a daemon that does not say). */
const char *entropyctl_client_why_not(const json_t *src)
{
	const json_t *credit = json_object_get(src, "credit");

	return json_is_string(json_object_get(credit, "reason")) ? s_(credit, "reason") : "-";
}
