/* feed_pipeline: per-instance state and the path sample -> estimator -> health -> policy -> pool.
 * Sources hand in timestamps; everything that decides credit happens here. */
#include "autoconf.h"

#include "feed_pipeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_policy.h"
#include "est.h"
#include "est_health.h"
#include "est_record.h"
#include "feed_pool.h"
#include "feed_rate.h"
#include "kernel.h"
#include "log.h"
#include "source_class.h"
#include "util.h"

struct instance {
	struct instance *next;
	enum src_class cls;
	char *name;    /* as found: what policy and the record files match */
	char *display; /* printable: what logs and status show */
	char *kind;
	const char *state;
	const char *backend;
	unsigned flags;
	struct policy_rule rule;
	struct est est;
	struct health health;
	enum health_state health_was;
	struct feed_rate rate;
	struct recorder *rec; /* --record: the symbols this instance's estimator sees */
	double last_estimate;
	double weight; /* set by the source (feed_pipeline_set_weight); 1 unless it says otherwise */
	double share;  /* ... and why: the busiest flow's share */
	/* Why the latest event's credit was not earned in full, decided beside the credit
	 * itself (sample_one()); and whether the health tests have vouched for any credit
	 * since the instance started or last failed. */
	enum pipeline_reason reason;
	bool vouched;
	bool est_ready;     /* the estimator has had an estimate since it was (re)started */
	uint32_t zero_run;  /* consecutive events estimated at zero */
	/* Credit earned but not yet vouched for by the health tests (see hold()): of the
	 * current APT window before the current RCT run, and of that run. */
	double held, run_held;
	/* The same before the per-second cap: what the boot allowance may vouch for; and
	 * where its events' time and the daemon's clock started, to keep it to real time. */
	double boot_held, boot_run_held;
	uint64_t boot_t0, boot_w0;
	bool boot_clocked;
	/* feed_pipeline_set_sampling(): while sampled, events are mixed and counted only. */
	bool sampled;
	const char *sampling;
	double sample_ratio, arrival_rate;
	uint64_t marks[2]; /* health.count.symbols at the source's last two words on it */
	struct inst_counters c;
};

static void discard_held(struct instance *inst)
{
	inst->held = inst->run_held = 0;
	inst->boot_held = inst->boot_run_held = 0;
}

static bool boot_allowance(void);

/* Credit waiting for the health tests: under the boot allowance, what it may vouch for. */
static double held_bits(const struct instance *inst)
{
	double h = inst->held + inst->run_held;

	return boot_allowance() ? fmax(h, inst->boot_held + inst->boot_run_held) : h;
}

static const char *const reason_names[PIPELINE_REASONS] = {
	[PIPELINE_CREDITS] = "-",
	[PIPELINE_IDLE] = "idle",
	[PIPELINE_DISABLED] = "disabled",
	[PIPELINE_MIX_ONLY] = "mix-only",
	[PIPELINE_STARTUP] = "startup",
	[PIPELINE_HEALTH] = "health",
	[PIPELINE_NO_ESTIMATE] = "no-estimate",
	[PIPELINE_ESTIMATE_0] = "estimate-0",
	[PIPELINE_POOL_FULL] = "pool-full",
	[PIPELINE_FLOW] = "flow",
	[PIPELINE_RATE_CAP] = "rate-cap",
	[PIPELINE_HELD] = "held",
	[PIPELINE_KERNEL] = "kernel",
	[PIPELINE_SAMPLED] = "sampled",
};

const char *feed_pipeline_reason_name(enum pipeline_reason r)
{
	return (unsigned)r < PIPELINE_REASONS ? reason_names[r] : "?";
}

static struct {
	const struct config *cfg;
	struct pool *pool;
	void (*added)(void *arg);
	void *added_arg;
	struct instance *head, **tail; /* oldest first; tail: the last one's next (or &head) */
	size_t n;
	/* feed_pipeline_info()'s place: listing idx 0, 1, 2, ... walks the list once, not n times */
	struct instance *at;
	size_t at_idx;
	struct inst_counters gone; /* counters of detached instances */
	uint64_t jiffy_ns;         /* the kernel's own timing resolution, for INST_KERNEL_CREDITS */
	unsigned hz;
	const char *hz_from;
	bool kernel_ignores; /* the kernel no longer counts credit (feed_pipeline_kernel_counts) */
	/* The boot allowance (feed_pipeline_boot_allowance): the bits it may still vouch for, and
	 * what it was given. */
	double boot_left, boot_given;
} P;

/* Instances that failed permanently, by class and name, as they were when detached. A device
 * unplugged and plugged in again, a node replaced, an interface that comes back or a reload
 * that disables and re-enables a class makes a new instance; it must not get a fresh
 * start-up from that, nor a shorter wait for its re-qualification. Only a restart of the
 * daemon forgets. */
