/* fuzz_pipeline: the pipeline (estimator, health tests, policy, pool) fed timestamps no
 * source should give but a clock, a savefile or a device can: backwards, huge jumps, the
 * same time again, the ends of the range; singly and in batches, with skips and weights,
 * on an instance of each class, with the boot allowance or without. Counts must add up and
 * credit stay finite and in bounds. */
#include "autoconf.h"

#include <math.h>
#include <string.h>

#include "config.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "fuzz.h"
#include "kernel.h"
#include "log.h"

#define MAX_OPS 4096
#define BATCH 64

static struct config *cfg;
static struct pool pool;

static void drain(void *arg)
{
	struct batch b;

	if (feed_pool_full(&pool)) {
		feed_pool_take(&pool, &b);
		feed_pool_batch_wipe(&b);
	}
}

static void check(struct instance *inst, uint64_t events)
{
	struct inst_info info;

	FUZZ_ASSERT(feed_pipeline_count() == 1 && feed_pipeline_info(0, &info));
	FUZZ_ASSERT(info.c.events == events && info.c.skipped <= events);
	FUZZ_ASSERT(isfinite(info.c.estimated_bits) && info.c.estimated_bits >= 0);
	FUZZ_ASSERT(isfinite(info.c.credited_bits) && info.c.credited_bits >= 0);
	FUZZ_ASSERT(isfinite(info.c.held_bits) && info.c.held_bits >= 0);
	/* NaN: no estimate yet. */
	FUZZ_ASSERT(isnan(info.last_estimate) ||
		    (isfinite(info.last_estimate) && info.last_estimate >= 0));
	FUZZ_ASSERT(info.c.credited_bits <= info.c.estimated_bits + 1e-6);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[CLASS_COUNT] = {"event0", "loop0", "eth0"};
	struct instance *inst;
	uint64_t t = 0, batch[BATCH], events = 0;
	size_t nbatch = 0;

	if (!cfg) {
		log_open(true, 0);
		cfg = config_defaults();
		feed_pool_init(&pool);
		feed_pipeline_init(cfg, &pool, drain, NULL);
	}
	if (size < 9)
		return 0;
	memcpy(&t, data + 1, 8);
	/* What the kernel still needs, as at a boot, or nothing, as once it is ready. */
	feed_pipeline_boot_allowance(data[0] & 0x20 ? KERNEL_READY_BITS : 0);
	inst = feed_pipeline_attach((enum src_class)(data[0] % CLASS_COUNT), names[data[0] % CLASS_COUNT],
			       "fuzz", data[0] & 0x10 ? INST_KERNEL_CREDITS : 0);
	FUZZ_ASSERT(inst != NULL);
	data += 9;
	size -= 9;
	for (size_t i = 0; i + 3 <= size && i / 3 < MAX_OPS; i += 3) {
		unsigned arg = (unsigned)data[i + 1] << 8 | data[i + 2];

		switch (data[i] % 10) {
		case 0: /* an ordinary gap, up to 65 ms */
		case 1:
		case 2:
			t += (uint64_t)arg * 1000 + data[i] / 10;
			break;
		case 3: /* backwards, up to 65 s */
			t -= (uint64_t)arg * 1000000;
			break;
		case 4: /* the same time again */
			break;
		case 5: /* a jump of up to 2^63 ns */
			t += 1ull << (arg % 64);
			break;
		case 6: /* the ends of the range */
			t = arg & 1 ? UINT64_MAX - arg : arg;
			break;
		case 7: /* what the batch holds goes in now */
			if (nbatch) {
				feed_pipeline_samples(inst, batch, nbatch);
				events += nbatch;
				nbatch = 0;
			}
			continue;
		case 8: /* events seen but not handed in, and the source's weight */
			feed_pipeline_skip(inst, arg % 100);
			events += arg % 100;
			feed_pipeline_set_weight(inst, (double)(arg & 0xff) / 255.0,
					    (double)((arg >> 8) & 0xff) / 255.0);
			continue;
		case 9: /* one at a time */
			feed_pipeline_sample(inst, t);
			events++;
			continue;
		}
		batch[nbatch++] = t;
		if (nbatch == BATCH) {
			feed_pipeline_samples(inst, batch, nbatch);
			events += nbatch;
			nbatch = 0;
		}
	}
	if (nbatch) {
		feed_pipeline_samples(inst, batch, nbatch);
		events += nbatch;
	}
	check(inst, events);
	feed_pipeline_detach(inst);
	return 0;
}
