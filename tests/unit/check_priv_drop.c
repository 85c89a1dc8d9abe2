/* check_priv_drop: each process keeps only the capabilities it needs (priv_drop.c), read back
 * from /proc/self/status: the privileged process CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL, in
 * every set and the bounding set; the collector none, as the user it was given, with no
 * group, no way back to uid 0 and no core dump; and the users that can be the collector's.
 * Dropping needs root: not root, the test checks what it can and says what it skipped. Each
 * test runs in a process of its own (Check forks), so what it drops goes with it. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "log.h"
#include "priv_drop.h"
#include "testutil.h"
#include "util.h"

#define KEPT ((1ull << CAP_SYS_ADMIN) | (1ull << CAP_NET_RAW) | (1ull << CAP_KILL))

/* A capability set of this process, from /proc/self/status ("CapEff", "CapBnd"...). */
static uint64_t caps(const char *set)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256], key[16];
	uint64_t v = 0;
	bool found = false;

	ck_assert_ptr_nonnull(f);
	snprintf(key, sizeof(key), "%s:", set);
	while (!found && fgets(line, sizeof(line), f))
		found = strncmp(line, key, strlen(key)) == 0 &&
			sscanf(line + strlen(key), "%" SCNx64, &v) == 1;
	fclose(f);
	ck_assert_msg(found, "no %s in /proc/self/status", set);
	return v;
}

static bool root(const char *test)
{
	if (geteuid() == 0 && caps("CapEff") != 0)
		return true;
	printf("%s: skipped: dropping capabilities needs root with them\n", test);
	return false;
}

START_TEST(test_drop)
{
	char *log;

	if (!root("test_drop")) {
		ck_assert_int_eq(priv_drop(), 0); /* none held: nothing to do */
		return;
	}
	ck_assert_uint_ne(caps("CapEff") & ~KEPT, 0);
	log_open(true, 1);
	tu_capture_begin();
	ck_assert_int_eq(priv_drop(), 0);
	log = tu_capture_end();
	ck_assert_uint_eq(caps("CapEff"), KEPT);
	ck_assert_uint_eq(caps("CapPrm"), KEPT);
	ck_assert_uint_eq(caps("CapInh"), 0);
	ck_assert_uint_eq(caps("CapAmb"), 0);
	ck_assert_uint_eq(caps("CapBnd"), KEPT);
	ck_assert_ptr_nonnull(
		strstr(log, "capabilities: kept CAP_SYS_ADMIN, CAP_NET_RAW and CAP_KILL, dropped "
			    "the rest"));
	free(log);
	ck_assert_int_eq(priv_drop(), 0); /* again: nothing more to drop */
	ck_assert_uint_eq(caps("CapEff"), KEPT);
}
END_TEST

START_TEST(test_users)
{
	char why[512];
	uid_t uid;
	gid_t gid;

	ck_assert(!priv_drop_lookup("root", &uid, &gid));
	ck_assert(!priv_drop_lookup("nosuchuser9", &uid, &gid));
	ck_assert(priv_drop_lookup("nobody", &uid, &gid));
	ck_assert_uint_eq(uid, 65534);
	ck_assert(!priv_drop_collector_user("root", &uid, &gid, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "user root is uid 0, root's"));
	ck_assert(!priv_drop_collector_user("nosuchuser9", &uid, &gid, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "no user nosuchuser9 on this system"));
	ck_assert_ptr_nonnull(strstr(why, "adduser --system --group --no-create-home"));
	ck_assert(priv_drop_collector_user("nobody", &uid, &gid, why, sizeof(why)));
	ck_assert_uint_eq(uid, 65534);
	ck_assert_uint_eq(gid, 65534);
}
END_TEST

/* The collector: nobody's ids, everywhere; no group; no capability, bounding set included;
 * no way back to root; not dumpable. */
START_TEST(test_collector)
{
	bool bounding = false;
	uid_t r, e, s;

	log_open(true, 0);
	if (!root("test_collector")) {
		tu_capture_begin();
		ck_assert_int_eq(priv_drop_collector("nobody", &bounding), -1);
		free(tu_capture_end());
		return;
	}
	ck_assert_int_eq(priv_drop_collector("nobody", &bounding), 0);
	ck_assert(bounding);
	ck_assert_int_eq(getresuid(&r, &e, &s), 0);
	ck_assert(r == 65534 && e == 65534 && s == 65534);
	ck_assert_int_eq(getgroups(0, NULL), 0);
	ck_assert_int_eq(getgid(), 65534);
	ck_assert_uint_eq(caps("CapEff"), 0);
	ck_assert_uint_eq(caps("CapPrm"), 0);
	ck_assert_uint_eq(caps("CapBnd"), 0);
	ck_assert_int_eq(setuid(0), -1);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_eq(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 0);
}
END_TEST

START_TEST(test_collector_root_refused)
{
	bool bounding = true;
	char *log;

	log_open(true, 0);
	tu_capture_begin();
	ck_assert_int_eq(priv_drop_collector("root", &bounding), -1);
	log = tu_capture_end();
	ck_assert_ptr_nonnull(strstr(log, "the collector never runs as root"));
	ck_assert(!bounding);
	free(log);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("priv_drop");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_drop);
	tcase_add_test(tc, test_users);
	tcase_add_test(tc, test_collector);
	tcase_add_test(tc, test_collector_root_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
