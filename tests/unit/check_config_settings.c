/* check_config_settings: the table engine behind the configuration (config_settings.c), on a
 * table of its own here with a key of every type: defaults, parsing, each problem said with
 * its file, line, key and what is allowed, messages in file and line order, -p's printing
 * (which reads back the same), and the list of keys. */
#include "autoconf.h"

#include <check.h>
#include <libconfig.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_settings.h"
#include "testutil.h"
#include "util.h"

struct thing {
	bool on;
	int count;
	int64_t big;
	double ratio;
	char *label;
	char *path;
	int color;
	struct strlist names;
	struct strlist tags;
};

enum { BIT_COUNT = 1, BIT_RATIO = 2 };

static const char *const colors[] = {"red", "green", "blue", NULL};
static const char *const auto_list[] = {"auto", NULL};
static const char *const two_tags[] = {"x", "y", NULL};

static const struct setting sub_tab[] = {
	{.key = "name", .type = SET_STRING, .offset = offsetof(struct thing, label),
	 .flags = SF_REQUIRED | SF_NONEMPTY, .help = "its name"},
	{0},
};

static const struct setting tab[] = {
	{.key = "on", .type = SET_BOOL, .offset = offsetof(struct thing, on), .def_num = 1,
	 .help = "switched on"},
	{.key = "count", .type = SET_INT, .offset = offsetof(struct thing, count),
	 .set_bit = BIT_COUNT, .min = 8, .max = 4096, .def_num = 64, .unit = "bits",
	 .help = "how many"},
	{.key = "big", .type = SET_INT64, .offset = offsetof(struct thing, big), .min = 0,
	 .max = 1e12, .def_num = 5e9, .help = "a large one"},
	{.key = "ratio", .type = SET_FLOAT, .offset = offsetof(struct thing, ratio),
	 .set_bit = BIT_RATIO, .flags = SF_MIN_EXCL | SF_MAX_EXCL, .min = 0, .max = 1,
	 .def_num = 0.25, .help = "a share"},
	{.key = "label", .type = SET_STRING, .offset = offsetof(struct thing, label),
	 .flags = SF_NONEMPTY, .def_str = "first", .help = "what it is called"},
	{.key = "path", .type = SET_STRING, .offset = offsetof(struct thing, path),
	 .flags = SF_ABSPATH, .def_str = "/run/x", .help = "where it is"},
	{.key = "color", .type = SET_ENUM, .offset = offsetof(struct thing, color), .names = colors,
	 .def_num = 2, .help = "its colour"},
	{.key = "names", .type = SET_STRLIST, .offset = offsetof(struct thing, names),
	 .flags = SF_NONEMPTY | SF_AUTO, .def_list = auto_list, .example = "[ \"a\", \"b*\" ]",
	 .help = "what it picks"},
	{.key = "tags", .type = SET_STRLIST, .offset = offsetof(struct thing, tags),
	 .def_list = two_tags, .help = "labels"},
	{.key = "more", .type = SET_GROUP, .help = "a group of its own"},
	{.key = "items", .type = SET_GROUPLIST, .sub = sub_tab, .help = "a list of groups"},
	{0},
};

struct parsed {
	struct thing t;
	unsigned given;
	struct config_errors errs;
	config_t lc;
};

/* text read by libconfig as the file "t.conf" (or what include names), then config_settings_apply
 * over its group "g" into a thing with every default. */
static void parse(struct parsed *p, const char *text)
{
	struct settings_ctx ctx;

	memset(p, 0, sizeof(*p));
	config_settings_defaults(tab, &p->t);
	config_init(&p->lc);
	ck_assert_msg(config_read_string(&p->lc, text) == CONFIG_TRUE, "libconfig: %s",
		      config_error_text(&p->lc));
	config_settings_ctx_init(&ctx, "t.conf");
	p->given = config_settings_apply(&ctx, tab, config_lookup(&p->lc, "g"), "g", &p->t);
	config_settings_ctx_finish(&ctx, &p->errs);
}

