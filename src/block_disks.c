/* block_disks: what sysfs says about the entries of /sys/block, for the block source's
 * "auto": whole physical disks, virtual devices, disks stacked on others (through slaves/,
 * or a loop device's backing file), and network-backed disks (an iSCSI session, an FC
 * remote port, NVMe over a fabric, NBD, RBD, DRBD, AoE, RNBD, or a device-mapper, md or
 * bcache device with one of those below it). Reads sysfs only; a
 * sysroot prefix lets the tests use a fake tree. */
#include "autoconf.h"

#include "block_disks.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "config.h"
#include "util.h"

static bool read_line(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

static bool dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	bool empty = true;

	if (!d)
		return true;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			empty = false;
			break;
		}
	closedir(d);
	return empty;
}

/* Network block devices, by the names their drivers give them (AoE's etherd/e0.0 is
 * etherd!e0.0 in /sys/block). */
static const struct {
	const char *prefix, *what;
} network_prefixes[] = {
	{"nbd", "NBD"}, {"rbd", "Ceph RBD"}, {"drbd", "DRBD"}, {"etherd!", "AoE"}, {"rnbd", "RNBD"},
};

/* An NVMe controller's transport ("pcie", "tcp", "rdma", "fc", "loop", "apple-nvme"...):
 * a fabric, or a loop target whose I/O is another device's, if not local. */
static const char *nvme_fabric(const char *ctrldir)
{
	static const struct {
		const char *transport, *what;
	} fabrics[] = {
		{"tcp", "NVMe over TCP"},
		{"rdma", "NVMe over RDMA"},
		{"fc", "NVMe over Fibre Channel"},
		{"loop", "an NVMe-oF loop target"},
	};
	char path[PATH_MAX + 16], buf[32];

	snprintf(path, sizeof(path), "%s/transport", ctrldir);
	if (!read_line(path, buf, sizeof(buf)))
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(fabrics); i++)
		if (strcmp(buf, fabrics[i].transport) == 0)
			return fabrics[i].what;
	return NULL;
}

/* What network a disk's I/O goes over, or NULL. real is its sysfs directory, resolved. */
static const char *network_of(const char *sysroot, const char *name, const char *real)
{
	char path[PATH_MAX], ctrl[PATH_MAX + NAME_MAX + 2];
	const char *what = NULL, *p;
	DIR *d;
	struct dirent *de;

	for (size_t i = 0; i < ARRAY_SIZE(network_prefixes); i++)
		if (strncmp(name, network_prefixes[i].prefix, strlen(network_prefixes[i].prefix)) ==
		    0)
			return network_prefixes[i].what;
	/* SCSI: an iSCSI session (iscsi_tcp, iSER, offload HBAs) or a Fibre Channel remote
	 * port (FC, FCoE) is a component of the disk's device path. */
	for (p = real; p && *p; p = strchr(p + 1, '/')) {
		if (strncmp(p, "/session", 8) == 0 && p[8] >= '0' && p[8] <= '9')
			return "iSCSI";
		if (strncmp(p, "/rport-", 7) == 0)
			return "Fibre Channel";
	}
	if (strncmp(name, "nvme", 4) != 0)
		return NULL;
	/* NVMe: device is the controller, with its transport; or, for a multipath head, the
	 * subsystem, whose controllers (nvmeN) each have one. */
	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/device", sysroot, name);
	what = nvme_fabric(path);
	if (what || !(d = opendir(path)))
		return what;
	while (!what && (de = readdir(d)))
		if (strncmp(de->d_name, "nvme", 4) == 0) {
			snprintf(ctrl, sizeof(ctrl), "%s/%s", path, de->d_name);
			what = nvme_fabric(ctrl);
		}
	closedir(d);
	return what;
}

/* What network a device below a stacked disk (its slaves/: device-mapper, md, bcache) goes
 * over, at any depth, or NULL. A slave is a disk or a partition (/sys/class/block/NAME,
 * whose directory is then inside its disk's). Bounded, so that a loop in a tree cannot
 * hang us. */
