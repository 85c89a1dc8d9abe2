/* check_priv_start: the fork into the two processes (priv_start.c): the child is the
 * collector, its requests answered by the parent, which was this process; the parent returns
 * once the collector has ended, with its exit status; each keeps only its own descriptors. The
 * collector's lockdown (its user, seccomp, Landlock, namespaces) needs a system user and is
 * proved against the running daemon: tests/integration/t_privsep.sh. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "priv.h"
#include "priv_start.h"
#include "testutil.h"
#include "util.h"

static struct config *nothing_allowed(void)
{
	struct config *cfg = config_defaults();

	for (int c = 0; c < CLASS_COUNT; c++)
		cfg->policy[c].rule.mode = MODE_DISABLED;
	cfg->feed.boot_allowance = false;
	return cfg;
}

/* The collector exits with its own status; the privileged process hands it back. */
START_TEST(test_fork)
{
	pid_t parent = getpid();
	int status = -1, r;
	char *log;

	tu_capture_begin();
	r = priv_start(nothing_allowed(), "/nonexistent/entropyd.conf", -1, -1, &status);
	if (r == 0) { /* the collector: its requests go to the parent */
		int e = 0;

		if (!priv_active() || priv_main_pid() != parent)
			_exit(20);
		if (priv_reload() == 0 || (e = errno) != EPERM) /* the parent read no file */
			_exit(21);
		if (priv_perf_open(0, PRIV_PERF_OWNER, 0) >= 0 || errno != EACCES ||
		    !priv_refused())
			_exit(22);
		priv_close();
		_exit(5);
	}
	log = tu_capture_end();
	ck_assert_msg(r == 1, "priv_start: %d; %s", r, log);
	ck_assert_msg(status == 5, "the collector's status: %d (20-22: a check failed in it); %s",
		      status, log);
	ck_assert_ptr_nonnull(strstr(log, "privileged process"));
	free(log);
}
END_TEST

/* The collector does not keep /dev/random, and gets the signals the parent blocks for its
 * loop; the parent does not keep the start-up status pipe, which is the collector's. */
START_TEST(test_descriptors_and_signals)
{
	int rnd = open("/dev/null", O_WRONLY | O_CLOEXEC), ready[2], status = -1, r;
	char *log;

	ck_assert_int_ge(rnd, 0);
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	tu_capture_begin();
	r = priv_start(nothing_allowed(), "/nonexistent/entropyd.conf", rnd, ready[1], &status);
	if (r == 0) {
		sigset_t now;

		if (fcntl(rnd, F_GETFD) >= 0 || errno != EBADF)
			_exit(30);
		if (fcntl(ready[1], F_GETFD) < 0)
			_exit(31);
		if (sigprocmask(SIG_SETMASK, NULL, &now) < 0 || sigismember(&now, SIGHUP) ||
		    sigismember(&now, SIGTERM))
			_exit(32);
		_exit(6);
	}
	log = tu_capture_end();
	ck_assert_int_eq(r, 1);
	ck_assert_msg(status == 6, "the collector's status: %d (30-32: a check failed in it); %s",
		      status, log);
	ck_assert_int_eq(fcntl(ready[1], F_GETFD), -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_ge(fcntl(rnd, F_GETFD), 0); /* the privileged process's own */
	close(rnd);
	close(ready[0]);
	free(log);
}
END_TEST

static void setup(void)
{
	log_open(true, 1);
}

static Suite *suite(void)
{
	Suite *s = suite_create("priv_start");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_fork);
	tcase_add_test(tc, test_descriptors_and_signals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
