/* net_stack: which of the wanted interfaces are captured, so that one packet arrival
 * is counted once — a pure rule over the links' master and lower devices (rtnetlink's
 * IFLA_MASTER and IFLA_LINK), and which devices see only secondhand packets (auto leaves
 * them out); and the choice of a timestamp type. No libpcap calls here.
 *
 * An arrival is seen again on every device above the one it came in on: on the bridge, bond,
 * team or VRF the port belongs to (its master), and on the VLAN, macvlan or ipvlan stacked on
 * it (whose lower device it is). Two wanted devices share arrivals when one is above the
 * other along those edges; only one of them is captured. Wanted devices are taken in an
 * order of preference, and each is captured unless it shares arrivals with one taken
 * before it:
 *  1. masters first, the topmost first: a bridge or bond is preferred to its ports (its
 *     ports' arrivals for the host are all seen on it, and there is one of it);
 *  2. then the others, the lowest first: a device is preferred to the VLANs and macvlans on
 *     it (it sees their packets and the rest of its own);
 *  3. ties by ifindex.
 * Only devices that are up carry arrivals upward, and a down one is not wanted, so a port
 * whose bridge is down is captured itself.
 *
 * A device whose packets are secondhand (a tunnel's, net_stack_link_secondhand()) passes them upward
 * too: a bridge with a VXLAN or tap port, a VLAN on a VXLAN, carry packets that arrived on
 * another interface first. Where only devices of their own are wanted ("auto", own_only),
 * such a device is left out (STACK_SECONDHAND) before the rest is decided, and its ports come
 * first in the order, in its place: a bridge with a tunnel among its ports is not captured,
 * its other ports are, each for itself (before another bridge above a VLAN of one of them
 * could take that port's arrivals as its own). */
#include "autoconf.h"

#include "net_stack.h"

#include <net/if_arp.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#ifndef ARPHRD_IP6GRE /* <linux/if_arp.h> has these, glibc's <net/if_arp.h> not */
#define ARPHRD_IP6GRE 823
#endif
#ifndef ARPHRD_NETLINK
#define ARPHRD_NETLINK 824
#endif

static size_t find(const struct stack_link *l, size_t n, int ifindex)
{
	if (ifindex <= 0)
		return n;
	for (size_t i = 0; i < n; i++)
		if (l[i].ifindex == ifindex)
			return i;
	return n;
}

/* Hops up through masters (depth of a master chain), or down through lower devices; bounded
 * by n, so a loop in what the kernel said cannot hang us. */
static unsigned depth(const struct stack_link *l, size_t n, size_t i, bool up)
{
	unsigned d = 0;

	for (size_t j = find(l, n, up ? l[i].master : l[i].lower); j < n && d < n;
	     j = find(l, n, up ? l[j].master : l[j].lower))
		d++;
	return d;
}

struct order {
	size_t i;
	bool orphan; /* its master is left out as secondhand: it takes the master's place */
	bool master;
	unsigned depth;
	int ifindex;
};

static int order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->orphan != y->orphan)
		return x->orphan ? -1 : 1;
	if (x->master != y->master)
		return x->master ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

/* Does y see x's arrivals next: is y x's master, or stacked on x? */
static bool next_up(const struct stack_link *l, size_t x, size_t y)
{
	return l[x].master == l[y].ifindex || l[y].lower == l[x].ifindex;
}

/* Mark what shares arrivals with link k and is not decided yet (by[] == n) as counted on k:
 * everything above k and everything below it, through devices that are up, including what
 * lies beyond a device decided before. */
static void cover(const struct stack_link *l, size_t n, size_t k, size_t *by, size_t *stack,
		  bool *seen)
{
	for (int dir = 0; dir < 2; dir++) { /* 0: upward, 1: downward */
		size_t top = 0;

		memset(seen, 0, n * sizeof(*seen));
		seen[k] = true;
		stack[top++] = k;
		while (top) {
			size_t x = stack[--top];

			for (size_t y = 0; y < n; y++) {
				bool edge = dir == 0 ? next_up(l, x, y) : next_up(l, y, x);

				if (seen[y] || !l[y].up || !edge)
					continue;
				seen[y] = true;
				stack[top++] = y;
				if (by[y] == n)
					by[y] = k;
			}
		}
	}
}

/* Mark what lies above link k (through devices that are up) and has no mark yet as carrying
 * k's packets: from[y] = k. */
static void carry_up(const struct stack_link *l, size_t n, size_t k, size_t *from,
		     size_t *stack)
{
	size_t top = 0;

	stack[top++] = k;
	while (top) {
		size_t x = stack[--top];

		for (size_t y = 0; y < n; y++) {
			if (from[y] != n || y == k || !l[y].up || !next_up(l, x, y))
				continue;
			from[y] = k;
			stack[top++] = y;
		}
	}
}

