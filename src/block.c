/* block: block-device I/O completions as a timing source, one instance per disk.
 *
 * Disks are the entries of /sys/block that the configured names or globs select, or with
 * [ "auto" ] every whole physical disk: not loop, ram, zram, or a device-mapper/md stack,
 * whose completions are counted already on the disks below, nor a network-backed disk
 * (iSCSI, NVMe over Fabrics, NBD, RBD...), whose timing is the network's; block_disks.c
 * tells them apart from sysfs. Disks that appear, change or go away are picked up by a
 * rescan on the kernel's block uevents (netlink), or every RESCAN_S seconds where that
 * socket cannot be had.
 *
 * Completions come from one of two backends: the block:block_rq_complete tracepoint
 * (block_tp.c), or blktrace (block_blktrace.c) per disk. The backend in use is logged and is
 * each instance's state; a disk the backend cannot trace yet (EBUSY, EPERM, no debugfs)
 * stays attached with that state and is retried on a slow, backing-off timer. */
#include "autoconf.h"

#include "block.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "block_blktrace.h"
#include "block_disks.h"
#include "block_tp.h"
#include "config_policy.h"
#include "feed_pipeline.h"
#include "log.h"
#include "priv_ops.h"
#include "util.h"

#define RESCAN_DELAY_MS 100 /* uevents come in bursts: one rescan after the burst */
#define RESCAN_S 30         /* without uevents, how often /sys/block is read again */
#define RETRY_MIN_S 30      /* first retry of a disk the backend could not trace */
#define RETRY_MAX_S 600
#define CLOCK_SLACK_NS 10000000ull

/* A network-backed disk that "auto" passes over: said once while it is there. */
struct passed {
	struct passed *next;
	bool seen;
	char name[NAME_MAX + 1];
};

/* One disk: the driver's part of its instance (src_inst.drv). Open means traced; a disk the
 * backend cannot trace yet retries (EBUSY, EPERM), one stacked on a traced disk waits. */
struct disk {
	struct block_disk_info info;
	uint32_t kdev;
	bool traced; /* the backend delivers its completions */
	char below[NAME_MAX + 1]; /* a traced disk it is stacked on: not traced itself */
	uint64_t last_t, out_of_order, ahead;
};

struct block_state {
	struct source *src;
	enum block_backend configured; /* what the config asks for */
	enum block_backend using;      /* TRACEPOINT or BLKTRACE */
	struct block_tp *tp;
	char tp_err[256];
	struct blkt_backend *bt;
	char *rundir;
	struct passed *passed;
	int nlfd;
	struct event *nlev;
	struct event *tp_retry_ev; /* the tracepoint asked for could not be opened: again */
	unsigned tp_retry_s;
	struct event *dev_retry_ev; /* some disks' events could not be opened: again */
	unsigned dev_retry_s;       /* the wait before the next try; 0: none pending */
	bool say_unmatched; /* after the next rescan: names that select no disk */
	bool relook;        /* this rescan is the look again a lagging CPU asked for */
};

static struct log_ratelimit rl_trace = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_clock = LOG_RATELIMIT_INIT;
static struct log_ratelimit rl_uevent = LOG_RATELIMIT_INIT;

/* ---- completions ---- */

static struct src_inst *disk_by_kdev(struct block_state *st, uint32_t kdev)
{
	SOURCE_FOREACH(si, st->src)
		if (((struct disk *)si->drv)->kdev == kdev)
			return si;
	return NULL;
}

