/* source_pcap: packet arrivals as a timing source — the driver, and libpcap live capture per
 * interface (source_pcap_file.c replays a savefile instead).
 *
 * Each interface is captured with a small snaplen, nanosecond timestamps (the NIC's own
 * where it offers them and no one else has set its timestamping up), direction and BPF
 * filter (snaplen, direction and filter its own where sources.network.instances gives
 * them); its selectable fd sits in the event loop and pcap_dispatch runs on readiness.
 * Interfaces come and go: rtnetlink (source_pcap_link.c) says when one appears, goes up or
 * down, is enslaved or disappears; where rtnetlink is not available, the list is rescanned on
 * a timer. None of that is ever fatal: it shows as the instance's state. Of interfaces that
 * see the same arrivals (a bridge and its ports, a device and the VLANs on it) only one is
 * captured, by the rule in source_pcap_stack.c. */
#include "autoconf.h"

#include "source_pcap.h"

#include <errno.h>
#include <fnmatch.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "class_network.h"
#include "log.h"
#include "pipeline.h"
#include "source_pcap_int.h"
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
#define RETRY_MIN_S 5             /* a capture that failed to open is retried after this, */
#define RETRY_MAX_S 300           /* doubling up to this */
#define RESCAN_S 10               /* without rtnetlink: how often interfaces are rescanned */

/* ---- helpers ---- */

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

static bool filter_ok(const struct config *cfg, const char *key, const struct net_capture *cap,
		      const char *then)
{
	char msg[PCAP_ERRBUF_SIZE];
	const char *filter = cap->filter;

	if (net_filter_compiles(filter, cap->snaplen, msg, sizeof(msg)))
		return true;
	log_err("%s: %s: \"%s\" does not compile: %s; %s", cfg->path ? cfg->path : "configuration",
		key, filter, msg, then);
	return false;
}

/* Does every filter of cfg compile? Each one that does not is logged, with its key and
 * `then`: what follows. */
static bool filters_compile(const struct config *cfg, const char *then)
{
	bool ok = filter_ok(cfg, "sources.network.filter", &cfg->network.capture, then);

	for (size_t i = 0; i < cfg->network.n_instances; i++) {
		const struct net_override *o = &cfg->network.instances[i];
		char key[64];

		snprintf(key, sizeof(key), "sources.network.instances[%zu].filter", i);
		if (o->set & NET_SET_FILTER)
			ok = filter_ok(cfg, key, &o->cap, then) && ok;
	}
	return ok;
}

/* ---- live capture: interfaces ---- */

enum match { M_NONE, M_AUTO, M_GLOB, M_EXACT };

enum if_status {
	IF_IDLE,   /* known, not captured (not up, or not wanted) */
	IF_OPEN,
	IF_FAILED, /* could not be opened: retried at retry_ns */
};

struct iface {
	struct iface *next;
	struct pcap_state *st;
	char name[IFNAMSIZ];
	char kind[24];
	int ifindex; /* 0: not present */
	unsigned flags;
	int master, lower; /* struct link_info's */
	bool loopback, seen;
	bool secondhand; /* its packets are not arrivals of its own: auto leaves it out */
	bool ever_present;
	bool disabled;          /* by policy: never opened, said once */
	bool no_hw;             /* the card's timestamps failed or are another's: the kernel's */
	/* Not captured because another captured interface sees its arrivals, or (auto) because
	 * it carries a secondhand device's packets (set by net_links_settle): the state shown,
	 * e.g. "stacked on eth0"; "" when captured. */
	char stacked[IFNAMSIZ + 24];
	bool stacked_secondhand; /* stacked names a secondhand device below, not a capture */
	char stacked_logged[IFNAMSIZ + 24];
	const char *logged;     /* the failure last logged, so a retry does not repeat it */
	enum match match;
	enum if_status status;
	pcap_t *p;
	struct event *ev;       /* the capture's descriptor is readable */
	struct event *drain_ev; /* the timer that reads the ring under a flood */
	uint64_t woken_ns;      /* when ev last fired */
	unsigned drops;         /* the kernel's drops (pcap_stats) already counted */
	/* What the capture was last opened with (config_net_capture), to tell at a reload
	 * whether it has to be opened afresh. */
	int snaplen;
	enum net_direction direction;
	char *filter;
	unsigned retry_s;
	uint64_t retry_ns;
	struct capture cap;
};

