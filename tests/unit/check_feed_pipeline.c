/* check_feed_pipeline: unit tests for feed_pipeline.c with a real pool, estimator and policy. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_policy.h"
#include "est.h"
#include "est_health.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "feed_rate.h"
#include "kernel.h"
#include "source_class.h"
#include "testutil.h"
#include "util.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define QUANTUM 1000 /* ns, every class */
#define TOL 1e-6

/* Random inputs come from a fixed seed (ENTROPYD_TEST_SEED overrides it), printed on failure. */
#define SEED 0x20261203u
#define SEEDFMT " (seed %#llx)"
#define SEEDARG ((unsigned long long)tu_seed)

/* The fixture: a config from config_defaults() with known rules, a pool drained when full. */
static struct config *cfg, *cfg2;
static struct pool pool;
static struct {
	uint64_t events, bytes, credit;
} drained;

/* Overrides the tests install; the config's own are put back before config_free. */
static struct policy_override *saved_ov[2][CLASS_COUNT];
static size_t saved_n[2][CLASS_COUNT];

static bool keep_full; /* leave a full pool be: what comes next is folded in */

static void drain(void *arg)
{
	struct batch b;

	if (!feed_pool_full(&pool) || keep_full)
		return;
	feed_pool_take(&pool, &b);
	drained.events += b.events;
	drained.bytes += b.len;
	drained.credit += (uint64_t)b.credit_bits;
	feed_pool_batch_wipe(&b);
}

static void known_rules(struct config *c, int which)
{
	c->input.quantum_ns = QUANTUM;
	c->block.quantum_ns = QUANTUM;
	c->network.quantum_ns = QUANTUM;
	for (int k = 0; k < CLASS_COUNT; k++) {
		c->policy[k].rule = (struct policy_rule){.mode = MODE_TRUSTED,
							 .scale = 0.5,
							 .cap_bits_per_event = 4,
							 .cap_bits_per_second = 1e9};
		saved_ov[which][k] = c->policy[k].overrides;
		saved_n[which][k] = c->policy[k].n_overrides;
		c->policy[k].overrides = NULL;
		c->policy[k].n_overrides = 0;
	}
}

static void restore(struct config *c, int which)
{
	for (int k = 0; k < CLASS_COUNT; k++) {
		c->policy[k].overrides = saved_ov[which][k];
		c->policy[k].n_overrides = saved_n[which][k];
	}
}

static void setup(void)
{
	cfg = config_defaults();
	ck_assert_ptr_nonnull(cfg);
	known_rules(cfg, 0);
	cfg2 = NULL;
	memset(&drained, 0, sizeof(drained));
	keep_full = false;
	feed_pool_init(&pool);
	feed_pipeline_init(cfg, &pool, drain, NULL);
}

static void teardown(void)
{
	feed_pipeline_fini();
	restore(cfg, 0);
	config_free(cfg);
	if (cfg2) {
		restore(cfg2, 1);
		config_free(cfg2);
	}
}

/* A second config for reconfigure tests, with the same known rules. */
static struct config *second_config(void)
{
	cfg2 = config_defaults();
	ck_assert_ptr_nonnull(cfg2);
	known_rules(cfg2, 1);
	return cfg2;
}

/* An event stream and, beside it, a reference: the estimator the pipeline runs
 * (est_find("sp800-90b")), created with the instance's own params (quantum, class cap,
 * jiffy_ns) and fed the same timestamps, and the credit the design derives from it: the
 * policy (trusted: the estimate; reduced: scale times it; mix-only: 0), held back until
 * the health tests' start-up has passed HEALTH_STARTUP_SYMBOLS symbols, then capped per
 * second. It assumes the health tests never fail on its streams: tests that compare credit
 * with it check that too. Sums are added in the pipeline's order, so they compare exactly. */
struct stream {
	uint64_t t;
	struct est est;
	uint64_t symbols; /* symbols the estimator produced: what the health tests saw */
	double est_sum, last, max;
	double scale;      /* the policy: 1 trusted, the scale if reduced, 0 mix-only */
	double per_second; /* the rule's cap_bits_per_second */
	struct feed_rate rc;
	double cred_sum;
	/* The health tests vouch for credit a window at a time: what waits, of the current
	 * window before the current run of one symbol, and of that run. */
	double held, run_held;
	uint8_t run_symbol;
	bool in_run;  /* run_symbol is set */
	unsigned win; /* symbols of the current APT window seen */
};

static void ref_init(struct est *e, uint64_t quantum_ns, double cap_bits, uint64_t jiffy_ns)
{
	const struct est_ops *ops = est_find("sp800-90b");
	struct est_params p = {.quantum_ns = quantum_ns, .cap_bits = cap_bits,
			       .jiffy_ns = jiffy_ns};

	ck_assert_ptr_nonnull(ops);
	est_init(e, ops, &p);
}

/* For an instance attached with INST_KERNEL_CREDITS iff jiffy_ns != 0. */
static void stream_init_jiffy(struct stream *s, double cap_bits, uint64_t jiffy_ns)
{
	s->t = 10 * SEC + tu_rng_next() % SEC;
	s->symbols = 0;
	s->est_sum = s->last = s->max = 0;
	s->scale = 1;
	s->per_second = 1e9; /* known_rules() */
	memset(&s->rc, 0, sizeof(s->rc));
	s->cred_sum = s->held = s->run_held = 0;
	s->in_run = false;
	s->win = 0;
	ref_init(&s->est, QUANTUM, cap_bits, jiffy_ns);
}

static void stream_init(struct stream *s, double cap_bits)
{
	stream_init_jiffy(s, cap_bits, 0);
}

/* The instance's estimator was restarted with new params: so is the reference. Its sums
 * and the symbol count (the health tests keep theirs) carry on. */
static void stream_restart(struct stream *s, uint64_t quantum_ns, double cap_bits)
{
	struct est_params p = s->est.params;

	est_fini(&s->est);
	ref_init(&s->est, quantum_ns, cap_bits, p.jiffy_ns);
	/* So were the health tests: what waited for them is dropped, the windows start over. */
	s->held = s->run_held = 0;
	s->in_run = false;
	s->win = 0;
}

/* One event `gap` ns after the last, given to inst and to the reference; its estimate. */
static double stream_step(struct stream *s, struct instance *inst, uint64_t gap)
{
	struct est_out out;
	double want;

	s->t += gap;
	est_add(&s->est, s->t, &out);
	if (out.have_symbol) {
		s->symbols++;
		if (!s->in_run || out.symbol != s->run_symbol) {
			s->held += s->run_held; /* the run before ended: it passed the RCT */
			s->run_held = 0;
			s->run_symbol = out.symbol;
			s->in_run = true;
		}
		s->win = (s->win + 1) % HEALTH_APT_WINDOW;
	}
	s->est_sum += out.bits;
	s->last = out.bits;
	s->max = fmax(s->max, out.bits);
	want = s->symbols >= HEALTH_STARTUP_SYMBOLS ? s->scale * out.bits : 0;
	if (want > 0)
		s->run_held += feed_rate_take(&s->rc, s->per_second, want, s->t, util_mono_ns());
	if (out.have_symbol && s->win == 0 && s->held > 0) {
		s->cred_sum += s->held; /* the window passed the APT */
		s->held = 0;
	}
	feed_pipeline_sample(inst, s->t);
	return out.bits;
}

/* n events 0.5..2.5 ms apart. */
static void stream_run(struct stream *s, struct instance *inst, int n)
{
	for (int i = 0; i < n; i++)
		stream_step(s, inst, MS / 2 + tu_rng_next() % (2 * MS));
}

static struct inst_info info_of(size_t i)
{
	struct inst_info in;

	ck_assert_msg(feed_pipeline_info(i, &in), "no instance %zu", i);
	return in;
}

/* The names feed_pipeline_info() lists, in order, comma-separated. */
static const char *listed(void)
{
	static char buf[256];
	struct inst_info in;

	buf[0] = '\0';
	for (size_t i = 0; feed_pipeline_info(i, &in); i++) {
		if (i)
			strcat(buf, ",");
		strcat(buf, in.name);
	}
	return buf;
}

START_TEST(test_listed_oldest_first)
{
	struct instance *a, *b, *c, *d;
	struct inst_info in;

	a = feed_pipeline_attach(CLASS_INPUT, "a", NULL, 0);
	b = feed_pipeline_attach(CLASS_BLOCK, "b", NULL, 0);
	c = feed_pipeline_attach(CLASS_NETWORK, "c", NULL, 0);
	ck_assert_str_eq(listed(), "a,b,c");
	/* Asked out of order, from the middle, again: the same answers. */
	ck_assert_str_eq(info_of(2).name, "c");
	ck_assert_str_eq(info_of(0).name, "a");
	ck_assert_str_eq(info_of(1).name, "b");
	ck_assert_str_eq(info_of(1).name, "b");
	ck_assert(!feed_pipeline_info(3, &in));
	feed_pipeline_detach(b);
	ck_assert_str_eq(listed(), "a,c");
	d = feed_pipeline_attach(CLASS_INPUT, "d", NULL, 0);
	ck_assert_str_eq(listed(), "a,c,d");
	feed_pipeline_detach(d); /* the last one */
	d = feed_pipeline_attach(CLASS_INPUT, "e", NULL, 0);
	ck_assert_str_eq(listed(), "a,c,e");
	feed_pipeline_detach(a); /* the first one */
	feed_pipeline_detach(d);
	ck_assert_str_eq(listed(), "c");
	feed_pipeline_detach(c);
	ck_assert_str_eq(listed(), "");
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	a = feed_pipeline_attach(CLASS_INPUT, "f", NULL, 0);
	ck_assert_str_eq(listed(), "f");
}
END_TEST

START_TEST(test_attach_and_info)
{
	struct instance *kbd, *sda;
	struct inst_info in;
	struct inst_counters tot;
	struct policy_rule want;

	ck_assert_uint_eq(feed_pipeline_count(), 0);
	ck_assert(!feed_pipeline_info(0, &in));
	feed_pipeline_totals(&tot);
	ck_assert_uint_eq(tot.events, 0);

	cfg->policy[CLASS_BLOCK].rule.mode = MODE_MIX_ONLY;
	kbd = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", INST_KERNEL_CREDITS);
	sda = feed_pipeline_attach(CLASS_BLOCK, "sda", NULL, 0);
	ck_assert_ptr_nonnull(kbd);
	ck_assert_ptr_nonnull(sda);
	ck_assert_ptr_ne(kbd, sda);
	ck_assert_uint_eq(feed_pipeline_count(), 2);

	/* Oldest first. */
	in = info_of(0);
	ck_assert_int_eq(in.cls, CLASS_INPUT);
	ck_assert_str_eq(in.name, "kbd0");
	ck_assert_str_eq(in.kind, "keyboard");
	ck_assert_str_eq(in.state, "open");
	ck_assert_str_eq(in.estimator, "sp800-90b");
	ck_assert(in.kernel_credits);
	ck_assert_int_eq(in.rule.mode, MODE_TRUSTED);
	ck_assert_uint_eq(in.c.events, 0);

	in = info_of(1);
	ck_assert_int_eq(in.cls, CLASS_BLOCK);
	ck_assert_str_eq(in.name, "sda");
	ck_assert_str_eq(in.kind, "");
	ck_assert(!in.kernel_credits);
	want = config_policy_resolve(cfg, CLASS_BLOCK, "sda");
	ck_assert_int_eq(in.rule.mode, MODE_MIX_ONLY);
	ck_assert_int_eq(in.rule.mode, want.mode);
	ck_assert(in.rule.cap_bits_per_event == want.cap_bits_per_event);
	ck_assert(!feed_pipeline_info(2, &in));

	feed_pipeline_set_state(sda, "stream");
	ck_assert_str_eq(info_of(1).state, "stream");
	ck_assert_str_eq(info_of(0).state, "open");
}
END_TEST

/* The estimator has no estimate before its first 1024 symbols, and the health tests hold
 * credit back over the first HEALTH_STARTUP_SYMBOLS: ratios of credit to estimate are
 * checked on a window of events after this many. */
#define WARM 1500
/* Counter tests run WARM + this many events: past the first full 4096-symbol block, whose
 * estimate is the first with all five SP 800-90B estimators. */
#define RUN 5000

/* The pipeline's counters against the reference, exactly: same values, same order. */
static void estimate_matches(const struct inst_counters *c, const struct stream *s)
{
	ck_assert_msg(c->estimated_bits == s->est_sum,
		      "estimated %.17g, the reference estimator says %.17g" SEEDFMT,
		      c->estimated_bits, s->est_sum, SEEDARG);
}

/* Credit the instance earned: vouched for by the health tests, or waiting for them. */
static double earned(const struct inst_counters *c)
{
	return c->credited_bits + c->held_bits;
}

static void counters_match(const struct inst_counters *c, const struct stream *s)
{
	estimate_matches(c, s);
	/* Released a window at a time, runs held until they end: exactly as the reference. */
	ck_assert_msg(c->credited_bits == s->cred_sum,
		      "credited %.17g, the reference says %.17g" SEEDFMT, c->credited_bits,
		      s->cred_sum, SEEDARG);
	ck_assert_msg(c->held_bits == s->held + s->run_held,
		      "held %.17g, the reference says %.17g" SEEDFMT, c->held_bits,
		      s->held + s->run_held, SEEDARG);
}

struct window {
	struct inst_counters before, after;
	double est_before;
	uint64_t t_before;
};

