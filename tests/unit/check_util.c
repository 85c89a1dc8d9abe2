/* check_util: unit tests for util.c — allocation wrappers, xasprintf, strlcopy, printable, wipe,
 * util_mono_ns. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "util.h"

/* The reference vectors of the SipHash paper (appendix A) and its reference code's table:
 * key 00 01 .. 0f, messages 00 01 .. (len - 1). */
START_TEST(test_siphash24_vectors)
{
	static const struct {
		size_t len;
		uint64_t want;
	} v[] = {
		{0, 0x726fdb47dd0e0e31ULL},
		{1, 0x74f839c593dc67fdULL},
		{7, 0xab0200f58b01d137ULL},
		{8, 0x93f5f5799a932462ULL},
		{15, 0xa129ca6149be45e5ULL},
		{63, 0x958a324ceb064572ULL},
	};
	uint8_t key[16], msg[64];

	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	for (size_t i = 0; i < ARRAY_SIZE(v); i++)
		ck_assert_msg(util_siphash24(key, msg, v[i].len) == v[i].want,
			      "length %zu: %016llx, want %016llx", v[i].len,
			      (unsigned long long)util_siphash24(key, msg, v[i].len),
			      (unsigned long long)v[i].want);
	key[0] ^= 1; /* the key counts */
	ck_assert(util_siphash24(key, msg, 15) != 0xa129ca6149be45e5ULL);
}
END_TEST

/* util_errno_name() is ours (musl has no strerrorname_np()); where glibc has one, each name we
 * give is glibc's, and the errors our messages name are all known. */
START_TEST(test_errno_name)
{
	static const int named[] = {EPERM, EACCES, ENOENT, EBUSY, ENXIO, ENOSYS, EOVERFLOW,
				    EINVAL, ENOMEM, ENOTTY, EAGAIN, EADDRINUSE, ETIMEDOUT};
	int e;

	ck_assert_str_eq(util_errno_name(EPERM), "EPERM");
	ck_assert_str_eq(util_errno_name(EOVERFLOW), "EOVERFLOW");
	ck_assert_ptr_null(util_errno_name(0));
	ck_assert_ptr_null(util_errno_name(-1));
	ck_assert_ptr_null(util_errno_name(100000));
	for (e = 0; e < (int)(sizeof(named) / sizeof(named[0])); e++)
		ck_assert_msg(util_errno_name(named[e]) != NULL, "errno %d has no name", named[e]);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
	for (e = 1; e < 4096; e++)
		if (util_errno_name(e))
			ck_assert_str_eq(util_errno_name(e), strerrorname_np(e));
#endif
}
END_TEST

START_TEST(test_xasprintf_formats)
{
	char *s = xasprintf("%s-%d-%05.1f-%x", "abc", 42, 3.5, 255u);

	ck_assert_str_eq(s, "abc-42-003.5-ff");
	free(s);

	s = xasprintf("%s", "");
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_xasprintf_long)
{
	/* Longer than any fixed buffer an implementation might be tempted to use. */
	enum { N = 20000 };
	char *big = xmalloc(N + 1);
	char *s;

	memset(big, 'x', N);
	big[N] = '\0';
	s = xasprintf("[%s]%d", big, 7);
	ck_assert_uint_eq(strlen(s), N + 3);
	ck_assert_int_eq(s[0], '[');
	ck_assert_int_eq(s[N], 'x');
	ck_assert_str_eq(s + N + 1, "]7");
	free(s);
	free(big);
}
END_TEST

/* An interface may be named with terminal escapes: shown, every byte outside printable ASCII
 * is \xHH, and an escape is never cut in two by the buffer's end. */
START_TEST(test_printable)
{
	char dst[32], *dup;

	ck_assert(util_printable(dst, sizeof(dst), "x\x1b[7m\x07"));
	ck_assert_str_eq(dst, "x\\x1b[7m\\x07");
	ck_assert(util_printable(dst, sizeof(dst), "eth0 AT kbd~"));
	ck_assert_str_eq(dst, "eth0 AT kbd~");
	ck_assert(util_printable(dst, sizeof(dst), "\x7f\xc2\x9b\n"));
	ck_assert_str_eq(dst, "\\x7f\\xc2\\x9b\\x0a");
	ck_assert(!util_printable(dst, 6, "ab\x1b"));
	ck_assert_str_eq(dst, "ab");
	ck_assert(util_printable(dst, 7, "ab\x1b"));
	ck_assert_str_eq(dst, "ab\\x1b");
	dup = util_printable_dup("\x01\x02\x03");
	ck_assert_str_eq(dup, "\\x01\\x02\\x03");
	free(dup);
}
END_TEST

START_TEST(test_plural)
{
	char *s = xasprintf("%d %s, %d %s, %d %s", 0, util_plural(0, "batch", "batches"), 1,
			    util_plural(1, "batch", "batches"), 2, util_plural(2, "bit", "bits"));

	ck_assert_str_eq(s, "0 batches, 1 batch, 2 bits");
	ck_assert_str_eq(util_plural(1ULL << 32 | 1, "event", "events"), "events");
	free(s);
}
END_TEST

