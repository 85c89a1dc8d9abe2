/* block_tp: the block:block_rq_complete tracepoint through perf_event_open.
 *
 * Per online CPU, one mmap'ed ring, owned by a dummy software event that never fires, and
 * two instances of the tracepoint that write into it (PERF_EVENT_IOC_SET_OUTPUT): one that
 * wakes us per completion, one that wakes us only when the ring is half full. One of them
 * is enabled at a time. While completions are few we are woken per completion and hand each
 * on at once (what matters at boot). A wakeup costs the completing CPU an interrupt (an IPI,
 * and a VM exit in a guest), which on a busy fast disk costs its I/O more than the tracing
 * itself (bench/block.sh measured twice the time per I/O): past BUSY_RECORDS completions in
 * BUSY_WINDOW_MS the other instance takes over and the rings are drained every POLL_MS,
 * until IDLE_POLLS drains in a row find fewer than IDLE_RECORDS records each. Completions
 * are counted, not wakeups: the interrupt is the kernel's per completion, however few times
 * a loaded machine lets us run.
 *
 * A switch must neither lose nor double a completion: the new instance is enabled before
 * the old is disabled, and a completion that both recorded in between gives two adjacent
 * records in the ring, with the same raw entry, from different instances, microseconds
 * apart: the second is dropped. The same mechanism changes the device filter (a perf event
 * takes a filter only once): the idle instance is reopened with the new filter and switched
 * to. (A record is matched against the few before it, within a millisecond: a nested
 * completion may come between the two, a preempted vCPU may delay the second.)
 *
 * Timestamps are CLOCK_MONOTONIC (use_clockid). The raw entry's "dev" field (offset and size
 * read from tracefs, not assumed) says which disk completed. A readable ring drains every
 * ring, so that one batch can be put in time order before it is handed on. */
#include "autoconf.h"

#include "block_tp.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#define TRACEFS "/sys/kernel/tracing"
#define TRACEFS_OLD "/sys/kernel/debug/tracing"
#define EVENT_DIR "events/block/block_rq_complete"
/* Data pages per CPU ring (a power of two): 256 KiB hold about 3600 completions, what a busy
 * disk completes while we wait ~100 ms for the CPU on a loaded machine. Halved down to
 * RING_PAGES_MIN where the locked-memory limit will not have that. */
#define RING_PAGES 64
#define RING_PAGES_MIN 8
#define BATCH 1024    /* samples sorted and handed on at once */
#define BUSY_WINDOW_MS 100
#define BUSY_RECORDS 20
#define POLL_MS 10
#define IDLE_POLLS 20
#define IDLE_RECORDS 2
/* The two records of one completion are this close in time (microseconds, but a preempted
 * vCPU may stretch that), and at most PENDING_MAX records apart. */
#define TWIN_NS 1000000
#define PENDING_MAX 8
#define RAW_MAX 128    /* raw entries compared for twins up to this size */
#define MAX_CPUS 4096

/* The two instances of the tracepoint. */
enum { WAKE_EACH, WAKE_HALF, NSLOTS };

struct ring {
	struct block_tp *tp;
	unsigned cpu;
	int dfd; /* the dummy event that owns the ring */
	void *map;
	size_t map_len;
	struct event *ev;
	int fd[NSLOTS];
	uint64_t id[NSLOTS];
	/* Records not yet matched, while a switch may have doubled completions. */
	struct pending {
		uint64_t id, t;
		uint32_t len;
		unsigned char raw[RAW_MAX];
	} pending[PENDING_MAX];
	size_t npending;
};