static const char *if_state_down(const struct iface *f)
{
	if (f->ifindex == 0)
		return f->ever_present ? "gone" : "absent";
	return "down";
}

static struct iface *if_find(struct pcap_state *st, const char *name)
{
	for (struct iface *f = st->ifs; f; f = f->next)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

static struct iface *if_find_index(struct pcap_state *st, int ifindex)
{
	for (struct iface *f = st->ifs; f; f = f->next)
		if (f->ifindex == ifindex)
			return f;
	return NULL;
}

static bool is_auto(const struct strlist *l)
{
	return l->n == 1 && strcmp(l->v[0], "auto") == 0;
}

static enum match config_match(const struct config *cfg, const struct iface *f)
{
	const struct strlist *l = &cfg->network.interfaces;
	enum match m = M_NONE;

	/* auto: every interface but loopback and those whose packets are secondhand, such as
	 * a tunnel's, which arrived on another interface first (absent: only ever for a
	 * moment). */
	if (is_auto(l) || l->n == 0)
		return !f->loopback && !f->secondhand ? M_AUTO : M_NONE;
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i], f->name) == 0)
			return M_EXACT;
		if (fnmatch(l->v[i], f->name, 0) == 0)
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

static void if_close(struct iface *f)
{
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
		if (f->status == IF_OPEN)
			for (int round = 0; round < DISPATCH_ROUNDS; round++)
				if (pcap_dispatch(f->p, DISPATCH_BATCH, capture_packet, (u_char *)&f->cap) <
				    DISPATCH_BATCH)
					break;
		if (f->status == IF_OPEN)
			count_drops(f);
		capture_flush(&f->cap);
		pcap_close(f->p);
		f->p = NULL;
	}
	f->status = IF_IDLE;
}

static void if_forget(struct pcap_state *st, struct iface *f)
{
	if_close(f);
	capture_detach(&f->cap, f->name);
	for (struct iface **pp = &st->ifs; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	free(f->filter);
	wipe(f, sizeof(*f));
	free(f);
}

static void schedule_retry(struct pcap_state *st);
static void schedule_rescan(struct pcap_state *st, double seconds);

static void if_failed(struct iface *f, const char *state)
{
	uint64_t now = mono_ns();

	if_close(f);
	f->status = IF_FAILED;
	f->retry_s = f->retry_s ? f->retry_s * 2 : RETRY_MIN_S;
	if (f->retry_s > RETRY_MAX_S)
		f->retry_s = RETRY_MAX_S;
	f->retry_ns = now + (uint64_t)f->retry_s * NS_PER_SEC;
	capture_set_state(&f->cap, state);
	schedule_retry(f->st);
}

/* Read what the ring holds, up to DISPATCH_ROUNDS batches. The packets read, or -1. */
static int if_drain(struct iface *f)
{
	int n = 0, total = 0;

	for (int round = 0; round < DISPATCH_ROUNDS; round++) {
		n = pcap_dispatch(f->p, DISPATCH_BATCH, capture_packet, (u_char *)&f->cap);
		if (n > 0)
			total += n;
		if (n < DISPATCH_BATCH)
			break;
	}
	count_drops(f);
	capture_flush(&f->cap);
	return n < 0 ? -1 : total;
}

static void if_lost(struct iface *f)
{
	/* Mostly "the interface went down" or "disappeared"; rtnetlink says which, and
	 * the rescan below puts the state right if its message was missed. */
	log_limited(&rl_lost, LOG_NOTICE, "network/%s: capture stopped: %s", f->name,
		    pcap_geterr(f->p));
	if_failed(f, "error");
	schedule_rescan(f->st, 0);
}

/* Read on the timer from now on, or on readiness again. */
static void if_drain_next(struct iface *f, bool busy)
{
	struct timeval tv = {0, DRAIN_MS * 1000};

	if (busy && evtimer_add(f->drain_ev, &tv) == 0) {
		event_del(f->ev);
		return;
	}
	if (!event_pending(f->ev, EV_READ, NULL) && event_add(f->ev, NULL) < 0) {
		log_limited(&rl_lost, LOG_WARNING, "network/%s: cannot register with the event loop",
			    f->name);
		if_failed(f, "error");
	}
}

static void live_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct iface *f = arg;
	uint64_t now = mono_ns(), last = f->woken_ns;
	int n = if_drain(f);

	f->woken_ns = now;
	if (n < 0)
		if_lost(f);
	else if (n > 0 && now - last < DRAIN_MS * (NS_PER_SEC / 1000))
		if_drain_next(f, true);
}

