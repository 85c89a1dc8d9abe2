/* ctl: the control socket — Varlink calls from entropyctl and other clients, served from the
 * event loop. Every client is untrusted: its bytes are bounded, its time is bounded, and the
 * daemon never waits for it. Here are the socket, its clients and the snapshots of the
 * daemon's state; ctl_reply.c makes the replies from them. */
#include "autoconf.h"

#include "ctl.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl_proto.h"
#include "ctl_reply.h"
#include "feed_pipeline.h"
#include "kernel_seed.h"
#include "log.h"
#include "priv.h"
#include "priv_sandbox.h"
#include "source.h"
#include "source_disabled.h"
#include "util.h"

/* Stop reading a client's requests while this much of its replies waits to be sent. */
#define OUTPUT_HIGH (256 * 1024)

struct client {
	struct ctl *ctl;
	struct bufferevent *bev;
	struct event *deadline; /* a complete request must arrive before it fires */
	struct event *hold;     /* closes the connection at control.max_hold (not root's) */
	uid_t uid;
	char who[48]; /* "uid U, pid P", or "uid U" where the pid is not known: see admit() */
	bool suspended; /* reading paused until the replies drain */
	bool eof;       /* the client sent all it will send */
	bool closing;   /* nothing more is read: close once the replies are out */
	struct client *prev, *next;
};

/* A reply kept for users other than root: see public_view(). */
struct snapshot {
	json_t *v;
	uint64_t at_ns; /* the PUBLIC_EVERY_NS tick it was made in */
};

struct ctl {
	struct event_base *base;
	const struct ctl_ops *ops;
	void *ops_arg;
	const struct config *cfg;
	char *path, *group;
	dev_t dev;
	ino_t ino;
	int fd;
	struct event *listener;
	struct event *resume; /* accepting again after running out of descriptors */
	struct client *clients;
	size_t n_clients, n_root; /* users other than root, and root, counted apart */
	struct timeval timeout, max_hold;
	struct snapshot public_status, public_sources;
	struct kseed seed;     /* what the machine offers, read at start */
	bool ready_at_start;   /* the CRNG was ready when the socket opened, at start */
	int needed_at_start;   /* the bits it still waited for then; -1 unknown */
	/* Drops by reason, each limited on its own: a burst of one kind (idle clients) must not
	 * hide another (one that does not read its replies). */
	struct log_ratelimit rl_refused, rl_accept, rl_held;
	struct log_ratelimit rl_too_large, rl_no_request, rl_no_read;
};

/* Users other than root see the counters as they were at most this long ago. */
#define PUBLIC_EVERY_NS (10 * NS_PER_SEC)

static struct timeval seconds_tv(double s)
{
	struct timeval tv;

	tv.tv_sec = (time_t)s;
	tv.tv_usec = (suseconds_t)((s - (double)tv.tv_sec) * 1e6);
	return tv;
}

/* ---- what the replies are made of (ctl_reply.c makes them) ---- */

static json_t *get_status(struct ctl *ctl)
{
	struct ctl_snapshot snap = {
		.pid = (long)priv_main_pid(),
		.walls = priv_sandbox_walls(), /* this process is the collector */
		.seed = &ctl->seed,
		.ready_at_start = ctl->ready_at_start,
		.needed_at_start = ctl->needed_at_start,
		.hz_from = "",
	};

	ctl->ops->status(ctl->ops_arg, &snap.st);
	feed_pipeline_totals(&snap.totals);
	snap.instances = feed_pipeline_count();
	snap.hz = feed_pipeline_kernel_hz(&snap.hz_from);
	return ctl_reply_status(&snap);
}

/* An instance's row, with what the core says of it; the core has no instance of what policy
 * disables. */
static json_t *source_row(const struct ctl *ctl, const struct inst_info *in, bool counts)
{
	struct src_view v = {0};
	bool core = in->rule.mode != MODE_DISABLED && strcmp(in->name, DISABLED_CLASS_NAME) &&
		    source_view(in->cls, in->name, &v);

	return ctl_reply_source(ctl->cfg, in, core ? &v : NULL, counts);
}

