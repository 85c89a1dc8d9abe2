/* check_net: the packet source's pure parts (source addresses, the dominant-flow counter
 * and weight, the event cap; the sampler is check_net_sample's), and its offline mode
 * against the real pipeline, on savefiles written here with chosen timestamps
 * (pcap_open_dead + pcap_dump). */
#include "autoconf.h"

#include <check.h>
#include <event2/event.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/net_tstamp.h>
#include <math.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "est_health.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "log.h"
#include "net.h"
#include "net_flow.h"
#include "net_stack.h"
#include "source.h"
#include "testutil.h"
#include "util.h"

#define SEED 0x9cab5eedu
#define T0 (1700000000ULL * NS_PER_SEC)
#define US 1000ULL
#define MS 1000000ULL

static char tmpdir[4096];
static struct event_base *base;
static struct config *cfg;
static struct pool pool;
static struct source src;
static bool started;

static uint64_t rnd_state = SEED;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* ---- frames ---- */

static size_t eth_ipv4(uint8_t *b, uint32_t src_ip)
{
	memset(b, 0, 64);
	b[6] = 0x02; /* source MAC 02:00:00:00:00:01 */
	b[11] = 0x01;
	b[12] = 0x08; /* IPv4 */
	b[14] = 0x45;
	b[14 + 9] = 17;
	b[26] = (uint8_t)(src_ip >> 24);
	b[27] = (uint8_t)(src_ip >> 16);
	b[28] = (uint8_t)(src_ip >> 8);
	b[29] = (uint8_t)src_ip;
	b[30] = 10;
	b[33] = 2;
	return 60;
}

/* ---- savefiles ---- */

struct pkt {
	uint64_t t;
	uint32_t src;
};

static char *path_of(const char *name)
{
	static char path[2][256];
	static int which;

	which ^= 1;
	snprintf(path[which], sizeof(path[which]), "%s/%s", tmpdir, name);
	return path[which];
}

static void write_savefile(const char *name, const struct pkt *p, size_t n, bool nano)
{
	pcap_t *dead = pcap_open_dead_with_tstamp_precision(
		DLT_EN10MB, 65535, nano ? PCAP_TSTAMP_PRECISION_NANO : PCAP_TSTAMP_PRECISION_MICRO);
	pcap_dumper_t *d;
	uint8_t frame[64];

	ck_assert_ptr_nonnull(dead);
	d = pcap_dump_open(dead, path_of(name));
	ck_assert_ptr_nonnull(d);
	for (size_t i = 0; i < n; i++) {
		struct pcap_pkthdr h;

		h.caplen = h.len = (bpf_u_int32)eth_ipv4(frame, p[i].src);
		h.ts.tv_sec = (time_t)(p[i].t / NS_PER_SEC);
		h.ts.tv_usec = (suseconds_t)(nano ? p[i].t % NS_PER_SEC : p[i].t % NS_PER_SEC / 1000);
		pcap_dump((u_char *)d, &h, frame);
	}
	pcap_dump_close(d);
	pcap_close(dead);
}

/* n packets, gaps from gap(i), sources from the pattern in turn. */
static struct pkt *schedule(size_t n, uint64_t (*gap)(size_t i), const uint32_t *pattern,
			    size_t npat)
{
	struct pkt *p = xcalloc(n, sizeof(*p));
	uint64_t t = T0;

	for (size_t i = 0; i < n; i++) {
		if (i)
			t += gap(i);
		p[i].t = t;
		p[i].src = pattern[i % npat];
	}
	return p;
}

static uint64_t gap_periodic(size_t i)
{
	return MS;
}

/* Random-looking: 50 us .. 2 ms at nanosecond resolution. */
static uint64_t gap_random(size_t i)
{
	return 50 * US + rnd() % (1950 * US);
}

