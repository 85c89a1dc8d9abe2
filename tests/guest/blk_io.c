/* blk_io: a known block workload, and a look at a device's blktrace, for the guest's tests.
 *
 *   blk_io read|write DEV COUNT SIZE   COUNT O_DIRECT reads (writes) of SIZE bytes at
 *                                      successive aligned offsets, one at a time, so that
 *                                      each is one request and one completion; prints
 *                                      "done COUNT"
 *   blk_io busy DEV                    whether DEV has a blktrace set up: BLKTRACESETUP
 *                                      fails with EBUSY (prints "busy", exit 1); else the
 *                                      probe trace is torn down again (prints "free", exit 0)
 *
 * Exit status 2 on any error. Built statically for the guest initramfs. */
#define _GNU_SOURCE /* O_DIRECT */
#include <errno.h>
#include <fcntl.h>
#include <linux/blktrace_api.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static void die(const char *what)
{
	printf("error: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int io(const char *dev, int write_, unsigned long count, size_t size)
{
	unsigned long long devsize;
	void *buf;
	int fd = open(dev, (write_ ? O_WRONLY : O_RDONLY) | O_DIRECT | O_CLOEXEC);

	if (fd < 0)
		die(dev);
	if (ioctl(fd, BLKGETSIZE64, &devsize) < 0)
		die("BLKGETSIZE64");
	if (size == 0 || size % 4096 || devsize < size)
		die("size");
	if (posix_memalign(&buf, 4096, size))
		die("posix_memalign");
	memset(buf, 0xa5, size);
	for (unsigned long i = 0; i < count; i++) {
		off_t off = (off_t)((i * size) % (devsize / size * size));
		ssize_t n = write_ ? pwrite(fd, buf, size, off) : pread(fd, buf, size, off);

		if (n != (ssize_t)size)
			die(write_ ? "pwrite" : "pread");
	}
	close(fd);
	free(buf);
	printf("done %lu\n", count);
	return 0;
}

static int busy(const char *dev)
{
	struct blk_user_trace_setup su;
	int fd = open(dev, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die(dev);
	memset(&su, 0, sizeof(su));
	su.act_mask = BLK_TC_COMPLETE;
	su.buf_size = 4096;
	su.buf_nr = 2;
	if (ioctl(fd, BLKTRACESETUP, &su) < 0) {
		if (errno != EBUSY)
			die("BLKTRACESETUP");
		printf("busy\n");
		return 1;
	}
	if (ioctl(fd, BLKTRACETEARDOWN) < 0)
		die("BLKTRACETEARDOWN");
	close(fd);
	printf("free\n");
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && (strcmp(argv[1], "read") == 0 || strcmp(argv[1], "write") == 0))
		return io(argv[2], argv[1][0] == 'w', strtoul(argv[3], NULL, 0),
			  strtoul(argv[4], NULL, 0));
	if (argc == 3 && strcmp(argv[1], "busy") == 0)
		return busy(argv[2]);
	fprintf(stderr, "usage: blk_io read|write DEV COUNT SIZE | blk_io busy DEV\n");
	return 2;
}
