/* privsep: the privileged process and the collector's side of its protocol.
 *
 * After start-up entropyd is two processes. The parent, the service's main process, keeps
 * CAP_SYS_ADMIN and CAP_NET_RAW and does nothing but answer the messages below and pass
 * signals on; the child, the collector, holds no capability and does everything else: it
 * reads events, estimates, tests, applies the policy, batches, serves the control socket.
 * Everything the outside controls (packets, trace records, input frames, control requests)
 * is parsed in the collector; the privileged process reads only fixed-size, versioned
 * messages of a few types, each checked field by field, and closes the connection (then
 * tears down what it set up and exits) on anything else. The models are OpenBSD ntpd's
 * parent/engine split and chrony's privops.c: the call sites are the same whether or not
 * the privileged process exists.
 *
 * What a collector that lies can get from it: RNDADDENTROPY credit up to a ceiling the
 * privileged process derives from the configuration it reads itself and from what it can
 * vouch for (see ceiling_rate); perf events of the block tracepoint on CPUs that exist;
 * blktrace on whole disks of /sys/block that the configuration selects; packet sockets
 * while the network class is enabled; sd_notify messages from a fixed set (STATUS with
 * printable text only). */
#include "autoconf.h"

#include "privsep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/random.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "block_blktrace.h"
#include "block_disks.h"
#include "block_tp.h"
#include "daemon.h"
#include "log.h"
#include "notify.h"
#include "policy.h"
#include "privs.h"
#include "sandbox.h"
#include "source_block.h"
#include "util.h"

#define MAX_DISKS 256   /* traces the privileged process keeps at once */
#define MAX_COUNT 65536 /* instances counted in a directory, at most */
#define RATE_EVERY_NS NS_PER_SEC

static const size_t req_size[PRIV_TYPE_MAX + 1] = {
	[PRIV_ADD_ENTROPY] = sizeof(struct req_entropy),
	[PRIV_RESEED] = sizeof(struct priv_hdr),
	[PRIV_PERF_OPEN] = sizeof(struct req_perf),
	[PRIV_BLKTRACE_START] = sizeof(struct req_blkt),
	[PRIV_BLKTRACE_STOP] = sizeof(struct req_blkt),
	[PRIV_PACKET_SOCKET] = sizeof(struct req_packet),
	[PRIV_NOTIFY] = sizeof(struct req_notify),
	[PRIV_RELOAD] = sizeof(struct priv_hdr),
};

/* ---- the privileged steps themselves (here, or in the privileged process) ---- */

/* struct rand_pool_info with room for one batch. */
struct rand_req {
	int entropy_count;
	int buf_size;
	uint32_t buf[PRIV_ENTROPY_BYTES / sizeof(uint32_t)];
};

static int local_add_entropy(int fd, const uint8_t *data, size_t len, int bits)
{
	struct rand_req req;
	int rc;

	req.entropy_count = bits;
	req.buf_size = (int)len;
	memcpy(req.buf, data, len);
	rc = ioctl(fd, RNDADDENTROPY, &req);
	wipe(&req, sizeof(req));
	return rc;
}

/* A perf event, the tracepoint's id read from tracefs once (by whoever opens it). */
static struct log_ratelimit rl_perf = LOG_RATELIMIT_INIT;

static int local_perf_open(unsigned cpu, unsigned what, unsigned flags)
{
	static unsigned id;
	char err[256];

	if (what != PRIV_PERF_OWNER && !id && !block_tp_tracepoint_id(&id, err, sizeof(err))) {
		log_limited(&rl_perf, LOG_WARNING, "block: %s", err);
		errno = ENOENT;
		return -1;
	}
	return block_tp_perf_open(id, cpu, (int)what, flags & PRIV_PERF_LOST);
}

/* ---- the collector's side ---- */

static int priv_fd = -1; /* the collector's end; -1: no privileged process */
static pid_t priv_pid;
static bool capturing;
static struct event *watch_ev;

bool priv_active(void)
{
	return priv_fd >= 0;
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
	req->h.size = (uint32_t)req_size[type];
	do
		n = send(priv_fd, req, req_size[type], MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)req_size[type])
		lost("is gone");
	do
		n = recvmsg(priv_fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		lost("is gone");
	if (n != (ssize_t)sizeof(*rep) || (mh.msg_flags & MSG_TRUNC) ||
	    rep->h.version != PRIV_VERSION || rep->h.type != type || rep->h.size != sizeof(*rep))
		lost("broke the protocol");
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
		if (local_add_entropy(fd, data, len, bits) < 0)
			return -1;
		*credited = bits;
		return 0;
	}
	memset(&req, 0, sizeof(req));
	req.entropy.bits = bits;
	req.entropy.len = (uint32_t)len;
	memcpy(req.entropy.data, data, len);
	e = call(&req, PRIV_ADD_ENTROPY, &rep, NULL);
	wipe(&req, sizeof(req));
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

