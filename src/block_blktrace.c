/* block_blktrace: the blktrace API as a completion source.
 *
 * Per disk: BLKTRACESETUP with a completions-only mask, BLKTRACESTART, then the per-CPU relay
 * files <debugfs>/block/<name>/trace<N>, read when poll says a sub-buffer filled and by a
 * drain timer (a relay file is readable only when a sub-buffer fills, and nothing tells us
 * of the records before that). The timer runs every DRAIN_MS while drains find records;
 * each one that finds none doubles its interval, up to DRAIN_MAX_MS, so that an idle disk
 * wakes an idle daemon rarely, and a lone completion is still handed on within DRAIN_MAX_MS
 * (stopping the timer altogether would leave it until 680 more fill the sub-buffer). The
 * device node is opened only for the ioctls and closed again: holding it open would keep a
 * loop device from detaching.
 *
 * A trace outlives the process that set it up, so every disk is written to a state file in
 * the runtime directory before BLKTRACESETUP and removed from it after BLKTRACETEARDOWN; the
 * next instance tears down whatever a crashed one left there. The process that makes the
 * privileged steps keeps it (the privileged process: the collector can write nothing), held
 * with flock(2) for its life, so that a second instance never tears down a live one's traces.
 *
 * EBUSY (someone else's trace), EPERM (relay files closed by kernel lockdown) and no debugfs
 * are reported to the caller as states; on any failure nothing of ours is left on the disk. */
#include "autoconf.h"

#include "block_blktrace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "block_blktrace_parse.h"
#include "log.h"
#include "priv.h"
#include "priv_ops.h"
#include "util.h"

#define DRAIN_MS 250
#define DRAIN_MAX_MS 8000
#define READS_PER_FILE 16
#define BATCH 1024

struct relay {
	struct tdev *dev;
	int fd;
	unsigned cpu;
	struct event *ev;
	struct blkt_parser parser;
};

/* One traced disk. */
struct tdev {
	struct tdev *next;
	struct blkt_backend *b;
	char name[64];
	char trace_name[32]; /* its directory under <debugfs>/block */
	unsigned major, minor;
	uint32_t kdev;
	struct relay *relays;
	size_t nrelays;
	uint64_t foreign; /* records naming another device */
};

struct blkt_backend {
	struct event_base *base;
	block_samples_fn *fn;
	void *ctx;
	struct tdev *devs;
	struct event *drain;
	unsigned drain_ms; /* the drain timer's interval now */
	size_t nbatch;
	struct block_sample batch[BATCH];
	unsigned char buf[65536];
};

static struct log_ratelimit rl_trace = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_read = LOG_RATELIMIT_INIT;

/* ---- devices ---- */

/* The first debugfs mount point, or NULL. */
static char *debugfs_dir(void)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	char *dir = NULL;

	if (!f)
		return NULL;
	while ((m = getmntent(f)))
		if (strcmp(m->mnt_type, "debugfs") == 0) {
			dir = xstrdup(m->mnt_dir);
			break;
		}
	endmntent(f);
	return dir;
}

static struct tdev *find_dev(struct blkt_backend *b, unsigned major, unsigned minor)
{
	for (struct tdev *d = b->devs; d; d = d->next)
		if (d->major == major && d->minor == minor)
			return d;
	return NULL;
}

/* ---- reading ---- */

static void flush_batch(struct blkt_backend *b)
{
	if (!b->nbatch)
		return;
	block_backend_samples_sort(b->batch, b->nbatch);
	b->fn(b->ctx, b->batch, b->nbatch);
	util_wipe(b->batch, b->nbatch * sizeof(b->batch[0]));
	b->nbatch = 0;
}

static void on_record(void *ctx, uint32_t device, uint64_t t_ns)
{
	struct relay *r = ctx;
	struct tdev *d = r->dev;
	struct blkt_backend *b = d->b;

	/* A completion read before the kernel wrote its time: this relay file's device. */
	if (t_ns == BLKT_NO_TIME)
		device = d->kdev;
	if (device != d->kdev) {
		d->foreign++;
		return;
	}
	if (b->nbatch == BATCH)
		flush_batch(b);
	b->batch[b->nbatch].t_ns = t_ns;
	b->batch[b->nbatch].kdev = device;
	b->nbatch++;
}

static void relay_close(struct relay *r)
{
	if (r->ev)
		event_free(r->ev);
	if (r->fd >= 0)
		close(r->fd);
	r->ev = NULL;
	r->fd = -1;
}

