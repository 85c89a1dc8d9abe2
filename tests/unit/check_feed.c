/* check_feed: unit tests for feed.c — phase choice, and when batches reach a dry-run sink. */
#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "feed.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "feed_sink.h"
#include "kernel.h"
#include "testutil.h"
#include "util.h"

/* ---- feed_choose: every mode against every kind of kernel ---- */

struct kcase {
	const char *what;
	struct kernel_state ks;
};

static const struct kcase kernels[] = {
	{"4.19, not ready", {.major = 4, .minor = 19, .credit_until_ready = false}},
	{"5.17, ready", {.major = 5, .minor = 17, .credit_until_ready = false, .crng_ready = true}},
	{"5.18, not ready", {.major = 5, .minor = 18, .credit_until_ready = true}},
	{"6.18, ready", {.major = 6, .minor = 18, .credit_until_ready = true, .crng_ready = true}},
};

START_TEST(test_choose_auto)
{
	/* < 5.18 -> watermark whatever the CRNG; >= 5.18 -> boot until ready, then mix. */
	ck_assert_int_eq(feed_choose(FEED_AUTO, &kernels[0].ks), PHASE_WATERMARK);
	ck_assert_int_eq(feed_choose(FEED_AUTO, &kernels[1].ks), PHASE_WATERMARK);
	ck_assert_int_eq(feed_choose(FEED_AUTO, &kernels[2].ks), PHASE_BOOT);
	ck_assert_int_eq(feed_choose(FEED_AUTO, &kernels[3].ks), PHASE_MIX);
}
END_TEST

/* The phase from recorded /proc/sys/kernel/random trees (tests/data/kernel_random/). */
static void probe_tree(struct kernel_state *ks, const char *tree, bool ready)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/tests/data/kernel_random/%s", SRCDIR, tree);
	kernel_probe_at(ks, dir);
	ks->crng_ready = ready;
}

START_TEST(test_choose_from_recorded_trees)
{
	struct kernel_state ks;

	/* Debian 11's 5.10.262: the boot phase and its allowance, as on 6.x. */
	probe_tree(&ks, "5.10.262-booting", false);
	ck_assert_int_eq(feed_choose(FEED_AUTO, &ks), PHASE_BOOT);
	ck_assert_int_eq(kernel_bits_needed(&ks), 251);
	probe_tree(&ks, "5.10.262", true);
	ck_assert_int_eq(feed_choose(FEED_AUTO, &ks), PHASE_MIX);
	probe_tree(&ks, "6.12", false);
	ck_assert_int_eq(feed_choose(FEED_AUTO, &ks), PHASE_BOOT);
	/* The old pool: the watermark, ready or not. */
	probe_tree(&ks, "4.19-pool4096", false);
	ck_assert_int_eq(feed_choose(FEED_AUTO, &ks), PHASE_WATERMARK);
	ck_assert_int_eq(kernel_bits_needed(&ks), 0);
	probe_tree(&ks, "4.19-pool4096", true);
	ck_assert_int_eq(feed_choose(FEED_AUTO, &ks), PHASE_WATERMARK);
}
END_TEST

START_TEST(test_choose_forced_modes)
{
	for (size_t i = 0; i < ARRAY_SIZE(kernels); i++) {
		const struct kernel_state *ks = &kernels[i].ks;
		/* boot: credit early until the CRNG is ready, then mix at a low rate. */
		enum feed_phase boot = ks->crng_ready ? PHASE_MIX : PHASE_BOOT;

		ck_assert_msg(feed_choose(FEED_ALWAYS, ks) == PHASE_ALWAYS, "always, %s",
			      kernels[i].what);
		ck_assert_msg(feed_choose(FEED_WATERMARK, ks) == PHASE_WATERMARK, "watermark, %s",
			      kernels[i].what);
		ck_assert_msg(feed_choose(FEED_BOOT, ks) == boot, "boot, %s", kernels[i].what);
	}
}
END_TEST

