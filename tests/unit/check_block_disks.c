/* check_block_disks: which entries of /sys/block the block source takes (block_disks.c):
 * what sysfs says of a disk, "auto", names and globs, network-backed disks and stacks, against
 * a fake /sys tree; and the same against the real one, as root, on loop devices. */
#include "autoconf.h"

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "block_disks.h"
#include "config.h"
#include "testutil.h"
#include "util.h"

static char root[4096];

static void write_file(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
}

/* A disk in the fake tree: its real directory under devices/, linked from sys/block. */
static void fake_disk(const char *name, const char *devdir, const char *dev, const char *size,
		      int add_random, const char *slave)
{
	char rel[256], target[512], link[512];

	snprintf(rel, sizeof(rel), "sys/devices/%s/%s", devdir, name);
	mkdirs(rel);
	snprintf(target, sizeof(target), "%s/%s", root, rel);
	snprintf(link, sizeof(link), "%s/sys/block/%s", root, name);
	ck_assert_int_eq(symlink(target, link), 0);
	snprintf(rel, sizeof(rel), "sys/block/%s/dev", name);
	write_file(rel, dev);
	snprintf(rel, sizeof(rel), "sys/block/%s/size", name);
	write_file(rel, size);
	snprintf(rel, sizeof(rel), "sys/block/%s/queue", name);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "sys/block/%s/queue/add_random", name);
	write_file(rel, add_random ? "1\n" : "0\n");
	snprintf(rel, sizeof(rel), "sys/block/%s/slaves", name);
	mkdirs(rel);
	if (slave) {
		snprintf(rel, sizeof(rel), "sys/block/%s/slaves/%s", name, slave);
		mkdirs(rel);
	}
}

static void setup(void)
{
	tu_mkdtemp(root, sizeof(root), "%s/sys.XXXXXX", tu_tmpdir());
	mkdirs("sys/block");
	fake_disk("sda", "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block", "8:0\n",
		  "1953525168\n", 1, NULL);
	fake_disk("nvme0n1", "pci0000:00/0000:00:1d.0/nvme/nvme0", "259:0\n", "1000215216\n", 0,
		  NULL);
	fake_disk("vda", "pci0000:00/0000:00:02.0/virtio1/block", "254:0\n", "41943040\n", 0,
		  NULL);
	fake_disk("loop0", "virtual/block", "7:0\n", "131072\n", 0, NULL);
	fake_disk("loop1", "virtual/block", "7:1\n", "0\n", 0, NULL);
	fake_disk("zram0", "virtual/block", "252:0\n", "8388608\n", 0, NULL);
	fake_disk("ram0", "virtual/block", "1:0\n", "8192\n", 0, NULL);
	fake_disk("dm-0", "virtual/block", "253:0\n", "41000000\n", 0, "vda");
	fake_disk("md0", "virtual/block", "9:0\n", "41000000\n", 0, "sda");
	/* A stack that is not under virtual/ (bcache-like): its slaves say it is stacked. */
	fake_disk("bcache0", "pci0000:00/bcache", "251:0\n", "100\n", 0, "sda");
	fake_disk("nvme0c0n1", "pci0000:00/0000:00:1d.0/nvme/nvme0/hidden", "259:1\n",
		  "1000215216\n", 0, NULL);
	write_file("sys/block/nvme0c0n1/hidden", "1\n");
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rm_tree(root), 0);
}

START_TEST(test_probe)
{
	struct block_disk_info in;

	ck_assert(block_disks_probe(root, "sda", &in));
	ck_assert_uint_eq(in.major, 8);
	ck_assert_uint_eq(in.minor, 0);
	ck_assert(!in.is_virtual);
	ck_assert(!in.stacked);
	ck_assert(in.add_random);
	ck_assert_uint_eq(in.sectors, 1953525168ull);

	ck_assert(block_disks_probe(root, "loop0", &in));
	ck_assert(in.is_virtual);
	ck_assert(!in.add_random);
	ck_assert(block_disks_probe(root, "loop1", &in));
	ck_assert_uint_eq(in.sectors, 0);
	ck_assert(block_disks_probe(root, "dm-0", &in));
	ck_assert(in.stacked && in.is_virtual);
	ck_assert(block_disks_probe(root, "bcache0", &in));
	ck_assert(in.stacked && !in.is_virtual);
	ck_assert(block_disks_probe(root, "nvme0c0n1", &in));
	ck_assert(in.hidden);

	ck_assert(!block_disks_probe(root, "nosuch", &in));
	ck_assert(!block_disks_probe(root, "../sys", &in));
	ck_assert(!block_disks_probe(root, "", &in));
}
END_TEST

