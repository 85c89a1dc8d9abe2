/* check_kernel: kernel.c against the running kernel, each answer read again independently,
 * and its semantics decision against recorded trees of other kernels. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "kernel.h"
#include "testutil.h"
#include "util.h"

/* kernel.c asks uname(3) for the release. This definition takes the place of libc's in this
 * program, so a test can present another release; by default it is the real system call. */
static const char *fake_release;

int uname(struct utsname *u)
{
	if (syscall(SYS_uname, u) < 0)
		return -1;
	if (fake_release)
		snprintf(u->release, sizeof(u->release), "%s", fake_release);
	return 0;
}

static void setup(void)
{
	fake_release = NULL;
}

/* ---- version ---- */

START_TEST(test_probe_version_matches_uname)
{
	struct utsname u;
	struct kernel_state ks;
	unsigned major, minor;

	ck_assert_int_eq(syscall(SYS_uname, &u), 0);
	ck_assert_int_eq(sscanf(u.release, "%u.%u", &major, &minor), 2);
	memset(&ks, 0xa5, sizeof(ks));
	kernel_probe(&ks);
	ck_assert_msg(ks.major == major && ks.minor == minor, "probe %u.%u, uname says %s",
		      ks.major, ks.minor, u.release);
	ck_assert(ks.major > 0);
}
END_TEST

/* The running kernel's semantics come from its poolsize, read again here. */
START_TEST(test_probe_semantics_from_proc)
{
	struct kernel_state ks;
	FILE *f = fopen(KERNEL_RANDOM_DIR "/poolsize", "r");
	int poolsize = -1;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &poolsize), 1);
	fclose(f);
	kernel_probe(&ks);
	ck_assert_int_eq(ks.poolsize, poolsize);
	ck_assert_int_eq(ks.by, KERNEL_BY_POOLSIZE);
	ck_assert(ks.credit_until_ready == (poolsize == 256));
	ck_assert(ks.read_wakeup ==
		  (access(KERNEL_RANDOM_DIR "/read_wakeup_threshold", F_OK) == 0));
	ck_assert_msg(strncmp(ks.why, "poolsize ", 9) == 0, "%s", ks.why);
}
END_TEST

/* Recorded /proc/sys/kernel/random trees (tests/data/kernel_random/). */
static void probe_tree(struct kernel_state *ks, const char *tree)
{
	char *dir = xasprintf("%s/tests/data/kernel_random/%s", SRCDIR, tree);

	kernel_probe_at(ks, dir);
	free(dir);
}

#define UNTIL_READY "poolsize 256: credit counts until the CRNG is ready (5.18 semantics)"
#define LAST_UNTIL_READY "a last resort: credit counts until the CRNG is ready (5.18 semantics)"
#define LAST_DEPLETING \
	"a last resort: a pool that reads deplete, credit counts always (before 5.18)"

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && strcmp(s + n - m, end) == 0;
}

/* Each tree under a release that would have said otherwise if the version decided: 5.10.262
 * is Debian 11's current kernel, with the 2022 rewrite backported. */