struct failed {
	struct failed *next;
	enum src_class cls;
	struct health_past past;
	char name[];
};
static struct failed *failed_list;

static struct failed *failed_find(enum src_class cls, const char *name)
{
	for (struct failed *f = failed_list; f; f = f->next)
		if (f->cls == cls && strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* At detach: one that failed permanently, now or before it was re-qualified, leaves its
 * state and wait to its successors. */
static void failed_remember(const struct instance *inst)
{
	size_t len = strlen(inst->name) + 1;
	struct failed *f = failed_find(inst->cls, inst->name);

	if (!f) {
		if (inst->health.state != HEALTH_PERMANENT && !inst->health.retry.wait_ns)
			return;
		f = xmalloc(sizeof(*f) + len);
		f->cls = inst->cls;
		memcpy(f->name, inst->name, len);
		f->next = failed_list;
		failed_list = f;
	}
	est_health_past_save(&inst->health, &f->past);
}

static void failed_forget_all(void)
{
	while (failed_list) {
		struct failed *f = failed_list;

		failed_list = f->next;
		free(f);
	}
}

/* How often (in symbols) the health tests' claimed min-entropy follows the estimate. */
#define HEALTH_CLAIM_EVERY 1024
/* Events the estimator takes at once (as many as the packet source hands over). */
#define PIPELINE_RUN 256

/* The estimator's parameters for an instance: its class's timing settings and cap. */
static struct est_params est_params_for(const struct instance *inst)
{
	return (struct est_params){
		.quantum_ns = (uint64_t)source_class_quantum_ns(P.cfg, inst->cls),
		.estimate_every_ns =
			(uint64_t)(source_class_estimate_interval(P.cfg, inst->cls) * NS_PER_SEC),
		.cap_bits = inst->rule.cap_bits_per_event,
		.jiffy_ns = (inst->flags & INST_KERNEL_CREDITS) ? P.jiffy_ns : 0,
		.batch_ns = source_class_all[inst->cls]->batch_ns,
	};
}

/* The health tests assume the min-entropy we would credit at most: the cap, or the
 * estimate once there is one. Claiming more than the source has only makes them stricter. */
static void health_claim(struct instance *inst, bool init)
{
	struct health_cfg hc;
	double h = inst->rule.cap_bits_per_event;
	struct est_report r;

	if (!init && inst->est.ops->report) {
		inst->est.ops->report(inst->est.state, &r);
		if (r.have_estimate && r.h < h)
			h = r.h;
	}
	if (h < HEALTH_CLAIM_MIN)
		h = HEALTH_CLAIM_MIN;
	if (h > 8)
		h = 8;
	est_health_cfg_default(&hc, h);
	hc.retry_ns = (uint64_t)(source_class_health_retry(P.cfg, inst->cls) * NS_PER_SEC);
	if (init)
		est_health_init(&inst->health, &hc);
	else if (hc.h_claimed != inst->health.cfg.h_claimed ||
		 hc.retry_ns != inst->health.cfg.retry_ns)
		est_health_reconfigure(&inst->health, &hc);
}

static const struct est_ops *estimator(void)
{
	const struct est_ops *ops = est_find("sp800-90b");

	return ops ? ops : &est_kernel_ops;
}

void feed_pipeline_init(const struct config *cfg, struct pool *pool, void (*added)(void *arg),
		   void *arg)
{
	memset(&P, 0, sizeof(P));
	P.cfg = cfg;
	P.pool = pool;
	P.added = added;
	P.added_arg = arg;
	P.hz = kernel_hz(&P.hz_from);
	P.jiffy_ns = NS_PER_SEC / P.hz;
}

static void add_counters(struct inst_counters *to, const struct inst_counters *from)
{
	to->events += from->events;
	to->skipped += from->skipped;
	to->merged += from->merged;
	to->mixed_bytes += from->mixed_bytes;
	to->estimated_bits += from->estimated_bits;
	to->credited_bits += from->credited_bits;
	to->held_bits += from->held_bits;
}

static void free_instance(struct instance *inst)
{
	est_record_close(inst->rec);
	est_fini(&inst->est);
	free(inst->name);
	free(inst->display);
	free(inst->kind);
	util_wipe(inst, sizeof(*inst));
	free(inst);
}

void feed_pipeline_fini(void)
{
	while (P.head) {
		struct instance *inst = P.head;

		P.head = inst->next;
		free_instance(inst);
	}
	est_record_fini();
	failed_forget_all();
	memset(&P, 0, sizeof(P));
}

/* A new estimator with parameters p: its first estimate comes 1024 symbols on. */
static void restart_estimator(struct instance *i, const struct est_params *p)
{
	const struct est_ops *ops = i->est.ops;

	est_fini(&i->est);
	est_init(&i->est, ops, p);
	i->est_ready = false;
	i->zero_run = 0;
}

void feed_pipeline_reconfigure(const struct config *cfg)
{
	P.cfg = cfg;
	for (struct instance *i = P.head; i; i = i->next) {
		struct policy_rule r = config_policy_resolve(cfg, i->cls, i->name);
		struct est_params p;

		/* Credit still waiting was earned under the old rule: the administrator's new
		 * one (mix-only, say) decides from now on, so it is dropped. */
		if (r.mode != i->rule.mode || r.scale != i->rule.scale ||
		    r.cap_bits_per_event != i->rule.cap_bits_per_event ||
		    r.cap_bits_per_second != i->rule.cap_bits_per_second)
			discard_held(i);
		i->rule = r;
		p = est_params_for(i);
		if (p.quantum_ns != i->est.params.quantum_ns ||
		    p.jiffy_ns != i->est.params.jiffy_ns) {
			/* Symbols at another resolution are another stream: start afresh. */
			restart_estimator(i, &p);
			if (i->health.state != HEALTH_PERMANENT)
				est_health_reset(&i->health);
			discard_held(i);
			i->vouched = false;
		} else if (p.estimate_every_ns != i->est.params.estimate_every_ns) {
			/* The same stream on another schedule: a new estimator, whose first
			 * estimate comes 1024 symbols on; the health tests go on. */
			restart_estimator(i, &p);
		}
		i->est.params = p;
		health_claim(i, false);
	}
}

bool feed_pipeline_enabled(enum src_class cls, const char *name)
{
	return config_policy_resolve(P.cfg, cls, name).mode != MODE_DISABLED;
}

struct instance *feed_pipeline_attach(enum src_class cls, const char *name, const char *kind,
				 unsigned flags)
{
	struct instance *inst = xcalloc(1, sizeof(*inst));
	struct est_params p;

	inst->cls = cls;
	inst->name = xstrdup(name);
	inst->display = util_printable_dup(name);
	inst->kind = xstrdup(kind ? kind : "");
	inst->state = "open";
	inst->flags = flags;
	inst->rule = config_policy_resolve(P.cfg, cls, name);
	inst->weight = 1.0;
	inst->sample_ratio = 1.0;
	inst->arrival_rate = NAN;
	inst->reason = PIPELINE_IDLE;
	p = est_params_for(inst);
	est_init(&inst->est, estimator(), &p);
	health_claim(inst, true);
	{
		const struct failed *f = failed_find(cls, name);

		if (f) {
			est_health_past_restore(&inst->health, &f->past);
			if (f->past.failed)
				log_warn("%s/%s: failed its health tests permanently before: no credit "
					 "until it is re-qualified", source_class_name(cls), name);
		}
	}
	inst->health_was = inst->health.state;
	inst->rec = est_record_open(P.cfg->record.dir, source_class_name(cls), name,
				(uint64_t)P.cfg->record.max_bytes);
	if (!P.tail)
		P.tail = &P.head;
	*P.tail = inst;
	P.tail = &inst->next;
	P.n++;
	P.at = NULL;
	log_info("%s/%s: attached (%s), policy %s", source_class_name(cls), name,
		 inst->kind[0] ? inst->kind : "-", config_mode_name_policy(inst->rule.mode));
	return inst;
}

void feed_pipeline_set_state(struct instance *inst, const char *state)
{
	inst->state = state;
}

void feed_pipeline_set_backend(struct instance *inst, const char *backend)
{
	inst->backend = backend;
}

void feed_pipeline_set_weight(struct instance *inst, double w, double share)
{
	inst->weight = w >= 0 && w <= 1 ? w : 0; /* NaN or out of range: no credit */
	inst->share = share >= 0 && share <= 1 ? share : 0;
}

/* The boot allowance. While the kernel's CRNG is not ready, credit counts and getrandom()
 * waits for it; the per-second caps are sized for the steady state, and at boot they set the
 * pace (a disk's 128 bits a second, when its first vouched window's estimates add up to far
 * more). So while the allowance lasts a vouched window may credit what its events earned
 * before the per-second cap -- each event still capped per event, weighted by the policy and
 * the source, and held until the health tests vouch for it -- up to what the kernel still
 * needs before it is ready, shared by all instances and never raised: at most
 * KERNEL_READY_BITS in a daemon's life. It ends when that is used up, when the kernel stops
 * counting credit (its CRNG is ready), or with feed.boot_allowance = false; the per-second
 * caps then apply as before. */
static bool boot_allowance(void)
{
	return P.boot_left > 0 && !P.kernel_ignores && P.cfg->feed.boot_allowance;
}

void feed_pipeline_boot_allowance(double bits)
{
	P.boot_left = P.boot_given = bits > 0 ? bits : 0; /* NaN: none */
	if (P.boot_left > 0 && P.cfg->feed.boot_allowance)
		log_notice("boot allowance: until the CRNG is ready, credit the health tests vouch "
			   "for is bounded by the %.0f bits the kernel still needs, not by the "
			   "per-second caps", P.boot_given);
}

static void boot_allowance_end(const char *why)
{
	if (P.boot_given > 0)
		log_notice("boot allowance ends (%s): %.0f of %.0f bits used", why,
			   P.boot_given - P.boot_left, P.boot_given);
	P.boot_left = P.boot_given = 0;
}

void feed_pipeline_set_sampling(struct instance *inst, const char *state, double ratio,
			   double rate_pps)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	bool sampled = ratio > 0 && ratio < 1;

	inst->sampling = state;
	inst->sample_ratio = sampled ? ratio : 1.0;
	inst->arrival_rate = rate_pps;
	if (sampled == inst->sampled) {
		inst->marks[0] = inst->marks[1];
		inst->marks[1] = inst->health.count.symbols;
		return;
	}
	inst->sampled = sampled;
	if (sampled) {
		/* What waits was earned before: the tests that would vouch for it pause. A
		 * flood is found a window late at worst: a permanent failure on the symbols
		 * since the word before last came from its first packets, back to back, and
		 * says nothing of the source. What comes after it starts up again anyway. */
		discard_held(inst);
		inst->vouched = false;
		inst->reason = PIPELINE_SAMPLED;
		if (est_health_forgive(&inst->health, inst->marks[0]))
			log_limited(&rl, LOG_NOTICE,
				    "%s/%s: its health tests failed on the start of a flood, not for "
				    "good: they start up again when it ends",
				    source_class_name(inst->cls), inst->display);
		inst->health_was = inst->health.state;
		log_limited(&rl, LOG_NOTICE,
			    "%s/%s: about %.0f events a second: sampled (1 in %.0f kept), mixed but "
			    "not estimated or credited",
			    source_class_name(inst->cls), inst->display, rate_pps, 1 / ratio);
		return;
	}
	/* A new stream: its gaps span the pause. */
	restart_estimator(inst, &inst->est.params);
	est_health_restart(&inst->health);
	inst->health_was = inst->health.state;
	log_limited(&rl, LOG_NOTICE,
		    "%s/%s: no longer sampled: credit resumes after the health tests' start-up",
		    source_class_name(inst->cls), inst->display);
}

void feed_pipeline_kernel_counts(bool counts)
{
	P.kernel_ignores = !counts;
	if (P.kernel_ignores && P.boot_given > 0)
		boot_allowance_end("the kernel no longer counts credit");
}

void feed_pipeline_skip(struct instance *inst, uint64_t n)
{
	inst->c.events += n;
	inst->c.skipped += n;
}

/* Health tests on every symbol; a change of state is logged once, rate-limited. */
static void health_check(struct instance *inst, uint8_t symbol, uint64_t t_ns)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	struct health *h = &inst->health;
	enum health_state now;
	char cause[96];