int priv_perf_open(unsigned cpu, enum priv_perf what, unsigned flags)
{
	union priv_req req;
	struct priv_reply rep;
	int fd, e;

	if (!priv_active())
		return local_perf_open(cpu, what, flags);
	memset(&req, 0, sizeof(req));
	req.perf.cpu = cpu;
	req.perf.what = what;
	req.perf.flags = flags;
	e = call(&req, PRIV_PERF_OPEN, &rep, &fd);
	if (e || fd < 0) {
		if (fd >= 0)
			close(fd);
		errno = e ? e : EIO;
		return -1;
	}
	return fd;
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
		return blkt_dev_start(name, major, minor, trace_name, stage);
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
		return blkt_dev_stop(name, major, minor, teardown, opened);
	blkt_req(&req, name, major, minor);
	req.blkt.teardown = teardown;
	e = call(&req, PRIV_BLKTRACE_STOP, &rep, NULL);
	*opened = rep.value == 1;
	return e;
}

void priv_capture_begin(void)
{
	capturing = true;
}

void priv_capture_end(void)
{
	capturing = false;
}

int priv_socket(int domain, int type, int protocol)
{
	union priv_req req;
	struct priv_reply rep;
	int fd, e, flags = type & (SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (!capturing || domain != AF_PACKET || !priv_active())
		return (int)syscall(SYS_socket, domain, type, protocol);
	memset(&req, 0, sizeof(req));
	req.packet.type = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	req.packet.protocol = protocol;
	e = call(&req, PRIV_PACKET_SOCKET, &rep, &fd);
	if (e || fd < 0) {
		if (fd >= 0)
			close(fd);
		errno = e ? e : EIO;
		return -1;
	}
	if ((flags & SOCK_NONBLOCK) && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

void priv_notify(enum priv_notify what, const char *text)
{
	union priv_req req;
	struct priv_reply rep;

	if (!priv_active()) {
		notify_forward(what, text);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.notify.what = what;
	if (what == PRIV_N_STATUS && text)
		printable(req.notify.text, sizeof(req.notify.text), text);
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

int priv_collector_lockdown(void)
{
	bool bounding;

	if (privs_drop_all(&bounding) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		log_errno(LOG_ERR, "cannot set no_new_privs on the collector");
		return -1;
	}
	if (priv_active()) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
			log_errno(LOG_ERR, "cannot tie the collector to the privileged process");
			return -1;
		}
		if (getppid() != priv_pid)
			lost("is gone");
	}
	if (sandbox_collector() < 0)
		return -1;
	log_info("collector: every capability dropped%s, no new privileges, system call filter",
		 bounding ? " (bounding set included)"
			  : " (the bounding set stays as given: shrinking it needs CAP_SETPCAP)");
	return 0;
}

/* ---- the privileged process ---- */

struct traced {
	char name[PRIV_DISK_NAME];
	unsigned major, minor;
	bool used;
};

struct priv {
	int sock;
	struct config *cfg;
	const char *config_path;
	int rnd_fd;
	pid_t child;
	struct traced disks[MAX_DISKS];
	unsigned packet_sockets; /* handed out since start */
	/* The ceiling: a token bucket of bits. */
	double rate;   /* bits per second */
	double depth;  /* bits */
	double tokens; /* starts empty */
	uint64_t refill_ns, rate_ns;
	uint64_t asked, credited, clipped; /* bits */
	uint64_t clip_said;
	char why[160]; /* why the connection was closed */
};

static struct log_ratelimit rl_clip = LOG_RATELIMIT_INIT;

/* What one instance under this rule can be credited per second at most. */
static double rule_rate(const struct policy_rule *r)
{
	switch (r->mode) {
	case MODE_TRUSTED:
		return r->cap_bits_per_second;
	case MODE_REDUCED:
		return r->scale * r->cap_bits_per_second;
	default:
		return 0;
	}
}

/* The most any one instance of a class can be credited per second: the class rule or any
 * of its overrides, whichever allows more. */
static double class_rate(const struct config *cfg, enum src_class cls)
{
	const struct class_policy *cp = &cfg->policy[cls];
	double best = rule_rate(&cp->rule);

	for (size_t i = 0; i < cp->n_overrides; i++) {
		const struct policy_override *o = &cp->overrides[i];
		struct policy_rule r = cp->rule;

		if (o->set & RULE_SET_MODE)
			r.mode = o->rule.mode;
		if (o->set & RULE_SET_SCALE)
			r.scale = o->rule.scale;
		if (o->set & RULE_SET_CAP_SECOND)
			r.cap_bits_per_second = o->rule.cap_bits_per_second;
		best = fmax(best, rule_rate(&r));
	}
	return best;
}

/* Is any instance of the class opened at all (the class rule or an override not
 * "disabled")? */
static bool class_enabled(const struct config *cfg, enum src_class cls)
{
	const struct class_policy *cp = &cfg->policy[cls];

	if (cp->rule.mode != MODE_DISABLED)
		return true;
	for (size_t i = 0; i < cp->n_overrides; i++)
		if ((cp->overrides[i].set & RULE_SET_MODE) &&
		    cp->overrides[i].rule.mode != MODE_DISABLED)
			return true;
	return false;
}

/* Does the configuration select whole disk NAME of /sys/block, with major:minor, for
 * blktrace or the tracepoint? */
static bool disk_selected(const struct config *cfg, const char *name,
			  struct block_disk_info *info)
{
	struct policy_rule r;

	if (!block_disk_probe("", name, info) || !block_selects(&cfg->block.devices, name, info))
		return false;
	r = policy_resolve(cfg, CLASS_BLOCK, name);
	return r.mode != MODE_DISABLED;
}

/* Entries of dir (not . and ..) that pass want. */
static unsigned count_dir(const char *dir, bool (*want)(const struct config *, const char *),
			  const struct config *cfg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < MAX_COUNT)
		if (e->d_name[0] != '.' && (!want || want(cfg, e->d_name)))
			n++;
	closedir(d);
	return n;
}

static bool want_input(const struct config *cfg, const char *name)
{
	return strncmp(name, "event", 5) == 0;
}

static bool want_disk(const struct config *cfg, const char *name)
{
	struct block_disk_info info;

	return disk_selected(cfg, name, &info);
}

/* The ceiling's rate: per class, the most one instance may be credited per second (the
 * largest cap_bits_per_second of the class rule and its overrides, times the rule's weight:
 * 1 trusted, scale reduced, 0 otherwise) times the instances this process can vouch for:
 * input, the event* nodes in the watched directory; block, the whole disks of /sys/block
 * the configuration selects; network, the packet sockets handed out (at most the
 * interfaces of /sys/class/net), plus one for a configured savefile. */
static double ceiling_rate(struct priv *p)
{
	const struct config *cfg = p->cfg;
	unsigned n_in = 0, n_blk = 0, n_net = 0;

	if (class_enabled(cfg, CLASS_INPUT))
		n_in = count_dir(cfg->input.watch, want_input, cfg);
	if (class_enabled(cfg, CLASS_BLOCK))
		n_blk = count_dir(SYS_BLOCK, want_disk, cfg);
	if (class_enabled(cfg, CLASS_NETWORK)) {
		unsigned ifs = count_dir("/sys/class/net", NULL, cfg);

		n_net = p->packet_sockets < ifs ? p->packet_sockets : ifs;
		if (cfg->network.file && cfg->network.file[0])
			n_net++;
	}
	return class_rate(cfg, CLASS_INPUT) * n_in + class_rate(cfg, CLASS_BLOCK) * n_blk +
	       class_rate(cfg, CLASS_NETWORK) * n_net;
}

static void ceiling_update(struct priv *p, bool recount)
{
	uint64_t now = mono_ns();

	p->tokens = fmin(p->depth, p->tokens + p->rate * (double)(now - p->refill_ns) / 1e9);
	p->refill_ns = now;
	if (recount || now - p->rate_ns >= RATE_EVERY_NS) {
		double rate = ceiling_rate(p);

		/* The collector's own per-instance caps start with one second's worth: so does
		 * each instance here, when it is first counted. */
		if (rate > p->rate)
			p->tokens += rate - p->rate;
		p->rate = rate;
		p->depth = p->rate > 0 ? fmax(PRIV_DEPTH_S * p->rate, PRIV_DEPTH_MIN) : 0;
		p->tokens = fmin(p->tokens, p->depth);
		p->rate_ns = now;
	}
}

static bool closes(struct priv *p, const char *fmt, ...) PRINTF_LIKE(2, 3);
static bool closes(struct priv *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->why, sizeof(p->why), fmt, ap);
	va_end(ap);
	return false;
}

static bool text_ok(const char *s, size_t size, bool may_have_text)
{
	size_t len = strnlen(s, size);

	if (len == size || (len && !may_have_text))
		return false;
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	for (size_t i = len; i < size; i++) /* nothing hides after the NUL */
		if (s[i])
			return false;
	return true;
}

static bool disk_name_ok(const char *s)
{
	size_t len = strnlen(s, PRIV_DISK_NAME);

	if (len == 0 || len == PRIV_DISK_NAME || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-!",
			    s[i]))
			return false;
	for (size_t i = len; i < PRIV_DISK_NAME; i++)
		if (s[i])
			return false;
	return true;
}

