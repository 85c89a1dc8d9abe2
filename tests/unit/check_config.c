/* check_config: unit tests of the config module (defaults, errors, overrides, -p output). */
#include "autoconf.h"

#include <check.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_policy.h"
#include "testutil.h"
#include "util.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif
#define FIXTURE(name) SRCDIR "/tests/data/conf/" name
#define SHIPPED SRCDIR "/conf/entropyd.conf"
/* the page's source: make substitutes paths into it, never keys */
#define MANPAGE SRCDIR "/man/entropyd.conf.5.in"

/* ---- helpers ---- */

static struct config *load_ok(const char *path)
{
	struct config_errors errs = {0};
	struct config *cfg = config_load(path, &errs);

	ck_assert_msg(cfg != NULL, "%s: %zu errors, first: %s", path, errs.n,
		      errs.n ? errs.msg[0] : "(none)");
	ck_assert_uint_eq(errs.n, 0);
	config_errors_free(&errs);
	return cfg;
}

/* Loads a file that must fail with exactly `n` errors. */
static void load_bad(const char *path, size_t n, struct config_errors *errs)
{
	struct config *cfg = config_load(path, errs);
	size_t i;

	ck_assert_ptr_null(cfg);
	for (i = 0; i < errs->n; i++)
		fprintf(stderr, "  %s\n", errs->msg[i]);
	ck_assert_uint_eq(errs->n, n);
}

/* msg is "FILE:LINE: KEY: ...problem...; allowed: ...allowed..." */
static void assert_msg(const char *msg, const char *file, unsigned line, const char *key,
		       const char *problem, const char *allowed)
{
	char *prefix = xasprintf("%s:%u: %s: ", file, line, key);
	const char *rest = msg + strlen(prefix), *al;

	ck_assert_msg(strncmp(msg, prefix, strlen(prefix)) == 0, "want prefix \"%s\", got \"%s\"",
		      prefix, msg);
	al = strstr(rest, "; allowed: ");
	ck_assert_msg(al != NULL, "no \"; allowed: \" in \"%s\"", msg);
	ck_assert_msg(strstr(rest, problem) && strstr(rest, problem) < al,
		      "problem \"%s\" not in \"%s\"", problem, msg);
	ck_assert_msg(strstr(al, allowed) != NULL, "allowed \"%s\" not in \"%s\"", allowed, msg);
	free(prefix);
}

