/* source_classes: the source classes and what a source hands to the pipeline. */
#ifndef ENTROPYD_SOURCE_CLASSES_H
#define ENTROPYD_SOURCE_CLASSES_H

/* Every source class, in the order of the configuration file. X(ID, name, module) gives
 * CLASS_ID, named "name" in the configuration and the status, which is described
 * (source_class.h) by <module>_class in <module>_class.c and run (source.h) by
 * <module>_source_ops in <module>.c. A new class is a line here, those two files, and its
 * part of the man pages. */
#define SRC_CLASSES(X)                                                                         \
	X(INPUT, input, input)                                                                 \
	X(BLOCK, block, block)                                                                 \
	X(NETWORK, network, net)

enum src_class {
#define SRC_CLASS_ENUM(id, name, module) CLASS_##id,
	SRC_CLASSES(SRC_CLASS_ENUM)
#undef SRC_CLASS_ENUM
	CLASS_COUNT
};

/* "input", "block", "network"; NULL for an out-of-range value. */
const char *source_class_name(enum src_class cls);
/* -1 if name is not a class name. */
int source_class_from_name(const char *name);

#endif
