/* priv: the privileged process and the collector's side of its protocol.
 *
 * After start-up entropyd is two processes. The parent, the service's main process, stays
 * root with CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL and does nothing but answer the messages
 * below and pass signals on; the child, the collector, runs as the system user of
 * collector.user with no capability and does everything else: it reads events, estimates, tests, applies the policy, batches, serves the control socket.
 * It is never uid 0: without its user (collector.user) entropyd does not start.
 * Everything the outside controls (packets, trace records, input frames, control requests)
 * is parsed in the collector; the privileged process reads only fixed-size, versioned
 * messages of a few types (priv.h), each checked field by field (priv_serve.c); it
 * refuses (EACCES) what its configuration does not allow, and closes the connection (then
 * tears down what it set up and exits) on anything malformed. This
 * file is the collector's side, the privileged steps both sides share, and the fork. The
 * models are OpenBSD ntpd's parent/engine split and chrony's privops.c: the call sites are
 * the same whether or not the privileged process exists.
 *
 * What a collector that lies can get from it: RNDADDENTROPY credit up to a ceiling the
 * privileged process derives from the configuration it reads itself and from what it can
 * vouch for (ceiling_rate in priv_serve.c); perf events of the block tracepoint on CPUs
 * that exist; blktrace on whole disks of /sys/block that the configuration selects and the
 * relay files of those traces; packet sockets bound to interfaces the configuration
 * selects, one that hears per interface, and only what its filter keeps (priv_filter.c); input nodes of the watched directory (input
 * character devices, FIFOs and files root owns); sd_notify messages from a fixed set
 * (STATUS with printable text only). */
#include "autoconf.h"

#include "priv.h"
#include "priv_ops.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/random.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "log.h"
#include "priv_drop.h"
#include "priv_filter.h"
#include "priv_sandbox.h"
#include "util.h"

/* ---- the collector's side ---- */

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
	req->h.size = (uint32_t)priv_ops_req_size[type];
	do
		n = send(priv_fd, req, priv_ops_req_size[type], MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)priv_ops_req_size[type])
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
		return ioctl(fd, RNDRESEEDCRNG);
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

	if (!priv_active()) {
		char path[256];

		snprintf(path, sizeof(path), "%s/block/%s/trace%u", debugfs, trace, cpu);
		return open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	}
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

	if (!priv_active()) {
		if (priv_filter_attach(fd, ifindex, direction, filter, keep, err, size) == 0)
			return 0;
		errno = EINVAL;
		return -1;
	}
	memset(&req, 0, sizeof(req));
	req.packet_filter.ifindex = ifindex;
	req.packet_filter.keep = keep;
	e = call(&req, PRIV_PACKET_FILTER, &rep, NULL);
	if (!e)
		return 0;
	snprintf(err, size, "%s", e == EACCES ? PRIV_REFUSED_HINT
				: e == EINVAL ? "the privileged process could not set the socket filter "
						"(it says why in its log)"
					      : strerror(e));
	errno = e;
	return -1;
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

/* Add path (a copy in buf), or its directory (file: true), to v. */
static void view_add(struct sandbox_view *v, char *buf, size_t size, const char *path,
		     bool file, bool writable)
{
	char *slash;

	if (!path || path[0] != '/' || v->n >= SANDBOX_MAX_PATHS)
		return;
	snprintf(buf, size, "%s", path);
	if (file && (slash = strrchr(buf, '/')) != NULL)
		*(slash == buf ? slash + 1 : slash) = '\0';
	v->paths[v->n].path = buf;
	v->paths[v->n].writable = writable;
	v->paths[v->n].flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
	v->n++;
}

