/* priv_serve: the privileged process's side: the loop that answers the collector, each
 * request checked field by field and against the configuration this process read itself,
 * the credit ceiling, and the teardown of what it set up. See priv.c for the whole. */
#include "autoconf.h"

#include "priv.h"
#include "priv_ops.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <errno.h>
#include <linux/random.h>
#include <math.h>
#include <mntent.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#include "block_disks.h"
#include "config_policy.h"
#include "kernel.h"
#include "log.h"
#include "priv_filter.h"
#include "priv_trust.h"
#include "util.h"

#define MAX_DISKS 256   /* traces the privileged process keeps at once */
#define MAX_COUNT 65536 /* instances counted in a directory, at most */
#define RATE_EVERY_NS NS_PER_SEC
#define MAX_START_NODES 4096
#define MAX_IFS 256 /* interfaces with a packet socket at once */
#define INPUT_MAJOR PRIV_INPUT_MAJOR

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
};

struct priv {
	int sock;
	struct config *cfg;
	const char *config_path;
	int rnd_fd;
	pid_t child;
	struct traced disks[MAX_DISKS];
	unsigned packet_sockets; /* handed out since start */
	struct handed handed[MAX_IFS];
	double socket_tokens; /* packet sockets that may still be handed out now */
	uint64_t socket_ns;   /* when socket_tokens was last brought up to date (0: never) */
	/* Perf events that may still be handed out now, per CPU and kind (perf_budget), and
	 * when each count was last brought up to date (0: never). */
	unsigned perf_cpus;
	double *perf_tokens;
	uint64_t *perf_ns;
	unsigned perf_disks;     /* the disks the configuration selects, counted at most */
	uint64_t perf_disks_ns;  /* once a second (RATE_EVERY_NS): when (0: never) */
	uint64_t perf_events; /* handed out since start */
	/* Input nodes that are not the input major's character devices (FIFOs and files of
	 * recorded events) count only if they were there at start: a collector can make those
	 * (uid 0), but not character devices (no CAP_MKNOD). */
	struct strlist start_nodes;
	/* The ceiling: a token bucket of bits. */
	double rate;   /* bits per second */
	double rate_high; /* the highest it has been */
	double depth;  /* bits */
	double tokens; /* starts with a second's worth (ceiling_update) */
	/* The boot allowance (feed.boot_allowance): what the kernel still needed at start,
	 * as the privileged process reads it itself; spent after the tokens, never refilled. */
	double boot_left;
	uint64_t refill_ns, rate_ns;
	uint64_t asked, credited, clipped; /* bits */
	char why[160]; /* why the connection was closed */
};

static struct log_ratelimit rl_clip = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_refuse = LOG_RATELIMIT_INIT;

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
		struct policy_rule r = config_policy_override_apply(&cp->rule, &cp->overrides[i]);

		best = fmax(best, rule_rate(&r));
	}
	return best;
}

/* Does the configuration select whole disk NAME of /sys/block, with major:minor, for
 * blktrace or the tracepoint? */
static bool disk_selected(const struct config *cfg, const char *name,
			  struct block_disk_info *info)
{
	struct policy_rule r;

