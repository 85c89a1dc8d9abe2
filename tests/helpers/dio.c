/* dio: a fixed O_DIRECT workload on a block device, for the block source's tests and bench.
 * Reads and writes of one block size at random aligned offsets, interleaved at random from
 * a fixed seed; each is one request, so the completions the device sees are known. */
#include "autoconf.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static uint64_t rng_state;

/* xorshift64*: reproducible from the seed, good enough to scatter offsets. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: dio [-r READS] [-w WRITES] [-b BYTES] [-s SEED] DEVICE\n"
			"  O_DIRECT reads and writes of BYTES (default 4096) at random aligned\n"
			"  offsets; prints reads=N writes=M ns=T (T: the workload's duration)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long reads = 0, writes = 0, bs = 4096, done_r = 0, done_w = 0;
	unsigned long long seed = 1;
	uint64_t size, blocks;
	struct timespec t0, t1;
	void *buf;
	int opt, fd;

	while ((opt = getopt(argc, argv, "r:w:b:s:")) != -1) {
		switch (opt) {
		case 'r':
			reads = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			writes = strtoul(optarg, NULL, 0);
			break;
		case 'b':
			bs = strtoul(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || bs < 512 || bs % 512)
		usage();
	rng_state = seed ? seed : 1;
	fd = open(argv[optind], (writes ? O_RDWR : O_RDONLY) | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "dio: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (ioctl(fd, BLKGETSIZE64, &size) < 0) {
		fprintf(stderr, "dio: %s: BLKGETSIZE64: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	blocks = size / bs;
	if (!blocks || posix_memalign(&buf, 4096, bs)) {
		fprintf(stderr, "dio: %s: too small, or no memory\n", argv[optind]);
		return 1;
	}
	for (unsigned long i = 0; i < bs; i++)
		((unsigned char *)buf)[i] = (unsigned char)rnd();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done_r < reads || done_w < writes) {
		off_t off = (off_t)(rnd() % blocks * bs);
		int write_now =
			done_w < writes && (done_r == reads || rnd() % (reads + writes) < writes);
		ssize_t n = write_now ? pwrite(fd, buf, bs, off) : pread(fd, buf, bs, off);

		if (n != (ssize_t)bs) {
			fprintf(stderr, "dio: %s at %lld: %s\n", write_now ? "write" : "read",
				(long long)off, n < 0 ? strerror(errno) : "short transfer");
			return 1;
		}
		if (write_now)
			done_w++;
		else
			done_r++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("reads=%lu writes=%lu ns=%lld\n", done_r, done_w,
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	free(buf);
	close(fd);
	return 0;
}
