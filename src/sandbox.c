/* sandbox: the collector's system call filter (seccomp, libseccomp).
 *
 * The collector parses what the outside sends (packets, trace records, input frames, control
 * requests) and holds no capability. The filter limits what a memory bug there could turn
 * into: only the calls below, found with strace -f -c over the test suites (every source,
 * the control socket, reloads, recording) and listed by what needs them. Anything else
 * (execve, fork, ptrace, mount, bpf, perf_event_open, kernel modules...) kills the process:
 * SCMP_ACT_KILL_PROCESS rather than an error, since the suite covers the collector's paths
 * and a call outside them means something is wrong; the privileged process then sees the
 * socketpair close, exits, and systemd restarts the service. socket() is allowed for the
 * families the collector uses: AF_UNIX (the control socket, the privileged process, the
 * service manager), AF_NETLINK (rtnetlink, uevents), AF_INET and AF_INET6 (interface ioctls
 * of libpcap and the network source). Packet sockets come from the privileged process.
 *
 * ioctl() is allowed for the requests below only; any other fails with EPERM rather than
 * killing (a library may probe one on a path the suite does not take). TIOCSTI, say, would
 * push input into the terminal of whoever started entropyd by hand. libseccomp cannot give
 * one call both an argument-matching allow and a different action for the rest, so that
 * part is a filter of its own, whose default is EPERM and which allows the same calls as the
 * other (and seccomp(), to load the other under it); the kernel applies the stricter
 * verdict of the two, and the other kills on seccomp().
 *
 * The systemd unit filters too (SystemCallFilter=); this filter holds however entropyd is
 * started. */
#include "autoconf.h"

#include "sandbox.h"

#include <errno.h>
#include <linux/input.h>
#include <linux/perf_event.h>
#include <linux/sockios.h>
#include <seccomp.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

static const char *const allowed[] = {
	/* memory, the C library, the event loop, time, signals */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "futex", "getrandom",
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time",
	"epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
	"epoll_pwait2", "poll", "ppoll", "select", "pselect6", "eventfd2", "timerfd_create",
	"timerfd_settime", "pipe", "pipe2", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
	"sigaltstack", "restart_syscall", "exit", "exit_group", "getpid", "gettid", "getppid",
	"getuid", "geteuid", "getgid", "getegid", "getgroups", "uname", "sysinfo",
	"sched_yield", "getrlimit", "setrlimit", "rseq", "set_robust_list", "getrusage",
	/* sched_getaffinity, prlimit64 and tgkill: on this process only (allow_calls) */
	/* files: the configuration, sysfs and procfs, input nodes, relay files, recordings, the
	 * runtime directory and the blktrace state file */
	"read", "readv", "pread64", "write", "writev", "pwrite64", "lseek", "close", "dup",
	"dup2", "dup3", "fcntl", "open", "openat", "stat", "fstat", "lstat",
	"newfstatat", "statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "getdents64", "getcwd", "mkdir", "mkdirat", "unlink",
	"unlinkat", "rename", "renameat", "renameat2", "chmod", "fchmod", "fchmodat", "chown",
	"fchown", "fchownat", "lchown", "umask", "flock", "ftruncate", "fsync", "fdatasync",
	"inotify_init1", "inotify_add_watch", "inotify_rm_watch",
	/* sockets (socket() itself below) */
	"socketpair", "bind", "listen", "accept", "accept4", "connect", "getsockname",
	"getpeername", "getsockopt", "setsockopt", "sendto", "sendmsg", "sendmmsg", "recvfrom",
	"recvmsg", "recvmmsg", "shutdown",
};

#ifdef HAVE_SANITIZERS
/* A build for the test suite with ASan and UBSan: LeakSanitizer's check at exit runs in a
 * clone of the process that stops its threads with ptrace, and reads /proc/self/task. Not
 * in an ordinary build. */
static const char *const sanitizers[] = {"prctl", "clone", "ptrace", "wait4", "getdents"};
#endif

static const int families[] = {AF_UNIX, AF_NETLINK, AF_INET, AF_INET6};

