/* sample: the source classes and what a source hands to the pipeline. */
#ifndef ENTROPYD_SAMPLE_H
#define ENTROPYD_SAMPLE_H

enum src_class {
	CLASS_INPUT,
	CLASS_BLOCK,
	CLASS_NETWORK,
	CLASS_COUNT
};

/* "input", "block", "network"; NULL for an out-of-range value. */
const char *class_name(enum src_class cls);
/* -1 if name is not a class name. */
int class_from_name(const char *name);

#endif