	health_time(h, t_ns);
	now = est_health_feed(h, symbol);
	if (h->count.symbols % HEALTH_CLAIM_EVERY == 0)
		health_claim(inst, false);
	if (now == inst->health_was)
		return;
	est_health_cause(h, cause, sizeof(cause));
	/* A failure says what the tests saw, in words. A permanent one is a warning while
	 * credit still counts (the kernel's CRNG is not ready); after that it is information:
	 * the machine's randomness no longer waits for this source. */
	if (now == HEALTH_PERMANENT)
		log_limited(&rl, P.kernel_ignores ? LOG_NOTICE : LOG_WARNING,
			    "%s/%s: %s (%s test, permanent): no credit until it is re-qualified, "
			    "%.0f s of its events from now",
			    source_class_name(inst->cls), inst->name, cause, est_health_test_name(h->last_test),
			    (double)est_health_retry_left(h) / NS_PER_SEC);
	else if (now == HEALTH_FAILED && h->last_permanent)
		log_limited(&rl, P.kernel_ignores ? LOG_NOTICE : LOG_WARNING,
			    "%s/%s: %s (%s test, permanent): no credit until it passes again",
			    source_class_name(inst->cls), inst->name, cause, est_health_test_name(h->last_test));
	else if (now == HEALTH_FAILED)
		/* The intermittent cutoff is passed by a good source now and then (its false
		 * alarms are set at 2^-30 a symbol): the test doing its job, not a fault. */
		log_limited(&rl, LOG_NOTICE,
			    "%s/%s: %s (%s test): no credit while it is; its events are still mixed "
			    "in",
			    source_class_name(inst->cls), inst->name, cause, est_health_test_name(h->last_test));
	else if (inst->health_was == HEALTH_PERMANENT)
		log_limited(&rl, LOG_NOTICE,
			    "%s/%s: re-qualifying after a permanent health failure: no credit until "
			    "%d symbols pass the start-up tests",
			    source_class_name(inst->cls), inst->name, HEALTH_STARTUP_SYMBOLS);
	else if (inst->health_was != HEALTH_STARTUP || h->retry.requalified)
		log_limited(&rl, LOG_NOTICE,
			    "%s/%s: its timing varies again (the health tests pass): credit resumes",
			    source_class_name(inst->cls), inst->name);
	inst->health_was = now;
}