static json_t *get_sources(struct ctl *ctl)
{
	json_t *list = json_array();
	struct inst_info info;
	struct ctl_status st;
	bool ok = true;

	ctl->ops->status(ctl->ops_arg, &st);
	for (size_t i = 0; ok && feed_pipeline_info(i, &info); i++)
		ok = json_array_append_new(list, source_row(ctl, &info, st.credit_counts)) == 0;
	/* Then every name given that matches nothing: a source that is not there. */
	for (int c = 0; c < CLASS_COUNT; c++) {
		const char *pattern, *key;

		for (size_t i = 0; ok && source_unmatched((enum src_class)c, i, &pattern, &key); i++)
			ok = json_array_append_new(list, ctl_reply_unmatched(ctl->cfg,
									     (enum src_class)c,
									     pattern, key,
									     st.credit_counts)) == 0;
	}
	/* Then what policy disables: never opened, but an administrator must see it. */
	for (size_t i = 0; ok && source_disabled_info(i, ctl->cfg, &info); i++)
		ok = json_array_append_new(list, source_row(ctl, &info, true)) == 0;
	if (!ok) {
		json_decref(list);
		return NULL;
	}
	return json_pack("{s:o}", "sources", list);
}

/* The counters move with every event, and an input device's events are keystrokes: read
 * live, they would time another user's typing to the millisecond. So members of
 * control.group get a reply made at most PUBLIC_EVERY_NS ago (as STATUS= is paced); root
 * gets it live. A new reference, or NULL. */
static json_t *public_view(struct ctl *ctl, struct snapshot *snap, json_t *(*make)(struct ctl *))
{
	/* On a fixed grid of PUBLIC_EVERY_NS, shared by every method: a client cannot choose
	 * the moment a snapshot is taken by when it asks, nor get two moments from two. */
	uint64_t tick = util_mono_ns() / PUBLIC_EVERY_NS;

	if (!snap->v || snap->at_ns != tick) {
		json_t *v = make(ctl);

		if (!v)
			return NULL;
		json_decref(snap->v);
		snap->v = v;
		snap->at_ns = tick;
	}
	return json_incref(snap->v);
}

/* ---- clients ---- */

static void client_free(struct client *c)
{
	struct ctl *ctl = c->ctl;

	if (c->prev)
		c->prev->next = c->next;
	else
		ctl->clients = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->uid == 0)
		ctl->n_root--;
	else
		ctl->n_clients--;
	event_free(c->deadline);
	if (c->hold)
		event_free(c->hold);
	bufferevent_free(c->bev);
	free(c);
}

static void arm_deadline(struct client *c)
{
	event_add(c->deadline, &c->ctl->timeout);
}

/* Steals msg. */
static void send_msg(struct client *c, json_t *msg)
{
	size_t len;
	char *buf = msg ? ctl_proto_encode(msg, &len) : NULL;

	json_decref(msg);
	if (!buf) {
		/* Our own bug: the client must not wait for a reply that will never come. */
		log_err("control: cannot encode a reply; closing the connection");
		c->closing = true;
		return;
	}
	bufferevent_write(c->bev, buf, len);
	free(buf);
}

/* The reply's parameters (the notices) in *params, or the error. */
static json_t *do_reload(void *arg, json_t **params)
{
	struct client *c = arg;
	struct config_errors errs = {0};
	json_t *err;
	int rc;

	log_notice("control: reload requested by %s", c->who);
	rc = c->ctl->ops->reload(c->ctl->ops_arg, &errs);
	err = ctl_reply_reload(rc, &errs, params);
	config_errors_free(&errs);
	return err;
}

static json_t *status_of(void *arg)
{
	struct client *c = arg;

	return c->uid == 0 ? get_status(c->ctl)
			   : public_view(c->ctl, &c->ctl->public_status, get_status);
}

static json_t *sources_of(void *arg)
{
	struct client *c = arg;

	return c->uid == 0 ? get_sources(c->ctl)
			   : public_view(c->ctl, &c->ctl->public_sources, get_sources);
}

static const struct ctl_reply_methods methods = {
	.status = status_of,
	.sources = sources_of,
	.reload = do_reload,
};

static void handle(struct client *c, const char *msg, size_t len)
{
	enum ctl_reply_verdict verdict;
	const char *method;
	json_t *reply = NULL;
	bool send = ctl_reply_request(msg, len, c->uid == 0, &methods, c, &reply, &verdict,
				      &method);

	if (verdict == CTL_REPLY_MALFORMED)
		log_debug("control: a request from uid %u was refused", (unsigned)c->uid);
	else if (verdict == CTL_REPLY_DENIED)
		log_limited(&c->ctl->rl_refused, LOG_NOTICE,
			    "control: %s refused to %s: only root may", method, c->who);
	if (send)
		send_msg(c, reply);
}

