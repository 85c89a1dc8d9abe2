/* kernel: what the running kernel does with credit (CRNG state, entropy_avail, version). */
#ifndef ENTROPYD_KERNEL_H
#define ENTROPYD_KERNEL_H

#include <stdbool.h>

struct kernel_state {
	unsigned major, minor;
	/* 5.18 and later: credit counts only until the CRNG is initialised; entropy_avail is
	 * then 256 for good and further credit is ignored. */
	bool credit_until_ready;
	bool crng_ready;
	int entropy_avail; /* -1 if it cannot be read */
};

void kernel_probe(struct kernel_state *ks);
/* 5.18 and later: the CRNG is ready once 256 bits are credited (random.c's POOL_READY_BITS),
 * and until then entropy_avail is the credit so far (input_pool.init_bits). */
#define KERNEL_READY_BITS 256
/* The bits the kernel still needs before its CRNG is ready: 0 when it is ready or when credit
 * counts otherwise (before 5.18); all 256 when entropy_avail cannot be read. */
int kernel_bits_needed(const struct kernel_state *ks);
/* getrandom(GRND_NONBLOCK) succeeds once the CRNG is ready. */
bool kernel_crng_ready(void);
int kernel_entropy_avail(void);
/* The kernel's tick rate (CONFIG_HZ), read from /proc/config.gz or /boot/config-RELEASE. When
 * neither says, 1000 is assumed: the shortest common jiffy, so that what counts as finer
 * than the kernel's own resolution is, if anything, less than it really is. *from names
 * where it came from. */
unsigned kernel_hz(const char **from);

/* One sentence for the log and status: what this state means for credit. */
const char *kernel_meaning(const struct kernel_state *ks);

#endif
