/* check_kernel_seed: unit tests for kernel_seed.c — what seeded this boot's CRNG, read from
 * lab states (a fake /proc/cpuinfo, /proc/cmdline, hw_random and /boot/config), and each
 * verdict on "does this machine need entropyd?". */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kernel_seed.h"
#include "testutil.h"
#include "util.h"

static char lab[4096];
static struct kseed_paths paths;
static char proc[300], sys[300], boot[300];

static void put(const char *dir, const char *rel, const char *text)
{
	char path[600], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define CPUINFO_RDRAND                                                                       \
	"processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme sse2 rdrand hypervisor\n" \
	"\nprocessor\t: 1\nflags\t\t: fpu rdseed rdrand\n"
#define CPUINFO_BOTH "processor\t: 0\nflags\t\t: fpu aes rdrand rdseed adx\n"
#define CPUINFO_NONE "processor\t: 0\nflags\t\t: fpu vme sse2 rdrandom xrdseed\n"
#define CMDLINE "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet\n"

static void setup(void)
{
	tu_mkdtemp(lab, sizeof(lab), "%s/seed.XXXXXX", tu_tmpdir());
	snprintf(proc, sizeof(proc), "%s/proc", lab);
	snprintf(sys, sizeof(sys), "%s/sys", lab);
	snprintf(boot, sizeof(boot), "%s/boot", lab);
	mkdir(proc, 0755);
	mkdir(sys, 0755);
	mkdir(boot, 0755);
	paths = (struct kseed_paths){.proc = proc, .sys = sys, .boot = boot,
				     .release = "6.1.0-28-amd64"};
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rm_tree(lab), 0);
}

/* ---- detection ---- */

START_TEST(test_cpu_flags)
{
	struct kseed k;

	put(proc, "cpuinfo", CPUINFO_RDRAND);
	put(proc, "cmdline", CMDLINE);
	kernel_seed_detect(&k, &paths);
	/* the first processor's flags: rdrand, no rdseed (processor 1's are not read) */
	ck_assert(k.rdrand);
	ck_assert(!k.rdseed);
	put(proc, "cpuinfo", CPUINFO_BOTH);
	kernel_seed_detect(&k, &paths);
	ck_assert(k.rdrand && k.rdseed);
	/* words that only begin with the flag's name are not it */
	put(proc, "cpuinfo", CPUINFO_NONE);
	kernel_seed_detect(&k, &paths);
	ck_assert(!k.rdrand && !k.rdseed);
	ck_assert(!k.cpu_trusted);
	ck_assert_uint_eq(k.major, 6);
	ck_assert_uint_eq(k.minor, 1);
}
END_TEST

