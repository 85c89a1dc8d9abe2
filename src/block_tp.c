/* block_tp: the block:block_rq_complete tracepoint through perf_event_open.
 *
 * Per online CPU, one mmap'ed ring, owned by a dummy software event that never fires, and
 * per traced disk one instance of the tracepoint, filtered in the kernel to that disk and
 * writing into the ring (PERF_EVENT_IOC_SET_OUTPUT). Each completion is thus recorded once,
 * by the one instance whose filter it passes: there is never a second instance of the same
 * disk to double it, nor a gap while one hands over to another. A perf event takes a filter
 * only once: a disk that comes or goes opens or closes its own instances and leaves the
 * others be. Where the kernel takes no filter, one unfiltered instance per CPU, filtered
 * here.
 *
 * The instances never wake us themselves; the ring does when half full. While completions
 * are few, one more instance per CPU, filtered to all traced disks, writes a bare record
 * (no time, no data) per completion and wakes us for each (wakeup_events 1), so that each
 * completion is handed on at once (what matters at boot). A wakeup costs the completing CPU
 * an interrupt (an IPI, and a VM exit in a guest), which on a busy fast disk costs its I/O
 * more than the tracing itself: past BUSY_RECORDS completions in BUSY_WINDOW_MS the waking
 * instance is disabled and the rings are drained every POLL_MS, until IDLE_POLLS drains in a
 * row find fewer than IDLE_RECORDS records each. Switching modes only enables or disables
 * the waking instance: no completion's own record depends on it. Completions are counted,
 * not wakeups.
 *
 * The waking instance is opened before the disks' instances where it can be, as the kernel
 * then writes its record after theirs; else a wakeup may come just before the record it is
 * for is written, and a drain that finds more wakeup records than completions drains again a
 * little later.
 *
 * A CPU that goes offline takes its events with it for good: they stay off when it comes
 * back. block_tp_rescan_cpus() finds such rings (their owner's enabled time stood still),
 * drains and closes them, and opens rings and instances on every online CPU without.
 *
 * Timestamps are CLOCK_MONOTONIC (use_clockid). The raw entry's "dev" field (offset and size
 * read from tracefs, not assumed: block_tp_format.c) says which disk completed. A readable
 * ring drains every ring, so that one batch can be put in time order before it is handed on;
 * the records are read and decoded in block_tp_ring.c. */
#include "autoconf.h"

#include "block_tp.h"
#include "block_tp_format.h"
#include "block_tp_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "priv.h"
#include "priv_ops.h"
#include "util.h"

/* Data pages per CPU ring (a power of two): 512 KiB hold about 6400 completions, what a
 * disk completing 25,000 a second does while an instance's first estimates (every estimator
 * at once) keep the reader away on a loaded machine; 256 KiB were seen to overrun there
 * (379 of 5,000 lost). perf's own allowance per user (perf_event_mlock_kb, 516 KiB a CPU)
 * covers them. Halved down to RING_PAGES_MIN where the locked-memory limit will not have
 * that. */
#define RING_PAGES 128
#define RING_PAGES_MIN 8
#define BUSY_WINDOW_MS 100
#define BUSY_RECORDS 20
#define POLL_MS 10
#define IDLE_POLLS 20
#define IDLE_RECORDS 2
#define MAX_CPUS 4096
#define OFFLINE_NS 2000000 /* a CPU's events lag our clock by more: it may have been offline */
#define FROZEN_NS 50000000 /* and looks this far apart that saw no time: it was */
#define FILTER_MAX 2048

/* What perf_open opens. */
enum { OWNER = PRIV_PERF_OWNER, DISK = PRIV_PERF_DISK, WAKER = PRIV_PERF_WAKER };

struct cpu {
	struct block_tp *tp;
	unsigned cpu;
	int dfd; /* the dummy event that owns the ring */
	void *map;
	size_t map_len;
	struct event *ev;
	int wfd;          /* the waking instance, or -1 */
	int *fd;          /* the instance of each source (tp->src), or -1 */
	uint64_t enabled; /* the owner's enabled time when last looked at, */
	uint64_t seen;    /* and when that was at the latest (CLOCK_MONOTONIC, read after it) */
	bool hotplugged;  /* a uevent said it went offline or online: its events may be dead */
};

