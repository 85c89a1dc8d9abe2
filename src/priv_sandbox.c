/* priv_sandbox: the collector's system call filter (seccomp, libseccomp).
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

#include "priv_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/if_packet.h>
#include <linux/input.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <linux/sockios.h>
#include <mntent.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "log.h"
#include "util.h"

#ifdef HAVE_VALGRIND_VALGRIND_H
#include <valgrind/valgrind.h>
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/* ---- the walls, as they stand ---- */

static struct priv_sandbox_walls walls = {.pidns_errno = ENOSYS, .mntns_errno = ENOSYS,
				     .ro_errno = ENOSYS, .landlock_errno = ENOSYS};

const struct priv_sandbox_walls *priv_sandbox_walls(void)
{
	return &walls;
}

static void missing(const char *fmt, ...) PRINTF_LIKE(1, 2);
static void missing(const char *fmt, ...)
{
	va_list ap;

	if (walls.n_missing >= SANDBOX_MAX_MISSING)
		return;
	va_start(ap, fmt);
	vsnprintf(walls.missing[walls.n_missing++], sizeof(walls.missing[0]), fmt, ap);
	va_end(ap);
}

void priv_sandbox_walls_user(const char *user, unsigned uid, unsigned gid, bool bounding,
			bool no_new_privs)
{
	strlcopy(walls.user, user, sizeof(walls.user));
	walls.uid = uid;
	walls.gid = gid;
	walls.bounding = bounding;
	walls.no_new_privs = no_new_privs;
}

void priv_sandbox_walls_log(void)
{
	char landlock[32] = "no Landlock";

	if (walls.landlock_abi > 0)
		snprintf(landlock, sizeof(landlock), "Landlock ABI %d", walls.landlock_abi);
	log_msg(walls.n_missing ? LOG_WARNING : LOG_NOTICE,
		"collector: walls: user %s (%u:%u), %s PID namespace, %s, %s, %s, %s%s%s", walls.user,
		walls.uid, walls.gid, walls.pidns_errno ? "no" : "its own",
		walls.mntns_errno ? "no mount namespace (it sees the whole file system)"
				  : "its own mount namespace",
		walls.mntns_errno ? "no read-only view"
		: walls.ro_errno  ? "a read-only view (top mounts only)"
				  : "a read-only view (recursive)",
		landlock, walls.seccomp ? "system call filter" : "no system call filter",
		walls.n_missing ? "; fewer than this host allows: " : "",
		walls.n_missing ? walls.missing[0] : "");
	for (size_t i = 1; i < walls.n_missing; i++)
		log_warn("collector: walls: also %s", walls.missing[i]);
}

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
	/* sockets (socket(), bind(), setsockopt(), sendmsg() and sendmmsg() below) */
	"socketpair", "listen", "accept", "accept4", "connect", "getsockname",
	"getpeername", "getsockopt", "sendto", "recvfrom", "recvmsg", "recvmmsg", "shutdown",
	/* The same operations under the names the 32-bit ABIs (ARM EABI, i386) give them: calls
	 * on 32-bit offsets, ids and times have their own numbers there, and glibc builds with
	 * 64-bit time (_TIME_BITS=64) use the *_time64 ones. send and mmap2 were seen, the
	 * collector killed at its first send() (tests/data/syscalls/armhf.txt); the rest are
	 * the 32-bit twins of the calls above. On i386 libseccomp maps the socket calls above
	 * onto socketcall() itself, argument by argument, so that is not named here. */
	"mmap2", "_llseek", "fcntl64", "stat64", "lstat64", "fstat64", "fstatat64", "statfs64",
	"fstatfs64", "ftruncate64", "ugetrlimit", "getuid32", "geteuid32", "getgid32",
	"getegid32", "getgroups32", "chown32", "fchown32", "lchown32", "send", "recv",
	"sigreturn", "_newselect", "clock_gettime64", "clock_getres_time64",
	"clock_nanosleep_time64", "futex_time64", "ppoll_time64", "pselect6_time64",
	"timerfd_settime64", "recvmmsg_time64",
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
/* setsockopt(): every option of the levels below; of SOL_SOCKET and SOL_PACKET only the
 * options of sockopts[]. A packet socket's filter is the privileged process's
 * (priv_filter.c), so that it hears only what the configuration selects: not to be replaced,
 * removed or locked here (SO_ATTACH_FILTER, SO_ATTACH_BPF, SO_DETACH_FILTER, SO_LOCK_FILTER);
 * nor is an interface's membership or promiscuity to be changed (PACKET_ADD_MEMBERSHIP),
 * whole frames copied beside the ring (PACKET_COPY_THRESH), nor another capturer's fanout
 * group joined (PACKET_FANOUT). Refused with EPERM. So is sendmsg() (and sendmmsg()), the
 * only call that passes a descriptor on (SCM_RIGHTS), which the collector never does: what
 * it holds, it cannot hand to a process outside this filter. And so is bind(): a packet
 * socket comes bound to its interface (priv_socket.c answers libpcap's binds), the control
 * socket is bound before this filter is loaded, and netlink sockets join their groups
 * without one (util_netlink_listen()); a packet socket the privileged process made deaf by
 * a bind cannot be made to hear again. */
