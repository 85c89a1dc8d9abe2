/* check_net_flow: the pure parts of the packet source's rules (net_flow.c): a frame's
 * source address for every link type, the dominant-flow counter, its weight and its bound on
 * a sample, the per-second event cap, and when a card's timestamping may be changed. */
#include "autoconf.h"

#include <check.h>
#include <linux/net_tstamp.h>
#include <math.h>
#include <pcap/dlt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_flow.h"
#include "testutil.h"
#include "util.h"

#define SEED 0x9cab5eedu
#define T0 (1700000000ULL * NS_PER_SEC)
#define MS 1000000ULL

START_TEST(test_flow_key)
{
	uint8_t b[96];
	struct flow_key k, k2;

	tu_frame_ipv4(b, 0x0a000007);
	net_flow_key_of(DLT_EN10MB, b, 60, &k);
	ck_assert_uint_eq(k.family, FLOW_IPV4);
	ck_assert_uint_eq(k.len, 4);
	ck_assert_uint_eq(k.addr[3], 7);
	/* Too short for the IP header: the link-layer source. */
	net_flow_key_of(DLT_EN10MB, b, 30, &k);
	ck_assert_uint_eq(k.family, FLOW_LINK);
	ck_assert_uint_eq(k.len, 6);
	ck_assert_uint_eq(k.addr[5], 1);
	/* Too short for anything. */
	net_flow_key_of(DLT_EN10MB, b, 13, &k);
	ck_assert_uint_eq(k.family, FLOW_UNKNOWN);
	/* ARP: the link-layer source. */
	b[12] = 0x08;
	b[13] = 0x06;
	net_flow_key_of(DLT_EN10MB, b, 60, &k);
	ck_assert_uint_eq(k.family, FLOW_LINK);

	/* Two VLAN tags, then IPv6: source at 14 + 8 + 8. */
	memset(b, 0, sizeof(b));
	b[12] = 0x88, b[13] = 0xa8, b[16] = 0x81, b[17] = 0x00, b[20] = 0x86, b[21] = 0xdd;
	b[22] = 0x60;
	b[22 + 8] = 0xfe, b[22 + 23] = 0x42;
	net_flow_key_of(DLT_EN10MB, b, 22 + 40, &k);
	ck_assert_uint_eq(k.family, FLOW_IPV6);
	ck_assert_uint_eq(k.addr[0], 0xfe);
	ck_assert_uint_eq(k.addr[15], 0x42);
	/* An IPv6 ethertype over a header that says version 4: not taken for IP. */
	b[22] = 0x45;
	net_flow_key_of(DLT_EN10MB, b, 22 + 40, &k);
	ck_assert_uint_eq(k.family, FLOW_LINK);

	/* Raw IP, cooked v1 and v2, BSD loopback. */
	memset(b, 0, sizeof(b));
	b[0] = 0x45, b[12] = 0xc0, b[15] = 9;
	net_flow_key_of(DLT_RAW, b, 20, &k);
	ck_assert_uint_eq(k.family, FLOW_IPV4);
	ck_assert_uint_eq(k.addr[3], 9);
	memset(b, 0, sizeof(b));
	b[4] = 0, b[5] = 6, b[6] = 0xaa, b[14] = 0x08, b[16] = 0x45, b[16 + 15] = 3;
	net_flow_key_of(DLT_LINUX_SLL, b, 36, &k);
	ck_assert_uint_eq(k.family, FLOW_IPV4);
	ck_assert_uint_eq(k.addr[3], 3);
	net_flow_key_of(DLT_LINUX_SLL, b, 20, &k);
	ck_assert_uint_eq(k.family, FLOW_LINK);
	ck_assert_uint_eq(k.len, 6);
	ck_assert_uint_eq(k.addr[0], 0xaa);
	memset(b, 0, sizeof(b));
	b[0] = 0x86, b[1] = 0xdd, b[11] = 6, b[20] = 0x60, b[20 + 8 + 15] = 5;
	net_flow_key_of(DLT_LINUX_SLL2, b, 60, &k);
	ck_assert_uint_eq(k.family, FLOW_IPV6);
	ck_assert_uint_eq(k.addr[15], 5);
	memset(b, 0, sizeof(b));
	b[0] = 2, b[4] = 0x45, b[4 + 15] = 4;
	net_flow_key_of(DLT_NULL, b, 24, &k);
	ck_assert_uint_eq(k.family, FLOW_IPV4);
	ck_assert_uint_eq(k.addr[3], 4);

	/* Unknown link types: one "unknown" source for all; equal keys compare equal. */
	net_flow_key_of(DLT_IEEE802_11, b, 60, &k);
	net_flow_key_of(DLT_IEEE802_11, b + 1, 50, &k2);
	ck_assert_uint_eq(k.family, FLOW_UNKNOWN);
	ck_assert_mem_eq(&k, &k2, sizeof(k));
}
END_TEST

