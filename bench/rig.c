/* bench/rig: see rig.h. */
#include "autoconf.h"

#include "rig.h"

#include <event2/event.h>
#include <stdio.h>
#include <time.h>

#include "feed_pipeline.h"

double rig_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void feed_now(void *feed)
{
	feed_run(feed);
}

void rig_open(struct rig *r, bool feed_always)
{
	r->cfg = config_defaults();
	r->base = event_base_new();
	if (feed_always)
		r->cfg->feed.mode = FEED_ALWAYS;
	r->cfg->policy[CLASS_INPUT].rule.cap_bits_per_second = 1e6;
	feed_sink_open(&r->sink, SINK_DRY_RUN, r->cfg->feed.device);
	feed_pool_init(&r->pool);
	feed_init(&r->feed, r->base, r->cfg, &r->pool, &r->sink);
	/* No loop turns here: the feed decides after every add, so a full pool goes to the
	 * sink before more is folded into it. */
	feed_pipeline_init(r->cfg, &r->pool, feed_now, &r->feed);
}

void rig_close(struct rig *r, bool say)
{
	feed_flush(&r->feed);
	if (say)
		printf("  (sink: %llu batches, %llu bits credited)\n", (unsigned long long)r->sink.feeds,
	       (unsigned long long)r->sink.credited);
	feed_pipeline_fini();
	feed_fini(&r->feed);
	feed_sink_close(&r->sink);
	event_base_free(r->base);
	config_free(r->cfg);
}
