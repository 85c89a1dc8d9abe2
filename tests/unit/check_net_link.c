/* check_net_link: which interfaces there are and how they stack (net_link.c), on real links
 * in a network namespace of the test's own (a veth pair, a macvlan, a bridge, an ifb): the
 * RTM_GETLINK dump, the notifications of links made, changed and deleted, and the scan of
 * /proc/net/dev and sysfs where rtnetlink cannot be used (socket(AF_NETLINK) refused by a
 * seccomp filter, as under RestrictAddressFamilies=). */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <event2/event.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "net_int.h"
#include "testutil.h"
#include "util.h"

/* What the callbacks were told, in order. */
static struct link_info seen[64];
static size_t n_seen;
static int gone[16];
static size_t n_gone;
static unsigned settled, lost;

static void on_update(void *arg, const struct link_info *li)
{
	ck_assert_uint_lt(n_seen, ARRAY_SIZE(seen));
	seen[n_seen++] = *li;
}

static void on_gone(void *arg, int ifindex)
{
	ck_assert_uint_lt(n_gone, ARRAY_SIZE(gone));
	gone[n_gone++] = ifindex;
}

static void on_settle(void *arg)
{
	settled++;
}

static void on_lost(void *arg)
{
	lost++;
}

static struct net_links links = {
	.update = on_update, .gone = on_gone, .settle = on_settle, .lost = on_lost, .fd = -1};

static void forget(void)
{
	n_seen = n_gone = 0;
	settled = lost = 0;
}

/* The last update about name, NULL if none; how many there were in *n if n is not NULL. */
static const struct link_info *last_update(const char *name, size_t *n)
{
	const struct link_info *li = NULL;
	size_t count = 0;

	for (size_t i = 0; i < n_seen; i++)
		if (strcmp(seen[i].name, name) == 0)
			li = &seen[i], count++;
	if (n)
		*n = count;
	return li;
}

static bool updated(const char *name, unsigned flag, bool set)
{
	const struct link_info *li = last_update(name, NULL);

	return li && ((li->flags & flag) != 0) == set;
}

/* The master of name as last told; -1 if nothing was told of it. */
static int master_of(const char *name)
{
	const struct link_info *li = last_update(name, NULL);

	return li ? li->master : -1;
}

static bool was_gone(int ifindex)
{
	for (size_t i = 0; i < n_gone; i++)
		if (gone[i] == ifindex)
			return true;
	return false;
}

/* The links of every test: lo, a veth pair (v0, v1: each the other's peer, not stacked), a
 * macvlan on v0, a bridge with v1 as its port, an ifb that is up. (Kinds the kernels of
 * Debian and of CI all have built in or as modules.) */
static void make_links(void)
{
	tu_sh("ip link add v0 type veth peer name v1 && ip link add link v0 name mv0 type macvlan "
	      "&& ip link add br0 type bridge && ip link set v1 master br0 && "
	      "ip link add d0 type ifb && ip link set d0 up");
}

static const struct {
	const char *name, *kind, *scan_kind; /* scan_kind: what sysfs and the driver say */
	const char *master, *lower;
	bool loopback, up;
	unsigned arphrd;
} want[] = {
	{"lo", "", "", NULL, NULL, true, true, ARPHRD_LOOPBACK},
	{"v0", "veth", "veth", NULL, NULL, false, false, ARPHRD_ETHER},
	{"v1", "veth", "veth", "br0", NULL, false, false, ARPHRD_ETHER},
	{"mv0", "macvlan", "", NULL, "v0", false, false, ARPHRD_ETHER}, /* no DEVTYPE */
	{"br0", "bridge", "bridge", NULL, NULL, false, false, ARPHRD_ETHER},
	{"d0", "ifb", "ifb", NULL, NULL, false, true, ARPHRD_ETHER},
};

static int ix(const char *name)
{
	return name ? (int)if_nametoindex(name) : 0;
}

/* Every link told once, as it is; nothing else. */
static void assert_links(bool scan)
{
	ck_assert_uint_eq(n_seen, ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		size_t n;
		const struct link_info *li = last_update(want[i].name, &n);
		const char *kind = scan ? want[i].scan_kind : want[i].kind;

		ck_assert_msg(li && n == 1, "%s told %zu times", want[i].name, n);
		ck_assert_int_eq(li->ifindex, ix(want[i].name));
		ck_assert_msg(strcmp(li->kind, kind) == 0, "%s: kind \"%s\", not \"%s\"",
			      want[i].name, li->kind, kind);
		ck_assert_msg(li->master == ix(want[i].master), "%s: master %d", want[i].name,
			      li->master);
		ck_assert_msg(li->lower == ix(want[i].lower), "%s: lower %d", want[i].name,
			      li->lower);
		ck_assert_msg(li->loopback == want[i].loopback, "%s: loopback", want[i].name);
		ck_assert_msg(((li->flags & IFF_UP) != 0) == want[i].up, "%s: flags %#x",
			      want[i].name, li->flags);
		ck_assert_msg(li->arphrd == want[i].arphrd, "%s: link type %u", want[i].name,
			      li->arphrd);
	}
}