static void on_samples(void *ctx, const struct block_sample *s, size_t n)
{
	struct block_state *st = ctx;
	uint64_t now = util_mono_ns();
	struct src_inst *si = NULL;
	struct disk *d = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!d || d->kdev != s[i].kdev) {
			si = disk_by_kdev(st, s[i].kdev);
			d = si ? si->drv : NULL;
		}
		if (!d || !si->inst || !d->traced)
			continue;
		if (s[i].t_ns == BLOCK_NO_TIME) {
			feed_pipeline_skip(si->inst, 1);
			continue;
		}
		/* Read after it happened, on the same clock: a time ahead of ours is not
		 * CLOCK_MONOTONIC. (The kernel stamps with its NMI-safe reading of the clock,
		 * which may run a hair ahead of clock_gettime's: hence the margin.) Counted and
		 * said, never shown. */
		if (s[i].t_ns > now + CLOCK_SLACK_NS) {
			if (!d->ahead++)
				log_limited(&rl_clock, LOG_WARNING,
					    "block/%s: completion times ahead of CLOCK_MONOTONIC: "
					    "the kernel did not stamp them with the clock asked for",
					    si->name);
		}
		if (s[i].t_ns < d->last_t)
			d->out_of_order++;
		else
			d->last_t = s[i].t_ns;
		feed_pipeline_sample(si->inst, s[i].t_ns);
	}
}

/* ---- the backends ---- */

static const char *backend_name(enum block_backend b)
{
	return b == BACKEND_TRACEPOINT ? "tracepoint" : b == BACKEND_BLKTRACE ? "blktrace" : "auto";
}

static bool tp_open(struct block_state *st)
{
	struct block_tp_stats s;

	st->tp = block_tp_open(st->src->base, on_samples, st, st->tp_err, sizeof(st->tp_err));
	if (!st->tp)
		return false;
	block_tp_get_stats(st->tp, &s, false);
	log_notice("block: backend tracepoint%s: block:block_rq_complete (id %u) on %u CPUs, "
		   "CLOCK_MONOTONIC, %u KiB rings",
		   st->configured == BACKEND_AUTO ? " (auto)" : "", s.id, s.cpus, s.ring_kib);
	return true;
}

static void tp_retry_in(struct block_state *st, unsigned seconds)
{
	struct timeval tv = {.tv_sec = seconds};

	if (st->tp_retry_ev)
		evtimer_add(st->tp_retry_ev, &tv);
}

static void backend_open(struct block_state *st)
{
	st->tp_err[0] = '\0';
	st->tp_retry_s = 0;
	if (st->tp_retry_ev)
		event_del(st->tp_retry_ev);
	if (st->configured != BACKEND_BLKTRACE) {
		st->using = BACKEND_TRACEPOINT;
		if (tp_open(st)) {
			priv_ops_blktrace_cleanup(st->rundir);
			return;
		}
		if (st->configured == BACKEND_TRACEPOINT) {
			log_warn("block: the tracepoint cannot be used: %s; retrying every %d s or "
				 "more (sources.block.backend = \"auto\" falls back to blktrace)",
				 st->tp_err, RETRY_MIN_S);
			priv_ops_blktrace_cleanup(st->rundir);
			st->tp_retry_s = RETRY_MIN_S;
			tp_retry_in(st, RETRY_MIN_S);
			return;
		}
		log_notice("block: the tracepoint cannot be used (%s); backend blktrace (auto)",
			   st->tp_err);
	} else {
		log_notice("block: backend blktrace");
	}
	st->using = BACKEND_BLKTRACE;
	st->bt = blkt_backend_new(st->src->base, st->rundir, on_samples, st);
}

/* The instance's kind in status: a network-backed disk is marked as such, since its
 * timing is the network's. */
static const char *disk_kind(const struct block_disk_info *info)
{
	if (info->network)
		return "network-backed";
	return info->is_virtual ? "virtual" : "disk";
}

/* Have the backend trace one disk that policy allows, attached first (the tracepoint's
 * filter is set afterwards, for all disks at once). */
static enum src_status block_open(struct src_inst *si)
{
	struct block_state *st = si->src->priv;
	struct disk *d = si->drv;
	char why[256];