static void drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct iface *f = arg;
	int n = if_drain(f);
	struct timeval now = {0, 0};

	if (n < 0)
		if_lost(f);
	else if (n >= DISPATCH_ROUNDS * DISPATCH_BATCH)
		evtimer_add(f->drain_ev, &now); /* more waiting: after the other events */
	else
		if_drain_next(f, n > 0);
}

/* pcap_activate's failure, as a state and a message. */
static const char *activate_error(struct iface *f, int rc, char *msg, size_t size)
{
	const char *perr = pcap_geterr(f->p);

	switch (rc) {
	case PCAP_ERROR_PERM_DENIED:
	case PCAP_ERROR_PROMISC_PERM_DENIED:
		if (!have_net_raw())
			snprintf(msg, size,
				 "permission denied: live capture needs the capability CAP_NET_RAW, "
				 "which entropyd does not have");
		else
			snprintf(msg, size, "permission denied (%s)", perr[0] ? perr : "EPERM");
		return "EPERM";
	case PCAP_ERROR_NO_SUCH_DEVICE:
		snprintf(msg, size, "no such interface");
		return "gone";
	case PCAP_ERROR_IFACE_NOT_UP:
		snprintf(msg, size, "the interface is not up");
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
	int n = pcap_list_tstamp_types(p, &types), type = tstamp_pick(types, n);

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

	return net_dev_ioctl(ifname, SIOCGHWTSTAMP, &hc) == 0 &&
	       !hwtstamp_config_free(hc.tx_type, hc.rx_filter);
}

/* pcap_create and pcap_activate with our settings, the card's timestamps if `hw` and it
 * offers them. Returns pcap_activate's result (PCAP_ERROR with f->p NULL if pcap_create
 * failed, errbuf saying why); *tstamp names the timestamps asked for. */
static int activate(struct iface *f, bool hw, const char **tstamp, bool *nano, char *errbuf)
{
	int type = -1;

	*tstamp = "host";
	*nano = false;
	f->p = pcap_create(f->name, errbuf);
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
	return pcap_activate(f->p);
}

static void if_open(struct iface *f)
{
	struct pcap_state *st = f->st;
	const struct config *cfg = st->src->cfg;
	const struct net_capture *want = config_net_capture(cfg, f->name);
	char errbuf[PCAP_ERRBUF_SIZE] = "", msg[PCAP_ERRBUF_SIZE + 128];
	const char *tstamp, *state;
	int rc;
	bool nano, hw = !f->no_hw;

	if_close(f);
	f->snaplen = want->snaplen;
	f->direction = want->direction;
	free(f->filter);
	f->filter = xstrdup(want->filter);
	if (hw && hwtstamp_left_alone(f->name)) {
		log_info("network/%s: the card's timestamping is set up by another program (a PTP "
			 "daemon?) and is left alone; using the kernel's timestamps",
			 f->name);
		hw = false;
		f->no_hw = true;
	}
	rc = activate(f, hw, &tstamp, &nano, errbuf);
	if (rc < 0 && strcmp(tstamp, "host") != 0) {
		/* Switching the card's timestamping on needs CAP_NET_ADMIN (or the driver may
		 * refuse): the kernel's stamps need neither. */
		log_info("network/%s: the card's timestamps are not available (%s); using the "
			 "kernel's",
			 f->name, f->p ? pcap_geterr(f->p) : errbuf);
		if (f->p)
			pcap_close(f->p);
		f->p = NULL;
		f->no_hw = true;
		rc = activate(f, false, &tstamp, &nano, errbuf);
	}
	if (!f->p) {
		log_limited(&rl_open, LOG_WARNING, "network/%s: cannot capture: %s", f->name, errbuf);
		if_failed(f, "error");
		return;
	}
	if (rc == PCAP_ERROR_TSTAMP_PRECISION_NOTSUP) {
		log_limited(&rl_open, LOG_WARNING, "network/%s: nanosecond timestamps not supported; "
			    "the interface is not captured", f->name);
		if_failed(f, "error");
		return;
	}
	if (rc < 0) {
		state = activate_error(f, rc, msg, sizeof(msg));
		if (f->logged != state)
			log_limited(&rl_open, rc == PCAP_ERROR_PERM_DENIED ? LOG_ERR : LOG_WARNING,
				    "network/%s: cannot capture: %s", f->name, msg);
		f->logged = state;
		if_failed(f, state);
		return;
	}
	if (rc == PCAP_WARNING_TSTAMP_TYPE_NOTSUP)
		tstamp = "host";
	else if (rc > 0)
		log_limited(&rl_open, LOG_NOTICE, "network/%s: %s", f->name, pcap_geterr(f->p));
	nano = nano && pcap_get_tstamp_precision(f->p) == PCAP_TSTAMP_PRECISION_NANO;
	if (pcap_setdirection(f->p, pcap_direction(f->direction)) < 0) {
		log_limited(&rl_open, LOG_WARNING,
			    "network/%s: cannot capture only direction \"%s\": %s; not captured",
			    f->name, direction_name(f->direction), pcap_geterr(f->p));
		if_failed(f, "error");
		return;
	}
	if (capture_set_filter(f->p, f->filter, msg, sizeof(msg)) < 0) {
		log_limited(&rl_open, LOG_ERR, "network/%s: %s; not captured", f->name, msg);
		if_failed(f, "filter error");
		return;
	}
	if (pcap_setnonblock(f->p, 1, errbuf) < 0 || pcap_get_selectable_fd(f->p) < 0) {
		log_limited(&rl_open, LOG_WARNING, "network/%s: cannot poll the capture: %s",
			    f->name, errbuf[0] ? errbuf : "no selectable descriptor");
		if_failed(f, "error");
		return;
	}
	f->ev = event_new(st->src->base, pcap_get_selectable_fd(f->p), EV_READ | EV_PERSIST,
			  live_read_cb, f);
	f->drain_ev = evtimer_new(st->src->base, drain_cb, f);
	if (!f->ev || !f->drain_ev || event_add(f->ev, NULL) < 0) {
		log_limited(&rl_open, LOG_WARNING,
			    "network/%s: cannot register with the event loop", f->name);
		if_failed(f, "error");
		return;
	}
	capture_begin(&f->cap, pcap_datalink(f->p), nano, capture_max_eps(cfg));
	f->drops = 0;
	f->woken_ns = 0;
	f->status = IF_OPEN;
	f->retry_s = 0;
	f->logged = NULL;
	capture_set_state(&f->cap, "open");
	log_info("network/%s: capturing (snaplen %d, direction %s, %s timestamps, %s precision%s%s%s)",
		 f->name, f->snaplen, direction_name(f->direction), tstamp,
		 nano ? "nanosecond" : "microsecond", f->filter[0] ? ", filter \"" : "",
		 f->filter, f->filter[0] ? "\"" : "");
}

/* Bring one interface in line with its link state, the config, the policy and the stacking
 * rule (f->match and f->stacked, as net_links_settle found them). Every link present keeps
 * an entry, so that the rule sees the devices between two wanted ones. */
static void if_sync(struct pcap_state *st, struct iface *f)
{
	bool up = f->ifindex && (f->flags & IFF_UP);

	if (f->match == M_NONE) {
		if (f->cap.inst)
			log_info("network/%s: closed: no longer matches sources.network.interfaces",
				 f->name);
		if_close(f);
		capture_detach(&f->cap, f->name);
		f->disabled = false;
		f->stacked_logged[0] = '\0';
		if (!f->ifindex)
			if_forget(st, f);
		return;
	}
	if (!pipeline_enabled(CLASS_NETWORK, f->name)) {
		/* Never opened; the entry stays (while the interface does) so that this is
		 * said once, not at every link message. */
		if (f->cap.inst)
			log_info("network/%s: closed: now disabled by policy", f->name);
		else if (!f->disabled)
			log_info("network/%s: not opened: disabled by policy", f->name);
		if_close(f);
		capture_detach(&f->cap, f->name);
		f->disabled = true;
		if (!f->ifindex && f->match != M_EXACT)
			if_forget(st, f);
		return;
	}
	f->disabled = false;
	/* An interface that auto or a glob found goes away with it; a named one stays and
	 * shows why it is not captured. */
	if (!f->ifindex && f->match != M_EXACT) {
		if (f->cap.inst)
			log_info("network/%s: gone; its counters go to the totals", f->name);
		if_forget(st, f);
		return;
	}
	if (!up) {
		if_close(f);
		f->retry_s = 0;
		if (f->cap.inst)
			capture_set_state(&f->cap, if_state_down(f));
		else if (f->match == M_EXACT) {
			capture_attach(&f->cap, f->name, f->kind);
			capture_set_state(&f->cap, if_state_down(f));
		}
		return;
	}
	if (f->stacked[0]) {
		/* Said once per reason; shown as the state where the interface was asked for by
		 * name or glob (auto never promised it). */
		if (strcmp(f->stacked, f->stacked_logged) != 0) {
			const char *why = f->stacked_secondhand ? "which are not arrivals of its own"
								: "whose capture counts its packets";

			if (f->cap.inst && f->status == IF_OPEN)
				log_info("network/%s: closed: %s, %s", f->name, f->stacked, why);
			else if (f->match == M_AUTO)
				log_debug("network/%s: not captured: %s, %s", f->name, f->stacked,
					  why);
			else
				log_info("network/%s: not captured: %s, %s", f->name, f->stacked, why);
			strlcopy(f->stacked_logged, f->stacked, sizeof(f->stacked_logged));
		}
		if_close(f);
		f->retry_s = 0;
		if (!f->cap.inst && f->match != M_AUTO)
			capture_attach(&f->cap, f->name, f->kind);
		if (f->cap.inst)
			capture_set_state(&f->cap, f->stacked);
		return;
	}
	f->stacked_logged[0] = '\0';
	if (!f->cap.inst)
		capture_attach(&f->cap, f->name, f->kind);
	if (f->status == IF_IDLE)
		if_open(f);
}

static struct iface *if_new(struct pcap_state *st, const char *name)
{
	struct iface *f = xcalloc(1, sizeof(*f));

	f->st = st;
	strlcopy(f->name, name, sizeof(f->name));
	strlcopy(f->kind, "interface", sizeof(f->kind));
	f->next = st->ifs;
	st->ifs = f;
	return f;
}

/* A link is present (again), or changed: every link gets an entry (see if_sync). */
void net_link_update(struct pcap_state *st, const struct link_info *li)
{
	struct iface *f = if_find_index(st, li->ifindex);
	bool was_up;

	if (f && strcmp(f->name, li->name) != 0) {
		/* Renamed: the old name is gone, the new one is a new interface. */
		f->ifindex = 0;
		f->flags = 0;
		if_close(f);
		f = NULL;
	}
	if (!f)
		f = if_find(st, li->name);
	if (!f)
		f = if_new(st, li->name);
	was_up = f->ifindex == li->ifindex && (f->flags & IFF_UP);
	if (f->ifindex != li->ifindex && f->status != IF_IDLE)
		if_close(f); /* the same name, a new interface: capture it afresh */
	f->ifindex = li->ifindex;
	f->flags = li->flags;
	f->master = li->master;
	f->lower = li->lower;
	f->loopback = li->loopback;
	/* A tunnel bound to a device is stacked on it; one that is not, and the like, carry
	 * secondhand packets (link_secondhand()). */
	f->secondhand = !li->lower && link_secondhand(li->kind, li->arphrd);
	f->ever_present = true;
	f->seen = true;
	snprintf(f->kind, sizeof(f->kind), "%s",
		 li->kind[0] ? li->kind : li->loopback ? "loopback" : "device");
	if (!was_up && (li->flags & IFF_UP) && f->status == IF_FAILED)
		f->status = IF_IDLE; /* a link that comes up is tried at once */
	if (f->cap.inst && was_up && !(li->flags & IFF_UP))
		log_limited(&rl_link, LOG_NOTICE, "network/%s: went down", f->name);
	if (f->cap.inst && !was_up && (li->flags & IFF_UP))
		log_limited(&rl_link, LOG_NOTICE, "network/%s: is up", f->name);
}

void net_link_gone(struct pcap_state *st, int ifindex)
{
	struct iface *f = if_find_index(st, ifindex);

	if (!f)
		return;
	if (f->cap.inst)
		log_limited(&rl_link, LOG_NOTICE, "network/%s: the interface disappeared", f->name);
	f->ifindex = 0;
	f->flags = 0;
	if_close(f);
	f->retry_s = 0;
}

/* Which interfaces are wanted, which of those the stacking rule leaves to another, then
 * each one's capture: after every batch of link messages, a rescan, a retry, a reload. */
void net_links_settle(struct pcap_state *st)
{
	const struct config *cfg = st->src->cfg;
	struct stack_link *l;
	struct stack_verdict *v;
	size_t n = 0, i = 0;

	for (struct iface *f = st->ifs; f; f = f->next)
		n++;
	l = xcalloc(n ? n : 1, sizeof(*l));
	v = xcalloc(n ? n : 1, sizeof(*v));
	for (struct iface *f = st->ifs; f; f = f->next, i++) {
		f->match = config_match(cfg, f);
		l[i].ifindex = f->ifindex;
		l[i].master = f->master;
		l[i].lower = f->lower;
		l[i].up = f->ifindex && (f->flags & IFF_UP);
		l[i].wanted = f->match != M_NONE && l[i].up &&
			      pipeline_enabled(CLASS_NETWORK, f->name);
		l[i].secondhand = f->secondhand;
		l[i].own_only = f->match == M_AUTO;
	}
	stack_resolve(l, n, v);
	i = 0;
	for (struct iface *f = st->ifs; f; f = f->next, i++) {
		const struct iface *by = v[i].why >= STACK_PORT ? if_find_index(st, v[i].by) : NULL;

		if (by)
			snprintf(f->stacked, sizeof(f->stacked), "%s %s", stack_why_text(v[i].why),
				 by->name);
		else
			f->stacked[0] = '\0';
		f->stacked_secondhand = by && v[i].why == STACK_SECONDHAND;
	}
	free(l);
	free(v);
	/* Captures that close go first, then those that open: a port's capture is gone
	 * before its new master's starts, so no packet is counted on both in between. */
	for (int pass = 0; pass < 2; pass++)
		for (struct iface *f = st->ifs, *next; f; f = next) {
			bool closing = f->stacked[0] || f->match == M_NONE;

			next = f->next;
			if (closing == (pass == 0))
				if_sync(st, f);
		}
}

/* A full rescan: links not seen are gone. */
static void rescan(struct pcap_state *st)
{
	for (struct iface *f = st->ifs; f; f = f->next)
		f->seen = false;
	if (net_links_dump(st) < 0) {
		log_limited(&rl_link, LOG_WARNING,
			    "network: cannot list interfaces (rtnetlink and /proc/net/dev)");
		return;
	}
	for (struct iface *f = st->ifs; f; f = f->next)
		if (!f->seen && f->ifindex)
			net_link_gone(st, f->ifindex);
	net_links_settle(st);
}

static void rescan_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pcap_state *st = arg;

	rescan(st);
	if (st->nl_fd < 0)
		schedule_rescan(st, RESCAN_S);
}

