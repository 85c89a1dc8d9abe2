/* priv_dispatch: the privileged process's answer to each message of the collector. A table
 * gives, for each type of priv_wire.h, the request's size, its handler and whether the reply
 * hands over a descriptor (as OpenSSH's monitor dispatches by a table); the header is checked
 * here, every field by the handler, what is allowed by priv_policy.c, and the system call is
 * priv_ops.c's. Anything malformed closes the connection (priv_serve.c then tears down and
 * exits); what the configuration does not allow is refused with EACCES. */
#include "autoconf.h"

#include "priv_dispatch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "config_policy.h"
#include "log.h"
#include "priv_filter.h"
#include "priv_ops.h"
#include "priv_policy.h"
#include "priv_trust.h"
#include "util.h"

#define MAX_DISKS 256 /* traces the privileged process keeps at once */
#define MAX_IFS 256   /* interfaces with a packet socket at once */

struct traced {
	char name[PRIV_DISK_NAME];
	char trace[PRIV_DISK_NAME]; /* its relay directory's name, as BLKTRACE_START gave it */
	unsigned major, minor;
	bool used;
};

/* A packet socket handed out, by interface: this process keeps its own descriptor of it, so
 * that a second request for the same interface can make the first deaf for good, and so
 * that its filter (priv_filter.c) stays this process's to set. */
struct handed {
	unsigned ifindex;
	int fd;
	uint32_t keep; /* the share its filter keeps (PACKET_FILTER) */
	int slots;     /* where its filter's program is (priv_filter_attach()); -1: locked */
};

struct priv_dispatch {
	struct priv_policy pol;
	const char *config_path;
	int rnd_fd;
	struct traced disks[MAX_DISKS];
	struct handed handed[MAX_IFS];
	char why[160]; /* why the connection was closed */
};

static struct log_ratelimit rl_refuse = LOG_RATELIMIT_INIT;

/* The collector broke the protocol: false, with the reason. */
static bool closes(struct priv_dispatch *d, const char *fmt, ...) PRINTF_LIKE(2, 3);
static bool closes(struct priv_dispatch *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
	return false;
}

void priv_dispatch_close(struct priv_dispatch *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->why, sizeof(d->why), fmt, ap);
	va_end(ap);
}

const char *priv_dispatch_why(const struct priv_dispatch *d)
{
	return d->why;
}

/* A well-formed request that the configuration this process read does not allow. An honest
 * collector sends one only when the file changed between its reload and ours (or a disk's
 * number changed under it): refused with EACCES, nothing opened, said; the connection stays,
 * so that editing the file never ends the daemon. */
static bool refuses(struct priv_dispatch *d, struct priv_reply *rep, const char *fmt, ...)
	PRINTF_LIKE(3, 4);
