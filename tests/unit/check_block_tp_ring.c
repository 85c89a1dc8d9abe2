/* check_block_tp_ring: the reader of the block tracepoint's perf rings, on rings laid out in
 * memory as the kernel lays them (a control page, then the data pages; records 8-byte
 * aligned, a record's body wrapping round the end of the ring): completions, waking records,
 * losses, throttles, records of other types, and every malformed record or control page the
 * reader refuses, as a table. */
#include "autoconf.h"

#include <check.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "block_tp_ring.h"
#include "testutil.h"
#include "util.h"

#define PAGE 4096
#define DEV_A 0x00700003u /* the wanted device (kernel dev_t of 7:3) */
#define DEV_B 0x00800000u /* another one (8:0) */
#define RAW_SIZE 52       /* a block_rq_complete entry: 28 + 52 = 80 bytes a record */
#define DEV_OFF 8

/* A ring in memory: the control page, then pages data pages. */
struct ring {
	unsigned char *map;
	unsigned pages;
	uint64_t size;
	uint64_t head;
};

static void ring_init(struct ring *r, unsigned pages, uint64_t start)
{
	r->pages = pages;
	r->size = (uint64_t)pages * PAGE;
	r->map = aligned_alloc(PAGE, PAGE + r->size);
	ck_assert_ptr_nonnull(r->map);
	/* Garbage where nothing was written: the reader must read only what lies between tail
	 * and head. */
	memset(r->map, 0xa5, PAGE + r->size);
	memset(r->map, 0, sizeof(struct perf_event_mmap_page));
	r->head = start;
	((struct perf_event_mmap_page *)r->map)->data_tail = start;
}

/* Lays n bytes at the head, round the end of the ring as the kernel does. */
static void ring_put(struct ring *r, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		r->map[PAGE + (r->head + i) % r->size] = b[i];
	r->head += n;
}

static void ring_publish(struct ring *r)
{
	((struct perf_event_mmap_page *)r->map)->data_head = r->head;
}

static uint64_t ring_tail(const struct ring *r)
{
	return ((const struct perf_event_mmap_page *)r->map)->data_tail;
}

static void put_header(struct ring *r, uint32_t type, uint16_t size)
{
	struct perf_event_header h = {.type = type, .misc = 0, .size = size};

	ring_put(r, &h, sizeof(h));
}

static void put_u64(struct ring *r, uint64_t v)
{
	ring_put(r, &v, sizeof(v));
}

/* A completion: header, id, time, raw size, the raw entry with the device at DEV_OFF
 * (dev_size bytes), padded to 8 bytes. raw is the size the record says its entry has;
 * laid is how many bytes of entry follow. */
static void put_sample(struct ring *r, uint64_t t, uint32_t dev, unsigned dev_size, uint32_t raw,
		       uint32_t laid)
{
	unsigned char entry[256] = {0};
	uint32_t n = 28 + laid;

	ck_assert_uint_le(laid, sizeof(entry));
	ck_assert_uint_eq(n % 8, 0);
	put_header(r, PERF_RECORD_SAMPLE, (uint16_t)n);
	put_u64(r, 0x1234); /* the event's id */
	put_u64(r, t);
	ring_put(r, &raw, sizeof(raw));
	memset(entry, 0x5a, DEV_OFF);
	if (dev_size == 8) {
		uint64_t d = dev;

		memcpy(entry + DEV_OFF, &d, 8);
	} else {
		memcpy(entry + DEV_OFF, &dev, 4);
	}
	ring_put(r, entry, laid);
}

/* ---- the reader and what it hands on ---- */

static struct block_sample got[2 * TP_BATCH];
static size_t ngot, calls;

static void collect(void *ctx, const struct block_sample *s, size_t n)
{
	(void)ctx;
	ck_assert_uint_le(ngot + n, ARRAY_SIZE(got));
	memcpy(got + ngot, s, n * sizeof(*s));
	ngot += n;
	calls++;
}

static const uint32_t wanted[] = {DEV_A, 0x00fe0001u};

static struct tp_reader *reader_new(struct block_tp_stats *st, unsigned dev_size)
{
	struct tp_reader *rd = xcalloc(1, sizeof(*rd));

