/* kernel: what the running kernel does with credit (its semantics, CRNG state, entropy_avail). */
#include "autoconf.h"

#include "kernel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "util.h"

#define ENTROPY_AVAIL_PATH KERNEL_RANDOM_DIR "/entropy_avail"

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

/* The number in a file, or -1 if it cannot be read or is not a number >= 0. */
static int read_number(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1 || v < 0)
		v = -1;
	fclose(f);
	return v;
}

int kernel_entropy_avail(void)
{
	return read_number(ENTROPY_AVAIL_PATH);
}

/* Paths are made to measure: a tree in a deep build directory is read whole. */
static int read_in(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	int v = read_number(path);

	free(path);
	return v;
}

static bool exists_in(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	struct stat st;
	bool found = stat(path, &st) == 0;

	free(path);
	return found;
}

#define UNTIL_READY "credit counts until the CRNG is ready (5.18 semantics)"
#define DEPLETING "a pool that reads deplete, credit counts always"

/* The semantics, strongest evidence first: poolsize is 256 exactly where the input pool is
 * the rewrite's 256-bit hash, whatever the version says (the rewrite was backported to
 * every stable series in 2022); 4096 (the old pool; older kernels still gave it in bytes,
 * 512) otherwise. read_wakeup_threshold went away in 5.6, long before the rewrite, so it
 * can only tell of the old semantics, never of the new. The version comes last. why names
 * no path: a long one would push its end out of the buffer. */
static void decide(struct kernel_state *ks)
{
	if (ks->poolsize == KERNEL_READY_BITS) {
		ks->credit_until_ready = true;
		ks->by = KERNEL_BY_POOLSIZE;
		snprintf(ks->why, sizeof(ks->why), "poolsize %d: " UNTIL_READY, ks->poolsize);
	} else if (ks->poolsize > KERNEL_READY_BITS) {
		ks->credit_until_ready = false;
		ks->by = KERNEL_BY_POOLSIZE;
		snprintf(ks->why, sizeof(ks->why), "poolsize %d: " DEPLETING " (semantics before "
			 "5.18)", ks->poolsize);
	} else if (ks->read_wakeup) {
		ks->credit_until_ready = false;
		ks->by = KERNEL_BY_READ_WAKEUP;
		snprintf(ks->why, sizeof(ks->why), "no usable poolsize, read_wakeup_threshold "
			 "present: " DEPLETING " (semantics before 5.6)");
	} else {
		ks->credit_until_ready = ks->major > 5 || (ks->major == 5 && ks->minor >= 18);
		ks->by = KERNEL_BY_VERSION;
		snprintf(ks->why, sizeof(ks->why), "no poolsize: by the version %u.%u alone, a last "
			 "resort: %s", ks->major, ks->minor,
			 ks->credit_until_ready ? UNTIL_READY : DEPLETING " (before 5.18)");
	}
}

void kernel_probe_at(struct kernel_state *ks, const char *dir)
{
	struct utsname u;

	memset(ks, 0, sizeof(*ks));
	if (uname(&u) == 0 && sscanf(u.release, "%u.%u", &ks->major, &ks->minor) != 2)
		ks->major = ks->minor = 0;
	ks->poolsize = read_in(dir, "poolsize");
	ks->read_wakeup = exists_in(dir, "read_wakeup_threshold");
	ks->write_wakeup = read_in(dir, "write_wakeup_threshold");
	ks->entropy_avail = read_in(dir, "entropy_avail");
	decide(ks);
	ks->crng_ready = kernel_crng_ready();
}

void kernel_probe(struct kernel_state *ks)
{
	kernel_probe_at(ks, KERNEL_RANDOM_DIR);
}

const char *kernel_semantics_name(const struct kernel_state *ks)
{
	return ks->credit_until_ready ? "until-ready" : "depleting";
}

const char *kernel_evidence_name(const struct kernel_state *ks)
{
	switch (ks->by) {
	case KERNEL_BY_POOLSIZE: return "poolsize";
	case KERNEL_BY_READ_WAKEUP: return "read_wakeup_threshold";
	case KERNEL_BY_VERSION: break;
	}
	return "version";
}

bool kernel_pollin_is_ready(const struct kernel_state *ks)
{
	return !ks->read_wakeup;
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
		return "reads deplete the pool: credit counts whenever entropy_avail is below the "
		       "low watermark";
	if (!ks->crng_ready)
		return "CRNG not ready: credit counts now and unblocks getrandom(), "
		       "crediting as early as possible";
	return "CRNG ready: the kernel ignores credit from now on";
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
