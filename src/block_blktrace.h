/* block_blktrace: the blktrace API as a completion source: BLKTRACESETUP (completions only)
 * and BLKTRACESTART per disk, the per-CPU relay files under debugfs, and BLKTRACESTOP +
 * BLKTRACETEARDOWN on every way out, including after a crash of the previous instance. */
#ifndef ENTROPYD_BLOCK_BLKTRACE_H
#define ENTROPYD_BLOCK_BLKTRACE_H

#include <event2/event.h>
#include <stdbool.h>
#include <stddef.h>

#include "block_backend.h"

struct blkt_backend;

/* Take the state file in rundir (created if need be), tear down the traces it lists, and
 * get ready to trace. Never fails: without a state file the backend still works, it is
 * just not crash-safe (and says so). */
struct blkt_backend *blkt_backend_new(struct event_base *base, const char *rundir,
				      block_samples_fn *fn, void *ctx);

/* Stop and tear down every trace, release the state file. */
void blkt_backend_free(struct blkt_backend *b);

/* Start tracing one whole disk. True if running; false if not, with a one-line state for
 * status in `state` ("EBUSY: ...", "EPERM: ...") and nothing of ours left on the disk. */
bool blkt_start(struct blkt_backend *b, const char *name, unsigned major, unsigned minor,
		char *state, size_t size);

/* Stop and tear down the trace on one disk (a no-op if it has none of ours). */
void blkt_stop(struct blkt_backend *b, unsigned major, unsigned minor);

#endif
