/* privhostile: speak the privileged process's protocol as a compromised collector would.
 *
 *   privhostile CONFIG credit SECONDS [DIR]
 *                                       forge ADD_ENTROPY (512 bytes, 4096 bits each) for
 *                                       SECONDS; print what was asked and credited; with
 *                                       DIR, first make 8 more input FIFOs there
 *   privhostile CONFIG CASE             one hostile message (see build()); the privileged
 *                                       process must close the connection, hand over no
 *                                       descriptor and exit 4 (EXIT_LOST)
 *   privhostile CONFIG packet           a valid PACKET_SOCKET (on lo): a descriptor comes back
 *   privhostile CONFIG packets N        N PACKET_SOCKETs for lo: 1 + PRIV_PACKET_SPARE
 *                                       answered, each under a locked filter, every one
 *                                       but the last made deaf (bound to the protocol its
 *                                       filter drops), the rest refused (EAGAIN)
 *   privhostile CONFIG perfs N [hold]   N PERF_OPENs of a disk event on CPU 0, each enabled
 *                                       (no device filter: every completion of every disk):
 *                                       what the budget allows comes, the rest is refused
 *                                       (EAGAIN); prints how many, and how many perf events
 *                                       this process holds (/proc/self/fd); with hold, keeps
 *                                       them until its standard input ends
 *   privhostile CONFIG refused CASE     a well-formed request that CONFIG does not allow
 *                                       (perf, packet, blktrace:NAME:MAJOR:MINOR,
 *                                       input:NAME): refused
 *                                       with EACCES and no descriptor, twice, the connection
 *                                       kept; exit 0 when this end closes it
 *
 * Each run forks the real privileged loop (priv_serve, on /dev/random) on one end of a
 * socketpair, with CONFIG as its configuration. Prints one line; exits 0 if the privileged
 * process behaved, 1 if not, 2 on a usage error. Run it under strace -f -e trace=ioctl to
 * see what reached the kernel. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/perf_event.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "block_tp.h"
#include "config.h"
#include "daemon.h"
#include "log.h"
#include "priv.h"
#include "priv_filter.h"
#include "priv_ops.h"
#include "priv_policy.h"
#include "priv_serve.h"
#include "util.h"

static int sock = -1;
static pid_t priv = -1;

static void start(const char *path)
{
	struct config_errors errs = {0};
	struct config *cfg = config_load(path, &errs);
	int sv[2], rnd;

	if (!cfg) {
		fprintf(stderr, "privhostile: %s: %s\n", path, errs.n ? errs.msg[0] : "invalid");
		exit(2);
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("privhostile: socketpair");
		exit(2);
	}
	priv = fork();
	if (priv < 0) {
		perror("privhostile: fork");
		exit(2);
	}
	if (priv == 0) {
		close(sv[1]);
		rnd = open("/dev/random", O_WRONLY | O_CLOEXEC);
		_exit(priv_serve(sv[0], cfg, path, rnd, 0));
	}
	close(sv[0]);
	config_free(cfg);
	sock = sv[1];
}

/* Send len bytes of msg, with fd attached if >= 0. */
static void sendraw(void *msg, size_t len, int fd)
{
	if (util_send_with_fd(sock, msg, len, fd) != (ssize_t)len) {
		perror("privhostile: send");
		exit(1);
	}
}

/* The reply, and the descriptor with it (or -1); 0 bytes at EOF. */
static ssize_t reply(struct priv_reply *rep, int *fd)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct iovec iov = {.iov_base = rep, .iov_len = sizeof(*rep)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

	*fd = -1;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); n >= 0 && cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(cm), sizeof(*fd));
	return n;
}

static void hdr(struct priv_hdr *h, unsigned type, size_t size)
{
	h->version = PRIV_VERSION;
	h->type = (uint16_t)type;
	h->size = (uint32_t)size;
}

