/* priv_filter: the socket filter the privileged process puts on every packet socket before
 * it hands it over, and keeps there (priv_serve.c): whatever the collector does with the
 * socket afterwards (a bind to every interface or to another one, a second socket), the
 * kernel runs this program on each frame before anything is queued or copied, and it keeps
 * only
 *   - frames of the one interface the configuration selects (SKF_AD_IFINDEX, the device the
 *     frame is on, whatever the socket is bound to),
 *   - not of protocol PRIV_FILTER_DEAF, so that a socket bound to that alone hears nothing
 *     (how the privileged process makes one deaf once its program is locked),
 *   - in the direction configured (SKF_AD_PKTTYPE: PACKET_OUTGOING or not),
 *   - a share of them while sampling (SKF_AD_RANDOM, as net_sample.h describes),
 *   - that the administrator's filter accepts, compiled here for the link from the
 *     configuration the privileged process reads itself,
 * and of each only the bytes where timing and the flow count look: the link header and the
 * IP header (the source address), never a byte of what the IP header carries. The
 * administrator's program is placed as it is but for its returns: a return of 0 drops the
 * frame, any other jumps to the length computation, so it can narrow what is kept, never
 * widen it. The program is locked once attached (SO_LOCK_FILTER): no one, the privileged
 * process included, can replace or remove it, whatever a system call filter lets through;
 * what it keeps is what the socket keeps for its whole life. */
#include "autoconf.h"

#include "priv_filter.h"

#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "priv_filter_bpf.h"
#include "priv_ops.h"
#include "util.h"

#define SLL_HDR_LEN 16 /* libpcap's cooked header (DLT_LINUX_SLL) */
#define IPV4_HDR 20
#define IPV6_HDR 40
#define ETH_HDR 14

enum link { LINK_ETHER, LINK_RAW_IP, LINK_COOKED, LINK_OTHER };

/* The link as libpcap captures it (pcap-linux.c's map_arphrd_to_dlt, for the types here). */
static enum link link_of(const struct priv_guard *g, int *dlt)
{
	if (g->sock_type == SOCK_DGRAM) {
		*dlt = DLT_LINUX_SLL;
		return LINK_COOKED;
	}
	switch (g->arphrd) {
	case ARPHRD_ETHER:
	case ARPHRD_LOOPBACK:
	case ARPHRD_METRICOM:
		*dlt = DLT_EN10MB;
		return LINK_ETHER;
	case ARPHRD_NONE:
	case ARPHRD_TUNNEL:
	case ARPHRD_SIT:
	case ARPHRD_SLIP:
	case ARPHRD_CSLIP:
	case ARPHRD_SLIP6:
	case ARPHRD_CSLIP6:
	case ARPHRD_ADAPT:
	case ARPHRD_RAWHDLC:
	case ARPHRD_DLCI:
		*dlt = DLT_RAW;
		return LINK_RAW_IP;
	default:
		*dlt = -1;
		return LINK_OTHER;
	}
}

/* A load of a cooked capture's header, moved as libpcap moves it for the kernel (its
 * fix_offset(): the header is not in the frame, some of its fields are ancillary data);
 * false for a field the kernel cannot give. */
static bool cooked_load(struct sock_filter *p)
{
	if (p->k >= (uint32_t)SKF_AD_OFF)
		return true;
	if (p->k >= SLL_HDR_LEN)
		p->k -= SLL_HDR_LEN;
	else if (p->k == 0)
		p->k = (uint32_t)(SKF_AD_OFF + SKF_AD_PKTTYPE);
	else if (p->k == 14)
		p->k = (uint32_t)(SKF_AD_OFF + SKF_AD_PROTOCOL);
	else
		return false;
	return true;
}

/* The administrator's program at out, its returns made jumps to what follows it. Its
 * length, or -1 with err. */
