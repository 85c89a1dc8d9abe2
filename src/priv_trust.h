/* priv_trust: what root reads and makes on the collector's behalf, only where root alone can
 * change it. */
#ifndef ENTROPYD_PRIV_TRUST_H
#define ENTROPYD_PRIV_TRUST_H

#include <stdbool.h>
#include <stddef.h>

/* Is the configuration file path, and every file libconfig opens for its @include lines
 * (config_include.h), one only root can change: a regular file root owns that neither its
 * group nor others may write, in directories root owns that others may not write (or sticky
 * ones, such as /tmp)? As sshd's StrictModes: a file others can write would let them raise
 * the credit ceiling. An included file that does not exist needs only such directories (the
 * parser says it is missing). False with the file and the fix (chmod or chown) in why. */
bool priv_trust_config(const char *path, char *why, size_t size);

#endif
