/* check_net_stack: the network source's rule that counts each packet arrival once (which of
 * the wanted interfaces are captured, given masters and lower devices), and the choice of a
 * timestamp type among those a card offers. */
#include "autoconf.h"

#include <check.h>
#include <net/if_arp.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "net_flow.h"
#include "net_sample.h"
#include "net_stack.h"
#include "testutil.h"
#include "util.h"

#define SEED 0x57ac4edu

/* A link: ifindex, master, lower, up, wanted; neither secondhand nor own_only. */
#define L(ix, m, lo) {.ifindex = (ix), .master = (m), .lower = (lo), .up = true, .wanted = true}

static void resolve(const struct stack_link *l, size_t n, struct stack_verdict *v)
{
	net_stack_resolve(l, n, v);
}

/* The links as auto sees them, with link `tunnel` a device of secondhand packets: every
 * link wanted only if its packets are its own, the tunnel not wanted. */
static void as_auto(struct stack_link *l, size_t n, size_t tunnel)
{
	for (size_t i = 0; i < n; i++)
		l[i].own_only = true;
	l[tunnel].secondhand = true;
	l[tunnel].wanted = false;
}

static void want(const struct stack_verdict *v, size_t i, enum stack_why why, int by)
{
	ck_assert_msg(v[i].why == why, "link %zu: why %d, want %d", i, v[i].why, why);
	if (why >= STACK_PORT)
		ck_assert_msg(v[i].by == by, "link %zu: by %d, want %d", i, v[i].by, by);
}

START_TEST(test_vlan_and_macvlan_counted_on_the_device)
{
	/* 2 eth0; 3 eth0.10 (vlan); 4 mv0 (macvlan on eth0); 5 mv1 (macvlan on eth0.10) */
	struct stack_link l[] = {L(2, 0, 0), L(3, 0, 2), L(4, 0, 2), L(5, 0, 3)};
	struct stack_verdict v[4];

	resolve(l, 4, v);
	want(v, 0, STACK_CAPTURED, 0);
	want(v, 1, STACK_ON, 2);
	want(v, 2, STACK_ON, 2);
	want(v, 3, STACK_SHARED, 2);
	/* Without eth0 (not matched, or down), its uppers do not share with each other. */
	l[0].wanted = false;
	resolve(l, 4, v);
	want(v, 0, STACK_NOT_WANTED, 0);
	want(v, 1, STACK_CAPTURED, 0);
	want(v, 2, STACK_CAPTURED, 0);
	want(v, 3, STACK_ON, 3);
}
END_TEST

START_TEST(test_bridge_kept_over_its_ports)
{
	/* 5 br0; 2 eth0 and 3 eth1 its ports; 4 eth2 on its own */
	struct stack_link l[] = {L(2, 5, 0), L(3, 5, 0), L(4, 0, 0), L(5, 0, 0)};
	struct stack_verdict v[4];

	resolve(l, 4, v);
	want(v, 0, STACK_PORT, 5);
	want(v, 1, STACK_PORT, 5);
	want(v, 2, STACK_CAPTURED, 0);
	want(v, 3, STACK_CAPTURED, 0);
	/* The bridge down (or not wanted): its ports are captured, each for itself. */
	l[3].up = false;
	l[3].wanted = false;
	resolve(l, 4, v);
	want(v, 0, STACK_CAPTURED, 0);
	want(v, 1, STACK_CAPTURED, 0);
	/* A port that is down is not wanted, and says nothing. */
	l[3].up = l[3].wanted = true;
	l[1].up = l[1].wanted = false;
	resolve(l, 4, v);
	want(v, 0, STACK_PORT, 5);
	want(v, 1, STACK_NOT_WANTED, 0);
	want(v, 3, STACK_CAPTURED, 0);
}
END_TEST

START_TEST(test_bond_in_bridge_and_its_vlan)
{
	/* 2 eth0, 3 eth1: slaves of 4 bond0, itself a port of 5 br0; 6 bond0.10 on bond0 */
	struct stack_link l[] = {L(2, 4, 0), L(3, 4, 0), L(4, 5, 0), L(5, 0, 0), L(6, 0, 4)};
	struct stack_verdict v[5];

	resolve(l, 5, v);
	want(v, 3, STACK_CAPTURED, 0); /* the topmost master */
	want(v, 2, STACK_PORT, 5);
	want(v, 0, STACK_SHARED, 5);
	want(v, 1, STACK_SHARED, 5);
	/* Tagged frames go to the VLAN, not up to the bridge: it shares with neither. */
	want(v, 4, STACK_CAPTURED, 0);
}
END_TEST

