/* net: packet arrivals (libpcap) as a timing source, live per interface or from a
 * savefile; with a per-interface event cap and the dominant-flow rule. */
#ifndef ENTROPYD_NET_H
#define ENTROPYD_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "source.h"

/* The "network" class driver. */
extern const struct source_ops source_pcap_ops;

/* ---- pure parts (net_flow.c), exported for the tests ---- */

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
void flow_key_of(int dlt, const uint8_t *pkt, size_t caplen, struct flow_key *k);

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

void flow_top_add(struct flow_top *ft, const struct flow_key *k);
/* The busiest source's share of the counted packets, 0..1 (0 when nothing was counted). */
double flow_top_share(const struct flow_top *ft);
/* The credit weight for a share, by the rule above. */
double flow_weight(double share);
/* While the counter holds packets the kernel sampled (and for 2 * FLOW_WINDOW packets after
 * sampling stops, until they have been halved away), its share is an estimate from a sample
 * of the traffic, and the weight is taken at an upper confidence bound of it: Wilson's score
 * bound at FLOW_Z standard deviations over the n packets counted. So the weight on a sample
 * errs low: the bound falls below the share the whole traffic has with odds under 1e-6. */
#define FLOW_Z 5.0
double flow_share_bound(double share, uint32_t n);

/* The per-instance event cap: at most max events in any one second of event time. A
 * second starts at the first event after the previous one ended; time that runs backwards
 * (a clock step, a spliced savefile) starts a new second, so the cap never stalls. */
struct event_cap {
	uint64_t start_ns;
	uint32_t n;
	bool started;
};

/* true: handle the event at t_ns; false: it is over the cap (count it as skipped). */
bool event_cap_take(struct event_cap *c, uint32_t max_per_second, uint64_t t_ns);

/* ---- net_sample.c: sampling in the kernel ---- */

/*
 * Above the event cap the kernel's packet socket filter keeps only a random share of the
 * packets (a classic BPF prefix on the kernel's own random numbers, SKF_AD_RANDOM), so that
 * what will not be timed is never copied into the ring. The share follows the measured
 * arrival rate: about cap / rate. It starts when the rate is above SAMPLE_ON times the cap,
 * stops when the rate is at or below the cap, and in between is re-set only when the share
 * wanted differs from the one in force by more than a factor SAMPLE_STEP; the rate is
 * measured over windows of at least SAMPLE_WINDOW_NS, and the window after a change is not
 * acted on (it counted packets taken under both shares), so the share changes at most every
 * other window. A flood is not waited for: once a window has kept more than SAMPLE_ON times
 * the cap (SAMPLE_STEP times that while sampling), the share is set there and then.
 */
#define SAMPLE_ON 1.2
#define SAMPLE_STEP 1.5
#define SAMPLE_WINDOW_NS 1000000000ULL
/* The prefix's length: load the random number, compare, reject. */
#define SAMPLE_PREFIX 3

struct sock_filter;

struct sampler {
	double ratio;       /* in force: the share of packets the kernel keeps; 1: none dropped */
	double rate;        /* the arrivals a second last measured; NaN: none measured yet */
	uint64_t window_ns; /* when the current window started (0: not yet) */
	uint64_t taken;     /* packets the socket took in the window (handed over or dropped) */
	bool settling;      /* the window after a change: measured, not acted on */
};

void sampler_init(struct sampler *s);
/* n more packets the socket took (that passed its filter) since the last count. */
void sampler_count(struct sampler *s, uint64_t n);
enum sampler_news {
	SAMPLER_NONE,     /* the window goes on */
	SAMPLER_MEASURED, /* a window ended: s->rate is new */
	SAMPLER_CHANGE,   /* ... and the share should change, to *ratio (1: stop sampling) */
};
/* At now_ns (CLOCK_MONOTONIC). The caller sets a change in the kernel, and says whether that
 * worked with sampler_set(). */
enum sampler_news sampler_tick(struct sampler *s, uint32_t cap, uint64_t now_ns, double *ratio);
/* The share now in force (after sampler_tick() asked for it, or 1 when the kernel refused). */
void sampler_set(struct sampler *s, double ratio, uint64_t now_ns);
/* The socket filter that keeps a share `ratio` (0 < ratio < 1) of what the program `base`
 * (n instructions; none: every packet) accepts: SAMPLE_PREFIX instructions, then base as it
 * is (its jumps are relative, its returns its own). out has room for n + SAMPLE_PREFIX
 * instructions (or SAMPLE_PREFIX + 1 if n is 0); returns the length. */
size_t sample_program(double ratio, const struct sock_filter *base, size_t n,
		      struct sock_filter *out);

/* ---- net_stack.c ---- */

/* One interface as the rule that counts each arrival once sees it (see net_stack.c):
 * its bridge/bond/team/VRF master and the device it is stacked on (VLAN, macvlan, ipvlan,
 * macsec), as ifindexes, 0 for none. */
struct stack_link {
	int ifindex;
	int master;
	int lower;
	bool up;
	bool wanted;     /* it would be captured but for this rule (matched, up, not disabled) */
	bool secondhand; /* its packets arrived on another interface first (link_secondhand()) */
	bool own_only;   /* wanted only if its packets are its own ("auto") */
};

enum stack_why {
	STACK_NOT_WANTED,
	STACK_CAPTURED,
	STACK_PORT,   /* a port of `by`, which is captured */
	STACK_ON,     /* stacked on `by`, which is captured */
	STACK_SHARED, /* shares its arrivals with `by` otherwise (further up or down) */
	STACK_SECONDHAND, /* own_only, and above `by`, which is secondhand: not captured */
};

struct stack_verdict {
	enum stack_why why;
	int by; /* ifindex of the captured interface that counts its arrivals; for
		 * STACK_SECONDHAND, of the secondhand device below it (not captured) */
};

/* A verdict for each of the n links. */
void stack_resolve(const struct stack_link *l, size_t n, struct stack_verdict *v);
/* "port of", "stacked on", "counted on", "carries the packets of"; "" for the others. */
const char *stack_why_text(enum stack_why why);

/* Are the packets seen on a device of this kind (rtnetlink's IFLA_INFO_KIND, or sysfs's
 * device type; "" if none) and link type (ARPHRD_*) secondhand, arrivals that another
 * interface saw first, or no arrivals at all? For a device the kernel names no lower
 * device of: such a device is left out by auto (net_stack.c). */
bool link_secondhand(const char *kind, unsigned arphrd);

/* Of the timestamp types a card offers (pcap_list_tstamp_types), the one asked for: the
 * card's own clock, unsynced before synced; -1: none of them, the host's stamps. */
int tstamp_pick(const int *types, int n);

/* May libpcap switch a card's timestamping to "receive all, transmit off", given how it
 * is set now (struct hwtstamp_config's tx_type and rx_filter)? Only if no one else set it
 * up: transmit off and receive none, or already all. */
bool hwtstamp_config_free(int tx_type, int rx_filter);

#endif
