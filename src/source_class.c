/* source_class: the table of the classes' descriptions, and what is read through it. */
#include "autoconf.h"

#include "source_class.h"

#include <string.h>

const struct source_class *const source_classes[CLASS_COUNT] = {
#define SRC_CLASS_ENTRY(id, name, driver) [CLASS_##id] = &class_##name,
	SRC_CLASSES(SRC_CLASS_ENTRY)
#undef SRC_CLASS_ENTRY
};

const char *class_name(enum src_class cls)
{
	return (unsigned)cls < CLASS_COUNT ? source_classes[cls]->name : NULL;
}

int class_from_name(const char *name)
{
	int c;

	for (c = 0; c < CLASS_COUNT; c++)
		if (name && strcmp(name, source_classes[c]->name) == 0)
			return c;
	return -1;
}

long class_quantum_ns(const struct config *cfg, enum src_class cls)
{
	return *(const long *)((const char *)cfg + source_classes[cls]->quantum_ns);
}

double class_estimate_interval(const struct config *cfg, enum src_class cls)
{
	return *(const double *)((const char *)cfg + source_classes[cls]->estimate_interval);
}

double class_health_retry(const struct config *cfg, enum src_class cls)
{
	return *(const double *)((const char *)cfg + source_classes[cls]->health_retry);
}

const char *class_backend(const struct config *cfg, enum src_class cls)
{
	return (unsigned)cls < CLASS_COUNT ? source_classes[cls]->backend(cfg) : "unknown";
}
