/* source_block: block-device I/O completions as a timing source, through the block
 * tracepoint (perf) or the blktrace API; one instance per disk. */
#ifndef ENTROPYD_SOURCE_BLOCK_H
#define ENTROPYD_SOURCE_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "block_disks.h"
#include "config.h"
#include "source.h"

/* The "block" class driver. */
extern const struct source_ops source_block_ops;

/* The kernel's internal dev_t, as trace records carry it: major << 20 | minor. */
#define BLOCK_KDEV(major, minor) (((uint32_t)(major) << 20) | ((uint32_t)(minor) & 0xfffffu))

/* One completion as a backend hands it over. */
/* Counted as an event of its disk, but neither estimated nor mixed. */
#define BLOCK_NO_TIME 0

struct block_sample {
	uint64_t t_ns; /* CLOCK_MONOTONIC; BLOCK_NO_TIME: a completion whose time is unknown */
	uint32_t kdev;
};

/* A backend's batch of completions, in time order. */
typedef void block_samples_fn(void *ctx, const struct block_sample *s, size_t n);

/* Sort a batch by time (per-CPU buffers are each in order, but not with each other). */
void block_samples_sort(struct block_sample *s, size_t n);

/* The configured pattern (name or glob) that selects NAME, or NULL. "auto" in the list
 * means block_auto_disk(); "/dev/" before a name is ignored. */
const char *block_selects(const struct strlist *devices, const char *name,
			  const struct block_disk_info *info);

#endif
