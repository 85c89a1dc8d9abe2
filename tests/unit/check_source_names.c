/* check_source_names: the names and globs of a configuration that pick instances
 * (source_names.c): which keys they come from, what matches them, the warning for one that
 * matches nothing (once), and entropyd -n's look at what the host has now. */
#include "autoconf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "source_names.h"
#include "testutil.h"
#include "util.h"

static struct config *load(const char *text)
{
	struct config_errors errs = {0};
	struct config *cfg = tu_config_text(text, &errs, NULL);

	ck_assert_msg(cfg != NULL, "config: %s", errs.n ? errs.msg[0] : "?");
	config_errors_free(&errs);
	return cfg;
}

/* What report() says, to a memory stream. */
static char *report(struct source_names *sn, const char *when, size_t *unmatched)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	*unmatched = source_names_report(sn, when, f);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

/* Each case: a configuration, a class, the instances there are (each a NULL-separated list of
 * its names: its own first), and what the report says. */
struct names_case {
	const char *conf;
	enum src_class cls;
	const char *const *instances[4];
	size_t unmatched;
	const char *said;
};

static const struct names_case cases[] = {
	/* block devices: one matched by glob, one by name with /dev/, one by nothing */
	{"sources = { block = { devices = [ \"sd?\", \"/dev/vdb\", \"nvme9n1\" ]; }; };",
	 CLASS_BLOCK,
	 {(const char *const[]){"sda", NULL}, (const char *const[]){"vdb", NULL}, NULL},
	 1,
	 "warning: block: sources.block.devices[2] \"nvme9n1\" matches no disk with a medium "
	 "(yet)\n"},
	/* "auto" picks what is there: never warned about */
	{"sources = { block = { devices = [ \"auto\" ]; }; };", CLASS_BLOCK, {NULL}, 0, ""},
	/* an override of policy names an instance too */
	{"policy = { block = { instances = ( { name = \"sdz\"; mode = \"disabled\"; } ); }; };",
	 CLASS_BLOCK,
	 {(const char *const[]){"sda", NULL}, NULL},
	 1,
	 "warning: block: policy.block.instances[0].name \"sdz\" matches no disk with a medium "
	 "(yet)\n"},
	/* input include and exclude match any of an instance's names (node path, device name) */
	{"sources = { input = { include = [ \"*Keyboard*\", \"/dev/input/event7\" ]; "
	 "exclude = [ \"*Mouse*\" ]; }; };",
	 CLASS_INPUT,
	 {(const char *const[]){"event3", "/dev/input/event3", "AT Keyboard", NULL},
	  (const char *const[]){"event7", "/dev/input/event7", "Power Button", NULL}, NULL},
	 1,
	 "warning: input: sources.input.exclude[0] \"*Mouse*\" matches no input device (yet)\n"},
	/* an interface's own name only: a glob, and a name not there */
	{"sources = { network = { interfaces = [ \"veth*\", \"eth9\" ]; }; };", CLASS_NETWORK,
	 {(const char *const[]){"veth0", NULL}, (const char *const[]){"lo", NULL}, NULL},
	 1,
	 "warning: network: sources.network.interfaces[1] \"eth9\" matches no interface (yet)\n"},
	/* unprintable bytes are shown escaped, never raw */
	{"sources = { network = { interfaces = [ \"e\\x1b[2Jx\" ]; }; };", CLASS_NETWORK, {NULL},
	 1,
	 "warning: network: sources.network.interfaces[0] \"e\\x1b[2Jx\" matches no interface "
	 "(yet)\n"},
};

START_TEST(test_report)
{
	const struct names_case *c = &cases[_i];
	struct config *cfg = load(c->conf);
	struct source_names *sn = source_names_new(cfg, c->cls);
	size_t unmatched, n;
	char *said;

	for (size_t i = 0; c->instances[i]; i++) {
		for (n = 0; c->instances[i][n]; n++)
			;
		source_names_saw(sn, c->instances[i], n);
	}
	said = report(sn, "(yet)", &unmatched);
	ck_assert_msg(unmatched == c->unmatched, "case %d: %zu unmatched, want %zu", _i, unmatched,
		      c->unmatched);
	ck_assert_str_eq(said, c->said);
	free(said);
	/* said once: the next report counts it, but says nothing */
	said = report(sn, "(yet)", &unmatched);
	ck_assert_uint_eq(unmatched, c->unmatched);
	ck_assert_str_eq(said, "");
	free(said);
	source_names_free(sn);
	config_free(cfg);
}
END_TEST

/* An instance's other names count only for lists that match any of them: a block device's
 * list, or an override, matches its own name alone. A name matched later is no longer
 * unmatched. */
