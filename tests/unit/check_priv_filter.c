/* check_priv_filter: the socket filter on every packet socket (priv_filter.c), in the kernel:
 * real packet sockets on lo, real datagrams through it. Needs CAP_NET_RAW (root), and says
 * so where it has not. */
#include "autoconf.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "filterfix.h"
#include "priv_filter.h"
#include "priv_filter_bpf.h"
#include "util.h"
#include "testutil.h"

#define PORT 9 /* discard: nothing answers, the datagram still crosses lo */

static bool can_capture(void)
{
	int fd = socket(AF_PACKET, SOCK_RAW, 0);

	if (fd < 0) {
		fprintf(stderr, "SKIP: packet sockets need CAP_NET_RAW (%s)\n", strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

/* The program arrays of the sockets open (priv_filter_attach()): the kernel empties one's
 * slot when the last descriptor of it closes, as the privileged process's does when it
 * drops a socket. */
static int arrays[8];
static size_t n_arrays;

static void arrays_close(void)
{
	while (n_arrays)
		close(arrays[--n_arrays]);
}

/* A packet socket on every interface (ifindex 0: as a collector that rebinds it) with the
 * filter for interface `ifindex`, direction and filter. */
static int guarded(unsigned ifindex, enum net_direction dir, const char *filter)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	struct priv_guard g = {.ifindex = ifindex, .direction = dir, .sock_type = SOCK_RAW,
			       .arphrd = 772 /* ARPHRD_LOOPBACK, as lo */, .filter = filter,
			       .keep = UINT32_MAX};
	struct sock_filter prog[BPF_MAXINSNS];
	struct sock_fprog fp = {.filter = prog};
	char err[256] = "";
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0), slots;

	ck_assert_int_ge(fd, 0);
	if (if_nametoindex("lo") == ifindex) { /* as the privileged process sets it */
		ck_assert_msg(priv_filter_attach(fd, ifindex, dir, filter, UINT32_MAX, &slots, err,
						sizeof(err)) == 0,
			      "%s", err);
		if (slots >= 0 && n_arrays < ARRAY_SIZE(arrays))
			arrays[n_arrays++] = slots;
	} else { /* an interface this machine may not have */
		fp.len = (unsigned short)priv_filter_program(&g, prog, err, sizeof(err));
		ck_assert_msg(fp.len > 0, "%s", err);
		ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)), 0);
	}
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	return fd;
}

static void send_udp(uint16_t port, size_t len)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char buf[512];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(buf, 'P', sizeof(buf)); /* the payload: never to be handed over */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	close(fd);
}

/* The next frame on fd (waiting for it, at most 10 s): its length as handed over (the
 * kernel's cut, MSG_TRUNC), its interface and type; false if none came. */
static bool next_frame(int fd, size_t *len, struct sockaddr_ll *from, uint8_t *buf, size_t size)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	socklen_t fl = sizeof(*from);
	ssize_t n;

	if (poll(&pfd, 1, 10000) != 1)
		return false;
	n = recvfrom(fd, buf, size, MSG_TRUNC, (struct sockaddr *)from, &fl);
	ck_assert_int_ge(n, 0);
	*len = (size_t)n;
	return true;
}

/* A frame of interest: UDP to PORT (IPv4 over lo's Ethernet header). */
static bool ours(const uint8_t *f, size_t len, uint16_t port)
{
	return len >= 14 + 20 && f[12] == 0x08 && f[13] == 0x00 && f[14 + 9] == 17 &&
	       (len < 14 + 24 || (f[14 + 22] << 8 | f[14 + 23]) == port);
}

/* Frames of the interface selected, in its direction, cut after the IP header; a socket
 * whose filter names another interface hears none of the same frames, though bound to all. */
