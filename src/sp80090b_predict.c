/* sp80090b_predict: the MultiMMC and LZ78Y predictors, over hashed context dictionaries. */
#include "autoconf.h"

#include "sp80090b.h"
#include "util.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Both predictors keep, for every context x of length 1..16 (the symbols just before the
 * one to predict), how often each symbol y followed it; the guess is the y seen most often
 * (ties: the larger y). NIST's tool keeps these in std::map; here every context length has
 * an open-addressing hash table of contexts, and one table maps (context, y) to its count.
 * A context is stored as the position of one of its occurrences, so comparing two is a
 * memcmp of the symbol array. Dictionary limits and the order of updates are NIST's,
 * because they change the results once a dictionary is full.
 */

#define CTX_MAX_LEN 16
#define MMC_MAX_ENTRIES 100000    /* NIST: (x, y) pairs per context length in MultiMMC */
#define LZ78Y_MAX_CONTEXTS 65536  /* NIST: contexts in the whole LZ78Y dictionary */
#define NO_CTX UINT32_MAX
/* (context, y) is packed as context * 256 + y in 32 bits, plus one to keep 0 for "empty". */
#define MAX_CONTEXTS ((UINT32_C(1) << 24) - 1)

struct ctx {
	uint32_t pos;  /* start of one occurrence in the symbol array */
	uint32_t hash;
	uint32_t best; /* count of the most frequent successor */
	uint8_t pred;  /* that successor */
	bool multi;    /* has had two different successors: counts are in the successor table */
};

/* Contexts of one length. slot[] holds context index + 1, 0 if empty. */
struct ctx_table {
	uint32_t *slot;
	uint32_t mask;
	uint32_t used;
};

struct dict {
	const uint8_t *sym;
	struct ctx *ctx;
	uint32_t nctx, ctx_cap;
	struct ctx_table tab[CTX_MAX_LEN]; /* tab[l - 1]: contexts of length l */
	uint64_t *succ;                    /* (key + 1) << 32 | count; 0 if empty */
	uint32_t succ_mask, succ_used;
};

/* Hashing is only for speed (contents are always compared), but it must mix well: context
 * symbols come from timing that an outsider may influence. */
static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	return h;
}

/* A context's hash is built from its last symbol backwards, so all the contexts ending at one
 * place come out of a single pass. */
#define HASH_SEED UINT64_C(0x243f6a8885a308d3)
static uint64_t hash_step(uint64_t h, uint8_t s)
{
	return mix64(h + s + 1);
}

static uint32_t *slots_new(uint32_t n)
{
	return xcalloc(n, sizeof(uint32_t));
}

static void dict_init(struct dict *d, const uint8_t *sym)
{
	unsigned l;

	memset(d, 0, sizeof(*d));
	d->sym = sym;
	d->ctx_cap = 1024;
	d->ctx = xreallocarray(NULL, d->ctx_cap, sizeof(*d->ctx));
	for (l = 0; l < CTX_MAX_LEN; l++) {
		d->tab[l].mask = 63;
		d->tab[l].slot = slots_new(64);
	}
	d->succ_mask = 1023;
	d->succ = xcalloc(1024, sizeof(*d->succ));
}

static void dict_fini(struct dict *d)
{
	unsigned l;

	for (l = 0; l < CTX_MAX_LEN; l++)
		free(d->tab[l].slot);
	free(d->ctx);
	free(d->succ);
	memset(d, 0, sizeof(*d));
}

static uint32_t ctx_find(const struct dict *d, unsigned len, uint32_t pos, uint32_t hash)
{
	const struct ctx_table *t = &d->tab[len - 1];
	uint32_t i, s;

	for (i = hash & t->mask; (s = t->slot[i]) != 0; i = (i + 1) & t->mask) {
		const struct ctx *c = &d->ctx[s - 1];

		if (c->hash == hash && memcmp(d->sym + c->pos, d->sym + pos, len) == 0)
			return s - 1;
	}
	return NO_CTX;
}

static void table_grow(struct dict *d, struct ctx_table *t)
{
	uint32_t *old = t->slot, old_n = t->mask + 1, i, j;

	t->mask = old_n * 2 - 1;
	t->slot = slots_new(old_n * 2);
	for (i = 0; i < old_n; i++) {
		if (!old[i])
			continue;
		for (j = d->ctx[old[i] - 1].hash & t->mask; t->slot[j]; j = (j + 1) & t->mask)
			;
		t->slot[j] = old[i];
	}
	free(old);
}