	if (!si->inst) {
		d->last_t = d->out_of_order = d->ahead = 0;
		source_attach(si, disk_kind(&d->info), d->info.add_random ? INST_KERNEL_CREDITS : 0);
		if (d->info.add_random)
			log_info("block/%s: the kernel credits its completions itself "
				 "(queue/add_random = 1): only timing below its resolution counts",
				 si->name);
	}
	d->traced = false;
	/* The state says open or why not; the backend is the one in use, not the one asked
	 * for (auto). */
	feed_pipeline_set_backend(si->inst, backend_name(st->using));
	if (strcmp(d->below, BLOCK_UNKNOWN_DISK) == 0) {
		source_set_state(si, "stacked on %s: not traced while other disks are", d->below);
		return SRC_WAIT;
	}
	if (d->below[0]) {
		source_set_state(si, "stacked on %s: not traced, its I/O is counted there",
				 d->below);
		return SRC_WAIT;
	}
	if (st->using == BACKEND_TRACEPOINT) {
		d->traced = st->tp != NULL;
		if (d->traced)
			source_set_state(si, "open");
		else
			source_set_error(si, "tracepoint unavailable: %s", st->tp_err[0] ? st->tp_err
									   : "not opened");
		return d->traced ? SRC_OPEN : SRC_WAIT;
	}
	if (blkt_start(st->bt, si->name, d->info.major, d->info.minor, why, sizeof(why))) {
		d->traced = true;
		source_set_state(si, "open");
		return SRC_OPEN;
	}
	source_set_error(si, "blktrace: %s", why);
	log_limited(&rl_trace, LOG_NOTICE, "block/%s: not open: blktrace: %s; retrying in %u s",
		    si->name, why, source_next_retry_s(si));
	return SRC_RETRY;
}

static void block_close(struct src_inst *si)
{
	struct block_state *st = si->src->priv;
	struct disk *d = si->drv;

	if (d->traced && st->using == BACKEND_BLKTRACE && st->bt)
		blkt_stop(st->bt, d->info.major, d->info.minor);
	d->traced = false;
}

static void block_detach(struct src_inst *si)
{
	struct disk *d = si->drv;

	if (d->out_of_order || d->ahead)
		log_info("block/%s: %llu completions read out of order across CPUs, %llu stamped "
			 "ahead of CLOCK_MONOTONIC",
			 si->name, (unsigned long long)d->out_of_order,
			 (unsigned long long)d->ahead);
}

bool block_unsampled(const struct source *src, uint64_t *n)
{
	const struct block_state *st = src->priv;

	*n = 0;
	if (!src->running || !st || !st->tp)
		return false;
	*n = block_tp_unsampled(st->tp);
	return true;
}

/* What the tracepoint took, and what the kernel counted but did not hand over: at the end
 * (rings drained), what perf never wrote; on the way, also what the rings still hold. */
static void tp_account(struct block_state *st, int prio, bool end)
{
	struct block_tp_stats s;
	char rest[64];

	block_tp_get_stats(st->tp, &s, end);
	snprintf(rest, sizeof(rest), end ? "it never wrote %llu" : "%llu not read yet or never written",
		 (unsigned long long)s.unsampled);
	log_msg(prio,
		"block: tracepoint: %llu completions taken, %llu of other disks, %llu lost (ring "
		"full), %llu malformed; perf counted %llu, of which %s; %llu busy periods; %u CPUs",
		(unsigned long long)s.samples, (unsigned long long)s.foreign,
		(unsigned long long)s.lost, (unsigned long long)s.bad,
		(unsigned long long)s.counted, rest, (unsigned long long)(s.mode_switches + 1) / 2,
		s.cpus);
}

static void block_summary(struct source *src, int prio)
{
	struct block_state *st = src->priv;

	if (st && st->tp)
		tp_account(st, prio, false);
}

static void backend_close(struct block_state *st)
{
	if (st->tp)
		tp_account(st, LOG_INFO, true);
	block_tp_close(st->tp);
	st->tp = NULL;
	blkt_backend_free(st->bt);
	st->bt = NULL;
	if (st->tp_retry_ev)
		event_del(st->tp_retry_ev);
	if (st->dev_retry_ev)
		event_del(st->dev_retry_ev);
	st->dev_retry_s = 0;
}