void net_rescan_soon(struct pcap_state *st)
{
	schedule_rescan(st, 0);
}

static void schedule_rescan(struct pcap_state *st, double seconds)
{
	struct timeval tv = {(time_t)seconds, (suseconds_t)((seconds - (time_t)seconds) * 1e6)};

	if (st->rescan_ev && !(seconds > 0 && evtimer_pending(st->rescan_ev, NULL)))
		evtimer_add(st->rescan_ev, &tv);
}

static void retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pcap_state *st = arg;
	uint64_t now = mono_ns();

	for (struct iface *f = st->ifs; f; f = f->next)
		if (f->status == IF_FAILED && f->retry_ns <= now)
			f->status = IF_IDLE;
	net_links_settle(st);
	schedule_retry(st);
}

static void schedule_retry(struct pcap_state *st)
{
	uint64_t now = mono_ns(), first = 0;
	struct timeval tv;

	for (struct iface *f = st->ifs; f; f = f->next)
		if (f->status == IF_FAILED && (!first || f->retry_ns < first))
			first = f->retry_ns;
	if (!first || !st->retry_ev)
		return;
	first = first > now ? first - now : 0;
	tv.tv_sec = (time_t)(first / NS_PER_SEC);
	tv.tv_usec = (suseconds_t)(first % NS_PER_SEC / 1000);
	evtimer_add(st->retry_ev, &tv);
}