struct block_tp {
	block_samples_fn *fn;
	void *ctx;
	struct event_base *base;
	unsigned id;
	unsigned dev_off, dev_size;
	long page;
	unsigned ring_pages;
	struct ring *rings;
	size_t nrings;
	int active;            /* the enabled slot, or -1 */
	unsigned gen[NSLOTS];  /* the filter generation each slot was opened with */
	unsigned filter_gen;
	char *filter;          /* NULL: none */
	bool no_filter;        /* the kernel takes none: filter here only */
	uint64_t twin_from, twin_to; /* times in which a switch may have doubled records */
	uint32_t *want;
	size_t nwant;
	struct block_tp_stats st;
	uint64_t records;        /* sample records read from the rings */
	uint64_t counted_closed; /* what closed instances had counted */
	uint64_t unsampled_said; /* unsampled completions already warned about */
	size_t read_len;         /* 16 with PERF_FORMAT_LOST, else 8 */
	bool busy;             /* drained by poll_ev, the half-full instance enabled */
	struct event *poll_ev;
	struct event *tail_ev; /* one drain after a switch */
	uint64_t window_start; /* completions counted since */
	uint64_t window_records;
	unsigned quiet_polls;
	size_t nbatch;
	struct block_sample batch[BATCH];
	/* A record that wraps around the end of a ring is copied here whole. */
	unsigned char rec[65536] __attribute__((aligned(8)));
};

static struct log_ratelimit rl_lost = LOG_RATELIMIT_INIT;

/* ---- tracefs ---- */

bool block_tp_format_field(const char *text, const char *name, unsigned *offset,
			   unsigned *size)
{
	size_t nlen = strlen(name);

	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		const char *f = strstr(line, "field:");
		const char *semi, *id;
		unsigned o, s;

		if (!end)
			end = line + strlen(line);
		if (f && f < end && (semi = memchr(f, ';', (size_t)(end - f)))) {
			/* The declaration's last identifier, an array suffix stripped. */
			const char *p = semi;

			while (p > f && p[-1] == ']')
				while (p > f && *--p != '[')
					;
			id = p;
			while (id > f && (isalnum((unsigned char)id[-1]) || id[-1] == '_'))
				id--;
			if ((size_t)(p - id) == nlen && strncmp(id, name, nlen) == 0) {
				const char *po = strstr(semi, "offset:");
				const char *ps = strstr(semi, "size:");

				if (po && ps && po < end && ps < end &&
				    sscanf(po, "offset:%u;", &o) == 1 &&
				    sscanf(ps, "size:%u;", &s) == 1) {
					*offset = o;
					*size = s;
					return true;
				}
				return false;
			}
		}
		line = *end ? end + 1 : end;
	}
	return false;
}

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

