/* feed_sink: where batches go — the kernel (RNDADDENTROPY) or the dry run (the log). */
#ifndef ENTROPYD_FEED_SINK_H
#define ENTROPYD_FEED_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "feed_pool.h"

enum sink_kind { SINK_KERNEL, SINK_DRY_RUN };

struct sink {
	enum sink_kind kind;
	int fd;
	char *device;
	/* totals */
	uint64_t feeds;        /* batches handed over */
	uint64_t mixed_bytes;  /* bytes handed over */
	uint64_t credited;     /* bits credited (kernel: what the ioctl was given, after the
				* privileged process's ceiling) */
	uint64_t reseeds;
	uint64_t errors;       /* ioctl failures */
};

/* Open the sink (before the privileged process is started: it keeps the descriptor). For the
 * kernel sink, a probe RNDADDENTROPY with zero credit finds out at start whether we may
 * credit at all: without CAP_SYS_ADMIN it fails with EPERM, and the one
 * clear message says so. Returns -1 on failure (logged). */
int feed_sink_open(struct sink *s, enum sink_kind kind, const char *device);
/* Hand over one batch. 0 on success; -1 on failure (logged, rate-limited). */
int feed_sink_feed(struct sink *s, const struct batch *b);
/* Ask the kernel to reseed its CRNG from the pool now (RNDRESEEDCRNG). */
int feed_sink_reseed(struct sink *s);
void feed_sink_close(struct sink *s);
const char *feed_sink_name(const struct sink *s);

#endif
