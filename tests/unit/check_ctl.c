/* check_ctl: the control socket and its clients (ctl.c), served by a real event loop in this
 * process on a real unix socket in the run's directory: requests pipelined and cut, malformed
 * and too large ones, clients that vanish, stop sending or send nothing, the limits of
 * clients (root's, and one user's, from a child that became nobody), who may reload, and
 * the socket's own life (its directory and mode, a stale socket, another daemon's, a file in
 * its place). What a reply holds is check_ctl_reply's; the daemon's own socket is t_ctl's. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "ctl.h"
#include "ctl_proto.h"
#include "log.h"
#include "testutil.h"
#include "util.h"

#define TURNS 1000 /* 10 s of an idle loop at most, for any one thing to happen */

static struct event_base *base;
static struct config *cfg;
static struct ctl *ctl;
static char dir[256];

/* ---- the daemon's side: what the socket asks of it ---- */

static unsigned status_calls, reload_calls;
static int reload_rc;

static void op_status(void *arg, struct ctl_status *out)
{
	(void)arg;
	memset(out, 0, sizeof(*out));
	out->uptime_ns = 42 * NS_PER_SEC;
	out->feed_mode = "auto";
	out->feed_phase = "mix";
	out->sink = "dry-run";
	out->kernel_major = 6;
	out->kernel_minor = 1;
	out->kernel_semantics = "until-ready";
	out->kernel_evidence = "version";
	out->kernel_reason = "6.1: credit counts until the CRNG is ready";
	out->crng_ready = true;
	out->entropy_avail = 256;
	out->ready_after_s = -1;
	out->feeds = status_calls;
	out->config = "/etc/entropyd.conf";
	status_calls++;
}

static int op_reload(void *arg, struct config_errors *errs)
{
	(void)arg;
	reload_calls++;
	if (reload_rc < 0) {
		errs->msg = xcalloc(1, sizeof(*errs->msg));
		errs->msg[0] = xstrdup("entropyd.conf:3: feed.mode: \"sometimes\" is not a mode");
		errs->n = 1;
	}
	return reload_rc;
}

static const struct ctl_ops ops = {.status = op_status, .reload = op_reload};

/* ---- what the log says ---- */

static char said[8192];

static void said_tee(int prio, const char *msg, void *arg)
{
	(void)prio;
	(void)arg;
	if (strlen(said) + strlen(msg) + 2 < sizeof(said)) {
		strcat(said, msg);
		strcat(said, "\n");
	}
}

static void setup(void)
{
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	log_open(true, 2);
	log_tee(said_tee, NULL);
	said[0] = 0;
	status_calls = reload_calls = 0;
	reload_rc = 0;
	cfg = config_defaults();
	tu_mkdtemp(dir, sizeof(dir), "%s/ctl.XXXXXX", tu_tmpdir());
	free(cfg->control.socket);
	/* A directory ctl_start makes. */
	cfg->control.socket = xasprintf("%s/run/io.entropyd", dir);
	free(cfg->control.group);
	cfg->control.group = xstrdup("no-such-group-here");
	cfg->control.timeout = 30;
	ctl = NULL;
}

static void teardown(void)
{
	ctl_stop(ctl);
	log_tee(NULL, NULL);
	config_free(cfg);
	event_base_free(base);
}

static void start(void)
{
	ctl = ctl_start(base, cfg, &ops, NULL);
	ck_assert_msg(ctl != NULL, "ctl_start: %s", said);
}

/* ---- a client ---- */

struct cl {
	int fd;
	char buf[256 * 1024];
	size_t len;
	bool eof;
};

static int connect_to(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	strlcopy(sa.sun_path, path, sizeof(sa.sun_path));
	ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "connect %s: %s", path,
		      strerror(errno));
	return fd;
}

static struct cl *cl_new(void)
{
	struct cl *c = xcalloc(1, sizeof(*c));

	c->fd = connect_to(cfg->control.socket);
	return c;
}

