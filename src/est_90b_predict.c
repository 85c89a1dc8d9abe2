/* est_90b_predict: the MultiMMC and LZ78Y predictors, over classes of equal contexts. */
#include "autoconf.h"

#include "est_90b.h"
#include "est_90b_num.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Both predictors keep, for every context x of length 1..16 (the symbols just before the
 * one to predict), how often each symbol y followed it; the guess is the y seen most often
 * (ties: the larger y). NIST's tool keeps these in std::map. Here nothing is ever looked up,
 * because which contexts are equal is worked out in advance, one length at a time:
 *
 *  - Contexts of length l ending at p are sorted into classes of equal strings; length l+1
 *    splits each class by the symbol one further back (a linear pass, no hashing, so no
 *    input can make it slow). A class is named by its first position, so a dictionary entry
 *    is an array slot indexed by position, set up when the pass reaches that first position:
 *    nothing to clear between runs. (context, y) is the context of length l+1 ending at y,
 *    so successor counts are array slots too.
 *  - A context that occurs once in the whole input can never be found again. Such
 *    singletons (nearly every context longer than two in random data) are only counted,
 *    not stored, and a length whose contexts are all singletons is not visited at all.
 *  - Each predictor then runs one length at a time over the whole input. The order-l model
 *    of MultiMMC, or the length-l part of LZ78Y's dictionary, sees exactly the updates
 *    NIST's sees, in the same order; what couples the lengths is kept per position
 *    (MultiMMC: which orders found their context and which guessed right; LZ78Y: the best
 *    guess so far and which lengths added a context) for a last pass that keeps score.
 *
 * Dictionary limits are NIST's, because they change the results once a dictionary is full.
 * MultiMMC's are per order and are counted as they fill. LZ78Y's is global: if a first run
 * added more contexts than it holds, a second run stops adding where NIST's does.
 * Memory is about 60 bytes per sample, in a work area that can be kept between runs.
 *
 * Bits (k = 2) take a path of their own, with a table of all contexts (1 MiB), below.
 */

#define CTX_MAX_LEN 16
#define MMC_MAX_ENTRIES 100000    /* NIST: (x, y) pairs per context length in MultiMMC */
#define LZ78Y_MAX_CONTEXTS 65536  /* NIST: contexts in the whole LZ78Y dictionary */
#define LZ_FIRST CTX_MAX_LEN      /* LZ78Y's first step: it trains on position 16 */
/* Binary input: length l's 2^l contexts at [2^l, 2^(l+1)) of one table. */
#define BIN_TABLE (2U << CTX_MAX_LEN)

/* The contexts of one length that occur more than once, grouped by class. */
struct classes {
	uint32_t *id;     /* class of the context ending at p (where act) */
	uint64_t *act;    /* bit p: p's class has another member */
	uint32_t *member; /* the classes' members, class after class, each in increasing order */
	uint32_t *start, *size; /* class c is member[start[c] .. start[c] + size[c]) */
	uint32_t nclasses;
};

/* One predictor's dictionary, at the current length. */
struct model {
	/* Per context class: count << 8 | y of its most frequent successor y, so that "higher
	 * count, then larger y" is one comparison. 0: the context is not in the dictionary. */
	uint64_t *best;
	uint32_t *pair; /* per (context, y) class: its count, 0 if not in the dictionary */
};

struct sp90b_work {
	size_t cap;                /* positions the arrays hold */
	struct classes cls[2];     /* lengths l and l + 1, alternately */
	uint8_t *top;              /* greatest length at which p's class has other members */
	uint8_t *key;              /* scratch: the symbol each member's class splits on */
	struct model mmc, lz;
	uint16_t *found, *right;   /* MultiMMC: bit d at i: order d+1 found its context, guessed i */
	uint32_t *guess_count;     /* LZ78Y at i: count behind the best guess so far (0: none) */
	uint8_t *guess;
	uint16_t *added;           /* LZ78Y at i: bit j-1: length j added a context */
	uint64_t *bin;             /* binary input: counts by context (see BIN_TABLE) */
};

struct sp90b_work *sp90b_work_new(void)
{
	return xcalloc(1, sizeof(struct sp90b_work));
}

