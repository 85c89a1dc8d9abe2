/* source_block: block-device I/O completions as a timing source, through the block
 * tracepoint (perf) or the blktrace API; one instance per disk. */
#ifndef ENTROPYD_SOURCE_BLOCK_H
#define ENTROPYD_SOURCE_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "block_backend.h"
#include "block_disks.h"
#include "config.h"
#include "source.h"

/* The "block" class driver. */
extern const struct source_ops source_block_ops;

/* The configured pattern (name or glob) that selects NAME, or NULL. "auto" in the list
 * means block_auto_disk(); "/dev/" before a name is ignored. */
const char *block_selects(const struct strlist *devices, const char *name,
			  const struct block_disk_info *info);

#endif
