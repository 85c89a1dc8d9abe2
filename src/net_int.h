/* net_int: what the network source's own files share; nothing else includes it.
 * net.c: the driver; net_live.c: live interfaces; net_capture.c: the per-packet path;
 * net_link.c: rtnetlink and the fallback scan; net_file.c: savefiles;
 * net_flow.c, net_stack.c: the pure parts. */
#ifndef ENTROPYD_NET_INT_H
#define ENTROPYD_NET_INT_H

#include <net/if.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "net.h"
#include "net_flow.h"
#include "net_sample.h"
#include "net_stack.h"
#include "source.h"

struct instance;

/* Timestamps handed to the pipeline together, after their flows are counted. */
#define CAPTURE_BATCH 256

/* One stream of packets, live or replayed, feeding one pipeline instance. */
struct capture {
	struct instance *inst;
	int dlt;
	bool nano; /* timestamps carry nanoseconds (else microseconds) */
	uint32_t max_eps;
	struct event_cap ecap;
	struct flow_top top;
	double weight;
	int share_pct; /* the dominant share shown in the state; 0 when none dominates */
	const char *base_state;
	uint64_t packets, skip_pending, bad_time, sub_us;
	uint64_t dropped; /* by the kernel for want of room (counted in skip_pending too) */
	/* The kernel samples the packets (net_capture_sampled()), or did within the flow counter's
	 * memory: packets still to count before it has forgotten the sample. */
	bool sampled;
	uint32_t sample_left;
	unsigned n_batch;
	uint64_t batch[CAPTURE_BATCH];
	char state[96];
};

/* The stream starts on a pipeline instance the core attached. */
void net_capture_attach(struct capture *c, struct instance *inst);
/* The instance is about to be detached: what is pending goes in, a debug line gives the
 * counts, and the stream is cleared. */
void net_capture_detach(struct capture *c, const char *name);
/* The state shown: base ("open", "down", ...) and the dominant-flow weight if any. */
void net_capture_set_state(struct capture *c, const char *base);
/* A new stream on the instance (a new capture or a replay's second pass). */
void net_capture_begin(struct capture *c, int dlt, bool nano, uint32_t max_eps);
/* Hand what net_capture_packet gathered to the pipeline: the timed packets as samples, under the
 * dominant-flow weight as it is after them, and those over the event cap as skipped. */
void net_capture_flush(struct capture *c);
/* Whether the kernel samples the packets now: the flow rule weighs a sample by its upper
 * bound (net_flow_share_bound()). */
void net_capture_sampled(struct capture *c, bool on);
/* The pcap_handler for every packet; user is the struct capture. */
void net_capture_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes);
/* A packet's timestamp in ns; false if it is invalid. */
bool net_capture_time(const struct pcap_pkthdr *h, bool nano, uint64_t *t);
/* Compile and set a BPF filter ("" or NULL: none, every packet), as a capture opens; -1 with
 * the reason in err. */
int net_capture_set_filter(pcap_t *p, const char *filter, char *err, size_t size);
uint32_t net_capture_max_eps(const struct config *cfg);

/* What rtnetlink or the fallback scan says about one link. */
struct link_info {
	int ifindex;
	unsigned flags;
	int master; /* the bridge, bond, team or VRF it is a port of; 0: none */
	int lower;  /* the device it is stacked on (VLAN, macvlan, ...); 0: none */
	bool loopback;
	unsigned arphrd; /* its link type (ARPHRD_*); 0 if not known */
	char name[IFNAMSIZ];
	char kind[24]; /* rtnetlink's, or sysfs's device type or the driver's name; "" if none */
};

/* net_link.c: what it says about links, and to whom. */
struct net_links {
	void (*update)(void *arg, const struct link_info *li); /* there (again), or changed */
	void (*gone)(void *arg, int ifindex);
	void (*settle)(void *arg); /* after a batch of notifications */
	void (*lost)(void *arg);   /* notifications were lost: rescan soon */
	void *arg;
	int fd; /* the rtnetlink monitor; -1 if none */
	struct event *ev;
	uint32_t seq;
};

/* Every link, through update (-1 if neither rtnetlink nor /proc/net/dev can be read); the
 * rtnetlink monitor (-1 if there is none). */
int net_link_dump(struct net_links *nl);
int net_link_monitor(struct net_links *nl, struct event_base *base);
void net_link_monitor_stop(struct net_links *nl);
/* An interface ioctl whose struct ifreq carries a pointer (ifr_data: ethtool's, the card's
 * timestamping), on a socket of its own; ioctl's result. */