static void work_release(struct sp90b_work *w)
{
	/* Symbols (timing) live on in these; the rest is positions and counts. */
	if (w->cap) {
		util_wipe(w->key, w->cap);
		util_wipe(w->guess, w->cap);
		util_wipe(w->mmc.best, w->cap * sizeof(*w->mmc.best));
		util_wipe(w->lz.best, w->cap * sizeof(*w->lz.best));
	}
	/* Order-16 counts give away most of a binary input. */
	if (w->bin)
		util_wipe(w->bin, BIN_TABLE * sizeof(*w->bin));
	free(w->bin);
	for (unsigned b = 0; b < 2; b++) {
		free(w->cls[b].id);
		free(w->cls[b].act);
		free(w->cls[b].member);
		free(w->cls[b].start);
		free(w->cls[b].size);
	}
	free(w->top);
	free(w->key);
	free(w->mmc.best);
	free(w->mmc.pair);
	free(w->lz.best);
	free(w->lz.pair);
	free(w->found);
	free(w->right);
	free(w->guess_count);
	free(w->guess);
	free(w->added);
	memset(w, 0, sizeof(*w));
}

void sp90b_work_free(struct sp90b_work *w)
{
	if (!w)
		return;
	work_release(w);
	free(w);
}

static void model_alloc(struct model *m, size_t n)
{
	m->best = xreallocarray(NULL, n, sizeof(*m->best));
	m->pair = xreallocarray(NULL, n, sizeof(*m->pair));
}

static void work_reserve(struct sp90b_work *w, size_t n)
{
	if (n <= w->cap)
		return;
	work_release(w);
	for (unsigned b = 0; b < 2; b++) {
		w->cls[b].id = xreallocarray(NULL, n, sizeof(uint32_t));
		w->cls[b].act = xreallocarray(NULL, n / 64 + 1, sizeof(uint64_t));
		w->cls[b].member = xreallocarray(NULL, n, sizeof(uint32_t));
		w->cls[b].start = xreallocarray(NULL, n / 2 + 1, sizeof(uint32_t));
		w->cls[b].size = xreallocarray(NULL, n / 2 + 1, sizeof(uint32_t));
	}
	w->top = xmalloc(n);
	w->key = xmalloc(n);
	model_alloc(&w->mmc, n);
	model_alloc(&w->lz, n);
	w->found = xreallocarray(NULL, n, sizeof(*w->found));
	w->right = xreallocarray(NULL, n, sizeof(*w->right));
	w->guess_count = xreallocarray(NULL, n, sizeof(*w->guess_count));
	w->guess = xmalloc(n);
	w->added = xreallocarray(NULL, n, sizeof(*w->added));
	w->cap = n;
}

static inline bool is_act(const struct classes *c, size_t p)
{
	return (c->act[p >> 6] >> (p & 63)) & 1;
}

static inline void set_act(struct classes *c, size_t p)
{
	c->act[p >> 6] |= UINT64_C(1) << (p & 63);
}

/* The class of the context ending at p: a singleton is its own. */
static inline uint32_t class_of(const struct classes *c, size_t p)
{
	return is_act(c, p) ? c->id[p] : (uint32_t)p;
}

/* A new class of `size` members: room for them in member[] from *used. */
static uint32_t class_new(struct classes *c, uint32_t *used, uint32_t size)
{
	uint32_t at = *used;

	c->start[c->nclasses] = at;
	c->size[c->nclasses++] = size;
	*used += size;
	return at;
}

/* Length 1: classes by symbol. */
static void classes_first(struct sp90b_work *w, const uint8_t *sym, size_t n, struct classes *c)
{
	uint32_t first[256], count[256] = {0}, at[256], used = 0;

	memset(c->act, 0, (n / 64 + 1) * sizeof(*c->act));
	c->nclasses = 0;
	for (size_t p = 0; p < n; p++)
		if (count[sym[p]]++ == 0)
			first[sym[p]] = (uint32_t)p;
	for (unsigned s = 0; s < 256; s++)
		if (count[s] >= 2)
			at[s] = class_new(c, &used, count[s]);
	for (size_t p = 0; p < n; p++) {
		uint8_t s = sym[p];

		w->top[p] = 0;
		if (count[s] < 2)
			continue;
		c->id[p] = first[s];
		c->member[at[s]++] = (uint32_t)p;
		set_act(c, p);
		w->top[p] = 1;
	}
}

