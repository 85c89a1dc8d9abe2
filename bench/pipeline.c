/* bench/pipeline: CPU time per sample through the whole pipeline (estimator, policy, pool,
 * feed, dry-run sink), beside a bare loop over the same timestamps, in one run; the same
 * once the instance's long window has grown (its first million symbols, unclocked: what an
 * instance costs from then on); and what the estimators' schedule costs a second of events.
 *   bench/pipeline [SAMPLES [SEED]]
 *   bench/pipeline --levels             (only the schedule's cost)
 *   bench/pipeline --long               (only the long window's) */
#include "autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "est.h"
#include "est_90b.h"
#include "est_90b_tuple.h"
#include "feed_pipeline.h"
#include "log.h"
#include "rig.h"

#define CAPTURE_RUN 256 /* what the packet source hands over at most (CAPTURE_BATCH) */
/* Samples after which an instance's long window (est_online.c) has grown: a million symbols,
 * and an eighth more for the merged events of a fast stream. */
#define GROWN (((size_t)1 << 20) + ((size_t)1 << 17))

/* The baseline: read every timestamp and take its delta, nothing else. */
static double bare_loop(const uint64_t *t, size_t n)
{
	volatile uint64_t acc = 0;
	uint64_t prev = 0;
	double start = rig_cpu_ns();

	for (size_t i = 0; i < n; i++) {
		acc += t[i] - prev;
		prev = t[i];
	}
	return (rig_cpu_ns() - start) / (double)n;
}

/* run 1: an event a call (input and block sources); more: runs of that many
 * (feed_pipeline_samples, as the packet source hands them over). The first `warm` samples
 * go through unclocked. */
static double full_pipeline(const uint64_t *t, size_t n, size_t run, size_t warm)
{
	struct rig rig;
	struct instance *inst;
	double start, per;

	rig_open(&rig, true);
	inst = feed_pipeline_attach(CLASS_INPUT, "bench0", "stream", 0);
	for (size_t i = 0; i < warm; i += CAPTURE_RUN)
		feed_pipeline_samples(inst, t + i, warm - i < CAPTURE_RUN ? warm - i : CAPTURE_RUN);
	t += warm;
	start = rig_cpu_ns();
	for (size_t i = 0; i < n; i += run) {
		if (run == 1)
			feed_pipeline_sample(inst, t[i]);
		else
			feed_pipeline_samples(inst, t + i, n - i < run ? n - i : run);
	}
	per = (rig_cpu_ns() - start) / (double)n;
	rig_close(&rig, true);
	return per;
}

/* The estimators' levels (est_online.c) on random 4096-symbol blocks: CPU ms per block, and
 * what the schedule makes of them a second of events, at an interval of 10 s (input,
 * block) and 60 s (network): cheap / interval + costly / 12 intervals + all / 60. */
static void estimator_levels(void)
{
	static const char *const names[EST_LEVELS] = {"cheap", "costly", "all"};
	struct sp90b_scratch *work = sp90b_scratch_new();
	double ms[EST_LEVELS];
	static uint8_t blocks[20][4096];

	for (size_t r = 0; r < ARRAY_SIZE(blocks); r++)
		for (size_t i = 0; i < sizeof(blocks[r]); i++)
			blocks[r][i] = (uint8_t)random();
	printf("estimator levels, CPU per random 4096-symbol block:");
	for (int level = 0; level < EST_LEVELS; level++) {
		struct sp90b_noniid_result a;
		double start = rig_cpu_ns();

		for (size_t r = 0; r < ARRAY_SIZE(blocks); r++)
			sp90b_noniid(work, blocks[r], sizeof(blocks[r]), 8, est_online_sp90b_lit[level],
				     est_online_sp90b_bit[level], &a);
		ms[level] = (rig_cpu_ns() - start) / ARRAY_SIZE(blocks) / 1e6;
		printf(" %s %.2f ms%s", names[level], ms[level], level + 1 < EST_LEVELS ? "," : "\n");
	}
	for (int every = 10; every <= 60; every += 50)
		printf("  a second of events at an estimate_interval of %d s: %.1f us\n", every,
		       1e3 * (ms[0] / every + ms[1] / (12.0 * every) + ms[2] / (60.0 * every)));
	sp90b_scratch_free(work);
}

/* The long window's estimators (est_online.c: t-Tuple, LRS and MultiMCW over the last 2^20
 * symbols) on random symbols: CPU ms at some sizes, and over all the estimates a busy
 * instance makes while its window grows (at 1024, then every eighth of each doubling, at
 * least every 256 symbols), where MultiMCW takes only the symbols since the last estimate
 * (sp90b_mcw_add()). */
