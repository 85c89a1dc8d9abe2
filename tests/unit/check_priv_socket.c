/* check_priv_socket: libpcap's socket(), answered by the privileged process (priv_socket.c,
 * linked into this test as into entropyd): outside a capture every socket is the kernel's;
 * inside one, AF_PACKET is asked of the privileged process (the real loop, in a child), which
 * refuses an interface its configuration does not select and, as root, hands over a socket
 * bound to the one it selects, under its filter, locked. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "priv.h"
#include "testutil.h"
#include "util.h"

static int privileged;

/* The real loop in a child, capturing on lo if lo_selected, else on no interface. */
static void start_privileged(bool lo_selected)
{
	struct config *cfg = config_defaults();

	for (int c = 0; c < CLASS_COUNT; c++)
		cfg->policy[c].rule.mode = MODE_DISABLED;
	if (lo_selected) {
		cfg->policy[CLASS_NETWORK].rule.mode = MODE_TRUSTED;
		config_settings_strlist_free(&cfg->network.interfaces);
		config_settings_strlist_add(&cfg->network.interfaces, "lo");
	}
	privileged = tu_privileged_start(cfg, -1);
}

/* Outside a capture, and without a privileged process, socket() is the kernel's. */
START_TEST(test_plain)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	close(fd);
	priv_capture_begin("lo");
	fd = socket(AF_UNIX, SOCK_DGRAM, 0); /* not AF_PACKET: the kernel's still */
	ck_assert_int_ge(fd, 0);
	close(fd);
	priv_capture_end();
}
END_TEST

/* Inside a capture, AF_PACKET is the privileged process's to give: refused (EACCES, said in
 * its log) on an interface its configuration does not select; outside, the kernel's again. */
START_TEST(test_asked)
{
	char *log;
	int fd;

	tu_capture_begin(); /* the privileged process's log too: it says before it answers */
	start_privileged(false);
	priv_capture_begin("lo");
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(errno, EACCES);
	log = tu_capture_end();
	ck_assert_ptr_nonnull(strstr(log, "refused PACKET_SOCKET"));
	ck_assert(priv_refused());
	free(log);
	priv_capture_end();
	priv_capture_begin("nosuch9"); /* no such interface: not asked */
	ck_assert_int_eq(socket(AF_PACKET, SOCK_RAW, 0), -1);
	ck_assert_int_eq(errno, ENODEV);
	priv_capture_end();
	fd = socket(AF_PACKET, SOCK_RAW, 0); /* the kernel's: as root made, else EPERM */
	if (geteuid() == 0) {
		ck_assert_int_ge(fd, 0);
		close(fd);
	} else {
		ck_assert_int_eq(fd, -1);
		ck_assert_int_eq(errno, EPERM);
	}
	tu_privileged_end(privileged);
}
END_TEST

/* As root, for the interface it selects: a socket bound to it, under a locked filter,
 * non-blocking where libpcap asks for it. */
START_TEST(test_handed_over)
{
	struct sockaddr_ll sll;
	socklen_t len = sizeof(sll), llen = sizeof(int);
	int fd, locked = 0, dummy = 0;

	if (geteuid() != 0) {
		printf("test_handed_over: skipped: the privileged process makes packet sockets with "
		       "CAP_NET_RAW, and this test is not root\n");
		return;
	}
	start_privileged(true);
	priv_capture_begin("lo");
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, 0);
	priv_capture_end();
	ck_assert_msg(fd >= 0, "%s", strerror(errno));
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&sll, &len), 0);
	ck_assert_int_eq(sll.sll_family, AF_PACKET);
	ck_assert_int_eq(sll.sll_ifindex, (int)if_nametoindex("lo"));
	/* Its filter (classic or eBPF) is there and locked: not to be removed. */
	ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &locked, &llen), 0);
	ck_assert_int_eq(locked, 1);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_DETACH_FILTER, &dummy, sizeof(dummy)), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	close(fd);
	tu_privileged_end(privileged);
}
END_TEST

static void setup(void)
{
	log_open(true, 0);
}

static Suite *suite(void)
{
	Suite *s = suite_create("priv_socket");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_plain);
	tcase_add_test(tc, test_asked);
	tcase_add_test(tc, test_handed_over);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