/*
 * Length l + 1 from length l (in from): split each class by the symbol l further back,
 * keeping the members' order. Positions below l have no context of length l + 1.
 */
static void classes_next(struct sp90b_work *w, const uint8_t *sym, size_t n, unsigned l,
			 const struct classes *from, struct classes *to)
{
	uint32_t stamp[256] = {0}, first[256], count[256], at[256], used = 0;
	uint8_t seen[256];

	memset(to->act, 0, (n / 64 + 1) * sizeof(*to->act));
	to->nclasses = 0;
	for (uint32_t c = 0; c < from->nclasses; c++) {
		const uint32_t *mem = from->member + from->start[c];
		uint8_t *key = w->key + from->start[c];
		uint32_t size = from->size[c], t;
		unsigned nseen = 0;

		for (t = 0; t < size; t++) {
			uint32_t m = mem[t];
			uint8_t s;

			if (m < l)
				continue;
			s = key[t] = sym[m - l];
			if (stamp[s] != c + 1) {
				stamp[s] = c + 1;
				count[s] = 0;
				first[s] = m;
				seen[nseen++] = s;
			}
			count[s]++;
		}
		for (unsigned i = 0; i < nseen; i++)
			if (count[seen[i]] >= 2)
				at[seen[i]] = class_new(to, &used, count[seen[i]]);
		for (t = 0; t < size; t++) {
			uint32_t m = mem[t];
			uint8_t s = key[t];

			if (m < l || count[s] < 2)
				continue;
			to->id[m] = first[s];
			to->member[at[s]++] = m;
			set_act(to, m);
			w->top[m] = (uint8_t)(l + 1);
		}
	}
}

/*
 * Count y after context class x, (x, y) being class xy (NIST's
 * PostfixDictionary::incrementPostfix): an existing pair is always counted, a new one only
 * if make_new. Returns true if a new pair was made.
 */
static inline bool model_count(struct model *m, uint32_t x, uint32_t xy, uint8_t y,
			       bool make_new)
{
	uint32_t v = m->pair[xy];
	uint64_t b;

	if (v == 0 && !make_new)
		return false;
	m->pair[xy] = ++v;
	b = (uint64_t)v << 8 | y;
	if (b > m->best[x])
		m->best[x] = b;
	return v == 1;
}

/* The positions p in [lo, hi] whose class has other members, in increasing order. */
struct act_iter {
	const uint64_t *act;
	size_t word, last, hi;
	uint64_t bits;
};

static inline void act_begin(struct act_iter *it, const struct classes *c, size_t lo, size_t hi)
{
	it->act = c->act;
	it->hi = hi;
	it->word = it->last = lo >> 6;
	it->bits = 0;
	if (lo <= hi) {
		it->last = hi >> 6;
		it->bits = c->act[it->word] & (~UINT64_C(0) << (lo & 63));
	}
}

static inline bool act_next(struct act_iter *it, size_t *p)
{
	while (!it->bits) {
		if (it->word >= it->last)
			return false;
		it->bits = it->act[++it->word];
	}
	*p = it->word * 64 + (size_t)__builtin_ctzll(it->bits);
	it->bits &= it->bits - 1;
	return *p <= it->hi;
}

/*
 * MultiMMC's order l model: trained first on the context ending at l - 1, then at every
 * step i > l it is consulted if all lower orders found their context (a "looked" order
 * that misses stops the higher ones), and learns (x, sym[i]) within its entry limit.
 * Singleton contexts are never found; each only takes an entry, counted in the gaps.
 */
struct mmc_pass {
	uint16_t bit, below; /* this order's bit in found/right, and the one below's */
	uint32_t entries;
	size_t last_i;
};

static inline void mmc_step(struct sp90b_work *w, struct mmc_pass *st, size_t p, size_t i,
			    uint32_t x, uint32_t xy, uint8_t y)
{
	struct model *m = &w->mmc;
	size_t gap = i - st->last_i - 1;
	bool looked = !st->below || (w->found[i] & st->below);

	if (p == x)
		m->best[x] = 0;
	if (i == xy)
		m->pair[xy] = 0;
	st->entries = gap >= MMC_MAX_ENTRIES - st->entries ? MMC_MAX_ENTRIES
							   : st->entries + (uint32_t)gap;
	st->last_i = i;
	if (looked && m->best[x]) {
		w->found[i] |= st->bit;
		if ((uint8_t)m->best[x] == y)
			w->right[i] |= st->bit;
		if (model_count(m, x, xy, y, st->entries < MMC_MAX_ENTRIES))
			st->entries++;
	} else if (st->entries < MMC_MAX_ENTRIES) {
		/* NIST counts an entry here even if the pair existed: a context skipped as
		 * unlooked can be present once a lower order is full. */
		model_count(m, x, xy, y, true);
		st->entries++;
	}
}

