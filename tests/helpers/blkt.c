/* blkt: blktrace set-ups the block source's tests need from outside the daemon: another
 * tracer holding a disk (EBUSY), a trace left without an owner (as a crash leaves one), and
 * a teardown for cleaning up whatever happens. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/blktrace_api.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int setup_start(int fd, const char *dev)
{
	struct blk_user_trace_setup su;

	memset(&su, 0, sizeof(su));
	su.act_mask = BLK_TC_COMPLETE;
	su.buf_size = 4096;
	su.buf_nr = 2;
	if (ioctl(fd, BLKTRACESETUP, &su) < 0) {
		fprintf(stderr, "blkt: %s: BLKTRACESETUP: %s\n", dev, strerror(errno));
		return -1;
	}
	if (ioctl(fd, BLKTRACESTART) < 0) {
		fprintf(stderr, "blkt: %s: BLKTRACESTART: %s\n", dev, strerror(errno));
		(void)ioctl(fd, BLKTRACETEARDOWN);
		return -1;
	}
	return 0;
}

/* 0 torn down; 1 there was no trace; 2 error. */
static int teardown(int fd, const char *dev)
{
	(void)ioctl(fd, BLKTRACESTOP);
	if (ioctl(fd, BLKTRACETEARDOWN) == 0)
		return 0;
	if (errno == ENXIO || errno == EINVAL)
		return 1;
	fprintf(stderr, "blkt: %s: BLKTRACETEARDOWN: %s\n", dev, strerror(errno));
	return 2;
}

int main(int argc, char **argv)
{
	char c;
	int fd, rc;

	if (argc != 3) {
		fprintf(stderr, "usage: blkt hold|leave|teardown DEVICE\n"
				"  hold      set up and start a trace, print \"held\", wait for end of\n"
				"            input, then tear it down (exit 1 if it was gone by then)\n"
				"  leave     set up and start a trace and exit, leaving it behind\n"
				"  teardown  stop and tear down a trace (exit 0), or say there was\n"
				"            none (exit 1)\n");
		return 2;
	}
	fd = open(argv[2], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "blkt: %s: %s\n", argv[2], strerror(errno));
		return 2;
	}
	if (strcmp(argv[1], "teardown") == 0)
		return teardown(fd, argv[2]);
	if (setup_start(fd, argv[2]) < 0)
		return 2;
	if (strcmp(argv[1], "leave") == 0)
		return 0;
	/* hold: the device is not kept open, so that it can still go away. */
	close(fd);
	printf("held\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	fd = open(argv[2], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 1;
	rc = teardown(fd, argv[2]);
	return rc == 0 ? 0 : 1;
}
