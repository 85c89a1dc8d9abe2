/* priv_sandbox: the collector's system call filter (seccomp, libseccomp) and Landlock. */
#ifndef ENTROPYD_PRIV_SANDBOX_H
#define ENTROPYD_PRIV_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

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

/* Before the collector's fork, in the privileged process (with CAP_SYS_ADMIN): its next
 * child is born in a new PID namespace, as process 1 there. The descriptor of the old one
 * for sandbox_pidns_end(), or -1 (no namespace; the collector says why). */
int sandbox_pidns_begin(void);

/* After the fork, in both: the parent's later children are born in its own namespace
 * again. fd from sandbox_pidns_begin(). */
void sandbox_pidns_end(int fd, bool child);

#define SANDBOX_MAX_PATHS 16

/* What the collector keeps of the file system: each path bound (recursively) at the same
 * place; read-only unless writable; flags: more MS_NOSUID, MS_NODEV, MS_NOEXEC. A path
 * that does not exist is left out. */
struct sandbox_view {
	struct {
		const char *path;
		bool writable;
		unsigned long flags;
	} paths[SANDBOX_MAX_PATHS];
	size_t n;
};

/* In the collector, while it still has CAP_SYS_ADMIN: a mount namespace of its own whose
 * root is an empty read-only tmpfs with only v's paths and a read-only /proc of its PID
 * namespace. Where namespaces cannot be made (no CAP_SYS_ADMIN, a container or service
 * manager that forbids them, valgrind), a warning says what the collector still sees, and
 * 0. -1 (logged) only once the old root is gone and the new one cannot be sealed. */
int sandbox_namespaces(const struct sandbox_view *v);

#endif