/*
 * The scoreboard: at each step the orders that found their context guess in turn. Only
 * those that guessed right gain a point, and only the winner's guess counts (if it found
 * its context at all: else the run goes on), so both are read off the masks without a
 * branch on whether a guess was right, which on random bits is a coin toss.
 */
static void mmc_score(const struct sp90b_work *w, size_t n, unsigned k, struct sp90b_pred *out)
{
	uint64_t score[CTX_MAX_LEN] = {0}, c = 0, run = 0, max_run = 0;
	unsigned winner = 0;

	for (size_t i = 2; i < n; i++) {
		uint16_t r = w->right[i];
		bool guessed = (w->found[i] >> winner) & 1, hit = (r >> winner) & 1;
		uint64_t high = score[winner]; /* score[winner], kept in a register */

		c += hit;
		run = pick(hit, run + 1, pick(guessed, 0, run));
		max_run = pick(run > max_run, run, max_run);
		for (; r; r &= (uint16_t)(r - 1)) {
			unsigned d = (unsigned)__builtin_ctz(r);
			uint64_t v = ++score[d];

			if (v >= high) {
				winner = d;
				high = v;
			}
		}
	}
	sp90b_pred_finish(c, n - 2, max_run, k, out);
}

/* Where LZ78Y's dictionary fills up: additions are allowed before step cut_i, and at cut_i
 * for the lengths in cut_mask. */
struct lz_cut {
	size_t cut_i;
	uint16_t cut_mask;
};

/*
 * LZ78Y's length-j contexts: from step 16 on (training only at 16), a context found offers
 * its best successor as a guess (the longest context wins ties: lengths come in increasing
 * order here, NIST's in decreasing with a strict comparison) and counts sym[i]; one not
 * found is added while the dictionary has room.
 */
static inline void lz_step(struct sp90b_work *w, uint16_t bit, const struct lz_cut *cut,
			   size_t p, size_t i, uint32_t x, uint32_t xy, uint8_t y)
{
	struct model *m = &w->lz;
	uint64_t b;

	if (p == x)
		m->best[x] = 0;
	if (i == xy)
		m->pair[xy] = 0;
	b = m->best[x];
	if (b) {
		if (i > LZ_FIRST && b >> 8 >= w->guess_count[i]) {
			w->guess_count[i] = (uint32_t)(b >> 8);
			w->guess[i] = (uint8_t)b;
		}
	} else if (!cut || i < cut->cut_i || (i == cut->cut_i && (cut->cut_mask & bit))) {
		w->added[i] |= bit;
	} else {
		return;
	}
	model_count(m, x, xy, y, true);
}

/* Length l of both predictors, over the steps whose context recurs. */
static void level_pass(struct sp90b_work *w, const uint8_t *sym, size_t n, unsigned l,
		       const struct classes *ctx, const struct classes *pairs, bool mmc,
		       bool lz, const struct lz_cut *cut)
{
	uint16_t bit = (uint16_t)(1U << (l - 1));
	struct mmc_pass st = {.bit = bit, .below = bit >> 1, .last_i = l - 1};
	struct act_iter it;
	size_t p;

	if (lz) {
		/* Classes that begin before LZ78Y's first step are met first at a later one. */
		memset(w->lz.best, 0, LZ_FIRST * sizeof(*w->lz.best));
		memset(w->lz.pair, 0, (LZ_FIRST + 1) * sizeof(*w->lz.pair));
	}
	act_begin(&it, ctx, mmc ? l - 1 : LZ_FIRST - 1, n - 2);
	while (act_next(&it, &p)) {
		size_t i = p + 1;
		uint32_t x = ctx->id[p], xy = class_of(pairs, i);
		uint8_t y = sym[i];

		if (mmc)
			mmc_step(w, &st, p, i, x, xy, y);
		if (lz && p >= LZ_FIRST - 1)
			lz_step(w, bit, cut, p, i, x, xy, y);
	}
}