static void update_filter(struct block_state *st);

static void dev_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct block_state *st = arg;

	(void)fd;
	(void)what;
	update_filter(st);
}

/* Disks whose events could not be opened (out of descriptors, the privileged process's
 * budget spent) are tried again as soon as that may have changed, not at the next rescan
 * (which may never come where uevents tell of disks): after BLOCK_TP_RETRY_MIN_S, then
 * twice as long each time, up to BLOCK_TP_RETRY_MAX_S. block_tp.c says each failure once;
 * the tries are not logged. None left: the wait starts afresh. */
static void dev_retry(struct block_state *st)
{
	struct timeval tv = {0};

	if (!block_tp_failed(st->tp)) {
		st->dev_retry_s = 0;
		if (st->dev_retry_ev)
			event_del(st->dev_retry_ev);
		return;
	}
	if (!st->dev_retry_ev || event_pending(st->dev_retry_ev, EV_TIMEOUT, NULL))
		return;
	tv.tv_sec = st->dev_retry_s ? st->dev_retry_s : BLOCK_TP_RETRY_MIN_S;
	st->dev_retry_s = (unsigned)tv.tv_sec * 2 > BLOCK_TP_RETRY_MAX_S ? BLOCK_TP_RETRY_MAX_S
									 : (unsigned)tv.tv_sec * 2;
	evtimer_add(st->dev_retry_ev, &tv);
}

/* The tracepoint follows the set of traced disks: filtered to them, off without any. */
static void update_filter(struct block_state *st)
{
	uint32_t *k = NULL;
	size_t n = 0;

	if (!st->tp)
		return;
	SOURCE_FOREACH(si, st->src) {
		struct disk *d = si->drv;

		if (d->traced) {
			k = xreallocarray(k, n + 1, sizeof(*k));
			k[n++] = d->kdev;
		}
	}
	block_tp_set_devices(st->tp, k, n);
	free(k);
	dev_retry(st);
	/* A disk whose instances could not be opened (EMFILE) says so until a rescan opens
	 * them. */
	SOURCE_FOREACH(si, st->src) {
		struct disk *d = si->drv;
		const char *why = d->traced ? block_tp_device_error(st->tp, d->kdev) : NULL;
		char state[sizeof(si->state)];

		if (!d->traced || !si->inst)
			continue;
		if (why)
			snprintf(state, sizeof(state), "tracepoint failed: %s", why);
		else
			strlcopy(state, "open", sizeof(state));
		if (strcmp(state, si->state) != 0)
			source_set_state(si, "%s", state);
	}
}

/* ---- disks ---- */

static void say_stacked(const struct src_inst *si)
{
	const struct disk *d = si->drv;

	if (strcmp(d->below, BLOCK_UNKNOWN_DISK) == 0)
		log_info("block/%s: its backing file is on overlayfs or btrfs (or the like), "
			 "or outside what the collector sees, so its disk is not known, and "
			 "other disks are traced: not traced "
			 "itself, since its I/O may be counted on one of them",
			 si->name);
	else if (d->below[0])
		log_info("block/%s: stacked on %s, which is traced too: not traced itself, so "
			 "that one I/O is counted once",
			 si->name, d->below);
	else
		log_info("block/%s: no longer stacked on a traced disk: traced", si->name);
}

static void disk_add(struct block_state *st, const char *name,
		     const struct block_disk_info *info, const char *pat, const char *below)
{
	struct src_inst *si = source_found(st->src, name, NULL);
	struct disk *d = si->drv;

	strlcopy(d->below, below, sizeof(d->below));
	d->info = *info;
	d->kdev = BLOCK_KDEV(info->major, info->minor);
	log_info("block/%s: %u:%u selected by \"%s\"", name, info->major, info->minor, pat);
	if (info->network)
		log_msg(config_policy_resolve(st->src->cfg, CLASS_BLOCK, name).mode == MODE_TRUSTED
				? LOG_WARNING
				: LOG_INFO,
			"block/%s: network-backed (%s): its completion timing is the network's, "
			"which an attacker on the path can see and shape; give it a reduced policy "
			"in policy.block.instances",
			name, info->network);
	if (d->below[0])
		say_stacked(si);
	source_open(si);
}