static void run_window(struct stream *s, struct instance *inst, size_t idx, int n,
		       struct window *w)
{
	stream_run(s, inst, WARM);
	w->before = info_of(idx).c;
	w->est_before = s->est_sum;
	w->t_before = s->t;
	stream_run(s, inst, n);
	w->after = info_of(idx).c;
}

START_TEST(test_counters_trusted)
{
	const int n = RUN;
	struct stream s;
	struct instance *inst;
	struct window w;
	struct inst_info in;
	double d_est, d_cred;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	stream_init(&s, cfg->policy[CLASS_INPUT].rule.cap_bits_per_event);
	run_window(&s, inst, 0, n, &w);
	in = info_of(0);

	ck_assert_uint_eq(w.after.events, WARM + n);
	ck_assert_uint_eq(w.after.skipped, 0);
	ck_assert_uint_eq(w.after.mixed_bytes, 8 * (uint64_t)(WARM + n));
	ck_assert_msg(in.health_failures == 0 && strcmp(in.health, "ok") == 0,
		      "health %s, %llu failures on a random stream" SEEDFMT, in.health,
		      (unsigned long long)in.health_failures, SEEDARG);
	counters_match(&w.after, &s);
	d_est = w.after.estimated_bits - w.before.estimated_bits;
	d_cred = earned(&w.after) - earned(&w.before);
	ck_assert_msg(d_est > 3.0 * n, "stream too regular to test credit: %g bits" SEEDFMT, d_est,
		      SEEDARG);
	ck_assert_msg(fabs(d_cred - d_est) < TOL, "trusted: credited %g of estimated %g" SEEDFMT,
		      d_cred, d_est, SEEDARG);
	ck_assert_msg(earned(&w.after) <= w.after.estimated_bits + TOL,
		      "credited %g > estimated %g" SEEDFMT, earned(&w.after),
		      w.after.estimated_bits, SEEDARG);
	ck_assert(in.last_estimate == s.last);
	/* Every event reached the pool, 8 bytes each. */
	ck_assert_uint_eq(drained.events + pool.events, WARM + n);
	ck_assert_uint_eq(drained.bytes + pool.len, 8 * (uint64_t)(WARM + n));
	est_fini(&s.est);
}
END_TEST

START_TEST(test_counters_kernel_credited)
{
	/* Events the kernel credits itself: the estimator takes symbols from the phase inside
	 * the kernel's jiffy (every event has one, the first included) and the kernel's Δ rule
	 * no longer bounds the estimate. The reference runs with the jiffy the pipeline should
	 * pass; a cap of 8 lets the literal estimate show through. */
	const int n = WARM + RUN;
	const char *from;
	uint64_t jiffy = NS_PER_SEC / kernel_hz(&from);
	struct stream s;
	struct instance *inst;
	struct inst_info in;

	tu_rng_seed(SEED);
	cfg->policy[CLASS_INPUT].rule.cap_bits_per_event = 8;
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", INST_KERNEL_CREDITS);
	stream_init_jiffy(&s, 8, jiffy);
	stream_run(&s, inst, n);
	in = info_of(0);

	ck_assert_uint_eq(in.jiffy_ns, jiffy);
	ck_assert_uint_eq(s.symbols, n);
	ck_assert_uint_eq(in.c.events, n);
	ck_assert_msg(in.health_failures == 0, "%llu health failures" SEEDFMT,
		      (unsigned long long)in.health_failures, SEEDARG);
	counters_match(&in.c, &s);
	ck_assert_msg(in.c.estimated_bits > 4.0 * (n - HEALTH_STARTUP_SYMBOLS),
		      "estimated %g over %d events" SEEDFMT, in.c.estimated_bits, n, SEEDARG);
	ck_assert_msg(s.max < 8, "the literal estimate reached the cap: %g" SEEDFMT, s.max,
		      SEEDARG);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_counters_estimate_capped)
{
	/* The class cap per event bounds the estimate counter too. */
	const int n = WARM + RUN;
	struct stream s;
	struct instance *inst;
	struct inst_info in;

	tu_rng_seed(SEED);
	cfg->policy[CLASS_BLOCK].rule.cap_bits_per_event = 1.5;
	inst = feed_pipeline_attach(CLASS_BLOCK, "sda", NULL, 0);
	stream_init(&s, 1.5);
	stream_run(&s, inst, n);
	in = info_of(0);
	counters_match(&in.c, &s);
	/* The estimator would give more: it is the cap that bounds every event. */
	ck_assert_msg(s.max == 1.5, "largest estimate %g, cap 1.5" SEEDFMT, s.max, SEEDARG);
	ck_assert_msg(in.c.estimated_bits <= 1.5 * n + TOL, "estimated %g over %d events" SEEDFMT,
		      in.c.estimated_bits, n, SEEDARG);
	ck_assert_msg(in.c.estimated_bits > 1.0 * n, "estimated %g over %d events" SEEDFMT,
		      in.c.estimated_bits, n, SEEDARG);
	ck_assert_msg(in.c.credited_bits <= 1.5 * n + TOL, "credited %g over %d events" SEEDFMT,
		      in.c.credited_bits, n, SEEDARG);
	ck_assert_msg(in.c.credited_bits > 1.0 * n, "credited %g over %d events" SEEDFMT,
		      in.c.credited_bits, n, SEEDARG);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_counters_reduced)
{
	const int n = RUN;
	struct stream s;
	struct instance *inst;
	struct window w;
	double d_est, d_cred;

	tu_rng_seed(SEED);
	cfg->policy[CLASS_NETWORK].rule.mode = MODE_REDUCED;
	cfg->policy[CLASS_NETWORK].rule.scale = 0.25;
	inst = feed_pipeline_attach(CLASS_NETWORK, "eth0", NULL, 0);
	stream_init(&s, cfg->policy[CLASS_NETWORK].rule.cap_bits_per_event);
	s.scale = 0.25;
	run_window(&s, inst, 0, n, &w);

	ck_assert_int_eq(info_of(0).rule.mode, MODE_REDUCED);
	ck_assert_uint_eq(w.after.mixed_bytes, 8 * (uint64_t)(WARM + n));
	ck_assert_uint_eq(info_of(0).health_failures, 0);
	counters_match(&w.after, &s);
	d_est = w.after.estimated_bits - w.before.estimated_bits;
	d_cred = earned(&w.after) - earned(&w.before);
	ck_assert_msg(d_est > 3.0 * n, "stream too regular: %g bits" SEEDFMT, d_est, SEEDARG);
	ck_assert_msg(fabs(d_cred - 0.25 * d_est) < TOL, "reduced 0.25: credited %g of %g" SEEDFMT,
		      d_cred, d_est, SEEDARG);
	ck_assert_msg(earned(&w.after) <= 0.25 * w.after.estimated_bits + TOL,
		      "credited %g of %g in all" SEEDFMT, earned(&w.after),
		      w.after.estimated_bits, SEEDARG);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_counters_mix_only)
{
	const int n = 3000;
	struct stream s;
	struct instance *inst;
	struct inst_info in;

	tu_rng_seed(SEED);
	cfg->policy[CLASS_NETWORK].rule.mode = MODE_MIX_ONLY;
	inst = feed_pipeline_attach(CLASS_NETWORK, "eth0", NULL, 0);
	stream_init(&s, cfg->policy[CLASS_NETWORK].rule.cap_bits_per_event);
	stream_run(&s, inst, n);
	in = info_of(0);

	ck_assert_uint_eq(in.c.events, n);
	ck_assert_uint_eq(in.c.mixed_bytes, 8 * (uint64_t)n);
	ck_assert_msg(in.c.estimated_bits > n, "estimated %g" SEEDFMT, in.c.estimated_bits,
		      SEEDARG);
	ck_assert(in.c.credited_bits == 0);
	/* Data went into the pool, credit did not. */
	ck_assert_uint_eq(drained.events + pool.events, n);
	ck_assert_uint_eq(drained.bytes + pool.len, 8 * (uint64_t)n);
	ck_assert_uint_eq(drained.credit, 0);
	ck_assert(pool.credit == 0);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_per_second_cap)
{
	/* About 10 s of event time (~4 bits an event) handed over in a blink: credit is held to
	 * the cap on the daemon's clock as well as on the events'. */
	const double cap = 10;
	struct stream s;
	struct instance *inst;
	struct window w;
	uint64_t t0, w0;
	double elapsed, wall;

	tu_rng_seed(SEED);
	cfg->policy[CLASS_INPUT].rule.cap_bits_per_second = cap;
	inst = feed_pipeline_attach(CLASS_INPUT, "mouse0", "mouse", 0);
	stream_init(&s, cfg->policy[CLASS_INPUT].rule.cap_bits_per_event);
	s.per_second = cap;
	t0 = s.t;
	w0 = util_mono_coarse_ns(); /* the clock the cap reads */
	run_window(&s, inst, 0, RUN, &w);
	wall = (double)(util_mono_coarse_ns() - w0) / 1e9;
	elapsed = (double)(s.t - t0) / 1e9;

	estimate_matches(&w.after, &s); /* the cap must not change the estimate */
	ck_assert_uint_eq(info_of(0).health_failures, 0);
	ck_assert_msg(wall < elapsed / 4, "the run took %g s of %g s of event time: too slow to "
		      "tell the clocks apart" SEEDFMT, wall, elapsed, SEEDARG);
	ck_assert_msg(w.after.credited_bits <= cap * wall + cap + TOL,
		      "credited %g in %g s (%g s of events) at %g/s" SEEDFMT,
		      w.after.credited_bits, wall, elapsed, cap, SEEDARG);
	/* Demand is far above the cap, so it is the cap that limits, and the first second's
	 * worth is granted. */
	ck_assert_msg(w.after.estimated_bits - w.before.estimated_bits > 10 * cap * elapsed,
		      "demand too low" SEEDFMT, SEEDARG);
	ck_assert_msg(w.after.credited_bits >= cap - TOL, "credited only %g at %g/s" SEEDFMT,
		      w.after.credited_bits, cap, SEEDARG);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_folded_events_take_nothing_from_cap)
{
	/* Events folded into a full pool earn nothing, so they take nothing from the
	 * per-second cap either: once the pool is sent on, the next events get the bucket that
	 * refilled meanwhile. */
	const double cap = 50;
	static const uint8_t junk[POOL_BYTES];
	struct instance *inst;
	struct inst_counters before, after;
	struct batch b;
	uint64_t t = 10 * SEC;

	tu_rng_seed(SEED);
	cfg->policy[CLASS_INPUT].rule.cap_bits_per_second = cap;
	inst = feed_pipeline_attach(CLASS_INPUT, "mouse0", "mouse", 0);
	for (int i = 0; i < WARM; i++) /* an estimate, the health tests passed, the bucket spent */
		feed_pipeline_sample(inst, t += MS / 2 + tu_rng_next() % (2 * MS));
	keep_full = true;
	feed_pool_add(&pool, junk, sizeof(junk), 0);
	ck_assert(feed_pool_full(&pool));
	usleep(1200 * 1000); /* the bucket refills on both clocks: a second and more */
	before = info_of(0).c;
	for (int i = 0; i < 2000; i++) /* ~3 s of events, all folded in */
		feed_pipeline_sample(inst, t += MS / 2 + tu_rng_next() % (2 * MS));
	after = info_of(0).c;
	ck_assert_msg(after.credited_bits + after.held_bits ==
			      before.credited_bits + before.held_bits,
		      "folded events earned %g bits" SEEDFMT,
		      after.credited_bits + after.held_bits - before.credited_bits -
			      before.held_bits, SEEDARG);
	keep_full = false;
	feed_pool_take(&pool, &b);
	feed_pool_batch_wipe(&b);
	for (int i = 0; i < 40; i++) /* ~4 bits wanted each: 160 */
		feed_pipeline_sample(inst, t += MS / 2 + tu_rng_next() % (2 * MS));
	before = after;
	after = info_of(0).c;
	ck_assert_msg(after.credited_bits + after.held_bits -
				      (before.credited_bits + before.held_bits) >= 0.9 * cap,
		      "after the folded events %g bits of a bucket of %g" SEEDFMT,
		      after.credited_bits + after.held_bits -
			      (before.credited_bits + before.held_bits), cap, SEEDARG);
}
END_TEST

static void counters_eq(const struct inst_counters *a, const struct inst_counters *b,
			const char *what)
{
	ck_assert_msg(a->events == b->events, "%s: events %llu vs %llu", what,
		      (unsigned long long)a->events, (unsigned long long)b->events);
	ck_assert_msg(a->skipped == b->skipped, "%s: skipped", what);
	ck_assert_msg(a->mixed_bytes == b->mixed_bytes, "%s: mixed_bytes %llu vs %llu", what,
		      (unsigned long long)a->mixed_bytes, (unsigned long long)b->mixed_bytes);
	ck_assert_msg(fabs(a->estimated_bits - b->estimated_bits) < TOL, "%s: estimated %g vs %g",
		      what, a->estimated_bits, b->estimated_bits);
	ck_assert_msg(fabs(a->credited_bits - b->credited_bits) < TOL, "%s: credited %g vs %g",
		      what, a->credited_bits, b->credited_bits);
}

/* Feed t[0..n) to a new instance, one event a call or in runs of random length; the
 * counters, and what reached the pool. */
static struct inst_counters feed_stream(const char *name, const uint64_t *t, size_t n,
					bool runs, struct pool *after)
{
	struct instance *inst = feed_pipeline_attach(CLASS_NETWORK, name, "test", 0);
	struct inst_counters c;
	size_t idx = feed_pipeline_count() - 1;

	memset(&drained, 0, sizeof(drained));
	feed_pool_init(&pool);
	for (size_t i = 0; i < n;) {
		size_t run = runs ? 1 + tu_rng_next() % 300 : 1;

		if (run > n - i)
			run = n - i;
		if (runs)
			feed_pipeline_samples(inst, t + i, run);
		else
			feed_pipeline_sample(inst, t[i]);
		i += run;
	}
	c = info_of(idx).c;
	*after = pool;
	return c;
}