static const unsigned long ioctls[] = {
	FIONREAD, /* libevent: what a socket holds */
	TCGETS,   /* isatty() (glibc 2.42 and later ask TCGETS2: refused, so isatty() says no) */
	/* the block tracepoint's events (opened by the privileged process) */
	PERF_EVENT_IOC_ENABLE, PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_SET_OUTPUT,
	PERF_EVENT_IOC_SET_FILTER,
	/* evdev: the clock; its getters are allowed by direction and type (below) */
	EVIOCSCLOCKID,
	/* interfaces, for libpcap and the network source (ethtool's commands that set anything
	 * need CAP_NET_ADMIN, which the collector has not) */
	SIOCGIFINDEX, SIOCGIFNAME, SIOCGIFFLAGS, SIOCGIFHWADDR, SIOCGIFMTU, SIOCETHTOOL,
	SIOCGHWTSTAMP,
};
/* Every evdev request that only reads: _IOC_READ and type 'E' (in 32 bits, unsigned). */
#define EVDEV_GET_MASK                                                                     \
	(((uint32_t)_IOC_DIRMASK << _IOC_DIRSHIFT) | ((uint32_t)_IOC_TYPEMASK << _IOC_TYPESHIFT))
#define EVDEV_GET ((uint32_t)_IOC(_IOC_READ, 'E', 0, 0))

/* Allow the calls of allowed[] (and the sanitizers') in ctx, and those that take a pid for
 * this process only: 0 (itself) or its own pid; a signal (tgkill, as raise() and abort()
 * make it) only to itself. Another pid: refused as any call outside the list. */
static int allow_calls(scmp_filter_ctx ctx)
{
	const scmp_datum_t self = (scmp_datum_t)getpid();
	int rc = 0;

	rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, SCMP_A0(SCMP_CMP_EQ, self));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1,
				      SCMP_A0(SCMP_CMP_EQ, 0));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 1,
				      SCMP_A0(SCMP_CMP_EQ, self));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_getaffinity), 1,
				      SCMP_A0(SCMP_CMP_EQ, 0));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_getaffinity), 1,
				      SCMP_A0(SCMP_CMP_EQ, self));

	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(allowed); i++) {
		int nr = seccomp_syscall_resolve_name(allowed[i]);

		if (nr == __NR_SCMP_ERROR)
			continue; /* not a call of this architecture (open on arm64, say) */
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
#ifdef HAVE_SANITIZERS
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(sanitizers); i++) {
		int nr = seccomp_syscall_resolve_name(sanitizers[i]);

		if (nr != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
#endif
	return rc;
}

/* The first filter: allowed[], socket() for families[], ioctl() whatever its request;
 * anything else kills the process. */
static int calls_filter(scmp_filter_ctx ctx)
{
	int rc = allow_calls(ctx);

	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(families); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i]));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 0);
	return rc;
}

/* The second: the same calls (socket() left to the first), ioctl() for ioctls[] and the
 * evdev getters; anything else fails with EPERM. The request is an unsigned int to the
 * kernel, whatever the caller's upper 32 bits. */
static int ioctl_filter(scmp_filter_ctx ctx)
{
	int rc = allow_calls(ctx);

	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 0);
	/* Loaded first: the other filter is loaded under it. */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 0);
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(ioctls); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					      (scmp_datum_t)(ioctls[i] & 0xffffffffUL)));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, (scmp_datum_t)EVDEV_GET_MASK,
					      (scmp_datum_t)EVDEV_GET));
	return rc;
}

static int load(uint32_t def, int (*rules)(scmp_filter_ctx))
{
	scmp_filter_ctx ctx = seccomp_init(def);
	int rc = ctx ? 0 : -ENOMEM;

	/* A binary tree over the call numbers, not a list of a hundred comparisons: every call
	 * the collector makes (a read of a ring, a packet batch) goes through the filter. */
	if (rc == 0)
		(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	/* NoNewPrivs is set already (privsep.c); prctl() would not pass the first filter. */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	if (rc == 0)
		rc = rules(ctx);
	if (rc == 0)
		rc = seccomp_load(ctx);
	if (ctx)
		seccomp_release(ctx);
	return rc;
}

int sandbox_collector(void)
{
	int rc;

	/* valgrind runs in the process, with calls of its own, and cannot run filters: the
	 * memory check of the test suite (t_ctl) runs without one, and says so. */
	if (RUNNING_ON_VALGRIND) {
		log_notice("running under valgrind: the collector has no system call filter");
		return 0;
	}
	rc = load(SCMP_ACT_ERRNO(EPERM), ioctl_filter);
	if (rc == 0)
		rc = load(SCMP_ACT_KILL_PROCESS, calls_filter);
	if (rc < 0) {
		log_err("cannot install the collector's system call filter: %s", strerror(-rc));
		return -1;
	}
	return 0;
}