/* A disk stacked on a traced one is not traced itself (its I/O would count twice), or
 * traced again once it no longer is. */
static void restack(struct src_inst *si, const char *below)
{
	struct disk *d = si->drv;

	if (strcmp(d->below, below) == 0)
		return;
	strlcopy(d->below, below, sizeof(d->below));
	say_stacked(si);
	if (!si->inst)
		return;
	source_close(si, SRC_CLOSED);
	source_open(si);
}

/* Would this disk be traced, stacking aside: selected, with a medium, enabled by policy? */
static bool would_trace(const struct block_state *st, const char *name)
{
	struct block_disk_info info;

	return block_disks_probe("", name, &info) && info.sectors > 0 &&
	       block_disks_selects(&st->src->cfg->block.devices, name, &info) &&
	       feed_pipeline_enabled(CLASS_BLOCK, name);
}

/* Is this disk traced? One we have says so itself (a trace that failed, or waits for a
 * retry, counts nothing: a disk stacked on it must be traced instead); one not yet added in
 * this rescan is guessed, and the guess checked by restack_all once all are in. */
static bool is_traced(void *ctx, const char *name)
{
	struct block_state *st = ctx;
	const struct src_inst *si = source_find(st->src, name);

	return si ? ((const struct disk *)si->drv)->traced : would_trace(st, name);
}

/* Is a disk other than `self` traced? One stacked on a disk not known (BLOCK_UNKNOWN_DISK)
 * may be stacked on any of them. */
static bool other_traced(const struct block_state *st, const struct src_inst *self)
{
	SOURCE_FOREACH(si, st->src)
		if (si != self && ((const struct disk *)si->drv)->traced)
			return true;
	return false;
}

/* Where below a disk is stacked on, as block_disks_stacked_on says; "" when it is on an unknown
 * disk and no other disk is traced. */
static void stacked_on(struct block_state *st, const struct src_inst *si, const char *name,
		       char *below, size_t size)
{
	block_disks_stacked_on("", name, is_traced, st, below, size);
	if (strcmp(below, BLOCK_UNKNOWN_DISK) == 0 && !other_traced(st, si))
		below[0] = '\0';
}

/* A partition named in the config selects nothing: said at start and reload, not on every
 * rescan. (Any name that selects nothing is said by the core, source_names.) */
static void report_unmatched(struct block_state *st)
{
	const struct strlist *devs = &st->src->cfg->block.devices;
	char path[PATH_MAX];

	for (size_t i = 0; i < devs->n; i++) {
		const char *pat = devs->v[i];
		bool found = false;

		if (strcmp(pat, "auto") == 0)
			continue;
		SOURCE_FOREACH(si, st->src)
			if (!found)
				found = block_disks_selects(&(struct strlist){.v = &devs->v[i], .n = 1},
						      si->name,
						      &((const struct disk *)si->drv)->info) != NULL;
		if (found)
			continue;
		if (strncmp(pat, "/dev/", 5) == 0)
			pat += 5;
		snprintf(path, sizeof(path), "/sys/class/block/%s/partition", pat);
		if (access(path, F_OK) == 0)
			log_warn("block: \"%s\" is a partition: completions are traced per whole "
				 "disk, so name the disk",
				 pat);
	}
}

/* A disk is left out as stacked only while the one below is traced: after a rescan, and
 * whenever a trace starts or fails. Each pass settles a layer more, bottom up. */