static const char *network_below(const char *sysroot, const char *name, unsigned depth)
{
	char path[PATH_MAX], real[PATH_MAX], disk[NAME_MAX + 1];
	const char *what = NULL;
	struct dirent *de;
	DIR *d;

	if (depth > 8)
		return NULL;
	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/slaves", sysroot, name);
	if (!(d = opendir(path)))
		return NULL;
	while (!what && (de = readdir(d))) {
		char *slash;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/sys/class/block/%s", sysroot, de->d_name);
		if (!realpath(path, real))
			continue;
		strlcopy(disk, de->d_name, sizeof(disk));
		if (snprintf(path, sizeof(path), "%s/partition", real) < (int)sizeof(path) &&
		    access(path, F_OK) == 0 && (slash = strrchr(real, '/'))) {
			*slash = '\0'; /* the partition's directory is in its disk's */
			slash = strrchr(real, '/');
			strlcopy(disk, slash ? slash + 1 : real, sizeof(disk));
		}
		what = network_of(sysroot, disk, real);
		if (!what)
			what = network_below(sysroot, disk, depth + 1);
	}
	closedir(d);
	return what;
}

bool block_disks_probe(const char *sysroot, const char *name, struct block_disk_info *out)
{
	char path[PATH_MAX], real[PATH_MAX], buf[64];
	unsigned long long sectors;

	memset(out, 0, sizeof(*out));
	if (!name[0] || name[0] == '.' || strchr(name, '/'))
		return false;
	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/dev", sysroot, name);
	if (!read_line(path, buf, sizeof(buf)) ||
	    sscanf(buf, "%u:%u", &out->major, &out->minor) != 2)
		return false;
	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s", sysroot, name);
	if (realpath(path, real)) {
		out->is_virtual = strstr(real, "/devices/virtual/") != NULL;
		out->network = network_of(sysroot, name, real);
	}
	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/slaves", sysroot, name);
	out->stacked = !dir_empty(path);
	if (out->stacked && !out->network)
		out->network = network_below(sysroot, name, 0);
	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/hidden", sysroot, name);
	out->hidden = read_line(path, buf, sizeof(buf)) && strcmp(buf, "1") == 0;
	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/queue/add_random", sysroot, name);
	out->add_random = read_line(path, buf, sizeof(buf)) && strcmp(buf, "1") == 0;
	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/size", sysroot, name);
	if (read_line(path, buf, sizeof(buf)) && sscanf(buf, "%llu", &sectors) == 1)
		out->sectors = sectors;
	return true;
}

static const char *const virtual_prefixes[] = {"loop", "ram", "zram", "dm-", "md"};

bool block_disks_auto(const char *name, const struct block_disk_info *info, const char **why)
{
	const char *w = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(virtual_prefixes); i++)
		if (strncmp(name, virtual_prefixes[i], strlen(virtual_prefixes[i])) == 0)
			w = "a loop, ram, zram, device-mapper or md device";
	if (!w && info->network)
		w = "network-backed: its completions are timed by a network, which an attacker "
		    "on the path can see and shape";
	if (!w && info->is_virtual)
		w = "a virtual device";
	if (!w && info->stacked)
		w = "stacked on other disks, whose completions are counted there";
	if (!w && info->hidden)
		w = "a hidden disk";
	if (why)
		*why = w;
	return !w;
}

/* The whole disk that a sysfs block device directory (a disk's, or a partition's) is. */
static bool disk_of(const char *devdir, char *out, size_t size)
{
	char path[PATH_MAX + 16], real[PATH_MAX], *slash;

	if (!realpath(devdir, real))
		return false;
	snprintf(path, sizeof(path), "%s/partition", real);
	if (access(path, F_OK) == 0 && (slash = strrchr(real, '/')))
		*slash = '\0';
	slash = strrchr(real, '/');
	return slash && strlcopy(out, slash + 1, size);
}