/* Untrusted bytes: any length, any content, every link type; each frame in a buffer of
 * exactly its length, so that valgrind or ASan see a read past it. */
START_TEST(test_flow_key_random_frames)
{
	static const int dlts[] = {DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW, DLT_IPV4,
				   DLT_IPV6, DLT_NULL, DLT_LOOP, DLT_IEEE802_11};

	tu_rng_seed(SEED);
	printf("test_flow_key_random_frames: seed %#llx\n", (unsigned long long)tu_seed);
	for (int i = 0; i < 30000; i++) {
		size_t len = tu_rng_next() % 80;
		uint8_t *b = xmalloc(len ? len : 1);
		struct flow_key k;

		for (size_t j = 0; j < len; j++)
			b[j] = (uint8_t)tu_rng_next();
		/* Often a plausible header, so the deeper paths are taken too. */
		if (len > 14 && i % 3 == 0)
			b[12] = 0x08, b[13] = 0x00, b[14] = 0x45;
		if (len > 16 && i % 5 == 0)
			b[14] = 0x86, b[15] = 0xdd, b[16] = 0x60;
		net_flow_key_of(dlts[i % (int)ARRAY_SIZE(dlts)], b, len, &k);
		ck_assert_uint_le(k.len, sizeof(k.addr));
		ck_assert_uint_le(k.family, FLOW_LINK);
		for (size_t j = k.len; j < sizeof(k.addr); j++)
			if (k.addr[j])
				ck_abort_msg("frame %d: key byte %zu beyond its length", i, j);
		free(b);
	}
}
END_TEST

START_TEST(test_hwtstamp_config)
{
	/* Nobody uses the card's stamps, or only for receiving everything: libpcap may. */
	ck_assert(net_flow_hwtstamp_config_free(HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_NONE));
	ck_assert(net_flow_hwtstamp_config_free(HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_ALL));
	/* ptp4l's set-ups: leave them alone. */
	ck_assert(!net_flow_hwtstamp_config_free(HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_EVENT));
	ck_assert(!net_flow_hwtstamp_config_free(HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL));
	ck_assert(!net_flow_hwtstamp_config_free(HWTSTAMP_TX_OFF,
						 HWTSTAMP_FILTER_PTP_V2_L2_EVENT));
	ck_assert(!net_flow_hwtstamp_config_free(HWTSTAMP_TX_ONESTEP_SYNC, HWTSTAMP_FILTER_NONE));
}
END_TEST

static struct flow_key key_n(uint32_t n)
{
	uint8_t b[64];
	struct flow_key k;

	tu_frame_ipv4(b, n);
	net_flow_key_of(DLT_EN10MB, b, 60, &k);
	return k;
}