START_TEST(test_vlan_enslaved_to_a_bridge)
{
	/* 2 eth0; 3 eth0.10 on it, a port of 5 br10; 4 eth1, another port of br10. The two
	 * preferences meet: the bridge is kept, so eth0 (below it, through eth0.10) is not. */
	struct stack_link l[] = {L(2, 0, 0), L(3, 5, 2), L(4, 5, 0), L(5, 0, 0)};
	struct stack_verdict v[4];

	resolve(l, 4, v);
	want(v, 3, STACK_CAPTURED, 0);
	want(v, 1, STACK_PORT, 5);
	want(v, 2, STACK_PORT, 5);
	want(v, 0, STACK_SHARED, 5);
	/* Through a device that is not wanted itself (eth0.10 not matched) as well. */
	l[1].wanted = false;
	resolve(l, 4, v);
	want(v, 0, STACK_SHARED, 5);
	want(v, 1, STACK_NOT_WANTED, 0);
	/* But not through one that is down: nothing goes up through it. */
	l[1].up = false;
	resolve(l, 4, v);
	want(v, 0, STACK_CAPTURED, 0);
	want(v, 3, STACK_CAPTURED, 0);
}
END_TEST

START_TEST(test_loops_and_strangers)
{
	/* What the kernel never says, but must not hang us: a master loop, a device stacked on
	 * itself, references to links we do not know. */
	struct stack_link l[] = {L(2, 3, 0), L(3, 2, 0), L(4, 0, 4), L(5, 99, 98)};
	struct stack_verdict v[4];
	size_t captured = 0;

	resolve(l, 4, v);
	for (size_t i = 0; i < 4; i++)
		captured += v[i].why == STACK_CAPTURED;
	ck_assert_uint_eq(v[2].why, STACK_CAPTURED);
	ck_assert_uint_eq(v[3].why, STACK_CAPTURED);
	ck_assert_uint_eq(captured, 3); /* one of the loop */
	resolve(l, 0, v);
	/* A tunnel in the loop, as auto sees it: what lies above it is left out, nothing hangs. */
	as_auto(l, 4, 0);
	resolve(l, 4, v);
	want(v, 0, STACK_NOT_WANTED, 0);
	want(v, 1, STACK_SECONDHAND, 2);
	want(v, 2, STACK_CAPTURED, 0);
}
END_TEST

/* Does arrival flow from a up to b (b above a: a's master, or stacked on a, repeatedly),
 * through devices that are up? */
static bool above(const struct stack_link *l, size_t n, size_t a, size_t b, unsigned hops)
{
	if (hops > n)
		return false;
	for (size_t y = 0; y < n; y++) {
		if (y == a || !l[y].up)
			continue;
		if (l[a].master != l[y].ifindex && l[y].lower != l[a].ifindex)
			continue;
		if (y == b || above(l, n, y, b, hops + 1))
			return true;
	}
	return false;
}

static bool share(const struct stack_link *l, size_t n, size_t a, size_t b)
{
	return above(l, n, a, b, 0) || above(l, n, b, a, 0);
}

START_TEST(test_random_graphs_count_once)
{
	enum { N = 12, ROUNDS = 3000 };

	tu_rng_seed(SEED);
	for (int round = 0; round < ROUNDS; round++) {
		struct stack_link l[N];
		struct stack_verdict v[N];
		size_t n = 1 + tu_rng_next() % N;

		/* A forest as the kernel builds it: each link's master and lower are links
		 * made before it (so no loops), some links down, some not wanted. */
		for (size_t i = 0; i < n; i++) {
			l[i].ifindex = (int)(i + 1);
			l[i].master = l[i].lower = 0;
			if (i && tu_rng_next() % 3 == 0)
				l[i].lower = (int)(1 + tu_rng_next() % i);
			l[i].up = tu_rng_next() % 8 != 0;
			l[i].wanted = l[i].up && tu_rng_next() % 5 != 0;
			/* Some tunnels, and auto (which does not want them) on some rounds. */
			l[i].secondhand = tu_rng_next() % 6 == 0;
			l[i].own_only = round % 2 == 0;
			if (l[i].own_only && l[i].secondhand)
				l[i].wanted = false;
		}
		for (size_t i = 0; i < n; i++) /* masters: later links, so no loops either */
			if (i + 1 < n && tu_rng_next() % 3 == 0)
				l[i].master = (int)(i + 2 + tu_rng_next() % (n - i - 1));
		resolve(l, n, v);
		for (size_t a = 0; a < n; a++) {
			if (!l[a].wanted) {
				ck_assert_uint_eq(v[a].why, STACK_NOT_WANTED);
				continue;
			}
			/* Where only devices of their own are wanted, none above an up tunnel is
			 * captured, and one is left out for that only if it is above one. */
			for (size_t b = 0; b < n && l[a].own_only; b++)
				ck_assert_msg(!(l[b].secondhand && l[b].up && above(l, n, b, a, 0)) ||
						      v[a].why == STACK_SECONDHAND,
					      "link %zu carries tunnel %zu's packets, and is %d "
					      "(seed %#llx, round %d)",
					      a, b, v[a].why, (unsigned long long)tu_seed, round);
			if (v[a].why == STACK_SECONDHAND) {
				size_t b = (size_t)v[a].by - 1;

				ck_assert(l[a].own_only);
				ck_assert_msg(v[a].by >= 1 && l[b].secondhand && l[b].up &&
						      above(l, n, b, a, 0),
					      "link %zu said to carry %d's packets (seed %#llx)", a,
					      v[a].by, (unsigned long long)tu_seed);
				continue;
			}
			if (v[a].why == STACK_CAPTURED) {
				/* No two captured links see the same arrival. */
				for (size_t b = 0; b < n; b++)
					ck_assert_msg(b == a || v[b].why != STACK_CAPTURED ||
						      !share(l, n, a, b),
						      "links %zu and %zu both captured, sharing "
						      "(seed %#llx, round %d)",
						      a, b, (unsigned long long)tu_seed, round);
				continue;
			}
			/* A link left out is left to a captured one it shares with. */
			ck_assert_int_ge(v[a].by, 1);
			ck_assert_uint_eq(v[(size_t)v[a].by - 1].why, STACK_CAPTURED);
			ck_assert_msg(share(l, n, a, (size_t)v[a].by - 1),
				      "link %zu left to %d, which does not share (seed %#llx)", a,
				      v[a].by, (unsigned long long)tu_seed);
		}
	}
}
END_TEST

