/* check_source_table: the driver table and starting, reloading and stopping every class, with a
 * real event loop, the real pipeline and the input driver on a private watch directory. */
#include "autoconf.h"

#include <check.h>
#include <event2/event.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "feed_pipeline.h"
#include "feed_pool.h"
#include "input.h"
#include "log.h"
#include "source_table.h"
#include "testutil.h"
#include "util.h"

static char topdir[4096];  /* one per run, removed at the end even if a test failed */
static char tmpdir[4200]; /* one per test: the watch directory */
static struct event_base *base;
static struct config *cfg;
static struct pool pool;
static struct source srcs[CLASS_COUNT];
static bool started;
static int fds_at_setup;

/* ---- helpers ---- */

/* A FIFO in the watch directory: the input driver reads it as a record stream. */
static void make_fifo(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
}

static bool attached(const char *name)
{
	struct inst_info in;

	for (size_t i = 0; feed_pipeline_info(i, &in); i++)
		if (in.cls == CLASS_INPUT && strcmp(in.name, name) == 0)
			return true;
	return false;
}

static struct config *new_config(void)
{
	struct config *c = config_defaults();

	ck_assert_ptr_nonnull(c);
	free(c->input.watch);
	c->input.watch = xstrdup(tmpdir);
	/* The network driver captures live: off here (check_net and t_pcap.sh test it on
	 * savefiles and in namespaces of their own). */
	c->policy[CLASS_NETWORK].rule.mode = MODE_DISABLED;
	/* The block driver traces the host's disks: off here too (check_block and t_block.sh
	 * test it, the latter on loop devices of its own). */
	c->policy[CLASS_BLOCK].rule.mode = MODE_DISABLED;
	return c;
}

static void add_override(struct config *c, enum src_class cls, const char *glob, unsigned set,
			 enum policy_mode mode)
{
	struct class_policy *cp = &c->policy[cls];
	struct policy_override *ov;

	cp->overrides = xreallocarray(cp->overrides, cp->n_overrides + 1, sizeof(*cp->overrides));
	ov = &cp->overrides[cp->n_overrides++];
	memset(ov, 0, sizeof(*ov));
	ov->name = xstrdup(glob);
	ov->set = set;
	ov->rule = cp->rule;
	ov->rule.mode = mode;
}

/* Start with stderr captured; returns the log. */
static char *start_logged(int *rc)
{
	tu_capture_begin();
	*rc = source_table_start(srcs, base, cfg);
	started = true;
	return tu_capture_end();
}

/* The daemon's reload order: the pipeline learns the new config, then the sources do. */
static void reload(struct config *next)
{
	struct config *old = cfg;

	cfg = next;
	feed_pipeline_reconfigure(next);
	source_table_reload(srcs, next);
	config_free(old);
}

/* ---- fixture ---- */

/* Unchecked: runs in the runner itself, so the directory goes even when a test fails. */
static void run_setup(void)
{
	tu_mkdtemp_or_exit(topdir, sizeof(topdir), "%s/source.XXXXXX", tu_tmpdir());
}

static void run_teardown(void)
{
	tu_rm_tree(topdir);
}

static void setup(void)
{
	/* Plain "entropyd: warning: ..." lines, even when run under systemd. */
	unsetenv("JOURNAL_STREAM");
	log_open(true, 0);
	tu_mkdtemp(tmpdir, sizeof(tmpdir), "%s/watch.XXXXXX", topdir);
	base = event_base_new();
	ck_assert_ptr_nonnull(base);
	cfg = new_config();
	feed_pool_init(&pool);
	feed_pipeline_init(cfg, &pool, NULL, NULL);
	memset(srcs, 0, sizeof(srcs));
	started = false;
	fds_at_setup = tu_count_fds();
}

static void teardown(void)
{
	if (started)
		source_table_stop(srcs);
	feed_pipeline_fini();
	config_free(cfg);
	event_base_free(base);
	tu_rm_tree(tmpdir);
}

/* ---- the table ---- */

