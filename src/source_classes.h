/* source_classes: the source classes and what a source hands to the pipeline. */
#ifndef ENTROPYD_SOURCE_CLASSES_H
#define ENTROPYD_SOURCE_CLASSES_H

/* Every source class, in the order of the configuration file. X(ID, name, driver) gives
 * CLASS_ID, which is described (source_class.h) by class_<name> in class_<name>.c and run
 * (source.h) by source_<driver>_ops in source_<driver>.c. A new class is a line here, those
 * two files, and its part of the man pages. */
#define SRC_CLASSES(X)                                                                         \
	X(INPUT, input, evdev)                                                                 \
	X(BLOCK, block, block)                                                                 \
	X(NETWORK, network, pcap)

enum src_class {
#define SRC_CLASS_ENUM(id, name, driver) CLASS_##id,
	SRC_CLASSES(SRC_CLASS_ENUM)
#undef SRC_CLASS_ENUM
	CLASS_COUNT
};

/* "input", "block", "network"; NULL for an out-of-range value. */
const char *class_name(enum src_class cls);
/* -1 if name is not a class name. */
int class_from_name(const char *name);

#endif