struct block_tp {
	struct event_base *base;
	bool cpus_unsure; /* the last rescan saw a CPU whose times lagged: block_tp_cpus_unsure */
	unsigned id;
	long page;
	unsigned ring_pages;
	struct cpu **cpus;
	size_t ncpus;
	/* The sources: one instance per CPU for each disk; or, where the kernel takes no
	 * filter (no_filter), a single unfiltered one. */
	uint32_t *src;
	size_t nsrc;
	bool no_filter;
	char *wfilter; /* the waking instances' filter; NULL: none */
	uint32_t *want;
	size_t nwant;
	/* Wanted devices whose instances could not be opened (EMFILE, say): tried again by
	 * each block_tp_set_devices, and shown in status meanwhile. */
	struct tp_failed {
		uint32_t kdev;
		char err[160];
	} *failed;
	size_t nfailed;
	struct block_tp_stats st;
	uint64_t counted_closed; /* what closed instances had counted, */
	uint64_t lost_closed;    /* and dropped with the ring full (PERF_FORMAT_LOST) */
	uint64_t unsampled;      /* unsampled completions, as of the last quiet turn */
	struct block_tp_unsampled_log unsampled_log;
	size_t read_len;         /* 16 with PERF_FORMAT_LOST, else 8 */
	bool busy;               /* no waking instances; drained by poll_ev */
	struct event *poll_ev;
	struct event *tail_ev;   /* one drain a little later */
	uint64_t window_start;   /* completions counted since */
	uint64_t window_records;
	unsigned quiet_polls;
	struct tp_reader rd; /* the rings' records, decoded and batched */
};

static struct log_ratelimit rl_ioctl = LOG_RATELIMIT_INIT;

bool block_tp_filter(const uint32_t *kdevs, size_t n, char *out, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return false;
	out[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int k = snprintf(out + used, size - used, "%sdev == %u", i ? " || " : "",
				 (unsigned)kdevs[i]);

		if (k < 0 || (size_t)k >= size - used)
			return false;
		used += (size_t)k;
	}
	return true;
}

/* ---- the tracepoint's id and format (block_tp_format.c) ---- */

/* The id and the dev field, once read: tracefs is root's alone (mode 0700), and the
 * collector, which decodes the records, runs as another user; so they are read before the
 * fork (block_tp_tracepoint_id, from daemon.c) and kept. They are the kernel's and do not
 * change while it runs. */
static struct {
	bool known;
	struct block_tp_format f;
} cached;

/* The id and the format, where tracefs is (mounted at start, if need be, while entropyd
 * still had the privilege to). */
static bool read_tracepoint(struct block_tp *tp, bool may_mount, char *err, size_t errlen)
{
	if (!cached.known) {
		if (!block_tp_format_read(may_mount, &cached.f, err, errlen))
			return false;
		cached.known = true;
		/* For whoever opens the events: this process without a privileged one, or the
		 * privileged process, which has it from before the fork. */
		priv_ops_tracepoint(cached.f.id);
	}
	tp->id = cached.f.id;
	tp->rd.dev_off = cached.f.dev_off;
	tp->rd.dev_size = cached.f.dev_size;
	return true;
}

bool block_tp_tracepoint_id(unsigned *id, char *err, size_t errlen)
{
	struct block_tp tp;

	memset(&tp, 0, sizeof(tp));
	if (!read_tracepoint(&tp, true, err, errlen))
		return false;
	*id = tp.id;
	return true;
}

/* ---- reading the rings (decoding: block_tp_ring.c) ---- */

static void drain_cpu(struct block_tp *tp, const struct cpu *c)
{
	block_tp_ring_drain(&tp->rd, c->map, tp->page, tp->ring_pages, c->cpu);
}

/* Drain every ring; the number of completions' records read. A wakeup that came before the
 * record it was for (more waking records than completions' records): drain again soon. */
static uint64_t drain_all(struct block_tp *tp)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = POLL_MS * 1000};
	uint64_t records = tp->rd.records, wakes = tp->rd.wakes;

	for (size_t i = 0; i < tp->ncpus; i++)
		drain_cpu(tp, tp->cpus[i]);
	block_tp_ring_flush(&tp->rd);
	if (tp->rd.wakes - wakes > tp->rd.records - records &&
	    !evtimer_pending(tp->tail_ev, NULL))
		event_add(tp->tail_ev, &tv);
	return tp->rd.records - records;
}

/* ---- perf events ---- */

/* The event is opened by the privileged process where there is one; it builds the event
 * from these few choices and reads the tracepoint's id itself. */
static int perf_open(const struct block_tp *tp, unsigned cpu, int what)
{
	return priv_perf_open(cpu, (enum priv_perf)what, tp->read_len == 16 ? PRIV_PERF_LOST : 0);
}

