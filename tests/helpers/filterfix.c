/* filterfix: the packet filters' shared test fixtures (filterfix.h). Apart from the tests'
 * files: libpcap's header names its classic instruction struct bpf_insn, as the kernel's
 * names eBPF's, so a test of the eBPF side cannot include it. */
#include "autoconf.h"

#include "filterfix.h"

#include <check.h>
#include <string.h>

#include <pcap/pcap.h>

const char *const tu_filter_exprs[] = {
	"udp dst port 9", "udp and len > 300", "udp[10] & 1 = 1",
	"ip[2:2] - ((ip[0] & 0xf) << 2) > 100", "len % 3 = 0", "len / 7 > 40",
	"ip dst host 127.0.0.1 and not udp dst port 10",
	"ip src 255.255.255.255 or udp dst port 11", "inbound and udp", "outbound",
	"ip[12:4] != 0xfffffffe and udp[10] < 20", "ip6 or arp or udp dst port 12",
};
const size_t tu_filter_nexprs = sizeof(tu_filter_exprs) / sizeof(tu_filter_exprs[0]);

size_t tu_filter_compile(const char *expr, struct sock_filter *prog)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	struct bpf_program bp;
	size_t n;

	ck_assert_ptr_nonnull(dead);
	ck_assert_msg(pcap_compile(dead, &bp, expr, 1, PCAP_NETMASK_UNKNOWN) == 0, "%s: %s", expr,
		      pcap_geterr(dead));
	n = bp.bf_len;
	ck_assert_uint_le(n, BPF_MAXINSNS);
	_Static_assert(sizeof(*bp.bf_insns) == sizeof(*prog), "one classic instruction");
	memcpy(prog, bp.bf_insns, n * sizeof(*prog));
	pcap_freecode(&bp);
	pcap_close(dead);
	return n;
}

int tu_filter_ancillary(const struct sock_filter *prog, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (BPF_CLASS(prog[i].code) == BPF_LD && BPF_MODE(prog[i].code) == BPF_ABS &&
		    prog[i].k >= (uint32_t)SKF_AD_OFF)
			return 1;
	return 0;
}

uint32_t tu_filter_classic(const struct sock_filter *prog, size_t n, const uint8_t *frame,
			   size_t len)
{
	(void)n; /* the interpreter runs to a return, which the last instruction is */
	return bpf_filter((const struct bpf_insn *)(const void *)prog, frame, (u_int)len,
			  (u_int)len);
}