static struct strlist list_of(const char *const *pats, size_t n)
{
	struct strlist l = {.v = xcalloc(n, sizeof(char *)), .n = n};

	for (size_t i = 0; i < n; i++)
		l.v[i] = xstrdup(pats[i]);
	return l;
}

static void list_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static bool selected(const char *const *pats, size_t n, const char *name)
{
	struct strlist l = list_of(pats, n);
	struct block_disk_info in;
	bool yes;

	ck_assert_msg(block_disks_probe(root, name, &in), "probe %s", name);
	yes = block_disks_selects(&l, name, &in) != NULL;
	list_free(&l);
	return yes;
}

START_TEST(test_auto)
{
	static const char *const aut[] = {"auto"};
	static const char *const yes[] = {"sda", "nvme0n1", "vda"};
	static const char *const no[] = {"loop0", "loop1", "zram0",   "ram0",
					 "dm-0",  "md0",   "bcache0", "nvme0c0n1"};
	struct block_disk_info in;
	const char *why = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++)
		ck_assert_msg(selected(aut, 1, yes[i]), "auto must select %s", yes[i]);
	for (size_t i = 0; i < ARRAY_SIZE(no); i++)
		ck_assert_msg(!selected(aut, 1, no[i]), "auto must not select %s", no[i]);
	ck_assert(block_disks_probe(root, "dm-0", &in));
	ck_assert(!block_disks_auto("dm-0", &in, &why));
	ck_assert_ptr_nonnull(why);
	ck_assert(block_disks_probe(root, "bcache0", &in));
	ck_assert(!block_disks_auto("bcache0", &in, &why));
	ck_assert_ptr_nonnull(strstr(why, "stacked"));
	ck_assert(block_disks_probe(root, "sda", &in));
	ck_assert(block_disks_auto("sda", &in, &why));
	ck_assert_ptr_null(why);
}
END_TEST

START_TEST(test_names_and_globs)
{
	static const char *const names[] = {"loop0", "/dev/vda"};
	static const char *const globs[] = {"nvme*", "sd?"};
	static const char *const mixed[] = {"zram0", "auto"};
	struct strlist l = list_of(globs, 2);
	struct block_disk_info in;

	/* Explicit names select virtual devices too: that is how a loop device is traced. */
	ck_assert(selected(names, 2, "loop0"));
	ck_assert(selected(names, 2, "vda"));
	ck_assert(!selected(names, 2, "loop1"));
	ck_assert(!selected(names, 2, "sda"));
	ck_assert(selected(globs, 2, "nvme0n1"));
	ck_assert(selected(globs, 2, "nvme0c0n1"));
	ck_assert(selected(globs, 2, "sda"));
	ck_assert(!selected(globs, 2, "vda"));
	ck_assert(selected(mixed, 2, "zram0"));
	ck_assert(selected(mixed, 2, "sda"));
	ck_assert(!selected(mixed, 2, "ram0"));
	/* The pattern that selected a disk is the one returned. */
	ck_assert(block_disks_probe(root, "sda", &in));
	ck_assert_str_eq(block_disks_selects(&l, "sda", &in), "sd?");
	list_free(&l);
}
END_TEST

/* Link sys/block/NAME/device (or any rel) to a directory of the tree, made if need be. */
static void link_to(const char *rel, const char *target_rel)
{
	char target[512], link[512];

	mkdirs(target_rel);
	snprintf(target, sizeof(target), "%s/%s", root, target_rel);
	snprintf(link, sizeof(link), "%s/%s", root, rel);
	ck_assert_int_eq(symlink(target, link), 0);
}

/* Network-backed disks, in the layouts their drivers give them in sysfs. No iSCSI, NVMe-oF,
 * RBD or AoE can run where the tests run (no initiator, no target, no kernel modules), so
 * this fake tree is all that tests them; t_block.sh only has loop devices. */
