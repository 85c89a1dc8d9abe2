/* net_stack: which interface counts each arrival once: stacked and enslaved devices,
 * secondhand ones, and the card's timestamp type (net_stack.c). */
#ifndef ENTROPYD_NET_STACK_H
#define ENTROPYD_NET_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One interface as the rule that counts each arrival once sees it (see net_stack.c):
 * its bridge/bond/team/VRF master and the device it is stacked on (VLAN, macvlan, ipvlan,
 * macsec), as ifindexes, 0 for none. */
struct stack_link {
	int ifindex;
	int master;
	int lower;
	bool up;
	bool wanted;     /* it would be captured but for this rule (matched, up, not disabled) */
	bool secondhand; /* its packets arrived on another interface first (net_stack_link_secondhand()) */
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
void net_stack_resolve(const struct stack_link *l, size_t n, struct stack_verdict *v);
/* "port of", "stacked on", "counted on", "carries the packets of"; "" for the others. */
const char *net_stack_why_text(enum stack_why why);


/* Are the packets seen on a device of this kind (rtnetlink's IFLA_INFO_KIND, or sysfs's
 * device type; "" if none) and link type (ARPHRD_*) secondhand, arrivals that another
 * interface saw first, or no arrivals at all? For a device the kernel names no lower
 * device of: such a device is left out by auto (net_stack.c). */
bool net_stack_link_secondhand(const char *kind, unsigned arphrd);


/* Of the timestamp types a card offers (pcap_list_tstamp_types), the one asked for: the
 * card's own clock, unsynced before synced; -1: none of them, the host's stamps. */
int net_stack_tstamp_pick(const int *types, int n);

#endif