START_TEST(test_driver_table)
{
	const struct source_ops *in = source_table_driver(CLASS_INPUT);
	const struct source_ops *blk = source_table_driver(CLASS_BLOCK);
	const struct source_ops *net = source_table_driver(CLASS_NETWORK);

	ck_assert_ptr_eq(in, &input_source_ops);
	ck_assert_str_eq(in->name, "input");
	ck_assert_int_eq(in->cls, CLASS_INPUT);
	ck_assert_ptr_nonnull(in->start);
	ck_assert_ptr_nonnull(in->reload);
	ck_assert_ptr_nonnull(in->stop);

	/* The block driver is always built in (Linux only). */
	ck_assert_ptr_nonnull(blk);
	ck_assert_str_eq(blk->name, "block");
	ck_assert_int_eq(blk->cls, CLASS_BLOCK);
	ck_assert_ptr_nonnull(blk->start);
	ck_assert_ptr_nonnull(blk->reload);
	ck_assert_ptr_nonnull(blk->stop);

	/* The network driver is always built in (libpcap is required). */
	ck_assert_ptr_nonnull(net);
	ck_assert_str_eq(net->name, "network");
	ck_assert_int_eq(net->cls, CLASS_NETWORK);
	ck_assert_ptr_nonnull(net->start);
	ck_assert_ptr_nonnull(net->reload);
	ck_assert_ptr_nonnull(net->stop);

	/* Every entry is the driver of its own class, named as source_class_name() names it. */
	for (int c = 0; c < CLASS_COUNT; c++) {
		ck_assert_int_eq(source_table_driver((enum src_class)c)->cls, c);
		ck_assert_str_eq(source_table_driver((enum src_class)c)->name,
				 source_class_name((enum src_class)c));
	}
}
END_TEST

/* ---- start ---- */

START_TEST(test_start_input)
{
	char *out;
	int rc;

	make_fifo("event0");
	out = start_logged(&rc);
	ck_assert_int_eq(rc, 0);

	ck_assert(srcs[CLASS_INPUT].running);
	ck_assert_ptr_nonnull(srcs[CLASS_INPUT].priv);
	ck_assert_ptr_eq(srcs[CLASS_INPUT].ops, &input_source_ops);
	ck_assert_ptr_eq(srcs[CLASS_INPUT].base, base);
	ck_assert_ptr_eq(srcs[CLASS_INPUT].cfg, cfg);
	ck_assert(attached("event0"));
	/* inotify plus the FIFO. */
	ck_assert_int_eq(tu_count_fds(), fds_at_setup + 2);

	free(out);
}
END_TEST

START_TEST(test_class_disabled_not_started)
{
	char *out;
	int rc;

	make_fifo("event0");
	cfg->policy[CLASS_INPUT].rule.mode = MODE_DISABLED;
	cfg->policy[CLASS_BLOCK].rule.mode = MODE_DISABLED;
	/* Overrides that do not enable anything: another field, or disabled again. */
	add_override(cfg, CLASS_INPUT, "event*", RULE_SET_CAP_EVENT, MODE_TRUSTED);
	add_override(cfg, CLASS_INPUT, "event0", RULE_SET_MODE, MODE_DISABLED);
	feed_pipeline_reconfigure(cfg);
	out = start_logged(&rc);
	ck_assert_int_eq(rc, 0);

	ck_assert(!srcs[CLASS_INPUT].running);
	ck_assert_ptr_null(srcs[CLASS_INPUT].priv);
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	ck_assert_int_eq(tu_count_fds(), fds_at_setup);
	ck_assert(!srcs[CLASS_BLOCK].running);
	ck_assert(!srcs[CLASS_NETWORK].running); /* disabled in new_config() */
	free(out);
}
END_TEST

START_TEST(test_class_disabled_override_enables)
{
	char *out;
	int rc;

	make_fifo("event0");
	make_fifo("event1");
	cfg->policy[CLASS_INPUT].rule.mode = MODE_DISABLED;
	add_override(cfg, CLASS_INPUT, "event1", RULE_SET_MODE, MODE_MIX_ONLY);
	feed_pipeline_reconfigure(cfg);
	out = start_logged(&rc);
	free(out);
	ck_assert_int_eq(rc, 0);

	/* The class runs for the one instance let back in; the rest stays closed. */
	ck_assert(srcs[CLASS_INPUT].running);
	ck_assert_ptr_nonnull(srcs[CLASS_INPUT].priv);
	ck_assert(attached("event1"));
	ck_assert(!attached("event0"));
	ck_assert_uint_eq(feed_pipeline_count(), 1);
	ck_assert_int_eq(tu_count_fds(), fds_at_setup + 2);
}
END_TEST

/* ---- reload and stop ---- */

START_TEST(test_reload_disables_input)
{
	struct config *next;
	char *out;
	int rc;

	make_fifo("event0");
	out = start_logged(&rc);
	free(out);
	ck_assert_int_eq(rc, 0);
	ck_assert(srcs[CLASS_INPUT].running);
	ck_assert(attached("event0"));

	next = new_config();
	next->policy[CLASS_INPUT].rule.mode = MODE_DISABLED;
	reload(next);
	ck_assert(!srcs[CLASS_INPUT].running);
	ck_assert_ptr_null(srcs[CLASS_INPUT].priv);
	ck_assert_ptr_eq(srcs[CLASS_INPUT].cfg, next);
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	ck_assert_int_eq(tu_count_fds(), fds_at_setup);

	/* And back: a reload that enables the class starts it again. */
	next = new_config();
	reload(next);
	ck_assert(srcs[CLASS_INPUT].running);
	ck_assert(attached("event0"));
	ck_assert_int_eq(tu_count_fds(), fds_at_setup + 2);
	/* The stubs stay stubs. */
	ck_assert(!srcs[CLASS_BLOCK].running);
	ck_assert(!srcs[CLASS_NETWORK].running);
}
END_TEST