START_TEST(test_phase_names)
{
	static const struct {
		enum feed_phase p;
		const char *name;
	} want[] = {{PHASE_BOOT, "boot"},
		    {PHASE_MIX, "mix"},
		    {PHASE_WATERMARK, "watermark"},
		    {PHASE_ALWAYS, "always"}};

	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		ck_assert_str_eq(feed_phase_name(want[i].p), want[i].name);
	/* The start-up line says what each phase does: only mix mixes at a low rate (not
	 * always, whatever the kernel's state). */
	ck_assert_ptr_nonnull(strstr(feed_phase_meaning(PHASE_MIX), "low rate"));
	ck_assert_ptr_nonnull(strstr(feed_phase_meaning(PHASE_ALWAYS), "every batch"));
	ck_assert_ptr_nonnull(strstr(feed_phase_meaning(PHASE_BOOT), "early"));
	ck_assert_ptr_nonnull(strstr(feed_phase_meaning(PHASE_WATERMARK), "watermark"));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		if (want[i].p != PHASE_MIX)
			ck_assert_ptr_null(strstr(feed_phase_meaning(want[i].p), "low rate"));
}
END_TEST

/* ---- the feeder with a real pool, a dry-run sink and a libevent base ----
 * Events go into the pool as the pipeline puts them there: each add marks the feed as
 * wanted, and the feed runs at the loop's next turn. */

static struct config *cfg;
static struct event_base *base;
static struct sink sink;
static struct pool pool;
static struct feed feed;
static bool started;
static int flushes;

static void count_flush(void *arg)
{
	int *n = arg;

	(*n)++;
}

static void setup(void)
{
	cfg = config_defaults();
	ck_assert_ptr_nonnull(cfg);
	cfg->feed.batch_bits = 64;
	cfg->feed.batch_interval = 0.02;
	cfg->feed.mix_interval = 0.05;
	cfg->feed.reseed = true;
	cfg->feed.low_watermark = 256;
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	ck_assert_int_eq(feed_sink_open(&sink, SINK_DRY_RUN, "/dev/random"), 0);
	started = false;
	flushes = 0;
}

static void teardown(void)
{
	if (started)
		feed_fini(&feed);
	feed_sink_close(&sink);
	event_base_free(base);
	config_free(cfg);
}

/* feed_init with `mode` (the phase follows the real kernel), then force `phase` unless it
 * is PHASE_KEEP. */
#define PHASE_KEEP ((enum feed_phase) - 1)
static void start(enum feed_mode mode, enum feed_phase phase)
{
	cfg->feed.mode = mode;
	feed_pool_init(&pool);
	memset(&feed, 0, sizeof(feed));
	feed_init(&feed, base, cfg, &pool, &sink);
	feed.after_flush = count_flush;
	feed.after_flush_arg = &flushes;
	started = true;
	ck_assert_int_eq(feed.phase, feed_choose(mode, &feed.ks));
	if (phase == PHASE_KEEP)
		return;
	feed.phase = phase;
	/* The boot phase as on a kernel not ready at start: what the feed then asks the
	 * kernel at a batch is its real state. */
	if (phase == PHASE_MIX)
		feed.ks.crng_ready = true;
	if (phase == PHASE_BOOT)
		feed.ks.crng_ready = false;
}

static void add_events(int n, double credit_each)
{
	for (int i = 0; i < n; i++) {
		uint64_t v = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);

		feed_pool_add(&pool, &v, sizeof(v), credit_each);
		feed_want(&feed);
	}
}

/* One turn of the loop, without waiting: what is active runs, the feed among it. (1, for
 * nothing left to wait for, is no error.) */
static void turn(void)
{
	ck_assert_int_ge(event_base_loop(base, EVLOOP_NONBLOCK), 0);
}

static int pending_events(void)
{
	return event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED);
}

START_TEST(test_init_phase_follows_kernel)
{
	start(FEED_AUTO, PHASE_KEEP);
	/* What feed_init probed is the running kernel's state. */
	ck_assert(feed.ks.crng_ready == kernel_crng_ready());
	ck_assert(feed.saw_not_ready == !feed.ks.crng_ready);
	ck_assert(!feed.timer_armed);
	ck_assert_int_eq(pending_events(), 0); /* idle: nothing scheduled */
}
END_TEST