	if (!block_disks_probe("", name, info) || !block_disks_selects(&cfg->block.devices, name, info))
		return false;
	r = config_policy_resolve(cfg, CLASS_BLOCK, name);
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

/* An input node: an event* character device of the input major in the watched directory,
 * or any other event* entry that was there at start (start_nodes). */
static bool input_node(const struct config *cfg, const char *name, bool *chr)
{
	char *path;
	struct stat st;
	bool ok;

	if (strncmp(name, "event", 5) != 0)
		return false;
	path = xasprintf("%s/%s", cfg->input.watch, name);
	ok = lstat(path, &st) == 0;
	free(path);
	*chr = ok && S_ISCHR(st.st_mode) && major(st.st_rdev) == INPUT_MAJOR;
	return ok;
}

static const struct strlist *start_nodes; /* for want_input: this process's p->start_nodes */

static bool want_input(const struct config *cfg, const char *name)
{
	bool chr;

	if (!input_node(cfg, name, &chr))
		return false;
	if (chr)
		return true;
	for (size_t i = 0; start_nodes && i < start_nodes->n; i++)
		if (strcmp(start_nodes->v[i], name) == 0)
			return true;
	return false;
}

/* The input nodes there at start that are not character devices. */
static void note_start_nodes(struct priv *p)
{
	DIR *d;
	struct dirent *e;
	bool chr;

	if (!config_policy_class_runs(p->cfg, CLASS_INPUT) || !(d = opendir(p->cfg->input.watch)))
		return;
	while ((e = readdir(d)) && p->start_nodes.n < MAX_START_NODES)
		if (input_node(p->cfg, e->d_name, &chr) && !chr)
			config_settings_strlist_add(&p->start_nodes, e->d_name);
	closedir(d);
}

/* Does the configuration select interface NAME for capture: named in network.interfaces
 * (exactly or by a glob), or, with "auto", any interface that is not loopback (the
 * collector's auto also leaves out tunnels whose packets arrived on another interface
 * first: this is the upper bound), and its policy is not "disabled"? */
static bool iface_selected(const struct config *cfg, const char *name)
{
	const struct strlist *l = &cfg->network.interfaces;
	struct policy_rule r;
	bool sel = false;

	if (l->n == 0 || (l->n == 1 && strcmp(l->v[0], "auto") == 0)) {
		char *path = xasprintf("/sys/class/net/%s/flags", name);
		FILE *f = fopen(path, "re");
		unsigned long flags;

		sel = f && fscanf(f, "%lx", &flags) == 1 && !(flags & IFF_LOOPBACK);
		if (f)
			fclose(f);
		free(path);
	} else {
		for (size_t i = 0; i < l->n && !sel; i++)
			sel = strcmp(l->v[i], name) == 0 || fnmatch(l->v[i], name, 0) == 0;
	}
	if (!sel)
		return false;
	r = config_policy_resolve(cfg, CLASS_NETWORK, name);
	return r.mode != MODE_DISABLED;
}

static bool want_iface(const struct config *cfg, const char *name)
{
	return iface_selected(cfg, name);
}

static bool want_disk(const struct config *cfg, const char *name)
{
	struct block_disk_info info;

	return disk_selected(cfg, name, &info);
}

/* The ceiling's rate: per class, the most one instance may be credited per second (over
 * the class rule and its overrides, the largest cap_bits_per_second times the rule's
 * weight: 1 trusted, scale reduced, 0 otherwise) times the instances this process can vouch for:
 * input, the event* character devices of the input major in the watched directory, and
 * other event* entries (FIFOs, files) that were there at start; block, the whole disks of /sys/block
 * the configuration selects; network, the interfaces of /sys/class/net the configuration
 * selects (iface_selected: not every entry, and not how many packet sockets the collector
 * asked for), plus one for a configured savefile. */
static double ceiling_rate(struct priv *p)
{
	const struct config *cfg = p->cfg;
	unsigned n_in = 0, n_blk = 0, n_net = 0;

	if (config_policy_class_runs(cfg, CLASS_INPUT))
		n_in = count_dir(cfg->input.watch, want_input, cfg);
	if (config_policy_class_runs(cfg, CLASS_BLOCK))
		n_blk = count_dir(SYS_BLOCK, want_disk, cfg);
	if (config_policy_class_runs(cfg, CLASS_NETWORK)) {
		n_net = count_dir("/sys/class/net", want_iface, cfg);
		if (cfg->network.file && cfg->network.file[0])
			n_net++;
	}
	return class_rate(cfg, CLASS_INPUT) * n_in + class_rate(cfg, CLASS_BLOCK) * n_blk +
	       class_rate(cfg, CLASS_NETWORK) * n_net;
}

static void ceiling_update(struct priv *p, bool recount)
{
	uint64_t now = util_mono_ns();

	p->tokens = fmin(p->depth, p->tokens + p->rate * (double)(now - p->refill_ns) / 1e9);
	p->refill_ns = now;
	if (recount || now - p->rate_ns >= RATE_EVERY_NS) {
		double rate = ceiling_rate(p);

		/* The collector's own per-instance caps start with one second's worth: so does
		 * each instance here, when it is first counted; an instance that goes and comes
		 * back does not bring another (so no flapping can fill the bucket). */
		if (rate > p->rate_high) {
			p->tokens += rate - p->rate_high;
			p->rate_high = rate;
		}
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

/* A well-formed request that the configuration this process read does not allow. An honest
 * collector sends one only when the file changed between its reload and ours (or a disk's
 * number changed under it): refused with EACCES, nothing opened, said; the connection stays,
 * so that editing the file never ends the daemon. */
static bool refuses(struct priv *p, struct priv_reply *rep, const char *fmt, ...)
	PRINTF_LIKE(3, 4);
static bool refuses(struct priv *p, struct priv_reply *rep, const char *fmt, ...)
{
	char why[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_limited(&rl_refuse, LOG_WARNING,
		    "privileged process: refused %s (was %s changed since the last reload?)", why,
		    p->config_path);
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
	if (bits > floor(p->tokens + p->boot_left)) {
		bits = (int)floor(p->tokens + p->boot_left);
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
	if (priv_ops_add_entropy(p->rnd_fd, r->data, r->len, bits) < 0) {
		rep->err = errno;
		return true;
	}
	p->tokens -= bits;
	if (p->tokens < 0) { /* the rest came from the boot allowance */
		p->boot_left = fmax(0, p->boot_left + p->tokens);
		p->tokens = 0;
	}
	p->credited += (uint64_t)bits;
	rep->value = bits;
	return true;
}

/* May one more perf event of kind what be handed out on cpu (its count of what may, taken
 * from once the event is made; NULL: no)? Each kind has a budget per CPU
 * as packet sockets have one (packet_budget): what the kind needs there (one owner, one
 * waker, a disk event per disk the configuration selects) and PRIV_PERF_SPARE more at once,
 * then that many every PRIV_PERF_EVERY_S (a disk added, a CPU back online, a reload). Every
 * enabled event costs the kernel at each completion of every disk; the collector keeps its
 * copies, so one that asks again and again gets EAGAIN. */
static double *perf_budget(struct priv *p, unsigned cpu, unsigned what)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	uint64_t now = util_mono_ns();
	unsigned need = 1;
	size_t i;
	double most;

	if (cpu >= p->perf_cpus)
		return NULL;
	if (what == PRIV_PERF_DISK) {
		if (!p->perf_disks_ns || now - p->perf_disks_ns >= RATE_EVERY_NS) {
			p->perf_disks = count_dir(SYS_BLOCK, want_disk, p->cfg);
			p->perf_disks_ns = now;
		}
		need = p->perf_disks ? p->perf_disks : 1;
	}
	most = need + PRIV_PERF_SPARE;
	i = (size_t)cpu * (PRIV_PERF_WAKER + 1) + what;
	if (!p->perf_ns[i])
		p->perf_tokens[i] = most;
	else
		p->perf_tokens[i] = fmin(most, p->perf_tokens[i] + need * (double)(now - p->perf_ns[i]) /
								 1e9 / PRIV_PERF_EVERY_S);
	p->perf_ns[i] = now;
	if (p->perf_tokens[i] >= 1)
		return &p->perf_tokens[i];
	log_limited(&rl, LOG_WARNING,
		    "privileged process: the collector asked for more %s perf events on CPU %u "
		    "than it needs (%u; %llu handed out since start); refused for now",
		    what == PRIV_PERF_OWNER ? "owner" : what == PRIV_PERF_DISK ? "disk" : "waker",
		    cpu, need, (unsigned long long)p->perf_events);
	return NULL;
}

static bool do_perf(struct priv *p, const struct req_perf *r, struct priv_reply *rep, int *fd)
{
	int ncpus = get_nprocs_conf();
	double *tokens;

	if (r->cpu >= (unsigned)(ncpus > 0 ? ncpus : 1) || r->what > PRIV_PERF_WAKER ||
	    (r->flags & ~PRIV_PERF_LOST))
		return closes(p, "PERF_OPEN of kind %u on CPU %u (flags %#x); the system has %d "
				 "CPUs",
			      r->what, r->cpu, r->flags, ncpus);
	if (!config_policy_class_runs(p->cfg, CLASS_BLOCK) || p->cfg->block.backend == BACKEND_BLKTRACE)
		return refuses(p, rep, "PERF_OPEN: the configuration has no block tracepoint");
	tokens = perf_budget(p, r->cpu, r->what);
	if (!tokens) {
		rep->err = EAGAIN;
		return true;
	}
	*fd = priv_ops_perf_open(r->cpu, r->what, r->flags);
	if (*fd < 0) {
		rep->err = errno ? errno : EIO; /* nothing made: nothing spent (an offline CPU) */
	} else {
		*tokens -= 1;
		p->perf_events++;
	}
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
		rep->err = priv_ops_blktrace_stop(t->name, t->major, t->minor, r->teardown, &opened);
		rep->value = opened;
		if (!opened || (r->teardown && !rep->err))
			t->used = false;
		return true;
	}
	if (p->cfg->block.backend == BACKEND_TRACEPOINT ||
	    !disk_selected(p->cfg, r->name, &info) || info.major != r->major ||
	    info.minor != r->minor)
		return refuses(p, rep,
			       "BLKTRACE_START on %s (%u:%u): the configuration does not select it "
			       "for blktrace, or that is not its device number",
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
	rep->err = priv_ops_blktrace_start(r->name, r->major, r->minor, rep->name, &stage);
	rep->value = stage;
	if (!rep->err) {
		memcpy(t->name, r->name, sizeof(t->name));
		strlcopy(t->trace, rep->name, sizeof(t->trace));
		t->major = r->major;
		t->minor = r->minor;
		t->used = true;
		ceiling_update(p, true);
	}
	return true;
}

/* Make a packet socket deaf for good, whoever else holds it: a filter that drops every
 * packet, locked (SO_LOCK_FILTER: no one can remove or replace it, a bind does not either). */
static void deafen(int fd)
{
	struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog prog = {.len = 1, .filter = &drop};
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof(one)) < 0)
		log_errno(LOG_WARNING, "privileged process: cannot lock a packet socket's filter");
	close(fd);
}

/* The filter of a packet socket on interface ifindex (priv_filter.c), as this process's
 * configuration captures the interface; false (said) if it cannot be set, and then nothing
 * may be heard on the socket. */
static bool guard(struct priv *p, int fd, unsigned ifindex, uint32_t keep)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	char name[IF_NAMESIZE], why[256];

	if (!if_indextoname(ifindex, name)) {
		snprintf(why, sizeof(why), "interface %u is gone", ifindex);
	} else {
		const struct net_capture *cap = net_class_capture_config(p->cfg, name);

		if (priv_filter_attach(fd, ifindex, cap->direction, cap->filter, keep, why,
				      sizeof(why)) == 0)
			return true;
	}
	log_limited(&rl, LOG_WARNING, "privileged process: no packet socket for interface %u: %s",
		    ifindex, why);
	return false;
}

/* The packet socket of interface ifindex handed out before, if any (NULL) and a free slot
 * (*free_slot, or NULL if none). */
static struct handed *find_handed(struct priv *p, unsigned ifindex, struct handed **free_slot)
{
	*free_slot = NULL;
	for (size_t i = 0; i < MAX_IFS; i++) {
		if (p->handed[i].fd >= 0 && p->handed[i].ifindex == ifindex)
			return &p->handed[i];
		if (p->handed[i].fd < 0 && !*free_slot)
			*free_slot = &p->handed[i];
	}
	return NULL;
}

/* After a reload: the sockets of interfaces the configuration no longer selects made deaf,
 * the others' filters set as it captures them now (their filter, their direction). */
static void deafen_unselected(struct priv *p)
{
	char name[IF_NAMESIZE];

	for (size_t i = 0; i < MAX_IFS; i++) {
		struct handed *h = &p->handed[i];

		if (h->fd >= 0 && (!if_indextoname(h->ifindex, name) ||
				   !iface_selected(p->cfg, name) || !guard(p, h->fd, h->ifindex, h->keep))) {
			deafen(h->fd);
			h->fd = -1;
		}
	}
}

/* A packet socket for an interface the configuration selects, bound to it here (protocol 0:
 * nothing arrives before libpcap binds it for its own protocol). At most one that hears
 * anything per interface: a second request for the same interface (an honest collector
 * asks again only after closing its capture) makes the first deaf for good. */
/* May one more packet socket be handed out? One per selected interface at once, and
 * PRIV_PACKET_SPARE more; then one per selected interface every PRIV_PACKET_EVERY_S (a
 * capture reopened after its link went down, a reload). Each socket handed out can still
 * send frames, however deaf (entropyd(8)), and the collector keeps its copy: so a collector
 * that asks again and again gets EAGAIN, and its driver's retry backs off. */
static bool packet_budget(struct priv *p)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	uint64_t now = util_mono_ns();
	unsigned n = count_dir("/sys/class/net", want_iface, p->cfg);
	double most = n + PRIV_PACKET_SPARE;

