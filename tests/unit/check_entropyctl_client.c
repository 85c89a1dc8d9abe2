/* check_entropyctl_client: what entropyctl's commands share, without a daemon — a call
 * answered by a stand-in on a socket made here (a forked child that reads one request and
 * sends a fixed answer): its parameters, each error reply's exit status and message, a
 * connection closed unanswered, a reply that is not JSON; the exit status for no socket and
 * for a path that is not one; and the short texts of status (durations, health, why not).
 * Against the real daemon: t_ctl.sh, t_check.sh, t_watch.sh. */
#include "autoconf.h"

#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "entropyctl_client.h"
#include "testutil.h"
#include "util.h"

static char dir[160], sock[200];
static char said[512]; /* what entropyctl would have said on stderr */

static void setup(void)
{
	snprintf(dir, sizeof(dir), "%s/client.XXXXXX", tu_tmpdir());
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/io.entropyd", dir);
	said[0] = '\0';
	entropyctl_client_errx_into(said, sizeof(said));
}

static void teardown(void)
{
	entropyctl_client_errx_into(NULL, 0);
	unlink(sock);
	rmdir(dir);
}

/* A stand-in daemon: listens at sock (before it forks, so the client never races it),
 * accepts one connection, reads one request up to its NUL and answers with reply (its
 * bytes as given, a NUL after unless raw), or closes unanswered if reply is NULL. */
static pid_t stand_in(const char *reply, bool raw)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pid_t pid;

	ck_assert_int_ge(l, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int c = accept(l, NULL, NULL);
		char ch;

		if (c < 0)
			_exit(2);
		while (read(c, &ch, 1) == 1 && ch != '\0')
			;
		if (reply) {
			size_t n = strlen(reply) + (raw ? 0 : 1);

			if (write(c, reply, n) != (ssize_t)n)
				_exit(3);
		}
		close(c);
		_exit(0);
	}
	close(l);
	return pid;
}

static void stand_in_done(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the stand-in failed: %d", st);
}

/* One fetch of method from a stand-in that answers reply: the exit status, *out. */
static int fetch_from(const char *reply, bool raw, json_t **out, struct conn *c)
{
	pid_t pid = stand_in(reply, raw);
	int rc = entropyctl_client_open(c, sock, 10);

	ck_assert_int_eq(rc, XC_OK);
	rc = entropyctl_client_fetch(c, "io.entropyd.GetStatus", out);
	stand_in_done(pid);
	return rc;
}

START_TEST(test_fetch_answered)
{
	struct conn c;
	json_t *out = NULL;

	ck_assert_int_eq(fetch_from("{\"parameters\":{\"daemon\":{\"version\":\"9\"}}}", false, &out,
				    &c),
			 XC_OK);
	ck_assert_str_eq(s_(json_object_get(out, "daemon"), "version"), "9");
	ck_assert_str_eq(said, "");
	json_decref(out);
	entropyctl_client_close(&c);
}
END_TEST

/* Each error reply: its exit status, and a message that names the method or the error. */
static const struct {
	const char *reply;
	int rc;
	const char *says;
} errors[] = {
	{"{\"error\":\"org.varlink.service.PermissionDenied\"}", XC_DENIED,
	 "permission denied: io.entropyd.GetStatus needs root"},
	{"{\"error\":\"io.entropyd.TooManyClients\",\"parameters\":{\"limit\":64}}", XC_PROTOCOL,
	 "entropyd serves too many clients at once; try again"},
	{"{\"error\":\"org.varlink.service.MethodNotFound\",\"parameters\":{\"method\":"
	 "\"io.entropyd.GetStatus\"}}",
	 XC_PROTOCOL, "this entropyd does not know io.entropyd.GetStatus (an older version?)"},
	{"{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":"
	 "\"x\"}}",
	 XC_PROTOCOL,
	 "io.entropyd.GetStatus failed: org.varlink.service.InvalidParameter: x"},
	{"{\"error\":\"io.entropyd.InvalidRequest\",\"parameters\":{\"reason\":\"not JSON\"}}",
	 XC_PROTOCOL, "io.entropyd.GetStatus failed: io.entropyd.InvalidRequest: not JSON"},
};

START_TEST(test_fetch_error)
{
	struct conn c;
	json_t *out = NULL;

	ck_assert_int_eq(fetch_from(errors[_i].reply, false, &out, &c), errors[_i].rc);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(said, errors[_i].says), "said \"%s\", not \"%s\"", said,
		      errors[_i].says);
	entropyctl_client_close(&c);
}
END_TEST

/* Closed without a reply (a daemon stopping): a failed call, said so, and what "check" and
 * "watch" take for a daemon that is not there. */