START_TEST(test_secondhand_carried_up)
{
	/* 2 eth0; 5 br0 with ports 3 eth1 and 4 vx0 (a VXLAN); 6 a VLAN on vx0; 7 a macvlan on
	 * br0. All of their own but vx0, which auto does not want. */
	struct stack_link l[] = {L(2, 0, 0), L(3, 5, 0), L(4, 5, 0), L(5, 0, 0), L(6, 0, 4),
				 L(7, 0, 5)};
	struct stack_verdict v[6];

	as_auto(l, 6, 2);
	resolve(l, 6, v);
	want(v, 0, STACK_CAPTURED, 0);
	want(v, 1, STACK_CAPTURED, 0); /* its bridge is left out: eth1 counts its arrivals */
	want(v, 2, STACK_NOT_WANTED, 0);
	want(v, 3, STACK_SECONDHAND, 4);
	want(v, 4, STACK_SECONDHAND, 4);
	want(v, 5, STACK_SECONDHAND, 4);
	/* The tunnel down: it carries nothing, and the bridge is kept over its ports. */
	l[2].up = false;
	resolve(l, 6, v);
	want(v, 1, STACK_PORT, 5);
	want(v, 3, STACK_CAPTURED, 0);
	want(v, 4, STACK_CAPTURED, 0);
	want(v, 5, STACK_ON, 5);
	/* Up again, and the devices named (not auto): the administrator's choice. */
	l[2].up = true;
	for (size_t i = 0; i < 6; i++)
		l[i].own_only = false;
	resolve(l, 6, v);
	want(v, 1, STACK_PORT, 5);
	want(v, 3, STACK_CAPTURED, 0);
	want(v, 4, STACK_CAPTURED, 0);
	want(v, 5, STACK_ON, 5);
}
END_TEST

START_TEST(test_secondhand_bridge_ports_first)
{
	/* A virtualisation host: 5 vmbr0 with ports 2 eno1 and 3 tap0 (a VM's); 6 vmbr1 with
	 * ports 4 eno1.10 (a VLAN on eno1) and 7 veth0 (a container's). auto leaves vmbr0 out,
	 * and eno1 takes its place before vmbr1 (which would otherwise be kept over eno1.10 and
	 * take eno1 with it): eno1's arrivals, its VLAN's included, are counted there. */
	struct stack_link l[] = {L(2, 5, 0), L(3, 5, 0), L(4, 6, 2), L(5, 0, 0), L(6, 0, 0),
				 L(7, 6, 0)};
	struct stack_verdict v[6];

	as_auto(l, 6, 1);
	resolve(l, 6, v);
	want(v, 0, STACK_CAPTURED, 0);
	want(v, 1, STACK_NOT_WANTED, 0);
	want(v, 2, STACK_ON, 2);
	want(v, 3, STACK_SECONDHAND, 3);
	want(v, 4, STACK_SHARED, 2);
	want(v, 5, STACK_CAPTURED, 0);
}
END_TEST

/* Secondhand by kind, whatever the link type; by link type, whatever the kind; a device of
 * its own (Ethernet, Wi-Fi, a bridge, a veth, a VLAN, a modem) is not. */