START_TEST(test_dump)
{
	TU_NEED_NETNS();
	make_links();
	forget();
	ck_assert_int_eq(net_link_dump(&links), 0);
	assert_links(false);
	ck_assert_uint_eq(n_gone, 0);
}
END_TEST

/* Links made, changed, enslaved, freed and deleted, as the kernel tells of them; a batch
 * ends in settle. A bridge's own notice that a port left it (AF_BRIDGE RTM_DELLINK) is not
 * the port gone. */
START_TEST(test_monitor)
{
	struct event_base *base;
	int d1, v1;

	TU_NEED_NETNS();
	make_links();
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	forget();
	ck_assert_int_eq(net_link_monitor(&links, base), 0);
	ck_assert_int_ge(links.fd, 0);

	tu_sh("ip link add d1 type ifb");
	TU_PUMP_UNTIL(base, 500, updated("d1", IFF_UP, false) && settled > 0);
	d1 = ix("d1");
	ck_assert_int_gt(d1, 0);
	ck_assert_str_eq(last_update("d1", NULL)->kind, "ifb");
	tu_sh("ip link set d1 up");
	TU_PUMP_UNTIL(base, 500, updated("d1", IFF_UP, true));
	tu_sh("ip link set d1 master br0");
	TU_PUMP_UNTIL(base, 500, master_of("d1") == ix("br0"));

	v1 = ix("v1");
	forget();
	tu_sh("ip link set v1 nomaster");
	TU_PUMP_UNTIL(base, 500, master_of("v1") == 0);
	ck_assert_msg(!was_gone(v1), "v1 taken for gone when it left the bridge");

	tu_sh("ip link del d1");
	TU_PUMP_UNTIL(base, 500, was_gone(d1));
	ck_assert_uint_eq(lost, 0);

	net_link_monitor_stop(&links);
	ck_assert_int_eq(links.fd, -1);
	ck_assert_ptr_null(links.ev);
	event_base_free(base);
}
END_TEST

/* Where rtnetlink cannot be used: /proc/net/dev and sysfs, of the namespace's own
 * (tu_netns_enter() mounts sysfs afresh). The kinds are those sysfs or the driver give (a
 * veth's and an ifb's driver, which are their kinds; a macvlan's names none); the stacking
 * the same. */
START_TEST(test_scan_without_rtnetlink)
{
	scmp_filter_ctx ctx;
	struct event_base *base;

	TU_NEED_NETNS();
	make_links();
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
					  SCMP_A0(SCMP_CMP_EQ, AF_NETLINK)),
			 0);
	ck_assert_int_eq(seccomp_load(ctx), 0);
	seccomp_release(ctx);
	ck_assert_int_eq(socket(AF_NETLINK, SOCK_RAW, 0), -1);

	forget();
	ck_assert_int_eq(net_link_dump(&links), 0);
	assert_links(true);
	base = event_base_new();
	ck_assert_int_eq(net_link_monitor(&links, base), -1);
	ck_assert_int_eq(links.fd, -1);
	event_base_free(base);
}
END_TEST

/* An ioctl whose request carries a pointer, on the named interface. */
START_TEST(test_dev_ioctl)
{
	struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};

	TU_NEED_NETNS();
	make_links();
	ck_assert_int_eq(net_link_dev_ioctl("v0", SIOCETHTOOL, &info), 0);
	ck_assert_str_eq(info.driver, "veth");
	memset(&info, 0, sizeof(info));
	info.cmd = ETHTOOL_GDRVINFO;
	ck_assert_int_eq(net_link_dev_ioctl("br0", SIOCETHTOOL, &info), 0);
	ck_assert_str_eq(info.driver, "bridge");
	errno = 0;
	ck_assert_int_eq(net_link_dev_ioctl("nosuch0", SIOCETHTOOL, &info), -1);
	ck_assert_int_eq(errno, ENODEV);
}
END_TEST

static Suite *net_link_suite(void)
{
	Suite *s = suite_create("net_link");
	TCase *tc = tcase_create("netns");

	tcase_add_test(tc, test_dump);
	tcase_add_test(tc, test_monitor);
	tcase_add_test(tc, test_scan_without_rtnetlink);
	tcase_add_test(tc, test_dev_ioctl);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(net_link_suite());
}