/* feed_pipeline_samples() takes events exactly as that many feed_pipeline_sample() calls: the same
 * estimates, credit, held credit and pool contents, whether the pool drains when full or
 * folds what comes after (no credit for that). */
START_TEST(test_runs_as_single_events)
{
	enum { N = 12000 };
	static uint64_t t[N];
	uint64_t now = 10 * SEC;

	for (size_t i = 0; i < N; i++)
		t[i] = now += MS / 2 + tu_rng_next() % (2 * MS);
	for (int fold = 0; fold < 2; fold++) {
		struct pool p1, p2;
		struct inst_counters one, runs;
		uint64_t drained_one;
		char n1[16], n2[16];

		keep_full = fold;
		snprintf(n1, sizeof(n1), "one%d", fold);
		snprintf(n2, sizeof(n2), "runs%d", fold);
		one = feed_stream(n1, t, N, false, &p1);
		drained_one = drained.bytes;
		runs = feed_stream(n2, t, N, true, &p2);
		counters_eq(&one, &runs, fold ? "folding" : "draining");
		ck_assert_msg(one.held_bits == runs.held_bits, "held %.17g vs %.17g" SEEDFMT,
			      one.held_bits, runs.held_bits, SEEDARG);
		ck_assert_msg(one.credited_bits == runs.credited_bits,
			      "credited %.17g vs %.17g" SEEDFMT, one.credited_bits,
			      runs.credited_bits, SEEDARG);
		ck_assert_msg(drained_one == drained.bytes, "drained %llu vs %llu bytes",
			      (unsigned long long)drained_one, (unsigned long long)drained.bytes);
		ck_assert(p1.len == p2.len && p1.events == p2.events);
		ck_assert(memcmp(p1.buf, p2.buf, sizeof(p1.buf)) == 0);
		if (fold) /* all but the first 64 events were folded in: little credit */
			ck_assert_msg(one.credited_bits + one.held_bits <= 64 * 4,
				      "credit %g for events folded into a full pool",
				      one.credited_bits + one.held_bits);
		else
			ck_assert_msg(one.credited_bits > 1000, "credited only %g", one.credited_bits);
	}
}
END_TEST

static struct inst_counters sum(const struct inst_counters *a, const struct inst_counters *b)
{
	return (struct inst_counters){
		.events = a->events + b->events,
		.skipped = a->skipped + b->skipped,
		.mixed_bytes = a->mixed_bytes + b->mixed_bytes,
		.estimated_bits = a->estimated_bits + b->estimated_bits,
		.credited_bits = a->credited_bits + b->credited_bits,
	};
}

START_TEST(test_detach_keeps_totals)
{
	struct stream sa, sb;
	struct instance *a, *b;
	struct inst_counters ca, cb, want, tot;

	tu_rng_seed(SEED);
	cfg->policy[CLASS_NETWORK].rule.mode = MODE_REDUCED;
	a = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	b = feed_pipeline_attach(CLASS_NETWORK, "eth0", NULL, 0);
	stream_init(&sa, 4);
	stream_init(&sb, 4);
	stream_run(&sa, a, 700);
	stream_run(&sb, b, 300);
	ca = info_of(0).c;
	cb = info_of(1).c;
	ck_assert_uint_eq(ca.events, 700);
	ck_assert_uint_eq(cb.events, 300);

	feed_pipeline_detach(a);
	ck_assert_uint_eq(feed_pipeline_count(), 1);
	ck_assert_str_eq(info_of(0).name, "eth0");
	feed_pipeline_totals(&tot);
	want = sum(&ca, &cb);
	counters_eq(&tot, &want, "after detaching kbd0");

	stream_run(&sb, b, 200);
	cb = info_of(0).c;
	feed_pipeline_detach(b);
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	feed_pipeline_totals(&tot);
	want = sum(&ca, &cb);
	counters_eq(&tot, &want, "after detaching both");
	ck_assert_uint_eq(tot.events, 1200);

	/* A new instance of the same name starts from zero; the totals keep the old ones. */
	a = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	ck_assert_uint_eq(info_of(0).c.events, 0);
	feed_pipeline_totals(&tot);
	ck_assert_uint_eq(tot.events, 1200);
	est_fini(&sa.est);
	est_fini(&sb.est);
}
END_TEST

/* The added hook: what it last saw of the pool, after its own drain(). */
static struct {
	unsigned calls;
	size_t first_len;
	size_t len;
	uint64_t events;
	double deferred;
} seen;

static void note_added(void *arg)
{
	if (seen.calls++ == 0)
		seen.first_len = pool.len;
	drain(arg);
	seen.len = pool.len;
	seen.events = pool.events;
	seen.deferred = pool.deferred;
}

START_TEST(test_added_after_every_change)
{
	struct instance *inst;
	uint64_t t[300], now = 10 * SEC;
	size_t done = 0;

	tu_rng_seed(SEED);
	feed_pipeline_fini();
	feed_pipeline_init(cfg, &pool, note_added, NULL);
	memset(&seen, 0, sizeof(seen));
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	feed_pipeline_sample(inst, now);
	ck_assert_uint_eq(seen.calls, 1);
	ck_assert_uint_eq(seen.first_len, 8); /* it sees the pool after the add */
	/* Whatever a call did to the pool (data, folding, vouched credit), the hook saw last:
	 * the pool's owner is never left behind. */
	while (done < 20000) {
		size_t run = 1 + tu_rng_next() % ARRAY_SIZE(t);
		unsigned before = seen.calls;

		for (size_t i = 0; i < run; i++)
			t[i] = now += MS / 2 + tu_rng_next() % (2 * MS);
		feed_pipeline_samples(inst, t, run);
		done += run;
		ck_assert_msg(seen.calls > before, "no call after %zu events" SEEDFMT, run, SEEDARG);
		ck_assert_msg(seen.len == pool.len && seen.events == pool.events &&
				      seen.deferred == pool.deferred,
			      "the pool changed after the hook's last call" SEEDFMT, SEEDARG);
	}
	ck_assert_msg(info_of(0).c.credited_bits > 0, "no credit vouched for" SEEDFMT, SEEDARG);

	/* Nothing goes in from a disabled instance: nothing to say. */
	cfg->policy[CLASS_INPUT].rule.mode = MODE_DISABLED;
	feed_pipeline_reconfigure(cfg);
	seen.calls = 0;
	feed_pipeline_samples(inst, t, 10);
	ck_assert_uint_eq(seen.calls, 0);
}
END_TEST

START_TEST(test_reconfigure_changes_policy_keeps_state)
{
	struct stream s;
	struct instance *inst;
	struct inst_counters before;
	struct inst_info in;
	struct config *c2;
	double est0, cred0;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_NETWORK, "eth0", NULL, 0);
	stream_init(&s, 4);
	stream_run(&s, inst, WARM);
	before = info_of(0).c;
	ck_assert(earned(&before) > 0);
	counters_match(&before, &s);

	c2 = second_config();
	c2->policy[CLASS_NETWORK].rule.mode = MODE_REDUCED;
	c2->policy[CLASS_NETWORK].rule.scale = 0.5;
	feed_pipeline_reconfigure(c2);
	s.scale = 0.5;
	s.held = s.run_held = 0; /* earned under the old rule: dropped */
	in = info_of(0);
	ck_assert_int_eq(in.rule.mode, MODE_REDUCED);
	ck_assert(in.rule.scale == 0.5);
	ck_assert_str_eq(in.health, "ok");
	counters_eq(&in.c, &before, "reconfigure");

	/* The estimator kept its history (a fresh one would estimate nothing for its first
	 * 1024 symbols) and the health tests theirs: the very next events earn credit, at the
	 * new weight. */
	est0 = in.c.estimated_bits;
	cred0 = earned(&in.c);
	stream_run(&s, inst, 3);
	in = info_of(0);
	ck_assert_uint_eq(in.c.events, before.events + 3);
	ck_assert_msg(in.c.estimated_bits > est0, "estimator state lost on reconfigure" SEEDFMT,
		      SEEDARG);
	counters_match(&in.c, &s);
	ck_assert_msg(fabs((earned(&in.c) - cred0) - 0.5 * (in.c.estimated_bits - est0)) < TOL,
		      "new weight not applied" SEEDFMT, SEEDARG);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_reconfigure_to_disabled)
{
	static char name[] = "wlan*";
	struct policy_override ov = {.name = name, .set = RULE_SET_MODE,
				     .rule = {.mode = MODE_DISABLED}};
	struct stream s;
	struct instance *inst;
	struct inst_counters before;
	struct inst_info in;
	struct config *c2;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_NETWORK, "wlan0", NULL, 0);
	stream_init(&s, 4);
	stream_run(&s, inst, 100);
	before = info_of(0).c;

	c2 = second_config();
	c2->policy[CLASS_NETWORK].overrides = &ov;
	c2->policy[CLASS_NETWORK].n_overrides = 1;
	feed_pipeline_reconfigure(c2);
	ck_assert(!feed_pipeline_enabled(CLASS_NETWORK, "wlan0"));
	in = info_of(0);
	ck_assert_int_eq(in.rule.mode, MODE_DISABLED);

	/* Still counted as seen, but nothing is mixed or credited. */
	stream_run(&s, inst, 50);
	in = info_of(0);
	ck_assert_uint_eq(in.c.events, before.events + 50);
	ck_assert_uint_eq(in.c.mixed_bytes, before.mixed_bytes);
	ck_assert(in.c.credited_bits == before.credited_bits);
	est_fini(&s.est);
}
END_TEST

/* A disk's instance after WARM events (an estimate, the health tests passed) and the
 * estimate it has made so far, as the reference says. */
static struct instance *warm_disk(struct stream *s, double *est0)
{
	struct instance *inst;
	struct inst_info in;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_BLOCK, "sda", NULL, 0);
	stream_init(s, 4);
	stream_run(s, inst, WARM);
	in = info_of(0);
	*est0 = in.c.estimated_bits;
	ck_assert(*est0 > 0);
	estimate_matches(&in.c, s);
	return inst;
}

/* After a restarted estimator's first 1023 symbols: a WARM run more, and it estimates
 * again, the health tests quiet. */
static struct inst_info estimates_again(struct stream *s, struct instance *inst, double est0)
{
	struct inst_info in;

	stream_run(s, inst, WARM);
	in = info_of(0);
	ck_assert_msg(in.c.estimated_bits > est0 + WARM, "estimate %g, was %g before" SEEDFMT,
		      in.c.estimated_bits, est0, SEEDARG);
	ck_assert_uint_eq(in.health_failures, 0);
	return in;
}

START_TEST(test_reconfigure_new_quantum_restarts_estimator)
{
	struct stream s;
	struct instance *inst;
	struct config *c2;
	struct inst_info in;
	double est0;

	inst = warm_disk(&s, &est0);

	c2 = second_config();
	c2->block.quantum_ns = 10 * QUANTUM;
	feed_pipeline_reconfigure(c2);
	stream_restart(&s, 10 * QUANTUM, 4);
	/* Symbols at another resolution are another stream: the first event gives no delta,
	 * the next 1023 symbols no estimate yet. */
	stream_run(&s, inst, HEALTH_STARTUP_SYMBOLS);
	ck_assert_msg(info_of(0).c.estimated_bits == est0, "estimate %g after a new quantum, was %g"
		      SEEDFMT, info_of(0).c.estimated_bits, est0, SEEDARG);
	/* Then it estimates again, as an estimator started afresh at the new quantum does. */
	in = estimates_again(&s, inst, est0);
	counters_match(&in.c, &s);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_reconfigure_estimate_interval_restarts_estimator_only)
{
	struct stream s;
	struct instance *inst;
	struct config *c2;
	struct inst_info in;
	double est0;

	inst = warm_disk(&s, &est0);

	c2 = second_config();
	c2->block.estimate_interval = 30;
	feed_pipeline_reconfigure(c2);
	/* The same stream on another schedule: a new estimator (no estimate for its first
	 * 1023 symbols), but the health tests go on where they were. */
	in = info_of(0);
	ck_assert_str_eq(in.health, "ok");
	stream_run(&s, inst, HEALTH_STARTUP_SYMBOLS - 1);
	ck_assert_msg(info_of(0).c.estimated_bits == est0,
		      "estimate %g after a new interval, was %g" SEEDFMT,
		      info_of(0).c.estimated_bits, est0, SEEDARG);
	ck_assert_str_eq(info_of(0).health, "ok");
	estimates_again(&s, inst, est0);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_enabled)
{
	static char wl[] = "wlan*", kbd[] = "kbd*";
	struct policy_override net_ov = {.name = wl, .set = RULE_SET_MODE,
					 .rule = {.mode = MODE_DISABLED}};
	struct policy_override in_ov = {.name = kbd, .set = RULE_SET_MODE,
					.rule = {.mode = MODE_TRUSTED}};

	ck_assert(feed_pipeline_enabled(CLASS_NETWORK, "wlan0"));
	cfg->policy[CLASS_NETWORK].overrides = &net_ov;
	cfg->policy[CLASS_NETWORK].n_overrides = 1;
	ck_assert(!feed_pipeline_enabled(CLASS_NETWORK, "wlan0"));
	ck_assert(feed_pipeline_enabled(CLASS_NETWORK, "eth0"));

	/* Every mode but disabled lets an instance open. */
	cfg->policy[CLASS_BLOCK].rule.mode = MODE_MIX_ONLY;
	ck_assert(feed_pipeline_enabled(CLASS_BLOCK, "sda"));
	cfg->policy[CLASS_BLOCK].rule.mode = MODE_REDUCED;
	ck_assert(feed_pipeline_enabled(CLASS_BLOCK, "sda"));

	/* A disabled class, with one instance let back in by an override. */
	cfg->policy[CLASS_INPUT].rule.mode = MODE_DISABLED;
	cfg->policy[CLASS_INPUT].overrides = &in_ov;
	cfg->policy[CLASS_INPUT].n_overrides = 1;
	ck_assert(!feed_pipeline_enabled(CLASS_INPUT, "mouse0"));
	ck_assert(feed_pipeline_enabled(CLASS_INPUT, "kbd0"));
}
END_TEST