static void parsed_free(struct parsed *p)
{
	config_settings_free(tab, &p->t);
	config_destroy(&p->lc);
	config_errors_free(&p->errs);
}

START_TEST(test_defaults)
{
	struct thing t;

	memset(&t, 0, sizeof(t));
	config_settings_defaults(tab, &t);
	ck_assert(t.on);
	ck_assert_int_eq(t.count, 64);
	ck_assert_int_eq(t.big, 5000000000L);
	ck_assert(t.ratio == 0.25);
	ck_assert_str_eq(t.label, "first");
	ck_assert_str_eq(t.path, "/run/x");
	ck_assert_int_eq(t.color, 2);
	ck_assert_uint_eq(t.names.n, 1);
	ck_assert_str_eq(t.names.v[0], "auto");
	ck_assert_uint_eq(t.tags.n, 2);
	/* again over what is there: replaced, not added to */
	config_settings_defaults(tab, &t);
	ck_assert_uint_eq(t.tags.n, 2);
	config_settings_free(tab, &t);
	ck_assert_ptr_null(t.label);
	ck_assert_uint_eq(t.names.n, 0);
	ck_assert_ptr_null(t.names.v);
}
END_TEST

START_TEST(test_values)
{
	struct parsed p;

	parse(&p, "g = { on = false; count = 4096; big = 1000000000000L; ratio = 0.5;\n"
		  "  label = \"second\"; path = \"/etc/x\"; color = \"red\"; names = [ \"a\", \"b*\" ];\n"
		  "  tags = []; more = { anything = 1; }; items = ( { name = \"n\"; } ); };\n");
	ck_assert_uint_eq(p.errs.n, 0);
	ck_assert_uint_eq(p.given, BIT_COUNT | BIT_RATIO);
	ck_assert(!p.t.on);
	ck_assert_int_eq(p.t.count, 4096);
	ck_assert_int_eq(p.t.big, 1000000000000L);
	ck_assert(p.t.ratio == 0.5);
	ck_assert_str_eq(p.t.label, "second");
	ck_assert_str_eq(p.t.path, "/etc/x");
	ck_assert_int_eq(p.t.color, 0);
	ck_assert_uint_eq(p.t.names.n, 2);
	ck_assert_str_eq(p.t.names.v[1], "b*");
	ck_assert_uint_eq(p.t.tags.n, 0);
	/* an integer is a number too where a fraction is allowed; an empty list of groups may
	 * be written [] */
	parsed_free(&p);
	parse(&p, "g = { count = 8; items = []; names = ( \"auto\" ); };\n");
	ck_assert_uint_eq(p.errs.n, 0);
	ck_assert_uint_eq(p.given, BIT_COUNT);
	parsed_free(&p);
	/* nothing given: nothing changes */
	parse(&p, "h = 1;\n");
	ck_assert_uint_eq(p.given, 0);
	ck_assert_uint_eq(p.errs.n, 0);
	ck_assert_int_eq(p.t.count, 64);
	parsed_free(&p);
}
END_TEST