START_TEST(test_boot_flushes_at_batch_bits)
{
	start(FEED_BOOT, PHASE_BOOT);
	add_events(6, 10); /* 60 < 64 */
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	ck_assert(!feed_pool_empty(&pool));
	ck_assert(feed.timer_armed); /* a pending batch waits at most batch_interval */

	add_events(1, 10); /* 70 >= 64: at this turn */
	turn();
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.credited, 70);
	ck_assert_uint_eq(sink.mixed_bytes, 7 * 8);
	ck_assert(feed_pool_empty(&pool));
	ck_assert_int_eq(flushes, 1);
	/* Readiness comes from /dev/random's POLLIN (test_ready_watched), not from a batch. */
	ck_assert_int_eq(feed.phase, PHASE_BOOT);
}
END_TEST

START_TEST(test_boot_flushes_full_pool)
{
	cfg->feed.batch_bits = 1000000;
	start(FEED_BOOT, PHASE_BOOT);
	add_events(POOL_BYTES / 8 - 1, 0);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	add_events(1, 0);
	turn();
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.mixed_bytes, POOL_BYTES);
	ck_assert_uint_eq(sink.credited, 0);
}
END_TEST

START_TEST(test_boot_timer_flushes_small_batch)
{
	cfg->feed.batch_bits = 1000;
	start(FEED_BOOT, PHASE_BOOT);
	add_events(3, 1.5);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.credited, 4); /* floor(4.5) */
	ck_assert(feed_pool_empty(&pool));
	ck_assert_int_eq(pending_events(), 0);
}
END_TEST

START_TEST(test_always_flushes_every_batch)
{
	cfg->feed.batch_bits = 32;
	start(FEED_ALWAYS, PHASE_ALWAYS);
	add_events(3, 8);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	add_events(1, 8);
	turn();
	ck_assert_uint_eq(sink.feeds, 1);
	add_events(4, 8);
	turn();
	ck_assert_uint_eq(sink.feeds, 2);
	ck_assert_uint_eq(sink.credited, 64);
	ck_assert_int_eq(feed.phase, PHASE_ALWAYS);
	ck_assert_uint_eq(sink.reseeds, 0);
}
END_TEST

START_TEST(test_mix_flushes_on_timer_only)
{
	uint64_t t0;

	start(FEED_BOOT, PHASE_MIX);
	add_events(20, 10); /* 200 bits: far past batch_bits, still no flush */
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	ck_assert(feed.timer_armed);
	ck_assert(!feed_pool_empty(&pool));

	t0 = util_mono_ns();
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.mixed_bytes, 20 * 8);
	/* The kernel ignores credit once ready: none is given, or said to be. */
	ck_assert_uint_eq(sink.credited, 0);
	ck_assert_uint_eq(sink.reseeds, 1);
	ck_assert_int_eq(flushes, 1);
	/* Not before mix_interval (less a little for timer granularity). */
	ck_assert_uint_ge(util_mono_ns() - t0, (uint64_t)(cfg->feed.mix_interval * 1e9) - 5000000);
	/* Nothing pending, nothing scheduled: an idle daemon sleeps. */
	ck_assert(feed_pool_empty(&pool));
	ck_assert(!feed.timer_armed);
	ck_assert_int_eq(pending_events(), 0);

	/* New data arms the timer again. */
	add_events(2, 1);
	turn();
	ck_assert(feed.timer_armed);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(sink.feeds, 2);
	ck_assert_uint_eq(sink.credited, 0);

	/* The old semantics in the mix phase (feed.mode boot, once ready): credit counts. */
	feed.ks.credit_until_ready = false;
	add_events(2, 1);
	turn();
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(sink.feeds, 3);
	ck_assert_uint_eq(sink.credited, 2);
}
END_TEST

START_TEST(test_mix_no_reseed_when_off)
{
	cfg->feed.reseed = false;
	start(FEED_BOOT, PHASE_MIX);
	add_events(5, 1);
	turn();
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.reseeds, 0);
}
END_TEST

