/* check_net_capture: one stream of packets into one pipeline instance (net_capture.c): a
 * packet's timestamp, the event cap, the dominant-flow weight (at its upper bound while the
 * kernel samples), as the real pipeline sees them; and a live capture on the loopback of a
 * network namespace of the test's own, its filter set, its packets timed. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <check.h>
#include <math.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "net_int.h"
#include "source_class.h"
#include "testutil.h"
#include "util.h"

#define T0 (1700000000ULL * NS_PER_SEC)
#define MS 1000000ULL

static struct config *cfg;
static struct pool pool;
static struct instance *inst;
static struct capture cap;

static void setup(void)
{
	cfg = config_defaults();
	ck_assert_ptr_nonnull(cfg);
	feed_pool_init(&pool);
	feed_pipeline_init(cfg, &pool, tu_pool_drain_full, &pool);
	inst = feed_pipeline_attach(CLASS_NETWORK, "test0", "ethernet", 0);
	ck_assert_ptr_nonnull(inst);
	net_capture_attach(&cap, inst);
}

static void teardown(void)
{
	net_capture_detach(&cap, "test0");
	feed_pipeline_detach(inst);
	feed_pipeline_fini();
	config_free(cfg);
}

static struct inst_info info(void)
{
	struct inst_info in;

	ck_assert(feed_pipeline_info(0, &in));
	return in;
}

/* One packet from src at t ns (microseconds in the header unless the stream is nano). */
static void packet(uint32_t src, uint64_t t)
{
	uint8_t frame[64];
	struct pcap_pkthdr h;

	h.caplen = h.len = (bpf_u_int32)tu_frame_ipv4(frame, src);
	h.ts.tv_sec = (time_t)(t / NS_PER_SEC);
	h.ts.tv_usec = (suseconds_t)(cap.nano ? t % NS_PER_SEC : t % NS_PER_SEC / 1000);
	net_capture_packet((u_char *)&cap, &h, frame);
}

