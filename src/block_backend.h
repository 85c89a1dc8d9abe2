/* block_backend: what a block backend (the tracepoint, blktrace) hands the block source: batches
 * of completions, each a time and the kernel's device number. Both backends and the source
 * include this; no backend includes the source. */
#ifndef ENTROPYD_BLOCK_BACKEND_H
#define ENTROPYD_BLOCK_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* The kernel's internal dev_t, as trace records carry it: major << 20 | minor. */
#define BLOCK_KDEV(major, minor) (((uint32_t)(major) << 20) | ((uint32_t)(minor) & 0xfffffu))

/* Counted as an event of its disk, but neither estimated nor mixed. */
#define BLOCK_NO_TIME 0

/* One completion as a backend hands it over. */
struct block_sample {
	uint64_t t_ns; /* CLOCK_MONOTONIC; BLOCK_NO_TIME: a completion whose time is unknown */
	uint32_t kdev;
};

/* A backend's batch of completions, in time order. */
typedef void block_samples_fn(void *ctx, const struct block_sample *s, size_t n);

/* Sort a batch by time (per-CPU buffers are each in order, but not with each other). */
void block_backend_samples_sort(struct block_sample *s, size_t n);

#endif
