/* check_priv_filter_bpf: classic socket filters translated to eBPF (priv_filter_bpf.c). A
 * table of classic programs (written here, to reach every instruction the translation knows,
 * and compiled by libpcap from expressions) is translated, loaded by the kernel's verifier and
 * run on real frames with BPF_PROG_TEST_RUN; each must keep the same bytes of each frame as
 * the classic program does in libpcap's interpreter (or, for what only the kernel knows, as
 * the frame says). check_priv_filter runs the same expressions on packet sockets. Loading
 * needs CAP_SYS_ADMIN (or CAP_BPF), and says so where it has not. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "filterfix.h"
#include "priv_filter_bpf.h"
#include "priv_ops.h"
#include "testutil.h"
#include "util.h"

/* ---- real frames ---- */

struct frame {
	const char *name;
	uint8_t b[600];
	size_t len;
};

static const uint8_t mac_host[6] = {0, 0, 0, 0, 0, 0}; /* lo's: the test run's device */
static const uint8_t mac_bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mac_other[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};

static void put(struct frame *f, const void *p, size_t n)
{
	ck_assert_uint_le(f->len + n, sizeof(f->b));
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void put16(struct frame *f, uint16_t v)
{
	put(f, (uint8_t[]){(uint8_t)(v >> 8), (uint8_t)v}, 2);
}

static void eth(struct frame *f, const uint8_t *dst, uint16_t type)
{
	f->len = 0;
	put(f, dst, 6);
	put(f, mac_other, 6);
	put16(f, type);
}

static uint16_t csum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* An IPv4 header (with opt_words words of options), its total length and checksum set by
 * ip4_end. */
static size_t ip4(struct frame *f, uint8_t proto, uint16_t frag, unsigned opt_words,
		  const uint8_t *dst)
{
	size_t at = f->len;

	put(f, (uint8_t[]){(uint8_t)(0x40 | (5 + opt_words)), 0x10, 0, 0, 0x12, 0x34}, 6);
	put16(f, frag);
	put(f, (uint8_t[]){64, proto, 0, 0, 10, 0, 0, 1}, 8);
	put(f, dst, 4);
	for (unsigned i = 0; i < opt_words; i++)
		put(f, (uint8_t[]){1, 1, 1, 0}, 4); /* NOP NOP NOP EOL */
	return at;
}

static void ip4_end(struct frame *f, size_t at)
{
	uint16_t tot = (uint16_t)(f->len - at), c;

	f->b[at + 2] = (uint8_t)(tot >> 8);
	f->b[at + 3] = (uint8_t)tot;
	c = csum(f->b + at, (size_t)(f->b[at] & 0xf) * 4);
	f->b[at + 10] = (uint8_t)(c >> 8);
	f->b[at + 11] = (uint8_t)c;
}

/* A UDP header and payload bytes seed, seed + 1, ... */
static void udp(struct frame *f, uint16_t dport, size_t payload, uint8_t seed)
{
	put16(f, 40000);
	put16(f, dport);
	put16(f, (uint16_t)(8 + payload));
	put16(f, 0);
	for (size_t i = 0; i < payload; i++)
		put(f, (uint8_t[]){(uint8_t)(seed + i)}, 1);
}

static const uint8_t ip_lo[4] = {127, 0, 0, 1}, ip_bcast[4] = {255, 255, 255, 255};

enum {
	F_UDP9, F_UDP53_BCAST, F_UDP11, F_TCP80_OPTS, F_FRAG, F_UDP6, F_ARP, F_VLAN, F_ICMP, F_CUT, F_RUNT,
	F_COUNT
};
static struct frame frames[F_COUNT];

static void frames_make(void)
{
	struct frame *f;
	size_t at;

	f = &frames[F_UDP9];
	f->name = "IPv4 UDP to port 9";
	eth(f, mac_host, ETH_P_IP);
	at = ip4(f, 17, 0x4000, 0, ip_lo);
	udp(f, 9, 100, 'A');
	ip4_end(f, at);

	f = &frames[F_UDP53_BCAST];
	f->name = "IPv4 UDP broadcast to port 53";
	eth(f, mac_bcast, ETH_P_IP);
	at = ip4(f, 17, 0, 0, ip_bcast);
	udp(f, 53, 400, 'P');
	ip4_end(f, at);

	f = &frames[F_UDP11];
	f->name = "IPv4 UDP to port 11, small bytes";
	eth(f, mac_host, ETH_P_IP);
	at = ip4(f, 17, 0, 0, ip_lo);
	udp(f, 11, 86, 0);
	ip4_end(f, at);

	f = &frames[F_TCP80_OPTS];
	f->name = "IPv4 with options, TCP SYN to port 80";
	eth(f, mac_other, ETH_P_IP);
	at = ip4(f, 6, 0x4000, 2, ip_lo);
	put16(f, 51000);
	put16(f, 80);
	put(f, (uint8_t[]){0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xfa, 0xf0, 0, 0, 0, 0}, 16);
	ip4_end(f, at);

	f = &frames[F_FRAG];
	f->name = "an IPv4 fragment (offset 185)";
	eth(f, mac_host, ETH_P_IP);
	at = ip4(f, 17, 0x2000 | 185, 0, ip_lo);
	for (int i = 0; i < 64; i++)
		put(f, (uint8_t[]){(uint8_t)i}, 1);
	ip4_end(f, at);

	f = &frames[F_UDP6];
	f->name = "IPv6 UDP to port 9";
	eth(f, mac_host, ETH_P_IPV6);
	put(f, (uint8_t[]){0x60, 0, 0, 0}, 4);
	put16(f, 8 + 30);
	put(f, (uint8_t[]){17, 64}, 2);
	for (int i = 0; i < 2; i++)
		put(f, (uint8_t[]){0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (uint8_t)(1 + i)},
		    16);
	udp(f, 9, 30, 'B');

	f = &frames[F_ARP];
	f->name = "an ARP request";
	eth(f, mac_bcast, ETH_P_ARP);
	put(f, (uint8_t[]){0, 1, 8, 0, 6, 4, 0, 1}, 8);
	put(f, mac_other, 6);
	put(f, (uint8_t[]){10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2}, 14);

	f = &frames[F_VLAN];
	f->name = "802.1Q VLAN 5, IPv4 UDP to port 9";
	eth(f, mac_host, ETH_P_8021Q);
	put16(f, 5);
	put16(f, ETH_P_IP);
	at = ip4(f, 17, 0, 0, ip_lo);
	udp(f, 9, 20, 'C');
	ip4_end(f, at);

	f = &frames[F_ICMP];
	f->name = "an ICMP echo request";
	eth(f, mac_other, ETH_P_IP);
	at = ip4(f, 1, 0, 0, ip_lo);
	put(f, (uint8_t[]){8, 0, 0, 0, 0, 1, 0, 1}, 8);
	ip4_end(f, at);

	f = &frames[F_CUT];
	f->name = "a frame cut inside its IP header";
	memcpy(f->b, frames[F_UDP9].b, 24);
	f->len = 24;

	f = &frames[F_RUNT];
	f->name = "a runt of 10 bytes";
	memcpy(f->b, frames[F_ARP].b, 10);
	f->len = 10;
}

/* ---- the kernel ---- */

static bool can_load(void)
{
	struct sock_filter all = BPF_STMT(BPF_RET | BPF_K, 0xffff);
	static struct bpf_insn insns[PRIV_FILTER_BPF_MAX];
	char err[256] = "", log[256] = "";
	size_t n = priv_filter_bpf_translate(&all, 1, insns, err, sizeof(err));
	int fd;

	ck_assert_msg(n > 0, "%s", err);
	fd = priv_ops_bpf_load(insns, n, log, sizeof(log));
	if (fd < 0) {
		fprintf(stderr, "SKIP: eBPF socket filters cannot be loaded here: %s (they need "
				"CAP_SYS_ADMIN or CAP_BPF)\n",
			strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

/* The classic program, translated and loaded: its descriptor (the verifier must take it). */
static int load(const char *name, const struct sock_filter *prog, size_t n)
{
	static struct bpf_insn insns[PRIV_FILTER_BPF_MAX];
	static char log[65536];
	char err[256] = "";
	size_t len = priv_filter_bpf_translate(prog, n, insns, err, sizeof(err));
	int fd;

	ck_assert_msg(len > 0, "%s: not translated: %s", name, err);
	log[0] = 0;
	fd = priv_ops_bpf_load(insns, len, log, sizeof(log));
	ck_assert_msg(fd >= 0, "%s: the verifier refused it: %s\n%s", name, strerror(errno), log);
	return fd;
}

/* The program run by the kernel on f, as a packet socket's filter sees it (from its
 * Ethernet header on): what it returns. The test run takes an Ethernet header off the front
 * first (eth_type_trans, as a device's receive does), and so gets one of its own, with the
 * frame's destination and type: the frame's protocol and packet type follow from them. */
static uint32_t run(int fd, const struct frame *f)
{
	uint8_t data[ETH_HLEN + sizeof(f->b)];
	union bpf_attr a;

	memset(data, 0, ETH_HLEN);
	memcpy(data, f->b, f->len < ETH_HLEN ? f->len : ETH_HLEN);
	memcpy(data + ETH_HLEN, f->b, f->len);
	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uintptr_t)data;
	a.test.data_size_in = (uint32_t)(ETH_HLEN + f->len);
	a.test.repeat = 1;
	ck_assert_msg(syscall(__NR_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a)) == 0,
		      "BPF_PROG_TEST_RUN on %s: %s", f->name, strerror(errno));
	return a.test.retval;
}

/* ---- the programs ---- */

/* What only the kernel can give the classic program, from the frame. */
static uint32_t frame_type(const struct frame *f)
{
	/* The type; a frame too short to have one got 0, an 802.3 length, which the kernel
	 * reads as raw 802.3 (ETH_P_802_3) where the data begins 0xffff, else as 802.2
	 * (eth_type_trans). */
	if (f->len >= ETH_HLEN)
		return (uint32_t)(f->b[12] << 8 | f->b[13]);
	return f->len >= 2 && f->b[0] == 0xff && f->b[1] == 0xff ? ETH_P_802_3 : ETH_P_802_2;
}

/* As the test run's device (lo) classes the frame's destination: lo has no broadcast address,
 * so a group address, the broadcast one too, is multicast to it. */
static uint32_t frame_pkttype(const struct frame *f)
{
	if (f->b[0] & 1)
		return PACKET_MULTICAST;
	return memcmp(f->b, mac_host, 6) ? PACKET_OTHERHOST : PACKET_HOST;
}

static uint32_t as_constant(const struct frame *f)
{
	(void)f;
	return 0;
}

#define P(...) ((const struct sock_filter[]){__VA_ARGS__})
#define N(...) (sizeof((const struct sock_filter[]){__VA_ARGS__}) / sizeof(struct sock_filter))
#define PROG(name, want, ...) {name, P(__VA_ARGS__), N(__VA_ARGS__), want, 0}
#define S BPF_STMT
#define J BPF_JUMP

struct prog_case {
	const char *name;
	const struct sock_filter *prog;
	size_t n;
	/* The classic program's answer for a frame; NULL: libpcap's interpreter gives it. */
	uint32_t (*want)(const struct frame *f);
	uint32_t k; /* as_constant's answer */
};

static const struct prog_case progs[] = {
	PROG("loads of every width, absolute, and the scratch memory", NULL,
	     S(BPF_LD | BPF_B | BPF_ABS, 23), S(BPF_MISC | BPF_TAX, 0),
	     S(BPF_LD | BPF_H | BPF_ABS, 12), S(BPF_ALU | BPF_ADD | BPF_X, 0), S(BPF_ST, 3),
	     S(BPF_LD | BPF_W | BPF_ABS, 26), S(BPF_STX, 15), S(BPF_LDX | BPF_MEM, 3),
	     S(BPF_ALU | BPF_XOR | BPF_X, 0), S(BPF_LD | BPF_MEM, 15), S(BPF_ALU | BPF_OR | BPF_X, 0),
	     S(BPF_RET | BPF_A, 0)),
	PROG("indirect loads behind the IP header's length (ldx msh)", NULL,
	     S(BPF_LDX | BPF_B | BPF_MSH, 14), S(BPF_LD | BPF_H | BPF_IND, 16),
	     S(BPF_ALU | BPF_LSH | BPF_K, 8), S(BPF_ST, 0), S(BPF_LD | BPF_B | BPF_IND, 22),
	     S(BPF_LDX | BPF_MEM, 0), S(BPF_ALU | BPF_ADD | BPF_X, 0), S(BPF_RET | BPF_A, 0)),
	PROG("a word loaded indirectly keeps A across ldx msh", NULL,
	     S(BPF_LD | BPF_IMM, 1234), S(BPF_LDX | BPF_B | BPF_MSH, 14),
	     S(BPF_ALU | BPF_ADD | BPF_X, 0), S(BPF_ST, 0), S(BPF_LD | BPF_W | BPF_IND, 14),
	     S(BPF_ALU | BPF_AND | BPF_K, 0xffff), S(BPF_LDX | BPF_MEM, 0),
	     S(BPF_ALU | BPF_ADD | BPF_X, 0), S(BPF_RET | BPF_A, 0)),
	PROG("arithmetic with constants", NULL,
	     S(BPF_LD | BPF_W | BPF_ABS, 14), S(BPF_ALU | BPF_ADD | BPF_K, 5),
	     S(BPF_ALU | BPF_SUB | BPF_K, 3), S(BPF_ALU | BPF_MUL | BPF_K, 7),
	     S(BPF_ALU | BPF_DIV | BPF_K, 3), S(BPF_ALU | BPF_MOD | BPF_K, 100003),
	     S(BPF_ALU | BPF_OR | BPF_K, 0x10000), S(BPF_ALU | BPF_AND | BPF_K, 0x7ffff),
	     S(BPF_ALU | BPF_XOR | BPF_K, 0x5a5a), S(BPF_ALU | BPF_LSH | BPF_K, 9),
	     S(BPF_ALU | BPF_RSH | BPF_K, 4), S(BPF_ALU | BPF_NEG, 0), S(BPF_RET | BPF_A, 0)),
	PROG("arithmetic with X", NULL,
	     S(BPF_LDX | BPF_W | BPF_LEN, 0), S(BPF_LD | BPF_H | BPF_ABS, 16),
	     S(BPF_ALU | BPF_ADD | BPF_X, 0), S(BPF_ALU | BPF_MUL | BPF_X, 0),
	     S(BPF_ALU | BPF_SUB | BPF_X, 0), S(BPF_ALU | BPF_DIV | BPF_X, 0),
	     S(BPF_ALU | BPF_MOD | BPF_X, 0), S(BPF_ALU | BPF_OR | BPF_X, 0),
	     S(BPF_ALU | BPF_AND | BPF_X, 0), S(BPF_ALU | BPF_XOR | BPF_X, 0),
	     S(BPF_LDX | BPF_IMM, 3), S(BPF_ALU | BPF_LSH | BPF_X, 0),
	     S(BPF_ALU | BPF_RSH | BPF_X, 0), S(BPF_RET | BPF_A, 0)),
	PROG("a division by X = 0 drops the frame", NULL,
	     S(BPF_LD | BPF_B | BPF_ABS, 15), S(BPF_ALU | BPF_AND | BPF_K, 0), S(BPF_MISC | BPF_TAX, 0),
	     S(BPF_LD | BPF_IMM, 100), S(BPF_ALU | BPF_DIV | BPF_X, 0), S(BPF_RET | BPF_K, 99)),
	PROG("a remainder by X = 0 drops the frame", NULL,
	     S(BPF_LDX | BPF_IMM, 0), S(BPF_LD | BPF_W | BPF_LEN, 0),
	     S(BPF_ALU | BPF_MOD | BPF_X, 0), S(BPF_RET | BPF_K, 98)),
	PROG("comparisons with constants, large ones unsigned", NULL,
	     S(BPF_LD | BPF_W | BPF_ABS, 0), J(BPF_JMP | BPF_JGT | BPF_K, 0xfffffff0u, 0, 1),
	     S(BPF_LD | BPF_IMM, 0xfffffff8u), J(BPF_JMP | BPF_JGE | BPF_K, 0xfffffff8u, 0, 3),
	     J(BPF_JMP | BPF_JEQ | BPF_K, 0xfffffff8u, 0, 2),
	     J(BPF_JMP | BPF_JSET | BPF_K, 0x80000000u, 0, 1), S(BPF_RET | BPF_K, 2),
	     S(BPF_LD | BPF_H | BPF_ABS, 12), J(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 1),
	     S(BPF_RET | BPF_K, 3), J(BPF_JMP | BPF_JGE | BPF_K, ETH_P_IPV6, 0, 1),
	     S(BPF_RET | BPF_K, 4), J(BPF_JMP | BPF_JSET | BPF_K, 0x7, 0, 1), S(BPF_RET | BPF_K, 6),
	     S(BPF_RET | BPF_K, 5)),
	PROG("comparisons with X, and jumps always", NULL,
	     S(BPF_LD | BPF_B | BPF_ABS, 23), S(BPF_MISC | BPF_TAX, 0), S(BPF_LD | BPF_IMM, 17),
	     J(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1), S(BPF_JMP | BPF_JA, 3),
	     J(BPF_JMP | BPF_JGT | BPF_X, 0, 1, 0), J(BPF_JMP | BPF_JGE | BPF_X, 0, 2, 4),
	     S(BPF_RET | BPF_K, 10), S(BPF_RET | BPF_K, 11), J(BPF_JMP | BPF_JSET | BPF_X, 0, 0, 1),
	     S(BPF_RET | BPF_K, 12), S(BPF_RET | BPF_K, 13)),
	PROG("a load past the frame's end drops it", NULL,
	     S(BPF_LD | BPF_W | BPF_ABS, 40), S(BPF_LD | BPF_W | BPF_LEN, 0),
	     S(BPF_RET | BPF_A, 0)),
	PROG("an indirect load past the end drops it", NULL,
	     S(BPF_LDX | BPF_W | BPF_LEN, 0), S(BPF_LD | BPF_B | BPF_IND, 0),
	     S(BPF_RET | BPF_K, 0xffff)),
	PROG("the protocol (ancillary)", frame_type,
	     S(BPF_LD | BPF_H | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_PROTOCOL)),
	     S(BPF_RET | BPF_A, 0)),
	PROG("the packet type (ancillary)", frame_pkttype,
	     S(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_PKTTYPE)),
	     S(BPF_RET | BPF_A, 0)),
	{"a random number and the CPU (ancillary helper calls)",
	 P(S(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_RANDOM)),
	   S(BPF_ALU | BPF_AND | BPF_K, 0), S(BPF_ST, 1),
	   S(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_CPU)),
	   J(BPF_JMP | BPF_JGE | BPF_K, 8192, 0, 1), S(BPF_RET | BPF_K, 0),
	   S(BPF_LDX | BPF_MEM, 1), S(BPF_ALU | BPF_ADD | BPF_K, 0), S(BPF_ALU | BPF_AND | BPF_K, 0),
	   S(BPF_ALU | BPF_ADD | BPF_X, 0), S(BPF_ALU | BPF_ADD | BPF_K, 70), S(BPF_RET | BPF_A, 0)),
	 12, as_constant, 70},
	{"the VLAN tag, the mark and the hash (ancillary, none here)",
	 P(S(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_VLAN_TAG_PRESENT)),
	   S(BPF_MISC | BPF_TAX, 0),
	   S(BPF_LD | BPF_W | BPF_ABS, (uint32_t)(SKF_AD_OFF + SKF_AD_MARK)),
	   S(BPF_ALU | BPF_OR | BPF_X, 0), S(BPF_ALU | BPF_ADD | BPF_K, 71), S(BPF_RET | BPF_A, 0)),
	 6, as_constant, 71},
};

