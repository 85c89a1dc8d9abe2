/* est_90b_tuple: t-Tuple and LRS from the LCP array of the sorted suffixes; NIST's bitstring. */
#include "autoconf.h"

#include "est_90b_num.h"
#include "est_90b_tuple.h"
#include "util.h"

#include <endian.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Zero bytes after the packed symbols, so that 72 bits can be read from any symbol on. */
#define PACK_SLACK 16

/*
 * What both estimators need is, for every length t, the count of the most common t-tuple
 * (t-Tuple) and the number of pairs of equal t-tuples (LRS). In a suffix array the
 * occurrences of one t-tuple are a run of suffixes whose neighbouring LCPs are all >= t, an
 * LCP interval. An interval of LCP l inside one of LCP lp < l stands for one tuple of each
 * length lp+1..l, occurring as often as the interval has suffixes. One pass over the LCP
 * array with a stack visits every interval, so both sets of counts cost O(n + v) once the
 * suffix array is there. NIST's tool (Kaufer's algorithm) walks the same LCP array and
 * arrives at the same counts.
 */

struct text {
	const uint8_t *packed; /* symbols, b bits each, most significant first */
	uint32_t n;
	unsigned b;            /* bits per symbol */
	unsigned h0;           /* symbols in a key: floor(64 / b) */
	uint64_t top;          /* the top h0 * b bits of a 64-bit word */
	uint8_t per_bits[65];  /* per_bits[c] = c / b: whole symbols in c bits */
};

/* 64 bits of the packed text from bit pos on, left-aligned. */
static inline uint64_t bits_at(const uint8_t *p, uint64_t pos)
{
	unsigned sh = (unsigned)(pos & 7);
	uint64_t w;

	memcpy(&w, p + (pos >> 3), sizeof(w));
	w = be64toh(w);
	if (sh)
		w = (w << sh) | (p[(pos >> 3) + 8] >> (8 - sh));
	return w;
}

/* Symbols w * h0 .. (w + 1) * h0 - 1 of suffix i (zeros past the end), left-aligned. */
static inline uint64_t key_at(const struct text *tx, uint32_t i, unsigned w)
{
	uint64_t at = (uint64_t)i + (uint64_t)w * tx->h0;

	if (at >= tx->n)
		return 0;
	return bits_at(tx->packed, at * tx->b) & tx->top;
}

/*
 * The first sort orders the suffixes by their first KEY_WORDS keys (1024 symbols for bits,
 * 128 for bytes): an MSD radix sort, which goes only as deep as suffixes still agree, so
 * input whose repeats are shorter than that (all the reference data) needs nothing more.
 * What agrees that far is left to prefix doubling, O(n log n) however long the repeats.
 */
#define KEY_WORDS 16
/* Buckets up to this size are sorted by insertion. */
#define INSERTION_MAX 16

struct first_sort {
	const struct text *tx;
	uint32_t *sa;
	uint32_t *rank;  /* rank[i]: index in sa of the first suffix of i's group */
	uint32_t h;      /* symbols sorted by: KEY_WORDS * h0 */
	uint32_t groups;
};

struct keyed {
	uint64_t key; /* key word w of suffix idx */
	uint32_t idx;
};

/*
 * A suffix shorter than h symbols is padded with zeros; where its padded key ties, it is
 * a prefix of the others and must come first. So the sort is stable and starts from
 * descending positions, and a short suffix is a group of its own.
 */
static bool is_short(const struct first_sort *fs, uint32_t i)
{
	return fs->tx->n - i < fs->h;
}

/* Suffixes a and b by their keys from word w on (word w at hand): <0, 0 or >0. */
static int cmp_keys(const struct first_sort *fs, const struct keyed *a, const struct keyed *b,
		    unsigned w)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	for (w++; w < KEY_WORDS; w++) {
		uint64_t ka = key_at(fs->tx, a->idx, w), kb = key_at(fs->tx, b->idx, w);

		if (ka != kb)
			return ka < kb ? -1 : 1;
	}
	return 0;
}