START_TEST(test_semantics_from_recorded_trees)
{
	static const struct {
		const char *tree, *release;
		bool until_ready;
		enum kernel_evidence by;
		int poolsize, write_wakeup, avail, bits_needed;
		bool read_wakeup;
		const char *why;
	} cases[] = {
		{"5.10.262", "5.10.0-46-amd64", true, KERNEL_BY_POOLSIZE, 256, 256, 256, 0, false,
		 UNTIL_READY},
		{"5.10.262-booting", "5.10.0-46-amd64", true, KERNEL_BY_POOLSIZE, 256, 256, 5, 251,
		 false, UNTIL_READY},
		{"6.1", "6.1.0-57-amd64", true, KERNEL_BY_POOLSIZE, 256, 256, 256, 0, false,
		 UNTIL_READY},
		{"6.12", "6.12.118+deb13-amd64", true, KERNEL_BY_POOLSIZE, 256, 256, 256, 0, false,
		 UNTIL_READY},
		{"4.19-pool4096", "4.19.0-27-amd64", false, KERNEL_BY_POOLSIZE, 4096, 896, 3071, 0,
		 true,
		 "poolsize 4096: a pool that reads deplete, credit counts always (semantics before "
		 "5.18)"},
		/* An old pool under a release past 5.18 (a vendor's number): the pool decides. */
		{"4.19-pool4096", "6.6.0-vendor", false, KERNEL_BY_POOLSIZE, 4096, 896, 3071, 0, true,
		 "poolsize 4096: "},
		{"no-poolsize-read-wakeup", "6.1.0", false, KERNEL_BY_READ_WAKEUP, -1, 896, 1200, 0,
		 true,
		 "no usable poolsize, read_wakeup_threshold present: a pool that reads deplete, "
		 "credit counts always (semantics before 5.6)"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kernel_state ks;
		const char *tree = cases[i].tree, *rel = cases[i].release;

		fake_release = rel;
		probe_tree(&ks, tree);
		ck_assert_msg(ks.credit_until_ready == cases[i].until_ready, "%s as %s: %s", tree,
			      rel, ks.why);
		ck_assert_msg(ks.by == cases[i].by, "%s as %s: by %d", tree, rel, (int)ks.by);
		ck_assert_msg(ks.poolsize == cases[i].poolsize, "%s: poolsize %d", tree,
			      ks.poolsize);
		ck_assert_msg(ks.write_wakeup == cases[i].write_wakeup, "%s: write_wakeup %d", tree,
			      ks.write_wakeup);
		ck_assert_msg(ks.read_wakeup == cases[i].read_wakeup, "%s: read_wakeup", tree);
		ck_assert_msg(ks.entropy_avail == cases[i].avail, "%s: entropy_avail %d", tree,
			      ks.entropy_avail);
		ck_assert_msg(strncmp(ks.why, cases[i].why, strlen(cases[i].why)) == 0,
			      "%s as %s: \"%s\"", tree, rel, ks.why);
		ck_assert_str_eq(kernel_semantics_name(&ks),
				 cases[i].until_ready ? "until-ready" : "depleting");
		ck_assert_str_eq(kernel_evidence_name(&ks), cases[i].by == KERNEL_BY_POOLSIZE
								  ? "poolsize"
								  : "read_wakeup_threshold");
		/* POLLIN on /dev/random means ready wherever read_wakeup_threshold is gone. */
		ck_assert(kernel_pollin_is_ready(&ks) == !cases[i].read_wakeup);
		/* The boot allowance, as if the CRNG were not ready yet: on 5.10.262 as on 6.x. */
		ks.crng_ready = false;
		ck_assert_msg(kernel_bits_needed(&ks) == cases[i].bits_needed, "%s: bits needed %d",
			      tree, kernel_bits_needed(&ks));
	}
}
END_TEST

/* Nothing to read: the version decides, and it is said to be a last resort. */
START_TEST(test_credit_until_ready_from_5_18)
{
	static const struct {
		const char *release;
		unsigned major, minor;
		bool until_ready;
	} cases[] = {
		{"2.6.32-754.el6.x86_64", 2, 6, false},
		{"3.19.0", 3, 19, false},
		{"4.19.0-27-amd64", 4, 19, false},
		{"5.4.0-150-generic", 5, 4, false},
		{"5.9.16", 5, 9, false},
		{"5.17.15-300.fc36.x86_64", 5, 17, false},
		{"5.18.0-rc1", 5, 18, true},
		{"5.18", 5, 18, true},
		{"5.19.17", 5, 19, true},
		{"5.100.1", 5, 100, true},
		{"6.0.0", 6, 0, true},
		{"6.1.0-28-cloud-amd64", 6, 1, true},
		{"6.18.44-fc-v1098", 6, 18, true},
		{"10.1", 10, 1, true},
		/* the longest reason there can be: its end is still there */
		{"4294967295.4294967295", 4294967295u, 4294967295u, true},
		/* Unparsable: 0.0, and so not the 5.18 behaviour. */
		{"7", 0, 0, false},
		{"linux", 0, 0, false},
		{"", 0, 0, false},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct kernel_state ks;

		fake_release = cases[i].release;
		probe_tree(&ks, "empty");
		ck_assert_msg(ks.major == cases[i].major && ks.minor == cases[i].minor,
			      "\"%s\": parsed %u.%u", cases[i].release, ks.major, ks.minor);
		ck_assert_msg(ks.credit_until_ready == cases[i].until_ready,
			      "\"%s\": credit_until_ready %d", cases[i].release,
			      ks.credit_until_ready);
		ck_assert_int_eq(ks.by, KERNEL_BY_VERSION);
		ck_assert_str_eq(kernel_evidence_name(&ks), "version");
		ck_assert_int_eq(ks.poolsize, -1);
		ck_assert_int_eq(ks.write_wakeup, -1);
		ck_assert_int_eq(ks.entropy_avail, -1);
		ck_assert_msg(strstr(ks.why, "by the version") &&
				      ends_with(ks.why, cases[i].until_ready ? LAST_UNTIL_READY
									     : LAST_DEPLETING),
			      "%s", ks.why);
	}
}
END_TEST

/* A tree in a directory deeper than any fixed buffer (a package built under a long path): it
 * is read whole, and the reason keeps its end. */
START_TEST(test_deep_tree)
{
	char base[4096], *deep, *pool, *empty;
	struct kernel_state ks;
	FILE *f;

	tu_mkdtemp(base, sizeof(base), "%s/kernel.XXXXXX", tu_tmpdir());
	deep = xstrdup(base);
	while (strlen(deep) < 700) {
		char *next = xasprintf("%s/a-directory-of-a-long-build-path-%zu", deep, strlen(deep));

		free(deep);
		deep = next;
		ck_assert_int_eq(mkdir(deep, 0755), 0);
	}
	pool = xasprintf("%s/poolsize", deep);
	ck_assert_ptr_nonnull(f = fopen(pool, "w"));
	fputs("256\n", f);
	ck_assert_int_eq(fclose(f), 0);
	/* a release that would say otherwise: only the poolsize read at that depth says 256 */
	fake_release = "5.4.0";
	kernel_probe_at(&ks, deep);
	ck_assert_msg(ks.by == KERNEL_BY_POOLSIZE && ks.credit_until_ready, "%s", ks.why);
	ck_assert_str_eq(ks.why, UNTIL_READY);
	empty = xasprintf("%s/empty", deep);
	ck_assert_int_eq(mkdir(empty, 0755), 0);
	fake_release = "6.1.0";
	kernel_probe_at(&ks, empty);
	ck_assert_int_eq(ks.by, KERNEL_BY_VERSION);
	ck_assert_msg(ends_with(ks.why, LAST_UNTIL_READY), "%s", ks.why);
	free(empty);
	free(pool);
	free(deep);
	ck_assert_int_eq(tu_rm_tree(base), 0);
}
END_TEST

/* ---- CRNG and entropy_avail ---- */

#define ENTROPY_AVAIL "/proc/sys/kernel/random/entropy_avail"

START_TEST(test_crng_ready_agrees_with_getrandom)
{
	unsigned char b[4];
	bool ready = getrandom(b, sizeof(b), GRND_NONBLOCK) == (ssize_t)sizeof(b);
	struct kernel_state ks;

	ck_assert_int_eq(kernel_crng_ready(), ready);
	kernel_probe(&ks);
	ck_assert_int_eq(ks.crng_ready, ready);
	/* Once ready, ready for good: and these machines boot with it ready. */
	ck_assert_msg(ready, "the CRNG is not ready here (TESTING.md says it is)");
}
END_TEST

/* A CRNG that is not ready yet cannot be had on a booted machine: in a child, a seccomp
 * filter makes getrandom() fail with EAGAIN, which is what a kernel whose CRNG is not
 * ready answers to GRND_NONBLOCK. Only nonblocking calls are made in that child. */
static int deny_getrandom(void)
{
	/* No architecture check: the child makes native system calls only. */
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrandom, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAGAIN),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {.len = ARRAY_SIZE(f), .filter = f};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* Exit codes of the child: bit 0 set if getrandom itself succeeded, bit 1 if
 * kernel_crng_ready() said ready, bit 2 if kernel_probe() did; 8 if no filter. */
static int not_ready_child(void)
{
	unsigned char b;
	struct kernel_state ks;
	int r = 0;

	if (deny_getrandom() < 0)
		return 8;
	if (getrandom(&b, 1, GRND_NONBLOCK) == 1)
		r |= 1;
	else if (errno != EAGAIN)
		return 9;
	if (kernel_crng_ready())
		r |= 2;
	kernel_probe(&ks);
	if (ks.crng_ready)
		r |= 4;
	return r;
}

START_TEST(test_crng_not_ready_seen)
{
	pid_t pid;
	int status;

	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(not_ready_child());
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "child died (status %#x)", status);
	if (WEXITSTATUS(status) == 8) {
		printf("test_crng_not_ready_seen: skipped: no seccomp filter here\n");
		return;
	}
	ck_assert_msg(WEXITSTATUS(status) != 9, "getrandom failed with another errno");
	ck_assert_msg(!(WEXITSTATUS(status) & 1), "the filter did not stop getrandom");
	ck_assert_msg(!(WEXITSTATUS(status) & 2), "kernel_crng_ready() says ready on EAGAIN");
	ck_assert_msg(!(WEXITSTATUS(status) & 4), "kernel_probe() says ready on EAGAIN");
}
END_TEST

