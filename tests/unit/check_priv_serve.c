/* check_priv_serve: the privileged process's loop (priv_serve.c) over a real socketpair: the
 * end of the collector, what breaks the protocol before any message is read (ancillary data,
 * a message longer than any request), a collector that stops reading its replies, and the
 * signals passed on to a collector and its exit status handed back (or its kill, when it
 * ignores a stop). The answers to each message are check_priv_dispatch's. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "priv_serve.h"
#include "priv_wire.h"
#include "testutil.h"
#include "util.h"

#define NO_CONFIG "/nonexistent/entropyd.conf"

static struct config *nothing_allowed(void)
{
	struct config *cfg = config_defaults();

	for (int c = 0; c < CLASS_COUNT; c++)
		cfg->policy[c].rule.mode = MODE_DISABLED;
	return cfg;
}

static void pair(int sv[2])
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static struct req_notify watchdog(void)
{
	struct req_notify r;

	memset(&r, 0, sizeof(r));
	r.h.version = PRIV_VERSION;
	r.h.type = PRIV_NOTIFY;
	r.h.size = sizeof(r);
	r.what = PRIV_N_WATCHDOG;
	return r;
}

/* The loop on sv[0] after the messages already sent on sv[1] and its end: status and log. */
static int serve(int sv[2], char **log)
{
	int status;

	shutdown(sv[1], SHUT_WR);
	tu_capture_begin();
	status = priv_serve(sv[0], nothing_allowed(), NO_CONFIG, -1, 0);
	*log = tu_capture_end();
	return status;
}

/* The collector ends: the loop ends too, without a word of a broken protocol. */
START_TEST(test_end)
{
	struct req_notify r = watchdog();
	struct priv_reply rep;
	int sv[2];
	char *log;

	pair(sv);
	ck_assert_int_eq(send(sv[1], &r, sizeof(r), 0), (ssize_t)sizeof(r));
	ck_assert_int_eq(serve(sv, &log), EXIT_OK);
	ck_assert_msg(!strstr(log, "closing the connection"), "%s", log);
	ck_assert_int_eq(recv(sv[1], &rep, sizeof(rep), MSG_DONTWAIT), (ssize_t)sizeof(rep));
	ck_assert_int_eq(rep.err, 0);
	ck_assert_int_eq(recv(sv[1], &rep, sizeof(rep), MSG_DONTWAIT), 0); /* closed */
	free(log);
	close(sv[1]);
}
END_TEST

/* Descriptors go one way only: a message that carries one closes the connection, unanswered. */
START_TEST(test_ancillary)
{
	struct req_notify r = watchdog();
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = {.iov_base = &r, .iov_len = sizeof(r)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	struct priv_reply rep;
	int sv[2], fd = 0;
	char *log;

	pair(sv);
	memset(cbuf, 0, sizeof(cbuf));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
	ck_assert_int_eq(sendmsg(sv[1], &mh, 0), (ssize_t)sizeof(r));
	ck_assert_int_eq(serve(sv, &log), EXIT_LOST);
	ck_assert_ptr_nonnull(strstr(log, "privileged process: the collector sent a message with "
					  "ancillary data: closing the connection"));
	ck_assert_int_eq(recv(sv[1], &rep, sizeof(rep), MSG_DONTWAIT), 0);
	free(log);
	close(sv[1]);
}
END_TEST

START_TEST(test_too_long)
{
	char big[sizeof(union priv_req) + 1];
	struct req_notify r = watchdog();
	int sv[2];
	char *log;

	pair(sv);
	memset(big, 0, sizeof(big));
	memcpy(big, &r, sizeof(r));
	ck_assert_int_eq(send(sv[1], big, sizeof(big), 0), (ssize_t)sizeof(big));
	ck_assert_int_eq(serve(sv, &log), EXIT_LOST);
	ck_assert_ptr_nonnull(strstr(log, "the collector sent a message longer than any request"));
	free(log);
	close(sv[1]);
}
END_TEST

/* A collector that sends and never reads: once its queue of replies is full, the loop closes
 * the connection rather than wait on it. */
START_TEST(test_unread_replies)
{
	struct req_notify r = watchdog();
	int sv[2], ws, sent = 0;
	pid_t pid;
	char *log;

	pair(sv);
	tu_capture_begin();
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sv[1]);
		_exit(priv_serve(sv[0], nothing_allowed(), NO_CONFIG, -1, 0));
	}
	close(sv[0]);
	/* Blocking sends: each waits for room, until the loop has closed its end. */
	while (send(sv[1], &r, sizeof(r), MSG_NOSIGNAL) == (ssize_t)sizeof(r) && sent < 100000)
		sent++;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	log = tu_capture_end();
	ck_assert(WIFEXITED(ws));
	ck_assert_int_eq(WEXITSTATUS(ws), EXIT_LOST);
	ck_assert_ptr_nonnull(strstr(log, "the collector does not read its replies (its queue is "
					  "full): closing the connection"));
	ck_assert_int_lt(sent, 100000);
	free(log);
	close(sv[1]);
}
END_TEST

/* A collector (a child here) that ends with status 7 on SIGHUP, or ignores SIGTERM. */
static pid_t collector(int sock, bool ignore_term)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGHUP);
		sigaddset(&set, SIGTERM);
		for (;;) {
			if (sigwait(&set, &sig) != 0)
				_exit(1);
			if (sig == SIGHUP)
				_exit(7);
			if (!ignore_term)
				_exit(8);
		}
	}
	close(sock);
	return pid;
}

static void block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	ck_assert_int_eq(sigprocmask(SIG_BLOCK, &set, NULL), 0);
}

/* A signal to the privileged process goes on to the collector; the collector's status is the
 * loop's. */
START_TEST(test_signal_passed)
{
	int sv[2], status;
	pid_t pid;
	char *log;

	block_signals(); /* as priv_start does before the fork */
	pair(sv);
	pid = collector(sv[1], false);
	ck_assert_int_eq(kill(getpid(), SIGHUP), 0); /* pending: the loop reads it */
	tu_capture_begin();
	status = priv_serve(sv[0], nothing_allowed(), NO_CONFIG, -1, pid);
	log = tu_capture_end();
	ck_assert_msg(status == 7, "status %d, log: %s", status, log);
	ck_assert_int_eq(kill(pid, 0), -1); /* reaped */
	free(log);
}
END_TEST

/* A collector that ignores the signal to stop is killed once its grace is over. */
START_TEST(test_stop_grace)
{
	int sv[2], status;
	pid_t pid;
	char *log;

	block_signals();
	pair(sv);
	pid = collector(sv[1], true);
	ck_assert_int_eq(kill(getpid(), SIGTERM), 0);
	tu_capture_begin();
	status = priv_serve(sv[0], nothing_allowed(), NO_CONFIG, -1, pid);
	log = tu_capture_end();
	ck_assert_int_eq(status, EXIT_LOST);
	ck_assert_ptr_nonnull(strstr(log, "the collector did not end within"));
	ck_assert_ptr_nonnull(strstr(log, "of the signal to stop"));
	ck_assert_int_eq(kill(pid, 0), -1);
	free(log);
}
END_TEST

static void setup(void)
{
	log_open(true, 0);
}

static Suite *suite(void)
{
	Suite *s = suite_create("priv_serve");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	/* The stop's grace is 30 s under the sanitizers and valgrind. */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_end);
	tcase_add_test(tc, test_ancillary);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_unread_replies);
	tcase_add_test(tc, test_signal_passed);
	tcase_add_test(tc, test_stop_grace);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