START_TEST(test_watermark)
{
	int avail;
	bool below;

	cfg->feed.batch_bits = 8;
	start(FEED_WATERMARK, PHASE_WATERMARK);
	/* Credit alone never flushes here. */
	add_events(10, 100);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);

	/* entropy_avail is never below 1 here (it is 256 once ready): the timer keeps the
	 * batch and re-arms. */
	cfg->feed.low_watermark = 1;
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(sink.feeds, 0);
	ck_assert(feed.timer_armed);
	ck_assert(!feed_pool_empty(&pool));

	/* Below a watermark above anything the kernel reports: it goes, if avail is readable. */
	cfg->feed.low_watermark = INT_MAX;
	avail = kernel_entropy_avail();
	below = avail >= 0;
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(sink.feeds, below ? 1 : 0);
	if (below)
		ck_assert_uint_eq(sink.credited, 10 * 8 * 8); /* 8 bits per byte carried */
}
END_TEST

START_TEST(test_flush_on_exit)
{
	cfg->feed.batch_bits = 1000;
	start(FEED_ALWAYS, PHASE_ALWAYS);
	feed_flush(&feed); /* nothing pending: nothing handed over */
	ck_assert_uint_eq(sink.feeds, 0);
	ck_assert_int_eq(flushes, 0);

	add_events(9, 2.25);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	feed_flush(&feed);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.mixed_bytes, 9 * 8);
	ck_assert_uint_eq(sink.credited, 20); /* floor(20.25) */
	ck_assert(feed_pool_empty(&pool));
	ck_assert_int_eq(flushes, 1);
}
END_TEST

START_TEST(test_flush_on_exit_boot_below_batch)
{
	cfg->feed.batch_bits = 1000;
	start(FEED_BOOT, PHASE_BOOT);
	add_events(4, 3);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	feed_flush(&feed);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.credited, 12);
	ck_assert(feed_pool_empty(&pool));
}
END_TEST

START_TEST(test_reconfigure_to_always_flushes)
{
	cfg->feed.batch_bits = 16;
	start(FEED_WATERMARK, PHASE_WATERMARK);
	add_events(4, 5);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	cfg->feed.mode = FEED_ALWAYS;
	feed_reconfigure(&feed, cfg);
	ck_assert_int_eq(feed.phase, PHASE_ALWAYS);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.credited, 20);
	ck_assert(feed_pool_empty(&pool));
}
END_TEST

START_TEST(test_adds_wait_for_the_loop)
{
	start(FEED_ALWAYS, PHASE_ALWAYS);
	add_events(7, 10); /* 70 >= 64: the batch is taken, and waits for the loop */
	ck_assert(feed_pool_empty(&pool));
	ck_assert_uint_eq(sink.feeds, 0);
	ck_assert_int_eq(flushes, 0);
	turn();
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.credited, 70);
	ck_assert_uint_eq(sink.mixed_bytes, 7 * 8);

	/* Many adds before a turn: the batches they make are those made one add at a time
	 * (7 + 7 events, 6 left waiting), sent in one run. */
	add_events(20, 10);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(pool.events, 6);
	turn();
	ck_assert_uint_eq(sink.feeds, 3);
	ck_assert_uint_eq(sink.credited, 210);
	ck_assert_uint_eq(sink.mixed_bytes, 21 * 8);
	ck_assert_int_eq(flushes, 3);
	ck_assert(feed.timer_armed); /* for the 6 left */
}
END_TEST

START_TEST(test_queue_full_pool_waits)
{
	cfg->feed.batch_bits = 1000000; /* only a full pool goes */
	start(FEED_ALWAYS, PHASE_ALWAYS);
	/* More full pools in one turn than the queue holds: the last stays in the pool, and
	 * what comes after it is folded in. */
	add_events((FEED_QUEUE + 1) * POOL_BYTES / 8 + 3, 0);
	ck_assert_uint_eq(feed.queued, FEED_QUEUE);
	ck_assert(feed_pool_full(&pool));
	ck_assert_uint_eq(pool.events, POOL_BYTES / 8 + 3);
	ck_assert_uint_eq(sink.feeds, 0);
	turn(); /* the queue goes, and then the pool */
	ck_assert_uint_eq(sink.feeds, FEED_QUEUE + 1);
	ck_assert_uint_eq(sink.mixed_bytes, (FEED_QUEUE + 1) * POOL_BYTES);
	ck_assert_uint_eq(feed.queued, 0);
	ck_assert(feed_pool_empty(&pool));
}
END_TEST

