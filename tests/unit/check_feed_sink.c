/* check_feed_sink: the dry-run sink and the kernel sink against the real /dev/random (as root),
 * a device that is not a random device, and a process without CAP_SYS_ADMIN. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "feed_pool.h"
#include "feed_sink.h"
#include "log.h"
#include "testutil.h"
#include "util.h"

#define RANDOM_DEV "/dev/random"

/* ---- helpers ---- */

/* Anything credited to the real kernel is real randomness (getrandom), never a pattern. */
static void fill_random(void *buf, size_t len)
{
	ck_assert_int_eq(getrandom(buf, len, 0), (ssize_t)len);
}

static struct batch make_batch(size_t len, int credit_bits)
{
	struct batch b;

	memset(&b, 0, sizeof(b));
	ck_assert_uint_le(len, sizeof(b.data));
	fill_random(b.data, len);
	b.len = len;
	b.credit_bits = credit_bits;
	b.events = len / 8;
	return b;
}

/* The kernel sink needs CAP_SYS_ADMIN; CI runs as root, so these paths do run there. */
static bool need_root(const char *test)
{
	if (geteuid() == 0 && tu_have_sys_admin())
		return true;
	printf("%s: skipped: RNDADDENTROPY and RNDRESEEDCRNG need CAP_SYS_ADMIN, which this "
	       "process lacks (%s)\n",
	       test, geteuid() == 0 ? "root without it: a reduced bounding set?" : "not root");
	return false;
}

static void setup(void)
{
	log_open(true, 1);
}

/* ---- the dry run ---- */

START_TEST(test_dry_run_counts_never_opens)
{
	struct sink s;
	struct batch a = make_batch(64, 100), b = make_batch(POOL_BYTES, 4000);
	int fds = tu_count_fds();

	/* A path that could not be opened: the dry run does not need it. */
	ck_assert_int_eq(feed_sink_open(&s, SINK_DRY_RUN, "/nonexistent/random"), 0);
	ck_assert_int_eq(s.fd, -1);
	feed_sink_close(&s);
	/* A device that could be: the dry run still does not open it. */
	ck_assert_int_eq(feed_sink_open(&s, SINK_DRY_RUN, RANDOM_DEV), 0);
	ck_assert_int_eq(s.kind, SINK_DRY_RUN);
	ck_assert_int_eq(s.fd, -1);
	ck_assert_str_eq(feed_sink_name(&s), "dry-run");
	ck_assert_int_eq(tu_count_fds(), fds);

	ck_assert_int_eq(feed_sink_feed(&s, &a), 0);
	ck_assert_int_eq(feed_sink_feed(&s, &b), 0);
	ck_assert_int_eq(feed_sink_reseed(&s), 0);
	ck_assert_uint_eq(s.feeds, 2);
	ck_assert_uint_eq(s.mixed_bytes, 64 + POOL_BYTES);
	ck_assert_uint_eq(s.credited, 100 + 4000);
	ck_assert_uint_eq(s.reseeds, 1);
	ck_assert_uint_eq(s.errors, 0);
	ck_assert_int_eq(s.fd, -1);
	ck_assert_int_eq(tu_count_fds(), fds);
	feed_sink_close(&s);
	ck_assert_int_eq(tu_count_fds(), fds);
}
END_TEST

START_TEST(test_dry_run_logs_counts_only)
{
	struct sink s;
	struct batch a = make_batch(40, 7);
	char *out;

	/* The log line carries the counts of a batch, and never its bytes. */
	ck_assert_int_eq(feed_sink_open(&s, SINK_DRY_RUN, RANDOM_DEV), 0);
	memset(a.data, 'Q', a.len);
	tu_capture_begin();
	ck_assert_int_eq(feed_sink_feed(&s, &a), 0);
	out = tu_capture_end();
	ck_assert_msg(strstr(out, "would feed 40 bytes from 5 events, crediting 7 bits"),
		      "dry-run log: %s", out);
	ck_assert_msg(!strstr(out, "QQQQ"), "batch data in the log: %s", out);
	free(out);
	/* one of each: the singular */
	a.len = 1;
	a.events = 1;
	a.credit_bits = 1;
	tu_capture_begin();
	ck_assert_int_eq(feed_sink_feed(&s, &a), 0);
	out = tu_capture_end();
	ck_assert_msg(strstr(out, "would feed 1 byte from 1 event, crediting 1 bit\n"),
		      "dry-run log: %s", out);
	free(out);
	feed_sink_close(&s);
}
END_TEST

