/* daemon: the running entropyd — event loop, signals, reload, service manager. */
#include "autoconf.h"

#include "daemon.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "block.h"
#include "block_tp.h"
#include "config_policy.h"
#include "ctl.h"
#include "est_record.h"
#include "feed.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "feed_sink.h"
#include "kernel_boot.h"
#include "log.h"
#include "priv.h"
#include "priv_drop.h"
#include "priv_notify.h"
#include "priv_ops.h"
#include "priv_start.h"
#include "priv_trust.h"
#include "source_class.h"
#include "source_table.h"

struct daemon {
	const struct daemon_opts *opts;
	struct config *cfg;
	struct event_base *base;
	struct event *sig[5];
	struct event *watchdog;
	struct pool pool;
	struct sink sink;
	struct feed feed;
	struct source srcs[CLASS_COUNT];
	struct ctl *ctl;
	uint64_t reloads, reload_failures;
	uint64_t status_ns; /* when STATUS= was last sent */
	char *config_path;  /* the configuration file, absolute where it can be made so */
	char *device;       /* feed.device as opened at start: a reload does not change it */
	/* The boot record (kernel_boot.h): written in the initramfs (--initramfs), else read. */
	struct {
		int fd;             /* where this instance writes it; -1 none */
		char id[40];        /* this boot's id; "" not known */
		double started_s;   /* seconds from boot to this instance's start */
		bool ready_at_start;
		int needed_at_start;
		bool ready_written; /* written since the CRNG became ready */
		uint64_t written_ns;
		char *bytes;        /* read before the sandbox, parsed after */
		size_t len;
		struct kboot *read; /* the initramfs's, checked; NULL none */
	} boot;
};

/* STATUS= is readable by every user (systemctl status): counts that change with each key
 * press would tell keystroke timing, so after each flush it is refreshed at most every
 * STATUS_EVERY_NS; at start and reload at once. */
#define STATUS_EVERY_NS (10 * NS_PER_SEC)

static void status_now(struct daemon *d)
{
	struct inst_counters t;
	unsigned long long credited;
	/* Open ones, as the log's "started:" line counts them: not those that wait; of every
	 * row of status (open, waiting to be, or a name that matches nothing); and those whose
	 * health tests failed, which earn nothing. */
	size_t open = source_table_open(d->srcs, NULL, 0), all = feed_pipeline_count();
	size_t failing = feed_pipeline_failing();
	char fails[64] = "";
	const char *pattern, *key;

	/* The names given that match nothing are rows of status too. */
	for (int c = 0; c < CLASS_COUNT; c++)
		for (size_t i = 0; source_unmatched((enum src_class)c, i, &pattern, &key); i++)
			all++;

	d->status_ns = util_mono_ns();
	feed_pipeline_totals(&t);
	credited = (unsigned long long)llround(t.credited_bits);
	if (failing)
		snprintf(fails, sizeof(fails), ", %zu failing %s health tests", failing,
			 failing == 1 ? "its" : "their");
	priv_notify_status("%s: %zu of %zu %s open%s, %llu %s, %llu %s credited, %llu %s fed; CRNG %s",
		      feed_phase_name(d->feed.phase), open, all,
		      util_plural(all, "source", "sources"), fails, (unsigned long long)t.events,
		      util_plural(t.events, "event", "events"), credited, util_plural(credited, "bit", "bits"),
		      (unsigned long long)d->sink.credited, util_plural(d->sink.credited, "bit", "bits"),
		      d->feed.ks.crng_ready ? "ready" : "not ready");
}

/* ---- the boot record: what this instance did at this boot, or what the initramfs's did ---- */