/* Ranks for the sorted idx[0..m), at sa[base..]: same[j] (NULL: all) if j ties with j-1. */
static void set_ranks(struct first_sort *fs, const uint32_t *idx, uint32_t base, uint32_t m,
		      const bool *same)
{
	uint32_t j, g = base;

	for (j = 0; j < m; j++) {
		if (j == 0 || (same && !same[j]) || is_short(fs, idx[j]) ||
		    is_short(fs, idx[j - 1])) {
			g = base + j;
			fs->groups++;
		}
		fs->rank[idx[j]] = g;
	}
}

/* Insertion sort of idx[0..m), m <= INSERTION_MAX, by keys from word w on. */
static void small_sort(struct first_sort *fs, uint32_t *idx, uint32_t base, uint32_t m,
		       unsigned w)
{
	struct keyed e[INSERTION_MAX];
	bool same[INSERTION_MAX];
	uint32_t i, j;

	for (i = 0; i < m; i++) {
		e[i].key = key_at(fs->tx, idx[i], w);
		e[i].idx = idx[i];
	}
	for (i = 1; i < m; i++) {
		struct keyed x = e[i];

		for (j = i; j > 0; j--) {
			int c = cmp_keys(fs, &x, &e[j - 1], w);

			if (c > 0 || (c == 0 && x.idx < e[j - 1].idx))
				break;
			e[j] = e[j - 1];
		}
		e[j] = x;
	}
	for (i = 0; i < m; i++) {
		idx[i] = e[i].idx;
		same[i] = i > 0 && cmp_keys(fs, &e[i - 1], &e[i], w) == 0;
	}
	set_ranks(fs, idx, base, m, same);
}

/*
 * MSD radix sort of src[0..m) (stable) by the keys' bits from `used` on, into
 * sa[base .. base + m), ranking as it goes; dst, of the same size, is scratch, and src and
 * dst swap roles one level down. Digits are wide enough for about 4 suffixes a bucket (4
 * to 16 bits). The text is small next to the index arrays (an eighth of sa for bits), so
 * keys are read from it again rather than kept.
 */
static void msd_sort(struct first_sort *fs, uint32_t *src, uint32_t *dst, uint32_t base,
		     uint32_t m, unsigned used)
{
	const struct text *tx = fs->tx;
	unsigned kb = tx->h0 * tx->b, w, off, dw;
	uint32_t *cnt, nd, j, end;

	while (m > INSERTION_MAX && used < KEY_WORDS * kb) {
		w = used / kb;
		off = used % kb;
		dw = 32 - (unsigned)__builtin_clz(m) - 2;
		dw = dw < 4 ? 4 : dw > 16 ? 16 : dw;
		if (dw > kb - off)
			dw = kb - off;
		nd = 1U << dw;
		cnt = xcalloc(nd, sizeof(*cnt));
		for (j = 0; j < m; j++)
			cnt[(key_at(tx, src[j], w) << off) >> (64 - dw)]++;
		if (cnt[(key_at(tx, src[0], w) << off) >> (64 - dw)] == m) {
			/* One bucket: nothing to move; the next digit decides. */
			free(cnt);
			used += dw;
			continue;
		}
		for (j = 0, end = 0; j < nd; j++) {
			end += cnt[j];
			cnt[j] = end - cnt[j];
		}
		for (j = 0; j < m; j++)
			dst[cnt[(key_at(tx, src[j], w) << off) >> (64 - dw)]++] = src[j];
		/* cnt[c] is now where bucket c ends. */
		for (j = 0, end = 0; j < nd; j++) {
			if (cnt[j] > end)
				msd_sort(fs, dst + end, src + end, base + end, cnt[j] - end,
					 used + dw);
			end = cnt[j];
		}
		free(cnt);
		return;
	}
	if (m > 1 && used < KEY_WORDS * kb)
		small_sort(fs, src, base, m, used / kb);
	else
		set_ranks(fs, src, base, m, NULL); /* what is left ties, in descending order */
	if (src != fs->sa + base)
		memcpy(fs->sa + base, src, (size_t)m * sizeof(*src));
}