static int priv_status(void)
{
	int ws;

	close(sock);
	if (waitpid(priv, &ws, 0) < 0)
		return -1;
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static double now_s(void)
{
	return (double)util_mono_ns() / 1e9;
}

/* As a collector (uid 0) could: more input nodes (FIFOs) in dir, once the privileged
 * process is answering, so that it would count more instances. */
static void more_nodes(const char *dir)
{
	struct priv_hdr h;
	struct priv_reply rep;
	char path[4096];
	int fd;

	hdr(&h, PRIV_RESEED, sizeof(h));
	sendraw(&h, sizeof(h), -1);
	if (reply(&rep, &fd) != (ssize_t)sizeof(rep)) {
		printf("FAIL: RESEED got no reply\n");
		exit(1);
	}
	for (int i = 100; i < 108; i++) {
		snprintf(path, sizeof(path), "%s/event%d", dir, i);
		if (mkfifo(path, 0600) < 0) {
			perror("privhostile: mkfifo");
			exit(2);
		}
	}
}

static int credit(double seconds, const char *dir)
{
	struct req_entropy req;
	struct priv_reply rep;
	unsigned long long asked = 0, credited = 0, batches = 0;
	double t0, t;
	int fd, st;

	if (dir)
		more_nodes(dir);
	t0 = now_s();

	memset(&req, 0, sizeof(req));
	hdr(&req.h, PRIV_ADD_ENTROPY, sizeof(req));
	req.len = sizeof(req.data);
	req.bits = (int32_t)(8 * sizeof(req.data));
	while ((t = now_s() - t0) < seconds) {
		sendraw(&req, sizeof(req), -1);
		if (reply(&rep, &fd) != (ssize_t)sizeof(rep) || fd >= 0 || rep.err) {
			printf("FAIL: ADD_ENTROPY got no clean reply (err %d)\n", rep.err);
			return 1;
		}
		asked += (unsigned long long)req.bits;
		credited += (unsigned long long)rep.value;
		batches++;
		usleep(20000);
	}
	t = now_s() - t0;
	st = priv_status();
	printf("credit: %llu batches, %llu bits asked, %llu credited in %.3f s; exit %d\n",
	       batches, asked, credited, t, st);
	return st == 0 ? 0 : 1;
}

struct hostile {
	const char *name;
	union {
		union priv_req req;
		char raw[sizeof(union priv_req) + 16];
	} m;
	size_t len;
	bool with_fd;
};

static bool build(const char *name, struct hostile *h)
{
	memset(h, 0, sizeof(*h));
	h->name = name;
	if (strcmp(name, "oversized") == 0) {
		hdr(&h->m.req.h, PRIV_ADD_ENTROPY, sizeof(struct req_entropy) + 16);
		h->len = sizeof(struct req_entropy) + 16;
	} else if (strcmp(name, "truncated") == 0) {
		hdr(&h->m.req.h, PRIV_ADD_ENTROPY, sizeof(struct req_entropy));
		h->len = sizeof(struct req_entropy) - 100;
	} else if (strcmp(name, "short") == 0) {
		h->len = 3;
	} else if (strcmp(name, "unknown-type") == 0) {
		hdr(&h->m.req.h, 99, sizeof(struct priv_hdr));
		h->len = sizeof(struct priv_hdr);
	} else if (strcmp(name, "unknown-version") == 0) {
		hdr(&h->m.req.h, PRIV_RESEED, sizeof(struct priv_hdr));
		h->m.req.h.version = PRIV_VERSION + 1;
		h->len = sizeof(struct priv_hdr);
	} else if (strcmp(name, "size-lie") == 0) {
		hdr(&h->m.req.h, PRIV_RESEED, sizeof(struct req_entropy));
		h->len = sizeof(struct priv_hdr);
	} else if (strcmp(name, "bits-beyond-bytes") == 0) {
		hdr(&h->m.req.h, PRIV_ADD_ENTROPY, sizeof(struct req_entropy));
		h->m.req.entropy.len = 8;
		h->m.req.entropy.bits = 65;
		h->len = sizeof(struct req_entropy);
	} else if (strcmp(name, "negative-bits") == 0) {
		hdr(&h->m.req.h, PRIV_ADD_ENTROPY, sizeof(struct req_entropy));
		h->m.req.entropy.len = 8;
		h->m.req.entropy.bits = -1;
		h->len = sizeof(struct req_entropy);
	} else if (strcmp(name, "too-many-bytes") == 0) {
		hdr(&h->m.req.h, PRIV_ADD_ENTROPY, sizeof(struct req_entropy));
		h->m.req.entropy.len = PRIV_ENTROPY_BYTES + 1;
		h->len = sizeof(struct req_entropy);
	} else if (strcmp(name, "perf-no-such-cpu") == 0) {
		hdr(&h->m.req.h, PRIV_PERF_OPEN, sizeof(struct req_perf));
		h->m.req.perf.cpu = 100000;
		h->len = sizeof(struct req_perf);
	} else if (strcmp(name, "perf") == 0) {
		hdr(&h->m.req.h, PRIV_PERF_OPEN, sizeof(struct req_perf));
		h->len = sizeof(struct req_perf);
	} else if (strcmp(name, "perf-bad-kind") == 0) {
		hdr(&h->m.req.h, PRIV_PERF_OPEN, sizeof(struct req_perf));
		h->m.req.perf.what = 7;
		h->len = sizeof(struct req_perf);
	} else if (strncmp(name, "blktrace:", 9) == 0) {
		/* blktrace:NAME:MAJOR:MINOR */
		unsigned major = 0, minor = 0;
		char disk[PRIV_DISK_NAME] = "";

		hdr(&h->m.req.h, PRIV_BLKTRACE_START, sizeof(struct req_blkt));
		if (sscanf(name + 9, "%31[^:]:%u:%u", disk, &major, &minor) != 3)
			return false;
		strlcopy(h->m.req.blkt.name, disk, sizeof(h->m.req.blkt.name));
		h->m.req.blkt.major = major;
		h->m.req.blkt.minor = minor;
		h->len = sizeof(struct req_blkt);
	} else if (strcmp(name, "blktrace-path") == 0) {
		hdr(&h->m.req.h, PRIV_BLKTRACE_START, sizeof(struct req_blkt));
		strlcopy(h->m.req.blkt.name, "../../dev/sda", sizeof(h->m.req.blkt.name));
		h->len = sizeof(struct req_blkt);
	} else if (strcmp(name, "blktrace-stop-foreign") == 0) {
		hdr(&h->m.req.h, PRIV_BLKTRACE_STOP, sizeof(struct req_blkt));
		strlcopy(h->m.req.blkt.name, "loop0", sizeof(h->m.req.blkt.name));
		h->m.req.blkt.major = 7;
		h->m.req.blkt.teardown = 1;
		h->len = sizeof(struct req_blkt);
	} else if (strcmp(name, "packet-stream") == 0 || strcmp(name, "packet") == 0 ||
		   strcmp(name, "packet-protocol") == 0) {
		hdr(&h->m.req.h, PRIV_PACKET_SOCKET, sizeof(struct req_packet));
		h->m.req.packet.type = strcmp(name, "packet-stream") == 0 ? SOCK_STREAM : SOCK_RAW;
		h->m.req.packet.protocol = strcmp(name, "packet-protocol") == 0 ? 0x0300 : 0;
		h->m.req.packet.ifindex = if_nametoindex("lo");
		h->len = sizeof(struct req_packet);
	} else if (strcmp(name, "packet-no-interface") == 0) {
		hdr(&h->m.req.h, PRIV_PACKET_SOCKET, sizeof(struct req_packet));
		h->m.req.packet.type = SOCK_RAW;
		h->len = sizeof(struct req_packet);
	} else if (strncmp(name, "input:", 6) == 0) {
		hdr(&h->m.req.h, PRIV_INPUT_OPEN, sizeof(struct req_input));
		strlcopy(h->m.req.input.name, name + 6, sizeof(h->m.req.input.name));
		h->len = sizeof(struct req_input);
	} else if (strcmp(name, "input-path") == 0 || strcmp(name, "input-not-event") == 0) {
		hdr(&h->m.req.h, PRIV_INPUT_OPEN, sizeof(struct req_input));
		strlcopy(h->m.req.input.name,
			 strcmp(name, "input-path") == 0 ? "event0/../../../etc/shadow" : "shadow",
			 sizeof(h->m.req.input.name));
		h->len = sizeof(struct req_input);
	} else if (strcmp(name, "notify-unprintable") == 0) {
		hdr(&h->m.req.h, PRIV_NOTIFY, sizeof(struct req_notify));
		h->m.req.notify.what = PRIV_N_STATUS;
		strlcopy(h->m.req.notify.text, "ok\nREADY=1", sizeof(h->m.req.notify.text));
		h->len = sizeof(struct req_notify);
	} else if (strcmp(name, "notify-unterminated") == 0) {
		hdr(&h->m.req.h, PRIV_NOTIFY, sizeof(struct req_notify));
		h->m.req.notify.what = PRIV_N_STATUS;
		memset(h->m.req.notify.text, 'a', sizeof(h->m.req.notify.text));
		h->len = sizeof(struct req_notify);
	} else if (strcmp(name, "with-descriptor") == 0) {
		hdr(&h->m.req.h, PRIV_RESEED, sizeof(struct priv_hdr));
		h->len = sizeof(struct priv_hdr);
		h->with_fd = true;
	} else {
		return false;
	}
	return true;
}

static int fds_open(void)
{
	char path[64];
	int n = 0;

	for (int fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n += access(path, F_OK) == 0;
	}
	return n;
}

static int hostile(const char *name)
{
	struct hostile h;
	struct priv_reply rep;
	ssize_t n;
	int fd, st, before;

	if (!build(name, &h)) {
		fprintf(stderr, "privhostile: unknown case %s\n", name);
		return 2;
	}
	before = fds_open();
	sendraw(&h.m, h.len, h.with_fd ? STDIN_FILENO : -1);
	n = reply(&rep, &fd);
	st = priv_status();
	if (strcmp(name, "packet") == 0) {
		/* The positive control: a valid request is answered, with a packet socket. */
		int type = 0;
		socklen_t len = sizeof(type);
		bool ok = n == (ssize_t)sizeof(rep) && rep.err == 0 && fd >= 0 &&
			  getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_RAW;

		printf("%s: packet: reply %zd bytes, err %d, descriptor %s; exit %d\n",
		       ok ? "PASS" : "FAIL", n, rep.err, fd >= 0 ? "received" : "none", st);
		return ok && st == 0 ? 0 : 1;
	}
	if (n != 0 || fd >= 0 || st != EXIT_LOST || fds_open() != before - 1) {
		printf("FAIL: %s: reply %zd bytes, descriptor %s, exit %d\n", name, n,
		       fd >= 0 ? "received" : "none", st);
		return 1;
	}
	printf("PASS: %s: connection closed, no descriptor, exit %d\n", name, st);
	return 0;
}

/* N packet sockets for lo, as a collector that wants more than the interfaces selected
 * (one: lo): 1 + PRIV_PACKET_SPARE come, each under a filter no one can remove
 * (SO_LOCK_FILTER), and only the last of them hears anything: bound to lo for every
 * protocol, the others to PRIV_FILTER_DEAF alone, which their filter drops; every request
 * after them is refused with EAGAIN, no descriptor, the connection kept. */
static int packets(int n)
{
	struct hostile h;
	struct priv_reply rep;
	int fds[64], got = 0, locked = 0, deaf = 0, refused = 0, want = 1 + PRIV_PACKET_SPARE, st;
	bool ok;

	if (n < 2 || n > 64 || !build("packet", &h))
		return 2;
	for (int i = 0; i < n; i++) {
		int fd = -1;

		sendraw(&h.m, h.len, -1);
		if (reply(&rep, &fd) != (ssize_t)sizeof(rep))
			break;
		if (!rep.err && fd >= 0)
			fds[got++] = fd;
		else if (rep.err == EAGAIN && fd < 0)
			refused++;
		else if (fd >= 0)
			close(fd);
	}
	for (int i = 0; i < got; i++) {
		struct sockaddr_ll sll;
		int v = 0;
		socklen_t len = sizeof(v), sl = sizeof(sll);

		if (getsockopt(fds[i], SOL_SOCKET, SO_LOCK_FILTER, &v, &len) == 0 && v)
			locked++;
		if (getsockname(fds[i], (struct sockaddr *)&sll, &sl) == 0 &&
		    sll.sll_protocol == htons(PRIV_FILTER_DEAF))
			deaf += i < got - 1 ? 1 : 100; /* the last one must hear */
		else if (i == got - 1 && !(sll.sll_protocol == htons(ETH_P_ALL) &&
					   sll.sll_ifindex == (int)if_nametoindex("lo")))
			deaf += 100; /* nor hear anything but lo */
		close(fds[i]);
	}
	st = priv_status();
	want = n < want ? n : want;
	ok = got == want && locked == got && deaf == got - 1 && refused == n - got && st == 0;
	printf("%s: packets: %d of %d answered (want %d), %d under a locked filter, %d deaf for "
	       "good, %d refused with EAGAIN (want %d); exit %d\n",
	       ok ? "PASS" : "FAIL", got, n, want, locked, deaf, refused, n - want, st);
	return ok ? 0 : 1;
}

/* The perf events this process holds, as the kernel lists its descriptors. */
static int perf_fds(void)
{
	char path[64], link[64];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		n += strcmp(link, "anon_inode:[perf_event]") == 0;
	}
	return n;
}

