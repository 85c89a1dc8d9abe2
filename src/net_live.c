/* net_live: libpcap live capture per interface — each interface's capture opened, read and
 * closed, and the interfaces tracked as rtnetlink (net_link.c) or a rescan reports them.
 *
 * Each interface is captured with a small snaplen, nanosecond timestamps (the NIC's own
 * where it offers them and no one else has set its timestamping up), direction and BPF
 * filter (snaplen, direction and filter its own where sources.network.instances gives
 * them); its selectable fd sits in the event loop and pcap_dispatch runs on readiness. Of
 * interfaces that see the same arrivals (a bridge and its ports, a device and the VLANs on
 * it) only one is captured, by the rule in net_stack.c. */
#include "autoconf.h"

#include "net_int.h"

#include <errno.h>
#include <fnmatch.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed_pipeline.h"
#include "log.h"
#include "net_class.h"
#include "priv.h"
#include "util.h"

#define DISPATCH_BATCH 256   /* packets per pcap_dispatch() */
#define DISPATCH_ROUNDS 16   /* batches per wakeup before other events get a turn */
/* Timestamps are taken by the kernel when a packet arrives, not when we read it, so there
 * is no need to be woken for every packet: the ring is handed over when a block fills or
 * after this long. Fewer wakeups is what keeps the cost per packet below tcpdump's. */
#define BUFFER_TIMEOUT_MS 1000
#define BUFFER_BYTES (2 * 1024 * 1024) /* the ring, as tcpdump's: a fraction of a second of a flood */
/* Under a flood the ring is read on a timer instead of on readiness. libpcap's ring is 4
 * blocks of 256 KB, each handed over when full (2000 or so small packets) or after
 * BUFFER_TIMEOUT_MS: a wakeup per block, and each check for readiness (epoll, packet_poll)
 * takes the socket's receive-queue lock, which the kernel takes for every packet it adds.
 * Under a flood, waiting for that lock cost more than the packets themselves. So when blocks
 * come faster than one per DRAIN_MS, the ring (8 blocks, about 100 ms of a 150,000 packet/s
 * flood) is read every DRAIN_MS without asking, at once again if a read stopped at
 * DISPATCH_ROUNDS, until a read finds nothing; at lower rates the wakeup per block is the
 * cheaper. What the kernel had to drop for want of room is counted as skipped. */
#define DRAIN_MS 20

static struct log_ratelimit rl_open = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_lost = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_link = LOG_RATELIMIT_INIT;

/* Is CAP_NET_RAW in our effective set? Read from /proc so no library is needed. */
static bool have_net_raw(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	bool have = true; /* unknown: do not blame the capability */

	if (!f)
		return have;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long eff;

		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			have = (eff >> 13) & 1; /* CAP_NET_RAW */
			break;
		}
	}
	fclose(f);
	return have;
}

static int pcap_direction(enum net_direction d)
{
	return d == DIR_IN ? PCAP_D_IN : d == DIR_OUT ? PCAP_D_OUT : PCAP_D_INOUT;
}

static const char *direction_name(enum net_direction d)
{
	return d == DIR_IN ? "in" : d == DIR_OUT ? "out" : "both";
}

static const char *if_state_down(const struct iface *f)
{
	if (f->ifindex == 0)
		return f->ever_present ? "gone" : "absent";
	return "down";
}

static struct src_inst *if_find_index(struct pcap_state *st, int ifindex)
{
	SOURCE_FOREACH(si, st->src)
		if (((struct iface *)si->drv)->ifindex == ifindex)
			return si;
	return NULL;
}

/* The instance of an interface, new if there was none. */
struct src_inst *net_live_entry(struct pcap_state *st, const char *name)
{
	bool added;
	struct src_inst *si = source_found(st->src, name, &added);
	struct iface *f = si->drv;

	if (added)
		strlcopy(f->kind, "interface", sizeof(f->kind));
	return si;
}

bool net_live_is_auto(const struct strlist *l)
{
	return l->n == 1 && strcmp(l->v[0], "auto") == 0;
}

static enum match config_match(const struct config *cfg, const struct src_inst *si)
{
	const struct iface *f = si->drv;
	const struct strlist *l = &cfg->network.interfaces;
	enum match m = M_NONE;