/* The pool changed: its owner may want to take it on (see feed_pipeline_init). */
static void pool_added(void)
{
	if (P.added)
		P.added(P.added_arg);
}

/* Credit waits until the health tests have vouched for the symbols that earned it: the APT
 * window they belong to has completed without a failure, and the RCT run they are part of
 * has ended short of the cutoff. So the events just before a failure is detected (up to a
 * window of them) are never credited. A failure discards what waits. */
static void hold(struct instance *inst, double credit, double boot_credit, bool have_symbol)
{
	const struct health *h = &inst->health;
	double take, took;

	if (h->state == HEALTH_FAILED || h->state == HEALTH_PERMANENT) {
		discard_held(inst);
		inst->vouched = false;
		return;
	}
	if (have_symbol && h->rct_run == 1) { /* a new run: the one before ended in time */
		inst->held += inst->run_held;
		inst->run_held = 0;
		inst->boot_held += inst->boot_run_held;
		inst->boot_run_held = 0;
	}
	inst->run_held += credit;
	inst->boot_run_held += boot_credit;
	if (have_symbol && h->apt_seen == 0) {
		/* A window passed: what it earned under the per-second cap, or under the boot
		 * allowance what it earned before the cap, as far as the allowance goes. */
		take = inst->held;
		if (boot_allowance())
			take = fmax(take, fmin(inst->boot_held, P.boot_left));
		inst->held = inst->boot_held = 0;
		if (!(take > 0))
			return;
		took = feed_pool_vouch(P.pool, take);
		if (boot_allowance()) {
			P.boot_left = took < P.boot_left ? P.boot_left - took : 0;
			if (P.boot_left == 0)
				boot_allowance_end("used up");
		}
		inst->c.credited_bits += took;
		inst->vouched = true;
		pool_added();
	}
}