/* Counts, the time to readiness and per source what it credited: never a time of an event. */
static void boot_save(struct daemon *d, bool ended)
{
	struct kboot *b;
	struct inst_info info;

	if (d->boot.fd < 0)
		return;
	b = xcalloc(1, sizeof(*b));
	strlcopy(b->boot_id, d->boot.id, sizeof(b->boot_id));
	b->started_s = d->boot.started_s;
	b->ran_s = (double)(util_mono_ns() - d->feed.start_ns) / 1e9;
	b->ended = ended;
	b->ready_at_start = d->boot.ready_at_start;
	b->needed_at_start = d->boot.needed_at_start;
	b->ready_after_s = d->feed.ready_after_ns ? (double)d->feed.ready_after_ns / 1e9 : -1;
	b->credited_bits = (double)d->sink.credited;
	b->credited_before_ready = d->boot.ready_at_start ? 0 : (double)d->feed.credited_before_ready;
	if (!d->feed.ks.crng_ready)
		b->credited_before_ready = b->credited_bits;
	for (size_t i = 0; feed_pipeline_info(i, &info) && b->n_sources < KBOOT_MAX_SOURCES; i++) {
		struct kboot_source *src = &b->src[b->n_sources++];

		strlcopy(src->cls, source_class_name(info.cls), sizeof(src->cls));
		util_printable(src->name, sizeof(src->name), info.name);
		src->events = info.c.events;
		src->credited_bits = info.c.credited_bits;
	}
	if (kernel_boot_write(d->boot.fd, b) < 0)
		log_errno(LOG_WARNING, "boot record %s: cannot write it", d->opts->boot_record);
	d->boot.written_ns = util_mono_ns();
	d->boot.ready_written = d->feed.ks.crng_ready;
	free(b);
}

/* In the collector, while it may still open what root may: make the record (in the
 * initramfs), or read the initramfs's, to be parsed once the sandbox is up. */
static void boot_prepare(struct daemon *d)
{
	char why[256];
	struct timespec ts;

	if (!kernel_boot_id(d->boot.id, sizeof(d->boot.id)))
		d->boot.id[0] = '\0';
	d->boot.started_s = clock_gettime(CLOCK_BOOTTIME, &ts) == 0
				    ? (double)ts.tv_sec + (double)ts.tv_nsec / 1e9
				    : -1;
	d->boot.ready_at_start = d->feed.ks.crng_ready;
	d->boot.needed_at_start = d->feed.ks.crng_ready ? 0 : kernel_bits_needed(&d->feed.ks);
	if (d->opts->initramfs) {
		d->boot.fd = kernel_boot_create(d->opts->boot_record, why, sizeof(why));
		if (d->boot.fd < 0)
			log_warn("boot record %s: %s: the service's instance will not know what "
				 "this one did", d->opts->boot_record, why);
		return;
	}
	d->boot.bytes = kernel_boot_read(d->opts->boot_record, &d->boot.len, why, sizeof(why));
	if (!d->boot.bytes && errno != ENOENT)
		log_warn("boot record %s: ignored: %s", d->opts->boot_record, why);
}

/* Inside the sandbox: the bytes read are checked like any input from outside. */
static void boot_load(struct daemon *d)
{
	struct kboot b;
	char why[256];

	if (!d->boot.bytes)
		return;
	if (kernel_boot_parse(d->boot.bytes, d->boot.len, d->boot.id[0] ? d->boot.id : NULL, &b, why,
			sizeof(why)) < 0) {
		log_warn("boot record %s: ignored: %s", d->opts->boot_record, why);
	} else {
		d->boot.read = xmalloc(sizeof(b));
		*d->boot.read = b;
		log_notice("boot record %s: entropyd ran in the initramfs for %.1f s and credited "
			   "%.0f bits, %.0f before the CRNG was ready (%s)", d->opts->boot_record,
			   b.ran_s, b.credited_bits, b.credited_before_ready,
			   b.ready_at_start ? "ready when it started"
			   : b.ready_after_s >= 0 ? "which it saw become ready"
						 : "not ready when it stopped");
	}
	free(d->boot.bytes);
	d->boot.bytes = NULL;
}

static void update_status(void *arg)
{
	struct daemon *d = arg;

	feed_pipeline_kernel_counts(!d->feed.ks.credit_until_ready || !d->feed.ks.crng_ready);
	if (util_mono_ns() - d->status_ns >= STATUS_EVERY_NS)
		status_now(d);
	/* When the CRNG became ready, and every STATUS_EVERY_NS: a record for the service
	 * even if this instance is killed before it can write its last. */
	if (d->boot.fd >= 0 && ((d->feed.ks.crng_ready && !d->boot.ready_written) ||
				util_mono_ns() - d->boot.written_ns >= STATUS_EVERY_NS))
		boot_save(d, false);
}