	/* auto: every interface but loopback and those whose packets are secondhand, such as
	 * a tunnel's, which arrived on another interface first (absent: only ever for a
	 * moment). */
	if (net_live_is_auto(l) || l->n == 0)
		return !f->loopback && !f->secondhand ? M_AUTO : M_NONE;
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], si->name) == 0)
			return M_EXACT;
		if (fnmatch(l->v[i], si->name, 0) == 0)
			m = M_GLOB;
	}
	return m;
}

/* Packets the kernel dropped for want of room since the last look count as skipped. */
static void count_drops(struct iface *f)
{
	struct pcap_stat ps;

	if (pcap_stats(f->p, &ps) == 0 && ps.ps_drop != f->drops) {
		f->cap.dropped += (unsigned)(ps.ps_drop - f->drops);
		f->cap.skip_pending += (unsigned)(ps.ps_drop - f->drops);
		f->drops = ps.ps_drop;
	}
}

void net_live_close(struct src_inst *si)
{
	struct iface *f = si->drv;

	if (f->ev) {
		event_free(f->ev);
		f->ev = NULL;
	}
	if (f->drain_ev) {
		event_free(f->drain_ev);
		f->drain_ev = NULL;
	}
	if (f->p) {
		/* What the kernel has handed over already still counts. */
		if (si->status == SRC_OPEN)
			for (int round = 0; round < DISPATCH_ROUNDS; round++)
				if (pcap_dispatch(f->p, DISPATCH_BATCH, net_capture_packet, (u_char *)&f->cap) <
				    DISPATCH_BATCH)
					break;
		if (si->status == SRC_OPEN)
			count_drops(f);
		net_capture_flush(&f->cap);
		net_sock_sample_stop(si);
		pcap_close(f->p);
		f->p = NULL;
	}
}

/* The capture stopped working: closed, retried with the core's backoff, a rescan soon. */
static void if_failed(struct src_inst *si)
{
	struct iface *f = si->drv;

	source_failed(si);
	net_capture_set_state(&f->cap, "error");
}

/* Read what the ring holds, up to DISPATCH_ROUNDS batches. The packets read, or -1. */
static int if_drain(struct iface *f)
{
	int n = 0, total = 0;

	for (int round = 0; round < DISPATCH_ROUNDS; round++) {
		n = pcap_dispatch(f->p, DISPATCH_BATCH, net_capture_packet, (u_char *)&f->cap);
		if (n > 0)
			total += n;
		if (n < DISPATCH_BATCH)
			break;
	}
	count_drops(f);
	net_capture_flush(&f->cap);
	return n < 0 ? -1 : total;
}

static void if_lost(struct src_inst *si)
{
	struct iface *f = si->drv;

	/* Mostly "the interface went down" or "disappeared"; rtnetlink says which, and
	 * the rescan below puts the state right if its message was missed. */
	log_limited(&rl_lost, LOG_NOTICE, "network/%s: capture stopped: %s", si->name,
		    pcap_geterr(f->p));
	if_failed(si);
	source_rescan_soon(si->src);
}

/* Read on the timer from now on, or on readiness again. */
static void if_drain_next(struct src_inst *si, bool busy)
{
	struct iface *f = si->drv;
	struct timeval tv = {0, DRAIN_MS * 1000};

	if (busy && evtimer_add(f->drain_ev, &tv) == 0) {
		event_del(f->ev);
		return;
	}
	if (!event_pending(f->ev, EV_READ, NULL) && event_add(f->ev, NULL) < 0) {
		log_limited(&rl_lost, LOG_WARNING, "network/%s: cannot register with the event loop",
			    si->name);
		if_failed(si);
	}
}

static void live_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct src_inst *si = arg;
	struct iface *f = si->drv;
	uint64_t now = util_mono_ns(), last = f->woken_ns;
	int n;

	/* Before the packets: a flood is sampled from its first read on. */
	net_sock_sample_tick(si);
	n = if_drain(f);
	f->woken_ns = now;
	if (n < 0) {
		if_lost(si);
		return;
	}
	if (n > 0 && now - last < DRAIN_MS * (NS_PER_SEC / 1000))
		if_drain_next(si, true);
}

static void drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct src_inst *si = arg;
	struct iface *f = si->drv;
	struct timeval now = {0, 0};
	int n;

	net_sock_sample_tick(si);
	n = if_drain(f);
	if (n < 0) {
		if_lost(si);
		return;
	}
	if (n >= DISPATCH_ROUNDS * DISPATCH_BATCH)
		evtimer_add(f->drain_ev, &now); /* more waiting: after the other events */
	else
		if_drain_next(si, n > 0);
}