/* sa sorted by the first h symbols, rank set; returns the number of groups. */
static uint32_t sort_keys(const struct text *tx, uint32_t *sa, uint32_t *tmp, uint32_t *rank,
			  uint32_t *h)
{
	struct first_sort fs = {.tx = tx, .sa = sa, .rank = rank};
	uint32_t j, n = tx->n;

	fs.h = KEY_WORDS * tx->h0 < n ? KEY_WORDS * tx->h0 : n;
	for (j = 0; j < n; j++)
		sa[j] = n - 1 - j;
	msd_sort(&fs, sa, tmp, 0, n, 0);
	*h = fs.h;
	return fs.groups;
}

/*
 * Prefix doubling (Manber and Myers, with counting sorts): from the order by the first h
 * symbols to the order by the first 2h, until every suffix is a group of its own. The
 * suffixes sorted by their second half are those too short to have one, then sa shifted
 * by h; a stable distribution by rank sorts them by the first half. Ranks are group
 * starts, so the distribution needs no counting: cnt[g] starts at g.
 */
static void double_until_sorted(uint32_t n, uint32_t h, uint32_t groups, uint32_t *sa,
				uint32_t **rankp, uint32_t **tmpp, uint32_t *cnt)
{
	uint32_t *rank = *rankp, *tmp = *tmpp;

	while (groups < n) {
		uint32_t i, j, m = 0, g = 0, pr1 = 0, pr2 = 0, *t;

		/* Two suffixes agree on their first h symbols, so both are longer: h < n. */
		for (i = n - h; i < n; i++)
			tmp[m++] = i;
		for (j = 0; j < n; j++)
			if (sa[j] >= h)
				tmp[m++] = sa[j] - h;
		for (j = 0; j < n; j++)
			cnt[j] = j;
		for (j = 0; j < n; j++)
			sa[cnt[rank[tmp[j]]]++] = tmp[j];

		/* New ranks, into tmp: a pair (rank of the first half, of the second + 1, or 0). */
		groups = 0;
		for (j = 0; j < n; j++) {
			uint32_t x = sa[j], r1 = rank[x], r2 = x < n - h ? rank[x + h] + 1 : 0;

			if (j == 0 || r1 != pr1 || r2 != pr2) {
				g = j;
				groups++;
			}
			tmp[x] = g;
			pr1 = r1;
			pr2 = r2;
		}
		t = rank;
		rank = tmp;
		tmp = t;
		h *= 2; /* < 2^32: h < n */
	}
	*rankp = rank;
	*tmpp = tmp;
}

/*
 * How many symbols suffixes i and j have in common, knowing that the first l agree; a key
 * (h0 symbols) at a time. *words counts the keys compared.
 */
static uint32_t common(const struct text *tx, uint32_t i, uint32_t j, uint32_t l,
		       uint64_t *words)
{
	uint32_t lim = tx->n - (i > j ? i : j);

	while (l < lim) {
		uint64_t x = (bits_at(tx->packed, (uint64_t)(i + l) * tx->b) ^
			      bits_at(tx->packed, (uint64_t)(j + l) * tx->b)) & tx->top;

		++*words;
		if (x) {
			l += tx->per_bits[__builtin_clzll(x)];
			break;
		}
		l += tx->h0;
	}
	return l < lim ? l : lim;
}

/*
 * lcp[r] = LCP of the suffixes at sa[r-1] and sa[r] (lcp[0] = 0), by comparing them: a
 * sequential pass over sa, reading the text (small enough to stay in cache) at random.
 * Gives up, returning false, past LCP_DIRECT_WORDS keys a suffix on average (long
 * repeats, where Kasai's O(n) wins). Else the greatest LCP, v, is in *v.
 */
