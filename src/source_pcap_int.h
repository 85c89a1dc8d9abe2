/* source_pcap_int: what the network source's own files share; nothing else includes it.
 * source_pcap.c: the driver and live interfaces; source_pcap_capture.c: the per-packet path;
 * source_pcap_link.c: rtnetlink and the fallback scan; source_pcap_file.c: savefiles;
 * source_pcap_flow.c, source_pcap_stack.c: the pure parts. */
#ifndef ENTROPYD_SOURCE_PCAP_INT_H
#define ENTROPYD_SOURCE_PCAP_INT_H

#include <net/if.h>
#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "source.h"
#include "source_pcap.h"

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
	unsigned n_batch;
	uint64_t batch[CAPTURE_BATCH];
	char state[96];
};

void capture_attach(struct capture *c, const char *name, const char *kind);
/* Detach the instance (its counters go to the totals); a debug line gives the counts. */
void capture_detach(struct capture *c, const char *name);
/* The state shown: base ("open", "down", ...) and the dominant-flow weight if any. */
void capture_set_state(struct capture *c, const char *base);
/* A new stream on the instance (a new capture or a replay's second pass). */
void capture_begin(struct capture *c, int dlt, bool nano, uint32_t max_eps);
/* Hand what capture_packet gathered to the pipeline: the timed packets as samples, under the
 * dominant-flow weight as it is after them, and those over the event cap as skipped. */
void capture_flush(struct capture *c);
/* The pcap_handler for every packet; user is the struct capture. */
void capture_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes);
/* A packet's timestamp in ns; false if it is invalid. */
bool capture_time(const struct pcap_pkthdr *h, bool nano, uint64_t *t);
/* Compile and set a BPF filter ("" or NULL: none); -1 with the reason in err. */
int capture_set_filter(pcap_t *p, const char *filter, char *err, size_t size);
uint32_t capture_max_eps(const struct config *cfg);

struct iface;
struct replay;

/* The driver's state (src->priv). */
struct pcap_state {
	struct source *src;
	bool offline;
	/* live */
	struct iface *ifs;
	int nl_fd; /* rtnetlink monitor; -1 if none */
	struct event *nl_ev;
	struct event *rescan_ev; /* a rescan soon (after ENOBUFS, an error) or periodically */
	struct event *retry_ev;
	uint32_t seq;
	/* offline */
	struct replay *rp;
};

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

/* source_pcap.c: a link is there (again) or changed; a link is gone; rescan soon. The
 * captures follow at net_links_settle, once a batch of messages has been read. */
void net_link_update(struct pcap_state *st, const struct link_info *li);
void net_link_gone(struct pcap_state *st, int ifindex);
void net_links_settle(struct pcap_state *st);
void net_rescan_soon(struct pcap_state *st);

/* source_pcap_link.c: every link, through net_link_update (-1 if neither rtnetlink nor
 * /proc/net/dev can be read); and the rtnetlink monitor (-1 if there is none). */
int net_links_dump(struct pcap_state *st);
int net_links_monitor(struct pcap_state *st);
void net_links_monitor_stop(struct pcap_state *st);
/* An interface ioctl whose struct ifreq carries a pointer (ifr_data: ethtool's, the card's
 * timestamping), on a socket of its own; ioctl's result. */
int net_dev_ioctl(const char *ifname, unsigned long request, void *data);

/* source_pcap_file.c: the savefile of sources.network.file. */
void net_replay_start(struct pcap_state *st);
void net_replay_stop(struct pcap_state *st);
/* A reload that keeps the same file: not read again, unless the policy newly enables it. */
void net_replay_reload(struct pcap_state *st);
const char *net_replay_path(const struct pcap_state *st);

#endif