static bool refuses(struct priv_dispatch *d, struct priv_reply *rep, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_limited(&rl_refuse, LOG_WARNING,
		    "privileged process: refused %s (was %s changed since the last reload?)", why,
		    d->config_path);
	rep->err = EACCES;
	return true;
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

/* A CPU the system can have. */
static bool cpu_ok(unsigned cpu)
{
	int ncpus = get_nprocs_conf();

	return cpu < (unsigned)(ncpus > 0 ? ncpus : 1);
}

static struct traced *find_disk(struct priv_dispatch *d, const struct req_blkt *r)
{
	for (size_t i = 0; i < MAX_DISKS; i++)
		if (d->disks[i].used && d->disks[i].major == r->major &&
		    d->disks[i].minor == r->minor && strcmp(d->disks[i].name, r->name) == 0)
			return &d->disks[i];
	return NULL;
}

static bool answer_entropy(struct priv_dispatch *d, const union priv_req *req,
			   struct priv_reply *rep, int *fd)
{
	const struct req_entropy *r = &req->entropy;
	int bits;

	(void)fd;
	if (r->len > PRIV_ENTROPY_BYTES || r->bits < 0 || (uint32_t)r->bits > 8 * r->len)
		return closes(d, "ADD_ENTROPY with %u bytes and %d bits", r->len, r->bits);
	bits = priv_policy_ceiling(&d->pol, r->bits);
	if (d->rnd_fd < 0) {
		rep->err = EBADF;
		return true;
	}
	if (priv_ops_add_entropy(d->rnd_fd, r->data, r->len, bits) < 0) {
		rep->err = errno;
		return true;
	}
	priv_policy_spend(&d->pol, bits);
	rep->value = bits;
	return true;
}

static bool answer_reseed(struct priv_dispatch *d, const union priv_req *req,
			  struct priv_reply *rep, int *fd)
{
	(void)req;
	(void)fd;
	if (d->rnd_fd < 0 || priv_ops_reseed(d->rnd_fd) < 0)
		rep->err = d->rnd_fd < 0 ? EBADF : errno;
	return true;
}

static bool answer_perf(struct priv_dispatch *d, const union priv_req *req,
			struct priv_reply *rep, int *fd)
{
	const struct req_perf *r = &req->perf;
	double *tokens;

	if (!cpu_ok(r->cpu) || r->what > PRIV_PERF_WAKER || (r->flags & ~PRIV_PERF_LOST))
		return closes(d, "PERF_OPEN of kind %u on CPU %u (flags %#x); the system has %d "
				 "CPUs",
			      r->what, r->cpu, r->flags, get_nprocs_conf());
	if (!config_policy_class_runs(d->pol.cfg, CLASS_BLOCK) ||
	    d->pol.cfg->block.backend == BACKEND_BLKTRACE)
		return refuses(d, rep, "PERF_OPEN: the configuration has no block tracepoint");
	tokens = priv_policy_perf(&d->pol, r->cpu, r->what);
	if (!tokens) {
		rep->err = EAGAIN;
		return true;
	}
	*fd = priv_ops_perf_open(r->cpu, r->what, r->flags);
	if (*fd < 0) {
		rep->err = errno ? errno : EIO; /* nothing made: nothing spent (an offline CPU) */
	} else {
		*tokens -= 1;
		d->pol.perf_events++;
	}
	return true;
}

static bool answer_blkt_stop(struct priv_dispatch *d, const union priv_req *req,
			     struct priv_reply *rep, int *fd)
{
	const struct req_blkt *r = &req->blkt;
	struct traced *t;
	bool opened;

	(void)fd;
	if (!disk_name_ok(r->name) || r->teardown > 1)
		return closes(d, "BLKTRACE request with a malformed disk name or flag");
	t = find_disk(d, r);
	if (!t)
		return closes(d, "BLKTRACE_STOP on %s, which it did not start", r->name);
	rep->err = priv_ops_blktrace_stop(t->name, t->major, t->minor, r->teardown, &opened);
	rep->value = opened;
	if (!opened || (r->teardown && !rep->err))
		t->used = false;
	return true;
}

static bool answer_blkt_start(struct priv_dispatch *d, const union priv_req *req,
			      struct priv_reply *rep, int *fd)
{
	const struct req_blkt *r = &req->blkt;
	struct block_disk_info info;
	struct traced *t;
	int stage;

	(void)fd;
	if (!disk_name_ok(r->name) || r->teardown != 0)
		return closes(d, "BLKTRACE request with a malformed disk name or flag");
	t = find_disk(d, r);
	if (d->pol.cfg->block.backend == BACKEND_TRACEPOINT ||
	    !priv_policy_disk(&d->pol, r->name, &info) || info.major != r->major ||
	    info.minor != r->minor)
		return refuses(d, rep,
			       "BLKTRACE_START on %s (%u:%u): the configuration does not select it "
			       "for blktrace, or that is not its device number",
			       r->name, r->major, r->minor);
	if (!t) {
		for (size_t i = 0; i < MAX_DISKS && !t; i++)
			if (!d->disks[i].used)
				t = &d->disks[i];
		if (!t) {
			rep->err = ENOSPC;
			return true;
		}
	}
	rep->err = priv_ops_blktrace_start(r->name, r->major, r->minor, rep->name, &stage);
	rep->value = stage;
	if (!rep->err) {
		memcpy(t->name, r->name, sizeof(t->name));
		strlcopy(t->trace, rep->name, sizeof(t->trace));
		t->major = r->major;
		t->minor = r->minor;
		t->used = true;
		priv_policy_recount(&d->pol);
	}
	return true;
}

/* Make a packet socket deaf for good, whoever else holds it: bound to every interface for
 * PRIV_FILTER_DEAF alone, the one protocol its locked filter drops (priv_filter.c), which
 * the collector cannot bind again (priv_sandbox.c), and its program's slot emptied (the
 * kernel empties it when the last descriptor closes); this copy closed. */
static void deafen(struct handed *h)
{
	if (priv_ops_packet_bind(h->fd, 0, PRIV_FILTER_DEAF) < 0)
		log_errno(LOG_WARNING, "privileged process: cannot make a packet socket deaf");
	close(h->fd);
	if (h->slots >= 0)
		close(h->slots);
	h->fd = h->slots = -1;
}

/* The filter of packet socket h on its interface (priv_filter.c), as this process's
 * configuration captures the interface, keeping the share keep: attached and locked if h
 * has none yet (slots < -1), else put in its place. False (said, errno set: EPERM where a
 * locked classic filter cannot change) if it cannot be; then a new socket hears nothing. */
static bool guard(struct priv_dispatch *d, struct handed *h, uint32_t keep)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	char name[IF_NAMESIZE], why[256];
	int e = EINVAL, rc;

	if (!if_indextoname(h->ifindex, name)) {
		snprintf(why, sizeof(why), "interface %u is gone", h->ifindex);
	} else {
		const struct net_capture *cap = net_class_capture_config(d->pol.cfg, name);

		if (h->slots < -1)
			rc = priv_filter_attach(h->fd, h->ifindex, cap->direction, cap->filter, keep,
						&h->slots, why, sizeof(why));
		else
			rc = priv_filter_replace(h->slots, h->fd, h->ifindex, cap->direction,
						 cap->filter, keep, why, sizeof(why));
		if (rc == 0)
			return true;
		e = errno == EPERM ? EPERM : EINVAL;
	}
	if (e != EPERM)
		log_limited(&rl, LOG_WARNING,
			    "privileged process: no packet socket for interface %u: %s", h->ifindex,
			    why);
	errno = e;
	return false;
}