/* Counts only: never a timestamp of an individual event. */
static void log_summary(struct daemon *d, int prio)
{
	struct inst_counters t;
	struct inst_info info;

	for (size_t i = 0; feed_pipeline_info(i, &info); i++) {
		char sampling[96] = "";

		if (info.sampling && isnan(info.arrival_rate))
			snprintf(sampling, sizeof(sampling), ", sampling %s (1 in %.0f kept, arrival "
				 "rate not measured)", info.sampling, 1 / info.sample_ratio);
		else if (info.sampling)
			snprintf(sampling, sizeof(sampling), ", sampling %s (1 in %.0f kept of %.0f/s)",
				 info.sampling, 1 / info.sample_ratio, info.arrival_rate);
		log_msg(prio,
			"%s/%s: kind %s, state %s, backend %s, policy %s, health %s, symbols %s, "
			"%llu %s, "
			"%llu skipped, %llu %s mixed, %.1f bits estimated, %.1f bits credited%s",
			source_class_name(info.cls), info.name, info.kind, info.state,
			info.backend ? info.backend : source_class_backend(d->cfg, info.cls),
			config_mode_name_policy(info.rule.mode), info.health,
			info.jiffy_ns ? "sub-jiffy" : "full", (unsigned long long)info.c.events,
			util_plural(info.c.events, "event", "events"),
			(unsigned long long)info.c.skipped, (unsigned long long)info.c.mixed_bytes,
			util_plural(info.c.mixed_bytes, "byte", "bytes"), info.c.estimated_bits,
			info.c.credited_bits, sampling);
	}
	source_table_summary(d->srcs, prio);
	if (d->feed.ready_after_ns)
		log_msg(prio, "kernel: CRNG became ready %.1f s after start",
			(double)d->feed.ready_after_ns / 1e9);
	else
		log_msg(prio, "kernel: CRNG %s; feed phase %s",
			d->feed.ks.crng_ready ? "was ready when entropyd started" : "not ready yet",
			feed_phase_name(d->feed.phase));
	feed_pipeline_totals(&t);
	log_msg(prio,
		"total: %llu %s, %.1f bits estimated, %.1f bits credited by policy; "
		"%s sink: %llu %s, %llu %s, %llu %s credited, %llu %s",
		(unsigned long long)t.events, util_plural(t.events, "event", "events"), t.estimated_bits,
		t.credited_bits, feed_sink_name(&d->sink), (unsigned long long)d->sink.feeds,
		util_plural(d->sink.feeds, "batch", "batches"), (unsigned long long)d->sink.mixed_bytes,
		util_plural(d->sink.mixed_bytes, "byte", "bytes"), (unsigned long long)d->sink.credited,
		util_plural(d->sink.credited, "bit", "bits"), (unsigned long long)d->sink.errors,
		util_plural(d->sink.errors, "error", "errors"));
}

/* What a reload says at notice level or above, after the file's own notices: a name that
 * matches nothing, a change that takes effect at restart. */
static void keep_notice(int prio, const char *msg, void *arg)
{
	struct config_errors *errs = arg;

	if (prio > LOG_NOTICE)
		return;
	errs->note = xreallocarray(errs->note, errs->n_note + 1, sizeof(*errs->note));
	errs->note[errs->n_note++] = xasprintf("%s: %s", prio <= LOG_ERR ? "error"
							 : prio == LOG_WARNING ? "warning"
									       : "notice",
					       msg);
}

/* Re-read the configuration (SIGHUP, or the control socket's ops). On any error the running
 * one stays, errs lists every error (the caller frees it) and -1 is returned; otherwise
 * errs->note lists every notice and warning of the file and of applying it. */
