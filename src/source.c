/* source: the driver table, one per class, and starting/stopping them in order. Classes whose
 * driver is not built in exist as named stubs, so the log says exactly what is missing. */
#include "autoconf.h"

#include "source.h"

#include "log.h"
#include "source_block.h"
#include "source_evdev.h"
#include "source_pcap.h"

static const struct source_ops *const drivers[CLASS_COUNT] = {
	[CLASS_INPUT] = &source_evdev_ops,
	[CLASS_BLOCK] = &source_block_ops,
	[CLASS_NETWORK] = &source_pcap_ops,
};

const struct source_ops *source_driver(enum src_class cls)
{
	return drivers[cls];
}

/* A class is wanted unless its mode is disabled and no override enables an instance. */
static bool class_wanted(const struct config *cfg, enum src_class cls)
{
	const struct class_policy *cp = &cfg->policy[cls];

	if (cp->rule.mode != MODE_DISABLED)
		return true;
	for (size_t i = 0; i < cp->n_overrides; i++)
		if ((cp->overrides[i].set & RULE_SET_MODE) &&
		    cp->overrides[i].rule.mode != MODE_DISABLED)
			return true;
	return false;
}

static int start_one(struct source *src)
{
	const struct source_ops *ops = src->ops;

	if (ops->missing) {
		log_warn("%s source: not started: %s", ops->name, ops->missing);
		return 0;
	}
	if (ops->start(src) < 0)
		return -1;
	src->running = true;
	return 0;
}

int sources_start(struct source *srcs, struct event_base *base, const struct config *cfg)
{
	for (int c = 0; c < CLASS_COUNT; c++) {
		struct source *src = &srcs[c];

		src->ops = drivers[c];
		src->base = base;
		src->cfg = cfg;
		src->priv = NULL;
		src->running = false;
		if (!class_wanted(cfg, (enum src_class)c)) {
			log_info("%s source: disabled by policy", src->ops->name);
			continue;
		}
		if (start_one(src) < 0)
			return -1;
	}
	return 0;
}

void sources_reload(struct source *srcs, const struct config *cfg)
{
	for (int c = 0; c < CLASS_COUNT; c++) {
		struct source *src = &srcs[c];
		bool was = class_wanted(src->cfg, (enum src_class)c);
		bool wanted = class_wanted(cfg, (enum src_class)c);

		src->cfg = cfg;
		if (src->running && !wanted) {
			src->ops->stop(src);
			src->running = false;
			log_info("%s source: stopped, now disabled by policy", src->ops->name);
		} else if (src->running) {
			src->ops->reload(src);
		} else if (wanted && (!src->ops->missing || !was)) {
			/* A stub newly wanted says once more what is missing. */
			if (start_one(src) < 0)
				log_warn("%s source: could not be started after reload",
					 src->ops->name);
		}
	}
}

void sources_stop(struct source *srcs)
{
	for (int c = CLASS_COUNT - 1; c >= 0; c--) {
		struct source *src = &srcs[c];

		if (src->running)
			src->ops->stop(src);
		src->running = false;
	}
}
