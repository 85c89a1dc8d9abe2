/* kernel: what the running kernel does with credit (its semantics, CRNG state, entropy_avail). */
#ifndef ENTROPYD_KERNEL_H
#define ENTROPYD_KERNEL_H

#include <stdbool.h>
#include <stddef.h>

/* Where the kernel says how its random driver works. A parameter of kernel_probe_at(), so
 * that tests can read recorded trees of other kernels. */
#define KERNEL_RANDOM_DIR "/proc/sys/kernel/random"
/* The device whose poll() answers say when the CRNG is ready (POLLIN) and, with the old
 * semantics, when entropy_avail is below write_wakeup_threshold (POLLOUT). */
#define KERNEL_RANDOM_DEV "/dev/random"

/* What told us how the kernel treats credit, strongest first. */
enum kernel_evidence {
	KERNEL_BY_POOLSIZE,    /* poolsize: 256 since the 2022 rewrite, 4096 before */
	KERNEL_BY_READ_WAKEUP, /* no usable poolsize, but read_wakeup_threshold (gone in 5.6) */
	KERNEL_BY_VERSION,     /* nothing readable: the version, a last resort */
};

struct kernel_state {
	unsigned major, minor;
	/* The 2022 rewrite of the random driver (5.18, and backported to the stable series:
	 * Debian 11's 5.10.262 has it): credit counts only until the CRNG is initialised;
	 * entropy_avail is then 256 for good and further credit is ignored. False: a pool of
	 * 4096 bits that extraction depletes, where credit counts always. */
	bool credit_until_ready;
	enum kernel_evidence by;
	int poolsize;       /* bits; -1 if it cannot be read */
	bool read_wakeup;   /* read_wakeup_threshold exists (kernels before 5.6) */
	int write_wakeup;   /* write_wakeup_threshold in bits; -1 if it cannot be read */
	/* One line: the semantics found and why ("poolsize 256: credit counts until the CRNG
	 * is ready (5.18 semantics)"), for the log and status. */
	char why[160];
	bool crng_ready;
	int entropy_avail; /* -1 if it cannot be read */
};

/* Probe the running kernel: KERNEL_RANDOM_DIR, uname(2) and getrandom(2). */
void kernel_probe(struct kernel_state *ks);
/* The same with another directory in place of KERNEL_RANDOM_DIR (recorded trees); the CRNG
 * state and the version still come from the running kernel. */
void kernel_probe_at(struct kernel_state *ks, const char *random_dir);
/* "until-ready" or "depleting": the semantics, for status and metrics. */
const char *kernel_semantics_name(const struct kernel_state *ks);
/* "poolsize", "read_wakeup_threshold" or "version": what they were decided by. */
const char *kernel_evidence_name(const struct kernel_state *ks);

/* 5.18 semantics: the CRNG is ready once 256 bits are credited (random.c's POOL_READY_BITS),
 * and until then entropy_avail is the credit so far (input_pool.init_bits). */
#define KERNEL_READY_BITS 256
/* The bits the kernel still needs before its CRNG is ready: 0 when it is ready or when credit
 * counts otherwise (the old semantics); all 256 when entropy_avail cannot be read. */
int kernel_bits_needed(const struct kernel_state *ks);
/* POLLIN on KERNEL_RANDOM_DEV means "CRNG ready" (5.6 and later, so on every kernel without
 * read_wakeup_threshold); before 5.6 it meant entropy_avail >= read_wakeup_threshold. */
bool kernel_pollin_is_ready(const struct kernel_state *ks);
/* The old kernels' write_wakeup_threshold default (28 * OUTPUT_POOL_WORDS), used as the
 * watermark when the kernel's own cannot be read. */
#define KERNEL_OLD_WRITE_WAKEUP 896

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