/* The options' two forms (a 32- or 64-bit time_t), as the kernel numbers them where
 * asm-generic does (x86, ARM); a C library may name only the option (musl). */
#ifndef SO_TIMESTAMP_OLD
#define SO_RCVTIMEO_OLD 20
#define SO_SNDTIMEO_OLD 21
#define SO_TIMESTAMP_OLD 29
#define SO_TIMESTAMPNS_OLD 35
#define SO_TIMESTAMPING_OLD 37
#define SO_TIMESTAMP_NEW 63
#define SO_TIMESTAMPNS_NEW 64
#define SO_TIMESTAMPING_NEW 65
#define SO_RCVTIMEO_NEW 66
#define SO_SNDTIMEO_NEW 67
#endif
static const int sockopt_levels[] = {SOL_NETLINK};
static const struct {
	int level, name;
} sockopts[] = {
	/* libpcap's capture: timestamps, its ring, the VLAN tags */
	{SOL_SOCKET, SO_TIMESTAMP_OLD}, {SOL_SOCKET, SO_TIMESTAMP_NEW},
	{SOL_SOCKET, SO_TIMESTAMPNS_OLD}, {SOL_SOCKET, SO_TIMESTAMPNS_NEW},
	{SOL_SOCKET, SO_TIMESTAMPING_OLD}, {SOL_SOCKET, SO_TIMESTAMPING_NEW},
	{SOL_PACKET, PACKET_AUXDATA},
	{SOL_PACKET, PACKET_VERSION}, {SOL_PACKET, PACKET_RESERVE},
	{SOL_PACKET, PACKET_RX_RING}, {SOL_PACKET, PACKET_TIMESTAMP},
	/* rtnetlink and uevents (net_link.c, block.c), libraries' sockets */
	{SOL_SOCKET, SO_RCVTIMEO_OLD}, {SOL_SOCKET, SO_RCVTIMEO_NEW},
	{SOL_SOCKET, SO_SNDTIMEO_OLD}, {SOL_SOCKET, SO_SNDTIMEO_NEW}, {SOL_SOCKET, SO_RCVBUF},
	{SOL_SOCKET, SO_SNDBUF}, {SOL_SOCKET, SO_PASSCRED}, {SOL_SOCKET, SO_REUSEADDR},
	{SOL_SOCKET, SO_KEEPALIVE},
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

/* The calls allowed with conditions (allow_calls, calls_filter, ioctl_filter). */
static const char *const conditional[] = {"tgkill",  "prlimit64", "sched_getaffinity",
					  "socket",  "ioctl",     "setsockopt",
					  "sendmsg", "sendmmsg",  "bind"};

bool priv_sandbox_call_listed(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
		if (strcmp(allowed[i], name) == 0)
			return true;
	for (size_t i = 0; i < ARRAY_SIZE(conditional); i++)
		if (strcmp(conditional[i], name) == 0)
			return true;
	return false;
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
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 0);
	/* Refused by the other filter (EPERM): the only calls that pass a descriptor on, and
	 * bind(). */
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmsg), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sendmmsg), 0);
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(bind), 0);
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
	/* The level and the option are ints to the kernel, whatever the upper 32 bits. */
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(sockopt_levels); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					      (scmp_datum_t)sockopt_levels[i]));
	for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(sockopts); i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setsockopt), 2,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					      (scmp_datum_t)sockopts[i].level),
				      SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffUL,
					      (scmp_datum_t)sockopts[i].name));
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
	/* NoNewPrivs is set already (priv.c); prctl() would not pass the first filter. */
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

