/* unitleave: a Check suite whose every test fails in a way that skips its own cleanup, each
 * after making files where tu_tmpdir() says: a failed assertion (Check ends the test's process
 * at once), a test killed past its timeout, a child left running in the test's process group,
 * a directory with no write permission, files of another user. Run by t_unitlist.sh with a
 * TMPDIR of its own: tu_run_suite() must leave nothing in it, and exit with failure. */
#include "autoconf.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "util.h"

/* A directory of the test's and a file in it; the directory's path (malloc'd). */
static char *make_some(const char *name)
{
	char dir[256], *file;
	int fd;

	tu_mkdtemp(dir, sizeof(dir), "%s/%s.XXXXXX", tu_tmpdir(), name);
	file = xasprintf("%s/data", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "x", 1), 1);
	close(fd);
	free(file);
	return xstrdup(dir);
}

/* Waits for a signal: the test's end comes from outside. */
static void hang(void)
{
	for (;;)
		pause();
}

START_TEST(test_fails)
{
	free(make_some("fails"));
	ck_abort_msg("failed on purpose, its files made");
}
END_TEST

START_TEST(test_times_out)
{
	free(make_some("timeout"));
	hang();
}
END_TEST

START_TEST(test_child_left)
{
	int p[2];
	char c;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		free(make_some("child"));
		(void)!write(p[1], "k", 1);
		hang();
	}
	ck_assert_int_eq(read(p[0], &c, 1), 1); /* its files are made */
	ck_abort_msg("failed on purpose, a child left running");
}
END_TEST

START_TEST(test_read_only)
{
	char *dir = make_some("readonly");

	ck_assert_int_eq(chmod(dir, 0500), 0);
	free(dir);
	ck_abort_msg("failed on purpose, a directory left read-only");
}
END_TEST

START_TEST(test_other_user)
{
	if (geteuid() == 0 && (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0))
		ck_abort_msg("cannot become nobody");
	free(make_some("nobody"));
	ck_abort_msg("failed on purpose, files of another user made");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("unitleave");
	TCase *tc = tcase_create("leave"), *slow = tcase_create("timeout");

	/* Only the test that must time out has the short limit: a test that must fail, slowed
	 * past it on a busy machine, would end as an error instead. */
	tcase_add_test(tc, test_fails);
	tcase_add_test(tc, test_child_left);
	tcase_add_test(tc, test_read_only);
	tcase_add_test(tc, test_other_user);
	tcase_set_timeout(slow, 1);
	tcase_add_test(slow, test_times_out);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, slow);
	return tu_run_suite(s);
}