static int read_entropy_avail(void)
{
	FILE *f = fopen(ENTROPY_AVAIL, "r");
	int v = -1;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%d", &v), 1);
	fclose(f);
	return v;
}

START_TEST(test_entropy_avail_matches_proc)
{
	struct kernel_state ks;
	int want = read_entropy_avail();

	ck_assert_int_ge(want, 0);
	ck_assert_int_eq(kernel_entropy_avail(), want);
	kernel_probe(&ks);
	ck_assert_int_eq(ks.entropy_avail, want);
	/* From 5.18 on it stays at 256 once the CRNG is ready, so the reads cannot race. */
	if (ks.credit_until_ready && ks.crng_ready)
		ck_assert_int_eq(want, 256);
}
END_TEST

/* ---- CONFIG_HZ ---- */

/* CONFIG_HZ from /proc/config.gz, read by zcat rather than zlib; 0 if there is none. */
static unsigned hz_by_zcat(void)
{
	FILE *p = popen("zcat /proc/config.gz 2>/dev/null", "r");
	char line[4096];
	unsigned hz = 0;

	ck_assert_ptr_nonnull(p);
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "CONFIG_HZ=%u", &hz) == 1)
			break;
	while (fgets(line, sizeof(line), p))
		;
	pclose(p);
	return hz;
}