static char *read_small(const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	size_t len = 0;

	if (fd < 0)
		return NULL;
	buf = xmalloc(max + 1);
	while (len < max) {
		ssize_t n = read(fd, buf + len, max - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

static bool have_event(const char *dir)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/id", dir);
	return access(path, R_OK) == 0;
}

/* The tracefs directory with the tracepoint in it, mounting tracefs if need be. */
static const char *tracefs_dir(char *err, size_t errlen)
{
	struct statfs sfs;

	if (have_event(TRACEFS))
		return TRACEFS;
	if (have_event(TRACEFS_OLD))
		return TRACEFS_OLD;
	if (statfs(TRACEFS, &sfs) == 0 && sfs.f_type == TRACEFS_MAGIC) {
		snprintf(err, errlen, "tracefs has no " EVENT_DIR " (kernel without the block "
				      "tracepoints?)");
		return NULL;
	}
	if (mount("nodev", TRACEFS, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		snprintf(err, errlen, "tracefs is not mounted and mounting it at " TRACEFS
				      " failed: %s",
			 strerror(errno));
		return NULL;
	}
	log_notice("block: tracefs was not mounted; mounted it at " TRACEFS);
	if (have_event(TRACEFS))
		return TRACEFS;
	snprintf(err, errlen, "tracefs has no " EVENT_DIR " (kernel without the block "
			      "tracepoints?)");
	return NULL;
}

static bool read_tracepoint(struct block_tp *tp, char *err, size_t errlen)
{
	const char *dir = tracefs_dir(err, errlen);
	char path[256], *text, *end;
	unsigned long id;

	if (!dir)
		return false;
	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/id", dir);
	text = read_small(path, 64);
	if (!text) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return false;
	}
	errno = 0;
	id = strtoul(text, &end, 10);
	if (errno || end == text || id == 0 || id > UINT32_MAX) {
		snprintf(err, errlen, "%s: not a tracepoint id", path);
		free(text);
		return false;
	}
	free(text);
	tp->id = (unsigned)id;
	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/format", dir);
	text = read_small(path, 16384);
	if (!text) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return false;
	}
	if (!block_tp_format_field(text, "dev", &tp->dev_off, &tp->dev_size) ||
	    (tp->dev_size != 4 && tp->dev_size != 8)) {
		snprintf(err, errlen, "%s: no 4- or 8-byte \"dev\" field", path);
		free(text);
		return false;
	}
	free(text);
	return true;
}

/* ---- reading the rings ---- */

static void flush_batch(struct block_tp *tp)
{
	if (!tp->nbatch)
		return;
	block_samples_sort(tp->batch, tp->nbatch);
	tp->fn(tp->ctx, tp->batch, tp->nbatch);
	wipe(tp->batch, tp->nbatch * sizeof(tp->batch[0]));
	tp->nbatch = 0;
}

static bool wanted(const struct block_tp *tp, uint32_t kdev)
{
	for (size_t i = 0; i < tp->nwant; i++)
		if (tp->want[i] == kdev)
			return true;
	return false;
}

/* Is this record the second of a completion that both instances recorded during a switch?
 * Remembers it as the previous record otherwise. */
static bool twin(struct block_tp *tp, struct ring *rg, uint64_t id, uint64_t t,
		 const unsigned char *raw, uint32_t len)
{
	struct pending *p;

	if (!tp->twin_to || t < tp->twin_from || t > tp->twin_to || len > RAW_MAX) {
		rg->npending = 0;
		return false;
	}
	for (size_t i = 0; i < rg->npending; i++) {
		p = &rg->pending[i];
		if (p->id != id && p->len == len &&
		    (t > p->t ? t - p->t : p->t - t) <= TWIN_NS && memcmp(p->raw, raw, len) == 0) {
			/* The other half of a pair: both are done with. */
			*p = rg->pending[--rg->npending];
			tp->st.twins++;
			return true;
		}
	}
	/* Unmatched so far: its twin may follow (usually next, later if a nested completion
	 * came in between). The oldest goes when full. */
	if (rg->npending == PENDING_MAX) {
		memmove(rg->pending, rg->pending + 1, (PENDING_MAX - 1) * sizeof(*rg->pending));
		rg->npending--;
	}
	p = &rg->pending[rg->npending++];
	p->id = id;
	p->t = t;
	p->len = len;
	memcpy(p->raw, raw, len);
	return false;
}

/* A PERF_RECORD_SAMPLE with PERF_SAMPLE_IDENTIFIER | TIME | RAW: header, u64 id, u64 time,
 * u32 raw size, the raw tracepoint entry. */
static void take_sample(struct block_tp *tp, struct ring *rg, const unsigned char *r,
			size_t len)
{
	uint64_t id, t;
	uint32_t raw, kdev;
	const unsigned char *entry = r + 28;

	tp->records++;
	if (len < 28) {
		tp->st.bad++;
		return;
	}
	memcpy(&id, r + 8, 8);
	memcpy(&t, r + 16, 8);
	memcpy(&raw, r + 24, 4);
	if (raw > len - 28 || tp->dev_off + tp->dev_size > raw) {
		tp->st.bad++;
		return;
	}
	if (twin(tp, rg, id, t, entry, raw))
		return;
	if (tp->dev_size == 8) {
		uint64_t d;

		memcpy(&d, entry + tp->dev_off, 8);
		kdev = (uint32_t)d;
	} else {
		memcpy(&kdev, entry + tp->dev_off, 4);
	}
	if (!wanted(tp, kdev)) {
		tp->st.foreign++;
		return;
	}
	tp->st.samples++;
	if (tp->nbatch == BATCH)
		flush_batch(tp);
	tp->batch[tp->nbatch].t_ns = t;
	tp->batch[tp->nbatch].kdev = kdev;
	tp->nbatch++;
}

static void drain_ring(struct block_tp *tp, struct ring *rg)
{
	struct perf_event_mmap_page *mp = rg->map;
	unsigned char *data = (unsigned char *)rg->map + tp->page;
	uint64_t size = (uint64_t)tp->ring_pages * (uint64_t)tp->page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % size;
		const unsigned char *r;

		if (head - tail < sizeof(h)) {
			tp->st.bad++;
			tail = head;
			break;
		}
		/* Records are 8-byte aligned, so a header never wraps; its body may. */
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 != 0 || h.size > head - tail ||
		    h.size > size) {
			tp->st.bad++;
			tail = head;
			break;
		}
		if (off + h.size <= size) {
			r = data + off;
		} else {
			size_t first = (size_t)(size - off);

			memcpy(tp->rec, data + off, first);
			memcpy(tp->rec + first, data, h.size - first);
			r = tp->rec;
		}
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			take_sample(tp, rg, r, h.size);
			break;
		case PERF_RECORD_LOST:
			if (h.size >= sizeof(h) + 16) {
				uint64_t lost;

				memcpy(&lost, r + sizeof(h) + 8, 8);
				tp->st.lost += lost;
				log_limited(&rl_lost, LOG_WARNING,
					    "block: the kernel dropped %llu completions on CPU %u "
					    "(ring full)",
					    (unsigned long long)lost, rg->cpu);
			}
			break;
		case PERF_RECORD_THROTTLE:
			tp->st.throttled++;
			log_limited(&rl_lost, LOG_NOTICE,
				    "block: perf throttled the completion event on CPU %u "
				    "(kernel.perf_event_max_sample_rate)",
				    rg->cpu);
			break;
		default:
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

/* Drain every ring; the number of records read. */
static uint64_t drain_all(struct block_tp *tp)
{
	uint64_t before = tp->st.samples + tp->st.foreign + tp->st.bad + tp->st.twins;

	for (size_t i = 0; i < tp->nrings; i++)
		drain_ring(tp, &tp->rings[i]);
	flush_batch(tp);
	/* Long past the switch, with every ring drained, no twin can still be on its way. */
	if (tp->twin_to && mono_ns() > tp->twin_to + NS_PER_SEC)
		tp->twin_from = tp->twin_to = 0;
	return tp->st.samples + tp->st.foreign + tp->st.bad + tp->st.twins - before;
}

/* ---- the two instances ---- */

static int perf_open(const struct block_tp *tp, unsigned cpu, int slot)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW;
	a.disabled = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	if (tp->read_len == 16)
		a.read_format = PERF_FORMAT_LOST;
	if (slot < 0) {
		/* The ring's owner: never fires; the ring wakes us when half full. */
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_DUMMY;
	} else {
		a.type = PERF_TYPE_TRACEPOINT;
		a.config = tp->id;
		a.sample_period = 1;
		a.wakeup_events = slot == WAKE_EACH ? 1 : 0;
	}
	return (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* How many completions an instance has counted: every one it should have written. */
static uint64_t count_of(const struct block_tp *tp, int fd)
{
	uint64_t v[2] = {0, 0};

	if (fd < 0 || read(fd, v, tp->read_len) != (ssize_t)tp->read_len)
		return 0;
	return v[0];
}

static void slot_close(struct block_tp *tp, int slot)
{
	for (size_t i = 0; i < tp->nrings; i++) {
		struct ring *rg = &tp->rings[i];

		if (rg->fd[slot] >= 0) {
			tp->counted_closed += count_of(tp, rg->fd[slot]);
			close(rg->fd[slot]);
		}
		rg->fd[slot] = -1;
	}
}

/* Completions perf counted but never wrote to a ring: a loss inside the kernel, which
 * reports it nowhere else (no PERF_RECORD_LOST, no lost_samples). Seen on a loaded VM. */
static uint64_t unsampled(struct block_tp *tp)
{
	uint64_t counted = tp->counted_closed;

	drain_all(tp);
	for (size_t i = 0; i < tp->nrings; i++)
		for (int slot = 0; slot < NSLOTS; slot++)
			counted += count_of(tp, tp->rings[i].fd[slot]);
	tp->st.counted = counted;
	return counted > tp->records ? counted - tp->records : 0;
}

static void say_unsampled(struct block_tp *tp)
{
	uint64_t n = unsampled(tp);

	if (n > tp->unsampled_said)
		log_limited(&rl_lost, LOG_WARNING,
			    "block: perf counted %llu completions it never wrote to a ring (of %llu "
			    "in all; a loss inside the kernel): they are not sampled",
			    (unsigned long long)n, (unsigned long long)tp->st.counted);
	tp->unsampled_said = n;
}

/* (Re)open one instance on every ring, disabled, with the current filter. */
static bool slot_open(struct block_tp *tp, int slot, char *err, size_t errlen)
{
	slot_close(tp, slot);
	for (size_t i = 0; i < tp->nrings; i++) {
		struct ring *rg = &tp->rings[i];
		int fd = perf_open(tp, rg->cpu, slot);

		if (fd < 0 && errno == EINVAL && tp->read_len == 16) {
			/* Before Linux 6.0: no PERF_FORMAT_LOST. */
			tp->read_len = 8;
			fd = perf_open(tp, rg->cpu, slot);
		}
		if (fd < 0) {
			snprintf(err, errlen, "perf_event_open on block:block_rq_complete, CPU %u: %s",
				 rg->cpu, strerror(errno));
			return false;
		}
		rg->fd[slot] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, rg->dfd) < 0 ||
		    ioctl(fd, PERF_EVENT_IOC_ID, &rg->id[slot]) < 0) {
			snprintf(err, errlen, "cannot direct the tracepoint into its ring: %s",
				 strerror(errno));
			return false;
		}
		if (tp->filter && !tp->no_filter &&
		    ioctl(fd, PERF_EVENT_IOC_SET_FILTER, tp->filter) < 0) {
			log_errno(LOG_INFO, "block: the kernel takes no device filter for the "
					    "tracepoint; filtering here");
			tp->no_filter = true;
			return slot_open(tp, slot, err, errlen);
		}
	}
	tp->gen[slot] = tp->filter_gen;
	return true;
}