static const uint32_t four[] = {0x0a000001, 0x0a000002, 0x0a000003, 0x0a000004};
static const uint32_t one[] = {0x0a000001};
static const uint32_t three_to_one[] = {0x0a000001, 0x0a000001, 0x0a000001, 0x0a000002};
static const uint32_t two_to_one[] = {0x0a000001, 0x0a000001, 0x0a000002};

static void write_file(const char *name, size_t n, uint64_t (*gap)(size_t i),
		       const uint32_t *pattern, size_t npat)
{
	struct pkt *p;

	rnd_state = SEED;
	p = schedule(n, gap, pattern, npat);
	write_savefile(name, p, n, true);
	free(p);
}

static long file_size(const char *name)
{
	struct stat sb;

	ck_assert_int_eq(stat(path_of(name), &sb), 0);
	return (long)sb.st_size;
}

static void patch(const char *name, long off, const void *bytes, size_t len)
{
	int fd = open(path_of(name), O_WRONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, bytes, len, off), (ssize_t)len);
	close(fd);
}

/* ---- the loop and the pipeline's view ---- */

static bool find(const char *name, struct inst_info *out)
{
	for (size_t i = 0; i < feed_pipeline_count(); i++)
		if (feed_pipeline_info(i, out) && out->cls == CLASS_NETWORK && strcmp(out->name, name) == 0)
			return true;
	return false;
}

static struct inst_info info(const char *name)
{
	struct inst_info in;

	ck_assert_msg(find(name, &in), "no instance %s", name);
	return in;
}

static bool state_is(const char *name, const char *prefix)
{
	struct inst_info in;

	return find(name, &in) && strncmp(in.state, prefix, strlen(prefix)) == 0;
}

static bool done(const char *name)
{
	return state_is(name, "ended") || state_is(name, "refused") || state_is(name, "error");
}

/* At most 3000 turns (30 s when nothing at all happens). */
#define PUMP_UNTIL(cond) TU_PUMP_UNTIL(base, 3000, cond)

/* ---- fixture ---- */

static void set_policy(struct config *c, enum policy_mode mode, double scale)
{
	struct policy_rule *r = &c->policy[CLASS_NETWORK].rule;

	r->mode = mode;
	r->scale = scale;
	r->cap_bits_per_second = 1000000; /* out of the way, unless a test wants it */
}

static void setup(void)
{
	log_open(true, 0);
	tu_mkdtemp(tmpdir, sizeof(tmpdir), "%s/pcap.XXXXXX", tu_tmpdir());
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	cfg = config_defaults();
	set_policy(cfg, MODE_TRUSTED, 0.25);
	cfg->network.max_events_per_second = 100000000;
	feed_pool_init(&pool);
	feed_pipeline_init(cfg, &pool, tu_pool_drain_full, &pool);
	memset(&src, 0, sizeof(src));
	started = false;
}

static void stop(void)
{
	if (started)
		source_stop(&src);
	started = false;
	ck_assert_ptr_null(src.priv);
}

static void teardown(void)
{
	stop();
	feed_pipeline_fini();
	config_free(cfg);
	event_base_free(base);
	tu_rm_tree(tmpdir);
}

static void replay(const char *name)
{
	free(cfg->network.file);
	cfg->network.file = xstrdup(path_of(name));
	ck_assert_int_eq(source_start(&src, &net_source_ops, base, cfg), 0);
	started = true;
	PUMP_UNTIL(done(name));
}

/* Replay under a fresh pipeline with the given policy; the instance's counters. */
static struct inst_info replay_with(const char *name, enum policy_mode mode, double scale)
{
	struct inst_info in;

	stop();
	feed_pipeline_fini();
	set_policy(cfg, mode, scale);
	feed_pipeline_init(cfg, &pool, tu_pool_drain_full, &pool);
	replay(name);
	in = info(name);
	return in; /* name and state stay valid until the next replay */
}

/* ---- pure parts ---- */

