/* check_block_blktrace: the blktrace backend (block_blktrace.c) on real loop devices, as
 * root: a trace started and read where the kernel opens its relay files, and where it does
 * not (lockdown: EPERM; no debugfs: ENOENT) or the disk has someone else's trace (EBUSY), a
 * state saying so and nothing of ours left on the disk; and the state file: what a crashed
 * instance listed is torn down, what it did not list, or what a live one holds, is not.
 * Each test runs in a mount namespace of its own, with debugfs mounted there or not. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <linux/blktrace_api.h>
#include <linux/fs.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "block_blktrace.h"
#include "log.h"
#include "priv_ops.h"
#include "testutil.h"
#include "util.h"

static struct tu_loop loop_a, loop_b;
static char skip_why[256];
static bool have_loops;

/* Outside the tests' own processes (an unchecked fixture), so that a failed test leaves no
 * device behind; under the block tests' lock, as they take over each other's loop numbers. */
static void loops_setup(void)
{
	have_loops = tu_block_lock(900, skip_why, sizeof(skip_why)) &&
		     tu_loop_new(&loop_a, NULL, 8 << 20, skip_why, sizeof(skip_why)) &&
		     tu_loop_new(&loop_b, NULL, 8 << 20, skip_why, sizeof(skip_why));
}

/* A test that failed half-way may have left a trace on them (a device that is detached keeps
 * it, and the next one to use that loop device would find it busy). */
static void no_traces(void)
{
	struct tu_loop *const loops[] = {&loop_a, &loop_b};

	for (size_t i = 0; i < ARRAY_SIZE(loops); i++)
		if (loops[i]->fd >= 0) {
			(void)ioctl(loops[i]->fd, BLKTRACESTOP);
			(void)ioctl(loops[i]->fd, BLKTRACETEARDOWN);
		}
}

static void loops_teardown(void)
{
	no_traces();
	tu_loop_free(&loop_b);
	tu_loop_free(&loop_a);
	tu_block_unlock();
}

/* The test's process gets mounts of its own: what it mounts or unmounts goes with it. */
static bool private_mounts(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		snprintf(skip_why, sizeof(skip_why), "no mount namespace: %s", strerror(errno));
		return false;
	}
	return true;
}

#define NEED(cond)                                                                         \
	do {                                                                               \
		if (!(cond)) {                                                             \
			printf("%s: skipped: %s\n", __func__, skip_why);                    \
			return;                                                            \
		}                                                                          \
	} while (0)

/* Every debugfs mount of this (private) namespace gone. */
static void no_debugfs(void)
{
	char line[512], dir[256], type[64];
	bool again = true;

	while (again) {
		FILE *f = fopen("/proc/self/mounts", "re");

		ck_assert_ptr_nonnull(f);
		again = false;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "%*s %255s %63s", dir, type) == 2 &&
			    strcmp(type, "debugfs") == 0) {
				ck_assert_msg(umount2(dir, MNT_DETACH) == 0, "umount %s: %s", dir,
					      strerror(errno));
				again = true;
				break;
			}
		fclose(f);
	}
}

/* debugfs mounted (only) at a new directory of the test's. */
static char *with_debugfs(void)
{
	char *dir = xasprintf("%s/debug.XXXXXX", tu_tmpdir());

	no_debugfs();
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_msg(mount("none", dir, "debugfs", 0, NULL) == 0, "mount debugfs: %s",
		      strerror(errno));
	return dir;
}

/* Whether the disk has a blktrace set up, by the kernel's own word. */
static bool traced(const struct tu_loop *l)
{
	char *path = xasprintf("/sys/block/%s/trace/enable", l->name), v[8] = "";
	FILE *f = fopen(path, "re");

	ck_assert_msg(f && fgets(v, sizeof(v), f), "%s: %s", path, strerror(errno));
	fclose(f);
	free(path);
	return v[0] == '1';
}

/* A trace of our own, as another program (blktrace(8)) sets one up. */
static void foreign_trace(const struct tu_loop *l)
{
	struct blk_user_trace_setup su = {.act_mask = 0xffff, .buf_size = 4096, .buf_nr = 2};

	ck_assert_msg(ioctl(l->fd, BLKTRACESETUP, &su) == 0, "BLKTRACESETUP on %s: %s", l->name,
		      strerror(errno));
}

static void foreign_teardown(const struct tu_loop *l)
{
	(void)ioctl(l->fd, BLKTRACESTOP);
	ck_assert_msg(ioctl(l->fd, BLKTRACETEARDOWN) == 0, "BLKTRACETEARDOWN on %s: %s", l->name,
		      strerror(errno));
}