START_TEST(test_hz_from_proc_config)
{
	const char *from = NULL;
	unsigned want, hz;

	/* Debian's arm64 and armmp kernels are built without it: kernel_hz reads /boot there. */
	if (access("/proc/config.gz", F_OK) < 0) {
		printf("test_hz_from_proc_config: skipped: no /proc/config.gz (%s): this kernel "
		       "is built without CONFIG_IKCONFIG_PROC\n",
		       strerror(errno));
		return;
	}
	want = hz_by_zcat();
	hz = kernel_hz(&from);
	if (want == 0) {
		/* Not so on these machines: TESTING.md says CONFIG_HZ=250 is in it. */
		ck_abort_msg("/proc/config.gz has no CONFIG_HZ here; kernel_hz says %u from %s", hz,
			     from);
	}
	ck_assert_uint_eq(hz, want);
	ck_assert_ptr_nonnull(from);
	ck_assert_str_eq(from, "/proc/config.gz");
}
END_TEST

/* ---- files shadowed in a private mount namespace ----
 *
 * Some answers come from files no test may change for the whole machine: /proc/config.gz,
 * /boot and entropy_avail. A child with a mount namespace of its own bind-mounts the test's
 * files over them; no other process sees it, and it goes away with the child. The mounts
 * need CAP_SYS_ADMIN. Results come back through shared memory. */

#define FAKE_RELEASE "0.0.0-entropyd-test"

enum { HZ_PROC_GZ, HZ_BOOT_PLAIN, HZ_BOOT_GZ, HZ_BOOT_OUT_OF_RANGE, HZ_NONE, HZ_CASES };

struct shadow_result {
	unsigned hz[HZ_CASES];
	char from[HZ_CASES][128];
	int avail_number, avail_garbage;
};

/* Child exit codes. */
enum { SH_OK, SH_NO_NAMESPACE = 2, SH_MOUNT, SH_WRITE };

static char shadow_top[4096]; /* one per run, removed at the end even if a test failed */
static char shadow_dir[4200]; /* one per test */

/* These also run in the child, where a failed assertion cannot be reported: they return
 * false instead. */
static bool write_plain(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(text, f) >= 0;
	return fclose(f) == 0 && ok;
}

