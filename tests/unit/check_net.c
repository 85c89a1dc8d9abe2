/* check_net: the packet source's offline mode against the real pipeline, on savefiles
 * written here with chosen timestamps (pcap_open_dead + pcap_dump). Its pure parts are
 * check_net_flow's (source addresses, the dominant-flow counter and weight, the event cap)
 * and check_net_sample's (the sampler). */
#include "autoconf.h"

#include <check.h>
#include <event2/event.h>
#include <fcntl.h>
#include <linux/filter.h>
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

		h.caplen = h.len = (bpf_u_int32)tu_frame_ipv4(frame, p[i].src);
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

static struct inst_info info(const char *name)
{
	struct inst_info in;

	ck_assert_msg(tu_instance(CLASS_NETWORK, name, &in), "no instance %s", name);
	return in;
}

static bool state_is(const char *name, const char *prefix)
{
	struct inst_info in;

	return tu_instance(CLASS_NETWORK, name, &in) && strncmp(in.state, prefix, strlen(prefix)) == 0;
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
	TCase *to = tcase_create("offline");

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