/* How many completions an instance has counted: every one it should have written; and
 * (with PERF_FORMAT_LOST) how many of them it dropped with the ring full, added to *lost.
 * perf writes its PERF_RECORD_LOST only with the next record that fits, which a disk gone
 * quiet may not send for a long time; this count is there at once. */
static uint64_t count_of(const struct block_tp *tp, int fd, uint64_t *lost)
{
	uint64_t v[2] = {0, 0};

	if (fd < 0 || read(fd, v, tp->read_len) != (ssize_t)tp->read_len)
		return 0;
	*lost += v[1];
	return v[0];
}

/* An instance on a CPU, with this filter (or none), writing into the CPU's ring, enabled
 * if asked. -1 with the reason in err, and *filter_failed set if it was the filter. */
static int inst_open(struct block_tp *tp, const struct cpu *c, int what, const char *filter,
		     bool enable, bool *filter_failed, char *err, size_t errlen)
{
	int fd = perf_open(tp, c->cpu, what);

	if (fd < 0 && errno == EINVAL && what == DISK && tp->read_len == 16) {
		/* Before Linux 6.0: no PERF_FORMAT_LOST. */
		tp->read_len = 8;
		fd = perf_open(tp, c->cpu, what);
	}
	if (fd < 0) {
		snprintf(err, errlen, "perf_event_open on block:block_rq_complete, CPU %u: %s",
			 c->cpu, priv_refused() ? PRIV_REFUSED_HINT : strerror(errno));
		return -1;
	}
	if (filter && ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) < 0) {
		snprintf(err, errlen, "the kernel takes no device filter: %s", strerror(errno));
		*filter_failed = true;
		close(fd);
		return -1;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, c->dfd) < 0 ||
	    (enable && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)) {
		snprintf(err, errlen, "cannot direct the tracepoint into its ring on CPU %u: %s",
			 c->cpu, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static void disk_close(struct block_tp *tp, struct cpu *c, size_t i)
{
	if (c->fd[i] >= 0) {
		tp->counted_closed += count_of(tp, c->fd[i], &tp->lost_closed);
		close(c->fd[i]);
	}
	c->fd[i] = -1;
}

/* Source i's instance on a CPU. */
static bool disk_open(struct block_tp *tp, struct cpu *c, size_t i, bool *filter_failed,
		      char *err, size_t errlen)
{
	char filter[32];

	if (!tp->no_filter)
		block_tp_filter(&tp->src[i], 1, filter, sizeof(filter));
	c->fd[i] = inst_open(tp, c, DISK, tp->no_filter ? NULL : filter, true, filter_failed,
			     err, errlen);
	return c->fd[i] >= 0;
}

static void waker_close(struct cpu *c)
{
	if (c->wfd >= 0)
		close(c->wfd);
	c->wfd = -1;
}

/* The waking instance on a CPU, with the current filter, enabled while not busy. Without
 * one, the CPU's completions are drained when its ring is half full or by a later wakeup.
 * false if the kernel took no filter. */
static bool waker_open(struct block_tp *tp, struct cpu *c)
{
	char err[256];
	bool filter_failed = false;

	waker_close(c);
	c->wfd = inst_open(tp, c, WAKER, tp->wfilter, !tp->busy, &filter_failed, err,
			   sizeof(err));
	if (c->wfd < 0 && !filter_failed)
		log_limited(&rl_ioctl, LOG_WARNING,
			    "block: no wakeup per completion on CPU %u (only when its ring is "
			    "half full): %s",
			    c->cpu, err);
	return !filter_failed;
}

static void waker_enable(struct block_tp *tp, bool on)
{
	for (size_t j = 0; j < tp->ncpus; j++) {
		struct cpu *c = tp->cpus[j];

		if (c->wfd >= 0 &&
		    ioctl(c->wfd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
			log_limited(&rl_ioctl, LOG_WARNING,
				    "block: cannot %s the wakeup per completion on CPU %u: %s",
				    on ? "enable" : "disable", c->cpu, strerror(errno));
	}
}

/* ---- sources: which instances exist ---- */

static void src_remove(struct block_tp *tp, size_t i)
{
	for (size_t j = 0; j < tp->ncpus; j++) {
		struct cpu *c = tp->cpus[j];

		disk_close(tp, c, i);
		memmove(c->fd + i, c->fd + i + 1, (tp->nsrc - i - 1) * sizeof(*c->fd));
	}
	memmove(tp->src + i, tp->src + i + 1, (tp->nsrc - i - 1) * sizeof(*tp->src));
	tp->nsrc--;
}

/* Add a source and open its instance on every CPU. false (and nothing added) on failure,
 * with *filter_failed set if the kernel takes no filter. */
static bool src_add(struct block_tp *tp, uint32_t kdev, bool *filter_failed, char *err,
		    size_t errlen)
{
	size_t i = tp->nsrc;

	tp->src = xreallocarray(tp->src, i + 1, sizeof(*tp->src));
	tp->src[i] = kdev;
	tp->nsrc++;
	for (size_t j = 0; j < tp->ncpus; j++) {
		struct cpu *c = tp->cpus[j];

		c->fd = xreallocarray(c->fd, tp->nsrc, sizeof(*c->fd));
		c->fd[i] = -1;
	}
	for (size_t j = 0; j < tp->ncpus; j++)
		if (!disk_open(tp, tp->cpus[j], i, filter_failed, err, errlen)) {
			src_remove(tp, i);
			return false;
		}
	return true;
}

/* The waking instances' filter for the wanted devices: none without kernel filters, or if
 * it would be too long. Whether it changed. */
static bool waker_filter(struct block_tp *tp)
{
	char filter[FILTER_MAX];
	char *old = tp->wfilter;
	bool changed;

	tp->wfilter = NULL;
	if (!tp->no_filter && block_tp_filter(tp->want, tp->nwant, filter, sizeof(filter)))
		tp->wfilter = xstrdup(filter);
	changed = !old != !tp->wfilter || (old && strcmp(old, tp->wfilter) != 0);
	free(old);
	return changed;
}

/* Where the kernel takes no filter, every completion of every disk reaches us. */
static void without_filter(struct block_tp *tp, const char *why)
{
	log_info("block: %s; filtering here", why);
	while (tp->nsrc)
		src_remove(tp, tp->nsrc - 1);
	tp->no_filter = true;
}

static bool was_failed(const struct tp_failed *f, size_t n, uint32_t kdev)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].kdev == kdev)
			return true;
	return false;
}

/* A wanted device whose instances could not be opened: said once, kept for status, tried
 * again on the next block_tp_set_devices (block.c's retry, or a rescan). */
static void src_failed(struct block_tp *tp, uint32_t kdev, const char *err,
		       const struct tp_failed *was, size_t nwas)
{
	struct tp_failed *f;

	if (!was_failed(was, nwas, kdev))
		log_warn("block: cannot open the tracepoint for %u:%u: %s; tried again in %d s, "
			 "then at most every %d s, until it opens",
			 kdev >> 20, kdev & 0xfffff, err, BLOCK_TP_RETRY_MIN_S, BLOCK_TP_RETRY_MAX_S);
	tp->failed = xreallocarray(tp->failed, tp->nfailed + 1, sizeof(*tp->failed));
	f = &tp->failed[tp->nfailed++];
	f->kdev = kdev;
	strlcopy(f->err, err, sizeof(f->err));
}

/* Bring the instances in line with what is wanted. */
static void sources_update(struct block_tp *tp)
{
	char err[256];
	bool filter_failed = false, changed;
	struct tp_failed *was = tp->failed;
	size_t nwas = tp->nfailed;

	tp->failed = NULL;
	tp->nfailed = 0;
	for (size_t i = tp->nsrc; i-- > 0;)
		if (!tp->nwant || (!tp->no_filter && !block_tp_ring_in_list(tp->want, tp->nwant, tp->src[i])))
			src_remove(tp, i);
	if (!tp->nwant) {
		for (size_t j = 0; j < tp->ncpus; j++)
			waker_close(tp->cpus[j]);
		goto out;
	}
	/* The waking instances before the disks' where they can be: the kernel writes the
	 * newest instance's record first, and a wakeup should come after its record. */
	changed = waker_filter(tp);
	for (size_t j = 0; j < tp->ncpus; j++) {
		struct cpu *c = tp->cpus[j];

		if ((changed || c->wfd < 0) && !waker_open(tp, c)) {
			without_filter(tp, "the kernel takes no device filter");
			sources_update(tp);
			goto out;
		}
	}
	if (tp->no_filter) {
		if (!tp->nsrc && !src_add(tp, 0, &filter_failed, err, sizeof(err)))
			for (size_t i = 0; i < tp->nwant; i++)
				src_failed(tp, tp->want[i], err, was, nwas);
		goto out;
	}
	for (size_t i = 0; i < tp->nwant; i++) {
		if (block_tp_ring_in_list(tp->src, tp->nsrc, tp->want[i]))
			continue;
		if (src_add(tp, tp->want[i], &filter_failed, err, sizeof(err))) {
			if (was_failed(was, nwas, tp->want[i]))
				log_notice("block: the tracepoint for %u:%u is open now",
					   tp->want[i] >> 20, tp->want[i] & 0xfffff);
			continue;
		}
		if (filter_failed) {
			without_filter(tp, err);
			sources_update(tp);
			goto out;
		}
		src_failed(tp, tp->want[i], err, was, nwas);
	}
out:
	free(was);
}

size_t block_tp_failed(const struct block_tp *tp)
{
	return tp ? tp->nfailed : 0;
}

const char *block_tp_device_error(const struct block_tp *tp, uint32_t kdev)
{
	for (size_t i = 0; tp && i < tp->nfailed; i++)
		if (tp->failed[i].kdev == kdev)
			return tp->failed[i].err;
	return NULL;
}

/* ---- load ---- */

/* Completions perf counted but never wrote to a ring: those it dropped with the ring full
 * (also said by PERF_RECORD_LOST), and a loss inside the kernel which it reports nowhere
 * else (no PERF_RECORD_LOST, no lost_samples; seen on a loaded VM, with a plain perf reader
 * too). Counted first, then drained: a completion in between makes the figure smaller,
 * never larger. Without the drain, also what the rings hold and was not read yet. */
static uint64_t unsampled(struct block_tp *tp, bool drain)
{
	uint64_t counted = tp->counted_closed, lost = tp->lost_closed;

	for (size_t j = 0; j < tp->ncpus; j++)
		for (size_t i = 0; i < tp->nsrc; i++)
			counted += count_of(tp, tp->cpus[j]->fd[i], &lost);
	if (drain)
		drain_all(tp);
	/* Where perf counts them (Linux 6.0 and later), the completions dropped with a ring
	 * full; before, what its PERF_RECORD_LOSTs said (which count the waking records too). */
	if (tp->read_len == 16)
		tp->st.lost = lost;
	tp->st.counted = counted;
	return counted > tp->rd.records ? counted - tp->rd.records : 0;
}

uint64_t block_tp_unsampled_due(struct block_tp_unsampled_log *l, uint64_t n, uint64_t now_ns,
				bool *first)
{
	uint64_t more = n > l->said ? n - l->said : 0;

	*first = !l->at_ns;
	if (!more || (l->at_ns && now_ns - l->at_ns < BLOCK_TP_UNSAMPLED_EVERY_S * NS_PER_SEC))
		return 0;
	l->said = n;
	l->at_ns = now_ns ? now_ns : 1;
	return more;
}

uint64_t block_tp_unsampled(const struct block_tp *tp)
{
	return tp ? tp->unsampled : 0;
}

static void say_unsampled(struct block_tp *tp)
{
	uint64_t n = unsampled(tp, true), more;
	bool first;

	tp->unsampled = n;
	more = block_tp_unsampled_due(&tp->unsampled_log, n, util_mono_ns(), &first);
	if (more && first)
		log_notice("block: perf counted %llu completions it never wrote to a ring (of %llu "
			   "in all; %llu dropped with a ring full, the rest lost inside the kernel): "
			   "they are not sampled; counted from now on (entropyd_block_unsampled_"
			   "completions_total), said again at most hourly",
			   (unsigned long long)n, (unsigned long long)tp->st.counted,
			   (unsigned long long)tp->st.lost);
	else if (more)
		log_notice("block: perf never wrote %llu more completions to a ring (%llu in all, "
			   "of %llu counted): they are not sampled",
			   (unsigned long long)more, (unsigned long long)n,
			   (unsigned long long)tp->st.counted);
}

static void set_busy(struct block_tp *tp, bool busy)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = POLL_MS * 1000};

	if (tp->busy == busy)
		return;
	tp->busy = busy;
	tp->quiet_polls = 0;
	tp->window_records = 0;
	tp->st.mode_switches++;
	waker_enable(tp, !busy);
	if (busy) {
		event_add(tp->poll_ev, &tv);
		log_debug("block: busy: woken when a ring is half full, drained every 10 ms");
		return;
	}
	event_del(tp->poll_ev);
	/* What came after the last drain and before the wakeups were on has woken no one. */
	event_add(tp->tail_ev, &tv);
	say_unsampled(tp);
	log_debug("block: quiet again: woken per completion (so far %llu completions taken, %llu "
		  "lost)",
		  (unsigned long long)tp->st.samples, (unsigned long long)tp->st.lost);
}