/* ---- the kernel's jiffy and the health tests (DESIGN §5.2) ---- */

START_TEST(test_jiffy_only_for_kernel_credited)
{
	const char *from = NULL, *p_from = NULL;
	unsigned hz = kernel_hz(&from);
	struct inst_info kbd, sda;

	ck_assert_uint_gt(hz, 0);
	ck_assert_uint_eq(feed_pipeline_kernel_hz(&p_from), hz);
	ck_assert_str_eq(p_from, from);
	feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", INST_KERNEL_CREDITS);
	feed_pipeline_attach(CLASS_BLOCK, "sda", NULL, 0);
	kbd = info_of(0);
	sda = info_of(1);
	ck_assert(kbd.kernel_credits);
	ck_assert_msg(kbd.jiffy_ns == NS_PER_SEC / hz, "jiffy_ns %llu, CONFIG_HZ %u (%s)",
		      (unsigned long long)kbd.jiffy_ns, hz, from);
	ck_assert_uint_ne(kbd.jiffy_ns, 0);
	ck_assert(!sda.kernel_credits);
	ck_assert_uint_eq(sda.jiffy_ns, 0);

	/* A reload keeps it. */
	feed_pipeline_reconfigure(second_config());
	ck_assert_uint_eq(info_of(0).jiffy_ns, NS_PER_SEC / hz);
	ck_assert_uint_eq(info_of(1).jiffy_ns, 0);
}
END_TEST

START_TEST(test_health_startup_holds_credit)
{
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	uint64_t symbols = 0;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	in = info_of(0);
	ck_assert_str_eq(in.health, "startup");
	ck_assert_str_eq(in.health_last, "none");
	ck_assert_uint_eq(in.health_failures, 0);
	stream_init(&s, cfg->policy[CLASS_INPUT].rule.cap_bits_per_event);

	/* A stream as random as timing gets: not one bit is credited while its first 1024
	 * symbols are tested. The first event gives no symbol (there is no delta yet). The
	 * estimator has no estimate over these symbols either: its first comes with the
	 * 1024th, the very symbol that ends start-up, so here both hold the credit at 0 and
	 * what this part checks is that the health tests stay in start-up throughout. */
	stream_run(&s, inst, 1);
	while (symbols < HEALTH_STARTUP_SYMBOLS - 1) {
		stream_run(&s, inst, 1);
		symbols++;
		in = info_of(0);
		ck_assert_msg(in.c.credited_bits == 0, "%g bits credited after %llu symbols" SEEDFMT,
			      in.c.credited_bits, (unsigned long long)symbols, SEEDARG);
		ck_assert_msg(strcmp(in.health, "startup") == 0, "health %s after %llu symbols"
			      SEEDFMT, in.health, (unsigned long long)symbols, SEEDARG);
	}
	ck_assert_uint_eq(s.symbols, HEALTH_STARTUP_SYMBOLS - 1);
	estimate_matches(&in.c, &s);
	ck_assert_uint_eq(drained.credit, 0);
	ck_assert(pool.credit == 0);

	/* The 1024th passing symbol ends start-up; from then on the stream earns credit, all
	 * of the estimate (trusted). */
	stream_run(&s, inst, 1);
	in = info_of(0);
	ck_assert_msg(strcmp(in.health, "ok") == 0, "health %s after %d symbols" SEEDFMT,
		      in.health, HEALTH_STARTUP_SYMBOLS, SEEDARG);
	counters_match(&in.c, &s);
	/* It is credited once the health tests have vouched for it: at the end of the APT
	 * window (symbol 1536), not before. */
	stream_run(&s, inst, 3 * HEALTH_APT_WINDOW - HEALTH_STARTUP_SYMBOLS - 1);
	in = info_of(0);
	ck_assert_msg(in.c.credited_bits == 0 && in.c.held_bits > 400,
		      "%g credited, %g held before the window ended" SEEDFMT, in.c.credited_bits,
		      in.c.held_bits, SEEDARG);
	stream_run(&s, inst, 1);
	in = info_of(0);
	ck_assert_msg(in.c.credited_bits > 400, "%g credited, %g held once the window passed"
		      SEEDFMT, in.c.credited_bits, in.c.held_bits, SEEDARG);
	stream_run(&s, inst, 500);
	in = info_of(0);
	ck_assert_str_eq(in.health, "ok");
	ck_assert_uint_eq(in.health_failures, 0);
	ck_assert_msg(in.c.credited_bits > 500, "credited only %g after start-up" SEEDFMT,
		      in.c.credited_bits, SEEDARG);
	counters_match(&in.c, &s);
	est_fini(&s.est);
}
END_TEST

/* est_health.c says "failed" and "failed-permanent"; feed_pipeline.h documents "permanent". */
static bool health_failed(const struct inst_info *in)
{
	return strncmp(in->health, "failed", 6) == 0 || strcmp(in->health, "permanent") == 0;
}

/* The health-failure tests run this many random events first: past the first full block
 * (4096 symbols), so the estimator's H is a full SP 800-90B estimate of random timing and
 * the stuck stretch that follows lies inside the next block. */
#define PRE_BLOCK 4200

struct stuck {
	int failed_at;            /* events fed before health first read failed* (n if never) */
	struct inst_info at_fail; /* what feed_pipeline_info said right then */
	double min_after;         /* the reference's least estimate after that event */
};

/* Events `step` ns apart, or alternately step and step + alt ns apart, given to inst and to
 * the reference. */
static void stuck_run(struct stream *s, struct instance *inst, int n, uint64_t step,
		      uint64_t alt, struct stuck *r)
{
	memset(r, 0, sizeof(*r));
	r->failed_at = n;
	r->min_after = INFINITY;
	for (int i = 0; i < n; i++) {
		double bits = stream_step(s, inst, step + (i % 2 ? alt : 0));

		if (r->failed_at < n) {
			r->min_after = fmin(r->min_after, bits);
		} else {
			struct inst_info in = info_of(0);

			if (health_failed(&in)) {
				r->failed_at = i;
				r->at_fail = in;
			}
		}
	}
}

START_TEST(test_health_stuck_stream_fails)
{
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	struct inst_counters pre;
	struct stuck st;
	double est_tail;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	stream_init(&s, cfg->policy[CLASS_INPUT].rule.cap_bits_per_event);
	stream_run(&s, inst, PRE_BLOCK);
	in = info_of(0);
	ck_assert_str_eq(in.health, "ok");
	ck_assert_msg(in.c.credited_bits > 0, "no credit before the stream got stuck" SEEDFMT,
		      SEEDARG);
	pre = in.c;
	ck_assert_msg(pre.held_bits > 0 && s.win + 64 < HEALTH_APT_WINDOW,
		      "the test needs credit waiting and room in the APT window" SEEDFMT, SEEDARG);

	/* Exactly 1 ms between events, every time: one symbol over and over. The run of
	 * repeats trips the repetition count test first (later the APT window fails too). */
	stuck_run(&s, inst, 1000, MS, 0, &st);
	ck_assert_msg(st.failed_at < 64, "a stuck stream still passes after %d events" SEEDFMT,
		      st.failed_at, SEEDARG);
	ck_assert_str_eq(st.at_fail.health_last, "repetition-count");
	ck_assert_uint_ge(st.at_fail.health_failures, 1);
	/* What the window earned before the failure was found, the start of the stuck run
	 * included, is never credited: it waited for the tests, and they failed. */
	ck_assert_msg(st.at_fail.c.credited_bits == pre.credited_bits &&
			      st.at_fail.c.held_bits == 0,
		      "credited %g more, %g still held, when the stream failed" SEEDFMT,
		      st.at_fail.c.credited_bits - pre.credited_bits, st.at_fail.c.held_bits,
		      SEEDARG);
	in = info_of(0);
	ck_assert_msg(health_failed(&in), "health %s" SEEDFMT, in.health, SEEDARG);
	ck_assert_msg(in.c.credited_bits == st.at_fail.c.credited_bits,
		      "a stuck stream was credited %g bits after failing" SEEDFMT,
		      in.c.credited_bits - st.at_fail.c.credited_bits, SEEDARG);
	estimate_matches(&in.c, &s);

	/* From then on, nothing: not even when the timing turns random again (a source that
	 * stuck this long failed at the permanent cutoff, and stays off for an hour of its
	 * events' time, far more than this stretch; test_health_permanent_requalifies). The
	 * random stretch runs past two more block estimates: the block holding the stuck run
	 * (low H) and one of random timing only, after which the estimator values the stream
	 * as it did before. */
	stream_run(&s, inst, 9000 - 1000);
	est_tail = s.est_sum;
	stream_run(&s, inst, 1000);
	est_tail = s.est_sum - est_tail;
	in = info_of(0);
	ck_assert_msg(health_failed(&in), "health %s after recovering timing" SEEDFMT, in.health,
		      SEEDARG);
	estimate_matches(&in.c, &s);
	ck_assert_msg(est_tail > 3.0 * 1000,
		      "the estimator never recovered: %g bits over the last 1000 events" SEEDFMT,
		      est_tail, SEEDARG);
	ck_assert_msg(in.c.estimated_bits - st.at_fail.c.estimated_bits > 9000,
		      "the estimator saw too little to prove anything" SEEDFMT, SEEDARG);
	ck_assert_msg(in.c.credited_bits == st.at_fail.c.credited_bits,
		      "credited %g more bits after the failure" SEEDFMT,
		      in.c.credited_bits - st.at_fail.c.credited_bits, SEEDARG);
	ck_assert_uint_eq(in.c.events, st.at_fail.c.events + (1000 - 1 - st.failed_at) + 9000);
	est_fini(&s.est);
}
END_TEST

/* A permanent failure outlives the instance: the same device unplugged and plugged in again
 * (detach, attach under the same name) starts failed, and earns nothing on good timing. */
START_TEST(test_health_permanent_survives_reattach)
{
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	struct stuck st;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	stream_init(&s, cfg->policy[CLASS_INPUT].rule.cap_bits_per_event);
	stream_run(&s, inst, PRE_BLOCK);
	stuck_run(&s, inst, 1000, MS, 0, &st);
	in = info_of(0);
	ck_assert_str_eq(in.health, "failed-permanent");
	feed_pipeline_detach(inst);
	est_fini(&s.est);

	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	in = info_of(0);
	ck_assert_str_eq(in.health, "failed-permanent");
	stream_init(&s, cfg->policy[CLASS_INPUT].rule.cap_bits_per_event);
	stream_run(&s, inst, 6000);
	in = info_of(0);
	ck_assert_msg(in.c.estimated_bits > 1000, "the new stream was not valued" SEEDFMT, SEEDARG);
	ck_assert_msg(in.c.credited_bits == 0, "a re-attached failed device earned %g bits" SEEDFMT,
		      in.c.credited_bits, SEEDARG);

	/* Another name is not touched. */
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd1", "keyboard", 0);
	in = info_of(1);
	ck_assert_str_eq(in.health, "startup");
	est_fini(&s.est);
}
END_TEST

START_TEST(test_health_catches_what_estimator_credits)
{
	/* Gaps of 1000 and 1256 us alternate: the symbol, the gap modulo 256 quanta, never
	 * changes, yet the estimator gives every event the full 4-bit cap. Its kernel-rule
	 * bound sees differences of 256 quanta (8 bits), and its SP 800-90B bound is the H of
	 * the last full block of symbols, here random timing: a block's H only changes when
	 * the block is complete, up to 4096 symbols later (the start of the stuck run lies
	 * inside a block, well before its end). The health tests look at every symbol and must
	 * catch what the estimator does not yet see. */
	const double cap = cfg->policy[CLASS_INPUT].rule.cap_bits_per_event;
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	struct stuck st;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	stream_init(&s, cap);
	stream_run(&s, inst, PRE_BLOCK);
	ck_assert_str_eq(info_of(0).health, "ok");
	ck_assert(info_of(0).c.credited_bits > 0);

	stuck_run(&s, inst, 1000, 1000 * QUANTUM, 256 * QUANTUM, &st);
	ck_assert_msg(st.failed_at < 20, "stuck symbols pass for %d events" SEEDFMT, st.failed_at,
		      SEEDARG);
	ck_assert_str_eq(st.at_fail.health_last, "repetition-count");
	in = info_of(0);
	estimate_matches(&in.c, &s);
	ck_assert_msg(st.min_after == cap,
		      "the estimator should credit this stream fully: %g bits at least" SEEDFMT,
		      st.min_after, SEEDARG);
	ck_assert_msg(in.c.estimated_bits - st.at_fail.c.estimated_bits >= cap * 980 - TOL,
		      "estimated only %g bits of the stuck stream" SEEDFMT,
		      in.c.estimated_bits - st.at_fail.c.estimated_bits, SEEDARG);
	ck_assert_msg(in.c.credited_bits == st.at_fail.c.credited_bits,
		      "credited %g bits of a stuck stream" SEEDFMT,
		      in.c.credited_bits - st.at_fail.c.credited_bits, SEEDARG);
	ck_assert(health_failed(&in));
	est_fini(&s.est);
}
END_TEST

