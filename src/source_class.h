/* source_class: what a source class is to the configuration, the pipeline and the control
 * socket, one description per class (class_*.c), none of which needs its driver. */
#ifndef ENTROPYD_SOURCE_CLASS_H
#define ENTROPYD_SOURCE_CLASS_H

#include <stddef.h>

#include "config.h"
#include "config_settings.h"
#include "source_classes.h"

/* ---- writing settings tables ---- */

#define CFG(field) offsetof(struct config, field)

/* The first key of each element of a list of instances. */
#define NAME_KEY(elem)                                                                         \
	{.key = "name", .type = SET_STRING, .offset = offsetof(elem, name),                     \
	 .flags = SF_NONEMPTY | SF_REQUIRED,                                                    \
	 .help = "instance name or fnmatch(3) glob; the first match wins"}

/* Needs est.h. */
#define QUANTUM_KEY(field)                                                                 \
	{.key = "quantum_ns", .type = SET_INT64, .offset = CFG(field), .min = 1, .max = 1e9,   \
	 .def_num = EST_QUANTUM_DEFAULT_NS, .unit = "ns", .help = "timing quantum of the symbols estimated"}

/* How often the SP 800-90B estimators look at the instance's symbols (est_online.c): a block
 * at most every `estimate_interval` seconds of event time, the costlier estimators 12 and 60
 * times as seldom. */
#define ESTIMATE_KEY(field, def)                                                           \
	{.key = "estimate_interval", .type = SET_FLOAT, .offset = CFG(field), .min = 1,        \
	 .max = 3600, .def_num = (def), .unit = "seconds",                                    \
	 .help = "event time between estimated blocks of 4096 symbols"}

/* The first wait before a permanently failed instance is re-qualified (est_health.h). */
#define HEALTH_RETRY_KEY(field)                                                            \
	{.key = "health_retry", .type = SET_FLOAT, .offset = CFG(field), .min = 60,            \
	 .max = 604800, .def_num = 3600, .unit = "seconds",                                   \
	 .help = "event time before a permanently failed instance is re-qualified"}

/* ---- lists of instances ----
 * policy.CLASS.instances and sources.network.instances are both lists of groups
 * ( { name = "GLOB"; ... }, ... ) whose first match by name wins and whose elements inherit
 * from their class what they do not give. One set of functions in config.c parses, checks,
 * prints and frees them all; a kind says what differs. */

struct inst_kind {
	const struct setting *tab; /* tab[0] is "name" */
	size_t size;               /* of one element */
	size_t set_off;            /* of its `unsigned set`: the set_bit of every key given */
	const char *what;          /* for -p's comment */
	const char *shape;         /* what an element looks like, for messages */
	/* Fill an element with what it inherits from `parent`, before its own keys. */
	void (*inherit)(void *el, const void *parent);
	/* Checks across keys, once its own are in; NULL if none. */
	void (*check)(struct settings_ctx *ctx, const config_setting_t *grp, const void *el,
		      const char *path);
};

/* ---- the classes ---- */

struct source_class {
	const char *name;         /* as in policy.NAME and sources.NAME */
	const char *policy_help;  /* one line each, for the groups */
	const char *sources_help;
	/* The keys of sources.NAME, at offsets into struct config. */
	const struct setting *settings;
	/* What one instance is, for "matches no ..." ("input device", "disk", "interface"). */
	const char *instance_noun;
	/* sources.NAME.instances, if the class has that list (kind NULL if not): the offsets
	 * in struct config of the array (a pointer), of its length (a size_t) and of what its
	 * elements inherit. The settings name it too, as a SET_GROUPLIST key. */
	struct {
		const struct inst_kind *kind;
		size_t array, count, parent;
	} instances;
	/* Checks across the keys of sources.NAME once they are in; NULL if none. grp: the
	 * group, NULL if the file has none; path: "sources.NAME". */
	void (*check)(struct settings_ctx *ctx, const config_setting_t *grp,
		      const struct config *cfg, const char *path);
	/* policy.NAME's defaults; scale has one default for every class. */
	struct {
		enum policy_mode mode;
		double cap_bits_per_event;
		double cap_bits_per_second;
	} policy;
	/* The offsets in struct config of the estimator's parameters, long quantum_ns and
	 * double estimate_interval, and of the health tests' double health_retry. */
	size_t quantum_ns, estimate_interval, health_retry;
	/* Events closer than this to the one before are one batch (est.h: est_merged()): the
	 * handling of one interrupt, measured, not the device's timing. 0: the quantum alone. */
	unsigned long batch_ns;
	/* What the status calls the instances' backend. */
	const char *(*backend)(const struct config *cfg);
};

#define SRC_CLASS_DECL(id, name, module) extern const struct source_class module##_class;
SRC_CLASSES(SRC_CLASS_DECL)
#undef SRC_CLASS_DECL

/* Indexed by enum src_class. */
extern const struct source_class *const source_class_all[CLASS_COUNT];

/* sources.NAME.quantum_ns and .estimate_interval of class cls. */
int64_t source_class_quantum_ns(const struct config *cfg, enum src_class cls);
double source_class_estimate_interval(const struct config *cfg, enum src_class cls);
/* sources.NAME.health_retry, seconds. */
double source_class_health_retry(const struct config *cfg, enum src_class cls);

/* The backend its instances use; "unknown" for an out-of-range class. */
const char *source_class_backend(const struct config *cfg, enum src_class cls);

#endif