/* Events in a row estimated at zero before that is the reason shown. */
#define ZERO_RUN 64

/* Has the estimator an estimate? Asked only until it has one: it keeps it until restarted
 * (a reload's new parameters). */
static bool est_ready(struct instance *inst, const struct est_out *out)
{
	struct est_report r;

	if (inst->est_ready)
		return true;
	if (!inst->est.ops->report)
		inst->est_ready = out->have_symbol;
	else {
		inst->est.ops->report(inst->est.state, &r);
		inst->est_ready = r.have_estimate;
	}
	return inst->est_ready;
}

/* Why an event earned less than its estimate under the policy, in the order an administrator
 * would look: the policy, the health tests, the estimate, the pool, the source's weight, the
 * cap, the wait for the health tests, the kernel. want: its credit before the per-second
 * cap, got: after it. */
static enum pipeline_reason reason_of(const struct instance *inst, const struct est_out *out,
				      bool fits, double want, double got)
{
	if (inst->rule.mode == MODE_MIX_ONLY)
		return PIPELINE_MIX_ONLY;
	if (!est_health_allows_credit(&inst->health))
		return inst->health.state == HEALTH_STARTUP ? PIPELINE_STARTUP : PIPELINE_HEALTH;
	if (!(out->bits > 0)) {
		/* One event's estimate can be zero in a stream that earns (the kernel's rule
		 * on a short delta): only a stretch of them is a reason. */
		if (!inst->est_ready)
			return PIPELINE_NO_ESTIMATE;
		return inst->zero_run >= ZERO_RUN ? PIPELINE_ESTIMATE_0 : inst->reason;
	}
	if (!fits)
		return PIPELINE_POOL_FULL;
	if (inst->weight == 0)
		return PIPELINE_FLOW;
	if (got < want)
		return PIPELINE_RATE_CAP;
	if (!inst->vouched)
		return PIPELINE_HELD;
	if (P.kernel_ignores)
		return PIPELINE_KERNEL;
	if (inst->weight < 1)
		return PIPELINE_FLOW;
	return PIPELINE_CREDITS;
}