START_TEST(test_guard_in_kernel)
{
	unsigned lo = if_nametoindex("lo");
	uint8_t buf[2048];
	struct sockaddr_ll from;
	size_t len;
	int in, other, out, got = 0;

	if (!can_capture())
		return;
	ck_assert_uint_gt(lo, 0);
	in = guarded(lo, DIR_IN, "udp dst port 9");
	other = guarded(lo + 1000, DIR_BOTH, "");
	out = guarded(lo, DIR_OUT, "");
	send_udp(PORT, 300);
	while (got == 0 && next_frame(in, &len, &from, buf, sizeof(buf))) {
		ck_assert_int_eq(from.sll_ifindex, (int)lo);
		ck_assert_int_ne(from.sll_pkttype, PACKET_OUTGOING);
		/* the administrator's filter: nothing but UDP to port 9 */
		ck_assert_msg(ours(buf, len, PORT), "a frame the filter rejects came (%zu bytes)", len);
		ck_assert_uint_eq(len, 14 + 20); /* no byte of UDP, let alone its payload */
		got++;
	}
	ck_assert_msg(got == 1, "the datagram over lo did not come");
	/* The other socket was offered the same frames in the same pass: it kept none. */
	ck_assert_int_eq(recv(other, buf, sizeof(buf), MSG_DONTWAIT), -1);
	ck_assert_int_eq(errno, EAGAIN);
	/* Direction out: the outgoing copy only, cut as well. */
	ck_assert(next_frame(out, &len, &from, buf, sizeof(buf)));
	for (;;) {
		socklen_t fl = sizeof(from);
		ssize_t n;

		ck_assert_int_eq(from.sll_pkttype, PACKET_OUTGOING);
		ck_assert_uint_le(len, PRIV_GUARD_BYTES);
		n = recvfrom(out, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT,
			     (struct sockaddr *)&from, &fl);
		if (n < 0)
			break;
		len = (size_t)n;
	}
	close(in);
	close(other);
	close(out);
	arrays_close();
}
END_TEST

START_TEST(test_guard_program)
{
	struct priv_guard g = {.ifindex = 7, .direction = DIR_IN, .sock_type = SOCK_RAW,
			       .arphrd = 1, .filter = "udp dst port 9999 or tcp", .keep = UINT32_MAX};
	struct sock_filter prog[BPF_MAXINSNS];
	char err[256] = "";
	size_t n = priv_filter_program(&g, prog, err, sizeof(err));

	ck_assert_msg(n > 0, "%s", err);
	/* The interface first, then the direction. */
	ck_assert_uint_eq(prog[0].code, BPF_LD | BPF_W | BPF_ABS);
	ck_assert_uint_eq(prog[0].k, (uint32_t)(SKF_AD_OFF + SKF_AD_IFINDEX));
	ck_assert_uint_eq(prog[1].k, 7);
	ck_assert_uint_eq(prog[3].k, (uint32_t)(SKF_AD_OFF + SKF_AD_PROTOCOL));
	ck_assert_uint_eq(prog[4].k, PRIV_FILTER_DEAF);
	ck_assert_uint_eq(prog[6].k, (uint32_t)(SKF_AD_OFF + SKF_AD_PKTTYPE));
	/* Every return: 0, or the computed length (never a constant over the header bound). */
	for (size_t i = 0; i < n; i++)
		if (BPF_CLASS(prog[i].code) == BPF_RET && BPF_RVAL(prog[i].code) == BPF_K)
			ck_assert_uint_le(prog[i].k, PRIV_GUARD_BYTES);
	/* The share: a quarter of the kernel's 32-bit numbers are at most keep. */
	ck_assert_uint_eq(priv_filter_keep(0.25), 0x3fffffffu);
	ck_assert_uint_eq(priv_filter_keep(1e-6), 4293u); /* 1e-6 * 2^32 - 1 */
	ck_assert_uint_eq(priv_filter_keep(1), UINT32_MAX);
	g.keep = priv_filter_keep(0.25);
	ck_assert_uint_eq(priv_filter_program(&g, prog, err, sizeof(err)), n + 3);
	ck_assert_uint_eq(prog[9].k, (uint32_t)(SKF_AD_OFF + SKF_AD_RANDOM));
	ck_assert_uint_eq(prog[10].k, 0x3fffffffu);
	/* A filter that does not compile, or cannot be checked on the link: no program. */
	g.filter = "udp port ((";
	ck_assert_uint_eq(priv_filter_program(&g, prog, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "does not compile"), "%s", err);
	g.filter = "tcp";
	g.arphrd = 0xfff0; /* no link libpcap would capture raw */
	ck_assert_uint_eq(priv_filter_program(&g, prog, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "cannot be checked in the kernel"), "%s", err);
	g.filter = "";
	ck_assert_uint_gt(priv_filter_program(&g, prog, err, sizeof(err)), 0);
}
END_TEST

/* Datagrams to 127.0.0.1 on PORT..PORT+3 and of many lengths, each with its number in its
 * IP header's DSCP (ECN: ECT(1), as a mark), so that it is known however it is cut, and in
 * its payload after "EQ". */
