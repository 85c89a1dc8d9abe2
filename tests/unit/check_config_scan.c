/* check_config_scan: the setting on a line given before in its group (config_scan.c), which
 * libconfig's "duplicate setting name" does not name: its full key and the line of the first,
 * through groups, lists of groups, arrays, strings, comments and @include lines. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_scan.h"
#include "testutil.h"
#include "util.h"

struct scan_case {
	const char *text;
	unsigned line;   /* asked about */
	const char *key; /* NULL: no duplicate there */
	unsigned first;
};

static const struct scan_case cases[] = {
	/* the top level */
	{"a = 1;\nb = 2;\na = 3;\n", 3, "a", 1},
	/* in a group; ':' as well as '=' */
	{"feed = {\n  mode = \"auto\";\n  reseed = true;\n  mode: \"boot\";\n};\n", 4, "feed.mode",
	 2},
	/* a group given twice at the top */
	{"feed = { mode = \"auto\"; };\npolicy = {};\nfeed = { reseed = true; };\n", 3, "feed", 1},
	/* the same name in another group is no duplicate */
	{"feed = { mode = 1; };\npolicy = { mode = 2; };\n", 2, NULL, 0},
	/* nor in another element of a list of groups; within one element it is */
	{"policy = { network = { instances = (\n  { name = \"eth0\"; },\n  { name = \"eth1\";\n"
	 "    name = \"eth2\"; } ); }; };\n",
	 4, "policy.network.instances[1].name", 3},
	{"policy = { network = { instances = (\n  { name = \"eth0\"; },\n  { name = \"eth1\"; } );"
	 " }; };\n",
	 3, NULL, 0},
	/* names inside strings and comments of every kind are not settings */
	{"x = \"mode = 1; {\";\n# mode = 2;\n// mode = 3;\n/* mode = 4;\n   mode = 5; */\n"
	 "mode = 6;\nmode = 7;\n",
	 7, "mode", 6},
	{"x = \"a \\\" mode = 1\";\nmode = 2;\n", 2, NULL, 0},
	/* an array's elements are no settings, and do not end the group */
	{"g = { l = [ \"a\", \"b\" ]; k = 1;\n k = 2; };\n", 2, "g.k", 1},
	/* an @include line is skipped */
	{"@include \"x.conf\"\nk = 1;\nk = 2;\n", 3, "k", 2},
	/* asked about a line with no setting, or past the end */
	{"a = 1;\na = 2;\n", 1, NULL, 0},
	{"a = 1;\na = 2;\n", 9, NULL, 0},
	/* names with digits, '_', '-', '*' */
	{"max_events-2 = 1;\nmax_events-2 = 2;\n", 2, "max_events-2", 1},
	/* a deep nesting: every open group in the key */
	{"a = { b = { c = ( { d = { e = 1;\n e = 2; }; } ); }; };\n", 2, "a.b.c[0].d.e", 1},
};

START_TEST(test_duplicate)
{
	const struct scan_case *c = &cases[_i];
	char *path = xasprintf("%s/scan.XXXXXX", tu_tmpdir()), key[128] = "";
	unsigned first = 12345;
	int fd = mkstemp(path);
	bool found;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, c->text, strlen(c->text)), (ssize_t)strlen(c->text));
	close(fd);
	found = config_scan_duplicate(path, c->line, key, sizeof(key), &first);
	if (!c->key) {
		ck_assert_msg(!found, "case %d: line %u: found %s (first %u)", _i, c->line, key, first);
		ck_assert_uint_eq(first, 12345);
	} else {
		ck_assert_msg(found, "case %d: line %u: nothing found", _i, c->line);
		ck_assert_str_eq(key, c->key);
		ck_assert_uint_eq(first, c->first);
	}
	unlink(path);
	free(path);
}
END_TEST

/* A key longer than the buffer is cut, never overrun; a file that cannot be read, or no room
 * at all, is nothing found. */
START_TEST(test_limits)
{
	const char *text = "policy = { network = { instances = (\n { name = \"a\";\n name = \"b\"; }"
			   " ); }; };\n";
	char *path = xasprintf("%s/scan.XXXXXX", tu_tmpdir()), key[16];
	unsigned first = 0;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	memset(key, 'x', sizeof(key));
	ck_assert(config_scan_duplicate(path, 3, key, 10, &first));
	ck_assert_uint_eq(first, 2);
	ck_assert_str_eq(key, "policy.ne");
	ck_assert_int_eq(key[10], 'x');
	ck_assert(!config_scan_duplicate(path, 3, key, 0, &first));
	unlink(path);
	ck_assert(!config_scan_duplicate(path, 3, key, sizeof(key), &first));
	free(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("config_scan");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_duplicate, 0, ARRAY_SIZE(cases));
	tcase_add_test(tc, test_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
