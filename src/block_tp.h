/* block_tp: the block:block_rq_complete tracepoint through perf_event_open, per CPU and
 * disk, CLOCK_MONOTONIC timestamps. Works where debugfs is closed (kernel lockdown). */
#ifndef ENTROPYD_BLOCK_TP_H
#define ENTROPYD_BLOCK_TP_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "block_backend.h"

struct block_tp;

struct block_tp_stats {
	unsigned cpus;       /* CPUs with rings open */
	unsigned id;         /* the tracepoint's id */
	unsigned ring_kib;   /* size of each CPU's large ring */
	bool kernel_filter;  /* the kernel filters by device; else only we do */
	uint64_t samples;    /* completions of wanted devices handed on */
	uint64_t foreign;    /* completions of other devices (no kernel filter) */
	uint64_t lost;       /* completions the kernel dropped (ring full) */
	uint64_t counted;    /* completions perf counted (both instances, all CPUs) */
	uint64_t unsampled;  /* ... of which it never wrote a record (a silent kernel loss) */
	uint64_t throttled;  /* times perf throttled the event */
	uint64_t bad;        /* malformed records */
	uint64_t mode_switches; /* between woken per completion and drained every 10 ms */
};

/* Find (or mount) tracefs, read the tracepoint's id and format, and open it on every online
 * CPU, disabled until block_tp_set_devices names a device. NULL on failure, with the reason
 * in err (logged by the caller). */
struct block_tp *block_tp_open(struct event_base *base, block_samples_fn *fn, void *ctx,
			       char *err, size_t errlen);

/* Only these devices (kernel dev_t) are wanted: the events are filtered to them in the
 * kernel where it takes a filter, and always here. n == 0 disables the events. */
void block_tp_set_devices(struct block_tp *tp, const uint32_t *kdevs, size_t n);

/* Why a wanted device's instances could not be opened (tried again by the next
 * block_tp_set_devices), or NULL if they are open. */
const char *block_tp_device_error(const struct block_tp *tp, uint32_t kdev);
/* How many wanted devices that is. */
size_t block_tp_failed(const struct block_tp *tp);
/* Such devices are tried again (block.c) after BLOCK_TP_RETRY_MIN_S, then twice as long each
 * time, up to BLOCK_TP_RETRY_MAX_S: a descriptor free again (EMFILE) comes back at any time,
 * and the privileged process's budget of disk events (EAGAIN) refills one event a disk every
 * 10 s (PRIV_PERF_EVERY_S). */
#define BLOCK_TP_RETRY_MIN_S 1
#define BLOCK_TP_RETRY_MAX_S 10

/* CPUs that came online since (or went offline and came back: their events are dead) get
 * rings and events. Returns how many CPUs were opened or closed. */
unsigned block_tp_rescan_cpus(struct block_tp *tp);

/* The last block_tp_rescan_cpus saw a CPU whose perf events' time lagged ours: it may have
 * gone offline since the look before, which another look soon will tell (its time then
 * stands still), or it was only kept from running. */
bool block_tp_cpus_unsure(const struct block_tp *tp);

/* A uevent said this CPU went offline or online: the next block_tp_rescan_cpus opens its
 * events again, however short the time it was away. */
void block_tp_cpu_changed(struct block_tp *tp, unsigned cpu);

/* When to say that perf counted completions it never wrote to a ring (a loss inside the
 * kernel, a fraction of a percent on a busy VM, with nothing to do about it): a notice the
 * first time, then a summary at most every BLOCK_TP_UNSAMPLED_EVERY_S, of those since. */
struct block_tp_unsampled_log {
	uint64_t said;  /* in all, when last said */
	uint64_t at_ns; /* when last said; 0: never */
};
#define BLOCK_TP_UNSAMPLED_EVERY_S 3600
/* n: the unsampled completions in all now. How many to say now (those since the last time),
 * 0 for nothing; *first: this is the first time. */
uint64_t block_tp_unsampled_due(struct block_tp_unsampled_log *l, uint64_t n, uint64_t now_ns,
				bool *first);
/* The completions perf counted and never wrote, as of the last time the rings were drained
 * when busy turned quiet (what the log says): for status and metrics, nothing read. */
uint64_t block_tp_unsampled(const struct block_tp *tp);

/* With drain, the rings are drained first, so that the figures add up: unsampled is what
 * perf never wrote. Without, nothing is read (the summary on SIGUSR1 must not do the
 * daemon's reading for it) and unsampled also holds what the rings have not handed over. */
void block_tp_get_stats(struct block_tp *tp, struct block_tp_stats *out, bool drain);
void block_tp_close(struct block_tp *tp);

/* The tracepoint's id, from tracefs (block_tp_format_read, which may mount it: that takes
 * CAP_SYS_ADMIN), read once and kept. False with the reason in err. */
bool block_tp_tracepoint_id(unsigned *id, char *err, size_t errlen);

/* A perf filter expression that matches these devices: "dev == A || dev == B". Returns
 * false if it does not fit in size. */
bool block_tp_filter(const uint32_t *kdevs, size_t n, char *out, size_t size);

#endif