int priv_collector_lockdown(const struct config *cfg, const char *config_path)
{
	const char *record_dir = cfg->record.dir;
	bool bounding;
	/* What the collector still reads after its start: the configuration (reloads, the
	 * time zone), sysfs (disks, interfaces, input devices), /dev (input hotplug,
	 * /dev/log, /dev/null), /run (the journal's and the service manager's sockets); the
	 * directories of the control socket, the configuration, input.watch (and its parent,
	 * watched for it to appear) and network.file; it writes only beneath record.dir
	 * (Landlock says the same). */
	struct sandbox_view view = {
		.paths = {{"/etc", false, MS_NOSUID | MS_NODEV | MS_NOEXEC},
			  {"/sys", false, MS_NOSUID | MS_NODEV | MS_NOEXEC},
			  {"/dev", false, MS_NOSUID | MS_NOEXEC},
			  {"/run", false, MS_NOSUID | MS_NODEV | MS_NOEXEC}},
		.n = 4,
	};
	char conf_dir[PATH_MAX], ctl_dir[PATH_MAX], rec_dir[PATH_MAX], watch_dir[PATH_MAX];
	char net_dir[PATH_MAX];

	if (priv_active()) {
		view_add(&view, conf_dir, sizeof(conf_dir), config_path, true, false);
		view_add(&view, ctl_dir, sizeof(ctl_dir), cfg->control.socket, true, false);
		view_add(&view, watch_dir, sizeof(watch_dir), cfg->input.watch, true, false);
		view_add(&view, net_dir, sizeof(net_dir), cfg->network.file, true, false);
		view_add(&view, rec_dir, sizeof(rec_dir), record_dir, false, true);
		if (priv_sandbox_namespaces(&view) < 0)
			return -1;
	}

	/* Everything that needs root is open by now: the control socket, the configuration's
	 * files, the privileged process's socketpair. */
	if (priv_drop_collector(cfg->collector.user, &bounding) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		log_errno(LOG_ERR, "cannot set no_new_privs on the collector");
		return -1;
	}
	if (priv_active()) {
		/* After the change of uid, which clears the parent-death signal; and the parent
		 * may have gone before it was set. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
			log_errno(LOG_ERR, "cannot tie the collector to the privileged process");
			return -1;
		}
		/* In its own PID namespace the parent is process 0: the socketpair says. */
		if ((getppid() != priv_pid && getppid() != 0) ||
		    recv(priv_fd, conf_dir, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
			lost("is gone");
	}
	priv_sandbox_walls_user(cfg->collector.user, (unsigned)getuid(), (unsigned)getgid(), bounding,
			   true);
	if (priv_sandbox_landlock(record_dir) < 0 || priv_sandbox_collector() < 0)
		return -1;
	log_info("collector: user %s, no supplementary groups, every capability dropped%s, no "
		 "new privileges, system call filter",
		 cfg->collector.user,
		 bounding ? " (bounding set included)"
			  : " (the bounding set stays as given: shrinking it needs CAP_SETPCAP)");
	priv_sandbox_walls_log();
	return 0;
}

int priv_start(struct config *cfg, const char *config_path, int rnd_fd, int ready_fd,
	       int *status)
{
	int sv[2];
	sigset_t set, old;
	pid_t pid, parent;
	int pidns;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		log_errno(LOG_ERR, "cannot make the privileged process's socket");
		return -1;
	}
	/* The signals the privileged process passes on wait until it is ready for them. */
	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	parent = getpid();
	pidns = priv_sandbox_pidns_begin();
	pid = fork();
	priv_sandbox_pidns_end(pidns, pid == 0);
	if (pid < 0) {
		log_errno(LOG_ERR, "cannot start the collector");
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(sv[0]);
		if (rnd_fd >= 0)
			close(rnd_fd);
		priv_fd = sv[1];
		priv_pid = parent;
		return 0;
	}
	close(sv[1]);
	if (ready_fd >= 0)
		close(ready_fd);
	priv_drop();
	log_info("privileged process %d: the collector is process %d", (int)getpid(), (int)pid);
	*status = priv_serve(sv[0], cfg, config_path, rnd_fd, pid);
	return 1;
}
