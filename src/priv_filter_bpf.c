/* priv_filter_bpf: the privileged process's socket filter (priv_filter.c) as an eBPF
 * program, so that it can change under a lock.
 *
 * A classic filter, once locked (SO_LOCK_FILTER), never changes again; yet sampling (the
 * share kept) and a reload (the administrator's filter) change it while the capture runs.
 * So the program locked on a packet socket is a stub that tail-calls slot 0 of a program
 * array only the privileged process holds; the classic program, translated here, goes in
 * that slot, and a new one replaces it there in one step. The collector, which may make no
 * bpf() call and holds no descriptor of the array, can do neither.
 *
 * The translation is the kernel's own (net/core/filter.c, bpf_convert_filter) for what
 * libpcap and priv_filter.c emit: A in R0, X in R7, the context in R6, the scratch memory on
 * the stack; the frame read with the legacy LD_ABS and LD_IND, which end the program with 0
 * (the frame dropped) past the frame's end, as a classic load does; ancillary loads as
 * reads of struct __sk_buff or helper calls. What it cannot translate it refuses, and the
 * caller locks the classic program itself. */
#include "autoconf.h"

#include "priv_filter_bpf.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "priv_ops.h"

enum { R0, R1, R2, R3, R6 = 6, R7, R8, R9, R10 };
#define REG_A R0
#define REG_X R7
#define REG_CTX R6
#define REG_SAVE R8 /* A, across LDX MSH */
#define REG_TMP R9  /* a constant compared with as 32 unsigned bits */
#define MEM_WORDS 16 /* BPF_MEMWORDS */

struct emit {
	struct bpf_insn *out; /* NULL: count only */
	size_t n;
	const size_t *start; /* each classic instruction's first here (NULL: count only) */
};

static void put(struct emit *e, uint8_t code, uint8_t dst, uint8_t src, int16_t off,
		int32_t imm)
{
	if (e->out && e->n < PRIV_FILTER_BPF_MAX)
		e->out[e->n] = (struct bpf_insn){
			.code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm};
	e->n++;
}

/* The offset of a jump put next to classic instruction t. */
static int16_t to(const struct emit *e, size_t t)
{
	return e->start ? (int16_t)((long)e->start[t] - (long)(e->n + 1)) : 0;
}

static void ctx_load(struct emit *e, size_t field)
{
	put(e, BPF_LDX | BPF_MEM | BPF_W, REG_A, REG_CTX, (int16_t)field, 0);
}

static void call(struct emit *e, int32_t helper)
{
	put(e, BPF_JMP | BPF_CALL, 0, 0, 0, helper);
	put(e, BPF_ALU | BPF_MOV | BPF_X, REG_A, REG_A, 0, 0); /* 32 bits, as A is */
}

/* A = an ancillary field, as a classic program's load of SKF_AD_OFF + ad gives it. */
static bool ancillary(struct emit *e, uint32_t ad)
{
	switch (ad) {
	case SKF_AD_PROTOCOL: /* ntohs(skb->protocol) */
		ctx_load(e, offsetof(struct __sk_buff, protocol));
		put(e, BPF_ALU | BPF_END | BPF_TO_BE, REG_A, 0, 0, 16);
		return true;
	case SKF_AD_VLAN_TPID:
		ctx_load(e, offsetof(struct __sk_buff, vlan_proto));
		put(e, BPF_ALU | BPF_END | BPF_TO_BE, REG_A, 0, 0, 16);
		return true;
	case SKF_AD_PKTTYPE:
		ctx_load(e, offsetof(struct __sk_buff, pkt_type));
		return true;
	case SKF_AD_IFINDEX:
		ctx_load(e, offsetof(struct __sk_buff, ifindex));
		return true;
	case SKF_AD_MARK:
		ctx_load(e, offsetof(struct __sk_buff, mark));
		return true;
	case SKF_AD_QUEUE:
		ctx_load(e, offsetof(struct __sk_buff, queue_mapping));
		return true;
	case SKF_AD_RXHASH:
		ctx_load(e, offsetof(struct __sk_buff, hash));
		return true;
	case SKF_AD_VLAN_TAG:
		ctx_load(e, offsetof(struct __sk_buff, vlan_tci));
		return true;
	case SKF_AD_VLAN_TAG_PRESENT:
		ctx_load(e, offsetof(struct __sk_buff, vlan_present));
		return true;
	case SKF_AD_RANDOM:
		call(e, BPF_FUNC_get_prandom_u32);
		return true;
	case SKF_AD_CPU:
		call(e, BPF_FUNC_get_smp_processor_id);
		return true;
	default:
		return false;
	}
}

