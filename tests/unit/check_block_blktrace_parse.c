/* check_block_blktrace_parse: the blktrace record parser on synthetic byte streams: good records,
 * notify records, payloads (some that look like records), other actions, garbage, other
 * versions, and every way a stream can be cut (every byte offset, random splits from a
 * fixed, printed seed). */
#include "autoconf.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_blktrace_parse.h"
#include "testutil.h"

#define SEED 0xb1c7a3u
#define DEV ((7u << 20) | 3u)
#define MAX_SAMPLES 4096

/* Notify and queue/issue actions, as <linux/blktrace_api.h> builds them. */
#define TC(x) ((uint32_t)(x) << BLKT_TC_SHIFT)
#define TN_PROCESS (0u | TC(BLKT_TC_NOTIFY))
#define TN_TIMESTAMP (1u | TC(BLKT_TC_NOTIFY))
#define TN_MESSAGE (2u | TC(BLKT_TC_NOTIFY))
#define TA_QUEUE (1u | TC(1u << 4))
#define TA_ISSUE (7u | TC(1u << 6))
#define TC_READ TC(1u << 0)
#define TC_WRITE TC(1u << 1)
#define TC_SYNC TC(1u << 3)

/* ---- a growing byte stream and what it should give ---- */

struct stream {
	unsigned char *b;
	size_t len, cap;
	uint64_t want_t[MAX_SAMPLES];
	uint32_t want_dev[MAX_SAMPLES];
	size_t nwant;
	size_t notify, other;
};

static void put(struct stream *s, const void *p, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2 + 64;
		s->b = realloc(s->b, s->cap);
		ck_assert_ptr_nonnull(s->b);
	}
	memcpy(s->b + s->len, p, n);
	s->len += n;
}

static void record(struct stream *s, uint32_t action, uint64_t t, uint32_t dev,
		   const void *pdu, uint16_t pdu_len)
{
	struct blkt_rec r;
	unsigned char h[BLKT_REC_SIZE];

	memset(&r, 0, sizeof(r));
	r.magic = BLKT_MAGIC | BLKT_VERSION;
	r.sequence = (uint32_t)s->nwant;
	r.time = t;
	r.sector = 2048;
	r.bytes = 4096;
	r.action = action;
	r.pid = 4242;
	r.device = dev;
	r.cpu = 1;
	r.pdu_len = pdu_len;
	blkt_encode(&r, h);
	put(s, h, sizeof(h));
	if (pdu_len)
		put(s, pdu, pdu_len);
}

static void expect(struct stream *s, uint64_t t)
{
	ck_assert_uint_lt(s->nwant, MAX_SAMPLES);
	s->want_t[s->nwant] = t;
	s->want_dev[s->nwant] = DEV;
	s->nwant++;
}

static void completion(struct stream *s, uint64_t t, uint32_t extra_cats)
{
	record(s, BLKT_TA_COMPLETE_FULL | extra_cats, t, DEV, NULL, 0);
	expect(s, t);
}

static void stream_free(struct stream *s)
{
	free(s->b);
	memset(s, 0, sizeof(*s));
}

/* ---- what the parser gave ---- */

struct got {
	uint64_t t[MAX_SAMPLES];
	uint32_t dev[MAX_SAMPLES];
	size_t n;
};

/* A completion the parser must hand on without a time. */
static void expect_untimed(struct stream *s)
{
	ck_assert_uint_lt(s->nwant, MAX_SAMPLES);
	s->want_t[s->nwant] = BLKT_NO_TIME;
	s->want_dev[s->nwant] = BLKT_NO_TIME;
	s->nwant++;
}

static void on_sample(void *ctx, uint32_t dev, uint64_t t)
{
	struct got *g = ctx;

	ck_assert_uint_lt(g->n, MAX_SAMPLES);
	g->t[g->n] = t;
	g->dev[g->n] = dev;
	g->n++;
}

static void assert_got_all(const struct stream *s, const struct got *g)
{
	ck_assert_uint_eq(g->n, s->nwant);
	for (size_t i = 0; i < g->n; i++) {
		ck_assert_uint_eq(g->t[i], s->want_t[i]);
		ck_assert_uint_eq(g->dev[i], s->want_dev[i]);
	}
}

