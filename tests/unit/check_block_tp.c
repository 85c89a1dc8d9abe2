/* check_block_tp: the block tracepoint's perf rings (block_tp.c) on real loop devices, as
 * root, in this process (no privileged process: it opens the events itself): completions of
 * the disks wanted arrive, each batch in time order, with times of when the reads were made,
 * and only theirs (filtered in the kernel where it takes a filter); a change of the disks
 * wanted takes effect at once, none wanted stops them; the stats say what the rings hold.
 * Skips, saying why, without root, perf or loop devices. The records' decoding is
 * check_block_tp_ring's, the format's check_block_tp_format's, the daemon's use t_block's. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "block.h"
#include "block_tp.h"
#include "testutil.h"
#include "util.h"

#define TURNS 1000 /* 10 s of an idle loop at most */
#define READS 64

static struct tu_loop loop_a = {.fd = -1}, loop_b = {.fd = -1};
static char skip_why[256];
static bool have_loops;

/* Outside the tests' own processes (an unchecked fixture), so that a failed test leaves no
 * device behind; under the block tests' lock, as they take over each other's loop numbers. */
static void loops_setup(void)
{
	if (!tu_have_sys_admin()) {
		snprintf(skip_why, sizeof(skip_why), "loop devices and the block tracepoint (tracefs, "
			 "perf) need CAP_SYS_ADMIN");
		return;
	}
	have_loops = tu_block_lock(900, skip_why, sizeof(skip_why)) &&
		     tu_loop_new(&loop_a, NULL, 8 << 20, skip_why, sizeof(skip_why)) &&
		     tu_loop_new(&loop_b, NULL, 8 << 20, skip_why, sizeof(skip_why));
}

static void loops_teardown(void)
{
	tu_loop_free(&loop_b);
	tu_loop_free(&loop_a);
	tu_block_unlock();
}

/* What the rings handed on, by device. */
struct seen {
	uint32_t a, b;
	uint64_t t0, t1; /* while the reads were made */
	size_t of_a, of_b, others, batches;
	size_t a_within; /* of a's, those timed within t0..t1 */
};

static void on_samples(void *ctx, const struct block_sample *s, size_t n)
{
	struct seen *seen = ctx;

	ck_assert_uint_gt(n, 0);
	seen->batches++;
	for (size_t i = 0; i < n; i++) {
		if (s[i].kdev == seen->a) {
			seen->of_a++;
			seen->a_within += s[i].t_ns >= seen->t0 && s[i].t_ns <= seen->t1;
		}
		else if (s[i].kdev == seen->b)
			seen->of_b++;
		else
			seen->others++;
		if (i)
			ck_assert_uint_le(s[i - 1].t_ns, s[i].t_ns);
	}
}

static struct block_tp *tp_open(struct event_base *base, struct seen *seen)
{
	char err[512] = "";
	struct block_tp *tp;

	if (!have_loops) {
		fprintf(stderr, "SKIP: %s\n", skip_why);
		return NULL;
	}
	seen->a = BLOCK_KDEV(loop_a.major, loop_a.minor);
	seen->b = BLOCK_KDEV(loop_b.major, loop_b.minor);
	tp = block_tp_open(base, on_samples, seen, err, sizeof(err));
	ck_assert_msg(tp != NULL, "block_tp_open: %s", err);
	return tp;
}

/* The disk wanted: its completions, all of them, in time order, timed within the reads; the
 * other disk's none. Then the other one alone; then neither. */
START_TEST(test_devices)
{
	struct event_base *base = event_base_new();
	struct seen seen = {0};
	struct block_tp *tp = tp_open(base, &seen);
	struct block_tp_stats st;
	unsigned id;
	char err[256];

	if (!tp) {
		event_base_free(base);
		return;
	}
	block_tp_set_devices(tp, &seen.a, 1);
	ck_assert_ptr_null(block_tp_device_error(tp, seen.a));
	ck_assert_uint_eq(block_tp_failed(tp), 0);
	seen.t0 = util_mono_ns();
	tu_loop_read(&loop_a, READS);
	tu_loop_read(&loop_b, READS);
	seen.t1 = util_mono_ns();
	/* Every read's completion, timed while the reads were made (on CLOCK_MONOTONIC); woken
	 * by each completion while they are few, with no poll to wait for. */
	TU_PUMP_UNTIL(base, TURNS, seen.a_within >= READS);
	block_tp_get_stats(tp, &st, true);
	ck_assert_uint_eq(seen.of_b, 0);
	ck_assert_uint_eq(seen.others, 0);
	ck_assert_uint_eq(st.samples, seen.of_a);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_eq(st.bad, 0);
	ck_assert_uint_eq(st.cpus, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	ck_assert(block_tp_tracepoint_id(&id, err, sizeof(err)));
	ck_assert_uint_eq(st.id, id);
	ck_assert_uint_gt(st.ring_kib, 0);
	/* The kernel filters by device here: the other disk's completions never reached a
	 * ring. Where it does not, they are counted as foreign. */
	if (st.kernel_filter)
		ck_assert_uint_eq(st.foreign, 0);
	else
		ck_assert_uint_ge(st.foreign, READS);

	/* The other disk alone: from now on only its completions. */
	seen.of_a = seen.of_b = seen.others = 0;
	block_tp_set_devices(tp, &seen.b, 1);
	tu_loop_read(&loop_a, READS);
	tu_loop_read(&loop_b, READS);
	TU_PUMP_UNTIL(base, TURNS, seen.of_b >= READS);
	block_tp_get_stats(tp, &st, true);
	ck_assert_uint_eq(seen.of_a, 0);
	ck_assert_uint_eq(seen.others, 0);

	/* Neither: nothing, as the reads on a, made while none was wanted, show once b is
	 * wanted again and its reads come (the rings are read in order). */
	seen.of_a = seen.of_b = seen.others = 0;
	block_tp_set_devices(tp, NULL, 0);
	tu_loop_read(&loop_a, READS);
	block_tp_set_devices(tp, &seen.b, 1);
	tu_loop_read(&loop_b, READS);
	TU_PUMP_UNTIL(base, TURNS, seen.of_b >= READS);
	ck_assert_uint_eq(seen.of_a, 0);
	ck_assert_uint_eq(seen.others, 0);

	/* No CPU came or went. */
	ck_assert_uint_eq(block_tp_rescan_cpus(tp), 0);
	block_tp_close(tp);
	event_base_free(base);
}
END_TEST

/* Both disks: each one's completions, told apart by the device the record names. */
START_TEST(test_two_devices)
{
	struct event_base *base = event_base_new();
	struct seen seen = {0};
	struct block_tp *tp = tp_open(base, &seen);
	uint32_t both[2];

	if (!tp) {
		event_base_free(base);
		return;
	}
	both[0] = seen.a;
	both[1] = seen.b;
	block_tp_set_devices(tp, both, 2);
	tu_loop_read(&loop_b, READS);
	tu_loop_read(&loop_a, READS);
	TU_PUMP_UNTIL(base, TURNS, seen.of_a >= READS && seen.of_b >= READS);
	ck_assert_uint_eq(seen.others, 0);
	/* The same list again changes nothing. */
	block_tp_set_devices(tp, both, 2);
	ck_assert_uint_eq(block_tp_failed(tp), 0);
	block_tp_close(tp);
	event_base_free(base);
}
END_TEST

static Suite *block_tp_suite(void)
{
	Suite *s = suite_create("block_tp");
	TCase *tc = tcase_create("loop");

	tcase_add_unchecked_fixture(tc, loops_setup, loops_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_devices);
	tcase_add_test(tc, test_two_devices);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(block_tp_suite());
}