/* pcap_activate's failure, as a state and a message. */
static const char *activate_error(struct iface *f, int rc, char *msg, size_t size)
{
	const char *perr = pcap_geterr(f->p);

	switch (rc) {
	case PCAP_ERROR_PERM_DENIED:
	case PCAP_ERROR_PROMISC_PERM_DENIED:
		if (priv_refused()) {
			snprintf(msg, size, "packet socket " PRIV_REFUSED_HINT);
			return "refused";
		}
		if (priv_active())
			snprintf(msg, size,
				 "EPERM: live capture needs the capability CAP_NET_RAW, which "
				 "entropyd's privileged process does not have: run it as root, or set "
				 "policy.network.mode = \"disabled\"");
		else if (!have_net_raw())
			snprintf(msg, size,
				 "EPERM: live capture needs the capability CAP_NET_RAW, which "
				 "entropyd does not have: run it as root, or set policy.network.mode "
				 "= \"disabled\"");
		else
			snprintf(msg, size, "permission denied (%s)", perr[0] ? perr : "EPERM");
		return "EPERM";
	case PCAP_ERROR_NO_SUCH_DEVICE:
		snprintf(msg, size, "ENODEV: no such interface; captured when it appears");
		return "gone";
	case PCAP_ERROR_IFACE_NOT_UP:
		snprintf(msg, size, "the interface is not up; captured when it comes up");
		return "down";
	default:
		snprintf(msg, size, "%s%s%s", pcap_statustostr(rc), perr[0] ? ": " : "", perr);
		return "error";
	}
}

/* The NIC's own timestamp type if it offers one (finer and nearer the wire than the host's),
 * else -1. */
static int tstamp_choice(pcap_t *p)
{
	int *types = NULL;
	int n = pcap_list_tstamp_types(p, &types), type = net_stack_tstamp_pick(types, n);

	if (types)
		pcap_free_tstamp_types(types);
	return type;
}

/* libpcap switches the card's timestamping to "receive: all, transmit: off" for hardware
 * stamps. Where another program (a PTP daemon) set the card up otherwise, that would break
 * it: leave such a card alone. A card that cannot say is left to libpcap. */
static bool hwtstamp_left_alone(const char *ifname)
{
	struct hwtstamp_config hc = {0};

	return net_link_dev_ioctl(ifname, SIOCGHWTSTAMP, &hc) == 0 &&
	       !net_flow_hwtstamp_config_free(hc.tx_type, hc.rx_filter);
}

/* pcap_create and pcap_activate with our settings, the card's timestamps if `hw` and it
 * offers them. Returns pcap_activate's result (PCAP_ERROR with f->p NULL if pcap_create
 * failed, errbuf saying why); *tstamp names the timestamps asked for. */
static int activate(const char *name, struct iface *f, bool hw, const char **tstamp,
		    bool *nano, char *errbuf)
{
	int type = -1, rc;

	*tstamp = "host";
	*nano = false;
	f->p = pcap_create(name, errbuf);
	if (!f->p)
		return PCAP_ERROR;
	pcap_set_snaplen(f->p, f->snaplen);
	pcap_set_promisc(f->p, 0); /* our own traffic is enough; never change the NIC's mode */
	pcap_set_timeout(f->p, BUFFER_TIMEOUT_MS);
	pcap_set_buffer_size(f->p, BUFFER_BYTES);
	if (hw)
		type = tstamp_choice(f->p);
	if (type >= 0 && pcap_set_tstamp_type(f->p, type) == 0)
		*tstamp = pcap_tstamp_type_val_to_name(type);
	*nano = pcap_set_tstamp_precision(f->p, PCAP_TSTAMP_PRECISION_NANO) == 0;
	/* The packet socket comes from the privileged process: this one holds no CAP_NET_RAW. */
	priv_capture_begin(name);
	rc = pcap_activate(f->p);
	priv_capture_end();
	return rc;
}

/* A capture that did not open: closed, with its state; the core retries it. */
static enum src_status if_not_open(struct src_inst *si, const char *state, const char *why)
{
	struct iface *f = si->drv;

	net_live_close(si);
	source_set_error(si, "%s", why);
	net_capture_set_state(&f->cap, state);
	return SRC_RETRY;
}