/* Parse the stream in the chunks that cuts[] ends at (the last chunk runs to the end). */
static void parse_cut(struct blkt_parser *p, const struct stream *s, const size_t *cuts,
		      size_t ncuts, struct got *g)
{
	size_t at = 0, n = 0;

	blkt_parser_init(p);
	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i <= ncuts; i++) {
		size_t end = i < ncuts ? cuts[i] : s->len;

		n += blkt_parse(p, s->b + at, end - at, on_sample, g);
		at = end;
	}
	ck_assert_uint_eq(n, g->n);
}

/* A mixed stream: completions (read/write/sync, with and without a cgroup id), notify
 * records, queue and issue records, payloads of many lengths. */
static void mixed(struct stream *s, unsigned n)
{
	unsigned char pdu[1100];
	static const char name[16] = "dd";
	uint64_t t = 1000000000ull;

	for (size_t i = 0; i < sizeof(pdu); i++)
		pdu[i] = (unsigned char)(i * 7 + 3);
	record(s, TN_PROCESS, t, DEV, name, sizeof(name));
	s->notify++;
	record(s, TN_TIMESTAMP, t, DEV, pdu, 8);
	s->notify++;
	for (unsigned i = 0; i < n; i++) {
		uint64_t cg = 0x1234;

		t += 1000 + (i * 7919u) % 50000;
		switch (i % 6) {
		case 0:
			completion(s, t, TC_READ);
			break;
		case 1:
			completion(s, t, TC_WRITE | TC_SYNC);
			break;
		case 2:
			/* A completion whose payload is a cgroup id. */
			record(s, BLKT_TA_COMPLETE_FULL | BLKT_TA_CGROUP | TC_READ, t, DEV, &cg,
			       sizeof(cg));
			expect(s, t);
			break;
		case 3:
			record(s, i % 2 ? TA_QUEUE : TA_ISSUE, t, DEV, NULL, 0);
			s->other++;
			break;
		case 4:
			record(s, TN_MESSAGE, t, DEV, pdu, (uint16_t)(1 + i % 1024));
			s->notify++;
			break;
		default:
			completion(s, t, TC_WRITE);
			break;
		}
	}
}

/* ---- tests ---- */

START_TEST(test_good)
{
	struct stream s = {0};
	struct blkt_parser p;
	struct got g;

	for (unsigned i = 0; i < 100; i++)
		completion(&s, 5000000ull + i * 12345, i % 2 ? TC_READ : TC_WRITE);
	parse_cut(&p, &s, NULL, 0, &g);
	assert_got_all(&s, &g);
	ck_assert_uint_eq(p.records, 100);
	ck_assert_uint_eq(p.completions, 100);
	ck_assert_uint_eq(p.notify + p.other + p.garbage + p.bad_version, 0);
	ck_assert_uint_eq(p.ncarry, 0);
	ck_assert_uint_eq(p.skip, 0);
	stream_free(&s);
}
END_TEST

START_TEST(test_notify_and_other_ignored)
{
	struct stream s = {0};
	struct blkt_parser p;
	struct got g;

	mixed(&s, 600);
	parse_cut(&p, &s, NULL, 0, &g);
	assert_got_all(&s, &g);
	ck_assert_uint_eq(p.notify, s.notify);
	ck_assert_uint_eq(p.other, s.other);
	ck_assert_uint_eq(p.completions, s.nwant);
	ck_assert_uint_eq(p.records, s.nwant + s.notify + s.other);
	ck_assert_uint_eq(p.garbage, 0);
	stream_free(&s);
}
END_TEST

/* A payload that holds what looks like a completion record must be skipped, not parsed. */
START_TEST(test_pdu_with_fake_record)
{
	struct stream s = {0}, fake = {0};
	struct blkt_parser p;
	struct got g;

	record(&fake, BLKT_TA_COMPLETE_FULL, 999, DEV, NULL, 0);
	completion(&s, 100, TC_READ);
	record(&s, TN_MESSAGE, 150, DEV, fake.b, (uint16_t)fake.len);
	record(&s, BLKT_TA_COMPLETE_FULL | BLKT_TA_CGROUP, 200, DEV, fake.b, (uint16_t)fake.len);
	expect(&s, 200);
	completion(&s, 300, TC_WRITE);
	parse_cut(&p, &s, NULL, 0, &g);
	assert_got_all(&s, &g);
	ck_assert_uint_eq(p.records, 4);
	stream_free(&s);
	stream_free(&fake);
}
END_TEST