#define LCP_DIRECT_WORDS 4
static bool lcp_direct(const struct text *tx, const uint32_t *sa, uint32_t *lcp, uint32_t *v)
{
	uint64_t words = 0, budget = (uint64_t)tx->n * LCP_DIRECT_WORDS;
	uint32_t j, l, top = 0;

	lcp[0] = 0;
	for (j = 1; j < tx->n; j++) {
		l = common(tx, sa[j - 1], sa[j], 0, &words);
		lcp[j] = l;
		if (l > top)
			top = l;
		if (words > budget)
			return false;
	}
	*v = top;
	return true;
}

/*
 * Kasai et al.: lcp[r] = LCP of the suffixes at sa[r-1] and sa[r] (lcp[0] = 0), in O(n),
 * since the LCP of suffix i+1 with its predecessor is at least that of i less one.
 * Returns the greatest, v.
 */
static uint32_t kasai(const struct text *tx, const uint32_t *sa, const uint32_t *rank,
		      uint32_t *lcp)
{
	uint32_t i, l = 0, v = 0;
	uint64_t words = 0;

	lcp[0] = 0;
	for (i = 0; i < tx->n; i++) {
		uint32_t r = rank[i];

		if (r == 0) {
			l = 0;
			continue;
		}
		l = common(tx, i, sa[r - 1], l, &words);
		lcp[r] = l;
		if (l > v)
			v = l;
		if (l)
			l--;
	}
	return v;
}

/*
 * Where no two suffixes agree on a whole key (h0 symbols: 64 bits; true of random data by
 * far), the LCP array comes from the suffixes sorted by their first key alone: one word a
 * suffix, with no suffix array kept. An LSD radix sort orders them by the key's top
 * LSD_PASSES * LSD_BITS bits, and the few runs that agree that far are finished by
 * insertion. Both are stable and start from descending positions, so that a suffix that is
 * a prefix of another (padded with zeros, its key can equal the other's) comes first.
 * Returns false if two suffixes agree on a whole key (they need the suffix array), or a
 * run to finish is longer than LSD_RUN_MAX (the suffix array is then the faster).
 */