enum src_status net_live_open(struct src_inst *si)
{
	struct iface *f = si->drv;
	const struct config *cfg = si->src->cfg;
	const struct net_capture *want = net_class_capture_config(cfg, si->name);
	char errbuf[PCAP_ERRBUF_SIZE] = "", msg[PCAP_ERRBUF_SIZE + 128];
	const char *tstamp, *state;
	int rc;
	bool nano, hw = !f->no_hw;

	net_live_close(si);
	f->snaplen = want->snaplen;
	f->direction = want->direction;
	free(f->filter);
	f->filter = xstrdup(want->filter);
	if (hw && hwtstamp_left_alone(si->name)) {
		log_info("network/%s: the card's timestamping is set up by another program (a PTP "
			 "daemon?) and is left alone; using the kernel's timestamps",
			 si->name);
		hw = false;
		f->no_hw = true;
	}
	rc = activate(si->name, f, hw, &tstamp, &nano, errbuf);
	if (rc < 0 && strcmp(tstamp, "host") != 0) {
		/* Switching the card's timestamping on needs CAP_NET_ADMIN (or the driver may
		 * refuse): the kernel's stamps need neither. */
		log_info("network/%s: the card's timestamps are not available (%s); using the "
			 "kernel's",
			 si->name, f->p ? pcap_geterr(f->p) : errbuf);
		if (f->p)
			pcap_close(f->p);
		f->p = NULL;
		f->no_hw = true;
		rc = activate(si->name, f, false, &tstamp, &nano, errbuf);
	}
	if (!f->p) {
		log_limited(&rl_open, LOG_WARNING, "network/%s: cannot capture: %s", si->name,
			    errbuf);
		return if_not_open(si, "error", errbuf);
	}
	if (rc == PCAP_ERROR_TSTAMP_PRECISION_NOTSUP) {
		log_limited(&rl_open, LOG_WARNING, "network/%s: nanosecond timestamps not supported; "
			    "the interface is not captured", si->name);
		return if_not_open(si, "error", "nanosecond timestamps not supported");
	}
	if (rc < 0) {
		state = activate_error(f, rc, msg, sizeof(msg));
		if (f->logged != state)
			log_limited(&rl_open, rc == PCAP_ERROR_PERM_DENIED ? LOG_ERR : LOG_WARNING,
				    "network/%s: cannot capture: %s", si->name, msg);
		f->logged = state;
		return if_not_open(si, state, msg);
	}
	if (rc == PCAP_WARNING_TSTAMP_TYPE_NOTSUP)
		tstamp = "host";
	else if (rc > 0)
		log_limited(&rl_open, LOG_NOTICE, "network/%s: %s", si->name, pcap_geterr(f->p));
	nano = nano && pcap_get_tstamp_precision(f->p) == PCAP_TSTAMP_PRECISION_NANO;
	if (pcap_setdirection(f->p, pcap_direction(f->direction)) < 0) {
		log_limited(&rl_open, LOG_WARNING,
			    "network/%s: cannot capture only direction \"%s\": %s; not captured",
			    si->name, direction_name(f->direction), pcap_geterr(f->p));
		return if_not_open(si, "error", "cannot capture only the configured direction "
				   "(sources.network.direction)");
	}
	if (net_sock_set_filter(si, f->filter, msg, sizeof(msg)) < 0) {
		log_limited(&rl_open, LOG_ERR, "network/%s: %s; not captured", si->name, msg);
		return if_not_open(si, "filter error", msg);
	}
	if (pcap_setnonblock(f->p, 1, errbuf) < 0 || pcap_get_selectable_fd(f->p) < 0) {
		log_limited(&rl_open, LOG_WARNING, "network/%s: cannot poll the capture: %s",
			    si->name, errbuf[0] ? errbuf : "no selectable descriptor");
		return if_not_open(si, "error", "cannot poll the capture");
	}
	f->ev = event_new(si->src->base, pcap_get_selectable_fd(f->p), EV_READ | EV_PERSIST,
			  live_read_cb, si);
	f->drain_ev = evtimer_new(si->src->base, drain_cb, si);
	if (!f->ev || !f->drain_ev || event_add(f->ev, NULL) < 0) {
		log_limited(&rl_open, LOG_WARNING,
			    "network/%s: cannot register with the event loop", si->name);
		return if_not_open(si, "error", "cannot register with the event loop");
	}
	net_capture_begin(&f->cap, pcap_datalink(f->p), nano, net_capture_max_eps(cfg));
	f->drops = 0;
	f->woken_ns = 0;
	f->logged = NULL;
	net_capture_set_state(&f->cap, "open");
	net_sock_sample_start(si);
	log_info("network/%s: capturing (snaplen %d, direction %s, %s timestamps, %s precision%s%s%s)",
		 si->name, f->snaplen, direction_name(f->direction), tstamp,
		 nano ? "nanosecond" : "microsecond", f->filter[0] ? ", filter \"" : "",
		 f->filter, f->filter[0] ? "\"" : "");
	return SRC_OPEN;
}