/* A source's read callback: it hands a pool's worth of samples to the pipeline, and notes
 * what the sink had seen by the time it returns. */
struct source_turn {
	struct instance *inst;
	uint64_t feeds_inside;
};

static void source_read(evutil_socket_t fd, short what, void *arg)
{
	struct source_turn *st = arg;
	uint64_t t = 10 * 1000000000ULL;

	for (int i = 0; i < POOL_BYTES / 8 - 1; i++) /* with the one in already: full */
		feed_pipeline_sample(st->inst, t += 1000000 + (uint64_t)i * 7919);
	st->feeds_inside = sink.feeds;
}

START_TEST(test_sample_reaches_sink_from_the_loop)
{
	struct source_turn st = {0};
	struct event *src;

	cfg->feed.batch_bits = 1000000; /* only a full pool goes at once */
	start(FEED_BOOT, PHASE_BOOT);
	feed_pipeline_init(cfg, &pool, feed_want, &feed);
	st.inst = feed_pipeline_attach(CLASS_INPUT, "event0", "keyboard", 0);
	ck_assert_ptr_nonnull(st.inst);

	/* Handed to the pipeline outside the loop: in the pool, not in the sink. */
	feed_pipeline_sample(st.inst, 1000000);
	ck_assert_uint_eq(pool.len, 8);
	ck_assert(feed.timer_armed); /* not enough to go yet: the timer waits */
	turn();
	ck_assert_uint_eq(sink.feeds, 0);

	/* From a source's callback, the pool full: the sink is fed after it returns, at the same
	 * turn of the loop, never inside it. */
	src = event_new(base, -1, 0, source_read, &st);
	ck_assert_ptr_nonnull(src);
	event_active(src, EV_READ, 0);
	turn();
	ck_assert_uint_eq(st.feeds_inside, 0);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.mixed_bytes, POOL_BYTES);
	event_free(src);
	feed_pipeline_fini();
}
END_TEST

/* ---- the kernel's signals on /dev/random ----
 * The host's kernel is ready and has the 5.18 semantics, so its /dev/random never signals
 * either in a test. A unix socket pair stands in for the device: one end is readable when
 * the other writes (POLLIN, "ready"), writable while its buffer has room (POLLOUT, "below
 * write_wakeup_threshold"). What is tested is that the feed waits for those signals, acts
 * at once when they come and then stops waiting. */

static int sv[2] = {-1, -1};

static void pair(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv),
			 0);
}

static void unpair(void)
{
	for (int i = 0; i < 2; i++)
		if (sv[i] >= 0)
			close(sv[i]);
	sv[0] = sv[1] = -1;
}

/* sv[0] not writable: its peer reads nothing, its buffer full. */
static void fill(void)
{
	static const char junk[4096];

	while (write(sv[0], junk, sizeof(junk)) > 0)
		;
	ck_assert_int_eq(errno, EAGAIN);
}

/* Room again in sv[0]'s buffer. */
static void drain(void)
{
	char buf[4096];

	while (read(sv[1], buf, sizeof(buf)) > 0)
		;
}