static struct traced *find_disk(struct priv *p, const struct req_blkt *r)
{
	for (size_t i = 0; i < MAX_DISKS; i++)
		if (p->disks[i].used && p->disks[i].major == r->major &&
		    p->disks[i].minor == r->minor && strcmp(p->disks[i].name, r->name) == 0)
			return &p->disks[i];
	return NULL;
}

static bool do_entropy(struct priv *p, const struct req_entropy *r, struct priv_reply *rep)
{
	int bits;

	if (r->len > PRIV_ENTROPY_BYTES || r->bits < 0 || (uint32_t)r->bits > 8 * r->len)
		return closes(p, "ADD_ENTROPY with %u bytes and %d bits", r->len, r->bits);
	ceiling_update(p, false);
	bits = r->bits;
	if (bits > floor(p->tokens)) {
		bits = (int)floor(p->tokens);
		p->clipped += (uint64_t)(r->bits - bits);
		log_limited(&rl_clip, LOG_WARNING,
			    "credit ceiling: %d of %d bits asked were not credited (the data was "
			    "mixed); %llu bits clipped so far; the ceiling is %.1f bits/s, "
			    "at most %.0f at once",
			    r->bits - bits, r->bits, (unsigned long long)p->clipped, p->rate,
			    p->depth);
	}
	p->asked += (uint64_t)r->bits;
	if (p->rnd_fd < 0) {
		rep->err = EBADF;
		return true;
	}
	if (local_add_entropy(p->rnd_fd, r->data, r->len, bits) < 0) {
		rep->err = errno;
		return true;
	}
	p->tokens -= bits;
	p->credited += (uint64_t)bits;
	rep->value = bits;
	return true;
}