static void restack_all(struct source *src)
{
	struct block_state *st = src->priv;
	size_t n = 0;

	SOURCE_FOREACH(si, src)
		n++;
	for (size_t pass = 0; pass <= n; pass++) {
		bool changed = false;

		SOURCE_FOREACH(si, src) {
			char below[NAME_MAX + 1] = "";

			stacked_on(st, si, si->name, below, sizeof(below));
			if (strcmp(((struct disk *)si->drv)->below, below) != 0) {
				restack(si, below);
				changed = true;
			}
		}
		if (!changed)
			break;
	}
	update_filter(st);
	if (st->say_unmatched)
		report_unmatched(st);
	st->say_unmatched = false;
}

/* A disk that "auto" leaves out for being network-backed is said once, not on every
 * rescan (again after a reload, or once it has gone and come back). */
static void note_passed(struct block_state *st, const char *name,
			const struct block_disk_info *info)
{
	const struct strlist *devs = &st->src->cfg->block.devices;
	struct passed *p;
	const char *why;
	bool by_auto = false;

	for (size_t i = 0; i < devs->n; i++)
		by_auto |= strcmp(devs->v[i], "auto") == 0;
	if (!by_auto || !info->network || block_disks_auto(name, info, &why))
		return;
	for (p = st->passed; p; p = p->next)
		if (strcmp(p->name, name) == 0) {
			p->seen = true;
			return;
		}
	p = xcalloc(1, sizeof(*p));
	strlcopy(p->name, name, sizeof(p->name));
	p->seen = true;
	p->next = st->passed;
	st->passed = p;
	log_info("block/%s: not taken by \"auto\": %s (%s); name it in devices to use it anyway",
		 name, why, info->network);
}

/* Forget the passed-over disks not seen by a rescan (all of them, if all). */
static void prune_passed(struct block_state *st, bool all)
{
	for (struct passed **pp = &st->passed; *pp;) {
		struct passed *p = *pp;

		if (all || !p->seen) {
			*pp = p->next;
			free(p);
			continue;
		}
		p->seen = false;
		pp = &p->next;
	}
}

/* The disks in /sys/block that the config selects. */
static bool block_scan(struct source *src)
{
	static struct log_ratelimit rl = LOG_RATELIMIT_INIT;
	struct block_state *st = src->priv;
	const struct config *cfg = src->cfg;
	struct dirent *de;
	DIR *dir;
	int probe[2];

	/* Out of descriptors, every sysfs read would fail and every disk look gone: keep
	 * them as they are and look again at the next rescan. (Two: the directory and a file
	 * in it are open at once.) */
	for (int i = 0; i < 2; i++) {
		probe[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (probe[i] < 0 && (errno == EMFILE || errno == ENFILE)) {
			log_limited(&rl, LOG_WARNING, "block: no file descriptor free (%s): disks "
				    "kept as they are until the next rescan", strerror(errno));
			if (i == 1)
				close(probe[0]);
			return false;
		}
	}
	for (int i = 0; i < 2; i++)
		if (probe[i] >= 0)
			close(probe[i]);
	dir = opendir(SYS_BLOCK);
	if (!dir) {
		log_errno(LOG_WARNING, "block: cannot read " SYS_BLOCK);
		return false;
	}
	while ((de = readdir(dir))) {
		struct block_disk_info info;
		char below[NAME_MAX + 1] = "";
		const char *pat;
		struct src_inst *si;
		struct disk *d;

		if (de->d_name[0] == '.' || !block_disks_probe("", de->d_name, &info))
			continue;
		pat = block_disks_selects(&cfg->block.devices, de->d_name, &info);
		if (!pat && info.sectors > 0)
			note_passed(st, de->d_name, &info);
		if (!pat || info.sectors == 0)
			continue; /* not wanted, or no medium (a detached loop device) */
		si = source_find(src, de->d_name);
		d = si ? si->drv : NULL;
		if (!si)
			stacked_on(st, NULL, de->d_name, below, sizeof(below));
		if (d && (d->info.major != info.major || d->info.minor != info.minor ||
			  d->info.add_random != info.add_random)) {
			/* Another device under the old name, or the kernel's crediting changed:
			 * a new instance. */
			if (si->inst)
				log_info("block/%s: changed; attached again", si->name);
			source_forget(si);
			si = NULL;
		}
		if (!si) {
			disk_add(st, de->d_name, &info, pat, below);
			continue;
		}
		si->seen = true;
		((struct disk *)si->drv)->info = info;
		if (si->status == SRC_CLOSED)
			source_open(si);
	}
	closedir(dir);
	prune_passed(st, false);
	if (st->tp) {
		block_tp_rescan_cpus(st->tp);
		/* A CPU whose times lagged: one more look soon tells whether it went offline
		 * (block_tp.c); one, so that a CPU that always lags costs no more. */
		st->relook = !st->relook && block_tp_cpus_unsure(st->tp);
		if (st->relook)
			source_rescan_soon(st->src);
	}
	return true;
}

static void block_gone(struct src_inst *si)
{
	if (si->inst)
		log_info("block/%s: gone (removed, detached or without a medium); dropped",
			 si->name);
	source_forget(si);
}

/* ---- the tracepoint's retry, and uevents ---- */

static void tp_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct block_state *st = arg;

	if (!tp_open(st)) {
		st->tp_retry_s = st->tp_retry_s * 2 > RETRY_MAX_S ? RETRY_MAX_S : st->tp_retry_s * 2;
		tp_retry_in(st, st->tp_retry_s);
		return;
	}
	SOURCE_FOREACH(si, st->src)
		if (si->inst)
			source_open(si);
	restack_all(st->src);
}

