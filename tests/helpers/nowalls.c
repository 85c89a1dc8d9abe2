/* nowalls: run a command on a host that offers fewer walls, as a container or an older
 * kernel does; every call it does not name is allowed. A seccomp filter (libseccomp),
 * inherited across the exec and by every child, so the collector meets it too.
 *
 *   nowalls [-l] [-n] [-s] COMMAND [ARG...]
 *     -l  no Landlock: landlock_create_ruleset() fails with ENOSYS, as in a kernel without it
 *     -n  namespaces refused: unshare() of a mount or PID namespace fails with EPERM, as in
 *         a container or under RestrictNamespaces=
 *     -s  no mount_setattr() (ENOSYS), as below Linux 5.12: read-only binds are not recursive
 *
 * Exits 2 on a usage error, 3 if the filter cannot be installed or does not hold (the test
 * says why), else COMMAND's status; 127 if COMMAND cannot be run. */
#include "autoconf.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

static int usage(void)
{
	fputs("usage: nowalls [-l] [-n] [-s] COMMAND [ARG...]\n", stderr);
	return 2;
}

/* Does the call fail with want, as the filter says it must? */
static bool holds(long rc, int want, const char *what)
{
	if (rc >= 0 || errno != want) {
		fprintf(stderr, "nowalls: %s still %s\n", what, rc >= 0 ? "succeeds" : strerror(errno));
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	bool landlock = false, ns = false, setattr = false;
	scmp_filter_ctx ctx;
	int c, rc = 0;

	while ((c = getopt(argc, argv, "+lns")) != -1) {
		switch (c) {
		case 'l': landlock = true; break;
		case 'n': ns = true; break;
		case 's': setattr = true; break;
		default: return usage();
		}
	}
	if (optind >= argc || !(landlock || ns || setattr))
		return usage();
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		fputs("nowalls: seccomp_init failed\n", stderr);
		return 3;
	}
	/* As root (a service manager's container, not a user's), no no_new_privs: the daemon
	 * under it is started as it would be there. */
	if (geteuid() == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0 && landlock)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), __NR_landlock_create_ruleset, 0);
	if (rc == 0 && ns)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWNS, CLONE_NEWNS));
	if (rc == 0 && ns)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(unshare), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWPID, CLONE_NEWPID));
	if (rc == 0 && setattr)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), __NR_mount_setattr, 0);
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0) {
		fprintf(stderr, "nowalls: cannot install the seccomp filter: %s\n", strerror(-rc));
		return 3;
	}
	/* The filter must hold, or the test would pass for the wrong reason. Each probe fails
	 * before it could change anything. */
	if ((landlock && !holds(syscall(__NR_landlock_create_ruleset, NULL, 0, 1), ENOSYS,
				"landlock_create_ruleset()")) ||
	    (ns && !holds(unshare(CLONE_NEWNS), EPERM, "unshare(CLONE_NEWNS)")) ||
	    (ns && !holds(unshare(CLONE_NEWPID), EPERM, "unshare(CLONE_NEWPID)")) ||
	    (setattr && !holds(syscall(__NR_mount_setattr, -1, "", 0, NULL, 0), ENOSYS,
			       "mount_setattr()")))
		return 3;
	execvp(argv[optind], argv + optind);
	fprintf(stderr, "nowalls: %s: %s\n", argv[optind], strerror(errno));
	return 127;
}
