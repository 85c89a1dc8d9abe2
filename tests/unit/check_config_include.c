/* check_config_include: config_include_each() names exactly the files libconfig reads for a
 * configuration's @include lines, as the linked libconfig reads them: each case is read by
 * libconfig itself, and the files it took (each sets a key of its own) must be the files named,
 * which must be the ones the case expects. */
#include "autoconf.h"

#include <check.h>
#include <fcntl.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config_include.h"
#include "testutil.h"
#include "util.h"

#define MAX_FILES 16

struct file {
	const char *name; /* below the case's directory */
	const char *text; /* NULL: "k<i> = 1;\n", the key that shows it was read */
};

struct named {
	char *v[MAX_FILES];
	size_t n;
	size_t stop_after; /* answer false for the file of this number (1, 2, ...); 0 never */
};

static bool name_it(const char *file, void *arg)
{
	struct named *nm = arg;

	ck_assert_uint_lt(nm->n, MAX_FILES);
	nm->v[nm->n++] = xstrdup(file);
	return nm->n != nm->stop_after;
}

static void put(const char *dir, const char *name, const char *text, size_t len)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "cannot write %s", path);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	free(path);
}

/* libconfig writes a backslash it drops from an @include name to stdout (its scanner's
 * default rule), where it would spoil the runner's summary line: stdout goes to /dev/null
 * from quiet_begin() to quiet_end(). */
static int quiet_begin(void)
{
	int saved = dup(STDOUT_FILENO), null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	ck_assert(saved >= 0 && null >= 0);
	fflush(stdout);
	ck_assert_int_ge(dup2(null, STDOUT_FILENO), 0);
	close(null);
	return saved;
}

static void quiet_end(int saved)
{
	fflush(stdout);
	ck_assert_int_ge(dup2(saved, STDOUT_FILENO), 0);
	close(saved);
}

/* top (len bytes) as main.conf beside files; libconfig reads it; the files it read, and the
 * ones config_include_each() names, must both be want (NULL-terminated, in order). */