/* Lead of the events' time over the daemon's clock that the boot allowance tolerates:
 * events are read some time after they happen, the first of them too. */
#define BOOT_LEAD_NS NS_PER_SEC

/* The per-second cap holds a recording replayed faster than it happened (an input FIFO, a
 * savefile) to real time; the boot allowance, which does without that cap, does the same:
 * an event earns under it only while its instance's events, from the first one the
 * allowance saw, have not spanned more time than the daemon's clock has (give or take
 * BOOT_LEAD_NS). Time that runs backwards (a replay starting over) starts both spans
 * again. */
static bool boot_real_time(struct instance *inst, uint64_t t_ns, uint64_t now_ns)
{
	if (!inst->boot_clocked || t_ns < inst->boot_t0 || now_ns < inst->boot_w0) {
		inst->boot_clocked = true;
		inst->boot_t0 = t_ns;
		inst->boot_w0 = now_ns;
	}
	return t_ns - inst->boot_t0 <= now_ns - inst->boot_w0 + BOOT_LEAD_NS;
}

/* One event of a run that feed_pipeline_samples() has mixed into the pool already, with what the
 * estimator made of it; fits: its bytes went in whole, so it may earn credit. *now_ns: the
 * coarse clock, read once a run, at its first credit (0 until then). *kept: of the
 * estimator's bits, those that did not go on to credit (est_uncredited()). */
static void sample_one(struct instance *inst, uint64_t t_ns, const struct est_out *out,
		       bool fits, uint64_t *now_ns, double *kept)
{
	double credit, want, got;
	bool boot;

	/* Part of the event before (est_merged()): mixed with the run, counted, and nothing
	 * more; it neither earns nor moves the health tests' windows. */
	if (out->merged) {
		inst->c.merged++;
		return;
	}
	if (out->have_symbol) {
		health_check(inst, out->symbol, t_ns);
		est_record_symbol(inst->rec, out->symbol);
	}
	inst->last_estimate = out->bits;
	inst->c.estimated_bits += out->bits;
	if (out->bits > 0) {
		inst->zero_run = 0;
		inst->est_ready = true;
	} else if (est_ready(inst, out) && inst->zero_run < UINT32_MAX)
		inst->zero_run++;
	/* Data folded into a full pool earns none, and takes nothing from the per-second cap. */
	credit = fits && est_health_allows_credit(&inst->health) ? config_policy_credit(&inst->rule, out->bits)
							       : 0;
	credit *= inst->weight;
	want = credit;
	/* The bucket refills lazily: events without credit need not read the clock, and a
	 * tick's resolution is plenty for a per-second cap. */
	if (credit > 0) {
		if (!*now_ns)
			*now_ns = util_mono_coarse_ns();
		credit = feed_rate_take(&inst->rate, inst->rule.cap_bits_per_second, credit, t_ns,
					*now_ns);
	}
	boot = false;
	if (boot_allowance() && (want > 0 || !inst->boot_clocked)) {
		if (!*now_ns)
			*now_ns = util_mono_coarse_ns();
		boot = boot_real_time(inst, t_ns, *now_ns) && want > 0;
	}
	got = boot ? want : credit; /* under the boot allowance, the cap is not what limits */
	hold(inst, credit, got, out->have_symbol);
	/* What got through is what the estimator counts as credited (held credit may still come
	 * to nothing: that errs on the safe side). Its bits are at most the cap, so want is all
	 * of them under the policy. */
	if (got < want || !(want > 0))
		*kept += want > 0 ? out->bits * (1 - got / want) : out->bits;
	inst->reason = reason_of(inst, out, fits, want, got);
}

void feed_pipeline_samples(struct instance *inst, const uint64_t *t_ns, size_t n)
{
	uint64_t now_ns = 0;
	struct est_out out[PIPELINE_RUN];
	size_t used = 0;

	inst->c.events += n;
	if (inst->rule.mode == MODE_DISABLED) {
		inst->c.skipped += n;
		inst->reason = PIPELINE_DISABLED;
		return;
	}
	inst->c.mixed_bytes += n * sizeof(*t_ns);
	if (inst->sampled) {
		/* Mixed in (folded into a full pool, as they earn nothing); nothing else is
		 * made of them. */
		feed_pool_add_events(P.pool, t_ns, n * sizeof(*t_ns), n);
		pool_added();
		inst->reason = PIPELINE_SAMPLED;
		return;
	}
	while (n > 0) {
		/* As many events as fit whole go in at once (a full pool is folded into until
		 * its owner takes it on); if none fits, the rest is folded in. The data is
		 * mixed in now; its credit follows once the health tests vouch for it. The
		 * estimator takes the events a run at a time, and a run ends where the health
		 * tests next read its estimate (health_claim()): each of them sees the
		 * estimate as of its own event, as if every event came alone. */
		size_t room = feed_pool_room(P.pool) / sizeof(*t_ns);
		size_t claim = HEALTH_CLAIM_EVERY - inst->health.count.symbols % HEALTH_CLAIM_EVERY;
		size_t run = room && room < n ? room : n;
		bool fits;
		double kept = 0;

		run = run < PIPELINE_RUN ? run : PIPELINE_RUN;
		run = run < claim ? run : claim;
		used = run > used ? run : used;
		fits = feed_pool_add_events(P.pool, t_ns, run * sizeof(*t_ns), run);
		pool_added();
		est_add_run(&inst->est, t_ns, run, out);
		for (size_t i = 0; i < run; i++)
			sample_one(inst, t_ns[i], &out[i], fits, &now_ns, &kept);
		est_uncredited(&inst->est, kept);
		t_ns += run;
		n -= run;
	}
	util_wipe(out, used * sizeof(out[0])); /* symbols are timing: none is left behind */
}