static bool write_gz(const char *path, const char *text)
{
	gzFile f = gzopen(path, "wb");
	bool ok;

	if (!f)
		return false;
	ok = gzputs(f, text) == (int)strlen(text);
	return gzclose(f) == Z_OK && ok;
}

static const char *in_dir(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", shadow_dir, name);
	return path;
}

/* Mount the test's file NAME over TARGET, taking away whatever the test mounted there. */
static bool shadow(const char *name, const char *target, bool again)
{
	if (again && umount(target) < 0)
		return false;
	return mount(in_dir(name), target, "none", MS_BIND, NULL) == 0;
}

/* Run fn in a child with private mounts. False if the test must be skipped (said why). */
static bool run_shadowed(const char *test, int (*fn)(struct shadow_result *),
			 struct shadow_result *out)
{
	struct shadow_result *res;
	pid_t pid;
	int status;

	if (geteuid() != 0 || !tu_have_sys_admin()) {
		printf("%s: skipped: shadowing system files in a private mount namespace needs "
		       "root with CAP_SYS_ADMIN\n",
		       test);
		return false;
	}
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		   0);
	ck_assert_ptr_ne(res, MAP_FAILED);
	memset(res, 0, sizeof(*res));
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (unshare(CLONE_NEWNS) < 0)
			_exit(SH_NO_NAMESPACE);
		if (mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(SH_MOUNT);
		_exit(fn(res));
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	*out = *res;
	munmap(res, sizeof(*res));
	ck_assert_msg(WIFEXITED(status), "child died (status %#x)", status);
	if (WEXITSTATUS(status) == SH_NO_NAMESPACE) {
		printf("%s: skipped: unshare(CLONE_NEWNS) failed: no mount namespaces here\n",
		       test);
		return false;
	}
	ck_assert_msg(WEXITSTATUS(status) == SH_OK, "child: %s (exit %d)",
		      WEXITSTATUS(status) == SH_MOUNT ? "a mount failed"
						      : "a file could not be written",
		      WEXITSTATUS(status));
	return true;
}

/* Unchecked: runs in the runner itself, so the directory goes even when a test fails. */
static void shadow_run_setup(void)
{
	tu_mkdtemp_or_exit(shadow_top, sizeof(shadow_top), "%s/shadow.XXXXXX", tu_tmpdir());
}

static void shadow_run_teardown(void)
{
	tu_rm_tree(shadow_top);
}

static void shadow_setup(void)
{
	fake_release = NULL;
	tu_mkdtemp(shadow_dir, sizeof(shadow_dir), "%s/t.XXXXXX", shadow_top);
	ck_assert_int_eq(mkdir(in_dir("boot"), 0700), 0);
	ck_assert(write_plain(in_dir("empty"), ""));
	ck_assert(write_gz(in_dir("config.gz"), "CONFIG_HZ_1000=y\nCONFIG_HZ=1000\n"));
	ck_assert(write_plain(in_dir("boot/config-" FAKE_RELEASE), "CONFIG_HZ=100\n"));
	ck_assert(write_plain(in_dir("seventeen"), "17\n"));
	ck_assert(write_plain(in_dir("garbage"), "not a number\n"));
}

static void shadow_teardown(void)
{
	tu_rm_tree(shadow_dir);
}

static void record(struct shadow_result *r, int i)
{
	const char *from = "(unset)";

	r->hz[i] = kernel_hz(&from);
	snprintf(r->from[i], sizeof(r->from[i]), "%s", from);
}

/* Whether this kernel has /proc/config.gz to mount over (CONFIG_IKCONFIG_PROC): without
 * it, the /boot cases run alone. */
static bool have_proc_config;