static struct cl *cl_on(int fd)
{
	struct cl *c = xcalloc(1, sizeof(*c));

	c->fd = fd;
	return c;
}

static void cl_free(struct cl *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

static void cl_send(struct cl *c, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t k = send(c->fd, b, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EAGAIN) {
			tu_turn(base);
			continue;
		}
		ck_assert_msg(k > 0, "send: %s", strerror(errno));
		b += k;
		n -= (size_t)k;
	}
}

/* A call, NUL-framed. */
static void cl_call(struct cl *c, const char *method, const char *params)
{
	char *m = params ? xasprintf("{\"method\":\"%s\",\"parameters\":%s}", method, params)
			 : xasprintf("{\"method\":\"%s\"}", method);

	cl_send(c, m, strlen(m) + 1);
	free(m);
}

/* Reads what there is; true once a whole message (or the end) has come. */
static bool cl_ready(struct cl *c)
{
	for (;;) {
		ssize_t k;

		if (memchr(c->buf, 0, c->len) || c->eof)
			return true;
		ck_assert_uint_lt(c->len, sizeof(c->buf));
		k = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
		if (k > 0) {
			c->len += (size_t)k;
		} else if (k == 0 || errno == ECONNRESET) {
			c->eof = true;
		} else {
			ck_assert_msg(errno == EAGAIN, "recv: %s", strerror(errno));
			return false;
		}
	}
}

/* The next message, parsed (the loop turned until it came); NULL at the end. */
static json_t *cl_reply(struct cl *c)
{
	char *nul;
	json_t *v;
	json_error_t e;
	size_t n;

	TU_PUMP_UNTIL(base, TURNS, cl_ready(c));
	nul = memchr(c->buf, 0, c->len);
	if (!nul)
		return NULL;
	n = (size_t)(nul - c->buf);
	v = json_loadb(c->buf, n, 0, &e);
	ck_assert_msg(v != NULL, "a reply that is not JSON: %s", e.text);
	memmove(c->buf, nul + 1, c->len - n - 1);
	c->len -= n + 1;
	return v;
}

/* The connection is closed by the daemon, with nothing more said. */
static void cl_closed(struct cl *c)
{
	json_t *v = cl_reply(c);

	ck_assert_msg(v == NULL, "a message where the end was expected");
	ck_assert(c->eof);
}

static const char *error_of(json_t *v)
{
	return json_string_value(json_object_get(v, "error"));
}

static void assert_error(json_t *v, const char *want)
{
	ck_assert_msg(v != NULL, "no reply where %s was expected", want);
	ck_assert_msg(error_of(v) && !strcmp(error_of(v), want), "reply %s, want %s",
		      error_of(v) ? error_of(v) : "(no error)", want);
}

/* A GetStatus reply as root sees it: live, from the daemon's status. */
static void assert_status(json_t *v, uint64_t feeds)
{
	json_t *p;

	ck_assert_msg(v != NULL && !error_of(v), "no status: %s", v ? error_of(v) : "(closed)");
	p = json_object_get(v, "parameters");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(p, "daemon"),
							   "feed_mode")),
			 "auto");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(p, "totals"),
							    "feeds")),
			 (json_int_t)feeds);
	json_decref(v);
}

/* ---- requests ---- */

/* Two calls in one write, a third cut in three pieces with the loop turning between them:
 * three replies, in order, each made when asked (root's are live). */
START_TEST(test_pipelined_and_cut)
{
	const char two[] = "{\"method\":\"io.entropyd.GetStatus\"}\0"
			   "{\"method\":\"io.entropyd.GetStatus\"}";
	const char *third = "{\"method\":\"io.entropyd.GetStatus\"}";
	struct cl *c;

	start();
	c = cl_new();
	cl_send(c, two, sizeof(two));
	assert_status(cl_reply(c), 1); /* the first call at ctl_start: ready_at_start */
	assert_status(cl_reply(c), 2);
	cl_send(c, third, 5);
	for (int i = 0; i < 20; i++)
		tu_turn(base);
	ck_assert_msg(!cl_ready(c), "a reply to part of a request");
	cl_send(c, third + 5, 20);
	tu_turn(base);
	cl_send(c, third + 25, strlen(third) - 25 + 1);
	assert_status(cl_reply(c), 3);
	cl_free(c);
}
END_TEST

