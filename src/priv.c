/* priv: the collector's side of the privileged process's protocol (priv_wire.h): each call
 * sends one fixed-size request and waits for its reply, and a descriptor where one was asked
 * for. The call sites are the same whether or not the privileged process exists: without one
 * (unit tests, the steps before the fork) each call makes the privileged step itself
 * (priv_ops.c). A privileged process that goes or breaks the protocol ends the collector.
 * The two processes, and what each may do, are described in priv_start.c. */
#include "autoconf.h"

#include "priv.h"
#include "priv_dispatch.h"
#include "priv_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

static int priv_fd = -1; /* the collector's end; -1: no privileged process */
static pid_t priv_pid;
static bool capturing;
static unsigned capture_ifindex; /* the interface of the capture being opened */
static bool refused; /* the last reply was EACCES: see priv_refused() */
static struct event *watch_ev;

bool priv_refused(void)
{
	return priv_fd >= 0 && refused;
}

bool priv_active(void)
{
	return priv_fd >= 0;
}

pid_t priv_main_pid(void)
{
	return priv_active() ? priv_pid : getpid();
}

static _Noreturn void lost(const char *why)
{
	log_err("the privileged process %s: the collector exits", why);
	exit(EXIT_LOST);
}

void priv_connect(int fd, pid_t pid)
{
	priv_fd = fd;
	priv_pid = pid;
}

void priv_check_peer(void)
{
	char c;

	/* In its own PID namespace the parent is process 0: the socketpair says. */
	if (priv_active() && ((getppid() != priv_pid && getppid() != 0) ||
			      recv(priv_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0))
		lost("is gone");
}

/* Send a request, wait for its reply (and the descriptor, where fd is not NULL). The
 * reply's errno. */
static int call(union priv_req *req, enum priv_type type, struct priv_reply *rep, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = rep, .iov_len = sizeof(*rep)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm;
	ssize_t n;

	req->h.version = PRIV_VERSION;
	req->h.type = (uint16_t)type;
	req->h.size = (uint32_t)priv_dispatch_size(type);
	do
		n = send(priv_fd, req, req->h.size, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)req->h.size)
		lost("is gone");
	do
		n = recvmsg(priv_fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		lost("is gone");
	if (n != (ssize_t)sizeof(*rep) || (mh.msg_flags & MSG_TRUNC) ||
	    rep->h.version != PRIV_VERSION || rep->h.type != type || rep->h.size != sizeof(*rep))
		lost("broke the protocol");
	refused = rep->err == EACCES;
	if (fd)
		*fd = -1;
	/* A descriptor the kernel could not install here (RLIMIT_NOFILE) is dropped. */
	if ((mh.msg_flags & MSG_CTRUNC) && fd && !rep->err)
		rep->err = EMFILE;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		int got;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len != CMSG_LEN(sizeof(int)))
			lost("broke the protocol");
		memcpy(&got, CMSG_DATA(cm), sizeof(got));
		if (fd && *fd < 0)
			*fd = got;
		else
			close(got);
	}
	return rep->err;
}

int priv_add_entropy(int fd, const uint8_t *data, size_t len, int bits, int *credited)
{
	union priv_req req;
	struct priv_reply rep;
	int e;

	*credited = 0;
	if (len > PRIV_ENTROPY_BYTES || bits < 0 || (size_t)bits > 8 * len) {
		errno = EINVAL;
		return -1;
	}
	if (!priv_active()) {
		if (priv_ops_add_entropy(fd, data, len, bits) < 0)
			return -1;
		*credited = bits;
		return 0;
	}
	memset(&req, 0, sizeof(req));
	req.entropy.bits = bits;
	req.entropy.len = (uint32_t)len;
	memcpy(req.entropy.data, data, len);
	e = call(&req, PRIV_ADD_ENTROPY, &rep, NULL);
	util_wipe(&req, sizeof(req));
	if (e) {
		errno = e;
		return -1;
	}
	*credited = rep.value;
	return 0;
}

