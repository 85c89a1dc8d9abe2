/* check_priv: the collector's side of the protocol (priv.c). Without a privileged process
 * each call makes the step itself; with one (the real loop, priv_serve, in a child on a
 * socketpair) each call is a request whose answer comes back: the bits credited within the
 * ceiling, a descriptor, EACCES remembered as a refusal, errors in words. A privileged
 * process that is gone or breaks the protocol ends the collector with EXIT_LOST. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "priv.h"
#include "testutil.h"
#include "util.h"

#define NO_CONFIG "/nonexistent/entropyd.conf"

static char dir[64];

static void setup(void)
{
	log_open(true, 0);
	tu_mkdtemp(dir, sizeof(dir), "%s/priv.XXXXXX", tu_tmpdir());
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rm_tree(dir), 0);
}

/* ---- without a privileged process ---- */

START_TEST(test_local)
{
	uint8_t data[16] = {0};
	char path[128];
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC), credited = -1, fd;

	ck_assert(!priv_active());
	ck_assert(!priv_refused());
	ck_assert_int_eq(priv_main_pid(), getpid());
	/* What no step could do is refused before any. */
	ck_assert_int_eq(priv_add_entropy(null, data, sizeof(data), 8 * 16 + 1, &credited), -1);
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(credited, 0);
	ck_assert_int_eq(priv_add_entropy(null, data, PRIV_ENTROPY_BYTES + 1, 0, &credited), -1);
	ck_assert_int_eq(errno, EINVAL);
	/* The step itself: /dev/null is no random device. */
	ck_assert_int_eq(priv_add_entropy(null, data, sizeof(data), 0, &credited), -1);
	ck_assert_int_eq(errno, ENOTTY);
	ck_assert_int_eq(priv_reseed(null), -1);
	ck_assert_int_eq(errno, ENOTTY);
	ck_assert_int_eq(priv_reload(), 0); /* nothing to tell */
	/* A relay file under the debugfs given. */
	snprintf(path, sizeof(path), "%s/block", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/block/loop3", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/block/loop3/trace1", dir);
	close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	fd = priv_relay_open(dir, "loop3", 1);
	ck_assert_int_ge(fd, 0);
	close(fd);
	close(null);
}
END_TEST

/* ---- with the privileged process ---- */

static int privileged;

/* The real loop in a child, with input allowed at 64 bits/s an instance over one FIFO of the
 * test's watched directory, and /dev/random; this process its collector. */
static void start_privileged(void)
{
	struct config *cfg = config_defaults();
	char path[128];

	for (int c = 0; c < CLASS_COUNT; c++)
		cfg->policy[c].rule.mode = MODE_DISABLED;
	cfg->policy[CLASS_INPUT].rule.mode = MODE_TRUSTED;
	cfg->policy[CLASS_INPUT].rule.cap_bits_per_second = 64;
	cfg->feed.boot_allowance = false;
	free(cfg->input.watch);
	cfg->input.watch = xstrdup(dir);
	snprintf(path, sizeof(path), "%s/event0", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	privileged = tu_privileged_start(cfg, open("/dev/random", O_WRONLY | O_CLOEXEC));
}

/* Credit goes through the ceiling: one second of 64 bits/s for the one input node, at once. */
START_TEST(test_credit)
{
	uint8_t data[PRIV_ENTROPY_BYTES];
	int credited = -1, rc;

	start_privileged();
	ck_assert(priv_active());
	ck_assert_int_eq(priv_main_pid(), privileged);
	ck_assert_int_eq(getrandom(data, sizeof(data), 0), (ssize_t)sizeof(data));
	rc = priv_add_entropy(-1, data, sizeof(data), 8 * PRIV_ENTROPY_BYTES, &credited);
	if (tu_have_sys_admin()) {
		ck_assert_int_eq(rc, 0);
		ck_assert_int_ge(credited, 64);
		ck_assert_int_lt(credited, 8 * PRIV_ENTROPY_BYTES);
		ck_assert_int_eq(priv_reseed(-1), 0);
	} else {
		printf("test_credit: without CAP_SYS_ADMIN: EPERM is checked\n");
		ck_assert_int_eq(rc, -1);
		ck_assert_int_eq(errno, EPERM);
		ck_assert_int_eq(credited, 0);
	}
	ck_assert(!priv_refused());
	tu_privileged_end(privileged);
}
END_TEST

/* A request the configuration does not allow is refused (EACCES, remembered); a name too long
 * for the message is refused before it is sent; other errors come back as they are. */
START_TEST(test_refused)
{
	char err[128] = "";
	char name[PRIV_INPUT_NAME + 8];

	start_privileged();
	ck_assert_int_eq(priv_perf_open(0, PRIV_PERF_OWNER, 0), -1);
	ck_assert_int_eq(errno, EACCES);
	ck_assert(priv_refused());
	memset(name, 'e', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, "event", 5);
	ck_assert_int_eq(priv_input_open(dir, name), -1);
	ck_assert_int_eq(errno, ENAMETOOLONG);
	ck_assert_int_eq(priv_packet_filter(-1, 1, DIR_IN, "", UINT32_MAX, err, sizeof(err)),
			 -1);
	ck_assert_int_eq(errno, ENOENT); /* no packet socket handed out for it */
	ck_assert_str_eq(err, strerror(ENOENT));
	ck_assert(!priv_refused());
	ck_assert_int_eq(priv_reload(), -1); /* its configuration is not there */
	ck_assert_int_eq(errno, EPERM);
	priv_service_notify(PRIV_N_STATUS, "text\nwith a line break, made printable");
	tu_privileged_end(privileged);
}
END_TEST

/* An input node comes back as a descriptor of this process (as root: a FIFO root owns). */
START_TEST(test_descriptor)
{
	int fd;

	start_privileged();
	fd = priv_input_open(dir, "event0");
	if (geteuid() == 0) {
		ck_assert_msg(fd >= 0, "%s", strerror(errno));
		ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		close(fd);
	} else {
		printf("test_descriptor: not root: the FIFO is not root's, EACCES is checked\n");
		ck_assert_int_eq(fd, -1);
		ck_assert_int_eq(errno, EACCES);
	}
	tu_privileged_end(privileged);
}
END_TEST

/* The privileged process is gone: the next request ends the collector (EXIT_LOST). */
START_TEST(test_gone)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	close(sv[0]);
	priv_connect(sv[1], getppid());
	(void)priv_reseed(-1);
}
END_TEST

/* A reply that is not one (the wrong type) ends the collector (EXIT_LOST). */
START_TEST(test_broken)
{
	struct priv_reply rep;
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	memset(&rep, 0, sizeof(rep));
	rep.h.version = PRIV_VERSION;
	rep.h.type = PRIV_RELOAD;
	rep.h.size = sizeof(rep);
	ck_assert_int_eq(send(sv[0], &rep, sizeof(rep), 0), (ssize_t)sizeof(rep));
	priv_connect(sv[1], getppid());
	(void)priv_reseed(-1); /* answered as if RELOAD */
}
END_TEST

/* The lockdown's last look: a privileged process whose end is closed is gone. */
START_TEST(test_check_peer)
{
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	priv_connect(sv[1], getppid());
	priv_check_peer(); /* there: returns */
	close(sv[0]);
	priv_check_peer();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("priv");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_local);
	tcase_add_test(tc, test_credit);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_descriptor);
	tcase_add_exit_test(tc, test_gone, EXIT_LOST);
	tcase_add_exit_test(tc, test_broken, EXIT_LOST);
	tcase_add_exit_test(tc, test_check_peer, EXIT_LOST);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
