/* check_net_live: live capture per interface (net_live.c), through the driver, the real
 * privileged process (which hands over each packet socket, under its filter) and the real
 * pipeline, in a network namespace of the test's own: a veth pair whose far end sends
 * frames; which interfaces are captured (named, auto, stacked), and what each one's state
 * says as its link comes up, goes down, disappears and comes back. */
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

static struct tu_source t;

/* The source started on these interfaces, with its privileged process; UDP only, so that
 * nothing the kernel sends by itself on a new link is counted. */
static void start(const char *const *ifaces, size_t n)
{
	log_open(true, 1);
	tu_source_start(&t, &net_source_ops, tu_net_config(ifaces, n, "udp", 100000000),
			tu_net_config(ifaces, n, "udp", 100000000));
}

/* The state of the instance of name ("" if there is none) begins with prefix. */
static bool state_is(const char *name, const char *prefix)
{
	struct inst_info in;

	return tu_instance(CLASS_NETWORK, name, &in) &&
	       strncmp(in.state, prefix, strlen(prefix)) == 0;
}

static bool listed(const char *name)
{
	struct inst_info in;

	return tu_instance(CLASS_NETWORK, name, &in);
}

static uint64_t events(const char *name)
{
	struct inst_info in;

	ck_assert_msg(tu_instance(CLASS_NETWORK, name, &in), "no instance %s", name);
	return in.c.events;
}

#define PUMP_UNTIL(cond) TU_PUMP_UNTIL(t.base, 1000, cond)

/* A veth pair up: v0 is captured, v1 sends. */
static void veth(void)
{
	tu_sh("ip link add v0 type veth peer name v1 && ip link set v0 up && ip link set v1 up");
}

/* Every frame sent to the interface named is one event of its instance; those the filter
 * leaves out are not. */
START_TEST(test_frames_counted)
{
	static const char *const ifaces[] = {"v0"};
	int fd;
	uint8_t arp[60] = {[0 ... 5] = 0xff, [6] = 0x02, [11] = 0x09, [12] = 0x08, [13] = 0x06};

	TU_NEED_NETNS();
	veth();
	start(ifaces, 1);
	PUMP_UNTIL(state_is("v0", "open"));
	ck_assert(!listed("v1"));
	ck_assert(!listed("lo"));
	fd = tu_frames_open("v1");
	tu_frames_send(fd, 0x0a000001, 4, 500);
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(send(fd, arp, sizeof(arp), 0), (ssize_t)sizeof(arp));
	tu_frames_send(fd, 0x0a000001, 4, 500);
	PUMP_UNTIL(events("v0") >= 1000);
	ck_assert_uint_eq(events("v0"), 1000);
	ck_assert_msg(state_is("v0", "open") && !state_is("v0", "open ("),
		      "four sources alike taken for one dominant source");
	close(fd);
	tu_source_stop(&t);
}
END_TEST

/* A named interface keeps its instance and says why it is not captured: absent, down,
 * gone; and is captured again when it is back, anew. */
START_TEST(test_named_link_comes_and_goes)
{
	static const char *const ifaces[] = {"v0", "nosuch0"};
	int fd;

	TU_NEED_NETNS();
	tu_sh("ip link add v0 type veth peer name v1 && ip link set v1 up");
	start(ifaces, 2);
	PUMP_UNTIL(state_is("v0", "down") && state_is("nosuch0", "absent"));
	tu_sh("ip link set v0 up");
	PUMP_UNTIL(state_is("v0", "open"));
	fd = tu_frames_open("v1");
	tu_frames_send(fd, 0x0a000001, 4, 100);
	PUMP_UNTIL(events("v0") >= 100);
	close(fd);
	tu_sh("ip link set v0 down");
	PUMP_UNTIL(state_is("v0", "down"));
	tu_sh("ip link del v0");
	PUMP_UNTIL(state_is("v0", "gone"));
	tu_sh("ip link add v0 type veth peer name v1 && ip link set v1 up && ip link set v0 up");
	PUMP_UNTIL(state_is("v0", "open"));
	fd = tu_frames_open("v1");
	tu_frames_send(fd, 0x0a000001, 4, 50);
	PUMP_UNTIL(events("v0") >= 150);
	ck_assert_uint_eq(events("v0"), 150);
	ck_assert(state_is("nosuch0", "absent"));
	close(fd);
	tu_source_stop(&t);
}
END_TEST

/* auto: every interface that is up, but not loopback, and not one of secondhand packets
 * (an ifb); one that appears is captured, one that disappears goes. */
START_TEST(test_auto)
{
	static const char *const ifaces[] = {"auto"};

	TU_NEED_NETNS();
	veth();
	tu_sh("ip link add ifb0 type ifb && ip link set ifb0 up");
	start(ifaces, 1);
	PUMP_UNTIL(state_is("v0", "open") && state_is("v1", "open"));
	ck_assert(!listed("lo"));
	ck_assert(!listed("ifb0"));
	tu_sh("ip link add w0 type veth peer name w1 && ip link set w0 up");
	PUMP_UNTIL(state_is("w0", "open"));
	ck_assert(!listed("w1")); /* down */
	tu_sh("ip link del w0");
	PUMP_UNTIL(!listed("w0") && !listed("w1"));
	ck_assert(state_is("v0", "open"));
	tu_source_stop(&t);
}
END_TEST

/* Two wanted interfaces, one stacked on the other or a port of it: only one is captured,
 * so that no packet counts twice; the other's state says by which. */
START_TEST(test_stacked)
{
	static const char *const ifaces[] = {"v0", "mv0", "w0", "br0"};
	int fd;

	TU_NEED_NETNS();
	veth();
	tu_sh("ip link add link v0 name mv0 type macvlan mode bridge && ip link set mv0 up && "
	      "ip link add w0 type veth peer name w1 && ip link set w0 up && ip link set w1 up && "
	      "ip link add br0 type bridge && ip link set br0 up");
	start(ifaces, 4);
	PUMP_UNTIL(state_is("v0", "open") && state_is("mv0", "stacked on v0") &&
		   state_is("w0", "open") && state_is("br0", "open"));
	fd = tu_frames_open("v1");
	tu_frames_send(fd, 0x0a000001, 4, 200);
	PUMP_UNTIL(events("v0") >= 200);
	ck_assert_uint_eq(events("mv0"), 0);
	close(fd);
	/* w0 into the bridge: the bridge's capture counts its port's packets. */
	tu_sh("ip link set w0 master br0");
	PUMP_UNTIL(state_is("w0", "port of br0") && state_is("br0", "open"));
	fd = tu_frames_open("w1");
	tu_frames_send(fd, 0x0a000001, 4, 200);
	PUMP_UNTIL(events("br0") >= 200);
	ck_assert_uint_eq(events("br0"), 200);
	ck_assert_uint_eq(events("w0"), 0);
	close(fd);
	tu_source_stop(&t);
}
END_TEST

static void teardown(void)
{
	tu_source_stop(&t);
}

static Suite *net_live_suite(void)
{
	Suite *s = suite_create("net_live");
	TCase *tc = tcase_create("netns");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_frames_counted);
	tcase_add_test(tc, test_named_link_comes_and_goes);
	tcase_add_test(tc, test_auto);
	tcase_add_test(tc, test_stacked);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(net_live_suite());
}