static int reload(void *arg, struct config_errors *errs)
{
	struct daemon *d = arg;
	struct config *next;

	char why[512];

	priv_notify_reloading();
	if (!priv_trust_config(d->opts->config_path, why, sizeof(why))) {
		/* The privileged process refuses it too: say so here, where entropyctl asks. */
		errs->msg = xreallocarray(errs->msg, 1, sizeof(*errs->msg));
		errs->msg[0] = xasprintf("%s (only root may be able to write the configuration)",
					 why);
		errs->n = 1;
		next = NULL;
	} else {
		next = config_load(d->opts->config_path, errs);
	}
	if (!next) {
		for (size_t i = 0; i < errs->n; i++)
			log_err("%s", errs->msg[i]);
		log_err("reload rejected (%zu %s): the running configuration stays", errs->n,
			util_plural(errs->n, "error", "errors"));
		d->reload_failures++;
	} else {
		for (size_t i = 0; i < errs->n_note; i++)
			log_notice("%s", errs->note[i]);
		log_tee(keep_notice, errs);
		if (d->opts->record_dir) {
			free(next->record.dir);
			next->record.dir = xstrdup(d->opts->record_dir);
		}
		/* Before any new open: the privileged process checks them against its own. */
		if (priv_reload() < 0)
			log_errno(LOG_WARNING, "the privileged process kept its configuration");
		if (strcmp(next->feed.device, d->device) != 0)
			log_warn("feed.device changed to %s: takes effect at restart",
				 next->feed.device);
		if (strcmp(next->collector.user, d->cfg->collector.user) != 0)
			log_warn("collector.user changed to %s: takes effect at restart",
				 next->collector.user);
		ctl_reconfigure(d->ctl, next);
		feed_pipeline_reconfigure(next);
		feed_reconfigure(&d->feed, next);
		source_table_reload(d->srcs, next);
		config_free(d->cfg);
		d->cfg = next;
		d->reloads++;
		log_tee(NULL, NULL);
		log_notice("configuration reloaded from %s", d->opts->config_path);
	}
	priv_notify_ready();
	status_now(d);
	return next ? 0 : -1;
}

static void fill_status(void *arg, struct ctl_status *out)
{
	struct daemon *d = arg;
	const struct feed *f = &d->feed;

	feed_poll_ready(&d->feed); /* not only as of the last batch */
	memset(out, 0, sizeof(*out));
	out->uptime_ns = util_mono_ns() - f->start_ns;
	out->feed_mode = config_mode_name_feed(d->cfg->feed.mode);
	out->feed_phase = feed_phase_name(f->phase);
	out->sink = feed_sink_name(&d->sink);
	out->kernel_major = f->ks.major;
	out->kernel_minor = f->ks.minor;
	out->kernel_semantics = kernel_semantics_name(&f->ks);
	out->kernel_evidence = kernel_evidence_name(&f->ks);
	out->kernel_reason = f->ks.why;
	out->crng_ready = f->ks.crng_ready;
	out->credit_counts = !f->ks.credit_until_ready || !f->ks.crng_ready;
	feed_pipeline_kernel_counts(out->credit_counts);
	out->entropy_avail = kernel_entropy_avail();
	out->ready_after_s = f->ready_after_ns ? (double)f->ready_after_ns / 1e9 : -1;
	/* Ready before this instance started: the initramfs's saw when, if it did. */
	if (out->ready_after_s < 0 && d->boot.ready_at_start && d->boot.read)
		out->ready_after_s = d->boot.read->ready_after_s;
	out->boot = d->boot.read;
	out->credit_until_ready = f->ks.credit_until_ready;
	out->credited_before_ready = (double)f->credited_before_ready;
	out->feeds = d->sink.feeds;
	out->fed_bytes = d->sink.mixed_bytes;
	out->fed_credit_bits = d->sink.credited;
	out->reseeds = d->sink.reseeds;
	out->feed_errors = d->sink.errors;
	out->block_tracepoint = block_unsampled(&d->srcs[CLASS_BLOCK], &out->block_unsampled);
	out->reloads = d->reloads;
	out->reload_failures = d->reload_failures;
	out->config = d->config_path;
}

/* What the control socket asks of the daemon. */
static const struct ctl_ops ctl_ops = {.status = fill_status, .reload = reload};