void feed_pipeline_sample(struct instance *inst, uint64_t t_ns)
{
	feed_pipeline_samples(inst, &t_ns, 1);
}

void feed_pipeline_detach(struct instance *inst)
{
	for (struct instance **pp = &P.head; *pp; pp = &(*pp)->next) {
		if (*pp != inst)
			continue;
		*pp = inst->next;
		if (P.tail == &inst->next)
			P.tail = pp;
		P.n--;
		P.at = NULL;
		add_counters(&P.gone, &inst->c);
		failed_remember(inst);
		log_info("%s/%s: detached after %llu %s", source_class_name(inst->cls), inst->name,
			 (unsigned long long)inst->c.events, util_plural(inst->c.events, "event", "events"));
		free_instance(inst);
		return;
	}
}

unsigned feed_pipeline_kernel_hz(const char **from)
{
	*from = P.hz_from;
	return P.hz;
}

size_t feed_pipeline_count(void)
{
	return P.n;
}

size_t feed_pipeline_failing(void)
{
	size_t n = 0;

	for (const struct instance *i = P.head; i; i = i->next)
		n += i->health.state == HEALTH_FAILED || i->health.state == HEALTH_PERMANENT;
	return n;
}

static double policy_weight(const struct policy_rule *r)
{
	switch (r->mode) {
	case MODE_TRUSTED: return 1;
	case MODE_REDUCED: return r->scale;
	default: return 0;
	}
}

/* The reason in a sentence, with what the administrator needs to judge it. */
static void reason_text(const struct instance *i, struct inst_info *out)
{
	const struct health *h = &i->health;
	char *b = out->reason_text;
	size_t n = sizeof(out->reason_text);
	struct est_report r;
	char cause[96];

	switch (out->reason) {
	case PIPELINE_CREDITS:
		b[0] = 0;
		break;
	case PIPELINE_IDLE:
		snprintf(b, n, "no event since it opened or its policy changed");
		break;
	case PIPELINE_DISABLED:
		snprintf(b, n, "policy: disabled");
		break;
	case PIPELINE_MIX_ONLY:
		snprintf(b, n, "policy: mix-only (mixed in, credited zero)");
		break;
	case PIPELINE_STARTUP:
		snprintf(b, n, "health tests' start-up: %u of %u symbols", (unsigned)h->clean,
			 (unsigned)h->clean_needed);
		break;
	case PIPELINE_HEALTH:
		est_health_cause(h, cause, sizeof(cause));
		if (h->state == HEALTH_PERMANENT)
			snprintf(b, n, "%s (%s, permanent): no credit until it is re-qualified, in "
				 "%.0f s of its events' time", cause, est_health_test_name(h->last_test),
				 (double)est_health_retry_left(h) / NS_PER_SEC);
		else
			snprintf(b, n, "%s (%s): no credit while it is, until %u symbols pass "
				 "(%u so far)", cause, est_health_test_name(h->last_test),
				 (unsigned)h->clean_needed, (unsigned)h->clean);
		break;
	case PIPELINE_NO_ESTIMATE:
		r.symbols = h->count.symbols;
		if (i->est.ops->report)
			i->est.ops->report(i->est.state, &r);
		snprintf(b, n, "no estimate yet: %llu of 1024 symbols",
			 (unsigned long long)(r.symbols < 1024 ? r.symbols : 1024));
		break;
	case PIPELINE_ESTIMATE_0:
		r.long_h = 8;
		if (i->est.ops->report)
			i->est.ops->report(i->est.state, &r);
		if (r.long_h < 8 && r.long_h >= EST_MIN_BITS && !(r.long_budget >= EST_MIN_BITS))
			snprintf(b, n, "its last %llu symbols assess at %.3g bits a symbol together, "
				 "and the bits they were given reach that: none more until new "
				 "symbols make room", (unsigned long long)r.long_symbols, r.long_h);
		else
			snprintf(b, n, "estimate below %g bits/event counts as zero (cap %g)",
				 EST_MIN_BITS, i->rule.cap_bits_per_event);
		break;
	case PIPELINE_POOL_FULL:
		snprintf(b, n, "pool full between feeds: events folded in earn nothing");
		break;
	case PIPELINE_FLOW:
		snprintf(b, n, "%s", out->flow_text);
		break;
	case PIPELINE_RATE_CAP:
		snprintf(b, n, "per-second cap of %g bits/s reached", i->rule.cap_bits_per_second);
		break;
	case PIPELINE_HELD:
		snprintf(b, n, "held for the health tests: %.1f bits wait for the APT window's end",
			 held_bits(i));
		break;
	case PIPELINE_KERNEL:
		snprintf(b, n, "the kernel no longer counts credit (its CRNG is ready)");
		break;
	case PIPELINE_SAMPLED:
		snprintf(b, n, "sampled: 1 in %.0f of about %.0f events a second kept, mixed, "
			 "not credited", 1 / i->sample_ratio, i->arrival_rate);
		break;
	case PIPELINE_REASONS:
		b[0] = 0;
		break;
	}
}

