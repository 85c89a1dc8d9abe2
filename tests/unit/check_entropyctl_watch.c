/* check_entropyctl_watch: `entropyctl watch` without the daemon, off a terminal. A stand-in
 * (a forked child on a socket made here) answers each connection's GetStatus and GetSources
 * with fixed replies, then goes away; watch runs in another child, its output in a file and
 * its keys from a pipe. Checked: each frame's overview and table (widths, the rates: none
 * at first, from the counters' change after, kept while a snapshot does not move), an empty
 * list, bytes from the daemon never printed as control sequences, "not running" said once
 * when it goes, q and a signal ending it, and a path that is no socket ending it at once.
 * What only a terminal shows (raw keys, the screen cleared, lines cut to its width) and a
 * real daemon's replies are t_watch.sh's. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "entropyctl_client.h"
#include "entropyctl_watch.h"
#include "testutil.h"
#include "util.h"

static char dir[256], sock[300], out[300];

static void setup(void)
{
	tu_mkdtemp(dir, sizeof(dir), "%s/watch.XXXXXX", tu_tmpdir());
	snprintf(sock, sizeof(sock), "%s/io.entropyd", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
}

/* One connection's answers. */
struct answer {
	const char *status, *sources;
};

#define STATUS(up, events)                                                                 \
	"{\"parameters\":{\"daemon\":{\"version\":\"1.2.3\",\"pid\":4242,\"uptime_s\":" #up \
	",\"feed_phase\":\"mix\"},\"kernel\":{\"crng_ready\":true},\"totals\":{\"events\":"  \
	#events ",\"credited_bits\":12.5,\"fed_credit_bits\":256}}}"
#define ROW(name, events, credited)                                                        \
	"{\"class\":\"input\",\"name\":\"" name "\",\"state\":\"open\",\"events\":" #events \
	",\"credited_bits\":" #credited ",\"health\":{\"state\":\"ok\",\"last_failure\":"    \
	"\"none\"}}"
#define SOURCES(...) "{\"parameters\":{\"sources\":[" __VA_ARGS__ "]}}"

/* A stand-in daemon: listens at sock before it forks (watch never races it), answers each of
 * the n connections' two calls, then removes its socket and ends: the daemon stopped. */
static pid_t stand_in(const struct answer *a, size_t n)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	pid_t pid;

	ck_assert_int_ge(l, 0);
	strlcopy(sa.sun_path, sock, sizeof(sa.sun_path));
	ck_assert_int_eq(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(l, 4), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid) {
		close(l);
		return pid;
	}
	for (size_t i = 0; i < n; i++) {
		int c = accept(l, NULL, NULL);

		if (c < 0)
			_exit(2);
		for (int call = 0; call < 2; call++) {
			const char *r = call ? a[i].sources : a[i].status;
			char ch;

			while (read(c, &ch, 1) == 1 && ch != '\0')
				;
			if (write(c, r, strlen(r) + 1) != (ssize_t)strlen(r) + 1)
				_exit(3);
		}
		close(c);
	}
	unlink(sock);
	close(l);
	_exit(0);
}

/* entropyctl watch in a child: stdout to the file out, stdin from a pipe (*keys: its
 * writing end). */
static pid_t watcher(int *keys, double every)
{
	int p[2];
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(p[0], STDIN_FILENO) < 0)
			_exit(100);
		close(p[1]);
		_exit(entropyctl_watch_cmd(sock, 5, every));
	}
	close(p[0]);
	*keys = p[1];
	return pid;
}

/* What watch has written so far. */
static char *output(void)
{
	FILE *f = fopen(out, "r");

	if (!f)
		return xstrdup("");
	fclose(f);
	return tu_read_file(out, NULL);
}

/* Waits (10 s at most) until the output holds want. */
static char *wait_output(const char *want)
{
	struct timespec tick = {0, 10 * 1000 * 1000};

	for (int i = 0; i < 1000; i++) {
		char *text = output();

		if (strstr(text, want))
			return text;
		free(text);
		nanosleep(&tick, NULL);
	}
	ck_abort_msg("watch never wrote \"%s\"; it wrote:\n%s", want, output());
	return NULL;
}

