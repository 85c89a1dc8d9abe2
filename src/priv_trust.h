/* priv_trust: what root reads and makes on the collector's behalf, only where root alone can
 * change it. */
#ifndef ENTROPYD_PRIV_TRUST_H
#define ENTROPYD_PRIV_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Is the configuration file path, and every file libconfig opens for its @include lines
 * (config_include.h), one only root can change: a regular file root owns that neither its
 * group nor others may write, in directories root owns that others may not write (or sticky
 * ones, such as /tmp)? As sshd's StrictModes: a file others can write would let them raise
 * the credit ceiling. An included file that does not exist needs only such directories (the
 * parser says it is missing). False with the file and the fix (chmod or chown) in why. */
bool priv_trust_config(const char *path, char *why, size_t size);

enum priv_trust_dir {
	TRUST_DIR_READY,     /* made for uid, or there already, uid's */
	TRUST_DIR_NOT_USERS, /* there already, another user's: the caller says to chown it */
	TRUST_DIR_MISSING,   /* cannot be made (why says why): nothing is recorded */
	TRUST_DIR_REFUSED,   /* others could replace it, or it is world-writable (why) */
};

/* The recording directory path, for the collector that will run as uid:gid: reached from "/"
 * through descriptors, never following a link (the directories above it as realpath() finds
 * them, path itself not a link), each directory above it trusted as for the configuration;
 * made with mode 0700 if missing and given to uid:gid through its descriptor. One already
 * there must not be writable by anyone. */
enum priv_trust_dir priv_trust_record_dir(const char *path, uid_t uid, gid_t gid, char *why,
					  size_t size);

#endif
