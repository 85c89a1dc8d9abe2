/* priv_start: the fork into the privileged process and the collector, and the collector's
 * lockdown (see priv_start.c). */
#ifndef ENTROPYD_PRIV_START_H
#define ENTROPYD_PRIV_START_H

#include "config.h"

/* Fork. The parent becomes the privileged process: it keeps CAP_SYS_ADMIN and CAP_NET_RAW
 * only, answers the collector's messages and passes signals on to it, until the collector
 * goes; then it returns 1 with the exit status in *status (the collector's own, or
 * EXIT_LOST if it broke the protocol or was killed). The child, the collector, returns 0 with
 * priv_active() true. -1 (logged) if the fork failed. rnd_fd: /dev/random, opened and
 * probed (or -1 in a dry run); the collector does not keep it. cfg: the configuration the
 * privileged process starts from (its own copy after the fork, freed by it; it re-reads
 * config_path on RELOAD). ready_fd: the start-up status pipe (entropyd.c), which only the
 * collector keeps. */
int priv_start(struct config *cfg, const char *config_path, int rnd_fd, int ready_fd,
	       int *status);

/* The collector, once everything that needs root's other powers is done: the bounding set
 * emptied (where CAP_SETPCAP allows), no supplementary groups, the uid and gid of the system
 * user cfg->collector.user (never uid 0: a user that is missing or root's is an error), no
 * capability in any other set, no new privileges, death with the privileged process (set
 * after the change of uid, which clears it); before all that, where it can, a mount
 * namespace whose root is empty and read-only but for the paths it still needs
 * (priv_sandbox_namespaces()), beside the PID namespace priv_start() gave it; Landlock where the
 * kernel has it (nothing written but beneath record_dir, NULL for nowhere; no signal outside
 * itself), then the system call filter. The walls up are logged (priv_sandbox_walls_log()). 0, or
 * -1 (logged). */
int priv_start_lockdown(const struct config *cfg, const char *config_path);

#endif