int net_link_dev_ioctl(const char *ifname, unsigned long request, void *data);

/* The driver's class-wide state (source.priv). */
struct pcap_state {
	struct source *src;
	bool offline;
	char *file; /* offline: the savefile of sources.network.file */
	struct net_links links;
};

enum match { M_NONE, M_AUTO, M_GLOB, M_EXACT };
struct replay;

/* One instance (src_inst.drv): an interface captured live, or the savefile. */
struct iface {
	char kind[24];
	int ifindex; /* 0: not present */
	unsigned flags;
	int master, lower; /* struct link_info's */
	bool loopback;
	bool secondhand; /* its packets are not arrivals of its own: auto leaves it out */
	bool ever_present;
	bool no_hw;      /* the card's timestamps failed or are another's: the kernel's */
	/* Not captured because another captured interface sees its arrivals, or (auto) because
	 * it carries a secondhand device's packets (set by the settle step): the state shown,
	 * e.g. "stacked on eth0"; "" when captured. */
	char stacked[IFNAMSIZ + 24];
	bool stacked_secondhand; /* stacked names a secondhand device below, not a capture */
	char stacked_logged[IFNAMSIZ + 24];
	const char *logged;     /* the failure last logged, so a retry does not repeat it */
	enum match match;
	pcap_t *p;
	struct event *ev;       /* the capture's descriptor is readable */
	struct event *drain_ev; /* the timer that reads the ring under a flood */
	uint64_t woken_ns;      /* when ev last fired */
	unsigned drops;         /* the kernel's drops (pcap_stats) already counted */
	/* What the capture was last opened with (net_class_capture_config), to tell at a reload
	 * whether it has to be opened afresh. */
	int snaplen;
	enum net_direction direction;
	char *filter;
	struct replay *rp; /* offline */
	struct capture cap;
	/* Sampling in the kernel (net_sock.c): the share in force and its state ("off",
	 * "on", "refused"; NULL while not open). */
	struct sampler smp;
	const char *sampling;
	uint64_t taken;           /* the capture's packets and drops at the last count */
	struct event *sample_ev;  /* while sampling: the rate is looked at without packets */
};

/* net_live.c: live capture per interface. The capture of an interface opened (SRC_OPEN), or
 * why not in its state; and closed. */
enum src_status net_live_open(struct src_inst *si);
void net_live_close(struct src_inst *si);
/* The instance of the interface name, made (absent, not open) if there is none. */
struct src_inst *net_live_entry(struct pcap_state *st, const char *name);
/* Is the list of interfaces the word "auto" alone? */
bool net_live_is_auto(const struct strlist *l);
/* What net_link.c says (struct net_links, arg the struct pcap_state): a link there (again) or
 * changed, one gone, the end of a batch, notifications lost. */
void net_live_link_update(void *arg, const struct link_info *li);
void net_live_link_gone(void *arg, int ifindex);
void net_live_links_settle(void *arg);
void net_live_links_lost(void *arg);
/* source_ops.gone: a rescan did not find it. */
void net_live_gone(struct src_inst *si);
/* source_ops.settle: which interfaces are wanted, which the stacking rule leaves to another,
 * then each one's capture opened or closed. */
void net_live_settle(struct source *src);

/* net_sock.c: sampling in the kernel on a live capture. The capture opened (its filter
 * set): not sampled yet. */
void net_sock_sample_start(struct src_inst *si);
/* On the read path: the packets and drops counted since, and the share re-set if the rate
 * asks for it (at most once a window). */
void net_sock_sample_tick(struct src_inst *si);
/* The capture closes. */
void net_sock_sample_stop(struct src_inst *si);
/* The capture's socket filter with filter, the administrator's (priv_filter.c, set by the
 * privileged process): as the capture opens, and a reload's new one on the running capture,
 * losing nothing (the kernel replaces the program in force in one step; the packets the ring
 * holds were taken under the filter before, those after under this one); the share kept
 * while sampling stays. -1 with the reason in err. */
int net_sock_set_filter(struct src_inst *si, const char *filter, char *err, size_t size);

/* net_file.c: the savefile as the class's one instance: checked whole, then
 * replayed (SRC_OPEN), or SRC_ENDED with the state saying why not; and closed. */
enum src_status net_file_replay_open(struct src_inst *si);
void net_file_replay_close(struct src_inst *si);

#endif