int priv_reseed(int fd)
{
	union priv_req req;
	struct priv_reply rep;
	int e;

	if (!priv_active())
		return priv_ops_reseed(fd);
	memset(&req, 0, sizeof(req));
	e = call(&req, PRIV_RESEED, &rep, NULL);
	errno = e;
	return e ? -1 : 0;
}

/* A request answered with a descriptor: the descriptor, or -1 with errno set (the reply's
 * errno, or EIO if none came). */
static int call_fd(union priv_req *req, enum priv_type type)
{
	struct priv_reply rep;
	int fd, e = call(req, type, &rep, &fd);

	if (e || fd < 0) {
		if (fd >= 0)
			close(fd);
		errno = e ? e : EIO;
		return -1;
	}
	return fd;
}

int priv_perf_open(unsigned cpu, enum priv_perf what, unsigned flags)
{
	union priv_req req;

	if (!priv_active())
		return priv_ops_perf_open(cpu, what, flags);
	memset(&req, 0, sizeof(req));
	req.perf.cpu = cpu;
	req.perf.what = what;
	req.perf.flags = flags;
	return call_fd(&req, PRIV_PERF_OPEN);
}

static void blkt_req(union priv_req *req, const char *name, unsigned major, unsigned minor)
{
	memset(req, 0, sizeof(*req));
	strlcopy(req->blkt.name, name, sizeof(req->blkt.name));
	req->blkt.major = major;
	req->blkt.minor = minor;
}

int priv_blktrace_start(const char *name, unsigned major, unsigned minor, char *trace_name,
			int *stage)
{
	union priv_req req;
	struct priv_reply rep;
	int e;

	if (!priv_active())
		return priv_ops_blktrace_start(name, major, minor, trace_name, stage);
	if (strlen(name) >= PRIV_DISK_NAME) {
		*stage = 0;
		return ENAMETOOLONG;
	}
	blkt_req(&req, name, major, minor);
	e = call(&req, PRIV_BLKTRACE_START, &rep, NULL);
	*stage = rep.value;
	rep.name[sizeof(rep.name) - 1] = '\0';
	strlcopy(trace_name, rep.name, PRIV_DISK_NAME);
	return e;
}

int priv_blktrace_stop(const char *name, unsigned major, unsigned minor, bool teardown,
		       bool *opened)
{
	union priv_req req;
	struct priv_reply rep;
	int e;

	if (!priv_active())
		return priv_ops_blktrace_stop(name, major, minor, teardown, opened);
	blkt_req(&req, name, major, minor);
	req.blkt.teardown = teardown;
	e = call(&req, PRIV_BLKTRACE_STOP, &rep, NULL);
	*opened = rep.value == 1;
	return e;
}

int priv_input_open(const char *watch, const char *name)
{
	union priv_req req;

	if (!priv_active())
		return priv_ops_input_open(watch, name, NULL);
	if (strlen(name) >= PRIV_INPUT_NAME) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(&req, 0, sizeof(req));
	strlcopy(req.input.name, name, sizeof(req.input.name));
	return call_fd(&req, PRIV_INPUT_OPEN);
}

int priv_relay_open(const char *debugfs, const char *trace, unsigned cpu)
{
	union priv_req req;

	if (!priv_active())
		return priv_ops_relay_open(debugfs, trace, cpu);
	if (strlen(trace) >= PRIV_DISK_NAME) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memset(&req, 0, sizeof(req));
	strlcopy(req.relay.name, trace, sizeof(req.relay.name));
	req.relay.cpu = cpu;
	return call_fd(&req, PRIV_RELAY_OPEN);
}

void priv_capture_begin(const char *ifname)
{
	capturing = true;
	capture_ifindex = if_nametoindex(ifname);
}

void priv_capture_end(void)
{
	capturing = false;
}

