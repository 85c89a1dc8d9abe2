/* intrude: make one system call inside a running process, as an exploit of its code would.
 *
 *   intrude PID uid                    getuid()
 *   intrude PID open PATH r|w|rw|new   openat(AT_FDCWD, PATH, ...); new is O_WRONLY|O_CREAT
 *   intrude PID chmod PATH MODE        fchmodat(AT_FDCWD, PATH, MODE (octal))
 *   intrude PID connect PATH           a unix stream socket connected to PATH
 *   intrude PID prlimit TARGET         prlimit64(TARGET, RLIMIT_NOFILE, NULL, NULL)
 *   intrude PID tgkill TARGET          tgkill(TARGET, TARGET, 0), a signal that only probes
 *   intrude PID stall N                up to N requests (PRIV_RESEED) on its socket to the
 *                                      privileged process, sent without waiting, then the
 *                                      process is held stopped, reading no reply, until it
 *                                      dies: prints "sent K" at once, then how it died
 *
 * The call is made by the process itself (ptrace: its registers set to the call, one step
 * over a syscall instruction of its own, its registers put back), so its user, namespaces,
 * root, capability sets, no_new_privs, seccomp filters and Landlock rules all apply, and
 * the process goes on as before. What the call opened is closed again in the process.
 *
 * Prints the call's result: "0", a descriptor's number, or "-ERRNO NAME" (e.g. "-13
 * EACCES"); if the process died of the call, "killed by signal N (NAME)". Exits 0 when the
 * call was made, 1 when it could not be, 77 on an architecture it does not know (x86-64
 * only), 2 on a usage error. A test helper: statically linked, it runs where the tests'
 * shells do (the host, a container, an initramfs) with nothing beside it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/priv_wire.h"

#if defined(__x86_64__)

static pid_t target;
static struct user_regs_struct saved;
static unsigned long syscall_insn; /* the address of a syscall instruction in the target */

