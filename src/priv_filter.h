/* priv_filter: the socket filter on every packet socket entropyd captures with (see
 * priv_filter.c). */
#ifndef ENTROPYD_PRIV_FILTER_H
#define ENTROPYD_PRIV_FILTER_H

#include <linux/filter.h>
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

/* The most bytes of a frame the filter hands over: the link header with two VLAN tags and
 * an IPv6 header, where the source address is. */
#define PRIV_GUARD_BYTES (14 + 8 + 40)

/* The program for g in out (BPF_MAXINSNS instructions): the interface, the direction, the
 * share kept, the administrator's filter (compiled here with libpcap for the link), then
 * the length: up to the end of the IP header (the link header alone for other protocols),
 * never more. Its length, or 0 with the reason in err. */
size_t priv_filter_program(const struct priv_guard *g, struct sock_filter *out, char *err,
			  size_t size);

/* The program for interface ifindex, frames of direction that filter (the administrator's)
 * accepts, with the share keep, on packet socket fd (its type and the link's read here).
 * 0, or -1 with the reason in err. */
int priv_filter_attach(int fd, unsigned ifindex, enum net_direction direction,
		      const char *filter, uint32_t keep, char *err, size_t size);

/* The threshold of priv_guard.keep for a share (0 < ratio <= 1) of the frames. */
uint32_t priv_filter_keep(double ratio);

#endif