START_TEST(test_flow_share)
{
	struct flow_top ft;
	struct flow_key k[4];
	uint32_t heavy = 0;

	for (int i = 0; i < 4; i++)
		k[i] = key_n(0x0a000001 + (uint32_t)i);
	memset(&ft, 0, sizeof(ft));
	ck_assert(net_flow_top_share(&ft) == 0);
	for (int i = 0; i < 10000; i++)
		net_flow_top_add(&ft, &k[0]);
	ck_assert(net_flow_top_share(&ft) == 1.0);

	memset(&ft, 0, sizeof(ft));
	for (int i = 0; i < 10000; i++)
		net_flow_top_add(&ft, &k[i % 4]);
	ck_assert_msg(fabs(net_flow_top_share(&ft) - 0.25) < 0.01, "share %g",
		      net_flow_top_share(&ft));

	memset(&ft, 0, sizeof(ft));
	for (int i = 0; i < 10000; i++)
		net_flow_top_add(&ft, &k[i % 4 == 3]);
	ck_assert_msg(fabs(net_flow_top_share(&ft) - 0.75) < 0.01, "share %g",
		      net_flow_top_share(&ft));

	/* One heavy source among thousands of others, more than the counter has slots: its
	 * share is never under-estimated, and over-estimated by at most 1/FLOW_SLOTS. */
	tu_rng_seed(SEED);
	printf("test_flow_share: seed %#llx\n", (unsigned long long)tu_seed);
	memset(&ft, 0, sizeof(ft));
	for (int i = 0; i < 100000; i++) {
		struct flow_key x = tu_rng_next() % 100 < 60
					    ? k[0]
					    : key_n(0x0b000000 + (uint32_t)(tu_rng_next() % 5000));

		heavy += x.addr[0] == 10;
		net_flow_top_add(&ft, &x);
		if (i > 2 * FLOW_WINDOW && i % 97 == 0) {
			double s = net_flow_top_share(&ft);

			ck_assert_msg(s > 0.5 && s <= 0.6 + 0.1 + 1.0 / FLOW_SLOTS,
				      "packet %d: share %g", i, s);
		}
	}
	ck_assert_uint_gt(heavy, 59000);
}
END_TEST

START_TEST(test_flow_weight)
{
	ck_assert(net_flow_weight(0) == 1);
	ck_assert(net_flow_weight(0.25) == 1);
	ck_assert(net_flow_weight(0.5) == 1);
	ck_assert(fabs(net_flow_weight(0.51) - 0.49) < 1e-12);
	ck_assert(fabs(net_flow_weight(0.75) - 0.25) < 1e-12);
	ck_assert(fabs(net_flow_weight(0.89) - 0.11) < 1e-12);
	ck_assert(net_flow_weight(0.9) == 0);
	ck_assert(net_flow_weight(1) == 0);
	ck_assert(net_flow_weight(NAN) == 0);
	ck_assert(net_flow_weight(-1) == 0);
	/* Never more weight for a more dominant source. */
	for (double s = 0; s <= 1; s += 0.001)
		ck_assert(net_flow_weight(s + 0.001) <= net_flow_weight(s));
}
END_TEST

START_TEST(test_event_cap)
{
	struct event_cap c = {0};
	unsigned taken = 0;

	/* 250 events in half a second, cap 100: the first 100. */
	for (int i = 0; i < 250; i++)
		taken += net_flow_event_cap_take(&c, 100, T0 + (uint64_t)i * 2 * MS);
	ck_assert_uint_eq(taken, 100);
	/* The second starts at the first event after it: T0 + 1 s exactly. */
	ck_assert(!net_flow_event_cap_take(&c, 100, T0 + NS_PER_SEC - 1));
	ck_assert(net_flow_event_cap_take(&c, 100, T0 + NS_PER_SEC));
	/* Time that runs backwards starts a new second: the cap never stalls. */
	for (taken = 0; taken < 100; taken++)
		ck_assert(net_flow_event_cap_take(&c, 100, T0 + NS_PER_SEC + taken) || taken == 99);
	ck_assert(!net_flow_event_cap_take(&c, 100, T0 + NS_PER_SEC + 500));
	ck_assert(net_flow_event_cap_take(&c, 100, T0));
}
END_TEST

/* The flow rule on a sample: a sender at 60 % of the packets (the others many), counted
 * whole and on a sample the kernel would keep (1 in 50, at random), over many seeds and at
 * many points of each stream: the sample, weighed by its upper bound, never gets more weight
 * than the whole stream does, and less than the 1 - 0.6 the share is worth at most by the
 * rule (the bound errs low, not absurdly: above 0.2). */
