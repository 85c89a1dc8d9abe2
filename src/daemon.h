/* daemon: the running entropyd — event loop, signals, reload, service manager. */
#ifndef ENTROPYD_DAEMON_H
#define ENTROPYD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/* Exit statuses, documented in entropyd(8). */
enum {
	EXIT_OK = 0,
	EXIT_CONFIG = 1,  /* the configuration is invalid */
	EXIT_USAGE = 2,   /* bad command line */
	EXIT_STARTUP = 3, /* could not start: sink, permissions, event loop */
};

struct daemon_opts {
	const char *config_path;
	bool foreground;
	bool dry_run;
	int verbosity;
	int ready_fd; /* if >= 0, one status byte is written here once started or failed */
	const char *record_dir; /* --record: replaces record.dir, in every config loaded; or NULL */
};

struct daemon;

/* What the daemon as a whole is doing, for status reports (counts, never timings). */
struct daemon_status {
	uint64_t uptime_ns;
	const char *feed_mode;  /* the configured mode */
	const char *feed_phase; /* what it does now: boot, mix, watermark, always */
	const char *sink;       /* "kernel" or "dry-run" */
	unsigned kernel_major, kernel_minor;
	bool crng_ready;
	bool credit_counts;      /* does the kernel still count credit? */
	int entropy_avail;       /* -1 if unreadable */
	double ready_after_s;    /* start to CRNG ready if entropyd saw it; < 0 otherwise */
	uint64_t feeds, fed_bytes, fed_credit_bits, reseeds, feed_errors;
	uint64_t reloads, reload_failures;
};

void daemon_get_status(const struct daemon *d, struct daemon_status *out);

/* Re-read the configuration. On any error the running one stays, errs lists every error
 * (the caller frees it) and -1 is returned. */
int daemon_reload(struct daemon *d, struct config_errors *errs);

/* Run until SIGTERM/SIGINT. Takes ownership of cfg. Returns an exit status. */
int daemon_run(const struct daemon_opts *opts, struct config *cfg);

#endif
