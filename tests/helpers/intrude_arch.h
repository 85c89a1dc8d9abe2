/* intrude_arch.h: intrude's architecture layer. Where a stopped process keeps a system
 * call's number, arguments and result, its stack pointer and its program counter (the
 * general registers, PTRACE_GETREGSET NT_PRSTATUS), and the encodings of its system call
 * instruction: x86-64 (syscall), aarch64 (svc #0) and 32-bit arm (EABI: the number in r7;
 * svc #0 in ARM or in Thumb state, on an arm kernel or an arm64 kernel's compat mode).
 * Included by intrude.c alone; elsewhere INTRUDE_ARCH is left undefined. */
#include <elf.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>

/* One encoding of the system call instruction: its bytes in memory, its length (also its
 * alignment), and for arm whether it is a Thumb one (the state it must run in). */
struct arch_insn {
	unsigned char bytes[4];
	unsigned len;
	bool thumb;
};

#if defined(__x86_64__)

#define INTRUDE_ARCH "x86-64"
typedef struct user_regs_struct arch_regs;
static const struct arch_insn arch_insns[] = {{{0x0f, 0x05}, 2, false}};
#define ARCH_RED_ZONE 128 /* below the stack pointer, the code's own (the SysV ABI) */

static unsigned long arch_sp(const arch_regs *r) { return r->rsp; }
static unsigned long arch_pc(const arch_regs *r) { return r->rip; }
static long arch_result(const arch_regs *r) { return (long)r->rax; }

/* Stopped in a call (as a daemon in its event loop is), it is stopped just after the
 * instruction; a call to be restarted is rewound only when it goes on. */
static bool arch_after_call(const arch_regs *r) { return (long long)r->orig_rax >= 0; }

static void arch_set_call(arch_regs *r, long nr, const unsigned long a[6], unsigned long pc,
			  const struct arch_insn *insn)
{
	(void)insn;
	r->rax = (unsigned long)nr;
	r->orig_rax = -1; /* no restart of the call it was stopped in: this one is ours */
	r->rdi = a[0];
	r->rsi = a[1];
	r->rdx = a[2];
	r->r10 = a[3];
	r->r8 = a[4];
	r->r9 = a[5];
	r->rip = pc;
}

#elif defined(__aarch64__)

#define INTRUDE_ARCH "aarch64"
typedef struct user_regs_struct arch_regs;
static const struct arch_insn arch_insns[] = {{{0x01, 0x00, 0x00, 0xd4}, 4, false}};
#define ARCH_RED_ZONE 0

static unsigned long arch_sp(const arch_regs *r) { return r->sp; }
static unsigned long arch_pc(const arch_regs *r) { return r->pc; }
static long arch_result(const arch_regs *r) { return (long)r->regs[0]; }

/* The registers do not say: the kernel has already rewound a call to be restarted onto
 * its instruction when the process stops, so the instruction before pc proves nothing. */
static bool arch_after_call(const arch_regs *r) { (void)r; return false; }

static void arch_set_call(arch_regs *r, long nr, const unsigned long a[6], unsigned long pc,
			  const struct arch_insn *insn)
{
	(void)insn;
	r->regs[8] = (unsigned long)nr;
	for (int i = 0; i < 6; i++)
		r->regs[i] = a[i];
	r->pc = pc;
}

#elif defined(__arm__)

#define INTRUDE_ARCH "arm"
typedef struct user_regs arch_regs;
/* svc #0 in ARM state (0xef000000), then in Thumb state (0xdf00); glibc's own are Thumb */
static const struct arch_insn arch_insns[] = {{{0x00, 0x00, 0x00, 0xef}, 4, false},
					     {{0x00, 0xdf}, 2, true}};
#define ARCH_RED_ZONE 0
#define ARM_CPSR_T 0x20u	  /* Thumb state */
#define ARM_CPSR_IT 0x0600fc00u /* the state of an IT block: none for our instruction */

static unsigned long arch_sp(const arch_regs *r) { return r->uregs[13]; }
static unsigned long arch_pc(const arch_regs *r) { return r->uregs[15]; }
static long arch_result(const arch_regs *r) { return (long)r->uregs[0]; }

/* As on aarch64; and a Thumb halfword before pc may be half of a longer instruction. */
static bool arch_after_call(const arch_regs *r) { (void)r; return false; }

static void arch_set_call(arch_regs *r, long nr, const unsigned long a[6], unsigned long pc,
			  const struct arch_insn *insn)
{
	r->uregs[7] = (unsigned long)nr;
	for (int i = 0; i < 6; i++)
		r->uregs[i] = a[i];
	r->uregs[15] = pc;
	r->uregs[16] &= ~(ARM_CPSR_T | ARM_CPSR_IT);
	if (insn->thumb)
		r->uregs[16] |= ARM_CPSR_T;
}

#endif

#ifdef INTRUDE_ARCH
#include <sys/ptrace.h>

/* getuid(): arm's (and i386's) call of that name gives 16 bits; glibc calls getuid32 */
#ifdef SYS_getuid32
#define ARCH_SYS_GETUID SYS_getuid32
#else
#define ARCH_SYS_GETUID SYS_getuid
#endif

static long arch_get_regs(pid_t pid, arch_regs *r)
{
	struct iovec iov = {.iov_base = r, .iov_len = sizeof(*r)};

	return ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov);
}

static long arch_set_regs(pid_t pid, arch_regs *r)
{
	struct iovec iov = {.iov_base = r, .iov_len = sizeof(*r)};

	return ptrace(PTRACE_SETREGSET, pid, (void *)NT_PRSTATUS, &iov);
}
#endif
