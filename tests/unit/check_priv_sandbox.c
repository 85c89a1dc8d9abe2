/* check_priv_sandbox: the collector's system call filter (priv_sandbox.c), installed for real in a
 * child process, which then makes the calls and reports each errno through a pipe. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <linux/input.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <linux/sockios.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "priv_sandbox.h"
#include "testutil.h"

/* A bit above the 32 of an ioctl's request (the kernel takes an unsigned int, the call an
 * unsigned long): 1 << 32 where long has 64 bits; where it has 32 there is none, and the
 * cases with it are the plain ones again. */
#define UPPER_BIT ((unsigned long)UINT_MAX + 1)

/* The ioctls tried, each on a pipe: the kernel answers ENOTTY (or 0) where the filter lets
 * one through, the filter EPERM where it does not. */
static const struct {
	const char *name;
	unsigned long req;
	int want; /* the errno, 0 for success */
} tries[] = {
	{"FIONREAD", FIONREAD, 0},
	{"FIONREAD with upper bits set", UPPER_BIT | FIONREAD, 0},
	{"EVIOCGID with upper bits set", UPPER_BIT | EVIOCGID, ENOTTY},
	{"TCGETS (isatty)", TCGETS, ENOTTY},
	{"EVIOCGID (an evdev getter)", EVIOCGID, ENOTTY},
	{"EVIOCGNAME(255)", EVIOCGNAME(255), ENOTTY},
	{"EVIOCSCLOCKID", EVIOCSCLOCKID, ENOTTY},
	{"PERF_EVENT_IOC_ENABLE", PERF_EVENT_IOC_ENABLE, ENOTTY},
	{"PERF_EVENT_IOC_SET_FILTER", PERF_EVENT_IOC_SET_FILTER, ENOTTY},
	{"TIOCSTI (push terminal input)", TIOCSTI, EPERM},
	{"TIOCSTI with upper bits set", UPPER_BIT | TIOCSTI, EPERM},
	{"EVIOCGRAB (an evdev setter)", EVIOCGRAB, EPERM},
	{"PERF_EVENT_IOC_SET_BPF", PERF_EVENT_IOC_SET_BPF, EPERM},
	{"SIOCSIFFLAGS", SIOCSIFFLAGS, EPERM},
};
#define NTRIES (sizeof(tries) / sizeof(tries[0]))

/* A child with no_new_privs (so that it may load filters) that installs the collector's
 * filter if told to and then runs what; its exit status. */
static int in_child(void (*what)(int out), int out, bool filtered)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    (filtered && priv_sandbox_collector() < 0))
			_exit(100);
		what(out);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

static int in_sandbox(void (*what)(int out), int out)
{
	return in_child(what, out, true);
}

static void try_ioctls(int out)
{
	int p[2], n, err[NTRIES];

	if (pipe(p) < 0)
		_exit(101);
	for (size_t i = 0; i < NTRIES; i++) {
		errno = 0;
		err[i] = syscall(SYS_ioctl, p[0], tries[i].req, &n) < 0 ? errno : 0;
	}
	if (write(out, err, sizeof(err)) != (ssize_t)sizeof(err))
		_exit(102);
}

START_TEST(test_ioctls_listed_only)
{
	int p[2], err[NTRIES], st;

	ck_assert_int_eq(pipe(p), 0);
	st = in_sandbox(try_ioctls, p[1]);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the sandboxed child ended with %#x",
		      st);
	ck_assert_int_eq(read(p[0], err, sizeof(err)), (ssize_t)sizeof(err));
	for (size_t i = 0; i < NTRIES; i++)
		ck_assert_msg(err[i] == tries[i].want, "%s: errno %d, expected %d", tries[i].name,
			      err[i], tries[i].want);
	close(p[0]);
	close(p[1]);
}
END_TEST

static void unlisted_call(int out)
{
	(void)out;
	(void)syscall(SYS_getpriority, 0, 0); /* in no list */
}

START_TEST(test_unlisted_call_kills)
{
	int st = in_sandbox(unlisted_call, -1);

	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
		      "getpriority() in the sandbox: status %#x, not killed by SIGSYS", st);
}
END_TEST

/* Calls that take a pid, on this process: allowed. */
static void self_calls(int out)
{
	struct rlimit rl;
	cpu_set_t set;

	(void)out;
	if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) < 0 ||
	    syscall(SYS_prlimit64, getpid(), RLIMIT_NOFILE, NULL, &rl) < 0 ||
	    sched_getaffinity(0, sizeof(set), &set) < 0 ||
	    syscall(SYS_tgkill, getpid(), getpid(), 0) < 0)
		_exit(104);
}