static void ring_cb(evutil_socket_t fd, short what, void *arg)
{
	struct block_tp *tp = ((struct cpu *)arg)->tp;
	uint64_t now, n;

	n = drain_all(tp);
	if (tp->busy)
		return;
	now = util_mono_ns();
	if (now - tp->window_start > BUSY_WINDOW_MS * 1000000ull) {
		tp->window_start = now;
		tp->window_records = 0;
	}
	tp->window_records += n;
	if (tp->window_records > BUSY_RECORDS)
		set_busy(tp, true);
}

static void tail_cb(evutil_socket_t fd, short what, void *arg)
{
	drain_all(arg);
}

static void poll_cb(evutil_socket_t fd, short what, void *arg)
{
	struct block_tp *tp = arg;

	if (drain_all(tp) >= IDLE_RECORDS)
		tp->quiet_polls = 0;
	else if (++tp->quiet_polls >= IDLE_POLLS)
		set_busy(tp, false);
}

/* ---- CPUs and their rings ---- */

static void cpu_free(struct block_tp *tp, struct cpu *c)
{
	for (size_t i = 0; c->fd && i < tp->nsrc; i++)
		disk_close(tp, c, i);
	free(c->fd);
	waker_close(c);
	if (c->ev)
		event_free(c->ev);
	if (c->map)
		munmap(c->map, c->map_len);
	if (c->dfd >= 0)
		close(c->dfd);
	free(c);
}