static void assert_zero_len_noop(struct sink *s)
{
	struct sink before = *s;
	struct batch z = make_batch(0, 0);

	ck_assert_int_eq(feed_sink_feed(s, &z), 0);
	/* Even a malformed empty batch that claims credit is no batch at all. */
	z.credit_bits = 64;
	z.events = 3;
	ck_assert_int_eq(feed_sink_feed(s, &z), 0);
	ck_assert_uint_eq(s->feeds, before.feeds);
	ck_assert_uint_eq(s->mixed_bytes, before.mixed_bytes);
	ck_assert_uint_eq(s->credited, before.credited);
	ck_assert_uint_eq(s->errors, before.errors);
}

START_TEST(test_zero_length_is_noop)
{
	struct sink s;
	struct batch a = make_batch(16, 0);
	char *out;

	ck_assert_int_eq(feed_sink_open(&s, SINK_DRY_RUN, RANDOM_DEV), 0);
	ck_assert_int_eq(feed_sink_feed(&s, &a), 0);
	tu_capture_begin();
	assert_zero_len_noop(&s);
	out = tu_capture_end();
	ck_assert_msg(out[0] == '\0', "an empty batch was logged: %s", out);
	free(out);
	ck_assert_uint_eq(s.feeds, 1);
	feed_sink_close(&s);

	/* The kernel sink: an empty batch never reaches the ioctl, so even a sink whose fd is
	 * not a random device (any ioctl would fail and count an error) returns 0. */
	ck_assert_int_eq(feed_sink_open(&s, SINK_DRY_RUN, "/dev/null"), 0);
	s.kind = SINK_KERNEL;
	s.fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(s.fd, 0);
	assert_zero_len_noop(&s);
	ck_assert_uint_eq(s.feeds, 0);
	ck_assert_uint_eq(s.errors, 0);
	feed_sink_close(&s);
}
END_TEST

/* ---- the kernel sink ---- */

START_TEST(test_kernel_sink_root)
{
	struct sink s;
	struct batch b = make_batch(256, 64);
	int fds = tu_count_fds();

	if (!need_root("test_kernel_sink_root"))
		return;
	/* feed_sink_open succeeds only if its RNDADDENTROPY probe does. */
	ck_assert_int_eq(feed_sink_open(&s, SINK_KERNEL, RANDOM_DEV), 0);
	ck_assert_int_ge(s.fd, 0);
	ck_assert_str_eq(s.device, RANDOM_DEV);
	ck_assert_str_eq(feed_sink_name(&s), "kernel");
	ck_assert_int_eq(tu_count_fds(), fds + 1);
	ck_assert_uint_eq(s.feeds, 0);
	ck_assert_uint_eq(s.errors, 0);

	ck_assert_int_eq(feed_sink_feed(&s, &b), 0);
	ck_assert_uint_eq(s.feeds, 1);
	ck_assert_uint_eq(s.mixed_bytes, 256);
	ck_assert_uint_eq(s.credited, 64);
	ck_assert_uint_eq(s.errors, 0);

	/* A whole pool's worth, credited at the most the pool ever gives (8 bits a byte). */
	b = make_batch(POOL_BYTES, 8 * POOL_BYTES);
	ck_assert_int_eq(feed_sink_feed(&s, &b), 0);
	ck_assert_uint_eq(s.feeds, 2);
	ck_assert_uint_eq(s.mixed_bytes, 256 + POOL_BYTES);
	ck_assert_uint_eq(s.credited, 64 + 8 * POOL_BYTES);

	/* RNDRESEEDCRNG: needs CAP_SYS_ADMIN and a ready CRNG; both hold here. */
	ck_assert_int_eq(feed_sink_reseed(&s), 0);
	ck_assert_uint_eq(s.reseeds, 1);
	ck_assert_uint_eq(s.errors, 0);

	feed_sink_close(&s);
	ck_assert_int_eq(s.fd, -1);
	ck_assert_ptr_null(s.device);
	ck_assert_int_eq(tu_count_fds(), fds);
}
END_TEST