START_TEST(test_pid_calls_on_itself)
{
	int st = in_sandbox(self_calls, -1);

	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "prlimit64, sched_getaffinity, tgkill on itself: status %#x", st);
}
END_TEST

/* The same on its parent (a root process, as the privileged one is): killed. */
static void parent_prlimit(int out)
{
	struct rlimit rl;

	(void)out;
	(void)syscall(SYS_prlimit64, getppid(), RLIMIT_NOFILE, NULL, &rl);
}

static void parent_tgkill(int out)
{
	(void)out;
	(void)syscall(SYS_tgkill, getppid(), getppid(), 0);
}

START_TEST(test_pid_calls_on_others_kill)
{
	int st = in_sandbox(parent_prlimit, -1);

	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
		      "prlimit64 on another process: status %#x, not killed by SIGSYS", st);
	st = in_sandbox(parent_tgkill, -1);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
		      "tgkill of another process: status %#x, not killed by SIGSYS", st);
}
END_TEST

static void load_another(int out)
{
	(void)out;
	/* The filter the collector could add itself, were seccomp() left open. */
	if (priv_sandbox_collector() == 0)
		_exit(0);
	_exit(103);
}

START_TEST(test_no_filter_after)
{
	int st = in_sandbox(load_another, -1);

	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
		      "seccomp() in the sandbox: status %#x, not killed by SIGSYS", st);
}
END_TEST

/* A kernel before 4.14 (no SECCOMP_RET_KILL_PROCESS), made by a filter of our own: the
 * question that finds it out (SECCOMP_GET_ACTION_AVAIL) answers EINVAL, as there. */
static void old_kernel(int out)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (!ctx ||
	    seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EINVAL), SCMP_SYS(seccomp), 1,
			     SCMP_A0(SCMP_CMP_EQ, SECCOMP_GET_ACTION_AVAIL)) < 0 ||
	    seccomp_load(ctx) < 0)
		_exit(105);
	seccomp_release(ctx);
	if (dup2(out, STDERR_FILENO) < 0)
		_exit(106);
	log_open(true, 0);
	_exit(priv_sandbox_collector() == -1 ? 0 : 107);
}

START_TEST(test_below_floor_says_why)
{
	char msg[512] = "";
	int p[2], st;
	ssize_t n;

	ck_assert_int_eq(pipe(p), 0);
	st = in_child(old_kernel, p[1], false);
	close(p[1]);
	n = read(p[0], msg, sizeof(msg) - 1);
	close(p[0]);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x: %s", st, msg);
	ck_assert_int_gt(n, 0);
	ck_assert_msg(strstr(msg, "has no SECCOMP_RET_KILL_PROCESS") &&
			      strstr(msg, "needs Linux 4.14 or later"),
		      "the message does not name the kernel's lack: %s", msg);
	ck_assert_msg(!strstr(msg, "Cannot allocate memory"), "%s", msg);
}
END_TEST

/* setsockopt() on a UDP socket: what passes the filter gets the kernel's answer (0, or
 * ENOPROTOOPT for a packet socket's option), what does not EPERM. */
static const struct {
	const char *name;
	int level, opt;
	int want;
} sockopt_tries[] = {
	{"SO_RCVBUF", SOL_SOCKET, SO_RCVBUF, 0},
	{"SO_TIMESTAMPNS", SOL_SOCKET, SO_TIMESTAMPNS, 0},
	{"PACKET_AUXDATA (libpcap)", SOL_PACKET, PACKET_AUXDATA, ENOPROTOOPT},
	{"PACKET_RX_RING (libpcap)", SOL_PACKET, PACKET_RX_RING, ENOPROTOOPT},
	{"SO_ATTACH_FILTER", SOL_SOCKET, SO_ATTACH_FILTER, EPERM},
	{"SO_DETACH_FILTER", SOL_SOCKET, SO_DETACH_FILTER, EPERM},
	{"SO_LOCK_FILTER", SOL_SOCKET, SO_LOCK_FILTER, EPERM},
	{"SO_ATTACH_BPF", SOL_SOCKET, SO_ATTACH_BPF, EPERM},
	{"PACKET_ADD_MEMBERSHIP", SOL_PACKET, PACKET_ADD_MEMBERSHIP, EPERM},
	{"PACKET_DROP_MEMBERSHIP", SOL_PACKET, PACKET_DROP_MEMBERSHIP, EPERM},
	{"PACKET_COPY_THRESH", SOL_PACKET, PACKET_COPY_THRESH, EPERM},
	{"PACKET_FANOUT", SOL_PACKET, PACKET_FANOUT, EPERM},
};
#define NSOCKOPTS (sizeof(sockopt_tries) / sizeof(sockopt_tries[0]))
#define NSENDS 2 /* then send(), and sendmsg() with a descriptor */

