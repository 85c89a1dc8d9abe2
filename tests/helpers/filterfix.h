/* filterfix: what the tests of the packet filters share (check_priv_filter,
 * check_priv_filter_bpf): libpcap expressions, compiled as for a capture on an Ethernet link,
 * and libpcap's own interpreter of classic programs. */
#ifndef ENTROPYD_FILTERFIX_H
#define ENTROPYD_FILTERFIX_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

/* Expressions an administrator may write (network.filter): loads of every width, absolute
 * and indirect, arithmetic, comparisons with large constants, directions. */
extern const char *const tu_filter_exprs[];
extern const size_t tu_filter_nexprs;

/* expr compiled by libpcap for an Ethernet link (DLT_EN10MB, optimised) into prog
 * (BPF_MAXINSNS): its length; fails the test, naming expr, if libpcap refuses it. */
size_t tu_filter_compile(const char *expr, struct sock_filter *prog);

/* Whether prog (n) makes an ancillary load (SKF_AD_OFF + ...), which libpcap's interpreter
 * cannot give: only the kernel knows a frame's direction, protocol or interface. */
int tu_filter_ancillary(const struct sock_filter *prog, size_t n);

/* prog (n) run by libpcap's interpreter (bpf_filter(3PCAP)) on frame (len bytes, all of it
 * captured): the bytes a classic filter keeps of it, 0 for none. */
uint32_t tu_filter_classic(const struct sock_filter *prog, size_t n, const uint8_t *frame,
			   size_t len);

#endif
