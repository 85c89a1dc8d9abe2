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
 *                                      dies: prints "sent K" (unless it died first), then
 *                                      how it died
 * On the process's packet socket (the first it holds):
 *   intrude PID promisc IFINDEX        setsockopt PACKET_ADD_MEMBERSHIP, PACKET_MR_PROMISC
 *   intrude PID detach                 setsockopt SO_DETACH_FILTER
 *   intrude PID attach                 setsockopt SO_ATTACH_FILTER, a program that keeps all
 *   intrude PID copythresh             setsockopt PACKET_COPY_THRESH 1 (whole frames queued
 *                                      beside the ring)
 *   intrude PID fanout                 setsockopt PACKET_FANOUT (join group 1)
 *   intrude PID sendfd                 sendmsg of it (SCM_RIGHTS) on a new socketpair
 *   intrude PID bind IFINDEX           bind to IFINDEX (0: every interface), ETH_P_ALL
 *   intrude PID filter                 its socket filter's interface check: "ifindex N"
 *   intrude PID locked                 getsockopt SO_LOCK_FILTER: "locked 1" (or 0)
 * On its socket to entropyd's privileged process (the first SOCK_SEQPACKET it holds):
 *   intrude PID perf N                 N PERF_OPEN requests (a disk event on CPU 0), each
 *                                      one given enabled: the first refusal, and how many
 *                                      came before it
 *
 * The call is made by the process itself (ptrace: its registers set to the call at a system
 * call instruction of its own, run from the call's entry to its exit with PTRACE_SYSCALL,
 * its registers put back), so its user, namespaces, root, capability sets, no_new_privs,
 * seccomp filters and Landlock rules all apply, and the process goes on as before. What
 * the call opened is closed again in the process. The registers and the instruction of
 * each architecture are in intrude_arch.h: x86-64, aarch64 and 32-bit arm (EABI).
 *
 * Prints the call's result: "0", a descriptor's number, or "-ERRNO NAME" (e.g. "-13
 * EACCES"); if the process died of the call, "killed by signal N (NAME)". Exits 0 when the
 * call was made, 1 when it could not be, 77 on an architecture it does not know (not in
 * intrude_arch.h), 2 on a usage error. A test helper: statically linked, it runs where the tests'
 * shells do (the host, a container, an initramfs) with nothing beside it. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/priv_wire.h" /* the messages, as the collector sends them */
#include "intrude_arch.h"

#ifdef INTRUDE_ARCH

static pid_t target;
static arch_regs saved;
static unsigned long syscall_insn; /* the address of a syscall instruction in the target */
static const struct arch_insn *syscall_kind; /* and which encoding it is */

static void die(const char *what)
{
	fprintf(stderr, "intrude: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Whether the target holds the instruction insn at addr. */
static bool insn_at(unsigned long addr, const struct arch_insn *insn)
{
	unsigned char b[sizeof(long)];
	long w;

	if (addr % insn->len)
		return false;
	errno = 0;
	w = ptrace(PTRACE_PEEKTEXT, target, (void *)addr, NULL);
	if (errno)
		return false;
	memcpy(b, &w, sizeof(b));
	return !memcmp(b, insn->bytes, insn->len);
}

/* A system call instruction of the target's own: the one it is stopped after, when the
 * architecture's registers say it was stopped in a call (as a daemon in its event loop
 * is), or else one in the pages the kernel maps into every process: the vDSO, and arm's
 * page of signal return code (an arm64 kernel's 32-bit processes may have no vDSO). */
static unsigned long find_syscall_insn(void)
{
	const size_t ninsns = sizeof(arch_insns) / sizeof(arch_insns[0]);
	char path[64], line[256];
	unsigned long lo, hi, a, pc = arch_pc(&saved);
	FILE *maps;

	for (size_t i = 0; i < ninsns && arch_after_call(&saved); i++)
		if (pc >= arch_insns[i].len && insn_at(pc - arch_insns[i].len, &arch_insns[i])) {
			syscall_kind = &arch_insns[i];
			return pc - arch_insns[i].len;
		}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)target);
	if (!(maps = fopen(path, "re")))
		die(path);
	while (fgets(line, sizeof(line), maps)) {
		if ((!strstr(line, "[vdso]") && !strstr(line, "[sigpage]")) ||
		    sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		for (a = lo; a + sizeof(long) <= hi; a++)
			for (size_t i = 0; i < ninsns; i++)
				if (insn_at(a, &arch_insns[i])) {
					fclose(maps);
					syscall_kind = &arch_insns[i];
					return a;
				}
	}
	fclose(maps);
	errno = ENOEXEC;
	die("no system call instruction in the process");
	return 0;
}

static void attach(void)
{
	int status;

	if (ptrace(PTRACE_SEIZE, target, NULL, (void *)PTRACE_O_TRACESYSGOOD) < 0)
		die("PTRACE_SEIZE");
	if (ptrace(PTRACE_INTERRUPT, target, NULL, NULL) < 0)
		die("PTRACE_INTERRUPT");
	if (waitpid(target, &status, __WALL) < 0)
		die("waitpid");
	if (!WIFSTOPPED(status)) {
		errno = ESRCH;
		die("the process did not stop");
	}
	if (arch_get_regs(target, &saved) < 0)
		die("PTRACE_GETREGSET");
	syscall_insn = find_syscall_insn();
}

static void detach(void)
{
	if (arch_set_regs(target, &saved) < 0)
		die("PTRACE_SETREGSET (restoring)");
	if (ptrace(PTRACE_DETACH, target, NULL, NULL) < 0)
		die("PTRACE_DETACH");
}

/* An address depth bytes below the target's stack pointer (past any red zone). */
static unsigned long scratch(size_t depth)
{
	return (arch_sp(&saved) - ARCH_RED_ZONE - depth) & ~15UL;
}

/* Copy len bytes into the target at at. */
static unsigned long put_at(unsigned long at, const void *data, size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(long)) {
		long w = 0;
		memcpy(&w, (const char *)data + i, len - i < sizeof(long) ? len - i : sizeof(long));
		if (ptrace(PTRACE_POKEDATA, target, (void *)(at + i), (void *)w) < 0)
			die("PTRACE_POKEDATA");
	}
	return at;
}

/* Copy len bytes below the target's stack pointer and return their address there. Each
 * call's data is placed afresh: one call, one buffer. */
static unsigned long put(const void *data, size_t len)
{
	return put_at(scratch(4096 + len), data, len);
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

/* Whether SIGSYS is pending for the target (its status's SigPnd or ShdPnd): a call its
 * system call filter kills it for is skipped, and SIGSYS forced on it, at the call's exit. */
static bool sigsys_pending(void)
{
	char path[64], line[256];
	unsigned long long mask;
	bool pending = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)target);
	if (!(f = fopen(path, "re")))
		die(path);
	while (fgets(line, sizeof(line), f))
		if ((sscanf(line, "SigPnd: %llx", &mask) == 1 || sscanf(line, "ShdPnd: %llx", &mask) == 1) &&
		    mask & 1ULL << (SIGSYS - 1))
			pending = true;
	fclose(f);
	return pending;
}

