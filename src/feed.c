/* feed: when pending batches go to the sink, by kernel state and feed mode
 * (feed.mode in entropyd.conf(5); the kernel's side in entropyd(8), "What the kernel does
 * with credit").
 * Nothing wakes an idle daemon: the timer is armed only while data is pending, and the
 * kernel's own signals on /dev/random say when the CRNG becomes ready (POLLIN, watched until
 * then) and, with the old semantics, when entropy_avail is below its write_wakeup_threshold
 * (POLLOUT, watched only while data is pending). */
#include "autoconf.h"

#include "feed.h"

#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

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

int feed_watermark(const struct feed *f, const char **from)
{
	const char *dummy;

	if (!from)
		from = &dummy;
	if (f->cfg->feed.low_watermark > 0) {
		*from = "feed.low_watermark";
		return f->cfg->feed.low_watermark;
	}
	if (f->ks.write_wakeup > 0) {
		*from = "the kernel's write_wakeup_threshold";
		return f->ks.write_wakeup;
	}
	*from = "assumed: write_wakeup_threshold unreadable, the old kernels' default";
	return KERNEL_OLD_WRITE_WAKEUP;
}

bool feed_watermark_by_pollout(const struct feed *f)
{
	/* With the 5.18 semantics POLLOUT means "not ready" and write_wakeup_threshold is
	 * ignored: there entropy_avail is looked at instead. */
	return f->low_ev && !f->ks.credit_until_ready && f->ks.write_wakeup > 0 &&
	       feed_watermark(f, NULL) == f->ks.write_wakeup;
}

static double phase_delay(const struct feed *f)
{
	return f->phase == PHASE_MIX ? f->cfg->feed.mix_interval : f->cfg->feed.batch_interval;
}

static void arm_timer_in(struct feed *f, double d)
{
	struct timeval tv = {.tv_sec = (time_t)d,
			     .tv_usec = (suseconds_t)((d - floor(d)) * 1e6)};

	event_add(f->timer, &tv);
	f->timer_armed = true;
}

static void arm_timer(struct feed *f)
{
	arm_timer_in(f, phase_delay(f));
}

static void stop_watching_ready(struct feed *f)
{
	if (f->ready_ev)
		event_del(f->ready_ev);
}

static void note_ready(struct feed *f)
{
	stop_watching_ready(f);
	if (f->ks.crng_ready)
		return;
	f->ks.crng_ready = true;
	if (f->saw_not_ready) {
		f->ready_after_ns = util_mono_ns() - f->start_ns;
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
	} else if (f->saw_not_ready) {
		log_notice("CRNG is ready, %.2f s after start, with %llu bits credited by "
			   "entropyd before",
			   (double)f->ready_after_ns / 1e9,
			   (unsigned long long)f->credited_before_ready);
	}
}

/* POLLIN on /dev/random: the CRNG is ready. The event is not persistent: it is the last
 * wake-up it causes. */
static void ready_cb(evutil_socket_t fd, short what, void *arg)
{
	struct feed *f = arg;

	note_ready(f);
	if (f->after_flush)
		f->after_flush(f->after_flush_arg);
}

/* Watch for readiness where POLLIN tells it; elsewhere the feed asks getrandom() at each
 * batch of the boot phase, and a status request asks too. */
static void watch_ready(struct feed *f)
{
	if (f->ready_ev && !f->ks.crng_ready && kernel_pollin_is_ready(&f->ks))
		event_add(f->ready_ev, NULL);
}

/* The pool becomes the next batch to send; false if the queue has no room for it. */
static bool take(struct feed *f)
{
	if (f->queued == FEED_QUEUE)
		return false;
	feed_pool_take(f->pool, &f->queue[f->queued++]);
	return true;
}

/* getrandom(GRND_NONBLOCK) at a batch, while the readiness matters and POLLIN does not
 * tell it. */