/* Bytes that are not records: skipped, counted, and the next record is found. */
START_TEST(test_garbage_resync)
{
	struct stream s = {0};
	struct blkt_parser p;
	struct got g;
	unsigned char junk[333];
	unsigned seed = SEED;
	size_t junk_total = 0;

	printf("test_garbage_resync: seed 0x%x\n", seed);
	for (int k = 0; k < 20; k++) {
		size_t n = 1 + (size_t)(rand_r(&seed) % sizeof(junk));

		/* Random bytes, but never the magic's high byte: no false headers. */
		for (size_t i = 0; i < n; i++) {
			junk[i] = (unsigned char)rand_r(&seed);
			if (junk[i] == 0x65)
				junk[i] = 0x66;
		}
		put(&s, junk, n);
		junk_total += n;
		completion(&s, 1000ull * (uint64_t)(k + 1), TC_READ);
	}
	parse_cut(&p, &s, NULL, 0, &g);
	assert_got_all(&s, &g);
	ck_assert_uint_eq(p.garbage, junk_total);
	stream_free(&s);
}
END_TEST

/* Another version's header, a header with an absurd pdu_len, a zeroed block: garbage. */
START_TEST(test_bad_headers)
{
	struct stream s = {0};
	struct blkt_parser p;
	struct got g;
	struct blkt_rec r;
	unsigned char h[BLKT_REC_SIZE], zero[64] = {0};

	completion(&s, 10, TC_READ);
	memset(&r, 0, sizeof(r));
	r.magic = BLKT_MAGIC | 0x08;
	r.action = BLKT_TA_COMPLETE_FULL;
	blkt_encode(&r, h);
	put(&s, h, sizeof(h));
	completion(&s, 20, TC_READ);
	r.magic = BLKT_MAGIC | BLKT_VERSION;
	r.pdu_len = BLKT_PDU_MAX + 1;
	blkt_encode(&r, h);
	put(&s, h, sizeof(h));
	completion(&s, 30, TC_READ);
	put(&s, zero, sizeof(zero));
	completion(&s, 40, TC_READ);
	parse_cut(&p, &s, NULL, 0, &g);
	assert_got_all(&s, &g);
	ck_assert_uint_eq(p.bad_version, 1);
	ck_assert_uint_eq(p.garbage, 2 * BLKT_REC_SIZE + sizeof(zero));
	ck_assert_uint_eq(p.completions, 4);
	ck_assert(blkt_decode(s.b, &r));
	stream_free(&s);
}
END_TEST

/* Cut in two at every byte offset: the same samples, in order, every time. */
START_TEST(test_truncation_every_offset)
{
	struct stream s = {0};
	struct blkt_parser p;
	struct got g;

	mixed(&s, 60);
	for (size_t k = 0; k <= s.len; k++) {
		parse_cut(&p, &s, &k, 1, &g);
		assert_got_all(&s, &g);
		ck_assert_uint_eq(p.garbage, 0);
		ck_assert_uint_eq(p.ncarry, 0);
		ck_assert_uint_eq(p.skip, 0);
	}
	stream_free(&s);
}
END_TEST

/* A record cut short is not reported until its header is whole, and is then. */
START_TEST(test_partial_header_waits)
{
	struct stream s = {0};
	struct blkt_parser p;
	struct got g = {0};

	completion(&s, 77, TC_READ);
	blkt_parser_init(&p);
	for (size_t i = 0; i < BLKT_REC_SIZE - 1; i++) {
		ck_assert_uint_eq(blkt_parse(&p, s.b + i, 1, on_sample, &g), 0);
		ck_assert_uint_eq(p.ncarry, i + 1);
	}
	ck_assert_uint_eq(g.n, 0);
	ck_assert_uint_eq(blkt_parse(&p, s.b + BLKT_REC_SIZE - 1, 1, on_sample, &g), 1);
	assert_got_all(&s, &g);
	ck_assert_uint_eq(p.ncarry, 0);
	stream_free(&s);
}
END_TEST

