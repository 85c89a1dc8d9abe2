/* source_names: the names and globs of the configuration that pick a class's instances, and
 * whether each has picked any. One that picks none is warned about once after a start or a
 * reload, at the first rescan that could look, however many rescans follow; entropyd -n
 * checks them against what the host has now. */
#ifndef ENTROPYD_SOURCE_NAMES_H
#define ENTROPYD_SOURCE_NAMES_H

#include <stddef.h>
#include <stdio.h>

#include "config.h"
#include "source_classes.h"

struct source_names;

/* Every name of class cls's config that picks instances: policy.CLASS.instances[].name,
 * sources.CLASS.instances[].name, and the lists flagged SF_PICKS or SF_PICKS_ANY (but
 * "auto"). None has matched yet. */
struct source_names *source_names_new(const struct config *cfg, enum src_class cls);
void source_names_free(struct source_names *sn);

/* One instance there now: its own name first, then any other the driver matches
 * SF_PICKS_ANY lists against (a device's node path, its device name, its kind). */
void source_names_saw(struct source_names *sn, const char *const *names, size_t n);

/* Each name that has matched nothing since source_names_new, and was not said yet, said:
 * "CLASS: KEY \"NAME\" matches no NOUN WHEN" (WHEN: "(yet)", say), to out if not NULL
 * (prefixed "warning: "), else to the log as a warning. Returns how many match nothing. */
size_t source_names_report(struct source_names *sn, const char *when, FILE *out);

/* The i-th name that chooses what is read (a source list, not an override nor an exclude)
 * and has matched nothing: its pattern and its key. False past the last. */
bool source_names_unmatched(const struct source_names *sn, size_t i, const char **pattern,
			    const char **key);

/* entropyd -n: every class that runs under cfg, its names against what the host shows now
 * without opening anything (input nodes in sources.input.watch and their device names in
 * sysfs, /sys/block, the interfaces), warnings to out. Returns how many match nothing. */
size_t source_names_check_host(const struct config *cfg, FILE *out);

#endif