static void fake_network_disks(void)
{
	/* iSCSI: the SCSI host has an iscsi_host, the target hangs off a session. */
	fake_disk("sdb", "platform/host2/session1/target2:0:0/2:0:0:0/block", "8:16\n",
		  "2097152\n", 0, NULL);
	mkdirs("sys/devices/platform/host2/iscsi_host/host2");
	link_to("sys/block/sdb/device", "sys/devices/platform/host2/session1/target2:0:0/2:0:0:0");
	/* SCSI over Fibre Channel: a remote port in the path. */
	fake_disk("sdc", "pci0000:00/0000:00:03.0/host3/rport-3:0-0/target3:0:0/3:0:0:0/block",
		  "8:32\n", "2097152\n", 0, NULL);
	/* A local NVMe disk says "pcie". */
	write_file("sys/devices/pci0000:00/0000:00:1d.0/nvme/nvme0/transport", "pcie\n");
	link_to("sys/block/nvme0n1/device", "sys/devices/pci0000:00/0000:00:1d.0/nvme/nvme0");
	/* NVMe over TCP, no multipath: device is the controller, under nvme-fabrics. */
	fake_disk("nvme1n1", "virtual/nvme-fabrics/ctl/nvme1", "259:4\n", "2097152\n", 0, NULL);
	write_file("sys/devices/virtual/nvme-fabrics/ctl/nvme1/transport", "tcp\n");
	link_to("sys/block/nvme1n1/device", "sys/devices/virtual/nvme-fabrics/ctl/nvme1");
	/* NVMe over RDMA, a multipath head: device is the subsystem, with its controllers. */
	fake_disk("nvme2n1", "virtual/nvme-subsystem/nvme-subsys2", "259:5\n", "2097152\n", 0,
		  NULL);
	write_file("sys/devices/virtual/nvme-subsystem/nvme-subsys2/subsysnqn", "nqn.test\n");
	link_to("sys/block/nvme2n1/device", "sys/devices/virtual/nvme-subsystem/nvme-subsys2");
	link_to("sys/devices/virtual/nvme-subsystem/nvme-subsys2/nvme2",
		"sys/devices/virtual/nvme-fabrics/ctl/nvme2");
	write_file("sys/devices/virtual/nvme-fabrics/ctl/nvme2/transport", "rdma\n");
	/* A local controller whose transport is not "pcie" (Apple's) is still local. */
	fake_disk("nvme3n1", "platform/apple-nvme/nvme3", "259:6\n", "2097152\n", 0, NULL);
	write_file("sys/devices/platform/apple-nvme/nvme3/transport", "apple-nvme\n");
	link_to("sys/block/nvme3n1/device", "sys/devices/platform/apple-nvme/nvme3");
	/* Network block devices known by name. */
	fake_disk("rbd0", "virtual/block", "251:16\n", "2097152\n", 0, NULL);
	fake_disk("etherd!e1.0", "virtual/block", "152:16\n", "2097152\n", 0, NULL);
	fake_disk("drbd0", "virtual/block", "147:0\n", "2097152\n", 0, NULL);
	fake_disk("nbd0", "virtual/block", "43:0\n", "2097152\n", 0, NULL);
}

