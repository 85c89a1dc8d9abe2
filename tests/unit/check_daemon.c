/* check_daemon: the running daemon (daemon.c), called as entropyd calls it, in a process of
 * its own: it starts both processes and says so on the ready descriptor, attaches an input
 * node, answers SIGUSR1 with its counts, rejects a broken configuration on SIGHUP and keeps
 * running, takes a good one, and on SIGTERM both processes end with status 0. And the
 * start-ups it refuses, with the status and the reason. The collector runs as its own user,
 * so the full start needs root and that user; t_*.sh run the same through the program. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "daemon.h"
#include "log.h"
#include "testutil.h"
#include "util.h"

static char dir[1024];
static char *conf_path, *log_path;

/* A directory of the test's own, readable by the collector's user (it reads the
 * configuration and watches the input directory). */
static void setup(void)
{
	tu_mkdtemp(dir, sizeof(dir), "%s/daemon.XXXXXX", tu_tmpdir());
	ck_assert_int_eq(chmod(dir, 0755), 0);
	conf_path = xasprintf("%s/entropyd.conf", dir);
	log_path = xasprintf("%s/log", dir);
}

static void teardown(void)
{
	free(conf_path);
	free(log_path);
}

static void write_conf(const char *extra)
{
	FILE *f = fopen(conf_path, "we");

	ck_assert_ptr_nonnull(f);
	fprintf(f,
		"sources = { input = { watch = \"%s/input\"; }; };\n"
		"policy = { block = { mode = \"disabled\"; }; network = { mode = \"disabled\"; }; };\n"
		"control = { socket = \"%s/run/io.entropyd\"; };\n%s\n",
		dir, dir, extra);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(conf_path, 0644), 0);
}

/* The daemon in a child of its own, its log (both processes') in log_path; the status byte
 * it reports on *ready. */