/* SECCOMP_RET_KILL_PROCESS came with Linux 4.14, and with it SECCOMP_GET_ACTION_AVAIL, the
 * question itself (an older kernel answers EINVAL). Without it libseccomp refuses the
 * filter with ENOMEM, which would say nothing of the cause. */
static bool kill_process_available(void)
{
	uint32_t action = SECCOMP_RET_KILL_PROCESS;

	return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

int priv_sandbox_collector(void)
{
	int rc;

	/* valgrind runs in the process, with calls of its own, and cannot run filters: the
	 * memory check of the test suite (t_ctl) runs without one, and says so. */
	if (RUNNING_ON_VALGRIND) {
		log_notice("running under valgrind: the collector has no system call filter");
		missing("no system call filter (running under valgrind)");
		return 0;
	}
	if (!kill_process_available()) {
		struct utsname u;

		log_err("cannot install the collector's system call filter: this kernel (Linux %s) "
			"has no SECCOMP_RET_KILL_PROCESS; entropyd needs Linux 4.14 or later",
			uname(&u) == 0 ? u.release : "?");
		return -1;
	}
	rc = load(SCMP_ACT_ERRNO(EPERM), ioctl_filter);
	if (rc == 0)
		rc = load(SCMP_ACT_KILL_PROCESS, calls_filter);
	if (rc < 0) {
		log_err("cannot install the collector's system call filter: %s", strerror(-rc));
		return -1;
	}
	walls.seccomp = true;
	return 0;
}

/* ---- Landlock, where the kernel has it: a second wall beside the user and the filter ---- */

/* The UAPI's values, for headers older than the kernel (Debian 12's know ABI 1 and 2). */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)    /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14) /* ABI 3 */
#define LL_NET_BIND_TCP (1ULL << 0) /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