START_TEST(test_watermark_default_from_kernel)
{
	struct kernel_state ks;
	const char *from = NULL;

	start(FEED_AUTO, PHASE_MIX);
	cfg->feed.low_watermark = 0;
	probe_tree(&ks, "4.19-pool4096", true);
	pair();
	feed_use_kernel(&feed, &ks, sv[0]);
	ck_assert_int_eq(feed.phase, PHASE_WATERMARK);
	/* The kernel's write_wakeup_threshold, and then its own POLLOUT says when. */
	ck_assert_int_eq(feed_watermark(&feed, &from), 896);
	ck_assert_str_eq(from, "the kernel's write_wakeup_threshold");
	ck_assert(feed_watermark_by_pollout(&feed));
	/* Another watermark: entropy_avail is looked at instead. */
	cfg->feed.low_watermark = 1024;
	ck_assert_int_eq(feed_watermark(&feed, &from), 1024);
	ck_assert_str_eq(from, "feed.low_watermark");
	ck_assert(!feed_watermark_by_pollout(&feed));
	cfg->feed.low_watermark = 896;
	ck_assert(feed_watermark_by_pollout(&feed));
	/* Unreadable: the old kernels' default, said to be assumed. */
	cfg->feed.low_watermark = 0;
	ks.write_wakeup = -1;
	feed_use_kernel(&feed, &ks, sv[0]);
	ck_assert_int_eq(feed_watermark(&feed, &from), KERNEL_OLD_WRITE_WAKEUP);
	ck_assert_msg(strncmp(from, "assumed", 7) == 0, "%s", from);
	ck_assert(!feed_watermark_by_pollout(&feed));
	/* The 5.18 semantics, forced into watermark mode: POLLOUT means "not ready" there. */
	cfg->feed.mode = FEED_WATERMARK;
	probe_tree(&ks, "5.10.262", true);
	feed_use_kernel(&feed, &ks, sv[0]);
	ck_assert_int_eq(feed.phase, PHASE_WATERMARK);
	ck_assert_int_eq(feed_watermark(&feed, NULL), 256);
	ck_assert(!feed_watermark_by_pollout(&feed));
	/* No device to watch: entropy_avail too. */
	probe_tree(&ks, "4.19-pool4096", true);
	feed_use_kernel(&feed, &ks, -1);
	ck_assert(!feed_watermark_by_pollout(&feed));
	unpair();
}
END_TEST

START_TEST(test_watermark_wakes_on_pollout)
{
	struct kernel_state ks;
	uint64_t t0;

	cfg->feed.batch_interval = 0.2;
	cfg->feed.low_watermark = 0; /* the kernel's */
	start(FEED_AUTO, PHASE_MIX);
	probe_tree(&ks, "4.19-pool4096", true);
	pair();
	fill();
	feed_use_kernel(&feed, &ks, sv[0]);
	ck_assert_int_eq(feed.phase, PHASE_WATERMARK);
	ck_assert_int_eq(pending_events(), 0); /* idle: nothing watched */

	/* Pending data waits for the kernel, not for a timer. */
	add_events(10, 100);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);
	ck_assert(!feed.timer_armed);
	ck_assert(feed.low_armed);
	ck_assert_int_eq(pending_events(), 1);

	/* Below the watermark: the batch goes at the next turn. */
	drain();
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_uint_eq(sink.credited, 10 * 8 * 8); /* 8 bits per byte carried */
	ck_assert(feed_pool_empty(&pool));
	ck_assert_int_eq(pending_events(), 0); /* nothing pending, nothing watched */

	/* Still below (POLLOUT stays): the next batch no sooner than batch_interval after. */
	t0 = feed.low_fed_ns;
	add_events(3, 1);
	turn();
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert(feed.timer_armed);
	ck_assert(!feed.low_armed);
	while (sink.feeds < 2)
		ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert_uint_ge(util_mono_ns() - t0, (uint64_t)(cfg->feed.batch_interval * 1e9) - 5000000);
	ck_assert_uint_eq(sink.credited, 640 + 3);
	ck_assert_int_eq(pending_events(), 0);

	/* Above the watermark again: the data waits, however long. */
	fill();
	add_events(2, 1);
	turn();
	ck_assert_uint_eq(sink.feeds, 2);
	if (feed.timer_armed) /* the rest of the batch_interval since the last batch */
		ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE), 0);
	ck_assert(feed.low_armed);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_NONBLOCK), 0);
	ck_assert_uint_eq(sink.feeds, 2);
	feed_fini(&feed);
	started = false;
	unpair();
}
END_TEST