START_TEST(test_flow_key)
{
	uint8_t b[96];
	struct flow_key k, k2;

	eth_ipv4(b, 0x0a000007);
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

	printf("test_flow_key_random_frames: seed 0x%x\n", SEED);
	rnd_state = SEED;
	for (int i = 0; i < 30000; i++) {
		size_t len = rnd() % 80;
		uint8_t *b = xmalloc(len ? len : 1);
		struct flow_key k;

		for (size_t j = 0; j < len; j++)
			b[j] = (uint8_t)rnd();
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
	ck_assert(!net_flow_hwtstamp_config_free(HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_PTP_V2_L2_EVENT));
	ck_assert(!net_flow_hwtstamp_config_free(HWTSTAMP_TX_ONESTEP_SYNC, HWTSTAMP_FILTER_NONE));
}
END_TEST

static struct flow_key key_n(uint32_t n)
{
	uint8_t b[64];
	struct flow_key k;

	eth_ipv4(b, n);
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
	printf("test_flow_share: seed 0x%x\n", SEED);
	rnd_state = SEED;
	memset(&ft, 0, sizeof(ft));
	for (int i = 0; i < 100000; i++) {
		struct flow_key x = rnd() % 100 < 60 ? k[0] : key_n(0x0b000000 + (uint32_t)(rnd() % 5000));

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

/* ---- offline: savefiles through the driver and the pipeline ---- */

START_TEST(test_periodic_ends_at_zero)
{
	struct inst_info in;

	write_file("periodic.pcap", 5000, gap_periodic, four, 4);
	replay("periodic.pcap");
	in = info("periodic.pcap");
	ck_assert_str_eq(in.state, "ended");
	ck_assert_uint_eq(in.c.events, 5000);
	ck_assert_uint_eq(in.c.skipped, 0);
	ck_assert_msg(in.c.credited_bits == 0, "periodic arrivals credited %g bits",
		      in.c.credited_bits);
	ck_assert_msg(strcmp(in.health, "ok") != 0, "periodic arrivals: health %s", in.health);
	ck_assert_str_eq(in.kind, "savefile");
}
END_TEST

START_TEST(test_random_at_most_cap_times_scale)
{
	const size_t n = 6000;
	struct inst_info trusted, reduced, mix;
	double cap = cfg->policy[CLASS_NETWORK].rule.cap_bits_per_event;
	double bound;

	printf("test_random_at_most_cap_times_scale: seed 0x%x\n", SEED);
	write_file("random.pcap", n, gap_random, four, 4);
	trusted = replay_with("random.pcap", MODE_TRUSTED, 0);
	reduced = replay_with("random.pcap", MODE_REDUCED, 0.25);
	mix = replay_with("random.pcap", MODE_MIX_ONLY, 0);

	ck_assert_uint_eq(trusted.c.events, n);
	ck_assert_str_eq(trusted.health, "ok");
	/* No credit in the first 1024 symbols (health start-up), at most the cap after. */
	bound = cap * (double)(n - HEALTH_STARTUP_SYMBOLS);
	ck_assert_msg(trusted.c.credited_bits > 0.2 * bound && trusted.c.credited_bits <= bound,
		      "trusted: %g bits for %zu random-looking arrivals (cap %g)",
		      trusted.c.credited_bits, n, cap);
	ck_assert_msg(reduced.c.credited_bits <= 0.25 * bound + 1e-9,
		      "reduced: %g bits, more than 0.25 x cap x events", reduced.c.credited_bits);
	ck_assert_msg(fabs(reduced.c.credited_bits - 0.25 * trusted.c.credited_bits) < 1e-6,
		      "reduced 0.25 credited %g, trusted %g", reduced.c.credited_bits,
		      trusted.c.credited_bits);
	ck_assert(mix.c.credited_bits == 0);
	ck_assert_uint_eq(mix.c.mixed_bytes, trusted.c.mixed_bytes);
	ck_assert(reduced.c.estimated_bits == trusted.c.estimated_bits);
}
END_TEST

START_TEST(test_disabled_never_opened)
{
	/* A file that is not even there: disabled means it is never opened. */
	set_policy(cfg, MODE_DISABLED, 0);
	feed_pipeline_reconfigure(cfg);
	free(cfg->network.file);
	cfg->network.file = xstrdup(path_of("nothing-here.pcap"));
	ck_assert_int_eq(source_start(&src, &net_source_ops, base, cfg), 0);
	started = true;
	for (int i = 0; i < 10; i++)
		tu_turn(base);
	ck_assert_uint_eq(feed_pipeline_count(), 0);
}
END_TEST

START_TEST(test_per_second_cap_held_to_real_time)
{
	/* Ten seconds of random-looking arrivals replayed in a blink: credit is capped by the
	 * daemon's own time as well as by the recorded span, so a recording cannot credit
	 * faster than real time. */
	const size_t n = 8000;
	struct inst_info in;
	double span_s, wall_s;
	uint64_t w0;

	write_file("span.pcap", n, gap_random, four, 4);
	stop();
	feed_pipeline_fini();
	set_policy(cfg, MODE_TRUSTED, 0);
	cfg->policy[CLASS_NETWORK].rule.cap_bits_per_second = 2;
	feed_pipeline_init(cfg, &pool, tu_pool_drain_full, &pool);
	w0 = util_mono_coarse_ns(); /* the clock the cap reads */
	replay("span.pcap");
	wall_s = (double)(util_mono_coarse_ns() - w0) / 1e9;
	in = info("span.pcap");
	rnd_state = SEED;
	span_s = 0;
	for (size_t i = 1; i < n; i++)
		span_s += (double)gap_random(i) / 1e9;
	ck_assert_msg(wall_s < span_s / 4, "the replay took %g s of %g s recorded: too slow to "
		      "tell the clocks apart", wall_s, span_s);
	ck_assert_msg(in.c.credited_bits <= 2 + 2 * wall_s + 1e-9,
		      "%g bits in %g s (%g s recorded) under a cap of 2 bits/s", in.c.credited_bits,
		      wall_s, span_s);
	/* Demand is far above the cap: the first second's worth is granted. */
	ck_assert_msg(in.c.estimated_bits > 10 * 2 * span_s, "demand too low: %g bits",
		      in.c.estimated_bits);
	ck_assert_msg(in.c.credited_bits >= 2 - 1e-9, "only %g bits", in.c.credited_bits);
}
END_TEST

START_TEST(test_event_cap_counts_skipped)
{
	/* 2000 packets a second for three seconds, 1000 a second allowed: exactly half. */
	struct pkt *p = xcalloc(6000, sizeof(*p));
	struct inst_info in;

	for (size_t i = 0; i < 6000; i++) {
		p[i].t = T0 + i * 500 * US + (i * 7919) % 400;
		p[i].src = four[i % 4];
	}
	write_savefile("flood.pcap", p, 6000, true);
	free(p);
	cfg->network.max_events_per_second = 1000;
	replay("flood.pcap");
	in = info("flood.pcap");
	ck_assert_uint_eq(in.c.events, 6000);
	ck_assert_uint_eq(in.c.skipped, 3000);
	ck_assert_uint_eq(in.c.mixed_bytes, 3000 * 8);
}
END_TEST

START_TEST(test_dominant_flow)
{
	const size_t n = 6000;
	struct inst_info rr, d3, d2, single, mix;

	write_file("rr.pcap", n, gap_random, four, 4);
	write_file("d3.pcap", n, gap_random, three_to_one, 4);
	write_file("d2.pcap", n, gap_random, two_to_one, 3);
	write_file("one.pcap", n, gap_random, one, 1);
	rr = replay_with("rr.pcap", MODE_TRUSTED, 0);
	ck_assert_str_eq(rr.state, "ended");
	d3 = replay_with("d3.pcap", MODE_TRUSTED, 0);
	ck_assert_msg(strncmp(d3.state, "ended (one source 7", 19) == 0 &&
			      strstr(d3.state, "% of packets)") != NULL,
		      "state \"%s\"", d3.state);
	/* The weight in force: the policy's (1) times the flow rule's 1 - s, s about 0.75 */
	ck_assert_msg(d3.weight > 0.2 && d3.weight < 0.3, "weight %g", d3.weight);
	ck_assert_msg(strstr(d3.reason_text, "of packets: weight 0.2") != NULL, "reason \"%s\"",
		      d3.reason_text);
	d2 = replay_with("d2.pcap", MODE_TRUSTED, 0);
	single = replay_with("one.pcap", MODE_TRUSTED, 0);
	ck_assert_str_eq(single.state, "ended (one source 100% of packets)");
	ck_assert(single.weight == 0);
	/* Mix-only: the state says nothing of a weight, and the weight in force is 0. */
	mix = replay_with("d3.pcap", MODE_MIX_ONLY, 0);
	ck_assert_msg(strncmp(mix.state, "ended (one source 7", 19) == 0 &&
			      !strstr(mix.state, "credit") && !strstr(mix.state, "x0."),
		      "state \"%s\"", mix.state);
	ck_assert(mix.weight == 0);
	ck_assert(mix.c.credited_bits == 0);

	/* The same timing, so the same estimate; only the weight differs. */
	ck_assert(d3.c.estimated_bits == rr.c.estimated_bits);
	ck_assert(rr.c.credited_bits > 100);
	ck_assert_msg(fabs(d3.c.credited_bits / rr.c.credited_bits - 0.25) < 0.01,
		      "three to one: %g of the undominated credit", d3.c.credited_bits /
								     rr.c.credited_bits);
	ck_assert_msg(fabs(d2.c.credited_bits / rr.c.credited_bits - 1.0 / 3) < 0.01,
		      "two to one: %g of the undominated credit", d2.c.credited_bits /
								  rr.c.credited_bits);
	ck_assert(single.c.credited_bits == 0);
	ck_assert_uint_eq(single.c.events, n);
}
END_TEST

START_TEST(test_nanoseconds_kept)
{
	/* Intervals of 1 ms + 3 ns and 1 ms + 117 ns in turn, recorded at a 1 ns quantum: the
	 * symbols are those intervals' low bytes, 0x43 and 0xb5. A microsecond file of the
	 * same schedule loses the nanoseconds. */
	struct pkt p[201];
	char rec[300], *dir = xasprintf("%s/rec", tmpdir);
	unsigned char sym[256];
	FILE *f;
	size_t n;

	for (size_t i = 0; i < 201; i++) {
		p[i].t = i ? p[i - 1].t + MS + (i % 2 ? 3 : 117) : T0;
		p[i].src = four[i % 4];
	}
	write_savefile("ns.pcap", p, 201, true);
	stop();
	feed_pipeline_fini();
	free(cfg->record.dir);
	cfg->record.dir = dir;
	cfg->network.quantum_ns = 1;
	feed_pipeline_init(cfg, &pool, tu_pool_drain_full, &pool);
	replay("ns.pcap");
	stop();
	feed_pipeline_fini(); /* closes the record file */
	snprintf(rec, sizeof(rec), "%s/network-ns.pcap.bin", dir);
	f = fopen(rec, "rb");
	ck_assert_msg(f != NULL, "no record file %s", rec);
	n = fread(sym, 1, sizeof(sym), f);
	fclose(f);
	ck_assert_uint_eq(n, 200);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(sym[i] == (i % 2 ? 0xb5 : 0x43), "symbol %zu: 0x%02x", i, sym[i]);
	feed_pipeline_init(cfg, &pool, tu_pool_drain_full, &pool);
}
END_TEST

static void assert_refused(const char *name, uint64_t events)
{
	struct inst_info in;

	stop();
	feed_pipeline_fini();
	feed_pipeline_init(cfg, &pool, tu_pool_drain_full, &pool);
	replay(name);
	in = info(name);
	ck_assert_msg(strcmp(in.state, "refused") == 0, "%s: state %s", name, in.state);
	ck_assert_uint_eq(in.c.events, events);
	ck_assert(in.c.credited_bits == 0);
}

START_TEST(test_damaged_files_refused)
{
	static const uint8_t junk[24] = "this is not a savefile!";
	uint32_t big = 0x7fffffff, bad_ns = 1500000000u;
	const long rec = 16 + 60; /* record header and frame */
	int fd;

	write_file("good.pcap", 3000, gap_random, four, 4);
	/* Cut in the middle of the last record. */
	write_file("cut.pcap", 3000, gap_random, four, 4);
	ck_assert_int_eq(truncate(path_of("cut.pcap"), file_size("cut.pcap") - 5), 0);
	assert_refused("cut.pcap", 0);
	/* Cut in a record header. */
	write_file("cuthdr.pcap", 3000, gap_random, four, 4);
	ck_assert_int_eq(truncate(path_of("cuthdr.pcap"), file_size("cuthdr.pcap") - rec + 7), 0);
	assert_refused("cuthdr.pcap", 0);
	/* Not a savefile at all; and an empty file. */
	patch("good.pcap", 0, junk, sizeof(junk));
	assert_refused("good.pcap", 0);
	fd = open(path_of("empty.pcap"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	close(fd);
	assert_refused("empty.pcap", 0);
	/* A record whose captured length is absurd. */
	write_file("caplen.pcap", 3000, gap_random, four, 4);
	patch("caplen.pcap", 24 + 100 * rec + 8, &big, 4);
	assert_refused("caplen.pcap", 0);
	/* A nanosecond field of 1.5 s. */
	write_file("nsfield.pcap", 3000, gap_random, four, 4);
	patch("nsfield.pcap", 24 + 2000 * rec + 4, &bad_ns, 4);
	assert_refused("nsfield.pcap", 0);
}
END_TEST

START_TEST(test_missing_file)
{
	struct inst_info in;

	replay("missing.pcap");
	in = info("missing.pcap");
	ck_assert_str_eq(in.state, "error");
	ck_assert_uint_eq(in.c.events, 0);
}
END_TEST

START_TEST(test_filter_and_reload)
{
	struct pkt *p;
	struct inst_info in;
	struct config *next;

	rnd_state = SEED;
	p = schedule(4000, gap_random, four, 4);
	write_savefile("f.pcap", p, 4000, false); /* microseconds, for once */
	free(p);
	free(cfg->network.capture.filter);
	cfg->network.capture.filter = xstrdup("src host 10.0.0.2 or src host 10.0.0.3");
	replay("f.pcap");
	in = info("f.pcap");
	ck_assert_uint_eq(in.c.events, 2000);

	/* A reload with the same file does not read it again ... */
	next = config_defaults();
	free(next->network.file);
	next->network.file = xstrdup(cfg->network.file);
	next->network.max_events_per_second = 100000000;
	feed_pipeline_reconfigure(next);
	source_reload(&src, next);
	for (int i = 0; i < 10; i++)
		tu_turn(base);
	ck_assert_uint_eq(info("f.pcap").c.events, 2000);
	ck_assert_uint_eq(info("f.pcap").rule.mode, MODE_REDUCED);
	/* ... disabling it closes it ... */
	next->policy[CLASS_NETWORK].rule.mode = MODE_DISABLED;
	feed_pipeline_reconfigure(next);
	source_reload(&src, next);
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	/* ... and enabling it again reads it afresh, now without the filter. */
	next->policy[CLASS_NETWORK].rule.mode = MODE_MIX_ONLY;
	feed_pipeline_reconfigure(next);
	source_reload(&src, next);
	PUMP_UNTIL(done("f.pcap"));
	ck_assert_uint_eq(info("f.pcap").c.events, 4000);
	config_free(cfg);
	cfg = next;
}
END_TEST

START_TEST(test_bad_filter_is_fatal_at_start)
{
	write_file("x.pcap", 10, gap_random, four, 4);
	free(cfg->network.file);
	cfg->network.file = xstrdup(path_of("x.pcap"));
	free(cfg->network.capture.filter);
	cfg->network.capture.filter = xstrdup("udp port banana");
	ck_assert_int_eq(source_start(&src, &net_source_ops, base, cfg), -1);
	ck_assert_ptr_null(src.priv);
}
END_TEST

/* An entry of sources.network.instances giving a filter, as config_load makes it. */
static void add_instance(const char *name, const char *filter)
{
	struct net_override *o;

	cfg->network.instances = xreallocarray(cfg->network.instances,
					       cfg->network.n_instances + 1, sizeof(*o));
	o = &cfg->network.instances[cfg->network.n_instances++];
	o->name = xstrdup(name);
	o->set = NET_SET_FILTER;
	o->cap = cfg->network.capture;
	o->cap.filter = xstrdup(filter);
}

/* A savefile's instance is matched by the file's name; the first match wins. */
START_TEST(test_instance_filter)
{
	write_file("g.pcap", 4000, gap_random, four, 4);
	free(cfg->network.capture.filter);
	cfg->network.capture.filter = xstrdup("src host 10.0.0.1");
	add_instance("h.pcap", "src host 10.0.0.4");
	add_instance("g.*", "src host 10.0.0.2 or src host 10.0.0.3");
	add_instance("g.pcap", "udp");
	replay("g.pcap");
	ck_assert_uint_eq(info("g.pcap").c.events, 2000);
}
END_TEST

/* Every filter is checked at start, also one for an interface that is not there. */
START_TEST(test_bad_instance_filter_is_fatal_at_start)
{
	write_file("x.pcap", 10, gap_random, four, 4);
	free(cfg->network.file);
	cfg->network.file = xstrdup(path_of("x.pcap"));
	add_instance("eth9", "udp");
	add_instance("eth*", "udp port banana");
	ck_assert_int_eq(source_start(&src, &net_source_ops, base, cfg), -1);
	ck_assert_ptr_null(src.priv);
}
END_TEST

static Suite *pcap_suite(void)
{
	Suite *s = suite_create("pcap");
	TCase *tp = tcase_create("pure");
	TCase *to = tcase_create("offline");

	tcase_add_test(tp, test_flow_key);
	tcase_add_test(tp, test_flow_key_random_frames);
	tcase_add_test(tp, test_hwtstamp_config);
	tcase_add_test(tp, test_flow_share);
	tcase_add_test(tp, test_flow_weight);
	tcase_add_test(tp, test_event_cap);
	tcase_add_test(tp, test_flow_bound_on_sample);
	tcase_set_timeout(tp, 60);
	suite_add_tcase(s, tp);

	tcase_add_checked_fixture(to, setup, teardown);
	tcase_set_timeout(to, 60);
	tcase_add_test(to, test_periodic_ends_at_zero);
	tcase_add_test(to, test_random_at_most_cap_times_scale);
	tcase_add_test(to, test_disabled_never_opened);
	tcase_add_test(to, test_per_second_cap_held_to_real_time);
	tcase_add_test(to, test_event_cap_counts_skipped);
	tcase_add_test(to, test_dominant_flow);
	tcase_add_test(to, test_nanoseconds_kept);
	tcase_add_test(to, test_damaged_files_refused);
	tcase_add_test(to, test_missing_file);
	tcase_add_test(to, test_filter_and_reload);
	tcase_add_test(to, test_bad_filter_is_fatal_at_start);
	tcase_add_test(to, test_instance_filter);
	tcase_add_test(to, test_bad_instance_filter_is_fatal_at_start);
	suite_add_tcase(s, to);
	return s;
}

int main(void)
{
	return tu_run_suite(pcap_suite());
}