	memset(st, 0, sizeof(*st));
	rd->fn = collect;
	rd->dev_off = DEV_OFF;
	rd->dev_size = dev_size;
	rd->want = wanted;
	rd->nwant = ARRAY_SIZE(wanted);
	rd->st = st;
	ngot = calls = 0;
	return rd;
}

/* ---- the table ---- */

enum step_kind {
	S_END,
	S_SAMPLE,   /* a completion at t of dev */
	S_WAKE,     /* a waking instance's bare record */
	S_LOST,     /* PERF_RECORD_LOST of n completions */
	S_LOST_SHORT, /* a PERF_RECORD_LOST without its count */
	S_THROTTLE, /* PERF_RECORD_THROTTLE */
	S_OTHER,    /* a record of a type the reader does not read (PERF_RECORD_COMM) */
	S_RAW,      /* a completion whose raw size says n (its entry is RAW_SIZE) */
	S_TINY,     /* a sample record of n bytes, too short for its fixed part */
	S_HEADER,   /* only a header that says n bytes; 8 bytes laid */
	S_BYTES,    /* n bytes of zeros, not a record */
};

struct step {
	enum step_kind k;
	uint64_t t;
	uint32_t dev;
	uint32_t n;
};

struct ring_case {
	const char *name;
	uint64_t start;     /* where tail and head begin (their offset in the ring is this mod size) */
	unsigned dev_size;  /* of the raw entry's "dev" field: 4 or 8 */
	uint64_t head_more; /* added to the head after the records: a corrupt control page */
	uint64_t tail_skew; /* added to the tail before reading: a corrupt control page */
	struct step steps[8];
	/* what the reader must hand on (in this order) and count */
	struct block_sample want[4];
	size_t nwant;
	uint64_t records, wakes, samples, foreign, lost, throttled, bad;
	int tail; /* 1: the tail ends at the head */
};

#define SIZE1 ((uint64_t)PAGE) /* the ring of one data page these cases use */