START_TEST(test_trust_cpu_cmdline)
{
	struct kseed k;

	put(proc, "cpuinfo", CPUINFO_BOTH);
	put(boot, "config-6.1.0-28-amd64", "CONFIG_RANDOM_TRUST_CPU=y\n");
	put(proc, "cmdline", "root=/dev/sda1 random.trust_cpu=off quiet\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(k.trust_cpu, 0);
	ck_assert(!k.cpu_trusted); /* the command line wins over the config */
	ck_assert_ptr_nonnull(strstr(k.cpu_trust_from, "command line"));
	put(proc, "cmdline", "random.trust_cpu=0 random.trust_cpu=1 random.trust_bootloader=n\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(k.trust_cpu, 1); /* the last one given */
	ck_assert(k.cpu_trusted);
	ck_assert_int_eq(k.trust_bootloader, 0);
	put(proc, "cmdline", "xrandom.trust_cpu=off\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(k.trust_cpu, -1);
	ck_assert_int_eq(k.trust_bootloader, -1);
}
END_TEST

START_TEST(test_trust_cpu_config)
{
	struct kseed k;

	put(proc, "cpuinfo", CPUINFO_BOTH);
	put(proc, "cmdline", CMDLINE);
	put(boot, "config-6.1.0-28-amd64", "CONFIG_X=y\n# CONFIG_RANDOM_TRUST_CPU is not set\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(k.trust_cpu_config, 0);
	ck_assert(!k.cpu_trusted);
	ck_assert_ptr_nonnull(strstr(k.cpu_trust_from, "CONFIG_RANDOM_TRUST_CPU=n"));
	put(boot, "config-6.1.0-28-amd64", "CONFIG_X=y\nCONFIG_RANDOM_TRUST_CPU=y\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(k.trust_cpu_config, 1);
	ck_assert(k.cpu_trusted);
	/* no config at all: on 5.19 and later the default is to trust, before it is not */
	paths.release = "6.12.9";
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(k.trust_cpu_config, -1);
	ck_assert(k.cpu_trusted);
	ck_assert_ptr_nonnull(strstr(k.cpu_trust_from, "default"));
	paths.release = "5.10.0-35-amd64";
	kernel_seed_detect(&k, &paths);
	ck_assert(!k.cpu_trusted);
	ck_assert_ptr_nonnull(strstr(k.cpu_trust_from, "not known"));
}
END_TEST

START_TEST(test_hw_rng)
{
	struct kseed k;

	put(proc, "cpuinfo", CPUINFO_NONE);
	put(proc, "cmdline", CMDLINE);
	kernel_seed_detect(&k, &paths);
	ck_assert_str_eq(k.hw_rng, ""); /* no hw_random at all */
	put(sys, "class/misc/hw_random/rng_current", "none\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_str_eq(k.hw_rng, "");
	put(sys, "class/misc/hw_random/rng_current", "virtio_rng.0\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_str_eq(k.hw_rng, "virtio_rng.0");
	ck_assert_str_eq(kernel_seed_seeded_by(&k), "a hardware RNG (virtio_rng.0)");
	put(sys, "class/misc/hw_random/rng_current", "tpm-rng-0\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_str_eq(k.hw_rng, "tpm-rng-0");
}
END_TEST

START_TEST(test_nothing_readable)
{
	struct kseed k;
	struct kseed_paths none = {.proc = "/nonexistent", .sys = "/nonexistent",
				   .boot = "/nonexistent", .release = "4.19.0"};

	kernel_seed_detect(&k, &none);
	ck_assert(!k.rdrand && !k.rdseed && !k.cpu_trusted);
	ck_assert_int_eq(k.trust_cpu, -1);
	ck_assert_str_eq(k.hw_rng, "");
	ck_assert_ptr_nonnull(strstr(kernel_seed_seeded_by(&k), "cannot be told"));
}
END_TEST

/* ---- verdicts ---- */

static enum kernel_seed_verdict verdict(const struct kseed *k, const struct kseed_boot *b,
				  char *text)
{
	return kernel_seed_verdict(k, b, text, 512);
}

START_TEST(test_verdict_ready_before_cpu)
{
	struct kseed k;
	struct kseed_boot b = {.credit_until_ready = true, .ready_at_start = true,
			       .ready_now = true, .ready_after_s = -1, .needed_at_start = 0};
	char text[512];

	put(proc, "cpuinfo", CPUINFO_BOTH);
	put(proc, "cmdline", "random.trust_cpu=on\n");
	put(sys, "class/misc/hw_random/rng_current", "virtio_rng.0\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_READY_BEFORE);
	ck_assert_str_eq(text, "CRNG was ready before entropyd started, seeded by the CPU's RNG "
			       "(RDSEED): entropyd only mixes here");
	ck_assert_str_eq(kernel_seed_verdict_name(KSEED_READY_BEFORE), "ready-before");
}
END_TEST

START_TEST(test_verdict_ready_before_virtio)
{
	struct kseed k;
	struct kseed_boot b = {.credit_until_ready = true, .ready_at_start = true,
			       .ready_now = true, .ready_after_s = -1, .needed_at_start = 0};
	char text[512];

	/* a VM whose CPU RNG is not trusted, with virtio-rng */
	put(proc, "cpuinfo", CPUINFO_BOTH);
	put(proc, "cmdline", "random.trust_cpu=off\n");
	put(sys, "class/misc/hw_random/rng_current", "virtio_rng.0\n");
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_READY_BEFORE);
	ck_assert_ptr_nonnull(strstr(text, "seeded by a hardware RNG (virtio_rng.0): entropyd only "
					   "mixes here"));
}
END_TEST

START_TEST(test_verdict_credited)
{
	struct kseed k;
	struct kseed_boot b = {.credit_until_ready = true, .ready_at_start = false,
			       .ready_now = true, .ready_after_s = 0.84, .needed_at_start = 256,
			       .credited_before_ready = 251, .credited = 300};
	char text[512];

	/* bare metal without a CPU RNG or a hardware RNG */
	put(proc, "cpuinfo", CPUINFO_NONE);
	put(proc, "cmdline", CMDLINE);
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_CREDITED);
	ck_assert_str_eq(text, "entropyd credited 251 of the 256 bits the CRNG waited for; ready "
			       "0.8 s after entropyd started");
	/* never more than it waited for */
	b.credited_before_ready = 400;
	b.needed_at_start = 200;
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_CREDITED);
	ck_assert_ptr_nonnull(strstr(text, "credited 200 of the 200 bits"));
	/* what the initramfs's instance did, read from its boot record */
	b = (struct kseed_boot){.credit_until_ready = true, .ready_now = true,
				.ready_after_s = 1.26, .needed_at_start = 256,
				.credited_before_ready = 256, .credited = 256, .in_initramfs = true};
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_CREDITED);
	ck_assert_str_eq(text, "entropyd in the initramfs credited 256 of the 256 bits the CRNG "
			       "waited for; ready 1.3 s after entropyd started there");
	b.ready_at_start = true;
	b.credited_before_ready = 0;
	b.ready_after_s = -1;
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_READY_BEFORE);
	ck_assert_ptr_nonnull(strstr(text, "ready before entropyd in the initramfs started"));
}
END_TEST

START_TEST(test_verdict_ready_without)
{
	struct kseed k;
	struct kseed_boot b = {.credit_until_ready = true, .ready_at_start = false,
			       .ready_now = true, .ready_after_s = 3.2, .needed_at_start = 256,
			       .credited_before_ready = 0};
	char text[512];

	put(proc, "cpuinfo", CPUINFO_NONE);
	put(proc, "cmdline", CMDLINE);
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_READY_WITHOUT);
	ck_assert_ptr_nonnull(strstr(text, "with none of its credit"));
	ck_assert_ptr_nonnull(strstr(text, "entropyd did not help this boot"));
}
END_TEST

START_TEST(test_verdict_not_ready)
{
	struct kseed k;
	struct kseed_boot b = {.credit_until_ready = true, .ready_at_start = false,
			       .ready_now = false, .ready_after_s = -1, .needed_at_start = 192,
			       .credited = 64};
	char text[512];

	put(proc, "cpuinfo", CPUINFO_NONE);
	put(proc, "cmdline", CMDLINE);
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_NOT_READY);
	ck_assert_str_eq(text, "CRNG not ready yet: entropyd has credited 64 of the 192 bits it "
			       "waits for");
	/* not known how many it waited for: the whole pool */
	b.needed_at_start = -1;
	verdict(&k, &b, text);
	ck_assert_ptr_nonnull(strstr(text, "of the 256 bits"));
}
END_TEST

START_TEST(test_verdict_old_kernel)
{
	struct kseed k;
	struct kseed_boot b = {.credit_until_ready = false, .ready_at_start = true,
			       .ready_now = true, .ready_after_s = -1, .needed_at_start = 0};
	char text[512];

	paths.release = "4.19.0-27-amd64";
	put(proc, "cpuinfo", CPUINFO_BOTH);
	put(proc, "cmdline", CMDLINE);
	kernel_seed_detect(&k, &paths);
	ck_assert_int_eq(verdict(&k, &b, text), KSEED_OLD_KERNEL);
	ck_assert_ptr_nonnull(strstr(text, "counts credit all along"));
	ck_assert_str_eq(kernel_seed_verdict_name(KSEED_OLD_KERNEL), "old-kernel");
}
END_TEST

static Suite *kernel_seed_suite(void)
{
	Suite *s = suite_create("kernel_seed");
	TCase *td = tcase_create("detect"), *tv = tcase_create("verdict");

	tcase_add_checked_fixture(td, setup, teardown);
	tcase_add_checked_fixture(tv, setup, teardown);
	tcase_add_test(td, test_cpu_flags);
	tcase_add_test(td, test_trust_cpu_cmdline);
	tcase_add_test(td, test_trust_cpu_config);
	tcase_add_test(td, test_hw_rng);
	tcase_add_test(td, test_nothing_readable);
	suite_add_tcase(s, td);
	tcase_add_test(tv, test_verdict_ready_before_cpu);
	tcase_add_test(tv, test_verdict_ready_before_virtio);
	tcase_add_test(tv, test_verdict_credited);
	tcase_add_test(tv, test_verdict_ready_without);
	tcase_add_test(tv, test_verdict_not_ready);
	tcase_add_test(tv, test_verdict_old_kernel);
	suite_add_tcase(s, tv);
	return s;
}

int main(void)
{
	return tu_run_suite(kernel_seed_suite());
}