static pid_t start(bool dry_run, int *ready)
{
	int fds[2];
	pid_t pid;

	ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char *boot = xasprintf("%s/boot-record", dir);
		struct daemon_opts o = {.config_path = conf_path, .foreground = true,
					.dry_run = dry_run, .ready_fd = fds[1],
					.boot_record = boot};
		struct config_errors errs = {0};
		struct config *cfg;
		int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		close(fds[0]);
		/* A test that fails ends at once: the daemon goes with it (the collector goes
		 * with the daemon). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() == 1)
			_exit(97);
		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(99);
		log_open(true, 1);
		cfg = config_load(conf_path, &errs);
		if (!cfg) {
			fprintf(stderr, "test: %s\n", errs.n ? errs.msg[0] : "?");
			_exit(98);
		}
		_exit(daemon_run(&o, cfg));
	}
	close(fds[1]);
	*ready = fds[0];
	return pid;
}

static char *log_text(void)
{
	return tu_read_file(log_path, NULL);
}

/* Until the log holds text (10 s at most: both processes start, on a busy machine). */
static void wait_log(const char *text)
{
	for (int i = 0; i < 1000; i++) {
		char *t = access(log_path, F_OK) == 0 ? log_text() : xstrdup("");
		bool there = strstr(t, text) != NULL;

		free(t);
		if (there)
			return;
		usleep(10000);
	}
	ck_abort_msg("no \"%s\" in the log within 10 s:\n%s", text, log_text());
}

static int ready_status(int fd)
{
	unsigned char b = 0xff;

	ck_assert_int_eq(read(fd, &b, 1), 1);
	close(fd);
	return b;
}

/* The collector, as the privileged process names it in the log. */
static pid_t collector_of(pid_t pid)
{
	char *t = log_text(), *want = xasprintf("privileged process %d: the collector is process ",
						 (int)pid);
	const char *p = strstr(t, want);
	long c = p ? strtol(p + strlen(want), NULL, 10) : 0;

	ck_assert_msg(c > 0, "no \"%s\" in the log:\n%s", want, t);
	free(want);
	free(t);
	return (pid_t)c;
}

static bool gone(pid_t pid)
{
	char *path = xasprintf("/proc/%d/stat", (int)pid), line[512] = "", *p;
	FILE *f = fopen(path, "re");
	bool dead = true;

	if (f && fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		dead = p[2] == 'Z' || p[2] == 'X';
	if (f)
		fclose(f);
	free(path);
	return dead;
}

START_TEST(test_runs)
{
	char *node, *sock, *t;
	int ready, status;
	pid_t d, collector;
	struct stat sb;

	if (geteuid() != 0 || !getpwnam(COLLECTOR_USER)) {
		printf("test_runs: skipped: the collector starts as user %s, which needs root and "
		       "that user\n", COLLECTOR_USER);
		return;
	}
	node = xasprintf("%s/input", dir);
	ck_assert_int_eq(mkdir(node, 0755), 0);
	free(node);
	node = xasprintf("%s/input/event0", dir);
	ck_assert_int_eq(mkfifo(node, 0644), 0);
	write_conf("feed = { mode = \"always\"; };");
	d = start(true, &ready);
	ck_assert_int_eq(ready_status(ready), EXIT_OK);
	wait_log("started: 1 source open");
	wait_log("input/event0: attached");
	sock = xasprintf("%s/run/io.entropyd", dir);
	ck_assert_int_eq(stat(sock, &sb), 0);
	ck_assert(S_ISSOCK(sb.st_mode));
	collector = collector_of(d);

	/* its counts, on SIGUSR1 */
	ck_assert_int_eq(kill(d, SIGUSR1), 0);
	wait_log("total: 0 events");

	/* a broken configuration: rejected, the daemon runs on */
	write_conf("feed = { mode = \"sometimes\"; };");
	ck_assert_int_eq(kill(d, SIGHUP), 0);
	wait_log("reload rejected (1 error): the running configuration stays");
	t = log_text();
	ck_assert_msg(strstr(t, "feed.mode: unknown value \"sometimes\""), "%s", t);
	free(t);
	ck_assert(!gone(d) && !gone(collector));
	/* a good one: taken */
	write_conf("feed = { mode = \"boot\"; };");
	ck_assert_int_eq(kill(d, SIGHUP), 0);
	wait_log("configuration reloaded from");

	/* SIGTERM: both end, status 0 */
	ck_assert_int_eq(kill(d, SIGTERM), 0);
	ck_assert_int_eq(waitpid(d, &status, 0), d);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_OK, "status %#x", status);
	for (int i = 0; i < 1000 && !gone(collector); i++)
		usleep(10000);
	ck_assert_msg(gone(collector), "the collector %d outlived the daemon", (int)collector);
	free(sock);
	free(node);
}
END_TEST

/* A sink that cannot be opened: no process is started, status EXIT_STARTUP on the ready
 * descriptor and as the exit status, and the device named. Needs no privilege. */
START_TEST(test_no_sink)
{
	int ready, status;
	pid_t d;
	char *t, *want;

	write_conf("feed = { device = \"/nonexistent/random\"; };");
	d = start(false, &ready);
	ck_assert_int_eq(ready_status(ready), EXIT_STARTUP);
	ck_assert_int_eq(waitpid(d, &status, 0), d);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_STARTUP, "status %#x",
		      status);
	t = log_text();
	want = xasprintf("/nonexistent/random");
	ck_assert_msg(strstr(t, want), "the device is not named:\n%s", t);
	free(want);
	free(t);
}
END_TEST

/* A recording directory anyone may write: refused before any source starts, and said. */
START_TEST(test_record_dir_refused)
{
	int ready, status;
	pid_t d;
	char *rec, *extra, *t;

	if (geteuid() != 0 || !getpwnam(COLLECTOR_USER)) {
		printf("test_record_dir_refused: skipped: needs root and the user %s\n",
		       COLLECTOR_USER);
		return;
	}
	rec = xasprintf("%s/rec", dir);
	ck_assert_int_eq(mkdir(rec, 0777), 0);
	ck_assert_int_eq(chmod(rec, 0777), 0);
	extra = xasprintf("record = { dir = \"%s\"; };", rec);
	write_conf(extra);
	d = start(true, &ready);
	ck_assert_int_eq(ready_status(ready), EXIT_STARTUP);
	ck_assert_int_eq(waitpid(d, &status, 0), d);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_STARTUP, "status %#x",
		      status);
	t = log_text();
	ck_assert_msg(strstr(t, "only root may be able to replace the directory the collector "
				"records in"),
		      "%s", t);
	ck_assert_msg(!strstr(t, "started:"), "%s", t);
	free(t);
	free(extra);
	free(rec);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("daemon");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_runs);
	tcase_add_test(tc, test_no_sink);
	tcase_add_test(tc, test_record_dir_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