/* A disk's interrupt handles dozens of completions nanoseconds apart: one timing event.
 * The rest are mixed and counted as merged, never estimated, health-tested or credited,
 * so a run longer than the permanent RCT cutoff does not fail the tests. */
START_TEST(test_burst_is_one_timing_event)
{
	const double cap = cfg->policy[CLASS_BLOCK].rule.cap_bits_per_event;
	const int bursts = 3000, burst = 40;
	struct stream s;
	struct instance *inst;
	struct inst_info in;

	ck_assert_uint_lt(est_health_rct_cutoff(cap, HEALTH_ALPHA_PERMANENT), burst);
	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_BLOCK, "vda", "disk", 0);
	stream_init(&s, cap);
	for (int b = 0; b < bursts; b++) {
		stream_step(&s, inst, MS / 2 + tu_rng_next() % (2 * MS));
		for (int i = 0; i < burst; i++)
			stream_step(&s, inst, tu_rng_next() % QUANTUM); /* 0 included */
	}
	in = info_of(0);
	ck_assert_msg(strcmp(in.health, "ok") == 0 && in.health_failures == 0,
		      "health %s, %llu failures" SEEDFMT, in.health,
		      (unsigned long long)in.health_failures, SEEDARG);
	ck_assert_uint_eq(in.c.events, (uint64_t)bursts * (burst + 1));
	ck_assert_uint_eq(in.c.merged, (uint64_t)bursts * burst);
	ck_assert_uint_eq(in.c.mixed_bytes, in.c.events * sizeof(uint64_t));
	ck_assert_uint_eq(s.symbols, (uint64_t)bursts - 1);
	/* Only the first event of each burst is valued, at most the cap. */
	ck_assert_msg(in.c.estimated_bits <= bursts * cap && in.c.credited_bits > 0,
		      "estimated %g, credited %g" SEEDFMT, in.c.estimated_bits,
		      in.c.credited_bits, SEEDARG);
	counters_match(&in.c, &s);
	est_fini(&s.est);
}
END_TEST

/* A permanent failure holds for an hour of the events' time, then the instance is
 * re-qualified with a whole start-up; good input brings credit back, bad input fails it
 * again, and then it waits twice as long. */
START_TEST(test_health_permanent_requalifies)
{
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	struct stuck st;
	double credited;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	stream_init(&s, cfg->policy[CLASS_INPUT].rule.cap_bits_per_event);
	stream_run(&s, inst, PRE_BLOCK);
	stuck_run(&s, inst, 1000, MS, 0, &st);
	in = info_of(0);
	ck_assert_str_eq(in.health, "failed-permanent");
	ck_assert_msg(in.health_retry_in > 3590 && in.health_retry_in <= 3600,
		      "retry in %g s" SEEDFMT, in.health_retry_in, SEEDARG);
	ck_assert_uint_eq(in.health_requalified, 0);
	credited = in.c.credited_bits;

	/* Good timing (events 50..150 ms apart) all through the hour: off until the hour of
	 * the events' own time is over, then a start-up. */
	{
		uint64_t failed_t = s.t, n = 0;

		do {
			stream_step(&s, inst, 50 * MS + tu_rng_next() % (100 * MS));
			n++;
			in = info_of(0);
			if (strcmp(in.health, "failed-permanent") == 0)
				ck_assert(in.c.credited_bits == credited);
		} while (strcmp(in.health, "failed-permanent") == 0 && n < 100000);
		ck_assert_msg(s.t - failed_t >= 3590 * SEC && s.t - failed_t < 3601 * SEC,
			      "re-qualified after %g s" SEEDFMT, (double)(s.t - failed_t) / SEC,
			      SEEDARG);
	}
	ck_assert_str_eq(in.health, "startup");
	ck_assert_uint_eq(in.health_requalified, 1);
	ck_assert(isnan(in.health_retry_in));
	stream_run(&s, inst, HEALTH_STARTUP_SYMBOLS - 2);
	in = info_of(0);
	ck_assert_str_eq(in.health, "startup");
	ck_assert(in.c.credited_bits == credited && in.c.held_bits == 0);
	stream_run(&s, inst, 3000);
	in = info_of(0);
	ck_assert_str_eq(in.health, "ok");
	ck_assert_msg(in.c.credited_bits > credited + 100, "credited only %g more" SEEDFMT,
		      in.c.credited_bits - credited, SEEDARG);

	/* Stuck again within the hour: failed, and the wait doubles. */
	stuck_run(&s, inst, 100, MS, 0, &st);
	in = info_of(0);
	ck_assert_str_eq(in.health, "failed-permanent");
	ck_assert_msg(in.health_retry_in > 7190 && in.health_retry_in <= 7200,
		      "retry in %g s" SEEDFMT, in.health_retry_in, SEEDARG);
	credited = in.c.credited_bits;
	/* Stuck for good, a minute apart, past the two hours: re-qualified, it fails again at
	 * once and earns nothing. */
	for (int i = 0; i < 150; i++)
		stream_step(&s, inst, 60 * SEC);
	in = info_of(0);
	ck_assert_str_eq(in.health, "failed-permanent");
	ck_assert_uint_eq(in.health_requalified, 2);
	ck_assert(in.c.credited_bits == credited && in.c.held_bits == 0);
	est_fini(&s.est);
}
END_TEST

/* ---- why credit does not grow: the reason beside the credit decision ---- */

static struct inst_info info_named(const char *name)
{
	struct inst_info in;

	for (size_t i = 0; feed_pipeline_info(i, &in); i++)
		if (strcmp(in.name, name) == 0)
			return in;
	ck_abort_msg("no instance %s", name);
	return in;
}

/* n events 0.5..2.5 ms apart from *t on. */
static void random_events(struct instance *inst, uint64_t *t, int n)
{
	for (int i = 0; i < n; i++)
		feed_pipeline_sample(inst, *t += MS / 2 + tu_rng_next() % (2 * MS));
}

static void reason_is(const char *name, enum pipeline_reason want, const char *says)
{
	struct inst_info in = info_named(name);

	ck_assert_msg(in.reason == want, "%s: reason %s (%s), want %s" SEEDFMT, name,
		      feed_pipeline_reason_name(in.reason), in.reason_text, feed_pipeline_reason_name(want),
		      SEEDARG);
	ck_assert_msg(strstr(in.reason_text, says), "%s: \"%s\" does not say \"%s\"" SEEDFMT, name,
		      in.reason_text, says, SEEDARG);
}

START_TEST(test_no_estimate_is_not_zero)
{
	struct instance *inst;
	struct config *c2;
	uint64_t t = 10 * SEC;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_BLOCK, "sda", NULL, 0);
	ck_assert(isnan(info_of(0).last_estimate));
	random_events(inst, &t, 500);
	ck_assert_msg(isnan(info_of(0).last_estimate), "an estimate %g before the first",
		      info_of(0).last_estimate);
	random_events(inst, &t, WARM);
	ck_assert_msg(info_of(0).last_estimate > 0, "no estimate after %d events", WARM + 500);
	/* A new schedule restarts the estimator alone: no estimate again, the health tests
	 * pass, so that is the reason. */
	c2 = second_config();
	c2->block.estimate_interval = 30;
	feed_pipeline_reconfigure(c2);
	ck_assert(isnan(info_of(0).last_estimate));
	random_events(inst, &t, 100);
	ck_assert(isnan(info_of(0).last_estimate));
	/* The new estimator's first event has no delta: 99 symbols. */
	reason_is("sda", PIPELINE_NO_ESTIMATE, "no estimate yet: 99 of 1024 symbols");
}
END_TEST

/* n events exactly 1 ms apart: one symbol over and over. */
static void stuck_events(struct instance *inst, uint64_t *t, int n)
{
	for (int i = 0; i < n; i++) {
		*t += MS;
		feed_pipeline_sample(inst, *t);
	}
}

/* While the source samples, its events are mixed and counted, never estimated, tested or
 * credited, whatever their timing; afterwards, a start-up as after an intermittent failure
 * (a whole APT window and the start-up length), then credit again. */
START_TEST(test_sampled_credits_nothing)
{
	struct instance *inst;
	struct inst_info a, b;
	uint64_t t = 10 * SEC;
	int n;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_NETWORK, "eth0", "veth", 0);
	random_events(inst, &t, 4000);
	a = info_of(0);
	ck_assert_msg(a.c.credited_bits > 0 && !strcmp(a.health, "ok"), "no credit to start with"
		      SEEDFMT, SEEDARG);
	ck_assert_ptr_null(a.sampling);
	feed_pipeline_set_sampling(inst, "off", 1.0, 500);
	a = info_of(0);
	ck_assert_str_eq(a.sampling, "off");
	ck_assert(a.sample_ratio == 1 && a.arrival_rate == 500);
	ck_assert_int_ne(a.reason, PIPELINE_SAMPLED);

	feed_pipeline_set_sampling(inst, "on", 0.01, 1e5);
	random_events(inst, &t, 3000);
	stuck_events(inst, &t, 2000); /* would fail the tests for good, were they running */
	random_events(inst, &t, 3000);
	b = info_of(0);
	ck_assert_str_eq(b.sampling, "on");
	ck_assert(b.sample_ratio == 0.01 && b.arrival_rate == 1e5);
	ck_assert_int_eq(b.reason, PIPELINE_SAMPLED);
	ck_assert_msg(strstr(b.reason_text, "1 in 100 of about 100000 events a second"), "%s",
		      b.reason_text);
	ck_assert_uint_eq(b.c.events, a.c.events + 8000);
	ck_assert_uint_eq(b.c.mixed_bytes, a.c.mixed_bytes + 8000 * 8);
	ck_assert(b.c.credited_bits == a.c.credited_bits);
	ck_assert(b.c.estimated_bits == a.c.estimated_bits);
	ck_assert(b.c.held_bits == 0);
	ck_assert_str_eq(b.health, "ok");
	ck_assert_uint_eq(b.health_failures, a.health_failures);

	/* Back under the cap: nothing until a whole APT window and the start-up length have
	 * passed (and the new estimator has its first estimate), then credit. */
	feed_pipeline_set_sampling(inst, "off", 1.0, 800);
	a = info_of(0);
	ck_assert_str_eq(a.health, "startup");
	ck_assert_int_ne(a.reason, PIPELINE_SAMPLED);
	random_events(inst, &t, HEALTH_APT_WINDOW + HEALTH_STARTUP_SYMBOLS - 2);
	b = info_of(0);
	ck_assert_str_eq(b.health, "startup");
	ck_assert(b.c.credited_bits == a.c.credited_bits && b.c.held_bits == 0);
	for (n = 0; n < 4000 && info_of(0).c.credited_bits == a.c.credited_bits; n++)
		random_events(inst, &t, 1);
	b = info_of(0);
	ck_assert_msg(b.c.credited_bits > a.c.credited_bits, "no credit after sampling" SEEDFMT,
		      SEEDARG);
	ck_assert_str_eq(b.health, "ok");
	ck_assert_uint_eq(b.health_failures, a.health_failures);
}
END_TEST

/* A flood is found a window late at worst: a permanent failure since the source's word
 * before last is taken back when sampling starts (still counted); one before is not. */
START_TEST(test_flood_start_forgiven)
{
	struct instance *inst;
	struct inst_info in;
	uint64_t t = 10 * SEC;

	tu_rng_seed(SEED);
	inst = feed_pipeline_attach(CLASS_NETWORK, "eth0", "veth", 0);
	random_events(inst, &t, 3000);
	feed_pipeline_set_sampling(inst, "off", 1.0, 500);
	feed_pipeline_set_sampling(inst, "off", 1.0, 500);
	stuck_events(inst, &t, 400); /* the flood's first packets, back to back */
	in = info_of(0);
	ck_assert_str_eq(in.health, "failed-permanent");
	feed_pipeline_set_sampling(inst, "on", 0.01, 1e5);
	in = info_of(0);
	ck_assert_str_eq(in.health, "failed");
	ck_assert(isnan(in.health_retry_in));
	ck_assert_uint_ge(in.health_failures, 2);
	feed_pipeline_set_sampling(inst, "off", 1.0, 500);
	random_events(inst, &t, 6000);
	in = info_of(0);
	ck_assert_str_eq(in.health, "ok");

	/* Failed for good two words before sampling starts: that stays. */
	inst = feed_pipeline_attach(CLASS_NETWORK, "eth1", "veth", 0);
	random_events(inst, &t, 3000);
	stuck_events(inst, &t, 400);
	feed_pipeline_set_sampling(inst, "off", 1.0, 500);
	random_events(inst, &t, 100);
	feed_pipeline_set_sampling(inst, "off", 1.0, 500);
	feed_pipeline_set_sampling(inst, "on", 0.01, 1e5);
	in = info_of(1);
	ck_assert_str_eq(in.name, "eth1");
	ck_assert_str_eq(in.health, "failed-permanent");
	feed_pipeline_set_sampling(inst, "off", 1.0, 500);
	ck_assert_str_eq(info_of(1).health, "failed-permanent");
}
END_TEST

