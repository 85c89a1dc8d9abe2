/* block_disks: which entries of /sys/block are whole physical disks, virtual, stacked on
 * other disks, or network-backed; read from sysfs for the block source's selection. */
#ifndef ENTROPYD_BLOCK_DISKS_H
#define ENTROPYD_BLOCK_DISKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SYS_BLOCK "/sys/block"

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
bool block_disks_probe(const char *sysroot, const char *name, struct block_disk_info *out);

/* Is a disk one of "auto"'s whole physical disks? Why not, if not (a static string). A
 * network-backed disk is not: its timing is the network's, seen and shaped on the path. */
bool block_disks_auto(const char *name, const struct block_disk_info *info, const char **why);

/* Is this disk (of /sys/block) traced? */
typedef bool block_traced_fn(void *ctx, const char *name);

/* What block_disks_stacked_on gives for a loop device whose backing file is on a disk it cannot
 * name (no disk name has a space). */
#define BLOCK_UNKNOWN_DISK "an unknown disk (overlay/btrfs)"

/* Does a file system of this type (statfs f_type) sit on disks without having a disk's
 * device number (overlayfs, btrfs, bcachefs, zfs)? */
bool block_disks_fs_hides(unsigned long f_type);

/* Is NAME stacked on a traced disk, so that its I/O is also that disk's: a disk below it
 * through slaves/ (device-mapper, md, bcache; a partition stands for its disk) or, for a
 * loop device, the disk its backing file is on (or the block device it is); at any depth.
 * The first such disk's name in below. Else, if somewhere below is a loop device whose
 * backing file is on a disk not known (block_disks_fs_hides), BLOCK_UNKNOWN_DISK: the
 * caller decides (stacked if another disk is traced). */
bool block_disks_stacked_on(const char *sysroot, const char *name, block_traced_fn *traced,
		      void *ctx, char *below, size_t size);

struct strlist;

/* The configured pattern (name or glob) that selects NAME, or NULL. "auto" in the list
 * means block_disks_auto(); "/dev/" before a name is ignored. Read by the block driver and
 * by the privileged process, which decides for itself what it may trace. */
const char *block_disks_selects(const struct strlist *devices, const char *name,
			  const struct block_disk_info *info);

#endif
