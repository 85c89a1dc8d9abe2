/* source_block: block-device I/O completions as a timing source, through the block
 * tracepoint (perf) or the blktrace API; one instance per disk. */
#ifndef ENTROPYD_SOURCE_BLOCK_H
#define ENTROPYD_SOURCE_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "source.h"

/* The "block" class driver. */
extern const struct source_ops source_block_ops;

/* The kernel's internal dev_t, as trace records carry it: major << 20 | minor. */
#define BLOCK_KDEV(major, minor) (((uint32_t)(major) << 20) | ((uint32_t)(minor) & 0xfffffu))

/* One completion as a backend hands it over. */
/* Counted as an event of its disk, but neither estimated nor mixed. */
#define BLOCK_NO_TIME 0

struct block_sample {
	uint64_t t_ns; /* CLOCK_MONOTONIC; BLOCK_NO_TIME: a completion whose time is unknown */
	uint32_t kdev;
};

/* A backend's batch of completions, in time order. */
typedef void block_samples_fn(void *ctx, const struct block_sample *s, size_t n);

/* Sort a batch by time (per-CPU buffers are each in order, but not with each other). */
void block_samples_sort(struct block_sample *s, size_t n);

/* What sysfs says about one entry of /sys/block (pure data, for selection and tests). */
struct block_disk_info {
	unsigned major, minor;
	bool is_virtual;  /* lives under /sys/devices/virtual: loop, ram, zram, dm, md, nbd... */
	const char *network; /* its I/O goes over a network, which sets its completion timing:
			      * which one ("iSCSI", "NVMe over TCP", "Ceph RBD"...); NULL if not */
	bool stacked;     /* has slaves: its I/O is also seen on the devices below */
	bool hidden;      /* a hidden disk (e.g. an NVMe multipath path) */
	bool add_random;  /* queue/add_random = 1: the kernel credits its completions itself */
	uint64_t sectors; /* size; 0 = no medium, or a detached loop device */
};

/* Read /sys/block/NAME under sysroot ("" for the real one). false if it is not there or
 * its dev file cannot be read. */
bool block_disk_probe(const char *sysroot, const char *name, struct block_disk_info *out);

/* Is a disk one of "auto"'s whole physical disks? Why not, if not (a static string). A
 * network-backed disk is not: its timing is the network's, seen and shaped on the path. */
bool block_auto_disk(const char *name, const struct block_disk_info *info, const char **why);

/* The configured pattern (name or glob) that selects NAME, or NULL. "auto" in the list
 * means block_auto_disk(); "/dev/" before a name is ignored. */
const char *block_selects(const struct strlist *devices, const char *name,
			  const struct block_disk_info *info);

/* Is this disk (of /sys/block) traced? */
typedef bool block_traced_fn(void *ctx, const char *name);

/* Is NAME stacked on a traced disk, so that its I/O is also that disk's: a disk below it
 * through slaves/ (device-mapper, md, bcache; a partition stands for its disk) or, for a
 * loop device, the disk its backing file is on; at any depth. The first such disk's name
 * in below. */
bool block_stacked_on(const char *sysroot, const char *name, block_traced_fn *traced,
		      void *ctx, char *below, size_t size);

#endif