START_TEST(test_network)
{
	static const struct {
		const char *name, *network;
	} disks[] = {
		{"sda", NULL},
		{"vda", NULL},
		{"nvme0n1", NULL},
		{"nvme3n1", NULL},
		{"sdb", "iSCSI"},
		{"sdc", "Fibre Channel"},
		{"nvme1n1", "NVMe over TCP"},
		{"nvme2n1", "NVMe over RDMA"},
		{"rbd0", "Ceph RBD"},
		{"etherd!e1.0", "AoE"},
		{"drbd0", "DRBD"},
		{"nbd0", "NBD"},
	};
	static const char *const aut[] = {"auto"};
	struct block_disk_info in;
	const char *why;

	fake_network_disks();
	for (size_t i = 0; i < ARRAY_SIZE(disks); i++) {
		const char *pat[] = {disks[i].name};

		ck_assert_msg(block_disks_probe(root, disks[i].name, &in), "probe %s",
			      disks[i].name);
		why = NULL;
		if (!disks[i].network) {
			ck_assert_msg(!in.network, "%s is local, not %s", disks[i].name,
				      in.network);
			ck_assert_msg(selected(aut, 1, disks[i].name), "auto must select %s",
				      disks[i].name);
			continue;
		}
		ck_assert_msg(in.network && strcmp(in.network, disks[i].network) == 0,
			      "%s: %s, not %s", disks[i].name, in.network ? in.network : "local",
			      disks[i].network);
		/* "auto" leaves it out, and says why ... */
		ck_assert_msg(!block_disks_auto(disks[i].name, &in, &why), "auto must not take %s",
			      disks[i].name);
		ck_assert_ptr_nonnull(why);
		ck_assert_ptr_nonnull(strstr(why, "network-backed"));
		ck_assert(!selected(aut, 1, disks[i].name));
		/* ... but named, it is used (and marked network-backed by the source). */
		ck_assert_msg(selected(pat, 1, disks[i].name), "%s named", disks[i].name);
	}
}
END_TEST

/* A stack is network-backed if a device below it is, at any depth, disk or partition: the
 * slaves are looked up in /sys/class/block, as the kernel lists them. */
START_TEST(test_network_below)
{
	static const struct {
		const char *name, *network;
	} disks[] = {
		{"dm-0", NULL},       /* on vda */
		{"dm-1", "NBD"},      /* on nbd0 */
		{"dm-2", "NBD"},      /* on dm-1 */
		{"md1", "iSCSI"},     /* on sdb1, a partition of the iSCSI disk */
		{"md2", "NVMe over TCP"}, /* on nvme1n1p1: the transport is the disk's */
		{"bcache0", NULL},    /* on sda */
	};
	const char *sdb = "sys/devices/platform/host2/session1/target2:0:0/2:0:0:0/block/sdb";
	char rel[512];
	struct block_disk_info in;

	fake_network_disks();
	mkdirs("sys/class/block");
	link_to("sys/class/block/vda", "sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda");
	link_to("sys/class/block/sda",
		"sys/devices/pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block/sda");
	link_to("sys/class/block/nbd0", "sys/devices/virtual/block/nbd0");
	link_to("sys/class/block/dm-1", "sys/devices/virtual/block/dm-1");
	snprintf(rel, sizeof(rel), "%s/sdb1", sdb);
	link_to("sys/class/block/sdb1", rel);
	snprintf(rel, sizeof(rel), "%s/sdb1/partition", sdb);
	write_file(rel, "1\n");
	fake_disk("dm-1", "virtual/block", "253:1\n", "2097152\n", 0, "nbd0");
	fake_disk("dm-2", "virtual/block", "253:2\n", "2097152\n", 0, "dm-1");
	fake_disk("md1", "virtual/block", "9:1\n", "2097152\n", 0, "sdb1");
	link_to("sys/class/block/nvme1n1p1",
		"sys/devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1/nvme1n1p1");
	write_file("sys/devices/virtual/nvme-fabrics/ctl/nvme1/nvme1n1/nvme1n1p1/partition", "1\n");
	fake_disk("md2", "virtual/block", "9:2\n", "2097152\n", 0, "nvme1n1p1");
	for (size_t i = 0; i < ARRAY_SIZE(disks); i++) {
		ck_assert_msg(block_disks_probe(root, disks[i].name, &in), "probe %s",
			      disks[i].name);
		if (!disks[i].network)
			ck_assert_msg(!in.network, "%s is local, not %s", disks[i].name,
				      in.network);
		else
			ck_assert_msg(in.network && strcmp(in.network, disks[i].network) == 0,
				      "%s: %s, not %s", disks[i].name,
				      in.network ? in.network : "local", disks[i].network);
	}
}
END_TEST

/* The traced disks of test_stacked, as a NULL-terminated list. */
static bool traced_in(void *ctx, const char *name)
{
	for (const char *const *p = ctx; *p; p++)
		if (strcmp(*p, name) == 0)
			return true;
	return false;
}

