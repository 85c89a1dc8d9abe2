/* priv_filter_bpf: a classic socket filter as an eBPF program, and the locked stub that
 * runs it (see priv_filter_bpf.c). */
#ifndef ENTROPYD_PRIV_FILTER_BPF_H
#define ENTROPYD_PRIV_FILTER_BPF_H

#include <linux/filter.h>
#include <stddef.h>

struct bpf_insn; /* eBPF's (linux/bpf.h), not libpcap's classic one of the same name */

/* The most instructions of a translated program: the limit of a kernel before 5.2. */
#define PRIV_FILTER_BPF_MAX 4096

/* Classic program prog (n instructions, as the kernel's own checker would accept it) as an
 * eBPF socket filter in out (PRIV_FILTER_BPF_MAX instructions) that keeps the same bytes of
 * the same frames. Its length, or 0 with the reason in err: an ancillary load it does not
 * know, a jump out of the program, a program that would be too long. */
size_t priv_filter_bpf_translate(const struct sock_filter *prog, size_t n, struct bpf_insn *out,
				 char *err, size_t size);

/* The stub locked on a socket: a tail call to slot 0 of the program array map_fd, and a
 * frame dropped when the slot is empty. Its length (out: 6 instructions). */
size_t priv_filter_bpf_stub(int map_fd, struct bpf_insn *out);

/* prog (n) on packet socket fd as eBPF, behind the stub, not yet locked: the descriptor of
 * the program array whose slot holds it (for priv_filter_bpf_replace(); the socket keeps
 * it too), or -1 with the reason in err (then fd has no filter). */
int priv_filter_bpf_attach(int fd, const struct sock_filter *prog, size_t n, char *err,
			   size_t size);

/* prog (n) in slot 0 of slots, in place of the program there, in one step. 0, or -1 with
 * errno and the reason in err. */
int priv_filter_bpf_replace(int slots, const struct sock_filter *prog, size_t n, char *err,
			    size_t size);

#endif
