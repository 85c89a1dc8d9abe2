/* check_priv_notify: the service manager protocol (priv_notify.c) to a real datagram socket
 * named by NOTIFY_SOCKET, as systemd reads it: each message, word for word; in a collector,
 * through the privileged process (the real loop, in a child), which sends it on. Built
 * without libsystemd, nothing is sent, and the test says so. */
#include "autoconf.h"

#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "priv.h"
#include "priv_notify.h"
#include "testutil.h"
#include "util.h"

static char dir[64];
static int sink = -1;

static void setup(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	log_open(true, 0);
	tu_mkdtemp(dir, sizeof(dir), "%s/priv_notify.XXXXXX", tu_tmpdir());
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir);
	sink = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(sink, 0);
	ck_assert_int_eq(bind(sink, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setenv("NOTIFY_SOCKET", sa.sun_path, 1);
}

static void teardown(void)
{
	close(sink);
	unsetenv("NOTIFY_SOCKET");
	ck_assert_int_eq(tu_rm_tree(dir), 0);
}

/* The next message on the sink (waiting for it: it may come from another process). */
static char *next(void)
{
	static char buf[512];
	struct pollfd p = {.fd = sink, .events = POLLIN};
	ssize_t n;

	ck_assert_msg(poll(&p, 1, 10000) == 1, "no message within 10 s");
	n = recv(sink, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	return buf;
}

static bool built_with_systemd(const char *test)
{
#ifdef HAVE_LIBSYSTEMD
	(void)test;
	return true;
#else
	printf("%s: skipped: built without libsystemd, nothing is sent\n", test);
	return false;
#endif
}

static void check_each(void)
{
	char *m;

	priv_notify_ready();
	ck_assert_str_eq(next(), "READY=1");
	priv_notify_status("%d sources, %s", 3, "credit 12 bits/s");
	ck_assert_str_eq(next(), "STATUS=3 sources, credit 12 bits/s");
	priv_notify_reloading();
	m = next();
	ck_assert_msg(strncmp(m, "RELOADING=1\nMONOTONIC_USEC=", 27) == 0 && m[27] >= '1' &&
			      m[27] <= '9',
		      "%s", m);
	priv_notify_watchdog();
	ck_assert_str_eq(next(), "WATCHDOG=1");
	priv_notify_stopping();
	ck_assert_str_eq(next(), "STOPPING=1");
}

START_TEST(test_direct)
{
	if (!built_with_systemd("test_direct"))
		return;
	ck_assert(!priv_active());
	check_each();
}
END_TEST

/* In the collector every message goes through the privileged process, whose STATUS text is
 * printable ASCII only (what is not arrives as \xHH). */
START_TEST(test_through_privileged)
{
	int pid;

	if (!built_with_systemd("test_through_privileged"))
		return;
	pid = tu_privileged_start(config_defaults(), -1);
	check_each();
	priv_notify_status("a\nb");
	ck_assert_str_eq(next(), "STATUS=a\\x0ab");
	tu_privileged_end(pid);
}
END_TEST

/* The watchdog's interval, asked once, from what the manager set. */
START_TEST(test_watchdog_usec)
{
	char pid[32];

	if (!built_with_systemd("test_watchdog_usec"))
		return;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("WATCHDOG_USEC", "3000000", 1);
	setenv("WATCHDOG_PID", pid, 1);
	ck_assert_uint_eq(priv_notify_watchdog_usec(), 3000000);
	setenv("WATCHDOG_USEC", "5", 1); /* asked once: the answer stays */
	ck_assert_uint_eq(priv_notify_watchdog_usec(), 3000000);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("priv_notify");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_direct);
	tcase_add_test(tc, test_through_privileged);
	tcase_add_test(tc, test_watchdog_usec);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