int priv_packet_socket(int domain, int type, int protocol)
{
	union priv_req req;
	int fd, e, flags = type & (SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (!capturing || domain != AF_PACKET || !priv_active())
		return (int)syscall(SYS_socket, domain, type, protocol);
	if (!capture_ifindex) { /* if_nametoindex failed: gone, or renamed */
		errno = ENODEV;
		return -1;
	}
	memset(&req, 0, sizeof(req));
	req.packet.type = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	req.packet.protocol = protocol;
	req.packet.ifindex = capture_ifindex;
	fd = call_fd(&req, PRIV_PACKET_SOCKET);
	if (fd < 0)
		return -1;
	if ((flags & SOCK_NONBLOCK) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int priv_packet_filter(int fd, unsigned ifindex, enum net_direction direction,
		       const char *filter, uint32_t keep, char *err, size_t size)
{
	union priv_req req;
	struct priv_reply rep;
	int e;

	/* The privileged process reads its own configuration, and acts on its own descriptor:
	 * fd, direction and filter are this process's view, not sent. */
	(void)fd;
	(void)direction;
	(void)filter;
	if (!priv_active()) {
		snprintf(err, size, "no privileged process to set it");
		errno = EPERM;
		return -1;
	}
	memset(&req, 0, sizeof(req));
	req.packet_filter.ifindex = ifindex;
	req.packet_filter.keep = keep;
	e = call(&req, PRIV_PACKET_FILTER, &rep, NULL);
	if (!e)
		return 0;
	snprintf(err, size, "%s", e == EACCES ? PRIV_REFUSED_HINT
				: e == EPERM ? "the socket's filter is locked (the kernel let the "
					       "privileged process load no eBPF program) and cannot "
					       "change"
				: e == EINVAL ? "the privileged process could not set the socket filter "
						"(it says why in its log)"
					      : strerror(e));
	errno = e;
	return -1;
}

int priv_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	uint8_t frame[64];
	int bound = priv_active() ? priv_ops_packet_bound(fd, addr, len) : -1;

	if (bound < 0)
		return (int)syscall(SYS_bind, fd, addr, len);
	/* libpcap's second bind, once its ring is set up: what came before went to the socket's
	 * queue, which it never reads and which would keep the socket readable for ever. */
	if (bound > 0)
		for (int i = 0; i < 100000; i++)
			if (recv(fd, frame, sizeof(frame), MSG_DONTWAIT | MSG_TRUNC) < 0)
				break;
	return 0;
}

void priv_service_notify(enum priv_notify what, const char *text)
{
	union priv_req req;
	struct priv_reply rep;

	if (!priv_active()) {
		priv_ops_notify(what, text);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.notify.what = what;
	if (what == PRIV_N_STATUS && text)
		util_printable(req.notify.text, sizeof(req.notify.text), text);
	(void)call(&req, PRIV_NOTIFY, &rep, NULL);
}

int priv_reload(void)
{
	union priv_req req;
	struct priv_reply rep;
	int e;

	if (!priv_active())
		return 0;
	memset(&req, 0, sizeof(req));
	e = call(&req, PRIV_RELOAD, &rep, NULL);
	errno = e;
	return e ? -1 : 0;
}

static void watch_cb(evutil_socket_t fd, short what, void *arg)
{
	char c;
	ssize_t n = recv((int)fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	lost(n == 0 ? "is gone" : "sent what was not asked for");
}

void priv_watch(struct event_base *base)
{
	if (!priv_active())
		return;
	watch_ev = event_new(base, priv_fd, EV_READ | EV_PERSIST, watch_cb, NULL);
	if (watch_ev)
		event_add(watch_ev, NULL);
}

void priv_close(void)
{
	if (watch_ev)
		event_free(watch_ev);
	watch_ev = NULL;
	if (priv_fd >= 0)
		close(priv_fd);
	priv_fd = -1;
}