/* Byte by byte, and in random chunks from a fixed seed, with garbage mixed in. */
START_TEST(test_random_splits)
{
	struct stream s = {0};
	struct blkt_parser p, whole;
	struct got g, gw;
	unsigned seed = SEED ^ 0x5a5a;
	size_t cuts[64];

	printf("test_random_splits: seed 0x%x\n", seed);
	mixed(&s, 300);
	put(&s, "\x01\x02\x03garbage in the middle", 25);
	mixed(&s, 100);
	parse_cut(&whole, &s, NULL, 0, &gw);
	ck_assert_uint_eq(gw.n, s.nwant);
	ck_assert_uint_eq(whole.garbage, 25);

	/* One byte at a time. */
	blkt_parser_init(&p);
	memset(&g, 0, sizeof(g));
	for (size_t i = 0; i < s.len; i++)
		blkt_parse(&p, s.b + i, 1, on_sample, &g);
	assert_got_all(&s, &g);
	ck_assert_uint_eq(p.garbage, whole.garbage);

	for (int iter = 0; iter < 500; iter++) {
		size_t n = (size_t)(rand_r(&seed) % 64);

		for (size_t i = 0; i < n; i++)
			cuts[i] = (size_t)rand_r(&seed) % (s.len + 1);
		/* Ascending. */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
				size_t x = cuts[j];

				cuts[j] = cuts[j - 1];
				cuts[j - 1] = x;
			}
		parse_cut(&p, &s, cuts, n, &g);
		assert_got_all(&s, &g);
		ck_assert_uint_eq(p.records, whole.records);
		ck_assert_uint_eq(p.notify, whole.notify);
		ck_assert_uint_eq(p.garbage, whole.garbage);
	}
	stream_free(&s);
}
END_TEST

/* A record read while the kernel was writing it (action still 0): with a completions-only
 * mask counted as a completion without a time (BLKT_NO_TIME), whatever time it shows; never
 * taken otherwise. */
START_TEST(test_half_written)
{
	struct stream s = {0};
	struct blkt_parser p;
	struct got g;

	completion(&s, 1000, TC_READ);
	record(&s, 0, 2000, DEV, NULL, 0); /* time written, action not yet */
	expect_untimed(&s);
	record(&s, 0, 0, DEV, NULL, 0);    /* not even the time */
	expect_untimed(&s);
	record(&s, 0, 500, DEV, NULL, 0);  /* a stale time, before the last one */
	expect_untimed(&s);
	completion(&s, 3000, TC_WRITE);
	blkt_parser_init(&p);
	p.completions_only = true;
	memset(&g, 0, sizeof(g));
	blkt_parse(&p, s.b, s.len, on_sample, &g);
	assert_got_all(&s, &g);
	ck_assert_uint_eq(p.half, 3);
	ck_assert_uint_eq(p.half_untimed, 3);
	ck_assert_uint_eq(p.completions, 5);
	ck_assert_uint_eq(p.other, 0);

	/* Without the mask's promise, none is taken. */
	blkt_parser_init(&p);
	memset(&g, 0, sizeof(g));
	blkt_parse(&p, s.b, s.len, on_sample, &g);
	ck_assert_uint_eq(g.n, 2);
	ck_assert_uint_eq(p.half, 3);
	ck_assert_uint_eq(p.half_untimed, 0);
	stream_free(&s);
}
END_TEST

/* Random bytes only: never a crash, never a carry or skip beyond its bound. */
START_TEST(test_pure_garbage)
{
	unsigned seed = SEED + 1;
	unsigned char buf[4096];
	struct blkt_parser p;
	struct got g = {0};

	printf("test_pure_garbage: seed 0x%x\n", seed);
	blkt_parser_init(&p);
	for (int k = 0; k < 64; k++) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)rand_r(&seed);
		blkt_parse(&p, buf, (size_t)(rand_r(&seed) % sizeof(buf)), on_sample, &g);
		ck_assert_uint_le(p.ncarry, BLKT_REC_SIZE - 1);
		ck_assert_uint_le(p.skip, BLKT_PDU_MAX);
	}
	ck_assert_uint_eq(g.n, 0);
}
END_TEST

static Suite *blktrace_parse_suite(void)
{
	Suite *s = suite_create("blktrace_parse");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_notify_and_other_ignored);
	tcase_add_test(tc, test_pdu_with_fake_record);
	tcase_add_test(tc, test_garbage_resync);
	tcase_add_test(tc, test_bad_headers);
	tcase_add_test(tc, test_truncation_every_offset);
	tcase_add_test(tc, test_partial_header_waits);
	tcase_add_test(tc, test_random_splits);
	tcase_add_test(tc, test_half_written);
	tcase_add_test(tc, test_pure_garbage);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(blktrace_parse_suite());
}