START_TEST(test_ready_watched)
{
	struct kernel_state ks;
	uint64_t before, after;

	cfg->feed.batch_bits = 1000;
	start(FEED_AUTO, PHASE_MIX);
	probe_tree(&ks, "5.10.262-booting", false);
	pair();
	feed_use_kernel(&feed, &ks, sv[1]);
	ck_assert_int_eq(feed.phase, PHASE_BOOT);
	ck_assert(feed.saw_not_ready);
	/* Watched, not polled: one event waits, and a turn of the loop does nothing. */
	ck_assert_int_eq(pending_events(), 1);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_NONBLOCK), 0);
	ck_assert_int_eq(feed.phase, PHASE_BOOT);
	add_events(2, 10);
	turn();
	ck_assert_uint_eq(sink.feeds, 0);

	/* The kernel says ready: noticed at that turn, the boot phase ends, the credit the
	 * sink had by then is what it had before ready. */
	before = util_mono_ns() - feed.start_ns;
	ck_assert_int_eq(write(sv[0], "r", 1), 1);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_NONBLOCK), 0);
	after = util_mono_ns() - feed.start_ns;
	ck_assert_int_eq(feed.phase, PHASE_MIX);
	ck_assert(feed.ks.crng_ready);
	ck_assert_uint_ge(feed.ready_after_ns, before);
	ck_assert_uint_le(feed.ready_after_ns, after);
	ck_assert_uint_eq(feed.credited_before_ready, 0);
	ck_assert_int_ge(flushes, 1); /* the daemon's status is told at once */
	/* And never again: only the mix timer for the pending data is left. */
	ck_assert(feed.timer_armed);
	ck_assert_int_eq(pending_events(), 1);
	feed_flush(&feed);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_NONBLOCK), 0);
	ck_assert_uint_eq(sink.feeds, 1);
	unpair();
}
END_TEST

/* Before 5.6 POLLIN meant entropy_avail >= read_wakeup_threshold, not ready: there the feed
 * asks getrandom() at its batches instead, and watches nothing while idle. */
START_TEST(test_ready_not_watched_before_5_6)
{
	struct kernel_state ks;

	start(FEED_AUTO, PHASE_MIX);
	probe_tree(&ks, "4.19-pool4096", false);
	pair();
	feed_use_kernel(&feed, &ks, sv[1]);
	ck_assert_int_eq(pending_events(), 0);
	ck_assert_int_eq(write(sv[0], "r", 1), 1);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_NONBLOCK), 1);
	ck_assert(!feed.ks.crng_ready);
	/* A batch asks the real kernel, which is ready here. */
	cfg->feed.low_watermark = INT_MAX;
	add_events(2, 10);
	feed_flush(&feed);
	ck_assert_uint_eq(sink.feeds, 1);
	ck_assert(feed.ks.crng_ready == kernel_crng_ready());
	unpair();
}
END_TEST

static Suite *feed_suite(void)
{
	Suite *s = suite_create("feed");
	TCase *tc = tcase_create("choose"), *tf = tcase_create("feeder");

	tcase_add_test(tc, test_choose_auto);
	tcase_add_test(tc, test_choose_from_recorded_trees);
	tcase_add_test(tc, test_choose_forced_modes);
	tcase_add_test(tc, test_phase_names);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(tf, setup, teardown);
	tcase_add_test(tf, test_init_phase_follows_kernel);
	tcase_add_test(tf, test_boot_flushes_at_batch_bits);
	tcase_add_test(tf, test_boot_flushes_full_pool);
	tcase_add_test(tf, test_boot_timer_flushes_small_batch);
	tcase_add_test(tf, test_always_flushes_every_batch);
	tcase_add_test(tf, test_mix_flushes_on_timer_only);
	tcase_add_test(tf, test_mix_no_reseed_when_off);
	tcase_add_test(tf, test_watermark);
	tcase_add_test(tf, test_flush_on_exit);
	tcase_add_test(tf, test_flush_on_exit_boot_below_batch);
	tcase_add_test(tf, test_reconfigure_to_always_flushes);
	tcase_add_test(tf, test_adds_wait_for_the_loop);
	tcase_add_test(tf, test_queue_full_pool_waits);
	tcase_add_test(tf, test_sample_reaches_sink_from_the_loop);
	tcase_add_test(tf, test_watermark_default_from_kernel);
	tcase_add_test(tf, test_watermark_wakes_on_pollout);
	tcase_add_test(tf, test_ready_watched);
	tcase_add_test(tf, test_ready_not_watched_before_5_6);
	suite_add_tcase(s, tf);
	return s;
}

int main(void)
{
	return tu_run_suite(feed_suite());
}