static void if_attach(struct src_inst *si)
{
	struct iface *f = si->drv;

	source_attach(si, f->kind, 0);
	net_capture_attach(&f->cap, si->inst);
}

/* Closed for a reason of this driver's (down, stacked): tried again at once when it goes. */
static void if_idle(struct src_inst *si)
{
	source_close(si, SRC_CLOSED);
}

/* Bring one interface in line with its link state, the config, the policy and the stacking
 * rule (f->match and f->stacked, as the settle step found them). Every link present keeps
 * an instance, so that the rule sees the devices between two wanted ones. */
static void if_sync(struct src_inst *si)
{
	struct iface *f = si->drv;
	bool up = f->ifindex && (f->flags & IFF_UP);

	if (f->match == M_NONE) {
		if (si->inst)
			log_info("network/%s: closed: no longer matches sources.network.interfaces",
				 si->name);
		if_idle(si);
		source_detach(si);
		si->disabled = false; /* said again if it matches again */
		f->stacked_logged[0] = '\0';
		if (!f->ifindex)
			source_forget(si);
		return;
	}
	if (!source_allowed(si)) {
		/* Never opened; the instance stays (while the interface does) so that this is
		 * said once, not at every link message. */
		source_close(si, SRC_SKIPPED);
		source_detach(si);
		if (!f->ifindex && f->match != M_EXACT)
			source_forget(si);
		return;
	}
	/* An interface that auto or a glob found goes away with it; a named one stays and
	 * shows why it is not captured. */
	if (!f->ifindex && f->match != M_EXACT) {
		if (si->inst)
			log_info("network/%s: gone; its counters go to the totals", si->name);
		source_forget(si);
		return;
	}
	if (!up) {
		if_idle(si);
		if (!si->inst && f->match == M_EXACT)
			if_attach(si);
		if (!f->ifindex)
			source_set_error(si, "ENODEV: no such interface%s",
					 f->ever_present ? " any more" : "");
		if (si->inst)
			net_capture_set_state(&f->cap, if_state_down(f));
		return;
	}
	if (f->stacked[0]) {
		/* Said once per reason; shown as the state where the interface was asked for by
		 * name or glob (auto never promised it). */
		if (strcmp(f->stacked, f->stacked_logged) != 0) {
			const char *why = f->stacked_secondhand ? "which are not arrivals of its own"
								: "whose capture counts its packets";

			if (si->inst && si->status == SRC_OPEN)
				log_info("network/%s: closed: %s, %s", si->name, f->stacked, why);
			else if (f->match == M_AUTO)
				log_debug("network/%s: not captured: %s, %s", si->name, f->stacked,
					  why);
			else
				log_info("network/%s: not captured: %s, %s", si->name, f->stacked,
					 why);
			strlcopy(f->stacked_logged, f->stacked, sizeof(f->stacked_logged));
		}
		if_idle(si);
		if (!si->inst && f->match != M_AUTO)
			if_attach(si);
		if (si->inst)
			net_capture_set_state(&f->cap, f->stacked);
		return;
	}
	f->stacked_logged[0] = '\0';
	if (!si->inst)
		if_attach(si);
	if (si->status != SRC_OPEN && si->status != SRC_RETRY)
		source_open(si);
}