START_TEST(test_reasons)
{
	static const uint8_t junk[POOL_BYTES];
	struct instance *t_in, *m_in, *c_in, *z_in;
	struct inst_info in;
	uint64_t t = 10 * SEC;
	bool held_seen = false;

	tu_rng_seed(SEED);
	cfg->policy[CLASS_BLOCK].rule.cap_bits_per_second = 1;
	cfg->policy[CLASS_NETWORK].rule.cap_bits_per_event = 0;
	t_in = feed_pipeline_attach(CLASS_INPUT, "kbd0", "keyboard", 0);
	c_in = feed_pipeline_attach(CLASS_BLOCK, "sda", NULL, 0);
	z_in = feed_pipeline_attach(CLASS_NETWORK, "eth0", NULL, 0);
	cfg->policy[CLASS_INPUT].rule.mode = MODE_MIX_ONLY;
	m_in = feed_pipeline_attach(CLASS_INPUT, "mouse0", "mouse", 0);
	cfg->policy[CLASS_INPUT].rule.mode = MODE_TRUSTED;
	reason_is("kbd0", PIPELINE_IDLE, "no event");

	random_events(m_in, &t, 10);
	reason_is("mouse0", PIPELINE_MIX_ONLY, "mix-only");
	ck_assert(info_named("mouse0").weight == 0);

	/* Start-up, then credit held until the first APT window passes, then credit. */
	random_events(t_in, &t, 100);
	reason_is("kbd0", PIPELINE_STARTUP, "start-up: 99 of 1024 symbols");
	for (int i = 0; i < 2000; i++) {
		random_events(t_in, &t, 1);
		in = info_named("kbd0");
		if (in.reason == PIPELINE_HELD) {
			held_seen = true;
			ck_assert(in.c.credited_bits == 0 && in.c.held_bits > 0);
			ck_assert(strstr(in.reason_text, "wait for the APT window"));
		} else if (in.reason != PIPELINE_STARTUP) {
			ck_assert_msg(in.reason == PIPELINE_CREDITS, "reason %s after %d events",
				      feed_pipeline_reason_name(in.reason), 101 + i);
			ck_assert(held_seen && in.c.credited_bits > 0 && in.reason_text[0] == 0);
			break;
		}
	}
	ck_assert(held_seen);
	ck_assert(info_named("kbd0").weight == 1);

	/* The kernel no longer counts: said of an instance that credits, decided or not. */
	feed_pipeline_kernel_counts(false);
	reason_is("kbd0", PIPELINE_KERNEL, "no longer counts");
	random_events(t_in, &t, 1);
	reason_is("kbd0", PIPELINE_KERNEL, "no longer counts");
	feed_pipeline_kernel_counts(true);
	reason_is("kbd0", PIPELINE_CREDITS, "");

	/* The source's own weight, with the share behind it; the weight in force is shown. */
	feed_pipeline_set_weight(t_in, 0, 0.99);
	random_events(t_in, &t, 1);
	reason_is("kbd0", PIPELINE_FLOW, "one source 99% of packets: weight 0.00");
	ck_assert(info_named("kbd0").weight == 0);
	feed_pipeline_set_weight(t_in, 0.5, 0.9);
	random_events(t_in, &t, 1);
	reason_is("kbd0", PIPELINE_FLOW, "90%");
	ck_assert(info_named("kbd0").weight == 0.5);
	feed_pipeline_set_weight(t_in, 1, 0);

	/* Folded into a full pool between feeds. */
	keep_full = true;
	feed_pool_add(&pool, junk, sizeof(junk), 0);
	random_events(t_in, &t, 1);
	reason_is("kbd0", PIPELINE_POOL_FULL, "pool full between feeds");
	keep_full = false;
	drain(NULL);

	/* The per-second cap: a second of events asks for far more than 1 bit. */
	random_events(c_in, &t, WARM + 1000);
	reason_is("sda", PIPELINE_RATE_CAP, "per-second cap of 1 bits/s reached");

	/* A cap of 0 bits per event: an estimate, and it is zero. */
	random_events(z_in, &t, WARM);
	ck_assert(info_named("eth0").last_estimate == 0);
	reason_is("eth0", PIPELINE_ESTIMATE_0, "counts as zero");

	/* A stuck stream fails the health tests: which test, and until when. */
	for (int i = 0; i < 100; i++)
		feed_pipeline_sample(t_in, t += MS);
	reason_is("kbd0", PIPELINE_HEALTH, "repetition-count");
	ck_assert(strstr(info_named("kbd0").reason_text, "until"));

	/* Disabled by a reload. */
	{
		struct config *c2 = second_config();

		c2->policy[CLASS_BLOCK].rule.mode = MODE_DISABLED;
		feed_pipeline_reconfigure(c2);
		random_events(c_in, &t, 1);
		reason_is("sda", PIPELINE_DISABLED, "policy: disabled");
		ck_assert(info_named("sda").weight == 0);
	}
}
END_TEST

/* ---- the boot allowance (feed_pipeline_boot_allowance) ---- */

#define US 1000ULL
#define BOOT_CAP 10.0 /* bits a second: far below what a window of events earns */

/* n events lo..lo+span ns apart. */
static void stream_gaps(struct stream *s, struct instance *inst, int n, uint64_t lo,
			uint64_t span)
{
	for (int i = 0; i < n; i++)
		stream_step(s, inst, lo + tu_rng_next() % span);
}

/* A disk at the block class's default per-event cap (1 bit) and a per-second cap that would
 * hold it to BOOT_CAP; its reference stream without a per-second cap. */
static struct instance *boot_disk(const char *name, struct stream *s)
{
	struct instance *inst;

	cfg->policy[CLASS_BLOCK].rule.cap_bits_per_event = 1;
	cfg->policy[CLASS_BLOCK].rule.cap_bits_per_second = BOOT_CAP;
	inst = feed_pipeline_attach(CLASS_BLOCK, name, NULL, 0);
	stream_init(s, 1);
	return inst;
}

static double seconds_since(uint64_t w0)
{
	return (double)(util_mono_coarse_ns() - w0) / 1e9;
}

/* The seed, then the allowance (what the kernel still needs), then one disk. */
static struct instance *boot_start(double need, struct stream *s)
{
	tu_rng_seed(SEED);
	feed_pipeline_boot_allowance(need);
	return boot_disk("vda", s);
}

/* n completions 100..400 us apart, as fast as they can be handed over: the wall time. */
static double boot_stream(struct stream *s, struct instance *inst, int n)
{
	uint64_t w0 = util_mono_coarse_ns();

	stream_gaps(s, inst, n, 100 * US, 300 * US);
	return seconds_since(w0);
}

START_TEST(test_boot_allowance_past_the_cap)
{
	/* 3000 completions 100..400 us apart (0.75 s of event time, less than the daemon's
	 * clock takes to run them): each window the health tests vouch for credits what its
	 * events earned, each capped per event, exactly as the reference without a per-second
	 * cap says -- far more than the cap of 10 bits a second would have let through, and
	 * never more than the events' capped estimates add up to. */
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	double wall;

	inst = boot_start(1e6, &s); /* more than all of it: the allowance does not limit */
	wall = boot_stream(&s, inst, 3000);
	in = info_of(0);
	ck_assert_uint_eq(in.health_failures, 0);
	counters_match(&in.c, &s);
	ck_assert_msg(in.c.credited_bits > BOOT_CAP * (wall + 1) + 100,
		      "credited %g in %g s: the per-second cap still set the pace" SEEDFMT,
		      in.c.credited_bits, wall, SEEDARG);
	ck_assert_msg(earned(&in.c) <= in.c.estimated_bits + TOL,
		      "earned %g of %g bits estimated (capped)" SEEDFMT, earned(&in.c),
		      in.c.estimated_bits, SEEDARG);
	/* Nothing before the health tests' start-up and the first window after it. */
	ck_assert_msg(in.c.credited_bits <= s.est_sum, "more than estimated" SEEDFMT, SEEDARG);
	ck_assert_int_ne(in.reason, PIPELINE_RATE_CAP);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_boot_allowance_off)
{
	/* feed.boot_allowance = false: the per-second cap limits, as before. */
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	double wall;

	cfg->feed.boot_allowance = false;
	inst = boot_start(1e6, &s);
	wall = boot_stream(&s, inst, 3000);
	in = info_of(0);
	ck_assert_msg(in.c.credited_bits <= BOOT_CAP * wall + BOOT_CAP + TOL,
		      "credited %g in %g s at %g/s" SEEDFMT, in.c.credited_bits, wall, BOOT_CAP,
		      SEEDARG);
	ck_assert_msg(in.c.credited_bits >= BOOT_CAP - TOL, "credited only %g" SEEDFMT,
		      in.c.credited_bits, SEEDARG);
	ck_assert_int_eq(in.reason, PIPELINE_RATE_CAP);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_boot_allowance_what_the_kernel_needs)
{
	/* Two disks share what the kernel still needs (200 bits): together they credit that
	 * much under the allowance, then no more than their per-second caps allow. */
	const double need = 200;
	struct stream s1, s2;
	struct instance *a, *b;
	struct inst_counters t;
	uint64_t w0;
	double wall;

	tu_rng_seed(SEED);
	feed_pipeline_boot_allowance(need);
	a = boot_disk("vda", &s1);
	b = boot_disk("vdb", &s2);
	w0 = util_mono_coarse_ns();
	for (int i = 0; i < 10; i++) {
		stream_gaps(&s1, a, 300, 100 * US, 300 * US);
		stream_gaps(&s2, b, 300, 100 * US, 300 * US);
	}
	wall = seconds_since(w0);
	feed_pipeline_totals(&t);
	ck_assert_msg(s1.cred_sum + s2.cred_sum > 2 * need,
		      "the disks earned too little to prove anything" SEEDFMT, SEEDARG);
	ck_assert_msg(t.credited_bits >= need - TOL, "credited %g of the %g allowed" SEEDFMT,
		      t.credited_bits, need, SEEDARG);
	ck_assert_msg(t.credited_bits <= need + 2 * (BOOT_CAP * wall + BOOT_CAP) + TOL,
		      "credited %g: the allowance was %g, the caps %g/s for %g s" SEEDFMT,
		      t.credited_bits, need, BOOT_CAP, wall, SEEDARG);
	est_fini(&s1.est);
	est_fini(&s2.est);
}
END_TEST

START_TEST(test_boot_allowance_ends_when_ready)
{
	/* Once the kernel no longer counts credit (its CRNG is ready) the per-second cap is
	 * back: what is credited from then on is what it lets through. */
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	double before, wall;

	inst = boot_start(1e6, &s);
	boot_stream(&s, inst, 1600); /* start-up and the first window */
	before = info_of(0).c.credited_bits;
	ck_assert_msg(before > 3 * BOOT_CAP, "the allowance gave only %g" SEEDFMT, before, SEEDARG);
	feed_pipeline_kernel_counts(false);
	wall = boot_stream(&s, inst, 3000);
	in = info_of(0);
	ck_assert_msg(in.c.credited_bits - before <= BOOT_CAP * wall + BOOT_CAP + TOL,
		      "credited %g more in %g s at %g/s after the CRNG was ready" SEEDFMT,
		      in.c.credited_bits - before, wall, BOOT_CAP, SEEDARG);
	/* The kernel counting again (it never does; a test can say so) brings back nothing. */
	feed_pipeline_kernel_counts(true);
	before = info_of(0).c.credited_bits;
	wall = boot_stream(&s, inst, 1024);
	ck_assert_msg(info_of(0).c.credited_bits - before <= BOOT_CAP * wall + BOOT_CAP + TOL,
		      "the allowance came back" SEEDFMT, SEEDARG);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_boot_allowance_held_to_real_time)
{
	/* 12.5 s of completions 2..3 ms apart handed over in a blink (a recording replayed):
	 * the allowance, like the cap, does not credit events faster than real time. */
	struct stream s;
	struct instance *inst;
	struct inst_info in;
	uint64_t w0, t0;
	double wall, elapsed;

	inst = boot_start(1e6, &s);
	t0 = s.t;
	w0 = util_mono_coarse_ns();
	stream_gaps(&s, inst, 5000, 2 * MS, MS);
	wall = seconds_since(w0);
	elapsed = (double)(s.t - t0) / 1e9;
	in = info_of(0);
	ck_assert_msg(wall < elapsed / 4, "the run took %g s of %g s of event time: too slow to "
		      "tell the clocks apart" SEEDFMT, wall, elapsed, SEEDARG);
	ck_assert_msg(s.cred_sum > 10 * BOOT_CAP * elapsed, "demand too low" SEEDFMT, SEEDARG);
	ck_assert_msg(in.c.credited_bits <= BOOT_CAP * wall + BOOT_CAP + TOL,
		      "credited %g in %g s (%g s of events) at %g/s" SEEDFMT, in.c.credited_bits,
		      wall, elapsed, BOOT_CAP, SEEDARG);
	est_fini(&s.est);
}
END_TEST