/* One wrong key each: the message, and the key keeps its value. */
static const struct {
	const char *group, *said;
} bad[] = {
	{"on = 1;", "t.conf:1: g.on: wrong type (an integer); allowed: true or false"},
	{"count = 7;", "t.conf:1: g.count: 7 is out of range; allowed: an integer from 8 to 4096 bits"},
	{"count = 8.0;",
	 "t.conf:1: g.count: wrong type (a number with a fraction); allowed: an integer from 8 to "
	 "4096 bits"},
	{"big = -1;", "t.conf:1: g.big: -1 is out of range; allowed: an integer from 0 to "
		      "1000000000000"},
	{"ratio = 0;", "t.conf:1: g.ratio: 0 is out of range; allowed: a number > 0 and < 1"},
	{"ratio = 1.0;", "t.conf:1: g.ratio: 1.0 is out of range; allowed: a number > 0 and < 1"},
	{"label = \"\";", "t.conf:1: g.label: the value is empty; allowed: a non-empty string"},
	{"path = \"etc\";", "t.conf:1: g.path: \"etc\" is not an absolute path; allowed: an "
			    "absolute path (a string starting with \"/\")"},
	{"color = \"Red\";", "t.conf:1: g.color: unknown value \"Red\"; allowed: \"red\", "
			     "\"green\", \"blue\""},
	{"names = [];", "t.conf:1: g.names: the list is empty; allowed: [ \"auto\" ], or a "
			"non-empty list of names or globs, e.g. [ \"a\", \"b*\" ]"},
	{"names = [ \"a\", \"auto\" ];", "t.conf:1: g.names: \"auto\" mixed with names; allowed: "
					 "[ \"auto\" ], or a non-empty list of names or globs, "
					 "e.g. [ \"a\", \"b*\" ]"},
	{"tags = [ \"\" ];", "t.conf:1: g.tags[0]: the value is empty; allowed: a list of "
			     "non-empty strings, e.g. [ \"a\", \"b*\" ] or []"},
	{"tags = \"x\";", "t.conf:1: g.tags: wrong type (a string); allowed: a list of non-empty "
			  "strings, e.g. [ \"a\", \"b*\" ] or []"},
	{"more = 1;", "t.conf:1: g.more: wrong type (an integer); allowed: a group { key = "
		      "value; ... }"},
	{"items = { name = \"x\"; };", "t.conf:1: g.items: wrong type (a group); allowed: a list "
				       "of groups ( { key = value; ... }, ... )"},
	{"colour = \"red\";", "t.conf:1: g.colour: unknown key; allowed: on, count, big, ratio, "
			      "label, path, color, names, tags, more, items"},
};

START_TEST(test_bad)
{
	char *text = xasprintf("g = { %s };\n", bad[_i].group);
	struct parsed p;
	struct thing def;

	memset(&def, 0, sizeof(def));
	config_settings_defaults(tab, &def);
	parse(&p, text);
	ck_assert_uint_eq(p.errs.n, 1);
	ck_assert_str_eq(p.errs.msg[0], bad[_i].said);
	ck_assert_uint_eq(p.given, 0);
	/* the key in error keeps its value */
	ck_assert(p.t.on == def.on && p.t.count == def.count && p.t.big == def.big &&
		  p.t.ratio == def.ratio && p.t.color == def.color);
	ck_assert_str_eq(p.t.label, def.label);
	ck_assert_str_eq(p.t.path, def.path);
	ck_assert_uint_eq(p.t.names.n, def.names.n);
	ck_assert_uint_eq(p.t.tags.n, def.tags.n);
	parsed_free(&p);
	config_settings_free(tab, &def);
	free(text);
}
END_TEST

/* Every problem of a group at once, in line order, errors apart from notices; a required key
 * of a group of the list is missing where the group is. */