static uint64_t enabled_time(int fd)
{
	uint64_t v[2] = {0, 0};

	if (read(fd, v, sizeof(v)) != (ssize_t)sizeof(v))
		return 0;
	return v[1];
}

/* A CPU's ring, of tp->ring_pages. NULL with errno ENODEV for an offline CPU; NULL with the
 * reason in err otherwise, and *smaller set if the ring could not be mapped for the
 * locked-memory limit (a smaller one may do). */
static struct cpu *cpu_open(struct block_tp *tp, unsigned cpu, bool *smaller, char *err,
			    size_t errlen)
{
	struct cpu *c = xcalloc(1, sizeof(*c));
	int e;

	c->tp = tp;
	c->cpu = cpu;
	c->wfd = -1;
	c->dfd = perf_open(tp, cpu, OWNER);
	if (c->dfd < 0) {
		e = errno;
		snprintf(err, errlen, "perf_event_open failed on CPU %u: %s (%s)%s", cpu,
			 util_errno_name(e) ? util_errno_name(e) : "?", strerror(e),
			 e == EACCES || e == EPERM ? ": needs CAP_PERFMON or CAP_SYS_ADMIN, or a "
						     "lower kernel.perf_event_paranoid; or set "
						     "policy.block.mode = \"disabled\""
			 : e == EAGAIN ? ": the privileged process's budget of perf events is spent "
					 "for now (asked for too often)"
				       : "");
		goto fail;
	}
	c->map_len = (size_t)(tp->ring_pages + 1) * (size_t)tp->page;
	c->map = mmap(NULL, c->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->dfd, 0);
	if (c->map == MAP_FAILED) {
		e = errno;
		c->map = NULL;
		snprintf(err, errlen, "mmap of a %u KiB perf ring for CPU %u failed: %s",
			 (unsigned)(tp->ring_pages * (unsigned long)tp->page / 1024), cpu,
			 strerror(e));
		*smaller = e == EPERM || e == ENOMEM;
		goto fail;
	}
	c->ev = event_new(tp->base, c->dfd, EV_READ | EV_PERSIST, ring_cb, c);
	if (!c->ev || event_add(c->ev, NULL) < 0) {
		e = EINVAL;
		snprintf(err, errlen, "cannot register the perf ring with the event loop");
		goto fail;
	}
	c->enabled = enabled_time(c->dfd);
	c->seen = util_mono_ns();
	return c;
fail:
	cpu_free(tp, c);
	errno = e;
	return NULL;
}

