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

#include "priv_filter.h"
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
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0);

	ck_assert_int_ge(fd, 0);
	if (if_nametoindex("lo") == ifindex) { /* as the privileged process sets it */
		ck_assert_msg(priv_filter_attach(fd, ifindex, dir, filter, UINT32_MAX, err,
						sizeof(err)) == 0,
			      "%s", err);
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
	ck_assert_uint_eq(prog[3].k, (uint32_t)(SKF_AD_OFF + SKF_AD_PKTTYPE));
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
	ck_assert_uint_eq(prog[6].k, (uint32_t)(SKF_AD_OFF + SKF_AD_RANDOM));
	ck_assert_uint_eq(prog[7].k, 0x3fffffffu);
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

int main(void)
{
	Suite *s = suite_create("priv_filter");
	TCase *tc = tcase_create("guard");

	tcase_add_test(tc, test_guard_program);
	tcase_add_test(tc, test_guard_in_kernel);
	suite_add_tcase(s, tc);
	return tu_run_suite(s);
}