	if (!p->socket_ns)
		p->socket_tokens = most;
	else
		p->socket_tokens = fmin(most, p->socket_tokens + n * (double)(now - p->socket_ns) /
								 1e9 / PRIV_PACKET_EVERY_S);
	p->socket_ns = now;
	if (p->socket_tokens >= 1) {
		p->socket_tokens -= 1;
		return true;
	}
	log_limited(&rl, LOG_WARNING,
		    "privileged process: the collector asked for more packet sockets than %u "
		    "selected interface%s need (%u handed out since start); refused for now",
		    n, n == 1 ? "" : "s", p->packet_sockets);
	return false;
}

static bool do_packet(struct priv *p, const struct req_packet *r, struct priv_reply *rep,
		      int *fd)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = 0};
	struct handed *h, *slot;
	char name[IF_NAMESIZE];

	if ((r->type != SOCK_RAW && r->type != SOCK_DGRAM) || r->protocol != 0 ||
	    r->ifindex == 0 || r->ifindex > INT32_MAX)
		return closes(p, "PACKET_SOCKET of type %d, protocol %d, interface %u", r->type,
			      r->protocol, r->ifindex);
	if (!config_policy_class_runs(p->cfg, CLASS_NETWORK))
		return refuses(p, rep, "PACKET_SOCKET: the configuration captures on no interface");
	if (!if_indextoname(r->ifindex, name)) {
		rep->err = ENODEV;
		return true;
	}
	if (!iface_selected(p->cfg, name)) {
		char safe[IF_NAMESIZE * 4];

		util_printable(safe, sizeof(safe), name);
		return refuses(p, rep, "PACKET_SOCKET on %s, which the configuration does not "
				       "select", safe);
	}
	h = find_handed(p, r->ifindex, &slot);
	if (!h && !slot) {
		rep->err = ENOSPC;
		return true;
	}
	if (!packet_budget(p)) {
		rep->err = EAGAIN;
		return true;
	}
	*fd = (int)syscall(SYS_socket, AF_PACKET, r->type | SOCK_CLOEXEC, 0);
	if (*fd < 0) {
		rep->err = errno;
		return true;
	}
	/* Its filter before anything can arrive (protocol 0: nothing does yet). */
	if (!guard(p, *fd, r->ifindex, UINT32_MAX)) {
		rep->err = EINVAL;
		close(*fd);
		*fd = -1;
		return true;
	}
	sll.sll_ifindex = (int)r->ifindex;
	if (bind(*fd, (const struct sockaddr *)&sll, sizeof(sll)) < 0) {
		rep->err = errno;
		close(*fd);
		*fd = -1;
		return true;
	}
	if (h) {
		deafen(h->fd);
		h->fd = -1;
		slot = h;
	}
	slot->ifindex = r->ifindex;
	slot->keep = UINT32_MAX;
	slot->fd = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
	if (slot->fd < 0) {
		rep->err = errno;
		close(*fd);
		*fd = -1;
		return true;
	}
	p->packet_sockets++;
	return true;
}

