/* block_tp_ring: the block tracepoint's per-CPU perf rings read and their records decoded
 * into time-ordered batches of samples; internal to block_tp.c. */
#ifndef ENTROPYD_BLOCK_TP_RING_H
#define ENTROPYD_BLOCK_TP_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "block_tp.h"
#include "log.h"

#define TP_BATCH 1024 /* samples sorted and handed on at once */

/* What the rings' records become; block_tp.c sets the first part. */
struct tp_reader {
	block_samples_fn *fn;       /* gets each batch */
	void *ctx;
	unsigned dev_off, dev_size; /* the raw entry's "dev" field, from tracefs */
	const uint32_t *want;       /* the devices wanted (block_tp's list) */
	size_t nwant;
	struct block_tp_stats *st;  /* samples, foreign, lost, throttled and bad counted in */
	uint64_t records;           /* sample records of completions read from the rings */
	uint64_t wakes;             /* waking records read */
	size_t nbatch;
	struct block_sample batch[TP_BATCH];
	/* A record that wraps around the end of a ring is copied here whole. */
	unsigned char rec[65536] __attribute__((aligned(8)));
};

/* Losses and throttling, said by the reader and by block_tp.c alike. */
extern struct log_ratelimit block_tp_ring_rl_lost;

/* Read one CPU's ring (map: the mmap'ed control page, then pages data pages of page bytes)
 * up to its head and release what was read. Samples go into the batch, handed on when full;
 * the rest at the next block_tp_ring_flush. */
void block_tp_ring_drain(struct tp_reader *rd, void *map, long page, unsigned pages, unsigned cpu);

/* Sort the batch by time and hand it on. */
void block_tp_ring_flush(struct tp_reader *rd);

bool block_tp_ring_in_list(const uint32_t *v, size_t n, uint32_t x);

#endif
