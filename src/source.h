/* source: the driver interface every source class implements. Sources only produce
 * timestamped samples (pipeline_sample); they never decide credit. */
#ifndef ENTROPYD_SOURCE_H
#define ENTROPYD_SOURCE_H

#include <event2/event.h>

#include "config.h"
#include "sample.h"

struct source;

struct source_ops {
	const char *name; /* the class name used in the config: "input", "block", "network" */
	enum src_class cls;
	/* NULL when the driver is built in; otherwise says what is missing, and the start
	 * function is never called. */
	const char *missing;
	/* Open what src->cfg asks for and register events on src->base. Returns -1 on a fatal
	 * start-up error (already logged); devices that cannot be opened are not fatal. */
	int (*start)(struct source *src);
	/* src->cfg was replaced by a new, valid config: open and close instances to match.
	 * Instances that stay keep their pipeline state. */
	void (*reload)(struct source *src);
	/* Close everything and detach every instance. */
	void (*stop)(struct source *src);
};

struct source {
	const struct source_ops *ops;
	struct event_base *base;
	const struct config *cfg;
	void *priv; /* the driver's own state */
	bool running;
};

/* All drivers, one per class, indexed by enum src_class. */
const struct source_ops *source_driver(enum src_class cls);

/* Start every class that is not disabled by policy. -1 if a start-up error is fatal. */
int sources_start(struct source *srcs, struct event_base *base, const struct config *cfg);
void sources_reload(struct source *srcs, const struct config *cfg);
void sources_stop(struct source *srcs);

#endif