static void live_start(struct pcap_state *st)
{
	const struct config *cfg = st->src->cfg;
	const struct strlist *l = &cfg->network.interfaces;

	st->nl_fd = -1;
	st->rescan_ev = evtimer_new(st->src->base, rescan_cb, st);
	st->retry_ev = evtimer_new(st->src->base, retry_cb, st);
	if (net_links_monitor(st) < 0) {
		log_errno(LOG_WARNING, "network: no rtnetlink link notifications; interfaces are "
				       "rescanned every %d s",
			  RESCAN_S);
		schedule_rescan(st, RESCAN_S);
	}
	/* Named interfaces exist from the start, so that a missing one shows as absent. */
	if (!is_auto(l))
		for (size_t i = 0; i < l->n; i++)
			if (!strpbrk(l->v[i], "*?[") && !if_find(st, l->v[i]))
				if_new(st, l->v[i]);
	rescan(st);
	for (struct iface *f = st->ifs; f; f = f->next)
		if (f->match == M_EXACT && !f->ever_present)
			log_warn("network/%s: no such interface (yet); captured when it appears",
				 f->name);
}

static void live_stop(struct pcap_state *st)
{
	while (st->ifs)
		if_forget(st, st->ifs);
	net_links_monitor_stop(st);
	if (st->rescan_ev)
		event_free(st->rescan_ev);
	if (st->retry_ev)
		event_free(st->retry_ev);
	st->rescan_ev = st->retry_ev = NULL;
}