static const struct ring_case cases[] = {
	{"one completion", 0, 4, 0, 0, {{S_SAMPLE, 5000, DEV_A, 0}},
	 {{5000, DEV_A}}, 1, 1, 0, 1, 0, 0, 0, 0, 1},
	{"a completion whose body wraps round the end", SIZE1 - 16, 4, 0, 0,
	 {{S_SAMPLE, 0x1122334455667788ull, DEV_A, 0}},
	 {{0x1122334455667788ull, DEV_A}}, 1, 1, 0, 1, 0, 0, 0, 0, 1},
	{"a completion whose header is the ring's last 8 bytes", 5 * SIZE1 - 8, 4, 0, 0,
	 {{S_SAMPLE, 77, DEV_A, 0}, {S_SAMPLE, 78, DEV_A, 0}},
	 {{77, DEV_A}, {78, DEV_A}}, 2, 2, 0, 2, 0, 0, 0, 0, 1},
	{"completions put in time order", 3 * SIZE1 + 40, 4, 0, 0,
	 {{S_SAMPLE, 30, DEV_A, 0}, {S_SAMPLE, 10, 0x00fe0001u, 0}, {S_SAMPLE, 20, DEV_A, 0}},
	 {{10, 0x00fe0001u}, {20, DEV_A}, {30, DEV_A}}, 3, 3, 0, 3, 0, 0, 0, 0, 1},
	{"an 8-byte dev field", SIZE1 - 40, 8, 0, 0, {{S_SAMPLE, 9, DEV_A, 0}},
	 {{9, DEV_A}}, 1, 1, 0, 1, 0, 0, 0, 0, 1},
	{"another device's completion", 0, 4, 0, 0,
	 {{S_SAMPLE, 1, DEV_B, 0}, {S_SAMPLE, 2, DEV_A, 0}},
	 {{2, DEV_A}}, 1, 2, 0, 1, 1, 0, 0, 0, 1},
	{"a waking record is counted, not a completion", 0, 4, 0, 0,
	 {{S_WAKE, 0, 0, 0}, {S_SAMPLE, 3, DEV_A, 0}, {S_WAKE, 0, 0, 0}},
	 {{3, DEV_A}}, 1, 1, 2, 1, 0, 0, 0, 0, 1},
	{"a loss adds its count", SIZE1 - 8, 4, 0, 0,
	 {{S_LOST, 0, 0, 7}, {S_LOST, 0, 0, 5}, {S_SAMPLE, 4, DEV_A, 0}},
	 {{4, DEV_A}}, 1, 1, 0, 1, 0, 12, 0, 0, 1},
	{"a loss without its count adds nothing", 0, 4, 0, 0, {{S_LOST_SHORT, 0, 0, 0}},
	 {{0, 0}}, 0, 0, 0, 0, 0, 0, 0, 0, 1},
	{"a throttle", 0, 4, 0, 0, {{S_THROTTLE, 0, 0, 0}, {S_SAMPLE, 6, DEV_A, 0}},
	 {{6, DEV_A}}, 1, 1, 0, 1, 0, 0, 1, 0, 1},
	{"a record of another type is passed over", SIZE1 - 24, 4, 0, 0,
	 {{S_OTHER, 0, 0, 0}, {S_SAMPLE, 8, DEV_A, 0}},
	 {{8, DEV_A}}, 1, 1, 0, 1, 0, 0, 0, 0, 1},
	{"a sample too short for its time and raw size", 0, 4, 0, 0,
	 {{S_TINY, 0, 0, 24}, {S_SAMPLE, 11, DEV_A, 0}},
	 {{11, DEV_A}}, 1, 2, 0, 1, 0, 0, 0, 1, 1},
	{"a raw size past the record's end", 0, 4, 0, 0,
	 {{S_RAW, 12, DEV_A, RAW_SIZE + 8}, {S_SAMPLE, 13, DEV_A, 0}},
	 {{13, DEV_A}}, 1, 2, 0, 1, 0, 0, 0, 1, 1},
	{"a dev field past the raw entry's end", 0, 4, 0, 0,
	 {{S_RAW, 12, DEV_A, DEV_OFF + 3}, {S_SAMPLE, 14, DEV_A, 0}},
	 {{14, DEV_A}}, 1, 2, 0, 1, 0, 0, 0, 1, 1},
	{"a header of size 0 ends the read", 0, 4, 0, 0,
	 {{S_SAMPLE, 15, DEV_A, 0}, {S_HEADER, 0, 0, 0}, {S_SAMPLE, 16, DEV_A, 0}},
	 {{15, DEV_A}}, 1, 1, 0, 1, 0, 0, 0, 1, 1},
	{"a size that is not a multiple of 8", 0, 4, 0, 0,
	 {{S_HEADER, 0, 0, 12}, {S_SAMPLE, 17, DEV_A, 0}},
	 {{0, 0}}, 0, 0, 0, 0, 0, 0, 0, 1, 1},
	{"a truncated record: its size passes the head", SIZE1 - 8, 4, 0, 0,
	 {{S_SAMPLE, 18, DEV_A, 0}, {S_HEADER, 0, 0, 80}},
	 {{18, DEV_A}}, 1, 1, 0, 1, 0, 0, 0, 1, 1},
	{"fewer bytes than a header before the head", 0, 4, 0, 0,
	 {{S_SAMPLE, 19, DEV_A, 0}, {S_BYTES, 0, 0, 4}},
	 {{19, DEV_A}}, 1, 1, 0, 1, 0, 0, 0, 1, 1},
	{"a tail that is not 8-byte aligned", 0, 4, 0, 4,
	 {{S_SAMPLE, 20, DEV_A, 0}},
	 {{0, 0}}, 0, 0, 0, 0, 0, 0, 0, 1, 1},
	{"a head further ahead than the ring holds", 0, 4, SIZE1, 0,
	 {{S_SAMPLE, 21, DEV_A, 0}},
	 {{0, 0}}, 0, 0, 0, 0, 0, 0, 0, 1, 1},
	{"nothing new", 7 * SIZE1 + 64, 4, 0, 0, {{S_END, 0, 0, 0}},
	 {{0, 0}}, 0, 0, 0, 0, 0, 0, 0, 0, 1},
};