/* The share the filter of interface ifindex's packet socket keeps while the collector
 * samples: any share narrows what arrives, none widens it. */
static bool do_packet_filter(struct priv *p, const struct req_packet_filter *r,
			     struct priv_reply *rep)
{
	struct handed *h, *slot;

	if (r->ifindex == 0 || r->ifindex > INT32_MAX)
		return closes(p, "PACKET_FILTER on interface %u", r->ifindex);
	h = find_handed(p, r->ifindex, &slot);
	if (!h) {
		rep->err = ENOENT;
		return true;
	}
	if (!guard(p, h->fd, h->ifindex, r->keep)) {
		rep->err = EINVAL;
		return true;
	}
	h->keep = r->keep;
	return true;
}

/* The first debugfs mount point (a copy), or NULL. */
static char *debugfs(void)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	char *dir = NULL;

	while (f && (m = getmntent(f)))
		if (strcmp(m->mnt_type, "debugfs") == 0) {
			dir = xstrdup(m->mnt_dir);
			break;
		}
	if (f)
		endmntent(f);
	return dir;
}

/* A relay file of a blktrace this process started (its relay directory, as blkt_dev_start
 * named it), for a CPU the system can have; read-only. debugfs is root's (mode 0700), so
 * the collector, not uid 0, cannot open it itself. */
