/* kernel: what the running kernel does with credit (CRNG state, entropy_avail, version). */
#include "autoconf.h"

#include "kernel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#define ENTROPY_AVAIL_PATH "/proc/sys/kernel/random/entropy_avail"

/* The kernel's own answer, by the system call: glibc 2.41 answers getrandom() from the vDSO,
 * which keeps a generator of its own in memory it maps for the thread and reseeds it with
 * getrandom(key, 32, 0), taking 32 bytes from the kernel to answer whether 1 is there. */
bool kernel_crng_ready(void)
{
	unsigned char b;
	long n;

	do
		n = syscall(SYS_getrandom, &b, 1, GRND_NONBLOCK);
	while (n < 0 && errno == EINTR);
	return n == 1;
}

int kernel_entropy_avail(void)
{
	FILE *f = fopen(ENTROPY_AVAIL_PATH, "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

void kernel_probe(struct kernel_state *ks)
{
	struct utsname u;

	ks->major = ks->minor = 0;
	if (uname(&u) == 0 && sscanf(u.release, "%u.%u", &ks->major, &ks->minor) != 2)
		ks->major = ks->minor = 0;
	ks->credit_until_ready = ks->major > 5 || (ks->major == 5 && ks->minor >= 18);
	ks->crng_ready = kernel_crng_ready();
	ks->entropy_avail = kernel_entropy_avail();
}

int kernel_bits_needed(const struct kernel_state *ks)
{
	if (!ks->credit_until_ready || ks->crng_ready)
		return 0;
	if (ks->entropy_avail < 0)
		return KERNEL_READY_BITS;
	return ks->entropy_avail < KERNEL_READY_BITS ? KERNEL_READY_BITS - ks->entropy_avail : 0;
}

const char *kernel_meaning(const struct kernel_state *ks)
{
	if (!ks->credit_until_ready)
		return "kernel before 5.18: reads deplete the pool, credit counts whenever "
		       "entropy_avail is below the low watermark";
	if (!ks->crng_ready)
		return "CRNG not ready: credit counts now and unblocks getrandom(), "
		       "crediting as early as possible";
	return "CRNG ready: the kernel ignores credit from now on (5.18 and later)";
}

#define HZ_ASSUMED 1000

/* "CONFIG_HZ=250" in a kernel config, read line by line through zlib (which also reads
 * uncompressed files). 0 if absent. */
static unsigned hz_from(const char *path)
{
	char line[256];
	unsigned hz = 0;
	gzFile f = gzopen(path, "rb");

	if (!f)
		return 0;
	while (gzgets(f, line, sizeof(line))) {
		if (strncmp(line, "CONFIG_HZ=", 10) == 0) {
			if (sscanf(line + 10, "%u", &hz) != 1 || hz < 24 || hz > 10000)
				hz = 0;
			break;
		}
	}
	gzclose(f);
	return hz;
}

unsigned kernel_hz(const char **from)
{
	static char boot_path[300];
	struct utsname u;
	unsigned hz;

	if ((hz = hz_from("/proc/config.gz")) != 0) {
		*from = "/proc/config.gz";
		return hz;
	}
	if (uname(&u) == 0) {
		snprintf(boot_path, sizeof(boot_path), "/boot/config-%s", u.release);
		if ((hz = hz_from(boot_path)) != 0) {
			*from = boot_path;
			return hz;
		}
	}
	*from = "assumed: no kernel config found";
	return HZ_ASSUMED;
}
