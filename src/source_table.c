/* source_table: the driver table, one per class, and starting, reloading and stopping every class
 * in order. */
#include "autoconf.h"

#include "source_table.h"

#include <stdio.h>
#include <string.h>

#include "config_policy.h"
#include "log.h"
#include "source_disabled.h"
#include "util.h"

#define SOURCE_DRIVER_DECL(id, name, module) extern const struct source_ops module##_source_ops;
SRC_CLASSES(SOURCE_DRIVER_DECL)
#undef SOURCE_DRIVER_DECL

static const struct source_ops *const drivers[CLASS_COUNT] = {
#define SOURCE_DRIVER_ENTRY(id, name, module) [CLASS_##id] = &module##_source_ops,
	SRC_CLASSES(SOURCE_DRIVER_ENTRY)
#undef SOURCE_DRIVER_ENTRY
};

const struct source_ops *source_table_driver(enum src_class cls)
{
	return drivers[cls];
}

static bool class_wanted(const struct config *cfg, enum src_class cls)
{
	return config_policy_class_runs(cfg, cls);
}

int source_table_start(struct source *srcs, struct event_base *base, const struct config *cfg)
{
	for (int c = 0; c < CLASS_COUNT; c++) {
		struct source *src = &srcs[c];

		memset(src, 0, sizeof(*src));
		src->ops = drivers[c];
		src->base = base;
		src->cfg = cfg;
		if (!class_wanted(cfg, (enum src_class)c)) {
			log_info("%s source: disabled by policy", src->ops->name);
			source_disabled_set((enum src_class)c, NULL, true);
			continue;
		}
		if (source_start(src, drivers[c], base, cfg) < 0)
			return -1;
	}
	return 0;
}

void source_table_reload(struct source *srcs, const struct config *cfg)
{
	for (int c = 0; c < CLASS_COUNT; c++) {
		struct source *src = &srcs[c];
		bool wanted = class_wanted(cfg, (enum src_class)c);

		src->cfg = cfg;
		source_disabled_set((enum src_class)c, NULL, !wanted);
		if (src->running && !wanted) {
			source_stop(src);
			log_info("%s source: stopped, now disabled by policy", src->ops->name);
		} else if (src->running) {
			source_reload(src, cfg);
		} else if (wanted) {
			if (source_start(src, drivers[c], src->base, cfg) < 0)
				log_warn("%s source: could not be started after reload (the "
					 "error is above); policy.%s.mode = \"disabled\" turns it "
					 "off", src->ops->name, src->ops->name);
		}
	}
}

void source_table_stop(struct source *srcs)
{
	for (int c = CLASS_COUNT - 1; c >= 0; c--)
		source_stop(&srcs[c]);
	source_disabled_forget_all();
}

void source_table_summary(struct source *srcs, int prio)
{
	for (int c = 0; c < CLASS_COUNT; c++)
		if (srcs[c].running && srcs[c].ops->summary)
			srcs[c].ops->summary(&srcs[c], prio);
}

size_t source_table_open(const struct source *srcs, char *not_open, size_t size)
{
	size_t n = 0, used = 0;

	if (size)
		not_open[0] = 0;
	for (int c = 0; c < CLASS_COUNT; c++) {
		SOURCE_FOREACH(si, &srcs[c]) {
			char name[96];
			int w;

			if (si->status == SRC_OPEN) {
				n++;
				continue;
			}
			/* Closed by the driver's rules is not a failure, unless it said why it
			 * could not be opened (an interface named that does not exist). */
			if (si->disabled || si->status == SRC_ENDED ||
			    (si->status == SRC_CLOSED && !si->error[0]))
				continue;
			if (used + 4 >= size)
				continue; /* "..." is there already */
			util_printable(name, sizeof(name), si->name);
			w = snprintf(not_open + used, size - used, "%s%s/%s (%s)", used ? ", " : "",
				     srcs[c].ops->name, name,
				     si->error[0]		  ? si->error
				     : si->state[0]		  ? si->state
				     : si->status == SRC_RETRY ? "retrying"
				     : si->status == SRC_WAIT  ? "waiting"
							       : "skipped");
			if (w < 0 || (size_t)w >= size - used) {
				/* cut at an entry's end, and say so */
				not_open[used] = 0;
				strlcopy(not_open + used, used ? ", ..." : "...", size - used);
				used = size;
				continue;
			}
			used += (size_t)w;
		}
	}
	return n;
}