/* Open the instances on a new CPU and add it. */
static bool cpu_add(struct block_tp *tp, struct cpu *c, char *err, size_t errlen)
{
	bool filter_failed = false;

	c->fd = xreallocarray(NULL, tp->nsrc ? tp->nsrc : 1, sizeof(*c->fd));
	for (size_t i = 0; i < tp->nsrc; i++)
		c->fd[i] = -1;
	if (tp->nwant)
		waker_open(tp, c);
	for (size_t i = 0; i < tp->nsrc; i++)
		if (!disk_open(tp, c, i, &filter_failed, err, errlen)) {
			cpu_free(tp, c);
			return false;
		}
	tp->cpus = xreallocarray(tp->cpus, tp->ncpus + 1, sizeof(*tp->cpus));
	tp->cpus[tp->ncpus++] = c;
	return true;
}

static bool have_cpu(const struct block_tp *tp, unsigned cpu)
{
	for (size_t j = 0; j < tp->ncpus; j++)
		if (tp->cpus[j]->cpu == cpu)
			return true;
	return false;
}

static void cpus_close(struct block_tp *tp)
{
	for (size_t j = 0; j < tp->ncpus; j++)
		cpu_free(tp, tp->cpus[j]);
	free(tp->cpus);
	tp->cpus = NULL;
	tp->ncpus = 0;
}