/* N disk events on CPU 0, as a collector that floods the kernel with them: the budget's
 * come (enabled), every other request is refused with EAGAIN, no descriptor, the
 * connection kept. */
static int perfs(int n, bool hold)
{
	struct req_perf req;
	struct priv_reply rep;
	int got = 0, refused_n = 0, other = 0, held, st;
	double t0 = now_s();
	char c;

	memset(&req, 0, sizeof(req));
	hdr(&req.h, PRIV_PERF_OPEN, sizeof(req));
	req.cpu = 0;
	req.what = PRIV_PERF_DISK;
	for (int i = 0; i < n; i++) {
		int fd = -1;

		sendraw(&req, sizeof(req), -1);
		if (reply(&rep, &fd) != (ssize_t)sizeof(rep))
			break;
		if (!rep.err && fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) == 0)
			got++; /* kept open and enabled, as the attack would */
		else if (rep.err == EAGAIN && fd < 0)
			refused_n++;
		else
			other++;
	}
	held = perf_fds();
	printf("perfs: %d of %d handed over and enabled, %d refused with EAGAIN, %d otherwise; "
	       "%d perf events held; in %.3f s\n",
	       got, n, refused_n, other, held, now_s() - t0);
	fflush(stdout);
	if (hold)
		while (read(STDIN_FILENO, &c, 1) > 0)
			;
	st = priv_status();
	return got > 0 && refused_n == n - got && held == got && st == 0 ? 0 : 1;
}