START_TEST(test_closed_unanswered)
{
	struct conn c;
	json_t *out = NULL;
	int rc = fetch_from(NULL, false, &out, &c);

	ck_assert_int_eq(rc, XC_PROTOCOL);
	ck_assert(c.closed);
	ck_assert(entropyctl_client_absent(&c, rc));
	ck_assert_ptr_null(out);
	ck_assert_str_ne(said, "");
	entropyctl_client_close(&c);
}
END_TEST

/* A reply that makes no sense: a protocol error, not a crash. */
START_TEST(test_reply_not_json)
{
	struct conn c;
	json_t *out = NULL;
	int rc = fetch_from("{\"parameters\":", false, &out, &c);

	ck_assert_int_eq(rc, XC_PROTOCOL);
	ck_assert(!entropyctl_client_absent(&c, rc));
	ck_assert_ptr_null(out);
	ck_assert_str_ne(said, "");
	entropyctl_client_close(&c);
}
END_TEST

START_TEST(test_no_socket)
{
	struct conn c;
	int rc = entropyctl_client_open(&c, sock, 1);
	FILE *f;

	ck_assert_int_eq(rc, XC_NOT_RUNNING);
	ck_assert(entropyctl_client_absent(&c, rc));
	ck_assert_ptr_nonnull(strstr(said, sock));
	entropyctl_client_close(&c);
	/* A path that is not a socket: another reason, and not "not running". */
	f = fopen(sock, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	said[0] = '\0';
	rc = entropyctl_client_open(&c, sock, 1);
	ck_assert_int_ne(rc, XC_OK);
	ck_assert(!entropyctl_client_absent(&c, rc));
	ck_assert_ptr_nonnull(strstr(said, sock));
	entropyctl_client_close(&c);
}
END_TEST

START_TEST(test_duration)
{
	static const struct {
		long long s;
		const char *text;
	} t[] = {
		{0, "0s"},          {59, "59s"},           {60, "1m 00s"},
		{3599, "59m 59s"},  {3600, "1h 00m 00s"},  {86399, "23h 59m 59s"},
		{86400, "1d 00h 00m"}, {90061, "1d 01h 01m"}, {864000 + 3720, "10d 01h 02m"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		entropyctl_client_print_duration(f, t[i].s);
		fclose(f);
		ck_assert_str_eq(buf, t[i].text);
		free(buf);
	}
}
END_TEST

START_TEST(test_health_and_why)
{
	json_t *ok = json_pack("{s:{s:s, s:s}, s:{s:n}}", "health", "state", "ok", "last_failure",
			       "none", "credit", "reason");
	json_t *failed = json_pack("{s:{s:s, s:s}, s:{s:s}}", "health", "state",
				   "failed-permanent", "last_failure", "repetition count", "credit",
				   "reason", "health");
	json_t *older = json_object(); /* a daemon that says neither */
	char buf[64];

	entropyctl_client_health_text(ok, buf, sizeof(buf));
	ck_assert_str_eq(buf, "ok");
	ck_assert_str_eq(entropyctl_client_why_not(ok), "-");
	entropyctl_client_health_text(failed, buf, sizeof(buf));
	ck_assert_str_eq(buf, "failed-permanent (repetition count)");
	ck_assert_str_eq(entropyctl_client_why_not(failed), "health");
	entropyctl_client_health_text(failed, buf, 10); /* cut to the buffer */
	ck_assert_str_eq(buf, "failed-pe");
	ck_assert_str_eq(entropyctl_client_why_not(older), "-");
	/* Whatever the other end sends, no control byte is printed. */
	json_t *hostile = json_pack("{s:{s:s}}", "credit", "reason", "gone\033[2J\r");

	ck_assert_str_eq(entropyctl_client_why_not(hostile), "gone\\x1b[2J\\x0d");
	json_decref(hostile);
	json_decref(ok);
	json_decref(failed);
	json_decref(older);
}
END_TEST

static Suite *entropyctl_client_suite(void)
{
	Suite *s = suite_create("entropyctl_client");
	TCase *tc = tcase_create("calls");
	TCase *tt = tcase_create("texts");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fetch_answered);
	tcase_add_loop_test(tc, test_fetch_error, 0, (int)ARRAY_SIZE(errors));
	tcase_add_test(tc, test_closed_unanswered);
	tcase_add_test(tc, test_reply_not_json);
	tcase_add_test(tc, test_no_socket);
	suite_add_tcase(s, tc);
	tcase_add_test(tt, test_duration);
	tcase_add_test(tt, test_health_and_why);
	suite_add_tcase(s, tt);
	return s;
}

int main(void)
{
	return tu_run_suite(entropyctl_client_suite());
}