static const char *stacked_on(const char *name, const char *const *traced)
{
	static char below[64];

	below[0] = '\0';
	if (!block_disks_stacked_on(root, name, traced_in, (void *)(uintptr_t)traced, below,
			      sizeof(below)))
		return "";
	ck_assert_str_ne(below, "");
	return below;
}

START_TEST(test_stacked)
{
	static const char *const vda[] = {"vda", NULL};
	static const char *const vda_dm0[] = {"vda", "dm-0", NULL};
	static const char *const sda[] = {"sda", NULL};
	static const char *const none[] = {NULL};
	char rel[256], target[512], link[512];
	struct stat sb;

	/* dm-1 on dm-0 on vda; dm-2 on a partition of sda; loop0's backing file on vda. */
	fake_disk("dm-1", "virtual/block", "253:1\n", "100\n", 0, NULL);
	snprintf(target, sizeof(target), "%s/sys/block/dm-0", root);
	snprintf(link, sizeof(link), "%s/sys/block/dm-1/slaves/dm-0", root);
	ck_assert_int_eq(symlink(target, link), 0);
	snprintf(rel, sizeof(rel), "sys/block/sda/sda1");
	mkdirs(rel);
	write_file("sys/block/sda/sda1/partition", "1\n");
	fake_disk("dm-2", "virtual/block", "253:2\n", "100\n", 0, NULL);
	snprintf(target, sizeof(target), "%s/sys/block/sda/sda1", root);
	snprintf(link, sizeof(link), "%s/sys/block/dm-2/slaves/sda1", root);
	ck_assert_int_eq(symlink(target, link), 0);
	mkdirs("sys/block/loop0/loop");
	write_file("sys/block/loop0/loop/backing_file", root);
	ck_assert_int_eq(stat(root, &sb), 0);
	mkdirs("sys/dev/block");
	snprintf(target, sizeof(target), "%s/sys/block/vda", root);
	snprintf(link, sizeof(link), "%s/sys/dev/block/%u:%u", root, major(sb.st_dev),
		 minor(sb.st_dev));
	ck_assert_int_eq(symlink(target, link), 0);

	ck_assert_str_eq(stacked_on("dm-0", vda), "vda");
	ck_assert_str_eq(stacked_on("dm-1", vda), "vda");    /* at any depth */
	ck_assert_str_eq(stacked_on("dm-1", vda_dm0), "dm-0"); /* the nearest */
	ck_assert_str_eq(stacked_on("dm-0", none), "");
	ck_assert_str_eq(stacked_on("dm-0", sda), "");
	ck_assert_str_eq(stacked_on("md0", sda), "sda");
	ck_assert_str_eq(stacked_on("bcache0", sda), "sda");
	ck_assert_str_eq(stacked_on("dm-2", sda), "sda"); /* a partition is its disk */
	ck_assert_str_eq(stacked_on("loop0", vda), "vda"); /* the backing file's disk */
	ck_assert_str_eq(stacked_on("loop0", sda), "");
	ck_assert_str_eq(stacked_on("vda", vda), ""); /* not on itself */
	ck_assert_str_eq(stacked_on("sda", sda), "");
	ck_assert_str_eq(stacked_on("nosuch", vda), "");

	/* A backing file on a file system with no disk (tmpfs): on nothing. On overlayfs or
	 * btrfs, whose device number is no disk's: on an unknown disk, which t_block.sh
	 * shows for real on an overlay mount. */
	mkdirs("sys/block/loop1/loop");
	write_file("sys/block/loop1/loop/backing_file", "/dev/shm");
	if (stat("/dev/shm", &sb) == 0 && major(sb.st_dev) == 0)
		ck_assert_str_eq(stacked_on("loop1", vda), "");
	ck_assert(block_disks_fs_hides(0x794c7630)); /* overlayfs */
	ck_assert(block_disks_fs_hides(0x9123683e)); /* btrfs */
	ck_assert(!block_disks_fs_hides(0x01021994)); /* tmpfs */
	ck_assert(!block_disks_fs_hides(0xef53));     /* ext4 */
}
END_TEST

/* ---- the real /sys/block, as root ---- */

static struct tu_loop loop_a, loop_b;
static char loop_why[256];
static bool have_loops;