static void lz_score(const struct sp90b_work *w, const uint8_t *sym, size_t n, unsigned k,
		     struct sp90b_pred *out)
{
	uint64_t c = 0, run = 0, max_run = 0;

	/* Without a branch on whether the guess was right: a coin toss on random input. */
	for (size_t i = LZ_FIRST + 1; i < n; i++) {
		bool hit = (w->guess_count[i] != 0) & (w->guess[i] == sym[i]);

		c += hit;
		run = pick(hit, run + 1, 0);
		max_run = pick(run > max_run, run, max_run);
	}
	sp90b_pred_finish(c, n - LZ_FIRST - 1, max_run, k, out);
}

/*
 * Contexts that occur once were added without being stored: count them in (lengths above
 * top[p]), then find where NIST's dictionary would have filled up, if it did.
 */
static bool lz_find_cut(struct sp90b_work *w, size_t n, struct lz_cut *cut)
{
	uint64_t total = 0;

	for (size_t i = LZ_FIRST; i < n; i++) {
		unsigned t = w->top[i - 1] < CTX_MAX_LEN ? w->top[i - 1] : CTX_MAX_LEN;
		uint16_t a = (uint16_t)(w->added[i] | (0xffffU << t));
		unsigned here = (unsigned)__builtin_popcount(a);

		if (total + here > LZ78Y_MAX_CONTEXTS) {
			/* Within a step NIST goes from the longest context down. */
			unsigned room = (unsigned)(LZ78Y_MAX_CONTEXTS - total);

			cut->cut_i = i;
			cut->cut_mask = 0;
			for (unsigned j = CTX_MAX_LEN; j > 0 && room; j--)
				if (a & (1U << (j - 1))) {
					cut->cut_mask |= (uint16_t)(1U << (j - 1));
					room--;
				}
			return true;
		}
		total += here;
	}
	return false;
}

/*
 * Binary input (k = 2), the bitstring view's, has too few contexts to need classes: all
 * 2^l of length l fit in a table indexed by their bits, each entry holding both successors'
 * counts (y's in bits 32y..32y+31). Nearly every context recurs, so each step goes through
 * all lengths, as NIST's does, with what links them (MultiMMC's chain of orders, LZ78Y's
 * dictionary size) in registers; the steps are inlined and unrolled (constant arguments
 * make a copy for each case). Whether a context is found is close to a coin toss at the
 * lengths near log2(n), and whether a guess is right at all of them, so the steps combine
 * their tests with & and | rather than && and ||, which would become branches.
 * Results are those of the classes.
 */

/* The successor an entry predicts (ties: 1, as model.best's). */
static inline unsigned bin_guess(uint64_t e)
{
	return (uint32_t)(e >> 32) >= (uint32_t)e;
}

/* Length l's table: 2^l entries, indexed by the context's bits, oldest first. */
static inline uint64_t *bin_entry(uint64_t *t, uint32_t ctx, unsigned l)
{
	return t + (1U << l) + (ctx & ((1U << l) - 1));
}

/* The tables of lengths 1..levels, empty. */
static uint64_t *bin_tables(struct sp90b_work *w, unsigned levels)
{
	if (!w->bin)
		w->bin = xreallocarray(NULL, BIN_TABLE, sizeof(*w->bin));
	memset(w->bin, 0, (2U << levels) * sizeof(*w->bin));
	return w->bin;
}

/*
 * MultiMMC at one step over bits, the context's last bit lowest in ctx, y to come: orders
 * 1..top, as mmc_step() runs each. Returns the orders that found their context, and in
 * *right those that guessed y. Without `limited` no order can have reached its entry
 * limit, and entries are not counted.
 */