/* A link is present (again), or changed: every link gets an instance (see if_sync). */
void net_live_link_update(void *arg, const struct link_info *li)
{
	struct pcap_state *st = arg;
	struct src_inst *si = if_find_index(st, li->ifindex);
	struct iface *f;
	bool was_up;

	if (si && strcmp(si->name, li->name) != 0) {
		/* Renamed: the old name is gone, the new one is a new interface. */
		f = si->drv;
		f->ifindex = 0;
		f->flags = 0;
		if_idle(si);
		si = NULL;
	}
	si = net_live_entry(st, li->name);
	f = si->drv;
	was_up = f->ifindex == li->ifindex && (f->flags & IFF_UP);
	if (f->ifindex != li->ifindex && (si->status == SRC_OPEN || si->status == SRC_RETRY))
		if_idle(si); /* the same name, a new interface: capture it afresh */
	f->ifindex = li->ifindex;
	f->flags = li->flags;
	f->master = li->master;
	f->lower = li->lower;
	f->loopback = li->loopback;
	/* A tunnel bound to a device is stacked on it; one that is not, and the like, carry
	 * secondhand packets (net_stack_link_secondhand()). */
	f->secondhand = !li->lower && net_stack_link_secondhand(li->kind, li->arphrd);
	f->ever_present = true;
	snprintf(f->kind, sizeof(f->kind), "%s",
		 li->kind[0] ? li->kind : li->loopback ? "loopback" : "device");
	if (!was_up && (li->flags & IFF_UP) && si->status == SRC_RETRY)
		if_idle(si); /* a link that comes up is tried at once */
	if (si->inst && was_up && !(li->flags & IFF_UP))
		log_limited(&rl_link, LOG_NOTICE, "network/%s: went down", si->name);
	if (si->inst && !was_up && (li->flags & IFF_UP))
		log_limited(&rl_link, LOG_NOTICE, "network/%s: is up", si->name);
}

void net_live_link_gone(void *arg, int ifindex)
{
	struct src_inst *si = if_find_index(arg, ifindex);
	struct iface *f;

	if (!si)
		return;
	f = si->drv;
	if (si->inst)
		log_limited(&rl_link, LOG_NOTICE, "network/%s: the interface disappeared",
			    si->name);
	f->ifindex = 0;
	f->flags = 0;
	if_idle(si);
}

/* A rescan did not find it: gone, if it was there. */
void net_live_gone(struct src_inst *si)
{
	struct iface *f = si->drv;

	if (f->ifindex)
		net_live_link_gone(si->src->priv, f->ifindex);
}

/* Which interfaces are wanted, which of those the stacking rule leaves to another, then
 * each one's capture: after every batch of link messages, a rescan, a retry, a reload. */
void net_live_settle(struct source *src)
{
	struct pcap_state *st = src->priv;
	struct stack_link *l;
	struct stack_verdict *v;
	size_t n = 0, i = 0;

	if (st->offline)
		return;
	SOURCE_FOREACH(si, src)
		n++;
	l = xcalloc(n ? n : 1, sizeof(*l));
	v = xcalloc(n ? n : 1, sizeof(*v));
	SOURCE_FOREACH(si, src) {
		struct iface *f = si->drv;

		f->match = config_match(src->cfg, si);
		l[i].ifindex = f->ifindex;
		l[i].master = f->master;
		l[i].lower = f->lower;
		l[i].up = f->ifindex && (f->flags & IFF_UP);
		l[i].wanted = f->match != M_NONE && l[i].up &&
			      feed_pipeline_enabled(CLASS_NETWORK, si->name);
		l[i].secondhand = f->secondhand;
		l[i].own_only = f->match == M_AUTO;
		i++;
	}
	net_stack_resolve(l, n, v);
	i = 0;
	SOURCE_FOREACH(si, src) {
		struct iface *f = si->drv;
		const struct src_inst *by =
			v[i].why >= STACK_PORT ? if_find_index(st, v[i].by) : NULL;

		if (by)
			snprintf(f->stacked, sizeof(f->stacked), "%s %s", net_stack_why_text(v[i].why),
				 by->name);
		else
			f->stacked[0] = '\0';
		f->stacked_secondhand = by && v[i].why == STACK_SECONDHAND;
		i++;
	}
	free(l);
	free(v);
	/* Captures that close go first, then those that open: a port's capture is gone
	 * before its new master's starts, so no packet is counted on both in between. */
	for (int pass = 0; pass < 2; pass++)
		SOURCE_FOREACH_SAFE(si, nx, src) {
			struct iface *f = si->drv;
			bool closing = f->stacked[0] || f->match == M_NONE;

			if (closing == (pass == 0))
				if_sync(si);
		}
}

void net_live_links_settle(void *arg)
{
	struct pcap_state *st = arg;

	net_live_settle(st->src);
}

void net_live_links_lost(void *arg)
{
	struct pcap_state *st = arg;

	source_rescan_soon(st->src);
}