/* What the kernel answers when a relay file of a fresh trace is opened: 0 or an errno. */
static int relay_answer(const struct tu_loop *l, const char *debugfs)
{
	struct blk_user_trace_setup su = {.act_mask = BLK_TC_COMPLETE, .buf_size = 4096,
					  .buf_nr = 2};
	char *path;
	int fd, e;

	ck_assert_int_eq(ioctl(l->fd, BLKTRACESETUP, &su), 0);
	ck_assert_int_eq(ioctl(l->fd, BLKTRACESTART), 0);
	path = xasprintf("%s/block/%s/trace0", debugfs, su.name);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	e = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	foreign_teardown(l);
	free(path);
	return e;
}

struct seen {
	uint32_t kdev;
	size_t ours, others;
};

static void on_samples(void *ctx, const struct block_sample *s, size_t n)
{
	struct seen *seen = ctx;

	for (size_t i = 0; i < n; i++) {
		if (s[i].kdev == seen->kdev)
			seen->ours++;
		else
			seen->others++;
		if (i)
			ck_assert_uint_le(s[i - 1].t_ns, s[i].t_ns);
	}
}

static char *rundir(void)
{
	char *dir = xasprintf("%s/run.XXXXXX", tu_tmpdir());

	ck_assert_ptr_nonnull(mkdtemp(dir));
	return dir;
}

/* The state file lists exactly want ("MAJOR:MINOR NAME" lines; "": none, or no file). */
static void assert_state(const char *run, const char *want)
{
	char *path = xasprintf("%s/%s", run, PRIV_BLKTRACE_STATE), *text, *got = xstrdup("");

	if (access(path, F_OK) == 0) {
		text = tu_read_file(path, NULL);
		for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			if (line[0] != '#') {
				char *more = xasprintf("%s%s\n", got, line);

				free(got);
				got = more;
			}
		free(text);
	}
	ck_assert_msg(strcmp(got, want) == 0, "%s lists \"%s\", not \"%s\"", path, got, want);
	free(got);
	free(path);
}

/* Where the kernel opens relay files, completions on the disk arrive, its own only, in time
 * order; where it refuses them (lockdown), the state says so and nothing of ours is left on
 * the disk, nor listed in the state file. */
START_TEST(test_start)
{
	struct event_base *base;
	struct blkt_backend *b;
	struct seen seen = {0};
	char state[512] = "", *dbg, *run, *listed;
	int answer;

	NEED(have_loops);
	NEED(private_mounts());
	log_open(true, 0);
	dbg = with_debugfs();
	answer = relay_answer(&loop_a, dbg);
	printf("test_start: the kernel answers %s to a relay file\n",
	       answer ? strerror(answer) : "an open");
	ck_assert(!traced(&loop_a));
	run = rundir();
	base = event_base_new();
	seen.kdev = BLOCK_KDEV(loop_a.major, loop_a.minor);
	b = blkt_backend_new(base, run, on_samples, &seen);
	if (answer == 0) {
		ck_assert_msg(blkt_start(b, loop_a.name, loop_a.major, loop_a.minor, state,
					 sizeof(state)),
			      "blkt_start: %s", state);
		ck_assert(traced(&loop_a));
		/* Listed while it is set up: an instance that crashes now leaves it to the next
		 * one to tear down (test_crashed_instance). */
		listed = xasprintf("%u:%u %s\n", loop_a.major, loop_a.minor, loop_a.name);
		assert_state(run, listed);
		free(listed);
		tu_loop_read(&loop_a, 64);
		tu_loop_read(&loop_b, 64);
		TU_PUMP_UNTIL(base, 2000, seen.ours >= 64);
		ck_assert_uint_eq(seen.others, 0);
		blkt_stop(b, loop_a.major, loop_a.minor);
	} else {
		ck_assert(!blkt_start(b, loop_a.name, loop_a.major, loop_a.minor, state,
				      sizeof(state)));
		if (answer == EPERM || answer == EACCES)
			ck_assert_msg(strncmp(state, "EPERM: the kernel refuses blktrace's relay files",
					      47) == 0, "state: %s", state);
		else
			ck_assert_msg(strstr(state, strerror(answer)) || strncmp(state, "ENOENT", 6) == 0,
				      "the kernel answered %s; state: %s", strerror(answer), state);
	}
	ck_assert_msg(!traced(&loop_a), "a trace of ours is left on %s", loop_a.name);
	blkt_backend_free(b);
	assert_state(run, "");
	event_base_free(base);
	free(run);
	free(dbg);
}
END_TEST