static bool do_relay(struct priv *p, const struct req_relay *r, struct priv_reply *rep, int *fd)
{
	int ncpus = get_nprocs_conf();
	char *dbg, *path;
	bool ours = false;

	if (!disk_name_ok(r->name) || r->cpu >= (unsigned)(ncpus > 0 ? ncpus : 1))
		return closes(p, "RELAY_OPEN with a malformed trace name or CPU %u", r->cpu);
	for (size_t i = 0; i < MAX_DISKS && !ours; i++)
		ours = p->disks[i].used && strcmp(p->disks[i].trace, r->name) == 0;
	if (!ours)
		return closes(p, "RELAY_OPEN of %s, which it did not start", r->name);
	dbg = debugfs();
	if (!dbg) {
		rep->err = ENOENT;
		return true;
	}
	path = xasprintf("%s/block/%s/trace%u", dbg, r->name, r->cpu);
	*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (*fd < 0)
		rep->err = errno ? errno : EIO;
	free(path);
	free(dbg);
	return true;
}

/* An input node for the collector, which (not uid 0, no supplementary group) cannot open
 * one. Only an entry of the watched directory this process read from the configuration,
 * looked at without following a symlink, and only an input character device, or a FIFO or
 * single-link regular file that root owns (how the tests and replays feed the reader; a
 * collector cannot make either, as no uid 0, nor any other character device). */