START_TEST(test_secondhand)
{
	static const char *const tunnels[] = {"vxlan", "wireguard", "tun", "gre", "ipip",
					      "geneve", "ppp", "ifb", "nlmon", "xfrm", "ovpn"};
	static const char *const own[] = {"", "veth", "bridge", "bond", "vlan", "macvlan",
					  "ipvlan", "device"};
	static const unsigned secondhand_types[] = {ARPHRD_TUNNEL, ARPHRD_TUNNEL6, ARPHRD_SIT,
						    ARPHRD_IPGRE, 823 /* IP6GRE */, ARPHRD_PPP,
						    824 /* NETLINK */};

	for (size_t i = 0; i < ARRAY_SIZE(tunnels); i++)
		ck_assert_msg(net_stack_link_secondhand(tunnels[i], ARPHRD_ETHER), "%s", tunnels[i]);
	for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
		ck_assert_msg(!net_stack_link_secondhand(own[i], ARPHRD_ETHER), "\"%s\"", own[i]);
		ck_assert_msg(!net_stack_link_secondhand(own[i], ARPHRD_IEEE80211), "\"%s\" on wifi", own[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(secondhand_types); i++)
		ck_assert_msg(net_stack_link_secondhand("", secondhand_types[i]), "type %u",
			      secondhand_types[i]);
	ck_assert(!net_stack_link_secondhand("", ARPHRD_LOOPBACK)); /* loopback: left out on its own */
	/* A cellular modem in raw-IP mode has no link type and no kind: its packets are its
	 * own (WireGuard and tun, with the same link type, are known by their kinds). */
	ck_assert(!net_stack_link_secondhand("", ARPHRD_NONE));
	ck_assert(!net_stack_link_secondhand("vxlanx", ARPHRD_ETHER)); /* whole kinds only */
}
END_TEST

START_TEST(test_stack_text)
{
	ck_assert_str_eq(net_stack_why_text(STACK_PORT), "port of");
	ck_assert_str_eq(net_stack_why_text(STACK_ON), "stacked on");
	ck_assert_str_eq(net_stack_why_text(STACK_SHARED), "counted on");
	ck_assert_str_eq(net_stack_why_text(STACK_SECONDHAND), "carries the packets of");
	ck_assert_str_eq(net_stack_why_text(STACK_CAPTURED), "");
}
END_TEST

START_TEST(test_tstamp_pick)
{
	int host[] = {PCAP_TSTAMP_HOST}, none[1] = {0};
	int both[] = {PCAP_TSTAMP_HOST, PCAP_TSTAMP_ADAPTER, PCAP_TSTAMP_ADAPTER_UNSYNCED};
	int synced[] = {PCAP_TSTAMP_HOST_HIPREC, PCAP_TSTAMP_ADAPTER};
	int hosts[] = {PCAP_TSTAMP_HOST_LOWPREC, PCAP_TSTAMP_HOST_HIPREC, PCAP_TSTAMP_HOST};

	/* veth, lo: the host's stamps only, or no list at all. */
	ck_assert_int_eq(net_stack_tstamp_pick(host, 1), -1);
	ck_assert_int_eq(net_stack_tstamp_pick(none, 0), -1);
	ck_assert_int_eq(net_stack_tstamp_pick(NULL, 0), -1);
	ck_assert_int_eq(net_stack_tstamp_pick(none, -1), -1); /* pcap_list_tstamp_types failed */
	ck_assert_int_eq(net_stack_tstamp_pick(hosts, 3), -1);
	/* A card's clock: the free-running one before the synchronised one, in any order. */
	ck_assert_int_eq(net_stack_tstamp_pick(both, 3), PCAP_TSTAMP_ADAPTER_UNSYNCED);
	ck_assert_int_eq(net_stack_tstamp_pick(synced, 2), PCAP_TSTAMP_ADAPTER);
}
END_TEST

static Suite *pcap_stack_suite(void)
{
	Suite *s = suite_create("pcap_stack");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_vlan_and_macvlan_counted_on_the_device);
	tcase_add_test(tc, test_bridge_kept_over_its_ports);
	tcase_add_test(tc, test_bond_in_bridge_and_its_vlan);
	tcase_add_test(tc, test_vlan_enslaved_to_a_bridge);
	tcase_add_test(tc, test_loops_and_strangers);
	tcase_add_test(tc, test_random_graphs_count_once);
	tcase_add_test(tc, test_secondhand);
	tcase_add_test(tc, test_secondhand_carried_up);
	tcase_add_test(tc, test_secondhand_bridge_ports_first);
	tcase_add_test(tc, test_stack_text);
	tcase_add_test(tc, test_tstamp_pick);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(pcap_stack_suite());
}