/* A reload: an interface whose capture settings (config_net_capture) changed is captured
 * afresh, unless its new filter does not compile (filters_compile said so): then it keeps
 * the capture it has. The others keep theirs, and every instance its state. A new direction
 * needs a new capture anyway: libpcap leaves the kernel's PACKET_IGNORE_OUTGOING set once
 * "in" was asked for. */
static void live_reload(struct pcap_state *st)
{
	const struct config *cfg = st->src->cfg;
	char msg[PCAP_ERRBUF_SIZE];

	for (struct iface *f = st->ifs, *next; f; f = next) {
		const struct net_capture *want = config_net_capture(cfg, f->name);

		next = f->next;
		if (f->status == IF_OPEN) {
			f->cap.max_eps = capture_max_eps(cfg);
			if ((f->snaplen != want->snaplen || f->direction != want->direction ||
			     strcmp(f->filter, want->filter) != 0) &&
			    net_filter_compiles(want->filter, want->snaplen, msg, sizeof(msg)))
				if_close(f);
		} else if (f->status == IF_FAILED) {
			f->status = IF_IDLE; /* a new config may fix it: try again now */
			f->retry_s = 0;
		}
	}
	/* Named interfaces that are new in the list. */
	if (!is_auto(&cfg->network.interfaces))
		for (size_t i = 0; i < cfg->network.interfaces.n; i++) {
			const char *n = cfg->network.interfaces.v[i];

			if (!strpbrk(n, "*?[") && !if_find(st, n))
				if_new(st, n);
		}
	rescan(st);
}