START_TEST(test_all_at_once)
{
	struct settings_ctx ctx;
	struct config_errors errs = {0};
	struct thing t;
	config_t lc;
	const config_setting_t *items, *el;

	memset(&t, 0, sizeof(t));
	config_settings_defaults(tab, &t);
	config_init(&lc);
	ck_assert(config_read_string(&lc, "g = {\n  count = 1;\n  ratio = 2.0;\n"
					  "  items = ( { },\n  { name = 3; } );\n  on = \"x\";\n};\n"));
	config_settings_ctx_init(&ctx, "t.conf");
	config_settings_apply(&ctx, tab, config_lookup(&lc, "g"), "g", &t);
	items = config_settings_member(config_lookup(&lc, "g"), "items", SET_GROUPLIST);
	ck_assert_ptr_nonnull(items);
	ck_assert_ptr_null(config_settings_member(config_lookup(&lc, "g"), "items", SET_GROUP));
	ck_assert_ptr_null(config_settings_member(NULL, "items", SET_GROUPLIST));
	/* the elements, as config.c walks them, and a notice */
	for (unsigned i = 0; (el = config_setting_get_elem(items, i)); i++) {
		char *prefix = xasprintf("g.items[%u]", i);
		struct thing sub;

		memset(&sub, 0, sizeof(sub));
		config_settings_apply(&ctx, sub_tab, el, prefix, &sub);
		config_settings_free(sub_tab, &sub);
		free(prefix);
	}
	config_settings_note(&ctx, config_lookup(&lc, "g.count"), "g.count", "said for the test");
	config_settings_err_raw(&ctx, NULL, 1, "t.conf:1: a raw one");
	config_settings_ctx_finish(&ctx, &errs);
	ck_assert_uint_eq(errs.n, 6);
	ck_assert_str_eq(errs.msg[0], "t.conf:1: a raw one");
	ck_assert_str_eq(errs.msg[1], "t.conf:2: g.count: 1 is out of range; allowed: an integer "
				      "from 8 to 4096 bits");
	ck_assert_str_eq(errs.msg[2], "t.conf:3: g.ratio: 2.0 is out of range; allowed: a number "
				      "> 0 and < 1");
	ck_assert_str_eq(errs.msg[3], "t.conf:4: g.items[0].name: missing required key; allowed: "
				      "a non-empty string");
	ck_assert_str_eq(errs.msg[4], "t.conf:5: g.items[1].name: wrong type (an integer); "
				      "allowed: a non-empty string");
	ck_assert_str_eq(errs.msg[5], "t.conf:6: g.on: wrong type (a string); allowed: true or "
				      "false");
	ck_assert_uint_eq(errs.n_note, 1);
	ck_assert_str_eq(errs.note[0], "t.conf:2: notice: g.count: said for the test; ignored");
	ck_assert_str_eq(config_settings_type_name(config_lookup(&lc, "g.count")), "an integer");
	ck_assert_str_eq(config_settings_type_name(config_lookup(&lc, "g")), "a group");
	config_errors_free(&errs);
	config_destroy(&lc);
	config_settings_free(tab, &t);
}
END_TEST

/* Messages of an included file come after the main file's, whatever the order they were
 * found in: the main file by line, then each file in the order it was first met. */
START_TEST(test_file_order)
{
	struct settings_ctx ctx;
	struct config_errors errs = {0};

	config_settings_ctx_init(&ctx, "main.conf");
	config_settings_err_raw(&ctx, "b.conf", 1, "b1");
	config_settings_err_raw(&ctx, "main.conf", 9, "m9");
	config_settings_err_raw(&ctx, "a.conf", 2, "a2");
	config_settings_err_raw(&ctx, "main.conf", 3, "m3");
	config_settings_err_raw(&ctx, "b.conf", 0, "b0");
	config_settings_err_raw(&ctx, NULL, 5, "m5");
	config_settings_ctx_finish(&ctx, &errs);
	ck_assert_uint_eq(errs.n, 6);
	ck_assert_str_eq(errs.msg[0], "m3");
	ck_assert_str_eq(errs.msg[1], "m5");
	ck_assert_str_eq(errs.msg[2], "m9");
	ck_assert_str_eq(errs.msg[3], "b0");
	ck_assert_str_eq(errs.msg[4], "b1");
	ck_assert_str_eq(errs.msg[5], "a2");
	ck_assert_uint_eq(errs.n_note, 0);
	config_errors_free(&errs);
}
END_TEST

/* An integer libconfig stored cut to 32 bits is named as it was written. */
static const char *wrapped(struct settings_ctx *ctx, const config_setting_t *cs)
{
	return strcmp(config_setting_name(cs), "count") == 0 ? "4294967360" : NULL;
}

