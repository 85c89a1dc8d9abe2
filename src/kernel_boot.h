/* kernel_boot: the boot record — what entropyd in the initramfs did at this boot (bits
 * credited, whether and when the CRNG became ready, per source), left in a file under /run,
 * which survives the switch to the real root, for the service's instance to read at start.
 * The file is untrusted input to its reader: checked, bounded, and refused with a reason. */
#ifndef ENTROPYD_KERNEL_BOOT_H
#define ENTROPYD_KERNEL_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KBOOT_DEFAULT_PATH "/run/initramfs/entropyd-boot.json"
#define KBOOT_VERSION 1
/* The largest file read, and the most sources kept: the record is a few hundred bytes. */
#define KBOOT_MAX_BYTES 65536
#define KBOOT_MAX_SOURCES 64

struct kboot_source {
	char cls[16];
	char name[64]; /* printable */
	uint64_t events;
	double credited_bits; /* by policy */
};

struct kboot {
	char boot_id[40];       /* /proc/sys/kernel/random/boot_id */
	double started_s;       /* seconds from boot (CLOCK_BOOTTIME) to entropyd's start */
	double ran_s;           /* how long it ran, as of the record */
	bool ended;             /* written as it exited (else it was cut short) */
	bool ready_at_start;    /* the CRNG was ready when it started */
	int needed_at_start;    /* bits the CRNG still waited for then; -1 not known */
	double ready_after_s;   /* its start to CRNG ready; < 0 if not seen */
	double credited_bits;   /* credited to the kernel (RNDADDENTROPY) */
	double credited_before_ready; /* of which before the CRNG was ready */
	size_t n_sources;
	struct kboot_source src[KBOOT_MAX_SOURCES];
};

/* This boot's id into buf (at least 40 bytes); false if it cannot be read. */
bool kernel_boot_id(char *buf, size_t size);

/* The record as JSON (malloc'ed, NUL-terminated). */
char *kernel_boot_format(const struct kboot *b);

/* Parse and check len bytes (not NUL-terminated) as a record of the boot `boot_id`. 0 and
 * *out filled, or -1 with why (a sentence naming the problem) and *out untouched. */
int kernel_boot_parse(const char *buf, size_t len, const char *boot_id, struct kboot *out,
		char *why, size_t why_size);

/* Read the file at path for kernel_boot_parse: a regular file of root's that no one else may
 * write, of at most KBOOT_MAX_BYTES, not through a symlink. The bytes (malloc'ed) and their
 * number; NULL with errno ENOENT (no record: nothing to say) or with why. */
char *kernel_boot_read(const char *path, size_t *len, char *why, size_t why_size);

/* Create (or empty) the file at path for writing, its directory if missing (0755), the file
 * 0644: written by its creator, read by all. A descriptor, or -1 with why. */
int kernel_boot_create(const char *path, char *why, size_t why_size);

/* Replace what fd holds with the record. 0, or -1 with errno. */
int kernel_boot_write(int fd, const struct kboot *b);

#endif