START_TEST(test_own_name_only)
{
	struct config *cfg = load("sources = { block = { devices = [ \"vd*\" ]; }; };\n"
				  "policy = { input = { instances = ( { name = \"*Mouse*\"; "
				  "mode = \"mix-only\"; } ); }; };");
	struct source_names *sn = source_names_new(cfg, CLASS_BLOCK);
	const char *const disk[] = {"sda", "vda-alias"};
	const char *pattern, *key;
	size_t unmatched;
	char *said;

	source_names_saw(sn, disk, 2);
	ck_assert(source_names_unmatched(sn, 0, &pattern, &key));
	ck_assert_str_eq(pattern, "vd*");
	ck_assert_str_eq(key, "sources.block.devices[0]");
	ck_assert(!source_names_unmatched(sn, 1, &pattern, &key));
	source_names_saw(sn, (const char *const[]){"vda"}, 1);
	ck_assert(!source_names_unmatched(sn, 0, &pattern, &key));
	said = report(sn, "now", &unmatched);
	ck_assert_uint_eq(unmatched, 0);
	ck_assert_str_eq(said, "");
	free(said);
	source_names_free(sn);

	sn = source_names_new(cfg, CLASS_INPUT);
	source_names_saw(sn, (const char *const[]){"event1", "/dev/input/event1", "USB Mouse"}, 3);
	said = report(sn, "now", &unmatched);
	ck_assert_uint_eq(unmatched, 1);
	ck_assert_str_eq(said, "warning: input: policy.input.instances[0].name \"*Mouse*\" "
			       "matches no input device now\n");
	/* an override chooses how, not what: it is not one of the unmatched sources */
	ck_assert(!source_names_unmatched(sn, 0, &pattern, &key));
	free(said);
	source_names_free(sn);
	config_free(cfg);
}
END_TEST

/* The exclude list leaves out what it picks: one that picks nothing is warned about, but is
 * no source that is missing. */
START_TEST(test_exclude_not_a_source)
{
	struct config *cfg = load("sources = { input = { include = [ \"kbd\" ]; "
				  "exclude = [ \"mouse\" ]; }; };");
	struct source_names *sn = source_names_new(cfg, CLASS_INPUT);
	const char *pattern, *key;

	ck_assert(source_names_unmatched(sn, 0, &pattern, &key));
	ck_assert_str_eq(key, "sources.input.include[0]");
	ck_assert(!source_names_unmatched(sn, 1, &pattern, &key));
	ck_assert(!source_names_unmatched(NULL, 0, &pattern, &key));
	source_names_free(sn);
	source_names_free(NULL);
	config_free(cfg);
}
END_TEST

/* entropyd -n: the input nodes of the watched directory, /sys/block and the interfaces as the
 * host has them now, without opening anything. */
START_TEST(test_check_host)
{
	char dir[4096], *node, *conf, *text = NULL;
	size_t len = 0, unmatched;
	struct config *cfg;
	FILE *f;

	tu_mkdtemp(dir, sizeof(dir), "%s/input.XXXXXX", tu_tmpdir());
	node = xasprintf("%s/event5", dir);
	ck_assert_int_eq(mkfifo(node, 0600), 0);
	conf = xasprintf("sources = { input = { watch = \"%s\"; include = [ \"event5\", "
			 "\"event6\" ]; };\n"
			 "  block = { devices = [ \"*\", \"nosuchdisk\" ]; };\n"
			 "  network = { interfaces = [ \"lo\", \"nosuch0\" ]; }; };\n"
			 "policy = { network = { mode = \"mix-only\"; }; };",
			 dir);
	cfg = load(conf);
	f = open_memstream(&text, &len);
	unmatched = source_names_check_host(cfg, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_msg(strstr(text, "warning: input: sources.input.include[1] \"event6\" matches "
				   "no input device on this host now\n"),
		      "%s", text);
	ck_assert_msg(strstr(text, "warning: block: sources.block.devices[1] \"nosuchdisk\" "
				   "matches no disk with a medium on this host now\n"),
		      "%s", text);
	ck_assert_msg(strstr(text, "warning: network: sources.network.interfaces[1] \"nosuch0\" "
				   "matches no interface on this host now\n"),
		      "%s", text);
	ck_assert_msg(!strstr(text, "event5") && !strstr(text, "\"lo\""), "%s", text);
	/* "*" matches any disk of /sys/block, if there is one */
	ck_assert_uint_eq(unmatched, 3 + (access("/sys/block", F_OK) != 0));
	free(text);
	config_free(cfg);

	/* a class disabled by policy is not looked at */
	free(conf);
	conf = xasprintf("policy = { block = { mode = \"disabled\"; }; input = { mode = "
			 "\"disabled\"; };\n network = { mode = \"disabled\"; }; };\n"
			 "sources = { block = { devices = [ \"nosuchdisk\" ]; }; };");
	cfg = load(conf);
	text = NULL;
	f = open_memstream(&text, &len);
	ck_assert_uint_eq(source_names_check_host(cfg, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_str_eq(text, "");
	free(text);
	config_free(cfg);
	free(conf);
	free(node);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("source_names");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_report, 0, ARRAY_SIZE(cases));
	tcase_add_test(tc, test_own_name_only);
	tcase_add_test(tc, test_exclude_not_a_source);
	tcase_add_test(tc, test_check_host);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(suite());
}