/* Answer every complete request in the input, as far as the output limit lets us. */
static void process_input(struct client *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	struct evbuffer *out = bufferevent_get_output(c->bev);

	while (!c->closing) {
		size_t len = evbuffer_get_length(in), n, msg_len;
		const char *buf;

		if (len == 0) {
			c->closing = c->eof;
			return;
		}
		if (evbuffer_get_length(out) >= OUTPUT_HIGH) {
			/* Its replies pile up: no more requests are read until they drain, and
			 * only the write timeout holds it now (a request deadline would drop it
			 * for a request we stopped reading, under the wrong reason). */
			c->suspended = true;
			bufferevent_disable(c->bev, EV_READ);
			event_del(c->deadline);
			return;
		}
		n = len < CTL_MAX_REQUEST + 1 ? len : CTL_MAX_REQUEST + 1;
		buf = (const char *)evbuffer_pullup(in, (ev_ssize_t)n);
		switch (ctl_proto_frame(buf, n, CTL_MAX_REQUEST, &msg_len)) {
		case CTL_FRAME_INCOMPLETE:
			c->closing = c->eof; /* a request cut short by the end of the stream */
			return;
		case CTL_FRAME_TOO_LARGE:
			log_limited(&c->ctl->rl_too_large, LOG_INFO,
				    "control: dropped a client (%s): request over %d bytes", c->who,
				    CTL_MAX_REQUEST);
			send_msg(c, ctl_proto_error_new(CTL_E_REQUEST_TOO_LARGE,
						  json_pack("{s:i}", "limit", CTL_MAX_REQUEST)));
			c->closing = true;
			bufferevent_disable(c->bev, EV_READ);
			return;
		case CTL_FRAME_COMPLETE:
			handle(c, buf, msg_len);
			evbuffer_drain(in, msg_len + 1);
			arm_deadline(c);
			break;
		}
	}
}

/* Free the client if it is done; true if it was freed. */
static bool finish(struct client *c)
{
	if (c->closing && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
		client_free(c);
		return true;
	}
	return false;
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;

	process_input(c);
	finish(c);
}

/* The output has drained. */
static void write_cb(struct bufferevent *bev, void *arg)
{
	struct client *c = arg;

	if (finish(c))
		return;
	if (c->suspended) {
		c->suspended = false;
		if (!c->eof)
			bufferevent_enable(bev, EV_READ);
		arm_deadline(c);
		process_input(c);
		finish(c);
	}
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct client *c = arg;

	if (what & BEV_EVENT_EOF) {
		/* It may have shut down only its sending side: answer what it asked first. */
		c->eof = true;
		if (!c->suspended)
			process_input(c);
		if (!finish(c) && c->closing)
			bufferevent_disable(bev, EV_READ);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT)
		log_limited(&c->ctl->rl_no_read, LOG_INFO,
			    "control: dropped a client (%s) that did not read its replies", c->who);
	else
		log_debug("control: client (uid %u) went away", (unsigned)c->uid);
	client_free(c);
}

static void deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;

	log_limited(&c->ctl->rl_no_request, LOG_INFO,
		    "control: dropped a client (%s): no complete request in %.1f s", c->who,
		    (double)c->ctl->timeout.tv_sec + (double)c->ctl->timeout.tv_usec / 1e6);
	client_free(c);
}

/* A client that keeps its slot by asking something now and then is still closed in the
 * end: the deadline is re-armed by every request, this is not. */
static void hold_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client *c = arg;

	log_limited(&c->ctl->rl_held, LOG_INFO,
		    "control: closed a connection (%s) open for %.0f s (control.max_hold)", c->who,
		    (double)c->ctl->max_hold.tv_sec + (double)c->ctl->max_hold.tv_usec / 1e6);
	client_free(c);
}