START_TEST(test_boot_allowance_bad_streams_earn_nothing)
{
	/* Periodic, stuck and replayed timing earns nothing under the allowance either. */
	uint64_t loop[512], t;
	struct instance *per, *stuck, *rep;
	struct inst_counters total;

	tu_rng_seed(SEED);
	feed_pipeline_boot_allowance(1e6);
	cfg->policy[CLASS_BLOCK].rule.cap_bits_per_event = 1;
	per = feed_pipeline_attach(CLASS_BLOCK, "periodic", NULL, 0);
	stuck = feed_pipeline_attach(CLASS_BLOCK, "stuck", NULL, 0);
	rep = feed_pipeline_attach(CLASS_BLOCK, "replay", NULL, 0);
	for (size_t i = 0; i < ARRAY_SIZE(loop); i++)
		loop[i] = 100 * US + tu_rng_next() % (300 * US);
	t = 10 * SEC;
	for (int i = 0; i < 3000; i++) {
		feed_pipeline_sample(per, t + (uint64_t)i * 250 * US);
		feed_pipeline_sample(stuck, t);
	}
	for (int i = 0; i < 3000; i++) {
		t += loop[i % 512];
		feed_pipeline_sample(rep, t);
	}
	for (size_t i = 0; i < 3; i++) {
		struct inst_info in = info_of(i);

		ck_assert_uint_eq(in.c.events, 3000);
		ck_assert_msg(in.c.credited_bits == 0 && in.c.held_bits == 0,
			      "%s: credited %g, %g held" SEEDFMT, in.name, in.c.credited_bits,
			      in.c.held_bits, SEEDARG);
	}
	feed_pipeline_totals(&total);
	ck_assert(total.credited_bits == 0);
	/* The replay passes the health tests: its estimate is what stops it. */
	ck_assert_str_eq(info_of(2).health, "ok");
	ck_assert_int_eq(info_of(2).reason, PIPELINE_ESTIMATE_0);
}
END_TEST

/* ---- recordings of real sources (tests/data/health/README) ---- */

/* A recording: the gaps between one instance's events, in ns, 32-bit little-endian. */
static uint32_t *load_gaps(const char *name, size_t *n)
{
	char path[512];
	size_t len;
	unsigned char *raw;
	uint32_t *g;

	snprintf(path, sizeof(path), "%s/tests/data/health/%s", SRCDIR, name);
	raw = (unsigned char *)tu_read_file(path, &len);
	ck_assert_msg(len >= 4 && len % 4 == 0, "%s: %zu bytes, not 32-bit gaps", path, len);
	*n = len / 4;
	g = malloc(*n * sizeof(*g));
	ck_assert_ptr_nonnull(g);
	for (size_t i = 0; i < *n; i++)
		g[i] = raw[4 * i] | (uint32_t)raw[4 * i + 1] << 8 | (uint32_t)raw[4 * i + 2] << 16 |
		       (uint32_t)raw[4 * i + 3] << 24;
	free(raw);
	return g;
}

/* What a recording replayed through an instance of class cls makes: the instance's own
 * counters and health, the symbols its estimator saw (from a reference estimator with the
 * instance's params) and their SP 800-90B assessment; and, beside it, the health tests as
 * they were before batches were merged (symbols at the quantum alone, claiming the cap). */
#define PREFIXES 32 /* 2^10 .. symbols */
struct replay {
	struct inst_info in;
	uint64_t symbols;
	double h_offline; /* ea_non_iid's minimum over those symbols, bits per symbol */
	struct health before;
	/* At the first 2^(10 + i) symbols: the bits credited, ea_non_iid's minimum over them. */
	size_t prefixes;
	double prefix_credited[PREFIXES], prefix_h[PREFIXES];
	/* Of the long window, by the same estimator with every bit it gives credited. */
	uint64_t ref_long_estimates;
};

static void replay(const char *file, enum src_class cls, struct instance *inst,
		   struct replay *r)
{
	const double cap = cfg->policy[cls].rule.cap_bits_per_event;
	struct est_params p = {.quantum_ns = QUANTUM, .cap_bits = cap,
			       .batch_ns = source_class_all[cls]->batch_ns};
	struct est_params p0 = {.quantum_ns = QUANTUM, .cap_bits = cap};
	struct health_cfg hc;
	struct sp90b_noniid_result a;
	struct est ref, ref0;
	struct est_report rep;
	uint8_t *sym;
	uint32_t *gaps;
	uint64_t t = 10 * SEC;
	size_t n;

	gaps = load_gaps(file, &n);
	sym = malloc(n + 1);
	ck_assert_ptr_nonnull(sym);
	est_init(&ref, est_find("sp800-90b"), &p);
	est_init(&ref0, est_find("sp800-90b"), &p0);
	est_health_cfg_default(&hc, cap);
	est_health_init(&r->before, &hc);
	r->symbols = 0;
	r->prefixes = 0;
	for (size_t i = 0; i <= n; i++) {
		struct est_out o;

		t += i ? gaps[i - 1] : 0;
		feed_pipeline_sample(inst, t);
		est_add(&ref, t, &o);
		if (o.have_symbol)
			sym[r->symbols++] = o.symbol;
		if (o.have_symbol && r->symbols == (uint64_t)1024 << r->prefixes &&
		    r->prefixes < PREFIXES)
			r->prefix_credited[r->prefixes++] =
				info_of(feed_pipeline_count() - 1).c.credited_bits;
		est_add(&ref0, t, &o);
		if (o.have_symbol) {
			health_time(&r->before, t);
			est_health_feed(&r->before, o.symbol);
		}
	}
	r->in = info_of(feed_pipeline_count() - 1);
	ck_assert_int_eq(sp90b_noniid(NULL, sym, r->symbols, 8, SP90B_ALL_TESTS, SP90B_ALL_TESTS,
				      &a), 0);
	r->h_offline = a.h_assessed;
	ref.ops->report(ref.state, &rep);
	r->ref_long_estimates = rep.long_runs;
	for (size_t i = 0; i < r->prefixes; i++) {
		ck_assert_int_eq(sp90b_noniid(NULL, sym, (size_t)1024 << i, 8, SP90B_ALL_TESTS,
					      SP90B_ALL_TESTS, &a), 0);
		r->prefix_h[i] = a.h_assessed;
	}
	est_fini(&ref);
	est_fini(&ref0);
	free(sym);
	free(gaps);
}

/* Credited bits per timing event (the per-second cap lifted, known_rules()) no more than
 * ea_non_iid's assessment of those symbols: over the whole recording, and over its first
 * 1024, 2048, 4096 ... symbols, each when it ended. */
static void credit_within_assessment(const struct replay *r)
{
	ck_assert_msg(r->in.c.credited_bits <= r->h_offline * (double)r->symbols,
		      "credited %g bits for %llu symbols (%g each), assessed at %g bits each",
		      r->in.c.credited_bits, (unsigned long long)r->symbols,
		      r->in.c.credited_bits / (double)r->symbols, r->h_offline);
	for (size_t i = 0; i < r->prefixes; i++) {
		const double n = (double)((size_t)1024 << i);

		ck_assert_msg(r->prefix_credited[i] <= r->prefix_h[i] * n,
			      "at %g symbols: credited %g bits (%g each), assessed at %g bits each",
			      n, r->prefix_credited[i], r->prefix_credited[i] / n, r->prefix_h[i]);
	}
}

/* A virtio disk under parallel direct and buffered I/O: its interrupt drains the ring one
 * completion every 1 to 6 us. At the quantum alone those gaps were runs of up to 65 equal
 * symbols, and the recording fails the repetition count test at the permanent cutoff. As
 * batches (block's batch_ns) it passes, and is credited no more than ea_non_iid's
 * assessment of what its estimator saw. */
START_TEST(test_recording_busy_virtio_disk)
{
	struct replay r;

	cfg->policy[CLASS_BLOCK].rule.cap_bits_per_event = 1; /* the class's default */
	replay("block-virtio-busy.u32", CLASS_BLOCK, feed_pipeline_attach(CLASS_BLOCK, "vda", NULL, 0),
	       &r);
	ck_assert_msg(r.before.state == HEALTH_PERMANENT &&
			      r.before.last_test == HEALTH_TEST_RCT,
		      "the recording no longer trips at the quantum alone: %s, %s",
		      est_health_state_name(r.before.state), est_health_test_name(r.before.last_test));
	ck_assert_msg(strcmp(r.in.health, "ok") == 0 && r.in.health_failures == 0,
		      "health %s after %llu failures (last %s)", r.in.health,
		      (unsigned long long)r.in.health_failures, r.in.health_last);
	ck_assert_uint_eq(r.in.c.events, 60000);
	ck_assert_uint_eq(r.in.c.events, r.in.c.merged + r.symbols + 1);
	ck_assert_msg(r.in.c.merged > r.in.c.events / 2, "only %llu of %llu events merged",
		      (unsigned long long)r.in.c.merged, (unsigned long long)r.in.c.events);
	ck_assert_msg(r.in.c.credited_bits > 0.5 * (double)r.symbols,
		      "only %g bits credited for %llu symbols", r.in.c.credited_bits,
		      (unsigned long long)r.symbols);
	credit_within_assessment(&r);
}
END_TEST

/* A flood drained by a poll: the packets a receive queue held, handed to the capture one
 * every 2 to 3 us, are runs of up to 151 equal symbols at the quantum alone, and fail the
 * repetition count test at the permanent cutoff, as a disk's interrupt did. As batches
 * (network's batch_ns) they pass, and under the class's default policy are credited no
 * more than ea_non_iid's assessment. (Trusted, they would be credited 0.238 bits a symbol
 * against 0.211 assessed: the stretch turns more predictable after its first 2048
 * symbols, which the start-up estimates were made on; tests/data/health/README.) */
START_TEST(test_recording_packet_flood_drain)
{
	struct replay r;

	cfg->policy[CLASS_NETWORK].rule = (struct policy_rule){
		.mode = MODE_REDUCED, .scale = 0.25, .cap_bits_per_event = 0.5,
		.cap_bits_per_second = 1e9}; /* the class's default, the per-second cap aside */
	replay("packet-flood-drain.u32", CLASS_NETWORK,
	       feed_pipeline_attach(CLASS_NETWORK, "veth0", "veth", 0), &r);
	ck_assert_msg(r.before.state == HEALTH_PERMANENT && r.before.count.rct_permanent > 0,
		      "the recording no longer trips at the quantum alone: %s, %llu permanent "
		      "repetition count failures", est_health_state_name(r.before.state),
		      (unsigned long long)r.before.count.rct_permanent);
	ck_assert_msg(strcmp(r.in.health, "ok") == 0 && r.in.health_failures == 0,
		      "health %s after %llu failures (last %s)", r.in.health,
		      (unsigned long long)r.in.health_failures, r.in.health_last);
	ck_assert_uint_eq(r.in.c.events, 20001);
	ck_assert_uint_eq(r.in.c.events, r.in.c.merged + r.symbols + 1);
	ck_assert_msg(r.in.c.merged > r.in.c.events / 2, "only %llu of %llu events merged",
		      (unsigned long long)r.in.c.merged, (unsigned long long)r.in.c.events);
	ck_assert_msg(r.in.c.credited_bits > 0, "nothing credited");
	credit_within_assessment(&r);
}
END_TEST

/* A recording replayed through a trusted interface (cap 0.5 bits, the per-second cap lifted),
 * which earns at least half of what its symbols assess at. */
static void replay_trusted(const char *file, struct replay *r)
{
	cfg->policy[CLASS_NETWORK].rule = (struct policy_rule){
		.mode = MODE_TRUSTED, .scale = 1, .cap_bits_per_event = 0.5,
		.cap_bits_per_second = 1e9};
	replay(file, CLASS_NETWORK, feed_pipeline_attach(CLASS_NETWORK, "veth0", "veth", 0), r);
	ck_assert_msg(r->in.c.credited_bits > 0.5 * r->h_offline * (double)r->symbols,
		      "only %g bits credited for %llu symbols", r->in.c.credited_bits,
		      (unsigned long long)r->symbols);
}

/* The same stretch on a trusted interface, the per-second cap lifted: its blocks of 4096
 * symbols assess higher than all of it, and the estimates made at start-up stand for the
 * events after them; the long window's estimates and budget keep the credit within the
 * assessment, of every prefix too. */
START_TEST(test_recording_packet_flood_drain_trusted)
{
	struct replay r;

	replay_trusted("packet-flood-drain.u32", &r);
	ck_assert_uint_eq(r.symbols, 4777);
	ck_assert_uint_eq(r.prefixes, 3);
	credit_within_assessment(&r);
}
END_TEST

/* A flooded interface's 30 minutes (102,596 symbols), trusted, the per-second cap lifted:
 * runs of one interval about 70 long, which the health tests stop, are what t-Tuple sees
 * over all of it (0.22 bits a symbol, 0.62 over the first 32,768 symbols, 0.26 over 36,864),
 * and what no block of 4096 sees. The credit stays within, over every prefix. */
START_TEST(test_recording_soak_interface_trusted)
{
	struct replay r;

	replay_trusted("soak-interface.u32", &r);
	ck_assert_uint_eq(r.symbols, 102596);
	ck_assert_uint_eq(r.in.c.merged, 0);
	ck_assert_uint_eq(r.prefixes, 7);
	credit_within_assessment(&r);
}
END_TEST

/* The soak's interface, trusted: once its long window sees the runs (36,864 symbols in), the
 * bits already given reach what the window assesses, and its events earn nothing for a
 * while; the status says that, not that the estimate is below 0.1 bits (checked every 64
 * events). */
START_TEST(test_recording_long_window_says_why)
{
	struct instance *inst;
	uint32_t *gaps;
	uint64_t t = 10 * SEC;
	size_t n, said = 0, other = 0;

	cfg->policy[CLASS_NETWORK].rule = (struct policy_rule){
		.mode = MODE_TRUSTED, .scale = 1, .cap_bits_per_event = 0.5,
		.cap_bits_per_second = 1e9};
	inst = feed_pipeline_attach(CLASS_NETWORK, "veth0", "veth", 0);
	gaps = load_gaps("soak-interface.u32", &n);
	for (size_t i = 0; i < n; i++) {
		struct inst_info in;

		t += gaps[i];
		feed_pipeline_sample(inst, t);
		if (i % 64)
			continue;
		in = info_of(feed_pipeline_count() - 1);
		if (in.reason != PIPELINE_ESTIMATE_0)
			continue;
		if (strncmp(in.reason_text, "its last ", 9) == 0 &&
		    strstr(in.reason_text, " symbols assess at "))
			said++;
		else
			other++;
	}
	free(gaps);
	/* A few stretches earn nothing for another reason (a block's estimate below 0.1). */
	ck_assert_msg(said > 100 && other < said / 10,
		      "the budget said %zu times, an estimate below 0.1 bits %zu", said, other);
}
END_TEST

