/* priv_sandbox: the collector's system call filter (seccomp, libseccomp) and Landlock. */
#ifndef ENTROPYD_PRIV_SANDBOX_H
#define ENTROPYD_PRIV_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

/* Allow this process only the system calls the collector makes; any other kills it (the
 * privileged process then sees it go and exits, and the service manager restarts both).
 * ioctl() only for the requests it makes; any other fails with EPERM. Needs no_new_privs
 * set. 0, or -1 (logged). */
int priv_sandbox_collector(void);

/* Whether the collector's filter names the call (by libseccomp's name, which it resolves
 * for the architecture it runs on; some with conditions on their arguments), for the tests
 * that check the list against the calls the collector was seen to make. */
bool priv_sandbox_call_listed(const char *name);

/* Landlock, where the kernel has it (else a note in the log and 0): nothing may be
 * written, made, removed or executed anywhere but files made or written beneath
 * writable_dir (NULL: nowhere); from ABI 4 no TCP; from ABI 6 no signal and no abstract
 * unix socket outside this process. Needs no_new_privs set; before priv_sandbox_collector(),
 * whose filter refuses the Landlock calls. 0, or -1 (logged). */
int priv_sandbox_landlock(const char *writable_dir);

/* Before the collector's fork, in the privileged process (with CAP_SYS_ADMIN): its next
 * child is born in a new PID namespace, as process 1 there. The descriptor of the old one
 * for priv_sandbox_pidns_end(), or -1 (no namespace; the collector says why). */
int priv_sandbox_pidns_begin(void);

/* After the fork, in both: the parent's later children are born in its own namespace
 * again. fd from priv_sandbox_pidns_begin(). */
void priv_sandbox_pidns_end(int fd, bool child);

/* The walls around the collector as they stand once it is locked down (in the collector;
 * shown by "entropyctl status" and logged at start). Each errno is 0 where the wall is up,
 * else why it is not. */
#define SANDBOX_MAX_MISSING 6
struct priv_sandbox_walls {
	char user[64];      /* the collector's user (never root) */
	unsigned uid, gid;
	bool bounding;      /* its bounding set emptied too */
	bool no_new_privs;
	int pidns_errno;    /* a PID namespace of its own */
	int mntns_errno;    /* a mount namespace of its own, root an empty read-only tmpfs */
	int ro_errno;       /* every mount beneath each path it keeps read-only (mount_setattr
			     * with AT_RECURSIVE; ENOSYS below Linux 5.12: the top mount only) */
	int landlock_abi;   /* 0: no Landlock */
	int landlock_errno; /* why not */
	bool seccomp;       /* its system call filter */
	/* A wall down that this host could have had up, with the reason: also a warning. */
	char missing[SANDBOX_MAX_MISSING][160];
	size_t n_missing;
};

/* The collector's walls, as far as they are built. */
const struct priv_sandbox_walls *priv_sandbox_walls(void);
/* Its user, once it has become it (priv.c). */
void priv_sandbox_walls_user(const char *user, unsigned uid, unsigned gid, bool bounding,
			bool no_new_privs);
/* Log the walls up in one line, at the end of the lockdown (notice; warning if one is
 * missing that this host allows). */
void priv_sandbox_walls_log(void);

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
int priv_sandbox_namespaces(const struct sandbox_view *v);

#endif
