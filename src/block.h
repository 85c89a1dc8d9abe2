/* block: block-device I/O completions as a timing source, through the block
 * tracepoint (perf) or the blktrace API; one instance per disk. */
#ifndef ENTROPYD_BLOCK_H
#define ENTROPYD_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "block_backend.h"
#include "block_disks.h"
#include "config.h"
#include "source.h"

/* The "block" class driver. */
extern const struct source_ops block_source_ops;

/* The tracepoint backend's completions that perf counted and never wrote to a ring
 * (block_tp_unsampled) in *n; false where the class does not run the tracepoint. */
bool block_unsampled(const struct source *src, uint64_t *n);

#endif
