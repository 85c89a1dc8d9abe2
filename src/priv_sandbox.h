/* priv_sandbox: the collector's system call filter (seccomp, libseccomp) and Landlock. */
#ifndef ENTROPYD_PRIV_SANDBOX_H
#define ENTROPYD_PRIV_SANDBOX_H

/* Allow this process only the system calls the collector makes; any other kills it (the
 * privileged process then sees it go and exits, and the service manager restarts both).
 * ioctl() only for the requests it makes; any other fails with EPERM. Needs no_new_privs
 * set. 0, or -1 (logged). */
int sandbox_collector(void);

/* Landlock, where the kernel has it (else a note in the log and 0): nothing may be
 * written, made, removed or executed anywhere but files made or written beneath
 * writable_dir (NULL: nowhere); from ABI 4 no TCP; from ABI 6 no signal and no abstract
 * unix socket outside this process. Needs no_new_privs set; before sandbox_collector(),
 * whose filter refuses the Landlock calls. 0, or -1 (logged). */
int sandbox_landlock(const char *writable_dir);

#endif