static void signal_cb(evutil_socket_t signo, short what, void *arg)
{
	struct daemon *d = arg;

	switch (signo) {
	case SIGHUP: {
		struct config_errors errs = {0};

		reload(d, &errs);
		config_errors_free(&errs);
		break;
	}
	case SIGUSR1:
		log_summary(d, LOG_NOTICE);
		break;
	default:
		log_notice("signal %d: flushing and exiting", (int)signo);
		priv_notify_stopping();
		event_base_loopbreak(d->base);
		break;
	}
}

static void watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	priv_notify_watchdog();
}

static int setup_events(struct daemon *d)
{
	static const int signals[] = {SIGHUP, SIGTERM, SIGINT, SIGUSR1};
	uint64_t wd_usec = priv_notify_watchdog_usec();

	d->base = event_base_new();
	if (!d->base) {
		log_err("cannot create the event loop");
		return -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++) {
		d->sig[i] = evsignal_new(d->base, signals[i], signal_cb, d);
		event_add(d->sig[i], NULL);
	}
	if (wd_usec) {
		/* Half the interval, as sd_watchdog_enabled(3) advises. */
		struct timeval tv = {.tv_sec = (time_t)(wd_usec / 2 / 1000000),
				     .tv_usec = (suseconds_t)(wd_usec / 2 % 1000000)};

		d->watchdog = event_new(d->base, -1, EV_PERSIST, watchdog_cb, d);
		event_add(d->watchdog, &tv);
	}
	return 0;
}

static void teardown(struct daemon *d)
{
	ctl_stop(d->ctl);
	for (size_t i = 0; i < ARRAY_SIZE(d->sig); i++)
		if (d->sig[i])
			event_free(d->sig[i]);
	if (d->watchdog)
		event_free(d->watchdog);
	feed_fini(&d->feed);
	feed_pipeline_fini();
	feed_sink_close(&d->sink);
	if (d->base)
		event_base_free(d->base);
	config_free(d->cfg);
}

static void report_ready(const struct daemon_opts *opts, int status)
{
	unsigned char b = (unsigned char)status;

	if (opts->ready_fd >= 0) {
		if (write(opts->ready_fd, &b, 1) != 1)
			log_errno(LOG_WARNING, "cannot report start-up to the parent");
		close(opts->ready_fd);
	}
}

/* Before the fork, with every capability still there: what only the privileged process
 * could do later, done once. The watchdog's interval is read in the process systemd started;
 * a blktrace a crashed instance left is torn down (the collector cannot); tracefs is mounted
 * if the tracepoint may be used and it is not. */
static void before_fork(const struct config *cfg)
{
	char *rundir, err[256];
	unsigned id;

	(void)priv_notify_watchdog_usec();
	if (!config_policy_class_runs(cfg, CLASS_BLOCK))
		return;
	rundir = priv_ops_rundir();
	priv_ops_blktrace_cleanup(rundir);
	free(rundir);
	if (cfg->block.backend != BACKEND_BLKTRACE && !block_tp_tracepoint_id(&id, err, sizeof(err)))
		log_debug("block: %s", err);
}

/* The recording directory, made if missing while the collector is still root, and given to
 * the user it becomes (who writes the recordings), through descriptors (priv_trust.h); one
 * that exists is left as it is, and must be writable by that user. Refused (-1, said) where
 * anyone but root could replace it, or anyone may write it. */
static int record_dir_for_collector(const struct config *cfg)
{
	uid_t uid = 0;
	gid_t gid = 0;
	char why[512];

	/* without its user the collector does not start (priv_collector_lockdown says so) */
	if (!cfg->record.dir || !cfg->record.dir[0] ||
	    !priv_drop_lookup(cfg->collector.user, &uid, &gid))
		return 0;
	switch (priv_trust_record_dir(cfg->record.dir, uid, gid, why, sizeof(why))) {
	case TRUST_DIR_READY:
		break;
	case TRUST_DIR_NOT_USERS:
		log_warn("%s: the collector writes there as user %s: give it the directory "
			 "(chown %s %s)", why, cfg->collector.user, cfg->collector.user,
			 cfg->record.dir);
		break;
	case TRUST_DIR_MISSING:
		log_warn("%s", why);
		break;
	case TRUST_DIR_REFUSED:
		log_err("%s (only root may be able to replace the directory the collector "
			"records in)", why);
		return -1;
	}
	return 0;
}