#define EQ_SENT 64
static void send_numbered(void)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	char buf[700];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < EQ_SENT; i++) {
		size_t len = 4 + (size_t)(i * 37 % 600);

		memset(buf, 0xa5 + i, sizeof(buf));
		buf[0] = 'E';
		buf[1] = 'Q';
		buf[2] = (char)i;
		buf[3] = (char)(i * 7);
		to.sin_port = htons((uint16_t)(PORT + i % 4));
		ck_assert_int_eq(setsockopt(fd, IPPROTO_IP, IP_TOS, &(int){i << 2 | 1}, sizeof(int)), 0);
		ck_assert_int_eq(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)),
				 (ssize_t)len);
	}
	close(fd);
}

/* What fd took of the numbered datagrams: got[i] the length handed over of datagram i's
 * incoming frame (0: not taken), and of its outgoing one in got[EQ_SENT + i]. */
static void taken(int fd, size_t *got)
{
	uint8_t buf[2048];
	struct sockaddr_ll from;
	size_t len;

	memset(got, 0, 2 * EQ_SENT * sizeof(*got));
	for (;;) {
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT,
				     (struct sockaddr *)&from, &fl);

		if (n < 0)
			break;
		len = (size_t)n;
		if (n >= 14 + 20 && buf[12] == 0x08 && buf[13] == 0 && buf[14 + 9] == 17 &&
		    (buf[14 + 1] & 3) == 1)
			got[(buf[14 + 1] >> 2) + (from.sll_pkttype == PACKET_OUTGOING ? EQ_SENT : 0)] =
				len;
	}
}

/* A packet socket on lo (every protocol), its filter prog as classic or translated to eBPF,
 * or none (prog NULL). */
static int on_lo(struct sock_filter *prog, size_t n, bool ebpf)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				  .sll_ifindex = (int)if_nametoindex("lo")};
	struct sock_fprog fp = {.len = (unsigned short)n, .filter = prog};
	char err[512] = "";
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0), slots, room = 8 << 20;

	ck_assert_int_ge(fd, 0);
	/* Room for every frame of the test (lo's are large in memory). */
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &room, sizeof(room)), 0);
	if (!prog) {
		/* none */
	} else if (ebpf) {
		slots = priv_filter_bpf_attach(fd, prog, n, err, sizeof(err));
		ck_assert_msg(slots >= 0, "%s", err);
		ck_assert_uint_lt(n_arrays, ARRAY_SIZE(arrays));
		arrays[n_arrays++] = slots;
	} else {
		ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)), 0);
	}
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	return fd;
}

/* A socket made before the others hears each frame after them (the kernel puts the newest
 * first): once it has the last numbered datagram, so have they. */
static void wait_last(int sentinel)
{
	uint8_t buf[64];
	struct sockaddr_ll from;

	for (;;) {
		struct pollfd pfd = {.fd = sentinel, .events = POLLIN};
		socklen_t fl = sizeof(from);
		ssize_t n;

		ck_assert_msg(poll(&pfd, 1, 10000) == 1, "the datagrams over lo did not come");
		n = recvfrom(sentinel, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
			     &fl);
		if (n >= 45 && buf[42] == 'E' && buf[43] == 'Q' && buf[44] == EQ_SENT - 1 &&
		    from.sll_pkttype != PACKET_OUTGOING)
			return;
	}
}

static bool can_bpf(void)
{
	struct sock_filter all = BPF_STMT(BPF_RET | BPF_K, 0xffff);
	char err[512] = "";
	int fd = socket(AF_PACKET, SOCK_RAW, 0), slots;

	if (fd < 0)
		return false;
	slots = priv_filter_bpf_attach(fd, &all, 1, err, sizeof(err));
	close(fd);
	if (slots < 0) {
		fprintf(stderr, "SKIP: eBPF socket filters: %s\n", err);
		return false;
	}
	close(slots);
	return true;
}

/* Every program libpcap makes of the shared expressions (filterfix.c), and the guard's,
 * translated to eBPF takes the same frames, and the same bytes of each, as the classic
 * program in the kernel. */