#define LSD_BITS 11
#define LSD_PASSES 3
#define LSD_RUN_MAX 32
#define LSD_LOW (64 - LSD_PASSES * LSD_BITS) /* bits left unsorted */
static bool lcp_one_key(const struct text *tx, uint32_t *lcp, uint32_t *v)
{
	uint32_t n = tx->n, j, a, top = 0, *idx, *idx2, *t32, cnt[1U << LSD_BITS] = {0};
	uint64_t *key, *key2, *t64;
	unsigned sh;
	bool ok = true;

	/* Many suffixes alike in their first LSD_BITS bits foretell long runs to finish, or
	 * long repeats: then the suffix array at once. */
	for (j = 0; j < n; j++)
		cnt[key_at(tx, j, 0) >> (64 - LSD_BITS)]++;
	for (j = 0; j < 1U << LSD_BITS; j++)
		if (cnt[j] > n / 64 + LSD_RUN_MAX)
			return false;

	key = xreallocarray(NULL, n, sizeof(*key));
	key2 = xreallocarray(NULL, n, sizeof(*key2));
	idx = xreallocarray(NULL, n, sizeof(*idx));
	idx2 = xreallocarray(NULL, n, sizeof(*idx2));
	for (j = 0; j < n; j++) {
		idx[j] = n - 1 - j;
		key[j] = key_at(tx, idx[j], 0);
	}
	/* Keys are left-aligned: their symbols are the top of the word. */
	for (sh = LSD_LOW; sh < 64; sh += LSD_BITS) {
		uint32_t mask = (1U << LSD_BITS) - 1, sum = 0;

		memset(cnt, 0, sizeof(cnt));
		for (j = 0; j < n; j++)
			cnt[(key[j] >> sh) & mask]++;
		for (j = 0; j <= mask; j++) {
			uint32_t c = cnt[j];

			cnt[j] = sum;
			sum += c;
		}
		for (j = 0; j < n; j++) {
			uint32_t at = cnt[(key[j] >> sh) & mask]++;

			key2[at] = key[j];
			idx2[at] = idx[j];
		}
		t64 = key;
		key = key2;
		key2 = t64;
		t32 = idx;
		idx = idx2;
		idx2 = t32;
	}
	for (a = 0; a < n && ok; a = j) {
		/* A run: the keys agree on the bits sorted. */
		for (j = a + 1; j < n && key[j] >> LSD_LOW == key[a] >> LSD_LOW; j++)
			;
		ok = j - a <= LSD_RUN_MAX;
		for (uint32_t m = a + 1; m < j && ok; m++) {
			uint64_t km = key[m];
			uint32_t im = idx[m], q;

			for (q = m; q > a && key[q - 1] > km; q--) {
				key[q] = key[q - 1];
				idx[q] = idx[q - 1];
			}
			key[q] = km;
			idx[q] = im;
		}
	}
	lcp[0] = 0;
	for (j = 1; j < n && ok; j++) {
		uint64_t x = key[j - 1] ^ key[j];
		/* The shorter suffix's length: a key past it is padding. */
		uint32_t lim = n - (idx[j - 1] > idx[j] ? idx[j - 1] : idx[j]);
		uint32_t l = x ? tx->per_bits[__builtin_clzll(x)] : tx->h0;

		ok = l < tx->h0 || lim <= tx->h0;
		lcp[j] = l < lim ? l : lim;
		if (lcp[j] > top)
			top = lcp[j];
	}
	/* The keys are the text, and the order gives it away too. */
	util_wipe(key, n * sizeof(*key));
	util_wipe(key2, n * sizeof(*key2));
	util_wipe(idx, n * sizeof(*idx));
	util_wipe(idx2, n * sizeof(*idx2));
	free(key);
	free(key2);
	free(idx);
	free(idx2);
	*v = top;
	return ok;
}

struct frame {
	uint32_t lcp, lb;
};

/*
 * From the LCP intervals: most[t], the count of the most common t-tuple (at least 1), and
 * pairs[t], the pairs of equal t-tuples, for t = 1..v.
 */
static void tuple_counts(const uint32_t *lcp, uint32_t n, uint32_t v, uint32_t *most,
			 uint64_t *pairs)
{
	struct frame *st = xcalloc((size_t)v + 2, sizeof(*st));
	uint64_t *diff = pairs, sum = 0; /* differences, until the prefix sums */
	uint32_t *at = most, run = 1, i, t; /* at[l]: largest interval of LCP l */
	size_t top = 0;

	memset(most, 0, ((size_t)v + 2) * sizeof(*most));
	memset(pairs, 0, ((size_t)v + 2) * sizeof(*pairs));
	st[0].lcp = 0;
	st[0].lb = 0;
	for (i = 1; i <= n; i++) {
		uint32_t l = i < n ? lcp[i] : 0, lb = i - 1;

		while (l < st[top].lcp) {
			struct frame f = st[top--];
			uint32_t outer = l > st[top].lcp ? l : st[top].lcp, size = i - f.lb;
			uint64_t c2 = (uint64_t)size * (size - 1) / 2;

			/* Tuples of lengths outer+1 .. f.lcp occur size times each. */
			if (at[f.lcp] < size)
				at[f.lcp] = size;
			diff[outer + 1] += c2;
			diff[f.lcp + 1] -= c2; /* wraps; the prefix sums do not */
			lb = f.lb;
		}
		if (l > st[top].lcp) {
			st[++top].lcp = l;
			st[top].lb = lb;
		}
	}
	free(st);
	/* An interval of LCP l holds more suffixes than any within it: the most common t-tuple
	 * is the largest interval of LCP >= t. */
	for (t = v; t >= 1; t--) {
		if (at[t] > run)
			run = at[t];
		most[t] = run;
	}
	for (t = 1; t <= v; t++) {
		sum += diff[t];
		pairs[t] = sum;
	}
}