static inline __attribute__((always_inline)) unsigned
mmc_bin_step(uint64_t *t, uint32_t ctx, unsigned y, unsigned top, bool limited,
	     uint32_t *entries, unsigned *right)
{
	uint64_t inc = UINT64_C(1) << (32 * y);
	unsigned looked = 1, found = 0, r = 0;

#pragma GCC unroll 16
	for (unsigned d = 1; d <= top; d++) {
		uint64_t *e = bin_entry(t, ctx, d), v = *e;
		unsigned hit = looked & (v != 0), count = 1;

		if (limited) {
			/* A context found may add a pair, one not found takes an entry (as
			 * mmc_step()), each while the order has room. */
			unsigned is_new = (hit ^ 1) | ((uint32_t)(v >> (32 * y)) == 0);

			count = (entries[d] < MMC_MAX_ENTRIES) | (is_new ^ 1);
			entries[d] += count & is_new;
		}
		found |= hit << (d - 1);
		r |= (hit & (bin_guess(v) ^ y ^ 1)) << (d - 1);
		*e = v + (inc & -(uint64_t)count);
		looked = hit;
	}
	*right = r;
	return found;
}

/* MultiMMC's orders 1..levels over bits: found and right, as level_pass() leaves them. */
static void mmc_binary(struct sp90b_work *w, const uint8_t *sym, size_t n, unsigned levels)
{
	uint64_t *t = bin_tables(w, levels);
	uint32_t entries[CTX_MAX_LEN + 1] = {0}, ctx = 0;
	/* An order takes at most an entry a step, n - 1 of them in all. */
	bool limited = n - 1 > MMC_MAX_ENTRIES;

	for (size_t i = 1; i < n; i++) {
		unsigned y = sym[i], found, right;

		ctx = ctx << 1 | sym[i - 1];
		if (i < CTX_MAX_LEN || levels < CTX_MAX_LEN)
			found = mmc_bin_step(t, ctx, y, i < levels ? (unsigned)i : levels, true,
					     entries, &right);
		else if (limited)
			found = mmc_bin_step(t, ctx, y, CTX_MAX_LEN, true, entries, &right);
		else
			found = mmc_bin_step(t, ctx, y, CTX_MAX_LEN, false, entries, &right);
		w->found[i] = (uint16_t)found;
		w->right[i] = (uint16_t)right;
	}
}

/*
 * LZ78Y at a step over bits, as lz_step() runs each length: the best guess as count << 6 |
 * length << 1 | y, so that the greatest wins and ties go to the longest context, as in
 * NIST's (count 0: none). Longest first, as NIST's: that one is added first if the
 * dictionary fills up within the step. Without `check` it cannot.
 */
static inline __attribute__((always_inline)) uint64_t
lz_bin_step(uint64_t *t, uint32_t ctx, unsigned y, bool check, uint32_t *size)
{
	uint64_t inc = UINT64_C(1) << (32 * y), guess = 0;

#pragma GCC unroll 16
	for (unsigned l = CTX_MAX_LEN; l > 0; l--) {
		uint64_t *e = bin_entry(t, ctx, l), v = *e;
		uint32_t c0 = (uint32_t)v, c1 = (uint32_t)(v >> 32);
		unsigned g = c1 >= c0, add = v == 0;
		uint64_t b = (uint64_t)(g ? c1 : c0) << 6 | l << 1 | g;

		if (check)
			add &= *size < LZ78Y_MAX_CONTEXTS;
		*size += add;
		guess = b > guess ? b : guess;
		*e = v + (inc & -(uint64_t)((v != 0) | add));
	}
	return guess;
}

/* LZ78Y over bits, NIST's dictionary limit included: guess_count and guess, as lz_step()
 * leaves them. */
static void lz_binary(struct sp90b_work *w, const uint8_t *sym, size_t n)
{
	uint64_t *t = bin_tables(w, CTX_MAX_LEN);
	uint32_t ctx = 0, size = 0;

	for (size_t i = 0; i < LZ_FIRST; i++)
		ctx = ctx << 1 | sym[i];
	for (size_t i = LZ_FIRST; i < n; i++) {
		unsigned y = sym[i];
		uint64_t guess;

		if (size + CTX_MAX_LEN <= LZ78Y_MAX_CONTEXTS)
			guess = lz_bin_step(t, ctx, y, false, &size);
		else
			guess = lz_bin_step(t, ctx, y, true, &size);
		w->guess_count[i] = (uint32_t)(guess >> 6);
		w->guess[i] = (uint8_t)(guess & 1);
		ctx = ctx << 1 | y;
	}
}

