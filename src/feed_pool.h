/* feed_pool: event data and credit waiting to be handed to the sink as one batch. */
#ifndef ENTROPYD_FEED_POOL_H
#define ENTROPYD_FEED_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POOL_BYTES 512

struct pool {
	uint8_t buf[POOL_BYTES];
	size_t len;    /* bytes in buf; once full, more input is folded in (XOR) */
	size_t pos;    /* where the next byte is folded in */
	double credit; /* pending credit in bits: the sum of the events' credits */
	/* Credit for data handed in earlier (possibly already sent on without credit), released
	 * once the health tests vouched for it; carried by the bytes of the next batches. */
	double deferred;
	uint64_t events;
};

struct batch {
	uint8_t data[POOL_BYTES];
	size_t len;
	int credit_bits; /* floor(credit), never above 8 bits per byte carried */
	uint64_t events;
};

/* The pool is passive: it calls nothing, and what it holds goes on only when its owner takes
 * it (feed_pool_take). */
void feed_pool_init(struct pool *p);
/* False if the pool was full and the data was folded in: such data earns no credit. */
bool feed_pool_add(struct pool *p, const void *data, size_t len, double credit_bits);
/* The data of `events` events at once, no credit of its own (it follows by feed_pool_vouch()).
 * False as feed_pool_add(). */
bool feed_pool_add_events(struct pool *p, const void *data, size_t len, uint64_t events);
/* Bytes that can still be added whole, before the pool folds. */
size_t feed_pool_room(const struct pool *p);
/* Credit vouched for now, for data handed in before (see deferred). At most
 * POOL_DEFERRED_MAX bits wait; more is dropped. Returns the bits taken. */
#define POOL_DEFERRED_MAX (8.0 * POOL_BYTES)
double feed_pool_vouch(struct pool *p, double credit_bits);
/* What the next batch would credit now: whole bits, at most 8 per byte it carries. */
double feed_pool_credit(const struct pool *p);
bool feed_pool_empty(const struct pool *p);
bool feed_pool_full(const struct pool *p);
/* Move everything pending into *b and clear the pool (its memory is wiped). */
void feed_pool_take(struct pool *p, struct batch *b);
/* Wipe a batch once the sink is done with it. */
void feed_pool_batch_wipe(struct batch *b);

#endif