static bool do_perf(struct priv *p, const struct req_perf *r, struct priv_reply *rep, int *fd)
{
	int ncpus = get_nprocs_conf();

	if (r->cpu >= (unsigned)(ncpus > 0 ? ncpus : 1) || r->what > PRIV_PERF_WAKER ||
	    (r->flags & ~PRIV_PERF_LOST))
		return closes(p, "PERF_OPEN of kind %u on CPU %u (flags %#x); the system has %d "
				 "CPUs",
			      r->what, r->cpu, r->flags, ncpus);
	if (!class_enabled(p->cfg, CLASS_BLOCK) || p->cfg->block.backend == BACKEND_BLKTRACE)
		return closes(p, "PERF_OPEN, but the configuration has no block tracepoint");
	*fd = local_perf_open(r->cpu, r->what, r->flags);
	if (*fd < 0)
		rep->err = errno ? errno : EIO;
	return true;
}

static bool do_blkt(struct priv *p, enum priv_type type, const struct req_blkt *r,
		    struct priv_reply *rep)
{
	struct block_disk_info info;
	struct traced *t;
	bool opened;
	int stage;

	if (!disk_name_ok(r->name) || r->teardown > (type == PRIV_BLKTRACE_STOP ? 1u : 0u))
		return closes(p, "BLKTRACE request with a malformed disk name or flag");
	t = find_disk(p, r);
	if (type == PRIV_BLKTRACE_STOP) {
		if (!t)
			return closes(p, "BLKTRACE_STOP on %s, which it did not start", r->name);
		rep->err = blkt_dev_stop(t->name, t->major, t->minor, r->teardown, &opened);
		rep->value = opened;
		if (!opened || (r->teardown && !rep->err))
			t->used = false;
		return true;
	}
	if (p->cfg->block.backend == BACKEND_TRACEPOINT ||
	    !disk_selected(p->cfg, r->name, &info) || info.major != r->major ||
	    info.minor != r->minor)
		return closes(p, "BLKTRACE_START on %s (%u:%u), which the configuration does not "
				 "select for blktrace",
			      r->name, r->major, r->minor);
	if (!t) {
		for (size_t i = 0; i < MAX_DISKS && !t; i++)
			if (!p->disks[i].used)
				t = &p->disks[i];
		if (!t) {
			rep->err = ENOSPC;
			return true;
		}
	}
	rep->err = blkt_dev_start(r->name, r->major, r->minor, rep->name, &stage);
	rep->value = stage;
	if (!rep->err) {
		memcpy(t->name, r->name, sizeof(t->name));
		t->major = r->major;
		t->minor = r->minor;
		t->used = true;
		ceiling_update(p, true);
	}
	return true;
}