START_TEST(test_strlcopy_fits)
{
	char dst[8];

	memset(dst, '#', sizeof(dst));
	ck_assert(strlcopy(dst, "abc", sizeof(dst)));
	ck_assert_str_eq(dst, "abc");

	/* Exactly size-1 characters still fit. */
	memset(dst, '#', sizeof(dst));
	ck_assert(strlcopy(dst, "1234567", sizeof(dst)));
	ck_assert_str_eq(dst, "1234567");

	memset(dst, '#', sizeof(dst));
	ck_assert(strlcopy(dst, "", sizeof(dst)));
	ck_assert_str_eq(dst, "");
}
END_TEST

START_TEST(test_strlcopy_truncates)
{
	/* A guard after the destination catches a write past `size`. */
	char buf[8 + 4];

	memset(buf, '#', sizeof(buf));
	ck_assert(!strlcopy(buf, "12345678", 8));
	ck_assert_str_eq(buf, "1234567");
	for (size_t i = 8; i < sizeof(buf); i++)
		ck_assert_msg(buf[i] == '#', "byte %zu past the destination was written", i);

	memset(buf, '#', sizeof(buf));
	ck_assert(!strlcopy(buf, "a much longer string than fits", 5));
	ck_assert_str_eq(buf, "a mu");
	for (size_t i = 5; i < sizeof(buf); i++)
		ck_assert_msg(buf[i] == '#', "byte %zu past the destination was written", i);

	memset(buf, '#', sizeof(buf));
	ck_assert(!strlcopy(buf, "x", 1));
	ck_assert_str_eq(buf, "");
	ck_assert_int_eq(buf[1], '#');
}
END_TEST

START_TEST(test_strlcopy_size_zero)
{
	char buf[4];

	memset(buf, '#', sizeof(buf));
	ck_assert(!strlcopy(buf, "abc", 0));
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_msg(buf[i] == '#', "size 0 wrote byte %zu", i);
	/* Nothing to copy, nothing lost. */
	ck_assert(strlcopy(buf, "", 0));
	ck_assert_int_eq(buf[0], '#');
}
END_TEST

START_TEST(test_wipe_clears_exactly_the_range)
{
	unsigned char buf[64];

	memset(buf, 0xa5, sizeof(buf));
	util_wipe(buf + 8, 40);
	for (size_t i = 0; i < sizeof(buf); i++) {
		unsigned char want = (i >= 8 && i < 48) ? 0 : 0xa5;

		ck_assert_msg(buf[i] == want, "byte %zu is %#x, want %#x", i, buf[i], want);
	}
	util_wipe(buf, 0);
	ck_assert_uint_eq(buf[0], 0xa5);
}
END_TEST

START_TEST(test_wipe_heap)
{
	size_t n = 4096;
	unsigned char *p = xmalloc(n);

	memset(p, 0xff, n);
	util_wipe(p, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(p[i] == 0, "byte %zu not wiped", i);
	free(p);
}
END_TEST

static uint64_t clock_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The message arrives whole, with the descriptor (another one to the same file) or none. */
START_TEST(test_send_with_fd)
{
	char buf[8] = "message", got[16];
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = got, .iov_len = sizeof(got)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm;
	struct stat a, b;
	int sv[2], fd;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	ck_assert_int_eq(util_send_with_fd(sv[0], buf, sizeof(buf), STDERR_FILENO), sizeof(buf));
	ck_assert_int_eq(recvmsg(sv[1], &mh, 0), sizeof(buf));
	ck_assert_str_eq(got, "message");
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm)
		ck_abort_msg("no control message came with the descriptor");
	ck_assert_int_eq(cm->cmsg_type, SCM_RIGHTS);
	memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
	ck_assert_int_ne(fd, STDERR_FILENO);
	ck_assert_int_eq(fstat(fd, &a), 0);
	ck_assert_int_eq(fstat(STDERR_FILENO, &b), 0);
	ck_assert(a.st_dev == b.st_dev && a.st_ino == b.st_ino);
	close(fd);
	/* Without one, no ancillary data at all. */
	mh.msg_controllen = sizeof(cbuf);
	ck_assert_int_eq(util_send_with_fd(sv[0], buf, 3, -1), 3);
	ck_assert_int_eq(recvmsg(sv[1], &mh, 0), 3);
	ck_assert_uint_eq(mh.msg_controllen, 0);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

/* A uevent socket that joined group 1 without bind() hears the kernel's own: one made by
 * writing "change" to lo's uevent file (root only; says why it skips otherwise). */
START_TEST(test_netlink_listen_without_bind)
{
	int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT), u;
	char buf[4096];
	bool heard = false;
	struct pollfd pfd;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(util_netlink_listen(fd, 1), 0);
	u = open("/sys/class/net/lo/uevent", O_WRONLY | O_CLOEXEC);
	if (u < 0) {
		fprintf(stderr, "SKIP: no uevent to trigger (%s): needs root\n", strerror(errno));
		close(fd);
		return;
	}
	ck_assert_int_eq(write(u, "change", 6), 6);
	close(u);
	pfd = (struct pollfd){.fd = fd, .events = POLLIN};
	while (!heard && poll(&pfd, 1, 10000) == 1) {
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);

		ck_assert_int_gt(n, 0);
		buf[n] = 0;
		heard = strncmp(buf, "change@", 7) == 0 && strstr(buf, "/net/lo");
	}
	ck_assert_msg(heard, "the kernel's uevent for lo did not come");
	close(fd);
}
END_TEST

