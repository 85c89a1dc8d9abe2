/* check_net_sock: sampling in the kernel on a live capture (net_sock.c), through the driver,
 * the real privileged process (which sets the capture's socket filter with the share asked
 * for) and the real pipeline, in a network namespace of the test's own, with frames sent
 * from the far end of a veth pair: a capture opens unsampled; a flood above the event cap is
 * sampled, and the kernel then hands over only a share of it; when the flood ends, sampling
 * stops; a closed capture says nothing of sampling. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "feed_pipeline.h"
#include "log.h"
#include "net.h"
#include "testutil.h"
#include "util.h"

#define CAP 200 /* packets timed a second */

static struct tu_source t;

static struct inst_info v0(void)
{
	struct inst_info in;

	ck_assert_msg(tu_instance(CLASS_NETWORK, "v0", &in), "no instance v0");
	return in;
}

static bool v0_is(const char *state, const char *sampling)
{
	struct inst_info in;

	return tu_instance(CLASS_NETWORK, "v0", &in) && strcmp(in.state, state) == 0 &&
	       (sampling ? in.sampling && strcmp(in.sampling, sampling) == 0 : !in.sampling);
}

#define PUMP_UNTIL(cond) TU_PUMP_UNTIL(t.base, 1000, cond)

START_TEST(test_flood_sampled)
{
	static const char *const ifaces[] = {"v0"};
	const unsigned flood = 20000;
	uint64_t before;
	struct inst_info in;
	int fd;

	TU_NEED_NETNS();
	tu_sh("ip link add v0 type veth peer name v1 && ip link set v0 up && ip link set v1 up");
	log_open(true, 1);
	tu_source_start(&t, &net_source_ops, tu_net_config(ifaces, 1, "udp", CAP),
			tu_net_config(ifaces, 1, "udp", CAP));
	PUMP_UNTIL(v0_is("open", "off"));
	in = v0();
	ck_assert(in.sample_ratio == 1);
	fd = tu_frames_open("v1");

	/* Below the cap: not sampled. */
	tu_frames_send(fd, 0x0a000001, 4, CAP / 2);
	PUMP_UNTIL(v0().c.events >= CAP / 2);
	ck_assert(v0_is("open", "off"));

	/* A flood, thousands of frames a turn: sampled, at a share below one half. */
	for (int turn = 0; turn < 1000 && !v0_is("open", "on"); turn++) {
		tu_frames_send(fd, 0x0a000001, 4, 2000);
		tu_turn(t.base);
	}
	in = v0();
	ck_assert_msg(in.sampling && strcmp(in.sampling, "on") == 0, "sampling %s",
		      in.sampling ? in.sampling : "(none)");
	ck_assert_msg(in.sample_ratio > 0 && in.sample_ratio < 0.5, "ratio %g", in.sample_ratio);
	ck_assert_msg(in.arrival_rate > 2 * CAP, "rate %g", in.arrival_rate);

	/* The kernel keeps only that share: of the next 20,000 frames, far fewer reach the
	 * capture, counted once the flood is over and sampling has stopped (by then the capture
	 * has read all that was handed over). */
	before = v0().c.events;
	tu_frames_send(fd, 0x0a000001, 4, flood);
	PUMP_UNTIL(v0_is("open", "off"));
	in = v0();
	ck_assert(in.sample_ratio == 1);
	ck_assert_msg(in.c.events - before < flood / 2, "%llu of %u frames handed over",
		      (unsigned long long)(in.c.events - before), flood);

	/* Unsampled again: every frame counts. */
	before = in.c.events;
	tu_frames_send(fd, 0x0a000001, 4, CAP / 2);
	PUMP_UNTIL(v0().c.events >= before + CAP / 2);

	/* Closed: nothing said of sampling. */
	tu_sh("ip link set v0 down");
	PUMP_UNTIL(v0_is("down", NULL));
	close(fd);
	tu_source_stop(&t);
}
END_TEST

static void teardown(void)
{
	tu_source_stop(&t);
}

static Suite *net_sock_suite(void)
{
	Suite *s = suite_create("net_sock");
	TCase *tc = tcase_create("netns");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_flood_sampled);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(net_sock_suite());
}
