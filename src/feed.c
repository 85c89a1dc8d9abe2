/* feed: when pending batches go to the sink, by kernel state and feed mode (DESIGN §6).
 * The timer is armed only while data is pending, so an idle daemon does not wake up. */
#include "autoconf.h"

#include "feed.h"

#include <math.h>
#include <string.h>

#include "log.h"

enum feed_phase feed_choose(enum feed_mode mode, const struct kernel_state *ks)
{
	switch (mode) {
	case FEED_ALWAYS:
		return PHASE_ALWAYS;
	case FEED_WATERMARK:
		return PHASE_WATERMARK;
	case FEED_BOOT:
		return ks->crng_ready ? PHASE_MIX : PHASE_BOOT;
	case FEED_AUTO:
		break;
	}
	if (!ks->credit_until_ready)
		return PHASE_WATERMARK;
	return ks->crng_ready ? PHASE_MIX : PHASE_BOOT;
}

const char *feed_phase_name(enum feed_phase phase)
{
	static const char *const names[] = {"boot", "mix", "watermark", "always"};

	return (unsigned)phase < ARRAY_SIZE(names) ? names[phase] : "?";
}

const char *feed_phase_meaning(enum feed_phase phase)
{
	switch (phase) {
	case PHASE_BOOT: return "credit fed as early as it accrues, in small batches";
	case PHASE_MIX: return "mixing at a low rate, every mix_interval";
	case PHASE_WATERMARK: return "fed while entropy_avail is below the low watermark";
	case PHASE_ALWAYS: return "every batch fed with its credit as it fills";
	}
	return "?";
}

static double phase_delay(const struct feed *f)
{
	return f->phase == PHASE_MIX ? f->cfg->feed.mix_interval : f->cfg->feed.batch_interval;
}

static void arm_timer(struct feed *f)
{
	double d = phase_delay(f);
	struct timeval tv = {.tv_sec = (time_t)d,
			     .tv_usec = (suseconds_t)((d - floor(d)) * 1e6)};

	event_add(f->timer, &tv);
	f->timer_armed = true;
}

static void note_ready(struct feed *f)
{
	f->ks.crng_ready = true;
	if (f->saw_not_ready) {
		f->ready_after_ns = mono_ns() - f->start_ns;
		f->credited_before_ready = f->sink->credited;
	}
	if (f->phase == PHASE_BOOT) {
		f->phase = PHASE_MIX;
		if (f->saw_not_ready)
			log_notice("CRNG is ready, %.2f s after start, with %llu bits credited by "
				   "entropyd before: the kernel ignores credit from now on; mixing "
				   "every %g s%s",
				   (double)f->ready_after_ns / 1e9,
				   (unsigned long long)f->credited_before_ready,
				   f->cfg->feed.mix_interval,
				   f->cfg->feed.reseed ? " and reseeding" : "");
		else
			log_notice("CRNG is ready: the kernel ignores credit from now on; mixing "
				   "every %g s%s",
				   f->cfg->feed.mix_interval,
				   f->cfg->feed.reseed ? " and reseeding" : "");
	}
}

/* The pool becomes the next batch to send; false if the queue has no room for it. */
static bool take(struct feed *f)
{
	if (f->queued == FEED_QUEUE)
		return false;
	pool_take(f->pool, &f->queue[f->queued++]);
	return true;
}

/* Everything taken goes to the sink, oldest first. */
static void send_taken(struct feed *f)
{
	for (size_t i = 0; i < f->queued; i++) {
		struct batch *b = &f->queue[i];

		/* Ready before this batch (the kernel's own sources, or a reader that set off its
		 * jitter loop): the batch did not help, and is not counted as if it had. */
		if (f->phase == PHASE_BOOT && kernel_crng_ready())
			note_ready(f);
		if (sink_feed(f->sink, b) == 0 && f->phase == PHASE_MIX && f->cfg->feed.reseed)
			sink_reseed(f->sink);
		batch_wipe(b);
		if (f->phase == PHASE_BOOT && kernel_crng_ready())
			note_ready(f);
		if (f->after_flush)
			f->after_flush(f->after_flush_arg);
	}
	f->queued = 0;
}

