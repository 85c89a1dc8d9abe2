/* priv_serve: the privileged process's loop (see priv_serve.c). */
#ifndef ENTROPYD_PRIV_SERVE_H
#define ENTROPYD_PRIV_SERVE_H

#include <sys/types.h>

#include "config.h"

/* The privileged process's loop on sock, for priv_start and for tests: answers until the
 * peer goes or breaks the protocol, then tears down what it set up. cfg is its own
 * (freed on reload); child, if > 0, is sent the signals and reaped. Returns the exit
 * status. */
int priv_serve(int sock, struct config *cfg, const char *config_path, int rnd_fd, pid_t child);

#endif