START_TEST(test_bpf_same_as_classic)
{
	struct sock_filter prog[BPF_MAXINSNS];
	size_t got_c[2 * EQ_SENT], got_e[2 * EQ_SENT];
	char err[256] = "";

	if (!can_capture() || !can_bpf())
		return;
	for (size_t x = 0; x <= tu_filter_nexprs; x++) {
		const char *name = x < tu_filter_nexprs ? tu_filter_exprs[x] : "(the guard)";
		size_t n, kept = 0;
		int c, e, sentinel;

		if (x < tu_filter_nexprs) {
			n = tu_filter_compile(tu_filter_exprs[x], prog);
		} else { /* the guard, with a share kept */
			struct priv_guard g = {.ifindex = if_nametoindex("lo"), .direction = DIR_IN,
					       .sock_type = SOCK_RAW, .arphrd = 772,
					       .filter = "udp dst port 9 or udp dst port 10",
					       .keep = UINT32_MAX};

			n = priv_filter_program(&g, prog, err, sizeof(err));
			ck_assert_msg(n > 0, "%s", err);
		}
		sentinel = on_lo(NULL, 0, false);
		c = on_lo(prog, n, false);
		e = on_lo(prog, n, true);
		send_numbered();
		wait_last(sentinel);
		close(sentinel);
		taken(c, got_c);
		taken(e, got_e);
		for (size_t i = 0; i < 2 * EQ_SENT; i++) {
			ck_assert_msg(got_c[i] == got_e[i],
				      "\"%s\": datagram %zu%s: %zu bytes by the classic program, "
				      "%zu by eBPF",
				      name, i % EQ_SENT,
				      i >= EQ_SENT ? " (outgoing)" : "", got_c[i], got_e[i]);
			kept += got_c[i] > 0;
		}
		/* Each expression keeps some and drops some (the test means something). */
		ck_assert_msg(kept > 0 && kept < 2 * EQ_SENT, "\"%s\" kept %zu of %d", name, kept,
			      2 * EQ_SENT);
		close(c);
		close(e);
		arrays_close();
	}
}
END_TEST

/* Locked: no one, root included, removes or replaces it; the privileged process's
 * replacement (priv_filter_replace) changes what it keeps in place; a socket bound to
 * PRIV_FILTER_DEAF alone hears nothing. */
START_TEST(test_locked_and_replaced)
{
	struct sock_filter all = BPF_STMT(BPF_RET | BPF_K, 0xffff);
	struct sock_fprog fp = {.len = 1, .filter = &all};
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	unsigned lo = if_nametoindex("lo");
	size_t got[2 * EQ_SENT];
	char err[512] = "";
	int fd, slots, v = 0, sentinel;
	socklen_t len = sizeof(v);

	if (!can_capture())
		return;
	sentinel = on_lo(NULL, 0, false);
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &(int){8 << 20}, sizeof(int)), 0);
	ck_assert_msg(priv_filter_attach(fd, lo, DIR_IN, "udp dst port 9", UINT32_MAX, &slots, err,
					sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &v, &len), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp)), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &v, sizeof(v)), -1);
	ck_assert_int_eq(errno, EPERM);
	v = 0;
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &v, sizeof(v)), -1);
	ck_assert_int_eq(errno, EPERM);
	sll.sll_ifindex = (int)lo;
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	send_numbered();
	wait_last(sentinel);
	taken(fd, got);
	for (int i = 0; i < EQ_SENT; i++)
		ck_assert_uint_eq(got[i], i % 4 == 0 ? 14 + 20 : 0);
	if (slots >= 0) { /* eBPF: the filter changes in place, the lock stays */
		ck_assert_msg(priv_filter_replace(slots, fd, lo, DIR_IN, "udp dst port 10",
						  UINT32_MAX, err, sizeof(err)) == 0,
			      "%s", err);
		send_numbered();
		wait_last(sentinel);
		taken(fd, got);
		for (int i = 0; i < EQ_SENT; i++)
			ck_assert_uint_eq(got[i], i % 4 == 1 ? 14 + 20 : 0);
	} else { /* classic: it cannot change */
		ck_assert_int_eq(priv_filter_replace(-1, fd, lo, DIR_IN, "udp dst port 10",
						     UINT32_MAX, err, sizeof(err)), -1);
		ck_assert_int_eq(errno, EPERM);
		ck_assert_int_eq(priv_filter_replace(-1, fd, lo, DIR_IN, "udp dst port 9",
						     UINT32_MAX, err, sizeof(err)), 0);
	}
	/* Deaf: bound to every interface for PRIV_FILTER_DEAF alone. */
	sll.sll_ifindex = 0;
	sll.sll_protocol = htons(PRIV_FILTER_DEAF);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	send_numbered();
	wait_last(sentinel);
	taken(fd, got);
	for (int i = 0; i < 2 * EQ_SENT; i++)
		ck_assert_uint_eq(got[i], 0);
	close(fd);
	close(sentinel);
	if (slots >= 0)
		close(slots);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("priv_filter");
	TCase *tc = tcase_create("guard");

	tcase_add_test(tc, test_guard_program);
	tcase_add_test(tc, test_guard_in_kernel);
	tcase_add_test(tc, test_bpf_same_as_classic);
	tcase_add_test(tc, test_locked_and_replaced);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