/* A header's timestamp in ns: seconds and a fraction in its unit, or refused. */
START_TEST(test_time)
{
	const long long big = (long long)(UINT64_MAX / NS_PER_SEC) - 2;
	const struct {
		long long sec, frac;
		bool nano, ok;
		uint64_t t;
	} t[] = {
		{0, 0, false, true, 0},
		{1, 999999, false, true, 1999999000ULL},
		{1, 1000000, false, false, 0},
		{1, 1000000, true, true, 1001000000ULL},
		{1, 999999999, true, true, 1999999999ULL},
		{1, 1000000000, true, false, 0},
		{-1, 0, false, false, 0},
		{5, -1, true, false, 0},
		{big, 999999999, true, true, (uint64_t)big * NS_PER_SEC + 999999999},
		{big + 1, 0, true, false, 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct pcap_pkthdr h = {.ts = {.tv_sec = (time_t)t[i].sec,
					       .tv_usec = (suseconds_t)t[i].frac}};
		uint64_t got = 12345;
		bool ok;

		/* A time_t as narrow as libpcap's on a 32-bit machine (configure.ac) cannot hold
		 * the largest seconds: no header can carry them there. */
		if ((long long)h.ts.tv_sec != t[i].sec)
			continue;
		ok = net_capture_time(&h, t[i].nano, &got);

		ck_assert_msg(ok == t[i].ok, "%lld.%lld (%s): %s", t[i].sec, t[i].frac,
			      t[i].nano ? "ns" : "us", ok ? "taken" : "refused");
		ck_assert_msg(ok ? got == t[i].t : got == 12345, "%lld.%lld: %llu", t[i].sec,
			      t[i].frac, (unsigned long long)got);
	}
}
END_TEST

/* Timed packets reach the pipeline as events; those over the cap and those with an invalid
 * timestamp as skipped; nothing is lost or counted twice across batches. */
START_TEST(test_to_the_pipeline)
{
	struct pcap_pkthdr bad = {.ts = {.tv_sec = 1, .tv_usec = 1000000}, .caplen = 60, .len = 60};
	uint8_t frame[64];
	struct inst_info in;

	net_capture_begin(&cap, DLT_EN10MB, false, 100);
	/* 600 packets 1 ms apart from four sources: 100 of each second's first 1000 ms... */
	for (uint64_t i = 0; i < 600; i++)
		packet(0x0a000001 + (uint32_t)(i % 4), T0 + i * MS);
	/* ...then a second later 300 more, 100 of them timed; three with invalid timestamps */
	for (uint64_t i = 0; i < 300; i++)
		packet(0x0a000001 + (uint32_t)(i % 4), T0 + 2 * NS_PER_SEC + i * MS);
	tu_frame_ipv4(frame, 0x0a000001);
	for (int i = 0; i < 3; i++)
		net_capture_packet((u_char *)&cap, &bad, frame);
	net_capture_flush(&cap);
	in = info();
	ck_assert_uint_eq(cap.packets, 903);
	ck_assert_uint_eq(cap.bad_time, 3);
	ck_assert_uint_eq(in.c.events, 903); /* every packet, timed or skipped */
	ck_assert_uint_eq(in.c.skipped, 703);
	ck_assert_uint_eq(cap.sub_us, 0); /* microsecond stamps */
	ck_assert_str_eq(in.state, "open");
	/* A new stream (a replay's second pass) starts its cap afresh. */
	net_capture_begin(&cap, DLT_EN10MB, true, 100);
	for (uint64_t i = 0; i < 50; i++)
		packet(0x0a000001 + (uint32_t)(i % 4), T0 + 2 * NS_PER_SEC + i * MS + 7);
	net_capture_flush(&cap);
	in = info();
	ck_assert_uint_eq(in.c.events, 953);
	ck_assert_uint_eq(in.c.skipped, 703);
	ck_assert_uint_eq(cap.sub_us, 50); /* nanosecond stamps kept */
}
END_TEST

/* One source with three packets of four: the pipeline's weight is the policy's times
 * 1 - share, and the state names the share (not the source). Four sources alike: the
 * policy's alone. */
START_TEST(test_dominant_source)
{
	double w0 = info().weight, s;
	struct inst_info in;
	char want[64];

	ck_assert(w0 > 0 && w0 < 1); /* reduced by the policy */
	net_capture_begin(&cap, DLT_EN10MB, true, 100000);
	for (uint64_t i = 0; i < 4096; i++)
		packet(i % 4 == 3 ? 0x0a000002 : 0x0a000001, T0 + i * MS);
	net_capture_flush(&cap);
	in = info();
	s = net_flow_top_share(&cap.top);
	ck_assert_msg(fabs(s - 0.75) < 0.02, "share %g", s);
	ck_assert_msg(fabs(in.weight - w0 * (1 - s)) < 1e-9, "weight %g, policy's %g, share %g",
		      in.weight, w0, s);
	snprintf(want, sizeof(want), "open (one source %d%% of packets)", (int)(s * 100));
	ck_assert_str_eq(in.state, want);
	ck_assert(in.flow_text[0]);
	/* One source alone: nothing. */
	for (uint64_t i = 0; i < 8192; i++)
		packet(0x0a000001, T0 + (4096 + i) * MS);
	net_capture_flush(&cap);
	in = info();
	s = net_flow_top_share(&cap.top);
	ck_assert_msg(s >= FLOW_ZERO, "share %g", s);
	ck_assert(in.weight == 0);
	ck_assert(in.flow_zero);
	snprintf(want, sizeof(want), "open (one source %d%% of packets)", (int)(s * 100));
	ck_assert_str_eq(in.state, want);
	/* Four alike again: the policy's weight, no share shown. */
	for (uint64_t i = 0; i < 16384; i++)
		packet(0x0a000001 + (uint32_t)(i % 4), T0 + (12288 + i) * MS);
	net_capture_flush(&cap);
	in = info();
	ck_assert_msg(in.weight == w0, "weight %g, policy's %g", in.weight, w0);
	ck_assert_str_eq(in.state, "open");
}
END_TEST

/* While the kernel samples, the share is weighed at its upper bound: less weight than the
 * same share counted whole; after sampling stops, until 2 * FLOW_WINDOW timed packets have
 * halved the sample away. */
START_TEST(test_sampled_weighs_the_bound)
{
	double w0 = info().weight, s, whole;
	uint64_t t = T0;

	net_capture_begin(&cap, DLT_EN10MB, true, 100000);
	for (int i = 0; i < 2048; i++, t += MS)
		packet(i % 3 == 2 ? 0x0a000002 : 0x0a000001, t);
	net_capture_flush(&cap);
	s = net_flow_top_share(&cap.top);
	whole = info().weight;
	ck_assert_msg(fabs(whole - w0 * (1 - s)) < 1e-9, "weight %g, share %g", whole, s);
	net_capture_sampled(&cap, true);
	for (int i = 0; i < 256; i++, t += MS)
		packet(i % 3 == 2 ? 0x0a000002 : 0x0a000001, t);
	net_capture_flush(&cap);
	s = net_flow_top_share(&cap.top);
	ck_assert_msg(fabs(info().weight -
			   w0 * net_flow_weight(net_flow_share_bound(s, cap.top.total))) < 1e-9,
		      "weight %g on a sample", info().weight);
	ck_assert(info().weight < whole);
	net_capture_sampled(&cap, false);
	ck_assert_uint_eq(cap.sample_left, 2 * FLOW_WINDOW);
	for (int i = 0; i < 2 * FLOW_WINDOW - 1; i++, t += MS)
		packet(i % 3 == 2 ? 0x0a000002 : 0x0a000001, t);
	net_capture_flush(&cap);
	ck_assert_uint_eq(cap.sample_left, 1);
	ck_assert(info().weight < whole);
	packet(0x0a000001, t);
	net_capture_flush(&cap);
	ck_assert_uint_eq(cap.sample_left, 0);
	s = net_flow_top_share(&cap.top);
	ck_assert_msg(fabs(info().weight - w0 * (1 - s)) < 1e-9, "weight %g, share %g",
		      info().weight, s);
}
END_TEST

/* ---- live, on the loopback of the test's own network namespace ---- */

static pcap_t *open_lo(void)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	pcap_t *p = pcap_create("lo", errbuf);
	int rc;

	ck_assert_msg(p != NULL, "pcap_create: %s", errbuf);
	ck_assert_int_eq(pcap_set_snaplen(p, 64), 0);
	ck_assert_int_eq(pcap_set_immediate_mode(p, 1), 0);
	ck_assert_int_eq(pcap_set_tstamp_precision(p, PCAP_TSTAMP_PRECISION_NANO), 0);
	rc = pcap_activate(p);
	ck_assert_msg(rc >= 0, "pcap_activate: %s", pcap_geterr(p));
	ck_assert_int_eq(pcap_setnonblock(p, 1, errbuf), 0);
	return p;
}

