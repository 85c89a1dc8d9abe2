/* bench/pipeline: CPU time per sample through the whole pipeline (estimator, policy, pool,
 * feed, dry-run sink), beside a bare loop over the same timestamps, in one run. */
#include "autoconf.h"

#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "config.h"
#include "feed.h"
#include "log.h"
#include "pipeline.h"
#include "pool.h"
#include "sink.h"

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The baseline: read every timestamp and take its delta, nothing else. */
static double bare_loop(const uint64_t *t, size_t n)
{
	volatile uint64_t acc = 0;
	uint64_t prev = 0;
	double start = cpu_ns();

	for (size_t i = 0; i < n; i++) {
		acc += t[i] - prev;
		prev = t[i];
	}
	return (cpu_ns() - start) / (double)n;
}

static double full_pipeline(const uint64_t *t, size_t n)
{
	struct config *cfg = config_defaults();
	struct event_base *base = event_base_new();
	struct pool pool;
	struct sink sink;
	struct feed feed;
	struct instance *inst;
	double start, per;

	cfg->feed.mode = FEED_ALWAYS;
	cfg->policy[CLASS_INPUT].rule.cap_bits_per_second = 1e6;
	sink_open(&sink, SINK_DRY_RUN, cfg->feed.device);
	pool_init(&pool, feed_poke, &feed);
	feed_init(&feed, base, cfg, &pool, &sink);
	pipeline_init(cfg, &pool);
	inst = pipeline_attach(CLASS_INPUT, "bench0", "stream", 0);
	start = cpu_ns();
	for (size_t i = 0; i < n; i++)
		pipeline_sample(inst, t[i]);
	per = (cpu_ns() - start) / (double)n;
	feed_flush(&feed);
	printf("  (sink: %llu batches, %llu bits credited)\n", (unsigned long long)sink.feeds,
	       (unsigned long long)sink.credited);
	pipeline_fini();
	feed_fini(&feed);
	sink_close(&sink);
	event_base_free(base);
	config_free(cfg);
	return per;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 5000000;
	unsigned seed = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 1;
	uint64_t *t = malloc(n * sizeof(*t));
	uint64_t now = 1000000000ULL;
	double bare, full;

	if (!t)
		return 1;
	log_open(true, 0);
	srandom(seed);
	for (size_t i = 0; i < n; i++) {
		now += 200000 + (uint64_t)(random() % 1800000); /* 0.2..2 ms apart */
		t[i] = now;
	}
	printf("pipeline benchmark: %zu samples, seed %u\n", n, seed);
	bare = bare_loop(t, n);
	full = full_pipeline(t, n);
	printf("bare loop      %8.2f ns/sample\n", bare);
	printf("full pipeline  %8.2f ns/sample\n", full);
	printf("ratio          %8.1f x\n", full / (bare > 0 ? bare : 1));
	free(t);
	return 0;
}