static void check_case(const char *top, size_t len, const struct file *files,
		       const char *const *want)
{
	char dir[256], *path, *inc_dir, *key, *sub;
	struct named nm = {0};
	config_t lc;
	size_t i, n_want = 0;
	bool named;
	int quiet;

	tu_mkdtemp(dir, sizeof(dir), "%s/include.XXXXXX", tu_tmpdir());
	sub = xasprintf("%s/sub", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	free(sub);
	for (i = 0; files[i].name; i++) {
		char *text = files[i].text ? xstrdup(files[i].text) : xasprintf("k%zu = 1;\n", i);

		put(dir, files[i].name, text, strlen(text));
		free(text);
	}
	put(dir, "main.conf", top, len);
	path = xasprintf("%s/main.conf", dir);

	/* libconfig, set up as config.c sets it up */
	inc_dir = config_include_dir(path);
	config_init(&lc);
	config_set_include_dir(&lc, inc_dir);
	quiet = quiet_begin();
	(void)config_read_file(&lc, path);
	named = config_include_each(path, name_it, &nm);
	quiet_end(quiet);
	ck_assert(named);
	while (want[n_want])
		n_want++;
	ck_assert_msg(nm.n == n_want, "%zu files named, want %zu (first: %s)", nm.n, n_want,
		      nm.n ? nm.v[0] : "none");
	for (i = 0; i < n_want; i++) {
		char *w = xasprintf("%s/%s", inc_dir, want[i]);

		ck_assert_str_eq(nm.v[i], w);
		free(w);
	}
	/* what libconfig read: the files whose key it holds */
	for (i = 0; files[i].name; i++) {
		bool read, wanted = false;

		key = xasprintf("k%zu", i);
		read = config_lookup(&lc, key) != NULL;
		for (size_t j = 0; j < n_want; j++)
			wanted |= strcmp(want[j], files[i].name) == 0;
		ck_assert_msg(read == wanted, "libconfig %s %s, the walk %s it", read ? "read" : "did not read",
			      files[i].name, wanted ? "names" : "does not name");
		free(key);
	}
	config_destroy(&lc);
	for (i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(inc_dir);
	free(path);
	ck_assert_int_eq(tu_rm_tree(dir), 0);
}

START_TEST(test_long_line)
{
	/* the trust check once read lines of 4,096 bytes: the include came after them */
	static const struct file files[] = {{"a.conf", NULL}, {NULL, NULL}};
	static const char *const want[] = {"a.conf", NULL};
	char *top = xasprintf("x = 1;\n%*s@include \"a.conf\"\n", 9000, "");

	check_case(top, strlen(top), files, want);
	free(top);
}
END_TEST

START_TEST(test_glob_characters)
{
	/* libconfig opens the name as it is: no pattern, nothing it would match */
	static const struct file files[] = {
		{"b[a]d.conf", NULL}, {"bad.conf", NULL}, {"*.conf", NULL}, {"star.conf", NULL},
		{"q?.conf", NULL}, {"qq.conf", NULL}, {NULL, NULL}};
	static const char *const want[] = {"b[a]d.conf", "*.conf", "q?.conf", NULL};
	static const char top[] = "@include \"b[a]d.conf\"\n@include \"*.conf\"\n"
				  "\t @include\t\"q?.conf\"\n";

	check_case(top, sizeof(top) - 1, files, want);
}
END_TEST

START_TEST(test_not_includes)
{
	/* in comments, in a string that runs over lines, not at a line's start */
	static const struct file files[] = {{"c1.conf", NULL}, {"c2.conf", NULL},
					    {"c3.conf", NULL}, {"s.conf", NULL},
					    {"real.conf", NULL}, {NULL, NULL}};
	static const char *const want[] = {"real.conf", NULL};
	static const char top[] = "/* a comment\n@include \"c1.conf\"\n*/\n"
				  "# @include \"c2.conf\"\n"
				  "// @include \"c3.conf\"\n"
				  "s = \"first\n@include \\\"s.conf\\\" \";\n"
				  "t = \"a \\\\\";\n"
				  "@include \"real.conf\"\n";

	check_case(top, sizeof(top) - 1, files, want);
}
END_TEST

START_TEST(test_escapes)
{
	/* \" and \\ in a name; any other backslash is dropped; line ends of CR LF */
	static const struct file files[] = {{"q\"x.conf", NULL}, {"b\\s.conf", NULL},
					    {"drop.conf", NULL}, {"dr\\op.conf", NULL},
					    {NULL, NULL}};
	static const char *const want[] = {"q\"x.conf", "b\\s.conf", "drop.conf", NULL};
	static const char top[] = "@include \"q\\\"x.conf\"\r\n@include \"b\\\\s.conf\"\r\n"
				  "@include \"dr\\op.conf\"\r\n";

	check_case(top, sizeof(top) - 1, files, want);
}
END_TEST

START_TEST(test_nested)
{
	/* an included file's includes are taken from the first file's directory too */
	static const struct file files[] = {{"sub/n.conf", "@include \"leaf.conf\"\nk0 = 1;\n"},
					    {"leaf.conf", NULL}, {"sub/leaf.conf", NULL},
					    {NULL, NULL}};
	static const char *const want[] = {"sub/n.conf", "leaf.conf", NULL};
	static const char top[] = "@include \"sub/n.conf\"\n";

	check_case(top, sizeof(top) - 1, files, want);
}
END_TEST

START_TEST(test_state_carried_out)
{
	/* a comment an included file leaves open goes on in the file that included it */
	static const struct file files[] = {{"open.conf", "k0 = 1; /* open\n"},
					    {"hidden.conf", NULL}, {"after.conf", NULL},
					    {NULL, NULL}};
	static const char *const want[] = {"open.conf", "after.conf", NULL};
	static const char top[] = "@include \"open.conf\"\n@include \"hidden.conf\"\n*/\n"
				  "@include \"after.conf\"\n";

	check_case(top, sizeof(top) - 1, files, want);
}
END_TEST

START_TEST(test_missing_ends)
{
	/* libconfig stops at an include it cannot open; the walk names it, then stops too */
	static const struct file files[] = {{"a.conf", NULL}, {"b.conf", NULL}, {NULL, NULL}};
	static const char *const want[] = {"a.conf", "missing.conf", NULL};
	static const char top[] = "@include \"a.conf\"\n@include \"missing.conf\"\n"
				  "@include \"b.conf\"\n";

	check_case(top, sizeof(top) - 1, files, want);
}
END_TEST

START_TEST(test_refused_stops)
{
	/* each() saying no ends the walk with false, and nothing after is named */
	char dir[256], *path;
	struct named nm = {.stop_after = 1};

	tu_mkdtemp(dir, sizeof(dir), "%s/include.XXXXXX", tu_tmpdir());
	put(dir, "a.conf", "@include \"b.conf\"\n", 18);
	put(dir, "b.conf", "", 0);
	put(dir, "main.conf", "@include \"a.conf\"\n@include \"b.conf\"\n", 36);
	path = xasprintf("%s/main.conf", dir);
	ck_assert(!config_include_each(path, name_it, &nm));
	ck_assert_uint_eq(nm.n, 1);
	ck_assert(strstr(nm.v[0], "/a.conf") != NULL);
	free(nm.v[0]);
	free(path);
	ck_assert_int_eq(tu_rm_tree(dir), 0);
}
END_TEST

START_TEST(test_include_dir)
{
	char *d;

	ck_assert_str_eq((d = config_include_dir("/etc/entropyd.conf")), "/etc");
	free(d);
	ck_assert_str_eq((d = config_include_dir("/x.conf")), "/");
	free(d);
	ck_assert_str_eq((d = config_include_dir("x.conf")), ".");
	free(d);
	ck_assert_str_eq((d = config_include_dir("a/b/x.conf")), "a/b");
	free(d);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("config_include");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_glob_characters);
	tcase_add_test(tc, test_not_includes);
	tcase_add_test(tc, test_escapes);
	tcase_add_test(tc, test_nested);
	tcase_add_test(tc, test_state_carried_out);
	tcase_add_test(tc, test_missing_ends);
	tcase_add_test(tc, test_refused_stops);
	tcase_add_test(tc, test_include_dir);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