static void slot_enable(struct block_tp *tp, int slot, struct ring *rg, bool on)
{
	if (ioctl(rg->fd[slot], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
		log_errno(LOG_WARNING, "block: cannot %s the tracepoint on CPU %u",
			  on ? "enable" : "disable", rg->cpu);
}

/* Make `slot` the enabled instance: on each CPU the new one is enabled before the old is
 * disabled, and what both recorded in between is taken once (twin()). */
static void switch_to(struct block_tp *tp, int slot)
{
	int old = tp->active;

	if (old == slot)
		return;
	/* Two switches in a row (a filter change) make one longer window. */
	if (!tp->twin_to)
		tp->twin_from = mono_ns();
	for (size_t i = 0; i < tp->nrings; i++) {
		if (slot >= 0)
			slot_enable(tp, slot, &tp->rings[i], true);
		if (old >= 0)
			slot_enable(tp, old, &tp->rings[i], false);
	}
	tp->active = slot;
	if (old >= 0 && slot >= 0)
		tp->twin_to = mono_ns() + TWIN_NS;
	else if (!tp->twin_to)
		tp->twin_from = 0;
	/* What the old instance wrote last may not have woken us, and nothing may come after
	 * it to do so: drain once, a little later, when the last of it is surely written. */
	if (old >= 0) {
		struct timeval tv = {.tv_sec = 0, .tv_usec = POLL_MS * 1000};

		event_add(tp->tail_ev, &tv);
	}
}

/* Bring the enabled instance in line with what is wanted: none without devices, else the
 * one for the current load, with the current filter. */
static void reconcile(struct block_tp *tp)
{
	char err[256];
	int want = tp->busy ? WAKE_HALF : WAKE_EACH;

	if (!tp->nwant) {
		switch_to(tp, -1);
		return;
	}
	if (tp->active == want && tp->gen[want] == tp->filter_gen)
		return;
	if (tp->active == want) {
		/* Same kind, new filter: the other kind bridges the change. */
		int other = want == WAKE_EACH ? WAKE_HALF : WAKE_EACH;

		if (tp->gen[other] != tp->filter_gen && !slot_open(tp, other, err, sizeof(err)))
			goto fail;
		switch_to(tp, other);
	}
	if (tp->gen[want] != tp->filter_gen && !slot_open(tp, want, err, sizeof(err)))
		goto fail;
	switch_to(tp, want);
	return;
fail:
	log_warn("block: cannot reopen the tracepoint: %s", err);
}

/* ---- load ---- */

static void set_busy(struct block_tp *tp, bool busy)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = POLL_MS * 1000};

	if (tp->busy == busy)
		return;
	tp->busy = busy;
	tp->quiet_polls = 0;
	tp->window_records = 0;
	tp->st.mode_switches++;
	if (busy)
		event_add(tp->poll_ev, &tv);
	else
		event_del(tp->poll_ev);
	reconcile(tp);
	if (!busy)
		say_unsampled(tp);
	if (busy)
		log_debug("block: busy: woken when a ring is half full, drained every 10 ms");
	else
		log_debug("block: quiet again: woken per completion (so far %llu completions taken, "
			  "%llu lost, %llu recorded twice while switching)",
			  (unsigned long long)tp->st.samples, (unsigned long long)tp->st.lost,
			  (unsigned long long)tp->st.twins);
}