static void flush(struct feed *f)
{
	send_taken(f); /* what was taken before goes first, and leaves room */
	if (!pool_empty(f->pool)) {
		take(f);
		send_taken(f);
	}
}

static bool below_watermark(const struct feed *f)
{
	int avail = kernel_entropy_avail();

	return avail >= 0 && avail < f->cfg->feed.low_watermark;
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct feed *f = arg;

	f->timer_armed = false;
	if (f->phase != PHASE_WATERMARK || below_watermark(f))
		flush(f);
	if (!pool_empty(f->pool))
		arm_timer(f);
}

/* Take the pool if the phase says it goes now, or arm the timer; true if a batch waits. */
static bool decide(struct feed *f)
{
	bool now = false;

	switch (f->phase) {
	case PHASE_BOOT:
	case PHASE_ALWAYS:
		now = pool_full(f->pool) || pool_credit(f->pool) >= f->cfg->feed.batch_bits;
		break;
	case PHASE_MIX:
	case PHASE_WATERMARK:
		/* The pool folds data in once full; the timer decides. */
		break;
	}
	/* A full queue leaves the pool be: what comes next is folded in, as in a full pool
	 * that waits for the timer. */
	if (now && !pool_empty(f->pool))
		take(f);
	if (!pool_empty(f->pool) && !f->timer_armed)
		arm_timer(f);
	return f->queued > 0;
}

void feed_run(struct feed *f)
{
	decide(f);
	send_taken(f);
}

static void run_cb(evutil_socket_t fd, short what, void *arg)
{
	/* With room in the queue again, a pool left full by a full queue goes too. */
	send_taken(arg);
	feed_run(arg);
}

void feed_want(void *feed)
{
	struct feed *f = feed;

	/* Once active, the event stays so until it runs: batches taken until then go in one
	 * run. */
	if (decide(f))
		event_active(f->run, 0, 0);
}

void feed_init(struct feed *f, struct event_base *base, const struct config *cfg,
	       struct pool *pool, struct sink *sink)
{
	memset(f, 0, sizeof(*f));
	f->cfg = cfg;
	f->pool = pool;
	f->sink = sink;
	f->run = event_new(base, -1, 0, run_cb, f);
	f->timer = evtimer_new(base, timer_cb, f);
	f->start_ns = mono_ns();
	kernel_probe(&f->ks);
	f->saw_not_ready = !f->ks.crng_ready;
	f->phase = feed_choose(cfg->feed.mode, &f->ks);
	log_notice("kernel %u.%u: %s", f->ks.major, f->ks.minor, kernel_meaning(&f->ks));
	log_notice("feeding %s: mode %s, phase %s: %s", sink_name(sink),
		   feed_mode_name(cfg->feed.mode), feed_phase_name(f->phase),
		   feed_phase_meaning(f->phase));
}

void feed_reconfigure(struct feed *f, const struct config *cfg)
{
	enum feed_phase old = f->phase;

	f->cfg = cfg;
	f->ks.crng_ready = f->ks.crng_ready || kernel_crng_ready();
	f->phase = feed_choose(cfg->feed.mode, &f->ks);
	if (f->phase != old)
		log_notice("feed phase now %s: %s", feed_phase_name(f->phase),
			   feed_phase_meaning(f->phase));
	if (f->timer_armed) {
		event_del(f->timer);
		f->timer_armed = false;
	}
	feed_run(f);
}

void feed_poll_ready(struct feed *f)
{
	if (!f->ks.crng_ready && kernel_crng_ready())
		note_ready(f);
}

void feed_flush(struct feed *f)
{
	flush(f);
}

void feed_fini(struct feed *f)
{
	for (size_t i = 0; i < f->queued; i++) /* unsent (the daemon flushes first): timing */
		batch_wipe(&f->queue[i]);
	f->queued = 0;
	if (f->run)
		event_free(f->run);
	f->run = NULL;
	if (f->timer)
		event_free(f->timer);
	f->timer = NULL;
}