/* Is this uevent (NUL-separated KEY=value lines) about a block device, or a CPU (one that
 * comes online needs its perf ring)? A CPU that went offline or online is put in *cpu
 * (else -1): its events are to be opened again. */
static bool block_uevent(const char *buf, size_t len, long *cpu)
{
	bool block = false, is_cpu = false, hotplug = false;
	long num = -1;

	*cpu = -1;
	for (size_t i = 0; i < len;) {
		const char *s = buf + i;
		size_t n = strnlen(s, len - i);

		if (n == 15 && memcmp(s, "SUBSYSTEM=block", 15) == 0)
			block = true;
		else if (n == 13 && memcmp(s, "SUBSYSTEM=cpu", 13) == 0)
			is_cpu = true;
		else if (n > 7 && memcmp(s, "ACTION=", 7) == 0)
			hotplug = (n == 14 && (memcmp(s + 7, "offline", 7) == 0)) ||
				  (n == 13 && memcmp(s + 7, "online", 6) == 0) ||
				  (n == 10 && memcmp(s + 7, "add", 3) == 0) ||
				  (n == 13 && memcmp(s + 7, "remove", 6) == 0);
		else if (n > 31 && n < 31 + 15 && memcmp(s, "DEVPATH=/devices/system/cpu/cpu", 31) == 0) {
			char tmp[16], *end;

			memcpy(tmp, s + 31, n - 31);
			tmp[n - 31] = 0;
			errno = 0;
			num = strtol(tmp, &end, 10);
			if (end == tmp || *end || errno || num < 0)
				num = -1;
		}
		i += n + 1;
	}
	if (is_cpu && hotplug)
		*cpu = num;
	return block || is_cpu;
}

static void uevent_cb(evutil_socket_t fd, short what, void *arg)
{
	struct block_state *st = arg;
	char buf[8192];

	for (int round = 0; round < 64; round++) {
		struct sockaddr_nl from;
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr mh = {.msg_name = &from, .msg_namelen = sizeof(from),
				    .msg_iov = &iov, .msg_iovlen = 1};
		ssize_t n = recvmsg(st->nlfd, &mh, MSG_DONTWAIT);
		long cpu;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			/* Events were lost: read everything again. */
			source_rescan_soon(st->src);
			continue;
		}
		if (n < 0) {
			if (errno != EAGAIN)
				log_limited(&rl_uevent, LOG_WARNING, "block: reading uevents: %s",
					    strerror(errno));
			return;
		}
		/* Only the kernel's own messages (port 0) are believed. */
		if (mh.msg_namelen != sizeof(from) || from.nl_pid != 0)
			continue;
		if (block_uevent(buf, (size_t)n, &cpu)) {
			if (cpu >= 0 && st->tp)
				block_tp_cpu_changed(st->tp, (unsigned)cpu);
			source_rescan_soon(st->src);
		}
	}
}