static long long events_of(const char *name)
{
	struct inst_info in;

	for (size_t i = 0; feed_pipeline_info(i, &in); i++)
		if (in.cls == CLASS_INPUT && strcmp(in.name, name) == 0)
			return (long long)in.c.events;
	return -1;
}

/* n reports into a FIFO, then the loop runs until the instance has counted them (bounded). */
static void feed_reports(const char *name, int n)
{
	char path[256];
	long long want = events_of(name) + n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < n; i++) {
		struct input_event e;

		memset(&e, 0, sizeof(e));
		e.input_event_sec = 100 + i;
		e.input_event_usec = (i * 7919) % 1000000;
		e.type = EV_SYN;
		e.code = SYN_REPORT;
		ck_assert_int_eq(write(fd, &e, sizeof(e)), (ssize_t)sizeof(e));
	}
	close(fd);
	for (int turn = 0; turn < 500 && events_of(name) < want; turn++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		if (events_of(name) < want)
			usleep(1000);
	}
	ck_assert_int_eq(events_of(name), want);
}

START_TEST(test_reload_keeps_running_instance)
{
	struct config *next;
	struct inst_info in;
	char *out;
	int rc;

	make_fifo("event0");
	make_fifo("event1");
	out = start_logged(&rc);
	free(out);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(feed_pipeline_count(), 2);
	feed_reports("event0", 10);

	/* Still wanted: the class keeps running and the driver's own reload applies the new
	 * config, closing what it now excludes and keeping the rest with its state. */
	next = new_config();
	next->policy[CLASS_INPUT].rule.mode = MODE_REDUCED;
	next->policy[CLASS_INPUT].rule.scale = 0.5;
	ck_assert_uint_eq(next->input.exclude.n, 0); /* the default: nothing excluded */
	next->input.exclude.v = xcalloc(1, sizeof(char *));
	next->input.exclude.v[0] = xstrdup("event1");
	next->input.exclude.n = 1;
	reload(next);
	ck_assert(srcs[CLASS_INPUT].running);
	ck_assert_uint_eq(feed_pipeline_count(), 1);
	ck_assert(!attached("event1"));
	ck_assert(feed_pipeline_info(0, &in));
	ck_assert_str_eq(in.name, "event0");
	ck_assert_int_eq(in.rule.mode, MODE_REDUCED);
	ck_assert_int_eq(events_of("event0"), 10);
	ck_assert_int_eq(tu_count_fds(), fds_at_setup + 2);
	feed_reports("event0", 5);
}
END_TEST

START_TEST(test_stop_closes_everything)
{
	char *out;
	int rc;

	make_fifo("event0");
	make_fifo("event1");
	make_fifo("event2");
	out = start_logged(&rc);
	free(out);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(feed_pipeline_count(), 3);
	ck_assert_int_eq(tu_count_fds(), fds_at_setup + 4);

	source_table_stop(srcs);
	for (int c = 0; c < CLASS_COUNT; c++) {
		ck_assert_msg(!srcs[c].running, "%s still running", source_class_name((enum src_class)c));
		ck_assert_ptr_null(srcs[c].priv);
	}
	ck_assert_uint_eq(feed_pipeline_count(), 0);
	ck_assert_int_eq(tu_count_fds(), fds_at_setup);
	/* Nothing is left registered on the loop. */
	ck_assert_int_eq(event_base_get_num_events(base, EVENT_BASE_COUNT_ADDED), 0);

	/* Stopping twice is harmless. */
	source_table_stop(srcs);
	ck_assert_int_eq(tu_count_fds(), fds_at_setup);
}
END_TEST

static Suite *source_suite(void)
{
	Suite *s = suite_create("source");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, run_setup, run_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_driver_table);
	tcase_add_test(tc, test_start_input);
	tcase_add_test(tc, test_class_disabled_not_started);
	tcase_add_test(tc, test_class_disabled_override_enables);
	tcase_add_test(tc, test_reload_disables_input);
	tcase_add_test(tc, test_reload_keeps_running_instance);
	tcase_add_test(tc, test_stop_closes_everything);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_suite(source_suite());
}