/* Expressions of this test's own, beside the ones check_priv_filter shares. */
static const char *const exprs[] = {
	"tcp port 80", "ip and udp dst port 53", "ip6 and udp", "arp", "vlan 5 and udp port 9",
	"ip[6:2] & 0x1fff != 0", "tcp[tcpflags] & tcp-syn != 0", "ether broadcast", "icmp",
	"greater 200", "less 60", "udp[8:2] = 0x5051", "ip[0] & 0xf > 5", "ether host 02:11:22:33:44:55",
	"net 10.0.0.0/8 and not port 53", "ip proto 17 or ip6 proto 17",
};

/* Every frame through the program, in the kernel and as the classic program would take it;
 * how many it keeps. */
static size_t check_program(const char *name, const struct sock_filter *prog, size_t n,
			    const struct prog_case *c)
{
	int fd = load(name, prog, n);
	size_t kept = 0;

	for (size_t i = 0; i < F_COUNT; i++) {
		const struct frame *f = &frames[i];
		uint32_t got = run(fd, f), want;

		if (!c || !c->want)
			want = tu_filter_classic(prog, n, f->b, f->len);
		else if (c->want == as_constant)
			want = c->k;
		else
			want = c->want(f);
		ck_assert_msg(got == want, "%s on %s: %u in the kernel, the classic program %u", name,
			      f->name, got, want);
		kept += got > 0;
	}
	close(fd);
	return kept;
}

