/* ctl: the daemon's control socket — Varlink (ctl_proto.h) over a unix stream socket, served
 * from the event loop without ever blocking on a client. */
#ifndef ENTROPYD_CTL_H
#define ENTROPYD_CTL_H

#include <event2/event.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "kernel_boot.h"

struct ctl;

/* What the daemon as a whole is doing, for status reports (counts, never timings). */
struct ctl_status {
	uint64_t uptime_ns;
	const char *feed_mode;  /* the configured mode */
	const char *feed_phase; /* what it does now: boot, mix, watermark, always */
	const char *sink;       /* "kernel" or "dry-run" */
	unsigned kernel_major, kernel_minor;
	const char *kernel_semantics; /* "until-ready" or "depleting" (kernel_semantics_name) */
	const char *kernel_evidence;  /* what decided it: "poolsize", ... */
	const char *kernel_reason;    /* the semantics found and why, one line */
	bool crng_ready;
	bool credit_counts;      /* does the kernel still count credit? */
	int entropy_avail;       /* -1 if unreadable */
	double ready_after_s;    /* start to CRNG ready if entropyd saw it; < 0 otherwise */
	bool credit_until_ready; /* 5.18 and later: credit counts only until it is ready */
	double credited_before_ready; /* bits the sink credited before it became ready */
	uint64_t feeds, fed_bytes, fed_credit_bits, reseeds, feed_errors;
	uint64_t reloads, reload_failures;
	bool block_tracepoint;       /* the block class reads the tracepoint: */
	uint64_t block_unsampled;    /* completions perf counted and never wrote to a ring */
	const char *config;      /* the configuration file in force */
	const struct kboot *boot; /* what entropyd in the initramfs did at this boot; or NULL */
};

/* What the socket asks of the daemon that serves it, with the daemon's opaque arg. */
struct ctl_ops {
	void (*status)(void *arg, struct ctl_status *out);
	/* Re-read the configuration. On any error the running one stays, errs lists every
	 * error (the caller frees it) and -1 is returned. */
	int (*reload)(void *arg, struct config_errors *errs);
};

/* Connections served at once to users other than root; one more is told TooManyClients and
 * closed. Root's connections are counted apart, against a limit of their own, so that no
 * member of control.group can keep root (and a reload) out. */
#define CTL_MAX_CLIENTS 64
#define CTL_MAX_ROOT_CLIENTS 64
/* Connections one user other than root may hold at once: a single account cannot take every
 * slot the others share. */
#define CTL_MAX_CLIENTS_PER_USER 16

/* Create the socket cfg->control.socket names (its directory too, if missing) and serve it
 * on base. NULL on failure, which is a start-up error (already logged). */
struct ctl *ctl_start(struct event_base *base, const struct config *cfg,
		      const struct ctl_ops *ops, void *arg);

/* cfg replaced the running config. The timeout applies at once; a new socket path or group
 * only at restart (logged). NULL ctl: nothing to do. */
void ctl_reconfigure(struct ctl *ctl, const struct config *cfg);

/* Close every connection and the socket, and remove the socket file. NULL: nothing. */
void ctl_stop(struct ctl *ctl);

#endif