START_TEST(test_wrapped_int)
{
	struct settings_ctx ctx;
	struct config_errors errs = {0};
	struct thing t;
	config_t lc;

	memset(&t, 0, sizeof(t));
	config_settings_defaults(tab, &t);
	config_init(&lc);
	ck_assert(config_read_string(&lc, "g = { count = 64; };"));
	config_settings_ctx_init(&ctx, "t.conf");
	ctx.wrapped_int = wrapped;
	config_settings_apply(&ctx, tab, config_lookup(&lc, "g"), "g", &t);
	config_settings_ctx_finish(&ctx, &errs);
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msg[0], "t.conf:1: g.count: 4294967360 is out of range; allowed: "
				      "an integer from 8 to 4096 bits");
	config_errors_free(&errs);
	config_destroy(&lc);
	config_settings_free(tab, &t);
}
END_TEST

static char *printed(const struct thing *t, unsigned only)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	config_settings_print(tab, t, only, 2, f);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

/* -p: every key with its value and a comment, keys with a set bit only when asked for, and
 * what is printed reads back the same, strings with quotes and control bytes included. */
START_TEST(test_print)
{
	struct parsed p, again;
	char *text, *wrapped_text;

	parse(&p, "g = { count = 100; big = 123456789012L; ratio = 0.1; label = \"a \\\"b\\\" \\\\ "
		  "\\x01\"; names = [ \"sd?\" ]; tags = []; color = \"blue\"; };");
	ck_assert_uint_eq(p.errs.n, 0);
	text = printed(&p.t, BIT_COUNT | BIT_RATIO);
	ck_assert_str_eq(text,
			 "  on = true;  # switched on\n"
			 "  count = 100;  # how many (bits, 8..4096)\n"
			 "  big = 123456789012L;  # a large one (0..1000000000000)\n"
			 "  ratio = 0.1;  # a share (0 < ratio < 1)\n"
			 "  label = \"a \\\"b\\\" \\\\ \\x01\";  # what it is called\n"
			 "  path = \"/run/x\";  # where it is\n"
			 "  color = \"blue\";  # its colour (red | green | blue)\n"
			 "  names = [ \"sd?\" ];  # what it picks\n"
			 "  tags = [];  # labels\n");
	/* libconfig reads an integer past 32 bits back only with its L */
	wrapped_text = xasprintf("g = {\n%s};\n", text);
	parse(&again, wrapped_text);
	ck_assert_msg(again.errs.n == 0, "%s", again.errs.n ? again.errs.msg[0] : "");
	ck_assert_str_eq(again.t.label, p.t.label);
	ck_assert_int_eq(again.t.count, p.t.count);
	ck_assert(again.t.ratio == p.t.ratio);
	ck_assert_int_eq(again.t.color, p.t.color);
	ck_assert_uint_eq(again.t.names.n, 1);
	free(text);
	/* without the bits: those keys left out */
	text = printed(&p.t, 0);
	ck_assert_ptr_null(strstr(text, "count ="));
	ck_assert_ptr_null(strstr(text, "ratio ="));
	ck_assert_ptr_nonnull(strstr(text, "big ="));
	free(text);
	/* a float prints as one */
	p.t.ratio = 1e-7;
	text = printed(&p.t, BIT_RATIO);
	ck_assert_ptr_nonnull(strstr(text, "  ratio = 1e-07;"));
	free(text);
	free(wrapped_text);
	parsed_free(&again);
	parsed_free(&p);
}
END_TEST

START_TEST(test_print_keys)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	config_settings_print_keys(tab, "sources.t", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_str_eq(text, "sources.t.on\nsources.t.count\nsources.t.big\nsources.t.ratio\n"
			       "sources.t.label\nsources.t.path\nsources.t.color\nsources.t.names\n"
			       "sources.t.tags\nsources.t.items\nsources.t.items[].name\n");
	free(text);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("config_settings");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_values);
	tcase_add_loop_test(tc, test_bad, 0, ARRAY_SIZE(bad));
	tcase_add_test(tc, test_all_at_once);
	tcase_add_test(tc, test_file_order);
	tcase_add_test(tc, test_wrapped_int);
	tcase_add_test(tc, test_print);
	tcase_add_test(tc, test_print_keys);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
