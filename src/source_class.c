/* source_class: the table of the classes' descriptions, and what is read through it. */
#include "autoconf.h"

#include "source_class.h"

#include <string.h>

const struct source_class *const source_class_all[CLASS_COUNT] = {
#define SRC_CLASS_ENTRY(id, name, module) [CLASS_##id] = &module##_class,
	SRC_CLASSES(SRC_CLASS_ENTRY)
#undef SRC_CLASS_ENTRY
};

const char *source_class_name(enum src_class cls)
{
	return (unsigned)cls < CLASS_COUNT ? source_class_all[cls]->name : NULL;
}

int source_class_from_name(const char *name)
{
	int c;

	for (c = 0; c < CLASS_COUNT; c++)
		if (name && strcmp(name, source_class_all[c]->name) == 0)
			return c;
	return -1;
}

int64_t source_class_quantum_ns(const struct config *cfg, enum src_class cls)
{
	return *(const int64_t *)((const char *)cfg + source_class_all[cls]->quantum_ns);
}

double source_class_estimate_interval(const struct config *cfg, enum src_class cls)
{
	return *(const double *)((const char *)cfg + source_class_all[cls]->estimate_interval);
}

double source_class_health_retry(const struct config *cfg, enum src_class cls)
{
	return *(const double *)((const char *)cfg + source_class_all[cls]->health_retry);
}

const char *source_class_backend(const struct config *cfg, enum src_class cls)
{
	return (unsigned)cls < CLASS_COUNT ? source_class_all[cls]->backend(cfg) : "unknown";
}