static bool do_input(struct priv *p, const struct req_input *r, struct priv_reply *rep, int *fd)
{
	char why[160] = "";

	if (!priv_ops_input_name_ok(r->name, sizeof(r->name)))
		return closes(p, "INPUT_OPEN with a malformed node name");
	if (!config_policy_class_runs(p->cfg, CLASS_INPUT))
		return refuses(p, rep, "INPUT_OPEN: the configuration has no input class");
	*fd = priv_ops_input_open(p->cfg->input.watch, r->name, why);
	if (*fd < 0) {
		rep->err = errno ? errno : EIO;
		if (rep->err == EACCES && why[0])
			log_limited(&rl_refuse, LOG_WARNING, "privileged process: refused to open %s",
				    why);
	}
	return true;
}

static bool do_notify(struct priv *p, const struct req_notify *r)
{
	if (r->what > PRIV_N_STATUS || !text_ok(r->text, sizeof(r->text), r->what == PRIV_N_STATUS))
		return closes(p, "NOTIFY of kind %u with text not allowed", r->what);
	priv_ops_notify(r->what, r->text);
	return true;
}

static void do_reload(struct priv *p, struct priv_reply *rep)
{
	struct config_errors errs = {0};
	struct config *next;
	char why[512];

	if (!priv_trust_config(p->config_path, why, sizeof(why))) {
		log_err("privileged process: %s; the ceiling and what may be opened stay as they "
			"were", why);
		rep->err = EPERM;
		return;
	}
	next = config_load(p->config_path, &errs);
	if (!next) {
		/* The collector read it a moment ago: someone changed it in between. */
		log_warn("privileged process: %s has %zu errors now: the ceiling and what may be "
			 "opened stay as they were",
			 p->config_path, errs.n);
		rep->err = EINVAL;
	} else {
		config_free(p->cfg);
		p->cfg = next;
		deafen_unselected(p);
		ceiling_update(p, true);
	}
	config_errors_free(&errs);
}