/* Let the pending SIGSYS be delivered, as it would be without us: it ends the process
 * (gone() says so and exits). */
static void let_sigsys_come(void)
{
	int status, sig = 0;

	for (int i = 0; i < 8; i++) {
		if (ptrace(PTRACE_SYSCALL, target, NULL, (void *)(long)sig) < 0)
			die("PTRACE_SYSCALL");
		if (waitpid(target, &status, __WALL) < 0)
			die("waitpid");
		gone(status);
		sig = WIFSTOPPED(status) && status >> 16 == 0 && WSTOPSIG(status) != (SIGTRAP | 0x80)
			      ? WSTOPSIG(status)
			      : 0;
	}
	errno = EAGAIN;
	die("SIGSYS was pending, and the process lives on");
}

/* One system call in the target; its result, or exit if the call killed it. */
static long call5(long nr, unsigned long a0, unsigned long a1, unsigned long a2,
		  unsigned long a3, unsigned long a4)
{
	const unsigned long a[6] = {a0, a1, a2, a3, a4, 0};
	arch_regs r = saved;
	bool entered = false;
	int status, sig = 0;

	arch_set_call(&r, nr, a, syscall_insn, syscall_kind);
	if (arch_set_regs(target, &r) < 0)
		die("PTRACE_SETREGSET");
	/* Run to its entry (where the registers show it just past our instruction), then to
	 * its exit; a signal that came meanwhile is passed on. */
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, target, NULL, (void *)(long)sig) < 0)
			die("PTRACE_SYSCALL");
		if (waitpid(target, &status, __WALL) < 0)
			die("waitpid");
		gone(status);
		sig = 0;
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) != (SIGTRAP | 0x80)) {
			if (status >> 16 == 0) /* a signal, not one of ptrace's own stops */
				sig = WSTOPSIG(status);
			continue;
		}
		if (arch_get_regs(target, &r) < 0)
			die("PTRACE_GETREGSET");
		if (entered)
			break;
		entered = arch_pc(&r) == syscall_insn + syscall_kind->len;
	}
	if (sigsys_pending())
		let_sigsys_come();
	return arch_result(&r);
}