static int hz_child(struct shadow_result *res)
{
	char boot[256];

	fake_release = FAKE_RELEASE;
	snprintf(boot, sizeof(boot), "%s", in_dir("boot"));
	if (mount(boot, "/boot", "none", MS_BIND, NULL) < 0)
		return SH_MOUNT;
	if (have_proc_config) {
		/* A config.gz of our own: it is read first, whatever /boot says. */
		if (!shadow("config.gz", "/proc/config.gz", false))
			return SH_MOUNT;
		record(res, HZ_PROC_GZ);
		/* No CONFIG_HZ in /proc/config.gz: /boot/config-RELEASE, ... */
		if (!shadow("empty", "/proc/config.gz", true))
			return SH_MOUNT;
	}
	/* ... as plain text ... */
	if (!write_plain(in_dir("boot/config-" FAKE_RELEASE),
			 "# CONFIG_HZ_100 is not set\nCONFIG_HZ_300=y\nCONFIG_HZ=300\n"))
		return SH_WRITE;
	record(res, HZ_BOOT_PLAIN);
	/* ... or compressed. */
	if (!write_gz(in_dir("boot/config-" FAKE_RELEASE), "CONFIG_HZ_100=y\nCONFIG_HZ=100\n"))
		return SH_WRITE;
	record(res, HZ_BOOT_GZ);
	/* A value no kernel has is not believed. */
	if (!write_plain(in_dir("boot/config-" FAKE_RELEASE), "CONFIG_HZ=5\n"))
		return SH_WRITE;
	record(res, HZ_BOOT_OUT_OF_RANGE);
	/* Nothing anywhere. */
	if (unlink(in_dir("boot/config-" FAKE_RELEASE)) < 0)
		return SH_WRITE;
	record(res, HZ_NONE);
	return SH_OK;
}

START_TEST(test_hz_fallbacks)
{
	struct shadow_result r;

	have_proc_config = access("/proc/config.gz", F_OK) == 0;
	if (!run_shadowed("test_hz_fallbacks", hz_child, &r))
		return;
	if (have_proc_config) {
		ck_assert_uint_eq(r.hz[HZ_PROC_GZ], 1000);
		ck_assert_str_eq(r.from[HZ_PROC_GZ], "/proc/config.gz");
	} else {
		printf("test_hz_fallbacks: skipped: its /proc/config.gz case: this kernel has "
		       "none (CONFIG_IKCONFIG_PROC); the /boot cases ran\n");
	}
	ck_assert_uint_eq(r.hz[HZ_BOOT_PLAIN], 300);
	ck_assert_str_eq(r.from[HZ_BOOT_PLAIN], "/boot/config-" FAKE_RELEASE);
	ck_assert_uint_eq(r.hz[HZ_BOOT_GZ], 100);
	ck_assert_str_eq(r.from[HZ_BOOT_GZ], "/boot/config-" FAKE_RELEASE);
	/* Out of range or absent: 1000, the shortest common jiffy, and it says so. */
	ck_assert_uint_eq(r.hz[HZ_BOOT_OUT_OF_RANGE], 1000);
	ck_assert_msg(strncmp(r.from[HZ_BOOT_OUT_OF_RANGE], "assumed", 7) == 0, "from \"%s\"",
		      r.from[HZ_BOOT_OUT_OF_RANGE]);
	ck_assert_uint_eq(r.hz[HZ_NONE], 1000);
	ck_assert_msg(strncmp(r.from[HZ_NONE], "assumed", 7) == 0, "from \"%s\"", r.from[HZ_NONE]);
}
END_TEST

static int avail_child(struct shadow_result *res)
{
	if (!shadow("seventeen", ENTROPY_AVAIL, false))
		return SH_MOUNT;
	res->avail_number = kernel_entropy_avail();
	if (!shadow("garbage", ENTROPY_AVAIL, true))
		return SH_MOUNT;
	res->avail_garbage = kernel_entropy_avail();
	return SH_OK;
}

START_TEST(test_entropy_avail_unreadable)
{
	struct shadow_result r;

	if (!run_shadowed("test_entropy_avail_unreadable", avail_child, &r))
		return;
	/* It is that file that is read, and what is not a number there is -1. */
	ck_assert_int_eq(r.avail_number, 17);
	ck_assert_int_eq(r.avail_garbage, -1);
}
END_TEST

/* ---- meaning ---- */