/* Outside the tests' own processes, so that a failed test leaves no device behind, and under
 * the block tests' lock, as they take over each other's loop numbers: loop A on a file in
 * /dev/shm (tmpfs: no disk below), loop B on loop A. */
static void loops_setup(void)
{
	have_loops = tu_block_lock(900, loop_why, sizeof(loop_why)) &&
		     tu_loop_new(&loop_a, NULL, 8 << 20, loop_why, sizeof(loop_why)) &&
		     tu_loop_new(&loop_b, loop_a.path, 0, loop_why, sizeof(loop_why));
}

static void loops_teardown(void)
{
	tu_loop_free(&loop_b);
	tu_loop_free(&loop_a);
	tu_block_unlock();
}

#define NEED_LOOPS()                                                                       \
	do {                                                                               \
		if (!have_loops) {                                                         \
			printf("%s: skipped: %s\n", __func__, loop_why);                    \
			return;                                                            \
		}                                                                          \
	} while (0)

START_TEST(test_real_loop)
{
	static const char *const pats[] = {"auto", "/dev/loop*"};
	struct strlist l;
	struct block_disk_info in;
	const char *why = NULL;

	NEED_LOOPS();
	ck_assert_msg(block_disks_probe("", loop_a.name, &in), "probe %s", loop_a.name);
	ck_assert_uint_eq(in.major, loop_a.major);
	ck_assert_uint_eq(in.minor, loop_a.minor);
	ck_assert_uint_eq(in.sectors, (8 << 20) / 512);
	ck_assert(in.is_virtual);
	ck_assert(!in.stacked);
	ck_assert_ptr_null(in.network);
	/* not one of "auto"'s disks, but taken when named */
	ck_assert(!block_disks_auto(loop_a.name, &in, &why));
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "loop"));
	l = list_of(pats, 1);
	ck_assert_ptr_null(block_disks_selects(&l, loop_a.name, &in));
	list_free(&l);
	l = list_of(pats, 2);
	ck_assert_str_eq(block_disks_selects(&l, loop_a.name, &in), "/dev/loop*");
	list_free(&l);
	ck_assert(!block_disks_probe("", "loop-nosuch", &in));
}
END_TEST

static bool traced_is(void *ctx, const char *name)
{
	return strcmp(ctx, name) == 0;
}

static bool stacked_on_real(const char *name, const char *traced, char *below, size_t size)
{
	char t[64];

	strlcopy(t, traced, sizeof(t));
	return block_disks_stacked_on("", name, traced_is, t, below, size);
}

/* Loop B's backing device is loop A: B is stacked on A when A is traced; A, whose file is
 * on tmpfs, is on no disk, until its file is deleted: then its disk is not known. */
START_TEST(test_real_stacked)
{
	char below[64] = "";

	NEED_LOOPS();
	ck_assert(stacked_on_real(loop_b.name, loop_a.name, below, sizeof(below)));
	ck_assert_str_eq(below, loop_a.name);
	below[0] = '\0';
	ck_assert(!stacked_on_real(loop_a.name, loop_b.name, below, sizeof(below)));
	ck_assert(!stacked_on_real(loop_b.name, "vda-not-traced", below, sizeof(below)));
	ck_assert_str_eq(below, "");
	ck_assert_int_eq(unlink(loop_a.file), 0);
	ck_assert(stacked_on_real(loop_a.name, loop_b.name, below, sizeof(below)));
	ck_assert_str_eq(below, BLOCK_UNKNOWN_DISK);
}
END_TEST

static Suite *block_disks_suite(void)
{
	Suite *s = suite_create("block_disks");
	TCase *tc = tcase_create("fake sys");
	TCase *real = tcase_create("real sys");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_auto);
	tcase_add_test(tc, test_names_and_globs);
	tcase_add_test(tc, test_stacked);
	tcase_add_test(tc, test_network);
	tcase_add_test(tc, test_network_below);
	suite_add_tcase(s, tc);
	tcase_add_unchecked_fixture(real, loops_setup, loops_teardown);
	tcase_add_test(real, test_real_loop);
	tcase_add_test(real, test_real_stacked);
	suite_add_tcase(s, real);
	return s;
}

int main(void)
{
	return tu_run_suite(block_disks_suite());
}