/* Without debugfs there are no relay files: said, and nothing set up. */
START_TEST(test_no_debugfs)
{
	struct event_base *base;
	struct blkt_backend *b;
	char state[512] = "", *run;

	NEED(have_loops);
	NEED(private_mounts());
	log_open(true, 0);
	no_debugfs();
	run = rundir();
	base = event_base_new();
	b = blkt_backend_new(base, run, on_samples, NULL);
	ck_assert(!blkt_start(b, loop_a.name, loop_a.major, loop_a.minor, state, sizeof(state)));
	ck_assert_msg(strncmp(state, "ENOENT: debugfs is not mounted", 30) == 0, "state: %s",
		      state);
	ck_assert(!traced(&loop_a));
	blkt_backend_free(b);
	event_base_free(base);
	free(run);
}
END_TEST

/* Someone else's trace on the disk: EBUSY, said, and theirs left as it was. */
START_TEST(test_busy)
{
	struct event_base *base;
	struct blkt_backend *b;
	char state[512] = "", *run, *dbg;

	NEED(have_loops);
	NEED(private_mounts());
	log_open(true, 0);
	dbg = with_debugfs();
	foreign_trace(&loop_a);
	run = rundir();
	base = event_base_new();
	b = blkt_backend_new(base, run, on_samples, NULL);
	ck_assert(!blkt_start(b, loop_a.name, loop_a.major, loop_a.minor, state, sizeof(state)));
	ck_assert_msg(strncmp(state, "EBUSY: another blktrace is running", 34) == 0, "state: %s",
		      state);
	blkt_stop(b, loop_a.major, loop_a.minor); /* not ours: nothing */
	blkt_backend_free(b);
	ck_assert_msg(traced(&loop_a), "the other program's trace was torn down");
	foreign_teardown(&loop_a);
	event_base_free(base);
	free(run);
	free(dbg);
}
END_TEST

static void write_state(const char *run, const char *text)
{
	char *path = xasprintf("%s/%s", run, PRIV_BLKTRACE_STATE);
	FILE *f = fopen(path, "we");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	free(path);
}

/* An instance that crashed left a trace on A and listed it: the next one tears it down
 * when it starts. B's trace is not in the list: someone else's, left alone. */
START_TEST(test_crashed_instance)
{
	struct event_base *base;
	struct blkt_backend *b;
	char *run, *text;

	NEED(have_loops);
	log_open(true, 0);
	run = rundir();
	foreign_trace(&loop_a);
	foreign_trace(&loop_b);
	text = xasprintf("# entropyd: blktrace set up on these disks\n%u:%u %s\n", loop_a.major,
			 loop_a.minor, loop_a.name);
	write_state(run, text);
	base = event_base_new();
	b = blkt_backend_new(base, run, on_samples, NULL);
	ck_assert_msg(!traced(&loop_a), "the crashed instance's trace on %s is left",
		      loop_a.name);
	ck_assert_msg(traced(&loop_b), "a trace that was not listed (%s) was torn down",
		      loop_b.name);
	assert_state(run, "");
	blkt_backend_free(b);
	foreign_teardown(&loop_b);
	event_base_free(base);
	free(text);
	free(run);
}
END_TEST

/* The state file held by a live instance: its traces are not this one's to tear down. */
START_TEST(test_live_instance)
{
	struct event_base *base;
	struct blkt_backend *b;
	char *run, *text, *path;
	int held;

	NEED(have_loops);
	log_open(true, 0);
	run = rundir();
	foreign_trace(&loop_a);
	text = xasprintf("%u:%u %s\n", loop_a.major, loop_a.minor, loop_a.name);
	write_state(run, text);
	path = xasprintf("%s/%s", run, PRIV_BLKTRACE_STATE);
	held = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(held, 0);
	ck_assert_int_eq(flock(held, LOCK_EX | LOCK_NB), 0);
	base = event_base_new();
	b = blkt_backend_new(base, run, on_samples, NULL);
	ck_assert_msg(traced(&loop_a), "the live instance's trace was torn down");
	blkt_backend_free(b);
	assert_state(run, text);
	close(held);
	foreign_teardown(&loop_a);
	event_base_free(base);
	free(path);
	free(text);
	free(run);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("block_blktrace");
	TCase *tc = tcase_create("loop");

	tcase_add_unchecked_fixture(tc, loops_setup, loops_teardown);
	tcase_add_checked_fixture(tc, no_traces, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_start);
	tcase_add_test(tc, test_no_debugfs);
	tcase_add_test(tc, test_busy);
	tcase_add_test(tc, test_crashed_instance);
	tcase_add_test(tc, test_live_instance);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
