/* kernel_seed: how this kernel got its CRNG seeded at this boot (a CPU RNG it trusts, a
 * hardware RNG, a bootloader seed) and what entropyd added, ending in a plain verdict: does
 * this machine need entropyd? The paths are parameters, so that tests give lab states. */
#ifndef ENTROPYD_KERNEL_SEED_H
#define ENTROPYD_KERNEL_SEED_H

#include <stdbool.h>
#include <stddef.h>

/* Where to look: the roots of /proc, /sys and /boot (NULL: the real ones), and the kernel's
 * release (NULL: uname's), for its version and /boot/config-RELEASE. */
struct kseed_paths {
	const char *proc, *sys, *boot, *release;
};

/* What the machine offers, read once at start: none of it changes within a boot. */
struct kseed {
	unsigned major, minor;
	bool rdrand, rdseed;  /* the CPU's RNG instructions (/proc/cpuinfo flags) */
	int trust_cpu;        /* random.trust_cpu on the command line: 1, 0; -1 not given */
	int trust_cpu_config; /* CONFIG_RANDOM_TRUST_CPU: 1, 0; -1 not known */
	bool cpu_trusted;     /* the CPU has an RNG and the kernel credits it */
	char cpu_trust_from[96]; /* why trusted or not, in words */
	int trust_bootloader; /* random.trust_bootloader on the command line: 1, 0; -1 not given */
	char hw_rng[64];      /* hw_random's rng_current ("virtio_rng.0", "tpm-rng-0"); "": none */
};

void kernel_seed_detect(struct kseed *k, const struct kseed_paths *p);

/* What entropyd saw of this boot. */
struct kseed_boot {
	bool credit_until_ready;    /* 5.18 and later semantics: credit counts until ready */
	bool ready_at_start;        /* the CRNG was ready when entropyd started */
	bool ready_now;
	double ready_after_s;       /* start to ready, if entropyd saw it; < 0 otherwise */
	int needed_at_start;        /* the bits the CRNG still waited for at start; < 0 unknown */
	double credited_before_ready; /* bits entropyd credited before it became ready */
	double credited;            /* bits entropyd credited so far */
	bool in_initramfs;          /* all of the above is the initramfs instance's (its boot
				     * record), which ran before this one */
};

enum kernel_seed_verdict {
	KSEED_OLD_KERNEL,      /* credit counts all along: entropyd feeds when it runs low */
	KSEED_READY_BEFORE,    /* ready before entropyd started: it only mixes */
	KSEED_CREDITED,        /* entropyd's credit went into making it ready */
	KSEED_READY_WITHOUT,   /* ready after entropyd started, none of its credit counted */
	KSEED_NOT_READY,       /* still waiting */
};

/* The verdict's name ("ready-before", ...) */
const char *kernel_seed_verdict_name(enum kernel_seed_verdict v);
/* What seeded the CRNG as far as can be told, in words (a static string or k's). */
const char *kernel_seed_seeded_by(const struct kseed *k);
/* The verdict, and the sentence an administrator reads. */
enum kernel_seed_verdict kernel_seed_verdict(const struct kseed *k, const struct kseed_boot *b, char *text,
				 size_t size);

#endif