static void ring_cb(evutil_socket_t fd, short what, void *arg)
{
	struct block_tp *tp = ((struct ring *)arg)->tp;
	uint64_t now, n;

	n = drain_all(tp);
	if (tp->busy)
		return;
	now = mono_ns();
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

/* ---- open and close ---- */

static void ring_close(struct ring *rg)
{
	for (int s = 0; s < NSLOTS; s++)
		if (rg->fd[s] >= 0)
			close(rg->fd[s]);
	if (rg->ev)
		event_free(rg->ev);
	if (rg->map)
		munmap(rg->map, rg->map_len);
	if (rg->dfd >= 0)
		close(rg->dfd);
}

static void rings_close(struct block_tp *tp)
{
	for (size_t i = 0; i < tp->nrings; i++)
		ring_close(&tp->rings[i]);
	free(tp->rings);
	tp->rings = NULL;
	tp->nrings = 0;
}

void block_tp_close(struct block_tp *tp)
{
	if (!tp)
		return;
	rings_close(tp);
	if (tp->poll_ev)
		event_free(tp->poll_ev);
	if (tp->tail_ev)
		event_free(tp->tail_ev);
	free(tp->filter);
	free(tp->want);
	wipe(tp, sizeof(*tp));
	free(tp);
}

/* A ring per online CPU, owned by a dummy event. */
/* A ring per online CPU, owned by a dummy event, of tp->ring_pages. 0; -1 with the reason
 * in err; 1 if a ring could not be mapped for the locked-memory limit (a smaller size may
 * do). */
static int rings_try(struct block_tp *tp, char *err, size_t errlen)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int first_errno = 0;

	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	tp->rings = xcalloc((size_t)ncpu, sizeof(*tp->rings));
	for (unsigned cpu = 0; cpu < (unsigned)ncpu; cpu++) {
		struct ring *rg = &tp->rings[tp->nrings];
		int fd = perf_open(tp, cpu, -1);

		if (fd < 0) {
			/* ENODEV: an offline CPU. */
			if (errno != ENODEV && !first_errno)
				first_errno = errno;
			continue;
		}
		rg->tp = tp;
		rg->dfd = fd;
		rg->cpu = cpu;
		rg->fd[WAKE_EACH] = rg->fd[WAKE_HALF] = -1;
		tp->nrings++;
		rg->map_len = (size_t)(tp->ring_pages + 1) * (size_t)tp->page;
		rg->map = mmap(NULL, rg->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (rg->map == MAP_FAILED) {
			rg->map = NULL;
			snprintf(err, errlen, "mmap of a %u KiB perf ring for CPU %u failed: %s",
				 (unsigned)(tp->ring_pages * (unsigned long)tp->page / 1024), cpu,
				 strerror(errno));
			return errno == EPERM || errno == ENOMEM ? 1 : -1;
		}
		rg->ev = event_new(tp->base, fd, EV_READ | EV_PERSIST, ring_cb, rg);
		if (!rg->ev || event_add(rg->ev, NULL) < 0) {
			snprintf(err, errlen, "cannot register the perf ring with the event loop");
			return -1;
		}
	}
	if (!tp->nrings) {
		errno = first_errno ? first_errno : ENODEV;
		snprintf(err, errlen, "perf_event_open failed: %s%s", strerror(errno),
			 errno == EACCES || errno == EPERM
				 ? " (needs CAP_PERFMON or CAP_SYS_ADMIN, or a lower "
				   "kernel.perf_event_paranoid)"
				 : "");
		return -1;
	}
	return 0;
}

/* The rings, as large as the locked-memory limit (perf_event_mlock_kb, then RLIMIT_MEMLOCK
 * without CAP_IPC_LOCK) lets them be. */
static bool rings_open(struct block_tp *tp, char *err, size_t errlen)
{
	int r;

	for (tp->ring_pages = RING_PAGES;; tp->ring_pages /= 2) {
		r = rings_try(tp, err, errlen);
		if (r <= 0 || tp->ring_pages <= RING_PAGES_MIN)
			break;
		rings_close(tp);
	}
	if (r == 0 && tp->ring_pages < RING_PAGES)
		log_notice("block: the locked-memory limit allows perf rings of %u KiB only: a "
			   "busy disk may overrun them (raise LimitMEMLOCK= or grant CAP_IPC_LOCK)",
			   (unsigned)(tp->ring_pages * (unsigned long)tp->page / 1024));
	return r == 0;
}

struct block_tp *block_tp_open(struct event_base *base, block_samples_fn *fn, void *ctx,
			       char *err, size_t errlen)
{
	struct block_tp *tp = xcalloc(1, sizeof(*tp));

	tp->base = base;
	tp->fn = fn;
	tp->ctx = ctx;
	tp->active = -1;
	tp->page = sysconf(_SC_PAGESIZE);
	tp->read_len = 16;
	tp->poll_ev = event_new(base, -1, EV_PERSIST, poll_cb, tp);
	tp->tail_ev = evtimer_new(base, tail_cb, tp);
	if (!read_tracepoint(tp, err, errlen) || !rings_open(tp, err, errlen) ||
	    !slot_open(tp, WAKE_EACH, err, errlen) || !slot_open(tp, WAKE_HALF, err, errlen)) {
		block_tp_close(tp);
		return NULL;
	}
	tp->st.cpus = (unsigned)tp->nrings;
	tp->st.id = tp->id;
	tp->st.ring_kib = (unsigned)(tp->ring_pages * (unsigned long)tp->page / 1024);
	return tp;
}

static bool same_set(const struct block_tp *tp, const uint32_t *kdevs, size_t n)
{
	if (n != tp->nwant)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!wanted(tp, kdevs[i]))
			return false;
	return true;
}

void block_tp_set_devices(struct block_tp *tp, const uint32_t *kdevs, size_t n)
{
	char filter[2048];

	if (!same_set(tp, kdevs, n)) {
		free(tp->want);
		tp->want = n ? xreallocarray(NULL, n, sizeof(*kdevs)) : NULL;
		if (n)
			memcpy(tp->want, kdevs, n * sizeof(*kdevs));
		tp->nwant = n;
		free(tp->filter);
		tp->filter = NULL;
		/* Without a kernel filter, every completion of every disk reaches us. */
		if (n && !tp->no_filter && block_tp_filter(kdevs, n, filter, sizeof(filter)))
			tp->filter = xstrdup(filter);
		tp->filter_gen++;
	}
	reconcile(tp);
}

void block_tp_get_stats(struct block_tp *tp, struct block_tp_stats *out)
{
	tp->st.unsampled = unsampled(tp);
	*out = tp->st;
	out->kernel_filter = tp->filter != NULL && !tp->no_filter;
}