static void die(const char *what)
{
	fprintf(stderr, "intrude: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The target's own syscall instruction (0f 05): the one it is stopped after, when it was
 * stopped in a call (as a daemon in its event loop is), or else one in its vDSO. */
static unsigned long find_syscall_insn(void)
{
	char path[64], line[256];
	unsigned long lo, hi, a;
	FILE *maps;

	errno = 0;
	if ((long long)saved.orig_rax >= 0 && saved.rip >= 2) {
		long w = ptrace(PTRACE_PEEKTEXT, target, (void *)(saved.rip - 2), NULL);
		if (errno == 0 && (w & 0xffff) == 0x050f)
			return saved.rip - 2;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)target);
	if (!(maps = fopen(path, "re")))
		die(path);
	while (fgets(line, sizeof(line), maps)) {
		if (!strstr(line, "[vdso]") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		for (a = lo; a + sizeof(long) <= hi; a++) {
			errno = 0;
			long w = ptrace(PTRACE_PEEKTEXT, target, (void *)a, NULL);
			if (errno == 0 && (w & 0xffff) == 0x050f) {
				fclose(maps);
				return a;
			}
		}
	}
	fclose(maps);
	errno = ENOEXEC;
	die("no syscall instruction in the process");
	return 0;
}

static void attach(void)
{
	int status;

	if (ptrace(PTRACE_SEIZE, target, NULL, NULL) < 0)
		die("PTRACE_SEIZE");
	if (ptrace(PTRACE_INTERRUPT, target, NULL, NULL) < 0)
		die("PTRACE_INTERRUPT");
	if (waitpid(target, &status, __WALL) < 0)
		die("waitpid");
	if (!WIFSTOPPED(status)) {
		errno = ESRCH;
		die("the process did not stop");
	}
	if (ptrace(PTRACE_GETREGS, target, NULL, &saved) < 0)
		die("PTRACE_GETREGS");
	syscall_insn = find_syscall_insn();
}

static void detach(void)
{
	if (ptrace(PTRACE_SETREGS, target, NULL, &saved) < 0)
		die("PTRACE_SETREGS (restoring)");
	if (ptrace(PTRACE_DETACH, target, NULL, NULL) < 0)
		die("PTRACE_DETACH");
}

/* Copy len bytes below the target's stack pointer (past the red zone) and return their
 * address there. Each call's data is placed afresh: one call, one buffer. */
static unsigned long put(const void *data, size_t len)
{
	unsigned long at = (saved.rsp - 128 - 4096 - len) & ~15UL;
	size_t i;

	for (i = 0; i < len; i += sizeof(long)) {
		long w = 0;
		memcpy(&w, (const char *)data + i, len - i < sizeof(long) ? len - i : sizeof(long));
		if (ptrace(PTRACE_POKEDATA, target, (void *)(at + i), (void *)w) < 0)
			die("PTRACE_POKEDATA");
	}
	return at;
}

/* If the target died (status from waitpid), say how and exit. */
static void gone(int status)
{
	if (WIFSIGNALED(status)) {
		printf("killed by signal %d (SIG%s)\n", WTERMSIG(status),
		       sigabbrev_np(WTERMSIG(status)) ?: "?");
		exit(0);
	}
	if (WIFEXITED(status)) {
		printf("exited with status %d\n", WEXITSTATUS(status));
		exit(0);
	}
}

/* One system call in the target; its result, or exit if the call killed it. */
static long call(long nr, unsigned long a0, unsigned long a1, unsigned long a2,
		 unsigned long a3)
{
	struct user_regs_struct r = saved;
	int status;

	r.rax = nr;
	r.orig_rax = -1; /* no restart of the call it was stopped in: this one is ours */
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.r10 = a3;
	r.r8 = 0; /* sendto's address: none */
	r.rip = syscall_insn;
	if (ptrace(PTRACE_SETREGS, target, NULL, &r) < 0)
		die("PTRACE_SETREGS");
	if (ptrace(PTRACE_SINGLESTEP, target, NULL, NULL) < 0)
		die("PTRACE_SINGLESTEP");
	for (;;) {
		if (waitpid(target, &status, __WALL) < 0)
			die("waitpid");
		gone(status);
		/* the step's trap ends it; a signal that came meanwhile is passed on */
		if (WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP)
			break;
		if (ptrace(PTRACE_SINGLESTEP, target, NULL, (void *)(long)WSTOPSIG(status)) < 0)
			die("PTRACE_SINGLESTEP");
	}
	if (ptrace(PTRACE_GETREGS, target, NULL, &r) < 0)
		die("PTRACE_GETREGS");
	return (long)r.rax;
}

static void report(long rc)
{
	if (rc < 0 && rc > -4096)
		printf("%ld %s\n", rc, strerrorname_np((int)-rc) ?: "?");
	else
		printf("%ld\n", rc);
}

/* The target's end of its socketpair with the privileged process: its one unix
 * SOCK_SEQPACKET socket (type 0005 in /proc/PID/net/unix). */
static long seqpacket_fd(void)
{
	char path[64], line[256], link[64];
	unsigned long ino, want[256];
	unsigned type;
	size_t n = 0;
	FILE *f;
	long fd, found = -1;

	for (fd = 0; fd < 256; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)target, fd);
		want[fd] = 0;
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = '\0';
			sscanf(link, "socket:[%lu]", &want[fd]);
			n++;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)target);
	if (!n || !(f = fopen(path, "re")))
		die(path);
	while (found < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %*s %*s %x %*s %lu", &type, &ino) == 2 && type == 5)
			for (fd = 0; fd < 256 && found < 0; fd++)
				if (want[fd] == ino)
					found = fd;
	fclose(f);
	if (found < 0) {
		errno = ENOENT;
		die("no SOCK_SEQPACKET socket in the process");
	}
	return found;
}

/* stall: requests sent without reading a reply, then the target held in its stop (never
 * restarted: it reads nothing more, and a signal to it stays pending) until it dies. */