/* Read what a relay file has; the bytes read. */
static size_t drain_relay(struct blkt_backend *b, struct relay *r)
{
	size_t total = 0;

	for (int i = 0; i < READS_PER_FILE && r->fd >= 0; i++) {
		ssize_t n = read(r->fd, b->buf, sizeof(b->buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN) {
			log_limited(&rl_read, LOG_WARNING,
				    "block/%s: reading relay file trace%u: %s; closed", r->dev->name,
				    r->cpu, strerror(errno));
			relay_close(r);
		}
		if (n <= 0)
			break;
		total += (size_t)n;
		blkt_parse(&r->parser, b->buf, (size_t)n, on_record, r);
		util_wipe(b->buf, (size_t)n);
	}
	return total;
}

static void drain_in(struct blkt_backend *b, unsigned ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	b->drain_ms = ms;
	event_add(b->drain, &tv);
}

/* Drain every relay file, and set the drain timer: soon if there was something, else later
 * than last time. */
static void drain_all(struct blkt_backend *b)
{
	size_t n = 0;

	for (struct tdev *d = b->devs; d; d = d->next)
		for (size_t i = 0; i < d->nrelays; i++)
			n += drain_relay(b, &d->relays[i]);
	flush_batch(b);
	if (!b->devs)
		event_del(b->drain);
	else
		drain_in(b, n ? DRAIN_MS : b->drain_ms * 2 > DRAIN_MAX_MS ? DRAIN_MAX_MS
									: b->drain_ms * 2);
}

static void relay_cb(evutil_socket_t fd, short what, void *arg)
{
	drain_all(arg);
}

static void drain_cb(evutil_socket_t fd, short what, void *arg)
{
	drain_all(arg);
}

static void log_parser(const struct tdev *d)
{
	struct blkt_parser sum = {0};

	for (size_t i = 0; i < d->nrelays; i++) {
		const struct blkt_parser *p = &d->relays[i].parser;

		sum.completions += p->completions;
		sum.notify += p->notify;
		sum.other += p->other;
		sum.half += p->half;
		sum.half_untimed += p->half_untimed;
		sum.garbage += p->garbage;
		sum.bad_version += p->bad_version;
	}
	log_info("block/%s: blktrace read %llu completions, %llu notify and %llu other records; "
		 "%llu read half-written (%llu of them counted as completions, without a time); "
		 "%llu bytes of "
		 "garbage, %llu headers of another version, %llu of another device",
		 d->name, (unsigned long long)sum.completions, (unsigned long long)sum.notify,
		 (unsigned long long)sum.other, (unsigned long long)sum.half,
		 (unsigned long long)sum.half_untimed,
		 (unsigned long long)sum.garbage,
		 (unsigned long long)sum.bad_version, (unsigned long long)d->foreign);
}

static void free_dev(struct tdev *d)
{
	for (size_t i = 0; i < d->nrelays; i++)
		relay_close(&d->relays[i]);
	free(d->relays);
	free(d);
}

/* ---- start and stop ---- */

static void open_relays(struct blkt_backend *b, struct tdev *d, const char *dbg, int *err)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	*err = 0;
	if (ncpu < 1)
		ncpu = 1;
	d->relays = xcalloc((size_t)ncpu, sizeof(*d->relays));
	for (unsigned cpu = 0; cpu < (unsigned)ncpu; cpu++) {
		struct relay *r = &d->relays[d->nrelays];
		int fd;

		/* From the privileged process: debugfs is root's, the collector is not. */
		fd = priv_relay_open(dbg, d->trace_name, cpu);
		if (fd < 0) {
			/* ENOENT for a CPU that is not online; anything else is the answer. */
			if (!*err || *err == ENOENT)
				*err = errno;
			continue;
		}
		r->dev = d;
		r->fd = fd;
		r->cpu = cpu;
		blkt_parser_init(&r->parser);
		r->parser.completions_only = true;
		r->ev = event_new(b->base, fd, EV_READ | EV_PERSIST, relay_cb, b);
		d->nrelays++;
		if (!r->ev || event_add(r->ev, NULL) < 0) {
			*err = ENOMEM;
			break;
		}
	}
	if (d->nrelays && *err != ENOMEM)
		*err = 0;
}

/* ---- tracing a disk ---- */

