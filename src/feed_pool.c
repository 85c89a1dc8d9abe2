/* feed_pool: event data and credit waiting to be handed to the sink as one batch. */
#include "autoconf.h"

#include "feed_pool.h"

#include <math.h>
#include <string.h>

#include "util.h"

void feed_pool_init(struct pool *p)
{
	memset(p, 0, sizeof(*p));
}

/* dst ^= src, n bytes: a word at a time (a busy source's events are folded in by the
 * thousand a second), the rest a byte at a time. */
static void xor_into(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t i = 0;

	for (; i + sizeof(uint64_t) <= n; i += sizeof(uint64_t)) {
		uint64_t a, b;

		memcpy(&a, dst + i, sizeof(a));
		memcpy(&b, src + i, sizeof(b));
		a ^= b;
		memcpy(dst + i, &a, sizeof(a));
	}
	for (; i < n; i++)
		dst[i] ^= src[i];
}

/* Mix len bytes in; true if they fitted whole (only such data may carry credit). */
static bool mix(struct pool *p, const uint8_t *d, size_t len)
{
	/* Once full, what is folded in lands on bytes that already carry credit: XOR cannot
	 * add to what 512 bytes can hold, so such events are mixed, never credited. */
	bool fits = len > 0 && p->len + len <= POOL_BYTES;

	if (fits) { /* the common case */
		memcpy(p->buf + p->len, d, len);
		p->len += len;
		return true;
	}
	/* What fits is copied; the rest is folded in (XOR) from pos on, round the buffer: the
	 * pool keeps mixing everything in, in bounded memory. The credit stays bounded by the
	 * bytes carried when the batch is taken. */
	if (p->len < POOL_BYTES) {
		size_t n = POOL_BYTES - p->len < len ? POOL_BYTES - p->len : len;

		memcpy(p->buf + p->len, d, n);
		p->len += n;
		d += n;
		len -= n;
	}
	while (len > 0) {
		size_t n = POOL_BYTES - p->pos < len ? POOL_BYTES - p->pos : len;

		xor_into(p->buf + p->pos, d, n);
		p->pos = (p->pos + n) % POOL_BYTES;
		d += n;
		len -= n;
	}
	return false;
}

bool feed_pool_add(struct pool *p, const void *data, size_t len, double credit_bits)
{
	bool fits = mix(p, data, len);

	if (fits && credit_bits > 0)
		p->credit += credit_bits;
	p->events++;
	return fits;
}

bool feed_pool_add_events(struct pool *p, const void *data, size_t len, uint64_t events)
{
	bool fits = mix(p, data, len);

	p->events += events;
	return fits;
}

size_t feed_pool_room(const struct pool *p)
{
	return POOL_BYTES - p->len;
}

double feed_pool_vouch(struct pool *p, double credit_bits)
{
	double took;

	if (!(credit_bits > 0)) /* NaN and negatives add nothing */
		return 0;
	took = fmin(credit_bits, POOL_DEFERRED_MAX - p->deferred);
	p->deferred += took;
	return took;
}

double feed_pool_credit(const struct pool *p)
{
	return floor(fmin(p->credit + p->deferred, 8.0 * (double)p->len));
}

bool feed_pool_empty(const struct pool *p)
{
	return p->len == 0;
}

bool feed_pool_full(const struct pool *p)
{
	return p->len == POOL_BYTES;
}

void feed_pool_take(struct pool *p, struct batch *b)
{
	double max_credit = 8.0 * (double)p->len;
	double credit = fmin(p->credit, max_credit);
	/* Deferred credit rides on the room this batch's own credit leaves; the rest waits. */
	double vouched = fmin(p->deferred, max_credit - credit);

	p->deferred -= vouched;
	credit += vouched;

	memcpy(b->data, p->buf, p->len);
	b->len = p->len;
	/* Fractions of a bit are dropped, not carried: a batch never credits more than the
	 * events it carries, and events vouched for since, earned. */
	b->credit_bits = (int)floor(credit);
	b->events = p->events;
	p->len = p->pos = 0;
	p->credit = 0;
	p->events = 0;
	util_wipe(p->buf, sizeof(p->buf));
}

void feed_pool_batch_wipe(struct batch *b)
{
	util_wipe(b, sizeof(*b));
}