static void stall(long n)
{
	struct priv_hdr h = {.version = PRIV_VERSION, .type = PRIV_RESEED, .size = sizeof(h)};
	unsigned long at;
	long fd = seqpacket_fd(), sent = 0, rc = 0;
	int status;

	attach();
	at = put(&h, sizeof(h));
	/* sendto(), as the collector's own requests go (send()); sendmsg() is no call of its */
	while (sent < n && (rc = call(SYS_sendto, (unsigned long)fd, at, sizeof(h),
				     MSG_DONTWAIT | MSG_NOSIGNAL)) == (long)sizeof(h))
		sent++;
	printf("sent %ld", sent);
	if (sent < n)
		printf(" (then %ld %s)", rc, strerrorname_np((int)-rc) ?: "?");
	printf("\n");
	fflush(stdout);
	for (;;) {
		if (waitpid(target, &status, __WALL) < 0)
			die("waitpid");
		gone(status);
	}
}

static int usage(void)
{
	fputs("usage: intrude PID uid | open PATH r|w|rw|new | chmod PATH MODE | connect PATH | "
	      "prlimit TARGET | tgkill TARGET | stall N\n",
	      stderr);
	return 2;
}

static unsigned long put_path(const char *path)
{
	return put(path, strlen(path) + 1);
}

int main(int argc, char **argv)
{
	const char *verb;
	long rc;

	if (argc < 3)
		return usage();
	target = (pid_t)atoi(argv[1]);
	verb = argv[2];
	if (target <= 0)
		return usage();
	if (!strcmp(verb, "uid") && argc == 3) {
		attach();
		rc = call(SYS_getuid, 0, 0, 0, 0);
	} else if (!strcmp(verb, "open") && argc == 5) {
		const char *m = argv[4];
		int flags = !strcmp(m, "r")    ? O_RDONLY
			    : !strcmp(m, "w")  ? O_WRONLY
			    : !strcmp(m, "rw") ? O_RDWR
			    : !strcmp(m, "new") ? O_WRONLY | O_CREAT | O_EXCL
						: -1;
		if (flags < 0)
			return usage();
		attach();
		rc = call(SYS_openat, (unsigned long)AT_FDCWD, put_path(argv[3]),
			  (unsigned long)(flags | O_CLOEXEC | O_NOCTTY), 0644);
		if (rc >= 0)
			call(SYS_close, (unsigned long)rc, 0, 0, 0);
	} else if (!strcmp(verb, "chmod") && argc == 5) {
		unsigned long mode = strtoul(argv[4], NULL, 8);
		attach();
		rc = call(SYS_fchmodat, (unsigned long)AT_FDCWD, put_path(argv[3]), mode, 0);
	} else if (!strcmp(verb, "connect") && argc == 4) {
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		long fd;

		if (strlen(argv[3]) >= sizeof(sa.sun_path))
			return usage();
		strcpy(sa.sun_path, argv[3]);
		attach();
		fd = call(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, 0);
		if (fd < 0) {
			rc = fd;
		} else {
			rc = call(SYS_connect, (unsigned long)fd, put(&sa, sizeof(sa)), sizeof(sa), 0);
			call(SYS_close, (unsigned long)fd, 0, 0, 0);
		}
	} else if (!strcmp(verb, "prlimit") && argc == 4) {
		attach();
		rc = call(SYS_prlimit64, (unsigned long)atol(argv[3]), RLIMIT_NOFILE, 0, 0);
	} else if (!strcmp(verb, "stall") && argc == 4 && atol(argv[3]) > 0) {
		stall(atol(argv[3]));
		return 0;
	} else if (!strcmp(verb, "tgkill") && argc == 4) {
		long t = atol(argv[3]);
		attach();
		rc = call(SYS_tgkill, (unsigned long)t, (unsigned long)t, 0, 0);
	} else {
		return usage();
	}
	detach();
	report(rc);
	return 0;
}

#else

int main(void)
{
	fputs("intrude: x86-64 only\n", stderr);
	return 77;
}

#endif