bool block_disks_fs_hides(unsigned long f_type)
{
	switch (f_type) {
	case 0x794c7630: /* overlayfs */
	case 0x9123683e: /* btrfs */
	case 0xca451a4e: /* bcachefs */
	case 0x2fc12fc1: /* zfs */
		return true;
	default:
		return false;
	}
}

/* For a loop device, the disk its backing file is on (via /sys/dev/block/MAJ:MIN), or the
 * block device that is its backing file: 1, with its name in out. -1 if the file is on a
 * file system on disks whose device number is none of theirs (overlayfs on a disk, btrfs:
 * an anonymous 0:N), or is not to be seen (outside the collector's root), so that the disk
 * is not known; 0 if on none (tmpfs) or not a loop. */
static int loop_backing_disk(const char *sysroot, const char *name, char *out, size_t size)
{
	char path[PATH_MAX], file[PATH_MAX];
	struct stat sb;
	struct statfs sf;
	dev_t dev;

	snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/loop/backing_file", sysroot, name);
	if (!read_line(path, file, sizeof(file)))
		return 0;
	/* A file the collector cannot see (outside its own root, or deleted): its disk is not
	 * known. */
	if (stat(file, &sb) < 0)
		return -1;
	dev = S_ISBLK(sb.st_mode) ? sb.st_rdev : sb.st_dev;
	snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u", sysroot, major(dev), minor(dev));
	if (disk_of(path, out, size))
		return 1;
	return !S_ISBLK(sb.st_mode) && statfs(file, &sf) == 0 &&
			       block_disks_fs_hides((unsigned long)sf.f_type)
		       ? -1
		       : 0;
}

#define STACK_MAX 64 /* disks looked at below one, against loops in a broken tree */

bool block_disks_stacked_on(const char *sysroot, const char *name, block_traced_fn *traced,
		      void *ctx, char *below, size_t size)
{
	char todo[STACK_MAX][NAME_MAX + 1];
	size_t n = 0, next = 0;
	bool unknown = false;

	strlcopy(todo[n++], name, sizeof(todo[0]));
	while (next < n) {
		char path[PATH_MAX], disk[NAME_MAX + 1];
		const char *cur = todo[next++];
		struct dirent *de;
		DIR *dir;

		if (next > 1 && traced(ctx, cur)) {
			strlcopy(below, cur, size);
			return true;
		}
		if (n < STACK_MAX) {
			int r = loop_backing_disk(sysroot, cur, disk, sizeof(disk));

			if (r > 0)
				strlcopy(todo[n++], disk, sizeof(todo[0]));
			unknown |= r < 0;
		}
		snprintf(path, sizeof(path), "%s" SYS_BLOCK "/%s/slaves", sysroot, cur);
		if (!(dir = opendir(path)))
			continue;
		while ((de = readdir(dir)) && n < STACK_MAX) {
			char sub[PATH_MAX + NAME_MAX + 2];

			if (de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			if (disk_of(sub, disk, sizeof(disk)) && strcmp(disk, name) != 0)
				strlcopy(todo[n++], disk, sizeof(todo[0]));
		}
		closedir(dir);
	}
	if (unknown) {
		strlcopy(below, BLOCK_UNKNOWN_DISK, size);
		return true;
	}
	return false;
}

const char *block_disks_selects(const struct strlist *devices, const char *name,
			  const struct block_disk_info *info)
{
	for (size_t i = 0; i < devices->n; i++) {
		const char *pat = devices->v[i];

		if (strcmp(pat, "auto") == 0) {
			if (block_disks_auto(name, info, NULL))
				return pat;
			continue;
		}
		if (strncmp(pat, "/dev/", 5) == 0)
			pat += 5;
		if (fnmatch(pat, name, 0) == 0)
			return devices->v[i];
	}
	return NULL;
}