/* Malformed requests get an error that says why, and the connection goes on. */
START_TEST(test_malformed)
{
	static const struct {
		const char *req, *error;
	} bad[] = {
		{"not json", CTL_E_INVALID_REQUEST},
		{"[1,2]", CTL_E_INVALID_REQUEST},
		{"{\"method\":42}", CTL_E_INVALID_REQUEST},
		{"{\"method\":\"io.entropyd.Shutdown\"}", CTL_E_METHOD_NOT_FOUND},
		{"{\"method\":\"com.example.Thing\"}", CTL_E_INTERFACE_NOT_FOUND},
		{"{\"method\":\"io.entropyd.GetStatus\",\"parameters\":{\"x\":1}}",
		 CTL_E_INVALID_PARAMETER},
	};
	struct cl *c;

	start();
	c = cl_new();
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		json_t *v;

		cl_send(c, bad[i].req, strlen(bad[i].req) + 1);
		v = cl_reply(c);
		assert_error(v, bad[i].error);
		json_decref(v);
	}
	cl_call(c, "io.entropyd.GetStatus", NULL);
	assert_status(cl_reply(c), 1);
	cl_free(c);
}
END_TEST

/* More than CTL_MAX_REQUEST bytes without a terminator: RequestTooLarge with the limit, then
 * the connection is closed; the daemon goes on serving others. */
START_TEST(test_too_large)
{
	size_t n = CTL_MAX_REQUEST + 1;
	char *big = xmalloc(n);
	struct cl *c, *d;
	json_t *v;

	start();
	c = cl_new();
	memset(big, ' ', n);
	big[0] = '{';
	cl_send(c, big, n);
	v = cl_reply(c);
	assert_error(v, CTL_E_REQUEST_TOO_LARGE);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(v, "parameters"),
							    "limit")),
			 CTL_MAX_REQUEST);
	json_decref(v);
	cl_closed(c);
	ck_assert_msg(strstr(said, "request over 65536 bytes"), "%s", said);
	d = cl_new();
	cl_call(d, "io.entropyd.GetStatus", NULL);
	assert_status(cl_reply(d), 1);
	cl_free(c);
	cl_free(d);
	free(big);
}
END_TEST

/* Clients that go away: before a request, in the middle of one, after asking without
 * reading the reply. Each is freed with its descriptor (the daemon's count of descriptors
 * comes back), and the daemon goes on serving. */
START_TEST(test_vanish)
{
	int before;
	struct cl *c;

	start();
	before = tu_count_fds();
	for (int round = 0; round < 3; round++) {
		c = cl_new();
		TU_PUMP_UNTIL(base, TURNS, strstr(said, "client connected"));
		said[0] = 0;
		if (round == 1)
			cl_send(c, "{\"method\":\"io.ent", 17);
		if (round == 2)
			cl_call(c, "io.entropyd.GetStatus", NULL);
		for (int i = 0; i < 5; i++)
			tu_turn(base);
		close(c->fd);
		c->fd = -1;
		cl_free(c);
		TU_PUMP_UNTIL(base, TURNS, tu_count_fds() == before);
	}
	c = cl_new();
	cl_call(c, "io.entropyd.GetStatus", NULL);
	assert_status(cl_reply(c), 2);
	cl_free(c);
}
END_TEST

/* A client that shuts down its sending side after its request still gets the reply; then
 * the connection is closed. */