/* The scratch word k, on the stack. */
static int16_t mem(uint32_t k)
{
	return (int16_t)(-4 * (MEM_WORDS - (int)k));
}

/* Classic instruction i of prog (n) at e; false with the reason in err. */
static bool one(struct emit *e, const struct sock_filter *prog, size_t i, size_t n, char *err,
		size_t size)
{
	const struct sock_filter *p = &prog[i];
	uint16_t code = p->code;
	uint32_t k = p->k;
	uint8_t op = BPF_OP(code), src = BPF_SRC(code);

	switch (BPF_CLASS(code)) {
	case BPF_LD:
	case BPF_LDX: {
		uint8_t dst = BPF_CLASS(code) == BPF_LD ? REG_A : REG_X;

		switch (BPF_MODE(code)) {
		case BPF_ABS:
			if (BPF_CLASS(code) != BPF_LD)
				break;
			if (k >= (uint32_t)SKF_AD_OFF) {
				if (ancillary(e, k - (uint32_t)SKF_AD_OFF))
					return true;
				snprintf(err, size, "instruction %zu: ancillary load %d", i,
					 (int)(k - (uint32_t)SKF_AD_OFF));
				return false;
			}
			if ((int32_t)k < 0)
				break;
			put(e, BPF_LD | BPF_ABS | BPF_SIZE(code), 0, 0, 0, (int32_t)k);
			return true;
		case BPF_IND:
			if (BPF_CLASS(code) != BPF_LD || (int32_t)k < 0)
				break;
			put(e, BPF_LD | BPF_IND | BPF_SIZE(code), 0, REG_X, 0, (int32_t)k);
			return true;
		case BPF_LEN:
			put(e, BPF_LDX | BPF_MEM | BPF_W, dst, REG_CTX,
			    (int16_t)offsetof(struct __sk_buff, len), 0);
			return true;
		case BPF_IMM:
			put(e, BPF_ALU | BPF_MOV | BPF_K, dst, 0, 0, (int32_t)k);
			return true;
		case BPF_MEM:
			if (k >= MEM_WORDS)
				break;
			put(e, BPF_LDX | BPF_MEM | BPF_W, dst, R10, mem(k), 0);
			return true;
		case BPF_MSH: /* X = 4 * (P[k] & 0xf) */
			if (BPF_CLASS(code) != BPF_LDX || (int32_t)k < 0)
				break;
			put(e, BPF_ALU64 | BPF_MOV | BPF_X, REG_SAVE, REG_A, 0, 0);
			put(e, BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, (int32_t)k);
			put(e, BPF_ALU | BPF_AND | BPF_K, REG_A, 0, 0, 0xf);
			put(e, BPF_ALU | BPF_LSH | BPF_K, REG_A, 0, 0, 2);
			put(e, BPF_ALU | BPF_MOV | BPF_X, REG_X, REG_A, 0, 0);
			put(e, BPF_ALU64 | BPF_MOV | BPF_X, REG_A, REG_SAVE, 0, 0);
			return true;
		}
		break;
	}
	case BPF_ST:
	case BPF_STX:
		if (k >= MEM_WORDS)
			break;
		put(e, BPF_STX | BPF_MEM | BPF_W, R10, BPF_CLASS(code) == BPF_ST ? REG_A : REG_X,
		    mem(k), 0);
		return true;
	case BPF_ALU:
		if (op == BPF_NEG) {
			put(e, BPF_ALU | BPF_NEG, REG_A, 0, 0, 0);
			return true;
		}
		if (op != BPF_ADD && op != BPF_SUB && op != BPF_MUL && op != BPF_DIV &&
		    op != BPF_MOD && op != BPF_OR && op != BPF_AND && op != BPF_XOR &&
		    op != BPF_LSH && op != BPF_RSH)
			break;
		if (src == BPF_K && (((op == BPF_DIV || op == BPF_MOD) && k == 0) ||
				     ((op == BPF_LSH || op == BPF_RSH) && k >= 32)))
			break;
		if (src == BPF_X && (op == BPF_DIV || op == BPF_MOD)) {
			/* A classic division by zero drops the frame; eBPF's gives 0. */
			put(e, BPF_JMP | BPF_JNE | BPF_K, REG_X, 0, 2, 0);
			put(e, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, 0);
			put(e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		}
		put(e, BPF_ALU | op | src, REG_A, src == BPF_X ? REG_X : 0, 0,
		    src == BPF_K ? (int32_t)k : 0);
		return true;
	case BPF_JMP:
		if (op == BPF_JA) {
			if (k >= n - i - 1)
				break;
			put(e, BPF_JMP | BPF_JA, 0, 0, to(e, i + 1 + k), 0);
			return true;
		}
		if ((op != BPF_JEQ && op != BPF_JGT && op != BPF_JGE && op != BPF_JSET) ||
		    p->jt >= n - i - 1 || p->jf >= n - i - 1)
			break;
		if (src == BPF_K && (int32_t)k < 0) {
			/* eBPF would extend the sign of the constant to 64 bits; A has none. */
			put(e, BPF_ALU | BPF_MOV | BPF_K, REG_TMP, 0, 0, (int32_t)k);
			put(e, BPF_JMP | op | BPF_X, REG_A, REG_TMP, to(e, i + 1 + p->jt), 0);
		} else {
			put(e, BPF_JMP | op | src, REG_A, src == BPF_X ? REG_X : 0,
			    to(e, i + 1 + p->jt), src == BPF_K ? (int32_t)k : 0);
		}
		if (p->jf)
			put(e, BPF_JMP | BPF_JA, 0, 0, to(e, i + 1 + p->jf), 0);
		return true;
	case BPF_RET:
		if (BPF_RVAL(code) == BPF_K)
			put(e, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, (int32_t)k);
		else if (BPF_RVAL(code) != BPF_A)
			break;
		put(e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		return true;
	case BPF_MISC:
		if (BPF_MISCOP(code) == BPF_TAX)
			put(e, BPF_ALU | BPF_MOV | BPF_X, REG_X, REG_A, 0, 0);
		else
			put(e, BPF_ALU | BPF_MOV | BPF_X, REG_A, REG_X, 0, 0);
		return true;
	}
	snprintf(err, size, "instruction %zu (code 0x%x, k %u) cannot be translated", i, code, k);
	return false;
}

/* The start: the context kept, A and X 0, the scratch memory zeroed if used. */
static void prologue(struct emit *e, bool uses_mem)
{
	put(e, BPF_ALU64 | BPF_MOV | BPF_X, REG_CTX, R1, 0, 0);
	put(e, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, 0);
	put(e, BPF_ALU | BPF_MOV | BPF_K, REG_X, 0, 0, 0);
	if (uses_mem)
		for (int w = 1; w <= MEM_WORDS / 2; w++)
			put(e, BPF_ST | BPF_MEM | BPF_DW, R10, 0, (int16_t)(-8 * w), 0);
}

size_t priv_filter_bpf_translate(const struct sock_filter *prog, size_t n, struct bpf_insn *out,
				 char *err, size_t size)
{
	size_t start[BPF_MAXINSNS];
	struct emit e = {0};
	bool uses_mem = false;

	if (n == 0 || n > BPF_MAXINSNS || BPF_CLASS(prog[n - 1].code) != BPF_RET) {
		snprintf(err, size, "not a classic program that ends with a return");
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		uses_mem |= BPF_CLASS(prog[i].code) == BPF_ST || BPF_CLASS(prog[i].code) == BPF_STX ||
			    ((BPF_CLASS(prog[i].code) == BPF_LD || BPF_CLASS(prog[i].code) == BPF_LDX) &&
			     BPF_MODE(prog[i].code) == BPF_MEM);
	/* Where each instruction starts (no length depends on an offset), then the program. */
	prologue(&e, uses_mem);
	for (size_t i = 0; i < n; i++) {
		start[i] = e.n;
		if (!one(&e, prog, i, n, err, size))
			return 0;
	}
	if (e.n > PRIV_FILTER_BPF_MAX) {
		snprintf(err, size, "%zu eBPF instructions, more than %d", e.n, PRIV_FILTER_BPF_MAX);
		return 0;
	}
	e = (struct emit){.out = out, .start = start};
	prologue(&e, uses_mem);
	for (size_t i = 0; i < n; i++)
		(void)one(&e, prog, i, n, err, size);
	return e.n;
}

size_t priv_filter_bpf_stub(int map_fd, struct bpf_insn *out)
{
	struct emit e = {.out = out};

	put(&e, BPF_LD | BPF_DW | BPF_IMM, R2, BPF_PSEUDO_MAP_FD, 0, map_fd);
	put(&e, 0, 0, 0, 0, 0);
	put(&e, BPF_ALU | BPF_MOV | BPF_K, R3, 0, 0, 0);
	put(&e, BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_tail_call); /* R1: the context still */
	put(&e, BPF_ALU | BPF_MOV | BPF_K, REG_A, 0, 0, 0);       /* the slot empty: dropped */
	put(&e, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	return e.n;
}

/* ---- loading ---- */

/* The verifier's account, last line first (the reason is at the end). */
static void last_line(char *log)
{
	size_t n = strlen(log);
	char *nl;

	while (n && log[n - 1] == '\n')
		log[--n] = 0;
	nl = strrchr(log, '\n');
	if (nl)
		memmove(log, nl + 1, strlen(nl + 1) + 1);
}

/* Classic program prog (n) as eBPF, loaded: its descriptor, or -1 with the reason in err. */
static int load(const struct sock_filter *prog, size_t n, char *err, size_t size)
{
	static struct bpf_insn insns[PRIV_FILTER_BPF_MAX];
	static char log[16384];
	size_t len = priv_filter_bpf_translate(prog, n, insns, err, size);
	int fd;

	if (!len)
		return -1;
	fd = priv_ops_bpf_load(insns, len, log, sizeof(log));
	if (fd < 0) {
		int e = errno;

		last_line(log);
		snprintf(err, size, "the kernel refused the eBPF program: %s%s%s", strerror(e),
			 log[0] ? ": " : "", log);
	}
	return fd;
}

/* The stub that runs slot 0 of slots, loaded: its descriptor, or -1 with the reason. */
static int load_stub(int slots, struct bpf_insn *stub, char *err, size_t size)
{
	static char log[4096];
	int fd = priv_ops_bpf_load(stub, priv_filter_bpf_stub(slots, stub), log, sizeof(log));

	if (fd < 0) {
		int e = errno;

		last_line(log);
		snprintf(err, size, "the kernel refused the eBPF stub: %s%s%s", strerror(e),
			 log[0] ? ": " : "", log);
	}
	return fd;
}

int priv_filter_bpf_attach(int fd, const struct sock_filter *prog, size_t n, char *err, size_t size)
{
	struct bpf_insn stub[8];
	int slots, guard = -1, runner = -1, rc = -1;

	slots = priv_ops_bpf_slots();
	if (slots < 0) {
		snprintf(err, size, "no eBPF program array: %s", strerror(errno));
		return -1;
	}
	guard = load(prog, n, err, size);
	if (guard >= 0 && priv_ops_bpf_set(slots, guard) < 0)
		snprintf(err, size, "the eBPF program array refused the program: %s",
			 strerror(errno));
	else if (guard >= 0 && (runner = load_stub(slots, stub, err, size)) >= 0) {
		if (priv_ops_attach_bpf(fd, runner) < 0)
			snprintf(err, size, "the kernel refused the eBPF socket filter: %s",
				 strerror(errno));
		else
			rc = 0;
	}
	if (guard >= 0)
		close(guard);
	if (runner >= 0)
		close(runner);
	if (rc < 0) {
		close(slots);
		return -1;
	}
	return slots;
}

int priv_filter_bpf_replace(int slots, const struct sock_filter *prog, size_t n, char *err,
			    size_t size)
{
	int guard = load(prog, n, err, size), e;

	if (guard < 0) {
		errno = EINVAL;
		return -1;
	}
	if (priv_ops_bpf_set(slots, guard) < 0) {
		e = errno;
		snprintf(err, size, "the eBPF program array refused the program: %s", strerror(e));
		close(guard);
		errno = e;
		return -1;
	}
	close(guard);
	return 0;
}