/* Check and answer one request; false (with the reason in p->why) closes the connection. */
static bool answer(struct priv *p, union priv_req *req, size_t n)
{
	struct priv_reply rep;
	int fd = -1;
	bool ok;

	if (n < sizeof(req->h))
		return closes(p, "the collector sent a message of %zu bytes", n);
	if (req->h.version != PRIV_VERSION)
		return closes(p, "the collector sent a message of version %u (this is %u)", req->h.version,
			      PRIV_VERSION);
	if (req->h.type < 1 || req->h.type > PRIV_TYPE_MAX)
		return closes(p, "the collector sent a message of unknown type %u", req->h.type);
	if (req->h.size != n || n != priv_ops_req_size[req->h.type])
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
	case PRIV_PACKET_FILTER:
		ok = do_packet_filter(p, &req->packet_filter, &rep);
		break;
	case PRIV_NOTIFY:
		ok = do_notify(p, &req->notify);
		break;
	case PRIV_RELOAD:
		ok = true;
		do_reload(p, &rep);
		break;
	case PRIV_INPUT_OPEN:
		ok = do_input(p, &req->input, &rep, &fd);
		break;
	case PRIV_RELAY_OPEN:
		ok = do_relay(p, &req->relay, &rep, &fd);
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
	ok = util_send_with_fd(p->sock, &rep, sizeof(rep), fd) == (ssize_t)sizeof(rep);
	if (fd >= 0)
		close(fd);
	if (!ok && (errno == EAGAIN || errno == EWOULDBLOCK))
		return closes(p, "the collector does not read its replies (its queue is full)");
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
	util_wipe(&req, sizeof(req));
	return ok;
}

/* The control socket, once the collector is gone: the collector, no longer uid 0, cannot
 * remove it from a directory root owns. Only a socket root owns (the collector made it
 * before it left uid 0; as its own user it could make none that root owns) that no one
 * answers on any more, as ctl.c's start removes a stale one. */
static void remove_socket(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	int fd, rc;

	if (!path || !strlcopy(sa.sun_path, path, sizeof(sa.sun_path)) || lstat(path, &st) < 0 ||
	    !S_ISSOCK(st.st_mode) || st.st_uid != 0)
		return;
	fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	rc = connect(fd, (const struct sockaddr *)&sa, sizeof(sa));
	if (rc < 0 && errno == ECONNREFUSED)
		unlink(path);
	close(fd);
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

/* How long the collector has to end after SIGTERM or SIGINT passed on to it: then it is
 * killed, whatever it does (stops reading, ignores the signal, hangs in its exit), so that a
 * stop never waits on it. Longer where the memory checkers make every exit slow. */
#define STOP_GRACE_NS (2 * NS_PER_SEC)
#define STOP_GRACE_SLOW_NS (30 * NS_PER_SEC)

static uint64_t stop_grace_ns(void)
{
#ifdef HAVE_SANITIZERS
	return STOP_GRACE_SLOW_NS;
#else
	return RUNNING_ON_VALGRIND ? STOP_GRACE_SLOW_NS : STOP_GRACE_NS;
#endif
}

/* Pass the signals that came on to the collector; a stop starts its deadline. */
static void pass_signals(int sfd, pid_t child, uint64_t *deadline)
{
	struct signalfd_siginfo si;

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		kill(child, (int)si.ssi_signo);
		if ((si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) && !*deadline)
			*deadline = util_mono_ns() + stop_grace_ns();
	}
}

