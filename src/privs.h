/* privs: once started, the daemon keeps only the capabilities it still needs. */
#ifndef ENTROPYD_PRIVS_H
#define ENTROPYD_PRIVS_H

/* Drop every capability but CAP_SYS_ADMIN and CAP_NET_RAW (of those the process has) from
 * the effective, permitted, inheritable and ambient sets, and from the bounding set where
 * the process may change it. 0, or -1 (said in the log) if the kernel refused. */
int privs_drop(void);

#endif