/* The packet socket of interface ifindex handed out before, if any (NULL) and a free slot
 * (*free_slot, or NULL if none). */
static struct handed *find_handed(struct priv_dispatch *d, unsigned ifindex,
				  struct handed **free_slot)
{
	*free_slot = NULL;
	for (size_t i = 0; i < MAX_IFS; i++) {
		if (d->handed[i].fd >= 0 && d->handed[i].ifindex == ifindex)
			return &d->handed[i];
		if (d->handed[i].fd < 0 && !*free_slot)
			*free_slot = &d->handed[i];
	}
	return NULL;
}

/* After a reload: the sockets of interfaces the configuration no longer selects made deaf,
 * the others' filters set as it captures them now (their filter, their direction); those
 * whose filter cannot change (a locked classic one) made deaf too: the collector captures
 * them afresh. */
static void deafen_unselected(struct priv_dispatch *d)
{
	char name[IF_NAMESIZE];

	for (size_t i = 0; i < MAX_IFS; i++) {
		struct handed *h = &d->handed[i];

		if (h->fd >= 0 &&
		    (!if_indextoname(h->ifindex, name) || !priv_policy_iface(&d->pol, name) ||
		     !guard(d, h, h->keep)))
			deafen(h);
	}
}

/* A packet socket for an interface the configuration selects, under a locked filter and
 * bound to it here for every protocol (libpcap's binds are answered in the collector,
 * priv_socket.c, whose system call filter refuses any other). At most one that hears
 * anything per interface: a second request for the same interface (an honest collector
 * asks again only after closing its capture) makes the first deaf for good. */