START_TEST(test_flow_bound_on_sample)
{
	const int seeds = 300, n = 300000;
	double worst = 1, lowest = 1;

	tu_rng_seed(0x5a3b1e5eedULL);
	printf("test_flow_bound_on_sample: seed %#llx\n", (unsigned long long)tu_seed);
	for (int sd = 0; sd < seeds; sd++) {
		struct flow_top whole, sample;

		memset(&whole, 0, sizeof(whole));
		memset(&sample, 0, sizeof(sample));
		for (int i = 0; i < n; i++) {
			uint64_t r = tu_rng_next();
			struct flow_key x = (r % 1000) < 600 ? key_n(0x0a000001)
							     : key_n(0x0b000000 + (uint32_t)(r >> 32) % 3000);

			net_flow_top_add(&whole, &x);
			if (tu_rng_unit() < 0.02)
				net_flow_top_add(&sample, &x);
			if (i > 100000 && i % 10007 == 0) {
				double ww = net_flow_weight(net_flow_top_share(&whole));
				double ws = net_flow_weight(
					net_flow_share_bound(net_flow_top_share(&sample), sample.total));

				ck_assert_msg(ws <= ww,
					      "seed %#llx, stream %d, packet %d: weight %g on the "
					      "sample (share %g of %u), %g on the whole (share %g)",
					      (unsigned long long)tu_seed, sd, i, ws,
					      net_flow_top_share(&sample), sample.total, ww,
					      net_flow_top_share(&whole));
				ck_assert(ws <= 0.4);
				worst = ww - ws < worst ? ww - ws : worst;
				lowest = ws < lowest ? ws : lowest;
			}
		}
	}
	printf("test_flow_bound_on_sample: the sample's weight at least %.3f below the whole's, "
	       "at least %.3f\n", worst, lowest);
	ck_assert(lowest > 0.2);
	/* The bound itself: above the share, at most 1; nothing to go on is the worst case. */
	ck_assert(net_flow_share_bound(0.6, 1000) > 0.6 && net_flow_share_bound(0.6, 1000) < 0.7);
	ck_assert(net_flow_share_bound(0, 1000) > 0);
	ck_assert(net_flow_share_bound(1, 1000) == 1);
	ck_assert(net_flow_share_bound(0.6, 0) == 1);
	ck_assert(net_flow_share_bound(NAN, 100) == 1);
}
END_TEST

/* Whose packet is it: a frame's source address, as a table. Frames are written out in hex
 * (the Ethernet source is 02:00:00:00:00:01 throughout); the key must be the whole key,
 * padding and unused address bytes zero, so that keys compare as words. */
#define ETH_SRC "ff ff ff ff ff ff 02 00 00 00 00 01 "
#define IP4 "45 00 00 1c 00 00 00 00 40 11 00 00 c0 a8 01 07 0a 00 00 02 "
#define IP6                                                                                    \
	"60 00 00 00 00 08 11 40 fe 80 00 00 00 00 00 00 00 00 00 00 00 00 00 42 "             \
	"fe 80 00 00 00 00 00 00 00 00 00 00 00 00 00 01 "
#define SRC4 "c0 a8 01 07"
#define SRC6 "fe 80 00 00 00 00 00 00 00 00 00 00 00 00 00 42"
#define MAC "02 00 00 00 00 01"

static size_t unhex(const char *hex, uint8_t *out, size_t size)
{
	size_t n = 0;

	for (const char *p = hex; *p; p++) {
		unsigned v;

		if (*p == ' ')
			continue;
		ck_assert_msg(n < size && sscanf(p, "%2x", &v) == 1, "bad hex at \"%s\"", p);
		out[n++] = (uint8_t)v;
		p++;
	}
	return n;
}