START_TEST(test_meaning_three_states)
{
	const struct kernel_state old = {.major = 5, .minor = 15, .credit_until_ready = false,
					 .crng_ready = false, .entropy_avail = 3000};
	const struct kernel_state old_ready = {.major = 5, .minor = 15,
					       .credit_until_ready = false, .crng_ready = true,
					       .entropy_avail = 3000};
	const struct kernel_state booting = {.major = 6, .minor = 1, .credit_until_ready = true,
					     .crng_ready = false, .entropy_avail = 12};
	const struct kernel_state ready = {.major = 6, .minor = 1, .credit_until_ready = true,
					   .crng_ready = true, .entropy_avail = 256};
	const char *m_old = kernel_meaning(&old), *m_boot = kernel_meaning(&booting),
		   *m_ready = kernel_meaning(&ready);

	ck_assert_ptr_nonnull(m_old);
	ck_assert_ptr_nonnull(m_boot);
	ck_assert_ptr_nonnull(m_ready);
	ck_assert_uint_gt(strlen(m_old), 20);
	ck_assert_uint_gt(strlen(m_boot), 20);
	ck_assert_uint_gt(strlen(m_ready), 20);
	ck_assert_str_ne(m_old, m_boot);
	ck_assert_str_ne(m_old, m_ready);
	ck_assert_str_ne(m_boot, m_ready);
	/* With the old semantics the CRNG state does not change what credit means. */
	ck_assert_str_eq(kernel_meaning(&old_ready), m_old);
	/* Each sentence is about its own state. */
	ck_assert_msg(strstr(m_old, "deplete") && strstr(m_old, "watermark"), "%s", m_old);
	ck_assert_msg(strstr(m_boot, "not ready") && strstr(m_boot, "getrandom"), "%s", m_boot);
	ck_assert_msg(strstr(m_ready, "ready") && strstr(m_ready, "ignores credit"), "%s",
		      m_ready);
	ck_assert_msg(!strstr(m_ready, "not ready"), "%s", m_ready);
	/* The kernel's state only: what the daemon does then depends on feed.mode too. */
	ck_assert_msg(!strstr(m_ready, "mixing"), "%s", m_ready);
}
END_TEST

START_TEST(test_bits_needed)
{
	struct kernel_state ks = {.major = 6, .minor = 1, .credit_until_ready = true,
				  .crng_ready = false, .entropy_avail = 5};

	/* Not ready: 256 less what the kernel has counted (entropy_avail is init_bits). */
	ck_assert_int_eq(kernel_bits_needed(&ks), 251);
	ks.entropy_avail = 0;
	ck_assert_int_eq(kernel_bits_needed(&ks), KERNEL_READY_BITS);
	ks.entropy_avail = 256;
	ck_assert_int_eq(kernel_bits_needed(&ks), 0);
	/* Unreadable: at most what any kernel needs. */
	ks.entropy_avail = -1;
	ck_assert_int_eq(kernel_bits_needed(&ks), KERNEL_READY_BITS);
	/* Ready, or a kernel before 5.18 whose credit counts always: no need to speak of. */
	ks.entropy_avail = 5;
	ks.crng_ready = true;
	ck_assert_int_eq(kernel_bits_needed(&ks), 0);
	ks.crng_ready = false;
	ks.credit_until_ready = false;
	ck_assert_int_eq(kernel_bits_needed(&ks), 0);
}
END_TEST

static Suite *kernel_suite(void)
{
	Suite *s = suite_create("kernel");
	TCase *tc = tcase_create("core");
	TCase *shadowed = tcase_create("shadowed");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_probe_version_matches_uname);
	tcase_add_test(tc, test_probe_semantics_from_proc);
	tcase_add_test(tc, test_semantics_from_recorded_trees);
	tcase_add_test(tc, test_credit_until_ready_from_5_18);
	tcase_add_test(tc, test_deep_tree);
	tcase_add_test(tc, test_crng_ready_agrees_with_getrandom);
	tcase_add_test(tc, test_crng_not_ready_seen);
	tcase_add_test(tc, test_entropy_avail_matches_proc);
	tcase_add_test(tc, test_hz_from_proc_config);
	tcase_add_test(tc, test_meaning_three_states);
	tcase_add_test(tc, test_bits_needed);
	suite_add_tcase(s, tc);

	/* Each test makes its own directory of files to shadow the system's with. */
	tcase_add_unchecked_fixture(shadowed, shadow_run_setup, shadow_run_teardown);
	tcase_add_checked_fixture(shadowed, shadow_setup, shadow_teardown);
	tcase_add_test(shadowed, test_hz_fallbacks);
	tcase_add_test(shadowed, test_entropy_avail_unreadable);
	suite_add_tcase(s, shadowed);
	return s;
}

int main(void)
{
	return tu_run_suite(kernel_suite());
}