static bool answer_packet(struct priv_dispatch *d, const union priv_req *req,
			  struct priv_reply *rep, int *fd)
{
	const struct req_packet *r = &req->packet;
	struct handed *h, *slot, made = {.ifindex = r->ifindex, .slots = -2};
	char name[IF_NAMESIZE];

	if ((r->type != SOCK_RAW && r->type != SOCK_DGRAM) || r->protocol != 0 ||
	    r->ifindex == 0 || r->ifindex > INT32_MAX)
		return closes(d, "PACKET_SOCKET of type %d, protocol %d, interface %u", r->type,
			      r->protocol, r->ifindex);
	if (!config_policy_class_runs(d->pol.cfg, CLASS_NETWORK))
		return refuses(d, rep, "PACKET_SOCKET: the configuration captures on no interface");
	if (!if_indextoname(r->ifindex, name)) {
		rep->err = ENODEV;
		return true;
	}
	if (!priv_policy_iface(&d->pol, name)) {
		char safe[IF_NAMESIZE * 4];

		util_printable(safe, sizeof(safe), name);
		return refuses(d, rep, "PACKET_SOCKET on %s, which the configuration does not "
				       "select", safe);
	}
	h = find_handed(d, r->ifindex, &slot);
	if (!h && !slot) {
		rep->err = ENOSPC;
		return true;
	}
	if (!priv_policy_packet(&d->pol)) {
		rep->err = EAGAIN;
		return true;
	}
	*fd = priv_ops_packet_socket(r->type);
	if (*fd < 0) {
		rep->err = errno;
		return true;
	}
	/* Its filter, locked, before anything can arrive (protocol 0: nothing does yet); bound
	 * here, for every protocol, as libpcap binds it: the collector binds it no more. */
	made.fd = *fd;
	if (!guard(d, &made, UINT32_MAX) ||
	    priv_ops_packet_bind(*fd, r->ifindex, ETH_P_ALL) < 0) {
		rep->err = errno;
	} else {
		if (h) {
			deafen(h);
			slot = h;
		}
		slot->ifindex = r->ifindex;
		slot->keep = UINT32_MAX;
		slot->slots = made.slots;
		made.slots = -1;
		slot->fd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
		if (slot->fd >= 0) {
			d->pol.packet_sockets++;
			return true;
		}
		rep->err = errno;
		made.slots = slot->slots;
		slot->slots = -1;
	}
	if (made.slots >= 0)
		close(made.slots);
	close(*fd);
	*fd = -1;
	return true;
}

/* The share the filter of interface ifindex's packet socket keeps while the collector
 * samples: any share narrows what arrives, none widens it. */
static bool answer_packet_filter(struct priv_dispatch *d, const union priv_req *req,
				 struct priv_reply *rep, int *fd)
{
	const struct req_packet_filter *r = &req->packet_filter;
	struct handed *h, *slot;

	(void)fd;
	if (r->ifindex == 0 || r->ifindex > INT32_MAX)
		return closes(d, "PACKET_FILTER on interface %u", r->ifindex);
	h = find_handed(d, r->ifindex, &slot);
	if (!h) {
		rep->err = ENOENT;
		return true;
	}
	if (!guard(d, h, r->keep)) {
		rep->err = errno;
		return true;
	}
	h->keep = r->keep;
	return true;
}

/* A relay file of a blktrace this process started (its relay directory, as
 * priv_ops_blktrace_start named it), for a CPU the system can have; read-only. debugfs is
 * root's (mode 0700), so the collector, not uid 0, cannot open it itself. */
static bool answer_relay(struct priv_dispatch *d, const union priv_req *req,
			 struct priv_reply *rep, int *fd)
{
	const struct req_relay *r = &req->relay;
	bool ours = false;