static int wait_exit(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return st;
}

/* The i-th frame of the daemon's in text (each begins with its first line): malloc'd. */
static char *frame(const char *text, int i)
{
	static const char start[] = "entropyd 1.2.3 (pid";
	const char *at = text, *end;

	for (int k = 0; k <= i; k++) {
		at = strstr(k ? at + 1 : at, start);
		ck_assert_msg(at != NULL, "no frame %d in:\n%s", i, text);
	}
	end = strstr(at + 1, start);
	if (!end)
		end = at + strlen(at);
	return strndup(at, (size_t)(end - at));
}

/* The value of column col (0-based, split at runs of two spaces or more) of the row that
 * begins with "input  NAME". */
static char *cell(const char *fr, const char *name, int col)
{
	char *copy = xstrdup(fr), *line, *save = NULL, *res = NULL;

	for (line = strtok_r(copy, "\n", &save); line && !res; line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *start;
		int c = 0;

		if (strncmp(line, "input", 5) || !strstr(line, name))
			continue;
		for (;;) {
			while (*p == ' ')
				p++;
			start = p;
			while (*p && !(p[0] == ' ' && p[1] == ' '))
				p++;
			if (c == col) {
				res = strndup(start, (size_t)(p - start));
				break;
			}
			if (!*p)
				break;
			c++;
		}
	}
	free(copy);
	ck_assert_msg(res != NULL, "no column %d for %s in:\n%s", col, name, fr);
	return res;
}

enum { C_CLASS, C_NAME, C_STATE, C_EVENTS, C_EVS, C_CRED, C_BITS, C_WHY, C_HEALTH };

/* Three frames of a daemon, then none: the overview, the table, rates from the second frame
 * on (kept while the snapshot does not move), and "not running" once; then q ends it. */
START_TEST(test_frames)
{
	static const struct answer a[] = {
		{STATUS(3725, 1000), SOURCES(ROW("event0", 1000, 12.5) "," ROW("mouse-long-name", 0, 0))},
		{STATUS(3726, 1500), SOURCES(ROW("event0", 1500, 20.5) "," ROW("mouse-long-name", 7, 0))},
		{STATUS(3726, 1500), SOURCES(ROW("event0", 1500, 20.5) "," ROW("mouse-long-name", 7, 0))},
	};
	pid_t d = stand_in(a, ARRAY_SIZE(a)), w;
	static const char head[] = "CLASS  NAME             STATE  EVENTS  EV/S  CREDITED  BITS/S  "
				   "WHY NOT  HEALTH\n";
	char *text, *f1, *f2, *f3, *v, *hdr;
	int keys, st;

	w = watcher(&keys, 0.05);
	text = wait_output("entropyd not running, waiting");
	ck_assert_int_eq(wait_exit(d), 0);
	/* Said once, off a terminal, however long it waits. */
	free(text);
	text = output();
	ck_assert_uint_eq(tu_count(text, "entropyd not running, waiting"), 1);
	ck_assert_int_eq(write(keys, "xq", 2), 2);
	st = wait_exit(w);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "watch ended %#x", st);
	close(keys);
	free(text);
	text = output();
	ck_assert_uint_eq(tu_count(text, "entropyd 1.2.3 (pid 4242), up "), 3);

	f1 = frame(text, 0);
	ck_assert_msg(strstr(f1, "entropyd 1.2.3 (pid 4242), up 1h 02m 05s; phase mix; CRNG ready; "),
		      "%s", f1);
	ck_assert_msg(strstr(f1, " every 0.05 s, q quits\n"), "%s", f1);
	ck_assert_msg(strstr(f1, "\ntotals: 1000 events, 12.5 bits credited, 256 bits fed to the "
				 "kernel\n"),
		      "%s", f1);
	/* The header's columns as wide as their widest cell; numbers to the right. */
	hdr = strstr(f1, "CLASS");
	ck_assert_ptr_nonnull(hdr);
	ck_assert_msg(!strncmp(hdr, head, strlen(head)), "%s", hdr);
	ck_assert_msg(strstr(f1, "input  event0           open     1000     -      12.5       -  "
				 "-        ok\n"),
		      "%s", f1);
	/* First frame: no rate yet. */
	v = cell(f1, "event0", C_EVS);
	ck_assert_str_eq(v, "-");
	free(v);

	/* Second: the counters moved; the rates are their change over the time between. */
	f2 = frame(text, 1);
	ck_assert_msg(strstr(f2, "up 1h 02m 06s"), "%s", f2);
	v = cell(f2, "event0", C_EVENTS);
	ck_assert_str_eq(v, "1500");
	free(v);
	v = cell(f2, "event0", C_EVS);
	ck_assert_msg(strcmp(v, "-") && strtod(v, NULL) > 0, "EV/S %s", v);
	char *rate2 = v;

	v = cell(f2, "mouse-long-name", C_BITS);
	ck_assert_str_eq(v, "0.00");
	free(v);

	/* Third: the same snapshot (a user other than root's, made every 10 s): the same
	 * rates, not zero. */
	f3 = frame(text, 2);
	v = cell(f3, "event0", C_EVS);
	ck_assert_str_eq(v, rate2);
	free(v);
	free(rate2);
	free(f1);
	free(f2);
	free(f3);
	free(text);
}
END_TEST