bool feed_pipeline_info(size_t idx, struct inst_info *out)
{
	struct instance *i = P.head;
	size_t k = 0;

	/* Instances are listed oldest first. */
	if (idx >= P.n)
		return false;
	if (P.at && P.at_idx <= idx) { /* carry on from the last one asked for */
		i = P.at;
		k = P.at_idx;
	}
	for (; k < idx; k++)
		i = i->next;
	P.at = i;
	P.at_idx = idx;
	out->cls = i->cls;
	out->name = i->display;
	out->kind = i->kind;
	out->state = i->state;
	out->backend = i->backend;
	out->rule = i->rule;
	out->estimator = i->est.ops->name;
	out->long_estimates = 0;
	if (i->est.ops->report) {
		struct est_report r;

		i->est.ops->report(i->est.state, &r);
		out->long_estimates = r.long_runs;
	}
	out->last_estimate = i->est_ready ? i->last_estimate : NAN;
	out->kernel_credits = (i->flags & INST_KERNEL_CREDITS) != 0;
	out->jiffy_ns = i->est.params.jiffy_ns;
	out->health = est_health_state_name(i->health.state);
	out->health_last = i->health.last_test == HEALTH_TEST_NONE
				   ? "none"
				   : est_health_test_name(i->health.last_test);
	out->health_failures = i->health.count.rct_intermittent + i->health.count.apt_intermittent +
			       i->health.count.rct_permanent + i->health.count.apt_permanent;
	out->health_requalified = i->health.retry.requalified;
	out->health_retry_in = i->health.state == HEALTH_PERMANENT
				       ? (double)est_health_retry_left(&i->health) / NS_PER_SEC
				       : NAN;
	out->c = i->c;
	out->c.held_bits = held_bits(i);
	out->weight = policy_weight(&i->rule) * i->weight;
	out->flow_zero = i->weight == 0;
	out->flow_text[0] = '\0';
	if (i->weight < 1)
		snprintf(out->flow_text, sizeof(out->flow_text),
			 "one source %.0f%% of packets: weight %.2f (%.3g in force)", i->share * 100,
			 i->weight, out->weight);
	out->sampling = i->sampling;
	out->sample_ratio = i->sample_ratio;
	out->arrival_rate = i->arrival_rate;
	out->reason = i->reason;
	if (i->sampled)
		out->reason = PIPELINE_SAMPLED;
	else if (out->reason == PIPELINE_SAMPLED)
		out->reason = PIPELINE_IDLE; /* no event since */
	/* The kernel's state is the daemon's, and changes between events. */
	if (out->reason == PIPELINE_CREDITS && P.kernel_ignores)
		out->reason = PIPELINE_KERNEL;
	else if (out->reason == PIPELINE_KERNEL && !P.kernel_ignores)
		out->reason = PIPELINE_CREDITS;
	if (out->reason == PIPELINE_DISABLED && i->rule.mode != MODE_DISABLED)
		out->reason = PIPELINE_IDLE; /* enabled again; no event since */
	if (out->reason == PIPELINE_MIX_ONLY && i->rule.mode != MODE_MIX_ONLY)
		out->reason = PIPELINE_IDLE;
	reason_text(i, out);
	return true;
}

void feed_pipeline_totals(struct inst_counters *out)
{
	*out = P.gone;
	for (struct instance *i = P.head; i; i = i->next) {
		add_counters(out, &i->c);
		out->held_bits += held_bits(i);
	}
}