static long admin_program(const struct priv_guard *g, int dlt, bool cooked,
			  struct sock_filter *out, size_t room, char *err, size_t size)
{
	struct bpf_program prog;
	pcap_t *p;
	size_t n;

	if (!g->filter || !g->filter[0])
		return 0;
	if (dlt < 0) {
		snprintf(err, size, "the filter \"%s\" cannot be checked in the kernel on a link of "
			 "type %u", g->filter, g->arphrd);
		return -1;
	}
	p = pcap_open_dead(dlt, 65535);
	if (!p) {
		snprintf(err, size, "cannot compile the filter \"%s\"", g->filter);
		return -1;
	}
	if (pcap_compile(p, &prog, g->filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, size, "the filter \"%s\" does not compile: %s", g->filter,
			 pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	pcap_close(p);
	n = prog.bf_len;
	if (n > room) {
		snprintf(err, size, "the filter \"%s\" is too long for the kernel (%zu "
			 "instructions)", g->filter, n);
		pcap_freecode(&prog);
		return -1;
	}
	memcpy(out, prog.bf_insns, n * sizeof(*out));
	pcap_freecode(&prog);
	for (size_t i = 0; i < n; i++) {
		struct sock_filter *q = &out[i];
		unsigned cls = BPF_CLASS(q->code), mode = BPF_MODE(q->code);

		if ((cls == BPF_LD || cls == BPF_LDX) &&
		    (mode == BPF_ABS || mode == BPF_IND || mode == BPF_MSH) && cooked &&
		    !cooked_load(q)) {
			snprintf(err, size, "the filter \"%s\" looks at a field of the cooked "
				 "header that the kernel cannot give", g->filter);
			return -1;
		}
		if (cls != BPF_RET)
			continue;
		if (BPF_RVAL(q->code) != BPF_K) { /* libpcap returns constants only */
			snprintf(err, size, "the filter \"%s\" compiled to a return of a register",
				 g->filter);
			return -1;
		}
		if (q->k != 0)
			*q = (struct sock_filter)BPF_STMT(BPF_JMP | BPF_JA, (uint32_t)(n - i - 1));
	}
	return (long)n;
}

/* Emit one instruction. */
#define OP(c, kk) (out[n++] = (struct sock_filter)BPF_STMT((c), (uint32_t)(kk)))
#define JMP(c, kk, t, f) (out[n++] = (struct sock_filter)BPF_JUMP((c), (uint32_t)(kk), (t), (f)))

/* A value in A, IPv4's v4 or IPv6's v6: the IP header's length, else 1 byte. */
static size_t ip_header(struct sock_filter *out, size_t n, uint32_t v4, uint32_t v6)
{
	JMP(BPF_JMP | BPF_JEQ | BPF_K, v4, 0, 1);
	OP(BPF_RET | BPF_K, IPV4_HDR);
	JMP(BPF_JMP | BPF_JEQ | BPF_K, v6, 0, 1);
	OP(BPF_RET | BPF_K, IPV6_HDR);
	OP(BPF_RET | BPF_K, 1);
	return n;
}

/* The length kept, from the frame's first byte as the socket sees it. */
static size_t length(enum link link, struct sock_filter *out, size_t n)
{
	switch (link) {
	case LINK_ETHER:
		/* X: the VLAN tags still in the frame (the kernel has taken the outer one of a
		 * received frame out already), at most two. */
		OP(BPF_LDX | BPF_IMM, 0);
		for (int tag = 0; tag < 2; tag++) {
			OP(BPF_LD | BPF_H | BPF_IND, 12);
			JMP(BPF_JMP | BPF_JEQ | BPF_K, 0x8100, 2, 0);
			JMP(BPF_JMP | BPF_JEQ | BPF_K, 0x88a8, 1, 0);
			JMP(BPF_JMP | BPF_JEQ | BPF_K, 0x9100, 0, 3);
			OP(BPF_MISC | BPF_TXA, 0);
			OP(BPF_ALU | BPF_ADD | BPF_K, 4);
			OP(BPF_MISC | BPF_TAX, 0);
		}
		OP(BPF_LD | BPF_H | BPF_IND, 12);
		JMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0800, 0, 3);
		OP(BPF_MISC | BPF_TXA, 0);
		OP(BPF_ALU | BPF_ADD | BPF_K, ETH_HDR + IPV4_HDR);
		OP(BPF_RET | BPF_A, 0);
		JMP(BPF_JMP | BPF_JEQ | BPF_K, 0x86dd, 0, 3);
		OP(BPF_MISC | BPF_TXA, 0);
		OP(BPF_ALU | BPF_ADD | BPF_K, ETH_HDR + IPV6_HDR);
		OP(BPF_RET | BPF_A, 0);
		OP(BPF_MISC | BPF_TXA, 0);
		OP(BPF_ALU | BPF_ADD | BPF_K, ETH_HDR);
		OP(BPF_RET | BPF_A, 0);
		break;
	case LINK_RAW_IP:
		OP(BPF_LD | BPF_B | BPF_ABS, 0); /* the IP version */
		OP(BPF_ALU | BPF_RSH | BPF_K, 4);
		n = ip_header(out, n, 4, 6);
		break;
	case LINK_COOKED:
		/* The frame starts at the network header; libpcap makes the cooked header. */
		OP(BPF_LD | BPF_H | BPF_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL);
		n = ip_header(out, n, 0x0800, 0x86dd);
		break;
	case LINK_OTHER:
		OP(BPF_RET | BPF_K, 1); /* the time alone */
		break;
	}
	return n;
}

/* The tail's longest: LINK_ETHER's. */
#define TAIL_MAX 32

size_t priv_filter_program(const struct priv_guard *g, struct sock_filter *out, char *err,
			  size_t size)
{
	size_t n = 0;
	long n_admin;
	int dlt;
	enum link link = link_of(g, &dlt);

	/* The interface the frame is on. */
	OP(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_IFINDEX);
	JMP(BPF_JMP | BPF_JEQ | BPF_K, g->ifindex, 1, 0);
	OP(BPF_RET | BPF_K, 0);
	/* Not the protocol of a deaf socket. */
	OP(BPF_LD | BPF_H | BPF_ABS, SKF_AD_OFF + SKF_AD_PROTOCOL);
	JMP(BPF_JMP | BPF_JEQ | BPF_K, PRIV_FILTER_DEAF, 0, 1);
	OP(BPF_RET | BPF_K, 0);
	/* Its direction. */
	if (g->direction != DIR_BOTH) {
		OP(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE);
		if (g->direction == DIR_IN)
			JMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 0, 1);
		else
			JMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, 1, 0);
		OP(BPF_RET | BPF_K, 0);
	}
	/* The share kept. */
	if (g->keep != UINT32_MAX) {
		OP(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_RANDOM);
		JMP(BPF_JMP | BPF_JGT | BPF_K, g->keep, 0, 1);
		OP(BPF_RET | BPF_K, 0);
	}
	n_admin = admin_program(g, dlt, link == LINK_COOKED, out + n, BPF_MAXINSNS - n - TAIL_MAX,
				err, size);
	if (n_admin < 0)
		return 0;
	n += (size_t)n_admin;
	return length(link, out, n);
}

