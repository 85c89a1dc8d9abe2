/* kernel: what the running kernel does with credit (CRNG state, entropy_avail, version). */
#include "autoconf.h"

#include "kernel.h"

#include <errno.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/utsname.h>

#define ENTROPY_AVAIL_PATH "/proc/sys/kernel/random/entropy_avail"

bool kernel_crng_ready(void)
{
	unsigned char b;
	ssize_t n;

	do
		n = getrandom(&b, 1, GRND_NONBLOCK);
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

const char *kernel_meaning(const struct kernel_state *ks)
{
	if (!ks->credit_until_ready)
		return "kernel before 5.18: reads deplete the pool, credit counts whenever "
		       "entropy_avail is below the low watermark";
	if (!ks->crng_ready)
		return "CRNG not ready: credit counts now and unblocks getrandom(), "
		       "crediting as early as possible";
	return "CRNG ready: the kernel ignores credit from now on (5.18 and later), "
	       "entropyd keeps mixing at a low rate";
}
