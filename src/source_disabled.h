/* source_disabled: the classes and instances that policy disables. They are never opened, so the
 * pipeline has no instance of them; status and sources list them from here. */
#ifndef ENTROPYD_SOURCE_DISABLED_H
#define ENTROPYD_SOURCE_DISABLED_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "feed_pipeline.h"
#include "source_classes.h"

/* The name shown for a whole class that policy disables (no instance of it is looked for). */
#define DISABLED_CLASS_NAME "*"

/* Class cls's instance `name` (NULL: the whole class) is disabled by policy now, or no
 * longer (on = false; also when it is gone). Listed in the order they were first set. */
void source_disabled_set(enum src_class cls, const char *name, bool on);
void source_disabled_forget_all(void);

/* The i-th, as a row of status: its rule under cfg, state "disabled by policy", no events,
 * no estimate, reason PIPELINE_DISABLED, weight 0. False past the last. The strings stay
 * valid until the next source_disabled_set. */
bool source_disabled_info(size_t i, const struct config *cfg, struct inst_info *out);

#endif