static void lay(struct ring *r, const struct step *s, unsigned dev_size)
{
	switch (s->k) {
	case S_SAMPLE:
		put_sample(r, s->t, s->dev, dev_size, RAW_SIZE, RAW_SIZE);
		break;
	case S_RAW:
		put_sample(r, s->t, s->dev, dev_size, s->n, RAW_SIZE);
		break;
	case S_WAKE:
		put_header(r, PERF_RECORD_SAMPLE, 16);
		put_u64(r, 0x1234);
		break;
	case S_LOST:
		put_header(r, PERF_RECORD_LOST, 24);
		put_u64(r, 0x1234);
		put_u64(r, s->n);
		break;
	case S_LOST_SHORT:
		put_header(r, PERF_RECORD_LOST, 16);
		put_u64(r, 0x1234);
		break;
	case S_THROTTLE:
		put_header(r, PERF_RECORD_THROTTLE, 32);
		put_u64(r, 123456789);
		put_u64(r, 0x1234);
		put_u64(r, 0x1234);
		break;
	case S_OTHER:
		put_header(r, PERF_RECORD_COMM, 32);
		ring_put(r, "\1\0\0\0\1\0\0\0entropyd\0\0\0\0\0\0\0", 24);
		break;
	case S_TINY: {
		unsigned char zero[64] = {0};

		put_header(r, PERF_RECORD_SAMPLE, (uint16_t)s->n);
		ring_put(r, zero, s->n - 8);
		break;
	}
	case S_HEADER:
		put_header(r, PERF_RECORD_SAMPLE, (uint16_t)s->n);
		break;
	case S_BYTES: {
		unsigned char zero[8] = {0};

		ring_put(r, zero, s->n);
		break;
	}
	case S_END:
		break;
	}
}

START_TEST(test_ring_table)
{
	const struct ring_case *c = &cases[_i];
	struct block_tp_stats st;
	struct tp_reader *rd = reader_new(&st, c->dev_size);
	struct ring r;

	ring_init(&r, 1, c->start);
	for (size_t i = 0; i < ARRAY_SIZE(c->steps) && c->steps[i].k != S_END; i++)
		lay(&r, &c->steps[i], c->dev_size);
	r.head += c->head_more;
	ring_publish(&r);
	((struct perf_event_mmap_page *)r.map)->data_tail += c->tail_skew;

	block_tp_ring_drain(rd, r.map, PAGE, r.pages, 3);
	ck_assert_msg(ngot == 0, "%s: handed on before the flush", c->name);
	block_tp_ring_flush(rd);

	ck_assert_msg(ngot == c->nwant, "%s: %zu samples handed on, want %zu", c->name, ngot,
		      c->nwant);
	for (size_t i = 0; i < c->nwant; i++) {
		ck_assert_msg(got[i].t_ns == c->want[i].t_ns && got[i].kdev == c->want[i].kdev,
			      "%s: sample %zu is %llu on %#x, want %llu on %#x", c->name, i,
			      (unsigned long long)got[i].t_ns, got[i].kdev,
			      (unsigned long long)c->want[i].t_ns, c->want[i].kdev);
	}
	ck_assert_msg(calls == (c->nwant ? 1u : 0u), "%s: %zu batches", c->name, calls);
	ck_assert_msg(rd->records == c->records, "%s: records %llu, want %llu", c->name,
		      (unsigned long long)rd->records, (unsigned long long)c->records);
	ck_assert_msg(rd->wakes == c->wakes, "%s: wakes %llu", c->name,
		      (unsigned long long)rd->wakes);
	ck_assert_msg(st.samples == c->samples, "%s: samples %llu", c->name,
		      (unsigned long long)st.samples);
	ck_assert_msg(st.foreign == c->foreign, "%s: foreign %llu", c->name,
		      (unsigned long long)st.foreign);
	ck_assert_msg(st.lost == c->lost, "%s: lost %llu", c->name, (unsigned long long)st.lost);
	ck_assert_msg(st.throttled == c->throttled, "%s: throttled %llu", c->name,
		      (unsigned long long)st.throttled);
	ck_assert_msg(st.bad == c->bad, "%s: bad %llu, want %llu", c->name,
		      (unsigned long long)st.bad, (unsigned long long)c->bad);
	/* What was read is given back to the kernel: all of it, malformed or not, so that a
	 * broken record cannot stop the ring. */
	ck_assert_msg(ring_tail(&r) == r.head, "%s: tail %llu, head %llu", c->name,
		      (unsigned long long)ring_tail(&r), (unsigned long long)r.head);
	/* A second read of the same ring finds nothing new. */
	block_tp_ring_drain(rd, r.map, PAGE, r.pages, 3);
	block_tp_ring_flush(rd);
	ck_assert_msg(ngot == c->nwant && st.bad == c->bad, "%s: read twice", c->name);
	free(r.map);
	free(rd);
}
END_TEST

