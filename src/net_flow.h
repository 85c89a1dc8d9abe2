/* net_flow: the pure parts of the network driver's rules: the dominant-flow weight, the
 * per-interface event cap and the card's timestamping (net_flow.c), exported for the tests. */
#ifndef ENTROPYD_NET_FLOW_H
#define ENTROPYD_NET_FLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The source address of one captured frame: an IPv4 or IPv6 source address, else the
 * link-layer source address, else "unknown" (len 0). Only ever compared, never shown. */
enum flow_family { FLOW_UNKNOWN, FLOW_IPV4, FLOW_IPV6, FLOW_LINK };
struct flow_key {
	uint8_t family; /* enum flow_family */
	uint8_t len;    /* bytes of addr in use; the rest of addr is zero */
	uint8_t pad[6]; /* zero: keys compare as three words */
	uint8_t addr[16];
};

/* Fill *k from the first caplen bytes of a frame of link type `dlt` (a DLT_ value). Frames
 * too short to tell, and link types not known here, give the "unknown" key: all of them
 * then count as one source, which can only lower credit. */
void net_flow_key_of(int dlt, const uint8_t *pkt, size_t caplen, struct flow_key *k);

/*
 * The dominant-flow rule. The share of the busiest source address among an interface's
 * recent timed packets is tracked with a space-saving counter (Metwally et al., 2005) of
 * FLOW_SLOTS entries, whose counts are halved every FLOW_WINDOW packets so that it follows
 * the last one to two thousand packets. Space-saving never under-counts the busiest
 * source: its share is over-estimated if anything, which errs on the side of less credit.
 *
 * Whoever sends a packet sets when it leaves, so the arrival times of one source's packets
 * are partly known to that source. When one source carries more than half of the packets
 * (share s > 0.5), only the other 1 - s of the events are timed independently of it, and
 * the credit is weighted by 1 - s; at s >= 0.9 the rest is too thin (and mostly replies
 * paced by the dominant flow) to count at all: weight 0. At s <= 0.5 no single sender has
 * the majority and the weight is 1: the class's policy (reduced, scale 0.25 by default)
 * already discounts what an observer on the path may know.
 */
#define FLOW_SLOTS 8
#define FLOW_WINDOW 1024
#define FLOW_DOMINANT 0.5 /* above this share the weight is 1 - share */
#define FLOW_ZERO 0.9     /* at or above this share the weight is 0 */

struct flow_top {
	struct flow_key key[FLOW_SLOTS];
	uint32_t count[FLOW_SLOTS]; /* 0: the slot is free */
	uint32_t total;             /* packets counted, halved with the counts */
	uint32_t since_halving;
	unsigned top;               /* the slot with the largest count */
	unsigned last;              /* the slot counted last: most packets repeat it */
};

void net_flow_top_add(struct flow_top *ft, const struct flow_key *k);
/* The busiest source's share of the counted packets, 0..1 (0 when nothing was counted). */
double net_flow_top_share(const struct flow_top *ft);
/* The credit weight for a share, by the rule above. */
double net_flow_weight(double share);
/* While the counter holds packets the kernel sampled (and for 2 * FLOW_WINDOW packets after
 * sampling stops, until they have been halved away), its share is an estimate from a sample
 * of the traffic, and the weight is taken at an upper confidence bound of it: Wilson's score
 * bound at FLOW_Z standard deviations over the n packets counted. So the weight on a sample
 * errs low: the bound falls below the share the whole traffic has with odds under 1e-6. */
#define FLOW_Z 5.0
double net_flow_share_bound(double share, uint32_t n);

/* The per-instance event cap: at most max events in any one second of event time. A
 * second starts at the first event after the previous one ended; time that runs backwards
 * (a clock step, a spliced savefile) starts a new second, so the cap never stalls. */
struct event_cap {
	uint64_t start_ns;
	uint32_t n;
	bool started;
};

/* true: handle the event at t_ns; false: it is over the cap (count it as skipped). */
bool net_flow_event_cap_take(struct event_cap *c, uint32_t max_per_second, uint64_t t_ns);


/* May libpcap switch a card's timestamping to "receive all, transmit off", given how it
 * is set now (struct hwtstamp_config's tx_type and rx_filter)? Only if no one else set it
 * up: transmit off and receive none, or already all. */
bool net_flow_hwtstamp_config_free(int tx_type, int rx_filter);

#endif