static void uevents_open(struct block_state *st)
{
	st->nlfd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			  NETLINK_KOBJECT_UEVENT);
	/* Group 1: the kernel's own uevents (udev's are group 2). */
	if (st->nlfd >= 0 && util_netlink_listen(st->nlfd, 1) == 0) {
		st->nlev = event_new(st->src->base, st->nlfd, EV_READ | EV_PERSIST, uevent_cb, st);
		if (st->nlev && event_add(st->nlev, NULL) == 0)
			return;
	}
	log_errno(LOG_NOTICE, "block: no kernel uevents; disks that come and go are seen "
			      "within %d s",
		  RESCAN_S);
	if (st->nlev)
		event_free(st->nlev);
	if (st->nlfd >= 0)
		close(st->nlfd);
	st->nlev = NULL;
	st->nlfd = -1;
	source_poll_every(st->src, RESCAN_S);
}

/* ---- the driver ---- */

static int block_start(struct source *src)
{
	struct block_state *st = xcalloc(1, sizeof(*st));

	st->src = src;
	st->nlfd = -1;
	st->rundir = priv_ops_rundir();
	st->configured = src->cfg->block.backend;
	st->tp_retry_ev = evtimer_new(src->base, tp_retry_cb, st);
	st->dev_retry_ev = evtimer_new(src->base, dev_retry_cb, st);
	src->priv = st;
	backend_open(st);
	uevents_open(st);
	st->say_unmatched = true;
	source_rescan(src);
	return 0;
}

/* A new backend feeds the instances there are; the core then goes through them (a reload
 * is also the way to say "try again now") and rescans. */
static bool block_reload(struct source *src)
{
	struct block_state *st = src->priv;

	if (src->cfg->block.backend != st->configured) {
		log_info("block: backend %s instead of %s", backend_name(src->cfg->block.backend),
			 backend_name(st->configured));
		SOURCE_FOREACH(si, src)
			if (si->status == SRC_OPEN)
				source_close(si, SRC_CLOSED);
		backend_close(st);
		st->configured = src->cfg->block.backend;
		backend_open(st);
		SOURCE_FOREACH(si, src)
			if (si->inst)
				source_open(si);
	}
	if (st->tp_retry_s && !st->tp)
		tp_retry_in(st, 0);
	prune_passed(st, true);
	st->say_unmatched = true;
	return true;
}

static void block_stop(struct source *src)
{
	struct block_state *st = src->priv;

	if (!st)
		return;
	backend_close(st);
	prune_passed(st, true);
	if (st->nlev)
		event_free(st->nlev);
	if (st->nlfd >= 0)
		close(st->nlfd);
	if (st->tp_retry_ev)
		event_free(st->tp_retry_ev);
	if (st->dev_retry_ev)
		event_free(st->dev_retry_ev);
	free(st->rundir);
	util_wipe(st, sizeof(*st));
	free(st);
	src->priv = NULL;
}

const struct source_ops block_source_ops = {
	.name = "block",
	.cls = CLASS_BLOCK,
	.inst_size = sizeof(struct disk),
	.retry_min_s = RETRY_MIN_S,
	.retry_max_s = RETRY_MAX_S,
	.rescan_delay_ms = RESCAN_DELAY_MS,
	.start = block_start,
	.stop = block_stop,
	.scan = block_scan,
	.open = block_open,
	.close = block_close,
	.detach = block_detach,
	.gone = block_gone,
	.settle = restack_all,
	.reload = block_reload,
	.summary = block_summary,
};