START_TEST(test_shut_wr)
{
	struct cl *c;

	start();
	c = cl_new();
	cl_call(c, "io.entropyd.GetStatus", NULL);
	cl_call(c, "io.entropyd.GetStatus", NULL);
	ck_assert_int_eq(shutdown(c->fd, SHUT_WR), 0);
	assert_status(cl_reply(c), 1);
	assert_status(cl_reply(c), 2);
	cl_closed(c);
	cl_free(c);
}
END_TEST

/* control.timeout: a client with no complete request by then is dropped, and so is one
 * whose request stops half-way; ctl_reconfigure's new timeout holds for the next. */
START_TEST(test_deadline)
{
	struct cl *idle, *half, *busy;

	cfg->control.timeout = 0.3;
	start();
	idle = cl_new();
	half = cl_new();
	busy = cl_new();
	cl_send(half, "{\"method\"", 9);
	/* The busy one asks again and again: each request gives it a new deadline. */
	for (int i = 0; i < 3; i++) {
		cl_call(busy, "io.entropyd.GetStatus", NULL);
		json_decref(cl_reply(busy));
	}
	cl_closed(idle);
	cl_closed(half);
	ck_assert_msg(strstr(said, "no complete request in 0.3 s"), "%s", said);
	cl_free(idle);
	cl_free(half);
	cl_free(busy);

	/* A longer timeout from a reload: a client that waits past the old one is served. */
	cfg->control.timeout = 60;
	ctl_reconfigure(ctl, cfg);
	idle = cl_new();
	for (int i = 0; i < 60; i++) /* 0.6 s at least: past 0.3 s */
		tu_turn(base);
	cl_call(idle, "io.entropyd.GetStatus", NULL);
	json_t *v = cl_reply(idle);
	ck_assert_msg(v && !error_of(v), "not served after the timeout grew");
	json_decref(v);
	cl_free(idle);
}
END_TEST

/* Reload: the daemon's reload runs once a call; its errors come back as ConfigInvalid, each
 * named. */
START_TEST(test_reload)
{
	struct cl *c;
	json_t *v;
	char *msg;

	start();
	c = cl_new();
	cl_call(c, "io.entropyd.Reload", NULL);
	v = cl_reply(c);
	ck_assert_msg(v && !error_of(v), "reload refused: %s", v ? error_of(v) : "(closed)");
	json_decref(v);
	ck_assert_uint_eq(reload_calls, 1);
	ck_assert_msg(strstr(said, "reload requested by uid 0, pid"), "%s", said);
	reload_rc = -1;
	cl_call(c, "io.entropyd.Reload", NULL);
	v = cl_reply(c);
	assert_error(v, CTL_E_CONFIG_INVALID);
	msg = json_dumps(json_object_get(v, "parameters"), 0);
	ck_assert_msg(strstr(msg, "\\\"sometimes\\\" is not a mode"), "%s", msg);
	free(msg);
	json_decref(v);
	ck_assert_uint_eq(reload_calls, 2);
	cl_free(c);
}
END_TEST

/* ---- the limits ---- */

/* c is told TooManyClients with limit, and closed; the log says why. */
static void assert_refused(struct cl *c, int limit, const char *says)
{
	json_t *v = cl_reply(c);

	assert_error(v, CTL_E_TOO_MANY_CLIENTS);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(v, "parameters"),
							    "limit")),
			 limit);
	json_decref(v);
	cl_closed(c);
	ck_assert_msg(strstr(said, says), "not \"%s\" in: %s", says, said);
}

/* Root's connections: CTL_MAX_ROOT_CLIENTS, and the next is told TooManyClients with the
 * limit and closed; once one goes, a new one is served again. */