static unsigned cpus_configured(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n < 1 ? 1 : n > MAX_CPUS ? MAX_CPUS : (unsigned)n;
}

/* Rings on every online CPU, of tp->ring_pages. 0; -1 with the reason in err; 1 if a ring
 * could not be mapped for the locked-memory limit. */
static int cpus_try(struct block_tp *tp, char *err, size_t errlen)
{
	unsigned n = cpus_configured();
	char first[256] = "";

	for (unsigned cpu = 0; cpu < n; cpu++) {
		bool smaller = false;
		struct cpu *c = cpu_open(tp, cpu, &smaller, err, errlen);

		if (!c && errno == ENODEV)
			continue; /* offline */
		if (!c && smaller)
			return 1;
		if (!c) {
			/* The first reason is the one to give, if no CPU works at all. */
			if (!first[0])
				strlcopy(first, err, sizeof(first));
			continue;
		}
		if (!cpu_add(tp, c, err, errlen))
			return -1;
	}
	if (!tp->ncpus) {
		if (first[0])
			strlcopy(err, first, errlen);
		else
			snprintf(err, errlen, "perf_event_open failed: no CPU online");
		return -1;
	}
	return 0;
}

/* The rings, as large as the locked-memory limit (perf_event_mlock_kb, then RLIMIT_MEMLOCK
 * without CAP_IPC_LOCK) lets them be. */
static bool cpus_open(struct block_tp *tp, char *err, size_t errlen)
{
	int r;

	for (tp->ring_pages = RING_PAGES;; tp->ring_pages /= 2) {
		r = cpus_try(tp, err, errlen);
		if (r <= 0 || tp->ring_pages <= RING_PAGES_MIN)
			break;
		cpus_close(tp);
	}
	if (r == 0 && tp->ring_pages < RING_PAGES)
		log_notice("block: the locked-memory limit allows perf rings of %u KiB only: a "
			   "busy disk may overrun them (raise LimitMEMLOCK= or grant CAP_IPC_LOCK)",
			   (unsigned)(tp->ring_pages * (unsigned long)tp->page / 1024));
	return r == 0;
}

void block_tp_cpu_changed(struct block_tp *tp, unsigned cpu)
{
	for (size_t j = 0; tp && j < tp->ncpus; j++)
		if (tp->cpus[j]->cpu == cpu)
			tp->cpus[j]->hotplugged = true;
}

bool block_tp_cpus_unsure(const struct block_tp *tp)
{
	return tp && tp->cpus_unsure;
}

unsigned block_tp_rescan_cpus(struct block_tp *tp)
{
	unsigned n = cpus_configured(), changed = 0;
	char err[256];

	/* A CPU that went offline: its events are dead, even if it is back, and their enabled
	 * time stands still for good (the kernel takes them off the CPU's context). A live
	 * event's enabled time moves at every read (the read brings it up to date on its CPU),
	 * so a dead one is told by an owner whose enabled time did not move at all between two
	 * looks at least FROZEN_NS apart (a coarse clock ticks at least every 10 ms). That it
	 * lags behind ours proves nothing: a virtual CPU kept off the host's cores, or a local
	 * clock that runs slower than CLOCK_MONOTONIC, makes it lag while its events live on,
	 * and closing them would lose what came in between. A lag (longer than OFFLINE_NS)
	 * only asks for another look soon (block_tp_cpus_unsure()), which finds a CPU that went
	 * offline since the last one, its time now standing still. The CPU's uevent is what
	 * tells at once, and its events are opened again whatever the times say. A read that
	 * fails says nothing either way. */
	tp->cpus_unsure = false;
	for (size_t j = 0; j < tp->ncpus;) {
		struct cpu *c = tp->cpus[j];
		uint64_t before = util_mono_ns(), en = enabled_time(c->dfd), after = util_mono_ns();
		uint64_t wall = before > c->seen ? before - c->seen : 0;

		if (!c->hotplugged && (en != c->enabled || en == 0 || wall < FROZEN_NS)) {
			if (en > c->enabled) {
				if (en - c->enabled + OFFLINE_NS + wall / 1000 < wall)
					tp->cpus_unsure = true;
				c->enabled = en;
				c->seen = after;
			}
			j++;
			continue;
		}
		drain_cpu(tp, c);
		block_tp_ring_flush(&tp->rd);
		if (c->hotplugged)
			log_notice("block: CPU %u went offline or online (uevent): its perf events "
				   "are opened again",
				   c->cpu);
		else
			log_notice("block: CPU %u went offline: its perf events are gone, and its "
				   "completions were not seen from then on",
				   c->cpu);
		cpu_free(tp, c);
		tp->cpus[j] = tp->cpus[--tp->ncpus];
		changed++;
	}
	for (unsigned cpu = 0; cpu < n; cpu++) {
		bool smaller = false;
		struct cpu *c;

		if (have_cpu(tp, cpu))
			continue;
		c = cpu_open(tp, cpu, &smaller, err, sizeof(err));
		if (!c && errno == ENODEV)
			continue;
		if (!c || !cpu_add(tp, c, err, sizeof(err))) {
			log_limited(&rl_ioctl, LOG_WARNING, "block: CPU %u is online, but: %s", cpu,
				    err);
			continue;
		}
		log_notice("block: CPU %u is online: its perf ring is open", cpu);
		changed++;
	}
	tp->st.cpus = (unsigned)tp->ncpus;
	return changed;
}