START_TEST(test_kernel_sink_feed_errors_counted)
{
	struct sink s;
	struct batch b = make_batch(64, 32);
	int null_fd;

	if (!need_root("test_kernel_sink_feed_errors_counted"))
		return;
	ck_assert_int_eq(feed_sink_open(&s, SINK_KERNEL, RANDOM_DEV), 0);
	/* The device turns into something else under the open sink: every ioctl now fails
	 * (ENOTTY) and is counted as an error, not as a feed, a credit or a reseed. */
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(null_fd, 0);
	ck_assert_int_eq(dup2(null_fd, s.fd), s.fd);
	close(null_fd);
	ck_assert_int_eq(feed_sink_feed(&s, &b), -1);
	ck_assert_int_eq(feed_sink_reseed(&s), -1);
	ck_assert_uint_eq(s.errors, 2);
	ck_assert_uint_eq(s.feeds, 0);
	ck_assert_uint_eq(s.mixed_bytes, 0);
	ck_assert_uint_eq(s.credited, 0);
	ck_assert_uint_eq(s.reseeds, 0);
	feed_sink_close(&s);
}
END_TEST

START_TEST(test_kernel_sink_not_random_device)
{
	struct sink s;
	char *out;
	int fds = tu_count_fds();
	char want[128];

	/* /dev/null opens for writing, but RNDADDENTROPY on it is ENOTTY: the probe fails,
	 * the fd is closed again, and the message says what failed and why. */
	tu_capture_begin();
	ck_assert_int_eq(feed_sink_open(&s, SINK_KERNEL, "/dev/null"), -1);
	out = tu_capture_end();
	ck_assert_int_eq(s.fd, -1);
	ck_assert_int_eq(tu_count_fds(), fds);
	snprintf(want, sizeof(want), "RNDADDENTROPY on /dev/null failed: %s", strerror(ENOTTY));
	ck_assert_msg(strstr(out, want), "want \"%s\" in: %s", want, out);
	ck_assert_msg(!strstr(out, "not permitted"), "ENOTTY reported as EPERM: %s", out);
	free(out);
	ck_assert_uint_eq(s.feeds, 0);
	ck_assert_uint_eq(s.errors, 0);
	feed_sink_close(&s); /* frees the device name: the daemon does the same after a failure */
	ck_assert_int_eq(tu_count_fds(), fds);

	/* A path that does not exist: open fails, nothing is left open. */
	tu_capture_begin();
	ck_assert_int_eq(feed_sink_open(&s, SINK_KERNEL, "/nonexistent/random"), -1);
	out = tu_capture_end();
	ck_assert_int_eq(s.fd, -1);
	ck_assert_int_eq(tu_count_fds(), fds);
	snprintf(want, sizeof(want), "cannot open /nonexistent/random: %s", strerror(ENOENT));
	ck_assert_msg(strstr(out, want), "want \"%s\" in: %s", want, out);
	free(out);
	feed_sink_close(&s);
}
END_TEST

/* ---- without CAP_SYS_ADMIN ---- */

#define CAP_BIT(c) (1u << ((c) & 31))

/* Clear CAP_SYS_ADMIN from this process's effective and permitted sets (no libcap here). */
static int drop_sys_admin(void)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data) < 0)
		return -1;
	data[CAP_SYS_ADMIN / 32].effective &= ~CAP_BIT(CAP_SYS_ADMIN);
	data[CAP_SYS_ADMIN / 32].permitted &= ~CAP_BIT(CAP_SYS_ADMIN);
	data[CAP_SYS_ADMIN / 32].inheritable &= ~CAP_BIT(CAP_SYS_ADMIN);
	return (int)syscall(SYS_capset, &hdr, data);
}