/* The soak's interface again, beside a second one whose per-second cap holds its credit to
 * a bit a second: the long window is estimated at every step of its growth where the bits
 * go to credit, and at few where they are held back (what reaches credit then is what the
 * estimates stand behind); both stay within the assessment of every prefix. */
START_TEST(test_recording_long_window_follows_credit)
{
	struct replay r, held;

	replay_trusted("soak-interface.u32", &r);
	credit_within_assessment(&r);
	cfg->policy[CLASS_NETWORK].rule.cap_bits_per_second = 1;
	replay("soak-interface.u32", CLASS_NETWORK,
	       feed_pipeline_attach(CLASS_NETWORK, "veth1", "veth", 0), &held);
	credit_within_assessment(&held);
	ck_assert_uint_eq(held.symbols, r.symbols);
	ck_assert_msg(held.in.c.credited_bits > 0 &&
			      held.in.c.credited_bits < r.in.c.credited_bits / 10,
		      "credited %g held back, %g not", held.in.c.credited_bits,
		      r.in.c.credited_bits);
	ck_assert_msg(r.in.long_estimates == r.ref_long_estimates,
		      "%llu long estimates, %llu with all credited",
		      (unsigned long long)r.in.long_estimates,
		      (unsigned long long)r.ref_long_estimates);
	ck_assert_msg(held.in.long_estimates >= 2 && held.in.long_estimates <= 10,
		      "%llu long estimates held back",
		      (unsigned long long)held.in.long_estimates);
}
END_TEST

/* A flood's first packets, before the source samples them: they come at the pace of the
 * sender's loop, one every 4.75 us, as runs of up to 234 equal symbols. That is the timing
 * itself, not ours (no gap is zero, none is merged): the tests fail it, permanently, and
 * say it became periodic. When the source then samples the flood, the permanent failure is
 * taken back (the flood's start, not the interface, failed): no credit until it ends and
 * the tests start up again. */
START_TEST(test_recording_packet_flood_start)
{
	struct instance *inst;
	struct replay r;
	char *log;

	cfg->policy[CLASS_NETWORK].rule.cap_bits_per_event = 0.5; /* the class's default */
	inst = feed_pipeline_attach(CLASS_NETWORK, "veth0", "veth", 0);
	feed_pipeline_set_sampling(inst, "off", 1, NAN); /* the source's word at the window before */
	tu_capture_begin();
	replay("packet-flood-start.u32", CLASS_NETWORK, inst, &r);
	free(tu_capture_end());
	ck_assert_uint_eq(r.in.c.merged, 0);
	ck_assert_uint_eq(r.in.c.events, 10700);
	ck_assert_str_eq(r.in.health, "failed-permanent");
	ck_assert_str_eq(r.in.health_last, "repetition-count");
	ck_assert_msg(strncmp(r.in.reason_text, "its timing became periodic: one interval ", 41) == 0,
		      "the status says: %s", r.in.reason_text);
	ck_assert_msg(r.h_offline < 1, "ea_non_iid gives the flood's start %g bits a symbol",
		      r.h_offline);
	credit_within_assessment(&r);

	tu_capture_begin();
	feed_pipeline_set_sampling(inst, "on", 0.5, 20000);
	log = tu_capture_end();
	ck_assert_msg(strstr(log, "network/veth0: its health tests failed on the start of a flood, "
				  "not for good"), "the log said: %s", log);
	free(log);
	ck_assert_str_eq(info_of(0).health, "failed");
}
END_TEST

/* Fixed periods on an instance of class cls (its cap 'cap') fail permanently, within the
 * permanent RCT cutoff's symbols: a period above the class's batch gap gives one symbol an
 * event; below it (a stuck clock included) a batch ends after EST_BATCH_MAX events, one
 * symbol a batch. */
static void fixed_periods_fail(enum src_class cls, double cap, const uint64_t *gaps, size_t n)
{
	const uint64_t batch = source_class_all[cls]->batch_ns;
	const unsigned cutoff = est_health_rct_cutoff(cap, HEALTH_ALPHA_PERMANENT);

	cfg->policy[cls].rule.cap_bits_per_event = cap;
	tu_rng_seed(SEED);
	for (size_t k = 0; k < n; k++) {
		const uint64_t per_symbol = gaps[k] < batch ? EST_BATCH_MAX + 1 : 1;
		const size_t idx = feed_pipeline_count();
		char name[16];
		struct stream s;
		struct instance *inst;
		struct inst_info in;
		uint64_t i;

		snprintf(name, sizeof(name), "p%zu", k);
		inst = feed_pipeline_attach(cls, name, NULL, 0);
		stream_init(&s, cap);
		stream_run(&s, inst, PRE_BLOCK);
		ck_assert_str_eq(info_of(idx).health, "ok");
		for (i = 0; i < (cutoff + 1) * per_symbol; i++) {
			s.t += gaps[k];
			feed_pipeline_sample(inst, s.t);
			if (strcmp(info_of(idx).health, "failed-permanent") == 0)
				break;
		}
		in = info_of(idx);
		ck_assert_msg(strcmp(in.health, "failed-permanent") == 0,
			      "%s: a period of %llu ns: health %s after %llu events" SEEDFMT,
			      source_class_name(cls), (unsigned long long)gaps[k], in.health,
			      (unsigned long long)i, SEEDARG);
		ck_assert_str_eq(in.health_last, "repetition-count");
		est_fini(&s.est);
	}
}

/* Broken block sources still fail permanently: fixed periods below the batch gap (10 us)
 * and above it. */
START_TEST(test_block_fixed_periods_fail)
{
	const uint64_t gaps[] = {0, 1, 5 * QUANTUM, 50 * QUANTUM, 250 * QUANTUM};

	ck_assert_uint_gt(source_class_all[CLASS_BLOCK]->batch_ns, 5 * QUANTUM);
	ck_assert_uint_lt(source_class_all[CLASS_BLOCK]->batch_ns, 50 * QUANTUM);
	fixed_periods_fail(CLASS_BLOCK, 1, gaps, ARRAY_SIZE(gaps));
}
END_TEST

/* And so do network sources, whose batch gap is 4 us: a sender's fixed pace (5 us, as a
 * flood's start) is not merged. */
START_TEST(test_network_fixed_periods_fail)
{
	const uint64_t gaps[] = {0, 1, 2 * QUANTUM, 5 * QUANTUM, 50 * QUANTUM, 250 * QUANTUM};

	ck_assert_uint_gt(source_class_all[CLASS_NETWORK]->batch_ns, 2 * QUANTUM);
	ck_assert_uint_lt(source_class_all[CLASS_NETWORK]->batch_ns, 5 * QUANTUM);
	fixed_periods_fail(CLASS_NETWORK, 0.5, gaps, ARRAY_SIZE(gaps));
}
END_TEST

/* Events of instance `name` at a fixed period of 50 us, after random ones, until it fails
 * permanently; what the log said meanwhile. */
static char *periodic_until_permanent(const char *name)
{
	struct stream s;
	struct instance *inst = feed_pipeline_attach(CLASS_BLOCK, name, NULL, 0);
	size_t idx = feed_pipeline_count() - 1;

	stream_init(&s, cfg->policy[CLASS_BLOCK].rule.cap_bits_per_event);
	stream_run(&s, inst, PRE_BLOCK);
	tu_capture_begin();
	for (int i = 0; i < 1000 && strcmp(info_of(idx).health, "failed-permanent"); i++) {
		s.t += 50 * QUANTUM;
		feed_pipeline_sample(inst, s.t);
	}
	est_fini(&s.est);
	return tu_capture_end();
}

/* A failure is said in words an administrator can act on: the log and the status's reason
 * say the timing became periodic, how, and what it costs, never the interval. A permanent
 * failure is a warning while the kernel counts credit and a notice once it no longer
 * does. */
START_TEST(test_health_failure_said_in_words)
{
	struct inst_info in;
	char *log;

	cfg->policy[CLASS_BLOCK].rule.cap_bits_per_event = 1;
	tu_rng_seed(SEED);
	log = periodic_until_permanent("sda");
	ck_assert_msg(strstr(log, "entropyd: notice: block/sda: its timing became periodic: one "
				  "interval 31 times in a row (repetition-count test): no credit "
				  "while it is; its events are still mixed in\n") &&
			      strstr(log, "entropyd: warning: block/sda: its timing became periodic: "
					  "one interval 61 times in a row (repetition-count test, "
					  "permanent): no credit until it is re-qualified, 3600 s of "
					  "its events from now\n"),
		      "the log said: %s" SEEDFMT, log, SEEDARG);
	ck_assert_ptr_null(strstr(log, "50"));
	free(log);
	in = info_of(0);
	ck_assert_int_eq(in.reason, PIPELINE_HEALTH);
	ck_assert_str_eq(in.reason_text, "its timing became periodic: one interval 61 times in a "
					 "row (repetition-count, permanent): no credit until it is "
					 "re-qualified, in 3600 s of its events' time");

	feed_pipeline_kernel_counts(false); /* the CRNG is ready */
	log = periodic_until_permanent("sdb");
	ck_assert_msg(strstr(log, "entropyd: notice: block/sdb: its timing became periodic: one "
				  "interval 61 times in a row (repetition-count test, permanent)") &&
			      !strstr(log, "warning"),
		      "the log said: %s" SEEDFMT, log, SEEDARG);
	free(log);
}
END_TEST

static Suite *pipeline_suite(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("core"), *health, *reasons, *boot;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_attach_and_info);
	tcase_add_test(tc, test_counters_trusted);
	tcase_add_test(tc, test_counters_kernel_credited);
	tcase_add_test(tc, test_counters_estimate_capped);
	tcase_add_test(tc, test_counters_reduced);
	tcase_add_test(tc, test_counters_mix_only);
	tcase_add_test(tc, test_per_second_cap);
	tcase_add_test(tc, test_folded_events_take_nothing_from_cap);
	tcase_add_test(tc, test_detach_keeps_totals);
	tcase_add_test(tc, test_runs_as_single_events);
	tcase_add_test(tc, test_reconfigure_changes_policy_keeps_state);
	tcase_add_test(tc, test_reconfigure_to_disabled);
	tcase_add_test(tc, test_reconfigure_new_quantum_restarts_estimator);
	tcase_add_test(tc, test_reconfigure_estimate_interval_restarts_estimator_only);
	tcase_add_test(tc, test_enabled);
	tcase_add_test(tc, test_listed_oldest_first);
	tcase_add_test(tc, test_added_after_every_change);
	suite_add_tcase(s, tc);

	health = tcase_create("health");
	tcase_add_checked_fixture(health, setup, teardown);
	/* The recordings' replays assess every prefix with SP 800-90B's ten estimators (the
	 * soak's interface: 102,596 symbols, about 2 s alone), beyond Check's default 4 s on a
	 * busy machine. */
	tcase_set_timeout(health, 60);
	tcase_add_test(health, test_jiffy_only_for_kernel_credited);
	tcase_add_test(health, test_health_startup_holds_credit);
	tcase_add_test(health, test_health_stuck_stream_fails);
	tcase_add_test(health, test_health_catches_what_estimator_credits);
	tcase_add_test(health, test_health_permanent_survives_reattach);
	tcase_add_test(health, test_health_permanent_requalifies);
	tcase_add_test(health, test_burst_is_one_timing_event);
	tcase_add_test(health, test_sampled_credits_nothing);
	tcase_add_test(health, test_flood_start_forgiven);
	tcase_add_test(health, test_recording_busy_virtio_disk);
	tcase_add_test(health, test_recording_packet_flood_start);
	tcase_add_test(health, test_recording_packet_flood_drain);
	tcase_add_test(health, test_recording_packet_flood_drain_trusted);
	tcase_add_test(health, test_recording_soak_interface_trusted);
	tcase_add_test(health, test_recording_long_window_follows_credit);
	tcase_add_test(health, test_recording_long_window_says_why);
	tcase_add_test(health, test_block_fixed_periods_fail);
	tcase_add_test(health, test_network_fixed_periods_fail);
	tcase_add_test(health, test_health_failure_said_in_words);
	suite_add_tcase(s, health);

	reasons = tcase_create("reasons");
	tcase_add_checked_fixture(reasons, setup, teardown);
	tcase_add_test(reasons, test_no_estimate_is_not_zero);
	tcase_add_test(reasons, test_reasons);
	suite_add_tcase(s, reasons);

	boot = tcase_create("boot");
	tcase_add_checked_fixture(boot, setup, teardown);
	tcase_add_test(boot, test_boot_allowance_past_the_cap);
	tcase_add_test(boot, test_boot_allowance_off);
	tcase_add_test(boot, test_boot_allowance_what_the_kernel_needs);
	tcase_add_test(boot, test_boot_allowance_ends_when_ready);
	tcase_add_test(boot, test_boot_allowance_held_to_real_time);
	tcase_add_test(boot, test_boot_allowance_bad_streams_earn_nothing);
	suite_add_tcase(s, boot);
	return s;
}

int main(void)
{
	return tu_run_suite(pipeline_suite());
}