/* Add a context known to be absent; returns its index. */
static uint32_t ctx_add(struct dict *d, unsigned len, uint32_t pos, uint32_t hash)
{
	struct ctx_table *t = &d->tab[len - 1];
	uint32_t i;

	assert(d->nctx < MAX_CONTEXTS);
	if ((t->used + 1) * 2 > t->mask + 1)
		table_grow(d, t);
	if (d->nctx == d->ctx_cap) {
		d->ctx_cap *= 2;
		d->ctx = xreallocarray(d->ctx, d->ctx_cap, sizeof(*d->ctx));
	}
	d->ctx[d->nctx] = (struct ctx){.pos = pos, .hash = hash};
	for (i = hash & t->mask; t->slot[i]; i = (i + 1) & t->mask)
		;
	t->slot[i] = ++d->nctx;
	t->used++;
	return d->nctx - 1;
}

static uint32_t ctx_find_or_add(struct dict *d, unsigned len, uint32_t pos, uint32_t hash)
{
	uint32_t c = ctx_find(d, len, pos, hash);

	return c != NO_CTX ? c : ctx_add(d, len, pos, hash);
}

static uint32_t succ_slot(uint32_t key, uint32_t mask)
{
	return (uint32_t)mix64(key) & mask;
}

static void succ_grow(struct dict *d)
{
	uint64_t *old = d->succ;
	uint32_t old_n = d->succ_mask + 1, i, j;

	d->succ_mask = old_n * 2 - 1;
	d->succ = xcalloc((size_t)old_n * 2, sizeof(*d->succ));
	for (i = 0; i < old_n; i++) {
		if (!old[i])
			continue;
		for (j = succ_slot((uint32_t)(old[i] >> 32) - 1, d->succ_mask); d->succ[j];
		     j = (j + 1) & d->succ_mask)
			;
		d->succ[j] = old[i];
	}
	free(old);
}

static uint64_t *succ_find(struct dict *d, uint32_t key)
{
	uint32_t i;

	for (i = succ_slot(key, d->succ_mask); d->succ[i]; i = (i + 1) & d->succ_mask)
		if ((uint32_t)(d->succ[i] >> 32) == key + 1)
			break;
	return &d->succ[i];
}

static uint64_t *succ_insert(struct dict *d, uint32_t key, uint32_t count)
{
	uint64_t *e;

	if ((d->succ_used + 1) * 2 > d->succ_mask + 1)
		succ_grow(d);
	e = succ_find(d, key);
	*e = (uint64_t)(key + 1) << 32 | count;
	d->succ_used++;
	return e;
}

/*
 * Count y after context c (NIST's PostfixDictionary::incrementPostfix): an existing pair is
 * always counted; a new one only if make_new. Returns true if a new pair was made.
 * Most contexts are only ever followed by one symbol, whose count is then `best`: they
 * stay out of the successor table until a second symbol follows them.
 */
static bool succ_count(struct dict *d, uint32_t c, uint8_t y, bool make_new)
{
	struct ctx *x = &d->ctx[c];
	uint32_t key = c * 256U + y, count;
	bool fresh = false;
	uint64_t *e;

	if (!x->multi) {
		if (x->best > 0 && y == x->pred) {
			x->best++;
			return false;
		}
		if (!make_new)
			return false;
		if (x->best == 0) {
			x->best = 1;
			x->pred = y;
			return true;
		}
		succ_insert(d, c * 256U + x->pred, x->best);
		x->multi = true;
	}
	e = succ_find(d, key);
	if (*e) {
		*e += 1;
	} else {
		if (!make_new)
			return false;
		e = succ_insert(d, key, 1);
		fresh = true;
	}
	count = (uint32_t)*e;
	if (count > x->best || (count == x->best && y > x->pred)) {
		x->best = count;
		x->pred = y;
	}
	return fresh;
}

static uint32_t ctx_hash(const uint8_t *sym, uint32_t pos, unsigned len)
{
	uint64_t h = HASH_SEED;

	while (len--)
		h = hash_step(h, sym[pos + len]);
	return (uint32_t)h;
}

/*
 * MultiMMC, §6.3.9: 16 Markov-model predictors of order 1..16, each guessing the most common
 * successor of its context; a scoreboard picks whose guess counts. Once order d meets a
 * context it has never seen, the higher orders are not consulted for this symbol (their
 * context cannot have been seen either, dictionary limits aside) and only learn it.
 */
