/* boot_guest: the workloads and the wait of make bench-boot's guest (static, no libraries).
 *
 *   boot_guest wait SECONDS   wait until the CRNG is ready, at most SECONDS; exit 0 if it is
 *   boot_guest disk DEVICE SECONDS
 *                             random 4 KiB O_DIRECT reads of DEVICE until the CRNG is ready
 *                             (at most SECONDS); prints how many
 *   boot_guest consume        block in getrandom(2) until the CRNG is ready, as a program
 *                             that needs random numbers at boot does
 *
 * Readiness is asked with getrandom(GRND_NONBLOCK), which fails with EAGAIN at once while
 * the CRNG is not ready and, unlike a blocking getrandom() or a read of /dev/urandom, does
 * not start the kernel's jitter entropy loop: the wait and the disk workload leave the
 * kernel's own mechanisms as they are. Only "consume" sets them off, on purpose. The disk
 * offsets come from a fixed-seed xorshift: where a read lands needs no secret. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

static int ready(void)
{
	unsigned char b;

	return getrandom(&b, 1, GRND_NONBLOCK) == 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int wait_ready(double secs)
{
	const struct timespec tick = {0, 10 * 1000 * 1000};
	double end = now() + secs;

	while (!ready()) {
		if (now() > end)
			return 1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

static int disk(const char *dev, double secs)
{
	double end = now() + secs;
	uint64_t x = 0x9e3779b97f4a7c15ULL, size = 0, n = 0, blocks;
	void *buf;
	int fd = -1;

	/* The device node may come a moment after the module is loaded. */
	while ((fd = open(dev, O_RDONLY | O_DIRECT)) < 0 && now() < end)
		usleep(20000);
	if (fd < 0 || ioctl(fd, BLKGETSIZE64, &size) < 0 || size < 4096) {
		fprintf(stderr, "boot_guest: %s: %s\n", dev, strerror(errno));
		return 1;
	}
	if (posix_memalign(&buf, 4096, 4096))
		return 1;
	blocks = size / 4096;
	while (!ready() && now() < end) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (pread(fd, buf, 4096, (off_t)((x % blocks) * 4096)) != 4096) {
			fprintf(stderr, "boot_guest: reading %s: %s\n", dev, strerror(errno));
			return 1;
		}
		n++;
	}
	printf("boot_guest: %llu reads of %s\n", (unsigned long long)n, dev);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char b[16];

	if (argc == 3 && !strcmp(argv[1], "wait"))
		return wait_ready(atof(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "disk"))
		return disk(argv[2], atof(argv[3]));
	if (argc == 2 && !strcmp(argv[1], "consume"))
		return getrandom(b, sizeof(b), 0) == (ssize_t)sizeof(b) ? 0 : 1;
	fprintf(stderr, "usage: boot_guest wait SECONDS | disk DEVICE SECONDS | consume\n");
	return 2;
}
