/* source_table: every source class, each started, reloaded and stopped through the core. */
#ifndef ENTROPYD_SOURCE_TABLE_H
#define ENTROPYD_SOURCE_TABLE_H

#include "source.h"

/* All drivers, one per class, indexed by enum src_class. */
const struct source_ops *source_table_driver(enum src_class cls);

/* Start every class that is not disabled by policy. -1 if a start-up error is fatal. */
int source_table_start(struct source *srcs, struct event_base *base, const struct config *cfg);
void source_table_reload(struct source *srcs, const struct config *cfg);
void source_table_stop(struct source *srcs);
/* Each running class's own account, logged at prio. */
void source_table_summary(struct source *srcs, int prio);

/* How many instances are open now; the others that could not be opened (waiting or
 * retrying, or refused by the configuration) into not_open as "class/name (state), ...",
 * cut short with "..." if it does not fit. Instances disabled by policy are not counted. */
size_t source_table_open(const struct source *srcs, char *not_open, size_t size);

#endif
