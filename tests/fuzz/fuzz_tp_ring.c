/* fuzz_tp_ring: the block tracepoint's ring reader on a ring of any content, any head and
 * tail (records that wrap around its end included), any "dev" field layout and any list of
 * wanted devices: the tail must end at the head, every batch handed on must be in time order
 * and of wanted devices, and every record must be counted once. */
#include "autoconf.h"

#include <linux/perf_event.h>
#include <string.h>

#include "block_tp_ring.h"
#include "fuzz.h"

#define PAGE 4096
#define MAX_PAGES 2

static struct tp_reader rd;
static uint64_t map_words[(PAGE * (1 + MAX_PAGES)) / 8]; /* the control page, then the data */
static uint64_t handed;

static void take(void *ctx, const struct block_sample *s, size_t n)
{
	FUZZ_ASSERT(n > 0 && n <= TP_BATCH);
	for (size_t i = 0; i < n; i++) {
		FUZZ_ASSERT(block_tp_ring_in_list(rd.want, rd.nwant, s[i].kdev));
		FUZZ_ASSERT(i == 0 || s[i - 1].t_ns <= s[i].t_ns);
	}
	handed += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *map = (unsigned char *)map_words, *ring = map + PAGE;
	struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)map;
	struct block_tp_stats st = {0};
	uint32_t want[4];
	uint64_t tail, span, ring_size;
	unsigned pages;
	uint8_t hdr[28];

	/* The header: pages, the dev field's offset and size, the span head - tail, the tail,
	 * four wanted devices; then the ring's bytes (repeated to fill it). */
	if (size < sizeof(hdr) + 8)
		return 0;
	memcpy(hdr, data, sizeof(hdr));
	data += sizeof(hdr);
	size -= sizeof(hdr);
	pages = 1 + hdr[0] % MAX_PAGES;
	ring_size = (uint64_t)pages * PAGE;
	memset(&rd, 0, offsetof(struct tp_reader, batch));
	rd.fn = take;
	rd.dev_off = hdr[1] % 64;
	rd.dev_size = hdr[2] & 1 ? 8 : 4;
	memcpy(&span, hdr + 4, 8);
	memcpy(&tail, hdr + 12, 8);
	memcpy(want, hdr + 20, 8);
	want[2] = 0;
	want[3] = (7u << 20) | 3u;
	/* Mostly a span a ring can hold, now and then any (a corrupt head). */
	if (!(hdr[3] & 0x80))
		span %= ring_size + 1;
	/* Tails near the 64-bit wrap, and small ones. */
	if (hdr[3] & 0x40)
		tail %= 4 * ring_size;
	rd.want = want;
	rd.nwant = 1 + hdr[3] % 4;
	rd.st = &st;
	memset(map, 0, PAGE);
	for (uint64_t off = 0; off < ring_size; off += size)
		memcpy(ring + off, data, ring_size - off < size ? ring_size - off : size);
	mp->data_tail = tail;
	mp->data_head = tail + span;
	handed = 0;

	block_tp_ring_drain(&rd, map, PAGE, pages, 0);
	block_tp_ring_flush(&rd);
	/* Everything up to the head is read (or given up as bad): the kernel may write on. */
	FUZZ_ASSERT(mp->data_tail == (tail + span < tail ? tail : tail + span));
	FUZZ_ASSERT(handed == st.samples && rd.nbatch == 0);
	FUZZ_ASSERT(st.samples + st.foreign + st.bad >= st.samples);
	FUZZ_ASSERT(st.samples + st.foreign <= rd.records);
	return 0;
}