static void client_new(struct ctl *ctl, int fd, uid_t uid, const char *who)
{
	struct client *c = xcalloc(1, sizeof(*c));

	c->ctl = ctl;
	c->uid = uid;
	strlcopy(c->who, who, sizeof(c->who));
	c->bev = bufferevent_socket_new(ctl->base, fd, BEV_OPT_CLOSE_ON_FREE);
	c->deadline = evtimer_new(ctl->base, deadline_cb, c);
	if (uid != 0)
		c->hold = evtimer_new(ctl->base, hold_cb, c);
	if (!c->bev || !c->deadline || (uid != 0 && !c->hold)) {
		log_err("control: cannot serve a client: out of event resources");
		if (c->bev)
			bufferevent_free(c->bev);
		else
			close(fd);
		if (c->deadline)
			event_free(c->deadline);
		if (c->hold)
			event_free(c->hold);
		free(c);
		return;
	}
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	bufferevent_set_timeouts(c->bev, NULL, &ctl->timeout);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	arm_deadline(c);
	if (c->hold)
		event_add(c->hold, &ctl->max_hold);
	c->next = ctl->clients;
	if (c->next)
		c->next->prev = c;
	ctl->clients = c;
	if (uid == 0)
		ctl->n_root++;
	else
		ctl->n_clients++;
	log_debug("control: client connected (%s)", c->who);
}

/* One more than we serve: say why, without waiting for it, and close. */
static void refuse(struct ctl *ctl, int fd, const char *who, int limit, const char *whose)
{
	json_t *msg = ctl_proto_error_new(CTL_E_TOO_MANY_CLIENTS, json_pack("{s:i}", "limit", limit));
	size_t len;
	char *buf = ctl_proto_encode(msg, &len);

	json_decref(msg);
	if (buf && send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		log_debug("control: cannot tell a refused client why");
	free(buf);
	close(fd);
	log_limited(&ctl->rl_refused, LOG_WARNING,
		    "control: refused a connection (%s): %d %s are connected already", who,
		    limit, whose);
}

static size_t count_user(const struct ctl *ctl, uid_t uid)
{
	size_t n = 0;

	for (const struct client *c = ctl->clients; c; c = c->next)
		n += c->uid == uid;
	return n;
}

/* Who is asking decides which limit applies, so the peer is known before any refusal. The
 * collector has a PID namespace of its own, in which every client's pid reads 0 (the kernel's
 * answer for a process outside it): the log then names the uid alone, never a false pid. */
static void admit(struct ctl *ctl, int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	uid_t uid = (uid_t)-1; /* unknown: never root */
	char who[48] = "uid unknown";

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		uid = cred.uid;
		if (cred.pid > 0)
			snprintf(who, sizeof(who), "uid %u, pid %d", (unsigned)uid, (int)cred.pid);
		else
			snprintf(who, sizeof(who), "uid %u", (unsigned)uid);
	}
	if (uid == 0) {
		if (ctl->n_root >= CTL_MAX_ROOT_CLIENTS)
			refuse(ctl, fd, who, CTL_MAX_ROOT_CLIENTS, "of root's clients");
		else
			client_new(ctl, fd, uid, who);
	} else if (ctl->n_clients >= CTL_MAX_CLIENTS) {
		refuse(ctl, fd, who, CTL_MAX_CLIENTS, "clients");
	} else if (count_user(ctl, uid) >= CTL_MAX_CLIENTS_PER_USER) {
		refuse(ctl, fd, who, CTL_MAX_CLIENTS_PER_USER, "clients of this user");
	} else {
		client_new(ctl, fd, uid, who);
	}
}

static void resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctl *ctl = arg;

	event_add(ctl->listener, NULL);
}

static void accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct ctl *ctl = arg;

	/* A bounded number per wake-up, so that a crowd cannot starve the sources. */
	for (int k = 0; k < 16; k++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
				return;
			log_limited(&ctl->rl_accept, LOG_WARNING,
				    "control: cannot accept a connection: %s", strerror(errno));
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				/* Level-triggered: pause rather than spin until a descriptor frees. */
				struct timeval tv = {1, 0};

				event_del(ctl->listener);
				event_add(ctl->resume, &tv);
			}
			return;
		}
		admit(ctl, fd);
	}
}

/* ---- the socket ---- */

/* The socket's directory, made 0755 if it is missing (its parent must exist). */
static int make_dir(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	struct stat st;
	int rc = 0;

	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			log_err("control.socket %s: %s is not a directory", path, dir);
			rc = -1;
		}
	} else if (errno != ENOENT) {
		log_errno(LOG_ERR, "control.socket %s: cannot use %s", path, dir);
		rc = -1;
	} else if (mkdir(dir, 0755) < 0 || chmod(dir, 0755) < 0) {
		log_errno(LOG_ERR, "control.socket %s: cannot create %s", path, dir);
		rc = -1;
	} else {
		log_info("control: created %s", dir);
	}
	free(dir);
	return rc;
}