	if (!disk_name_ok(r->name) || !cpu_ok(r->cpu))
		return closes(d, "RELAY_OPEN with a malformed trace name or CPU %u", r->cpu);
	for (size_t i = 0; i < MAX_DISKS && !ours; i++)
		ours = d->disks[i].used && strcmp(d->disks[i].trace, r->name) == 0;
	if (!ours)
		return closes(d, "RELAY_OPEN of %s, which it did not start", r->name);
	*fd = priv_ops_relay_open(NULL, r->name, r->cpu);
	if (*fd < 0)
		rep->err = errno ? errno : EIO;
	return true;
}

/* An input node for the collector, which (not uid 0, no supplementary group) cannot open
 * one. Only an entry of the watched directory this process read from the configuration,
 * looked at without following a symlink, and only an input character device, or a FIFO or
 * single-link regular file that root owns (how the tests and replays feed the reader; a
 * collector cannot make either, as no uid 0, nor any other character device). */
static bool answer_input(struct priv_dispatch *d, const union priv_req *req,
			 struct priv_reply *rep, int *fd)
{
	const struct req_input *r = &req->input;
	char why[160] = "";

	if (!priv_ops_input_name_ok(r->name, sizeof(r->name)))
		return closes(d, "INPUT_OPEN with a malformed node name");
	if (!config_policy_class_runs(d->pol.cfg, CLASS_INPUT))
		return refuses(d, rep, "INPUT_OPEN: the configuration has no input class");
	*fd = priv_ops_input_open(d->pol.cfg->input.watch, r->name, why);
	if (*fd < 0) {
		rep->err = errno ? errno : EIO;
		if (rep->err == EACCES && why[0])
			log_limited(&rl_refuse, LOG_WARNING, "privileged process: refused to open %s",
				    why);
	}
	return true;
}

static bool answer_notify(struct priv_dispatch *d, const union priv_req *req,
			  struct priv_reply *rep, int *fd)
{
	const struct req_notify *r = &req->notify;

	(void)rep;
	(void)fd;
	if (r->what > PRIV_N_STATUS || !text_ok(r->text, sizeof(r->text), r->what == PRIV_N_STATUS))
		return closes(d, "NOTIFY of kind %u with text not allowed", r->what);
	priv_ops_notify(r->what, r->text);
	return true;
}

static bool answer_reload(struct priv_dispatch *d, const union priv_req *req,
			  struct priv_reply *rep, int *fd)
{
	struct config_errors errs = {0};
	struct config *next;
	char why[512];

	(void)req;
	(void)fd;
	if (!priv_trust_config(d->config_path, why, sizeof(why))) {
		log_err("privileged process: %s; the ceiling and what may be opened stay as they "
			"were", why);
		rep->err = EPERM;
		return true;
	}
	next = config_load(d->config_path, &errs);
	if (!next) {
		/* The collector read it a moment ago: someone changed it in between. */
		log_warn("privileged process: %s has %zu errors now: the ceiling and what may be "
			 "opened stay as they were",
			 d->config_path, errs.n);
		rep->err = EINVAL;
	} else {
		priv_policy_reload(&d->pol, next);
		deafen_unselected(d);
	}
	config_errors_free(&errs);
	return true;
}

/* Every message type: its request's size, its handler, and whether its reply may carry a
 * descriptor (SCM_RIGHTS). The handler checks every field: false closes the connection. */
static const struct priv_handler {
	enum priv_type type;
	size_t size;
	bool (*answer)(struct priv_dispatch *d, const union priv_req *req,
		       struct priv_reply *rep, int *fd);
	bool fd_out;
} handlers[] = {
	{PRIV_ADD_ENTROPY, sizeof(struct req_entropy), answer_entropy, false},
	{PRIV_RESEED, sizeof(struct priv_hdr), answer_reseed, false},
	{PRIV_PERF_OPEN, sizeof(struct req_perf), answer_perf, true},
	{PRIV_BLKTRACE_START, sizeof(struct req_blkt), answer_blkt_start, false},
	{PRIV_BLKTRACE_STOP, sizeof(struct req_blkt), answer_blkt_stop, false},
	{PRIV_PACKET_SOCKET, sizeof(struct req_packet), answer_packet, true},
	{PRIV_NOTIFY, sizeof(struct req_notify), answer_notify, false},
	{PRIV_RELOAD, sizeof(struct priv_hdr), answer_reload, false},
	{PRIV_INPUT_OPEN, sizeof(struct req_input), answer_input, true},
	{PRIV_RELAY_OPEN, sizeof(struct req_relay), answer_relay, true},
	{PRIV_PACKET_FILTER, sizeof(struct req_packet_filter), answer_packet_filter, false},
};