/* Both predictors over bits; as run_predictors(). */
static void run_binary(struct sp90b_work *w, const uint8_t *sym, size_t n,
		       struct sp90b_pred *mmc, struct sp90b_pred *lz)
{
	work_reserve(w, n);
	if (mmc) {
		mmc_binary(w, sym, n, n - 2 < CTX_MAX_LEN ? (unsigned)(n - 2) : CTX_MAX_LEN);
		mmc_score(w, n, 2, mmc);
	}
	if (lz) {
		lz_binary(w, sym, n);
		lz_score(w, sym, n, 2, lz);
	}
}

/* Run MultiMMC (if mmc) and LZ78Y (if lz) over sym[0..n), n already checked. */
static void run_predictors(struct sp90b_work *w, const uint8_t *sym, size_t n, unsigned k,
			   struct sp90b_pred *mmc, struct sp90b_pred *lz, const struct lz_cut *cut)
{
	unsigned levels = CTX_MAX_LEN, l;

	work_reserve(w, n);
	if (mmc) {
		memset(w->found, 0, n * sizeof(*w->found));
		memset(w->right, 0, n * sizeof(*w->right));
		if (n - 2 < levels)
			levels = (unsigned)(n - 2);
	}
	if (lz) {
		memset(w->guess_count, 0, n * sizeof(*w->guess_count));
		memset(w->added, 0, n * sizeof(*w->added));
		levels = CTX_MAX_LEN;
	}
	classes_first(w, sym, n, &w->cls[1]);
	for (l = 1; l <= levels && w->cls[l & 1].nclasses; l++) {
		const struct classes *ctx = &w->cls[l & 1];
		struct classes *pairs = &w->cls[(l + 1) & 1];

		classes_next(w, sym, n, l, ctx, pairs);
		level_pass(w, sym, n, l, ctx, pairs, mmc && l <= n - 2, lz, cut);
	}
	/* Lengths with no recurring context changed nothing but the entry counts. */
	if (mmc)
		mmc_score(w, n, k, mmc);
	if (lz) {
		struct lz_cut full;

		if (!cut && lz_find_cut(w, n, &full)) {
			run_predictors(w, sym, n, k, NULL, lz, &full);
			return;
		}
		lz_score(w, sym, n, k, lz);
	}
}

static bool mmc_args_ok(const uint8_t *sym, size_t n, unsigned k)
{
	return sym && k >= 2 && k <= 256 && n >= (k == 2 ? 4U : 3U) && n <= SP90B_MAX_SAMPLES;
}

static bool lz_args_ok(const uint8_t *sym, size_t n, unsigned k)
{
	/* NIST's binary variant asserts one more sample than its general one needs. */
	return sym && k >= 2 && k <= 256 && n >= SP90B_LZ78Y_MIN_SAMPLES + (k == 2) &&
	       n <= SP90B_MAX_SAMPLES;
}

int sp90b_dict_predictors(struct sp90b_work *w, const uint8_t *sym, size_t n, unsigned k,
			  struct sp90b_pred *mmc, struct sp90b_pred *lz78y)
{
	if ((!mmc && !lz78y) || (mmc && !mmc_args_ok(sym, n, k)) ||
	    (lz78y && !lz_args_ok(sym, n, k)))
		return -1;
	if (k == 2)
		run_binary(w, sym, n, mmc, lz78y);
	else
		run_predictors(w, sym, n, k, mmc, lz78y, NULL);
	return 0;
}

static int once(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *mmc,
		struct sp90b_pred *lz78y)
{
	struct sp90b_work *w = sp90b_work_new();
	int rc = sp90b_dict_predictors(w, sym, n, k, mmc, lz78y);

	sp90b_work_free(w);
	return rc;
}

/*
 * MultiMMC, §6.3.9: 16 Markov-model predictors of order 1..16, each guessing the most common
 * successor of its context; a scoreboard picks whose guess counts. Once order d meets a
 * context it has never seen, the higher orders are not consulted for this symbol (their
 * context cannot have been seen either, dictionary limits aside) and only learn it.
 */
int sp90b_multi_mmc(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out)
{
	return once(sym, n, k, out, NULL);
}

/*
 * LZ78Y, §6.3.10: one dictionary of contexts of length 1..16 (at most 65,536 of them); the
 * guess is the successor with the highest count over all contexts found (ties: the longer
 * context).
 */
int sp90b_lz78y(const uint8_t *sym, size_t n, unsigned k, struct sp90b_pred *out)
{
	return once(sym, n, k, NULL, out);
}