START_TEST(test_programs)
{
	const struct prog_case *c = &progs[_i];

	if (!can_load())
		return;
	frames_make();
	(void)check_program(c->name, c->prog, c->n, c);
}
END_TEST

/* The expressions libpcap compiles: each keeps some frames and drops others (or the test
 * would mean nothing), the same in the kernel as in libpcap's interpreter. */
START_TEST(test_expressions)
{
	struct sock_filter prog[BPF_MAXINSNS];
	const char *expr = _i < (int)ARRAY_SIZE(exprs) ? exprs[_i]
						       : tu_filter_exprs[_i - (int)ARRAY_SIZE(exprs)];
	size_t n = tu_filter_compile(expr, prog), kept;

	if (!can_load())
		return;
	frames_make();
	if (tu_filter_ancillary(prog, n)) {
		/* A direction: only a packet socket knows it (check_priv_filter runs it there);
		 * here the program must still be taken by the verifier. */
		close(load(expr, prog, n));
		return;
	}
	kept = check_program(expr, prog, n, NULL);
	ck_assert_msg(kept > 0 && kept < F_COUNT, "\"%s\" kept %zu of %d frames", expr, kept,
		      F_COUNT);
}
END_TEST

/* What the translation cannot express is refused, saying what, and the caller then locks
 * the classic program: an ancillary load it does not know, a jump out of the program, a
 * program that does not end with a return. */