static bool probe_ready(const struct feed *f)
{
	bool watched = f->ready_ev && kernel_pollin_is_ready(&f->ks);

	return !f->ks.crng_ready && !watched &&
	       (f->phase == PHASE_BOOT || f->phase == PHASE_WATERMARK) && kernel_crng_ready();
}

/* Everything taken goes to the sink, oldest first. */
static void send_taken(struct feed *f)
{
	for (size_t i = 0; i < f->queued; i++) {
		struct batch *b = &f->queue[i];

		/* Ready before this batch (the kernel's own sources, or a reader that set off its
		 * jitter loop): the batch did not help, and is not counted as if it had. */
		if (probe_ready(f))
			note_ready(f);
		/* The kernel ignores credit once ready: what is mixed then is not said to be
		 * credited. */
		if (f->phase == PHASE_MIX && f->ks.credit_until_ready)
			b->credit_bits = 0;
		if (feed_sink_feed(f->sink, b) == 0 && f->phase == PHASE_MIX && f->cfg->feed.reseed)
			feed_sink_reseed(f->sink);
		feed_pool_batch_wipe(b);
		if (probe_ready(f))
			note_ready(f);
		if (f->after_flush)
			f->after_flush(f->after_flush_arg);
	}
	f->queued = 0;
}

static void flush(struct feed *f)
{
	send_taken(f); /* what was taken before goes first, and leaves room */
	if (!feed_pool_empty(f->pool)) {
		take(f);
		send_taken(f);
	}
}

static bool below_watermark(const struct feed *f)
{
	int avail = kernel_entropy_avail();

	return avail >= 0 && avail < feed_watermark(f, NULL);
}

/* Pending data in the watermark phase waits for the kernel's POLLOUT, no sooner than
 * batch_interval after the last batch it let go (POLLOUT stays while entropy_avail is low:
 * without that each event would be a batch). */
static void wait_low(struct feed *f)
{
	uint64_t since = util_mono_ns() - f->low_fed_ns;
	double gap = f->cfg->feed.batch_interval;

	if (f->low_armed || f->timer_armed)
		return;
	if (f->low_fed_ns && (double)since < gap * 1e9) {
		arm_timer_in(f, gap - (double)since / 1e9);
		return;
	}
	event_add(f->low_ev, NULL);
	f->low_armed = true;
}

static void low_cb(evutil_socket_t fd, short what, void *arg)
{
	struct feed *f = arg;

	f->low_armed = false;
	if (f->phase != PHASE_WATERMARK)
		return;
	flush(f);
	f->low_fed_ns = util_mono_ns();
	if (!feed_pool_empty(f->pool))
		wait_low(f);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct feed *f = arg;

	f->timer_armed = false;
	if (f->phase == PHASE_WATERMARK && feed_watermark_by_pollout(f)) {
		if (!feed_pool_empty(f->pool))
			wait_low(f);
		return;
	}
	if (f->phase != PHASE_WATERMARK || below_watermark(f))
		flush(f);
	if (!feed_pool_empty(f->pool))
		arm_timer(f);
}