/* No instance: the table says so. What the daemon sends is printed without a byte of
 * control (an escape in a name or a reason would clear a screen or retitle a terminal). */
START_TEST(test_empty_and_hostile)
{
	static const struct answer a[] = {
		{STATUS(5, 0), SOURCES()},
		{"{\"parameters\":{\"daemon\":{\"version\":\"9\\u001b]0;owned\\u0007\",\"pid\":1,"
		 "\"uptime_s\":5,\"feed_phase\":\"\\u001b[2J\"},\"kernel\":{},\"totals\":{}}}",
		 SOURCES("{\"class\":\"input\",\"name\":\"ev\\u001b[31mil\",\"state\":\"open\","
			 "\"events\":1,\"credited_bits\":0,\"credit\":{\"reason\":\"gone\\u001b[2J"
			 "\"},\"health\":{\"state\":\"fail\\r\",\"last_failure\":\"rct\\b\"}}")},
	};
	pid_t d = stand_in(a, ARRAY_SIZE(a)), w;
	char *text;
	int keys, st;

	w = watcher(&keys, 0.05);
	text = wait_output("entropyd not running, waiting");
	ck_assert_int_eq(wait_exit(d), 0);
	ck_assert_int_eq(write(keys, "q", 1), 1);
	st = wait_exit(w);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "watch ended %#x", st);
	close(keys);
	free(text);
	text = output();
	ck_assert_msg(strstr(text, "(no source instance)\n"), "%s", text);
	ck_assert_msg(strstr(text, "entropyd 9"), "%s", text);
	for (const char *p = text; *p; p++)
		ck_assert_msg(*p == '\n' || (*p >= 0x20 && *p < 0x7f),
			      "byte %#x at %zu of what watch printed:\n%s", (unsigned char)*p,
			      (size_t)(p - text), text);
	free(text);
}
END_TEST

/* A signal ends it as the signal would (after putting the terminal back); a path that is no
 * socket ends it at once, saying why, where waiting could not help. */
START_TEST(test_signal_and_not_a_socket)
{
	pid_t w;
	int keys, st;
	FILE *f;
	char *text;

	w = watcher(&keys, 0.05);
	free(wait_output("entropyd not running, waiting"));
	ck_assert_int_eq(kill(w, SIGTERM), 0);
	st = wait_exit(w);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "watch ended %#x", st);
	close(keys);

	f = fopen(sock, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	w = watcher(&keys, 0.05);
	st = wait_exit(w);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == XC_NOT_RUNNING, "watch ended %#x", st);
	close(keys);
	text = output();
	ck_assert_msg(!strstr(text, "waiting"), "%s", text);
	free(text);
}
END_TEST

static Suite *entropyctl_watch_suite(void)
{
	Suite *s = suite_create("entropyctl_watch");
	TCase *tc = tcase_create("watch");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_frames);
	tcase_add_test(tc, test_empty_and_hostile);
	tcase_add_test(tc, test_signal_and_not_a_socket);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(entropyctl_watch_suite());
}