START_TEST(test_mono_ns_is_monotonic_clock)
{
	/* Bracketed by CLOCK_MONOTONIC read directly: same clock, same unit (ns). */
	uint64_t before = clock_mono();
	uint64_t t = util_mono_ns();
	uint64_t after = clock_mono();

	ck_assert_uint_le(before, t);
	ck_assert_uint_le(t, after);
}
END_TEST

START_TEST(test_mono_ns_never_goes_back)
{
	uint64_t prev = util_mono_ns();

	for (int i = 0; i < 100000; i++) {
		uint64_t now = util_mono_ns();

		ck_assert_msg(now >= prev, "util_mono_ns went back at call %d", i);
		prev = now;
	}
}
END_TEST

START_TEST(test_mono_ns_advances)
{
	struct timespec d = {.tv_sec = 0, .tv_nsec = 20 * 1000 * 1000};
	uint64_t a = util_mono_ns(), b;

	while (nanosleep(&d, &d) != 0)
		;
	b = util_mono_ns();
	/* A sleep of 20 ms cannot take less; an upper bound would be a timed test. */
	ck_assert_uint_ge(b - a, 20ULL * 1000 * 1000);
}
END_TEST

START_TEST(test_alloc_wrappers)
{
	unsigned char *z = xcalloc(100, 3);
	int *v = NULL;
	char *s;

	for (size_t i = 0; i < 300; i++)
		ck_assert_uint_eq(z[i], 0);
	free(z);

	/* Zero sizes still give a pointer that can be freed. */
	z = xmalloc(0);
	ck_assert_ptr_nonnull(z);
	free(z);
	z = xcalloc(0, 0);
	ck_assert_ptr_nonnull(z);
	free(z);

	for (int n = 1; n <= 1000; n *= 10) {
		v = xreallocarray(v, (size_t)n, sizeof(*v));
		v[n - 1] = n;
	}
	ck_assert_int_eq(v[999], 1000);
	ck_assert_int_eq(v[0], 1);
	free(v);

	s = xstrdup("entropy");
	ck_assert_str_eq(s, "entropy");
	free(s);
}
END_TEST

START_TEST(test_xreallocarray_overflow_aborts)
{
	/* nmemb * size overflows size_t: must not wrap to a small allocation. (Through a
	 * volatile, or the compiler, inlining across files, warns of the size it can see.) */
	volatile size_t nmemb = SIZE_MAX / 2 + 2;
	void *p = xreallocarray(NULL, nmemb, 2);

	free(p);
}
END_TEST

static Suite *util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_siphash24_vectors);
	tcase_add_test(tc, test_netlink_listen_without_bind);
	tcase_add_test(tc, test_errno_name);
	tcase_add_test(tc, test_xasprintf_formats);
	tcase_add_test(tc, test_xasprintf_long);
	tcase_add_test(tc, test_plural);
	tcase_add_test(tc, test_strlcopy_fits);
	tcase_add_test(tc, test_printable);
	tcase_add_test(tc, test_strlcopy_truncates);
	tcase_add_test(tc, test_strlcopy_size_zero);
	tcase_add_test(tc, test_wipe_clears_exactly_the_range);
	tcase_add_test(tc, test_wipe_heap);
	tcase_add_test(tc, test_mono_ns_is_monotonic_clock);
	tcase_add_test(tc, test_mono_ns_never_goes_back);
	tcase_add_test(tc, test_mono_ns_advances);
	tcase_add_test(tc, test_alloc_wrappers);
	tcase_add_test(tc, test_send_with_fd);
	suite_add_tcase(s, tc);

	/* Needs fork mode to observe the abort; left out under CK_FORK=no. */
	if (!getenv("CK_FORK") || strcmp(getenv("CK_FORK"), "no") != 0) {
		TCase *tf = tcase_create("fatal");

		tcase_add_test_raise_signal(tf, test_xreallocarray_overflow_aborts, SIGABRT);
		suite_add_tcase(s, tf);
	}
	return s;
}

int main(void)
{
	return tu_run_suite(util_suite());
}
