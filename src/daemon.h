/* daemon: the running entropyd — event loop, signals, reload, service manager. */
#ifndef ENTROPYD_DAEMON_H
#define ENTROPYD_DAEMON_H

#include <stdbool.h>

#include "config.h"

/* Exit statuses, documented in entropyd(8). */
enum {
	EXIT_OK = 0,
	EXIT_CONFIG = 1,  /* the configuration is invalid */
	EXIT_USAGE = 2,   /* bad command line */
	EXIT_STARTUP = 3, /* could not start: sink, permissions, event loop */
	EXIT_LOST = 4,    /* the other process (privileged or collector) went */
};

struct daemon_opts {
	const char *config_path;
	bool foreground;
	bool dry_run;
	int verbosity;
	int ready_fd; /* if >= 0, one status byte is written here once started or failed */
	const char *record_dir; /* --record: replaces record.dir, in every config loaded; or NULL */
};

/* Run until SIGTERM/SIGINT. Takes ownership of cfg. Returns an exit status. */
int daemon_run(const struct daemon_opts *opts, struct config *cfg);

#endif