START_TEST(test_flow_key_table)
{
	static const struct {
		const char *what;
		int dlt;
		const char *frame;
		int cut; /* bytes captured less than the frame's; 0: all */
		enum flow_family family;
		const char *addr;
	} t[] = {
		{"Ethernet, IPv4", DLT_EN10MB, ETH_SRC "08 00 " IP4, 0, FLOW_IPV4, SRC4},
		{"Ethernet, 802.1Q, IPv4", DLT_EN10MB, ETH_SRC "81 00 00 05 08 00 " IP4, 0,
		 FLOW_IPV4, SRC4},
		{"Ethernet, 802.1ad and 802.1Q, IPv6", DLT_EN10MB,
		 ETH_SRC "88 a8 00 05 81 00 00 06 86 dd " IP6, 0, FLOW_IPV6, SRC6},
		{"Ethernet, the old QinQ tag, IPv4", DLT_EN10MB, ETH_SRC "91 00 00 05 08 00 " IP4,
		 0, FLOW_IPV4, SRC4},
		{"Ethernet, three tags: its link source", DLT_EN10MB,
		 ETH_SRC "81 00 00 01 81 00 00 02 81 00 00 03 08 00 " IP4, 0, FLOW_LINK, MAC},
		{"Ethernet, an IPv4 header cut short: its link source", DLT_EN10MB,
		 ETH_SRC "08 00 " IP4, 1, FLOW_LINK, MAC},
		{"Ethernet, IPv6's type over an IPv4 header: its link source", DLT_EN10MB,
		 ETH_SRC "86 dd " IP4 IP4, 0, FLOW_LINK, MAC},
		{"Ethernet, ARP: its link source", DLT_EN10MB, ETH_SRC "08 06 00 01 08 00 06 04", 0,
		 FLOW_LINK, MAC},
		{"Ethernet, a tag cut short: unknown", DLT_EN10MB, ETH_SRC "81 00 00 05 08", 0,
		 FLOW_UNKNOWN, ""},
		{"Ethernet, no type: unknown", DLT_EN10MB, ETH_SRC "08", 0, FLOW_UNKNOWN, ""},
		{"raw IPv6", DLT_RAW, IP6, 0, FLOW_IPV6, SRC6},
		{"raw, IP version 5: unknown", DLT_RAW, "55 " IP4, 0, FLOW_UNKNOWN, ""},
		{"raw IPv4, one byte short: unknown", DLT_RAW, IP4, 1, FLOW_UNKNOWN, ""},
		{"BSD loopback (network order), IPv4", DLT_LOOP, "00 00 00 02 " IP4, 0, FLOW_IPV4,
		 SRC4},
		{"BSD loopback (host order), IPv6", DLT_NULL, "1e 00 00 00 " IP6, 0, FLOW_IPV6, SRC6},
		{"cooked v1, IPv4", DLT_LINUX_SLL, "00 00 00 01 00 06 " MAC " 00 00 08 00 " IP4, 0,
		 FLOW_IPV4, SRC4},
		{"cooked v1, ARP: its link source", DLT_LINUX_SLL,
		 "00 00 00 01 00 06 " MAC " 00 00 08 06 00 01", 0, FLOW_LINK, MAC},
		{"cooked v1, no link address: unknown", DLT_LINUX_SLL,
		 "00 00 00 01 00 00 " MAC " 00 00 08 06 00 01", 0, FLOW_UNKNOWN, ""},
		{"cooked v1, a link address longer than its field: unknown", DLT_LINUX_SLL,
		 "00 00 00 01 00 09 " MAC " 00 00 08 06 00 01", 0, FLOW_UNKNOWN, ""},
		{"cooked v2, IPv4", DLT_LINUX_SLL2, "08 00 00 00 00 00 00 02 00 01 00 06 " MAC
		 " 00 00 " IP4, 0, FLOW_IPV4, SRC4},
		{"802.11: unknown", DLT_IEEE802_11, ETH_SRC "08 00 " IP4, 0, FLOW_UNKNOWN, ""},
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		uint8_t frame[128], addr[16];
		size_t n = unhex(t[i].frame, frame, sizeof(frame));
		uint8_t *exact = xmalloc(n); /* of the captured length: a read past it is seen */
		struct flow_key k, want;

		memcpy(exact, frame, n - (size_t)t[i].cut);
		memset(&want, 0, sizeof(want));
		want.family = (uint8_t)t[i].family;
		want.len = (uint8_t)unhex(t[i].addr, addr, sizeof(addr));
		memcpy(want.addr, addr, want.len);
		memset(&k, 0xa5, sizeof(k));
		net_flow_key_of(t[i].dlt, exact, n - (size_t)t[i].cut, &k);
		ck_assert_msg(memcmp(&k, &want, sizeof(k)) == 0,
			      "%s: family %u, %u bytes (want %u, %u bytes)", t[i].what, k.family,
			      k.len, want.family, want.len);
		free(exact);
	}
}
END_TEST

static Suite *net_flow_suite(void)
{
	Suite *s = suite_create("net_flow");
	TCase *tc = tcase_create("pure");

	tcase_add_test(tc, test_flow_key);
	tcase_add_test(tc, test_flow_key_table);
	tcase_add_test(tc, test_flow_key_random_frames);
	tcase_add_test(tc, test_hwtstamp_config);
	tcase_add_test(tc, test_flow_share);
	tcase_add_test(tc, test_flow_weight);
	tcase_add_test(tc, test_event_cap);
	tcase_add_test(tc, test_flow_bound_on_sample);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(net_flow_suite());
}