/* A socket file left by a daemon that is gone is removed; one that answers is another
 * daemon's, and anything else at the path is not ours to remove. */
static int clear_stale(const struct sockaddr_un *sa, const char *path)
{
	struct stat st;
	int fd, rc;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : (log_errno(LOG_ERR, "control.socket %s", path), -1);
	if (!S_ISSOCK(st.st_mode)) {
		log_err("control.socket %s: exists and is not a socket; not removing it", path);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_errno(LOG_ERR, "control: socket");
		return -1;
	}
	rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	if (rc == 0 || errno == EAGAIN) {
		log_err("control.socket %s: another process answers on it (is entropyd running "
			"already?)", path);
		close(fd);
		return -1;
	}
	if (errno != ECONNREFUSED) {
		log_errno(LOG_ERR, "control.socket %s: cannot tell whether it is in use", path);
		close(fd);
		return -1;
	}
	close(fd);
	if (unlink(path) < 0 && errno != ENOENT) {
		log_errno(LOG_ERR, "control.socket %s: cannot remove the stale socket", path);
		return -1;
	}
	log_info("control: removed a stale socket at %s", path);
	return 0;
}

/* Who can use the socket when it could not be given to control.group: say exactly that,
 * from the group it has (under systemd, the unit's Group=). */
static void say_who(const struct ctl *ctl, const char *why)
{
	struct stat st;
	struct group *gr;

	if (fstatat(AT_FDCWD, ctl->path, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_gid != 0) {
		gr = getgrgid(st.st_gid);
		if (gr)
			log_warn("control.group %s %s: the socket %s keeps group %s: root and the "
				 "members of %s can use it", ctl->group, why, ctl->path, gr->gr_name,
				 gr->gr_name);
		else
			log_warn("control.group %s %s: the socket %s keeps group %u: root and the "
				 "members of group %u can use it", ctl->group, why, ctl->path,
				 (unsigned)st.st_gid, (unsigned)st.st_gid);
	} else {
		log_warn("control.group %s %s: only root can use %s", ctl->group, why, ctl->path);
	}
}

static void set_group(const struct ctl *ctl)
{
	struct group gr, *found = NULL;
	char buf[4096], why[320];
	int err = getgrnam_r(ctl->group, &gr, buf, sizeof(buf), &found);
	struct stat st;

	if (!found) {
		if (err)
			snprintf(why, sizeof(why), "cannot be looked up (%s)", strerror(err));
		else
			snprintf(why, sizeof(why), "does not exist (create it: groupadd --system %s, "
				 "then restart entropyd)", ctl->group);
		say_who(ctl, why);
		return;
	}
	/* Under systemd the socket already has it (Group=), and the unit's system call filter
	 * forbids chown: nothing to do. */
	if (fstatat(AT_FDCWD, ctl->path, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_gid == gr.gr_gid)
		return;
	/* Not through a symlink someone swapped in for the socket. */
	if (fchownat(AT_FDCWD, ctl->path, (uid_t)-1, gr.gr_gid, AT_SYMLINK_NOFOLLOW) < 0) {
		snprintf(why, sizeof(why), "cannot be given %s (%s; under systemd, set the unit's "
			 "Group= to it too)", ctl->path, strerror(errno));
		say_who(ctl, why);
	}
}

static int open_socket(struct ctl *ctl)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	mode_t old;
	int rc;

	if (!strlcopy(sa.sun_path, ctl->path, sizeof(sa.sun_path))) {
		log_err("control.socket %s: longer than the %zu bytes a socket path may have",
			ctl->path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	if (make_dir(ctl->path) < 0 || clear_stale(&sa, ctl->path) < 0)
		return -1;
	ctl->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ctl->fd < 0) {
		log_errno(LOG_ERR, "control: socket");
		return -1;
	}
	/* Never, not even for an instant, a socket that others may connect to. */
	old = umask(0117);
	rc = bind(ctl->fd, (const struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0) {
		log_errno(LOG_ERR, "control.socket %s: cannot bind", ctl->path);
		return -1;
	}
	/* umask 0117 at bind made it 0660; lstat, so a symlink swapped in is refused. */
	if (lstat(ctl->path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		log_errno(LOG_ERR, "control.socket %s", ctl->path);
		unlink(ctl->path);
		return -1;
	}
	ctl->dev = st.st_dev;
	ctl->ino = st.st_ino;
	set_group(ctl);
	if (listen(ctl->fd, 128) < 0) {
		log_errno(LOG_ERR, "control.socket %s: cannot listen", ctl->path);
		unlink(ctl->path);
		return -1;
	}
	return 0;
}

struct ctl *ctl_start(struct event_base *base, const struct config *cfg,
		      const struct ctl_ops *ops, void *arg)
{
	struct ctl *ctl = xcalloc(1, sizeof(*ctl));

	ctl_proto_json_seed_daemon(); /* before any request is parsed: see ctl_proto.h */
	ctl->base = base;
	ctl->ops = ops;
	ctl->ops_arg = arg;
	ctl->cfg = cfg;
	ctl->fd = -1;
	ctl->path = xstrdup(cfg->control.socket);
	ctl->group = xstrdup(cfg->control.group);
	ctl->timeout = seconds_tv(cfg->control.timeout);
	ctl->max_hold = seconds_tv(cfg->control.max_hold);
	ctl->rl_refused = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	ctl->rl_accept = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	ctl->rl_too_large = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	ctl->rl_no_request = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	ctl->rl_no_read = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	ctl->rl_held = (struct log_ratelimit)LOG_RATELIMIT_INIT;
	/* Now, while /proc, /sys and /boot can still be read (the collector's sandbox closes
	 * them), and the kernel's state is as entropyd found it. */
	kernel_seed_detect(&ctl->seed, NULL);
	{
		struct ctl_status st;

		ops->status(arg, &st);
		ctl->ready_at_start = st.crng_ready;
		ctl->needed_at_start = st.crng_ready ? 0
				       : st.entropy_avail >= 0 && st.entropy_avail <= 256
					       ? 256 - st.entropy_avail
					       : -1;
	}
	if (open_socket(ctl) < 0)
		goto fail;
	ctl->listener = event_new(base, ctl->fd, EV_READ | EV_PERSIST, accept_cb, ctl);
	ctl->resume = evtimer_new(base, resume_cb, ctl);
	if (!ctl->listener || !ctl->resume || event_add(ctl->listener, NULL) < 0) {
		log_err("control: cannot watch %s", ctl->path);
		unlink(ctl->path);
		goto fail;
	}
	log_info("control: serving %s (Varlink, interface %s version %d)", ctl->path,
		 CTL_INTERFACE, CTL_PROTO_VERSION);
	return ctl;
fail:
	log_err("cannot create the control socket %s (the error is above): set "
		"control.socket to a path in a directory root can write", ctl->path);
	ctl->path[0] = '\0'; /* nothing of ours to remove */
	ctl_stop(ctl);
	return NULL;
}

void ctl_reconfigure(struct ctl *ctl, const struct config *cfg)
{
	if (!ctl)
		return;
	ctl->cfg = cfg;
	if (strcmp(cfg->control.socket, ctl->path) != 0)
		log_warn("control.socket changed to %s: takes effect at restart; serving %s until "
			 "then", cfg->control.socket, ctl->path);
	if (strcmp(cfg->control.group, ctl->group) != 0)
		log_warn("control.group changed to %s: takes effect at restart", cfg->control.group);
	ctl->timeout = seconds_tv(cfg->control.timeout);
	/* For connections made from now on: one open already keeps the limit it came with. */
	ctl->max_hold = seconds_tv(cfg->control.max_hold);
	for (struct client *c = ctl->clients; c; c = c->next)
		bufferevent_set_timeouts(c->bev, NULL, &ctl->timeout);
}

void ctl_stop(struct ctl *ctl)
{
	struct stat st;

	if (!ctl)
		return;
	while (ctl->clients)
		client_free(ctl->clients);
	if (ctl->listener)
		event_free(ctl->listener);
	if (ctl->resume)
		event_free(ctl->resume);
	if (ctl->fd >= 0)
		close(ctl->fd);
	/* Remove the socket only if it is still the one we made. */
	if (ctl->path[0] && lstat(ctl->path, &st) == 0 && st.st_dev == ctl->dev &&
	    st.st_ino == ctl->ino)
		unlink(ctl->path);
	json_decref(ctl->public_status.v);
	json_decref(ctl->public_sources.v);
	free(ctl->path);
	free(ctl->group);
	free(ctl);
}