int daemon_run(const struct daemon_opts *opts, struct config *cfg)
{
	struct daemon *d = xcalloc(1, sizeof(*d));
	int status = EXIT_OK;

	d->opts = opts;
	d->cfg = cfg;
	d->sink.fd = -1; /* teardown closes it; never fd 0 */
	d->device = xstrdup(cfg->feed.device);
	d->boot.fd = -1;
	d->config_path = realpath(opts->config_path, NULL);
	if (!d->config_path)
		d->config_path = xstrdup(opts->config_path);
	/* No core dumps: memory holds pending pool data and recent symbols (timing). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		log_errno(LOG_WARNING, "cannot turn off core dumps");
	signal(SIGPIPE, SIG_IGN);
	log_hook_libevent();
	if (feed_sink_open(&d->sink, opts->dry_run ? SINK_DRY_RUN : SINK_KERNEL,
		      cfg->feed.device) < 0) {
		status = EXIT_STARTUP;
		goto out;
	}
	before_fork(cfg);
	/* From here on this is the collector; the parent answers its privileged requests. */
	switch (priv_start(cfg, d->config_path, d->sink.fd, opts->ready_fd, &status)) {
	case -1:
		status = EXIT_STARTUP;
		goto out;
	case 1:
		/* The privileged process, once the collector is gone; it freed cfg. */
		d->cfg = NULL;
		goto done;
	}
	d->sink.fd = -1;
	if (setup_events(d) < 0) {
		status = EXIT_STARTUP;
		goto out;
	}
	priv_watch(d->base);
	feed_pool_init(&d->pool);
	feed_init(&d->feed, d->base, cfg, &d->pool, &d->sink);
	d->feed.after_flush = update_status;
	d->feed.after_flush_arg = d;
	/* Sources add to the pool in their read callbacks; the sink's ioctl runs later, from
	 * the feed's own event. */
	feed_pipeline_init(cfg, &d->pool, feed_want, &d->feed);
	est_record_flush_on(d->base); /* recordings reach their files within seconds */
	feed_pipeline_kernel_counts(!d->feed.ks.credit_until_ready || !d->feed.ks.crng_ready);
	feed_pipeline_boot_allowance(kernel_bits_needed(&d->feed.ks));
	boot_prepare(d);
	/* The control socket gets its group while the collector may still change it. */
	d->ctl = ctl_start(d->base, cfg, &ctl_ops, d);
	if (!d->ctl || record_dir_for_collector(cfg) < 0 ||
	    priv_start_lockdown(cfg, d->opts->config_path) < 0) {
		status = EXIT_STARTUP;
		goto out;
	}
	boot_load(d);
	if (source_table_start(d->srcs, d->base, cfg) < 0) {
		source_table_stop(d->srcs);
		status = EXIT_STARTUP;
		goto out;
	}
	priv_notify_ready();
	report_ready(opts, EXIT_OK);
	status_now(d);
	boot_save(d, false);
	{
		char not_open[512];
		size_t n = source_table_open(d->srcs, not_open, sizeof(not_open));

		log_notice("started: %zu %s open%s%s", n, util_plural(n, "source", "sources"),
			   not_open[0] ? "; could not open " : "", not_open);
	}

	event_base_dispatch(d->base);

	feed_flush(&d->feed);
	log_summary(d, LOG_NOTICE);
	boot_save(d, true);
	source_table_stop(d->srcs);
out:
	if (status != EXIT_OK)
		report_ready(opts, status);
	priv_close();
done:
	if (d->boot.fd >= 0)
		close(d->boot.fd);
	free(d->boot.bytes);
	free(d->boot.read);
	teardown(d);
	free(d->config_path);
	free(d->device);
	util_wipe(d, sizeof(*d));
	free(d);
	return status;
}