#define call(nr, a0, a1, a2, a3) call5((nr), (a0), (a1), (a2), (a3), 0)

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
	/* sendto(), as the collector's own requests go (send()); sendmsg() is no call of its.
	 * A full queue (EAGAIN) says only that the privileged process has not read them yet: on a
	 * busy machine it may then drain them all and have room for every reply, which would end
	 * the stall before the replies fill the collector's queue. So wait for room, up to a
	 * minute in all, and go on. */
	for (int waits = 0; sent < n && waits < 6000;) {
		rc = call(SYS_sendto, (unsigned long)fd, at, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL);
		if (rc == (long)sizeof(h))
			sent++;
		else if (rc == -EAGAIN) {
			waits++;
			usleep(10000);
		} else
			break;
	}
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

/* Copy len bytes from the target at addr. */
static void get(unsigned long addr, void *data, size_t len)
{
	for (size_t i = 0; i < len; i += sizeof(long)) {
		long w;

		errno = 0;
		w = ptrace(PTRACE_PEEKDATA, target, (void *)(addr + i), NULL);
		if (errno)
			die("PTRACE_PEEKDATA");
		memcpy((char *)data + i, &w, len - i < sizeof(long) ? len - i : sizeof(long));
	}
}

/* The target's first descriptor (below 1024) of a socket of this domain and type; exits
 * if it has none. */
static long find_socket(int domain, int type)
{
	int v[2] = {0, sizeof(int)};

	for (long fd = 0; fd < 1024; fd++) {
		unsigned long at = put(v, sizeof(v));
		int got[2];

		if (call5(SYS_getsockopt, (unsigned long)fd, SOL_SOCKET, SO_DOMAIN, at, at + 4) < 0)
			continue;
		get(at, got, sizeof(got));
		if (got[0] != domain)
			continue;
		at = put(v, sizeof(v));
		if (call5(SYS_getsockopt, (unsigned long)fd, SOL_SOCKET, SO_TYPE, at, at + 4) < 0)
			continue;
		get(at, got, sizeof(got));
		if (got[0] == type)
			return fd;
	}
	detach();
	fprintf(stderr, "intrude: the process holds no socket of domain %d, type %d\n", domain,
		type);
	exit(1);
}

static long sockopt(long fd, int level, int name, const void *val, size_t len)
{
	return call5(SYS_setsockopt, (unsigned long)fd, (unsigned long)level, (unsigned long)name,
		     put(val, len), len);
}

/* A message with room for one descriptor, laid out in the target at at (scratch(8192)):
 * what recvmsg() and sendmsg() are given. */
struct fd_msg {
	struct msghdr mh;
	struct iovec iov;
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} c;
	struct priv_reply rep;
};