/* More completions than a batch holds: a full batch goes on in time order at once, the rest
 * at the flush; the batch is wiped once handed on (times are the entropy). */
START_TEST(test_ring_batch_full)
{
	struct block_tp_stats st;
	struct tp_reader *rd = reader_new(&st, 4);
	struct ring r;
	size_t n = TP_BATCH + 5;

	ring_init(&r, 32, 31 * (uint64_t)PAGE + 48);
	ck_assert_uint_lt(n * 80, r.size);
	for (size_t i = 0; i < n; i++)
		put_sample(&r, 1000000 - i, DEV_A, 4, RAW_SIZE, RAW_SIZE);
	ring_publish(&r);
	block_tp_ring_drain(rd, r.map, PAGE, r.pages, 0);
	ck_assert_uint_eq(calls, 1);
	ck_assert_uint_eq(ngot, TP_BATCH);
	for (size_t i = 1; i < TP_BATCH; i++)
		ck_assert_uint_lt(got[i - 1].t_ns, got[i].t_ns);
	ck_assert_uint_eq(got[0].t_ns, 1000000 - (TP_BATCH - 1));
	ck_assert_uint_eq(rd->nbatch, 5);
	block_tp_ring_flush(rd);
	ck_assert_uint_eq(calls, 2);
	ck_assert_uint_eq(ngot, n);
	ck_assert_uint_eq(got[TP_BATCH].t_ns, 1000000 - (n - 1));
	ck_assert_uint_eq(st.samples, n);
	ck_assert_uint_eq(rd->nbatch, 0);
	for (size_t i = 0; i < TP_BATCH; i++)
		ck_assert(rd->batch[i].t_ns == 0 && rd->batch[i].kdev == 0);
	/* An empty batch is not handed on. */
	block_tp_ring_flush(rd);
	ck_assert_uint_eq(calls, 2);
	ck_assert_uint_eq(ring_tail(&r), r.head);
	free(r.map);
	free(rd);
}
END_TEST

static char said[4][256];
static size_t nsaid;

static void tee(int prio, const char *msg, void *arg)
{
	(void)prio;
	(void)arg;
	if (nsaid < ARRAY_SIZE(said))
		strlcopy(said[nsaid++], msg, sizeof(said[0]));
}

/* A loss and a throttle are said, with the count and the CPU: never a time or a device. */
START_TEST(test_ring_said)
{
	struct block_tp_stats st;
	struct tp_reader *rd = reader_new(&st, 4);
	struct ring r;

	ring_init(&r, 1, 0);
	lay(&r, &(struct step){S_LOST, 0, 0, 42}, 4);
	lay(&r, &(struct step){S_THROTTLE, 0, 0, 0}, 4);
	ring_publish(&r);
	log_tee(tee, NULL);
	tu_capture_begin();
	block_tp_ring_drain(rd, r.map, PAGE, r.pages, 5);
	free(tu_capture_end());
	log_tee(NULL, NULL);
	ck_assert_uint_eq(nsaid, 2);
	ck_assert_str_eq(said[0], "block: the kernel dropped 42 completions on CPU 5 (ring full)");
	ck_assert_str_eq(said[1], "block: perf throttled the completion event on CPU 5 "
				  "(kernel.perf_event_max_sample_rate)");
	free(r.map);
	free(rd);
}
END_TEST

START_TEST(test_in_list)
{
	static const uint32_t v[] = {3, 0, 0xffffffffu};

	ck_assert(block_tp_ring_in_list(v, 3, 3));
	ck_assert(block_tp_ring_in_list(v, 3, 0));
	ck_assert(block_tp_ring_in_list(v, 3, 0xffffffffu));
	ck_assert(!block_tp_ring_in_list(v, 3, 4));
	ck_assert(!block_tp_ring_in_list(v, 2, 0xffffffffu));
	ck_assert(!block_tp_ring_in_list(NULL, 0, 0));
}
END_TEST

static Suite *block_tp_ring_suite(void)
{
	Suite *s = suite_create("block_tp_ring");
	TCase *tc = tcase_create("ring");

	tcase_add_loop_test(tc, test_ring_table, 0, (int)ARRAY_SIZE(cases));
	tcase_add_test(tc, test_ring_batch_full);
	tcase_add_test(tc, test_ring_said);
	tcase_add_test(tc, test_in_list);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(block_tp_ring_suite());
}