/* poll()'s timeout until deadline (0: none). */
static int until(uint64_t deadline)
{
	uint64_t now = util_mono_ns();

	if (!deadline)
		return -1;
	return deadline <= now ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* Wait for the collector to end, passing signals on meanwhile; past the deadline of a stop
 * it is killed. Its wait status. */
static int reap(pid_t child, int sfd, uint64_t deadline)
{
	int ws = 0, pidfd = -1;

#ifdef SYS_pidfd_open
	/* valgrind knows no pidfd_open (and says so): there, a plain wait. */
	if (!RUNNING_ON_VALGRIND)
		pidfd = (int)syscall(SYS_pidfd_open, child, 0);
#endif
	while (pidfd >= 0) {
		struct pollfd pfd[2] = {{.fd = pidfd, .events = POLLIN}, {.fd = sfd, .events = POLLIN}};
		int n = poll(pfd, sfd >= 0 ? 2 : 1, until(deadline));

		if (n < 0 && errno != EINTR)
			break;
		if (n == 0) {
			log_err("privileged process: the collector did not end within %.0f s of the "
				"signal to stop: killed",
				(double)stop_grace_ns() / NS_PER_SEC);
			kill(child, SIGKILL);
			deadline = 0;
		}
		if (n > 0 && (pfd[0].revents & POLLIN))
			break;
		if (n > 0 && sfd >= 0 && (pfd[1].revents & POLLIN))
			pass_signals(sfd, child, &deadline);
	}
	if (pidfd >= 0)
		close(pidfd);
	while (waitpid(child, &ws, 0) < 0 && errno == EINTR)
		;
	return ws;
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
	uint64_t stop_deadline = 0; /* set by SIGTERM or SIGINT: see STOP_GRACE_NS */
	bool broken = false;
	char *ctl_path = xstrdup(cfg->control.socket); /* as at start: see remove_socket */

	p->sock = sock;
	p->cfg = cfg;
	p->config_path = config_path;
	p->rnd_fd = rnd_fd;
	p->child = child;
	p->refill_ns = util_mono_ns();
	for (size_t i = 0; i < MAX_IFS; i++)
		p->handed[i].fd = -1;
	{
		int ncpus = get_nprocs_conf();

		p->perf_cpus = ncpus > 0 ? (unsigned)ncpus : 1;
		p->perf_tokens = xcalloc((size_t)p->perf_cpus * (PRIV_PERF_WAKER + 1),
					 sizeof(*p->perf_tokens));
		p->perf_ns = xcalloc((size_t)p->perf_cpus * (PRIV_PERF_WAKER + 1),
				     sizeof(*p->perf_ns));
	}
	note_start_nodes(p);
	start_nodes = &p->start_nodes;
	ceiling_update(p, true);
	if (cfg->feed.boot_allowance) {
		struct kernel_state ks;

		kernel_probe(&ks);
		p->boot_left = kernel_bits_needed(&ks);
	}
	if (child > 0)
		sfd = signals_fd(&set);
	/* Replies never wait on the collector: one that does not read them (an honest one has
	 * one request at a time in flight) fills its queue, and is a failed collector. */
	if (fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK) < 0)
		log_errno(LOG_WARNING, "privileged process: cannot make its socket non-blocking");
	pfd[0] = (struct pollfd){.fd = sock, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = sfd, .events = POLLIN};
	for (;;) {
		int n = poll(pfd, sfd >= 0 ? 2 : 1, until(stop_deadline));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			closes(p, "poll: %s", strerror(errno));
			broken = true;
			break;
		}
		if (n == 0) {
			closes(p, "the collector did not end within %.0f s of the signal to stop",
			       (double)stop_grace_ns() / NS_PER_SEC);
			broken = true;
			break;
		}
		if (sfd >= 0 && (pfd[1].revents & POLLIN))
			pass_signals(sfd, child, &stop_deadline);
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
	for (size_t i = 0; i < MAX_IFS; i++)
		if (p->handed[i].fd >= 0)
			close(p->handed[i].fd);
	log_info("privileged process: %llu bits asked, %llu credited, %llu clipped by the "
		 "ceiling",
		 (unsigned long long)p->asked, (unsigned long long)p->credited,
		 (unsigned long long)p->clipped);
	if (child > 0) {
		if (broken)
			kill(child, SIGKILL);
		ws = reap(child, sfd, broken ? 0 : stop_deadline); /* broken: killed already */
		if (WIFEXITED(ws))
			status = WEXITSTATUS(ws);
		else {
			log_err("the collector was killed by signal %d", WTERMSIG(ws));
			status = EXIT_LOST;
		}
	}
	if (broken)
		status = EXIT_LOST;
	if (child > 0)
		remove_socket(ctl_path);
	free(ctl_path);
	if (sfd >= 0)
		close(sfd);
	config_free(p->cfg);
	free(p->perf_tokens);
	free(p->perf_ns);
	config_settings_strlist_free(&p->start_nodes);
	start_nodes = NULL;
	util_wipe(p, sizeof(*p));
	free(p);
	return status;
}