/*
 * x^y rounded correctly, as the libm behind NIST's reference output had it (glibc's pow
 * since 2.28 may be 1 ULP off: rand4_short's t-Tuple p-hat_max): in long double, then
 * rounded, which is right unless x^y is within 2^-11 ULP of halfway between two doubles.
 */
static double pow_rounded(double x, double y)
{
	return (double)powl(x, y);
}

/* The per-length estimates both take the greatest of. */
struct roots {
	const uint32_t *most;  /* t-Tuple: (most[i] / (n - i + 1))^(1/i) */
	const uint64_t *pairs; /* LRS: (pairs[i] / (n - i + 1 choose 2))^(1/i) */
	uint64_t n;
};

static inline double ratio(const struct roots *r, uint64_t i)
{
	uint64_t n = r->n;

	if (r->most)
		return (double)r->most[i] / (double)(n - i + 1);
	return (double)r->pairs[i] / (double)(((n - i) * (n - i + 1)) >> 1);
}

/*
 * The greatest root over i = lo..hi, or none if there is no i. There may be millions
 * (v of them, for long repeats), and powl costs several times pow: pow (within an ULP)
 * finds the greatest, and only the roots near it are rounded exactly. Roots are at most
 * 1, so one that is 1 ends the search.
 */
static double max_root(const struct roots *r, uint64_t lo, uint64_t hi, double none)
{
	double fast = -1.0, best = none;
	uint64_t i;

	for (i = lo; i <= hi; i++) {
		double q = pow(ratio(r, i), 1.0 / (double)i);

		if (q > fast)
			fast = q;
	}
	for (i = lo; i <= hi && best < 1.0; i++) {
		double q = pow(ratio(r, i), 1.0 / (double)i);

		if (q >= fast * (1.0 - 8 * DBL_EPSILON)) {
			q = pow_rounded(ratio(r, i), 1.0 / (double)i);
			if (q > best)
				best = q;
		}
	}
	return best;
}

static double upper_bound(double p, uint64_t n)
{
	return fmin(1.0, p + Z_ALPHA * sqrt(p * (1.0 - p) / ((double)n - 1.0)));
}

/* The estimators from the counts, with NIST's arithmetic (its order of operations). */
static void finish(const uint32_t *most, const uint64_t *pairs, uint64_t n, uint32_t v,
		   struct sp90b_t_tuple *tt, struct sp90b_lrs *lrs)
{
	const struct roots rt = {.most = most, .n = n}, rl = {.pairs = pairs, .n = n};
	uint64_t u;

	for (u = 1; u <= v && most[u] >= SP90B_TUPLE_MIN_COUNT; u++)
		;
	if (tt) {
		memset(tt, 0, sizeof(*tt));
		tt->valid = u > 1;
		tt->t = u - 1;
		if (tt->valid) {
			tt->p_hat_max = max_root(&rt, 1, u - 1, -1.0);
			tt->p_u = upper_bound(tt->p_hat_max, n);
			tt->h = -log2(tt->p_u);
		}
	}
	if (lrs) {
		memset(lrs, 0, sizeof(*lrs));
		lrs->valid = v >= u;
		lrs->u = u;
		lrs->v = v;
		if (lrs->valid) {
			lrs->p_hat = max_root(&rl, u, v, 0.0);
			lrs->p_u = upper_bound(lrs->p_hat, n);
			lrs->h = -log2(lrs->p_u);
		}
	}
}