int priv_sandbox_landlock(const char *writable_dir)
{
	struct ll_ruleset_attr attr = {0};
	size_t size = sizeof(attr.handled_access_fs);
	long abi;
	uint64_t write = LL_FS_WRITE_FILE | LL_FS_REMOVE_FILE | LL_FS_MAKE_REG;
	int rs, rc = 0;

	/* valgrind knows no Landlock call (and says so on stderr); it runs no filter either. */
	if (RUNNING_ON_VALGRIND) {
		walls.landlock_errno = ENOTSUP;
		missing("no Landlock (running under valgrind)");
		return 0;
	}
	abi = syscall(__NR_landlock_create_ruleset, NULL, 0, 1 /* VERSION */);
	if (abi < 1) {
		walls.landlock_errno = errno;
		/* Built in but left out of the kernel's lsm= list: this host could have it. */
		if (errno == EOPNOTSUPP) {
			log_warn("collector: no Landlock: the kernel has it but did not enable it "
				 "(add landlock to lsm= on its command line)");
			missing("no Landlock (the kernel's lsm= list leaves it out)");
		} else {
			log_notice("collector: no Landlock in this kernel (%s)", strerror(errno));
		}
		return 0;
	}
	/* Nothing to write, make or remove anywhere, and nothing to execute; reading is the
	 * user's and the filter's business (the configuration, sysfs, procfs). */
	attr.handled_access_fs = LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR |
				 LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR |
				 LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO |
				 LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;
	if (abi >= 2)
		attr.handled_access_fs |= LL_FS_REFER;
	if (abi >= 3) {
		attr.handled_access_fs |= LL_FS_TRUNCATE;
		write |= LL_FS_TRUNCATE;
	}
	/* No TCP at all (the collector has no use for it). */
	if (abi >= 4) {
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		size = offsetof(struct ll_ruleset_attr, scoped);
	}
	/* No signal to a process outside its own domain (the privileged process, root's
	 * processes, anyone's), no abstract unix socket outside it. */
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0) {
		log_errno(LOG_ERR, "collector: cannot make a Landlock ruleset");
		return -1;
	}
	if (writable_dir && writable_dir[0]) {
		struct ll_path_beneath pb = {.allowed_access = write};

		pb.parent_fd = open(writable_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (pb.parent_fd >= 0) {
			rc = (int)syscall(__NR_landlock_add_rule, rs, 1 /* PATH_BENEATH */, &pb, 0);
			close(pb.parent_fd);
		} else {
			log_errno(LOG_WARNING, "collector: record.dir %s: cannot allow writing there",
				  writable_dir);
		}
	}
	if (rc == 0)
		rc = (int)syscall(__NR_landlock_restrict_self, rs, 0);
	if (rc < 0)
		log_errno(LOG_ERR, "collector: cannot apply the Landlock ruleset");
	close(rs);
	if (rc == 0)
		walls.landlock_abi = (int)abi;
	if (rc == 0)
		log_info("collector: Landlock (ABI %ld): nothing written, made or removed%s%s, no "
			 "execution%s%s",
			 abi, writable_dir && writable_dir[0] ? " outside " : "",
			 writable_dir && writable_dir[0] ? writable_dir : "",
			 abi >= 4 ? ", no TCP" : "",
			 abi >= 6 ? ", no signal or abstract socket outside itself" : "");
	return rc < 0 ? -1 : 0;
}

/* ---- Namespaces: the collector sees no other process and almost no file ---- */

/* Why the collector has no PID namespace of its own (0: it has one), from the fork. */
static int pidns_errno = ENOSYS;
static bool pidns_tried;

int priv_sandbox_pidns_begin(void)
{
	int fd;

	pidns_tried = true;
	if (RUNNING_ON_VALGRIND) {
		pidns_errno = ENOTSUP;
		return -1;
	}
	fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		pidns_errno = errno;
		return -1;
	}
	if (unshare(CLONE_NEWPID) < 0) {
		pidns_errno = errno;
		close(fd);
		return -1;
	}
	pidns_errno = 0;
	return fd;
}

void priv_sandbox_pidns_end(int fd, bool child)
{
	if (fd < 0)
		return;
	/* The privileged process's next children are born in its own namespace again. */
	if (!child && setns(fd, CLONE_NEWPID) < 0)
		log_errno(LOG_WARNING, "cannot return to the PID namespace for later children");
	close(fd);
}

/* A recursive read-only (and flags) change of the mount at path and every mount beneath. */
static int seal(const char *path, unsigned long flags)
{
#ifdef SYS_mount_setattr
	struct {
		uint64_t set, clr, propagation, userns_fd;
	} attr = {0};

	attr.set = 0x1; /* MOUNT_ATTR_RDONLY */
	if (flags & MS_NOSUID)
		attr.set |= 0x2;
	if (flags & MS_NODEV)
		attr.set |= 0x4;
	if (flags & MS_NOEXEC)
		attr.set |= 0x8;
	if (syscall(SYS_mount_setattr, AT_FDCWD, path, 0x8000 /* AT_RECURSIVE */, &attr,
		    sizeof(attr)) == 0)
		return 0;
	if (!walls.ro_errno)
		walls.ro_errno = errno;
#endif
	/* Older kernels: the top mount only (said by priv_sandbox_namespaces()). */
	return mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | flags, NULL);
}