static const struct priv_handler *handler_of(unsigned type)
{
	for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++)
		if (handlers[i].type == type)
			return &handlers[i];
	return NULL;
}

size_t priv_dispatch_size(unsigned type)
{
	const struct priv_handler *h = handler_of(type);

	return h ? h->size : 0;
}

bool priv_dispatch_answer(struct priv_dispatch *d, const union priv_req *req, size_t n,
			  struct priv_reply *rep, int *fd)
{
	const struct priv_handler *h;
	int out = -1;

	*fd = -1;
	d->why[0] = '\0';
	if (n < sizeof(req->h))
		return closes(d, "the collector sent a message of %zu bytes", n);
	if (req->h.version != PRIV_VERSION)
		return closes(d, "the collector sent a message of version %u (this is %u)",
			      req->h.version, PRIV_VERSION);
	h = handler_of(req->h.type);
	if (!h)
		return closes(d, "the collector sent a message of unknown type %u", req->h.type);
	if (req->h.size != n || n != h->size)
		return closes(d, "the collector sent a message of type %u and %zu bytes (%u said)",
			      req->h.type, n, req->h.size);
	memset(rep, 0, sizeof(*rep));
	if (!h->answer(d, req, rep, h->fd_out ? &out : NULL)) {
		if (out >= 0)
			close(out);
		return false;
	}
	rep->h.version = PRIV_VERSION;
	rep->h.type = req->h.type;
	rep->h.size = sizeof(*rep);
	*fd = out;
	return true;
}

struct priv_dispatch *priv_dispatch_new(struct config *cfg, const char *config_path,
					int rnd_fd)
{
	struct priv_dispatch *d = xcalloc(1, sizeof(*d));

	priv_policy_init(&d->pol, cfg);
	d->config_path = config_path;
	d->rnd_fd = rnd_fd;
	for (size_t i = 0; i < MAX_IFS; i++)
		d->handed[i].fd = d->handed[i].slots = -1;
	return d;
}

/* Tear down the blktraces this process set up. */
static void teardown(struct priv_dispatch *d)
{
	for (size_t i = 0; i < MAX_DISKS; i++) {
		struct traced *t = &d->disks[i];
		bool opened;
		int e;

		if (!t->used)
			continue;
		e = priv_ops_blktrace_stop(t->name, t->major, t->minor, true, &opened);
		if (!opened)
			log_info("block/%s: gone, and its trace with it", t->name);
		else if (e && e != EINVAL && e != ENXIO)
			log_warn("block/%s: BLKTRACETEARDOWN failed: %s", t->name, strerror(e));
		else
			log_info("block/%s: blktrace torn down by the privileged process", t->name);
		t->used = false;
	}
	priv_ops_blktrace_release();
}

void priv_dispatch_free(struct priv_dispatch *d)
{
	teardown(d);
	for (size_t i = 0; i < MAX_IFS; i++)
		if (d->handed[i].fd >= 0)
			close(d->handed[i].fd);
	log_info("privileged process: %llu bits asked, %llu credited, %llu clipped by the "
		 "ceiling",
		 (unsigned long long)d->pol.asked, (unsigned long long)d->pol.credited,
		 (unsigned long long)d->pol.clipped);
	priv_policy_free(&d->pol);
	util_wipe(d, sizeof(*d));
	free(d);
}