uint32_t priv_filter_keep(double ratio)
{
	/* Kept when the kernel's random 32-bit number is at most ratio * 2^32 - 1. */
	double t = ratio * 4294967296.0 - 1;

	if (!(ratio < 1))
		return UINT32_MAX;
	return t <= 0 ? 0 : t >= 4294967295.0 ? UINT32_MAX : (uint32_t)t;
}

/* The link type of interface name, from sysfs; ARPHRD_VOID if it cannot be read. */
static unsigned arphrd_of(const char *name)
{
	char *path = xasprintf("/sys/class/net/%s/type", name);
	FILE *f = fopen(path, "re");
	unsigned t = ARPHRD_VOID;

	if (f && fscanf(f, "%u", &t) != 1)
		t = ARPHRD_VOID;
	if (f)
		fclose(f);
	free(path);
	return t;
}

/* The program for packet socket fd (its type and its link's read here) in prog; its length,
 * or 0 with the reason in err. */
static size_t program_for(int fd, unsigned ifindex, enum net_direction direction,
			  const char *filter, uint32_t keep, struct sock_filter *prog, char *err,
			  size_t size)
{
	struct priv_guard g = {.ifindex = ifindex, .direction = direction, .filter = filter,
			       .keep = keep};
	char name[IF_NAMESIZE];
	socklen_t len = sizeof(g.sock_type);

	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &g.sock_type, &len) < 0) {
		snprintf(err, size, "not a socket: %s", strerror(errno));
		return 0;
	}
	if (!if_indextoname(ifindex, name)) {
		snprintf(err, size, "interface %u: %s", ifindex, strerror(errno));
		return 0;
	}
	g.arphrd = arphrd_of(name);
	return priv_filter_program(&g, prog, err, size);
}

