/* privs: once started, each process keeps only the capabilities it still needs. */
#ifndef ENTROPYD_PRIVS_H
#define ENTROPYD_PRIVS_H

#include <stdbool.h>

/* Drop every capability but CAP_SYS_ADMIN and CAP_NET_RAW (of those the process has) from
 * the effective, permitted, inheritable and ambient sets, and from the bounding set where
 * the process may change it. 0, or -1 (said in the log) if the kernel refused. */
int privs_drop(void);

/* Drop every capability from the effective, permitted, inheritable and ambient sets, and
 * from the bounding set if CAP_SETPCAP allows (then *bounding is set). 0, or -1 (logged). */
int privs_drop_all(bool *bounding);

#endif