/* Take the pool if the phase says it goes now, or arm the timer; true if a batch waits. */
static bool decide(struct feed *f)
{
	bool now = false;

	switch (f->phase) {
	case PHASE_BOOT:
	case PHASE_ALWAYS:
		now = feed_pool_full(f->pool) || feed_pool_credit(f->pool) >= f->cfg->feed.batch_bits;
		break;
	case PHASE_MIX:
	case PHASE_WATERMARK:
		/* The pool folds data in once full; the timer (or POLLOUT) decides. */
		break;
	}
	/* A full queue leaves the pool be: what comes next is folded in, as in a full pool
	 * that waits for the timer. */
	if (now && !feed_pool_empty(f->pool))
		take(f);
	if (!feed_pool_empty(f->pool)) {
		if (f->phase == PHASE_WATERMARK && feed_watermark_by_pollout(f))
			wait_low(f);
		else if (!f->timer_armed)
			arm_timer(f);
	}
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

static void stop_waits(struct feed *f)
{
	if (f->timer_armed) {
		event_del(f->timer);
		f->timer_armed = false;
	}
	if (f->low_armed) {
		event_del(f->low_ev);
		f->low_armed = false;
	}
}

static void log_watermark(const struct feed *f)
{
	const char *from;
	int wm = feed_watermark(f, &from);

	if (f->phase != PHASE_WATERMARK)
		return;
	if (feed_watermark_by_pollout(f))
		log_notice("low watermark %d bits (%s): fed when the kernel signals POLLOUT on %s",
			   wm, from, KERNEL_RANDOM_DEV);
	else
		log_notice("low watermark %d bits (%s): entropy_avail looked at every %g s while "
			   "data is pending", wm, from, f->cfg->feed.batch_interval);
}

static void set_watch_fd(struct feed *f, int fd)
{
	struct event_base *base = event_get_base(f->run);

	if (f->ready_ev)
		event_free(f->ready_ev);
	if (f->low_ev)
		event_free(f->low_ev);
	f->ready_ev = f->low_ev = NULL;
	f->low_armed = false;
	if (f->own_watch_fd && f->watch_fd >= 0)
		close(f->watch_fd);
	f->watch_fd = fd;
	f->own_watch_fd = false;
	if (fd < 0)
		return;
	f->ready_ev = event_new(base, fd, EV_READ, ready_cb, f);
	f->low_ev = event_new(base, fd, EV_WRITE, low_cb, f);
}

void feed_use_kernel(struct feed *f, const struct kernel_state *ks, int fd)
{
	stop_waits(f);
	f->ks = *ks;
	f->saw_not_ready = !f->ks.crng_ready;
	f->phase = feed_choose(f->cfg->feed.mode, &f->ks);
	set_watch_fd(f, fd);
	watch_ready(f);
}

void feed_init(struct feed *f, struct event_base *base, const struct config *cfg,
	       struct pool *pool, struct sink *sink)
{
	struct kernel_state ks;
	int fd;

	memset(f, 0, sizeof(*f));
	f->cfg = cfg;
	f->pool = pool;
	f->sink = sink;
	f->watch_fd = -1;
	f->run = event_new(base, -1, 0, run_cb, f);
	f->timer = evtimer_new(base, timer_cb, f);
	f->start_ns = util_mono_ns();
	kernel_probe(&ks);
	/* Only its poll() answers are wanted, which do not depend on the mode: opened for
	 * writing, it cannot be read, and so can never set off the kernel's jitter loop. */
	fd = open(KERNEL_RANDOM_DEV, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		log_errno(LOG_INFO, "cannot open %s to watch the kernel's signals; the CRNG's "
			  "state is asked at each batch instead", KERNEL_RANDOM_DEV);
	feed_use_kernel(f, &ks, fd);
	f->own_watch_fd = fd >= 0;
	log_notice("kernel %u.%u: %s", f->ks.major, f->ks.minor, f->ks.why);
	log_notice("kernel: %s", kernel_meaning(&f->ks));
	log_notice("feeding %s: mode %s, phase %s: %s", feed_sink_name(sink),
		   config_mode_name_feed(cfg->feed.mode), feed_phase_name(f->phase),
		   feed_phase_meaning(f->phase));
	log_watermark(f);
}

void feed_reconfigure(struct feed *f, const struct config *cfg)
{
	enum feed_phase old = f->phase;

	f->cfg = cfg;
	if (!f->ks.crng_ready && kernel_crng_ready())
		note_ready(f);
	f->phase = feed_choose(cfg->feed.mode, &f->ks);
	if (f->phase != old) {
		log_notice("feed phase now %s: %s", feed_phase_name(f->phase),
			   feed_phase_meaning(f->phase));
		log_watermark(f);
	}
	stop_waits(f);
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
		feed_pool_batch_wipe(&f->queue[i]);
	f->queued = 0;
	if (f->run)
		set_watch_fd(f, -1);
	if (f->run)
		event_free(f->run);
	f->run = NULL;
	if (f->timer)
		event_free(f->timer);
	f->timer = NULL;
}
