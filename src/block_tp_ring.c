/* block_tp_ring: reading the block tracepoint's per-CPU perf rings. Each record is a
 * completion (PERF_RECORD_SAMPLE with its time and raw entry), a waking instance's bare
 * record (counted, so that block_tp.c can tell a wakeup that came before its record), a
 * loss or a throttle. Completions of wanted devices are batched, and each batch is put in
 * time order before it is handed on. Malformed records are counted, never trusted. */
#include "autoconf.h"

#include "block_tp_ring.h"

#include <linux/perf_event.h>
#include <string.h>

#include "util.h"

#define WAKE_SIZE 16 /* a waking record: header and id */

struct log_ratelimit block_tp_ring_rl_lost = LOG_RATELIMIT_INIT;

void block_tp_ring_flush(struct tp_reader *rd)
{
	if (!rd->nbatch)
		return;
	block_backend_samples_sort(rd->batch, rd->nbatch);
	rd->fn(rd->ctx, rd->batch, rd->nbatch);
	util_wipe(rd->batch, rd->nbatch * sizeof(rd->batch[0]));
	rd->nbatch = 0;
}

bool block_tp_ring_in_list(const uint32_t *v, size_t n, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

/* A PERF_RECORD_SAMPLE with PERF_SAMPLE_IDENTIFIER | TIME | RAW: header, u64 id, u64 time,
 * u32 raw size, the raw tracepoint entry. A waking instance's has only the id. */
static void take_sample(struct tp_reader *rd, const unsigned char *r, size_t len)
{
	uint64_t t;
	uint32_t raw, kdev;
	const unsigned char *entry = r + 28;

	if (len == WAKE_SIZE) {
		rd->wakes++;
		return;
	}
	rd->records++;
	if (len < 28) {
		rd->st->bad++;
		return;
	}
	memcpy(&t, r + 16, 8);
	memcpy(&raw, r + 24, 4);
	if (raw > len - 28 || rd->dev_off + rd->dev_size > raw) {
		rd->st->bad++;
		return;
	}
	if (rd->dev_size == 8) {
		uint64_t d;

		memcpy(&d, entry + rd->dev_off, 8);
		kdev = (uint32_t)d;
	} else {
		memcpy(&kdev, entry + rd->dev_off, 4);
	}
	if (!block_tp_ring_in_list(rd->want, rd->nwant, kdev)) {
		rd->st->foreign++;
		return;
	}
	rd->st->samples++;
	if (rd->nbatch == TP_BATCH)
		block_tp_ring_flush(rd);
	rd->batch[rd->nbatch].t_ns = t;
	rd->batch[rd->nbatch].kdev = kdev;
	rd->nbatch++;
}

void block_tp_ring_drain(struct tp_reader *rd, void *map, long page, unsigned pages, unsigned cpu)
{
	struct perf_event_mmap_page *mp = map;
	unsigned char *data = (unsigned char *)map + page;
	uint64_t size = (uint64_t)pages * (uint64_t)page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;

	/* The ring never holds more than its size: a head further ahead (a corrupt control page)
	 * would have the loop below go round the same records for as long as the distance lasts,
	 * up to 2^64 bytes. Nothing between them can be believed. */
	if (head > tail && head - tail > size) {
		rd->st->bad++;
		tail = head;
	}
	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % size;
		const unsigned char *r;

		if (head - tail < sizeof(h)) {
			rd->st->bad++;
			tail = head;
			break;
		}
		/* Records are 8-byte aligned, so a header never wraps; its body may. A tail that is
		 * not aligned (a corrupt control page) would have the header read past the ring. */
		if (off % 8 != 0) {
			rd->st->bad++;
			tail = head;
			break;
		}
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 != 0 || h.size > head - tail ||
		    h.size > size) {
			rd->st->bad++;
			tail = head;
			break;
		}
		if (off + h.size <= size) {
			r = data + off;
		} else {
			size_t first = (size_t)(size - off);

			memcpy(rd->rec, data + off, first);
			memcpy(rd->rec + first, data, h.size - first);
			r = rd->rec;
		}
		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			take_sample(rd, r, h.size);
			break;
		case PERF_RECORD_LOST:
			if (h.size >= sizeof(h) + 16) {
				uint64_t lost;

				memcpy(&lost, r + sizeof(h) + 8, 8);
				rd->st->lost += lost;
				log_limited(&block_tp_ring_rl_lost, LOG_WARNING,
					    "block: the kernel dropped %llu completions on CPU %u "
					    "(ring full)",
					    (unsigned long long)lost, cpu);
			}
			break;
		case PERF_RECORD_THROTTLE:
			rd->st->throttled++;
			log_limited(&block_tp_ring_rl_lost, LOG_NOTICE,
				    "block: perf throttled the completion event on CPU %u "
				    "(kernel.perf_event_max_sample_rate)",
				    cpu);
			break;
		default:
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}