static bool do_packet(struct priv *p, const struct req_packet *r, struct priv_reply *rep,
		      int *fd)
{
	if ((r->type != SOCK_RAW && r->type != SOCK_DGRAM) || r->protocol != 0)
		return closes(p, "PACKET_SOCKET of type %d, protocol %d", r->type, r->protocol);
	if (!class_enabled(p->cfg, CLASS_NETWORK) || (p->cfg->network.interfaces.n == 0))
		return closes(p, "PACKET_SOCKET, but the configuration captures on no interface");
	*fd = (int)syscall(SYS_socket, AF_PACKET, r->type | SOCK_CLOEXEC, 0);
	if (*fd < 0) {
		rep->err = errno;
		return true;
	}
	p->packet_sockets++;
	ceiling_update(p, true);
	return true;
}

static bool do_notify(struct priv *p, const struct req_notify *r)
{
	if (r->what > PRIV_N_STATUS || !text_ok(r->text, sizeof(r->text), r->what == PRIV_N_STATUS))
		return closes(p, "NOTIFY of kind %u with text not allowed", r->what);
	notify_forward(r->what, r->text);
	return true;
}

static void do_reload(struct priv *p, struct priv_reply *rep)
{
	struct config_errors errs = {0};
	struct config *next = config_load(p->config_path, &errs);

	if (!next) {
		/* The collector read it a moment ago: someone changed it in between. */
		log_warn("privileged process: %s has %zu errors now: the ceiling and what may be "
			 "opened stay as they were",
			 p->config_path, errs.n);
		rep->err = EINVAL;
	} else {
		config_free(p->cfg);
		p->cfg = next;
		ceiling_update(p, true);
	}
	config_errors_free(&errs);
}