static bool strlist_eq(const struct strlist *a, const struct strlist *b)
{
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

static bool rule_eq(const struct policy_rule *a, const struct policy_rule *b)
{
	return a->mode == b->mode && a->scale == b->scale &&
	       a->cap_bits_per_event == b->cap_bits_per_event &&
	       a->cap_bits_per_second == b->cap_bits_per_second;
}

static bool policy_eq(const struct class_policy *a, const struct class_policy *b)
{
	size_t i;

	if (!rule_eq(&a->rule, &b->rule) || a->n_overrides != b->n_overrides)
		return false;
	for (i = 0; i < a->n_overrides; i++) {
		const struct policy_override *x = &a->overrides[i], *y = &b->overrides[i];

		if (strcmp(x->name, y->name) != 0 || x->set != y->set || !rule_eq(&x->rule, &y->rule))
			return false;
	}
	return true;
}

static bool capture_eq(const struct net_capture *a, const struct net_capture *b)
{
	return a->direction == b->direction && strcmp(a->filter, b->filter) == 0 &&
	       a->snaplen == b->snaplen;
}

static bool net_instances_eq(const struct config *a, const struct config *b)
{
	size_t i;

	if (a->network.n_instances != b->network.n_instances)
		return false;
	for (i = 0; i < a->network.n_instances; i++) {
		const struct net_override *x = &a->network.instances[i];
		const struct net_override *y = &b->network.instances[i];

		if (strcmp(x->name, y->name) != 0 || x->set != y->set ||
		    !capture_eq(&x->cap, &y->cap))
			return false;
	}
	return true;
}

/* Written field by field, not from the module's tables, so a key the tables forget shows. */
static bool config_eq(const struct config *a, const struct config *b)
{
	int c;

	if (a->feed.mode != b->feed.mode || strcmp(a->feed.device, b->feed.device) != 0 ||
	    a->feed.reseed != b->feed.reseed || a->feed.batch_bits != b->feed.batch_bits ||
	    a->feed.batch_interval != b->feed.batch_interval ||
	    a->feed.mix_interval != b->feed.mix_interval ||
	    a->feed.low_watermark != b->feed.low_watermark)
		return false;
	for (c = 0; c < CLASS_COUNT; c++)
		if (!policy_eq(&a->policy[c], &b->policy[c]))
			return false;
	if (strcmp(a->input.watch, b->input.watch) != 0 ||
	    a->input.exclude_virtual != b->input.exclude_virtual ||
	    !strlist_eq(&a->input.include, &b->input.include) ||
	    !strlist_eq(&a->input.exclude, &b->input.exclude) ||
	    a->input.quantum_ns != b->input.quantum_ns ||
	    a->input.estimate_interval != b->input.estimate_interval ||
	    a->input.health_retry != b->input.health_retry)
		return false;
	if (a->block.backend != b->block.backend ||
	    !strlist_eq(&a->block.devices, &b->block.devices) ||
	    a->block.quantum_ns != b->block.quantum_ns ||
	    a->block.estimate_interval != b->block.estimate_interval ||
	    a->block.health_retry != b->block.health_retry)
		return false;
	if (!strlist_eq(&a->network.interfaces, &b->network.interfaces) ||
	    !capture_eq(&a->network.capture, &b->network.capture) ||
	    strcmp(a->network.file, b->network.file) != 0 ||
	    a->network.quantum_ns != b->network.quantum_ns ||
	    a->network.estimate_interval != b->network.estimate_interval ||
	    a->network.health_retry != b->network.health_retry ||
	    a->network.max_events_per_second != b->network.max_events_per_second ||
	    !net_instances_eq(a, b))
		return false;
	return strcmp(a->control.socket, b->control.socket) == 0 &&
	       strcmp(a->control.group, b->control.group) == 0 &&
	       a->control.timeout == b->control.timeout && a->control.max_hold == b->control.max_hold &&
	       strcmp(a->record.dir, b->record.dir) == 0 && a->record.max_bytes == b->record.max_bytes;
}

/* config_print into a temporary file, whose path the caller unlinks and frees. */
static char *print_to_file(const struct config *cfg)
{
	char *path = xasprintf("%s/print.XXXXXX", tu_tmpdir());
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	config_print(cfg, f);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* print, load what was printed, and compare */
static void assert_round_trip(const struct config *cfg)
{
	char *path = print_to_file(cfg);
	struct config_errors errs = {0};
	struct config *again = config_load(path, &errs);

	unlink(path);
	ck_assert_msg(again != NULL, "printed config does not read back: %s",
		      errs.n ? errs.msg[0] : "?");
	ck_assert_msg(config_eq(cfg, again), "printed config reads back different");
	config_free(again);
	config_errors_free(&errs);
	free(path);
}

static char *print_keys_text(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	config_print_keys(f);
	fclose(f);
	return text;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

/* ---- defaults ---- */

static void assert_defaults(const struct config *cfg)
{
	const struct class_policy *in = &cfg->policy[CLASS_INPUT], *bl = &cfg->policy[CLASS_BLOCK],
				  *net = &cfg->policy[CLASS_NETWORK];

	ck_assert_int_eq(cfg->feed.mode, FEED_AUTO);
	ck_assert_str_eq(cfg->feed.device, "/dev/random");
	ck_assert(cfg->feed.reseed);
	ck_assert_int_eq(cfg->feed.batch_bits, 64);
	ck_assert_double_eq(cfg->feed.batch_interval, 1.0);
	ck_assert_double_eq(cfg->feed.mix_interval, 60.0);
	ck_assert_int_eq(cfg->feed.low_watermark, 0); /* the kernel's */
	ck_assert_str_eq(cfg->collector.user, COLLECTOR_USER);

	ck_assert_int_eq(in->rule.mode, MODE_TRUSTED);
	ck_assert_double_eq(in->rule.cap_bits_per_event, 2.0);
	ck_assert_double_eq(in->rule.cap_bits_per_second, 64.0);
	ck_assert_int_eq(bl->rule.mode, MODE_TRUSTED);
	ck_assert_double_eq(bl->rule.cap_bits_per_event, 1.0);
	ck_assert_double_eq(bl->rule.cap_bits_per_second, 128.0);
	ck_assert_int_eq(net->rule.mode, MODE_REDUCED);
	ck_assert_double_eq(net->rule.scale, 0.25);
	ck_assert_double_eq(net->rule.cap_bits_per_event, 0.5);
	ck_assert_double_eq(net->rule.cap_bits_per_second, 32.0);
	ck_assert_uint_eq(in->n_overrides + bl->n_overrides + net->n_overrides, 0);

	ck_assert_str_eq(cfg->input.watch, "/dev/input");
	ck_assert(cfg->input.exclude_virtual);
	ck_assert_uint_eq(cfg->input.include.n, 0);
	ck_assert_uint_eq(cfg->input.exclude.n, 0);
	ck_assert_int_eq(cfg->input.quantum_ns, 1000);
	ck_assert_double_eq(cfg->input.health_retry, 3600);
	ck_assert_double_eq(cfg->input.estimate_interval, 10);
	ck_assert_int_eq(cfg->block.backend, BACKEND_AUTO);
	ck_assert_uint_eq(cfg->block.devices.n, 1);
	ck_assert_str_eq(cfg->block.devices.v[0], "auto");
	ck_assert_int_eq(cfg->block.quantum_ns, 1000);
	ck_assert_double_eq(cfg->block.health_retry, 3600);
	ck_assert_double_eq(cfg->block.estimate_interval, 10);
	ck_assert_uint_eq(cfg->network.interfaces.n, 1);
	ck_assert_str_eq(cfg->network.interfaces.v[0], "auto");
	ck_assert_int_eq(cfg->network.capture.direction, DIR_IN);
	ck_assert_str_eq(cfg->network.capture.filter, "");
	ck_assert_int_eq(cfg->network.capture.snaplen, 64);
	ck_assert_str_eq(cfg->network.file, "");
	ck_assert_int_eq(cfg->network.quantum_ns, 1000);
	ck_assert_double_eq(cfg->network.health_retry, 3600);
	ck_assert_double_eq(cfg->network.estimate_interval, 60);
	ck_assert_uint_eq(cfg->network.n_instances, 0);
	ck_assert_ptr_eq(net_class_capture_config(cfg, "eth0"), &cfg->network.capture);
	ck_assert_str_eq(cfg->control.socket, "/run/entropyd/io.entropyd");
	ck_assert_str_eq(cfg->control.group, "entropyd");
	ck_assert_double_eq(cfg->control.timeout, 10.0);
	ck_assert_double_eq(cfg->control.max_hold, 60.0);
	ck_assert_str_eq(cfg->record.dir, "");
	ck_assert_int_eq(cfg->record.max_bytes, 16777216);
}

START_TEST(test_defaults)
{
	struct config *cfg = config_defaults();

	ck_assert_ptr_null(cfg->path);
	assert_defaults(cfg);
	config_free(cfg);
}
END_TEST

START_TEST(test_empty_file_is_defaults)
{
	struct config *cfg = load_ok(FIXTURE("empty.conf"));

	ck_assert_str_eq(cfg->path, FIXTURE("empty.conf"));
	assert_defaults(cfg);
	config_free(cfg);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(source_class_name(CLASS_INPUT), "input");
	ck_assert_str_eq(source_class_name(CLASS_BLOCK), "block");
	ck_assert_str_eq(source_class_name(CLASS_NETWORK), "network");
	ck_assert_ptr_null(source_class_name(CLASS_COUNT));
	ck_assert_int_eq(source_class_from_name("network"), CLASS_NETWORK);
	ck_assert_int_eq(source_class_from_name("input"), CLASS_INPUT);
	ck_assert_int_eq(source_class_from_name("disk"), -1);
	ck_assert_int_eq(source_class_from_name(NULL), -1);
	ck_assert_str_eq(config_mode_name_feed(FEED_WATERMARK), "watermark");
	ck_assert_str_eq(config_mode_name_feed(FEED_ALWAYS), "always");
	ck_assert_ptr_null(config_mode_name_feed((enum feed_mode)4));
	ck_assert_str_eq(config_mode_name_policy(MODE_MIX_ONLY), "mix-only");
	ck_assert_str_eq(config_mode_name_policy(MODE_DISABLED), "disabled");
	ck_assert_ptr_null(config_mode_name_policy((enum policy_mode)4));
}
END_TEST

/* ---- the shipped file ---- */

START_TEST(test_shipped_loads)
{
	struct config *cfg = load_ok(SHIPPED), *def = config_defaults();

	/* it says every value in it is the built-in default */
	ck_assert(config_eq(cfg, def));
	config_free(def);
	config_free(cfg);
}
END_TEST

/* Is the mode of the class of `key` (policy.CLASS.scale) "reduced" in lc? */
static bool class_is_reduced(const config_t *lc, const char *key)
{
	char *mode = xasprintf("%.*smode", (int)(strlen(key) - strlen("scale")), key);
	const char *v = NULL;
	bool reduced = config_lookup_string(lc, mode, &v) == CONFIG_TRUE &&
		       strcmp(v, "reduced") == 0;

	free(mode);
	return reduced;
}

START_TEST(test_shipped_has_every_key)
{
	char *keys = print_keys_text(), *save = NULL, *k;
	config_t lc;

	config_init(&lc);
	ck_assert_int_eq(config_read_file(&lc, SHIPPED), CONFIG_TRUE);
	for (k = strtok_r(keys, "\n", &save); k; k = strtok_r(NULL, "\n", &save)) {
		/* override keys go in instances = ( ... ), empty in the shipped file */
		if (strstr(k, "[]"))
			continue;
		/* scale counts only where the class is reduced, and the shipped file leaves it
		 * commented there, so that changing the mode is a one-line edit, without a notice */
		if (strlen(k) > 6 && strcmp(k + strlen(k) - 6, ".scale") == 0) {
			ck_assert_msg(!class_is_reduced(&lc, k) || config_lookup(&lc, k) == NULL,
				      "%s is set in %s: a change of mode would bring a notice", k,
				      SHIPPED);
			continue;
		}
		ck_assert_msg(config_lookup(&lc, k) != NULL, "%s is not in %s", k, SHIPPED);
	}
	config_destroy(&lc);
	free(keys);
}
END_TEST

/* ---- errors ---- */

/* A file that must fail to load, and each error it gives, in order. */
struct bad_file {
	const char *fixture;
	struct bad_entry {
		unsigned line;
		const char *key, *problem, *allowed;
	} errors[9]; /* up to the first with no key */
};

static const struct bad_file bad_files[] = {
	/* line 3 (an integer where a float goes) is fine */
	{"wrong-type.conf",
	 {{7, "policy.network.scale", "wrong type (a string)", "a number > 0 and < 1"}}},
	{"wrong-shape.conf",
	 {{2, "feed", "wrong type (an integer)", "a group"},
	  {4, "policy.input", "wrong type (a string)", "a group"},
	  {7, "control.socket", "wrong type (a group)", "absolute path"},
	  {10, "sources.network.instances", "wrong type (a group)", "a list of groups"}}},
	{"out-of-range.conf",
	 {{2, "feed.batch_bits", "4097 is out of range", "an integer from 8 to 4096 bits"},
	  /* the bounds of scale are exclusive */
	  {6, "policy.network.scale", "1.0 is out of range", "a number > 0 and < 1"}}},
	{"wrapped-int.conf",
	 {{5, "sources.input.quantum_ns", "5000000000 is out of range",
	   "an integer from 1 to 1000000000 ns"},
	  {8, "feed.batch_bits", "0x100000000 is out of range", "an integer from 8 to 4096 bits"}}},
	{"unknown-key.conf",
	 {{3, "feed.batch_size", "unknown key",
	   "mode, device, reseed, batch_bits, batch_interval, mix_interval, low_watermark"}}},
	/* The scanner that catches wrapped integers must stop at the end of the text. */
	{"ends-in-word.conf", {{3, "stray", "unknown key", "feed, policy, sources, control"}}},
	{"collector-root.conf",
	 {{3, "collector.user", "the collector never runs as root", "an unprivileged system user"}}},
	{"unknown-mode.conf",
	 {{3, "policy.block.mode", "unknown value \"partly-trusted\"",
	   "\"trusted\", \"reduced\", \"mix-only\", \"disabled\""}}},
	{"duplicate-instance.conf",
	 {{6, "policy.network.instances[2].name", "duplicate instance \"eth1\" (first at line 4)",
	   "each name once in a list"}}},
	/* the line is where the instance's group opens */
	{"missing-name.conf",
	 {{5, "policy.input.instances[1].name", "missing required key", "a non-empty string"}}},
	/* scale beside another mode is only a notice (test_scale_ignored), but a scale that
	 * is wrong in itself is still an error there */
	{"scale-not-reduced-bad.conf",
	 {{4, "policy.network.scale", "2.0 is out of range", "a number > 0 and < 1"}}},
	/* all errors at once */
	{"many-errors.conf",
	 {{3, "feed.mode", "unknown value \"sometimes\"", "\"watermark\""},
	  {4, "feed.device", "not an absolute path", "absolute path"},
	  {5, "feed.batch_bits", "wrong type (a string)", "8 to 4096"},
	  {9, "policy.network.scale", "0.0 is out of range", "> 0 and < 1"},
	  {10, "policy.network.colour", "unknown key",
	   "mode, scale, cap_bits_per_event, cap_bits_per_second, instances"},
	  /* disk names as the example, not interface names */
	  {14, "sources.block.devices", "\"auto\" mixed with names",
	   "[ \"auto\" ], or a non-empty list of names or globs, e.g. [ \"sda\", \"nvme*\" ]"},
	  {15, "sources.network.snaplen", "8 is out of range", "16 to 65535"},
	  {15, "sources.network.direction", "unknown value \"sideways\"",
	   "\"in\", \"out\", \"both\""},
	  {18, "control.socket", "not an absolute path", "absolute path"}}},
	{"auto-mixed.conf",
	 {{3, "sources.block.devices", "\"auto\" mixed with names", "e.g. [ \"sda\", \"nvme*\" ]"},
	  {4, "sources.network.interfaces", "\"auto\" mixed with names",
	   "e.g. [ \"eth0\", \"wlan*\" ]"}}},
	/* per-interface capture settings: one error a line, of the entry on that line */
	{"net-instances-bad.conf",
	 {{5, "sources.network.instances[0].direction", "unknown value \"sideways\"",
	   "\"in\", \"out\", \"both\""},
	  {6, "sources.network.instances[1].snaplen", "8 is out of range",
	   "an integer from 16 to 65535 bytes"},
	  {7, "sources.network.instances[2].filter", "wrong type (an integer)", "a string"},
	  {8, "sources.network.instances[3].mode", "unknown key",
	   "name, direction, filter, snaplen"},
	  /* the line is where the entry's group opens */
	  {9, "sources.network.instances[4].name", "missing required key", "a non-empty string"},
	  {10, "sources.network.instances[5]", "wrong type (a string)",
	   "a group { name = \"NAME\"; filter = ...; }"},
	  {11, "sources.network.instances[6].name", "the value is empty", "a non-empty string"},
	  {12, "sources.network.instances[7].name",
	   "duplicate instance \"eth0\" (first at line 5)", "each name once in a list"}}},
};

START_TEST(test_bad_file)
{
	const struct bad_file *b = &bad_files[_i];
	char *f = xasprintf(FIXTURE("%s"), b->fixture);
	struct config_errors errs = {0};
	size_t i, n = 0;

	while (n < ARRAY_SIZE(b->errors) && b->errors[n].key)
		n++;
	load_bad(f, n, &errs);
	for (i = 0; i < n; i++)
		assert_msg(errs.msg[i], f, b->errors[i].line, b->errors[i].key,
			   b->errors[i].problem, b->errors[i].allowed);
	config_errors_free(&errs);
	ck_assert_uint_eq(errs.n, 0);
	ck_assert_ptr_null(errs.msg);
	free(f);
}
END_TEST

START_TEST(test_syntax_error)
{
	const char *f = FIXTURE("syntax.conf");
	char *want = xasprintf("%s:3: syntax error: ", f);
	struct config_errors errs = {0};

	load_bad(f, 1, &errs);
	ck_assert_msg(strncmp(errs.msg[0], want, strlen(want)) == 0, "got %s", errs.msg[0]);
	ck_assert_uint_gt(strlen(errs.msg[0]), strlen(want));
	free(want);
	config_errors_free(&errs);
}
END_TEST

START_TEST(test_missing_file)
{
	const char *f = FIXTURE("does-not-exist.conf");
	char *want = xasprintf("%s: cannot open: No such file or directory", f);
	struct config_errors errs = {0};

	load_bad(f, 1, &errs);
	ck_assert_str_eq(errs.msg[0], want);
	free(want);
	config_errors_free(&errs);

	/* a directory opens but is not a file */
	want = xasprintf("%s: cannot open: Is a directory", FIXTURE(""));
	load_bad(FIXTURE(""), 1, &errs);
	ck_assert_str_eq(errs.msg[0], want);
	free(want);
	config_errors_free(&errs);
}
END_TEST

/* libconfig's "duplicate setting name": the key, and the line of the first, in whatever
 * group, list element, comment or string around them. */
static void put(const char *path, const char *text);

START_TEST(test_duplicate_named)
{
	static const struct {
		const char *text, *key;
		unsigned line, first;
	} cases[] = {
		{"feed = {\n  mode = \"auto\";\n  # mode = \"boot\";\n  reseed = true;\n"
		 "  mode = \"boot\";\n};\n", "feed.mode", 5, 2},
		{"feed = { mode = \"auto\"; };\npolicy = { input = { mode = \"trusted\"; }; };\n"
		 "feed = { reseed = true; };\n", "feed", 3, 1},
		/* the same name in another group, in a string and in a comment is no duplicate */
		{"policy = { network = { mode = \"reduced\"; /* mode = 1; */ instances = (\n"
		 "  { name = \"eth0\"; mode = \"trusted\"; },\n"
		 "  { name = \"mode = x\"; mode = \"trusted\";\n    mode = \"disabled\"; } ); }; };\n",
		 "policy.network.instances[1].mode", 4, 3},
		{"sources = { block = { devices = [ \"sda\" ]; devices = [ \"sdb\" ]; }; };\n",
		 "sources.block.devices", 1, 1},
	};
	char dir[4096];

	tu_mkdtemp(dir, sizeof(dir), "%s/config.XXXXXX", tu_tmpdir());
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *f = xasprintf("%s/dup%zu.conf", dir, i);
		char *want = xasprintf("%s:%u: %s: given twice in its group (first at line %u); "
				       "libconfig refuses the file: keep one", f, cases[i].line,
				       cases[i].key, cases[i].first);
		struct config_errors errs = {0};

		put(f, cases[i].text);
		load_bad(f, 1, &errs);
		ck_assert_str_eq(errs.msg[0], want);
		config_errors_free(&errs);
		unlink(f);
		free(want);
		free(f);
	}
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* ---- @include, and lists of many entries ---- */

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* A relative @include is the file beside the one that includes it, wherever the daemon was
 * started from ("/" under systemd); an absolute one is refused at its line. */
START_TEST(test_include_beside)
{
	char dir[4096], *main_conf, *sub, *part, *abs_conf, *want;
	struct config_errors errs = {0};
	struct config *cfg;
	char cwd[4096];

	tu_mkdtemp(dir, sizeof(dir), "%s/config.XXXXXX", tu_tmpdir());
	sub = xasprintf("%s/conf.d", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	main_conf = xasprintf("%s/main.conf", dir);
	part = xasprintf("%s/control.conf", sub);
	abs_conf = xasprintf("%s/abs.conf", dir);
	put(main_conf, "feed = { mode = \"always\"; };\n@include \"conf.d/control.conf\"\n");
	put(part, "control = { timeout = 5.0; };\n");
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir("/"), 0);
	cfg = config_load(main_conf, &errs);
	ck_assert_msg(cfg != NULL, "%s", errs.n ? errs.msg[0] : "?");
	ck_assert_double_eq(cfg->control.timeout, 5.0);
	config_free(cfg);

	want = xasprintf("%s:2: @include: an absolute path; give it relative to the directory "
			 "of %s", abs_conf, abs_conf);
	{
		char *text = xasprintf("feed = { mode = \"always\"; };\n@include \"%s\"\n", part);

		put(abs_conf, text);
		free(text);
	}
	ck_assert_ptr_null(config_load(abs_conf, &errs));
	ck_assert_uint_eq(errs.n, 1);
	ck_assert_str_eq(errs.msg[0], want);
	config_errors_free(&errs);
	ck_assert_int_eq(chdir(cwd), 0);
	unlink(part);
	unlink(main_conf);
	unlink(abs_conf);
	rmdir(sub);
	rmdir(dir);
	free(want);
	free(sub);
	free(part);
	free(main_conf);
	free(abs_conf);
}
END_TEST

/* 64,000 entries are checked for repeats in well under the time a comparison of every pair
 * took (about 2 billion of them, seconds); a repeat is still found, with its first line. */
START_TEST(test_many_instances)
{
	enum { N = 64000 };
	char *text = NULL, *path = xasprintf("%s/many.%d", tu_tmpdir(), (int)getpid()), *want;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct config_errors errs = {0};
	struct config *cfg;

	ck_assert_ptr_nonnull(f);
	fputs("policy = { network = { instances = (\n", f);
	for (int i = 0; i < N; i++)
		fprintf(f, "{ name = \"if%d\"; mode = \"disabled\"; },\n", i);
	fputs("{ name = \"if7\"; mode = \"disabled\"; }\n); }; };\n", f);
	ck_assert_int_eq(fclose(f), 0);
	put(path, text);
	/* No clock here (these machines are shared): the pairs, some 2 billion comparisons,
	 * run far past Check's timeout, a sort well within it, sanitizers and all. */
	cfg = config_load(path, &errs);
	ck_assert_ptr_null(cfg);
	ck_assert_uint_eq(errs.n, 1);
	want = xasprintf("duplicate instance \"if7\" (first at line 9)");
	ck_assert_msg(strstr(errs.msg[0], want) != NULL, "%s", errs.msg[0]);
	config_errors_free(&errs);
	unlink(path);
	free(want);
	free(path);
	free(text);
}
END_TEST

/* ---- notices ---- */

/* msg is "FILE:LINE: notice: KEY: scale applies only to mode "reduced" (...); ignored" */
static void assert_scale_note(const char *msg, const char *file, unsigned line, const char *key,
			      const char *mode)
{
	char *want = xasprintf("%s:%u: notice: %s: scale applies only to mode \"reduced\" (the "
			       "mode here is \"%s\"); ignored", file, line, key, mode);

	ck_assert_str_eq(msg, want);
	free(want);
}

/* scale where the mode in effect is not reduced: the file is valid, each such scale is
 * named in a notice, and the policy acts as if it were not there. */
START_TEST(test_scale_ignored)
{
	const char *f = FIXTURE("scale-not-reduced.conf");
	struct config_errors errs = {0};
	struct config *cfg = config_load(f, &errs), *again;
	struct policy_rule r;
	char *printed;

	for (size_t i = 0; i < errs.n; i++)
		fprintf(stderr, "  %s\n", errs.msg[i]);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(errs.n, 0);
	/* block's scale is not noticed: its instance sdb is reduced and takes it */
	ck_assert_uint_eq(errs.n_note, 2);
	assert_scale_note(errs.note[0], f, 4, "policy.input.scale", "trusted");
	assert_scale_note(errs.note[1], f, 8, "policy.network.instances[0].scale", "trusted");
	config_errors_free(&errs);
	ck_assert_uint_eq(errs.n_note, 0);
	ck_assert_ptr_null(errs.note);

	/* trusted: the whole capped estimate, not half of it */
	r = config_policy_resolve(cfg, CLASS_INPUT, "event0");
	ck_assert_int_eq(r.mode, MODE_TRUSTED);
	ck_assert_double_eq(config_policy_credit(&r, 1.0), 1.0);
	ck_assert_double_eq(cfg->policy[CLASS_INPUT].rule.scale, POLICY_SCALE_DEFAULT);
	r = config_policy_resolve(cfg, CLASS_NETWORK, "eth1");
	ck_assert_int_eq(r.mode, MODE_TRUSTED);
	ck_assert_double_eq(config_policy_credit(&r, 0.25), 0.25);
	ck_assert_uint_eq(cfg->policy[CLASS_NETWORK].overrides[0].set, RULE_SET_MODE);
	/* the other interfaces keep the class's reduced mode and its default scale */
	r = config_policy_resolve(cfg, CLASS_NETWORK, "eth0");
	ck_assert_int_eq(r.mode, MODE_REDUCED);
	ck_assert_double_eq(r.scale, POLICY_SCALE_DEFAULT);
	/* the scale of a disabled class that an instance inherits is in effect there */
	r = config_policy_resolve(cfg, CLASS_BLOCK, "sdb");
	ck_assert_int_eq(r.mode, MODE_REDUCED);
	ck_assert_double_eq(r.scale, 0.5);
	ck_assert_double_eq(config_policy_credit(&r, 1.0), 0.5);
	r = config_policy_resolve(cfg, CLASS_BLOCK, "sda");
	ck_assert_int_eq(r.mode, MODE_DISABLED);

	/* what -p prints has none of the ignored keys: it reads back without a notice */
	printed = print_to_file(cfg);
	again = config_load(printed, &errs);
	unlink(printed);
	free(printed);
	ck_assert_ptr_nonnull(again);
	ck_assert_uint_eq(errs.n_note, 0);
	ck_assert(config_eq(cfg, again));
	config_errors_free(&errs);
	config_free(again);
	config_free(cfg);
}
END_TEST

/* ---- overrides ---- */

START_TEST(test_overrides)
{
	struct config *cfg = load_ok(FIXTURE("overrides.conf"));
	const struct class_policy *in = &cfg->policy[CLASS_INPUT],
				  *net = &cfg->policy[CLASS_NETWORK];
	const struct policy_override *o;

	ck_assert_int_eq(cfg->feed.mode, FEED_BOOT);
	ck_assert_double_eq(cfg->feed.mix_interval, 300.0); /* written as an integer */
	ck_assert_int_eq(in->rule.mode, MODE_MIX_ONLY);
	ck_assert_double_eq(cfg->policy[CLASS_BLOCK].rule.cap_bits_per_event, 0.75);
	ck_assert_double_eq(net->rule.scale, 0.5);
	ck_assert_double_eq(net->rule.cap_bits_per_second, 16.0);

	ck_assert_uint_eq(in->n_overrides, 1);
	o = &in->overrides[0];
	ck_assert_str_eq(o->name, "event*");
	ck_assert_uint_eq(o->set, RULE_SET_MODE | RULE_SET_SCALE);
	ck_assert_int_eq(o->rule.mode, MODE_REDUCED);
	ck_assert_double_eq(o->rule.scale, 0.1);
	ck_assert_double_eq(o->rule.cap_bits_per_event, 2.0); /* inherited */

	ck_assert_uint_eq(net->n_overrides, 3);
	o = &net->overrides[0];
	ck_assert_str_eq(o->name, "eth1");
	ck_assert_uint_eq(o->set, RULE_SET_MODE);
	ck_assert_int_eq(o->rule.mode, MODE_TRUSTED);
	ck_assert_double_eq(o->rule.cap_bits_per_second, 16.0);
	o = &net->overrides[1];
	ck_assert_str_eq(o->name, "wlan*");
	ck_assert_uint_eq(o->set, RULE_SET_MODE);
	ck_assert_int_eq(o->rule.mode, MODE_DISABLED);
	o = &net->overrides[2];
	ck_assert_str_eq(o->name, "eth2");
	ck_assert_uint_eq(o->set, RULE_SET_SCALE | RULE_SET_CAP_EVENT | RULE_SET_CAP_SECOND);
	ck_assert_int_eq(o->rule.mode, MODE_REDUCED); /* inherited */
	ck_assert_double_eq(o->rule.scale, 0.125);
	ck_assert_double_eq(o->rule.cap_bits_per_event, 0.25);
	ck_assert_double_eq(o->rule.cap_bits_per_second, 8.0);

	ck_assert_int_eq(cfg->input.quantum_ns, 250);
	ck_assert_uint_eq(cfg->input.include.n, 2);
	ck_assert_str_eq(cfg->input.include.v[0], "AT Translated*");
	ck_assert_str_eq(cfg->input.exclude.v[0], "*Consumer Control*");
	ck_assert_int_eq(cfg->block.backend, BACKEND_BLKTRACE);
	ck_assert_str_eq(cfg->block.devices.v[1], "nvme*n1");
	ck_assert_int_eq(cfg->network.capture.direction, DIR_BOTH);
	ck_assert_str_eq(cfg->network.file, "trace \"one\".pcap");
	ck_assert_str_eq(cfg->control.group, "wheel");
	config_free(cfg);
}
END_TEST

/* ---- per-interface capture settings ---- */

START_TEST(test_net_instances)
{
	struct config *cfg = load_ok(FIXTURE("net-instances.conf"));
	const struct net_override *o = cfg->network.instances;
	const struct net_capture *cls = &cfg->network.capture;

	ck_assert_int_eq(cls->direction, DIR_OUT);
	ck_assert_str_eq(cls->filter, "udp");
	ck_assert_int_eq(cls->snaplen, 128);
	ck_assert_uint_eq(cfg->network.n_instances, 4);
	ck_assert_str_eq(o[0].name, "eth1");
	ck_assert_uint_eq(o[0].set, NET_SET_DIRECTION | NET_SET_FILTER | NET_SET_SNAPLEN);
	ck_assert_int_eq(o[0].cap.direction, DIR_BOTH);
	ck_assert_str_eq(o[0].cap.filter, "tcp port 22");
	ck_assert_int_eq(o[0].cap.snaplen, 96);
	/* what an entry does not give is the class's */
	ck_assert_str_eq(o[1].name, "eth*");
	ck_assert_uint_eq(o[1].set, NET_SET_FILTER);
	ck_assert_str_eq(o[1].cap.filter, "");
	ck_assert_int_eq(o[1].cap.direction, DIR_OUT);
	ck_assert_int_eq(o[1].cap.snaplen, 128);
	ck_assert_uint_eq(o[2].set, NET_SET_SNAPLEN);
	ck_assert_int_eq(o[2].cap.snaplen, 16);
	ck_assert_str_eq(o[2].cap.filter, "udp");
	ck_assert_uint_eq(o[3].set, NET_SET_DIRECTION);
	ck_assert_int_eq(o[3].cap.direction, DIR_IN);

	/* the first match wins: eth1 is before eth*; no match is the class */
	ck_assert_ptr_eq(net_class_capture_config(cfg, "eth1"), &o[0].cap);
	ck_assert_ptr_eq(net_class_capture_config(cfg, "eth0"), &o[1].cap);
	ck_assert_ptr_eq(net_class_capture_config(cfg, "eth10"), &o[1].cap);
	ck_assert_ptr_eq(net_class_capture_config(cfg, "wlan0"), &o[2].cap);
	ck_assert_ptr_eq(net_class_capture_config(cfg, "trace.pcap"), &o[3].cap);
	ck_assert_ptr_eq(net_class_capture_config(cfg, "wlan1"), cls);
	ck_assert_ptr_eq(net_class_capture_config(cfg, "lo"), cls);
	config_free(cfg);
}
END_TEST

/* An entry prints only what it gives: what it inherits follows the class after a change. */
START_TEST(test_net_instances_print)
{
	struct config *cfg = load_ok(FIXTURE("net-instances.conf"));
	char *text = NULL, *entry, *end;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	config_print(cfg, f);
	fclose(f);
	entry = strstr(text, "name = \"eth*\";");
	ck_assert_ptr_nonnull(entry);
	end = strchr(entry, '}');
	ck_assert_ptr_nonnull(end);
	*end = '\0';
	ck_assert_ptr_nonnull(strstr(entry, "filter = \"\";"));
	ck_assert_ptr_null(strstr(entry, "direction ="));
	ck_assert_ptr_null(strstr(entry, "snaplen ="));
	free(text);
	config_free(cfg);
}
END_TEST

/* ---- printing ---- */

START_TEST(test_print_round_trip)
{
	const char *files[] = {SHIPPED, FIXTURE("overrides.conf"), FIXTURE("empty.conf"),
			       FIXTURE("net-instances.conf")};
	struct config *cfg;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		cfg = load_ok(files[i]);
		assert_round_trip(cfg);
		config_free(cfg);
	}
	cfg = config_defaults();
	assert_round_trip(cfg);
	config_free(cfg);
}
END_TEST

START_TEST(test_print_scale_only_when_reduced)
{
	struct config *cfg = config_defaults();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	config_print(cfg, f);
	fclose(f);
	/* only network is reduced by default: one scale, and it is network's */
	ck_assert_ptr_nonnull(strstr(text, "scale = 0.25;"));
	ck_assert_ptr_eq(strstr(text, "scale ="), strstr(strstr(text, "network = {"), "scale ="));
	ck_assert_ptr_null(strstr(strstr(text, "scale =") + 1, "scale ="));
	free(text);
	config_free(cfg);
}
END_TEST

START_TEST(test_print_keys)
{
	static const char *const common[] = {
		"feed.mode", "feed.device", "feed.reseed", "feed.batch_bits",
		"feed.batch_interval", "feed.mix_interval", "feed.low_watermark",
		"sources.input.watch", "sources.input.exclude_virtual", "sources.input.include",
		"sources.input.exclude", "sources.input.quantum_ns",
		"sources.input.estimate_interval", "sources.input.health_retry",
		"sources.block.backend",
		"sources.block.devices", "sources.block.quantum_ns",
		"sources.block.estimate_interval", "sources.block.health_retry",
		"sources.network.interfaces",
		"sources.network.direction", "sources.network.filter", "sources.network.snaplen",
		"sources.network.file", "sources.network.quantum_ns",
		"sources.network.estimate_interval", "sources.network.health_retry",
		"sources.network.max_events_per_second", "sources.network.instances",
		"sources.network.instances[].name", "sources.network.instances[].direction",
		"sources.network.instances[].filter", "sources.network.instances[].snaplen",
		"feed.boot_allowance", "control.socket",
		"control.group", "control.timeout", "control.max_hold", "record.dir", "record.max_bytes",
		"collector.user",
	};
	static const char *const rule[] = {"mode", "scale", "cap_bits_per_event",
					   "cap_bits_per_second"};
	char *text = print_keys_text(), *key;
	size_t i, j, lines = 0;
	int c;

	for (i = 0; i < ARRAY_SIZE(common); i++)
		ck_assert_msg(has_line(text, common[i]), "%s missing", common[i]);
	for (c = 0; c < CLASS_COUNT; c++) {
		for (j = 0; j < ARRAY_SIZE(rule); j++) {
			key = xasprintf("policy.%s.%s", source_class_name(c), rule[j]);
			ck_assert_msg(has_line(text, key), "%s missing", key);
			free(key);
			key = xasprintf("policy.%s.instances[].%s", source_class_name(c), rule[j]);
			ck_assert_msg(has_line(text, key), "%s missing", key);
			free(key);
		}
		key = xasprintf("policy.%s.instances[].name", source_class_name(c));
		ck_assert_msg(has_line(text, key), "%s missing", key);
		free(key);
		key = xasprintf("policy.%s.instances", source_class_name(c));
		ck_assert_msg(has_line(text, key), "%s missing", key);
		free(key);
	}
	/* and nothing else */
	for (i = 0; text[i]; i++)
		lines += text[i] == '\n';
	ck_assert_uint_eq(lines, ARRAY_SIZE(common) + CLASS_COUNT * (2 * ARRAY_SIZE(rule) + 2));
	free(text);
}
END_TEST

START_TEST(test_manpage_has_every_key)
{
	char *keys = print_keys_text(), *page = NULL, *save = NULL, *k;
	size_t len = 0;
	FILE *f = fopen(MANPAGE, "r");

	ck_assert_msg(f != NULL, "cannot open %s", MANPAGE);
	ck_assert_int_gt(getdelim(&page, &len, '\0', f), 0);
	fclose(f);
	for (k = strtok_r(keys, "\n", &save); k; k = strtok_r(NULL, "\n", &save))
		ck_assert_msg(strstr(page, k) != NULL, "%s is not in %s", k, MANPAGE);
	free(page);
	free(keys);
}
END_TEST

static Suite *config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("load");
	TCase *tp = tcase_create("print");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_empty_file_is_defaults);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_shipped_loads);
	tcase_add_test(tc, test_shipped_has_every_key);
	tcase_add_loop_test(tc, test_bad_file, 0, (int)ARRAY_SIZE(bad_files));
	tcase_add_test(tc, test_syntax_error);
	tcase_add_test(tc, test_duplicate_named);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_include_beside);
	tcase_add_test(tc, test_many_instances);
	tcase_add_test(tc, test_scale_ignored);
	tcase_add_test(tc, test_overrides);
	tcase_add_test(tc, test_net_instances);
	suite_add_tcase(s, tc);

	tcase_add_test(tp, test_print_round_trip);
	tcase_add_test(tp, test_print_scale_only_when_reduced);
	tcase_add_test(tp, test_net_instances_print);
	tcase_add_test(tp, test_print_keys);
	tcase_add_test(tp, test_manpage_has_every_key);
	suite_add_tcase(s, tp);
	return s;
}

int main(void)
{
	return tu_run_suite(config_suite());
}