/* A request the configuration does not allow, sent twice: each refused (EACCES, no
 * descriptor), the connection kept; the privileged process ends cleanly when we close. */
static int refused(const char *name)
{
	struct hostile h;
	struct priv_reply rep;
	ssize_t n;
	int fd, st, got = 0;

	if (!build(name, &h)) {
		fprintf(stderr, "privhostile: unknown case %s\n", name);
		return 2;
	}
	for (int i = 0; i < 2; i++) {
		sendraw(&h.m, h.len, -1);
		n = reply(&rep, &fd);
		if (fd >= 0)
			close(fd);
		if (n != (ssize_t)sizeof(rep) || fd >= 0 || rep.err != EACCES)
			break;
		got++;
	}
	st = priv_status();
	if (got != 2 || st != 0) {
		printf("FAIL: %s: %d of 2 refused with EACCES and no descriptor; exit %d\n", name,
		       got, st);
		return 1;
	}
	printf("PASS: %s: refused twice (EACCES), no descriptor, connection kept; exit %d\n", name,
	       st);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[2], "credit") == 0 && argc != 4 && argc != 5) ||
	    ((strcmp(argv[2], "refused") == 0 || strcmp(argv[2], "packets") == 0) && argc != 4)) {
		fputs("usage: privhostile CONFIG credit SECONDS [DIR] | privhostile CONFIG CASE | "
		      "privhostile CONFIG refused CASE\n",
		      stderr);
		return 2;
	}
	log_open(true, 0);
	if (strcmp(argv[2], "perfs") == 0) {
		unsigned id;
		char err[256];

		if (argc < 4 || !block_tp_tracepoint_id(&id, err, sizeof(err))) {
			fprintf(stderr, "privhostile: perfs: %s\n", argc < 4 ? "N?" : err);
			return 2;
		}
		priv_ops_tracepoint(id); /* read before the fork, as the daemon does */
		start(argv[1]);
		return perfs(atoi(argv[3]), argc == 5 && strcmp(argv[4], "hold") == 0);
	}
	start(argv[1]);
	if (strcmp(argv[2], "credit") == 0)
		return credit(atof(argv[3]), argc == 5 ? argv[4] : NULL);
	if (strcmp(argv[2], "refused") == 0)
		return refused(argv[3]);
	if (strcmp(argv[2], "packets") == 0 && argc == 4)
		return packets(atoi(argv[3]));
	return hostile(argv[2]);
}