START_TEST(test_root_limit)
{
	struct cl *c[CTL_MAX_ROOT_CLIENTS + 1];
	json_t *v;

	start();
	for (int i = 0; i < CTL_MAX_ROOT_CLIENTS; i++) {
		c[i] = cl_new();
		cl_call(c[i], "io.entropyd.GetStatus", NULL);
		json_decref(cl_reply(c[i])); /* served: counted */
	}
	c[CTL_MAX_ROOT_CLIENTS] = cl_new();
	assert_refused(c[CTL_MAX_ROOT_CLIENTS], CTL_MAX_ROOT_CLIENTS,
		       "64 of root's clients are connected already");
	cl_free(c[CTL_MAX_ROOT_CLIENTS]);
	/* One goes: room for one more. */
	int fds = tu_count_fds();

	cl_free(c[0]);
	TU_PUMP_UNTIL(base, TURNS, tu_count_fds() == fds - 2); /* its end and ours */
	c[0] = cl_new();
	cl_call(c[0], "io.entropyd.GetStatus", NULL);
	v = cl_reply(c[0]);
	ck_assert_msg(v && !error_of(v), "not served after one left: %s",
		      v ? error_of(v) : "(closed)");
	json_decref(v);
	for (int i = 0; i < CTL_MAX_ROOT_CLIENTS; i++)
		cl_free(c[i]);
}
END_TEST

#define NOBODY 65534

/* n connections made by a child that became uid (and gid) who, handed back over a socketpair
 * (SCM_RIGHTS): the daemon sees that user's credentials on them (SO_PEERCRED is the
 * connecting process's). */
static void connect_as(unsigned who, int *fds, int n)
{
	int sp[2], status;
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sp[0]);
		if (setgroups(0, NULL) < 0 || setresgid(who, who, who) < 0 ||
		    setresuid(who, who, who) < 0)
			_exit(2);
		for (int i = 0; i < n; i++) {
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			char cbuf[CMSG_SPACE(sizeof(int))] = {0};
			char x = 'x';
			struct iovec iov = {.iov_base = &x, .iov_len = 1};
			struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
					    .msg_controllen = sizeof(cbuf)};
			struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
			int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

			strlcopy(sa.sun_path, cfg->control.socket, sizeof(sa.sun_path));
			if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
				_exit(3);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &fd, sizeof(int));
			if (sendmsg(sp[1], &mh, 0) != 1)
				_exit(4);
			close(fd);
		}
		_exit(0);
	}
	close(sp[1]);
	for (int i = 0; i < n; i++) {
		char cbuf[CMSG_SPACE(sizeof(int))], x;
		struct iovec iov = {.iov_base = &x, .iov_len = 1};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
				    .msg_controllen = sizeof(cbuf)};

		struct cmsghdr *cm;

		ck_assert_int_eq(recvmsg(sp[0], &mh, 0), 1);
		cm = CMSG_FIRSTHDR(&mh);
		ck_assert(cm != NULL && cm->cmsg_type == SCM_RIGHTS);
		memcpy(&fds[i], CMSG_DATA(cm), sizeof(int));
	}
	close(sp[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child as uid %u: %#x",
		      who, status);
}

static bool am_root(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: connecting as another user needs root (setresuid)\n");
		return false;
	}
	return true;
}

/* One user other than root: CTL_MAX_CLIENTS_PER_USER connections, the next refused with that
 * limit; such a user may not reload, and sees the status as a snapshot. */
