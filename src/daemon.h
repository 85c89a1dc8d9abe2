/* daemon: the running entropyd — event loop, signals, reload, service manager. */
#ifndef ENTROPYD_DAEMON_H
#define ENTROPYD_DAEMON_H

#include <stdbool.h>

#include "config.h"

struct daemon_opts {
	const char *config_path;
	bool foreground;
	bool dry_run;
	int verbosity;
	int ready_fd; /* if >= 0, one status byte is written here once started or failed */
	const char *record_dir; /* --record: replaces record.dir, in every config loaded; or NULL */
	bool initramfs;          /* --initramfs: write the boot record (else read it) */
	const char *boot_record; /* its path (kernel_boot.h) */
};

/* Run until SIGTERM/SIGINT. Takes ownership of cfg. Returns an exit status. */
int daemon_run(const struct daemon_opts *opts, struct config *cfg);

#endif