/* ---- the driver ---- */

static bool offline(const struct config *cfg)
{
	return cfg->network.file && cfg->network.file[0];
}

static void state_start(struct pcap_state *st)
{
	const struct config *cfg = st->src->cfg;

	st->offline = offline(cfg);
	if (st->offline)
		net_replay_start(st);
	else
		live_start(st);
}

static void state_stop(struct pcap_state *st)
{
	if (st->offline)
		net_replay_stop(st);
	else
		live_stop(st);
}

static int pcap_src_start(struct source *src)
{
	struct pcap_state *st;

	if (!filters_compile(src->cfg, "see pcap-filter(7)"))
		return -1;
	st = xcalloc(1, sizeof(*st));
	st->src = src;
	st->nl_fd = -1;
	src->priv = st;
	state_start(st);
	return 0;
}

static bool pcap_src_reload(struct source *src)
{
	struct pcap_state *st = src->priv;
	const struct config *cfg = src->cfg;

	filters_compile(cfg, "the interfaces it applies to keep the capture they have");
	if (offline(cfg) != st->offline ||
	    (st->offline && strcmp(cfg->network.file, net_replay_path(st)) != 0)) {
		log_info("network: now %s", offline(cfg) ? "replaying a savefile" : "capturing live");
		state_stop(st);
		state_start(st);
		return false;
	}
	if (st->offline) {
		net_replay_reload(st);
		return false;
	}
	live_reload(st);
	return false;
}

static void pcap_src_stop(struct source *src)
{
	struct pcap_state *st = src->priv;

	if (!st)
		return;
	state_stop(st);
	wipe(st, sizeof(*st));
	free(st);
	src->priv = NULL;
}

const struct source_ops source_pcap_ops = {
	.name = "network",
	.cls = CLASS_NETWORK,
	.missing = NULL,
	.start = pcap_src_start,
	.reload = pcap_src_reload,
	.stop = pcap_src_stop,
};