/* Check and answer one request; false (with the reason in p->why) closes the connection. */
static bool answer(struct priv *p, union priv_req *req, size_t n)
{
	struct priv_reply rep;
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &rep, .iov_len = sizeof(rep)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	int fd = -1;
	bool ok;

	if (n < sizeof(req->h))
		return closes(p, "the collector sent a message of %zu bytes", n);
	if (req->h.version != PRIV_VERSION)
		return closes(p, "the collector sent a message of version %u (this is %u)", req->h.version,
			      PRIV_VERSION);
	if (req->h.type < 1 || req->h.type > PRIV_TYPE_MAX)
		return closes(p, "the collector sent a message of unknown type %u", req->h.type);
	if (req->h.size != n || n != req_size[req->h.type])
		return closes(p, "the collector sent a message of type %u and %zu bytes (%u said)", req->h.type, n,
			      req->h.size);
	memset(&rep, 0, sizeof(rep));
	switch ((enum priv_type)req->h.type) {
	case PRIV_ADD_ENTROPY:
		ok = do_entropy(p, &req->entropy, &rep);
		break;
	case PRIV_RESEED:
		ok = true;
		if (p->rnd_fd < 0 || ioctl(p->rnd_fd, RNDRESEEDCRNG) < 0)
			rep.err = p->rnd_fd < 0 ? EBADF : errno;
		break;
	case PRIV_PERF_OPEN:
		ok = do_perf(p, &req->perf, &rep, &fd);
		break;
	case PRIV_BLKTRACE_START:
	case PRIV_BLKTRACE_STOP:
		ok = do_blkt(p, req->h.type, &req->blkt, &rep);
		break;
	case PRIV_PACKET_SOCKET:
		ok = do_packet(p, &req->packet, &rep, &fd);
		break;
	case PRIV_NOTIFY:
		ok = do_notify(p, &req->notify);
		break;
	case PRIV_RELOAD:
		ok = true;
		do_reload(p, &rep);
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		return false;
	rep.h.version = PRIV_VERSION;
	rep.h.type = req->h.type;
	rep.h.size = sizeof(rep);
	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = sizeof(cbuf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	}
	ok = sendmsg(p->sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(rep);
	if (fd >= 0)
		close(fd);
	if (!ok)
		return closes(p, "the reply could not be sent: %s", strerror(errno));
	return true;
}

/* One request: false at the end (EOF, with why empty) or on a broken one. */
static bool serve_one(struct priv *p)
{
	union priv_req req;
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = {.iov_base = &req, .iov_len = sizeof(req)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	ssize_t n;
	bool ok;

	n = recvmsg(p->sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n < 0)
		return closes(p, "reading from the collector failed: %s", strerror(errno));
	if (n == 0)
		return false;
	if (mh.msg_controllen > 0) {
		/* Descriptors go one way only; close what was sent and stop. */
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
				for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				     i++) {
					int fd;

					memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(fd));
					close(fd);
				}
		return closes(p, "the collector sent a message with ancillary data");
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return closes(p, "the collector sent a message longer than any request");
	ok = answer(p, &req, (size_t)n);
	wipe(&req, sizeof(req));
	return ok;
}

/* Tear down the blktraces this process set up. */
static void teardown(struct priv *p)
{
	for (size_t i = 0; i < MAX_DISKS; i++) {
		struct traced *t = &p->disks[i];
		bool opened;
		int e;

		if (!t->used)
			continue;
		e = blkt_dev_stop(t->name, t->major, t->minor, true, &opened);
		if (!opened)
			log_info("block/%s: gone, and its trace with it", t->name);
		else if (e && e != EINVAL && e != ENXIO)
			log_warn("block/%s: BLKTRACETEARDOWN failed: %s", t->name, strerror(e));
		else
			log_info("block/%s: blktrace torn down by the privileged process", t->name);
		t->used = false;
	}
}

static int signals_fd(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGHUP);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGUSR1);
	return signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
}

int priv_serve(int sock, struct config *cfg, const char *config_path, int rnd_fd, pid_t child)
{
	struct priv *p = xcalloc(1, sizeof(*p));
	struct pollfd pfd[2];
	sigset_t set;
	int sfd = -1, status = EXIT_OK, ws;
	bool broken = false;

	p->sock = sock;
	p->cfg = cfg;
	p->config_path = config_path;
	p->rnd_fd = rnd_fd;
	p->child = child;
	p->refill_ns = mono_ns();
	ceiling_update(p, true);
	if (child > 0)
		sfd = signals_fd(&set);
	pfd[0] = (struct pollfd){.fd = sock, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
	for (;;) {
		if (poll(pfd, sfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			closes(p, "poll: %s", strerror(errno));
			broken = true;
			break;
		}
		if (sfd >= 0 && (pfd[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				kill(child, (int)si.ssi_signo);
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			p->why[0] = '\0';
			if (!serve_one(p)) {
				broken = p->why[0] != '\0';
				break;
			}
		}
	}
	if (broken)
		log_err("privileged process: %s: closing the connection to the collector",
			p->why);
	close(sock);
	teardown(p);
	log_info("privileged process: %llu bits asked, %llu credited, %llu clipped by the "
		 "ceiling",
		 (unsigned long long)p->asked, (unsigned long long)p->credited,
		 (unsigned long long)p->clipped);
	if (child > 0) {
		if (broken)
			kill(child, SIGKILL);
		while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(ws))
			status = WEXITSTATUS(ws);
		else {
			log_err("the collector was killed by signal %d", WTERMSIG(ws));
			status = EXIT_LOST;
		}
	}
	if (broken)
		status = EXIT_LOST;
	if (sfd >= 0)
		close(sfd);
	config_free(p->cfg);
	wipe(p, sizeof(*p));
	free(p);
	return status;
}

int priv_start(struct config *cfg, const char *config_path, int rnd_fd, int ready_fd,
	       int *status)
{
	int sv[2];
	sigset_t set, old;
	pid_t pid;

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
	pid = fork();
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
		priv_pid = getppid();
		return 0;
	}
	close(sv[1]);
	if (ready_fd >= 0)
		close(ready_fd);
	privs_drop();
	log_info("privileged process %d: the collector is process %d", (int)getpid(), (int)pid);
	*status = priv_serve(sv[0], cfg, config_path, rnd_fd, pid);
	return 1;
}