int sp90b_multi_mmc(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out)
{
	uint64_t score[CTX_MAX_LEN] = {0}, c = 0, run = 0, max_run = 0;
	uint32_t entries[CTX_MAX_LEN] = {0};
	unsigned winner = 0, d;
	struct dict dict;
	uint32_t i;

	if (!sym || k < 2 || k > 256 || n < (k == 2 ? 4U : 3U) || n > SP90B_MAX_SAMPLES)
		return -1;
	dict_init(&dict, sym);
	for (d = 0; d < CTX_MAX_LEN && d < n - 2; d++) {
		uint32_t x = ctx_find_or_add(&dict, d + 1, 0, ctx_hash(sym, 0, d + 1));

		succ_count(&dict, x, sym[d + 1], true);
		entries[d] = 1;
	}

	for (i = 2; i < n; i++) {
		unsigned cur_winner = winner;
		uint64_t h = HASH_SEED;
		bool found = false;

		for (d = 0; d < CTX_MAX_LEN && d + 2 <= i; d++) {
			uint32_t pos = i - d - 1, x = NO_CTX;
			bool looked = d == 0 || found;

			h = hash_step(h, sym[pos]);
			if (looked) {
				x = ctx_find(&dict, d + 1, pos, (uint32_t)h);
				found = x != NO_CTX;
			}
			if (found) {
				if (dict.ctx[x].pred == sym[i]) {
					if (++score[d] >= score[winner])
						winner = d;
					if (d == cur_winner) {
						c++;
						if (++run > max_run)
							max_run = run;
					}
				} else if (d == cur_winner) {
					run = 0;
				}
				if (succ_count(&dict, x, sym[i], entries[d] < MMC_MAX_ENTRIES))
					entries[d]++;
			} else if (entries[d] < MMC_MAX_ENTRIES) {
				/* NIST counts an entry here even if the pair existed: a context
				 * skipped above can be present once a lower order is full. */
				x = looked ? ctx_add(&dict, d + 1, pos, (uint32_t)h)
					   : ctx_find_or_add(&dict, d + 1, pos, (uint32_t)h);
				succ_count(&dict, x, sym[i], true);
				entries[d]++;
			}
		}
	}
	dict_fini(&dict);
	sp90b_pred_finish(c, n - 2, max_run, k, out);
	return 0;
}

/*
 * LZ78Y, §6.3.10: one dictionary of contexts of length 1..16 (at most 65,536 of them); the
 * guess is the successor with the highest count over all contexts found (ties: the longer
 * context).
 */
int sp90b_lz78y(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out)
{
	uint64_t c = 0, run = 0, max_run = 0;
	uint32_t hash[CTX_MAX_LEN + 1];
	uint32_t dict_size = 0, i;
	struct dict dict;
	unsigned j;

	/* NIST's binary variant asserts one more sample than its general one needs. */
	if (!sym || k < 2 || k > 256 || n < SP90B_LZ78Y_MIN_SAMPLES + (k == 2) ||
	    n > SP90B_MAX_SAMPLES)
		return -1;
	dict_init(&dict, sym);
	for (j = 1; j <= CTX_MAX_LEN; j++) {
		uint32_t pos = CTX_MAX_LEN - j;
		uint32_t x = ctx_add(&dict, j, pos, ctx_hash(sym, pos, j));

		succ_count(&dict, x, sym[CTX_MAX_LEN], true);
		dict_size++;
	}

	for (i = CTX_MAX_LEN + 1; i < n; i++) {
		uint64_t h = HASH_SEED, max_count = 0;
		bool have = false;
		uint8_t guess = 0;

		for (j = 1; j <= CTX_MAX_LEN; j++) {
			h = hash_step(h, sym[i - j]);
			hash[j] = (uint32_t)h;
		}
		for (j = CTX_MAX_LEN; j > 0; j--) {
			uint32_t x = ctx_find(&dict, j, i - j, hash[j]);

			if (x != NO_CTX) {
				if (dict.ctx[x].best > max_count) {
					max_count = dict.ctx[x].best;
					guess = dict.ctx[x].pred;
					have = true;
				}
				succ_count(&dict, x, sym[i], true);
			} else if (dict_size < LZ78Y_MAX_CONTEXTS) {
				x = ctx_add(&dict, j, i - j, hash[j]);
				succ_count(&dict, x, sym[i], true);
				dict_size++;
			}
		}
		if (have && guess == sym[i]) {
			c++;
			if (++run > max_run)
				max_run = run;
		} else {
			run = 0;
		}
	}
	dict_fini(&dict);
	sp90b_pred_finish(c, n - CTX_MAX_LEN - 1, max_run, k, out);
	return 0;
}