START_TEST(test_refused)
{
	struct sock_filter hatype[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_HATYPE),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	struct sock_filter out_of_range[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 1, 5, 0),
		BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_filter no_return[] = {BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0)};
	static struct bpf_insn out[PRIV_FILTER_BPF_MAX];
	char err[256] = "";

	ck_assert_uint_eq(priv_filter_bpf_translate(hatype, 2, out, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "ancillary load 28"), "%s", err);
	ck_assert_uint_eq(priv_filter_bpf_translate(out_of_range, 2, out, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "instruction 0"), "%s", err);
	ck_assert_uint_eq(priv_filter_bpf_translate(no_return, 1, out, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "ends with a return"), "%s", err);
	/* A program it takes: the prologue, then a return of the length. */
	ck_assert_uint_eq(priv_filter_bpf_translate(hatype + 1, 1, out, err, sizeof(err)), 4);
}
END_TEST

/* The stub locked on a socket: a tail call to slot 0 of the array, 0 when the slot is empty
 * (the frame dropped), and the program in the slot's answer when it is not. */
START_TEST(test_stub)
{
	struct sock_filter keep77[] = {BPF_STMT(BPF_RET | BPF_K, 77)};
	static struct bpf_insn stub[8];
	char log[4096] = "", err[256] = "";
	int slots, fd;

	if (!can_load())
		return;
	frames_make();
	slots = priv_ops_bpf_slots();
	ck_assert_msg(slots >= 0, "no program array: %s", strerror(errno));
	ck_assert_uint_eq(priv_filter_bpf_stub(slots, stub), 6);
	fd = priv_ops_bpf_load(stub, 6, log, sizeof(log));
	ck_assert_msg(fd >= 0, "the stub: %s\n%s", strerror(errno), log);
	ck_assert_uint_eq(run(fd, &frames[F_UDP9]), 0);
	ck_assert_msg(priv_filter_bpf_replace(slots, keep77, 1, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(run(fd, &frames[F_UDP9]), 77);
	keep77[0].k = 78;
	ck_assert_msg(priv_filter_bpf_replace(slots, keep77, 1, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(run(fd, &frames[F_UDP9]), 78);
	/* A program that cannot be translated leaves the one in the slot. */
	keep77[0].code = BPF_LD | BPF_W | BPF_LEN;
	ck_assert_int_eq(priv_filter_bpf_replace(slots, keep77, 1, err, sizeof(err)), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_msg(strstr(err, "ends with a return"), "%s", err);
	ck_assert_uint_eq(run(fd, &frames[F_UDP9]), 78);
	close(fd);
	close(slots);
}
END_TEST

static Suite *priv_filter_bpf_suite(void)
{
	Suite *s = suite_create("priv_filter_bpf");
	TCase *tc = tcase_create("translate");

	tcase_add_loop_test(tc, test_programs, 0, (int)ARRAY_SIZE(progs));
	tcase_add_loop_test(tc, test_expressions, 0,
			    (int)(ARRAY_SIZE(exprs) + tu_filter_nexprs));
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_stub);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(priv_filter_bpf_suite());
}