bool blkt_start(struct blkt_backend *b, const char *name, unsigned major, unsigned minor,
		char *state, size_t size)
{
	char trace_name[PRIV_DISK_NAME], *dbg;
	struct tdev *d;
	int e, td, stage;
	bool opened;

	if (find_dev(b, major, minor))
		return true;
	dbg = debugfs_dir();
	if (!dbg) {
		snprintf(state, size, "ENOENT: debugfs is not mounted so blktrace has no relay "
			 "files: mount it (mount -t debugfs none /sys/kernel/debug) or set "
			 "sources.block.backend = \"tracepoint\"");
		return false;
	}
	e = priv_blktrace_start(name, major, minor, trace_name, &stage);
	if (e) {
		free(dbg);
		if (stage == 0 && e == EACCES && priv_refused())
			snprintf(state, size, "blktrace on %s: " PRIV_REFUSED_HINT, name);
		else if (stage == 0)
			snprintf(state, size, "cannot open /dev/%s: %s", name, strerror(e));
		else if (stage == 1 && e == EBUSY)
			snprintf(state, size, "EBUSY: another blktrace is running on the device; "
				 "tried again later (or set sources.block.backend = "
				 "\"tracepoint\")");
		else
			snprintf(state, size, "%s failed: %s",
				 stage == 1 ? "BLKTRACESETUP" : "BLKTRACESTART", strerror(e));
		return false;
	}
	d = xcalloc(1, sizeof(*d));
	d->b = b;
	strlcopy(d->name, name, sizeof(d->name));
	strlcopy(d->trace_name, trace_name, sizeof(d->trace_name));
	d->major = major;
	d->minor = minor;
	d->kdev = BLOCK_KDEV(major, minor);
	open_relays(b, d, dbg, &e);
	if (e) {
		free_dev(d);
		td = priv_blktrace_stop(name, major, minor, true, &opened);
		log_limited(&rl_trace, LOG_INFO,
			    "block/%s: BLKTRACESETUP and BLKTRACESTART done; relay files under "
			    "%s/block/%s: %s; BLKTRACESTOP and BLKTRACETEARDOWN %s",
			    name, dbg, trace_name, strerror(e), td ? strerror(td) : "done");
		if (e == EPERM || e == EACCES)
			snprintf(state, size, "EPERM: the kernel refuses blktrace's relay files "
				 "(lockdown or Secure Boot): set sources.block.backend = "
				 "\"tracepoint\" or policy.block.mode = \"disabled\"");
		else if (e == ENOENT)
			snprintf(state, size, "ENOENT: no relay files under %s/block (debugfs "
				 "without blktrace?): set sources.block.backend = \"tracepoint\"",
				 dbg);
		else
			snprintf(state, size, "relay files: %s (errno %d): set sources.block.backend "
				 "= \"tracepoint\"", strerror(e), e);
		free(dbg);
		return false;
	}
	d->next = b->devs;
	b->devs = d;
	drain_in(b, DRAIN_MS);
	log_info("block/%s: blktrace set up and started (completions only), %zu relay files "
		 "under %s/block/%s",
		 name, d->nrelays, dbg, d->trace_name);
	free(dbg);
	return true;
}

void blkt_stop(struct blkt_backend *b, unsigned major, unsigned minor)
{
	struct tdev *d = find_dev(b, major, minor);
	bool opened;
	int e, td;

	if (!d)
		return;
	e = priv_blktrace_stop(d->name, major, minor, false, &opened);
	/* What the last sub-buffers hold still counts. */
	drain_all(b);
	for (struct tdev **pp = &b->devs; *pp; pp = &(*pp)->next)
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	log_parser(d);
	if (!opened) {
		/* The disk is gone, and the kernel took its trace with it. */
		log_info("block/%s: /dev/%s: %s; the kernel removed the trace with the disk",
			 d->name, d->name, strerror(e));
	} else {
		td = priv_blktrace_stop(d->name, major, minor, true, &opened);
		if (td && td != EINVAL && td != ENXIO)
			log_warn("block/%s: BLKTRACETEARDOWN failed: %s", d->name, strerror(td));
		else
			log_info("block/%s: blktrace stopped and torn down", d->name);
	}
	free_dev(d);
	if (!b->devs)
		event_del(b->drain);
}

/* ---- the backend ---- */

struct blkt_backend *blkt_backend_new(struct event_base *base, const char *rundir,
				      block_samples_fn *fn, void *ctx)
{
	struct blkt_backend *b = xcalloc(1, sizeof(*b));

	b->base = base;
	b->fn = fn;
	b->ctx = ctx;
	b->drain = evtimer_new(base, drain_cb, b);
	/* Making the privileged steps itself, the daemon takes the state file now; with a
	 * privileged process, that process takes it at its first trace. */
	if (!priv_active())
		priv_ops_blktrace_take(rundir);
	return b;
}

void blkt_backend_free(struct blkt_backend *b)
{
	if (!b)
		return;
	while (b->devs)
		blkt_stop(b, b->devs->major, b->devs->minor);
	priv_ops_blktrace_release();
	if (b->drain)
		event_free(b->drain);
	util_wipe(b, sizeof(*b));
	free(b);
}
