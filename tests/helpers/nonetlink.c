/* nonetlink: run a command where socket(AF_NETLINK, ...) fails with EAFNOSUPPORT, as it does
 * under a unit whose RestrictAddressFamilies= leaves AF_NETLINK out; every other call is
 * allowed. A seccomp filter (libseccomp), inherited across the exec.
 *
 *   nonetlink COMMAND [ARG...]
 *
 * Exits 2 on a usage error, 3 if the filter cannot be installed or does not hold (the test
 * says why), else COMMAND's status; 127 if COMMAND cannot be run. */
#include "autoconf.h"

#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	int rc, fd;

	if (argc < 2) {
		fputs("usage: nonetlink COMMAND [ARG...]\n", stderr);
		return 2;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		fputs("nonetlink: seccomp_init failed\n", stderr);
		return 3;
	}
	/* On architectures that multiplex socket(2) through socketcall(2), libseccomp filters
	 * both. */
	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
			      SCMP_A0(SCMP_CMP_EQ, AF_NETLINK, 0));
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	if (rc < 0) {
		fprintf(stderr, "nonetlink: cannot install the seccomp filter: %s\n", strerror(-rc));
		return 3;
	}
	/* The filter must hold, or the test would pass for the wrong reason. */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd >= 0 || errno != EAFNOSUPPORT) {
		fprintf(stderr, "nonetlink: socket(AF_NETLINK) still %s\n",
			fd >= 0 ? "succeeds" : strerror(errno));
		return 3;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "nonetlink: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