void net_stack_resolve(const struct stack_link *l, size_t n, struct stack_verdict *v)
{
	struct order *o = xcalloc(n ? n : 1, sizeof(*o));
	size_t *by = xcalloc(n ? n : 1, sizeof(*by)), *stack = xcalloc(n ? n : 1, sizeof(*stack));
	size_t *from = xcalloc(n ? n : 1, sizeof(*from));
	bool *seen = xcalloc(n ? n : 1, sizeof(*seen));
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		from[i] = n;
	for (size_t i = 0; i < n; i++)
		if (l[i].secondhand && l[i].up)
			carry_up(l, n, i, from, stack);
	for (size_t i = 0; i < n; i++) {
		by[i] = n;
		v[i].why = l[i].wanted ? STACK_CAPTURED : STACK_NOT_WANTED;
		v[i].by = 0;
		if (l[i].wanted && l[i].up && l[i].own_only && from[i] != n) {
			v[i].why = STACK_SECONDHAND;
			v[i].by = l[from[i]].ifindex;
		}
	}
	for (size_t i = 0; i < n; i++) {
		size_t mi = find(l, n, l[i].master);

		if (v[i].why != STACK_CAPTURED || !l[i].up)
			continue;
		o[m].i = i;
		o[m].orphan = mi < n && v[mi].why == STACK_SECONDHAND;
		o[m].ifindex = l[i].ifindex;
		o[m].master = false;
		for (size_t j = 0; j < n && !o[m].master; j++)
			o[m].master = l[j].master == l[i].ifindex && l[j].ifindex != l[i].ifindex;
		o[m].depth = depth(l, n, i, o[m].master);
		m++;
	}
	qsort(o, m, sizeof(*o), order_cmp);
	for (size_t r = 0; r < m; r++) {
		size_t i = o[r].i, k = by[i];

		if (k == n) {
			by[i] = i;
			cover(l, n, i, by, stack, seen);
			continue;
		}
		v[i].by = l[k].ifindex;
		if (l[i].master == l[k].ifindex)
			v[i].why = STACK_PORT;
		else if (l[i].lower == l[k].ifindex)
			v[i].why = STACK_ON;
		else
			v[i].why = STACK_SHARED;
	}
	free(o);
	free(by);
	free(stack);
	free(from);
	free(seen);
}

const char *net_stack_why_text(enum stack_why why)
{
	switch (why) {
	case STACK_PORT: return "port of";
	case STACK_ON: return "stacked on";
	case STACK_SHARED: return "counted on";
	case STACK_SECONDHAND: return "carries the packets of";
	default: return "";
	}
}

int net_stack_tstamp_pick(const int *types, int n)
{
	/* The card's own clock, free-running before synchronised: the free-running one has no
	 * steps from a servo. The host's stamps are what libpcap gives without asking. */
	static const int prefer[] = {PCAP_TSTAMP_ADAPTER_UNSYNCED, PCAP_TSTAMP_ADAPTER};

	for (size_t i = 0; i < ARRAY_SIZE(prefer); i++)
		for (int j = 0; j < n; j++)
			if (types[j] == prefer[i])
				return prefer[i];
	return -1;
}

/* Packets seen on such a device are secondhand: a tunnel's arrived first, encapsulated, on
 * another interface, which the kernel does not name as its lower device unless the tunnel
 * is bound to one; so did a PPP device's (over Ethernet; over a serial line it has none
 * other, and must be named); an ifb's were redirected to it from another interface (tc
 * mirred); an nlmon's are the host's own netlink messages. By kind, or by link type
 * (IP-in-IP, SIT, GRE, PPP, netlink). Not by the link type "none": WireGuard, tun and
 * OpenVPN's ovpn have it, and are known by their kinds, but so do cellular modems in raw-IP
 * mode (qmi_wwan, hso), whose packets are their own. */
bool net_stack_link_secondhand(const char *kind, unsigned arphrd)
{
	static const char *const kinds[] = {
		"gre",     "gretap", "erspan", "ip6gre", "ip6gretap", "ip6erspan", "ipip",
		"sit",     "ip6tnl", "vti",    "vti6",   "xfrm",      "vxlan",     "geneve",
		"bareudp", "gtp",    "pfcp",   "amt",    "wireguard", "tun",       "l2tp",
		"ovpn",    "ppp",    "ifb",    "nlmon",
	};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (strcmp(kind, kinds[i]) == 0)
			return true;
	return arphrd == ARPHRD_TUNNEL || arphrd == ARPHRD_TUNNEL6 || arphrd == ARPHRD_SIT ||
	       arphrd == ARPHRD_IPGRE || arphrd == ARPHRD_IP6GRE || arphrd == ARPHRD_PPP ||
	       arphrd == ARPHRD_NETLINK;
}