/* mkdir -p below the new root, for a mount point. */
/* A directory of the new root, 0755 whatever the umask; one there already is left as it is
 * (it may be a read-only bind). */
static int make_dir(const char *path)
{
	if (mkdir(path, 0755) == 0)
		return chmod(path, 0755);
	return errno == EEXIST ? 0 : -1;
}

/* The mount point of path under root, with the directories above it: 0755 whatever the
 * umask (the unit's UMask=0077 would make them root's alone, and the collector, another
 * user, could not reach the configuration through them). */
static int make_point(const char *root, const char *path, bool dir)
{
	char buf[PATH_MAX];
	char *p;
	int n = snprintf(buf, sizeof(buf), "%s%s", root, path);

	if (n < 0 || (size_t)n >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (p = buf + strlen(root) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (make_dir(buf) < 0)
			return -1;
		*p = '/';
	}
	if (dir) {
		if (make_dir(buf) < 0)
			return -1;
	} else {
		int fd = open(buf, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0)
			return -1;
		close(fd);
	}
	return 0;
}

#define NS_ROOT "/tmp"

/* Is path the root of the initramfs's rootfs (a ramfs or tmpfs that no pivot_root leaves)? */
static bool is_rootfs(const char *path)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	bool yes = false;

	if (!f)
		return false;
	while ((m = getmntent(f)))
		if (strcmp(m->mnt_dir, path) == 0)
			yes = !strcmp(m->mnt_fsname, "rootfs") || !strcmp(m->mnt_type, "rootfs") ||
			      !strcmp(m->mnt_type, "ramfs");
	endmntent(f);
	return yes;
}

static int build_root(const struct sandbox_view *v, const char **what)
{
	int fds[SANDBOX_MAX_PATHS];
	bool dirs[SANDBOX_MAX_PATHS];
	size_t i, n = v->n;
	char target[PATH_MAX], src[64];
	int rc = -1;

	for (i = 0; i < n; i++)
		fds[i] = -1;
	*what = "make its mounts private";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	/* Every path the collector keeps, held before the empty root may hide it. */
	for (i = 0; i < n; i++) {
		struct stat st;

		fds[i] = open(v->paths[i].path, O_PATH | O_CLOEXEC);
		if (fds[i] >= 0 && fstat(fds[i], &st) == 0)
			dirs[i] = S_ISDIR(st.st_mode);
		else if (fds[i] >= 0)
			dirs[i] = true;
	}
	*what = "mount an empty root (tmpfs on " NS_ROOT ")";
	if (mount("entropyd", NS_ROOT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=64k") < 0)
		goto out;
	for (i = 0; i < n; i++) {
		unsigned long fl = v->paths[i].flags;

		if (fds[i] < 0)
			continue; /* not on this system (/dev/log, /run/systemd, ...) */
		*what = v->paths[i].path;
		if (make_point(NS_ROOT, v->paths[i].path, dirs[i]) < 0)
			goto out;
		snprintf(target, sizeof(target), NS_ROOT "%s", v->paths[i].path);
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fds[i]);
		if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) < 0)
			goto out;
		if (!v->paths[i].writable && seal(target, fl) < 0)
			goto out;
		if (v->paths[i].writable &&
		    mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | fl, NULL) < 0)
			goto out;
	}
	*what = "mount /proc of its PID namespace";
	if (make_point(NS_ROOT, "/proc", true) < 0 ||
	    mount("proc", NS_ROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
		  NULL) < 0)
		goto out;
	*what = "change to the new root (pivot_root)";
	if (chdir(NS_ROOT) < 0)
		goto out;
	if (syscall(SYS_pivot_root, ".", ".") == 0) {
		*what = "leave the old root";
		if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
			goto out;
	} else if (errno == EINVAL && is_rootfs("/")) {
		/* The initramfs's rootfs is the bottom of every mount tree and cannot be pivoted
		 * away from (entropyd started by its hooks): move the new root over it and
		 * chroot into it, as switch_root does. With no capability left (no
		 * CAP_SYS_CHROOT, no CAP_SYS_ADMIN) and chroot and mount refused by its filter,
		 * the collector cannot get back to the old root under it. */
		*what = "move the new root over the initramfs's (MS_MOVE)";
		if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
			goto back;
		*what = "leave the old root";
		if (chroot(".") < 0 || chdir("/") < 0)
			goto out;
	} else {
		goto back;
	}
	*what = "make the new root read-only";
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL) < 0)
		goto out;
	rc = 0;
	goto out;
