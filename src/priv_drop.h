/* priv_drop: once started, each process keeps only the capabilities it still needs. */
#ifndef ENTROPYD_PRIV_DROP_H
#define ENTROPYD_PRIV_DROP_H

#include <stdbool.h>
#include <sys/types.h>

/* Drop every capability but CAP_SYS_ADMIN and CAP_NET_RAW (of those the process has) from
 * the effective, permitted, inheritable and ambient sets, and from the bounding set where
 * the process may change it. 0, or -1 (said in the log) if the kernel refused. */
int priv_drop(void);

/* The ids of user; false if there is no such user (or it is root, which is no drop). */
bool priv_drop_lookup(const char *user, uid_t *uid, gid_t *gid);

/* Can user be the collector's: it exists, and neither its uid nor its group is root's?
 * Else false with the reason and the fix (how to create it, or collector.user) in why. */
bool priv_drop_collector_user(const char *user, uid_t *uid, gid_t *gid, char *why, size_t size);

/* The collector's credentials, once everything that needs root is open: the bounding set
 * emptied while CAP_SETPCAP still allows it (then *bounding is set), no supplementary
 * groups, the real, effective and saved ids of user (setresgid, then setresuid), and every
 * capability gone from the other four sets. Never uid 0: a user that cannot be the
 * collector's (priv_drop_collector_user) is an error. 0, or -1 (logged) if the user is not fit
 * or the kernel refused any step (the process must not go on). */
int priv_drop_collector(const char *user, bool *bounding);

#endif