START_TEST(test_user_limit)
{
	int fds[CTL_MAX_CLIENTS_PER_USER + 1];
	struct cl *c[CTL_MAX_CLIENTS_PER_USER + 1];
	json_t *v;

	if (!am_root())
		return;
	start();
	/* Users other than root reach it through control.group; here, through its mode. */
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(cfg->control.socket, 0666), 0);
	connect_as(NOBODY, fds, CTL_MAX_CLIENTS_PER_USER + 1);
	for (int i = 0; i < CTL_MAX_CLIENTS_PER_USER; i++) {
		c[i] = cl_on(fds[i]);
		cl_call(c[i], "io.entropyd.GetStatus", NULL);
		v = cl_reply(c[i]);
		ck_assert_msg(v && !error_of(v), "client %d of nobody not served", i);
		json_decref(v);
	}
	c[CTL_MAX_CLIENTS_PER_USER] = cl_on(fds[CTL_MAX_CLIENTS_PER_USER]);
	assert_refused(c[CTL_MAX_CLIENTS_PER_USER], CTL_MAX_CLIENTS_PER_USER,
		       "16 clients of this user are connected already");
	/* Root is still served: its connections are counted apart. */
	struct cl *r = cl_new();

	cl_call(r, "io.entropyd.GetStatus", NULL);
	json_decref(cl_reply(r));
	cl_free(r);
	/* Not root: no reload. */
	cl_call(c[0], "io.entropyd.Reload", NULL);
	v = cl_reply(c[0]);
	assert_error(v, CTL_E_PERMISSION_DENIED);
	json_decref(v);
	ck_assert_uint_eq(reload_calls, 0);
	ck_assert_msg(strstr(said, "refused to uid 65534"), "%s", said);
	for (int i = 0; i <= CTL_MAX_CLIENTS_PER_USER; i++)
		cl_free(c[i]);
}
END_TEST

/* Users other than root: CTL_MAX_CLIENTS connections in all, however many users share them
 * (each within its own limit), and the next is refused with that limit. */
START_TEST(test_total_limit)
{
	enum { USERS = CTL_MAX_CLIENTS / CTL_MAX_CLIENTS_PER_USER };
	struct cl *c[CTL_MAX_CLIENTS + 1];
	int fds[CTL_MAX_CLIENTS_PER_USER];
	json_t *v;

	if (!am_root())
		return;
	start();
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(cfg->control.socket, 0666), 0);
	for (int u = 0; u < USERS; u++) {
		connect_as(NOBODY - (unsigned)u, fds, CTL_MAX_CLIENTS_PER_USER);
		for (int i = 0; i < CTL_MAX_CLIENTS_PER_USER; i++) {
			struct cl *x = c[u * CTL_MAX_CLIENTS_PER_USER + i] = cl_on(fds[i]);

			cl_call(x, "io.entropyd.GetStatus", NULL);
			v = cl_reply(x);
			ck_assert_msg(v && !error_of(v), "client %d of uid %u not served", i,
				      NOBODY - (unsigned)u);
			json_decref(v);
		}
	}
	connect_as(NOBODY - USERS, fds, 1);
	c[CTL_MAX_CLIENTS] = cl_on(fds[0]);
	assert_refused(c[CTL_MAX_CLIENTS], CTL_MAX_CLIENTS, "64 clients are connected already");
	for (int i = 0; i <= CTL_MAX_CLIENTS; i++)
		cl_free(c[i]);
}
END_TEST

/* control.max_hold: a user other than root is closed after it however often it asks (each
 * request moves the request deadline, not this); root is not. */
START_TEST(test_max_hold)
{
	struct cl *user, *root;
	int fd;

	if (!am_root())
		return;
	cfg->control.max_hold = 1;
	start();
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(cfg->control.socket, 0666), 0);
	connect_as(NOBODY, &fd, 1);
	user = cl_on(fd);
	root = cl_new();
	for (int i = 0; !user->eof; i++) {
		json_t *v;

		ck_assert_msg(i < 200, "a user's connection held past control.max_hold");
		cl_call(root, "io.entropyd.GetStatus", NULL);
		json_decref(cl_reply(root));
		if (send(user->fd, "{\"method\":\"io.entropyd.GetStatus\"}", 35, MSG_NOSIGNAL) != 35)
			break; /* closed already */
		v = cl_reply(user);
		json_decref(v);
		for (int k = 0; k < 2; k++)
			tu_turn(base);
	}
	cl_closed(user);
	ck_assert_msg(strstr(said, "open for 1 s (control.max_hold)"), "%s", said);
	/* Root's stays. */
	cl_call(root, "io.entropyd.GetStatus", NULL);
	json_t *v = cl_reply(root);

	ck_assert_msg(v && !error_of(v), "root's connection was closed too");
	json_decref(v);
	cl_free(user);
	cl_free(root);
}
END_TEST

