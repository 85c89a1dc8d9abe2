/* sandbox: the collector's system call filter (seccomp, libseccomp). */
#ifndef ENTROPYD_SANDBOX_H
#define ENTROPYD_SANDBOX_H

/* Allow this process only the system calls the collector makes; any other kills it (the
 * privileged process then sees it go and exits, and the service manager restarts both).
 * ioctl() only for the requests it makes; any other fails with EPERM. Needs no_new_privs
 * set. 0, or -1 (logged). */
int sandbox_collector(void);

#endif