static void fd_msg_init(struct fd_msg *m, unsigned long at)
{
	memset(m, 0, sizeof(*m));
	m->iov = (struct iovec){.iov_base = (void *)(at + offsetof(struct fd_msg, rep)),
				.iov_len = sizeof(m->rep)};
	m->mh = (struct msghdr){.msg_iov = (void *)(at + offsetof(struct fd_msg, iov)),
				.msg_iovlen = 1,
				.msg_control = (void *)(at + offsetof(struct fd_msg, c)),
				.msg_controllen = sizeof(m->c.buf)};
}

/* PERF_OPEN requests on the privileged process's socket, each descriptor enabled and kept:
 * the first refusal (with the count before it), or 0 if none was refused. */
static long perf_flood(int n, int *got)
{
	long sock = seqpacket_fd();
	struct req_perf req = {.h = {.version = PRIV_VERSION, .type = PRIV_PERF_OPEN,
				     .size = sizeof(struct req_perf)},
			       .what = PRIV_PERF_DISK};
	unsigned long at = scratch(8192);
	struct fd_msg m;
	long rc;

	*got = 0;
	for (int i = 0; i < n; i++) {
		int fd = -1;

		rc = call5(SYS_sendto, (unsigned long)sock, put(&req, sizeof(req)), sizeof(req), 0, 0);
		if (rc < 0)
			return rc;
		fd_msg_init(&m, at);
		put_at(at, &m, sizeof(m));
		rc = call(SYS_recvmsg, (unsigned long)sock, at, MSG_CMSG_CLOEXEC, 0);
		if (rc < 0)
			return rc;
		get(at, &m, sizeof(m));
		if (m.c.align.cmsg_level == SOL_SOCKET && m.c.align.cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(&m.c.align), sizeof(fd));
		if (m.rep.err)
			return -m.rep.err;
		if (fd < 0)
			return -ENOENT;
		call(SYS_ioctl, (unsigned long)fd, PERF_EVENT_IOC_ENABLE, 0, 0);
		(*got)++;
	}
	return 0;
}

static int usage(void);