back: {
	int e = errno;

	if (chdir("/") < 0)
		e = errno;
	errno = e;
}
out:
	/* Before pivot_root the empty root hides what was on NS_ROOT: give it back. */
	if (rc < 0 && strcmp(*what, "make the new root read-only") != 0 &&
	    strcmp(*what, "leave the old root") != 0) {
		int e = errno;

		umount2(NS_ROOT, MNT_DETACH);
		errno = e;
	}
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

int priv_sandbox_namespaces(const struct sandbox_view *v)
{
	const char *what = "";
	char pid_note[160] = "";

	walls.pidns_errno = pidns_tried ? pidns_errno : ENOSYS;
	if (walls.pidns_errno)
		missing("no PID namespace of its own (%s): it sees every process",
			walls.pidns_errno == ENOTSUP ? "running under valgrind"
						     : strerror(walls.pidns_errno));
	walls.ro_errno = 0;
	if (pidns_tried && pidns_errno)
		snprintf(pid_note, sizeof(pid_note), "; no PID namespace of its own (%s): it sees "
			 "every process in /proc",
			 pidns_errno == ENOTSUP ? "running under valgrind" : strerror(pidns_errno));
	if (RUNNING_ON_VALGRIND) {
		log_notice("running under valgrind: the collector keeps the mount namespace%s",
			   pid_note);
		walls.mntns_errno = ENOTSUP;
		missing("no mount namespace of its own (running under valgrind)");
		return 0;
	}
	if (unshare(CLONE_NEWNS) < 0) {
		walls.mntns_errno = errno;
		log_warn("collector: cannot make a mount namespace of its own (%s): it sees the "
			 "whole file system%s",
			 strerror(errno), pid_note);
		missing("no mount namespace of its own (%s): it sees the whole file system",
			strerror(walls.mntns_errno));
		return 0;
	}
	if (build_root(v, &what) < 0) {
		/* Nothing is changed where the collector looks until pivot_root; after it a
		 * failure is fatal. */
		int e = errno;

		if (strcmp(what, "make the new root read-only") == 0 ||
		    strcmp(what, "leave the old root") == 0) {
			log_err("collector: %s: %s", what, strerror(e));
			return -1;
		}
		log_warn("collector: cannot build its own root (%s: %s): it sees the whole file "
			 "system%s",
			 what, strerror(e), pid_note);
		walls.mntns_errno = e;
		missing("no root of its own (%s: %s): it sees the whole file system", what,
			strerror(e));
		return 0;
	}
	walls.mntns_errno = 0;
	if (walls.ro_errno) {
		log_warn("collector: mount_setattr: %s (Linux before 5.12): of each path it keeps, "
			 "only the top mount is read-only; mounts beneath keep their own modes",
			 strerror(walls.ro_errno));
		missing("a read-only view of the top mounts only (mount_setattr: %s)",
			strerror(walls.ro_errno));
	}
	if (pid_note[0])
		log_warn("collector: its own mount namespace, root an empty read-only directory%s",
			 pid_note);
	else
		log_notice("collector: its own PID and mount namespaces: it sees only itself in "
			   "/proc, and a read-only root with only the paths it reads and writes");
	return 0;
}