/* A UDP socket bound to 127.0.0.1:port (so that nothing answers with ICMP). */
static int udp_bound(uint16_t port, struct sockaddr_in *to)
{
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(s, 0);
	memset(to, 0, sizeof(*to));
	to->sin_family = AF_INET;
	to->sin_port = htons(port);
	to->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)to, sizeof(*to)), 0);
	return s;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The filter set on a live capture: only its packets are counted, each timed by the kernel
 * between the moments before and after it was sent, in order; one sender (127.0.0.1) is
 * every packet's source, so nothing of them weighs. */
START_TEST(test_live_loopback)
{
	enum { N = 60 };
	char err[512];
	struct sockaddr_in kept, other;
	int a, b;
	uint64_t before, after;
	pcap_t *p;
	struct pollfd pfd;
	struct inst_info in;

	TU_NEED_NETNS();
	p = open_lo();
	ck_assert_int_eq(pcap_datalink(p), DLT_EN10MB);
	net_capture_begin(&cap, pcap_datalink(p),
			  pcap_get_tstamp_precision(p) == PCAP_TSTAMP_PRECISION_NANO, 100000);
	ck_assert_msg(net_capture_set_filter(p, "udp dst port 9999", err, sizeof(err)) == 0, "%s",
		      err);
	a = udp_bound(9999, &kept);
	b = udp_bound(9998, &other);
	before = now_ns();
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(sendto(a, "x", 1, 0, (struct sockaddr *)&other, sizeof(other)), 1);
		ck_assert_int_eq(sendto(b, "y", 1, 0, (struct sockaddr *)&kept, sizeof(kept)), 1);
	}
	after = now_ns();
	if (!cap.nano)
		before -= before % 1000; /* stamped in whole microseconds */
	pfd = (struct pollfd){.fd = pcap_get_selectable_fd(p), .events = POLLIN};
	ck_assert_int_ge(pfd.fd, 0);
	for (int turn = 0; turn < 1000 && cap.packets < N; turn++) {
		poll(&pfd, 1, 10);
		ck_assert_int_ge(pcap_dispatch(p, -1, net_capture_packet, (u_char *)&cap), 0);
	}
	ck_assert_uint_eq(cap.packets, N); /* the other port's, sent among them, left out */
	ck_assert_uint_eq(cap.bad_time, 0);
	ck_assert_uint_eq(cap.n_batch, N);
	for (int i = 0; i < N; i++) {
		ck_assert_msg(cap.batch[i] >= before && cap.batch[i] <= after,
			      "packet %d stamped outside the sending", i);
		ck_assert(i == 0 || cap.batch[i] >= cap.batch[i - 1]);
	}
	net_capture_flush(&cap);
	in = info();
	ck_assert_uint_eq(in.c.events, N);
	ck_assert(in.weight == 0);
	ck_assert_str_eq(in.state, "open (one source 100% of packets)");
	/* A filter that does not compile leaves the one in force, and says why. */
	ck_assert_int_eq(net_capture_set_filter(p, "udp dst port", err, sizeof(err)), -1);
	ck_assert_msg(strncmp(err, "the filter \"udp dst port\" does not compile: ", 44) == 0,
		      "%s", err);
	/* No filter is the empty one: every packet, the other port's too. */
	ck_assert_int_eq(net_capture_set_filter(p, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(sendto(a, "x", 1, 0, (struct sockaddr *)&other, sizeof(other)), 1);
	for (int turn = 0; turn < 1000 && cap.packets < N + 1; turn++) {
		poll(&pfd, 1, 10);
		ck_assert_int_ge(pcap_dispatch(p, -1, net_capture_packet, (u_char *)&cap), 0);
	}
	ck_assert_uint_eq(cap.packets, N + 1);
	close(a);
	close(b);
	pcap_close(p);
}
END_TEST

static Suite *net_capture_suite(void)
{
	Suite *s = suite_create("net_capture");
	TCase *tp = tcase_create("pure");
	TCase *tc = tcase_create("pipeline");

	tcase_add_test(tp, test_time);
	suite_add_tcase(s, tp);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_to_the_pipeline);
	tcase_add_test(tc, test_dominant_source);
	tcase_add_test(tc, test_sampled_weighs_the_bound);
	tcase_add_test(tc, test_live_loopback);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(net_capture_suite());
}