/* The calls on the packet socket (see the top); false if verb is none of them. */
static bool packet_verb(const char *verb, int argc, char **argv, long *rc)
{
	static const struct sock_filter keep_all = BPF_STMT(BPF_RET | BPF_K, 0xffffffffu);
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	struct packet_mreq mr = {.mr_type = PACKET_MR_PROMISC};
	int one = 1, fanout = 1 | PACKET_FANOUT_HASH << 16;
	long fd;

	if (strcmp(verb, "promisc") && strcmp(verb, "detach") && strcmp(verb, "attach") &&
	    strcmp(verb, "copythresh") && strcmp(verb, "fanout") && strcmp(verb, "sendfd") &&
	    strcmp(verb, "bind") && strcmp(verb, "filter") && strcmp(verb, "locked"))
		return false;
	if (argc != ((!strcmp(verb, "promisc") || !strcmp(verb, "bind")) ? 4 : 3))
		exit(usage());
	attach();
	fd = find_socket(AF_PACKET, SOCK_RAW);
	if (!strcmp(verb, "promisc")) {
		mr.mr_ifindex = atoi(argv[3]);
		*rc = sockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr));
	} else if (!strcmp(verb, "detach")) {
		*rc = sockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &one, sizeof(one));
	} else if (!strcmp(verb, "attach")) {
		/* the program below where put() places the struct pointing to it */
		struct sock_fprog fp = {.len = 1,
					.filter = (void *)put_at(scratch(8192), &keep_all,
								 sizeof(keep_all))};

		*rc = sockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
	} else if (!strcmp(verb, "copythresh")) {
		*rc = sockopt(fd, SOL_PACKET, PACKET_COPY_THRESH, &one, sizeof(one));
	} else if (!strcmp(verb, "fanout")) {
		*rc = sockopt(fd, SOL_PACKET, PACKET_FANOUT, &fanout, sizeof(fanout));
	} else if (!strcmp(verb, "sendfd")) {
		int sv[2];
		unsigned long sv_at = put(sv, sizeof(sv));

		*rc = call(SYS_socketpair, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv_at);
		if (*rc == 0) {
			unsigned long at = scratch(8192);
			struct fd_msg m;
			int fdi = (int)fd;

			get(sv_at, sv, sizeof(sv));
			fd_msg_init(&m, at);
			m.c.align.cmsg_level = SOL_SOCKET;
			m.c.align.cmsg_type = SCM_RIGHTS;
			m.c.align.cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(&m.c.align), &fdi, sizeof(fdi));
			m.iov.iov_len = 1;
			put_at(at, &m, sizeof(m));
			*rc = call(SYS_sendmsg, (unsigned long)sv[0], at, 0, 0);
			call(SYS_close, (unsigned long)sv[0], 0, 0, 0);
			call(SYS_close, (unsigned long)sv[1], 0, 0, 0);
		}
	} else if (!strcmp(verb, "locked")) {
		int v[2] = {0, sizeof(int)}; /* the value, then its length */
		unsigned long at = put(v, sizeof(v));

		*rc = call5(SYS_getsockopt, (unsigned long)fd, SOL_SOCKET, SO_LOCK_FILTER, at,
			    at + sizeof(int));
		if (*rc == 0) {
			get(at, v, sizeof(v));
			detach();
			printf("locked %d\n", v[0]);
			exit(0);
		}
	} else if (!strcmp(verb, "bind")) {
		sll.sll_ifindex = atoi(argv[3]);
		*rc = call(SYS_bind, (unsigned long)fd, put(&sll, sizeof(sll)), sizeof(sll), 0);
	} else { /* filter: its length first (asked with none), then its first instructions */
		struct sock_filter prog[4];
		unsigned len[2] = {0, 0};
		unsigned long at = put(len, sizeof(len));
		unsigned long prog_at = scratch(12288);

		*rc = call5(SYS_getsockopt, (unsigned long)fd, SOL_SOCKET, SO_GET_FILTER, 0, at);
		if (*rc == 0) {
			get(at, len, sizeof(len));
			if (len[0] < 2 || len[0] > 512) {
				detach();
				printf("no interface check (a program of %u instructions)\n", len[0]);
				exit(0);
			}
			*rc = call5(SYS_getsockopt, (unsigned long)fd, SOL_SOCKET, SO_GET_FILTER,
				    prog_at, at);
		}
		if (*rc == 0) {
			get(prog_at, prog, sizeof(prog));
			detach();
			if (prog[0].code == (BPF_LD | BPF_W | BPF_ABS) &&
			    prog[0].k == (uint32_t)(SKF_AD_OFF + SKF_AD_IFINDEX) &&
			    prog[1].code == (BPF_JMP | BPF_JEQ | BPF_K))
				printf("ifindex %u\n", prog[1].k);
			else
				printf("no interface check\n");
			exit(0);
		}
	}
	return true;
}

static int usage(void)
{
	fputs("usage: intrude PID uid | open PATH r|w|rw|new | chmod PATH MODE | connect PATH | "
	      "prlimit TARGET | tgkill TARGET | stall N | promisc IFINDEX | detach | attach | "
	      "copythresh | fanout | sendfd | bind IFINDEX | filter | locked | perf N\n",
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
		rc = call(ARCH_SYS_GETUID, 0, 0, 0, 0);
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
	} else if (!strcmp(verb, "perf") && argc == 4) {
		int got;

		attach();
		rc = perf_flood(atoi(argv[3]), &got);
		detach();
		if (rc < 0 && rc > -4096)
			printf("%ld %s (after %d handed over)\n", rc, strerrorname_np((int)-rc) ?: "?",
			       got);
		else
			printf("%ld (all %d handed over)\n", rc, got);
		return 0;
	} else if (packet_verb(verb, argc, argv, &rc)) {
		/* done */
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
	fputs("intrude: x86-64, aarch64 and arm only\n", stderr);
	return 77;
}

#endif
