/* check_priv_trust: what root reads and makes for the collector only where root alone can
 * change it (priv_trust.c), on real files under /tmp (sticky, so trusted): the configuration
 * and its includes (owner, mode, a link, a directory others can write), and the recording
 * directory (made 0700 for the collector's user, one there already of another user, one
 * anyone can write, a link; a link put there and taken away while it is made). The files must
 * be root's to be trusted: not root, the test checks that its own are refused, and says so. */
#include "autoconf.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "priv_trust.h"
#include "testutil.h"
#include "util.h"

static char dir[64];

static void setup(void)
{
	log_open(true, 0);
	tu_mkdtemp(dir, sizeof(dir), "%s/priv_trust.XXXXXX", tu_tmpdir());
	ck_assert_int_eq(chmod(dir, 0755), 0);
}

static void teardown(void)
{
	ck_assert_int_eq(tu_rm_tree(dir), 0);
}

static char *put(const char *name, const char *text, mode_t mode)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "we");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
	return path;
}

static bool root(const char *test)
{
	if (geteuid() == 0)
		return true;
	printf("%s: not root: its own files are not root's, and each is refused\n", test);
	return false;
}

START_TEST(test_config)
{
	char why[512];
	char *ok = put("ok.conf", "feed = { mode = \"auto\"; };\n", 0644);
	char *open_to_all = put("all.conf", "feed = { mode = \"auto\"; };\n", 0666);
	char *group = put("group.conf", "feed = { mode = \"auto\"; };\n", 0664);
	char *link = xasprintf("%s/link.conf", dir);
	char *want;

	ck_assert_int_eq(symlink(ok, link), 0);
	if (!root("test_config")) {
		ck_assert(!priv_trust_config(ok, why, sizeof(why)));
		ck_assert_ptr_nonnull(strstr(why, "not root: chown root"));
		goto out;
	}
	ck_assert_msg(priv_trust_config(ok, why, sizeof(why)), "%s", why);
	ck_assert(!priv_trust_config(open_to_all, why, sizeof(why)));
	want = xasprintf("%s: writable by anyone (mode 0666): chmod go-w %s", open_to_all,
			 open_to_all);
	ck_assert_str_eq(why, want);
	free(want);
	ck_assert(!priv_trust_config(group, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "writable by its group (mode 0664)"));
	ck_assert(!priv_trust_config(link, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "not a regular file (a symbolic link?)"));
	ck_assert_int_eq(chown(ok, 65534, 65534), 0);
	ck_assert(!priv_trust_config(ok, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "owned by uid 65534, not root: chown root"));
	/* A directory above it that others can write (and not sticky). */
	ck_assert_int_eq(chown(ok, 0, 0), 0);
	ck_assert_int_eq(chmod(dir, 0777), 0);
	ck_assert(!priv_trust_config(ok, why, sizeof(why)));
	ck_assert_ptr_nonnull(strstr(why, "is writable by others (mode 0777): chmod go-w"));
out:
	free(ok), free(open_to_all), free(group), free(link);
}
END_TEST

/* Every file an @include line names is checked as the file itself; one not there needs only
 * directories root alone can write. */
START_TEST(test_include)
{
	char why[512];
	char *inc = put("inc.conf", "policy = { input = { mode = \"trusted\"; }; };\n", 0666);
	char *text = xstrdup("feed = { mode = \"auto\"; };\n@include \"inc.conf\"\n");
	char *main_file = put("main.conf", text, 0644); /* its name: below the file's directory */
	char *want;

	if (!root("test_include")) {
		ck_assert(!priv_trust_config(main_file, why, sizeof(why)));
		goto out;
	}
	ck_assert(!priv_trust_config(main_file, why, sizeof(why)));
	want = xasprintf("%s: writable by anyone (mode 0666): chmod go-w %s", inc, inc);
	ck_assert_str_eq(why, want);
	free(want);
	ck_assert_int_eq(chmod(inc, 0644), 0);
	ck_assert_msg(priv_trust_config(main_file, why, sizeof(why)), "%s", why);
	ck_assert_int_eq(unlink(inc), 0);
	ck_assert_msg(priv_trust_config(main_file, why, sizeof(why)), "%s", why);
out:
	free(inc), free(text), free(main_file);
}
END_TEST

/* The recording directory: made 0700 and given to the collector's user; one there of that
 * user is ready; another user's is said; one anyone can write, a link, or a relative path
 * are refused. */
