/* priv_filter: the socket filter on every packet socket entropyd captures with (see
 * priv_filter.c). */
#ifndef ENTROPYD_PRIV_FILTER_H
#define ENTROPYD_PRIV_FILTER_H

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* What the filter lets through, as the privileged process reads it from its own
 * configuration and from the interface. */
struct priv_guard {
	unsigned ifindex;             /* the interface the configuration selects */
	enum net_direction direction; /* in: all but PACKET_OUTGOING; out: only those; both */
	int sock_type;                /* SOCK_RAW (the link's header first) or SOCK_DGRAM */
	unsigned arphrd;              /* the link's type (ARPHRD_*, /sys/class/net/NAME/type) */
	const char *filter;           /* the administrator's expression; "" or NULL: none */
	uint32_t keep;                /* sampling: kept if the kernel's random number is at most
				       * keep; UINT32_MAX keeps every frame */
};

/* The protocol no frame the filter takes has: a packet socket bound to it alone is deaf
 * (priv_serve.c). A length, never an EtherType (below ETH_P_802_3_MIN), and no protocol
 * number of the kernel's own. */
#define PRIV_FILTER_DEAF 0x05ff

/* The most bytes of a frame the filter hands over: the link header with two VLAN tags and
 * an IPv6 header, where the source address is. */
#define PRIV_GUARD_BYTES (14 + 8 + 40)

/* The program for g in out (BPF_MAXINSNS instructions): the interface, not
 * PRIV_FILTER_DEAF, the direction, the
 * share kept, the administrator's filter (compiled here with libpcap for the link), then
 * the length: up to the end of the IP header (the link header alone for other protocols),
 * never more. Its length, or 0 with the reason in err. */
size_t priv_filter_program(const struct priv_guard *g, struct sock_filter *out, char *err,
			  size_t size);

/* The program for interface ifindex, frames of direction that filter (the administrator's)
 * accepts, with the share keep, on packet socket fd (its type and the link's read here),
 * locked there (SO_LOCK_FILTER): no process can replace or remove what is attached. Where
 * the kernel lets this process load eBPF, what is locked is a stub that runs the program
 * (translated, priv_filter_bpf.c) from a slot only this process holds, *slots (closed by
 * the caller with the socket): priv_filter_replace() changes it there. Else the classic
 * program itself is locked, for good (*slots -1), said once. 0, or -1 with the reason in
 * err. */
int priv_filter_attach(int fd, unsigned ifindex, enum net_direction direction,
		      const char *filter, uint32_t keep, int *slots, char *err, size_t size);

/* The program of packet socket fd, in slot `slots` as priv_filter_attach() gave it, made the
 * one for ifindex, direction, filter and keep now. Under a locked classic program (slots
 * -1) only if it is that one already (else EPERM: the socket must be replaced). 0, or -1
 * with errno and the reason in err. */
int priv_filter_replace(int slots, int fd, unsigned ifindex, enum net_direction direction,
			const char *filter, uint32_t keep, char *err, size_t size);

/* Is the program on packet socket fd the one priv_filter_attach() would attach now (the
 * interface's link and the configuration as they are)? */
bool priv_filter_matches(int fd, unsigned ifindex, enum net_direction direction,
			 const char *filter, uint32_t keep);

/* The threshold of priv_guard.keep for a share (0 < ratio <= 1) of the frames. */
uint32_t priv_filter_keep(double ratio);

#endif