static void try_sockopts(int out)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err[NSOCKOPTS + NSENDS], v = 1, sv[2];
	struct sock_filter drop = BPF_STMT(BPF_RET | BPF_K, 0);
	struct sock_fprog fp = {.len = 1, .filter = &drop};
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {.iov_base = &v, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	if (fd < 0 || socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0)
		_exit(101);
	for (size_t i = 0; i < NSOCKOPTS; i++) {
		const void *arg = &v;
		socklen_t len = sizeof(v);

		if (sockopt_tries[i].opt == SO_ATTACH_FILTER && sockopt_tries[i].level == SOL_SOCKET) {
			arg = &fp;
			len = sizeof(fp);
		}
		errno = 0;
		err[i] = setsockopt(fd, sockopt_tries[i].level, sockopt_tries[i].opt, arg, len) < 0
				 ? errno
				 : 0;
	}
	errno = 0;
	err[NSOCKOPTS] = send(sv[0], "x", 1, 0) < 0 ? errno : 0;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	errno = 0;
	err[NSOCKOPTS + 1] = sendmsg(sv[0], &mh, 0) < 0 ? errno : 0;
	if (write(out, err, sizeof(err)) != (ssize_t)sizeof(err))
		_exit(102);
}

START_TEST(test_sockopts)
{
	int p[2], err[NSOCKOPTS + NSENDS], st;

	ck_assert_int_eq(pipe(p), 0);
	st = in_sandbox(try_sockopts, p[1]);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the sandboxed child ended with %#x",
		      st);
	ck_assert_int_eq(read(p[0], err, sizeof(err)), (ssize_t)sizeof(err));
	for (size_t i = 0; i < NSOCKOPTS; i++)
		ck_assert_msg(err[i] == sockopt_tries[i].want, "%s: errno %d, expected %d",
			      sockopt_tries[i].name, err[i], sockopt_tries[i].want);
	ck_assert_msg(err[NSOCKOPTS] == 0, "send(): errno %d", err[NSOCKOPTS]);
	ck_assert_msg(err[NSOCKOPTS + 1] == EPERM, "sendmsg() with a descriptor: errno %d, not EPERM",
		      err[NSOCKOPTS + 1]);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* Every call a collector of each architecture was seen to make in the guest runs
 * (tests/data/syscalls/ARCH.txt, one name a line, as strace names them) is in the filter's
 * list, and libseccomp knows it on that architecture: a name it lacks there would be
 * skipped, and the collector killed at its first use. */
START_TEST(test_observed_calls_listed)
{
	static const struct {
		const char *file;
		uint32_t arch;
	} seen[] = {
		{"amd64.txt", SCMP_ARCH_X86_64},
		{"arm64.txt", SCMP_ARCH_AARCH64},
		{"armhf.txt", SCMP_ARCH_ARM},
	};
	char line[128], path[512];
	unsigned n = 0;

	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/tests/data/syscalls/%s", SRCDIR, seen[i].file);
		f = fopen(path, "re");
		ck_assert_msg(f != NULL, "cannot open %s", path);
		while (fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = '\0';
			if (!line[0] || line[0] == '#')
				continue;
			ck_assert_msg(priv_sandbox_call_listed(line), "%s: %s is not in the filter's list",
				      seen[i].file, line);
			ck_assert_msg(seccomp_syscall_resolve_name_arch(seen[i].arch, line) !=
					      __NR_SCMP_ERROR,
				      "%s: libseccomp knows no %s there", seen[i].file, line);
			n++;
		}
		fclose(f);
	}
	ck_assert_uint_gt(n, 0);
}
END_TEST

static Suite *sandbox_suite(void)
{
	Suite *s = suite_create("sandbox");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ioctls_listed_only);
	tcase_add_test(tc, test_sockopts);
	tcase_add_test(tc, test_unlisted_call_kills);
	tcase_add_test(tc, test_no_filter_after);
	tcase_add_test(tc, test_pid_calls_on_itself);
	tcase_add_test(tc, test_pid_calls_on_others_kill);
	tcase_add_test(tc, test_below_floor_says_why);
	tcase_add_test(tc, test_observed_calls_listed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(sandbox_suite());
}