/* ---- open and close ---- */

void block_tp_close(struct block_tp *tp)
{
	if (!tp)
		return;
	cpus_close(tp);
	if (tp->poll_ev)
		event_free(tp->poll_ev);
	if (tp->tail_ev)
		event_free(tp->tail_ev);
	free(tp->src);
	free(tp->want);
	free(tp->wfilter);
	free(tp->failed);
	util_wipe(tp, sizeof(*tp));
	free(tp);
}

/* One descriptor per disk and CPU: the soft limit on open files is raised to the hard one,
 * once, so that many disks on many CPUs do not run out (EMFILE). */
static void raise_nofile(void)
{
	static bool done;
	struct rlimit rl;

	if (done || getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	done = true;
	if (setrlimit(RLIMIT_NOFILE, &(struct rlimit){rl.rlim_max, rl.rlim_max}) < 0) {
		log_errno(LOG_DEBUG, "block: cannot raise the open-file limit");
		return;
	}
	log_debug("block: open-file limit raised from %llu to %llu for the perf instances",
		  (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
}

struct block_tp *block_tp_open(struct event_base *base, block_samples_fn *fn, void *ctx,
			       char *err, size_t errlen)
{
	struct block_tp *tp = xcalloc(1, sizeof(*tp));

	raise_nofile();
	tp->base = base;
	tp->rd.fn = fn;
	tp->rd.ctx = ctx;
	tp->rd.st = &tp->st;
	tp->page = sysconf(_SC_PAGESIZE);
	tp->read_len = 16;
	tp->poll_ev = event_new(base, -1, EV_PERSIST, poll_cb, tp);
	tp->tail_ev = evtimer_new(base, tail_cb, tp);
	if (!read_tracepoint(tp, !priv_active(), err, errlen) || !cpus_open(tp, err, errlen)) {
		block_tp_close(tp);
		return NULL;
	}
	tp->st.cpus = (unsigned)tp->ncpus;
	tp->st.id = tp->id;
	tp->st.ring_kib = (unsigned)(tp->ring_pages * (unsigned long)tp->page / 1024);
	return tp;
}

void block_tp_set_devices(struct block_tp *tp, const uint32_t *kdevs, size_t n)
{
	bool same = n == tp->nwant;

	for (size_t i = 0; same && i < n; i++)
		same = block_tp_ring_in_list(tp->want, tp->nwant, kdevs[i]);
	if (same) {
		if (tp->nfailed)
			sources_update(tp); /* a rescan: try the failed ones again */
		return;
	}
	/* What the rings hold was recorded for the devices wanted until now. */
	drain_all(tp);
	free(tp->want);
	tp->want = n ? xreallocarray(NULL, n, sizeof(*kdevs)) : NULL;
	if (n)
		memcpy(tp->want, kdevs, n * sizeof(*kdevs));
	tp->nwant = n;
	tp->rd.want = tp->want;
	tp->rd.nwant = n;
	sources_update(tp);
}

void block_tp_get_stats(struct block_tp *tp, struct block_tp_stats *out, bool drain)
{
	tp->st.unsampled = unsampled(tp, drain);
	*out = tp->st;
	out->kernel_filter = tp->nsrc && !tp->no_filter;
}