/* sym[0..n) at b bits each, most significant first, into packed (zeroed). */
static void pack(const uint8_t *sym, size_t n, unsigned b, uint8_t *packed)
{
	uint64_t acc = 0;
	unsigned have = 0;
	size_t i, o = 0;

	for (i = 0; i < n; i++) {
		acc = acc << b | sym[i];
		have += b;
		if (have >= 8) {
			have -= 8;
			packed[o++] = (uint8_t)(acc >> have);
		}
	}
	if (have)
		packed[o] = (uint8_t)(acc << (8 - have));
}

int sp90b_tuple_lrs(const uint8_t *sym, size_t n, unsigned k, struct sp90b_t_tuple *tt,
		    struct sp90b_lrs *lrs)
{
	struct text tx;
	uint8_t *packed, max = 0;
	uint32_t *sa, *rank, *tmp, *cnt, *most, groups, v, h;
	uint64_t *pairs;
	size_t i, plen;
	unsigned b = 1;

	if (!sym || n < 2 || n > SP90B_TUPLE_MAX_SAMPLES || k < 1 || k > 256)
		return -1;
	for (i = 0; i < n; i++)
		if (sym[i] > max)
			max = sym[i];
	if (max >= k)
		return -1;
	while ((1U << b) < k)
		b++;

	plen = (n * b + 7) / 8 + PACK_SLACK;
	packed = xcalloc(plen, 1);
	pack(sym, n, b, packed);
	tx.packed = packed;
	tx.n = (uint32_t)n;
	tx.b = b;
	tx.h0 = 64 / b;
	tx.top = tx.h0 * b == 64 ? UINT64_MAX : ~(UINT64_MAX >> (tx.h0 * b));
	for (i = 0; i < ARRAY_SIZE(tx.per_bits); i++)
		tx.per_bits[i] = (uint8_t)(i / b);

	tmp = xreallocarray(NULL, n, sizeof(*tmp));
	if (!lcp_one_key(&tx, tmp, &v)) {
		sa = xreallocarray(NULL, n, sizeof(*sa));
		rank = xreallocarray(NULL, n, sizeof(*rank));
		groups = sort_keys(&tx, sa, tmp, rank, &h);
		cnt = groups < n ? xreallocarray(NULL, n, sizeof(*cnt)) : NULL;
		double_until_sorted(tx.n, h, groups, sa, &rank, &tmp, cnt);
		free(cnt);
		if (!lcp_direct(&tx, sa, tmp, &v))
			v = kasai(&tx, sa, rank, tmp);
		/* The symbols can be read back from the suffix order. */
		util_wipe(sa, n * sizeof(*sa));
		util_wipe(rank, n * sizeof(*rank));
		free(sa);
		free(rank);
	}
	most = xreallocarray(NULL, (size_t)v + 2, sizeof(*most));
	pairs = xreallocarray(NULL, (size_t)v + 2, sizeof(*pairs));
	tuple_counts(tmp, tx.n, v, most, pairs);
	finish(most, pairs, n, v, tt, lrs);

	/* The packed copy is the symbols. */
	util_wipe(packed, plen);
	free(packed);
	free(tmp);
	free(most);
	free(pairs);
	return 0;
}

int sp90b_t_tuple(const uint8_t *sym, size_t n, unsigned k, struct sp90b_t_tuple *out)
{
	if (sp90b_tuple_lrs(sym, n, k, out, NULL) < 0)
		return -1;
	return out->valid ? 0 : -1;
}

int sp90b_lrs(const uint8_t *sym, size_t n, unsigned k, struct sp90b_lrs *out)
{
	if (sp90b_tuple_lrs(sym, n, k, NULL, out) < 0)
		return -1;
	return out->valid ? 0 : -1;
}

size_t sp90b_bitstring(const uint8_t *raw, size_t n, unsigned bits, uint8_t *out)
{
	size_t i;
	unsigned j, mask = (1U << bits) - 1;

	if (bits < 1 || bits > 8)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned s = raw[i] & mask;

		for (j = 0; j < bits; j++)
			out[i * bits + j] = (uint8_t)((s >> (bits - 1 - j)) & 1);
	}
	return n * bits;
}