int priv_filter_attach(int fd, unsigned ifindex, enum net_direction direction,
		      const char *filter, uint32_t keep, int *slots, char *err, size_t size)
{
	static bool said;
	struct sock_filter prog[BPF_MAXINSNS];
	struct sock_fprog fp = {.filter = prog};
	char why[256];

	*slots = -1;
	fp.len = (unsigned short)program_for(fd, ifindex, direction, filter, keep, prog, err,
					     size);
	if (!fp.len)
		return -1;
	*slots = priv_filter_bpf_attach(fd, prog, fp.len, why, sizeof(why));
	if (*slots < 0 && !said) {
		said = true;
		log_warn("privileged process: packet sockets get the classic filter, which cannot "
			 "change once locked (%s): sampling in the kernel is off, and a new filter "
			 "is a new capture",
			 why);
	}
	if (*slots < 0 && priv_ops_attach_filter(fd, &fp) < 0) {
		snprintf(err, size, "the kernel refused the socket filter: %s", strerror(errno));
		return -1;
	}
	/* For good: no process, this one included, can remove or replace it now. */
	if (priv_ops_lock_filter(fd) < 0) {
		snprintf(err, size, "the kernel did not lock the socket filter: %s",
			 strerror(errno));
		if (*slots >= 0)
			close(*slots);
		*slots = -1;
		return -1;
	}
	return 0;
}

int priv_filter_replace(int slots, int fd, unsigned ifindex, enum net_direction direction,
			const char *filter, uint32_t keep, char *err, size_t size)
{
	struct sock_filter prog[BPF_MAXINSNS];
	size_t n;

	if (slots < 0) {
		if (priv_filter_matches(fd, ifindex, direction, filter, keep))
			return 0;
		snprintf(err, size, "its classic filter is locked and cannot change");
		errno = EPERM;
		return -1;
	}
	n = program_for(fd, ifindex, direction, filter, keep, prog, err, size);
	if (!n) {
		errno = EINVAL;
		return -1;
	}
	return priv_filter_bpf_replace(slots, prog, n, err, size);
}

bool priv_filter_matches(int fd, unsigned ifindex, enum net_direction direction,
			 const char *filter, uint32_t keep)
{
	struct sock_filter want[BPF_MAXINSNS], has[BPF_MAXINSNS];
	socklen_t n = BPF_MAXINSNS;
	char err[256];
	size_t len = program_for(fd, ifindex, direction, filter, keep, want, err, sizeof(err));

	/* SO_GET_FILTER counts instructions, not bytes. */
	return len && getsockopt(fd, SOL_SOCKET, SO_GET_FILTER, has, &n) == 0 && n == len &&
	       memcmp(want, has, len * sizeof(*want)) == 0;
}