/* Exit codes of the child in test_kernel_sink_eperm. */
enum {
	EP_OK,
	EP_CAPSET,    /* could not drop CAP_SYS_ADMIN */
	EP_STILL_CAP, /* capget still shows it */
	EP_PRECOND,   /* a direct RNDADDENTROPY did not fail with EPERM */
	EP_OPENED,    /* feed_sink_open did not return -1 */
	EP_FD,        /* the sink's fd was left open */
	EP_LEAK,      /* an fd leaked */
};

static int eperm_child(void)
{
	struct {
		int entropy_count, buf_size;
		uint32_t buf[2];
	} req = {.entropy_count = 0, .buf_size = 8};
	struct sink s;
	int fd, fds, rc;

	if (drop_sys_admin() < 0)
		return EP_CAPSET;
	if (tu_have_sys_admin())
		return EP_STILL_CAP;
	/* The precondition, independently of feed_sink.c: the kernel now says EPERM. */
	fill_random(req.buf, sizeof(req.buf));
	fd = open(RANDOM_DEV, O_WRONLY | O_CLOEXEC);
	rc = fd < 0 ? 0 : ioctl(fd, RNDADDENTROPY, &req);
	if (fd < 0 || rc == 0 || errno != EPERM)
		return EP_PRECOND;
	close(fd);

	fds = tu_open_fds();
	if (feed_sink_open(&s, SINK_KERNEL, RANDOM_DEV) != -1)
		return EP_OPENED;
	if (s.fd != -1)
		return EP_FD;
	if (tu_open_fds() != fds)
		return EP_LEAK;
	feed_sink_close(&s);
	return EP_OK;
}

START_TEST(test_kernel_sink_eperm)
{
	FILE *tmp = tmpfile();
	char *out;
	pid_t pid;
	int status;

	/* Capabilities are per thread and cannot be regained: drop them in a child. */
	ck_assert_ptr_nonnull(tmp);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		dup2(fileno(tmp), STDERR_FILENO);
		log_open(true, 0);
		status = eperm_child();
		fflush(stderr);
		_exit(status);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "child died (status %#x)", status);
	out = tu_read_tmpfile(tmp);

	ck_assert_msg(WEXITSTATUS(status) == EP_OK,
		      "child without CAP_SYS_ADMIN: step %d failed (see enum); log: %s",
		      WEXITSTATUS(status), out);
	/* The one clear message: what is not permitted, on which device, and what to do. */
	ck_assert_msg(strstr(out, "RNDADDENTROPY on " RANDOM_DEV " is not permitted (EPERM)"),
		      "no EPERM message: %s", out);
	ck_assert_msg(strstr(out, "CAP_SYS_ADMIN"), "message does not name the capability: %s",
		      out);
	ck_assert_msg(strstr(out, "--dry-run"), "message does not offer the dry run: %s", out);
	free(out);
}
END_TEST

static Suite *sink_suite(void)
{
	Suite *s = suite_create("sink");
	TCase *dry = tcase_create("dry-run");
	TCase *kern = tcase_create("kernel");

	tcase_add_checked_fixture(dry, setup, NULL);
	tcase_add_test(dry, test_dry_run_counts_never_opens);
	tcase_add_test(dry, test_dry_run_logs_counts_only);
	tcase_add_test(dry, test_zero_length_is_noop);
	suite_add_tcase(s, dry);

	tcase_add_checked_fixture(kern, setup, NULL);
	tcase_add_test(kern, test_kernel_sink_root);
	tcase_add_test(kern, test_kernel_sink_feed_errors_counted);
	tcase_add_test(kern, test_kernel_sink_not_random_device);
	tcase_add_test(kern, test_kernel_sink_eperm);
	suite_add_tcase(s, kern);
	return s;
}

int main(void)
{
	return tu_run_suite(sink_suite());
}