static double long_window_ms(const uint8_t *sym, size_t n)
{
	struct sp90b_t_tuple tt;
	struct sp90b_lrs lrs;
	struct sp90b_pred mcw;
	double start = rig_cpu_ns();

	sp90b_tuple_lrs(sym, n, 256, &tt, &lrs);
	sp90b_multi_mcw(sym, n, 256, &mcw);
	return (rig_cpu_ns() - start) / 1e6;
}

static void long_window(void)
{
	const size_t max = (size_t)1 << 20;
	uint8_t *sym = malloc(max);
	struct sp90b_mcw *live = sp90b_mcw_new();
	double tuple = 0, mcw = 0;
	size_t n, step;

	if (!sym)
		return;
	for (size_t i = 0; i < max; i++)
		sym[i] = (uint8_t)random();
	printf("long window, CPU per estimate over random symbols:");
	for (n = (size_t)1 << 16; n <= max; n <<= 2)
		printf(" %zu %.1f ms%s", n, long_window_ms(sym, n), n < max ? "," : "\n");
	for (n = 1024; n <= max; n += step) {
		struct sp90b_t_tuple tt;
		struct sp90b_lrs lrs;
		struct sp90b_pred p;
		size_t pow2 = 1;
		double t0 = rig_cpu_ns(), t1;

		while (pow2 * 2 <= n)
			pow2 *= 2;
		step = pow2 / 8 > 256 ? pow2 / 8 : 256;
		sp90b_tuple_lrs(sym, n, 256, &tt, &lrs);
		t1 = rig_cpu_ns();
		sp90b_mcw_add(live, sym, n);
		sp90b_mcw_result(live, n, 256, &p);
		tuple += (t1 - t0) / 1e6;
		mcw += (rig_cpu_ns() - t1) / 1e6;
	}
	printf("  while it grows to %zu symbols: %.0f ms in all (t-Tuple and LRS %.0f, MultiMCW "
	       "%.0f)\n", max, tuple + mcw, tuple, mcw);
	sp90b_mcw_free(live);
	free(sym);
}

/* Stream shapes: what a source might hand the pipeline. */
enum shape { RANDOM, DISK, TWO, REPLAY, PERIODIC, N_SHAPES };
static const char *const shape_names[N_SHAPES] = {
	"random 0.2-2 ms", "disk-like (skewed us)", "two intervals", "replayed 512 loop",
	"exactly 1 ms",
};

static void make_stream(enum shape sh, uint64_t *t, size_t n)
{
	uint64_t now = 1000000000ULL, loop[512];

	for (size_t i = 0; i < ARRAY_SIZE(loop); i++)
		loop[i] = 200000 + (uint64_t)(random() % 1800000);
	for (size_t i = 0; i < n; i++) {
		switch (sh) {
		case RANDOM:
			now += 200000 + (uint64_t)(random() % 1800000);
			break;
		case DISK: /* mostly ~100 us with a long tail, at ns resolution */
			now += 90000 + (uint64_t)(random() % 20000) +
			       ((random() % 16) == 0 ? (uint64_t)(random() % 2000000) : 0);
			break;
		case TWO:
			now += (random() % 2) ? 1000000 : 1100000;
			break;
		case REPLAY:
			now += loop[i % ARRAY_SIZE(loop)];
			break;
		case PERIODIC:
		case N_SHAPES:
			now += 1000000;
			break;
		}
		t[i] = now;
	}
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	unsigned seed = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1;
	uint64_t *t;

	log_open(true, 0);
	srandom(seed);
	if (argc > 1 && strcmp(argv[1], "--levels") == 0) { /* bench/pcap.sh asks for these */
		estimator_levels();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--long") == 0) {
		long_window();
		return 0;
	}
	t = malloc((GROWN + n) * sizeof(*t));
	if (!t)
		return 1;
	printf("pipeline benchmark: %zu samples a stream, seed %u; CPU ns per sample through\n"
	       "estimator (SP 800-90B + kernel rule), health tests, policy, pool and the dry-run\n"
	       "sink, beside a bare loop over the same timestamps (budget: 300 ns)\n",
	       n, seed);
	estimator_levels();
	long_window();
	for (int sh = 0; sh < N_SHAPES; sh++) {
		double bare, full, runs, grown;

		make_stream((enum shape)sh, t, GROWN + n);
		printf("%s\n", shape_names[sh]);
		bare = bare_loop(t, n);
		full = full_pipeline(t, n, 1, 0);
		runs = full_pipeline(t, n, CAPTURE_RUN, 0);
		printf("  bare loop %6.2f ns, full pipeline %7.2f ns, ratio %6.1f x; in runs of %d "
		       "%7.2f ns\n", bare, full, full / (bare > 0 ? bare : 1), CAPTURE_RUN, runs);
		grown = full_pipeline(t, n, CAPTURE_RUN, GROWN);
		printf("  grown (after %zu samples): in runs of %d %7.2f ns\n", GROWN, CAPTURE_RUN,
		       grown);
	}
	free(t);
	return 0;
}