START_TEST(test_record_dir)
{
	char why[512];
	char *rec = xasprintf("%s/rec", dir), *link = xasprintf("%s/reclink", dir);
	char *open_to_all = xasprintf("%s/all", dir);
	struct stat st;

	ck_assert_int_eq(priv_trust_record_dir("relative", 65534, 65534, why, sizeof(why)),
			 TRUST_DIR_REFUSED);
	ck_assert_ptr_nonnull(strstr(why, "not an absolute path"));
	if (!root("test_record_dir")) {
		ck_assert_int_eq(priv_trust_record_dir(rec, getuid(), getgid(), why, sizeof(why)),
				 TRUST_DIR_REFUSED);
		goto out;
	}
	ck_assert_int_eq(priv_trust_record_dir(rec, 65534, 65534, why, sizeof(why)),
			 TRUST_DIR_READY);
	ck_assert_int_eq(lstat(rec, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_uint_eq(st.st_uid, 65534);
	ck_assert_int_eq(priv_trust_record_dir(rec, 65534, 65534, why, sizeof(why)),
			 TRUST_DIR_READY); /* there already, the user's */
	ck_assert_int_eq(priv_trust_record_dir(rec, 999, 999, why, sizeof(why)),
			 TRUST_DIR_NOT_USERS);
	ck_assert_ptr_nonnull(strstr(why, "owned by uid 65534"));
	ck_assert_int_eq(mkdir(open_to_all, 0777), 0);
	ck_assert_int_eq(chmod(open_to_all, 0777), 0);
	ck_assert_int_eq(priv_trust_record_dir(open_to_all, 65534, 65534, why, sizeof(why)),
			 TRUST_DIR_REFUSED);
	ck_assert_ptr_nonnull(strstr(why, "writable by anyone (mode 0777)"));
	ck_assert_int_eq(symlink(rec, link), 0);
	ck_assert_int_eq(priv_trust_record_dir(link, 65534, 65534, why, sizeof(why)),
			 TRUST_DIR_REFUSED);
	ck_assert_ptr_nonnull(strstr(why, "a symbolic link: give the directory itself"));
	/* Under a directory another user owns: refused before anything is made. */
	ck_assert_int_eq(chown(open_to_all, 65534, 65534), 0);
	ck_assert_int_eq(chmod(open_to_all, 0755), 0);
	free(link);
	link = xasprintf("%s/below", open_to_all);
	ck_assert_int_eq(priv_trust_record_dir(link, 65534, 65534, why, sizeof(why)),
			 TRUST_DIR_REFUSED);
	ck_assert_ptr_nonnull(strstr(why, "is owned by uid 65534, not root"));
	ck_assert_int_eq(lstat(link, &st), -1);
out:
	free(rec), free(link), free(open_to_all);
}
END_TEST

/* A user who can write in record.dir's parent (sticky, as /tmp) puts a link there and takes it
 * away, over and over, while root makes the directory: each attempt either makes it for the
 * collector's user or is refused as a link or as replaced while it was opened, never with
 * another reason (mkdirat() meeting the link and openat() finding nothing once read "No such
 * file or directory"). The racer here is root, which the sticky bit lets remove its own link. */
START_TEST(test_record_dir_race)
{
	enum { ATTEMPTS = 20000 };
	char why[512], bad[640];
	char *sticky = xasprintf("%s/sticky", dir), *rec = xasprintf("%s/sticky/rec", dir);
	char *target = xasprintf("%s/target", dir);
	int made = 0, refused = 0;
	pid_t racer;

	if (!root("test_record_dir_race"))
		goto out;
	ck_assert_int_eq(mkdir(sticky, 0755), 0);
	ck_assert_int_eq(chmod(sticky, 01777), 0);
	ck_assert_int_eq(mkdir(target, 0700), 0);
	racer = fork();
	ck_assert_int_ge(racer, 0);
	if (racer == 0) {
		for (;;) {
			(void)symlink(target, rec);
			(void)unlink(rec);
		}
	}
	/* The racer is stopped before any assertion, so that a failure leaves it not running. */
	bad[0] = '\0';
	for (int i = 0; i < ATTEMPTS && !bad[0]; i++) {
		switch (priv_trust_record_dir(rec, 65534, 65534, why, sizeof(why))) {
		case TRUST_DIR_READY:
			made++;
			if (rmdir(rec) < 0)
				snprintf(bad, sizeof(bad), "attempt %d: rmdir: %s", i, strerror(errno));
			break;
		case TRUST_DIR_REFUSED:
			refused++;
			if (!strstr(why, ": a symbolic link: give the directory itself") &&
			    !strstr(why, ": replaced while it was opened (a symbolic link?)"))
				snprintf(bad, sizeof(bad), "attempt %d refused for another reason: %s", i,
					 why);
			break;
		default:
			snprintf(bad, sizeof(bad), "attempt %d: %s", i, why);
		}
	}
	kill(racer, SIGKILL);
	ck_assert_int_eq(waitpid(racer, NULL, 0), racer);
	ck_assert_msg(!bad[0], "%s", bad);
	ck_assert_msg(refused > 0, "the racer never won (%d made): nothing was tested", made);
	fprintf(stderr, "test_record_dir_race: %d made, %d refused\n", made, refused);
out:
	free(sticky), free(rec), free(target);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("priv_trust");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_config);
	tcase_add_test(tc, test_include);
	tcase_add_test(tc, test_record_dir);
	tcase_add_test(tc, test_record_dir_race);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