/* ---- the socket ---- */

/* Made in a directory it creates (0755), mode 0660; removed by ctl_stop. */
START_TEST(test_socket_made_and_removed)
{
	struct stat st;
	char *run = xasprintf("%s/run", dir);

	start();
	ck_assert_int_eq(stat(run, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0755);
	ck_assert_int_eq(lstat(cfg->control.socket, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0660);
	/* The group could not be given: the log says who can use it. */
	ck_assert_msg(strstr(said, "control.group no-such-group-here does not exist"), "%s", said);
	ctl_stop(ctl);
	ctl = NULL;
	ck_assert_int_eq(lstat(cfg->control.socket, &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	ctl_stop(NULL);
	free(run);
}
END_TEST

/* Another daemon's socket (one that answers) is left alone and the start fails; a stale one
 * (nothing answers) is replaced; anything else at the path is refused and kept. */
START_TEST(test_socket_others)
{
	struct ctl *first;
	struct stat st, st2;
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	start();
	first = ctl;
	ck_assert_int_eq(lstat(cfg->control.socket, &st), 0);
	ck_assert_ptr_null(ctl_start(base, cfg, &ops, NULL));
	ck_assert_msg(strstr(said, "another process answers on it"), "%s", said);
	ck_assert_int_eq(lstat(cfg->control.socket, &st2), 0);
	ck_assert_uint_eq(st.st_ino, st2.st_ino);
	ctl_stop(first);
	ctl = NULL;

	/* Stale: bound, never listened on. */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strlcopy(sa.sun_path, cfg->control.socket, sizeof(sa.sun_path));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	start();
	ck_assert_msg(strstr(said, "removed a stale socket"), "%s", said);
	ctl_stop(ctl);
	ctl = NULL;

	/* A file: not ours. */
	fd = open(cfg->control.socket, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	said[0] = 0;
	ck_assert_ptr_null(ctl_start(base, cfg, &ops, NULL));
	ck_assert_msg(strstr(said, "exists and is not a socket; not removing it"), "%s", said);
	ck_assert_int_eq(lstat(cfg->control.socket, &st), 0);
	ck_assert(S_ISREG(st.st_mode));

	/* A path longer than a socket's may be. */
	free(cfg->control.socket);
	cfg->control.socket = xasprintf("%s/%0200d", dir, 7);
	said[0] = 0;
	ck_assert_ptr_null(ctl_start(base, cfg, &ops, NULL));
	ck_assert_msg(strstr(said, "longer than the 107 bytes a socket path may have"), "%s", said);
}
END_TEST

static Suite *ctl_suite(void)
{
	Suite *s = suite_create("ctl");
	TCase *req = tcase_create("requests");
	TCase *lim = tcase_create("limits");
	TCase *sock = tcase_create("socket");

	tcase_add_checked_fixture(req, setup, teardown);
	tcase_add_test(req, test_pipelined_and_cut);
	tcase_add_test(req, test_malformed);
	tcase_add_test(req, test_too_large);
	tcase_add_test(req, test_vanish);
	tcase_add_test(req, test_shut_wr);
	tcase_add_test(req, test_deadline);
	tcase_add_test(req, test_reload);
	suite_add_tcase(s, req);
	tcase_add_checked_fixture(lim, setup, teardown);
	tcase_add_test(lim, test_root_limit);
	tcase_add_test(lim, test_user_limit);
	tcase_add_test(lim, test_total_limit);
	tcase_add_test(lim, test_max_hold);
	suite_add_tcase(s, lim);
	tcase_add_checked_fixture(sock, setup, teardown);
	tcase_add_test(sock, test_socket_made_and_removed);
	tcase_add_test(sock, test_socket_others);
	suite_add_tcase(s, sock);
	return s;
}

int main(void)
{
	return tu_run_suite(ctl_suite());
}
