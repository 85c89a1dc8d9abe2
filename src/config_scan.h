/* config_scan: the file's text read again where libconfig's own error says too little. */
#ifndef ENTROPYD_CONFIG_SCAN_H
#define ENTROPYD_CONFIG_SCAN_H

#include <stdbool.h>
#include <stddef.h>

/* libconfig's "duplicate setting name" at `line` of `file` names neither the setting nor
 * where it was first given. The setting on that line given before in the same group: its
 * full key (at most size bytes: "feed.mode", "policy.network.instances[0].name") and the
 * line of its first. False if the file cannot be read or no such setting is on the line. */
bool config_scan_duplicate(const char *file, unsigned line, char *key, size_t size,
			   unsigned *first);

#endif
